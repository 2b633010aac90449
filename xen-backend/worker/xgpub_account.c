// SPDX-License-Identifier: MIT
/*
 * xgpub_account.c: what the guest holds on the device, for its quota and
 * its view of free memory: this worker's allocations and the charges
 * that are not allocations (contexts and their limits, arrays, module
 * globals), and those of the guest's other workers, read from their
 * status slots.  It calls only the driver and the handle table's growing
 * array, so the handlers and xgpub_state.c's releases stand on it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "xgpub_worker.h"

/* ---- device memory accounting ---------------------------------------------- */

/*
 * What an allocation of `size` bytes costs the guest: the driver hands out
 * device memory in 2 MiB pages and carves smaller allocations out of them
 * at 256 bytes at least (100,000 one-byte allocations held 25.6 MB).
 */
uint64_t xgpub_charge_size(uint64_t size)
{
	const uint64_t big = 2u << 20, small = 256;

	if (size > UINT64_MAX - big)
		return UINT64_MAX;
	if (size >= big)
		return (size + big - 1) & ~(big - 1);
	return size ? (size + small - 1) & ~(small - 1) : small;
}

/*
 * What the guest holds on the device: this worker's allocations and those
 * of the guest's other workers (its other processes: the quota is the
 * guest's, a Xen domain's or a local user's), read from their status
 * slots.  Two workers allocating at the same moment may pass it by one
 * allocation each.
 */
/* the sum of one field of the guest's other workers' slots */
static uint64_t others_sum(size_t off)
{
	uint64_t acct;

	if (!xgpub_all_stats || !xgpub_self_stat)
		return 0;
	acct = __atomic_load_n(&xgpub_wctl_of(xgpub_self_stat)->acct,
			       __ATOMIC_ACQUIRE);
	return acct ? xgpub_others_sum(off, acct) : 0;
}

void xgpub_account_freed(struct xgpub_worker *w)
{
	w->pinned = 0;
	w->mem_used = 0;
	if (!xgpub_self_stat)
		return;
	__atomic_store_n(&xgpub_self_stat->pinned, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&xgpub_self_stat->mem_used, 0, __ATOMIC_RELEASE);
}

uint64_t xgpub_guest_pinned(struct xgpub_worker *w)
{
	return w->pinned + others_sum(offsetof(struct xgpub_wstat, pinned));
}

uint64_t xgpub_guest_mem_used(struct xgpub_worker *w)
{
	return w->mem_used + others_sum(offsetof(struct xgpub_wstat,
						 mem_used));
}

bool xgpub_quota_allows(struct xgpub_worker *w, uint64_t size)
{
	uint64_t c = xgpub_charge_size(size), used;

	if (!w->opt || !w->opt->quota)
		return true;
	used = xgpub_guest_mem_used(w);
	return used <= w->opt->quota && c <= w->opt->quota - used;
}

int xgpub_alloc_check(struct xgpub_worker *w, uint64_t size)
{
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	return xgpub_quota_allows(w, size) ? 0 : CUDA_ERROR_OUT_OF_MEMORY;
}

int xgpub_alloc_add(struct xgpub_worker *w, uint64_t dptr, uint64_t size)
{
	struct xgpub_alloc *n = xgpub_push(&w->allocs, &w->nallocs,
					   &w->cap_allocs, sizeof(*n), 256,
					   UINT32_MAX);

	if (!n)
		return -ENOMEM;
	size = xgpub_charge_size(size);
	*n = (struct xgpub_alloc){ dptr, size };
	w->mem_used += size;
	/* at once: the guest's other workers read it */
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->mem_used, w->mem_used,
				 __ATOMIC_RELAXED);
	return 0;
}

bool xgpub_alloc_has(struct xgpub_worker *w, uint64_t dptr)
{
	for (uint32_t i = 0; i < w->nallocs; i++)
		if (w->allocs[i].dptr == dptr)
			return true;
	return false;
}

bool xgpub_alloc_holds(struct xgpub_worker *w, uint64_t d, uint64_t end)
{
	for (uint32_t i = 0; i < w->nallocs; i++) {
		const struct xgpub_alloc *a = &w->allocs[i];

		if (d >= a->dptr && end - a->dptr <= a->size)
			return true;
	}
	return false;
}

int xgpub_alloc_del(struct xgpub_worker *w, uint64_t dptr)
{
	for (uint32_t i = 0; i < w->nallocs; i++) {
		if (w->allocs[i].dptr == dptr) {
			w->mem_used -= w->allocs[i].size;
			w->allocs[i] = w->allocs[--w->nallocs];
			if (xgpub_self_stat)
				__atomic_store_n(&xgpub_self_stat->mem_used,
						 w->mem_used, __ATOMIC_RELAXED);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- charges that are not allocations ------------------------------------ */

static void publish_used(struct xgpub_worker *w)
{
	/* at once: the guest's other workers read it */
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->mem_used, w->mem_used,
				 __ATOMIC_RELAXED);
}

void xgpub_charge(struct xgpub_worker *w, uint64_t bytes)
{
	w->mem_used = bytes > UINT64_MAX - w->mem_used ? UINT64_MAX :
							 w->mem_used + bytes;
	publish_used(w);
}

void xgpub_uncharge(struct xgpub_worker *w, uint64_t bytes)
{
	w->mem_used = bytes < w->mem_used ? w->mem_used - bytes : 0;
	publish_used(w);
}

/* bytes of one element of an array channel; 4 for a format not known
 * here (the widest of the plain ones) */
static uint64_t format_bytes(unsigned int format)
{
	switch (format) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2;
	default:
		return 4;
	}
}

/* x * y, saturating */
static uint64_t mul_sat(uint64_t x, uint64_t y)
{
	uint64_t p;

	return __builtin_mul_overflow(x, y, &p) ? UINT64_MAX : p;
}

static uint64_t at_least_1(uint64_t v)
{
	return v ? v : 1;
}

uint64_t xgpub_array_charge(const CUDA_ARRAY3D_DESCRIPTOR *d,
			    unsigned int levels)
{
	uint64_t wd = at_least_1(d->Width), ht = at_least_1(d->Height);
	uint64_t dp = at_least_1(d->Depth), sum = 0;
	uint64_t elem = mul_sat(format_bytes(d->Format),
				at_least_1(d->NumChannels));
	const bool layered = d->Flags & CUDA_ARRAY3D_LAYERED;

	if (levels == 0)
		levels = 1;
	/* past 64 levels every dimension is 1 (the driver refuses them) */
	for (unsigned int l = 0; l < levels && l < 65; l++) {
		uint64_t c = mul_sat(mul_sat(mul_sat(wd, ht), dp), elem);

		sum = c > UINT64_MAX - sum ? UINT64_MAX : sum + c;
		wd = at_least_1(wd >> 1);
		ht = at_least_1(ht >> 1);
		if (!layered)	/* a layered array keeps its layers */
			dp = at_least_1(dp >> 1);
	}
	return xgpub_charge_size(sum);
}

/* a context's charges: itself, and the three limits that cost memory */
struct xgpub_ctxq {
	CUcontext ctx;
	uint64_t base;
	uint64_t lim[3];	/* STACK_SIZE, PRINTF_FIFO_SIZE, MALLOC_HEAP */
};

static int limit_slot(unsigned int limit)
{
	switch (limit) {
	case CU_LIMIT_STACK_SIZE:
		return 0;
	case CU_LIMIT_PRINTF_FIFO_SIZE:
		return 1;
	case CU_LIMIT_MALLOC_HEAP_SIZE:
		return 2;
	default:
		return -1;
	}
}

static struct xgpub_ctxq *ctxq_find(struct xgpub_worker *w, CUcontext ctx)
{
	for (uint32_t i = 0; i < w->nctxq; i++)
		if (w->ctxq[i].ctx == ctx)
			return &w->ctxq[i];
	return NULL;
}

static struct xgpub_ctxq *ctxq_add(struct xgpub_worker *w, CUcontext ctx)
{
	struct xgpub_ctxq *q = ctxq_find(w, ctx);

	if (q)
		return q;
	q = xgpub_push(&w->ctxq, &w->nctxq, &w->cap_ctxq, sizeof(*q), 16,
		       UINT32_MAX);
	if (q)
		*q = (struct xgpub_ctxq){ .ctx = ctx };
	return q;
}

int xgpub_ctx_charge(struct xgpub_worker *w, CUcontext ctx, bool force)
{
	return xgpub_ctx_charge_n(w, ctx, w->opt ? w->opt->ctx_charge : 0,
				  force);
}

int xgpub_ctx_charge_n(struct xgpub_worker *w, CUcontext ctx, uint64_t c,
		       bool force)
{
	struct xgpub_ctxq *q;

	if (!force && !xgpub_quota_allows(w, c))
		return CUDA_ERROR_OUT_OF_MEMORY;
	q = ctxq_add(w, ctx);
	if (!q)
		return CUDA_ERROR_OUT_OF_MEMORY;
	q->base += c;
	xgpub_charge(w, c);
	return 0;
}

void xgpub_ctx_uncharge(struct xgpub_worker *w, CUcontext ctx)
{
	struct xgpub_ctxq *q = ctxq_find(w, ctx);

	if (!q)
		return;
	xgpub_uncharge(w, q->base);
	for (int i = 0; i < 3; i++)
		xgpub_uncharge(w, q->lim[i]);
	*q = w->ctxq[--w->nctxq];
}

uint64_t xgpub_ctx_limit_cost(struct xgpub_worker *w, unsigned int limit,
			      uint64_t value)
{
	int sm = 0, tpm = 0;

	switch (limit) {
	case CU_LIMIT_STACK_SIZE:
		/*
		 * Per resident thread: on an H200 (132 SMs x 2048 threads)
		 * 16 KiB instead of the default 1 KiB took 3960.0 MiB, which
		 * is (16384 - 1024) x 132 x 2048 bytes.  The default's share
		 * is in the context's charge.
		 */
		if (value <= 1024)
			return 0;
		if (w->D->cuDeviceGetAttribute(
			    &sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
			    w->dev) ||
		    w->D->cuDeviceGetAttribute(
			    &tpm,
			    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
			    w->dev) ||
		    sm <= 0 || tpm <= 0)
			return UINT64_MAX;
		return xgpub_charge_size(mul_sat(value - 1024,
					 mul_sat((uint64_t)sm, (uint64_t)tpm)));
	case CU_LIMIT_PRINTF_FIFO_SIZE:
	case CU_LIMIT_MALLOC_HEAP_SIZE:
		return value ? xgpub_charge_size(value) : 0;
	default:
		return 0;
	}
}

int xgpub_ctx_limit_check_quota(struct xgpub_worker *w, CUcontext ctx,
				unsigned int limit, uint64_t cost)
{
	const struct xgpub_ctxq *q = ctxq_find(w, ctx);
	int slot = limit_slot(limit);
	uint64_t old = q && slot >= 0 ? q->lim[slot] : 0, used;

	if (slot < 0 || !w->opt || !w->opt->quota || cost <= old)
		return 0;
	/* the new value replaces the old one's charge */
	used = xgpub_guest_mem_used(w) - old;
	if (cost == UINT64_MAX || used > w->opt->quota ||
	    cost > w->opt->quota - used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	return 0;
}

void xgpub_ctx_limit_set(struct xgpub_worker *w, CUcontext ctx,
			 unsigned int limit, uint64_t cost)
{
	int slot = limit_slot(limit);
	struct xgpub_ctxq *q;

	if (slot < 0)
		return;
	q = ctxq_add(w, ctx);
	if (!q)
		return;
	xgpub_uncharge(w, q->lim[slot]);
	q->lim[slot] = cost;
	xgpub_charge(w, cost);
}

/* a module global charged: the module or library it dies with */
struct xgpub_globq {
	xgpuif_handle_t root;
	uint64_t dptr, size;
};

int xgpub_global_charge(struct xgpub_worker *w, xgpuif_handle_t root,
			uint64_t dptr, uint64_t size)
{
	uint64_t c = xgpub_charge_size(size);
	struct xgpub_globq *n;

	for (uint32_t i = 0; i < w->nglobq; i++)
		if (w->globq[i].root == root && w->globq[i].dptr == dptr)
			return 0;
	if (!xgpub_quota_allows(w, size))
		return CUDA_ERROR_OUT_OF_MEMORY;
	n = xgpub_push(&w->globq, &w->nglobq, &w->cap_globq, sizeof(*n), 64,
		       UINT32_MAX);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*n = (struct xgpub_globq){ root, dptr, c };
	xgpub_charge(w, c);
	return 0;
}

void xgpub_globals_uncharge(struct xgpub_worker *w, xgpuif_handle_t root)
{
	for (uint32_t i = 0; i < w->nglobq;) {
		if (w->globq[i].root == root) {
			xgpub_uncharge(w, w->globq[i].size);
			w->globq[i] = w->globq[--w->nglobq];
		} else {
			i++;
		}
	}
}

uint64_t xgpub_guest_images_others(struct xgpub_worker *w)
{
	(void)w;
	return others_sum(offsetof(struct xgpub_wstat, images));
}
