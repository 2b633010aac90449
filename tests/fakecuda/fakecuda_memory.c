// SPDX-License-Identifier: MIT
/*
 * fakecuda_memory.c: the fake driver's memory (tests only, see
 * fakecuda.h): allocations from host memory, registered host memory,
 * copies, memsets and pointer attributes, each checked against the live
 * ranges before the fake touches a byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda.h"

/* ---- memory -------------------------------------------------------------- */

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	NEED_CTX();
	if (!free_b || !total)
		return CUDA_ERROR_INVALID_VALUE;
	*total = FAKE_TOTAL_MEM;
	*free_b = FAKE_TOTAL_MEM - fc_mem_used;
	return CUDA_SUCCESS;
}

CUresult fc_dev_alloc(CUdeviceptr *dptr, size_t size)
{
	size_t charged;
	struct range *r;
	void *p;

	if (size == 0 || size > FAKE_TOTAL_MEM)
		return size ? CUDA_ERROR_OUT_OF_MEMORY :
			      CUDA_ERROR_INVALID_VALUE;
	charged = (size + FAKE_ALIGN - 1) & ~(size_t)(FAKE_ALIGN - 1);
	if (charged > FAKE_TOTAL_MEM - fc_mem_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (posix_memalign(&p, FAKE_ALIGN, charged))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = fc_range_add((uintptr_t)p, size, R_DEVICE);
	if (!r) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->charged = charged;
	r->ctx = fc_owner();
	r->mem = p;
	fc_mem_used += charged;
	fc_budget_note();
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
	NEED_CTX();
	fc_sandbox_probe();	/* XGPU_FAKE_SANDBOX_PROBE only */
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	return fc_log_return("cuMemAlloc_v2", fc_dev_alloc(dptr, size));
}

/*
 * Managed memory: mapped pages of its own (the driver's managed memory
 * is page aligned and lives among the process's mappings), charged by
 * whole pages.  The CPU and the fake's kernels reach it alike.
 */
/*
 * Managed memory in a range of its own, as the real driver's lies in the
 * unified address range it reserves: the guest maps it at the same
 * address in the program (xgpulib_api_managed.c), where the top-down
 * mmap area of a program (two processes of the same binaries, under ASan
 * alike) would often hold something at the worker's next mmap address.
 * Past the range, or where it is taken, anywhere.
 */
#define MANAGED_BASE	0x7e0000000000ull
#define MANAGED_SPAN	(1ull << 40)
static uint64_t managed_next = MANAGED_BASE;

static void *managed_map(size_t bytes)
{
	const uint64_t align = 2ull << 20;
	void *p = MAP_FAILED;

	if (managed_next + bytes <= MANAGED_BASE + MANAGED_SPAN)
		p = mmap((void *)(uintptr_t)managed_next, bytes,
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
	if (p != MAP_FAILED &&
	    (uint64_t)(uintptr_t)p != managed_next) {
		munmap(p, bytes);	/* an old kernel took it as a hint */
		p = MAP_FAILED;
	}
	if (p != MAP_FAILED)
		managed_next += (bytes + align - 1) & ~(align - 1);
	else
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), charged;
	struct range *r;
	void *p;

	NEED_CTX();
	if (!dptr || !size ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if (size > FAKE_TOTAL_MEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	charged = (size + page - 1) & ~(page - 1);
	if (charged > FAKE_TOTAL_MEM - fc_mem_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = managed_map(charged);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = fc_range_add((uintptr_t)p, size, R_DEVICE);
	if (!r) {
		munmap(p, charged);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->charged = charged;
	r->ctx = fc_owner();
	r->managed = true;
	fc_mem_used += charged;
	fc_budget_note();
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
			    size_t height, unsigned int elem)
{
	size_t p, total;
	CUresult rc;

	NEED_CTX();
	if (!dptr || !pitch || !width || !height ||
	    (elem != 4 && elem != 8 && elem != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (width > FAKE_TOTAL_MEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = (width + FAKE_PITCH_ALIGN - 1) & ~(size_t)(FAKE_PITCH_ALIGN - 1);
	if (__builtin_mul_overflow(p, height, &total))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = fc_dev_alloc(dptr, total);
	if (rc == CUDA_SUCCESS)
		*pitch = p;
	return rc;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct range *r;

	NEED_CTX();
	if (!dptr)
		return CUDA_SUCCESS;
	r = fc_range_at((uintptr_t)dptr, R_DEVICE);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	fc_range_del(r);
	return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
				 CUdeviceptr dptr)
{
	struct range *r;

	NEED_CTX();
	r = fc_range_find((uintptr_t)dptr, 1);
	if (!r || r->kind == R_HOST)
		return CUDA_ERROR_NOT_FOUND;
	if (pbase)
		*pbase = (CUdeviceptr)r->base;
	if (psize)
		*psize = r->size;
	return CUDA_SUCCESS;
}

CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTREGISTER_PORTABLE |
				   CU_MEMHOSTREGISTER_DEVICEMAP |
				   CU_MEMHOSTREGISTER_IOMEMORY |
				   CU_MEMHOSTREGISTER_READ_ONLY;
	uintptr_t a = (uintptr_t)p;
	struct range *r;

	NEED_CTX();
	if (!p || !size || (flags & ~known) || a + size < a)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < fc_nranges; i++) {
		r = &fc_ranges[i];
		if (r->kind == R_HOST && a < r->base + r->size &&
		    r->base < a + size)
			return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	}
	r = fc_range_add(a, size, R_HOST);
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->flags = flags;
	return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *p)
{
	struct range *r;

	NEED_CTX();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	r = fc_range_at((uintptr_t)p, R_HOST);
	if (!r)
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	fc_range_del(r);
	return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
				      unsigned int flags)
{
	struct range *r;

	NEED_CTX();
	if (!pdptr || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = fc_range_find((uintptr_t)p, 1);
	if (!r || r->kind != R_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr)(uintptr_t)p;	/* unified addressing */
	return CUDA_SUCCESS;
}

/* ---- copies -------------------------------------------------------------- */

/*
 * The synchronous copies are static helpers that the asynchronous entry
 * points call too: a call from inside the library to an exported name
 * would go through the PLT and could bind to another library's symbol.
 */
static CUresult htod(CUdeviceptr dst, const void *src, size_t n)
{
	NEED_CTX();
	if (!n)
		return CUDA_SUCCESS;
	if (!src || !fc_copy_ok(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	if (!n)
		return CUDA_SUCCESS;
	if (!dst || !fc_copy_ok(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove(dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

static CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	if (!n)
		return CUDA_SUCCESS;
	if (!fc_copy_ok(dst, n) || !fc_copy_ok(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return htod(dst, src, n);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return dtoh(dst, src, n);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return dtod(dst, src, n);
}

/* the asynchronous forms check their stream and complete at once */
/* a copy between host and device captured as a memcpy node */
static struct fc_capnode copy_node(CUmemorytype st, const void *sh,
				   CUdeviceptr sd, CUmemorytype dt, void *dh,
				   CUdeviceptr dd, size_t n)
{
	struct fc_capnode c = { .type = CU_GRAPH_NODE_TYPE_MEMCPY };

	c.cp.srcMemoryType = st;
	c.cp.srcHost = sh;
	c.cp.srcDevice = sd;
	c.cp.dstMemoryType = dt;
	c.cp.dstHost = dh;
	c.cp.dstDevice = dd;
	c.cp.WidthInBytes = n;
	c.cp.Height = 1;
	c.cp.Depth = 1;
	return c;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
			      CUstream s)
{
	struct fc_capnode c = copy_node(CU_MEMORYTYPE_HOST, src, 0,
					CU_MEMORYTYPE_DEVICE, NULL, dst, n);
	bool captured;
	CUresult rc = fc_stream_work_as(s, &captured, &c);

	return rc || captured ? rc : htod(dst, src, n);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	struct fc_capnode c = copy_node(CU_MEMORYTYPE_DEVICE, NULL, src,
					CU_MEMORYTYPE_HOST, dst, 0, n);
	bool captured;
	CUresult rc = fc_stream_work_as(s, &captured, &c);

	return rc || captured ? rc : dtoh(dst, src, n);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
			      CUstream s)
{
	bool captured;
	CUresult rc = fc_stream_work(s, &captured);

	return rc || captured ? rc : dtod(dst, src, n);
}

/*
 * One side of a 2D copy: the address of its first byte, after checking
 * that every row lies inside a device range (device sides only: host
 * sides are the worker's own memory).
 */
static CUresult side_2d(CUmemorytype type, const void *host, CUdeviceptr dev,
			size_t x, size_t y, size_t pitch, size_t w, size_t h,
			uint8_t **out)
{
	size_t start, extent;

	if (h > 1 && pitch < w)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow(y, pitch, &start) ||
	    __builtin_add_overflow(start, x, &start) ||
	    __builtin_mul_overflow(h - 1, pitch, &extent) ||
	    __builtin_add_overflow(extent, w, &extent))
		return CUDA_ERROR_INVALID_VALUE;
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)(uintptr_t)host + start;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		if (dev + start < dev || !fc_copy_ok(dev + start, extent))
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)(uintptr_t)(dev + start);
		return CUDA_SUCCESS;
	default:	/* arrays go to fc_copy_3d */
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult copy_2d(const CUDA_MEMCPY2D *c)
{
	uint8_t *s, *d;
	CUresult rc;

	NEED_CTX();
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c->WidthInBytes || !c->Height)
		return CUDA_SUCCESS;
	if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY ||
	    c->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
		CUDA_MEMCPY3D q = {
			.srcXInBytes = c->srcXInBytes, .srcY = c->srcY,
			.srcMemoryType = c->srcMemoryType,
			.srcHost = c->srcHost, .srcDevice = c->srcDevice,
			.srcArray = c->srcArray, .srcPitch = c->srcPitch,
			.srcHeight = c->Height,
			.dstXInBytes = c->dstXInBytes, .dstY = c->dstY,
			.dstMemoryType = c->dstMemoryType,
			.dstHost = c->dstHost, .dstDevice = c->dstDevice,
			.dstArray = c->dstArray, .dstPitch = c->dstPitch,
			.dstHeight = c->Height,
			.WidthInBytes = c->WidthInBytes, .Height = c->Height,
			.Depth = 1,
		};

		return fc_copy_3d(&q);
	}
	rc = side_2d(c->srcMemoryType, c->srcHost, c->srcDevice,
		     c->srcXInBytes, c->srcY, c->srcPitch, c->WidthInBytes,
		     c->Height, &s);
	if (!rc)
		rc = side_2d(c->dstMemoryType, c->dstHost, c->dstDevice,
			     c->dstXInBytes, c->dstY, c->dstPitch,
			     c->WidthInBytes, c->Height, &d);
	if (rc)
		return rc;
	for (size_t row = 0; row < c->Height; row++)
		memmove(d + row * c->dstPitch, s + row * c->srcPitch,
			c->WidthInBytes);
	return CUDA_SUCCESS;
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c)
{
	return copy_2d(c);
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s)
{
	struct fc_capnode n = { .type = CU_GRAPH_NODE_TYPE_MEMCPY };
	bool captured;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	/* captured: a memcpy node of the same rows */
	n.cp = (CUDA_MEMCPY3D){
		.srcXInBytes = c->srcXInBytes, .srcY = c->srcY,
		.srcMemoryType = c->srcMemoryType, .srcHost = c->srcHost,
		.srcDevice = c->srcDevice, .srcArray = c->srcArray,
		.srcPitch = c->srcPitch,
		.dstXInBytes = c->dstXInBytes, .dstY = c->dstY,
		.dstMemoryType = c->dstMemoryType, .dstHost = c->dstHost,
		.dstDevice = c->dstDevice, .dstArray = c->dstArray,
		.dstPitch = c->dstPitch,
		.WidthInBytes = c->WidthInBytes, .Height = c->Height,
		.Depth = 1,
	};
	rc = fc_stream_work_as(s, &captured, &n);
	return rc || captured ? rc : copy_2d(c);
}

/* ---- memsets ------------------------------------------------------------- */

static CUresult do_memset(CUdeviceptr dst, size_t pitch, uint32_t value,
			  unsigned int esize, size_t width, size_t height,
			  CUstream s)
{
	size_t row_bytes, extent;
	bool captured;
	CUresult rc;
	struct fc_capnode node = {
		.type = CU_GRAPH_NODE_TYPE_MEMSET,
		.ms = { .dst = dst, .pitch = height == 1 ? 0 : pitch,
			.value = value, .elementSize = esize, .width = width,
			.height = height },
	};

	NEED_CTX();
	/* captured: a memset node, its address not checked (the driver
	 * checks it when the graph is instantiated); nothing to set, an
	 * empty node */
	rc = fc_stream_work_as(s, &captured, width && height ? &node : NULL);
	if (rc || captured)
		return rc;
	if (!width || !height)
		return CUDA_SUCCESS;
	if (dst % esize)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow(width, esize, &row_bytes))
		return CUDA_ERROR_INVALID_VALUE;
	if (height == 1)
		pitch = row_bytes;
	if (pitch < row_bytes ||
	    __builtin_mul_overflow(height - 1, pitch, &extent) ||
	    __builtin_add_overflow(extent, row_bytes, &extent) ||
	    !fc_copy_ok(dst, extent))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t y = 0; y < height; y++) {
		uint8_t *row = (uint8_t *)(uintptr_t)dst + y * pitch;

		if (esize == 1) {
			memset(row, (int)(value & 0xff), width);
		} else if (esize == 2) {
			uint16_t v = (uint16_t)value;

			for (size_t i = 0; i < width; i++)
				memcpy(row + 2 * i, &v, 2);
		} else {
			for (size_t i = 0; i < width; i++)
				memcpy(row + 4 * i, &value, 4);
		}
	}
	return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	return do_memset(d, 0, v, 1, n, 1, NULL);
}

CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n)
{
	return do_memset(d, 0, v, 2, n, 1, NULL);
}

CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
	return do_memset(d, 0, v, 4, n, 1, NULL);
}

CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return do_memset(d, 0, v, 1, n, 1, s);
}

CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return do_memset(d, 0, v, 2, n, 1, s);
}

CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return do_memset(d, 0, v, 4, n, 1, s);
}

CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
			 size_t h)
{
	return do_memset(d, pitch, v, 1, w, h, NULL);
}

CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t pitch, unsigned short v,
			  size_t w, size_t h)
{
	return do_memset(d, pitch, v, 2, w, h, NULL);
}

CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t pitch, unsigned int v, size_t w,
			  size_t h)
{
	return do_memset(d, pitch, v, 4, w, h, NULL);
}

CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v,
			   size_t w, size_t h, CUstream s)
{
	return do_memset(d, pitch, v, 1, w, h, s);
}

CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short v,
			    size_t w, size_t h, CUstream s)
{
	return do_memset(d, pitch, v, 2, w, h, s);
}

CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v,
			    size_t w, size_t h, CUstream s)
{
	return do_memset(d, pitch, v, 4, w, h, s);
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a,
			       CUdeviceptr ptr)
{
	struct range *r;

	NEED_INIT();
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	r = fc_range_find((uintptr_t)ptr, 1);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT: {
		CUcontext c = (CUcontext)(r->ctx ? r->ctx : fc_cur);

		memcpy(data, &c, sizeof(c));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: {
		unsigned int t = r->kind == R_HOST ? CU_MEMORYTYPE_HOST :
						     CU_MEMORYTYPE_DEVICE;

		memcpy(data, &t, sizeof(t));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		memcpy(data, &ptr, sizeof(ptr));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER: {
		void *p = (void *)(uintptr_t)ptr;

		if (r->kind != R_HOST)
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(data, &p, sizeof(p));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_IS_MANAGED: {
		unsigned int m = (r->kind == R_DEVICE ||
				  r->kind == R_GLOBAL) && r->managed;

		memcpy(data, &m, sizeof(m));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
		int zero = 0;

		memcpy(data, &zero, sizeof(zero));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: {
		CUdeviceptr b = (CUdeviceptr)r->base;

		memcpy(data, &b, sizeof(b));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		memcpy(data, &r->size, sizeof(r->size));
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* ---- IPC: handles name (pid, pointer, size); another process "opens" a
 * fresh buffer of that size (the fake shares no memory between workers:
 * the tests check the calls, not the bytes) ---------------------------- */

struct fipc {
	char magic[8];
	uint64_t pid;
	uint64_t ptr;
	uint64_t size;
};

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr dptr)
{
	struct range *r;
	struct fipc f = { "FAKEIPC", 0, 0, 0 };

	NEED_CTX();
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	r = fc_range_at((uintptr_t)dptr, R_DEVICE);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	f.pid = (uint64_t)getpid();
	f.ptr = dptr;
	f.size = r->size;
	memset(h, 0, sizeof(*h));
	memcpy(h->reserved, &f, sizeof(f));
	return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h,
			       unsigned int flags)
{
	struct fipc f;

	NEED_CTX();
	memcpy(&f, h.reserved, sizeof(f));
	if (!dptr || memcmp(f.magic, "FAKEIPC", 8) ||
	    flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
		return CUDA_ERROR_INVALID_VALUE;
	if (f.pid == (uint64_t)getpid())
		return CUDA_ERROR_INVALID_CONTEXT;	/* as the driver */
	return fc_dev_alloc(dptr, f.size);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	return cuMemFree_v2(dptr);
}

CUresult cuIpcGetEventHandle(CUipcEventHandle *h, CUevent e)
{
	(void)h;
	(void)e;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuIpcOpenEventHandle(CUevent *e, CUipcEventHandle h)
{
	(void)e;
	(void)h;
	return CUDA_ERROR_NOT_SUPPORTED;
}
