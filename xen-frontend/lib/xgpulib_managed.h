/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_managed.h: the record of advice and prefetches of managed
 * memory (xgpulib_managed_rec.c), for its allocation
 * (xgpulib_api_managed.c) and its hints and range attributes
 * (xgpulib_api_advise.c).  Private to xen-frontend/lib.
 */
#ifndef XGPULIB_MANAGED_H
#define XGPULIB_MANAGED_H

#include "xgpulib.h"

/* the host's page size */
uint64_t xgpulib_page_size(void);

/* a fresh record for new managed allocation r (stale ones of its place
 * go); without memory, r has none (its hints are then not recorded) */
void xgpulib_mrec_new(const struct xgpulib_region *r);

/* record a prefetch to loc, or advice (CUmem_advise) for loc, on the
 * pages of [p, p + n) in managed region r; CUDA_ERROR_OUT_OF_MEMORY when
 * the record cannot grow */
CUresult xgpulib_mrec_prefetch(const struct xgpulib_region *r, CUdeviceptr p,
			       size_t n, const CUmemLocation *loc);
CUresult xgpulib_mrec_advise(const struct xgpulib_region *r, CUdeviceptr p,
			     size_t n, const CUmemLocation *loc, int advice);

/* accessed_by bits: device 0, the host */
#define XGPULIB_AB_DEV 1u
#define XGPULIB_AB_CPU 2u

/* what every page of a range shares */
struct xgpulib_mrange_view {
	bool read_mostly;
	unsigned int accessed_by;
	int32_t pref_type, pref_id;	/* INVALID: not all the same */
	int32_t pf_type, pf_id;
};

/* the view of the pages of [p, p + n) in managed region r (all zero
 * where r has no record) */
void xgpulib_mrec_view(const struct xgpulib_region *r, CUdeviceptr p,
		       size_t n, struct xgpulib_mrange_view *v);

#endif /* XGPULIB_MANAGED_H */
