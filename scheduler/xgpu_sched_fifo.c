// SPDX-License-Identifier: MIT
/*
 * xgpu_sched_fifo.c: first come, first served.  The runnable guest that
 * has waited longest gets the token for the same slice as credit; weights
 * and caps are stored (so that the daemon can switch policies) but not
 * used.  It is the baseline the credit policy is measured against: busy
 * guests get the GPU by turns, so GPU time follows slices and kernel
 * lengths, not weights.
 */
#include <errno.h>
#include <stddef.h>

#include "xgpu_sched_priv.h"

static struct xgpu_sched *fifo_create(const struct xgpu_sched_params *p,
				      uint64_t now)
{
	return xgpu_sched_core_create(&xgpu_sched_fifo_ops, p, now);
}

static int fifo_pick(struct xgpu_sched *s, uint64_t now, uint32_t *id)
{
	struct xgpu_sched_guest *best = NULL;
	unsigned int i;

	if (s->holder)
		return -EBUSY;
	xgpu_sched_core_tick(s, now);
	for (i = 0; i < s->n; i++) {
		struct xgpu_sched_guest *g = s->g[i];

		if (!g->runnable)
			continue;
		if (!best || g->wait_since < best->wait_since ||
		    (g->wait_since == best->wait_since && g->id < best->id))
			best = g;
	}
	if (!best)
		return -EAGAIN;
	xgpu_sched_core_grant(s, best, now);
	*id = best->id;
	return 0;
}

static uint64_t fifo_slice(struct xgpu_sched *s, uint32_t id, uint64_t now)
{
	(void)now;
	if (!s->holder || s->holder->id != id)
		return 0;
	return s->p.slice_ns;
}

static int fifo_info(struct xgpu_sched *s, uint32_t id, uint64_t now,
		     struct xgpu_sched_info *out)
{
	const struct xgpu_sched_guest *g = xgpu_sched_core_find(s, id);
	int rc = xgpu_sched_core_info(s, id, now, out);

	if (rc)
		return rc;
	/* no credit here: every runnable guest is eligible */
	out->credit_ns = 0;
	out->state = g->runnable || g == s->holder ? XGPU_SCHED_UNDER :
		     XGPU_SCHED_IDLE;
	return 0;
}

const struct xgpu_sched_ops xgpu_sched_fifo_ops = {
	.name = "fifo",
	.create = fifo_create,
	.destroy = xgpu_sched_core_destroy,
	.guest_add = xgpu_sched_core_add,
	.guest_remove = xgpu_sched_core_remove,
	.guest_set = xgpu_sched_core_set,
	.guest_runnable = xgpu_sched_core_runnable,
	.pick = fifo_pick,
	.slice = fifo_slice,
	.charge = xgpu_sched_core_charge,
	.release = xgpu_sched_core_release,
	.tick = xgpu_sched_core_tick,
	.guest_info = fifo_info,
};
