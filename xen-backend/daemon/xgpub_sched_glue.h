/* SPDX-License-Identifier: MIT */
/*
 * xgpub_sched_glue.h: what the rest of the daemon sees of the GPU
 * scheduler (xgpub_sched_glue.c drives scheduler/ for the workers).
 */
#ifndef XGPUB_SCHED_GLUE_H
#define XGPUB_SCHED_GLUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XGPUB_DEFAULT_WEIGHT 256u

struct xgpub_sched_view {
	int64_t credit_ns;
	char state[8];		/* UNDER, OVER, CAPPED, IDLE, or "-" */
	uint64_t gpu_ns;
	double share_period;	/* percent of the GPU, last period */
	double share_minute;	/* percent of the GPU, last minute */
};

/* start the scheduler ("credit", "fifo"; "off": -1); the fd workers kick,
 * or -2 on error */
int xgpub_sched_start(const char *policy);
/* the VCPU coordinator (after xgpub_sched_start): on only for Xen guests,
 * with the scheduler on, and where libxenctrl loads; logs which */
void xgpub_vcpu_start(bool xen, bool on, unsigned int boost_pct,
		      unsigned int boost_ms);
/* "PCT[:MS]" of --vcpu-boost and `xgpu vcpu on -b`: 0, or -1 when out of
 * range (MS left out: 0, the default) */
#define XGPUB_VCPU_BOOST_USAGE "PCT[:MS], PCT 100..10000, MS 0..1000"
int xgpub_vcpu_parse_boost(const char *s, unsigned int *pct,
			   unsigned int *ms);
/* VCPU weight now and boosts so far of a Xen domain (false: none) */
bool xgpub_vcpu_info(uint32_t domid, unsigned int *weight,
		     unsigned long *boosts);
/* control socket command "vcpu [on [PCT[:MS]] | off]" */
struct xgpub_out;
void xgpub_vcpu_ctl(struct xgpub_out *o, int argc, char **argv);
/* control socket command "stats": the scheduler's counters (kicks: wake-ups
 * from workers, runs: scheduling steps) */
void xgpub_sched_stats(struct xgpub_out *o);
/* at exit: give the domains their VCPU weights back */
void xgpub_sched_stop(void);
/* one step of the daemon's side; returns when to come back (ns) */
uint64_t xgpub_sched_run(void);

/* the scheduler's view of the guest with settings key `key` */
void xgpub_sched_view(const char *key, struct xgpub_sched_view *v);
/* weight/cap of `key` changed (xgpu sched-credit) */
void xgpub_sched_settings_changed(const char *key, uint32_t weight,
				  uint32_t cap);
/* settings key of a child (xgpub_guests.c) and the stored settings */
struct xgpub_child;
void xgpub_child_refresh(struct xgpub_child *c);
void xgpub_guest_key(const struct xgpub_child *c, char *key, size_t len);
void xgpub_guest_settings(const char *key, uint32_t *weight, uint32_t *cap);

#endif /* XGPUB_SCHED_GLUE_H */
