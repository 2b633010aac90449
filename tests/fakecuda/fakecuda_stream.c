// SPDX-License-Identifier: MIT
/*
 * fakecuda_stream.c: the fake driver's streams, events and error names
 * (tests only, see fakecuda.h).  Work completes when it is issued, so
 * streams only check their handles and events only keep a time stamp.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda.h"

/* ---- streams ------------------------------------------------------------- */

/* (static helpers: see the copies in fakecuda_memory.c for why) */
static CUresult stream_create(CUstream *ph, unsigned int flags, int priority)
{
	struct fstream *s;

	NEED_CTX();
	if (!ph || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* clamped to the range, as the driver does */
	s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
	s->flags = flags;
	fc_obj_add(&s->o, O_STREAM, fc_cur);
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags,
				    int priority)
{
	return stream_create(ph, flags, priority);
}

CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return stream_create(ph, flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hs)
{
	struct fstream *s;

	NEED_INIT();
	s = STREAM(hs);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	fc_obj_unlink(&s->o);
	fc_obj_free(&s->o);
	return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s)
{
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (!rc)
		rc = fc_host_wait(NULL, s);
	while (!rc && fc_stream_waits(s))
		usleep(1000);
	if (!rc)
		fc_printf_flush();
	return rc;
}

CUresult cuStreamQuery(CUstream s)
{
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (!rc)
		rc = fc_host_wait(NULL, s);
	return !rc && fc_stream_waits(s) ? CUDA_ERROR_NOT_READY : rc;
}

CUresult cuStreamWaitEvent(CUstream s, CUevent ev, unsigned int flags)
{
	struct fevent *e;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags > 1)
		return CUDA_ERROR_INVALID_VALUE;
	return fc_stream_wait(s, e);
}

/* ---- events -------------------------------------------------------------- */

CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
	const unsigned int known = CU_EVENT_BLOCKING_SYNC |
				   CU_EVENT_DISABLE_TIMING |
				   CU_EVENT_INTERPROCESS;
	struct fevent *e;

	NEED_CTX();
	if (!ph || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->flags = flags;
	fc_obj_add(&e->o, O_EVENT, fc_owner());
	*ph = (CUevent)e;
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent ev, CUstream s, unsigned int flags)
{
	struct fevent *e;
	bool captured;
	CUresult rc;

	NEED_CTX();
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (flags & ~(unsigned int)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	/* captured: no node, the event stands for the stream's nodes */
	rc = fc_stream_work_as(s, &captured, &fc_no_node);
	if (rc)
		return rc;
	fc_event_recorded(e, s, captured);
	if (captured)
		return CUDA_SUCCESS;
	clock_gettime(CLOCK_MONOTONIC, &e->when);
	e->recorded = true;
	e->behind = NULL;
	if (fc_stream_waits(s)) {
		e->behind = s;
		e->behind_gen = STREAM(s)->wait_gen;
	}
	return CUDA_SUCCESS;
}

/* an event recorded behind a value wait that still holds its stream */
static bool event_waits(struct fevent *e)
{
	struct fstream *fs;

	if (!e->behind)
		return false;
	fs = STREAM(e->behind);
	if (fs && fs->wait_gen == e->behind_gen && fc_fstream_waits(fs))
		return true;
	e->behind = NULL;
	return false;
}

CUresult cuEventRecordWithFlags(CUevent ev, CUstream s, unsigned int flags)
{
	return event_record(ev, s, flags);
}

CUresult cuEventRecord(CUevent ev, CUstream s)
{
	return event_record(ev, s, 0);
}

CUresult cuEventQuery(CUevent ev)
{
	struct fevent *e;
	CUresult rc;

	NEED_INIT();
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = fc_host_wait(e, NULL);
	return !rc && event_waits(e) ? CUDA_ERROR_NOT_READY : rc;
}

CUresult cuEventSynchronize(CUevent ev)
{
	struct fevent *e;
	CUresult rc;

	NEED_INIT();
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = fc_host_wait(e, NULL);
	while (!rc && event_waits(e))
		usleep(1000);
	if (!rc)
		fc_printf_flush();
	return rc;
}

CUresult cuEventDestroy_v2(CUevent ev)
{
	struct fevent *e;

	NEED_INIT();
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	fc_obj_unlink(&e->o);
	fc_obj_free(&e->o);
	return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent hs, CUevent he)
{
	struct fevent *s, *e;
	double d;

	NEED_INIT();
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	s = EVENT(hs);
	e = EVENT(he);
	if (!s || !e || !s->recorded || !e->recorded ||
	    (s->flags & CU_EVENT_DISABLE_TIMING) ||
	    (e->flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	d = (double)(e->when.tv_sec - s->when.tv_sec) * 1e3 +
	    (double)(e->when.tv_nsec - s->when.tv_nsec) / 1e6;
	*ms = (float)d;
	return CUDA_SUCCESS;
}

/* ---- errors -------------------------------------------------------------- */

CUresult cuGetErrorName(CUresult error, const char **pstr)
{
	static const struct {
		CUresult rc;
		const char *name;
	} names[] = {
#define N(x) { x, #x }
		N(CUDA_SUCCESS),
		N(CUDA_ERROR_INVALID_VALUE),
		N(CUDA_ERROR_OUT_OF_MEMORY),
		N(CUDA_ERROR_NOT_INITIALIZED),
		N(CUDA_ERROR_INVALID_DEVICE),
		N(CUDA_ERROR_INVALID_IMAGE),
		N(CUDA_ERROR_INVALID_CONTEXT),
		N(CUDA_ERROR_UNSUPPORTED_LIMIT),
		N(CUDA_ERROR_INVALID_HANDLE),
		N(CUDA_ERROR_NOT_FOUND),
		N(CUDA_ERROR_ILLEGAL_ADDRESS),
		N(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
		N(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
		N(CUDA_ERROR_MISALIGNED_ADDRESS),
		N(CUDA_ERROR_INVALID_CLUSTER_SIZE),
		N(CUDA_ERROR_NOT_SUPPORTED),
		N(CUDA_ERROR_ILLEGAL_STATE),
		N(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
		N(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
		N(CUDA_ERROR_STREAM_CAPTURE_MERGE),
		N(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED),
		N(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
		N(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD),
		N(CUDA_ERROR_UNKNOWN),
#undef N
	};

	if (!pstr)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].rc == error) {
			*pstr = names[i].name;
			return CUDA_SUCCESS;
		}
	}
	*pstr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

/* ---- what the fake does not emulate ---------------------------------------- */

/*
 * Texture objects and the kernel and function counts: the worker
 * resolves every entry point it uses (a CUDA 13 driver has them all), so
 * the fake has them too, answering what a driver answers for a feature
 * the device lacks.
 */
CUresult cuTexObjectCreate(CUtexObject *t, const CUDA_RESOURCE_DESC *res,
			   const CUDA_TEXTURE_DESC *tex,
			   const CUDA_RESOURCE_VIEW_DESC *view)
{
	(void)t;
	(void)res;
	(void)tex;
	(void)view;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuTexObjectDestroy(CUtexObject t)
{
	(void)t;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- host functions: everything is complete, so they run at once ----- */

CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *user)
{
	bool captured;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	rc = fc_stream_work_as(s, &captured, &(struct fc_capnode){
		.type = CU_GRAPH_NODE_TYPE_HOST, .host = { fn, user } });
	if (rc || captured)
		return rc;
	fn(user);
	return CUDA_SUCCESS;
}

CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *user,
			     unsigned int flags)
{
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!cb || flags)
		return CUDA_ERROR_INVALID_VALUE;
	cb(s, CUDA_SUCCESS, user);
	return CUDA_SUCCESS;
}

/* ---- stream memory operations: at once, so a wait must already hold --- */

static bool wait_holds(uint64_t have, uint64_t want, unsigned int flags)
{
	switch (flags & 0x3) {
	case CU_STREAM_WAIT_VALUE_GEQ:
		return (int32_t)(have - want) >= 0;
	case CU_STREAM_WAIT_VALUE_EQ:
		return have == want;
	case CU_STREAM_WAIT_VALUE_AND:
		return (have & want) != 0;
	default:
		return ~(have | ~want) != 0;	/* NOR */
	}
}

static bool value_waits(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("XGPU_FAKE_VALUE_WAITS") &&
		     atoi(getenv("XGPU_FAKE_VALUE_WAITS"));
	return on;
}

/* s waits for o's value from now (the last such wait of a batch) */
static void hold(struct fstream *fs, const CUstreamBatchMemOpParams *o,
		 bool is64)
{
	fs->wait_addr = o->waitValue.address;
	fs->wait_value = is64 ? o->waitValue.value64 : o->waitValue.value;
	fs->wait_flags = o->waitValue.flags;
	fs->wait64 = is64;
	fs->wait_gen++;
	__atomic_store_n(&fs->waiting, true, __ATOMIC_RELEASE);
}

bool fc_stream_waits(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return false;
	return fc_fstream_waits(STREAM(s));
}

bool fc_fstream_waits(struct fstream *fs)
{
	uint64_t have = 0;

	if (!fs || !__atomic_load_n(&fs->waiting, __ATOMIC_ACQUIRE))
		return false;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(&have, (void *)(uintptr_t)fs->wait_addr, fs->wait64 ? 8 : 4);
	if (!wait_holds(have, fs->wait_value, fs->wait_flags))
		return true;
	__atomic_store_n(&fs->waiting, false, __ATOMIC_RELEASE);
	return false;
}

CUresult cuStreamBatchMemOp_v2(CUstream s, unsigned int count,
			       CUstreamBatchMemOpParams *ops,
			       unsigned int flags)
{
	struct fstream *fs;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!count || !ops || flags)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < count; i++) {
		CUstreamBatchMemOpParams *o = &ops[i];
		bool is64 = o->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
			    o->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
		size_t n = is64 ? 8 : 4;
		uint64_t have = 0;

		switch (o->operation) {
		case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		case CU_STREAM_MEM_OP_WAIT_VALUE_64:
			if (!fc_copy_ok(o->waitValue.address, n))
				return CUDA_ERROR_INVALID_VALUE;
			memcpy(&have, (void *)(uintptr_t)o->waitValue.address,
			       n);
			if (wait_holds(have, is64 ? o->waitValue.value64 :
						    o->waitValue.value,
				       o->waitValue.flags))
				break;
			if (!value_waits() || !(fs = STREAM(s)))
				return CUDA_ERROR_NOT_SUPPORTED;
			hold(fs, o, is64);
			break;
		case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		case CU_STREAM_MEM_OP_WRITE_VALUE_64:
			if (!fc_copy_ok(o->writeValue.address, n))
				return CUDA_ERROR_INVALID_VALUE;
			/* XGPU_FAKE_WRITES_LOST=1: accepted, never written
			 * (as on a GPU whose earlier work failed) */
			if (getenv("XGPU_FAKE_WRITES_LOST"))
				break;
			memcpy((void *)(uintptr_t)o->writeValue.address,
			       is64 ? (void *)&o->writeValue.value64 :
				      (void *)&o->writeValue.value, n);
			break;
		default:
			break;
		}
	}
	return CUDA_SUCCESS;
}

CUresult cuStreamGetAttribute(CUstream s, CUstreamAttrID attr,
			      CUstreamAttrValue *v)
{
	struct fstream *st;

	NEED_CTX();
	if (fc_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!v || attr != CU_LAUNCH_ATTRIBUTE_PRIORITY)
		return CUDA_ERROR_INVALID_VALUE;
	st = STREAM(s);
	memset(v, 0, sizeof(*v));
	v->priority = st ? st->priority : 0;
	return CUDA_SUCCESS;
}

CUresult cuStreamSetAttribute(CUstream s, CUstreamAttrID attr,
			      const CUstreamAttrValue *v)
{
	struct fstream *st;

	NEED_CTX();
	if (fc_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!v || attr != CU_LAUNCH_ATTRIBUTE_PRIORITY)
		return CUDA_ERROR_INVALID_VALUE;
	st = STREAM(s);
	if (st)
		st->priority = v->priority;
	return CUDA_SUCCESS;
}

/* ---- surface objects: no arrays to write, as texture objects ------------ */

CUresult cuSurfObjectCreate(CUsurfObject *s, const CUDA_RESOURCE_DESC *res)
{
	(void)s;
	(void)res;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuSurfObjectDestroy(CUsurfObject s)
{
	(void)s;
	return CUDA_ERROR_NOT_SUPPORTED;
}
