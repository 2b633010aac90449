// SPDX-License-Identifier: MIT
/*
 * xgpub_op_logs.c: the driver's error log (cuLogs*), the worker's
 * driver's own, and its core dump settings (cuCoredump*, below).
 *
 * The driver keeps a log of the errors it returns, with each message
 * also handed to the callbacks registered with cuLogsRegisterCallback,
 * on the thread that made the failing call and before the call returns.
 * A guest's registration is a LOGCB handle whose extra names the guest's
 * id of it; the worker's callback queues each message with that id, and
 * the reply to the guest's next synchronous request says messages wait
 * (XGPUIF_SF_LOGS): the guest fetches them (LOGS_TAKE) and runs its
 * callbacks before that call returns to the program.  Messages of a
 * posted request are thus delivered at the next synchronising call, as
 * its errors are.  The queue holds at most QUEUE_BYTES; past that the
 * messages are counted as dropped and the guest library says so once.
 *
 * Only messages about calls of the thread that serves the guest's
 * requests are queued: the worker's other threads (the scheduler's
 * marks) make calls the program did not.
 *
 * cuLogsCurrent and cuLogsDumpToMemory are the driver's, with its
 * iterator: the guest's iterator is the driver's number.  What the log
 * holds is what the worker's driver saw: the errors of the guest's calls
 * that reached it (not those the guest library answered itself), as
 * the driver words them for the call the worker made.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

#define QUEUE_BYTES	(64u << 10)

struct xgpub_logcb {
	uint64_t id;		/* the guest's number of the registration */
};

static struct {
	pthread_mutex_t mu;
	/* the thread that serves the guest's requests (it registered the
	 * callbacks): the driver's messages about calls of other threads
	 * of the worker (the scheduler's marks) are not the program's */
	pthread_t server;
	bool server_known;
	uint8_t *buf;		/* entries: struct xgpuif_log_entry + text,
				 * padded to 8 */
	size_t len, head;	/* bytes queued; first not yet taken */
	uint64_t dropped;
	int waiting;		/* read without the lock by the reply path */
} q = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t entry_bytes(size_t len)
{
	return sizeof(struct xgpuif_log_entry) + ((len + 7) & ~(size_t)7);
}

static void CUDA_CB on_log(void *data, CUlogLevel level, char *msg,
			   size_t len)
{
	const struct xgpub_logcb *cb = data;
	struct xgpuif_log_entry e = { cb->id, (uint32_t)level, 0 };
	size_t need;

	if (!q.server_known || !pthread_equal(pthread_self(), q.server))
		return;
	if (!msg)
		len = 0;
	/* the driver's messages are short; a line is plenty */
	if (len > 1024)
		len = 1024;
	e.len = (uint32_t)len;
	need = entry_bytes(len);
	pthread_mutex_lock(&q.mu);
	if (!q.buf)
		q.buf = malloc(QUEUE_BYTES);
	if (q.head && q.len + need > QUEUE_BYTES) {
		memmove(q.buf, q.buf + q.head, q.len - q.head);
		q.len -= q.head;
		q.head = 0;
	}
	if (!q.buf || q.len + need > QUEUE_BYTES) {
		q.dropped++;
	} else {
		memcpy(q.buf + q.len, &e, sizeof(e));
		memcpy(q.buf + q.len + sizeof(e), msg, len);
		memset(q.buf + q.len + sizeof(e) + len, 0,
		       need - sizeof(e) - len);
		q.len += need;
	}
	__atomic_store_n(&q.waiting, q.len > q.head || q.dropped,
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q.mu);
}

bool xgpub_logs_waiting(void)
{
	return __atomic_load_n(&q.waiting, __ATOMIC_RELAXED);
}

XGPUB_HANDLER(LOGS_REGISTER)
{
	CUlogsCallbackHandle h = NULL;
	struct xgpub_logcb *cb;
	int rc;

	if (a->null_out > 1)
		return CUDA_ERROR_INVALID_VALUE;
	/* no id: the program passed no callback, which the driver refuses
	 * (and logs) */
	if (!a->id)
		return w->D->cuLogsRegisterCallback(NULL, NULL,
						    a->null_out ? NULL : &h);
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return CUDA_ERROR_OUT_OF_MEMORY;
	cb->id = a->id;
	if (!q.server_known) {
		q.server = pthread_self();
		q.server_known = true;
	}
	/* the handle is needed to unregister: always asked for */
	rc = w->D->cuLogsRegisterCallback(on_log, cb, &h);
	/* a full table unregisters it and frees cb */
	return xgpub_keep_made(w, rc, XGPUB_H_LOGCB, h, cb, &r->ref);
}

XGPUB_HANDLER(LOGS_CURRENT)
{
	CUlogIterator it = 0;
	int rc;

	if (a->id || a->null_out > 1)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuLogsCurrent(a->null_out ? NULL : &it, a->flags);
	r->value = it;
	return rc;
}

XGPUB_HANDLER(LOGS_DUMP)
{
	CUlogIterator it = a->iterator;
	size_t size = a->size;
	int rc;

	if (a->no_iterator > 1 || a->_pad)
		return CUDA_ERROR_INVALID_VALUE;
	/* the text and its NUL must fit the reply */
	if (size > rt->cap)
		size = rt->cap;
	if (size > XGPUIF_LOGS_DUMP_MAX)
		size = XGPUIF_LOGS_DUMP_MAX;
	rc = w->D->cuLogsDumpToMemory(a->no_iterator ? NULL : &it,
				      (char *)rt->p, &size, a->flags);
	r->iterator = it;
	r->size = size;
	r->bytes = 0;
	if (rc == CUDA_SUCCESS && size && size < rt->cap) {
		rt->p[size] = '\0';
		r->bytes = (uint32_t)size + 1;
	}
	rt->len = r->bytes;
	return rc;
}

XGPUB_HANDLER(LOGS_TAKE)
{
	uint32_t n = 0;

	(void)w;
	pthread_mutex_lock(&q.mu);
	rt->len = 0;
	while (q.head < q.len) {
		struct xgpuif_log_entry e;
		size_t b;

		memcpy(&e, q.buf + q.head, sizeof(e));
		b = entry_bytes(e.len);
		if (rt->len + b > rt->cap)
			break;
		memcpy(rt->p + rt->len, q.buf + q.head, b);
		rt->len += (uint32_t)b;
		q.head += b;
		n++;
	}
	if (q.head == q.len)
		q.head = q.len = 0;
	r->count = n;
	r->waiting = q.len > q.head;
	r->dropped = q.dropped;
	q.dropped = 0;
	__atomic_store_n(&q.waiting, r->waiting, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q.mu);
	return CUDA_SUCCESS;
}

/* ---- core dump settings ---------------------------------------------------- */

/*
 * The worker's driver judges each attribute, its scope (the context's or
 * the process's) and size, and keeps the values, with two exceptions.
 * FILE and PIPE are paths of the guest's, which never reach the driver
 * here: the guest keeps them, and asks only for the size.  And dumps
 * stay off: the driver would write a GPU core dump (up to the context's
 * whole memory) into Dom0 on an exception, so setting ENABLE_ON_EXCEPTION
 * or ENABLE_USER_TRIGGER true is refused with CUDA_ERROR_NOT_PERMITTED.
 */
XGPUB_HANDLER(COREDUMP_ATTR)
{
	static const uint32_t known = XGPUIF_CD_GLOBAL | XGPUIF_CD_SET |
				      XGPUIF_CD_NULL_VALUE |
				      XGPUIF_CD_NULL_SIZE;
	bool global = a->flags & XGPUIF_CD_GLOBAL;
	bool set = a->flags & XGPUIF_CD_SET;
	bool nullv = a->flags & XGPUIF_CD_NULL_VALUE;
	bool nulls = a->flags & XGPUIF_CD_NULL_SIZE;
	CUcoredumpSettings at = (CUcoredumpSettings)a->attrib;
	uint8_t v[XGPUIF_CD_VALUE_MAX];
	size_t size = a->size;
	int rc;

	if (a->flags & ~known)
		return XGPUIF_ST_PROTO;
	rt->len = 0;
	memset(v, 0, sizeof(v));
	if (at == CU_COREDUMP_FILE || at == CU_COREDUMP_PIPE) {
		size = 0;
		rc = global ? w->D->cuCoredumpGetAttributeGlobal(at, NULL, &size) :
			      w->D->cuCoredumpGetAttribute(at, NULL, &size);
		r->size = size;
		return rc;
	}
	if (set) {
		if (tail->len != (nullv || nulls ? 0 : a->size) ||
		    tail->len > sizeof(v))
			return XGPUIF_ST_PROTO;
		memcpy(v, tail->p, tail->len);
		if ((at == CU_COREDUMP_ENABLE_ON_EXCEPTION ||
		     at == CU_COREDUMP_ENABLE_USER_TRIGGER) && !nullv) {
			for (uint32_t i = 0; i < tail->len; i++)
				if (v[i])
					return CUDA_ERROR_NOT_PERMITTED;
		}
		rc = global ? w->D->cuCoredumpSetAttributeGlobal(
				      at, nullv ? NULL : v, nulls ? NULL : &size) :
			      w->D->cuCoredumpSetAttribute(
				      at, nullv ? NULL : v, nulls ? NULL : &size);
		r->size = size;
		return rc;
	}
	if (tail->len)
		return XGPUIF_ST_PROTO;
	/* the driver has room for the largest value: a size past it (its
	 * to refuse, not being any attribute's) is told as that room */
	if (!nullv && size > sizeof(v))
		size = sizeof(v);
	rc = global ? w->D->cuCoredumpGetAttributeGlobal(at, nullv ? NULL : v,
							  nulls ? NULL : &size) :
		      w->D->cuCoredumpGetAttribute(at, nullv ? NULL : v,
						   nulls ? NULL : &size);
	r->size = size;
	if (rc == CUDA_SUCCESS && !nullv) {
		uint64_t n = a->size < sizeof(v) ? a->size : sizeof(v);

		if (n > rt->cap)
			n = rt->cap;
		memcpy(rt->p, v, n);
		rt->len = (uint32_t)n;
	}
	return rc;
}
