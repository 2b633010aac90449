// SPDX-License-Identifier: MIT
/*
 * xgpu_sched_fifo.c: first come, first served.  The runnable guest that
 * has waited longest gets the token for the same slice as credit; weights
 * and caps are stored (so that the daemon can switch policies) but not
 * used.  It is the baseline the credit policy is measured against: busy
 * guests get the GPU by turns, so GPU time follows slices and kernel
 * lengths, not weights.
 */
#include <stddef.h>

#include "xgpu_sched_priv.h"

static struct xgpu_sched_guest *fifo_choose(struct xgpu_sched *s)
{
	struct xgpu_sched_guest *best = NULL;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];

		if (g->runnable &&
		    (!best || xgpu_sched_waited_longer(g, best)))
			best = g;
	}
	return best;
}

static void fifo_info(const struct xgpu_sched *s,
		      const struct xgpu_sched_guest *g,
		      struct xgpu_sched_info *out)
{
	/* no credit here: every runnable guest is eligible */
	out->credit_ns = 0;
	out->state = g->runnable || g == s->holder ? XGPU_SCHED_UNDER :
		     XGPU_SCHED_IDLE;
}

/* no accounting, and always the same slice */
const struct xgpu_sched_ops xgpu_sched_fifo_ops = {
	.name = "fifo",
	.choose = fifo_choose,
	.info = fifo_info,
};
