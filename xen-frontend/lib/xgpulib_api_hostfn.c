// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_hostfn.c: host functions (cuLaunchHostFunc) and stream
 * callbacks (cuStreamAddCallback) run in this process, in stream order.
 *
 * At the first one the library allocates a page of pinned memory (a
 * host-memory region the worker maps) holding NSLOTS slots
 * (struct xgpuif_hostfn_slot) and starts a helper thread.  A launch takes
 * a free slot, notes the function and its argument here and posts
 * HOSTFN_LAUNCH; the worker's callback on the stream marks the slot DUE
 * and holds the stream; the helper thread runs the function and marks the
 * slot DONE, and the worker frees it.  While no host function is pending
 * the helper sleeps on a condition variable: an idle process costs
 * nothing.  While some are, it polls the slots, spinning briefly then
 * sleeping 10 us to 200 us.
 *
 * As natively, a host function must not call CUDA; one that never returns
 * holds its stream (only this process's).  All run on the one helper
 * thread, in the order their streams reach them.  Host functions cannot be
 * captured into a graph (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"

#define NSLOTS 64u

struct pending {
	CUhostFn fn;
	CUstreamCallback cb;
	CUstream stream;
	void *user;
};

static pthread_mutex_t hf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hf_cv = PTHREAD_COND_INITIALIZER;
static struct xgpuif_hostfn_slot *slots;	/* shared with the worker */
static struct pending pend[NSLOTS];
static unsigned int npending;			/* slots QUEUED or DUE */
static bool started;
static CUresult setup_rc;

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* run every DUE slot's function; how many ran */
static unsigned int run_due(void)
{
	unsigned int ran = 0;

	for (unsigned int i = 0; i < NSLOTS; i++) {
		struct pending p;

		if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) !=
		    XGPUIF_HF_DUE)
			continue;
		pthread_mutex_lock(&hf_mu);
		p = pend[i];
		pthread_mutex_unlock(&hf_mu);
		if (p.cb)
			p.cb(p.stream, (CUresult)slots[i].status, p.user);
		else if (p.fn)
			p.fn(p.user);
		pthread_mutex_lock(&hf_mu);
		memset(&pend[i], 0, sizeof(pend[i]));
		npending--;
		pthread_mutex_unlock(&hf_mu);
		__atomic_store_n(&slots[i].state, XGPUIF_HF_DONE,
				 __ATOMIC_RELEASE);
		pthread_cond_broadcast(&hf_cv);
		ran++;
	}
	return ran;
}

static void *helper(void *arg)
{
	long sleep_ns = 0;
	unsigned int idle = 0;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&hf_mu);
		while (!npending)
			pthread_cond_wait(&hf_cv, &hf_mu);
		pthread_mutex_unlock(&hf_mu);
		if (run_due()) {
			idle = 0;
			sleep_ns = 0;
			continue;
		}
		if (++idle < 200)
			continue;	/* a few microseconds of spinning */
		sleep_ns = sleep_ns ? sleep_ns * 2 : 10000;
		if (sleep_ns > 200000)
			sleep_ns = 200000;
		nap(sleep_ns);
	}
	return NULL;
}

/* the slot page and the helper, once; CUresult */
static CUresult setup(void)
{
	struct xgpuif_hostfn_setup_args a = { 0, NSLOTS };
	const struct xgpulib_region *r;
	pthread_t t;
	pthread_attr_t at;
	uint64_t off;
	void *page = NULL;
	CUresult rc;

	if (started)
		return setup_rc;
	started = true;
	rc = cuMemHostAlloc(&page, NSLOTS * sizeof(*slots), 0);
	if (rc == CUDA_SUCCESS) {
		r = xgpulib_region_find(page, 1, &off);
		if (!r || off)
			rc = CUDA_ERROR_UNKNOWN;
		else
			a.region = r->id;
	}
	if (rc == CUDA_SUCCESS) {
		memset(page, 0, NSLOTS * sizeof(*slots));
		rc = xgpulib_call_HOSTFN_SETUP(&a);
	}
	if (rc == CUDA_SUCCESS) {
		slots = page;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, helper, NULL))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		pthread_attr_destroy(&at);
	}
	if (rc)
		xgpulib_dbg("host functions: set-up failed (%d)", (int)rc);
	setup_rc = rc;
	return rc;
}

/* a FREE slot, taken (QUEUED) for p; waits while all are busy */
static CUresult take_slot(const struct pending *p, uint32_t *slot)
{
	CUresult rc;

	pthread_mutex_lock(&hf_mu);
	rc = setup();
	while (rc == CUDA_SUCCESS) {
		for (uint32_t i = 0; i < NSLOTS; i++) {
			uint32_t st = XGPUIF_HF_FREE;

			if (pend[i].fn || pend[i].cb)
				continue;
			if (__atomic_compare_exchange_n(
				    &slots[i].state, &st, XGPUIF_HF_QUEUED,
				    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				pend[i] = *p;
				npending++;
				*slot = i;
				pthread_mutex_unlock(&hf_mu);
				pthread_cond_broadcast(&hf_cv);
				return CUDA_SUCCESS;
			}
		}
		/* all busy: the worker frees slots as their functions end */
		pthread_mutex_unlock(&hf_mu);
		nap(20000);
		pthread_mutex_lock(&hf_mu);
	}
	pthread_mutex_unlock(&hf_mu);
	return rc;
}

static void drop_slot(uint32_t slot)
{
	pthread_mutex_lock(&hf_mu);
	memset(&pend[slot], 0, sizeof(pend[slot]));
	npending--;
	__atomic_store_n(&slots[slot].state, XGPUIF_HF_FREE, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hf_mu);
}

static CUresult launch(CUstream s, const struct pending *p, int ptds)
{
	struct xgpuif_hostfn_launch_args a = { 0, 0, p->cb != NULL };
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if (!p->fn && !p->cb)
		return CUDA_ERROR_INVALID_VALUE;
	rc = take_slot(p, &a.slot);
	if (rc)
		return rc;
	rc = xgpulib_post_HOSTFN_LAUNCH(&a);
	if (rc)
		drop_slot(a.slot);
	return rc;
}

CUresult xgpulib_launch_host_func(CUstream s, CUhostFn fn, void *user,
				  int ptds)
{
	struct pending p = { .fn = fn, .stream = s, .user = user };

	return launch(s, &p, ptds);
}

CUresult xgpulib_stream_add_callback(CUstream s, CUstreamCallback cb,
				     void *user, unsigned int flags, int ptds)
{
	struct pending p = { .cb = cb, .stream = s, .user = user };

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(s, &p, ptds);
}
