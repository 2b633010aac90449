// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_copy.c: the cuMemcpy* entry points of 1D copies between
 * host, device and unified addresses.  2D, 3D, array, peer and batch
 * copies are xgpulib_api_copy3d.c's; the 1D transfers themselves
 * xgpulib_copy.c's.
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
