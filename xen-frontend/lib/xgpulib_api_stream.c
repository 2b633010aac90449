// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_stream.c: streams and events.
 *
 * A CUstream or CUevent handed to the program is a malloc'ed struct with
 * its magic (xgpulib.h); the backend object is named by `remote`.  Their
 * properties (flags, priority, context) never change, so the queries are
 * answered here.  Record, wait and destroy are posted: CUDA treats them as
 * asynchronous, and their errors come back at the next synchronous call.
 *
 * The special streams: NULL is the legacy default stream, or the
 * per-thread default stream in the _ptsz entry points (which cudart uses
 * when built for per-thread default streams); CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD name them explicitly.  They travel as the wire
 * constants 0/1/2.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"

/*
 * Wire value for a stream that is not one of ours: no table handle has
 * index 0xffffffff (the tables stop far below), so the worker refuses it
 * with CUDA_ERROR_INVALID_HANDLE.
 */
#define BAD_REMOTE	(~(uint64_t)0)

/* stream ids of the special streams; table handles are >= 1 << 32 */
#define LEGACY_STREAM_ID 1u
static uint64_t next_ptds_id = 16;
static __thread uint64_t tls_ptds_id;

static inline bool special_stream(CUstream s)
{
	return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

uint64_t xgpulib_stream_remote(CUstream s, int ptds)
{
	if (!s)
		return ptds ? XGPUIF_STREAM_PER_THREAD : 0;
	if (s == CU_STREAM_LEGACY)
		return XGPUIF_STREAM_LEGACY;
	if (s == CU_STREAM_PER_THREAD)
		return XGPUIF_STREAM_PER_THREAD;
	if (s->magic != XGPULIB_STREAM_MAGIC)
		return BAD_REMOTE;
	return s->remote;
}

/* NULL unless s is a stream this library created (not a special one) */
static struct CUstream_st *stream_check(CUstream s)
{
	if (special_stream(s) || s->magic != XGPULIB_STREAM_MAGIC)
		return NULL;
	return s;
}

static struct CUevent_st *event_check(CUevent e)
{
	if (!e || e->magic != XGPULIB_EVENT_MAGIC)
		return NULL;
	return e;
}

/* validate a stream argument and find its wire handle */
static CUresult stream_arg(CUstream s, int ptds, uint64_t *remote)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!special_stream(s) && !stream_check(s))
		return CUDA_ERROR_INVALID_HANDLE;
	*remote = xgpulib_stream_remote(s, ptds);
	return CUDA_SUCCESS;
}

/* the current context, for objects created in it */
static CUresult need_ctx(CUcontext *out)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	*out = xgpulib_current();
	if (!*out)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!xgpulib_ctx_check(*out))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	return CUDA_SUCCESS;
}

/* ---- streams ------------------------------------------------------------- */

static CUresult stream_create(CUstream *ph, unsigned int flags, int priority)
{
	struct xgpuif_stream_create_args a = { flags, priority };
	struct xgpuif_stream_reply r = { 0 };
	struct CUstream_st *s;
	CUcontext ctx;
	CUresult rc;

	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	rc = need_ctx(&ctx);
	if (rc)
		return rc;
	if (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	/* CUDA clamps priorities to the context's range; do the same so
	 * that cuStreamGetPriority answers what the driver uses */
	if (priority != 0) {
		int least = 0, greatest = 0;

		rc = cuCtxGetStreamPriorityRange(&least, &greatest);
		if (rc)
			return rc;
		if (priority > least)
			priority = least;
		if (priority < greatest)
			priority = greatest;
		a.priority = priority;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_STREAM_CREATE(&a, &r);
	if (rc == CUDA_SUCCESS && r.stream <= 2)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc) {
		free(s);
		return rc;
	}
	s->flags = flags;
	s->priority = priority;
	s->ctx = ctx;
	s->remote = r.stream;
	s->magic = XGPULIB_STREAM_MAGIC;
	*ph = s;
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return stream_create(phStream, Flags, 0);
}

XGPULIB_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream,
						   unsigned int flags,
						   int priority)
{
	return stream_create(phStream, flags, priority);
}

XGPULIB_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
	struct xgpuif_handle_args a;
	struct CUstream_st *s;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	s = stream_check(hStream);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	a.handle = s->remote;
	/* pending work completes first in the driver; we need not wait */
	rc = xgpulib_post_STREAM_DESTROY(&a);
	if (rc)
		return rc;
	s->magic = 0;
	free(s);
	return CUDA_SUCCESS;
}

CUresult xgpulib_stream_sync(CUstream s, int ptds)
{
	struct xgpuif_handle_args a;
	CUresult rc = stream_arg(s, ptds, &a.handle);

	if (rc)
		return rc;
	return xgpulib_call_STREAM_SYNCHRONIZE(&a);
}

CUresult xgpulib_stream_query(CUstream s, int ptds)
{
	struct xgpuif_handle_args a;
	CUresult rc = stream_arg(s, ptds, &a.handle);

	if (rc)
		return rc;
	return xgpulib_call_STREAM_QUERY(&a);
}

CUresult xgpulib_stream_wait_event(CUstream s, CUevent e, unsigned int flags,
				   int ptds)
{
	struct xgpuif_stream_wait_args a;
	struct CUevent_st *ev;
	CUresult rc;

	memset(&a, 0, sizeof(a));
	rc = stream_arg(s, ptds, &a.stream);
	if (rc)
		return rc;
	ev = event_check(e);
	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	a.event = ev->remote;
	a.flags = flags;
	return xgpulib_post_STREAM_WAIT_EVENT(&a);
}

/* ---- stream queries, answered locally ------------------------------------ */

/*
 * The stream's struct, or NULL for a special stream; *rc says whether the
 * handle is acceptable at all.
 */
static struct CUstream_st *stream_local(CUstream s, CUresult *rc)
{
	*rc = xgpulib_check_init();
	if (*rc || special_stream(s))
		return NULL;
	if (s->magic != XGPULIB_STREAM_MAGIC) {
		*rc = CUDA_ERROR_INVALID_HANDLE;
		return NULL;
	}
	return s;
}

CUresult xgpulib_stream_priority(CUstream hs, int *priority, int ptds)
{
	struct CUstream_st *s;
	CUresult rc;

	(void)ptds;
	if (!priority)
		return CUDA_ERROR_INVALID_VALUE;
	s = stream_local(hs, &rc);
	if (rc)
		return rc;
	*priority = s ? s->priority : 0;
	return CUDA_SUCCESS;
}

CUresult xgpulib_stream_flags(CUstream hs, unsigned int *flags, int ptds)
{
	struct CUstream_st *s;
	CUresult rc;

	(void)ptds;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	s = stream_local(hs, &rc);
	if (rc)
		return rc;
	*flags = s ? s->flags : CU_STREAM_DEFAULT;
	return CUDA_SUCCESS;
}

/* a special stream belongs to the calling thread's current context */
static CUresult stream_ctx(CUstream hs, CUcontext *pctx)
{
	struct CUstream_st *s;
	CUresult rc;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	s = stream_local(hs, &rc);
	if (rc)
		return rc;
	if (s) {
		*pctx = s->ctx;
		return CUDA_SUCCESS;
	}
	return need_ctx(pctx);
}

CUresult xgpulib_stream_ctx(CUstream hs, CUcontext *pctx, int ptds)
{
	(void)ptds;
	return stream_ctx(hs, pctx);
}

/* no green contexts here: pGreenCtx is always NULL */
CUresult xgpulib_stream_ctx_v2(CUstream hStream, CUcontext *pCtx,
			       CUgreenCtx *pGreenCtx, int ptds)
{
	(void)ptds;
	CUresult rc;

	if (!pCtx || !pGreenCtx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = stream_ctx(hStream, pCtx);
	if (rc == CUDA_SUCCESS)
		*pGreenCtx = NULL;
	return rc;
}

/*
 * Stream ids: a created stream's wire handle is unique for the process's
 * life (its generation changes when the slot is reused).
 */
CUresult xgpulib_stream_id(CUstream hs, unsigned long long *id, int ptds)
{
	struct CUstream_st *s;
	CUresult rc;

	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	s = stream_local(hs, &rc);
	if (rc)
		return rc;
	if (s) {
		*id = s->remote;
	} else if (hs == CU_STREAM_PER_THREAD || (!hs && ptds)) {
		if (!tls_ptds_id)
			tls_ptds_id = __atomic_fetch_add(&next_ptds_id, 1,
							 __ATOMIC_RELAXED);
		*id = tls_ptds_id;
	} else {
		*id = LEGACY_STREAM_ID;
	}
	return CUDA_SUCCESS;
}

CUresult xgpulib_stream_device(CUstream hs, CUdevice *device, int ptds)
{
	struct CUctx_st *c;
	CUcontext ctx;
	CUresult rc;

	(void)ptds;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	rc = stream_ctx(hs, &ctx);
	if (rc)
		return rc;
	c = xgpulib_ctx_check(ctx);
	if (!c)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*device = c->dev;
	return CUDA_SUCCESS;
}

/*
 * Stream capture is not forwarded (no graph support), so no stream is
 * ever capturing.  Only the status is written: CUDA defines the other
 * outputs only for an active capture.
 */
static CUresult capture_status(CUstream hs, CUstreamCaptureStatus *st)
{
	CUresult rc;

	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	(void)stream_local(hs, &rc);
	if (rc)
		return rc;
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult xgpulib_stream_is_capturing(CUstream hs, CUstreamCaptureStatus *st,
				     int ptds)
{
	(void)ptds;
	return capture_status(hs, st);
}

CUresult xgpulib_capture_info(CUstream hStream,
			      CUstreamCaptureStatus *captureStatus_out,
			      cuuint64_t *id_out, int ptds)
{
	(void)id_out;
	(void)ptds;
	return capture_status(hStream, captureStatus_out);
}

CUresult xgpulib_capture_info_v2(CUstream hStream,
				 CUstreamCaptureStatus *captureStatus_out,
				 cuuint64_t *id_out, CUgraph *graph_out,
				 const CUgraphNode **dependencies_out,
				 size_t *numDependencies_out, int ptds)
{
	(void)id_out;
	(void)graph_out;
	(void)dependencies_out;
	(void)numDependencies_out;
	(void)ptds;
	return capture_status(hStream, captureStatus_out);
}

CUresult xgpulib_capture_info_v3(CUstream hStream,
				 CUstreamCaptureStatus *captureStatus_out,
				 cuuint64_t *id_out, CUgraph *graph_out,
				 const CUgraphNode **dependencies_out,
				 const CUgraphEdgeData **edgeData_out,
				 size_t *numDependencies_out, int ptds)
{
	(void)ptds;
	(void)id_out;
	(void)graph_out;
	(void)numDependencies_out;
	if (edgeData_out && !dependencies_out)
		return CUDA_ERROR_INVALID_VALUE;
	return capture_status(hStream, captureStatus_out);
}

/* ---- events -------------------------------------------------------------- */

#define EVENT_FLAGS_KNOWN                                                   \
	((unsigned int)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |  \
			CU_EVENT_INTERPROCESS))

XGPULIB_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct xgpuif_u32_args a = { Flags, 0 };
	struct xgpuif_event_reply r = { 0 };
	struct CUevent_st *e;
	CUcontext ctx;
	CUresult rc;

	if (!phEvent)
		return CUDA_ERROR_INVALID_VALUE;
	rc = need_ctx(&ctx);
	if (rc)
		return rc;
	if (Flags & ~EVENT_FLAGS_KNOWN)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_EVENT_CREATE(&a, &r);
	if (rc == CUDA_SUCCESS && !r.event)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc) {
		free(e);
		return rc;
	}
	e->flags = Flags;
	e->ctx = ctx;
	e->remote = r.event;
	e->magic = XGPULIB_EVENT_MAGIC;
	*phEvent = e;
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent he, CUstream hs, unsigned int flags,
			     int with_flags, int ptds)
{
	struct xgpuif_event_record_args a;
	struct CUevent_st *e;
	CUresult rc;

	memset(&a, 0, sizeof(a));
	rc = stream_arg(hs, ptds, &a.stream);
	if (rc)
		return rc;
	e = event_check(he);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	a.event = e->remote;
	a.flags = flags;
	a.with_flags = (uint32_t)with_flags;
	return xgpulib_post_EVENT_RECORD(&a);
}

CUresult xgpulib_event_record(CUevent hEvent, CUstream hStream, int ptds)
{
	return event_record(hEvent, hStream, 0, 0, ptds);
}

CUresult xgpulib_event_record_with_flags(CUevent hEvent, CUstream hStream,
					 unsigned int flags, int ptds)
{
	return event_record(hEvent, hStream, flags, 1, ptds);
}

/* the wire handle of an event argument */
static CUresult event_arg(CUevent he, struct xgpuif_handle_args *a)
{
	struct CUevent_st *e;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	e = event_check(he);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	a->handle = e->remote;
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
	struct xgpuif_handle_args a;
	CUresult rc = event_arg(hEvent, &a);

	return rc ? rc : xgpulib_call_EVENT_QUERY(&a);
}

XGPULIB_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
	struct xgpuif_handle_args a;
	CUresult rc = event_arg(hEvent, &a);

	return rc ? rc : xgpulib_call_EVENT_SYNCHRONIZE(&a);
}

XGPULIB_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
	struct xgpuif_handle_args a;
	CUresult rc = event_arg(hEvent, &a);

	if (!rc)
		rc = xgpulib_post_EVENT_DESTROY(&a);
	if (rc)
		return rc;
	hEvent->magic = 0;
	free(hEvent);
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds,
					      CUevent hStart, CUevent hEnd)
{
	struct xgpuif_elapsed_args a;
	struct xgpuif_elapsed_reply r = { 0, 0 };
	struct CUevent_st *s, *e;
	CUresult rc;

	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	s = event_check(hStart);
	e = event_check(hEnd);
	if (!s || !e)
		return CUDA_ERROR_INVALID_HANDLE;
	a.start = s->remote;
	a.end = e->remote;
	rc = xgpulib_call_EVENT_ELAPSED_TIME(&a, &r);
	if (rc == CUDA_SUCCESS)
		*pMilliseconds = r.ms;
	return rc;
}
