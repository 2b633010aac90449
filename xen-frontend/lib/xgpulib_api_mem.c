// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_mem.c: device memory, guest pinned memory and pointer
 * attributes.
 *
 * The guest keeps a table of its device allocations (tab_mu), to tell
 * device from host pointers in unified copies without a round trip
 * (xgpulib_is_device).  Pinned memory (cuMemHostAlloc) is a host-memory
 * region shared with the worker (xgpulib_copy.c keeps their table).
 *
 * cuMemHostRegister on ordinary guest memory cannot share those pages
 * with the worker on every transport, so it is recorded and its copies are
 * staged (correct, not zero copy); cuMemHostGetDevicePointer on it answers
 * CUDA_ERROR_NOT_SUPPORTED.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_vec.h"

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;

struct dalloc {
	uint64_t dptr, size;
};
static struct dalloc *dallocs;
static size_t ndallocs, cap_dallocs;

struct hostreg {
	uint8_t *p;
	size_t size;
	unsigned int flags;
};
static struct hostreg *hostregs;
static size_t nhostregs, cap_hostregs;

/* ---- the table of device allocations ------------------------------------ */

void xgpulib_dalloc_add(uint64_t dptr, uint64_t size)
{
	struct dalloc *v;

	pthread_mutex_lock(&tab_mu);
	v = xgpulib_vec_grow(dallocs, ndallocs, &cap_dallocs, sizeof(*v), 64);
	if (v) {
		dallocs = v;
		dallocs[ndallocs++] = (struct dalloc){ dptr, size };
	}
	pthread_mutex_unlock(&tab_mu);
}

void xgpulib_dalloc_del(uint64_t dptr)
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


/* Is p device memory?  Known allocations first, then ask the worker. */
bool xgpulib_is_device(uint64_t p)
{
	struct xgpuif_ptr_attr_args a = { p, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					  0 };
	struct xgpuif_u64_reply r;
	uint64_t off;

	if (dalloc_has(p))
		return true;
	if (xgpulib_region_find((void *)(uintptr_t)p, 1, &off))
		return false;
	if (xgpulib_call_POINTER_GET_ATTRIBUTE(&a, &r) != CUDA_SUCCESS)
		return false;
	return r.value == CU_MEMORYTYPE_DEVICE;
}

/* ---- device memory ------------------------------------------------------ */

CUresult cuMemGetInfo(size_t *free, size_t *total)
{
	struct xgpuif_mem_info_reply r;
	CUresult rc;

	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_MEM_GET_INFO(&r);
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
	rc = xgpulib_call_MEM_ALLOC(&a, &r);
	if (rc == CUDA_SUCCESS) {
		*dptr = r.dptr;
		xgpulib_dalloc_add(r.dptr, bytesize);
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
	rc = xgpulib_call_MEM_ALLOC_PITCH(&a, &r);
	if (rc == CUDA_SUCCESS) {
		*dptr = r.dptr;
		*pitch = r.pitch;
		xgpulib_dalloc_add(r.dptr, r.pitch * height);
	}
	return rc;
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	const struct xgpulib_region *r;
	uint64_t off;
	CUresult rc;

	if (!dptr)
		return CUDA_SUCCESS;
	/* managed memory (xgpulib_api_managed.c) is a region of ours */
	r = xgpulib_region_find((void *)(uintptr_t)dptr, 1, &off);
	if (r && r->managed)
		return off ? CUDA_ERROR_INVALID_VALUE :
			     cuMemFreeHost((void *)(uintptr_t)dptr);
	rc = xgpulib_call_MEM_FREE(&a);
	if (rc == CUDA_SUCCESS)
		xgpulib_dalloc_del(dptr);
	return rc;
}

CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size,
			      CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	struct xgpuif_range_reply r;
	CUresult rc;

	rc = xgpulib_call_MEM_GET_ADDRESS_RANGE(&a, &r);
	if (rc == CUDA_SUCCESS) {
		if (base)
			*base = r.base;
		if (size)
			*size = r.size;
	}
	return rc;
}

/* ---- guest pinned memory ------------------------------------------------ */

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	struct xgpulib_transport *t;
	struct xgpuif_hostmem_args a;
	struct xgpuif_hostmem_reply r;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size;
	uint32_t id;
	void *va;
	CUresult rc;

	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	t = xgpulib_ch->t;
	size = (bytesize + page - 1) & ~(page - 1);
	id = xgpulib_region_reserve();
	if (!id)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&a, 0, sizeof(a));
	/* the fd travels on the socket just before the request: keep the
	 * two in order against other threads' regions */
	pthread_mutex_lock(&xgpulib_data_mu);
	if (t->ops->hostmem_alloc(t, id, size, &va, &a.dir)) {
		pthread_mutex_unlock(&xgpulib_data_mu);
		xgpulib_region_release(id);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a.region = id;
	a.flags = flags;
	a.size = size;
	a.guest_va = (uint64_t)(uintptr_t)va;
	rc = xgpulib_call_HOSTMEM_REGISTER(&a, &r);
	pthread_mutex_unlock(&xgpulib_data_mu);
	if (rc) {
		t->ops->hostmem_free(t, id, va, size);
		xgpulib_region_release(id);
		return rc;
	}
	xgpulib_region_publish(&(struct xgpulib_region){
		.id = id, .flags = flags, .va = va, .size = size,
		.dptr = r.dptr, .same_va = r.same_va });
	*pp = va;
	return CUDA_SUCCESS;
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
	struct xgpulib_transport *t;
	struct xgpuif_region_args a = { 0, 0 };
	const struct xgpulib_region *r;
	struct xgpulib_region gone;
	uint64_t off;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	t = xgpulib_ch->t;
	r = xgpulib_region_find(p, 1, &off);
	if (!r || off)
		return CUDA_ERROR_INVALID_VALUE;
	a.region = r->id;
	rc = xgpulib_call_HOSTMEM_UNREGISTER(&a);
	if (xgpulib_region_take(p, &gone))
		t->ops->hostmem_free(t, gone.id, gone.va, gone.size);
	return rc;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p,
				   unsigned int flags)
{
	const struct xgpulib_region *r;
	uint64_t off;

	if (!pdptr || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = xgpulib_region_find(p, 1, &off);
	if (!r)
		return CUDA_ERROR_NOT_SUPPORTED;
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
	struct hostreg *v;
	CUresult rc = CUDA_SUCCESS;

	if (!p || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < nhostregs; i++) {
		if ((uint8_t *)p < hostregs[i].p + hostregs[i].size &&
		    hostregs[i].p < (uint8_t *)p + bytesize) {
			rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
			goto out;
		}
	}
	v = xgpulib_vec_grow(hostregs, nhostregs, &cap_hostregs, sizeof(*v),
			     16);
	if (!v) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	hostregs = v;
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

/* ---- pointer attributes ------------------------------------------------- */

static CUresult host_attr(const struct xgpulib_region *r, uint64_t off,
			  CUpointer_attribute attr, void *data)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = xgpulib_current();
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		/* managed memory reads as device memory, as natively */
		*(unsigned int *)data = r->managed ? CU_MEMORYTYPE_DEVICE :
						     CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = r->dptr + off;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = r->va + off;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = r->managed;
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
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = xgpulib_region_find((void *)(uintptr_t)ptr, 1, &off);
	if (r)
		return host_attr(r, off, attr, data);
	if (attr == CU_POINTER_ATTRIBUTE_CONTEXT) {
		rc = xgpulib_call_POINTER_GET_ATTRIBUTE(&a, &rep);
		if (rc == CUDA_SUCCESS)
			*(CUcontext *)data = xgpulib_current() ?
				xgpulib_current() : (CUcontext)xgpulib_primary(0);
		return rc;
	}
	sz = attr_size(attr);
	if (!sz)
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = xgpulib_call_POINTER_GET_ATTRIBUTE(&a, &rep);
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
