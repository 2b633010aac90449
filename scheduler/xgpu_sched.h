/* SPDX-License-Identifier: MIT */
/*
 * xgpu_sched.h: who holds the GPU, for how long, and what it cost.
 *
 * The GPU is given to ONE guest at a time (the token).  The holder's worker
 * submits its guest's work with a bounded amount in flight; when the slice
 * ends the daemon revokes the token, the worker stops submitting, drains
 * what is in flight and reports the GPU time its work really took (from
 * completion timestamps: it was alone on the GPU, so wall time between
 * completions is its GPU time).  This core decides who gets the token next
 * and keeps the accounting; it knows nothing of Xen, CUDA or shared memory,
 * and time is passed in (ns, any monotonic origin) so that tests run it
 * under a fake clock.  It is not thread-safe: the daemon's event loop is
 * its only caller.
 *
 * GRANULARITY.  Kernels are not preemptible and in-flight work must drain,
 * so a guest holds the GPU for at most slice + its bounded in-flight work:
 * with kernels of k ns the granularity of sharing is max(slice, k) (plus
 * the drain of at most the worker's in-flight bound).  Fairness is exact
 * in the long run anyway, because the guest is charged what it really
 * used: an overshooting kernel puts the guest into debt that it pays back
 * by waiting (see WAITS below).
 *
 * CALL SEQUENCE (the daemon):
 *
 *   s = xgpu_sched_create("credit", &params, now);      (or "fifo";
 *                       `now` on the clock of every later call)
 *   guest connects:    xgpu_sched_guest_add(s, id, now);
 *                      xgpu_sched_guest_set(s, id, weight, cap, now);
 *   guest has queued work / has none:
 *                      xgpu_sched_guest_runnable(s, id, true|false, now);
 *   loop:
 *     deadline = xgpu_sched_tick(s, now);  accounting; call it again at
 *                                          or after `deadline`
 *     if no holder:
 *       xgpu_sched_pick(s, now, &id)  0: id holds the token from now on
 *                                     -EAGAIN: nobody eligible (all idle,
 *                                     or capped): sleep until a guest turns
 *                                     runnable or the tick deadline
 *       len = xgpu_sched_slice(s, id, now); grant the token until now+len
 *     at now+len, or earlier when the holder has no more work (and no
 *     other guest needs to wait: the daemon may then leave it the token):
 *       revoke; wait for the worker to drain; it reports gpu_ns;
 *       xgpu_sched_charge(s, id, gpu_ns, now);
 *       xgpu_sched_release(s, id, now);
 *   guest leaves:      xgpu_sched_guest_remove(s, id, now) (a holder is
 *                      simply dropped: its token is gone)
 *
 * charge() may also be called while holding (incremental reports); charge
 * before release() so that GPU time is split correctly between accounting
 * periods in the statistics.  pick() runs due accounting itself, so a
 * late tick() only delays statistics, never fairness.
 *
 * CREDIT POLICY ("credit", after Xen's credit scheduler and GPUvm):
 *   - per guest a weight (1..65535, default 256) and a cap (percent of one
 *     GPU, 0 = none, 1..100);
 *   - every period (default 30 ms) the GPU time charged during the period
 *     is shared out as credit (ns) among the ACTIVE guests (runnable at
 *     some point in the period, or holding) in proportion to their weights
 *     (water-filling: a guest that cannot take its part, because its credit
 *     is at the ceiling or its cap bounds what it can use in a period, gets
 *     what it can take and the rest goes to the others by weight).  Credit
 *     handed out equals GPU time used (at most the period's wall time; a
 *     long kernel's excess is handed out in the next periods), so the sum
 *     of credits stays put: shares follow weights among busy guests, and
 *     the share of an idle guest is lent to the busy ones by weight;
 *   - credit is clamped to at most one period (credit_max_ns), so that a
 *     guest back from idle cannot burst: it gets at most its share plus
 *     two periods' worth (its credit, plus the debt the others ran up
 *     using its part) ahead of the others; debt is clamped to 10 periods;
 *   - credit > 0: UNDER, otherwise OVER.  pick: UNDER before OVER; within
 *     the class, among the guests within half a slice of the most credit,
 *     the one waiting longest (closer credits count as a tie: guests that
 *     are even take turns instead of one of them taking a second slice);
 *     work-conserving: an OVER guest gets the GPU when no UNDER guest is
 *     runnable, EXCEPT a capped guest that has used its cap: it is CAPPED
 *     (not eligible) until the next accounting and the GPU may idle;
 *   - the cap is a budget of cap% of each period's wall time; overshoot is
 *     a debt paid from the next periods' budgets, so a capped guest with
 *     20 ms kernels still averages its cap; a guest that waited for the
 *     token with budget left keeps up to one more period of it (or waiting
 *     across an accounting point would make it fall short of its cap); a
 *     capped holder's slice ends where its budget would (never below
 *     min_slice_ns);
 *   - charge(gpu_ns) subtracts measured GPU time from credit (and budget);
 *   - a joining guest starts with zero credit, or with the active guests'
 *     average credit when that is lower (their level is not always zero:
 *     guests that left with credit or debt move it, and starting above
 *     them would be a head start), and a cap budget pro rata of the period
 *     left; it gets credit from the next accounting.
 *
 * WAITS.  A guest that just held the token for h <= slice + k waits until
 * the others have had their share of h: with equal weights about
 * (n - 1) x (slice + k), plus up to a kernel per other guest (their holds
 * overshoot too) and an accounting period; a guest of share f waits about
 * h (1 - f) / f between holds.  tests/unit/check_sched.c measures both.
 *
 * FIFO POLICY ("fifo"): the runnable guest waiting longest gets the token,
 * same slice, no weights, no caps.  The baseline: it shares the GPU by
 * turns, i.e. by slices, not by weight.
 */
#ifndef XGPU_SCHED_H
#define XGPU_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#define XGPU_SCHED_WEIGHT_DEFAULT	256u
#define XGPU_SCHED_WEIGHT_MAX		65535u
#define XGPU_SCHED_CAP_MAX		100u
/* guest_set(): leave this parameter as it is */
#define XGPU_SCHED_KEEP			(~0u)

#define XGPU_SCHED_PERIOD_DEFAULT	30000000ull	/* 30 ms */
#define XGPU_SCHED_SLICE_DEFAULT	5000000ull	/* 5 ms */
#define XGPU_SCHED_MIN_SLICE_DEFAULT	100000ull	/* 100 us */

/* Parameters; a zero field takes its default. */
struct xgpu_sched_params {
	uint64_t period_ns;	/* accounting period (30 ms) */
	uint64_t slice_ns;	/* token time before revoke (5 ms) */
	uint64_t min_slice_ns;	/* shortest slice for a capped guest (100 us) */
	uint64_t credit_max_ns;	/* credit ceiling (one period) */
	uint64_t debt_max_ns;	/* debt floor, positive (10 periods) */
};

enum xgpu_sched_state {
	XGPU_SCHED_IDLE,	/* neither runnable nor holding */
	XGPU_SCHED_UNDER,	/* credit > 0 (fifo: every runnable guest) */
	XGPU_SCHED_OVER,	/* credit <= 0: runs if no UNDER is runnable */
	XGPU_SCHED_CAPPED,	/* used its cap in this period: not eligible */
};

struct xgpu_sched_info {
	uint32_t id;
	unsigned int weight;
	unsigned int cap;		/* percent, 0 = none */
	int64_t credit_ns;
	enum xgpu_sched_state state;
	bool runnable;
	bool holder;
	uint64_t gpu_ns;		/* total GPU time charged */
	double share_period;		/* % of the last period's wall time */
	double share_minute;		/* % of the last ~60 s of wall time
					 * (restarts after a longer stall) */
	uint64_t picks;			/* times it was given the token */
	uint64_t max_wait_ns;		/* longest wait for the token while
					 * runnable, the current one too */
};

struct xgpu_sched;

/*
 * A policy ("credit" or "fifo").  Its table is private to scheduler/
 * (xgpu_sched_priv.h): it holds only what the policy decides (who gets the
 * token, for how long, the per-period credit); the guest table, the token
 * and the accounting clock are the same for both.
 */
struct xgpu_sched_ops;

extern const struct xgpu_sched_ops xgpu_sched_credit_ops;
extern const struct xgpu_sched_ops xgpu_sched_fifo_ops;

/* "credit" or "fifo"; NULL when unknown */
const struct xgpu_sched_ops *xgpu_sched_lookup(const char *name);

/* NULL with errno set (EINVAL: unknown policy or bad parameters) */
struct xgpu_sched *xgpu_sched_create(const char *policy,
				     const struct xgpu_sched_params *p,
				     uint64_t now);
const struct xgpu_sched_ops *xgpu_sched_ops_of(const struct xgpu_sched *s);
/* the parameters in force, defaults filled in */
void xgpu_sched_params_get(const struct xgpu_sched *s,
			   struct xgpu_sched_params *p);
/* the ids of the guests, up to max of them; returns how many there are */
unsigned int xgpu_sched_guest_ids(const struct xgpu_sched *s, uint32_t *ids,
				  unsigned int max);
/* the holder's id in *id, or -ENOENT when nobody holds the token */
int xgpu_sched_holder(const struct xgpu_sched *s, uint32_t *id);
const char *xgpu_sched_state_name(enum xgpu_sched_state st);

/*
 * The calls of CALL SEQUENCE above.  Those that return int return 0 or a
 * negative errno: -ENOENT (no such guest), -EEXIST, -EINVAL, -ENOMEM,
 * -EBUSY (pick while a guest holds the token), -EAGAIN (pick: nobody
 * eligible), -EPERM (release by a guest that does not hold the token).
 */
void xgpu_sched_destroy(struct xgpu_sched *s);
int xgpu_sched_guest_add(struct xgpu_sched *s, uint32_t id, uint64_t now);
int xgpu_sched_guest_remove(struct xgpu_sched *s, uint32_t id, uint64_t now);
int xgpu_sched_guest_set(struct xgpu_sched *s, uint32_t id,
			 unsigned int weight, unsigned int cap, uint64_t now);
int xgpu_sched_guest_runnable(struct xgpu_sched *s, uint32_t id,
			      bool runnable, uint64_t now);
int xgpu_sched_pick(struct xgpu_sched *s, uint64_t now, uint32_t *id);
/* token time for the holder `id`, in ns (0 if id is not holding) */
uint64_t xgpu_sched_slice(struct xgpu_sched *s, uint32_t id, uint64_t now);
int xgpu_sched_charge(struct xgpu_sched *s, uint32_t id, uint64_t gpu_ns,
		      uint64_t now);
int xgpu_sched_release(struct xgpu_sched *s, uint32_t id, uint64_t now);
/* accounting when due; returns the time of the next accounting */
uint64_t xgpu_sched_tick(struct xgpu_sched *s, uint64_t now);
int xgpu_sched_guest_info(struct xgpu_sched *s, uint32_t id, uint64_t now,
			  struct xgpu_sched_info *out);

#endif /* XGPU_SCHED_H */
