// SPDX-License-Identifier: MIT
/*
 * xgpu_sched.c: the daemon's entry points, and all that is the same for
 * every policy: the registry, the guest table, the token, the accounting
 * clock and the statistics.  The policy (s->ops) decides who gets the
 * token, for how long, and the credit handed out at each accounting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xgpu_sched_priv.h"
#include "xgpu_table.h"

static const void *const policies[] = {
	&xgpu_sched_credit_ops,
	&xgpu_sched_fifo_ops,
};

const struct xgpu_sched_ops *xgpu_sched_lookup(const char *name)
{
	return xgpu_table_lookup(policies, XGPU_ARRAY_SIZE(policies), name);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* a * b / c without overflow for the ranges used here (c != 0) */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

uint64_t xgpu_sched_cap_ns(unsigned int cap, uint64_t wall)
{
	return muldiv(wall, cap, 100);
}

/* ---- the scheduler and what it holds ------------------------------------- */

struct xgpu_sched *xgpu_sched_create(const char *policy,
				     const struct xgpu_sched_params *p,
				     uint64_t now)
{
	const struct xgpu_sched_ops *ops = xgpu_sched_lookup(policy);
	struct xgpu_sched_params q = { 0 };
	struct xgpu_sched *s;

	if (!ops) {
		errno = EINVAL;
		return NULL;
	}
	if (p)
		q = *p;
	if (!q.period_ns)
		q.period_ns = XGPU_SCHED_PERIOD_DEFAULT;
	if (!q.slice_ns)
		q.slice_ns = XGPU_SCHED_SLICE_DEFAULT;
	if (!q.min_slice_ns)
		q.min_slice_ns = q.slice_ns < XGPU_SCHED_MIN_SLICE_DEFAULT ?
				 q.slice_ns : XGPU_SCHED_MIN_SLICE_DEFAULT;
	if (!q.credit_max_ns)
		q.credit_max_ns = q.period_ns;
	if (!q.debt_max_ns)
		q.debt_max_ns = 10 * q.period_ns;
	/*
	 * Bounds keep every product below 2^64 and every credit inside
	 * int64_t: one hour is far beyond any sensible period or slice.
	 */
	if (q.period_ns > 3600000000000ull || q.slice_ns > q.period_ns * 100 ||
	    q.min_slice_ns > q.slice_ns ||
	    q.credit_max_ns > XGPU_SCHED_CHARGE_MAX ||
	    q.debt_max_ns > XGPU_SCHED_CHARGE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->ops = ops;
	s->p = q;
	s->period_start = now;
	s->next_acct = now + q.period_ns;
	return s;
}

const struct xgpu_sched_ops *xgpu_sched_ops_of(const struct xgpu_sched *s)
{
	return s->ops;
}

void xgpu_sched_params_get(const struct xgpu_sched *s,
			   struct xgpu_sched_params *p)
{
	*p = s->p;
}

unsigned int xgpu_sched_guest_ids(const struct xgpu_sched *s, uint32_t *ids,
				  unsigned int max)
{
	unsigned int i;

	for (i = 0; i < s->n && i < max; i++)
		ids[i] = s->g[i]->id;
	return s->n;
}

int xgpu_sched_holder(const struct xgpu_sched *s, uint32_t *id)
{
	if (!s->holder)
		return -ENOENT;
	*id = s->holder->id;
	return 0;
}

const char *xgpu_sched_state_name(enum xgpu_sched_state st)
{
	switch (st) {
	case XGPU_SCHED_IDLE:
		return "idle";
	case XGPU_SCHED_UNDER:
		return "under";
	case XGPU_SCHED_OVER:
		return "over";
	case XGPU_SCHED_CAPPED:
		return "capped";
	}
	return "?";
}

void xgpu_sched_destroy(struct xgpu_sched *s)
{
	unsigned int i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->g[i]);
	free(s->g);
	free(s);
}

/* ---- the guests and the token -------------------------------------------- */

static struct xgpu_sched_guest *find(const struct xgpu_sched *s, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->g[i]->id == id)
			return s->g[i];
	return NULL;
}

/*
 * A joiner's credit: zero, or the active guests' average when that is
 * lower.  Credit handed out is GPU time used, so the busy guests' credits
 * keep whatever level they have (guests that left with credit or debt,
 * clamps move it); starting at zero while they sit at -90 ms would be a
 * 90 ms head start.  Never above zero: joining is no way to get credit.
 */
static int64_t join_credit(const struct xgpu_sched *s)
{
	int64_t sum = 0;
	unsigned int i, n = 0;

	for (i = 0; i < s->n; i++) {
		if (!s->g[i]->active)
			continue;
		sum += s->g[i]->credit;
		n++;
	}
	return n && sum < 0 ? sum / (int64_t)n : 0;
}

int xgpu_sched_guest_add(struct xgpu_sched *s, uint32_t id, uint64_t now)
{
	struct xgpu_sched_guest *g, **ng;

	if (find(s, id))
		return -EEXIST;
	ng = xgpu_table_grow(s->g, &s->alloc, s->n, sizeof(*ng));
	if (!ng)
		return -ENOMEM;
	s->g = ng;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->id = id;
	g->weight = XGPU_SCHED_WEIGHT_DEFAULT;
	g->credit = join_credit(s);
	(void)now;
	s->g[s->n++] = g;
	return 0;
}

int xgpu_sched_guest_remove(struct xgpu_sched *s, uint32_t id, uint64_t now)
{
	unsigned int i;

	(void)now;
	for (i = 0; i < s->n; i++) {
		if (s->g[i]->id != id)
			continue;
		/* a leaving holder is simply dropped: the token is gone */
		if (s->holder == s->g[i])
			s->holder = NULL;
		free(s->g[i]);
		s->g[i] = s->g[--s->n];
		return 0;
	}
	return -ENOENT;
}

int xgpu_sched_guest_set(struct xgpu_sched *s, uint32_t id,
			 unsigned int weight, unsigned int cap, uint64_t now)
{
	struct xgpu_sched_guest *g = find(s, id);

	if (!g)
		return -ENOENT;
	if (weight != XGPU_SCHED_KEEP &&
	    (weight < 1 || weight > XGPU_SCHED_WEIGHT_MAX))
		return -EINVAL;
	if (cap != XGPU_SCHED_KEEP && cap > XGPU_SCHED_CAP_MAX)
		return -EINVAL;
	if (weight != XGPU_SCHED_KEEP)
		g->weight = weight;
	if (cap != XGPU_SCHED_KEEP && cap != g->cap) {
		uint64_t left = s->next_acct > now ? s->next_acct - now : 0;
		int64_t full = (int64_t)xgpu_sched_cap_ns(cap, s->p.period_ns);
		int64_t rata = (int64_t)xgpu_sched_cap_ns(cap, left);

		/*
		 * A new cap starts with its budget for what is left of the
		 * period; a changed one keeps any debt but no more than the
		 * new budget.
		 */
		if (!g->cap)
			g->cap_avail = rata;
		else if (g->cap_avail > full)
			g->cap_avail = full;
		g->cap = cap;
	}
	return 0;
}

int xgpu_sched_guest_runnable(struct xgpu_sched *s, uint32_t id,
			      bool runnable, uint64_t now)
{
	struct xgpu_sched_guest *g = find(s, id);

	if (!g)
		return -ENOENT;
	if (runnable && !g->runnable) {
		g->active = true;
		if (g != s->holder) {
			g->waiting = true;
			g->wait_since = now;
		}
	} else if (!runnable) {
		g->waiting = false;
	}
	g->runnable = runnable;
	return 0;
}

/* hand the token to g (statistics, wait) */
static void grant(struct xgpu_sched *s, struct xgpu_sched_guest *g,
		  uint64_t now)
{
	if (g->waiting && now > g->wait_since &&
	    now - g->wait_since > g->max_wait)
		g->max_wait = now - g->wait_since;
	g->waiting = false;
	g->active = true;
	g->picks++;
	g->held = true;
	g->hold_start = now;
	for (unsigned int i = 0; i < s->n; i++)
		s->g[i]->last = false;
	g->last = true;
	g->turn = 0;
	s->holder = g;
}

int xgpu_sched_pick(struct xgpu_sched *s, uint64_t now, uint32_t *id)
{
	struct xgpu_sched_guest *g;

	if (s->holder)
		return -EBUSY;
	/* due accounting first: a late tick() only delays statistics */
	xgpu_sched_tick(s, now);
	g = s->ops->choose(s);
	if (!g)
		return -EAGAIN;
	grant(s, g, now);
	*id = g->id;
	return 0;
}

uint64_t xgpu_sched_slice(struct xgpu_sched *s, uint32_t id, uint64_t now)
{
	(void)now;
	if (!s->holder || s->holder->id != id)
		return 0;
	return s->ops->slice ? s->ops->slice(s, s->holder) : s->p.slice_ns;
}

/*
 * Statistics: the part of a charge that belongs to the last period (a hold
 * that straddled the accounting point) goes there, pro rata of the hold's
 * wall time, so that one period never shows more than it had.
 */
static void charge_stats(struct xgpu_sched *s, struct xgpu_sched_guest *g,
			 uint64_t gpu, uint64_t now)
{
	uint64_t prev = 0;

	if (g->held) {
		uint64_t hs = g->hold_start;
		uint64_t he = g == s->holder ? now : g->hold_end;

		if (he <= s->period_start)
			prev = gpu;
		else if (hs < s->period_start)
			prev = muldiv(gpu, s->period_start - hs, he - hs);
	}
	if (prev && s->last_wall) {
		g->last_used = sat_add(g->last_used, prev);
		g->win_used[s->win_last] = sat_add(g->win_used[s->win_last],
						   prev);
	} else {
		prev = 0;
	}
	g->used = sat_add(g->used, gpu - prev);
	g->gpu_ns = sat_add(g->gpu_ns, gpu);
}

int xgpu_sched_charge(struct xgpu_sched *s, uint32_t id, uint64_t gpu_ns,
		      uint64_t now)
{
	struct xgpu_sched_guest *g = find(s, id);
	int64_t debt = -(int64_t)s->p.debt_max_ns;

	if (!g)
		return -ENOENT;
	if (gpu_ns > XGPU_SCHED_CHARGE_MAX)
		gpu_ns = XGPU_SCHED_CHARGE_MAX;
	charge_stats(s, g, gpu_ns, now);
	s->charged = sat_add(s->charged, gpu_ns);
	/*
	 * A turn: what the guest last given the GPU was charged since (its
	 * drain may be charged after its release).  Charges outside turns
	 * (tests, a worker's late report) say nothing about turn length.
	 */
	if (g->last) {
		g->turn = sat_add(g->turn, gpu_ns);
		if (g->turn > s->turn_max)
			s->turn_max = g->turn;
	}
	/* a long kernel overshoots: the debt is charged, within bounds */
	g->credit -= (int64_t)gpu_ns;
	if (g->credit < debt)
		g->credit = debt;
	if (g->cap) {
		g->cap_avail -= (int64_t)gpu_ns;
		if (g->cap_avail < debt)
			g->cap_avail = debt;
	}
	return 0;
}

int xgpu_sched_release(struct xgpu_sched *s, uint32_t id, uint64_t now)
{
	struct xgpu_sched_guest *g = find(s, id);

	if (!g)
		return -ENOENT;
	if (s->holder != g)
		return -EPERM;
	s->holder = NULL;
	g->hold_end = now;
	if (g->runnable) {
		g->waiting = true;
		g->wait_since = now;
	}
	return 0;
}

/* ---- accounting and statistics ------------------------------------------- */

static void account(struct xgpu_sched *s, uint64_t now)
{
	uint64_t wall = now - s->period_start;
	unsigned int i, c = s->win_cur;
	bool stale;

	if (s->ops->account)
		s->ops->account(s, wall);
	/* the longest turn fades by 1/16 a period (half in 11 periods) */
	s->turn_max -= s->turn_max / 16;
	/*
	 * A period longer than the whole window (the daemon stalled, or
	 * created us on another clock) says nothing about the last minute:
	 * the window starts again after it.
	 */
	stale = wall > XGPU_SCHED_WIN_SLOTS * XGPU_SCHED_WIN_NS;
	if (stale) {
		memset(s->win_wall, 0, sizeof(s->win_wall));
		for (i = 0; i < s->n; i++)
			memset(s->g[i]->win_used, 0,
			       sizeof(s->g[i]->win_used));
	} else {
		s->win_wall[c] = sat_add(s->win_wall[c], wall);
	}
	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];

		if (!stale)
			g->win_used[c] = sat_add(g->win_used[c], g->used);
		g->last_used = g->used;
		g->used = 0;
		g->active = g->runnable || g == s->holder;
	}
	s->win_last = c;
	if (s->win_wall[c] >= XGPU_SCHED_WIN_NS) {
		c = (c + 1) % XGPU_SCHED_WIN_SLOTS;
		s->win_wall[c] = 0;
		for (i = 0; i < s->n; i++)
			s->g[i]->win_used[c] = 0;
		s->win_cur = c;
	}
	s->last_wall = wall;
	s->charged = 0;
	s->period_start = now;
}

uint64_t xgpu_sched_tick(struct xgpu_sched *s, uint64_t now)
{
	if (now < s->next_acct)
		return s->next_acct;
	account(s, now);
	/* keep the grid; after a long stall restart it from now */
	s->next_acct += s->p.period_ns;
	if (s->next_acct <= now)
		s->next_acct = now + s->p.period_ns;
	return s->next_acct;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int xgpu_sched_guest_info(struct xgpu_sched *s, uint32_t id, uint64_t now,
			  struct xgpu_sched_info *out)
{
	struct xgpu_sched_guest *g = find(s, id);
	uint64_t used, wall;
	unsigned int i;

	if (!g)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->id = g->id;
	out->weight = g->weight;
	out->cap = g->cap;
	out->credit_ns = g->credit;
	out->runnable = g->runnable;
	out->holder = g == s->holder;
	out->gpu_ns = g->gpu_ns;
	out->share_period = pct(g->last_used, s->last_wall);
	/* the closed slots, the open one and the current period */
	used = g->used;
	wall = now > s->period_start ? now - s->period_start : 0;
	for (i = 0; i < XGPU_SCHED_WIN_SLOTS; i++) {
		used = sat_add(used, g->win_used[i]);
		wall = sat_add(wall, s->win_wall[i]);
	}
	out->share_minute = pct(used, wall);
	out->picks = g->picks;
	out->max_wait_ns = g->max_wait;
	/* a wait still going on counts: a starved guest is never picked */
	if (g->waiting && now > g->wait_since &&
	    now - g->wait_since > out->max_wait_ns)
		out->max_wait_ns = now - g->wait_since;
	s->ops->info(s, g, out);
	return 0;
}
