// SPDX-License-Identifier: MIT
/*
 * xgpub_op_ctx.c: contexts.
 *
 * The worker retained the device's primary context at start and keeps it
 * until the guest is gone; its guest handle (w->primary_h) never changes.
 * A guest's retains and releases are mirrored on the driver and counted in
 * w->primary_refs (teardown releases what is left), so the driver's count
 * never falls to zero under the guest.
 *
 * The dispatch thread's context stack is kept one deep: the dispatcher
 * replaces its top with each request's context (cuCtxSetCurrent), and
 * w->cur says what is there.  cuCtxCreate pushes and cuCtxDestroy pops,
 * so both are wrapped to restore that.
 *
 * The guest's device 0 is the host device w->dev; any other ordinal is
 * CUDA_ERROR_INVALID_DEVICE.
 */
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

/* far more than any program retains; keeps primary_refs from wrapping */
#define MAX_PRIMARY_REFS (1 << 24)

/* make c current in the dispatch thread (and w->cur say so) */
static int set_current(struct xgpub_worker *w, CUcontext c)
{
	int rc;

	if (c == w->cur)
		return CUDA_SUCCESS;
	rc = w->D->cuCtxSetCurrent(c);
	if (rc == CUDA_SUCCESS)
		w->cur = c;
	return rc;
}

/* ---- primary context ----------------------------------------------------- */

XGPUB_HANDLER(PRIMARY_CTX_RETAIN)
{
	CUcontext c = NULL;
	int rc;

	if (a->ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!w->primary_h || w->primary_refs >= MAX_PRIMARY_REFS)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuDevicePrimaryCtxRetain(&c, w->dev);
	if (rc)
		return rc;
	w->primary_refs++;
	r->ctx = w->primary_h;
	return 0;
}

XGPUB_HANDLER(PRIMARY_CTX_RELEASE)
{
	int rc;

	if (a->ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (w->primary_refs <= 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* never the worker's own reference: the context stays alive */
	rc = w->D->cuDevicePrimaryCtxRelease_v2(w->dev);
	if (rc)
		return rc;
	w->primary_refs--;
	return 0;
}

/*
 * A real reset would destroy every allocation, module, stream and event of
 * the primary context behind the worker's handle tables and memory
 * accounting, leaving them pointing at freed driver objects.  So a reset
 * only waits for the context's work; the guest's resources are NOT freed
 * (they go when the guest does), and errors are answered as success so
 * that the guest, which drops its own state, can start over.
 */
XGPUB_HANDLER(PRIMARY_CTX_RESET)
{
	CUcontext saved = w->cur;

	if (a->ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (set_current(w, w->primary) == CUDA_SUCCESS) {
		int rc = w->D->cuCtxSynchronize();

		if (rc)
			xgpub_dbg("%s: primary context reset: synchronize "
				  "answered %d", w->t->who, rc);
		set_current(w, saved);
	}
	return 0;
}

/* the device (the guest sees one, 0) and context flags of a request */
static int dev_flags_check(const struct xgpuif_dev_flags_args *a)
{
	if (a->dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	return xgpub_ctx_flags_check(a->flags);
}

XGPUB_HANDLER(PRIMARY_CTX_SET_FLAGS)
{
	int rc = dev_flags_check(a);

	if (rc)
		return rc;
	return w->D->cuDevicePrimaryCtxSetFlags_v2(w->dev, a->flags);
}

XGPUB_HANDLER(PRIMARY_CTX_GET_STATE)
{
	unsigned int flags = 0;
	int active = 0;
	int rc;

	if (a->ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	rc = w->D->cuDevicePrimaryCtxGetState(w->dev, &flags, &active);
	if (rc)
		return rc;
	r->flags = flags;
	/* the worker's own reference keeps it active; the guest's view is
	 * whether the guest holds one */
	r->active = w->primary_refs > 0;
	return 0;
}

/* ---- created contexts ---------------------------------------------------- */

XGPUB_HANDLER(CTX_CREATE)
{
	CUcontext saved = w->cur, c = NULL;
	xgpuif_handle_t h;
	int rc;

	rc = dev_flags_check(a);
	if (rc)
		return rc;
	/* a context costs device memory: refused past the quota */
	if (w->opt && !xgpub_quota_allows(w, w->opt->ctx_charge))
		return CUDA_ERROR_OUT_OF_MEMORY;
	/*
	 * Empty the stack first (SetCurrent(NULL) pops its one entry), so
	 * that the push of cuCtxCreate makes it one deep again and the
	 * SetCurrent below replaces that entry instead of growing the stack.
	 */
	rc = w->D->cuCtxSetCurrent(NULL);
	if (rc)
		return rc;
	w->cur = NULL;
	rc = w->D->cuCtxCreate_v4(&c, NULL, a->flags, w->dev);
	/* the new context was pushed; put the caller's back in its place */
	if (w->D->cuCtxSetCurrent(saved) == CUDA_SUCCESS)
		w->cur = saved;
	else
		w->cur = rc == CUDA_SUCCESS ? c : NULL;
	if (rc)
		return rc;
	h = xgpub_handle_new(&w->h, XGPUB_H_CTX, c, NULL);
	if (!h) {
		if (w->cur == c) {
			w->D->cuCtxSetCurrent(NULL);
			w->cur = NULL;
		}
		w->D->cuCtxDestroy_v2(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	xgpub_ctx_charge(w, c, true);
	r->ctx = h;
	return 0;
}

XGPUB_HANDLER(CTX_DESTROY)
{
	CUcontext c = handle->obj, saved = w->cur;
	int rc;

	/* the primary is released, never destroyed; a green context's
	 * context goes with cuGreenCtxDestroy */
	if (c == w->primary || handle->extra)
		return CUDA_ERROR_INVALID_CONTEXT;
	/*
	 * Its streams and events die with it in the driver; destroy them
	 * first and drop their handles, which would otherwise name freed
	 * driver objects.
	 */
	rc = set_current(w, c);
	if (rc)
		return rc;
	xgpub_ctx_drop_streams(w, c);
	rc = w->D->cuCtxDestroy_v2(c);
	if (rc) {
		set_current(w, saved);
		return rc;
	}
	/* its modules and functions died with it: drop their handles */
	xgpub_module_ctx_gone(w, c);
	xgpub_ctx_uncharge(w, c);
	/* destroying the current context popped it: the stack is empty */
	w->cur = NULL;
	if (saved != c)
		set_current(w, saved);
	xgpub_handle_drop(&w->h, handle);
	return 0;
}

/* ---- the current context ------------------------------------------------- */

XGPUB_HANDLER(CTX_SYNCHRONIZE)
{
	int rc;

	xgpub_gate_wait(w, true);
	rc = w->D->cuCtxSynchronize();
	xgpub_gate_wait(w, false);
	if (rc == CUDA_SUCCESS)
		xgpub_fence_ctx_synced(w);
	return rc;
}

/*
 * A cuCtxSynchronize that does not hold the channel: the library asks
 * this until it is answered (a process that waits on values, whose
 * context's work may wait for a later request of another thread).  The
 * legacy stream and the worker's per-thread stream are asked, then the
 * guest's streams of the context (xgpub_ctx_streams_query); when none
 * has work left, the driver's cuCtxSynchronize returns at once with its
 * status (no request can come between the two).
 */
XGPUB_HANDLER(CTX_QUERY)
{
	int rc = w->D->cuStreamQuery(CU_STREAM_LEGACY);

	if (rc == CUDA_SUCCESS)
		rc = w->D->cuStreamQuery(CU_STREAM_PER_THREAD);
	if (rc == CUDA_SUCCESS)
		rc = xgpub_ctx_streams_query(w, w->cur);
	if (rc == CUDA_ERROR_NOT_READY) {
		xgpub_gate_not_ready(w);
		return rc;
	}
	return xgpub_h_CTX_SYNCHRONIZE(w);
}

XGPUB_HANDLER(CTX_GET_LIMIT)
{
	size_t v = 0;
	int rc;

	rc = w->D->cuCtxGetLimit(&v, (CUlimit)a->limit);
	r->value = v;
	return rc;
}

/*
 * The device-side malloc heap, the printf FIFO and the stack (per
 * resident thread) are device memory the driver reserves outside
 * cuMemAlloc: charged to the current context while set, a new value
 * replacing the old one's charge, refused past the quota.
 */
XGPUB_HANDLER(CTX_SET_LIMIT)
{
	int rc = xgpub_ctx_limit_check(a->limit);
	uint64_t cost;

	if (rc)
		return rc;
	cost = xgpub_ctx_limit_cost(w, a->limit, a->value);
	rc = xgpub_ctx_limit_check_quota(w, w->cur, a->limit, cost);
	if (rc)
		return rc;
	rc = w->D->cuCtxSetLimit((CUlimit)a->limit, (size_t)a->value);
	if (rc == 0)
		xgpub_ctx_limit_set(w, w->cur, a->limit, cost);
	return rc;
}

XGPUB_HANDLER(CTX_GET_PRIORITY_RANGE)
{
	int least = 0, greatest = 0;
	int rc;

	rc = w->D->cuCtxGetStreamPriorityRange(&least, &greatest);
	r->least = least;
	r->greatest = greatest;
	return rc;
}

XGPUB_HANDLER(CTX_GET_FLAGS)
{
	unsigned int flags = 0;
	int rc;

	rc = w->D->cuCtxGetFlags(&flags);
	r->value = flags;
	return rc;
}

XGPUB_HANDLER(CTX_GET_CACHE_CONFIG)
{
	CUfunc_cache cfg = CU_FUNC_CACHE_PREFER_NONE;
	int rc;

	rc = w->D->cuCtxGetCacheConfig(&cfg);
	r->value = (uint64_t)cfg;
	return rc;
}

XGPUB_HANDLER(CTX_SET_CACHE_CONFIG)
{
	return w->D->cuCtxSetCacheConfig((CUfunc_cache)a->value);
}
