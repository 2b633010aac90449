// SPDX-License-Identifier: MIT
/*
 * fakecuda_ext.c: the fake driver's async notifications and hardware
 * decompression (tests only, see fakecuda.h).
 *
 * The fake's device memory budget is half its memory: an allocation that
 * takes the process over it (from under it) sends every registered
 * callback an OVER_BUDGET notification with the bytes above it, from a
 * thread of the fake's own, as the driver does.  Unregistering waits for
 * a notification being delivered: no call follows it.
 *
 * Its "decompression" is the identity (a stored block): each entry copies
 * min(srcNumBytes, dstNumBytes) bytes and records the count.  Entries are
 * checked in order and the first bad one's index is the errorIndex.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define NOTIFY_MAGIC 0x666e7479u	/* "fnty" */
#define FAKE_BUDGET (FAKE_TOTAL_MEM / 2)

struct fnotify {
	uint32_t magic;
	CUasyncCallback cb;
	void *user;
	struct fnotify *next;
};

static pthread_mutex_t nt_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fnotify *nts;
static bool over;

CUresult cuDeviceRegisterAsyncNotification(CUdevice dev, CUasyncCallback cb,
					   void *user,
					   CUasyncCallbackHandle *out)
{
	struct fnotify *n;

	NEED_INIT();
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!cb || !out)
		return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->magic = NOTIFY_MAGIC;
	n->cb = cb;
	n->user = user;
	pthread_mutex_lock(&nt_mu);
	n->next = nts;
	nts = n;
	pthread_mutex_unlock(&nt_mu);
	*out = (CUasyncCallbackHandle)n;
	return CUDA_SUCCESS;
}

CUresult cuDeviceUnregisterAsyncNotification(CUdevice dev,
					     CUasyncCallbackHandle h)
{
	struct fnotify **pp;

	NEED_INIT();
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&nt_mu);
	for (pp = &nts; *pp; pp = &(*pp)->next) {
		if (*pp == (struct fnotify *)h) {
			struct fnotify *n = *pp;

			*pp = n->next;
			pthread_mutex_unlock(&nt_mu);
			n->magic = 0;
			free(n);
			return CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&nt_mu);
	return CUDA_ERROR_INVALID_VALUE;
}

static void *notify_thread(void *arg)
{
	CUasyncNotificationInfo info;

	memset(&info, 0, sizeof(info));
	info.type = CU_ASYNC_NOTIFICATION_TYPE_OVER_BUDGET;
	info.info.overBudget.bytesOverBudget = (uintptr_t)arg;
	pthread_mutex_lock(&nt_mu);
	for (struct fnotify *n = nts; n; n = n->next)
		n->cb(&info, n->user, (CUasyncCallbackHandle)n);
	pthread_mutex_unlock(&nt_mu);
	return NULL;
}

void fc_budget_note(void)
{
	pthread_attr_t at;
	pthread_t t;

	if (fc_mem_used <= FAKE_BUDGET) {
		over = false;
		return;
	}
	if (over)
		return;
	over = true;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_create(&t, &at, notify_thread,
		       (void *)(uintptr_t)(fc_mem_used - FAKE_BUDGET));
	pthread_attr_destroy(&at);
}

CUresult cuMemBatchDecompressAsync(CUmemDecompressParams *p, size_t count,
				   unsigned int flags, size_t *index,
				   CUstream s)
{
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (!rc && (!p || !count || flags))
		rc = CUDA_ERROR_INVALID_VALUE;
	/* an error of no one entry's */
	if (rc) {
		if (index)
			*index = SIZE_MAX;
		return rc;
	}
	for (size_t i = 0; i < count; i++) {
		size_t n = p[i].srcNumBytes < p[i].dstNumBytes ?
				   p[i].srcNumBytes : p[i].dstNumBytes;
		bool pad = false;

		for (size_t k = 0; k < sizeof(p[i].padding); k++)
			pad |= p[i].padding[k] != 0;
		if (pad || p[i].algo != CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE ||
		    !fc_dev_ok((CUdeviceptr)(uintptr_t)p[i].src,
			       p[i].srcNumBytes) ||
		    !fc_dev_ok((CUdeviceptr)(uintptr_t)p[i].dst,
			       p[i].dstNumBytes) ||
		    !fc_dev_ok((CUdeviceptr)(uintptr_t)p[i].dstActBytes,
			       sizeof(cuuint32_t))) {
			if (index)
				*index = i;
			return CUDA_ERROR_INVALID_VALUE;
		}
		memmove(p[i].dst, p[i].src, n);
		*p[i].dstActBytes = (cuuint32_t)n;
	}
	return CUDA_SUCCESS;
}
