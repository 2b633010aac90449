/* SPDX-License-Identifier: MIT */
/*
 * xgpu_sched_priv.h: what the policies share (guest table, token, periodic
 * accounting and statistics).  Not for the daemon: it goes through
 * xgpu_sched.h.
 */
#ifndef XGPU_SCHED_PRIV_H
#define XGPU_SCHED_PRIV_H

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
	/* the policy's work at each accounting point (may be NULL) */
	void (*account)(struct xgpu_sched *s, uint64_t wall);
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

/* largest GPU time taken from one charge() (about 18 minutes) */
#define XGPU_SCHED_CHARGE_MAX	(1ull << 40)

struct xgpu_sched *xgpu_sched_core_create(const struct xgpu_sched_ops *ops,
					  const struct xgpu_sched_params *p,
					  uint64_t now);
void xgpu_sched_core_destroy(struct xgpu_sched *s);
struct xgpu_sched_guest *xgpu_sched_core_find(const struct xgpu_sched *s,
					      uint32_t id);
int xgpu_sched_core_add(struct xgpu_sched *s, uint32_t id, uint64_t now);
int xgpu_sched_core_remove(struct xgpu_sched *s, uint32_t id, uint64_t now);
int xgpu_sched_core_set(struct xgpu_sched *s, uint32_t id,
			unsigned int weight, unsigned int cap, uint64_t now);
int xgpu_sched_core_runnable(struct xgpu_sched *s, uint32_t id,
			     bool runnable, uint64_t now);
/* hand the token to g (statistics, wait) */
void xgpu_sched_core_grant(struct xgpu_sched *s, struct xgpu_sched_guest *g,
			   uint64_t now);
int xgpu_sched_core_charge(struct xgpu_sched *s, uint32_t id,
			   uint64_t gpu_ns, uint64_t now);
int xgpu_sched_core_release(struct xgpu_sched *s, uint32_t id, uint64_t now);
uint64_t xgpu_sched_core_tick(struct xgpu_sched *s, uint64_t now);
/* fills everything but state */
int xgpu_sched_core_info(struct xgpu_sched *s, uint32_t id, uint64_t now,
			 struct xgpu_sched_info *out);
/* cap budget of a guest for `wall` ns of wall time */
uint64_t xgpu_sched_cap_ns(unsigned int cap, uint64_t wall);

#endif /* XGPU_SCHED_PRIV_H */
