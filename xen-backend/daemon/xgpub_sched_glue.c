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
 *
 * The VCPU coordinator (scheduler/xgpu_vcpu.h) rides on the same view:
 * a Xen guest joining is added with its GPU weight (its VCPU weight
 * follows), a weight change is passed on, and a guest whose work in
 * flight drained since the last step (its workers' `drained` counts)
 * while it submits nothing more is reported as completed, which boosts
 * its VCPUs so that the thread waiting for that completion runs and
 * issues the next batch.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_daemon.h"
#include "xgpub_ctl.h"
#include "xgpub_sched_glue.h"
#include "xgpu_sched.h"
#include "xgpu_vcpu.h"

#define MAX_G 1024

struct sg {
	bool used, seen, runnable;
	uint32_t id;
	char key[80];
	uint32_t weight, cap;
	uint64_t gpu;			/* sum of its workers' gpu_ns */
	bool busy;
	bool submitting;		/* a GPU op is on its way in */
	uint32_t drained;		/* sum of its workers' counts */
	uint32_t drained_seen;		/* ... at the previous step */
	bool vcpu;			/* known to the VCPU coordinator */
};

static struct xgpu_sched *S;
static struct xgpu_vcpu *V;		/* NULL: no VCPU coordination */
static uint64_t kicks, runs;		/* for `stats` */
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

static bool is_xen(uint32_t id)
{
	return id < 0x100000u;
}

static void vcpu_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= LOG_WARNING)
		xgpub_err("%s", msg);
	else if (level >= LOG_DEBUG)
		xgpub_dbg("%s", msg);
	else
		xgpub_info("%s", msg);
}

static bool vcpu_xen;			/* Xen guests served */
static unsigned int vcpu_pct, vcpu_ms;

/* create the coordinator and add the Xen guests known now; 0 or why not */
static const char *vcpu_on(void)
{
	struct xgpu_vcpu_params p = {
		.boost_pct = vcpu_pct,
		.boost_ns = (uint64_t)vcpu_ms * 1000000u,
	};
	uint64_t now = xgpub_now_ns();

	if (!vcpu_xen)
		return "no Xen guests served (local transport only)";
	if (!S)
		return "it follows the GPU scheduler, which is off";
	V = xgpu_vcpu_create("xenctrl", &p, vcpu_log, NULL);
	if (!V)
		return "bad parameters";
	if (!xgpu_vcpu_enabled(V)) {
		xgpu_vcpu_destroy(V);
		V = NULL;
		return "libxenctrl unusable (see the log)";
	}
	for (int i = 0; i < MAX_G; i++)
		if (gs[i].used && gs[i].key[0] && is_xen(gs[i].id) &&
		    !xgpu_vcpu_dom_add(V, gs[i].id, gs[i].weight, now))
			gs[i].vcpu = true;
	return NULL;
}

static void vcpu_off(void)
{
	/* gives every domain its own VCPU weight back */
	xgpu_vcpu_destroy(V);
	V = NULL;
	for (int i = 0; i < MAX_G; i++)
		gs[i].vcpu = false;
}

void xgpub_vcpu_start(bool xen, bool on, unsigned int boost_pct,
		      unsigned int boost_ms)
{
	const char *why;

	vcpu_xen = xen;
	vcpu_pct = boost_pct;
	vcpu_ms = boost_ms;
	if (!on) {
		xgpub_info("vcpu coordinator off: --vcpu-coord off");
		return;
	}
	why = vcpu_on();
	if (why && xen && S)
		xgpub_err("vcpu coordinator off: %s", why);
	else if (why)
		xgpub_info("vcpu coordinator off: %s", why);
}

int xgpub_vcpu_parse_boost(const char *s, unsigned int *pct,
			   unsigned int *ms)
{
	unsigned long p, m = 0;
	char *end;

	p = strtoul(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == ':')
		m = strtoul(end + 1, &end, 10);
	if (*end || p < 100 || p > 10000 || m > 1000)
		return -1;
	*pct = (unsigned int)p;
	*ms = (unsigned int)m;
	return 0;
}

/* control socket: stats */
void xgpub_sched_stats(struct xgpub_out *o)
{
	xgpub_out(o, "ok\nstats sched=%s kicks=%llu runs=%llu vcpu=%s\n",
		  S ? "on" : "off", (unsigned long long)kicks,
		  (unsigned long long)runs, V ? "on" : "off");
}

/* control socket: vcpu [on [PCT[:MS]] | off] */
void xgpub_vcpu_ctl(struct xgpub_out *o, int argc, char **argv)
{
	struct xgpu_vcpu_params p;
	char what[96];

	if (argc == 1 && !strcmp(argv[0], "off")) {
		if (V)
			xgpub_info("vcpu coordinator off (xgpu vcpu off)");
		vcpu_off();
	} else if ((argc == 1 || argc == 2) && !strcmp(argv[0], "on")) {
		unsigned int pct = vcpu_pct, ms = vcpu_ms;
		const char *why;

		if (argc == 2 && xgpub_vcpu_parse_boost(argv[1], &pct, &ms)) {
			xgpub_out(o, "error boost: %s\n", XGPUB_VCPU_BOOST_USAGE);
			return;
		}
		vcpu_off();
		vcpu_pct = pct;
		vcpu_ms = ms;
		why = vcpu_on();
		if (why) {
			xgpub_out(o, "error vcpu coordinator off: %s\n", why);
			return;
		}
	} else if (argc) {
		xgpub_out(o, "error usage: vcpu [on [PCT[:MS]] | off]\n");
		return;
	}
	xgpub_out(o, "ok\n");
	if (!V) {
		xgpub_out(o, "vcpu state=off\n");
		return;
	}
	xgpu_vcpu_params_get(V, &p);
	/* one word: the reply is space-separated key=value */
	snprintf(what, sizeof(what), "%s", xgpu_vcpu_describe(V));
	xgpub_ctl_word(what);
	xgpub_out(o, "vcpu state=on backend=%s boost_pct=%u boost_ms=%.1f "
		  "rate=%u\n", what, p.boost_pct,
		  (double)p.boost_ns / 1e6, p.max_hypercalls_per_sec);
	for (int i = 0; i < MAX_G; i++) {
		struct xgpu_vcpu_dom_info in;

		if (!gs[i].vcpu || xgpu_vcpu_dom_info(V, gs[i].id, &in))
			continue;
		xgpub_out(o, "dom id=%u key=%s gpu_weight=%u base=%u "
			  "target=%u current=%u boosted=%d boosts=%lu "
			  "skipped=%lu hypercalls=%lu\n", gs[i].id, gs[i].key,
			  gs[i].weight, in.base, in.target, in.current,
			  in.boosted, in.boosts, in.skipped, in.hypercalls);
	}
}

void xgpub_sched_stop(void)
{
	vcpu_off();
}

bool xgpub_vcpu_info(uint32_t domid, unsigned int *weight,
		     unsigned long *boosts)
{
	struct xgpu_vcpu_dom_info in;

	if (!V || xgpu_vcpu_dom_info(V, domid, &in))
		return false;
	*weight = in.current;
	*boosts = in.boosts;
	return true;
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
		if (V && is_xen(g->id) &&
		    !xgpu_vcpu_dom_add(V, g->id, w, ga->now))
			g->vcpu = true;
	}
	if (!g->seen) {
		g->seen = true;
		g->gpu = 0;
		g->busy = false;
		g->submitting = false;
		g->drained = 0;
		g->runnable = false;
	}
	g->drained += __atomic_load_n(&c->st->drained, __ATOMIC_ACQUIRE);
	g->submitting |= __atomic_load_n(&c->st->submitting,
					 __ATOMIC_ACQUIRE) != 0;
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
	runs++;
	/* drain the kicks: we look at everything anyway */
	{
		uint64_t v;

		while (read(xgpub_sched_kick_fd, &v, sizeof(v)) > 0)
			kicks += v;
	}
	for (int i = 0; i < MAX_G; i++)
		gs[i].seen = false;
	xgpub_children_each(gather_child, &ga);
	for (int i = 0; i < MAX_G; i++) {
		struct sg *g = &gs[i];

		if (!g->used)
			continue;
		if (!g->seen) {
			if (g->vcpu)
				xgpu_vcpu_dom_remove(V, g->id, now);
			xgpu_sched_guest_remove(S, g->id, now);
			if (state != NONE && cur == g->id)
				state = NONE;
			g->used = false;
			continue;
		}
		xgpu_sched_guest_runnable(S, g->id, g->runnable, now);
		/*
		 * Its work in flight drained since the last look (a count,
		 * since a short batch may come and go between two looks).
		 * Unless it is already submitting more, a thread of the
		 * guest now waits for that completion to issue the next.
		 */
		if (g->vcpu && (int32_t)(g->drained - g->drained_seen) > 0)
			xgpu_vcpu_completed(V, g->id,
					    g->busy || g->submitting, now);
		g->drained_seen = g->drained;
	}
	next = xgpu_sched_tick(S, now);
	if (V) {
		uint64_t vn = xgpu_vcpu_tick(V, now);

		if (vn < next)
			next = vn;
	}

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
		if (gs[i].vcpu)
			xgpu_vcpu_dom_set(V, gs[i].id, weight, xgpub_now_ns());
	}
}
