// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_mipmap.c: mipmapped arrays, their levels, array planes and
 * the memory requirements and sparse properties of arrays.  A mipmapped
 * array and its levels and planes are guest objects (xgpulib_array.c); a
 * level or a plane is a guest array its owner frees: cuArrayDestroy of
 * one goes to the worker, which refuses it, as the driver does.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pm,
				const CUDA_ARRAY3D_DESCRIPTOR *d,
				unsigned int levels)
{
	struct xgpuif_mipmap_args a;
	struct xgpuif_array_reply r;
	CUresult rc;

	XGPULIB_CHECK_ARGS(pm && d, true);
	memset(&a, 0, sizeof(a));
	memcpy(&a.desc, d, sizeof(a.desc));	/* the same layout */
	a.desc._pad = 0;
	a.levels = levels;
	rc = xgpulib_call_MIPMAP_CREATE(&a, &r);
	if (rc)
		return rc;
	*pm = xgpulib_mipmap_wrap(r.array);
	return xgpulib_kept(*pm, r.array, xgpulib_call_MIPMAP_DESTROY);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray m)
{
	struct xgpuif_handle_args h;
	CUresult rc;

	XGPULIB_CHECK_ARGS(true, xgpulib_mipmap_remote(m));
	h.handle = xgpulib_mipmap_remote(m);
	rc = xgpulib_call_MIPMAP_DESTROY(&h);
	if (rc)
		return rc;
	xgpulib_arrays_forget(m);	/* with its levels */
	return CUDA_SUCCESS;
}

/*
 * Sub-array i of owner (worker handle h): op (MIPMAP_LEVEL or ARRAY_PLANE)
 * names it; the guest array is the one made before for that handle, or
 * a new one owner frees.
 */
static CUresult sub_array(CUresult (*op)(const struct xgpuif_subarray_args *,
					 struct xgpuif_subarray_reply *),
			  uint64_t h, unsigned int i, const void *owner,
			  CUarray *out)
{
	struct xgpuif_subarray_args args = { h, i, 0 };
	struct xgpuif_subarray_reply r;
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUarray a;
	CUresult rc = op(&args, &r);

	if (rc)
		return rc;
	a = xgpulib_array_by_remote(r.array);
	if (!a) {
		memset(&d, 0, sizeof(d));
		memcpy(&d, &r.desc, sizeof(r.desc));
		a = xgpulib_array_wrap(r.array, &d, owner);
		if (!a)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = a;
	return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetLevel(CUarray *level, CUmipmappedArray m,
				  unsigned int i)
{
	XGPULIB_CHECK_ARGS(level, xgpulib_mipmap_remote(m));
	return sub_array(xgpulib_call_MIPMAP_LEVEL, xgpulib_mipmap_remote(m),
			 i, m, level);
}

CUresult cuArrayGetPlane(CUarray *plane, CUarray arr, unsigned int i)
{
	XGPULIB_CHECK_ARGS(plane, xgpulib_array_remote(arr));
	return sub_array(xgpulib_call_ARRAY_PLANE, xgpulib_array_remote(arr),
			 i, arr, plane);
}

/* one ARRAY_QUERY, its answer copied into out (n bytes) */
static CUresult query(uint64_t h, uint32_t what, CUdevice dev, void *out,
		      size_t n)
{
	struct xgpuif_array_query_args a = { h, what, dev };
	struct xgpuif_array_query_reply r;
	CUresult rc = xgpulib_call_ARRAY_QUERY(&a, &r);

	if (rc == CUDA_SUCCESS)
		memcpy(out, r.bytes, n);
	return rc;
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req,
				      CUarray arr, CUdevice dev)
{
	XGPULIB_CHECK_ARGS(req, xgpulib_array_remote(arr));
	return query(xgpulib_array_remote(arr), XGPUIF_AQ_MEMREQ, dev, req,
		     sizeof(*req));
}

CUresult cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *p,
				    CUarray arr)
{
	XGPULIB_CHECK_ARGS(p, xgpulib_array_remote(arr));
	return query(xgpulib_array_remote(arr), XGPUIF_AQ_SPARSE, 0, p,
		     sizeof(*p));
}

CUresult cuMipmappedArrayGetMemoryRequirements(
	CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUmipmappedArray m, CUdevice dev)
{
	XGPULIB_CHECK_ARGS(req, xgpulib_mipmap_remote(m));
	return query(xgpulib_mipmap_remote(m), XGPUIF_AQ_MIP_MEMREQ, dev, req, sizeof(*req));
}

CUresult cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *p,
					     CUmipmappedArray m)
{
	XGPULIB_CHECK_ARGS(p, xgpulib_mipmap_remote(m));
	return query(xgpulib_mipmap_remote(m), XGPUIF_AQ_MIP_SPARSE, 0, p, sizeof(*p));
}
