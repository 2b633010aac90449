/* SPDX-License-Identifier: MIT */
/*
 * xgpu_vcpu.h: the VCPU coordinator.  Keeps each Xen domain's VCPU
 * scheduler weight in step with its GPU weight and boosts a domain whose
 * GPU work just completed.
 *
 * WHY.  A guest's GPU share is only usable if its VCPUs get to run: a
 * domain entitled to 3/4 of the GPU but with the default VCPU weight
 * competes for the CPUs as an equal and issues its batches late.  And a
 * guest that waits for its GPU work (cuStreamSynchronize, cuCtxSynchronize,
 * a copy back) has its VCPU blocked on the completion event: when the work
 * completes and nothing more is queued, the GPU sits idle for this guest
 * until that VCPU is scheduled again and issues the next batch.  Raising
 * its weight for a few milliseconds gets it back on a PCPU quickly (the
 * coordination of GViM: the VCPU scheduler knows when the GPU is waiting on
 * the guest).  Credit2 has no wake-up BOOST of its own, and credit1's
 * BOOST is lost to busy competitors; a weight boost works with both.
 *
 * POLICY (pure functions below, so that it is testable):
 *   - when a domain joins, its VCPU weight is read once: its BASE weight;
 *   - target = base x gpu_weight / 256, rounded, clamped to Xen's 1..65535
 *     (a domain at the default GPU weight keeps its VCPU weight);
 *   - boost: when a domain's GPU work completes and it has nothing more
 *     queued, its weight is raised to target x boost_pct / 100 (default
 *     200%, clamped) for boost_ns (default 10 ms), then set back to target.
 *     A boost is not extended by later completions (it would make a
 *     GPU-bound domain boosted for good);
 *   - rate limit: each boost costs two weight changes (raise, restore);
 *     a new boost starts no sooner than 2 x cost / max_hypercalls_per_sec
 *     after the previous one (cost = hypercalls per weight change: 1 with
 *     credit, 2 with credit2, which needs a read to keep the cap), so that
 *     boosts stay below max_hypercalls_per_sec per domain (default 200/s:
 *     one boost every 10 ms with credit, 20 ms with credit2).  Completions
 *     in between are counted as skipped;
 *   - when it leaves (or the coordinator is destroyed), the base weight is
 *     restored.
 *
 * BACKENDS: "xenctrl" loads libxenctrl at run time (dlopen of
 * libxenctrl.so.4.17, then libxenctrl.so) so that the daemon also runs
 * where Xen is absent: then the coordinator is OFF, says so in one log
 * line, and every call below succeeds and does nothing.  It speaks to
 * credit (XEN_SCHEDULER_CREDIT) and credit2 (XEN_SCHEDULER_CREDIT2); any
 * other Xen scheduler leaves it off.  Tests bring a backend of their own
 * (xgpu_vcpu_create_on).
 *
 * Time is passed in (ns, monotonic).  Not thread-safe: the daemon's event
 * loop is the only caller.  Functions return 0 or a negative errno.
 */
#ifndef XGPU_VCPU_H
#define XGPU_VCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XGPU_VCPU_WEIGHT_MIN		1u
#define XGPU_VCPU_WEIGHT_MAX		65535u
#define XGPU_VCPU_GPU_WEIGHT_UNIT	256u	/* GPU weight that keeps base */
#define XGPU_VCPU_BOOST_PCT_DEFAULT	200u
#define XGPU_VCPU_BOOST_NS_DEFAULT	10000000ull	/* 10 ms */
#define XGPU_VCPU_RATE_DEFAULT		200u	/* hypercalls/s per domain */

/* one line, no newline; level is a syslog level (LOG_ERR, LOG_INFO...) */
typedef void (*xgpu_vcpu_log_fn)(void *arg, int level, const char *msg);

/* a zero field takes its default */
struct xgpu_vcpu_params {
	unsigned int boost_pct;			/* boosted weight, % */
	uint64_t boost_ns;			/* boost window */
	unsigned int max_hypercalls_per_sec;	/* per domain, for boosts */
	/* xenctrl: library names to try, NULL-terminated; NULL: default */
	const char *const *xenctrl_libs;
};

/* A backend: how weights are read and written. */
struct xgpu_vcpu_backend {
	const char *name;
	/* 0, or a negative errno with a one-line reason in why */
	int (*open)(void **priv, const struct xgpu_vcpu_params *p, char *why,
		    size_t whylen);
	void (*close)(void *priv);
	/* what it drives, e.g. "xen credit2 via libxenctrl.so.4.17" */
	const char *(*describe)(void *priv);
	/* hypercalls that one set_weight() makes */
	unsigned int (*set_cost)(void *priv);
	int (*get_weight)(void *priv, uint32_t domid, unsigned int *weight);
	int (*set_weight)(void *priv, uint32_t domid, unsigned int weight);
};

extern const struct xgpu_vcpu_backend xgpu_vcpu_xenctrl_backend;

const struct xgpu_vcpu_backend *xgpu_vcpu_backend_lookup(const char *name);

/* the policy */
unsigned int xgpu_vcpu_target(unsigned int base, unsigned int gpu_weight);
unsigned int xgpu_vcpu_boosted(unsigned int target, unsigned int boost_pct);
/* shortest time between two boosts of one domain */
uint64_t xgpu_vcpu_boost_interval(unsigned int set_cost,
				  unsigned int max_hypercalls_per_sec);

struct xgpu_vcpu;

/*
 * NULL (errno EINVAL or ENOMEM) only for an unknown backend, bad params or
 * no memory; a backend that cannot open gives a coordinator that is off,
 * after one log line.  log may be NULL.
 */
struct xgpu_vcpu *xgpu_vcpu_create(const char *backend,
				   const struct xgpu_vcpu_params *p,
				   xgpu_vcpu_log_fn log, void *log_arg);
/* the same on a backend given by its table (b NULL: unknown) */
struct xgpu_vcpu *xgpu_vcpu_create_on(const struct xgpu_vcpu_backend *b,
				      const struct xgpu_vcpu_params *p,
				      xgpu_vcpu_log_fn log, void *log_arg);
/* restores every domain's base weight */
void xgpu_vcpu_destroy(struct xgpu_vcpu *c);
bool xgpu_vcpu_enabled(const struct xgpu_vcpu *c);
/* what it drives ("off" when off) and its parameters, defaults filled in */
const char *xgpu_vcpu_describe(const struct xgpu_vcpu *c);
void xgpu_vcpu_params_get(const struct xgpu_vcpu *c,
			  struct xgpu_vcpu_params *p);

/* reads the base weight, sets the target */
int xgpu_vcpu_dom_add(struct xgpu_vcpu *c, uint32_t domid,
		      unsigned int gpu_weight, uint64_t now);
/* restores the base weight */
int xgpu_vcpu_dom_remove(struct xgpu_vcpu *c, uint32_t domid, uint64_t now);
/* the GPU weight changed */
int xgpu_vcpu_dom_set(struct xgpu_vcpu *c, uint32_t domid,
		      unsigned int gpu_weight, uint64_t now);
/* the domain's GPU work completed; more_queued: it has more to run */
int xgpu_vcpu_completed(struct xgpu_vcpu *c, uint32_t domid,
			bool more_queued, uint64_t now);
/* ends due boosts; returns when to call it next (UINT64_MAX: no boost) */
uint64_t xgpu_vcpu_tick(struct xgpu_vcpu *c, uint64_t now);

struct xgpu_vcpu_dom_info {
	unsigned int base;
	unsigned int target;
	unsigned int current;	/* what was last written (or read) */
	bool boosted;
	uint64_t boost_until;
	unsigned long boosts;
	unsigned long skipped;	/* completions not boosted: rate limit */
	unsigned long hypercalls;
};
int xgpu_vcpu_dom_info(const struct xgpu_vcpu *c, uint32_t domid,
		       struct xgpu_vcpu_dom_info *out);

#endif /* XGPU_VCPU_H */
