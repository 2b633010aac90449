// SPDX-License-Identifier: MIT
/*
 * xgpub_sched_glue.c: the GPU scheduler's place in the daemon.
 *
 * scheduler/ decides which guest holds the GPU and for how long; this
 * file makes the workers obey (the `grant` word of their shared slots,
 * a futex) and feeds the scheduler what the workers report, gathered per
 * guest by the guest table (xgpub_guest.h): whether a guest has work
 * (`want`, `busy`) and the GPU time its work took (`gpu_ns`: the union
 * of its workers' busy periods, measured in the workers by completion
 * timestamps and counted in the cell they share, see xgpub_gate.c and
 * xgpub_gcell.h).  A guest is
 * scheduled while one of its channels is connected; the scheduler knows
 * it by its uid.  States: nobody holds the GPU; a guest HOLDs it until
 * its slice ends or it runs out of work; then, unless it is alone, its
 * grant is withdrawn and the daemon waits for its work in flight to
 * DRAIN before it charges it and gives the GPU to the next guest.
 *
 * DEADLINES.  A guest that has not drained DRAIN_GRACE_NS after its turn
 * ended (a long kernel, work waiting on a value) is passed over: the next
 * guest gets the GPU anyway (the driver time-slices contexts of different
 * processes, so its work runs beside the overrunning kernel), and the
 * overrunning guest is not runnable for the scheduler until it drains,
 * charged as its GPU time comes in.  With a GPU time limit
 * (--gpu-limit-ms), a worker whose oldest work in flight has run longer
 * than the limit is ended (SIGUSR2: it tells its guest
 * CUDA_ERROR_LAUNCH_TIMEOUT and exits; SIGKILL a second later if it has
 * not), whether or not others wait.
 *
 * The VCPU coordinator follows (xgpub_vcpu_glue.h): it hears of every
 * guest taken in or let go, of weight changes and of each step.
 *
 * Only the daemon's event loop calls in; the state below is its own.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xgpub_guest.h"
#include "xgpub_reply.h"
#include "xgpub_sched_glue.h"
#include "xgpub_vcpu_glue.h"
#include "xgpu_sched.h"

/* a draining guest is looked at this often (ns) when no kick comes */
#define DRAIN_LOOK_NS	200000u
/*
 * For this long after a turn ends the daemon looks at the drainer without
 * sleeping, rather than waiting for its kick: an eventfd's wake-up of a
 * sleeping daemon took 13 us on the H200's host, with the GPU idle
 * meanwhile (with the workers' spinning drain waits, xgpub_gate.c: 229
 * us a drain against 248, 32 guests of 100 us kernels, in one run of
 * each).  A drain took 230-275 us on average there; one that lasts
 * longer is waited for asleep again.
 */
#define DRAIN_SPIN_NS	500000u
/* how long after its turn a guest may take to drain before it is passed
 * over */
#define DRAIN_GRACE_NS	50000000u
/* how often the GPU time limit is looked at while work is in flight */
#define LIMIT_LOOK_NS	100000000u
/* from SIGUSR2 to SIGKILL for a worker past the limit */
#define LIMIT_KILL_NS	1000000000u

static struct xgpu_sched *S;		/* NULL: the scheduler is off */
/* every worker's kick eventfd (its own, xgpub_sched_kick_new), -1: none */
static int kick_ep = -1;
static uint64_t kicks, runs;		/* for `stats` */
static enum { NONE, HOLD, DRAIN } state;
static uint32_t cur;			/* uid of the holder or drainer */
static bool cur_released;		/* cur gave the token back already */
static uint64_t cur_until;		/* end of its slice */
/* cur holds the GPU alone and idle: no slice runs (cur_until is
 * UINT64_MAX) until its work comes back or another guest kicks */
static bool cur_idle;
static uint64_t cur_gpu0;		/* its GPU time charged so far */
static uint64_t drain_since;		/* when the drain began */
/*
 * For `stats` and the log: turns given, drains waited for and their time
 * (from the revocation to the daemon's seeing the drain; 32 guests of
 * 100 us kernels on an H200: 1,185 turns in 6 s, 275 us a drain).
 */
static uint64_t turns, drains, drain_ns;

uint64_t xgpub_gpu_limit_ns;		/* 0: none */

static void limited_child(struct xgpub_child *c, void *arg)
{
	if (c->st)
		__atomic_store_n(&xgpub_wctl_of(c->st)->limited,
				 *(uint32_t *)arg, __ATOMIC_RELAXED);
}

/* the settings of the guests of key changed (xgpub_guest_on_settings) */
static void settings_changed(const char *key)
{
	uint64_t now = xgpub_now_ns();
	struct xgpub_guest *g;

	if (!S)
		return;
	xgpub_guest_for_each(g) {
		uint32_t limited;

		if (!g->sched.scheduled || strcmp(g->key, key))
			continue;
		xgpu_sched_guest_set(S, g->uid, g->weight, g->cap, now);
		xgpub_vcpu_guest_weight(g, now);
		/* a new GPU time limit reaches a guest that stays alone on
		 * the GPU too (set_solo tells it at each turn) */
		limited = g->limit_ms || xgpub_gpu_limit_ns;
		xgpub_guest_channels(g, limited_child, &limited);
	}
}

int xgpub_sched_start(const char *policy)
{
	if (!strcmp(policy, "off"))
		return -1;
	S = xgpu_sched_create(policy, NULL, xgpub_now_ns());
	if (!S) {
		xgpub_err("--sched %s: unknown policy (credit, fifo or off)",
			  policy);
		return -2;
	}
	kick_ep = epoll_create1(EPOLL_CLOEXEC);
	if (kick_ep < 0) {
		xgpub_err("GPU scheduler: no epoll set: %s", strerror(errno));
		xgpu_sched_destroy(S);
		S = NULL;
		return -2;
	}
	xgpub_children_sched(xgpub_sched_kick_new, xgpub_sched_kick_drop);
	xgpub_guest_on_settings(settings_changed);
	xgpub_vcpu_sched_started();
	xgpub_info("GPU scheduler: %s", policy);
	return kick_ep;
}

int xgpub_sched_kick_new(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (kick_ep < 0)
		return -1;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0) {
		xgpub_err("no kick eventfd for a worker: %s", strerror(errno));
		return -2;
	}
	ev.data.fd = fd;
	if (epoll_ctl(kick_ep, EPOLL_CTL_ADD, fd, &ev)) {
		xgpub_err("cannot watch a worker's kick: %s", strerror(errno));
		close(fd);
		return -2;
	}
	return fd;
}

void xgpub_sched_kick_drop(int fd)
{
	if (fd < 0 || kick_ep < 0)
		return;
	/* before the close: the worker may still hold the eventfd */
	epoll_ctl(kick_ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

/* read every kick that came (the eventfds epoll says are readable) */
static void drain_kicks(void)
{
	struct epoll_event ev[64];
	uint64_t v;
	int n;

	do {
		n = epoll_wait(kick_ep, ev, 64, 0);
		for (int i = 0; i < n; i++)
			while (read(ev[i].data.fd, &v, sizeof(v)) > 0)
				kicks += v;
	} while (n == 64);
}

void xgpub_sched_stop(void)
{
	if (S)
		xgpub_info("GPU scheduler: %llu turns, %llu drains waited for "
			   "(%llu us in all), %llu runs, %llu kicks",
			   (unsigned long long)turns,
			   (unsigned long long)drains,
			   (unsigned long long)(drain_ns / 1000),
			   (unsigned long long)runs,
			   (unsigned long long)kicks);
	xgpub_vcpu_stop();
}

/* the drain that began at drain_since ended (or was given up) */
static void drain_end(uint64_t now)
{
	drains++;
	drain_ns += now - drain_since;
}

void xgpub_sched_counters(uint64_t *kicks_out, uint64_t *runs_out)
{
	*kicks_out = kicks;
	*runs_out = runs;
}

int xgpub_sched_stats(struct xgpub_reply *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	xgpub_reply(r, XGPU_CTL_OK "\n" XGPU_CTL_REC_STATS " sched=%s "
		    "kicks=%llu runs=%llu vcpu=%s turns=%llu drains=%llu "
		    "drain-us=%llu\n", S ? "on" : "off",
		    (unsigned long long)kicks, (unsigned long long)runs,
		    xgpub_vcpu_is_on() ? "on" : "off",
		    (unsigned long long)turns, (unsigned long long)drains,
		    (unsigned long long)(drain_ns / 1000));
	return 0;
}

static void grant_child(struct xgpub_child *c, void *arg)
{
	uint32_t v = *(uint32_t *)arg;

	if (!c->st)
		return;
	if (v && __atomic_load_n(&xgpub_wctl_of(c->st)->grant,
				 __ATOMIC_ACQUIRE))
		return;		/* granted already: no wake-up to pay */
	if (!v)
		__atomic_store_n(&xgpub_wctl_of(c->st)->solo, 0,
				 __ATOMIC_RELEASE);
	__atomic_store_n(&xgpub_wctl_of(c->st)->grant, v, __ATOMIC_RELEASE);
	if (v)
		syscall(SYS_futex, &xgpub_wctl_of(c->st)->grant, FUTEX_WAKE,
			INT_MAX, NULL,
			NULL, 0);
}

struct solo_arg {
	uint32_t solo, limited;
};

static void solo_child(struct xgpub_child *c, void *arg)
{
	const struct solo_arg *a = arg;
	struct xgpub_wctl *ctl;

	if (!c->st)
		return;
	ctl = xgpub_wctl_of(c->st);
	if (__atomic_load_n(&ctl->limited, __ATOMIC_RELAXED) != a->limited)
		__atomic_store_n(&ctl->limited, a->limited, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->solo, a->solo, __ATOMIC_RELEASE);
}

/*
 * Tell uid's workers whether it is alone on the GPU (a deeper queue),
 * and whether a GPU time limit applies to it: the limit is measured
 * from the start of the oldest mark in flight, so a guest under one
 * keeps short marks alone too (xgpub_gate.c).
 */
static void set_solo(uint32_t uid, uint32_t v)
{
	struct xgpub_guest *g = xgpub_guest_by_uid(uid);
	struct solo_arg a = { v, 0 };

	if (!g)
		return;
	a.limited = g->limit_ms || xgpub_gpu_limit_ns;
	xgpub_guest_channels(g, solo_child, &a);
}

static void set_grant(uint32_t uid, uint32_t v)
{
	struct xgpub_guest *g = xgpub_guest_by_uid(uid);

	if (g)
		xgpub_guest_channels(g, grant_child, &v);
}

/* guests the scheduler knows that have no connected channel any more */
static void let_go(uint64_t now)
{
	static uint32_t ids[XGPUB_GUESTS_MAX];
	unsigned int n = xgpu_sched_guest_ids(S, ids, XGPUB_GUESTS_MAX);

	for (unsigned int i = 0; i < n && i < XGPUB_GUESTS_MAX; i++) {
		struct xgpub_guest *g = xgpub_guest_by_uid(ids[i]);

		if (g && g->ch.connected)
			continue;
		if (g)
			g->sched.scheduled = false;
		xgpub_vcpu_guest_leave(ids[i], g, now);
		xgpu_sched_guest_remove(S, ids[i], now);
		if (state != NONE && cur == ids[i])
			state = NONE;
	}
}

static void take_in(struct xgpub_guest *g, uint64_t now)
{
	/* EEXIST: it left and came back before the last step; its
	 * scheduler state carries on */
	xgpu_sched_guest_add(S, g->uid, now);
	xgpu_sched_guest_set(S, g->uid, g->weight, g->cap, now);
	g->sched.scheduled = true;
	xgpub_vcpu_guest_join(g, now);
}

/* the holder h's turn: end it when its slice is over or its work is */
static void hold(struct xgpub_guest *h, uint64_t now)
{
	struct xgpub_guest *g;
	bool others = false;
	uint32_t id;

	if (cur_idle && h->ch.runnable) {
		/* its work came back: its slice begins */
		cur_idle = false;
		cur_until = now + xgpu_sched_slice(S, cur, now);
	}
	if (now < cur_until && h->ch.runnable)
		return;
	cur_idle = false;
	xgpub_guest_for_each(g)
		others |= g != h && g->sched.scheduled && g->ch.runnable &&
			  !g->sched.overrun;
	if (h->ch.gpu_ns > cur_gpu0)
		xgpu_sched_charge(S, cur, h->ch.gpu_ns - cur_gpu0, now);
	cur_gpu0 = h->ch.gpu_ns;
	/*
	 * Alone and idle (between two steps of its program): keep it the
	 * GPU, so that its next work needs no round trip through the
	 * daemon; another guest that wants the GPU ends this at once (a
	 * kick).  Not for a capped guest: its budget must be looked at.
	 * No slice runs meanwhile, so that an idle guest does not wake the
	 * daemon every slice (only the accounting period does).
	 */
	if (!others && !h->ch.runnable && !h->cap) {
		set_solo(cur, 1);
		cur_idle = true;
		cur_until = UINT64_MAX;
		return;
	}
	set_solo(cur, !others);
	if (others || !h->ch.runnable) {
		cur_released = false;
		set_grant(cur, 0);
		state = DRAIN;
		drain_since = now;
		xgpub_dbg("sched: guest %#x revoked", cur);
		return;
	}
	/* alone: keep the GPU, no drain */
	xgpu_sched_release(S, cur, now);
	if (xgpu_sched_pick(S, now, &id) == 0 && id == cur) {
		cur_until = now + xgpu_sched_slice(S, id, now);
		return;
	}
	if (xgpu_sched_holder(S, &id) == 0 && id != cur) {
		/* not expected: hand it back */
		xgpu_sched_release(S, id, now);
	}
	cur_released = true;
	set_grant(cur, 0);
	state = DRAIN;
	drain_since = now;
}

/* the token for the next guest, if any may have it */
static void pick(uint64_t now)
{
	struct xgpub_guest *g;
	uint32_t id;

	if (xgpu_sched_holder(S, &id) == 0)
		xgpu_sched_release(S, id, now);
	if (xgpu_sched_pick(S, now, &id))
		return;
	g = xgpub_guest_by_uid(id);
	cur = id;
	cur_idle = false;
	turns++;
	cur_gpu0 = g ? g->ch.gpu_ns : 0;
	cur_until = now + xgpu_sched_slice(S, id, now);
	state = HOLD;
	set_grant(id, 1);
	xgpub_dbg("sched: guest %#x holds the GPU for %llu us", id,
		  (unsigned long long)(cur_until - now) / 1000);
}

/* the drainer h is still busy DRAIN_GRACE_NS after its turn: pass it over */
static void pass_over(struct xgpub_guest *h, uint64_t now)
{
	if (h->ch.gpu_ns > cur_gpu0)
		xgpu_sched_charge(S, cur, h->ch.gpu_ns - cur_gpu0, now);
	if (!cur_released)
		xgpu_sched_release(S, cur, now);
	drain_end(now);
	h->sched.overrun = true;
	h->sched.overrun_gpu0 = h->ch.gpu_ns > cur_gpu0 ? h->ch.gpu_ns :
							  cur_gpu0;
	xgpu_sched_guest_runnable(S, cur, false, now);
	xgpub_dbg("GPU scheduler: %s (%s) still has work running %llu ms "
		   "after its turn; the next guest goes ahead", h->key,
		   h->name, (unsigned long long)((now - drain_since) / 1000000));
	state = NONE;
}

/* an overrunning guest: charge what came in; done once it drained */
static void overrun_step(struct xgpub_guest *g, uint64_t now)
{
	if (g->ch.gpu_ns > g->sched.overrun_gpu0) {
		xgpu_sched_charge(S, g->uid,
				  g->ch.gpu_ns - g->sched.overrun_gpu0, now);
		g->sched.overrun_gpu0 = g->ch.gpu_ns;
	}
	if (!g->ch.busy && !g->ch.in_call)
		g->sched.overrun = false;
}

struct limit_arg {
	uint64_t now, limit_ns;
};

/* a worker whose oldest GPU work has run past the limit: end it */
static void limit_child(struct xgpub_child *c, void *arg)
{
	const struct limit_arg *la = arg;
	uint64_t now = la->now, since, call;
	char who[128];

	if (!c->st || c->pid <= 0)
		return;
	since = __atomic_load_n(&c->st->gpu_since, __ATOMIC_RELAXED);
	call = __atomic_load_n(&c->st->call_since, __ATOMIC_RELAXED);
	if (call && (!since || call < since))
		since = call;
	if (c->limit_sent) {
		if (now - c->limit_sent >= LIMIT_KILL_NS)
			kill(c->pid, SIGKILL);
		return;
	}
	if (!since || now < since || now - since < la->limit_ns)
		return;
	xgpub_child_name(c, who, sizeof(who));
	xgpub_err("%s: GPU work ran %llu ms, past the limit of %llu ms: "
		  "ending its worker (the guest gets CUDA_ERROR_LAUNCH_TIMEOUT)",
		  who, (unsigned long long)((now - since) / 1000000),
		  (unsigned long long)(la->limit_ns / 1000000));
	c->limit_sent = now;
	kill(c->pid, SIGUSR2);
}

/* the limit for every guest with work in flight; true: look again soon */
static bool limit_step(uint64_t now)
{
	struct xgpub_guest *g;
	bool any = false;

	xgpub_guest_for_each(g) {
		/* the guest's own limit, else the daemon's */
		struct limit_arg la = {
			now, g->limit_ms ? g->limit_ms * 1000000ull :
					   xgpub_gpu_limit_ns
		};

		if (!la.limit_ns || (!g->ch.busy && !g->ch.in_call))
			continue;
		any = true;
		xgpub_guest_channels(g, limit_child, &la);
	}
	return any;
}

uint64_t xgpub_sched_run(void)
{
	uint64_t now = xgpub_now_ns(), next, vn;
	struct xgpub_guest *g, *h;

	if (!S)
		return now + 1000000000u;
	runs++;
	/* drain the kicks: we look at everything anyway */
	drain_kicks();
	xgpub_guests_update();
	let_go(now);
	xgpub_guest_for_each(g) {
		if (!g->ch.connected)
			continue;
		if (!g->sched.scheduled)
			take_in(g, now);
		if (g->sched.overrun && !(state != NONE && cur == g->uid))
			overrun_step(g, now);
		xgpu_sched_guest_runnable(S, g->uid,
					  g->ch.runnable && !g->sched.overrun,
					  now);
		xgpub_vcpu_guest_step(g, now);
	}
	next = xgpu_sched_tick(S, now);
	vn = xgpub_vcpu_tick(now);
	if (vn < next)
		next = vn;

	h = state != NONE ? xgpub_guest_by_uid(cur) : NULL;
	if (state == HOLD && h)
		hold(h, now);
	if (state == DRAIN && h && (h->ch.busy || h->ch.in_call) &&
	    now - drain_since >= DRAIN_GRACE_NS)
		pass_over(h, now);
	if (state == DRAIN && h && !h->ch.busy && !h->ch.in_call) {
		if (h->ch.gpu_ns > cur_gpu0)
			xgpu_sched_charge(S, cur, h->ch.gpu_ns - cur_gpu0, now);
		if (!cur_released)
			xgpu_sched_release(S, cur, now);
		drain_end(now);
		state = NONE;
	}
	if (state == NONE)
		pick(now);
	/*
	 * The holder's channels all have the grant, also one its guest
	 * opened while it held the GPU (a second process of a domain): a
	 * holder alone keeps the GPU from slice to slice without a new
	 * pick, and such a channel waited for one for as long as its
	 * guest stayed alone.
	 */
	if (state == HOLD)
		set_grant(cur, 1);
	if (state == HOLD && cur_until < next)
		next = cur_until;
	if (state == DRAIN && now - drain_since < DRAIN_SPIN_NS)
		next = now;			/* look again at once */
	if (state == DRAIN && now + DRAIN_LOOK_NS < next)
		next = now + DRAIN_LOOK_NS;	/* drains come with kicks */
	if (limit_step(now) && now + LIMIT_LOOK_NS < next)
		next = now + LIMIT_LOOK_NS;
	return next;
}

void xgpub_sched_view(const struct xgpub_guest *g, struct xgpub_guest_view *v)
{
	struct xgpu_sched_info in;

	memset(v, 0, sizeof(*v));
	snprintf(v->state, sizeof(v->state), "-");
	v->vcpu = xgpub_vcpu_info(g, &v->vcpu_weight, &v->vcpu_boosts);
	if (!S || !g->sched.scheduled ||
	    xgpu_sched_guest_info(S, g->uid, xgpub_now_ns(), &in))
		return;
	v->credit_ns = in.credit_ns;
	snprintf(v->state, sizeof(v->state), "%s",
		 xgpu_sched_state_name(in.state));
	v->gpu_ns = in.gpu_ns;
	v->share_period = in.share_period;
	v->share_minute = in.share_minute;
}
