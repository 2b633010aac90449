// SPDX-License-Identifier: MIT
/*
 * xgpub_worker.c: one worker process serves one guest channel: it owns
 * the guest's CUDA context(s), handle tables and memory accounting, takes
 * requests off the ring in order and answers each in the slots of its
 * request.
 *
 * Distrust: a request is copied out of the ring before it is looked at;
 * the producer index is checked for overflow; every op's payload length is
 * checked against its argument struct before the handler runs; handlers
 * check every offset, length and handle.  A request that no well-behaved
 * guest sends ends the channel (the worker exits); the daemon and the
 * other guests' workers are separate processes and go on.
 *
 * Waiting: after the last request the worker spins (a guest in a tight
 * loop of calls then needs no wake-up; up to spin_us, adapted to the
 * guest's gaps: xgpub_spin_adapt), then arms req_event and sleeps on the
 * transport.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "xgpub_record.h"
#include "xgpu_prof.h"

/* set by the daemon in the forked worker (daemon/xgpub_children.c) */
struct xgpub_wstat *xgpub_self_stat;
struct xgpub_wslot *xgpub_all_stats;
int xgpub_nstats;
size_t xgpub_shared_bytes;
struct xgpub_gcell *xgpub_self_cell;

/* ---- dispatch ------------------------------------------------------------------ */

static uint8_t payload_buf[XGPUIF_MAX_PAYLOAD];
static uint8_t reply_buf[XGPUIF_MAX_PAYLOAD];

/* make the request's context current in the dispatch thread */
static int switch_ctx(struct xgpub_worker *w, xgpuif_handle_t h)
{
	CUcontext c = NULL;

	if (h) {
		struct xgpub_hentry *e = xgpub_handle_get(&w->h, h,
							  XGPUB_H_CTX);

		if (!e)
			return CUDA_ERROR_INVALID_CONTEXT;
		c = e->obj;
	}
	if (c != w->cur) {
		int rc = w->D->cuCtxSetCurrent(c);

		if (rc)
			return rc;
		w->cur = c;
	}
	return CUDA_SUCCESS;
}

/*
 * How the gate takes an op that puts work on a stream: GATE_FULL, or not
 * at all for a stream being captured (its work runs when its graph is
 * launched), or GATE_UNBOUND for a stream that waits for a value
 * (cuStreamWaitValue*): its work may wait for work the guest has not sent
 * yet, so the dispatcher must not wait for it to complete; it still waits
 * for its turn and its GPU time is still measured (an overrun after the
 * turn is the daemon's drain deadline's to bound).
 */
enum gating { GATE_NONE, GATE_FULL, GATE_UNBOUND };

static enum gating gating(struct xgpub_worker *w, const struct xgpub_op *op)
{
	xgpuif_handle_t sh;
	CUstream s = NULL;

	if (!op->work || !xgpub_gate_on())
		return GATE_NONE;
	if (!w->captures && !w->nwaiting && !w->wait_any)
		return GATE_FULL;
	memcpy(&sh, payload_buf + op->stream_off, sizeof(sh));
	if (xgpub_stream(w, sh, &s))
		return GATE_FULL;
	if (xgpub_capturing(w, s))
		return GATE_NONE;
	return xgpub_waits_on_value(w, s) ? GATE_UNBOUND : GATE_FULL;
}

/* a request no well-behaved guest sends: say why, close the channel */
static int malformed(struct xgpub_worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int malformed(struct xgpub_worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
	xgpub_err("%s: %s", w->t->who, w->why);
	return XGPUIF_ST_PROTO;
}

/* requests by op, synchronous and posted: the channel's most frequent
 * ones are logged at its end under --verbose (a synchronous request is a
 * round trip the guest waits for: what to make local first) */
static uint32_t op_sync[XGPUIF_OP_MAX], op_posted[XGPUIF_OP_MAX];

static void log_op_counts(struct xgpub_worker *w)
{
	bool shown[XGPUIF_OP_MAX] = { false };

	for (int k = 0; k < 12; k++) {
		unsigned int best = 0;
		uint64_t n = 0;

		for (unsigned int i = 0; i < XGPUIF_OP_MAX; i++) {
			uint64_t c = (uint64_t)op_sync[i] + op_posted[i];

			if (!shown[i] && c > n) {
				n = c;
				best = i;
			}
		}
		if (!n)
			break;
		shown[best] = true;
		xgpub_dbg("%s: %s: %u synchronous, %u posted", w->t->who,
			  xgpub_ops[best].name, op_sync[best],
			  op_posted[best]);
	}
}

/*
 * Requests that free and unmap nothing: the device ranges the copy
 * checks learnt stay known across them (a copy's round trip is a copy
 * and a synchronize: without this every such copy asked the driver
 * twice again).
 */
static bool keeps_ranges(uint16_t op)
{
	switch (op) {
	case XGPUIF_OP_MEMCPY_HTOD:
	case XGPUIF_OP_MEMCPY_DTOH:
	case XGPUIF_OP_MEMCPY_DTOD:
	case XGPUIF_OP_MEMCPY_3D:
	case XGPUIF_OP_MEMSET:
	case XGPUIF_OP_LAUNCH:
	case XGPUIF_OP_CTX_SYNCHRONIZE:
	case XGPUIF_OP_STREAM_SYNCHRONIZE:
	case XGPUIF_OP_STREAM_QUERY:
	case XGPUIF_OP_STREAM_WAIT_EVENT:
	case XGPUIF_OP_EVENT_RECORD:
	case XGPUIF_OP_EVENT_QUERY:
	case XGPUIF_OP_EVENT_SYNCHRONIZE:
	case XGPUIF_OP_EVENT_ELAPSED_TIME:
		return true;
	default:
		return false;
	}
}

/* the benchmarks' record of where requests' time goes (xgpu_prof.h);
 * last_put: the id of the last reply written */
static struct xgpu_prof prof;
static uint64_t last_put;

static int ctx_setup(struct xgpub_worker *w);

/* a copy to the host that is over when the driver returns (not
 * stream-ordered): nothing of it is left for a synchronize */
static bool done_on_return(const struct xgpuif_request *req)
{
	uint32_t flags;

	if (req->op != XGPUIF_OP_MEMCPY_DTOH)
		return false;
	memcpy(&flags, payload_buf +
	       offsetof(struct xgpuif_memcpy_dtoh_args, flags), sizeof(flags));
	return !(flags & XGPUIF_CF_ASYNC);
}

static void note_stream(struct xgpub_worker *w, const struct xgpub_op *op)
{
	xgpuif_handle_t sh;
	CUstream s;

	memcpy(&sh, payload_buf + op->stream_off, sizeof(sh));
	if (xgpub_stream(w, sh, &s))
		xgpub_fence_forget();	/* (the op failed if so) */
	else
		xgpub_fence_note_stream(w, s);
}
static bool nvml_op(uint16_t op);

/*
 * Check a request against its row of the table (xgpu_calls.def): a known
 * op, sent the way its mode allows, exactly its argument struct (at least
 * it, for VAR ops), enough slots for its reply.  Then make its context
 * current and run it, behind the GPU scheduler's gate if it puts work on
 * a stream.  A posted request gets no reply payload.
 */
static int dispatch(struct xgpub_worker *w, const struct xgpuif_request *req,
		    uint32_t *rlen)
{
	uint32_t cap = xgpuif_capacity(req->nslots);
	bool posted = req->flags & XGPUIF_RF_POSTED;
	const struct xgpub_op *op;
	enum gating gate;
	int rc;

	*rlen = 0;
	op = req->op < XGPUIF_OP_MAX ? &xgpub_ops[req->op] : NULL;
	if (!op || !op->call) {
		xgpub_err("%s: unknown op %u", w->t->who, req->op);
		return XGPUIF_ST_NOT_IMPL;
	}
	if (!(op->modes & (posted ? XGPUB_OPM_POSTED : XGPUB_OPM_SYNC)))
		return malformed(w, "%s sent %s", op->name,
				 posted ? "posted" : "synchronously");
	if (op->var_args ? req->len < op->args_size :
			   req->len != op->args_size)
		return malformed(w, "%s: %u payload bytes, needs %s%u",
				 op->name, req->len,
				 op->var_args ? "at least " : "",
				 op->args_size);
	if (!posted && cap < op->reply_size)
		return malformed(w, "%s: a %u byte reply does not fit %u slots",
				 op->name, op->reply_size, req->nslots);
	if (!w->primary && !nvml_op(req->op)) {
		rc = ctx_setup(w);
		if (rc)
			return rc;
	}
	rc = switch_ctx(w, req->ctx);
	if (rc)
		return rc;
	w->calls++;
	/* what may free or unmap memory forgets the ranges known for copies */
	if (!keeps_ranges(req->op))
		xgpub_dev_ranges_forget(w);
	if (posted)
		op_posted[req->op]++;
	else
		op_sync[req->op]++;
	/*
	 * A stream about to be captured, or joined to a capture (a wait for
	 * an event recorded in one), gets its work so far marked first: the
	 * gate records nothing on a capturing stream, so a later mark would
	 * leave that work unmeasured.
	 */
	if (req->op == XGPUIF_OP_STREAM_BEGIN_CAPTURE ||
	    req->op == XGPUIF_OP_CAPTURE_TO_GRAPH ||
	    (req->op == XGPUIF_OP_STREAM_WAIT_EVENT && w->captures))
		xgpub_gate_mark(w);
	/*
	 * The open batch names the streams it used, to record its mark on
	 * each: a stream is marked before it is destroyed (the driver's
	 * handle of a destroyed stream is freed memory; a record there
	 * killed the worker), and a context's marks are all complete
	 * before it may end (their events and streams go with it).  The
	 * streams of work known for a synchronize the GPU answers
	 * (xgpub_fence.c) are not known after either.
	 */
	else if (req->op == XGPUIF_OP_STREAM_DESTROY) {
		xgpub_gate_mark(w);
		xgpub_fence_forget();
	} else if (req->op == XGPUIF_OP_CTX_DESTROY ||
		   req->op == XGPUIF_OP_PRIMARY_CTX_RELEASE ||
		   req->op == XGPUIF_OP_PRIMARY_CTX_RESET ||
		   req->op == XGPUIF_OP_GREENCTX_DESTROY) {
		xgpub_gate_drain(w);
		xgpub_fence_forget();
	}
	/* memory pools release memory at the driver's synchronizes */
	switch (req->op) {
	case XGPUIF_OP_MEM_ALLOC_ASYNC:
	case XGPUIF_OP_MEM_FREE_ASYNC:
	case XGPUIF_OP_POOL_CREATE:
	case XGPUIF_OP_POOL_ATTR:
	case XGPUIF_OP_POOL_TRIM:
	case XGPUIF_OP_DEVICE_POOL:
	case XGPUIF_OP_POOL_IMPORT:
	case XGPUIF_OP_POOL_IMPORT_PTR:
	case XGPUIF_OP_GRAPH_MEM_ATTR:
		xgpub_fence_stop("stream-ordered allocation");
		break;
	default:
		break;
	}
	gate = gating(w, op);
	if (gate != GATE_NONE) {
		xgpuif_handle_t sh;
		CUstream s = NULL;
		bool submitted;
		uint64_t t0;

		memcpy(&sh, payload_buf + op->stream_off, sizeof(sh));
		t0 = xgpub_gate_enter(w);
		xgpu_prof_mark(&prof, req->id, req->op, XGPU_PROF_CALL);
		rc = op->call(w, payload_buf, req->len, reply_buf, cap, rlen);
		xgpu_prof_mark(&prof, req->id, req->op, XGPU_PROF_RET);
		/* (the stream is found first: arguments have no order) */
		submitted = rc == 0 && !xgpub_stream(w, sh, &s);
		xgpub_gate_done(w, submitted, s, t0, gate == GATE_FULL);
	} else {
		xgpu_prof_mark(&prof, req->id, req->op, XGPU_PROF_CALL);
		rc = op->call(w, payload_buf, req->len, reply_buf, cap, rlen);
		xgpu_prof_mark(&prof, req->id, req->op, XGPU_PROF_RET);
	}
	if (rc == XGPUIF_ST_PROTO)
		return malformed(w, "malformed %s request", op->name);
	/* the streams the context's work went to (xgpub_fence.c; a fenced
	 * synchronize notes its own) */
	if (rc == 0 && op->stream_off >= 0 && req->op != XGPUIF_OP_SYNC_FENCE &&
	    !done_on_return(req))
		note_stream(w, op);
	if (posted)
		*rlen = 0;
	return rc;
}

static void push_replies(struct xgpub_worker *w)
{
	int notify;

	/* stamped just before the index moves: the guest may take the
	 * replies at once */
	xgpu_prof_published(&prof, last_put);
	RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&w->ring, notify);
	if (notify)
		w->t->ops->notify(w->t);
}

void xgpub_publish_held(struct xgpub_worker *w)
{
	if (w->ring.rsp_prod_pvt != w->ring.sring->rsp_prod)
		push_replies(w);
}

/*
 * Replies to posted requests (launches, async copies) that a worker may
 * hold back before it publishes them: publishing is a full barrier and
 * takes the ring header's cache line from the guest, once per request;
 * the guest waits for no such reply, only for the slots it frees.  A
 * synchronous reply, the last request of a batch, and every
 * POSTED_PUSH_MAX-th posted one are published at once, and what is held
 * is published before anything that may block: a synchronous request,
 * a wait in the gate (xgpub_publish_held), so that a guest thread short
 * of slots is never held up by the worker's waiting.
 */
#define POSTED_PUSH_MAX	32u

/*
 * Serve every request on the ring.  0 when the ring is drained, -1 when
 * the channel must close.
 */
int xgpub_worker_serve(struct xgpub_worker *w)
{
	RING_IDX rp = __atomic_load_n(&w->ring.sring->req_prod,
				      __ATOMIC_RELAXED);
	unsigned int held = 0;

	xen_rmb();	/* pairs with the guest's xen_wmb before req_prod */
	if (RING_REQUEST_PROD_OVERFLOW(&w->ring, rp)) {
		snprintf(w->why, sizeof(w->why), "request producer index %u "
			 "overflows the ring (consumer %u)", rp,
			 w->ring.req_cons);
		xgpub_err("%s: %s; closing", w->t->who, w->why);
		return -1;
	}
	while (w->ring.req_cons != rp) {
		struct xgpuif_request req;
		uint32_t rlen, rflags;
		int rc;

		if (xgpuif_back_get(&w->ring, rp, &req, payload_buf)) {
			snprintf(w->why, sizeof(w->why), "malformed request "
				 "header (op %u, %u slots, %u bytes)", req.op,
				 req.nslots, req.len);
			xgpub_err("%s: %s; closing", w->t->who, w->why);
			return -1;
		}
		xgpu_prof_mark(&prof, req.id, req.op, XGPU_PROF_T0);
		if (xgpub_self_stat)
			__atomic_store_n(&xgpub_self_stat->qdepth,
					 rp - w->ring.req_cons,
					 __ATOMIC_RELAXED);
		xgpub_record_request(w, &req, payload_buf);
		if (held && !(req.flags & XGPUIF_RF_POSTED)) {
			push_replies(w);
			held = 0;
		}
		rc = dispatch(w, &req, &rlen);
		xgpu_prof_mark(&prof, req.id, req.op, XGPU_PROF_T1);
		xgpub_record_done(w);
		if (rc != 0 && rc != XGPUIF_ST_PROTO)
			xgpub_dbg("%s: op %u -> %d", w->t->who, req.op, rc);
		/*
		 * What the driver printed during the request is in the
		 * buffer before the reply says whether output waits (a
		 * posted request's reply is not read by a waiting thread).
		 */
		rflags = 0;
		if (!(req.flags & XGPUIF_RF_POSTED)) {
			if (xgpub_output_waiting())
				rflags |= XGPUIF_SF_OUTPUT;
			if (xgpub_logs_waiting())
				rflags |= XGPUIF_SF_LOGS;
			if (xgpub_fence_take_reply())
				rflags |= XGPUIF_SF_FENCED;
		}
		xgpuif_back_put(&w->ring, &req, rc, rflags, reply_buf,
				rc == 0 ? rlen : 0);
		last_put = req.id;
		if (!(req.flags & XGPUIF_RF_POSTED) || rc == XGPUIF_ST_PROTO ||
		    w->ring.req_cons == rp || ++held >= POSTED_PUSH_MAX) {
			push_replies(w);
			held = 0;
		}
		if (rc == XGPUIF_ST_PROTO)
			return -1;
	}
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->qdepth, 0, __ATOMIC_RELAXED);
	return 0;
}

/* ---- set-up and teardown -------------------------------------------------------- */

int xgpub_worker_setup(struct xgpub_worker *w)
{
	struct xgpub_driver *D = w->D;
	int rc, n = 0;

	/* the kinds whose release is a handler file's */
	xgpub_release_hook(XGPUB_H_GREENCTX, xgpub_green_release);
	xgpub_release_hook(XGPUB_H_VMEM, xgpub_vmm_release);
	rc = D->cuInit(0);
	if (!rc)
		rc = D->cuDeviceGetCount(&n);
	if (rc || w->opt->gpu >= n) {
		xgpub_err("%s: no host GPU %d (cuInit/cuDeviceGetCount: %d, "
			  "%d devices)", w->t->who, w->opt->gpu, rc, n);
		return -1;
	}
	rc = D->cuDeviceGet(&w->dev, w->opt->gpu);
	if (rc) {
		xgpub_err("%s: no host GPU %d: %d", w->t->who, w->opt->gpu,
			  rc);
		return -1;
	}
	return 0;
}

/*
 * The guest's CUDA context, made before its first request that is not an
 * NVML op (XGPUIF_OP_NVML_*: the guest's NVML library, whose channel then
 * costs no context and no device memory).  0, or the driver's error,
 * which that request answers (the next one tries again).
 */
static int ctx_setup(struct xgpub_worker *w)
{
	struct xgpub_driver *D = w->D;
	int rc;

	rc = D->cuDevicePrimaryCtxRetain(&w->primary, w->dev);
	if (!rc) {
		rc = D->cuCtxSetCurrent(w->primary);
		if (rc) {
			D->cuDevicePrimaryCtxRelease_v2(w->dev);
			w->primary = NULL;
		}
	}
	if (rc) {
		w->primary = NULL;
		xgpub_err("%s: cannot create a context on GPU %d: %d",
			  w->t->who, w->opt->gpu, rc);
		return rc;
	}
	w->cur = w->primary;
	w->primary_h = xgpub_handle_new(&w->h, XGPUB_H_CTX, w->primary, NULL);
	/* the primary is charged once, and always: the guest needs it */
	xgpub_ctx_charge(w, w->primary, true);
	/*
	 * Pin the data area once: staged copies then DMA straight from the
	 * pages the guest wrote, with no copy in the worker.
	 */
	if (D->cuMemHostRegister_v2(w->t->data, w->t->data_bytes,
				    CU_MEMHOSTREGISTER_PORTABLE) == 0)
		w->data_registered = true;
	else
		xgpub_info("%s: data area not pinned; copies are staged",
			   w->t->who);
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->has_ctx, 1,
				 __ATOMIC_RELEASE);
	return 0;
}

static bool nvml_op(uint16_t op)
{
	return op == XGPUIF_OP_NVML_DEVICE || op == XGPUIF_OP_NVML_STATUS;
}

/* the handle goes too, even where the driver refused: a later release
 * (a green context's, of the streams made in it) must not find it */
static void destroy_one(struct xgpub_hentry *e, void *arg)
{
	struct xgpub_worker *w = arg;

	xgpub_release(w, e);
	xgpub_handle_drop(&w->h, e);
}

/*
 * Free everything the guest left behind.  Exiting would free it too (the
 * driver reclaims a process's contexts), but doing it here lets the log
 * say what was freed, and the same path serves the Xen transport, whose
 * worker may outlive one channel.
 */
void xgpub_worker_teardown(struct xgpub_worker *w)
{
	struct xgpub_driver *D = w->D;
	uint64_t freed = w->mem_used;
	uint32_t nallocs = w->nallocs;

	/* the guest runs no more host functions: free the held streams */
	__atomic_store_n(&w->hostfn_closing, 1, __ATOMIC_RELEASE);

	if (w->primary)
		D->cuCtxSetCurrent(w->primary);
	static const int order[] = {
		XGPUB_H_NOTIFY, XGPUB_H_LOGCB, XGPUB_H_TEXREF, XGPUB_H_TEXOBJ,
		XGPUB_H_SURFOBJ, XGPUB_H_EVENT, XGPUB_H_STREAM,
		XGPUB_H_GEXEC, XGPUB_H_GRAPH, XGPUB_H_VMEM, XGPUB_H_LINK,
		XGPUB_H_LIBRARY, XGPUB_H_MODULE, XGPUB_H_BLOB, XGPUB_H_ARRAY,
		XGPUB_H_MIPMAP, XGPUB_H_POOL, XGPUB_H_GREENCTX,
	};
	/* mappings go before the memory behind them */
	xgpub_ipc_teardown(w);
	xgpub_vmm_teardown(w);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		xgpub_handle_each(&w->h, order[i], destroy_one, w);
	xgpub_uobj_teardown(w);
	for (uint32_t i = 0; i < w->nallocs; i++)
		D->cuMemFree_v2(w->allocs[i].dptr);
	for (uint32_t i = 1; i < XGPUB_MAX_REGIONS; i++) {
		struct xgpub_region *r = &w->regions[i];

		if (!r->va)
			continue;
		if (r->registered && !r->in_data)
			D->cuMemHostUnregister(r->va);
		w->t->ops->hostmem_unmap(w->t, r->va, r->size);
		r->va = NULL;
	}
	for (uint32_t i = 0; i < w->nretired; i++) {
		struct xgpub_region *r = &w->retired[i];

		if (r->registered && !r->in_data)
			D->cuMemHostUnregister(r->va);
		w->t->ops->hostmem_unmap(w->t, r->va, r->size);
	}
	free(w->retired);
	w->retired = NULL;
	w->nretired = w->cap_retired = 0;
	if (w->data_registered)
		D->cuMemHostUnregister(w->t->data);
	xgpub_handle_each(&w->h, XGPUB_H_CTX, destroy_one, w);
	xgpub_green_teardown(w);
	if (w->primary) {
		D->cuCtxSetCurrent(NULL);
		for (; w->primary_refs > 0; w->primary_refs--)
			D->cuDevicePrimaryCtxRelease_v2(w->dev);
		D->cuDevicePrimaryCtxRelease_v2(w->dev);
	}
	if (!w->primary)
		xgpub_info("%s: gone after %llu calls; it made no CUDA "
			   "context", w->t->who, (unsigned long long)w->calls);
	else
		xgpub_info("%s: gone after %llu calls; freed %u allocations "
			   "(%llu MiB) and its contexts", w->t->who,
			   (unsigned long long)w->calls, nallocs,
			   (unsigned long long)(freed >> 20));
	xgpub_account_freed(w);
	xgpub_handles_destroy(&w->h);
	free(w->allocs);
	free(w->ctxq);
	free(w->globq);
	w->ctxq = NULL;
	w->globq = NULL;
	w->nctxq = w->cap_ctxq = w->nglobq = w->cap_globq = 0;
}

/*
 * The watchdog: a guest killed while the dispatch thread is blocked in
 * the driver (a long synchronize, say) must not keep its GPU state until
 * the call returns.  Once the guest is gone, the dispatch thread has a
 * grace period to notice and tear down in order (which takes a few
 * milliseconds when nothing blocks); after it the process exits, and the
 * driver frees the context and its memory with it.  Short enough that a
 * guest killed mid-kernel has its GPU memory back within a second.
 */
#define GONE_GRACE_MS 200

static volatile int torn_down;

static void *watchdog(void *arg)
{
	struct xgpub_worker *w = arg;

	w->t->ops->wait_gone(w->t);
	for (int i = 0; i < GONE_GRACE_MS / 10 && !torn_down; i++)
		usleep(10000);
	if (torn_down)
		return NULL;
	xgpub_info("%s: gone during a blocked call after %llu calls; exiting, "
		   "the driver freed its contexts and %u allocations (%llu MiB)",
		   w->t->who, (unsigned long long)w->calls, w->nallocs,
		   (unsigned long long)(w->mem_used >> 20));
	_exit(4);
}

/* may the worker user (opt) search the folder st describes */
static bool user_may_search(const struct stat *st,
			    const struct xgpub_options *opt)
{
	if (st->st_uid == opt->worker_uid)
		return st->st_mode & S_IXUSR;
	if (st->st_gid == opt->worker_gid)
		return st->st_mode & S_IXGRP;
	for (int i = 0; i < opt->worker_ngroups; i++)
		if (st->st_gid == opt->worker_groups[i])
			return st->st_mode & S_IXGRP;
	return st->st_mode & S_IXOTH;
}


/*
 * The poll before sleeping adapts to the guest (a bounded spin that
 * costs Dom0 a core only while it pays): after the worker slept, a
 * request that came within max_us would have been caught by a longer
 * spin, so the spin grows to twice that gap (up to max_us); a gap longer
 * than max_us, or none (gap_us UINT64_MAX: the wait timed out), halves
 * it, down to SPIN_MIN_US.  A guest in a tight loop of calls keeps the
 * full spin; one that calls every few milliseconds stops paying 2 ms of
 * Dom0 CPU for each call.  max_us 0 turns spinning off.
 */
#define SPIN_MIN_US	20u

unsigned int xgpub_spin_adapt(unsigned int cur, uint64_t gap_us,
			      unsigned int max_us)
{
	uint64_t next;

	if (!max_us)
		return 0;
	if (gap_us <= max_us) {
		next = 2 * gap_us > cur ? 2 * gap_us : cur;
		return next > max_us ? max_us : (unsigned int)next;
	}
	next = cur / 2;
	if (next < SPIN_MIN_US)
		next = SPIN_MIN_US < max_us ? SPIN_MIN_US : max_us;
	return (unsigned int)next;
}

/*
 * The driver caches what it JIT-compiles in CUDA_CACHE_PATH: one folder
 * per guest (its IPC domain: a Xen domain, a local user) under base, so
 * that no guest reads or fills another's.  The guest's folder is private
 * to the user the worker runs as (--worker-user); the folders above it
 * that the worker creates may be searched, not listed (0711), and base
 * itself, if root's, is made searchable for the worker user.  Without a
 * usable folder the cache is off for this worker.
 */
static void jit_cache_setup(const struct xgpub_transport *t,
			    const struct xgpub_options *opt)
{
	const char *base = opt->jit_cache;
	mode_t upper = opt->drop_user ? 0711 : 0700;
	char path[PATH_MAX], *p;
	struct stat st;
	size_t n;

	if (!base || !strcmp(base, "none"))
		goto off;
	n = (size_t)snprintf(path, sizeof(path), "%s/", base);
	if (n >= sizeof(path) ||
	    snprintf(path + n, sizeof(path) - n, "%s",
		     t->ipc_domain[0] ? t->ipc_domain : "unknown") >=
		    (int)(sizeof(path) - n))
		goto off;
	for (p = path + n; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= '0' && *p <= '9'))
			*p = '-';
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, upper) && errno != EEXIST)
			goto off;
		if (opt->drop_user && (size_t)(p - path) == n - 1 &&
		    stat(path, &st) == 0 && st.st_uid == 0 &&
		    !user_may_search(&st, opt))
			chmod(path, (st.st_mode & 07777) | 0011);
		if (opt->drop_user &&
		    (stat(path, &st) || !user_may_search(&st, opt))) {
			xgpub_err("%s: JIT cache off: user %s may not search "
				  "%s", t->who, opt->worker_user, path);
			goto off;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		goto off;
	if (opt->drop_user &&
	    chown(path, opt->worker_uid, opt->worker_gid))
		goto off;
	setenv("CUDA_CACHE_PATH", path, 1);
	unsetenv("CUDA_CACHE_DISABLE");
	return;
off:
	setenv("CUDA_CACHE_DISABLE", "1", 1);
}

int xgpub_worker_run(struct xgpub_transport *t,
		     const struct xgpub_options *opt)
{
	unsigned int spin;	/* us to poll the ring before sleeping */
	static struct xgpub_worker wk;	/* large (regions); one per process */
	struct xgpub_worker *w = &wk;
	char msg[256];
	int code = 0;

	memset(w, 0, sizeof(*w));
	w->t = t;
	w->opt = opt;
	/* before the driver is loaded: its printf output is the guest's */
	code = xgpub_output_start(XGPUB_OUTPUT_MAX);
	if (code)
		xgpub_err("%s: device output may be lost: %s", t->who,
			  strerror(-code));
	code = 0;
	BACK_RING_INIT(&w->ring, t->sring, XGPUIF_PAGE_SIZE << t->ring_order);
	jit_cache_setup(t, opt);
	w->D = xgpub_driver_open(opt->driver_path, msg, sizeof(msg));
	if (!w->D) {
		xgpub_err("%s: %s", t->who, msg);
		t->ops->close(t);
		return 1;
	}
	if (xgpub_worker_setup(w)) {
		t->ops->close(t);
		return 1;
	}
	xgpub_record_start(w);
	xgpub_info("%s: connected (%s transport, ring %u slots, data area "
		   "%zu MiB, executor %s)", t->who, t->ops->name,
		   RING_SIZE(&w->ring), t->data_bytes >> 20, w->D->name);
	if (t->ops->wait_gone) {
		pthread_t wd;
		pthread_attr_t at;

		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&wd, &at, watchdog, w))
			xgpub_err("%s: no watchdog thread", t->who);
		pthread_attr_destroy(&at);
	}

	xgpub_gate_init(w);
	xgpu_prof_start(&prof, "worker");
	/* what needed root is open: the guest's requests are served by
	 * the worker user, under the seccomp filter */
	if (xgpub_sandbox_enter(opt, t->who)) {
		torn_down = 1;
		xgpub_gate_stop(w);
		if (t->ops->fail)
			t->ops->fail(t, "the backend could not sandbox its "
				     "worker");
		xgpub_worker_teardown(w);
		t->ops->close(t);
		return 1;
	}
	if (xgpub_self_stat) {
		__atomic_store_n(&xgpub_self_stat->quota, opt->quota,
				 __ATOMIC_RELAXED);
		memcpy(xgpub_self_stat->proc, t->proc, sizeof(t->proc));
		__atomic_store_n(&xgpub_self_stat->pid, t->pid,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&xgpub_self_stat->connected, 1,
				 __ATOMIC_RELEASE);
	}
	opt = xgpub_client_caps(w, opt);
	spin = opt->spin_us;
	for (;;) {
		uint64_t t0;
		int more;

		if (xgpub_self_stat) {
			__atomic_store_n(&xgpub_self_stat->calls, w->calls,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&xgpub_self_stat->mem_used,
					 w->mem_used, __ATOMIC_RELAXED);
			xgpub_images_publish(w);
		}
		if (xgpub_worker_serve(w)) {
			code = 2;
			break;
		}
		/* spin a little: the next request usually follows at once */
		t0 = xgpub_now_ns();
		more = 0;
		while (xgpub_now_ns() - t0 < spin * 1000ull) {
			if (__atomic_load_n(&w->ring.sring->req_prod,
					    __ATOMIC_RELAXED) !=
			    w->ring.req_cons) {
				more = 1;
				break;
			}
			xgpu_cpu_relax();
		}
		if (more)
			continue;
		RING_FINAL_CHECK_FOR_REQUESTS(&w->ring, more);
		if (more)
			continue;
		xgpub_gate_idle(w);
		if (t->ops->wait(t, 1000) == -EPIPE) {
			/* serve what the guest posted before it went */
			if (xgpub_worker_serve(w))
				code = 2;
			break;
		}
		spin = xgpub_spin_adapt(spin, __atomic_load_n(
						&w->ring.sring->req_prod,
						__ATOMIC_RELAXED) != w->ring.req_cons ?
					(xgpub_now_ns() - t0) / 1000 : UINT64_MAX,
					opt->spin_us);
	}
	/* the watchdog must not exit the process under an orderly teardown */
	torn_down = 1;
	log_op_counts(w);
	xgpub_gate_stop(w);
	xgpub_record_stop();
	xgpu_prof_stop(&prof);
	if (code == 2 && t->ops->fail)
		t->ops->fail(t, w->why[0] ? w->why : "protocol error");
	xgpub_worker_teardown(w);
	t->ops->close(t);
	return code;
}
