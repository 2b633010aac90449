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

#include "xgpulib.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"
#include "xgpulib_shadow.h"

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

/* the stub of a request that names one stream or event and nothing else */
typedef CUresult (*handle_call_fn)(const struct xgpuif_handle_args *a);

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

/*
 * The checks of a call about a stream, in the driver's order: its outputs
 * given (out_ok), cuInit ran, the handle acceptable.  *ps is the stream's
 * struct, NULL for a special stream.
 */
static CUresult stream_lookup(CUstream s, bool out_ok, struct CUstream_st **ps)
{
	CUresult rc = xgpulib_query_arg(out_ok);

	if (rc)
		return rc;
	*ps = stream_check(s);
	if (!*ps && !special_stream(s))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

/* validate a stream argument and find its wire handle */
CUresult xgpulib_stream_out_arg(CUstream s, int ptds, bool out_ok,
				uint64_t *remote)
{
	struct CUstream_st *st;
	CUresult rc = stream_lookup(s, out_ok, &st);

	if (!rc)
		*remote = xgpulib_stream_remote(s, ptds);
	return rc;
}

CUresult xgpulib_stream_arg(CUstream s, int ptds, uint64_t *remote)
{
	return xgpulib_stream_out_arg(s, ptds, true, remote);
}

/* the wire handle of an event argument */
static CUresult event_arg(CUevent e, uint64_t *remote)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!e || e->magic != XGPULIB_EVENT_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*remote = e->remote;
	return CUDA_SUCCESS;
}

/* the wire handles of a (stream, event) pair, the stream checked first */
static CUresult stream_event_arg(CUstream s, CUevent e, int ptds,
				 uint64_t *stream, uint64_t *event)
{
	CUresult rc = xgpulib_stream_arg(s, ptds, stream);

	return rc ? rc : event_arg(e, event);
}

/*
 * The checks of a stream or event creation, in the driver's order: its
 * handle's place given, a valid current context (the new object's, *ctx),
 * flags among the known ones.
 */
static CUresult create_arg(const void *ph, unsigned int flags,
			   unsigned int known, CUcontext *ctx)
{
	CUresult rc;

	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_ctx_current(ctx);
	if (rc)
		return rc;
	return flags & ~known ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/*
 * The worker's answer to the creation of obj's backend object: rc, or
 * CUDA_ERROR_UNKNOWN when it named no valid handle (handle_ok).  obj is
 * freed on failure.
 */
static CUresult obj_created(void *obj, CUresult rc, bool handle_ok)
{
	if (rc == CUDA_SUCCESS && !handle_ok)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc)
		free(obj);
	return rc;
}

/*
 * Post the destruction of a checked stream's or event's backend object and
 * free its guest struct (obj, whose first member is the magic: cleared, so
 * that a stale handle fails the checks while the memory is not reused).
 */
static CUresult obj_destroy(void *obj, uint64_t remote, handle_call_fn post)
{
	struct xgpuif_handle_args a = { remote };
	CUresult rc = post(&a);

	if (rc)
		return rc;
	*(uint32_t *)obj = 0;
	free(obj);
	return CUDA_SUCCESS;
}

/* ---- streams ------------------------------------------------------------- */

/* CUDA clamps priorities to the context's range; so does xgpu, so that
 * cuStreamGetPriority answers what the driver uses */
static CUresult clamp_priority(int *priority)
{
	int least = 0, greatest = 0;
	CUresult rc;

	if (*priority == 0)
		return CUDA_SUCCESS;
	rc = cuCtxGetStreamPriorityRange(&least, &greatest);
	if (rc)
		return rc;
	if (*priority > least)
		*priority = least;
	if (*priority < greatest)
		*priority = greatest;
	return CUDA_SUCCESS;
}

/* a new stream's record, and its priority clamped */
static CUresult stream_alloc(int *priority, struct CUstream_st **s)
{
	CUresult rc = clamp_priority(priority);

	if (rc)
		return rc;
	*s = calloc(1, sizeof(**s));
	return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/*
 * The worker's answer to the creation of stream s (freed on failure): s
 * filled in and handed to the caller in *ph.
 */
static CUresult stream_made(struct CUstream_st *s, CUresult rc,
			    uint64_t remote, unsigned int flags, int priority,
			    CUcontext ctx, CUstream *ph)
{
	rc = obj_created(s, rc, remote > 2);
	if (rc)
		return rc;
	*s = (struct CUstream_st){ .magic = XGPULIB_STREAM_MAGIC,
				   .flags = flags, .priority = priority,
				   .ctx = ctx, .remote = remote };
	*ph = s;
	return CUDA_SUCCESS;
}

static CUresult stream_create(CUstream *ph, unsigned int flags, int priority)
{
	struct xgpuif_stream_create_args a = { flags, priority };
	struct xgpuif_stream_reply r = { 0 };
	struct CUstream_st *s;
	CUcontext ctx;
	CUresult rc;

	rc = create_arg(ph, flags, CU_STREAM_NON_BLOCKING, &ctx);
	if (rc == CUDA_SUCCESS)
		rc = stream_alloc(&priority, &s);
	if (rc)
		return rc;
	a.priority = priority;
	rc = xgpulib_call_STREAM_CREATE(&a, &r);
	return stream_made(s, rc, r.stream, flags, priority, ctx, ph);
}

/*
 * A stream of green context g: its context is g's (cuCtxFromGreenCtx's),
 * whatever is current; it goes with g in the worker.
 */
XGPULIB_EXPORT CUresult cuGreenCtxStreamCreate(CUstream *phStream,
					       CUgreenCtx greenCtx,
					       unsigned int flags,
					       int priority)
{
	struct xgpuif_green_stream_args a = { 0, flags, 0 };
	struct xgpuif_stream_reply r = { 0 };
	struct CUstream_st *s;
	CUcontext ctx;
	CUresult rc;

	XGPULIB_CHECK_ARGS(phStream, true);
	rc = xgpulib_green_ctx(greenCtx, &ctx);
	if (rc)
		return rc;
	if (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	rc = stream_alloc(&priority, &s);
	if (rc)
		return rc;
	a.priority = priority;
	a.green = xgpulib_green_remote(greenCtx);
	rc = xgpulib_call_GREENCTX_STREAM(&a, &r);
	return stream_made(s, rc, r.stream, flags, priority, ctx, phStream);
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

/* pending work completes first in the driver; we need not wait */
XGPULIB_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
	struct CUstream_st *s;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	s = stream_check(hStream);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	return obj_destroy(s, s->remote, xgpulib_post_STREAM_DESTROY);
}

static CUresult stream_call(CUstream s, int ptds, handle_call_fn call)
{
	struct xgpuif_handle_args a;
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.handle);

	return rc ? rc : call(&a);
}

/* ---- synchronizing while values are waited for ----------------------------- */

static bool value_waits;	/* a value wait was sent (atomic) */

void xgpulib_note_value_wait(void)
{
	if (!__atomic_exchange_n(&value_waits, true, __ATOMIC_RELAXED))
		xgpulib_dbg("this process waits on values on the GPU: "
			    "stream, event and context synchronizes ask "
			    "until the work is done from now on");
}

/* ask (query) until the answer is not CUDA_ERROR_NOT_READY, sleeping 2 us
 * growing to 200 us between questions */
static CUresult sync_by_query(const struct xgpuif_handle_args *a,
			      handle_call_fn query)
{
	struct timespec ts = { 0, 2000 };
	CUresult rc;

	while ((rc = query(a)) == CUDA_ERROR_NOT_READY) {
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ts.tv_sec = 0;
		ts.tv_nsec = ts.tv_nsec < 100000 ? ts.tv_nsec * 2 + 2000 :
						   200000;
	}
	return rc;
}

static CUresult sync_call(const struct xgpuif_handle_args *a,
			  handle_call_fn sync, handle_call_fn query)
{
	if (__atomic_load_n(&value_waits, __ATOMIC_RELAXED))
		return sync_by_query(a, query);
	return sync(a);
}

CUresult xgpulib_sync_remote_stream_plain(uint64_t h)
{
	struct xgpuif_handle_args a = { h };

	return sync_call(&a, xgpulib_call_STREAM_SYNCHRONIZE,
			 xgpulib_call_STREAM_QUERY);
}

/* a synchronize the GPU answers (xgpulib_fence.c), not while values are
 * waited for: true when answered (*rc its result) */
static bool sync_fenced(bool ctx_wide, uint64_t h, CUresult *rc)
{
	bool answered = false;

	*rc = CUDA_SUCCESS;
	if (!__atomic_load_n(&value_waits, __ATOMIC_RELAXED))
		*rc = xgpulib_fence_sync(ctx_wide, h, &answered);
	if (answered && *rc == CUDA_SUCCESS)
		xgpulib_shadow_synced();
	return answered;
}

CUresult xgpulib_sync_remote_stream(uint64_t h)
{
	CUresult rc;

	if (sync_fenced(false, h, &rc))
		return rc;
	return xgpulib_sync_remote_stream_plain(h);
}

/* CTX_QUERY has no argument; for sync_by_query */
static CUresult query_ctx(const struct xgpuif_handle_args *a)
{
	(void)a;
	return xgpulib_call_CTX_QUERY();
}

CUresult xgpulib_sync_ctx(void)
{
	static const struct xgpuif_handle_args none;
	CUresult rc;

	if (sync_fenced(true, 0, &rc))
		return rc;
	if (__atomic_load_n(&value_waits, __ATOMIC_RELAXED)) {
		rc = sync_by_query(&none, query_ctx);
		/* (a backend from before CTX_QUERY) */
		if (rc != CUDA_ERROR_NOT_SUPPORTED)
			return rc;
	}
	return xgpulib_call_CTX_SYNCHRONIZE();
}

CUresult xgpulib_stream_sync(CUstream s, int ptds)
{
	uint64_t h;
	CUresult rc = xgpulib_stream_arg(s, ptds, &h);

	return rc ? rc : xgpulib_sync_remote_stream(h);
}

CUresult xgpulib_stream_query(CUstream s, int ptds)
{
	return stream_call(s, ptds, xgpulib_call_STREAM_QUERY);
}

CUresult xgpulib_stream_wait_event(CUstream s, CUevent e, unsigned int flags,
				   int ptds)
{
	struct xgpuif_stream_wait_args a = { .flags = flags };
	CUresult rc = stream_event_arg(s, e, ptds, &a.stream, &a.event);

	return rc ? rc : xgpulib_post_STREAM_WAIT_EVENT(&a);
}

/* ---- stream queries, answered locally ------------------------------------ */

CUresult xgpulib_stream_priority(CUstream hs, int *priority, int ptds)
{
	struct CUstream_st *s;
	CUresult rc = stream_lookup(hs, priority, &s);

	(void)ptds;
	if (!rc)
		*priority = s ? s->priority : 0;
	return rc;
}

CUresult xgpulib_stream_flags(CUstream hs, unsigned int *flags, int ptds)
{
	struct CUstream_st *s;
	CUresult rc = stream_lookup(hs, flags, &s);

	(void)ptds;
	if (!rc)
		*flags = s ? s->flags : CU_STREAM_DEFAULT;
	return rc;
}

/* a special stream belongs to the calling thread's current context */
static CUresult stream_ctx(CUstream hs, CUcontext *pctx)
{
	struct CUstream_st *s;
	CUresult rc = stream_lookup(hs, pctx, &s);

	if (rc)
		return rc;
	if (s) {
		*pctx = s->ctx;
		return CUDA_SUCCESS;
	}
	return xgpulib_ctx_current(pctx);
}

CUresult xgpulib_stream_ctx(CUstream hs, CUcontext *pctx, int ptds)
{
	(void)ptds;
	return stream_ctx(hs, pctx);
}

/*
 * A stream of a green context (or a special stream while a green
 * context's context is current): the green context, and the device's
 * primary context as the context.
 */
CUresult xgpulib_stream_ctx_v2(CUstream hStream, CUcontext *pCtx,
			       CUgreenCtx *pGreenCtx, int ptds)
{
	CUcontext c;
	CUresult rc;

	if (!pCtx || !pGreenCtx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = stream_ctx(hStream, &c);
	if (rc)
		return rc;
	if (!c->green) {
		*pCtx = c;
		*pGreenCtx = NULL;
		return CUDA_SUCCESS;
	}
	if (hStream == CU_STREAM_PER_THREAD || (!hStream && ptds))
		return CUDA_ERROR_INVALID_HANDLE;
	*pCtx = xgpulib_primary(c->dev);
	*pGreenCtx = c->green;
	return *pCtx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* the green context a stream was made in (NULL if none) */
XGPULIB_EXPORT CUresult cuStreamGetGreenCtx(CUstream hStream,
					    CUgreenCtx *phCtx)
{
	CUcontext c;
	CUresult rc;

	if (!phCtx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = stream_ctx(hStream, &c);
	if (rc == CUDA_SUCCESS)
		*phCtx = c->green;
	return rc;
}

/*
 * Stream ids: a created stream's wire handle is unique for the process's
 * life (its generation changes when the slot is reused).
 */
CUresult xgpulib_stream_id(CUstream hs, unsigned long long *id, int ptds)
{
	struct CUstream_st *s;
	CUresult rc = stream_lookup(hs, id, &s);

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

/* ---- events -------------------------------------------------------------- */

#define EVENT_FLAGS_KNOWN                                                   \
	((unsigned int)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |  \
			CU_EVENT_INTERPROCESS))

/*
 * The worker's answer to the creation of event e (freed on failure): e
 * filled in, noted for graph queries and handed to the caller in *ph.
 */
static CUresult event_made(struct CUevent_st *e, CUresult rc, uint64_t remote,
			   unsigned int flags, CUcontext ctx, CUevent *ph)
{
	rc = obj_created(e, rc, remote != 0);
	if (rc)
		return rc;
	e->flags = flags;
	e->ctx = ctx;
	e->remote = remote;
	e->magic = XGPULIB_EVENT_MAGIC;
	xgpulib_event_note(e, true);
	*ph = e;
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct xgpuif_u32_args a = { Flags, 0 };
	struct xgpuif_event_reply r = { 0 };
	struct CUevent_st *e;
	CUcontext ctx;
	CUresult rc;

	rc = create_arg(phEvent, Flags, EVENT_FLAGS_KNOWN, &ctx);
	if (rc)
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_EVENT_CREATE(&a, &r);
	return event_made(e, rc, r.event, Flags, ctx, phEvent);
}

static CUresult event_record(CUevent he, CUstream hs, unsigned int flags,
			     int with_flags, int ptds)
{
	struct xgpuif_event_record_args a = {
		.flags = flags, .with_flags = (uint32_t)with_flags
	};
	CUresult rc = stream_event_arg(hs, he, ptds, &a.stream, &a.event);

	return rc ? rc : xgpulib_post_EVENT_RECORD(&a);
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

static CUresult event_call(CUevent e, handle_call_fn call)
{
	struct xgpuif_handle_args a;
	CUresult rc = event_arg(e, &a.handle);

	return rc ? rc : call(&a);
}

XGPULIB_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
	return event_call(hEvent, xgpulib_call_EVENT_QUERY);
}

XGPULIB_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
	struct xgpuif_handle_args a;
	CUresult rc = event_arg(hEvent, &a.handle);

	return rc ? rc : sync_call(&a, xgpulib_call_EVENT_SYNCHRONIZE,
				   xgpulib_call_EVENT_QUERY);
}

XGPULIB_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
	uint64_t remote;
	CUresult rc = event_arg(hEvent, &remote);

	if (rc)
		return rc;
	xgpulib_event_note(hEvent, false);
	return obj_destroy(hEvent, remote, xgpulib_post_EVENT_DESTROY);
}

XGPULIB_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds,
					      CUevent hStart, CUevent hEnd)
{
	struct xgpuif_elapsed_args a;
	struct xgpuif_elapsed_reply r = { 0, 0 };
	CUresult rc;

	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	rc = event_arg(hStart, &a.start);
	if (!rc)
		rc = event_arg(hEnd, &a.end);
	if (!rc)
		rc = xgpulib_call_EVENT_ELAPSED_TIME(&a, &r);
	if (rc == CUDA_SUCCESS)
		*pMilliseconds = r.ms;
	return rc;
}

/* ---- IPC events: tokens of the worker's, never the driver's handle ------ */

CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
	struct xgpuif_handle_args a = { 0 };
	struct xgpuif_ipc_handle r;
	CUresult rc;

	if (!pHandle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = event_arg(event, &a.handle);
	if (rc)
		return rc;
	/* natively too: only an interprocess event without timing */
	if (!(event->flags & CU_EVENT_INTERPROCESS))
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_IPC_GET_EVENT(&a, &r);
	if (rc == CUDA_SUCCESS)
		memcpy(pHandle->reserved, r.bytes, sizeof(pHandle->reserved));
	return rc;
}

CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
	struct xgpuif_ipc_handle a;
	struct xgpuif_event_reply r = { 0 };
	struct CUevent_st *e;
	CUcontext ctx;
	CUresult rc;

	rc = create_arg(phEvent, 0, 0, &ctx);
	if (rc)
		return rc;
	memcpy(a.bytes, handle.reserved, sizeof(a.bytes));
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_IPC_OPEN_EVENT(&a, &r);
	return event_made(e, rc, r.event,
			  CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING, ctx,
			  phEvent);
}
