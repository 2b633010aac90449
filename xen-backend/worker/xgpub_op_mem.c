// SPDX-License-Identifier: MIT
/*
 * xgpub_op_mem.c: device memory (charged to the guest's quota), host-memory
 * regions (guest memory shared with the worker and pinned), and pointer
 * attributes.
 */
#include <errno.h>
#include <string.h>

#include "xgpub_worker.h"

/* largest host-memory region a guest may share (64 GiB) */
#define MAX_REGION_BYTES (64ull << 30)

XGPUB_HANDLER(MEM_GET_INFO)
{
	size_t f = 0, t = 0;
	int rc;

	rc = w->D->cuMemGetInfo(&f, &t);
	if (rc)
		return rc;
	r->free = f;
	r->total = t;
	if (w->opt->quota) {
		/* the guest's: what all its processes hold */
		uint64_t used = xgpub_guest_mem_used(w);
		uint64_t left = used < w->opt->quota ?
					w->opt->quota - used : 0;

		r->total = w->opt->quota < t ? w->opt->quota : t;
		r->free = left < f ? left : f;
	}
	return 0;
}

/*
 * Charge the driver's new allocation of `size` bytes at p to the guest's
 * quota, or free it again if it cannot be recorded.
 */
static int charge(struct xgpub_worker *w, CUdeviceptr p, uint64_t size,
		  uint64_t *dptr)
{
	if (xgpub_alloc_add(w, p, size)) {
		w->D->cuMemFree(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = p;
	return 0;
}

XGPUB_HANDLER(MEM_ALLOC)
{
	CUdeviceptr p;
	int rc;

	if (!xgpub_quota_allows(w, a->bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuMemAlloc(&p, a->bytesize);
	return rc ? rc : charge(w, p, a->bytesize, &r->dptr);
}

XGPUB_HANDLER(MEM_ALLOC_PITCH)
{
	CUdeviceptr p;
	size_t pitch;
	int rc;

	if (a->height && a->width_bytes > UINT64_MAX / a->height)
		return CUDA_ERROR_INVALID_VALUE;
	/* rows are padded to at most 512 bytes more than their width */
	if (!xgpub_quota_allows(w, (a->width_bytes + 512) * a->height))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuMemAllocPitch(&p, &pitch, a->width_bytes, a->height,
				   a->elem_size);
	if (rc == 0)
		rc = charge(w, p, (uint64_t)pitch * a->height, &r->dptr);
	if (rc == 0)
		r->pitch = pitch;
	return rc;
}

XGPUB_HANDLER(MEM_FREE)
{
	int rc;

	/* only what this guest allocated: never a pointer of the worker's */
	if (!xgpub_alloc_has(w, a->dptr))
		return CUDA_ERROR_INVALID_VALUE;
	/* uncharged once it is really gone */
	rc = w->D->cuMemFree(a->dptr);
	if (rc == 0) {
		xgpub_alloc_del(w, a->dptr);
		xgpub_managed_forget(a->dptr);
	}
	return rc;
}

XGPUB_HANDLER(MEM_GET_ADDRESS_RANGE)
{
	CUdeviceptr base;
	size_t size;
	int rc;

	rc = w->D->cuMemGetAddressRange(&base, &size, a->dptr);
	if (rc)
		return rc;
	r->base = base;
	r->size = size;
	return 0;
}

/* ---- host-memory regions ------------------------------------------------------ */

/*
 * Map the pages of host-memory region a->region (they came from the guest
 * through the transport) and pin them.  Every region counts against the
 * guest's pinned-memory quota (opt->pin_quota): this is Dom0 memory the
 * driver locks.  Pinned memory (hostreg false) is mapped where it can be
 * and registered if the driver lets it; the guest's own memory
 * (HOST_REGISTER) must land at guest_va and register with the guest's
 * flags, or it is unmapped again and refused.
 */
static int region_map(struct xgpub_worker *w,
		      const struct xgpuif_hostmem_args *a, bool hostreg,
		      struct xgpuif_hostmem_reply *r)
{
	const uint64_t pin_quota = w->opt ? w->opt->pin_quota : 0;
	unsigned int flags = CU_MEMHOSTREGISTER_PORTABLE |
			     CU_MEMHOSTREGISTER_DEVICEMAP;
	struct xgpub_region *reg;
	CUdeviceptr dptr = 0;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	bool in_data;
	void *va;
	int rc;

	if (a->region == 0 || a->region >= XGPUB_MAX_REGIONS || !a->size ||
	    a->size > MAX_REGION_BYTES || a->size % XGPUIF_PAGE_SIZE)
		return XGPUIF_ST_PROTO;
	reg = &w->regions[a->region];
	if (reg->va)
		return XGPUIF_ST_PROTO;	/* id in use */
	/* memory of the worker's own at the guest's address: a registration */
	if (!hostreg && a->dir.region == XGPUIF_REGION_ANON)
		return XGPUIF_ST_PROTO;
	rc = 0;
	if (hostreg) {
		if (a->flags & ~(CU_MEMHOSTREGISTER_PORTABLE |
				 CU_MEMHOSTREGISTER_DEVICEMAP |
				 CU_MEMHOSTREGISTER_READ_ONLY) ||
		    !a->guest_va || a->guest_va % XGPUIF_PAGE_SIZE ||
		    a->guest_va + a->size < a->guest_va)
			rc = CUDA_ERROR_INVALID_VALUE;
		flags |= a->flags & CU_MEMHOSTREGISTER_READ_ONLY;
	}
	/*
	 * A driver that is xgpu's own library on the network keeps mapped
	 * memory equal to device memory by comparing it at every launch
	 * (xgpulib_shadow.h): only a registration the guest asked to map
	 * is mapped there, not every pinned buffer.
	 */
	if (w->opt && w->opt->remote_driver &&
	    !(hostreg && (a->flags & CU_MEMHOSTREGISTER_DEVICEMAP)))
		flags &= ~CU_MEMHOSTREGISTER_DEVICEMAP;
	if (!rc && pin_quota && (xgpub_guest_pinned(w) > pin_quota ||
				 a->size > pin_quota - xgpub_guest_pinned(w)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc) {
		/* the transport's descriptor is on its way: take it anyway,
		 * so that the next region's does not read this one's */
		if (w->t->ops->hostmem_map(w->t, a->region, a->size, &a->dir,
					   0, &va) == 0)
			w->t->ops->hostmem_unmap(w->t, va, a->size);
		return rc;
	}
	rc = w->t->ops->hostmem_map(w->t, a->region, a->size, &a->dir,
				    a->guest_va, &va);
	if (rc == -ENOSPC)
		return CUDA_ERROR_OUT_OF_MEMORY;	/* past a transport cap */
	if (rc == -EEXIST)	/* the network: that address is taken here */
		return CUDA_ERROR_NOT_SUPPORTED;
	if (rc)
		return XGPUIF_ST_PROTO;
	if (hostreg && (uint64_t)(uintptr_t)va != a->guest_va) {
		xgpub_info("%s: registered memory at %#llx cannot be mapped at "
			   "the program's address here; the guest stages its "
			   "copies", w->t->who,
			   (unsigned long long)a->guest_va);
		w->t->ops->hostmem_unmap(w->t, va, a->size);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	/* pinned memory made during a global capture (the guest's first host
	 * function may be captured): pinning it does not touch the capture.
	 * A part of the data area kept for good (the network) is pinned with
	 * the area already. */
	in_data = !hostreg && (uint8_t *)va >= w->t->data &&
		  (uint8_t *)va < w->t->data + w->t->data_bytes;
	xgpub_capture_mode_swap(w, &mode);
	if (in_data && w->data_registered)
		rc = 0;
	else
		rc = w->D->cuMemHostRegister(va, a->size, flags);
	xgpub_capture_mode_swap(w, &mode);
	if (rc == 0) {
		if (flags & CU_MEMHOSTREGISTER_DEVICEMAP)
			w->D->cuMemHostGetDevicePointer(&dptr, va, 0);
	} else if (hostreg) {
		w->t->ops->hostmem_unmap(w->t, va, a->size);
		return rc;
	} else {
		xgpub_info("%s: region %u not pinned (%d); its copies still "
			   "work through the driver's staging", w->t->who,
			   a->region, rc);
	}
	reg->id = a->region;
	reg->va = va;
	reg->size = a->size;
	reg->registered = rc == 0;
	reg->in_data = in_data;
	reg->hostreg = hostreg;
	w->pinned += a->size;
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->pinned, w->pinned,
				 __ATOMIC_RELAXED);
	r->dptr = dptr;
	r->same_va = (uint64_t)(uintptr_t)va == a->guest_va;
	return 0;
}

XGPUB_HANDLER(HOSTMEM_REGISTER)
{
	return region_map(w, a, false, r);
}

XGPUB_HANDLER(HOST_REGISTER)
{
	return region_map(w, a, true, r);
}

/*
 * A pinned or registered region's device pointer, asked for by the
 * guest: the driver xgpu's own library on the network (--remote-driver)
 * maps such memory for kernels only when asked (region_map), as it costs
 * a comparison of the buffer at every launch there.
 */
XGPUB_HANDLER(HOSTMEM_DPTR)
{
	struct xgpub_region *reg = xgpub_region_get(w, a->region);
	CUdeviceptr dptr = 0;
	int rc;

	if (!reg)
		return CUDA_ERROR_INVALID_VALUE;
	if (!reg->registered)
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = w->D->cuMemHostGetDevicePointer(&dptr, reg->va, 0);
	if (rc)
		return rc;
	r->dptr = dptr;
	return 0;
}

XGPUB_HANDLER(HOSTMEM_UNREGISTER)
{
	struct xgpub_region *reg = xgpub_region_get(w, a->region);

	if (!reg)
		return CUDA_ERROR_INVALID_VALUE;
	/* the guest may free it while DMA is queued: drain first */
	w->D->cuCtxSynchronize();
	/* a graph may copy to or from it at any later launch: the worker
	 * keeps its mapping until the teardown (the guest's id is free
	 * again); with no room to remember it, for the worker's life */
	if (reg->graphed) {
		struct xgpub_region *n = xgpub_push(&w->retired, &w->nretired,
						    &w->cap_retired,
						    sizeof(*n), 16, UINT32_MAX);

		if (n)
			*n = *reg;
		memset(reg, 0, sizeof(*reg));
		return 0;
	}
	if (reg->registered && !reg->in_data)
		w->D->cuMemHostUnregister(reg->va);
	w->t->ops->hostmem_unmap(w->t, reg->va, reg->size);
	w->pinned -= reg->size < w->pinned ? reg->size : w->pinned;
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->pinned, w->pinned,
				 __ATOMIC_RELAXED);
	memset(reg, 0, sizeof(*reg));
	return 0;
}

XGPUB_HANDLER(POINTER_GET_ATTRIBUTE)
{
	union {
		uint64_t u64;
		uint32_t u32;
		void *p;
		uint8_t any[64];	/* room for any attribute's value */
	} v;
	int rc;

	/*
	 * Only attributes whose value fits the 8-byte reply (P2P tokens are
	 * 16 bytes); pointers into the worker itself (host pointer, pool
	 * handle) are nobody's business.
	 */
	switch (a->attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	memset(&v, 0, sizeof(v));
	rc = w->D->cuPointerGetAttribute(&v, a->attr, a->ptr);
	if (rc)
		return rc;
	/* a context comes back as a worker pointer: say only that it is ok */
	r->value = a->attr == CU_POINTER_ATTRIBUTE_CONTEXT ? 1 : v.u64;
	return 0;
}
