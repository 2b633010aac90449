// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_logs.c: the driver's error log (cuLogs*): the worker's
 * driver keeps it (xen-backend/worker/xgpub_op_logs.c); and its core
 * dump settings (cuCoredump*, at the end).
 *
 * A callback registration is a record of ours (the program's
 * CUlogsCallbackHandle) with a number the worker's callback for it
 * queues each message under.  A reply that says messages wait
 * (XGPUIF_SF_LOGS) makes the thread that waited for it fetch them and
 * run the callbacks (deliver, xgpulib_rpc.c's xgpulib_logs_hook) before
 * its call returns to the program, as the driver runs them before the
 * failing call returns.  After cuLogsUnregisterCallback returns, its
 * callback runs no more.
 *
 * cuLogsCurrent and cuLogsDumpToMemory are the worker's driver's answers,
 * its iterator the program's.  cuLogsDumpToFile writes the text the
 * worker's driver dumps into the program's file, in the guest: the file
 * is opened (created, truncated) first, and a file that cannot be opened
 * is the driver's error, its two messages handed to the callbacks (they
 * are not in the worker's log, so a later dump lacks them).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_chan.h"
#include "xgpulib_reg.h"
#include "xgpulib_rpc.h"

struct CUlogsCallbackEntry_st {
	struct xgpulib_reg reg;		/* first: remote, the LOGCB handle */
	CUlogsCallback fn;
	void *data;
	uint64_t id;			/* the worker queues messages under it */
};

static struct xgpulib_regs lgs = XGPULIB_REGS_INIT;	/* live ones */
static uint64_t next_id = 1;		/* under lgs.mu */
/* held while callbacks run: an unregistration waits for them (the same
 * thread may unregister from a callback) */
static pthread_mutex_t run_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __thread bool delivering;

/* run the callback registered as id, if it still is */
static void run_one(uint64_t id, CUlogLevel level, char *msg, size_t len)
{
	CUlogsCallback fn = NULL;
	void *data = NULL;

	pthread_mutex_lock(&lgs.mu);
	for (struct xgpulib_reg *r = lgs.head; r; r = r->next) {
		struct CUlogsCallbackEntry_st *e = (void *)r;

		if (e->id == id && !r->busy) {
			fn = e->fn;
			data = e->data;
			break;
		}
	}
	pthread_mutex_unlock(&lgs.mu);
	if (fn)
		fn(data, level, msg, len);
}

static void deliver(void)
{
	uint32_t cap = xgpulib_chan_reply_max(xgpulib_ch) -
		       (uint32_t)sizeof(struct xgpuif_logs_take_reply);
	uint8_t *buf;

	if (delivering)
		return;
	buf = malloc(cap);
	if (!buf)
		return;
	delivering = true;
	pthread_mutex_lock(&run_mu);
	for (int round = 0; round < 64; round++) {
		struct xgpuif_logs_take_reply r = { 0 };
		uint32_t len = 0, off = 0;

		if (xgpulib_call_LOGS_TAKE(&r, buf, cap, &len))
			break;
		if (r.dropped)
			xgpulib_log("%llu message(s) of the driver's error log "
				    "were lost before the program's callbacks "
				    "got them (queue full)",
				    (unsigned long long)r.dropped);
		for (uint32_t i = 0; i < r.count; i++) {
			struct xgpuif_log_entry e;
			char msg[1025];

			if (len - off < sizeof(e))
				break;
			memcpy(&e, buf + off, sizeof(e));
			off += sizeof(e);
			if (e.len > 1024 || len - off < e.len)
				break;
			memcpy(msg, buf + off, e.len);
			msg[e.len] = '\0';
			off += (e.len + 7) & ~7u;
			run_one(e.id, (CUlogLevel)e.level, msg, e.len);
		}
		if (!r.waiting)
			break;
	}
	pthread_mutex_unlock(&run_mu);
	delivering = false;
	free(buf);
}

/* a message of the guest's own, to every callback (cuLogsDumpToFile) */
static void say(const char *msg)
{
	uint64_t ids[64];
	int n = 0;

	pthread_mutex_lock(&lgs.mu);
	for (struct xgpulib_reg *r = lgs.head; r && n < 64; r = r->next)
		if (!r->busy)
			ids[n++] = ((struct CUlogsCallbackEntry_st *)r)->id;
	pthread_mutex_unlock(&lgs.mu);
	pthread_mutex_lock(&run_mu);
	/* in the list's order, the newest first */
	for (int i = 0; i < n; i++) {
		char m[1100];

		snprintf(m, sizeof(m), "%s", msg);
		run_one(ids[i], CU_LOG_LEVEL_ERROR, m, strlen(m));
	}
	pthread_mutex_unlock(&run_mu);
}

XGPULIB_EXPORT CUresult cuLogsRegisterCallback(CUlogsCallback fn, void *data,
					       CUlogsCallbackHandle *out)
{
	struct xgpuif_logs_args a = { 0, 0, out == NULL };
	struct xgpuif_ref_reply r = { 0 };
	struct CUlogsCallbackEntry_st *e;
	CUresult rc = xgpulib_check_init();

	if (rc)
		return rc;
	if (!fn)	/* the driver refuses it, and logs why */
		return xgpulib_call_LOGS_REGISTER(&a, &r);
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->fn = fn;
	e->data = data;
	pthread_mutex_lock(&lgs.mu);
	e->id = next_id++;
	pthread_mutex_unlock(&lgs.mu);
	a.id = e->id;
	a.null_out = 0;
	xgpulib_logs_hook = deliver;	/* before any message can come */
	rc = xgpulib_call_LOGS_REGISTER(&a, &r);
	if (rc) {
		free(e);
		return rc;
	}
	e->reg.remote = r.ref;
	xgpulib_reg_add(&lgs, &e->reg);
	if (out)
		*out = e;
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle h)
{
	struct xgpuif_handle_args a = { 0 };
	struct xgpulib_reg *e;
	CUresult rc = xgpulib_check_init();

	if (rc)
		return rc;
	e = xgpulib_reg_take(&lgs, h);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	a.handle = e->remote;
	rc = xgpulib_call_LOGS_UNREGISTER(&a);
	xgpulib_reg_done(&lgs, e, rc == CUDA_SUCCESS);
	if (rc)
		return rc;
	/* a delivery under way (another thread's) ends before we return */
	pthread_mutex_lock(&run_mu);
	pthread_mutex_unlock(&run_mu);
	free(e);
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuLogsCurrent(CUlogIterator *out, unsigned int flags)
{
	struct xgpuif_logs_args a = { 0, flags, out == NULL };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc = xgpulib_check_init();

	if (rc)
		return rc;
	rc = xgpulib_call_LOGS_CURRENT(&a, &r);
	if (!rc && out)
		*out = (CUlogIterator)r.value;
	return rc;
}

/* the driver's dump from *it (all, without it) into buf of *size bytes */
static CUresult dump(CUlogIterator *it, char *buf, size_t *size,
		     unsigned int flags)
{
	struct xgpuif_logs_dump_args a = { 0, it ? *it : 0, it == NULL,
					   flags, 0 };
	struct xgpuif_logs_dump_reply r = { 0 };
	uint32_t cap = xgpulib_chan_reply_max(xgpulib_ch) -
		       (uint32_t)sizeof(r), len = 0;
	CUresult rc;

	if (cap > XGPUIF_LOGS_DUMP_MAX)
		cap = XGPUIF_LOGS_DUMP_MAX;
	if (*size < cap)
		cap = (uint32_t)*size;
	a.size = *size;
	/* the text lands in buf itself: cap is no more than *size */
	rc = xgpulib_call_LOGS_DUMP(&a, &r, buf, cap, &len);
	if (!rc && (r.bytes != len || (len && r.size + 1 != len)))
		rc = CUDA_ERROR_UNKNOWN;	/* a backend bug */
	if (!rc && !len && *size)
		buf[0] = '\0';	/* the driver always terminates it */
	*size = rc == CUDA_ERROR_UNKNOWN ? 0 : r.size;
	if (it && (!rc || rc == CUDA_ERROR_INVALID_VALUE))
		*it = r.iterator;
	return rc;
}

XGPULIB_EXPORT CUresult cuLogsDumpToMemory(CUlogIterator *it, char *buf,
					   size_t *size, unsigned int flags)
{
	CUresult rc = xgpulib_check_init();

	if (rc)
		return rc;
	if (!buf || !size)
		return CUDA_ERROR_INVALID_VALUE;
	return dump(it, buf, size, flags);
}

XGPULIB_EXPORT CUresult cuLogsDumpToFile(CUlogIterator *it, const char *path,
					 unsigned int flags)
{
	size_t size = XGPUIF_LOGS_DUMP_MAX;
	CUresult rc = xgpulib_check_init();
	char msg[1100], *buf;
	int fd;

	if (rc)
		return rc;
	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		snprintf(msg, sizeof(msg),
			 "Unable to open file at %s for dumping logs", path);
		say(msg);
		say("Returning 1 (CUDA_ERROR_INVALID_VALUE) from "
		    "cuLogsDumpToFile");
		return CUDA_ERROR_INVALID_VALUE;
	}
	buf = malloc(size);
	if (!buf) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rc = dump(it, buf, &size, flags);
	if (!rc && size) {
		buf[size++] = '\n';	/* each line ends, the last too */
		for (size_t off = 0; off < size;) {
			ssize_t n = write(fd, buf + off, size - off);

			if (n <= 0) {
				rc = CUDA_ERROR_OPERATING_SYSTEM;
				break;
			}
			off += (size_t)n;
		}
	}
	free(buf);
	if (close(fd) && !rc)
		rc = CUDA_ERROR_OPERATING_SYSTEM;
	return rc;
}

/* ---- core dump settings -------------------------------------------------- */

/*
 * cuCoredump{Get,Set}Attribute[Global]: the worker's driver judges and
 * keeps them (xgpub_op_logs.c), but for FILE and PIPE, paths of the
 * program's that are kept here (the driver says only whether the
 * attribute is one of the scope): per context (by its wire handle) and
 * for the process.  Their default is empty, as the driver's reads; a
 * process-wide path has its %p made the program's pid, as the driver
 * does.  Dumps cannot be turned on: a GPU core dump would be written
 * in Dom0 (CUDA_ERROR_NOT_PERMITTED).
 */
#define CD_PATHS	32

static struct cd_paths {
	uint64_t ctx;		/* the context's wire handle; 0: the process */
	char path[2][XGPUIF_CD_VALUE_MAX];	/* FILE, PIPE */
} cd[CD_PATHS];
static pthread_mutex_t cd_mu = PTHREAD_MUTEX_INITIALIZER;

/* the paths of ctx (0: the process's), made if new; NULL if full */
static struct cd_paths *cd_of(uint64_t ctx)
{
	struct cd_paths *free_one = NULL;

	for (int i = 0; i < CD_PATHS; i++) {
		if (cd[i].ctx == ctx && (ctx || i == 0))
			return &cd[i];
		if (!free_one && i && !cd[i].ctx)
			free_one = &cd[i];
	}
	if (free_one) {
		memset(free_one, 0, sizeof(*free_one));
		free_one->ctx = ctx;
	}
	return free_one;
}

/* p with each %p made this process's pid */
static void expand_pid(char *out, size_t cap, const char *p)
{
	size_t o = 0;

	for (; *p && o + 1 < cap; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			int n = snprintf(out + o, cap - o, "%ld",
					 (long)getpid());

			o = n < 0 || (size_t)n >= cap - o ? cap - 1 : o + n;
			p++;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
}

static CUresult cd_path(CUcoredumpSettings at, void *value, size_t *size,
			bool global, bool set, size_t want)
{
	char *p, tmp[XGPUIF_CD_VALUE_MAX];
	struct cd_paths *c;
	CUresult rc = CUDA_SUCCESS;

	if (!value) {
		if (set)
			return CUDA_ERROR_INVALID_VALUE;
		*size = want;
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&cd_mu);
	c = cd_of(global ? 0 : xgpulib_current_remote());
	if (!c) {
		pthread_mutex_unlock(&cd_mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p = c->path[at == CU_COREDUMP_PIPE];
	if (set) {
		snprintf(tmp, sizeof(tmp), "%.*s",
			 (int)(*size < sizeof(tmp) ? *size : sizeof(tmp) - 1),
			 (const char *)value);
		if (global)
			expand_pid(p, XGPUIF_CD_VALUE_MAX, tmp);
		else
			memcpy(p, tmp, sizeof(tmp));
	} else if (*size < strlen(p) + 1) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else {
		memcpy(value, p, strlen(p) + 1);
	}
	pthread_mutex_unlock(&cd_mu);
	return rc;
}

static CUresult coredump(CUcoredumpSettings at, void *value, size_t *size,
			 bool global, bool set)
{
	struct xgpuif_coredump_args a = {
		(uint32_t)at,
		(global ? XGPUIF_CD_GLOBAL : 0) | (set ? XGPUIF_CD_SET : 0) |
			(value ? 0 : XGPUIF_CD_NULL_VALUE) |
			(size ? 0 : XGPUIF_CD_NULL_SIZE),
		size ? *size : 0,
	};
	struct xgpuif_coredump_reply r = { 0 };
	bool path = at == CU_COREDUMP_FILE || at == CU_COREDUMP_PIPE;
	struct xgpuif_iov tail = { value, 0 };
	uint8_t got[XGPUIF_CD_VALUE_MAX];
	uint32_t len = 0;
	CUresult rc = xgpulib_check_init();

	if (rc)
		return rc;
	if (set && value && size && !path) {
		if (*size > XGPUIF_CD_VALUE_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		tail.len = (uint32_t)*size;
	}
	rc = xgpulib_call_COREDUMP_ATTR(&a, &tail, tail.len ? 1 : 0, &r,
					set || path ? NULL : got,
					sizeof(got), &len);
	if (rc)
		return rc;
	if (path)
		return size ? cd_path(at, value, size, global, set, r.size) :
			      CUDA_ERROR_INVALID_VALUE;
	if (size)
		*size = r.size;
	if (!set && value && len)
		memcpy(value, got, len);
	return CUDA_SUCCESS;
}

/* the four entry points: the context's or the process's, get or set */
#define CD_ENTRY(name, global, set)					\
	XGPULIB_EXPORT CUresult name(CUcoredumpSettings at, void *value, \
				     size_t *size)			\
	{								\
		return coredump(at, value, size, global, set);		\
	}

CD_ENTRY(cuCoredumpGetAttribute, false, false)
CD_ENTRY(cuCoredumpGetAttributeGlobal, true, false)
CD_ENTRY(cuCoredumpSetAttribute, false, true)
CD_ENTRY(cuCoredumpSetAttributeGlobal, true, true)

/* ---- process checkpoints ------------------------------------------------- */

/*
 * The checkpoint state of the program's own process: running, as the
 * driver answers for a process nobody locked or checkpointed (nothing
 * here can: the cuCheckpointProcess* calls that would are refused, as
 * the process's GPU state lives in its worker).  Another process's state
 * is not known here: CUDA_ERROR_NOT_SUPPORTED.
 */
XGPULIB_EXPORT CUresult cuCheckpointProcessGetState(int pid,
						    CUprocessState *state)
{
	CUresult rc = xgpulib_check_init();

	if (rc)
		return rc;
	if (!state)
		return CUDA_ERROR_INVALID_VALUE;
	if (pid != (int)getpid())
		return CUDA_ERROR_NOT_SUPPORTED;
	*state = CU_PROCESS_STATE_RUNNING;
	return CUDA_SUCCESS;
}
