// SPDX-License-Identifier: MIT
/*
 * xgpub_op_stream.c: streams and events.
 *
 * Each stream and event handle records the context it was created in (its
 * `extra`), so that destroying a context can take its streams and events
 * with it (xgpub_ctx_drop_streams) instead of leaving handles to driver
 * objects that no longer exist.
 *
 * Stream arguments go through xgpub_stream(): 0, 1 and 2 are the special
 * streams, anything else must be a live stream handle of this guest.
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
	struct xgpub_driver *D = d->w->D;
	const struct owner *o = e->extra;
	int type = e->type;

	if (!o || o->ctx != d->ctx)
		return;
	if (type == XGPUB_H_EVENT)
		D->cuEventDestroy_v2(e->obj);
	else
		D->cuStreamDestroy_v2(e->obj);
	/* freeing marks the entry free; the walk over the table goes on */
	xgpub_handle_free(&d->w->h, xgpub_handle_of(&d->w->h, e), type);
}

void xgpub_ctx_drop_streams(struct xgpub_worker *w, CUcontext c)
{
	struct drop_arg d = { w, c };

	/* events first: one may still be recorded on a stream */
	xgpub_handle_each(&w->h, XGPUB_H_EVENT, drop_one, &d);
	xgpub_handle_each(&w->h, XGPUB_H_STREAM, drop_one, &d);
}

/*
 * A handle for a new stream or event of the current context; without
 * one, the driver object is destroyed and 0 returned.
 */
static xgpuif_handle_t owned_handle(struct xgpub_worker *w, int type,
				    void *obj)
{
	struct owner *o = malloc(sizeof(*o));
	xgpuif_handle_t h = 0;

	if (o) {
		o->ctx = w->cur;
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

/* the driver object of a live event handle of this guest */
static int event_of(struct xgpub_worker *w, xgpuif_handle_t h, CUevent *ev)
{
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, h, XGPUB_H_EVENT);

	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	*ev = e->obj;
	return CUDA_SUCCESS;
}

/* ---- streams ------------------------------------------------------------- */

int xgpub_h_STREAM_CREATE(struct xgpub_worker *w,
			  const struct xgpuif_stream_create_args *a,
			  struct xgpuif_stream_reply *r)
{
	CUstream s = NULL;
	int rc;

	rc = w->D->cuStreamCreateWithPriority(&s, a->flags, a->priority);
	if (rc)
		return rc;
	r->stream = owned_handle(w, XGPUB_H_STREAM, s);
	return r->stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

int xgpub_h_STREAM_DESTROY(struct xgpub_worker *w,
			   const struct xgpuif_handle_args *a)
{
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, a->handle,
						  XGPUB_H_STREAM);
	int rc;

	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuStreamDestroy_v2(e->obj);
	/* a stream the driver would not destroy stays for the teardown */
	if (rc == CUDA_SUCCESS)
		xgpub_handle_free(&w->h, a->handle, XGPUB_H_STREAM);
	return rc;
}

int xgpub_h_STREAM_SYNCHRONIZE(struct xgpub_worker *w,
			       const struct xgpuif_handle_args *a)
{
	CUstream s;

	if (xgpub_stream(w, a->handle, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	return w->D->cuStreamSynchronize(s);
}

int xgpub_h_STREAM_QUERY(struct xgpub_worker *w,
			 const struct xgpuif_handle_args *a)
{
	CUstream s;

	if (xgpub_stream(w, a->handle, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	return w->D->cuStreamQuery(s);
}

int xgpub_h_STREAM_WAIT_EVENT(struct xgpub_worker *w,
			      const struct xgpuif_stream_wait_args *a)
{
	CUstream s;
	CUevent ev;

	if (xgpub_stream(w, a->stream, &s) || event_of(w, a->event, &ev))
		return CUDA_ERROR_INVALID_HANDLE;
	return w->D->cuStreamWaitEvent(s, ev, a->flags);
}

/* ---- events -------------------------------------------------------------- */

int xgpub_h_EVENT_CREATE(struct xgpub_worker *w,
			 const struct xgpuif_u32_args *a,
			 struct xgpuif_event_reply *r)
{
	CUevent ev = NULL;
	int rc;

	rc = w->D->cuEventCreate(&ev, a->value);
	if (rc)
		return rc;
	r->event = owned_handle(w, XGPUB_H_EVENT, ev);
	return r->event ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

int xgpub_h_EVENT_RECORD(struct xgpub_worker *w,
			 const struct xgpuif_event_record_args *a)
{
	CUstream s;
	CUevent ev;

	if (event_of(w, a->event, &ev) || xgpub_stream(w, a->stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->with_flags) {
		return w->D->cuEventRecordWithFlags(ev, s, a->flags);
	}
	return w->D->cuEventRecord(ev, s);
}

int xgpub_h_EVENT_QUERY(struct xgpub_worker *w,
			const struct xgpuif_handle_args *a)
{
	CUevent ev;

	if (event_of(w, a->handle, &ev))
		return CUDA_ERROR_INVALID_HANDLE;
	return w->D->cuEventQuery(ev);
}

int xgpub_h_EVENT_SYNCHRONIZE(struct xgpub_worker *w,
			      const struct xgpuif_handle_args *a)
{
	CUevent ev;

	if (event_of(w, a->handle, &ev))
		return CUDA_ERROR_INVALID_HANDLE;
	return w->D->cuEventSynchronize(ev);
}

int xgpub_h_EVENT_DESTROY(struct xgpub_worker *w,
			  const struct xgpuif_handle_args *a)
{
	CUevent ev;
	int rc;

	if (event_of(w, a->handle, &ev))
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuEventDestroy_v2(ev);
	if (rc == CUDA_SUCCESS)
		xgpub_handle_free(&w->h, a->handle, XGPUB_H_EVENT);
	return rc;
}

int xgpub_h_EVENT_ELAPSED_TIME(struct xgpub_worker *w,
			       const struct xgpuif_elapsed_args *a,
			       struct xgpuif_elapsed_reply *r)
{
	CUevent s, e;
	float ms = 0;
	int rc;

	if (event_of(w, a->start, &s) || event_of(w, a->end, &e))
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuEventElapsedTime_v2(&ms, s, e);
	r->ms = ms;
	return rc;
}
