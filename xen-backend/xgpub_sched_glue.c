// SPDX-License-Identifier: MIT
/*
 * xgpub_sched_glue.c: the GPU scheduler's place in the daemon.
 *
 * scheduler/ decides which guest holds the GPU and for how long; this
 * file makes the workers obey (the `grant` word of their shared slots,
 * a futex) and feeds the scheduler what the workers report: whether a
 * guest has work (`want`, `busy`) and the GPU time its work took
 * (`gpu_ns`, measured in the worker by completion timestamps, see
 * xgpub_gate.c).  A guest is a Xen domain (all its channels) or a local
 * client.  States: nobody holds the GPU; a guest HOLDs it until its
 * slice ends or it runs out of work; then, unless it is alone, its grant
 * is withdrawn and the daemon waits for its work in flight to DRAIN
 * before it charges it and gives the GPU to the next guest.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xgpub.h"
#include "xgpub_sched_glue.h"
#include "xgpu_sched.h"

#define MAX_G 1024

struct sg {
	bool used, seen, runnable;
	uint32_t id;
	char key[80];
	uint32_t weight, cap;
	uint64_t gpu;			/* sum of its workers' gpu_ns */
	bool busy;
};

static struct xgpu_sched *S;
static struct sg gs[MAX_G];
static enum { NONE, HOLD, DRAIN } state;
static uint32_t cur;			/* holder or draining guest */
static bool cur_released;
static uint64_t cur_until, cur_gpu0;

bool xgpub_sched_enabled;

static uint32_t guest_id(const struct xgpub_child *c)
{
	return c->kind == XGPUB_CHILD_XEN ? c->domid :
					    0x100000u + c->client_id;
}

static struct sg *sg_find(uint32_t id, bool create)
{
	struct sg *f = NULL;

	for (int i = 0; i < MAX_G; i++) {
		if (gs[i].used && gs[i].id == id)
			return &gs[i];
		if (!gs[i].used && !f)
			f = &gs[i];
	}
	if (!create || !f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->id = id;
	return f;
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
	xgpub_sched_kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (xgpub_sched_kick_fd < 0) {
		xgpu_sched_destroy(S);
		S = NULL;
		return -2;
	}
	xgpub_sched_enabled = true;
	xgpub_info("GPU scheduler: %s", policy);
	return xgpub_sched_kick_fd;
}

struct gather {
	uint64_t now;
};

static void gather_child(struct xgpub_child *c, void *arg)
{
	struct gather *ga = arg;
	struct sg *g;
	uint32_t w, cap;

	if (!c->st || !__atomic_load_n(&c->st->connected, __ATOMIC_ACQUIRE))
		return;
	xgpub_child_refresh(c);
	g = sg_find(guest_id(c), true);
	if (!g)
		return;
	if (!g->key[0]) {
		/* a new guest: its settings by name; later changes arrive
		 * through xgpub_sched_settings_changed */
		xgpub_guest_key(c, g->key, sizeof(g->key));
		xgpu_sched_guest_add(S, g->id, ga->now);
		xgpub_guest_settings(g->key, &w, &cap);
		g->weight = w;
		g->cap = cap;
		xgpu_sched_guest_set(S, g->id, w, cap, ga->now);
	}
	if (!g->seen) {
		g->seen = true;
		g->gpu = 0;
		g->busy = false;
		g->runnable = false;
	}
	g->gpu += __atomic_load_n(&c->st->gpu_ns, __ATOMIC_RELAXED);
	g->busy |= __atomic_load_n(&c->st->busy, __ATOMIC_ACQUIRE) != 0;
	g->runnable |= __atomic_load_n(&c->st->want, __ATOMIC_ACQUIRE) ||
		       __atomic_load_n(&c->st->busy, __ATOMIC_ACQUIRE);
}

struct grant_arg {
	uint32_t id;
	uint32_t v;
};

static void grant_child(struct xgpub_child *c, void *arg)
{
	struct grant_arg *a = arg;

	if (!c->st || guest_id(c) != a->id)
		return;
	__atomic_store_n(&c->st->grant, a->v, __ATOMIC_RELEASE);
	if (a->v)
		syscall(SYS_futex, &c->st->grant, FUTEX_WAKE, INT_MAX, NULL,
			NULL, 0);
}

static void set_grant(uint32_t id, uint32_t v)
{
	struct grant_arg a = { id, v };

	xgpub_children_each(grant_child, &a);
}

/* one step; returns when to come back (ns, absolute) */
uint64_t xgpub_sched_run(void)
{
	struct gather ga = { xgpub_now_ns() };
	uint64_t now = ga.now, next;
	bool others = false;
	struct sg *h;

	if (!S)
		return now + 1000000000u;
	/* drain the kicks: we look at everything anyway */
	{
		uint64_t v;

		while (read(xgpub_sched_kick_fd, &v, sizeof(v)) > 0)
			;
	}
	for (int i = 0; i < MAX_G; i++)
		gs[i].seen = false;
	xgpub_children_each(gather_child, &ga);
	for (int i = 0; i < MAX_G; i++) {
		struct sg *g = &gs[i];

		if (!g->used)
			continue;
		if (!g->seen) {
			xgpu_sched_guest_remove(S, g->id, now);
			if (state != NONE && cur == g->id)
				state = NONE;
			g->used = false;
			continue;
		}
		xgpu_sched_guest_runnable(S, g->id, g->runnable, now);
	}
	next = xgpu_sched_tick(S, now);

	h = state != NONE ? sg_find(cur, false) : NULL;
	for (int i = 0; i < MAX_G; i++)
		if (gs[i].used && gs[i].runnable && &gs[i] != h)
			others = true;
	if (state == HOLD && h && (now >= cur_until || !h->runnable)) {
		xgpu_sched_charge(S, cur, h->gpu - cur_gpu0, now);
		cur_gpu0 = h->gpu;
		if (!others && h->runnable) {
			/* alone: keep the GPU, no drain */
			uint32_t id;

			xgpu_sched_release(S, cur, now);
			if (xgpu_sched_pick(S, now, &id) == 0 && id == cur) {
				cur_until = now + xgpu_sched_slice(S, id, now);
			} else {
				if (xgpu_sched_holder(S, &id) == 0 &&
				    id != cur) {
					/* not expected: hand it back */
					xgpu_sched_release(S, id, now);
				}
				cur_released = true;
				set_grant(cur, 0);
				state = DRAIN;
			}
		} else {
			cur_released = false;
			set_grant(cur, 0);
			state = DRAIN;
			xgpub_dbg("sched: guest %#x revoked", cur);
		}
	}
	if (state == DRAIN && h && !h->busy) {
		if (h->gpu > cur_gpu0)
			xgpu_sched_charge(S, cur, h->gpu - cur_gpu0, now);
		if (!cur_released)
			xgpu_sched_release(S, cur, now);
		state = NONE;
	}
	if (state == NONE) {
		uint32_t id;

		if (xgpu_sched_holder(S, &id) == 0)
			xgpu_sched_release(S, id, now);
		if (xgpu_sched_pick(S, now, &id) == 0) {
			struct sg *g = sg_find(id, false);

			cur = id;
			cur_gpu0 = g ? g->gpu : 0;
			cur_until = now + xgpu_sched_slice(S, id, now);
			state = HOLD;
			set_grant(id, 1);
			xgpub_dbg("sched: guest %#x holds the GPU for %llu us",
				  id, (unsigned long long)(cur_until - now) /
					      1000);
		}
	}
	if (state == HOLD && cur_until < next)
		next = cur_until;
	if (state == DRAIN && now + 200000 < next)
		next = now + 200000;	/* drains are reported by kicks */
	return next;
}

void xgpub_sched_view(const char *key, struct xgpub_sched_view *v)
{
	struct xgpu_sched_info in;

	memset(v, 0, sizeof(*v));
	snprintf(v->state, sizeof(v->state), "-");
	if (!S)
		return;
	for (int i = 0; i < MAX_G; i++) {
		if (!gs[i].used || strcmp(gs[i].key, key))
			continue;
		if (xgpu_sched_guest_info(S, gs[i].id, xgpub_now_ns(), &in))
			return;
		v->credit_ns = in.credit_ns;
		snprintf(v->state, sizeof(v->state), "%s",
			 xgpu_sched_state_name(in.state));
		v->gpu_ns = in.gpu_ns;
		v->share_period = in.share_period;
		v->share_minute = in.share_minute;
		return;
	}
}

void xgpub_sched_settings_changed(const char *key, uint32_t weight,
				  uint32_t cap)
{
	if (!S)
		return;
	for (int i = 0; i < MAX_G; i++) {
		if (!gs[i].used || strcmp(gs[i].key, key))
			continue;
		gs[i].weight = weight;
		gs[i].cap = cap;
		xgpu_sched_guest_set(S, gs[i].id, weight, cap, xgpub_now_ns());
	}
}
