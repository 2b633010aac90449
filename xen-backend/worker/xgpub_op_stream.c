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

#define ARGS(type, name)                                                       \
	struct type name;                                                      \
	memcpy(&name, payload, sizeof(name))

#define REPLY(type, val)                                                       \
	do {                                                                   \
		memcpy(out, &(val), sizeof(struct type));                      \
		*rlen = sizeof(struct type);                                   \
	} while (0)

struct owner {
	CUcontext ctx;
};

static struct owner *owner_new(CUcontext ctx)
{
	struct owner *o = malloc(sizeof(*o));

	if (o)
		o->ctx = ctx;
	return o;
}

/* the handle that names table entry e */
static xgpuif_handle_t entry_handle(struct xgpub_handles *t,
				    const struct xgpub_hentry *e)
{
	uint32_t idx = (uint32_t)(e - t->e);

	return ((xgpuif_handle_t)e->gen << 32) | (idx + 1);
}

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
	if (type == XGPUB_H_EVENT && D->cuEventDestroy_v2)
		D->cuEventDestroy_v2(e->obj);
	else if (type == XGPUB_H_STREAM && D->cuStreamDestroy_v2)
		D->cuStreamDestroy_v2(e->obj);
	/* freeing marks the entry free; the walk over the table goes on */
	xgpub_handle_free(&d->w->h, entry_handle(&d->w->h, e), type);
}

void xgpub_ctx_drop_streams(struct xgpub_worker *w, CUcontext c)
{
	struct drop_arg d = { w, c };

	/* events first: one may still be recorded on a stream */
	xgpub_handle_each(&w->h, XGPUB_H_EVENT, drop_one, &d);
	xgpub_handle_each(&w->h, XGPUB_H_STREAM, drop_one, &d);
}

/* ---- streams ------------------------------------------------------------- */

int xgpub_op_STREAM_CREATE(struct xgpub_worker *w,
			   const struct xgpuif_request *req,
			   const void *payload, uint32_t len, void *out,
			   uint32_t *rlen)
{
	ARGS(xgpuif_stream_create_args, a);
	struct xgpuif_stream_reply r;
	struct owner *o;
	CUstream s = NULL;
	int rc;

	(void)req;
	(void)len;
	*rlen = 0;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuStreamDestroy_v2);
	if (a.priority == 0 && w->D->cuStreamCreate) {
		rc = w->D->cuStreamCreate(&s, a.flags);
	} else {
		XGPUB_NOT_SUPPORTED_IF_NULL(w, cuStreamCreateWithPriority);
		rc = w->D->cuStreamCreateWithPriority(&s, a.flags, a.priority);
	}
	if (rc)
		return rc;
	o = owner_new(w->cur);
	r.stream = o ? xgpub_handle_new(&w->h, XGPUB_H_STREAM, s, o) : 0;
	if (!r.stream) {
		free(o);
		w->D->cuStreamDestroy_v2(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	REPLY(xgpuif_stream_reply, r);
	return 0;
}

int xgpub_op_STREAM_DESTROY(struct xgpub_worker *w,
			    const struct xgpuif_request *req,
			    const void *payload, uint32_t len, void *out,
			    uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	struct xgpub_hentry *e;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_STREAM);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuStreamDestroy_v2);
	rc = w->D->cuStreamDestroy_v2(e->obj);
	/* a stream the driver would not destroy stays for the teardown */
	if (rc == CUDA_SUCCESS)
		xgpub_handle_free(&w->h, a.handle, XGPUB_H_STREAM);
	return rc;
}

int xgpub_op_STREAM_SYNCHRONIZE(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	CUstream s;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (xgpub_stream(w, a.handle, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuStreamSynchronize);
	return w->D->cuStreamSynchronize(s);
}

int xgpub_op_STREAM_QUERY(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const void *payload, uint32_t len, void *out,
			  uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	CUstream s;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (xgpub_stream(w, a.handle, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuStreamQuery);
	return w->D->cuStreamQuery(s);
}

int xgpub_op_STREAM_WAIT_EVENT(struct xgpub_worker *w,
			       const struct xgpuif_request *req,
			       const void *payload, uint32_t len, void *out,
			       uint32_t *rlen)
{
	ARGS(xgpuif_stream_wait_args, a);
	struct xgpub_hentry *e;
	CUstream s;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	e = xgpub_handle_get(&w->h, a.event, XGPUB_H_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuStreamWaitEvent);
	return w->D->cuStreamWaitEvent(s, e->obj, a.flags);
}

/* ---- events -------------------------------------------------------------- */

int xgpub_op_EVENT_CREATE(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const void *payload, uint32_t len, void *out,
			  uint32_t *rlen)
{
	ARGS(xgpuif_u32_args, a);
	struct xgpuif_event_reply r;
	struct owner *o;
	CUevent ev = NULL;
	int rc;

	(void)req;
	(void)len;
	*rlen = 0;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventCreate);
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventDestroy_v2);
	rc = w->D->cuEventCreate(&ev, a.value);
	if (rc)
		return rc;
	o = owner_new(w->cur);
	r.event = o ? xgpub_handle_new(&w->h, XGPUB_H_EVENT, ev, o) : 0;
	if (!r.event) {
		free(o);
		w->D->cuEventDestroy_v2(ev);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	REPLY(xgpuif_event_reply, r);
	return 0;
}

int xgpub_op_EVENT_RECORD(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const void *payload, uint32_t len, void *out,
			  uint32_t *rlen)
{
	ARGS(xgpuif_event_record_args, a);
	struct xgpub_hentry *e;
	CUstream s;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	e = xgpub_handle_get(&w->h, a.event, XGPUB_H_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a.with_flags) {
		XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventRecordWithFlags);
		return w->D->cuEventRecordWithFlags(e->obj, s, a.flags);
	}
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventRecord);
	return w->D->cuEventRecord(e->obj, s);
}

int xgpub_op_EVENT_QUERY(struct xgpub_worker *w,
			 const struct xgpuif_request *req, const void *payload,
			 uint32_t len, void *out, uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	struct xgpub_hentry *e;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventQuery);
	return w->D->cuEventQuery(e->obj);
}

int xgpub_op_EVENT_SYNCHRONIZE(struct xgpub_worker *w,
			       const struct xgpuif_request *req,
			       const void *payload, uint32_t len, void *out,
			       uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	struct xgpub_hentry *e;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventSynchronize);
	return w->D->cuEventSynchronize(e->obj);
}

int xgpub_op_EVENT_DESTROY(struct xgpub_worker *w,
			   const struct xgpuif_request *req,
			   const void *payload, uint32_t len, void *out,
			   uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	struct xgpub_hentry *e;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventDestroy_v2);
	rc = w->D->cuEventDestroy_v2(e->obj);
	if (rc == CUDA_SUCCESS)
		xgpub_handle_free(&w->h, a.handle, XGPUB_H_EVENT);
	return rc;
}

int xgpub_op_EVENT_ELAPSED_TIME(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	ARGS(xgpuif_elapsed_args, a);
	struct xgpuif_elapsed_reply r;
	struct xgpub_hentry *s, *e;
	float ms = 0;
	int rc;

	(void)req;
	(void)len;
	*rlen = 0;
	s = xgpub_handle_get(&w->h, a.start, XGPUB_H_EVENT);
	e = xgpub_handle_get(&w->h, a.end, XGPUB_H_EVENT);
	if (!s || !e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuEventElapsedTime_v2);
	rc = w->D->cuEventElapsedTime_v2(&ms, s->obj, e->obj);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	r.ms = ms;
	REPLY(xgpuif_elapsed_reply, r);
	return 0;
}
