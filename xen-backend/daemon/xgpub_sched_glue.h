/* SPDX-License-Identifier: MIT */
/*
 * xgpub_sched_glue.h: what the rest of the daemon sees of the GPU
 * scheduler (xgpub_sched_glue.c drives scheduler/ for the workers; the
 * VCPU coordinator that follows it is xgpub_vcpu_glue.h's).
 */
#ifndef XGPUB_SCHED_GLUE_H
#define XGPUB_SCHED_GLUE_H

#include <stdint.h>

struct xgpub_guest;
struct xgpub_guest_view;
struct xgpub_reply;

/* --gpu-limit-ms: a worker whose oldest GPU work in flight has run
 * longer is ended (0: no limit) */
extern uint64_t xgpub_gpu_limit_ns;

/* start the scheduler ("credit", "fifo"; "off": -1); the fd to poll for
 * the workers' kicks (an epoll set of their eventfds), or -2 on error */
int xgpub_sched_start(const char *policy);
/* a new worker's own kick eventfd, in the set (-1: the scheduler is off;
 * -2: none could be made, logged; the worker then has none) */
int xgpub_sched_kick_new(void);
/* a reaped worker's (or a failed fork's) kick: out of the set, closed */
void xgpub_sched_kick_drop(int fd);
/* at exit: give the domains their VCPU weights back */
void xgpub_sched_stop(void);
/* one step of the daemon's side; returns when to come back (ns) */
uint64_t xgpub_sched_run(void);

/* what the scheduler and the VCPU coordinator say of g (for `list`) */
void xgpub_sched_view(const struct xgpub_guest *g,
		      struct xgpub_guest_view *v);
/* control command "stats": the scheduler's counters (kicks: wake-ups
 * from workers, runs: scheduling steps) */
int xgpub_sched_stats(struct xgpub_reply *r, int argc, char **argv);
/* the same counters, for the metrics */
void xgpub_sched_counters(uint64_t *kicks, uint64_t *runs);

#endif /* XGPUB_SCHED_GLUE_H */
