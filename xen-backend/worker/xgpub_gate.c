// SPDX-License-Identifier: MIT
/*
 * xgpub_gate.c: dispatch control in a worker (the worker's half of the
 * GPU scheduler; the daemon's half is xgpub_sched_glue.c).
 *
 * The daemon gives the GPU to one guest at a time (scheduler/xgpu_sched.h):
 * it sets `grant` in the worker's shared slot.  Before the worker submits
 * GPU work (a launch, a copy, a memset) it waits for the grant; after it,
 * it marks the work with an event on the same stream, in batches sized so
 * that a batch is about MARK_NS of GPU time (one event per long kernel,
 * one per many tiny ones, so a lone guest pays next to nothing).  At most
 * MAX_MARKS batches are in flight, and only one when a batch takes more
 * than LONG_NS (a long kernel is a batch of its own), so a revoked guest
 * drains within about MAX_MARKS x MARK_NS or one long kernel: that is the
 * granularity of GPU sharing, since kernels cannot be preempted.  A
 * guest alone on the GPU has coarser marks (SOLO_MARK_NS, fewer events)
 * with the same bound on what a newcomer waits for.  A mark's events on
 * streams that wait for values (cuStreamWaitValue*) are set aside by the
 * completion thread and asked every millisecond instead: such work may
 * wait for the guest's own later work on another stream, so it must not
 * hold the bound (it stays busy work, charged when it completes, time
 * spent waiting included).  (With
 * two 20 ms kernels in flight a turn was 40 ms, longer than the credit
 * period.)  A completion thread waits for
 * each mark and adds the time between completions to gpu_ns: while the
 * guest holds the GPU alone, that is the GPU time its work took.
 *
 * Deadlines (the daemon's, xgpub_sched_glue.c): a guest that does not
 * drain soon after its turn ends is passed over, and one whose oldest
 * work in flight (`gpu_since`) or whose submission (`call_since`) has run
 * longer than the host's limit gets SIGUSR2: the worker tells the guest why in the
 * ring header (XGPUIF_FAULT_TIMEOUT) and exits; the driver then tears
 * its contexts down.
 *
 * A circle of calls, kept on purpose: the worker (xgpub_worker.c) puts
 * every GPU op through this gate, and the gate, before it blocks,
 * publishes the replies the worker held back (xgpub_publish_held) and
 * reads the worker's own status slot; the synchronize handlers
 * (xgpub_op_stream.c, and through them the green contexts of
 * xgpub_op_green.c, which the worker tears down at the end) wait here.
 * Cutting it would hide the batching of replies behind a callback that
 * only this file would call.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_worker.h"

#define MAX_MARKS	2
#define MARK_NS		1000000u	/* 1 ms of GPU work per mark */
/*
 * Alone on the GPU nobody waits for a drain: a mark then covers
 * SOLO_MARK_NS, SOLO_MARKS of them in flight (the same 8 ms a second
 * guest may wait for as 8 marks of 1 ms), so a lone guest of short ops
 * pays a quarter of the events.
 */
#define SOLO_MARK_NS	(4 * MARK_NS)
#define SOLO_MARKS	2
#define LONG_NS		(2 * MARK_NS)
#define MAX_BATCH	64u
/*
 * Ops a mark may cover when they are short enough (the estimate allows
 * more than MAX_BATCH) and the batch spread them over many streams: a
 * mark costs an event per stream, so a batch of ops issued round-robin
 * over 32 streams closes at 16 ops per stream rather than at 64 ops (an
 * event for every second op), up to WIDE_BATCH ops, still about a mark's
 * GPU time by the estimate.
 */
#define OPS_PER_EVENT	16u
#define WIDE_BATCH	(8 * MAX_BATCH)
/*
 * Alone on the GPU, four times that: a mark is about a mark's GPU time
 * by the estimate either way (the bound on what a newcomer waits for is
 * the same), and launch-bound work over 32 streams paid 32 records and
 * 32 waits every 271 ops (one H200 run: 11,322 events for 178,400 ops).
 */
#define SOLO_OPS_PER_EVENT	(4 * OPS_PER_EVENT)
#define SOLO_WIDE_BATCH		(4 * WIDE_BATCH)
/*
 * Alone and under no GPU time limit, a mark is bounded by the estimate
 * alone, up to OPEN_OPS_PER_EVENT ops a stream (OPEN_WIDE_BATCH in all):
 * a launch loop on one stream closed a mark every 64 launches (MAX_BATCH,
 * about 0.3 ms of the H200's launches where the estimate allowed 4 ms),
 * and paid 13% of its launch time for them (the marks' records, and the
 * completer's late wake-ups holding the bound; H200, turns of the launch
 * benchmark: 0.87 of the time with this, 0.885 with the scheduler off,
 * 0.99 of native's).  A daemon's limit on GPU time (--gpu-limit-ms, a
 * guest's own) is measured from the oldest mark's start, so there marks
 * keep the caps above: a long mark of short kernels would read as one
 * long kernel.
 */
#define OPEN_OPS_PER_EVENT	1024u
#define OPEN_WIDE_BATCH		8192u
#define MARK_STREAMS	32	/* streams one mark covers */
#define QCAP		64	/* marks queued (bounded ones: SOLO_MARKS) */
#define POOL		(4 * MARK_STREAMS)
#define DEFER_CAP	64	/* events of streams that wait for values */
#define DEFER_POLL_NS	1000000	/* how often they are asked, at most */

/*
 * A mark closes a batch of ops: one event on each stream the batch used
 * (a program that spreads kernels over streams keeps them concurrent;
 * an event on one stream, or on the legacy stream, would say nothing of
 * the others' work, or serialize them), all of one context.
 */
struct mark {
	CUcontext ctx;
	CUevent ev[MARK_STREAMS];	/* NULL: count that part as done */
	CUstream st[MARK_STREAMS];	/* the stream of each */
	uint32_t waits;		/* bit i: st[i] waits for values */
	uint32_t nev;
	uint64_t t_first;	/* submission of the batch's first op */
	uint32_t nops;
};

static struct {
	bool on;
	struct xgpub_worker *w;
	struct xgpub_wstat *st;
	struct xgpub_wctl *ctl;		/* the daemon's words (read-only) */
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mark q[QCAP];
	unsigned int head, n;		/* queue of marks in flight */
	/* the batch being built (ops after the last mark) */
	CUcontext b_ctx;
	CUstream b_streams[MARK_STREAMS];
	uint32_t b_nstreams;
	uint64_t b_first;
	uint32_t b_nops;
	uint64_t last_done, gpu_ns;
	uint64_t mark_ns;		/* GPU time of the last mark */
	uint64_t op_ns;			/* GPU time per op, estimated */
	bool stop;
	bool ctx_gone;			/* drained before a context ended */
	/* events to reuse, with their context */
	struct { CUcontext ctx; CUevent ev; } pool[POOL];
	unsigned int npool;
	/*
	 * The marks' events on streams that wait for values, set aside by
	 * the completer (the latest one per stream): such a stream may wait
	 * for work the guest sends later, and the marks behind it must not
	 * hold the bound on work in flight (a thread synchronizing a stream
	 * whose flag another thread writes: the write never came).  Asked
	 * (cuEventQuery) every DEFER_POLL_NS, and charged when done.
	 */
	struct deferred {
		CUcontext ctx;
		CUstream st;
		CUevent ev;
		uint64_t since;		/* start of the work it covers */
	} def[DEFER_CAP];
	unsigned int ndef;
	CUcontext ccur;			/* the completer's current context */
	/* what the gate cost, logged at the end under --verbose */
	uint64_t nmarks, nevents, nskipped, nops, bound_waits, bound_ns,
		grant_waits, grant_ns, record_ns;
} g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

int xgpub_sched_kick_fd = -1;

/* the ring header's fault byte (see xgpuif.h), for the signal handler */
static uint8_t *fault_byte;

/* SIGUSR2 from the daemon: GPU work ran past the host's limit */
static void limit_hit(int sig)
{
	(void)sig;
	if (fault_byte)
		__atomic_store_n(fault_byte, (uint8_t)XGPUIF_FAULT_TIMEOUT,
				 __ATOMIC_SEQ_CST);
	_exit(XGPUB_EXIT_LIMIT);
}

static void kick_daemon(void)
{
	static bool warned;
	uint64_t one = 1;

	/* EAGAIN: the counter is full, the daemon will look anyway */
	if (xgpub_sched_kick_fd >= 0 &&
	    write(xgpub_sched_kick_fd, &one, sizeof(one)) < 0 &&
	    errno != EAGAIN && !warned) {
		/* the scheduler then only reacts on its timers */
		xgpub_err("cannot kick the GPU scheduler: %s",
			  strerror(errno));
		warned = true;
	}
}

static void set_busy(uint32_t v)
{
	/*
	 * A read first: the daemon reads the word, and a write on every op
	 * would take its cache line away from the daemon's core each time.
	 * Only a drain is worth a kick (a revoked guest's drain ends the
	 * daemon's wait, a completion boosts a domain's VCPUs): work begins
	 * with the grant in hand, and `want`, set and kicked before it, has
	 * told the daemon already; a kick there cost a write and a wake-up
	 * of the daemon on every turn of a launch-and-synchronize loop.
	 */
	if (__atomic_load_n(&g.st->busy, __ATOMIC_RELAXED) != v &&
	    __atomic_exchange_n(&g.st->busy, v, __ATOMIC_RELEASE) != v &&
	    !v)
		kick_daemon();
}

/*
 * The guest's GPU time cell (xgpub_gcell.h), shared with its other
 * workers: this worker is inside from the start of the submission that
 * began its work until none is in flight, and tells the cell how far its
 * work ran at each completion.  st->in_cell changes under the cell's own
 * lock (the daemon's too, once the worker is gone).
 */
static uint32_t self_pid;

static void cell_enter(uint64_t since)
{
	xgpub_gcell_enter(xgpub_self_cell, self_pid, &g.st->in_cell, since);
}

/* none in flight since `at`, its last completion */
static void cell_leave(uint64_t at)
{
	xgpub_gcell_leave(xgpub_self_cell, self_pid, &g.st->in_cell, at);
}

/* nothing in flight, none being submitted (g.mu held) */
static bool idle_now(void)
{
	return !g.n && !g.b_nops && !g.ndef &&
	       !__atomic_load_n(&g.st->call_since, __ATOMIC_ACQUIRE);
}

bool xgpub_gate_on(void)
{
	return g.on;
}

static CUevent event_get(CUcontext ctx)
{
	CUevent ev = NULL;

	for (unsigned int i = 0; i < g.npool; i++) {
		if (g.pool[i].ctx == ctx) {
			ev = g.pool[i].ev;
			g.pool[i] = g.pool[--g.npool];
			return ev;
		}
	}
	if (g.w->D->cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING |
					       CU_EVENT_BLOCKING_SYNC))
		return NULL;
	return ev;
}

static void event_put(CUcontext ctx, CUevent ev)
{
	if (g.npool < POOL) {
		g.pool[g.npool].ctx = ctx;
		g.pool[g.npool].ev = ev;
		g.npool++;
	} else {
		g.w->D->cuEventDestroy_v2(ev);
	}
}

/*
 * Whether a mark may record on stream st.  Not on a stream being captured
 * (the event would be captured, and the completer's wait for it would
 * invalidate the capture: PyTorch warms up on a stream, then captures on
 * it or joins it to a capture), nor on the legacy stream while a capture
 * is open (work there while a blocking stream is captured invalidates
 * the capture, whatever its mode).  Streams are asked only while the
 * guest has captures open.  (g.mu held; the dispatch thread.)
 */
static bool may_mark(CUstream st)
{
	if (!g.w->captures)
		return true;
	if (st == NULL || st == CU_STREAM_LEGACY)
		return false;
	return !xgpub_capturing(g.w, st);
}

/* an event recorded on stream st of the batch's context, or NULL (that
 * stream's part of the batch then counts as done when the mark is) */
static CUevent record_on(CUstream st)
{
	CUevent ev;

	if (!may_mark(st)) {
		g.nskipped++;
		return NULL;
	}
	ev = event_get(g.b_ctx);

	if (ev && g.w->D->cuEventRecord(ev, st)) {
		/* a stale event of a destroyed context: try a fresh one */
		ev = NULL;
		if (!g.w->D->cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING |
						       CU_EVENT_BLOCKING_SYNC) &&
		    g.w->D->cuEventRecord(ev, st))
			ev = NULL;
	}
	if (ev)
		g.nevents++;
	return ev;
}

/* close the current batch with a mark (g.mu held); a full queue (work
 * of streams that wait for values is not bounded) leaves it open */
static void mark_batch(void)
{
	struct mark *m;
	uint64_t t0;
	/*
	 * The events go in the batch's context, which the dispatch thread
	 * may have left (a request in another context, or in none: a
	 * guest's lazily found __managed__ variable).  Recorded in the
	 * wrong one, the record failed; with xgpu's own library as the
	 * driver (a chain) it failed later, as a posted request's error
	 * that the guest's next synchronize then answered
	 * (CUDA_ERROR_INVALID_CONTEXT, managedvar through a chain).
	 */
	bool away;

	if (!g.b_nops || g.n >= QCAP)
		return;
	away = g.b_ctx && g.b_ctx != g.w->cur &&
	       g.w->D->cuCtxSetCurrent(g.b_ctx) == CUDA_SUCCESS;
	m = &g.q[(g.head + g.n) % QCAP];
	m->ctx = g.b_ctx;
	m->nev = g.b_nstreams;
	m->waits = 0;
	t0 = xgpub_now_ns();
	for (uint32_t i = 0; i < g.b_nstreams; i++) {
		m->st[i] = g.b_streams[i];
		m->ev[i] = record_on(g.b_streams[i]);
		if (m->ev[i] && (g.w->nwaiting || g.w->wait_any) &&
		    xgpub_waits_on_value(g.w, g.b_streams[i]))
			m->waits |= 1u << i;
	}
	g.record_ns += xgpub_now_ns() - t0;
	m->t_first = g.b_first;
	m->nops = g.b_nops;
	g.n++;
	g.nmarks++;
	g.b_nops = 0;
	g.b_nstreams = 0;
	pthread_cond_broadcast(&g.cv);
	if (away)
		g.w->D->cuCtxSetCurrent(g.w->cur);
}

/* close the current batch now (g.mu not held) */
static void mark_now(void)
{
	pthread_mutex_lock(&g.mu);
	mark_batch();
	pthread_mutex_unlock(&g.mu);
}

/*
 * How the completer waits for a mark's event.  While its guest holds the
 * GPU, a blocking wait (the events are made with CU_EVENT_BLOCKING_SYNC):
 * it costs no CPU however long the work.  Once the guest's turn is over
 * (its grant withdrawn: the daemon waits for its drain, and the next
 * guest for the daemon), a wait that begins asks (cuEventQuery) without
 * sleeping, for DRAIN_SPIN_NS at most, then every POLL_NS (a long
 * kernel, or one that never ends).  A blocking wait returned 34-36 us
 * after a 100 us kernel ended on the H200's host, against a spinning
 * one, and every change of hands waited that much longer with the GPU
 * idle.  (Asking every 50 us while granted too cost a lone guest of 20
 * us kernel-then-synchronize turns: its dispatch thread waited at the
 * bound on work in flight for marks the GPU had done, not yet retired.)
 */
#define POLL_NS		50000
#define DRAIN_SPIN_NS	1000000u

bool xgpub_gate_drain_spin(uint64_t *since, uint64_t now)
{
	if (!*since)
		*since = now;
	return now - *since < DRAIN_SPIN_NS;
}

/*
 * Wait for a mark's event.  Where the driver is xgpu's own library chained
 * to a backend on the network (--remote-driver), every question is a
 * round trip, and its channel serves one request at a time (so no
 * blocking wait either: it would hold the channel against the dispatch
 * thread's next request, which the event's work may wait for,
 * cuStreamWaitValue* on one stream and the write on another: the chain
 * hung there): it asks with a sleep that grows from 20 us to 1 ms.
 */
static void mark_wait(CUevent ev)
{
	struct timespec ts = { 0, 20000 };
	struct timespec poll = { 0, POLL_NS };
	uint64_t revoked_at = 0;

	if (g.w->opt && g.w->opt->remote_driver) {
		while (g.w->D->cuEventQuery(ev) == CUDA_ERROR_NOT_READY) {
			nanosleep(&ts, NULL);
			if (ts.tv_nsec < 1000000)
				ts.tv_nsec *= 2;
		}
		return;
	}
	if (__atomic_load_n(&g.ctl->grant, __ATOMIC_ACQUIRE)) {
		g.w->D->cuEventSynchronize(ev);
		return;
	}
	while (g.w->D->cuEventQuery(ev) == CUDA_ERROR_NOT_READY) {
		if (xgpub_gate_drain_spin(&revoked_at, xgpub_now_ns()))
			xgpu_cpu_relax();
		else
			nanosleep(&poll, NULL);
	}
}

/* make ctx the completer's current context (false: it cannot be) */
static bool completer_ctx(CUcontext ctx)
{
	if (ctx != g.ccur && !g.w->D->cuCtxSetCurrent(ctx))
		g.ccur = ctx;
	return ctx == g.ccur;
}

/* GPU time from start to now, charged once (g.mu held) */
static uint64_t charge(uint64_t start, uint64_t now)
{
	uint64_t d = 0;

	if (g.last_done > start)
		start = g.last_done;
	if (now > start) {
		d = now - start;
		g.gpu_ns += d;
	}
	g.last_done = now;
	__atomic_store_n(&g.st->gpu_ns, g.gpu_ns, __ATOMIC_RELAXED);
	xgpub_gcell_progress(xgpub_self_cell, self_pid, &g.st->in_cell, now);
	return d;
}

/* publish the oldest work in flight for the daemon's limit (the head
 * mark's start, 0: none, or a set-aside event's) and, when nothing is
 * in flight, that the guest drained (g.mu held) */
static void settle(uint64_t head_since)
{
	uint64_t since = head_since;

	for (unsigned int i = 0; i < g.ndef; i++)
		if (!since || g.def[i].since < since)
			since = g.def[i].since;
	__atomic_store_n(&g.st->gpu_since, since, __ATOMIC_RELAXED);
	if (!g.n && !g.b_nops && !g.ndef &&
	    __atomic_load_n(&g.st->busy, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&g.st->drained, 1, __ATOMIC_RELEASE);
		set_busy(0);
	}
	if (idle_now())
		cell_leave(g.last_done);
}

/* set a mark's event on a waiting stream aside (g.mu held); false: no
 * room (the caller counts the room first, so never) */
static bool defer(CUcontext ctx, CUstream st, CUevent ev, uint64_t since)
{
	for (unsigned int i = 0; i < g.ndef; i++) {
		struct deferred *d = &g.def[i];

		/* the later event on a stream is done only after the earlier */
		if (d->ctx == ctx && d->st == st) {
			event_put(ctx, d->ev);
			d->ev = ev;
			return true;
		}
	}
	if (g.ndef == DEFER_CAP)
		return false;
	g.def[g.ndef++] = (struct deferred){ ctx, st, ev, since };
	return true;
}

/* ask the set-aside events; charge the done ones (g.mu held) */
static void poll_deferred(void)
{
	for (unsigned int i = 0; i < g.ndef;) {
		struct deferred *d = &g.def[i];
		CUresult rc = CUDA_ERROR_NOT_READY;

		if (completer_ctx(d->ctx))
			rc = g.w->D->cuEventQuery(d->ev);
		if (rc == CUDA_ERROR_NOT_READY) {
			i++;
			continue;
		}
		/* done, or failed (its context ended): count it done */
		charge(d->since, xgpub_now_ns());
		event_put(d->ctx, d->ev);
		*d = g.def[--g.ndef];
	}
}

/* wait on cv until woken or until the set-aside events are due (g.mu held) */
static void completer_sleep(void)
{
	struct timespec ts;

	if (!g.ndef) {
		pthread_cond_wait(&g.cv, &g.mu);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += DEFER_POLL_NS;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&g.cv, &g.mu, &ts);
	poll_deferred();
	settle(0);
}

static void *completer(void *arg)
{
	CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;

	(void)arg;
	/*
	 * A thread in GLOBAL mode may not wait for an event while another
	 * thread has a GLOBAL capture open: the wait fails and invalidates
	 * the capture (PyTorch's NCCL watchdog queries under THREAD_LOCAL
	 * or RELAXED for this).  The dispatch thread captures for the
	 * guest; this thread only waits for marks, which are never captured.
	 */
	if (g.w->D->cuThreadExchangeStreamCaptureMode)
		g.w->D->cuThreadExchangeStreamCaptureMode(&relaxed);
	/* its sleeps between questions in a long drain are short: the
	 * kernel's default slack (50 us) would double them */
	prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
	pthread_mutex_lock(&g.mu);
	for (;;) {
		struct mark m;
		uint64_t now, start, d;
		uint32_t aside = 0;

		while (!g.n && !g.stop)
			completer_sleep();
		if (!g.n && g.stop)
			break;
		if (g.ctx_gone) {
			g.ccur = NULL;
			g.ctx_gone = false;
		}
		m = g.q[g.head];
		start = m.t_first > g.last_done ? m.t_first : g.last_done;
		/* events on waiting streams are set aside, room permitting */
		for (uint32_t i = 0; i < m.nev; i++)
			if ((m.waits >> i & 1) &&
			    g.ndef + __builtin_popcount(aside) < DEFER_CAP)
				aside |= 1u << i;
		settle(start);
		pthread_mutex_unlock(&g.mu);
		/*
		 * After the first wait, each event is asked first and waited
		 * for only if not done: by then the others mostly are, and a
		 * blocking wait returns some 35 us after its event (above):
		 * a mark of 32 streams took about a millisecond to retire,
		 * with the dispatch thread waiting at the bound on marks
		 * in flight (H200: 280 such waits, 290 ms, in a run of the
		 * streams benchmark; 10-23 waits, 30-65 ms, asking first).
		 */
		bool waited = false;

		for (uint32_t i = 0; i < m.nev; i++) {
			if (!m.ev[i] || (aside >> i & 1))
				continue;
			completer_ctx(m.ctx);
			if (!waited ||
			    g.w->D->cuEventQuery(m.ev[i]) == CUDA_ERROR_NOT_READY)
				mark_wait(m.ev[i]);
			waited = true;
		}
		now = xgpub_now_ns();
		pthread_mutex_lock(&g.mu);
		d = charge(start, now);
		/* what is set aside already and done, first: a stream's
		 * entry left is one still in flight since its start */
		if (g.ndef)
			poll_deferred();
		if (d && !aside) {
			g.mark_ns = d;
			/* the ops per mark follow from it (ops_per_mark) */
			if (m.nops)
				g.op_ns = d / m.nops + 1;
		}
		for (uint32_t i = 0; i < m.nev; i++) {
			if (!m.ev[i])
				continue;
			if (!(aside >> i & 1) ||
			    !defer(m.ctx, m.st[i], m.ev[i], start))
				event_put(m.ctx, m.ev[i]);
		}
		g.head = (g.head + 1) % QCAP;
		g.n--;
		settle(0);
		pthread_cond_broadcast(&g.cv);
	}
	pthread_mutex_unlock(&g.mu);
	return NULL;
}

void xgpub_gate_init(struct xgpub_worker *w)
{
	struct xgpub_wstat *st = xgpub_self_stat;

	if (!st ||
	    !__atomic_load_n(&xgpub_wctl_of(st)->sched_on, __ATOMIC_ACQUIRE) ||
	    !w->D->cuEventCreate || !w->D->cuEventRecord ||
	    !w->D->cuEventSynchronize || !w->D->cuEventQuery)
		return;
	g.w = w;
	g.st = st;
	g.ctl = xgpub_wctl_of(st);
	g.op_ns = 0;		/* unknown: the first op is a mark */
	self_pid = (uint32_t)getpid();
	fault_byte = &w->ring.sring->pvt.pvt_pad[0];
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = limit_hit;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR2, &sa, NULL);
	}
	if (pthread_create(&g.thr, NULL, completer, NULL)) {
		xgpub_err("%s: no completion thread; not scheduled", w->t->who);
		return;
	}
	g.on = true;
}

static void futex_wait(uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

/* before a gated op: wait for the GPU; returns the submission's start */
uint64_t xgpub_gate_enter(struct xgpub_worker *w)
{
	uint64_t now;

	__atomic_store_n(&g.st->submitting, 1, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&g.st->want, __ATOMIC_RELAXED)) {
		__atomic_store_n(&g.st->want, 1, __ATOMIC_RELEASE);
		kick_daemon();
	}
	if (!__atomic_load_n(&g.ctl->grant, __ATOMIC_ACQUIRE)) {
		/* revoked: what we submitted must show up as drained */
		uint64_t t = xgpub_now_ns();

		xgpub_publish_held(w);

		mark_now();
		while (!__atomic_load_n(&g.ctl->grant, __ATOMIC_ACQUIRE))
			futex_wait(&g.ctl->grant, 0, 100);
		g.grant_waits++;
		g.grant_ns += xgpub_now_ns() - t;
	}
	/* a submission can take long (a full launch queue; the fake device
	 * runs kernels inside the call): it counts as work in flight */
	now = xgpub_now_ns();
	__atomic_store_n(&g.st->call_since, now, __ATOMIC_RELEASE);
	/* (a completer that finds nothing in flight and leaves meanwhile:
	 * xgpub_gate_done enters again from now) */
	cell_enter(now);
	return now;
}

/*
 * The dispatch thread is out of a call (a submission that failed, a
 * wait): the completer, which leaves the cell once nothing is in flight,
 * did not while the call lasted, so it is left here if nothing is.
 */
static void leave_if_idle(void)
{
	__atomic_store_n(&g.st->call_since, 0, __ATOMIC_RELEASE);
	if (!xgpub_self_cell ||
	    !__atomic_load_n(&g.st->in_cell, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&g.mu);
	if (idle_now())
		cell_leave(g.last_done);
	pthread_mutex_unlock(&g.mu);
}

/* whether the guest is alone on the GPU (the daemon says) */
static bool solo(void)
{
	return __atomic_load_n(&g.ctl->solo, __ATOMIC_ACQUIRE);
}

bool xgpub_gate_solo(void)
{
	return !g.on || solo();
}

/* as many marks in flight as the guest may have (g.mu held) */
static bool full(void)
{
	return g.n >= (solo() ? SOLO_MARKS :
		       g.mark_ns > LONG_NS ? 1u : MAX_MARKS);
}

/* whether the open batch used stream s already (g.mu held) */
static bool batch_has(CUstream s)
{
	for (uint32_t i = 0; i < g.b_nstreams; i++)
		if (g.b_streams[i] == s)
			return true;
	return false;
}

/*
 * How long a guest's marks may be: sharing the GPU, alone on it, or
 * alone under no GPU time limit (each with its caps above); read once
 * an op.
 */
enum room { ROOM_SHARED, ROOM_SOLO, ROOM_OPEN };

static const uint32_t room_ops_per_event[] = {
	OPS_PER_EVENT, SOLO_OPS_PER_EVENT, OPEN_OPS_PER_EVENT
};
static const uint32_t room_wide_batch[] = {
	WIDE_BATCH, SOLO_WIDE_BATCH, OPEN_WIDE_BATCH
};

static enum room room(void)
{
	if (!solo())
		return ROOM_SHARED;
	return __atomic_load_n(&g.ctl->limited, __ATOMIC_RELAXED) ?
		       ROOM_SOLO : ROOM_OPEN;
}

/* ops a mark covers so that it is about a mark's GPU time (g.mu held) */
static uint32_t ops_per_mark(enum room r)
{
	uint64_t wide = room_wide_batch[r];
	uint64_t b;

	if (!g.op_ns)
		return 1;
	b = (r == ROOM_SHARED ? MARK_NS : SOLO_MARK_NS) / g.op_ns;
	return b < 1 ? 1 : b > wide ? (uint32_t)wide : (uint32_t)b;
}

/* ops after which the open batch closes (g.mu held) */
static uint32_t batch_limit(void)
{
	enum room r = room();
	uint32_t batch = ops_per_mark(r);
	uint32_t wide = room_ops_per_event[r] * g.b_nstreams;

	if (batch <= MAX_BATCH)
		return batch;
	wide = wide < MAX_BATCH ? MAX_BATCH : wide;
	return wide < batch ? wide : batch;
}

/* after a gated op: submitted on stream s since t0, or failed */
void xgpub_gate_done(struct xgpub_worker *w, bool submitted, CUstream s,
		     uint64_t t0, bool bound)
{
	__atomic_store_n(&g.st->submitting, 0, __ATOMIC_RELEASE);
	if (!submitted) {
		leave_if_idle();
		return;
	}
	__atomic_store_n(&g.st->call_since, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&g.mu);
	/* the completer may have found nothing in flight after the call
	 * ended (it left the cell): back in from the call's start */
	cell_enter(t0);
	/* a batch is of one context, on up to MARK_STREAMS streams */
	if (g.b_nops && g.b_ctx != w->cur)
		mark_batch();
	if (g.b_nops && !batch_has(s) && g.b_nstreams == MARK_STREAMS)
		mark_batch();
	if (!g.b_nops) {
		g.b_ctx = w->cur;
		g.b_nstreams = 0;
		g.b_first = t0;
	}
	if (!batch_has(s) && g.b_nstreams < MARK_STREAMS)
		g.b_streams[g.b_nstreams++] = s;
	g.b_nops++;
	set_busy(1);
	if (g.b_nops >= batch_limit())
		mark_batch();
	/*
	 * Bounded work in flight: one long batch, or MAX_MARKS short ones;
	 * SOLO_MARKS while the guest is alone on the GPU (a revocation then
	 * drains up to that much, or is passed over after its grace).
	 */
	g.nops++;
	if (bound && full()) {
		uint64_t t = xgpub_now_ns();

		xgpub_publish_held(w);

		while (full())
			pthread_cond_wait(&g.cv, &g.mu);
		g.bound_waits++;
		g.bound_ns += xgpub_now_ns() - t;
	}
	pthread_mutex_unlock(&g.mu);
}

/* the ring is empty and the worker is about to sleep */
void xgpub_gate_idle(struct xgpub_worker *w)
{
	(void)w;
	if (!g.on)
		return;
	mark_now();
	leave_if_idle();
	if (__atomic_exchange_n(&g.st->want, 0, __ATOMIC_RELEASE))
		kick_daemon();
}

void xgpub_gate_wait(struct xgpub_worker *w, bool begin)
{
	(void)w;
	if (!g.on)
		return;
	/*
	 * Only the dispatch thread changes b_nops and call_since.  A mark's
	 * work is the completer's to show (gpu_since); an open batch's, a
	 * wait's: a synchronize returns once the work is done, so it cannot
	 * count work that ended long ago, as the batch's first op's time
	 * could.
	 */
	if (begin && g.b_nops)
		__atomic_store_n(&g.st->call_since, xgpub_now_ns(),
				 __ATOMIC_RELEASE);
	else if (!begin)
		leave_if_idle();
}

void xgpub_gate_not_ready(struct xgpub_worker *w)
{
	(void)w;
	if (g.on && g.b_nops)
		mark_now();
}

/*
 * Before a stream is destroyed.  A full queue of marks (streams waiting
 * for values are not bounded) leaves the batch open: its streams are
 * then dropped from it, and its mark will count it as done.
 */
void xgpub_gate_mark(struct xgpub_worker *w)
{
	(void)w;
	if (!g.on)
		return;
	pthread_mutex_lock(&g.mu);
	mark_batch();
	if (g.b_nops)
		g.b_nstreams = 0;
	pthread_mutex_unlock(&g.mu);
}

void xgpub_gate_drain(struct xgpub_worker *w)
{
	(void)w;
	if (!g.on)
		return;
	pthread_mutex_lock(&g.mu);
	do {
		mark_batch();
		while (g.n)
			pthread_cond_wait(&g.cv, &g.mu);
	} while (g.b_nops);
	/* work still waiting for a value when its context ends: dropped */
	for (unsigned int i = 0; i < g.ndef; i++)
		g.w->D->cuEventDestroy_v2(g.def[i].ev);
	g.ndef = 0;
	settle(0);
	for (unsigned int i = 0; i < g.npool; i++)
		g.w->D->cuEventDestroy_v2(g.pool[i].ev);
	g.npool = 0;
	g.ctx_gone = true;	/* the completer's current one may end */
	pthread_mutex_unlock(&g.mu);
}

void xgpub_gate_stop(struct xgpub_worker *w)
{
	if (!g.on)
		return;
	pthread_mutex_lock(&g.mu);
	mark_batch();
	g.stop = true;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	pthread_join(g.thr, NULL);
	xgpub_dbg("%s: gate: %llu ops in %llu marks (%llu events recorded "
		  "in %llu us, %llu streams skipped as capturing); %llu waits "
		  "for work in flight (%llu us), %llu for the GPU (%llu us)",
		  w->t->who,
		  (unsigned long long)g.nops, (unsigned long long)g.nmarks,
		  (unsigned long long)g.nevents,
		  (unsigned long long)(g.record_ns / 1000),
		  (unsigned long long)g.nskipped,
		  (unsigned long long)g.bound_waits,
		  (unsigned long long)(g.bound_ns / 1000),
		  (unsigned long long)g.grant_waits,
		  (unsigned long long)(g.grant_ns / 1000));
	for (unsigned int i = 0; i < g.npool; i++)
		g.w->D->cuEventDestroy_v2(g.pool[i].ev);
	g.npool = 0;
	g.on = false;
	__atomic_store_n(&g.st->want, 0, __ATOMIC_RELEASE);
	set_busy(0);
	cell_leave(g.last_done);	/* (the completer has ended) */
}
