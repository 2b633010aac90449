// SPDX-License-Identifier: MIT
/*
 * xgpub_op_vmm.c: the virtual memory management API (cuMemCreate,
 * cuMemAddressReserve, cuMemMap, ...), used by PyTorch's expandable
 * segments.
 *
 * Physical allocations are handles of kind VMEM (the driver's handle
 * value, its size and the references the guest holds); their size is
 * charged to the quota from cuMemCreate until the last reference goes.
 * Address ranges are the guest's reservations, kept here: a map, unmap,
 * access change or free must lie inside one, so a guest never maps over
 * or frees address space that is not its own.  Only the guest's device
 * (0) is a location.  Exports to shareable handles (POSIX fds, between
 * processes of one guest) are xgpub_op_share.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

static int prop_of(struct xgpub_worker *w, const struct xgpuif_vmm_prop *p,
		   CUmemAllocationProp *out)
{
	if (p->kind.loc_type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    p->kind.loc_id != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	memset(out, 0, sizeof(*out));
	out->type = (CUmemAllocationType)p->kind.type;
	out->requestedHandleTypes =
		(CUmemAllocationHandleType)p->kind.handle_types;
	out->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	out->location.id = w->dev;
	out->allocFlags.compressionType = p->compression;
	out->allocFlags.gpuDirectRDMACapable = p->rdma;
	out->allocFlags.usage = p->usage;
	return 0;
}

/* every reference the guest still holds (teardown, or a release) */
int xgpub_vmm_release(struct xgpub_worker *w, struct xgpub_hentry *e)
{
	struct xgpub_vmem *v = e->extra;
	int rc = 0;

	for (; v && v->refs; v->refs--)
		rc = w->D->cuMemRelease((CUmemGenericAllocationHandle)(uintptr_t)
					e->obj);
	if (v) {
		w->mem_used -= v->size;
		v->size = 0;
	}
	xgpub_share_forget(w, e->obj);
	return rc;
}

/* the reservation holding [p, p + n), or -1 */
static int reservation(struct xgpub_worker *w, uint64_t p, uint64_t n)
{
	for (uint32_t i = 0; i < w->nvres; i++) {
		const struct xgpub_alloc *r = &w->vres[i];

		if (p >= r->dptr && p - r->dptr <= r->size &&
		    n <= r->size - (p - r->dptr))
			return (int)i;
	}
	return -1;
}

XGPUB_HANDLER(VMM_CREATE)
{
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop;
	int rc = prop_of(w, &a->prop, &prop);

	if (rc == 0)
		rc = xgpub_alloc_check(w, a->size);
	if (rc)
		return rc;
	rc = w->D->cuMemCreate(&h, a->size, &prop, a->flags);
	if (rc == 0)
		rc = xgpub_vmem_keep(w, h, a->size, &r->handle);
	if (rc)
		return rc;
	w->mem_used += a->size;
	return 0;
}

XGPUB_HANDLER(VMM_RELEASE)
{
	struct xgpub_vmem *v = handle->extra;
	int rc;

	rc = w->D->cuMemRelease((CUmemGenericAllocationHandle)(uintptr_t)
				handle->obj);
	if (rc)
		return rc;
	if (--v->refs == 0) {
		/* an exported fd still holds it: charged until the teardown
		 * (xgpub_op_share.c) */
		if (!xgpub_share_exported(w, handle->obj))
			w->mem_used -= v->size;
		xgpub_share_forget(w, handle->obj);
		xgpub_handle_drop(&w->h, handle);
	}
	return 0;
}

XGPUB_HANDLER(VMM_RESERVE)
{
	struct xgpub_alloc *n;
	CUdeviceptr p;
	int rc;

	n = xgpub_grow(w->vres, w->nvres, &w->cap_vres, sizeof(*n), 64, 65536);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	w->vres = n;
	rc = w->D->cuMemAddressReserve(&p, a->size, a->align, a->addr,
				       a->flags);
	if (rc)
		return rc;
	w->vres[w->nvres++] = (struct xgpub_alloc){ p, a->size };
	r->dptr = p;
	return 0;
}

XGPUB_HANDLER(VMM_ADDRESS_FREE)
{
	int i = reservation(w, a->ptr, a->size);
	int rc;

	if (i < 0 || w->vres[i].dptr != a->ptr || w->vres[i].size != a->size)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuMemAddressFree(a->ptr, a->size);
	if (rc == 0)
		w->vres[i] = w->vres[--w->nvres];
	return rc;
}

XGPUB_HANDLER(VMM_MAP)
{
	if (reservation(w, a->ptr, a->size) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	return w->D->cuMemMap(a->ptr, a->size, a->offset,
			      (CUmemGenericAllocationHandle)(uintptr_t)
			      handle->obj, a->flags);
}

XGPUB_HANDLER(VMM_UNMAP)
{
	if (reservation(w, a->ptr, a->size) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	return w->D->cuMemUnmap(a->ptr, a->size);
}

/*
 * The range [ptr, ptr + n) of an access call inside a reservation of the
 * guest's, and its location, the guest's device 0 as the worker's device.
 */
static int access_of(struct xgpub_worker *w,
		     const struct xgpuif_vmm_access_args *a, uint64_t n,
		     CUmemLocation *l)
{
	if (reservation(w, a->ptr, n) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->loc_type != CU_MEM_LOCATION_TYPE_DEVICE || a->loc_id != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	l->type = CU_MEM_LOCATION_TYPE_DEVICE;
	l->id = w->dev;
	return 0;
}

XGPUB_HANDLER(VMM_SET_ACCESS)
{
	CUmemAccessDesc d;
	int rc = access_of(w, a, a->size, &d.location);

	if (rc)
		return rc;
	d.flags = (CUmemAccess_flags)a->flags;
	return w->D->cuMemSetAccess(a->ptr, a->size, &d, 1);
}

XGPUB_HANDLER(VMM_GET_ACCESS)
{
	unsigned long long f = 0;
	CUmemLocation l;
	int rc = access_of(w, a, 1, &l);

	if (rc)
		return rc;
	rc = w->D->cuMemGetAccess(&f, &l, a->ptr);
	if (rc == 0)
		r->value = f;
	return rc;
}

XGPUB_HANDLER(VMM_GRANULARITY)
{
	CUmemAllocationProp prop;
	size_t g = 0;
	int rc = prop_of(w, &a->prop, &prop);

	if (rc)
		return rc;
	rc = w->D->cuMemGetAllocationGranularity(
		&g, &prop, (CUmemAllocationGranularity_flags)a->option);
	if (rc == 0)
		r->value = g;
	return rc;
}

XGPUB_HANDLER(VMM_RETAIN)
{
	CUmemGenericAllocationHandle h;
	int rc;

	if (reservation(w, a->ptr, 1) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)a->ptr);
	if (rc)
		return rc;
	if (xgpub_vmem_ref(w, h, &r->handle))
		return 0;
	/* mapped in a reservation of the guest's, so created by it */
	w->D->cuMemRelease(h);
	return CUDA_ERROR_INVALID_VALUE;
}

XGPUB_HANDLER(VMM_PROPS)
{
	CUmemAllocationProp p;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = w->D->cuMemGetAllocationPropertiesFromHandle(
		&p, (CUmemGenericAllocationHandle)(uintptr_t)handle->obj);
	if (rc)
		return rc;
	r->prop = (struct xgpuif_vmm_prop){
		.kind = { .type = p.type,
			  .handle_types = p.requestedHandleTypes,
			  .loc_type = p.location.type, .loc_id = 0 },
		.compression = p.allocFlags.compressionType,
		.rdma = p.allocFlags.gpuDirectRDMACapable,
		.usage = p.allocFlags.usage,
	};
	return 0;
}
