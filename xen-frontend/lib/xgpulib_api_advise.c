// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_advise.c: the hints on managed memory (xgpulib_api_managed.c
 * allocates it) and its range attributes.
 *
 * Prefetches, advice and stream attachment are hints with nothing to move:
 * they check their arguments and succeed.
 *
 * Range attributes (cuMemRangeGetAttribute[s]) are answered here, from
 * what the program advised (cuMemAdvise) and where it last prefetched
 * (cuMemPrefetchAsync and the batch forms), recorded per page range of
 * each managed allocation (xgpulib_managed_rec.c).  The worker does not
 * answer them: in zero copy mode its driver sees registered host memory,
 * not managed memory, and would refuse the query, and coherent mode
 * answers the same way.  What the real driver answers is that same
 * record (the attributes say what was asked, not where pages are), so
 * the answers are native.  A page is the host's page; advice boundaries
 * at 2 MiB multiples give the same answers as the driver's larger GPU
 * pages.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_dev.h"
#include "xgpulib_entry.h"
#include "xgpulib_managed.h"

#define MANAGED_FLAGS (CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST)

/* ---- hints --------------------------------------------------------------- */

/* the managed region holding [p, p + n), NULL if none */
static const struct xgpulib_region *managed_region(CUdeviceptr p, size_t n)
{
	const struct xgpulib_region *r;
	uint64_t off;

	r = xgpulib_region_find_any((void *)(uintptr_t)p, n ? n : 1, &off);
	return r && r->managed ? r : NULL;
}

/* is [p, p + n) inside one managed allocation? */
static bool managed_range(CUdeviceptr p, size_t n)
{
	return managed_region(p, n) != NULL;
}

/* a location of advice or of a prefetch: INVALID_DEVICE for a device
 * this guest does not have */
static CUresult loc_check(const CUmemLocation *loc)
{
	switch (loc->type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		return xgpulib_check_dev(loc->id) ? CUDA_ERROR_INVALID_DEVICE :
						    CUDA_SUCCESS;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* a CUDA 8 device argument (CU_DEVICE_CPU: the host) as a location */
static CUmemLocation dev_loc(CUdevice dev)
{
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, dev };

	if (dev == CU_DEVICE_CPU)
		loc.type = CU_MEM_LOCATION_TYPE_HOST;
	return loc;
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

/* a prefetch: checked, then recorded as the pages' last prefetch */
static CUresult prefetch(CUdeviceptr p, size_t n, const CUmemLocation *loc,
			 CUstream s, int ptds)
{
	CUresult rc = hint(p, n, s, true, ptds);

	if (!rc)
		rc = loc_check(loc);
	if (!rc)
		rc = xgpulib_mrec_prefetch(managed_region(p, n), p, n, loc);
	return rc;
}

CUresult xgpulib_prefetch_v2(CUdeviceptr p, size_t n, CUmemLocation loc,
			     unsigned int flags, CUstream s, int ptds)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return prefetch(p, n, &loc, s, ptds);
}

/* the CUDA 8 form, by device ordinal (CU_DEVICE_CPU for the host) */
#undef cuMemPrefetchAsync
XGPULIB_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n,
					   CUdevice dev, CUstream s);
XGPULIB_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n,
						CUdevice dev, CUstream s);
CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	CUmemLocation loc = dev_loc(dev);

	return prefetch(p, n, &loc, s, 0);
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n, CUdevice dev,
				 CUstream s)
{
	CUmemLocation loc = dev_loc(dev);

	return prefetch(p, n, &loc, s, 1);
}

CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice,
			CUmemLocation loc)
{
	CUresult rc;

	if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY ||
	    advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
		return CUDA_ERROR_INVALID_VALUE;
	rc = hint(p, n, NULL, false, 0);
	/* read-mostly and unsetting a preferred location ignore it */
	if (!rc && advice != CU_MEM_ADVISE_SET_READ_MOSTLY &&
	    advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
	    advice != CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION)
		rc = loc_check(&loc);
	if (!rc)
		rc = xgpulib_mrec_advise(managed_region(p, n), p, n, &loc,
					 advice);
	return rc;
}

#undef cuMemAdvise
XGPULIB_EXPORT CUresult cuMemAdvise(CUdeviceptr p, size_t n,
				    CUmem_advise advice, CUdevice dev);
CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice,
		     CUdevice dev)
{
	return cuMemAdvise_v2(p, n, advice, dev_loc(dev));
}

CUresult xgpulib_attach_mem(CUstream s, CUdeviceptr p, size_t n,
			    unsigned int flags, int ptds)
{
	if (flags & ~(MANAGED_FLAGS | CU_MEM_ATTACH_SINGLE))
		return CUDA_ERROR_INVALID_VALUE;
	return hint(p, n, s, true, ptds);
}

/* ---- batches of prefetches and discards (CUDA 13) ------------------------ */

/*
 * The checks of a batch: its arrays, each range managed, flags zero, a
 * stream that is not the legacy NULL stream (the driver's rule); then, for
 * prefetches, locations whose first index is 0, increasing, below count.
 */
static CUresult batch_check(CUdeviceptr *dptrs, size_t *sizes, size_t count,
			    CUmemLocation *locs, size_t *idxs, size_t nlocs,
			    bool with_locs, unsigned long long flags,
			    CUstream s, int ptds)
{
	uint64_t remote;
	CUresult rc = xgpulib_stream_arg(s, ptds, &remote);

	if (rc)
		return rc;
	if (!dptrs || !sizes || !count || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (remote == 0 || remote == XGPUIF_STREAM_LEGACY)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (!sizes[i] || !managed_range(dptrs[i], sizes[i]))
			return CUDA_ERROR_INVALID_VALUE;
	if (!with_locs)
		return CUDA_SUCCESS;
	if (!locs || !idxs || !nlocs || nlocs > count || idxs[0] != 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t k = 0; k < nlocs; k++) {
		if (k && idxs[k] <= idxs[k - 1])
			return CUDA_ERROR_INVALID_VALUE;
		if (idxs[k] >= count)
			return CUDA_ERROR_INVALID_VALUE;
		rc = loc_check(&locs[k]);
		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

/* record each range's prefetch location (the checks passed) */
static CUresult batch_record(CUdeviceptr *dptrs, size_t *sizes, size_t count,
			     CUmemLocation *locs, size_t *idxs, size_t nlocs)
{
	size_t k = 0;
	CUresult rc = CUDA_SUCCESS;

	for (size_t i = 0; i < count && !rc; i++) {
		while (k + 1 < nlocs && idxs[k + 1] <= i)
			k++;
		rc = xgpulib_mrec_prefetch(managed_region(dptrs[i], sizes[i]),
					    dptrs[i], sizes[i], &locs[k]);
	}
	return rc;
}

CUresult xgpulib_prefetch_batch(CUdeviceptr *dptrs, size_t *sizes,
				size_t count, CUmemLocation *locs,
				size_t *idxs, size_t nlocs,
				unsigned long long flags, CUstream s, int ptds)
{
	CUresult rc = batch_check(dptrs, sizes, count, locs, idxs, nlocs, true,
				  flags, s, ptds);

	return rc ? rc : batch_record(dptrs, sizes, count, locs, idxs, nlocs);
}

/*
 * A discard lets the driver drop the pages' contents: here they stay
 * (pinned host memory has nowhere else to be), which the contract allows
 * (the contents are undefined until written).
 */
CUresult xgpulib_discard_batch(CUdeviceptr *dptrs, size_t *sizes,
			       size_t count, unsigned long long flags,
			       CUstream s, int ptds)
{
	return batch_check(dptrs, sizes, count, NULL, NULL, 0, false, flags,
			   s, ptds);
}

CUresult xgpulib_discard_prefetch_batch(CUdeviceptr *dptrs, size_t *sizes,
					size_t count, CUmemLocation *locs,
					size_t *idxs, size_t nlocs,
					unsigned long long flags, CUstream s,
					int ptds)
{
	return xgpulib_prefetch_batch(dptrs, sizes, count, locs, idxs, nlocs,
				      flags, s, ptds);
}

/* ---- range attributes ---------------------------------------------------- */

/* most attributes one cuMemRangeGetAttributes may ask (8 kinds exist) */
#define MAX_RANGE_ATTRS 4096

/* a location as the CUDA 8 attributes give it: an ordinal or CPU */
static int32_t as_device(int32_t type, int32_t id)
{
	switch (type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		return id;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
		return CU_DEVICE_CPU;
	default:
		return CU_DEVICE_INVALID;
	}
}

static CUresult attr_answer(void *data, size_t size,
			    CUmem_range_attribute attr,
			    const struct xgpulib_mrange_view *v)
{
	int32_t *out = data;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
		size_t n = size / 4, k = 0;

		if (!size || size % 4)
			return CUDA_ERROR_INVALID_VALUE;
		if ((v->accessed_by & XGPULIB_AB_DEV) && k < n)
			out[k++] = 0;
		if ((v->accessed_by & XGPULIB_AB_CPU) && k < n)
			out[k++] = CU_DEVICE_CPU;
		while (k < n)
			out[k++] = CU_DEVICE_INVALID;
		return CUDA_SUCCESS;
	}
	if (size != 4)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
		*out = v->read_mostly;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
		*out = as_device(v->pref_type, v->pref_id);
		break;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
		*out = as_device(v->pf_type, v->pf_id);
		break;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
		*out = v->pref_type;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
		*out = v->pref_type ? v->pref_id : CU_DEVICE_INVALID;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
		*out = v->pf_type;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
		*out = v->pf_type ? v->pf_id : CU_DEVICE_INVALID;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* the view of [p, p + n), which must lie in one managed allocation */
static CUresult range_view(CUdeviceptr p, size_t n, struct xgpulib_mrange_view *v)
{
	const struct xgpulib_region *r;

	XGPULIB_CHECK_ARGS(n, true);
	r = managed_region(p, n);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	xgpulib_mrec_view(r, p, n, v);
	return CUDA_SUCCESS;
}

CUresult cuMemRangeGetAttribute(void *data, size_t dataSize,
				CUmem_range_attribute attribute,
				CUdeviceptr devPtr, size_t count)
{
	struct xgpulib_mrange_view v;
	CUresult rc = range_view(devPtr, count, &v);

	return rc ? rc : attr_answer(data, dataSize, attribute, &v);
}

CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes,
				 CUmem_range_attribute *attributes,
				 size_t numAttributes, CUdeviceptr devPtr,
				 size_t count)
{
	struct xgpulib_mrange_view v;
	CUresult rc;

	if (!data || !dataSizes || !attributes || !numAttributes ||
	    numAttributes > MAX_RANGE_ATTRS)
		return CUDA_ERROR_INVALID_VALUE;
	rc = range_view(devPtr, count, &v);
	for (size_t i = 0; !rc && i < numAttributes; i++)
		rc = attr_answer(data[i], dataSizes[i], attributes[i], &v);
	return rc;
}
