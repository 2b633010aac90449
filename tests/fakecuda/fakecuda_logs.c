// SPDX-License-Identifier: MIT
/*
 * fakecuda_logs.c: the fake driver's error log (tests only, see
 * fakecuda.h), shaped as the real driver's (measured on the H200, CUDA
 * 13): an error the fake returns from cuMemAlloc_v2 or
 * cuModuleGetFunction becomes the message "Returning N (NAME) from FN",
 * handed to every registered callback on the calling thread before the
 * call returns, and kept as a line "[time][thread][CUDA][E] message" in
 * a log of at most LOG_BYTES that cuLogsDumpToMemory reads from an
 * iterator (the number of messages before the one to read).  Registering
 * no callback is refused and logged, as the driver does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define LOG_BYTES	25600
#define MAX_LINES	256

struct fcb {
	CUlogsCallback fn;
	void *data;
	struct fcb *next;
};

static pthread_mutex_t lg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fcb *cbs;
static char *lines[MAX_LINES];	/* message i at i % MAX_LINES */
static unsigned int nlines;	/* messages ever logged */

static void log_msg(const char *msg)
{
	struct fcb *c;
	char *line;

	pthread_mutex_lock(&lg_mu);
	if (asprintf(&line, "[00:00:00.000][1][CUDA][E] %s", msg) >= 0) {
		free(lines[nlines % MAX_LINES]);
		lines[nlines % MAX_LINES] = line;
		nlines++;
	}
	for (c = cbs; c; c = c->next)
		c->fn(c->data, CU_LOG_LEVEL_ERROR, (char *)msg, strlen(msg));
	pthread_mutex_unlock(&lg_mu);
}

CUresult fc_log_return(const char *fn, CUresult rc)
{
	const char *name = NULL;
	char msg[160];

	if (rc == CUDA_SUCCESS)
		return rc;
	cuGetErrorName(rc, &name);
	snprintf(msg, sizeof(msg), "Returning %d (%s) from %s", (int)rc,
		 name ? name : "?", fn);
	log_msg(msg);
	return rc;
}

CUresult cuLogsRegisterCallback(CUlogsCallback fn, void *data,
				CUlogsCallbackHandle *out)
{
	struct fcb *c;

	if (!fn) {
		log_msg("callbackFunc cannot be NULL");
		return fc_log_return("cuLogsRegisterCallback",
				     CUDA_ERROR_INVALID_VALUE);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->fn = fn;
	c->data = data;
	pthread_mutex_lock(&lg_mu);
	c->next = cbs;
	cbs = c;
	pthread_mutex_unlock(&lg_mu);
	if (out)
		*out = (CUlogsCallbackHandle)c;
	return CUDA_SUCCESS;
}

CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle h)
{
	struct fcb **pp;

	pthread_mutex_lock(&lg_mu);
	for (pp = &cbs; *pp; pp = &(*pp)->next) {
		if (*pp == (struct fcb *)h) {
			struct fcb *c = *pp;

			*pp = c->next;
			pthread_mutex_unlock(&lg_mu);
			free(c);
			return CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&lg_mu);
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLogsCurrent(CUlogIterator *out, unsigned int flags)
{
	(void)flags;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lg_mu);
	*out = nlines;
	pthread_mutex_unlock(&lg_mu);
	return CUDA_SUCCESS;
}

CUresult cuLogsDumpToMemory(CUlogIterator *it, char *buf, size_t *size,
			    unsigned int flags)
{
	unsigned int from, first;
	size_t len = 0;

	(void)flags;
	if (!buf || !size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lg_mu);
	first = nlines > MAX_LINES ? nlines - MAX_LINES : 0;
	from = it && *it > first ? *it : first;
	if (from > nlines)
		from = nlines;
	for (unsigned int i = from; i < nlines; i++) {
		size_t l = strlen(lines[i % MAX_LINES]);

		if (len + l + 1 >= *size || len + l + 1 > LOG_BYTES)
			break;
		memcpy(buf + len, lines[i % MAX_LINES], l);
		len += l;
		buf[len++] = '\n';
		from = i + 1;
	}
	pthread_mutex_unlock(&lg_mu);
	if (!len && from < nlines) {
		*size = 0;
		log_msg("Provided buffer is not large enough to write any "
			"logs to");
		return fc_log_return("cuLogsDumpToMemory",
				     CUDA_ERROR_INVALID_VALUE);
	}
	if (len)
		len--;	/* no newline after the last */
	buf[len] = '\0';
	*size = len;
	if (it)
		*it = from;
	return CUDA_SUCCESS;
}

/*
 * Core dump settings, shaped as the real driver's (H200, CUDA 13): a
 * value's size must be the attribute's (1 for the booleans, 4 for the
 * generation flags, 1024 for the paths); PIPE and ENABLE_USER_TRIGGER
 * are the process's only.  One set of values serves both scopes here.
 */
static unsigned char cd_bool[CU_COREDUMP_MAX] = {
	[CU_COREDUMP_TRIGGER_HOST] = 1,
};
static unsigned int cd_flags;
static char cd_path[2][1024];

static size_t cd_size(CUcoredumpSettings a, bool global)
{
	switch (a) {
	case CU_COREDUMP_ENABLE_ON_EXCEPTION:
	case CU_COREDUMP_TRIGGER_HOST:
	case CU_COREDUMP_LIGHTWEIGHT:
		return 1;
	case CU_COREDUMP_ENABLE_USER_TRIGGER:
		return global ? 1 : 0;
	case CU_COREDUMP_FILE:
		return 1024;
	case CU_COREDUMP_PIPE:
		return global ? 1024 : 0;
	case CU_COREDUMP_GENERATION_FLAGS:
		return 4;
	default:
		return 0;
	}
}

static CUresult cd_attr(CUcoredumpSettings a, void *v, size_t *size,
			bool global, bool set)
{
	size_t want = cd_size(a, global);

	if (!want || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!v) {
		if (set)
			return CUDA_ERROR_INVALID_VALUE;
		*size = want;
		return CUDA_SUCCESS;
	}
	if (want == 1024) {
		char *p = cd_path[a == CU_COREDUMP_PIPE];

		if (set)
			snprintf(p, 1024, "%.*s", (int)(*size < 1024 ? *size :
							 1023), (char *)v);
		else if (*size < strlen(p) + 1)
			return CUDA_ERROR_INVALID_VALUE;
		else
			memcpy(v, p, strlen(p) + 1);
		return CUDA_SUCCESS;
	}
	if (*size != want)
		return CUDA_ERROR_INVALID_VALUE;
	if (a == CU_COREDUMP_GENERATION_FLAGS) {
		if (set)
			memcpy(&cd_flags, v, 4);
		else
			memcpy(v, &cd_flags, 4);
	} else if (set) {
		cd_bool[a] = *(unsigned char *)v;
	} else {
		*(unsigned char *)v = cd_bool[a];
	}
	return CUDA_SUCCESS;
}

CUresult cuCoredumpGetAttribute(CUcoredumpSettings a, void *v, size_t *size)
{
	NEED_CTX();
	return cd_attr(a, v, size, false, false);
}

CUresult cuCoredumpGetAttributeGlobal(CUcoredumpSettings a, void *v,
				      size_t *size)
{
	return cd_attr(a, v, size, true, false);
}

CUresult cuCoredumpSetAttribute(CUcoredumpSettings a, void *v, size_t *size)
{
	NEED_CTX();
	return cd_attr(a, v, size, false, true);
}

CUresult cuCoredumpSetAttributeGlobal(CUcoredumpSettings a, void *v,
				      size_t *size)
{
	return cd_attr(a, v, size, true, true);
}
