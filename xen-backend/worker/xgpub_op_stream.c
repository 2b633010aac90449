// SPDX-License-Identifier: MIT
/*
 * xgpub_op_stream.c: streams and events.
 *
 * Each stream and event handle records the context it was created in (its
 * `extra`), so that destroying a context can take its streams and events
 * with it (xgpub_ctx_drop_streams) instead of leaving handles to driver
 * objects that no longer exist.
 *
 * The dispatcher resolves the handles these take (xgpu_calls.def): a
 * stream argument may also be one of the special streams 0, 1 and 2.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

struct owner {
	CUcontext ctx;
};

struct drop_arg {
	struct xgpub_worker *w;
	CUcontext ctx;
};

static void drop_one(struct xgpub_hentry *e, void *arg)
{
	struct drop_arg *d = arg;
	const struct owner *o = e->extra;

	if (!o || o->ctx != d->ctx)
		return;
	xgpub_release(d->w, e);
	/* freeing marks the entry free; the walk over the table goes on */
	xgpub_handle_drop(&d->w->h, e);
}

void xgpub_ctx_drop_streams(struct xgpub_worker *w, CUcontext c)
{
	struct drop_arg d = { w, c };

	/* events first: one may still be recorded on a stream */
	xgpub_handle_each(&w->h, XGPUB_H_EVENT, drop_one, &d);
	xgpub_handle_each(&w->h, XGPUB_H_STREAM, drop_one, &d);
}

/* the first of a context's streams with work left (or an error) */
struct query_arg {
	struct xgpub_worker *w;
	CUcontext ctx;
	int rc;
};

static void query_one(struct xgpub_hentry *e, void *arg)
{
	struct query_arg *q = arg;
	const struct owner *o = e->extra;

	/* (a stream of no known context is asked too) */
	if (q->rc != CUDA_SUCCESS || (o && o->ctx != q->ctx) ||
	    xgpub_capturing(q->w, e->obj))
		return;
	q->rc = q->w->D->cuStreamQuery(e->obj);
}

int xgpub_ctx_streams_query(struct xgpub_worker *w, CUcontext c)
{
	struct query_arg q = { w, c, CUDA_SUCCESS };

	xgpub_handle_each(&w->h, XGPUB_H_STREAM, query_one, &q);
	return q.rc;
}

/* an event of context d->ctx becomes the primary's */
static void reown_one(struct xgpub_hentry *e, void *arg)
{
	struct drop_arg *d = arg;
	struct owner *o = e->extra;

	if (o && o->ctx == d->ctx)
		o->ctx = d->w->primary;
}

void xgpub_ctx_green_gone(struct xgpub_worker *w, CUcontext c)
{
	struct drop_arg d = { w, c };

	xgpub_handle_each(&w->h, XGPUB_H_STREAM, drop_one, &d);
	xgpub_handle_each(&w->h, XGPUB_H_EVENT, reown_one, &d);
}

xgpuif_handle_t xgpub_owned_handle(struct xgpub_worker *w, int type,
				   void *obj, CUcontext ctx)
{
	struct owner *o = malloc(sizeof(*o));
	xgpuif_handle_t h = 0;

	if (o) {
		o->ctx = ctx;
		h = xgpub_handle_new(&w->h, type, obj, o);
	}
	if (h)
		return h;
	free(o);
	if (type == XGPUB_H_STREAM)
		w->D->cuStreamDestroy_v2(obj);
	else
		w->D->cuEventDestroy_v2(obj);
	return 0;
}

/* the driver made obj (rc 0) for the current context: its handle in
 * *out, or the driver's error, or CUDA_ERROR_OUT_OF_MEMORY */
static int owned(struct xgpub_worker *w, int rc, int type, void *obj,
		 xgpuif_handle_t *out)
{
	if (rc)
		return rc;
	*out = xgpub_owned_handle(w, type, obj, w->cur);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- streams ------------------------------------------------------------- */

XGPUB_HANDLER(STREAM_CREATE)
{
	CUstream s = NULL;
	int rc;

	rc = w->D->cuStreamCreateWithPriority(&s, a->flags, a->priority);
	return owned(w, rc, XGPUB_H_STREAM, s, &r->stream);
}

XGPUB_HANDLER(STREAM_SYNCHRONIZE)
{
	int rc;

	xgpub_gate_wait(w, true);
	rc = w->D->cuStreamSynchronize(handle);
	xgpub_gate_wait(w, false);
	return rc;
}

XGPUB_HANDLER(STREAM_QUERY)
{
	int rc = w->D->cuStreamQuery(handle);

	if (rc == CUDA_ERROR_NOT_READY)
		xgpub_gate_not_ready(w);
	return rc;
}

XGPUB_HANDLER(STREAM_WAIT_EVENT)
{
	int rc = w->D->cuStreamWaitEvent(stream, event->obj, a->flags);

	if (!rc && w->nwait_events)
		xgpub_note_event_wait(w, stream, event->obj);
	return rc;
}

/* ---- events -------------------------------------------------------------- */

XGPUB_HANDLER(EVENT_CREATE)
{
	CUevent ev = NULL;
	int rc;

	rc = w->D->cuEventCreate(&ev, a->value);
	return owned(w, rc, XGPUB_H_EVENT, ev, &r->event);
}

XGPUB_HANDLER(EVENT_RECORD)
{
	int rc;

	if (a->with_flags)
		rc = w->D->cuEventRecordWithFlags(event->obj, stream,
						  a->flags);
	else
		rc = w->D->cuEventRecord(event->obj, stream);
	if (!rc && (w->nwaiting || w->nwait_events))
		xgpub_note_event_record(w, event->obj, stream);
	return rc;
}

XGPUB_HANDLER(EVENT_QUERY)
{
	int rc = w->D->cuEventQuery(handle->obj);

	if (rc == CUDA_ERROR_NOT_READY)
		xgpub_gate_not_ready(w);
	return rc;
}

XGPUB_HANDLER(EVENT_SYNCHRONIZE)
{
	int rc;

	xgpub_gate_wait(w, true);
	rc = w->D->cuEventSynchronize(handle->obj);
	xgpub_gate_wait(w, false);
	return rc;
}

XGPUB_HANDLER(EVENT_ELAPSED_TIME)
{
	float ms = 0;
	int rc = w->D->cuEventElapsedTime_v2(&ms, start->obj, end->obj);

	r->ms = ms;
	return rc;
}

/* ---- stream memory operations and attributes --------------------------- */

int xgpub_memops_in(struct xgpub_worker *w, CUstreamBatchMemOpParams *ops,
		    uint32_t count, const uint8_t *p, uint32_t len, bool *waits)
{
	if (!count || count > XGPUIF_MAX_MEMOPS ||
	    len != (uint64_t)count * XGPUIF_MEMOP_SIZE)
		return XGPUIF_ST_PROTO;
	memcpy(ops, p, len);
	*waits = false;
	for (uint32_t i = 0; i < count; i++) {
		int op = ops[i].operation, rc = 0;
		bool wide = op == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
			    op == CU_STREAM_MEM_OP_WRITE_VALUE_64;

		/* the driver's own field: whatever the guest put there; the
		 * address: device memory of the guest's (xgpub_ranges.c) */
		if (op == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
		    op == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
			ops[i].waitValue.alias = 0;
			rc = xgpub_dev_span_ok(w, ops[i].waitValue.address,
					       wide ? 8 : 4);
			*waits = true;
		} else if (op == CU_STREAM_MEM_OP_WRITE_VALUE_32 ||
			   op == CU_STREAM_MEM_OP_WRITE_VALUE_64) {
			ops[i].writeValue.alias = 0;
			rc = xgpub_dev_span_ok(w, ops[i].writeValue.address,
					       wide ? 8 : 4);
		}
		if (rc)
			return rc;
	}
	return 0;
}

XGPUB_HANDLER(STREAM_MEMOP)
{
	static CUstreamBatchMemOpParams ops[XGPUIF_MAX_MEMOPS];
	bool waits;
	int rc = xgpub_memops_in(w, ops, a->count, tail->p, tail->len, &waits);

	if (rc)
		return rc;
	if (waits)
		xgpub_note_value_wait(w, stream);
	return w->D->cuStreamBatchMemOp_v2(stream, a->count, ops, a->flags);
}

XGPUB_HANDLER(STREAM_ATTR)
{
	CUstreamAttrValue v;
	int rc;

	if (a->set > 1)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, a->value, sizeof(v));
	if (a->set)
		return w->D->cuStreamSetAttribute(stream, (CUstreamAttrID)a->attr,
						  &v);
	memset(&v, 0, sizeof(v));
	rc = w->D->cuStreamGetAttribute(stream, (CUstreamAttrID)a->attr, &v);
	if (rc == 0)
		memcpy(r->value, &v, sizeof(v));
	return rc;
}

/* ---- IPC events (the memory ones: xgpub_op_ipc.c) ------------------------ */

XGPUB_HANDLER(IPC_GET_EVENT)
{
	CUipcEventHandle real;
	int rc = w->D->cuIpcGetEventHandle(&real, handle->obj);

	return rc ? rc : xgpub_ipc_give(w, XGPUB_IPC_EVENT, real.reserved, r);
}

XGPUB_HANDLER(IPC_OPEN_EVENT)
{
	CUipcEventHandle real;
	CUevent ev = NULL;
	int rc = xgpub_ipc_take(w, XGPUB_IPC_EVENT, a, real.reserved);

	if (rc)
		return rc;
	rc = w->D->cuIpcOpenEventHandle(&ev, real);
	return owned(w, rc, XGPUB_H_EVENT, ev, &r->event);
}
