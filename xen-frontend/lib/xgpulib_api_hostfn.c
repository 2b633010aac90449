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
 * thread, in the order their streams reach them.
 *
 * Graphs run host functions many times: a graph's host node, or a host
 * function launched on a capturing stream, names the function by a number
 * (xgpulib_hostfn_id: one per function, argument and, for callbacks,
 * stream, kept for the process's life).  When a graph reaches it the
 * worker takes one of the NGRAPH slots after ours, writes the number and
 * DUE and holds the graph until the helper has run the function (DONE).
 * Once this process has made such a number the helper polls those slots
 * even while no launch of ours is pending (sleeping up to 1 ms when idle).
 *
 * Async notifications (cuDeviceRegisterAsyncNotification) come the same
 * way: a registration is a number of its own (xgpulib_notify_id); the
 * worker's callback writes it with the notification's type and info into
 * a graph slot, and the helper runs the program's callback.  Forgetting a
 * number waits while the helper runs it, so that no call follows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"
#include "xgpulib_mco.h"

#define NSLOTS 64u
#define NGRAPH 64u	/* the worker's slots, after ours */

struct pending {
	CUhostFn fn;
	CUstreamCallback cb;
	CUstream stream;
	void *user;
	CUasyncCallback notify;		/* an async notification's */
	CUasyncCallbackHandle nh;	/* its handle */
};

static pthread_mutex_t hf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hf_cv = PTHREAD_COND_INITIALIZER;
static struct xgpuif_hostfn_slot *slots;	/* shared with the worker */
static struct pending pend[NSLOTS];
static unsigned int npending;			/* slots QUEUED or DUE */
static bool started;
static CUresult setup_rc;

/* host functions by number, for graphs (index: number - 1) */
static struct pending *fns;
static uint64_t nfns, capfns;
static bool graph_fns;			/* some number was made */
static uint64_t running_id;		/* the graph slot's number running */
static pthread_t helper_thread;

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* whether the transport keeps the worker's copy of the slots in step
 * (the network) rather than sharing them */
static bool mirrored(void)
{
	return xgpulib_ch->t->ops->hostfn_area != NULL;
}

/*
 * The slot whose function this thread runs (-1: none), and the data
 * area's bytes that go to the worker with its DONE (len 0: none), where
 * the slots are mirrored: xgpulib_hostfn_push, _pull.
 */
static __thread int run_slot = -1;
static __thread size_t push_off, push_len;

/* slot i's function ran: DONE, and the worker's copy told (after the
 * bytes the function pushed) */
static void done(unsigned int i)
{
	size_t off = push_off, len = push_len;

	push_len = 0;
	__atomic_store_n(&slots[i].state, XGPUIF_HF_DONE, __ATOMIC_RELEASE);
	if (mirrored() &&
	    xgpulib_ch->t->ops->hostfn_ship(xgpulib_ch->t, i, off, len))
		xgpulib_dbg("host function slot %u: DONE not shipped (the "
			    "connection is gone)", i);
}

/* this thread starts running slot i's function (-1: it ended) */
static void running(int i)
{
	run_slot = i;
	push_len = 0;
}

int xgpulib_hostfn_running(void)
{
	return run_slot;
}

bool xgpulib_hostfn_push(size_t off, size_t len)
{
	if (run_slot < 0 || !mirrored())
		return false;
	push_off = off;
	push_len = len;
	return true;
}

CUresult xgpulib_hostfn_ask(unsigned int i, uint32_t state, uint64_t dptr,
			    const struct xgpuif_memref *mem, size_t ship)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct xgpuif_hostfn_slot *s = &slots[i];
	struct timespec ts = { 0, 0 };
	unsigned int spins = 0;

	if (mem->len > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	s->mc_dptr = dptr;
	s->mc_off = mem->off;
	s->mc_len = (uint32_t)mem->len;
	s->mc_region = mem->region;
	s->mc_status = 0;
	__atomic_store_n(&s->state, state, __ATOMIC_RELEASE);
	/* the network: the worker's copy of the slot is told, after the
	 * bytes it is to take */
	if (mirrored() && t->ops->hostfn_ship(t, i, mem->off, ship))
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	/* (the bytes the worker sends, FILL, come before DUE) */
	while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != XGPUIF_HF_DUE) {
		if (++spins < 4000)
			continue;
		ts.tv_nsec = 20000;
		nanosleep(&ts, NULL);
	}
	return (CUresult)s->mc_status;
}

CUresult xgpulib_hostfn_pull(size_t off, size_t len)
{
	const struct xgpuif_memref mem = { off, len, XGPUIF_REGION_DATA, 0 };

	if (run_slot < 0 || !mirrored())
		return CUDA_ERROR_INVALID_VALUE;
	/* no managed address: the data area's bytes alone */
	return xgpulib_hostfn_ask((unsigned int)run_slot, XGPUIF_HF_FETCH, 0,
				  &mem, 0);
}

/* run the graph slots' DUE functions; how many ran */
static unsigned int run_graph_due(void)
{
	unsigned int ran = 0;

	for (unsigned int i = NSLOTS; i < NSLOTS + NGRAPH; i++) {
		struct pending p = { 0 };
		uint64_t id;

		if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) !=
		    XGPUIF_HF_DUE)
			continue;
		id = slots[i].fnid;
		pthread_mutex_lock(&hf_mu);
		if (id && id <= nfns)
			p = fns[id - 1];
		running_id = id;
		pthread_mutex_unlock(&hf_mu);
		running((int)i);
		if (p.notify) {
			CUasyncNotificationInfo info;

			memset(&info, 0, sizeof(info));
			info.type = (CUasyncNotificationType)slots[i].nt_type;
			memcpy(&info.info, &slots[i].nt_info,
			       sizeof(info.info));
			p.notify(&info, p.user, p.nh);
		} else if (p.cb) {
			p.cb(p.stream, (CUresult)slots[i].status, p.user);
		} else if (p.fn) {
			p.fn(p.user);
		} else {
			xgpulib_dbg("graph host function %llu: unknown",
				    (unsigned long long)id);
		}
		/* what it wrote reaches the managed memory before its
		 * stream goes on (through its slot still) */
		xgpulib_mco_hostfn_end();
		run_slot = -1;
		pthread_mutex_lock(&hf_mu);
		running_id = 0;
		pthread_mutex_unlock(&hf_mu);
		pthread_cond_broadcast(&hf_cv);
		done(i);
		ran++;
	}
	return ran;
}

/* run every DUE slot's function; how many ran */
static unsigned int run_due(void)
{
	unsigned int ran = 0;

	if (__atomic_load_n(&graph_fns, __ATOMIC_ACQUIRE))
		ran += run_graph_due();

	for (unsigned int i = 0; i < NSLOTS; i++) {
		struct pending p;

		if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) !=
		    XGPUIF_HF_DUE)
			continue;
		pthread_mutex_lock(&hf_mu);
		p = pend[i];
		pthread_mutex_unlock(&hf_mu);
		running((int)i);
		if (p.cb)
			p.cb(p.stream, (CUresult)slots[i].status, p.user);
		else if (p.fn)
			p.fn(p.user);
		/* what it wrote reaches the managed memory before its
		 * stream goes on (through its slot still) */
		xgpulib_mco_hostfn_end();
		run_slot = -1;
		pthread_mutex_lock(&hf_mu);
		memset(&pend[i], 0, sizeof(pend[i]));
		npending--;
		pthread_mutex_unlock(&hf_mu);
		done(i);
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
		long most;

		pthread_mutex_lock(&hf_mu);
		while (!npending && !graph_fns)
			pthread_cond_wait(&hf_cv, &hf_mu);
		/* graph host functions only: nothing of ours is queued */
		most = npending ? 200000 : 1000000;
		pthread_mutex_unlock(&hf_mu);
		if (run_due()) {
			idle = 0;
			sleep_ns = 0;
			continue;
		}
		if (++idle < 200)
			continue;	/* a few microseconds of spinning */
		sleep_ns = sleep_ns ? sleep_ns * 2 : 10000;
		if (sleep_ns > most)
			sleep_ns = most;
		nap(sleep_ns);
	}
	return NULL;
}

/* the slots in pinned memory, a host-memory region the worker maps */
static CUresult shared_page(void **page, struct xgpuif_hostfn_setup_args *a)
{
	const struct xgpulib_region *r;
	uint64_t off;
	CUresult rc;

	rc = xgpulib_pinned_alloc(page, (NSLOTS + NGRAPH) * sizeof(*slots),
				  0);
	if (rc)
		return rc;
	r = xgpulib_region_find(*page, 1, &off);
	if (!r || off)
		return CUDA_ERROR_UNKNOWN;
	a->region = r->id;
	return CUDA_SUCCESS;
}

/* no memory to share (the network): the slots in this process's memory,
 * the transport keeping the worker's copy in step with them */
static CUresult mirrored_page(void **page,
			      struct xgpuif_hostfn_setup_args *a)
{
	*page = calloc(NSLOTS + NGRAPH, sizeof(*slots));
	if (!*page)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (xgpulib_ch->t->ops->hostfn_area(xgpulib_ch->t, *page,
					    NSLOTS + NGRAPH)) {
		free(*page);
		return CUDA_ERROR_UNKNOWN;
	}
	a->region = XGPUIF_HOSTFN_MIRRORED;
	return CUDA_SUCCESS;
}

/* the slot page and the helper, once; CUresult */
static CUresult setup(void)
{
	struct xgpuif_hostfn_setup_args a = { 0, NSLOTS, NGRAPH, 0 };
	pthread_t t;
	pthread_attr_t at;
	void *page = NULL;
	CUresult rc;

	if (started)
		return setup_rc;
	started = true;
	rc = mirrored() ? mirrored_page(&page, &a) : shared_page(&page, &a);
	if (rc == CUDA_SUCCESS) {
		memset(page, 0, (NSLOTS + NGRAPH) * sizeof(*slots));
		rc = xgpulib_call_HOSTFN_SETUP(&a);
	}
	if (rc == CUDA_SUCCESS) {
		slots = page;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, helper, NULL))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else
			helper_thread = t;
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

/* the number of p's function (made once; an async notification's always
 * anew), 0 if there is no memory */
static uint64_t fn_id(const struct pending *p)
{
	uint64_t id = 0;

	pthread_mutex_lock(&hf_mu);
	if (setup() == CUDA_SUCCESS) {
		for (uint64_t i = 0; i < nfns && !id && !p->notify; i++)
			if (fns[i].fn == p->fn && fns[i].cb == p->cb &&
			    fns[i].user == p->user &&
			    (!p->cb || fns[i].stream == p->stream))
				id = i + 1;
		if (!id && nfns == capfns) {
			uint64_t ncap = capfns ? capfns * 2 : 64;
			struct pending *n = realloc(fns, ncap * sizeof(*n));

			if (n) {
				fns = n;
				capfns = ncap;
			}
		}
		if (!id && nfns < capfns) {
			fns[nfns++] = *p;
			id = nfns;
		}
		if (id) {
			__atomic_store_n(&graph_fns, true, __ATOMIC_RELEASE);
			pthread_cond_broadcast(&hf_cv);
		}
	}
	pthread_mutex_unlock(&hf_mu);
	return id;
}

uint64_t xgpulib_notify_id(CUasyncCallback cb, void *user,
			   CUasyncCallbackHandle h, CUresult *rc)
{
	struct pending p = { .notify = cb, .user = user, .nh = h };
	uint64_t id = fn_id(&p);

	*rc = id ? CUDA_SUCCESS :
		   setup_rc ? setup_rc : CUDA_ERROR_OUT_OF_MEMORY;
	return id;
}

void xgpulib_notify_forget(uint64_t id)
{
	pthread_mutex_lock(&hf_mu);
	if (id && id <= nfns)
		memset(&fns[id - 1], 0, sizeof(fns[id - 1]));
	/* the callback itself may not unregister (CUDA's rule): no wait
	 * on the helper's own thread */
	while (running_id == id && started && !setup_rc &&
	       !pthread_equal(pthread_self(), helper_thread))
		pthread_cond_wait(&hf_cv, &hf_mu);
	pthread_mutex_unlock(&hf_mu);
}

uint64_t xgpulib_hostfn_id(CUhostFn fn, void *user)
{
	struct pending p = { .fn = fn, .user = user };

	return fn ? fn_id(&p) : 0;
}

bool xgpulib_hostfn_of(uint64_t id, CUhostFn *fn, void **user)
{
	bool ok = false;

	pthread_mutex_lock(&hf_mu);
	if (id && id <= nfns && fns[id - 1].fn) {
		*fn = fns[id - 1].fn;
		*user = fns[id - 1].user;
		ok = true;
	}
	pthread_mutex_unlock(&hf_mu);
	return ok;
}

/* a host function on a capturing stream: a host node of its graph */
static CUresult capture(const struct pending *p, uint64_t stream)
{
	struct xgpuif_hostfn_capture_args a = { stream, fn_id(p),
						p->cb != NULL, 0 };

	if (!a.fnid)
		return setup_rc ? setup_rc : CUDA_ERROR_OUT_OF_MEMORY;
	return xgpulib_call_HOSTFN_CAPTURE(&a);
}

static CUresult launch(CUstream s, const struct pending *p, int ptds)
{
	struct xgpuif_hostfn_launch_args a = { 0, 0, p->cb != NULL };
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	if (rc)
		return rc;
	if (!p->fn && !p->cb)
		return CUDA_ERROR_INVALID_VALUE;
	/* a stream can be capturing only once this process began a capture */
	if (xgpulib_captures_begun()) {
		rc = xgpulib_capture_info(s, &st, NULL, ptds);
		if (rc)
			return rc;
		if (st != CU_STREAM_CAPTURE_STATUS_NONE)
			return capture(p, a.stream);
	}
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
