// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_copy.c: the cuMemcpy* entry points: 1D (host, device,
 * unified addresses) and the 1D array forms (one row at byte offsets, as
 * a 3D copy of one row).  2D, 3D, peer and batch copies are
 * xgpulib_api_copy3d.c's; the 1D transfers themselves xgpulib_copy.c's.
 *
 * Each function serves its ABI and its per-thread default stream twin
 * (_ptds, _ptsz; generated from xgpulib_entry.def): ptds says which the
 * program called, and picks the default stream.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"

/* ---- 1D copies ----------------------------------------------------------- */

/* the default stream a synchronous copy is ordered with */
static uint64_t default_stream(int ptds)
{
	return xgpulib_stream_remote(NULL, ptds);
}

CUresult xgpulib_memcpy_htod(CUdeviceptr dst, const void *src, size_t n,
			     int ptds)
{
	return xgpulib_copy_htod(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_dtoh(void *dst, CUdeviceptr src, size_t n, int ptds)
{
	return xgpulib_copy_dtoh(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n,
			     int ptds)
{
	return xgpulib_copy_dtod(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_htod_async(CUdeviceptr dst, const void *src,
				   size_t n, CUstream s, int ptds)
{
	if (xgpulib_capcopy_wanted(src, n, s, ptds))
		return xgpulib_capcopy(true, dst, (void *)src, n, s, ptds);
	return xgpulib_copy_htod(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n,
				   CUstream s, int ptds)
{
	if (xgpulib_capcopy_wanted(dst, n, s, ptds))
		return xgpulib_capcopy(false, src, dst, n, s, ptds);
	return xgpulib_copy_dtoh(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src,
				   size_t n, CUstream s, int ptds)
{
	return xgpulib_copy_dtod(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_copy_unified(uint64_t dst, uint64_t src, size_t n,
			      uint64_t stream, int async)
{
	bool dd = xgpulib_is_device(dst), sd = xgpulib_is_device(src);

	if (dd && sd)
		return xgpulib_copy_dtod(dst, src, n, stream, async);
	if (dd)
		return xgpulib_copy_htod(dst, (const void *)(uintptr_t)src, n,
					 stream, async);
	if (sd)
		return xgpulib_copy_dtoh((void *)(uintptr_t)dst, src, n,
					 stream, async);
	/* host to host: CUDA does it, so do we, in stream order */
	if (async) {
		CUresult rc = xgpulib_sync_remote_stream(stream);

		if (rc)
			return rc;
	}
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult xgpulib_memcpy_unified(CUdeviceptr dst, CUdeviceptr src, size_t n,
				int ptds)
{
	return xgpulib_copy_unified(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_unified_async(CUdeviceptr dst, CUdeviceptr src,
				      size_t n, CUstream s, int ptds)
{
	bool dd = xgpulib_is_device(dst), sd = xgpulib_is_device(src);

	if (!dd && !sd) {
		/* host to host on a stream being captured: a host node */
		bool done;
		CUresult rc = xgpulib_capcopy_h2h((void *)(uintptr_t)dst,
						  (const void *)(uintptr_t)src,
						  n, s, ptds, &done);

		if (done)
			return rc;
	}
	if (dd != sd && xgpulib_capcopy_wanted((void *)(uintptr_t)(dd ? src :
								    dst),
					       n, s, ptds))
		return xgpulib_capcopy(dd, dd ? dst : src,
				       (void *)(uintptr_t)(dd ? src : dst), n,
				       s, ptds);
	return xgpulib_copy_unified(dst, src, n,
				    xgpulib_stream_remote(s, ptds), 1);
}

/* ---- 1D arrays: a copy of one row, at byte offsets ---------------------- */

/* a one-row copy; an array side's offset is its x in bytes */
static CUresult copy_row(CUmemorytype st, const void *sh, CUdeviceptr sd,
			 CUarray sa, size_t soff, CUmemorytype dt, void *dh,
			 CUdeviceptr dd, CUarray da, size_t doff, size_t n,
			 uint64_t stream, int async)
{
	CUDA_MEMCPY3D p = {
		.srcMemoryType = st, .srcHost = sh, .srcDevice = sd,
		.srcArray = sa, .srcPitch = n, .srcHeight = 1,
		.dstMemoryType = dt, .dstHost = dh, .dstDevice = dd,
		.dstArray = da, .dstPitch = n, .dstHeight = 1,
		.WidthInBytes = n, .Height = 1, .Depth = 1,
	};

	if (st == CU_MEMORYTYPE_ARRAY)
		p.srcXInBytes = soff;
	if (dt == CU_MEMORYTYPE_ARRAY)
		p.dstXInBytes = doff;
	if ((st == CU_MEMORYTYPE_ARRAY && !xgpulib_array_remote(sa)) ||
	    (dt == CU_MEMORYTYPE_ARRAY && !xgpulib_array_remote(da)))
		return xgpulib_check_init() ? CUDA_ERROR_NOT_INITIALIZED :
					      CUDA_ERROR_INVALID_HANDLE;
	return xgpulib_copy_3d(&p, stream, async);
}

CUresult xgpulib_memcpy_htoa(CUarray dst, size_t off, const void *src,
			     size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_HOST, src, 0, NULL, 0,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, off, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_atoh(void *dst, CUarray src, size_t off, size_t n,
			     int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, off,
			CU_MEMORYTYPE_HOST, dst, 0, NULL, 0, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_htoa_async(CUarray dst, size_t off, const void *src,
				   size_t n, CUstream s, int ptds)
{
	return copy_row(CU_MEMORYTYPE_HOST, src, 0, NULL, 0,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, off, n,
			xgpulib_stream_remote(s, ptds), 1);
}

CUresult xgpulib_memcpy_atoh_async(void *dst, CUarray src, size_t off,
				   size_t n, CUstream s, int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, off,
			CU_MEMORYTYPE_HOST, dst, 0, NULL, 0, n,
			xgpulib_stream_remote(s, ptds), 1);
}

CUresult xgpulib_memcpy_atod(CUdeviceptr dst, CUarray src, size_t off,
			     size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, off,
			CU_MEMORYTYPE_DEVICE, NULL, dst, NULL, 0, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_dtoa(CUarray dst, size_t off, CUdeviceptr src,
			     size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_DEVICE, NULL, src, NULL, 0,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, off, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_atoa(CUarray dst, size_t doff, CUarray src,
			     size_t soff, size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, soff,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, doff, n,
			default_stream(ptds), 0);
}
