// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_mem.c: device memory, guest pinned memory, copies, memsets,
 * pointer attributes, arrays and texture objects.
 *
 * The guest keeps two tables: its device allocations (to tell device from
 * host pointers in unified copies without a round trip) and its host
 * memory regions (cuMemHostAlloc: pages shared with the worker).  Both are
 * guarded by tab_mu.
 *
 * cuMemHostRegister on ordinary guest memory cannot share those pages
 * with the worker on every transport, so it is recorded and its copies are
 * staged (correct, not zero copy); cuMemHostGetDevicePointer on it answers
 * CUDA_ERROR_NOT_SUPPORTED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;

struct dalloc {
	uint64_t dptr, size;
};
static struct dalloc *dallocs;
static size_t ndallocs, cap_dallocs;

#define MAX_REGIONS 4096u
static struct xgpulib_region regions[MAX_REGIONS];	/* index = id */
static uint32_t next_region = 1;

struct hostreg {
	uint8_t *p;
	size_t size;
	unsigned int flags;
};
static struct hostreg *hostregs;
static size_t nhostregs, cap_hostregs;

/* ---- tables ---------------------------------------------------------------- */

const struct xgpulib_region *xgpulib_region_find(const void *p, size_t len,
						  uint64_t *off)
{
	const uint8_t *b = p;
	const struct xgpulib_region *found = NULL;

	pthread_mutex_lock(&tab_mu);
	for (uint32_t i = 1; i < next_region; i++) {
		const struct xgpulib_region *r = &regions[i];

		if (r->va && b >= r->va && b < r->va + r->size &&
		    len <= (size_t)(r->va + r->size - b)) {
			*off = (uint64_t)(b - r->va);
			found = r;
			break;
		}
	}
	pthread_mutex_unlock(&tab_mu);
	return found;
}

static const struct xgpulib_region *region_by_va(const void *p)
{
	uint64_t off;
	const struct xgpulib_region *r = xgpulib_region_find(p, 1, &off);

	return r && off == 0 ? r : NULL;
}

static void dalloc_add(uint64_t dptr, uint64_t size)
{
	pthread_mutex_lock(&tab_mu);
	if (ndallocs == cap_dallocs) {
		size_t nc = cap_dallocs ? cap_dallocs * 2 : 64;
		struct dalloc *n = realloc(dallocs, nc * sizeof(*n));

		if (!n)
			goto out;
		dallocs = n;
		cap_dallocs = nc;
	}
	dallocs[ndallocs++] = (struct dalloc){ dptr, size };
out:
	pthread_mutex_unlock(&tab_mu);
}

static void dalloc_del(uint64_t dptr)
{
	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < ndallocs; i++) {
		if (dallocs[i].dptr == dptr) {
			dallocs[i] = dallocs[--ndallocs];
			break;
		}
	}
	pthread_mutex_unlock(&tab_mu);
}

static bool dalloc_has(uint64_t p)
{
	bool hit = false;

	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < ndallocs; i++) {
		if (p >= dallocs[i].dptr &&
		    p - dallocs[i].dptr < dallocs[i].size) {
			hit = true;
			break;
		}
	}
	pthread_mutex_unlock(&tab_mu);
	return hit;
}

/* ---- device memory ---------------------------------------------------------- */

CUresult cuMemGetInfo(size_t *free, size_t *total)
{
	struct xgpuif_mem_info_reply r;
	CUresult rc;

	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call1(XGPUIF_OP_MEM_GET_INFO, NULL, 0, &r, sizeof(r));
	if (rc == CUDA_SUCCESS) {
		*free = r.free;
		*total = r.total;
	}
	return rc;
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	struct xgpuif_mem_alloc_args a = { bytesize };
	struct xgpuif_dptr_reply r;
	CUresult rc;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call1(XGPUIF_OP_MEM_ALLOC, &a, sizeof(a), &r, sizeof(r));
	if (rc == CUDA_SUCCESS) {
		*dptr = r.dptr;
		dalloc_add(r.dptr, bytesize);
	}
	return rc;
}

CUresult cuMemAllocPitch(CUdeviceptr *dptr, size_t *pitch, size_t width,
			 size_t height, unsigned int elem)
{
	struct xgpuif_mem_alloc_pitch_args a = { width, height, elem, 0 };
	struct xgpuif_mem_alloc_pitch_reply r;
	CUresult rc;

	if (!dptr || !pitch)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call1(XGPUIF_OP_MEM_ALLOC_PITCH, &a, sizeof(a), &r,
			   sizeof(r));
	if (rc == CUDA_SUCCESS) {
		*dptr = r.dptr;
		*pitch = r.pitch;
		dalloc_add(r.dptr, r.pitch * height);
	}
	return rc;
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	CUresult rc;

	if (!dptr)
		return CUDA_SUCCESS;
	rc = xgpulib_call1(XGPUIF_OP_MEM_FREE, &a, sizeof(a), NULL, 0);
	if (rc == CUDA_SUCCESS)
		dalloc_del(dptr);
	return rc;
}

CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size,
			      CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	struct xgpuif_range_reply r;
	CUresult rc;

	rc = xgpulib_call1(XGPUIF_OP_MEM_GET_ADDRESS_RANGE, &a, sizeof(a), &r,
			   sizeof(r));
	if (rc == CUDA_SUCCESS) {
		if (base)
			*base = r.base;
		if (size)
			*size = r.size;
	}
	return rc;
}

/* ---- guest pinned memory ----------------------------------------------------- */

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	struct xgpulib_chan *c = xgpulib_ch;
	struct xgpuif_hostmem_args a;
	struct xgpuif_hostmem_reply r;
	struct xgpulib_region *reg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size;
	uint32_t id = 0;
	void *va;
	CUresult rc;
	int err;

	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c)
		return CUDA_ERROR_NOT_INITIALIZED;
	size = (bytesize + page - 1) & ~(page - 1);
	pthread_mutex_lock(&tab_mu);
	for (uint32_t i = 1; i < MAX_REGIONS; i++) {
		if (!regions[i].va && !regions[i].id) {
			id = i;
			regions[i].id = i;	/* reserved */
			if (i >= next_region)
				next_region = i + 1;
			break;
		}
	}
	pthread_mutex_unlock(&tab_mu);
	if (!id)
		return CUDA_ERROR_OUT_OF_MEMORY;

	memset(&a, 0, sizeof(a));
	/* the fd travels on the socket just before the request: keep the
	 * two in order against other threads' regions */
	pthread_mutex_lock(&xgpulib_data_mu);
	err = c->t->ops->hostmem_alloc(c->t, id, size, &va, &a.dir);
	if (err) {
		pthread_mutex_unlock(&xgpulib_data_mu);
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto fail_id;
	}
	a.region = id;
	a.flags = flags;
	a.size = size;
	a.guest_va = (uint64_t)(uintptr_t)va;
	rc = xgpulib_call1(XGPUIF_OP_HOSTMEM_REGISTER, &a, sizeof(a), &r,
			   sizeof(r));
	pthread_mutex_unlock(&xgpulib_data_mu);
	if (rc) {
		c->t->ops->hostmem_free(c->t, id, va, size);
		goto fail_id;
	}
	pthread_mutex_lock(&tab_mu);
	reg = &regions[id];
	reg->flags = flags;
	reg->size = size;
	reg->dptr = r.dptr;
	reg->same_va = r.same_va;
	reg->va = va;
	pthread_mutex_unlock(&tab_mu);
	*pp = va;
	return CUDA_SUCCESS;
fail_id:
	pthread_mutex_lock(&tab_mu);
	regions[id].id = 0;
	pthread_mutex_unlock(&tab_mu);
	return rc;
}

CUresult cuMemAllocHost(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

#undef cuMemAllocHost
CUresult cuMemAllocHost(void **pp, unsigned int bytesize);
CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemFreeHost(void *p)
{
	struct xgpulib_chan *c = xgpulib_ch;
	const struct xgpulib_region *r = region_by_va(p);
	struct xgpuif_region_args a;
	struct xgpulib_region copy;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	copy = *r;
	a = (struct xgpuif_region_args){ copy.id, 0 };
	rc = xgpulib_call1(XGPUIF_OP_HOSTMEM_UNREGISTER, &a, sizeof(a), NULL,
			   0);
	pthread_mutex_lock(&tab_mu);
	memset(&regions[copy.id], 0, sizeof(regions[copy.id]));
	pthread_mutex_unlock(&tab_mu);
	c->t->ops->hostmem_free(c->t, copy.id, copy.va, copy.size);
	return rc;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p,
				   unsigned int flags)
{
	const struct xgpulib_region *r;
	uint64_t off;

	if (!pdptr || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	r = xgpulib_region_find(p, 1, &off);
	if (!r)
		return xgpulib_ch ? CUDA_ERROR_NOT_SUPPORTED :
				    CUDA_ERROR_INVALID_VALUE;
	*pdptr = r->dptr + off;
	return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pflags, void *p)
{
	const struct xgpulib_region *r;
	uint64_t off;

	if (!pflags || !p)
		return CUDA_ERROR_INVALID_VALUE;
	r = xgpulib_region_find(p, 1, &off);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	*pflags = r->flags;
	return CUDA_SUCCESS;
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int flags)
{
	CUresult rc = CUDA_SUCCESS;

	if (!p || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < nhostregs; i++) {
		if ((uint8_t *)p < hostregs[i].p + hostregs[i].size &&
		    hostregs[i].p < (uint8_t *)p + bytesize) {
			rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
			goto out;
		}
	}
	if (nhostregs == cap_hostregs) {
		size_t nc = cap_hostregs ? cap_hostregs * 2 : 16;
		struct hostreg *n = realloc(hostregs, nc * sizeof(*n));

		if (!n) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		hostregs = n;
		cap_hostregs = nc;
	}
	hostregs[nhostregs++] = (struct hostreg){ p, bytesize, flags };
	xgpulib_dbg("cuMemHostRegister(%p, %zu): copies from it are staged",
		    p, bytesize);
out:
	pthread_mutex_unlock(&tab_mu);
	return rc;
}

CUresult cuMemHostUnregister(void *p)
{
	CUresult rc = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;

	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < nhostregs; i++) {
		if (hostregs[i].p == p) {
			hostregs[i] = hostregs[--nhostregs];
			rc = CUDA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&tab_mu);
	return rc;
}

/* ---- 1D copies ------------------------------------------------------------------ */

#define PT_DECL(ret, name, ...) ret name(__VA_ARGS__)

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
	return xgpulib_copy_htod(dst, src, n, 0, 0);
}

PT_DECL(CUresult, cuMemcpyHtoD_v2_ptds, CUdeviceptr dst, const void *src,
	size_t n);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
	return xgpulib_copy_htod(dst, src, n, XGPUIF_STREAM_PER_THREAD, 0);
}

CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	return xgpulib_copy_dtoh(dst, src, n, 0, 0);
}

PT_DECL(CUresult, cuMemcpyDtoH_v2_ptds, void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
	return xgpulib_copy_dtoh(dst, src, n, XGPUIF_STREAM_PER_THREAD, 0);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n,
			   CUstream s)
{
	return xgpulib_copy_htod(dst, src, n, xgpulib_stream_remote(s, 0), 1);
}

PT_DECL(CUresult, cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr dst, const void *src,
	size_t n, CUstream s);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
				   CUstream s)
{
	return xgpulib_copy_htod(dst, src, n, xgpulib_stream_remote(s, 1), 1);
}

CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return xgpulib_copy_dtoh(dst, src, n, xgpulib_stream_remote(s, 0), 1);
}

PT_DECL(CUresult, cuMemcpyDtoHAsync_v2_ptsz, void *dst, CUdeviceptr src,
	size_t n, CUstream s);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n,
				   CUstream s)
{
	return xgpulib_copy_dtoh(dst, src, n, xgpulib_stream_remote(s, 1), 1);
}

static CUresult copy_dtod(uint64_t dst, uint64_t src, size_t n,
			  uint64_t stream, int async)
{
	struct xgpuif_memcpy_dtod_args a = {
		dst, src, n, stream, async ? XGPUIF_CF_ASYNC : 0, 0
	};

	if (!n)
		return CUDA_SUCCESS;
	if (async)
		return xgpulib_post1(XGPUIF_OP_MEMCPY_DTOD, &a, sizeof(a));
	return xgpulib_call1(XGPUIF_OP_MEMCPY_DTOD, &a, sizeof(a), NULL, 0);
}

CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy_dtod(dst, src, n, 0, 0);
}

PT_DECL(CUresult, cuMemcpyDtoD_v2_ptds, CUdeviceptr dst, CUdeviceptr src,
	size_t n);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy_dtod(dst, src, n, XGPUIF_STREAM_PER_THREAD, 0);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
			   CUstream s)
{
	return copy_dtod(dst, src, n, xgpulib_stream_remote(s, 0), 1);
}

PT_DECL(CUresult, cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr dst, CUdeviceptr src,
	size_t n, CUstream s);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
				   CUstream s)
{
	return copy_dtod(dst, src, n, xgpulib_stream_remote(s, 1), 1);
}

/* Is p device memory?  Known allocations first, then ask the worker. */
static bool is_device(uint64_t p)
{
	struct xgpuif_ptr_attr_args a = { p, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					  0 };
	struct xgpuif_u64_reply r;
	uint64_t off;

	if (dalloc_has(p))
		return true;
	if (xgpulib_region_find((void *)(uintptr_t)p, 1, &off))
		return false;
	if (xgpulib_call1(XGPUIF_OP_POINTER_GET_ATTRIBUTE, &a, sizeof(a), &r,
			  sizeof(r)) != CUDA_SUCCESS)
		return false;
	return r.value == CU_MEMORYTYPE_DEVICE;
}

static CUresult copy_unified(uint64_t dst, uint64_t src, size_t n,
			     uint64_t stream, int async)
{
	bool dd = is_device(dst), sd = is_device(src);

	if (dd && sd)
		return copy_dtod(dst, src, n, stream, async);
	if (dd)
		return xgpulib_copy_htod(dst, (const void *)(uintptr_t)src, n,
					 stream, async);
	if (sd)
		return xgpulib_copy_dtoh((void *)(uintptr_t)dst, src, n,
					 stream, async);
	/* host to host: CUDA does it, so do we, in stream order */
	if (async) {
		CUresult rc = xgpulib_call1(
			XGPUIF_OP_STREAM_SYNCHRONIZE, &stream,
			sizeof(stream), NULL, 0);

		if (rc)
			return rc;
	}
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy_unified(dst, src, n, 0, 0);
}

PT_DECL(CUresult, cuMemcpy_ptds, CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy_unified(dst, src, n, XGPUIF_STREAM_PER_THREAD, 0);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return copy_unified(dst, src, n, xgpulib_stream_remote(s, 0), 1);
}

PT_DECL(CUresult, cuMemcpyAsync_ptsz, CUdeviceptr dst, CUdeviceptr src,
	size_t n, CUstream s);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
			    CUstream s)
{
	return copy_unified(dst, src, n, xgpulib_stream_remote(s, 1), 1);
}

/* ---- 2D copies ------------------------------------------------------------------ */

struct side {
	CUmemorytype type;	/* HOST (pageable), DEVICE, ARRAY, or 0 for
				 * shared pinned memory */
	const struct xgpulib_region *reg;
	uint8_t *host;
	uint64_t dptr;
	CUarray array;
	size_t x, y, pitch;
};

uint64_t xgpulib_array_remote(CUarray a);

static void resolve_side(struct side *s, CUmemorytype t, const void *host,
			 CUdeviceptr dptr, CUarray arr, size_t x, size_t y,
			 size_t pitch, size_t width, size_t height)
{
	uint64_t off;

	memset(s, 0, sizeof(*s));
	s->x = x;
	s->y = y;
	s->pitch = pitch;
	if (t == CU_MEMORYTYPE_UNIFIED) {
		t = is_device(dptr) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		host = (const void *)(uintptr_t)dptr;
	}
	s->type = t;
	if (t == CU_MEMORYTYPE_DEVICE) {
		s->dptr = dptr;
	} else if (t == CU_MEMORYTYPE_ARRAY) {
		s->array = arr;
	} else {
		s->host = (uint8_t *)(uintptr_t)host;
		s->reg = xgpulib_region_find(
			host, (y + height - 1) * pitch + x + width, &off);
		if (s->reg)
			s->type = 0;
	}
}

static void wire_side(struct xgpuif_copy_side *w, const struct side *s,
		      size_t width, size_t height)
{
	uint64_t off = 0;

	memset(w, 0, sizeof(*w));
	w->x_bytes = s->x;
	w->y = s->y;
	w->pitch = s->pitch;
	switch ((int)s->type) {
	case CU_MEMORYTYPE_DEVICE:
		w->type = XGPUIF_MT_DEVICE;
		w->dptr = s->dptr;
		break;
	case CU_MEMORYTYPE_ARRAY:
		w->type = XGPUIF_MT_ARRAY;
		w->array = xgpulib_array_remote(s->array);
		break;
	default:	/* shared pinned memory */
		w->type = XGPUIF_MT_HOST;
		xgpulib_region_find(s->host, 1, &off);
		w->mem = (struct xgpuif_memref){
			off, (s->y + height - 1) * s->pitch + s->x + width,
			s->reg->id, 0
		};
		break;
	}
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, uint64_t stream, int async)
{
	struct xgpulib_chan *c = xgpulib_ch;
	struct xgpuif_memcpy2d_args a;
	struct xgpuif_iov iov = { &a, sizeof(a) };
	struct side s, d;
	size_t rows_per, done = 0;
	CUresult rc = CUDA_SUCCESS;

	if (!c)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!p->WidthInBytes || !p->Height)
		return CUDA_SUCCESS;
	resolve_side(&s, p->srcMemoryType, p->srcHost, p->srcDevice,
		     p->srcArray, p->srcXInBytes, p->srcY, p->srcPitch,
		     p->WidthInBytes, p->Height);
	resolve_side(&d, p->dstMemoryType, p->dstHost, p->dstDevice,
		     p->dstArray, p->dstXInBytes, p->dstY, p->dstPitch,
		     p->WidthInBytes, p->Height);
	if ((s.type == CU_MEMORYTYPE_HOST && !s.host) ||
	    (d.type == CU_MEMORYTYPE_HOST && !d.host))
		return CUDA_ERROR_INVALID_VALUE;
	if (s.type == CU_MEMORYTYPE_HOST && d.type == CU_MEMORYTYPE_HOST)
		return CUDA_ERROR_INVALID_VALUE;

	memset(&a, 0, sizeof(a));
	a.width_bytes = p->WidthInBytes;
	a.stream = stream;
	a.flags = async ? XGPUIF_CF_ASYNC : 0;
	if (s.type != CU_MEMORYTYPE_HOST && d.type != CU_MEMORYTYPE_HOST) {
		wire_side(&a.src, &s, p->WidthInBytes, p->Height);
		wire_side(&a.dst, &d, p->WidthInBytes, p->Height);
		a.height = p->Height;
		if (async)
			return xgpulib_post(XGPUIF_OP_MEMCPY_2D, &iov, 1);
		return xgpulib_call(XGPUIF_OP_MEMCPY_2D, &iov, 1, NULL, 0,
				    NULL);
	}

	/* pageable host side: rows packed tightly in the data area */
	if (p->WidthInBytes > c->t->data_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&xgpulib_data_mu);
	rows_per = c->t->data_bytes / p->WidthInBytes;
	while (done < p->Height && rc == CUDA_SUCCESS) {
		size_t rows = p->Height - done < rows_per ? p->Height - done :
							    rows_per;
		struct side *h = s.type == CU_MEMORYTYPE_HOST ? &s : &d;
		struct side *o = h == &s ? &d : &s;
		struct xgpuif_copy_side *hw = h == &s ? &a.src : &a.dst;
		struct xgpuif_copy_side *ow = h == &s ? &a.dst : &a.src;
		struct side oo = *o;

		if (h == &s)
			for (size_t r = 0; r < rows; r++)
				memcpy(c->t->data + r * p->WidthInBytes,
				       s.host + (s.y + done + r) * s.pitch +
					       s.x,
				       p->WidthInBytes);
		memset(hw, 0, sizeof(*hw));
		hw->type = XGPUIF_MT_HOST;
		hw->pitch = p->WidthInBytes;
		hw->mem = (struct xgpuif_memref){ 0, rows * p->WidthInBytes,
						  XGPUIF_REGION_DATA, 0 };
		oo.y += done;
		wire_side(ow, &oo, p->WidthInBytes, rows);
		a.height = rows;
		rc = xgpulib_call(XGPUIF_OP_MEMCPY_2D, &iov, 1, NULL, 0, NULL);
		if (rc == CUDA_SUCCESS && h == &d)
			for (size_t r = 0; r < rows; r++)
				memcpy(d.host + (d.y + done + r) * d.pitch +
					       d.x,
				       c->t->data + r * p->WidthInBytes,
				       p->WidthInBytes);
		done += rows;
	}
	pthread_mutex_unlock(&xgpulib_data_mu);
	return rc;
}

CUresult cuMemcpy2D(const CUDA_MEMCPY2D *p)
{
	return copy2d(p, 0, 0);
}

CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *p)
{
	return copy2d(p, 0, 0);
}

CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *p, CUstream s)
{
	return copy2d(p, xgpulib_stream_remote(s, 0), 1);
}

PT_DECL(CUresult, cuMemcpy2D_v2_ptds, const CUDA_MEMCPY2D *p);
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p)
{
	return copy2d(p, XGPUIF_STREAM_PER_THREAD, 0);
}

PT_DECL(CUresult, cuMemcpy2DUnaligned_v2_ptds, const CUDA_MEMCPY2D *p);
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p)
{
	return copy2d(p, XGPUIF_STREAM_PER_THREAD, 0);
}

PT_DECL(CUresult, cuMemcpy2DAsync_v2_ptsz, const CUDA_MEMCPY2D *p,
	CUstream s);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s)
{
	return copy2d(p, xgpulib_stream_remote(s, 1), 1);
}

/*
 * 3D copies, as cudart's cudaMemcpy2DToArray, cudaMemcpy3D and friends
 * issue them: one 2D copy per slice.  Linear memory slices are
 * srcHeight/dstHeight rows apart; an array side must be 2D (z = 0) here,
 * since the 2D wire copy has no z coordinate.
 */
static CUresult copy3d(const CUDA_MEMCPY3D *p, uint64_t stream, int async)
{
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!p->WidthInBytes || !p->Height || !p->Depth)
		return CUDA_SUCCESS;
	if (p->srcLOD || p->dstLOD)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (size_t z = 0; z < p->Depth; z++) {
		CUDA_MEMCPY2D q = {
			.srcXInBytes = p->srcXInBytes,
			.srcMemoryType = p->srcMemoryType,
			.srcHost = p->srcHost,
			.srcDevice = p->srcDevice,
			.srcArray = p->srcArray,
			.srcPitch = p->srcPitch,
			.dstXInBytes = p->dstXInBytes,
			.dstMemoryType = p->dstMemoryType,
			.dstHost = p->dstHost,
			.dstDevice = p->dstDevice,
			.dstArray = p->dstArray,
			.dstPitch = p->dstPitch,
			.WidthInBytes = p->WidthInBytes,
			.Height = p->Height,
		};
		CUresult rc;

		if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY) {
			if (p->srcZ + z)
				return CUDA_ERROR_NOT_SUPPORTED;
			q.srcY = p->srcY;
		} else {
			q.srcY = p->srcY + (p->srcZ + z) * p->srcHeight;
		}
		if (p->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
			if (p->dstZ + z)
				return CUDA_ERROR_NOT_SUPPORTED;
			q.dstY = p->dstY;
		} else {
			q.dstY = p->dstY + (p->dstZ + z) * p->dstHeight;
		}
		rc = copy2d(&q, stream, async);
		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult cuMemcpy3D(const CUDA_MEMCPY3D *p)
{
	return copy3d(p, 0, 0);
}

CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D *p, CUstream s)
{
	return copy3d(p, xgpulib_stream_remote(s, 0), 1);
}

PT_DECL(CUresult, cuMemcpy3D_v2_ptds, const CUDA_MEMCPY3D *p);
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p)
{
	return copy3d(p, XGPUIF_STREAM_PER_THREAD, 0);
}

PT_DECL(CUresult, cuMemcpy3DAsync_v2_ptsz, const CUDA_MEMCPY3D *p,
	CUstream s);
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s)
{
	return copy3d(p, xgpulib_stream_remote(s, 1), 1);
}

/* array <-> host/device helpers cudart and driver programs use */
CUresult cuMemcpyHtoA(CUarray dst, size_t off, const void *src, size_t n)
{
	CUDA_MEMCPY2D p = {
		.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = src,
		.srcPitch = n, .dstMemoryType = CU_MEMORYTYPE_ARRAY,
		.dstArray = dst, .dstXInBytes = off, .WidthInBytes = n,
		.Height = 1,
	};

	return copy2d(&p, 0, 0);
}

CUresult cuMemcpyAtoH(void *dst, CUarray src, size_t off, size_t n)
{
	CUDA_MEMCPY2D p = {
		.srcMemoryType = CU_MEMORYTYPE_ARRAY, .srcArray = src,
		.srcXInBytes = off, .dstMemoryType = CU_MEMORYTYPE_HOST,
		.dstHost = dst, .dstPitch = n, .WidthInBytes = n, .Height = 1,
	};

	return copy2d(&p, 0, 0);
}

/* ---- memsets --------------------------------------------------------------------- */

static CUresult memset2d(uint64_t dst, size_t pitch, uint32_t value,
			 uint32_t esize, size_t width, size_t height,
			 uint64_t stream, int async)
{
	struct xgpuif_memset_args a = {
		.dst = dst, .pitch = pitch, .width = width, .height = height,
		.stream = stream, .value = value, .elem_size = esize,
		.flags = async ? XGPUIF_CF_ASYNC : 0,
	};

	if (!width || !height)
		return CUDA_SUCCESS;
	if (async)
		return xgpulib_post1(XGPUIF_OP_MEMSET, &a, sizeof(a));
	return xgpulib_call1(XGPUIF_OP_MEMSET, &a, sizeof(a), NULL, 0);
}

#define MEMSET_1D(name, T, esize, async, pt)                                   \
	CUresult name(CUdeviceptr d, T v, size_t n);                           \
	CUresult name(CUdeviceptr d, T v, size_t n)                            \
	{                                                                      \
		return memset2d(d, 0, v, esize, n, 1,                          \
				pt ? XGPUIF_STREAM_PER_THREAD : 0, async);     \
	}
#define MEMSET_1D_ASYNC(name, T, esize, pt)                                    \
	CUresult name(CUdeviceptr d, T v, size_t n, CUstream s);               \
	CUresult name(CUdeviceptr d, T v, size_t n, CUstream s)                \
	{                                                                      \
		return memset2d(d, 0, v, esize, n, 1,                          \
				xgpulib_stream_remote(s, pt), 1);              \
	}
#define MEMSET_2D(name, T, esize, pt)                                          \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h);       \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h)        \
	{                                                                      \
		return memset2d(d, p, v, esize, w, h,                          \
				pt ? XGPUIF_STREAM_PER_THREAD : 0, 0);         \
	}
#define MEMSET_2D_ASYNC(name, T, esize, pt)                                    \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h,        \
		      CUstream s);                                             \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h,        \
		      CUstream s)                                              \
	{                                                                      \
		return memset2d(d, p, v, esize, w, h,                          \
				xgpulib_stream_remote(s, pt), 1);              \
	}

#undef cuMemsetD8Async
#undef cuMemsetD16Async
#undef cuMemsetD32Async
#undef cuMemsetD2D8Async
#undef cuMemsetD2D16Async
#undef cuMemsetD2D32Async
MEMSET_1D(cuMemsetD8_v2, unsigned char, 1, 0, 0)
MEMSET_1D(cuMemsetD16_v2, unsigned short, 2, 0, 0)
MEMSET_1D(cuMemsetD32_v2, unsigned int, 4, 0, 0)
MEMSET_1D(cuMemsetD8_v2_ptds, unsigned char, 1, 0, 1)
MEMSET_1D(cuMemsetD16_v2_ptds, unsigned short, 2, 0, 1)
MEMSET_1D(cuMemsetD32_v2_ptds, unsigned int, 4, 0, 1)
MEMSET_1D_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
MEMSET_1D_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
MEMSET_1D_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
MEMSET_1D_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
MEMSET_1D_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
MEMSET_1D_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
MEMSET_2D(cuMemsetD2D8_v2, unsigned char, 1, 0)
MEMSET_2D(cuMemsetD2D16_v2, unsigned short, 2, 0)
MEMSET_2D(cuMemsetD2D32_v2, unsigned int, 4, 0)
MEMSET_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, 1)
MEMSET_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, 1)
MEMSET_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, 1)
MEMSET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, 0)
MEMSET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2, 0)
MEMSET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, 0)
MEMSET_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
MEMSET_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2, 1)
MEMSET_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)

/* ---- pointer attributes ---------------------------------------------------------- */

static CUresult host_attr(const struct xgpulib_region *r, uint64_t off,
			  CUpointer_attribute attr, void *data)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = xgpulib_current();
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = r->dptr + off;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = r->va + off;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = 1;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(void **)data = r->va;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = r->size;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* bytes each attribute writes */
static size_t attr_size(CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		return 4;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		return 8;
	default:
		return 0;
	}
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr,
			       CUdeviceptr ptr)
{
	struct xgpuif_ptr_attr_args a = { ptr, (uint32_t)attr, 0 };
	const struct xgpulib_region *r;
	struct xgpuif_u64_reply rep;
	uint64_t off;
	size_t sz;
	CUresult rc;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	r = xgpulib_region_find((void *)(uintptr_t)ptr, 1, &off);
	if (r)
		return host_attr(r, off, attr, data);
	if (attr == CU_POINTER_ATTRIBUTE_CONTEXT) {
		rc = xgpulib_call1(XGPUIF_OP_POINTER_GET_ATTRIBUTE, &a,
				   sizeof(a), &rep, sizeof(rep));
		if (rc == CUDA_SUCCESS)
			*(CUcontext *)data = xgpulib_current() ?
				xgpulib_current() : (CUcontext)xgpulib_primary(0);
		return rc;
	}
	sz = attr_size(attr);
	if (!sz)
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = xgpulib_call1(XGPUIF_OP_POINTER_GET_ATTRIBUTE, &a, sizeof(a), &rep,
			   sizeof(rep));
	if (rc == CUDA_SUCCESS)
		memcpy(data, &rep.value, sz);
	return rc;
}

CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs,
				void **data, CUdeviceptr ptr)
{
	if (!attrs || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		CUresult rc = cuPointerGetAttribute(data[i], attrs[i], ptr);

		/* like the driver: unknown memory reads as zeros */
		if (rc == CUDA_ERROR_INVALID_VALUE && attr_size(attrs[i]))
			memset(data[i], 0, attr_size(attrs[i]));
		else if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attr,
			       CUdeviceptr ptr)
{
	(void)value;
	(void)ptr;
	/* every worker copy is already synchronous where CUDA's would be */
	return attr == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ?
		       CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}
