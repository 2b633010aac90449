// SPDX-License-Identifier: MIT
/*
 * xgpulib_managed_rec.c: the record of what the program advised
 * (cuMemAdvise) and where it last prefetched, per page range of each
 * managed allocation, from which range attributes are answered
 * (xgpulib_api_advise.c says why).  Below the managed-memory entry
 * points; it calls none of them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_managed.h"

/* what one page range was told; type 0 (INVALID): nothing */
struct mstate {
	uint8_t read_mostly;
	uint8_t accessed_by;	/* XGPULIB_AB_DEV, XGPULIB_AB_CPU */
	int32_t pref_type, pref_id;
	int32_t pf_type, pf_id;
};

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

uint64_t xgpulib_page_size(void)
{
	static uint64_t ps;

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);

		ps = v > 0 ? (uint64_t)v : 4096;
	}
	return ps;
}

void xgpulib_mrec_new(const struct xgpulib_region *r)
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
	uint64_t ps = xgpulib_page_size(), off = p - (uint64_t)(uintptr_t)r->va;

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
	unsigned int bit = loc->type == CU_MEM_LOCATION_TYPE_DEVICE ? XGPULIB_AB_DEV :
								      XGPULIB_AB_CPU;

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

CUresult xgpulib_mrec_prefetch(const struct xgpulib_region *r, CUdeviceptr p,
			       size_t n, const CUmemLocation *loc)
{
	return rec_apply(r, p, n, set_prefetch, loc, 0);
}

CUresult xgpulib_mrec_advise(const struct xgpulib_region *r, CUdeviceptr p,
			     size_t n, const CUmemLocation *loc, int advice)
{
	return rec_apply(r, p, n, set_advice, loc, advice);
}

/* ---- what a range shares ------------------------------------------------- */

static void rec_view(const struct mrec *x, uint64_t a, uint64_t b,
		     struct xgpulib_mrange_view *v)
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

void xgpulib_mrec_view(const struct xgpulib_region *r, CUdeviceptr p,
		       size_t n, struct xgpulib_mrange_view *v)
{
	const struct mrec *x;
	uint64_t a, b;

	page_span(r, p, n, &a, &b);
	pthread_mutex_lock(&rec_mu);
	x = rec_of(r);
	if (x)
		rec_view(x, a, b, v);
	else
		memset(v, 0, sizeof(*v));
	pthread_mutex_unlock(&rec_mu);
}
