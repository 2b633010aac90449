/* SPDX-License-Identifier: MIT */
/*
 * xgpub_sched_glue.h: what the rest of the daemon sees of the GPU
 * scheduler (xgpub_sched_glue.c drives scheduler/ for the workers).
 */
#ifndef XGPUB_SCHED_GLUE_H
#define XGPUB_SCHED_GLUE_H

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
