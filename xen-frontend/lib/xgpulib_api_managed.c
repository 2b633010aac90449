// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_managed.c: managed memory (cuMemAllocManaged) and its hints.
 *
 * Two modes (README, "Managed memory"; XGPU_MANAGED picks one):
 *
 * zero copy (the local transport's default): a managed allocation is
 * pinned host memory shared with the worker (a host-memory region, as
 * cuMemHostAlloc makes) that the worker maps at the same address as the
 * guest and registers with the driver, so that the one pointer works in
 * the program and in kernels: the CPU touches it directly, kernels reach
 * it over the bus.  Results are native; a kernel that streams through
 * managed memory runs at bus speed, not at GPU memory speed.
 *
 * coherent (the Xen transport's, where the worker cannot map the guest's
 * pages at the guest's address; the fallback where zero copy cannot map
 * them): the memory is the worker driver's managed memory; the guest
 * maps a host-memory region at the same address and keeps it coherent
 * at GPU-work boundaries (xgpulib_mco.h).  The worker picks the address
 * (its driver's cuMemAllocManaged always succeeds where memory is left);
 * the guest maps there only where nothing of its own is, and asks again
 * (up to MAX_TRIES addresses) when something is.
 *
 * __managed__ variables of modules and libraries are the worker driver's
 * managed memory too: the allocation holding them is mapped coherently
 * in either mode when the program looks one up (below).
 *
 * Prefetches, advice and stream attachment are hints with nothing to move:
 * they check their arguments and succeed.
 *
 * Range attributes (cuMemRangeGetAttribute[s]) are answered here, from
 * what the program advised (cuMemAdvise) and where it last prefetched
 * (cuMemPrefetchAsync and the batch forms), recorded per page range of
 * each managed allocation.  The worker does not answer them: in zero
 * copy mode its driver sees registered host memory, not managed memory,
 * and would refuse the query, and coherent mode answers the same way.
 * What the real driver answers is that same record (the attributes say
 * what was asked, not where pages are), so the answers are native.  A
 * page is the host's page; advice boundaries at 2 MiB multiples give the
 * same answers as the driver's larger GPU pages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_dev.h"
#include "xgpulib_entry.h"
#include "xgpulib_mco.h"

#define MANAGED_FLAGS (CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST)
/* addresses the worker may propose before the guest gives up */
#define MAX_TRIES 8

static void rec_new(const struct xgpulib_region *r);

/*
 * Share size bytes of new pages with the worker as a region mapped at
 * dptr here (anywhere in the worker): its id in *id.  EEXIST: something
 * of this process's is mapped there.
 */
static int share_at(uint64_t dptr, size_t size, uint32_t *id)
{
	struct xgpuif_hostmem_reply r;
	void *va = (void *)(uintptr_t)dptr;
	int err = 0;

	if (xgpulib_hostmem_share(size, 0, &va, id, &r, &err) ==
	    CUDA_SUCCESS)
		return 0;
	return err == -EEXIST ? EEXIST : ENOMEM;
}

static CUresult alloc_coherent(CUdeviceptr *dptr, size_t bytesize,
			       unsigned int flags)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (bytesize + page - 1) & ~(page - 1);
	uint64_t tried[MAX_TRIES];
	uint64_t ctx = xgpulib_current_remote();
	int ntried = 0, err = 0;
	uint32_t id = 0;
	CUresult rc;

	if (size < bytesize)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (;;) {
		struct xgpuif_managed_alloc_args a = { bytesize, flags, 0 };
		struct xgpuif_dptr_reply r;

		rc = xgpulib_call_MANAGED_ALLOC(&a, &r);
		if (rc)
			break;
		err = share_at(r.dptr, size, &id);
		if (!err) {
			*dptr = r.dptr;
			break;
		}
		/* kept until the end, so that the worker offers another */
		tried[ntried++] = r.dptr;
		if (err != EEXIST || ntried == MAX_TRIES) {
			xgpulib_dbg("cuMemAllocManaged: %s", err == EEXIST ?
				    "every address the worker offered is "
				    "taken here" : "no shared pages");
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		xgpulib_dbg("cuMemAllocManaged: %#llx is taken here; asking "
			    "for another address",
			    (unsigned long long)r.dptr);
	}
	for (int i = 0; i < ntried; i++) {
		struct xgpuif_dptr_args f = { tried[i] };

		xgpulib_call_MEM_FREE(&f);
	}
	if (rc)
		return rc;
	{
		struct xgpulib_region reg = {
			.id = id, .va = (uint8_t *)(uintptr_t)*dptr,
			.size = size, .dptr = *dptr, .same_va = true,
			.managed = true, .coherent = true,
		};
		struct xgpuif_region_args u = { id, 0 };
		struct xgpuif_dptr_args f = { *dptr };

		if (xgpulib_mco_add(xgpulib_ch, reg.va, size, 0, bytesize, id,
				    ctx) == 0) {
			xgpulib_region_publish(&reg);
			rec_new(&reg);
			return CUDA_SUCCESS;
		}
		xgpulib_call_HOSTMEM_UNREGISTER(&u);
		xgpulib_ch->t->ops->hostmem_free(xgpulib_ch->t, id, reg.va,
						 size);
		xgpulib_region_release(id);
		xgpulib_call_MEM_FREE(&f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
}

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
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (xgpulib_managed_coherent())
		return alloc_coherent(dptr, bytesize, flags);
	rc = xgpulib_pinned_alloc(&va, bytesize, CU_MEMHOSTALLOC_DEVICEMAP);
	if (rc)
		return rc;
	r = xgpulib_region_find(va, 1, &off);
	if (!r || off || !r->same_va || r->dptr != (uint64_t)(uintptr_t)va) {
		xgpulib_dbg("cuMemAllocManaged: the worker cannot map %zu "
			    "bytes at the program's address; coherent mode",
			    bytesize);
		xgpulib_pinned_free(va);
		return alloc_coherent(dptr, bytesize, flags);
	}
	xgpulib_region_set_managed(r->id);
	rec_new(r);
	*dptr = (CUdeviceptr)(uintptr_t)va;
	return CUDA_SUCCESS;
}

CUresult xgpulib_managed_free(const struct xgpulib_region *r)
{
	struct xgpulib_transport *t;
	struct xgpuif_region_args u = { r->id, 0 };
	struct xgpuif_dptr_args f = { r->dptr };
	struct xgpulib_region gone;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (r->var)	/* a module's variables: not an allocation */
		return CUDA_ERROR_INVALID_VALUE;
	t = xgpulib_ch->t;
	if (!r->coherent)
		return xgpulib_pinned_free(r->va);
	/* what the program wrote since the last request is dropped */
	xgpulib_mco_del(r->va);
	if (!xgpulib_region_take(r->va, &gone))
		return CUDA_ERROR_INVALID_VALUE;	/* freed meanwhile */
	rc = xgpulib_call_HOSTMEM_UNREGISTER(&u);
	t->ops->hostmem_free(t, gone.id, gone.va, gone.size);
	if (!rc)
		rc = xgpulib_call_MEM_FREE(&f);
	return rc;
}

/* ---- __managed__ variables ----------------------------------------------- */

/*
 * The managed allocation the worker's driver made for __managed__
 * variables of a module or library (its managed segment): mapped here
 * once, whole pages, at its address, coherent in either mode (the driver
 * placed it; zero copy would need the guest's pages there), at the first
 * lookup of one of its variables, until the module or library goes.  A
 * page it shares with something of this process's (another module's
 * variables, a managed allocation the driver packed next to it) cannot
 * be mapped: the lookup fails then.  Bytes of its pages outside the
 * allocation are never copied to or from the worker.
 */
struct mvar {
	const void *root;	/* the module or library */
	uint64_t base, size;	/* the worker's allocation */
	uint8_t *va;		/* its pages here */
	uint32_t region;
	struct mvar *next;
};

static pthread_mutex_t mv_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mvar *mvars;

static uint64_t page_size(void);

/* map [base, base + size) in whole pages; mv_mu held */
static CUresult var_map(struct mvar *v)
{
	uint64_t page = page_size(), start = v->base & ~(page - 1);
	uint64_t end = (v->base + v->size + page - 1) & ~(page - 1);
	struct xgpulib_region reg = {
		.va = (uint8_t *)(uintptr_t)start, .size = end - start,
		.dptr = start, .same_va = true, .managed = true,
		.coherent = true, .var = true,
	};
	struct xgpuif_region_args u = { 0, 0 };
	int err;

	if (end < v->base + v->size || v->base + v->size < v->base)
		return CUDA_ERROR_INVALID_VALUE;
	err = share_at(start, reg.size, &reg.id);
	if (err) {
		xgpulib_log("__managed__ variables at %#llx (%llu bytes): %s",
			    (unsigned long long)v->base,
			    (unsigned long long)v->size, err == EEXIST ?
			    "their pages are in use in this process; the "
			    "lookup fails" : "no shared pages");
		return err == EEXIST ? CUDA_ERROR_NOT_SUPPORTED :
				       CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (xgpulib_mco_add(xgpulib_ch, reg.va, reg.size, v->base - start,
			    v->base + v->size - start, reg.id,
			    xgpulib_current_remote())) {
		u.region = reg.id;
		xgpulib_call_HOSTMEM_UNREGISTER(&u);
		xgpulib_ch->t->ops->hostmem_free(xgpulib_ch->t, reg.id, reg.va,
						 reg.size);
		xgpulib_region_release(reg.id);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	xgpulib_region_publish(&reg);
	rec_new(&reg);
	v->va = reg.va;
	v->region = reg.id;
	return CUDA_SUCCESS;
}

/* is the page at p mapped for a variable already?  mv_mu held */
static bool var_page_mapped(uint64_t p)
{
	for (struct mvar *v = mvars; v; v = v->next)
		if (p >= v->base && p - v->base < v->size)
			return true;
	return false;
}

/*
 * The pages [base, base + size) holding a variable (the worker rounds
 * them out: the driver packs a module's variables into shared pages):
 * each run of them not mapped yet, for this or another variable, is
 * mapped as one piece.
 */
CUresult xgpulib_managed_var_map(const void *root, uint64_t base,
				 uint64_t size)
{
	uint64_t page = page_size(), p, run;
	CUresult rc = CUDA_SUCCESS;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!size || base % page || size % page || base + size < base)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mv_mu);
	for (p = base; p < base + size && !rc;) {
		struct mvar *v;

		if (var_page_mapped(p)) {
			p += page;
			continue;
		}
		for (run = p; run < base + size && !var_page_mapped(run);)
			run += page;
		v = calloc(1, sizeof(*v));
		if (!v) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		*v = (struct mvar){ root, p, run - p, NULL, 0, NULL };
		rc = var_map(v);
		if (rc) {
			free(v);
			break;
		}
		xgpulib_dbg("__managed__ variables at %#llx (%llu bytes): "
			    "coherent", (unsigned long long)p,
			    (unsigned long long)(run - p));
		v->next = mvars;
		mvars = v;
		p = run;
	}
	pthread_mutex_unlock(&mv_mu);
	return rc;
}

void xgpulib_managed_vars_unmap(const void *root)
{
	struct mvar **pp, *v;

	pthread_mutex_lock(&mv_mu);
	for (pp = &mvars; *pp;) {
		struct xgpuif_region_args u = { 0, 0 };
		struct xgpulib_region gone;

		v = *pp;
		if (v->root != root) {
			pp = &v->next;
			continue;
		}
		*pp = v->next;
		/* what the program wrote since the last request is dropped:
		 * the variables go with their module */
		xgpulib_mco_del(v->va);
		if (xgpulib_region_take(v->va, &gone)) {
			u.region = gone.id;
			xgpulib_call_HOSTMEM_UNREGISTER(&u);
			xgpulib_ch->t->ops->hostmem_free(xgpulib_ch->t, gone.id,
							 gone.va, gone.size);
		}
		free(v);
	}
	pthread_mutex_unlock(&mv_mu);
}

/* ---- the record of advice and prefetches --------------------------------- */

/* what one page range was told; type 0 (INVALID): nothing */
struct mstate {
	uint8_t read_mostly;
	uint8_t accessed_by;	/* AB_DEV: device 0, AB_CPU: the host */
	int32_t pref_type, pref_id;
	int32_t pf_type, pf_id;
};

#define AB_DEV 1u
#define AB_CPU 2u

/* [start, end) of the allocation, offsets in bytes, page aligned */
struct mseg {
	uint64_t start, end;
	struct mstate st;
};

/*
 * One managed allocation's record: segments in address order covering
 * [0, size), equal neighbours merged.  Each advice adds at most two, and
 * a record grows no further than MAX_SEGS (a program would have to advise
 * thousands of distinct pieces of one allocation): beyond, advice answers
 * CUDA_ERROR_OUT_OF_MEMORY.
 */
#define MAX_SEGS 4096

struct mrec {
	struct mrec *next;
	uint32_t region;	/* the region's id and address: a record of a */
	uint8_t *va;		/* freed allocation is never matched again */
	size_t size;
	unsigned int nseg;
	struct mseg *seg;
};

static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mrec *recs;

static uint64_t page_size(void)
{
	static uint64_t ps;

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);

		ps = v > 0 ? (uint64_t)v : 4096;
	}
	return ps;
}

/* a fresh record for a new allocation (stale ones of its place go) */
static void rec_new(const struct xgpulib_region *r)
{
	struct mrec **pp = &recs, *n = calloc(1, sizeof(*n));

	pthread_mutex_lock(&rec_mu);
	while (*pp) {
		struct mrec *x = *pp;

		if (x->region == r->id || x->va == r->va) {
			*pp = x->next;
			free(x->seg);
			free(x);
		} else {
			pp = &x->next;
		}
	}
	if (n) {
		n->seg = calloc(1, sizeof(*n->seg));
		if (n->seg) {
			n->region = r->id;
			n->va = r->va;
			n->size = r->size;
			n->nseg = 1;
			n->seg[0].end = r->size;
			n->next = recs;
			recs = n;
		} else {
			free(n);
		}
	}
	pthread_mutex_unlock(&rec_mu);
}

/* the record of region r; rec_mu held */
static struct mrec *rec_of(const struct xgpulib_region *r)
{
	for (struct mrec *x = recs; x; x = x->next)
		if (x->region == r->id && x->va == r->va)
			return x;
	return NULL;
}

/* split x's segments so that one starts at off; rec_mu held */
static CUresult rec_split(struct mrec *x, uint64_t off)
{
	unsigned int i;

	if (off >= x->size)
		return CUDA_SUCCESS;
	for (i = 0; i < x->nseg; i++)
		if (x->seg[i].end > off)
			break;
	if (x->seg[i].start == off)
		return CUDA_SUCCESS;
	if (x->nseg >= MAX_SEGS)
		return CUDA_ERROR_OUT_OF_MEMORY;
	{
		struct mseg *n = realloc(x->seg,
					 (x->nseg + 1) * sizeof(*x->seg));

		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		x->seg = n;
	}
	memmove(&x->seg[i + 1], &x->seg[i],
		(x->nseg - i) * sizeof(*x->seg));
	x->nseg++;
	x->seg[i].end = off;
	x->seg[i + 1].start = off;
	return CUDA_SUCCESS;
}

static void rec_merge(struct mrec *x)
{
	unsigned int i = 0;

	while (i + 1 < x->nseg) {
		if (!memcmp(&x->seg[i].st, &x->seg[i + 1].st,
			    sizeof(x->seg[i].st))) {
			x->seg[i].end = x->seg[i + 1].end;
			memmove(&x->seg[i + 1], &x->seg[i + 2],
				(x->nseg - i - 2) * sizeof(*x->seg));
			x->nseg--;
		} else {
			i++;
		}
	}
}

/* the pages of [p, p + n) as offsets in r: [*a, *b) */
static void page_span(const struct xgpulib_region *r, CUdeviceptr p,
		      size_t n, uint64_t *a, uint64_t *b)
{
	uint64_t ps = page_size(), off = p - (uint64_t)(uintptr_t)r->va;

	*a = off & ~(ps - 1);
	*b = (off + n + ps - 1) & ~(ps - 1);
	if (*b > r->size)
		*b = r->size;
}

typedef void (*apply_fn)(struct mstate *st, const CUmemLocation *loc,
			 int what);

/* apply fn to every page of [p, p + n) in managed region r */
static CUresult rec_apply(const struct xgpulib_region *r, CUdeviceptr p,
			  size_t n, apply_fn fn, const CUmemLocation *loc,
			  int what)
{
	uint64_t a, b;
	struct mrec *x;
	CUresult rc = CUDA_SUCCESS;

	page_span(r, p, n, &a, &b);
	pthread_mutex_lock(&rec_mu);
	x = rec_of(r);
	if (x) {
		rc = rec_split(x, a);
		if (!rc)
			rc = rec_split(x, b);
		if (!rc)
			for (unsigned int i = 0; i < x->nseg; i++)
				if (x->seg[i].start >= a && x->seg[i].end <= b)
					fn(&x->seg[i].st, loc, what);
		rec_merge(x);
	}
	pthread_mutex_unlock(&rec_mu);
	return rc;
}

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

static void set_prefetch(struct mstate *st, const CUmemLocation *loc,
			 int what)
{
	(void)what;
	st->pf_type = loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT ?
		      CU_MEM_LOCATION_TYPE_HOST_NUMA : loc->type;
	st->pf_id = loc->type == CU_MEM_LOCATION_TYPE_DEVICE ||
		    loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ? loc->id : 0;
}

static void set_advice(struct mstate *st, const CUmemLocation *loc, int what)
{
	unsigned int bit = loc->type == CU_MEM_LOCATION_TYPE_DEVICE ? AB_DEV :
								      AB_CPU;

	switch (what) {
	case CU_MEM_ADVISE_SET_READ_MOSTLY:
		st->read_mostly = 1;
		break;
	case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
		st->read_mostly = 0;
		break;
	case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: {
		struct mstate as = { 0 };

		set_prefetch(&as, loc, 0);	/* recorded in the same form */
		st->pref_type = as.pf_type;
		st->pref_id = as.pf_id;
		break;
	}
	case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
		st->pref_type = CU_MEM_LOCATION_TYPE_INVALID;
		st->pref_id = 0;
		break;
	case CU_MEM_ADVISE_SET_ACCESSED_BY:
		st->accessed_by |= bit;
		break;
	case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
		st->accessed_by &= ~bit;
		break;
	}
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
		rc = rec_apply(managed_region(p, n), p, n, set_prefetch, loc,
			       0);
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
		rc = rec_apply(managed_region(p, n), p, n, set_advice, &loc,
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
		rc = rec_apply(managed_region(dptrs[i], sizes[i]), dptrs[i],
			       sizes[i], set_prefetch, &locs[k], 0);
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

/* what every page of a range shares; rec_mu held */
struct mrange_view {
	bool read_mostly;
	unsigned int accessed_by;
	int32_t pref_type, pref_id;	/* INVALID: not all the same */
	int32_t pf_type, pf_id;
};

static void rec_view(const struct mrec *x, uint64_t a, uint64_t b,
		     struct mrange_view *v)
{
	bool first = true;

	memset(v, 0, sizeof(*v));
	for (unsigned int i = 0; i < x->nseg; i++) {
		const struct mstate *st = &x->seg[i].st;

		if (x->seg[i].end <= a || x->seg[i].start >= b)
			continue;
		if (first) {
			v->read_mostly = st->read_mostly;
			v->accessed_by = st->accessed_by;
			v->pref_type = st->pref_type;
			v->pref_id = st->pref_id;
			v->pf_type = st->pf_type;
			v->pf_id = st->pf_id;
			first = false;
			continue;
		}
		v->read_mostly = v->read_mostly && st->read_mostly;
		v->accessed_by &= st->accessed_by;
		if (st->pref_type != v->pref_type || st->pref_id != v->pref_id)
			v->pref_type = CU_MEM_LOCATION_TYPE_INVALID;
		if (st->pf_type != v->pf_type || st->pf_id != v->pf_id)
			v->pf_type = CU_MEM_LOCATION_TYPE_INVALID;
	}
}

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
			    const struct mrange_view *v)
{
	int32_t *out = data;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
		size_t n = size / 4, k = 0;

		if (!size || size % 4)
			return CUDA_ERROR_INVALID_VALUE;
		if ((v->accessed_by & AB_DEV) && k < n)
			out[k++] = 0;
		if ((v->accessed_by & AB_CPU) && k < n)
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
static CUresult range_view(CUdeviceptr p, size_t n, struct mrange_view *v)
{
	const struct xgpulib_region *r;
	const struct mrec *x;
	uint64_t a, b;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	r = managed_region(p, n);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	page_span(r, p, n, &a, &b);
	pthread_mutex_lock(&rec_mu);
	x = rec_of(r);
	if (x)
		rec_view(x, a, b, v);
	else
		memset(v, 0, sizeof(*v));
	pthread_mutex_unlock(&rec_mu);
	return CUDA_SUCCESS;
}

CUresult cuMemRangeGetAttribute(void *data, size_t dataSize,
				CUmem_range_attribute attribute,
				CUdeviceptr devPtr, size_t count)
{
	struct mrange_view v;
	CUresult rc = range_view(devPtr, count, &v);

	return rc ? rc : attr_answer(data, dataSize, attribute, &v);
}

CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes,
				 CUmem_range_attribute *attributes,
				 size_t numAttributes, CUdeviceptr devPtr,
				 size_t count)
{
	struct mrange_view v;
	CUresult rc;

	if (!data || !dataSizes || !attributes || !numAttributes ||
	    numAttributes > MAX_RANGE_ATTRS)
		return CUDA_ERROR_INVALID_VALUE;
	rc = range_view(devPtr, count, &v);
	for (size_t i = 0; !rc && i < numAttributes; i++)
		rc = attr_answer(data[i], dataSizes[i], attributes[i], &v);
	return rc;
}
