// SPDX-License-Identifier: MIT
/*
 * xgpub_op_pool.c: stream-ordered allocation and memory pools.
 *
 * An allocation from a pool is charged to the guest's quota like any
 * other (by its requested size) and freed like any other at teardown.
 * Pools are handles of kind POOL: the ones the guest created, and the
 * device's default pool, which gets one handle for the worker's life and
 * is never destroyed.  Pools may be shareable by POSIX fd between
 * processes of one guest (xgpub_op_share.c); other handle types (fabric,
 * Windows) are refused.
 */
#include <string.h>

#include "xgpub_worker.h"

/* the handle of a pool the driver gave us, a new one if it has none */
static xgpuif_handle_t pool_handle(struct xgpub_worker *w, CUmemoryPool p)
{
	xgpuif_handle_t h = xgpub_handle_named(&w->h, XGPUB_H_POOL, p);

	return h ? h : xgpub_handle_new(&w->h, XGPUB_H_POOL, p, NULL);
}

static int default_pool(struct xgpub_worker *w, CUmemoryPool *p)
{
	int rc = 0;

	if (!w->default_pool)
		rc = w->D->cuDeviceGetDefaultMemPool(&w->default_pool, w->dev);
	*p = w->default_pool;
	return rc;
}

XGPUB_HANDLER(MEM_ALLOC_ASYNC)
{
	CUdeviceptr p;
	void *pool;
	int rc = xgpub_handle_opt(w, a->pool, XGPUB_H_POOL, &pool);

	if (rc == 0)
		rc = xgpub_alloc_check(w, a->bytesize);
	if (rc)
		return rc;
	rc = pool ? w->D->cuMemAllocFromPoolAsync(&p, a->bytesize, pool,
						 stream) :
		    w->D->cuMemAllocAsync(&p, a->bytesize, stream);
	if (rc)
		return rc;
	if (xgpub_alloc_add(w, p, a->bytesize)) {
		w->D->cuMemFreeAsync(p, stream);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->dptr = p;
	return 0;
}

XGPUB_HANDLER(MEM_FREE_ASYNC)
{
	/* only what this guest allocated: never a pointer of the worker's */
	if (xgpub_alloc_del(w, a->dptr))
		return CUDA_ERROR_INVALID_VALUE;
	return w->D->cuMemFreeAsync(a->dptr, stream);
}

XGPUB_HANDLER(POOL_CREATE)
{
	CUmemPoolProps props;
	CUmemoryPool p;
	int rc;

	/* shareable between processes of one guest: POSIX fds only
	 * (xgpub_op_share.c); fabric and Windows handles are refused */
	if (a->kind.handle_types != CU_MEM_HANDLE_TYPE_NONE &&
	    a->kind.handle_types != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* the guest's device 0 is the worker's device */
	if (a->kind.loc_type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    a->kind.loc_id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&props, 0, sizeof(props));
	props.allocType = (CUmemAllocationType)a->kind.type;
	props.handleTypes = (CUmemAllocationHandleType)a->kind.handle_types;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = w->dev;
	props.maxSize = a->max_size;
	props.usage = a->usage;
	rc = w->D->cuMemPoolCreate(&p, &props);
	return rc ? rc : xgpub_keep(w, XGPUB_H_POOL, p, NULL, &r->pool);
}

XGPUB_HANDLER(POOL_DESTROY)
{
	void *obj = handle->obj;
	int rc;

	if (xgpub_pool_is_default(w, obj))
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpub_release_drop(w, handle);
	if (rc == 0)
		xgpub_share_forget(w, obj);
	return rc;
}

XGPUB_HANDLER(POOL_ATTR)
{
	CUmemPool_attribute attr = (CUmemPool_attribute)a->attr;
	cuuint64_t v64 = a->value;
	int v32 = (int)a->value;
	bool is_int = xgpuif_pool_attr_is_int(a->attr);
	void *v = is_int ? (void *)&v32 : (void *)&v64;
	int rc;

	if (a->set > 1)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->set)
		return w->D->cuMemPoolSetAttribute(pool->obj, attr, v);
	rc = w->D->cuMemPoolGetAttribute(pool->obj, attr, v);
	if (rc == 0)
		r->value = is_int ? (uint64_t)(uint32_t)v32 : v64;
	return rc;
}

XGPUB_HANDLER(POOL_TRIM)
{
	return w->D->cuMemPoolTrimTo(pool->obj, a->min_bytes);
}

XGPUB_HANDLER(DEVICE_POOL)
{
	struct xgpub_hentry *e;
	CUmemoryPool p, def;
	int rc;

	if (a->device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	rc = default_pool(w, &def);
	if (rc)
		return rc;
	switch (a->which) {
	case XGPUIF_DEVPOOL_DEFAULT:
		p = def;
		break;
	case XGPUIF_DEVPOOL_CURRENT:
		rc = w->D->cuDeviceGetMemPool(&p, w->dev);
		if (rc)
			return rc;
		break;
	case XGPUIF_DEVPOOL_SET:
		e = xgpub_handle_get(&w->h, a->pool, XGPUB_H_POOL);
		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		r->pool = a->pool;
		return w->D->cuDeviceSetMemPool(w->dev, e->obj);
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	r->pool = pool_handle(w, p);
	return r->pool ? 0 : CUDA_ERROR_OUT_OF_MEMORY;
}

XGPUB_HANDLER(POOL_ACCESS)
{
	CUmemLocation loc = { .type = (CUmemLocationType)a->loc_type,
			      .id = a->loc_id };
	CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	CUmemAccessDesc d;
	int rc;

	/* one device: the guest's 0 is ours; host locations pass as they are */
	if (a->loc_type == CU_MEM_LOCATION_TYPE_DEVICE) {
		if (a->loc_id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
		loc.id = w->dev;
	}
	if (a->set > 1)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->set) {
		d.location = loc;
		d.flags = (CUmemAccess_flags)a->flags;
		return w->D->cuMemPoolSetAccess(pool->obj, &d, 1);
	}
	rc = w->D->cuMemPoolGetAccess(&f, pool->obj, &loc);
	if (rc == 0)
		r->value = (uint64_t)f;
	return rc;
}
