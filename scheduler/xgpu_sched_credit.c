// SPDX-License-Identifier: MIT
/*
 * xgpu_sched_credit.c: the credit policy (see xgpu_sched.h).
 *
 * Why credit handed out = GPU time charged in the period (and not the
 * period's wall time as in Xen): the GPU is switched with a cost and a
 * capped guest may leave it idle, so less than a period of GPU time is
 * used; handing out a full period would make credit pile up at the ceiling
 * for everyone and the ceiling would then decide the shares, not the
 * weights.  With the two equal, the sum of credits only moves when guests
 * come and go, each busy guest's credit stays within a few slices of zero,
 * and its GPU time follows its weight to within that over any window.
 */
#include <stddef.h>

#include "xgpu_sched_priv.h"

static bool capped_out(const struct xgpu_sched_guest *g)
{
	return g->cap && g->cap_avail <= 0;
}

/*
 * Ceiling on credit: one period (parameter), or two of the longest recent
 * turns if that is more, bounded by the debt limit.  Credit moves in steps
 * of whole turns: a guest waiting for the others' turns must be able to
 * bank what its weight earns meanwhile, or the ceiling eats the share of
 * the heavy guests.  With kernels longer than a slice a turn is one or two
 * kernels; 40 ms turns under a 30 ms ceiling gave 1:2:3 for 1:2:4.  The
 * same for a capped guest: its cap already bounds what it gets per period,
 * and a lower ceiling would give its credit away while it waits behind
 * long kernels, so that it would then lose the token to the others and
 * fall short of its cap.
 */
static int64_t ceiling(const struct xgpu_sched *s)
{
	uint64_t c = s->p.credit_max_ns, t = 2 * s->turn_max;

	if (t > c)
		c = t < s->p.debt_max_ns ? t : s->p.debt_max_ns;
	return (int64_t)c;
}

/*
 * Share `r` ns of credit among the active guests by weight.  A guest takes
 * at most what brings it to its ceiling and, when capped, what its cap lets
 * it use in a period; what it cannot take goes to the others by weight
 * (water-filling).  What nobody can take is dropped.
 */
static void distribute(struct xgpu_sched *s, uint64_t r, uint64_t wall)
{
	unsigned int i, left = 0;

	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];

		g->scratch = g->active && g->credit < ceiling(s);
		left += g->scratch;
	}
	while (left && r) {
		uint64_t w = 0, given = 0;
		bool full = false;

		for (i = 0; i < s->n; i++)
			if (s->g[i]->scratch)
				w += s->g[i]->weight;
		/* first the guests that cannot take their part */
		for (i = 0; i < s->n; i++) {
			struct xgpu_sched_guest *g = s->g[i];
			uint64_t part, lim;

			if (!g->scratch)
				continue;
			part = r * g->weight / w;
			lim = (uint64_t)(ceiling(s) - g->credit);
			if (g->cap && xgpu_sched_cap_ns(g->cap, wall) < lim)
				lim = xgpu_sched_cap_ns(g->cap, wall);
			if (part < lim)
				continue;
			g->credit += (int64_t)lim;
			given += lim;
			g->scratch = false;
			left--;
			full = true;
		}
		if (full) {
			/* the others' parts change: share the rest again */
			r -= given;
			continue;
		}
		for (i = 0; i < s->n; i++) {
			struct xgpu_sched_guest *g = s->g[i];

			if (g->scratch)
				g->credit += (int64_t)(r * g->weight / w);
		}
		break;
	}
}

static void credit_account(struct xgpu_sched *s, uint64_t wall)
{
	int64_t debt = -(int64_t)s->p.debt_max_ns;
	uint64_t r = s->charged;
	unsigned int i;

	/*
	 * One GPU does at most `wall` of work in a period; more was charged
	 * when holds straddled accounting points (long kernels): the rest is
	 * handed out in the next periods.  The carry is bounded, so that
	 * bogus charges fade.
	 */
	r = r + s->carry < r ? UINT64_MAX : r + s->carry;
	s->carry = 0;
	if (r > wall) {
		s->carry = r - wall;
		if (s->carry > s->p.debt_max_ns)
			s->carry = s->p.debt_max_ns;
		r = wall;
	}
	distribute(s, r, wall);
	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];
		int64_t top = ceiling(s);

		if (g->credit > top)
			g->credit = top;
		if (g->credit < debt)
			g->credit = debt;
		if (g->cap) {
			/*
			 * A new budget of cap% of the period; overshoot is a
			 * debt paid from it.  An idle guest banks nothing; one
			 * that waited for the token with budget left keeps up
			 * to one more period of it, or it would fall short of
			 * its cap whenever it waits across an accounting point
			 * (behind 20 ms kernels: 23.5% for a 25% cap).
			 */
			int64_t full = (int64_t)xgpu_sched_cap_ns(g->cap,
							s->p.period_ns);

			if (g->runnable || g == s->holder)
				full *= 2;
			g->cap_avail += (int64_t)xgpu_sched_cap_ns(g->cap,
								   wall);
			if (g->cap_avail > full)
				g->cap_avail = full;
		}
	}
}

/*
 * Pick: UNDER before OVER; within the class, among the guests whose credit
 * is within half a slice of the most, the one waiting longest (credits
 * that close count as a tie).  Strictly the most credit lets a guest that
 * is a fraction of a millisecond ahead take another slice, plus the kernel
 * that overshoots it, while the one behind waits; with the margin, guests
 * that are even take turns.  Beyond the margin credit decides, so the
 * long-run shares are the same.  (A margin near the credit ceiling would
 * not do: guests would take turns until the heavy ones hit the ceiling and
 * lost credit, and shares would drift off the weights.)
 */
static bool eligible(const struct xgpu_sched_guest *g)
{
	return g->runnable && !capped_out(g);
}

static struct xgpu_sched_guest *credit_choose(struct xgpu_sched *s)
{
	struct xgpu_sched_guest *top = NULL, *best = NULL;
	int64_t floor;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];

		if (eligible(g) && (!top || g->credit > top->credit))
			top = g;
	}
	if (!top)
		return NULL;
	floor = top->credit - (int64_t)(s->p.slice_ns / 2);
	/* an UNDER guest never yields to an OVER one */
	if (top->credit > 0 && floor < 1)
		floor = 1;
	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];

		if (!eligible(g) || g->credit < floor)
			continue;
		if (!best || xgpu_sched_waited_longer(g, best))
			best = g;
	}
	return best;
}

/* a capped guest's slice ends where its budget would */
static uint64_t credit_slice(const struct xgpu_sched *s,
			     const struct xgpu_sched_guest *g)
{
	uint64_t len = s->p.slice_ns;

	if (g->cap) {
		uint64_t left = g->cap_avail > 0 ? (uint64_t)g->cap_avail : 0;

		if (left < s->p.min_slice_ns)
			left = s->p.min_slice_ns;
		if (left < len)
			len = left;
	}
	return len;
}

static void credit_info(const struct xgpu_sched *s,
			const struct xgpu_sched_guest *g,
			struct xgpu_sched_info *out)
{
	if (!g->runnable && g != s->holder)
		out->state = XGPU_SCHED_IDLE;
	else if (capped_out(g))
		out->state = XGPU_SCHED_CAPPED;
	else
		out->state = g->credit > 0 ? XGPU_SCHED_UNDER : XGPU_SCHED_OVER;
}

const struct xgpu_sched_ops xgpu_sched_credit_ops = {
	.name = "credit",
	.account = credit_account,
	.choose = credit_choose,
	.slice = credit_slice,
	.info = credit_info,
};
