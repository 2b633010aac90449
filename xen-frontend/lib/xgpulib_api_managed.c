// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_managed.c: managed memory (cuMemAllocManaged) and its hints.
 *
 * A managed allocation is pinned host memory shared with the worker (a
 * host-memory region, as cuMemHostAlloc makes) that the worker maps at the
 * same address as the guest and registers with the driver, so that the
 * one pointer works in the program and in kernels: the CPU touches it
 * directly, kernels reach it over the bus (zero copy).  Results are
 * native; a kernel that streams through managed memory runs at bus speed,
 * not at GPU memory speed (README).  Where the worker cannot map the
 * region at the guest's address (the Xen transport may not) the call is
 * refused with CUDA_ERROR_NOT_SUPPORTED.
 *
 * Prefetches, advice and stream attachment are hints with nothing to move:
 * they check their arguments and succeed.  Range attributes are refused.
 */
#include "xgpulib.h"
#include "xgpulib_entry.h"

#define MANAGED_FLAGS (CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST)

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
			   unsigned int flags)
{
	const struct xgpulib_region *r;
	void *va = NULL;
	uint64_t off;
	CUresult rc;

	if (!dptr || !bytesize ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuMemHostAlloc(&va, bytesize, CU_MEMHOSTALLOC_DEVICEMAP);
	if (rc)
		return rc;
	r = xgpulib_region_find(va, 1, &off);
	if (!r || off || !r->same_va || r->dptr != (uint64_t)(uintptr_t)va) {
		xgpulib_dbg("cuMemAllocManaged: the worker cannot map %zu "
			    "bytes at the program's address; not supported "
			    "on this transport", bytesize);
		cuMemFreeHost(va);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	xgpulib_region_set_managed(r->id);
	*dptr = (CUdeviceptr)(uintptr_t)va;
	return CUDA_SUCCESS;
}

/* is [p, p + n) inside one managed allocation? */
static bool managed_range(CUdeviceptr p, size_t n)
{
	const struct xgpulib_region *r;
	uint64_t off;

	r = xgpulib_region_find((void *)(uintptr_t)p, n ? n : 1, &off);
	return r && r->managed;
}

static CUresult hint(CUdeviceptr p, size_t n, CUstream s, bool has_stream,
		     int ptds)
{
	uint64_t remote;
	CUresult rc;

	if (has_stream) {
		rc = xgpulib_stream_arg(s, ptds, &remote);
		if (rc)
			return rc;
	} else if (xgpulib_check_init()) {
		return CUDA_ERROR_NOT_INITIALIZED;
	}
	return managed_range(p, n) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult xgpulib_prefetch_v2(CUdeviceptr p, size_t n, CUmemLocation loc,
			     unsigned int flags, CUstream s, int ptds)
{
	(void)loc;
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return hint(p, n, s, true, ptds);
}

/* the CUDA 8 form, by device ordinal (CU_DEVICE_CPU for the host) */
#undef cuMemPrefetchAsync
XGPULIB_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n,
					   CUdevice dev, CUstream s);
XGPULIB_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n,
						CUdevice dev, CUstream s);
CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	(void)dev;
	return hint(p, n, s, true, 0);
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n, CUdevice dev,
				 CUstream s)
{
	(void)dev;
	return hint(p, n, s, true, 1);
}

CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice,
			CUmemLocation loc)
{
	(void)loc;
	if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY ||
	    advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
		return CUDA_ERROR_INVALID_VALUE;
	return hint(p, n, NULL, false, 0);
}

#undef cuMemAdvise
XGPULIB_EXPORT CUresult cuMemAdvise(CUdeviceptr p, size_t n,
				    CUmem_advise advice, CUdevice dev);
CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice,
		     CUdevice dev)
{
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, dev };

	return cuMemAdvise_v2(p, n, advice, loc);
}

CUresult xgpulib_attach_mem(CUstream s, CUdeviceptr p, size_t n,
			    unsigned int flags, int ptds)
{
	if (flags & ~(MANAGED_FLAGS | CU_MEM_ATTACH_SINGLE))
		return CUDA_ERROR_INVALID_VALUE;
	return hint(p, n, s, true, ptds);
}
