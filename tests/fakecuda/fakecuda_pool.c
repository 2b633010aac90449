// SPDX-License-Identifier: MIT
/*
 * fakecuda_pool.c: the fake driver's stream-ordered allocation and memory
 * pools (tests only, see fakecuda.h).  Everything completes at once, so
 * an asynchronous allocation is an ordinary one that remembers its pool;
 * a pool keeps its attributes and counts what is allocated from it.
 */
#include <stdlib.h>

#include "fakecuda.h"

static struct fpool default_pool;
static struct fpool *current_pool;

static struct fpool *pool_of(CUmemoryPool p)
{
	if (p == (CUmemoryPool)&default_pool)
		return &default_pool;
	return (struct fpool *)fc_obj_find(p, O_POOL);
}

static CUresult pool_alloc(CUdeviceptr *dptr, size_t size,
			   struct fpool *pool, CUstream s)
{
	struct range *r;
	CUresult rc;

	NEED_CTX();
	if (!dptr || !pool)
		return CUDA_ERROR_INVALID_VALUE;
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	rc = fc_dev_alloc(dptr, size);
	if (rc)
		return rc;
	r = fc_range_at((uintptr_t)*dptr, R_DEVICE);
	r->pool = pool;
	pool->used += size;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
	return pool_alloc(dptr, size,
			  current_pool ? current_pool : &default_pool, s);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size,
				 CUmemoryPool pool, CUstream s)
{
	return pool_alloc(dptr, size, pool_of(pool), s);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	struct range *r;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	r = fc_range_at((uintptr_t)dptr, R_DEVICE);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	fc_range_del(r);
	return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	struct fpool *p;

	NEED_INIT();
	if (!pool || !props ||
	    props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    props->location.id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fc_obj_add(&p->o, O_POOL, NULL);
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	struct fpool *p = (struct fpool *)fc_obj_find(pool, O_POOL);

	NEED_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	/* allocations outlive the pool (the real driver's rule) */
	for (size_t i = 0; i < fc_nranges; i++)
		if (fc_ranges[i].pool == p)
			fc_ranges[i].pool = NULL;
	if (current_pool == p)
		current_pool = NULL;
	fc_obj_unlink(&p->o);
	free(p);
	return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
			       void *value)
{
	struct fpool *p = pool_of(pool);

	NEED_INIT();
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] =
			*(int *)value;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->threshold = *(cuuint64_t *)value;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(cuuint64_t *)value)
			return CUDA_ERROR_INVALID_VALUE;
		p->used_high = p->used;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
			       void *value)
{
	struct fpool *p = pool_of(pool);

	NEED_INIT();
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value =
			p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = p->threshold;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = p->used;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = p->used_high;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
	(void)keep;
	NEED_INIT();
	return pool_of(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
			    size_t count)
{
	NEED_INIT();
	if (!pool_of(pool) || (count && !map))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    map[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool,
			    CUmemLocation *loc)
{
	NEED_INIT();
	if (!flags || !pool_of(pool) || !loc)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id == 0 ?
			 CU_MEM_ACCESS_FLAGS_PROT_READWRITE :
			 CU_MEM_ACCESS_FLAGS_PROT_NONE;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)&default_pool;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)(current_pool ? current_pool : &default_pool);
	return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	struct fpool *p = pool_of(pool);

	CHECK_DEV(dev);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	current_pool = p == &default_pool ? NULL : p;
	return CUDA_SUCCESS;
}
