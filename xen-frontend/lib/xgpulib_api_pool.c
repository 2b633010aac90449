// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_pool.c: stream-ordered allocation (cuMemAllocAsync,
 * cuMemFreeAsync, cuMemAllocFromPoolAsync) and memory pools.
 *
 * An asynchronous allocation is a synchronous round trip (the pointer is
 * needed at once); the allocation itself stays stream-ordered in the
 * worker.  A free is posted.  Pools are guest objects around the worker's
 * handles, one object per handle, so that the device's default pool is
 * the same CUmemoryPool every time it is asked for.  Pools shareable by
 * POSIX fd between processes of one guest are served like allocations'
 * shareable handles (xgpulib_api_vmm.c): the program's fd is a memfd of
 * ours holding the worker's token; an exported pointer's
 * CUmemPoolPtrExportData holds XGPUIF_PTR_MAGIC and a token for the
 * driver's data, which stays in Dom0.  Fabric and Windows handle types
 * are refused.  Only device-located pools exist (the guest's one device).
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_dev.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

/* pools are objects of xgpulib_graphobj.c's table (RK_POOL) */
static CUmemoryPool pool_for(uint64_t remote)
{
	return (CUmemoryPool)robj_for(RK_POOL, remote, NULL);
}

/* the worker handle of a pool argument; 0 for one that is not ours */
static uint64_t pool_remote(CUmemoryPool pool)
{
	return robj_remote(pool, RK_POOL);
}

/* ---- stream-ordered allocation ------------------------------------------ */

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, uint64_t pool,
			    CUstream s, int ptds)
{
	struct xgpuif_mem_alloc_async_args a = { size, 0, pool };
	struct xgpuif_dptr_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_stream_out_arg(s, ptds, dptr != NULL, &a.stream);
	if (rc)
		return rc;
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_MEM_ALLOC_ASYNC(&a, &r);
	return xgpulib_dalloc_out(rc, r.dptr, size, dptr);
}

CUresult xgpulib_mem_alloc_async(CUdeviceptr *dptr, size_t size, CUstream s,
				 int ptds)
{
	return alloc_async(dptr, size, 0, s, ptds);
}

CUresult xgpulib_mem_alloc_from_pool_async(CUdeviceptr *dptr, size_t size,
					   CUmemoryPool pool, CUstream s,
					   int ptds)
{
	uint64_t r = pool_remote(pool);

	XGPULIB_CHECK_ARGS(r, true);
	return alloc_async(dptr, size, r, s, ptds);
}

CUresult xgpulib_mem_free_async(CUdeviceptr dptr, CUstream s, int ptds)
{
	struct xgpuif_mem_free_async_args a = { dptr, 0 };
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	xgpulib_dalloc_del(dptr);
	return xgpulib_post_MEM_FREE_ASYNC(&a);
}

/* ---- pools -------------------------------------------------------------- */

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	struct xgpuif_pool_create_args a = { 0 };
	struct xgpuif_pool_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(pool && props);
	if (rc)
		return rc;
	if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE &&
	    xgpulib_share_type("cuMemPoolCreate", props->handleTypes))
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = xgpulib_mem_kind(props->allocType, props->handleTypes,
			      &props->location, "cuMemPoolCreate", &a.kind);
	if (rc)
		return rc;
	a.max_size = props->maxSize;
	a.usage = props->usage;
	rc = xgpulib_call_POOL_CREATE(&a, &r);
	if (rc)
		return rc;
	*pool = pool_for(r.pool);
	return xgpulib_kept(*pool, r.pool, xgpulib_call_POOL_DESTROY);
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return robj_destroy(pool, RK_POOL, xgpulib_call_POOL_DESTROY);
}

/* cuMemPoolGetAttribute (set 0), cuMemPoolSetAttribute (set 1):
 * xgpulib_entry.def */
CUresult xgpulib_pool_attr(CUmemoryPool pool, CUmemPool_attribute attr,
			   void *value, int set)
{
	struct xgpuif_pool_attr_args a = { pool_remote(pool),
					   (uint32_t)attr, set, 0 };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	XGPULIB_CHECK_ARGS(a.pool && value, true);
	if (set)
		a.value = xgpuif_pool_attr_is_int(attr) ?
				  (uint64_t)(uint32_t)*(int *)value :
				  *(cuuint64_t *)value;
	rc = xgpulib_call_POOL_ATTR(&a, &r);
	if (rc == CUDA_SUCCESS && !set) {
		if (xgpuif_pool_attr_is_int(attr))
			*(int *)value = (int)r.value;
		else
			*(cuuint64_t *)value = r.value;
	}
	return rc;
}


CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	struct xgpuif_pool_trim_args a = { pool_remote(pool), minBytesToKeep };

	XGPULIB_CHECK_ARGS(a.pool, true);
	return xgpulib_call_POOL_TRIM(&a);
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
			    size_t count)
{
	struct xgpuif_pool_access_args a = { .pool = pool_remote(pool),
					     .set = 1 };
	struct xgpuif_u64_reply r;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!a.pool || (count && !map))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++) {
		a.loc_type = (uint32_t)map[i].location.type;
		a.loc_id = map[i].location.id;
		a.flags = (uint32_t)map[i].flags;
		rc = xgpulib_call_POOL_ACCESS(&a, &r);
		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
			    CUmemLocation *location)
{
	struct xgpuif_pool_access_args a = { .pool = pool_remote(memPool) };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	XGPULIB_CHECK_ARGS(flags && a.pool && location, true);
	a.loc_type = (uint32_t)location->type;
	a.loc_id = location->id;
	rc = xgpulib_call_POOL_ACCESS(&a, &r);
	if (rc == CUDA_SUCCESS)
		*flags = (CUmemAccess_flags)r.value;
	return rc;
}

/* ---- sharing pools between processes of one guest ----------------------- */

CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
					  CUmemAllocationHandleType handleType,
					  unsigned long long flags)
{
	uint64_t h = pool_remote(pool);

	return xgpulib_share_export("cuMemPoolExportToShareableHandle",
				    xgpulib_call_POOL_EXPORT, h, flags,
				    handleType, handle_out && h, handle_out);
}

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out,
					    void *handle,
					    CUmemAllocationHandleType type,
					    unsigned long long flags)
{
	struct xgpuif_pool_reply r = { 0 };
	struct xgpuif_ipc_handle a;
	CUresult rc = xgpulib_share_import(
		"cuMemPoolImportFromShareableHandle", pool_out && !flags, type,
		handle, &a);

	if (rc)
		return rc;
	rc = xgpulib_call_POOL_IMPORT(&a, &r);
	if (rc)
		return rc;
	*pool_out = pool_for(r.pool);
	return xgpulib_kept(*pool_out, r.pool, xgpulib_call_POOL_DESTROY);
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out,
				CUdeviceptr ptr)
{
	struct xgpuif_dptr_args a = { ptr };
	struct xgpuif_ipc_handle r;
	CUresult rc;

	XGPULIB_CHECK_ARGS(shareData_out, true);
	memset(&r, 0, sizeof(r));
	rc = xgpulib_call_POOL_EXPORT_PTR(&a, &r);
	if (rc == CUDA_SUCCESS)
		memcpy(shareData_out->reserved, r.bytes,
		       sizeof(shareData_out->reserved));
	return rc;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
				CUmemPoolPtrExportData *shareData)
{
	struct xgpuif_pool_import_ptr_args a = { pool_remote(pool), { 0 } };
	struct xgpuif_pool_ptr_reply r = { 0, 0 };
	CUresult rc;

	XGPULIB_CHECK_ARGS(ptr_out && shareData && a.pool, true);
	memcpy(a.bytes, shareData->reserved, sizeof(a.bytes));
	rc = xgpulib_call_POOL_IMPORT_PTR(&a, &r);
	if (rc)
		return rc;
	*ptr_out = r.dptr;
	if (r.size)
		xgpulib_dalloc_add(r.dptr, r.size);
	return CUDA_SUCCESS;
}

/* ---- a device's pools --------------------------------------------------- */

static CUresult device_pool(uint32_t which, CUdevice dev, CUmemoryPool *out,
			    CUmemoryPool set)
{
	struct xgpuif_device_pool_args a = { which, dev, 0 };
	struct xgpuif_pool_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_dev_arg(which == XGPUIF_DEVPOOL_SET || out != NULL, dev);
	if (rc)
		return rc;
	if (which == XGPUIF_DEVPOOL_SET) {
		a.pool = pool_remote(set);
		if (!a.pool)
			return CUDA_ERROR_INVALID_VALUE;
	}
	rc = xgpulib_call_DEVICE_POOL(&a, &r);
	if (rc || which == XGPUIF_DEVPOOL_SET)
		return rc;
	*out = pool_for(r.pool);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	return device_pool(XGPUIF_DEVPOOL_DEFAULT, dev, pool_out, NULL);
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	return device_pool(XGPUIF_DEVPOOL_CURRENT, dev, pool, NULL);
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	return device_pool(XGPUIF_DEVPOOL_SET, dev, NULL, pool);
}

/*
 * The CUDA 13 forms by location: a device's pinned pool is the one above;
 * host and managed pools are not there (yet), so they are refused.
 */
static CUresult location_dev(const CUmemLocation *loc, CUmemAllocationType t,
			     CUdevice *dev)
{
	if (!loc)
		return CUDA_ERROR_INVALID_VALUE;
	if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    t != CU_MEM_ALLOCATION_TYPE_PINNED) {
		xgpulib_dbg("memory pool of location type %d, allocation "
			    "type %d: not supported", (int)loc->type, (int)t);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	*dev = loc->id;
	return CUDA_SUCCESS;
}

CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out,
				CUmemLocation *location,
				CUmemAllocationType type)
{
	CUdevice dev;
	CUresult rc = location_dev(location, type, &dev);

	return rc ? rc : cuDeviceGetDefaultMemPool(pool_out, dev);
}

CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
			 CUmemAllocationType type)
{
	CUdevice dev;
	CUresult rc = location_dev(location, type, &dev);

	return rc ? rc : cuDeviceGetMemPool(pool, dev);
}

CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
			 CUmemoryPool pool)
{
	CUdevice dev;
	CUresult rc = location_dev(location, type, &dev);

	return rc ? rc : cuDeviceSetMemPool(dev, pool);
}
