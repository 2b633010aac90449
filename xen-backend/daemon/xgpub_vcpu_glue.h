/* SPDX-License-Identifier: MIT */
/*
 * xgpub_vcpu_glue.h: the VCPU coordinator (scheduler/xgpu_vcpu.h) in the
 * daemon (xgpub_vcpu_glue.c).  It follows the GPU scheduler: the
 * scheduler glue tells it which Xen guests it schedules, their weights
 * and the completions of their GPU work.
 */
#ifndef XGPUB_VCPU_GLUE_H
#define XGPUB_VCPU_GLUE_H

#include <stdbool.h>
#include <stdint.h>

#include "xgpu_ctl.h"

#define XGPUB_STR_(x)	#x
#define XGPUB_STR(x)	XGPUB_STR_(x)
#define XGPUB_VCPU_BOOST_USAGE						\
	"PCT[:MS], PCT " XGPUB_STR(XGPU_CTL_BOOST_PCT_MIN) ".."		\
	XGPUB_STR(XGPU_CTL_BOOST_PCT_MAX) ", MS 0.."			\
	XGPUB_STR(XGPU_CTL_BOOST_MS_MAX)

struct xgpub_guest;
struct xgpub_reply;

/* the VCPU coordinator (after xgpub_sched_start): on only for Xen guests,
 * with the scheduler on, and where libxenctrl loads; logs which */
void xgpub_vcpu_start(bool xen, bool on, unsigned int boost_pct,
		      unsigned int boost_ms);
/* "PCT[:MS]" of --vcpu-boost and `vcpu on`: 0, or -1 when out of
 * range (MS left out: 0, the default) */
int xgpub_vcpu_parse_boost(const char *s, unsigned int *pct,
			   unsigned int *ms);
/* control command "vcpu [on [PCT[:MS]] | off]" */
int xgpub_vcpu_ctl(struct xgpub_reply *r, int argc, char **argv);

/* ---- for the scheduler glue --------------------------------------------- */

/* the GPU scheduler runs: the coordinator may follow it */
void xgpub_vcpu_sched_started(void);
/* it is on */
bool xgpub_vcpu_is_on(void);
/* gives every domain its own VCPU weight back */
void xgpub_vcpu_stop(void);
/* the scheduler took g in, g's weight changed */
void xgpub_vcpu_guest_join(struct xgpub_guest *g, uint64_t now);
void xgpub_vcpu_guest_weight(struct xgpub_guest *g, uint64_t now);
/* the scheduler let the guest of uid go (g: its entry, if still there) */
void xgpub_vcpu_guest_leave(uint32_t uid, struct xgpub_guest *g,
			    uint64_t now);
/* a step of the scheduler saw g: boost it if its GPU work drained */
void xgpub_vcpu_guest_step(struct xgpub_guest *g, uint64_t now);
/* end due boosts; when to come back (UINT64_MAX: no boost) */
uint64_t xgpub_vcpu_tick(uint64_t now);
/* VCPU weight now and boosts so far of g (false: none) */
bool xgpub_vcpu_info(const struct xgpub_guest *g, unsigned int *weight,
		     unsigned long *boosts);

#endif /* XGPUB_VCPU_GLUE_H */
