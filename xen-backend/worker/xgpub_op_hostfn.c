// SPDX-License-Identifier: MIT
/*
 * xgpub_op_hostfn.c: host functions (cuLaunchHostFunc, cuStreamAddCallback)
 * run in the guest process, in stream order, the stream held until they
 * return.
 *
 * The guest shares a region of slots (struct xgpuif_hostfn_slot).  For
 * each launch the worker puts a callback of its own on the stream; the
 * driver runs it on its callback thread when the stream gets there.  It
 * marks the slot DUE and waits, spinning briefly then sleeping, until
 * the guest has run the function and marked it DONE, then frees the slot.
 * Only this guest's streams wait on it (each guest process has a worker of
 * its own), and a closing channel (w->hostfn_closing) lets every
 * waiting callback go, so the teardown's synchronizations end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xgpub_worker.h"

#define MAX_SLOTS 1024u

struct hostfn_ctx {
	struct xgpub_worker *w;
	uint32_t slot;
};

static struct hostfn_ctx ctxs[MAX_SLOTS];
/* the worker whose guest runs graph host functions (one per process) */
static struct xgpub_worker *graph_w;

/* slot `slot` of the region: the guest's, then the graph slots */
static struct xgpuif_hostfn_slot *slot_of(struct xgpub_worker *w,
					  uint32_t slot)
{
	struct xgpub_region *r;

	if (w->hostfn_local)
		return slot < w->hostfn_nslots + w->hostfn_ngraph ?
			       &w->hostfn_local[slot] : NULL;
	r = xgpub_region_get(w, w->hostfn_region);

	if (!r || slot >= w->hostfn_nslots + w->hostfn_ngraph ||
	    (uint64_t)(slot + 1) * sizeof(struct xgpuif_hostfn_slot) > r->size)
		return NULL;
	return (struct xgpuif_hostfn_slot *)r->va + slot;
}

/*
 * Slot s's state is now `state` (DUE, FREE): where the slots are the
 * worker's own (the network), the guest's copy is told.  A connection
 * that is gone tells nobody: the teardown (hostfn_closing) lets the
 * waiting callbacks go.
 */
static void set_state_fill(struct xgpub_worker *w,
			   struct xgpuif_hostfn_slot *s, uint32_t state,
			   size_t off, size_t len)
{
	__atomic_store_n(&s->state, state, __ATOMIC_RELEASE);
	if (w->hostfn_local)
		(void)w->t->ops->hostfn_ship(w->t,
					     (unsigned int)(s - w->hostfn_local),
					     off, len);
}

static void set_state(struct xgpub_worker *w, struct xgpuif_hostfn_slot *s,
		      uint32_t state)
{
	set_state_fill(w, s, state, 0, 0);
}

static void wait_done(struct xgpub_worker *w, struct xgpuif_hostfn_slot *s)
{
	struct timespec ts = { 0, 0 };
	unsigned int spins = 0;

	uint32_t st;

	while ((st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE)) !=
		       XGPUIF_HF_DONE &&
	       !__atomic_load_n(&w->hostfn_closing, __ATOMIC_ACQUIRE)) {
		if (st == XGPUIF_HF_FETCH && !s->mc_dptr) {
			/* the network: the function asks for bytes of the
			 * data area alone (a graph's staging buffer that a
			 * copy before it filled) */
			struct xgpuif_memref ref = { s->mc_off, s->mc_len,
						     s->mc_region, 0 };
			bool ok = w->hostfn_local && s->mc_len &&
				  s->mc_region == XGPUIF_REGION_DATA &&
				  xgpub_memref(w, &ref);

			s->mc_status = ok ? 0 : CUDA_ERROR_INVALID_VALUE;
			set_state_fill(w, s, XGPUIF_HF_DUE, ok ? s->mc_off : 0,
				       ok ? s->mc_len : 0);
			spins = 0;
			ts.tv_nsec = 0;
			continue;
		}
		if (st == XGPUIF_HF_FETCH || st == XGPUIF_HF_FLUSH) {
			/* the function touched managed memory: answered
			 * DUE, a fetched block's bytes first where the
			 * guest's copy of the data area is its own */
			bool fill = xgpub_managed_hostfn(w, s, st) &&
				    st == XGPUIF_HF_FETCH &&
				    s->mc_region == XGPUIF_REGION_DATA;

			set_state_fill(w, s, XGPUIF_HF_DUE, fill ? s->mc_off : 0,
				       fill ? s->mc_len : 0);
			spins = 0;
			ts.tv_nsec = 0;
			continue;
		}
		if (++spins < 2000) {
			xgpu_cpu_relax();
			continue;
		}
		/* 10 us, growing to 1 ms: a host function may be long */
		ts.tv_nsec = ts.tv_nsec ? ts.tv_nsec * 2 : 10000;
		if (ts.tv_nsec > 1000000)
			ts.tv_nsec = 1000000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ts.tv_nsec = ts.tv_nsec ? ts.tv_nsec : 10000;
	}
}

static void run_slot(struct hostfn_ctx *c, CUresult status)
{
	struct xgpuif_hostfn_slot *s;

	if (__atomic_load_n(&c->w->hostfn_closing, __ATOMIC_ACQUIRE))
		return;
	/* the region stays mapped while work is queued: unregistering it
	 * synchronizes the context first */
	s = slot_of(c->w, c->slot);
	if (!s)
		return;
	s->status = (int32_t)status;
	set_state(c->w, s, XGPUIF_HF_DUE);
	wait_done(c->w, s);
	set_state(c->w, s, XGPUIF_HF_FREE);
}

/*
 * A graph's host function, number id, reached: take a graph slot (FREE ->
 * QUEUED: the guest never takes these), name the function, mark it DUE
 * and wait as for a launch.  While every graph slot is busy (host nodes
 * of parallel branches), wait for one.
 */
static void run_graph_slot(struct xgpub_worker *w, uint64_t id,
			   CUresult status, uint32_t nt_type, uint64_t nt_info)
{
	struct xgpuif_hostfn_slot *s = NULL;

	while (w && !s && !__atomic_load_n(&w->hostfn_closing,
					    __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, 20000 };

		for (uint32_t i = 0; i < w->hostfn_ngraph && !s; i++) {
			struct xgpuif_hostfn_slot *c =
				slot_of(w, w->hostfn_nslots + i);
			uint32_t st = XGPUIF_HF_FREE;

			if (!c)
				return;
			if (__atomic_compare_exchange_n(
				    &c->state, &st, XGPUIF_HF_QUEUED, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				s = c;
		}
		if (!s)
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
	}
	if (!s)
		return;
	s->fnid = id;
	s->status = (int32_t)status;
	s->nt_type = nt_type;
	s->nt_info = nt_info;
	set_state(w, s, XGPUIF_HF_DUE);
	wait_done(w, s);
	set_state(w, s, XGPUIF_HF_FREE);
}

static void run_graph_fn(uint64_t id, CUresult status)
{
	run_graph_slot(__atomic_load_n(&graph_w, __ATOMIC_ACQUIRE), id, status,
		       0, 0);
}

/* an async notification for the guest's function number id: through a
 * graph slot, as a graph's host function (xgpub_op_ext.c) */
void xgpub_hostfn_notify(struct xgpub_worker *w, uint64_t id, uint32_t type,
			 uint64_t info)
{
	run_graph_slot(w, id, CUDA_SUCCESS, type, info);
}

void CUDA_CB xgpub_graph_hostfn(void *user)
{
	run_graph_fn((uint64_t)(uintptr_t)user, CUDA_SUCCESS);
}

static void CUDA_CB on_graph_callback(CUstream s, CUresult status, void *user)
{
	(void)s;
	run_graph_fn((uint64_t)(uintptr_t)user, status);
}

static void CUDA_CB on_hostfn(void *user)
{
	run_slot(user, CUDA_SUCCESS);
}

static void CUDA_CB on_callback(CUstream s, CUresult status, void *user)
{
	(void)s;
	run_slot(user, status);
}

/*
 * Where the transport shares no memory (the network), the slots are the
 * worker's own and the transport keeps the guest's copy in step: the
 * guest names no region but XGPUIF_HOSTFN_MIRRORED.
 */
static CUresult mirrored_slots(struct xgpub_worker *w, uint32_t n)
{
	struct xgpuif_hostfn_slot *s;

	if (!w->t->ops->hostfn_area)
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(n, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (w->t->ops->hostfn_area(w->t, s, n)) {
		free(s);
		return CUDA_ERROR_UNKNOWN;
	}
	w->hostfn_local = s;	/* for the worker's life: the mirror has it */
	return CUDA_SUCCESS;
}

XGPUB_HANDLER(HOSTFN_SETUP)
{
	bool mirrored = a->region == XGPUIF_HOSTFN_MIRRORED;
	struct xgpub_region *r = mirrored ? NULL :
					    xgpub_region_get(w, a->region);
	CUresult rc;

	if ((!r && !mirrored) || !a->nslots || a->nslots > MAX_SLOTS ||
	    a->ngraph > MAX_SLOTS || a->_pad ||
	    (r && (uint64_t)(a->nslots + a->ngraph) *
			    sizeof(struct xgpuif_hostfn_slot) > r->size))
		return CUDA_ERROR_INVALID_VALUE;
	/* once per channel: slots in flight name the region */
	if (w->hostfn_nslots || w->hostfn_local)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (mirrored) {
		rc = mirrored_slots(w, a->nslots + a->ngraph);
		if (rc)
			return rc;
	}
	w->hostfn_region = a->region;
	w->hostfn_nslots = a->nslots;
	w->hostfn_ngraph = a->ngraph;
	__atomic_store_n(&graph_w, w, __ATOMIC_RELEASE);
	/* a worker may serve another channel after a teardown */
	__atomic_store_n(&w->hostfn_closing, 0, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < a->nslots; i++)
		ctxs[i] = (struct hostfn_ctx){ w, i };
	return 0;
}

XGPUB_HANDLER(HOSTFN_LAUNCH)
{
	struct hostfn_ctx *c;

	if (a->callback > 1 || a->slot >= w->hostfn_nslots ||
	    !slot_of(w, a->slot))
		return CUDA_ERROR_INVALID_VALUE;
	/* a graph would run the worker's callback at each launch, on a
	 * slot the guest has long reused: the guest sends HOSTFN_CAPTURE */
	if (xgpub_capturing(w, stream))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	c = &ctxs[a->slot];
	if (a->callback)
		return w->D->cuStreamAddCallback(stream, on_callback, c, 0);
	return w->D->cuLaunchHostFunc(stream, on_hostfn, c);
}

/*
 * A host function by its number (on a capturing stream, the driver makes
 * it a host node): it runs through a graph slot, each time it is reached.
 * Whether a stream callback may be captured is the driver's to say.
 */
XGPUB_HANDLER(HOSTFN_CAPTURE)
{
	void *id = (void *)(uintptr_t)a->fnid;

	if (a->callback > 1 || !a->fnid || a->_pad || !w->hostfn_ngraph)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->callback)
		return w->D->cuStreamAddCallback(stream, on_graph_callback,
						 id, 0);
	return w->D->cuLaunchHostFunc(stream, xgpub_graph_hostfn, id);
}
