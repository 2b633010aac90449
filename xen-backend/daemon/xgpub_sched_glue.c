// SPDX-License-Identifier: MIT
/*
 * xgpub_sched_glue.c: the GPU scheduler's place in the daemon.
 *
 * scheduler/ decides which guest holds the GPU and for how long; this
 * file makes the workers obey (the `grant` word of their shared slots,
 * a futex) and feeds the scheduler what the workers report, summed per
 * guest by the guest table (xgpub_guest.h): whether a guest has work
 * (`want`, `busy`) and the GPU time its work took (`gpu_ns`, measured in
 * the worker by completion timestamps, see xgpub_gate.c).  A guest is
 * scheduled while one of its channels is connected; the scheduler knows
 * it by its uid.  States: nobody holds the GPU; a guest HOLDs it until
 * its slice ends or it runs out of work; then, unless it is alone, its
 * grant is withdrawn and the daemon waits for its work in flight to
 * DRAIN before it charges it and gives the GPU to the next guest.
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

static struct xgpu_sched *S;		/* NULL: the scheduler is off */
static uint64_t kicks, runs;		/* for `stats` */
static enum { NONE, HOLD, DRAIN } state;
static uint32_t cur;			/* uid of the holder or drainer */
static bool cur_released;		/* cur gave the token back already */
static uint64_t cur_until;		/* end of its slice */
static uint64_t cur_gpu0;		/* its GPU time charged so far */

bool xgpub_sched_enabled;

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
	xgpub_sched_kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (xgpub_sched_kick_fd < 0) {
		xgpu_sched_destroy(S);
		S = NULL;
		return -2;
	}
	xgpub_sched_enabled = true;
	xgpub_vcpu_sched_started();
	xgpub_info("GPU scheduler: %s", policy);
	return xgpub_sched_kick_fd;
}

void xgpub_sched_stop(void)
{
	xgpub_vcpu_stop();
}

int xgpub_sched_stats(struct xgpub_reply *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	xgpub_reply(r, XGPU_CTL_OK "\n" XGPU_CTL_REC_STATS " sched=%s "
		    "kicks=%llu runs=%llu vcpu=%s\n", S ? "on" : "off",
		    (unsigned long long)kicks, (unsigned long long)runs,
		    xgpub_vcpu_is_on() ? "on" : "off");
	return 0;
}

static void grant_child(struct xgpub_child *c, void *arg)
{
	uint32_t v = *(uint32_t *)arg;

	if (!c->st)
		return;
	__atomic_store_n(&c->st->grant, v, __ATOMIC_RELEASE);
	if (v)
		syscall(SYS_futex, &c->st->grant, FUTEX_WAKE, INT_MAX, NULL,
			NULL, 0);
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

	if (now < cur_until && h->ch.runnable)
		return;
	xgpub_guest_for_each(g)
		others |= g != h && g->sched.scheduled && g->ch.runnable;
	xgpu_sched_charge(S, cur, h->ch.gpu_ns - cur_gpu0, now);
	cur_gpu0 = h->ch.gpu_ns;
	if (others || !h->ch.runnable) {
		cur_released = false;
		set_grant(cur, 0);
		state = DRAIN;
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
	cur_gpu0 = g ? g->ch.gpu_ns : 0;
	cur_until = now + xgpu_sched_slice(S, id, now);
	state = HOLD;
	set_grant(id, 1);
	xgpub_dbg("sched: guest %#x holds the GPU for %llu us", id,
		  (unsigned long long)(cur_until - now) / 1000);
}

uint64_t xgpub_sched_run(void)
{
	uint64_t now = xgpub_now_ns(), next, vn, v;
	struct xgpub_guest *g, *h;

	if (!S)
		return now + 1000000000u;
	runs++;
	/* drain the kicks: we look at everything anyway */
	while (read(xgpub_sched_kick_fd, &v, sizeof(v)) > 0)
		kicks += v;
	xgpub_guests_update();
	let_go(now);
	xgpub_guest_for_each(g) {
		if (!g->ch.connected)
			continue;
		if (!g->sched.scheduled)
			take_in(g, now);
		xgpu_sched_guest_runnable(S, g->uid, g->ch.runnable, now);
		xgpub_vcpu_guest_step(g, now);
	}
	next = xgpu_sched_tick(S, now);
	vn = xgpub_vcpu_tick(now);
	if (vn < next)
		next = vn;

	h = state != NONE ? xgpub_guest_by_uid(cur) : NULL;
	if (state == HOLD && h)
		hold(h, now);
	if (state == DRAIN && h && !h->ch.busy) {
		if (h->ch.gpu_ns > cur_gpu0)
			xgpu_sched_charge(S, cur, h->ch.gpu_ns - cur_gpu0, now);
		if (!cur_released)
			xgpu_sched_release(S, cur, now);
		state = NONE;
	}
	if (state == NONE)
		pick(now);
	if (state == HOLD && cur_until < next)
		next = cur_until;
	if (state == DRAIN && now + DRAIN_LOOK_NS < next)
		next = now + DRAIN_LOOK_NS;	/* drains come with kicks */
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

void xgpub_sched_settings_changed(const char *key)
{
	uint64_t now = xgpub_now_ns();
	struct xgpub_guest *g;

	if (!S)
		return;
	xgpub_guest_for_each(g) {
		if (!g->sched.scheduled || strcmp(g->key, key))
			continue;
		xgpu_sched_guest_set(S, g->uid, g->weight, g->cap, now);
		xgpub_vcpu_guest_weight(g, now);
	}
}
