/* SPDX-License-Identifier: MIT */
/*
 * xgpu_sched_priv.h: a policy's table, and the state of the core
 * (xgpu_sched.c) that it decides on: the guest table, the token, the
 * periodic accounting and the statistics.  Not for the daemon: it goes
 * through xgpu_sched.h.
 */
#ifndef XGPU_SCHED_PRIV_H
#define XGPU_SCHED_PRIV_H

#include <stddef.h>

#include "xgpu_sched.h"

/*
 * Statistics window: slots of at least one second of wall time each
 * (closed at the first accounting point after one second), so that the
 * closed slots always cover the last 60 s whatever the period is.
 */
#define XGPU_SCHED_WIN_SLOTS	61
#define XGPU_SCHED_WIN_NS	1000000000ull

struct xgpu_sched_guest {
	uint32_t id;
	unsigned int weight;
	unsigned int cap;
	bool runnable;
	bool active;		/* runnable or holding in this period */
	bool waiting;		/* runnable, not holding: wait_since valid */
	bool held;		/* hold_start is valid */
	bool scratch;		/* policy-private marker */
	int64_t credit;		/* ns of GPU time it may still use */
	int64_t cap_avail;	/* cap budget left in this period (ns) */
	uint64_t wait_since;
	uint64_t hold_start;
	uint64_t hold_end;	/* valid when held and not holding */
	uint64_t gpu_ns;	/* all it was charged */
	uint64_t turn;		/* charged since it was last given the GPU */
	bool last;		/* the last guest given the GPU */
	uint64_t used;		/* charged in the current period */
	uint64_t last_used;	/* charged in the last period */
	uint64_t picks;
	uint64_t max_wait;
	uint64_t win_used[XGPU_SCHED_WIN_SLOTS];
};

struct xgpu_sched {
	const struct xgpu_sched_ops *ops;
	struct xgpu_sched_params p;
	struct xgpu_sched_guest **g;
	unsigned int n;
	unsigned int alloc;
	struct xgpu_sched_guest *holder;
	uint64_t period_start;
	uint64_t next_acct;
	uint64_t charged;	/* GPU ns charged in the current period */
	uint64_t carry;		/* charged, not yet handed out as credit */
	uint64_t turn_max;	/* longest recent turn (charged), decaying */
	uint64_t last_wall;	/* wall time of the last period */
	uint64_t win_wall[XGPU_SCHED_WIN_SLOTS];
	unsigned int win_cur;	/* open slot */
	unsigned int win_last;	/* slot that got the last period */
};

/*
 * A policy: what it decides.  The core (xgpu_sched.c) does the rest the
 * same way for every policy: pick() runs due accounting, which calls
 * account(), then asks choose() while nobody holds the token; slice() and
 * guest_info() find the guest and ask slice() and info().  The name comes
 * first (xgpu_table_lookup()).
 */
struct xgpu_sched_ops {
	const char *name;
	/* its work at each accounting point, `wall` ns after the last one
	 * (NULL: none) */
	void (*account)(struct xgpu_sched *s, uint64_t wall);
	/* the guest to give the token to next; NULL: nobody is eligible */
	struct xgpu_sched_guest *(*choose)(struct xgpu_sched *s);
	/* token time for the holder g (NULL: always the slice parameter) */
	uint64_t (*slice)(const struct xgpu_sched *s,
			  const struct xgpu_sched_guest *g);
	/* out->state, and what it reports its own way; the core filled in
	 * the rest */
	void (*info)(const struct xgpu_sched *s,
		     const struct xgpu_sched_guest *g,
		     struct xgpu_sched_info *out);
};
_Static_assert(offsetof(struct xgpu_sched_ops, name) == 0,
	       "xgpu_table_lookup() finds a policy by its first member");

/* largest GPU time taken from one charge() (about 18 minutes) */
#define XGPU_SCHED_CHARGE_MAX	(1ull << 40)

/* cap budget of a guest for `wall` ns of wall time */
uint64_t xgpu_sched_cap_ns(unsigned int cap, uint64_t wall);

/* a waited longer for the token than b (ties: the lower id) */
static inline bool xgpu_sched_waited_longer(const struct xgpu_sched_guest *a,
					    const struct xgpu_sched_guest *b)
{
	if (a->wait_since != b->wait_since)
		return a->wait_since < b->wait_since;
	return a->id < b->id;
}

#endif /* XGPU_SCHED_PRIV_H */
