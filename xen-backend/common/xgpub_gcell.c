// SPDX-License-Identifier: MIT
/*
 * xgpub_gcell.c: the union of a guest's workers' busy periods (see
 * xgpub_gcell.h).
 */
#include <sched.h>

#include "xgpub_gcell.h"

bool xgpub_gcell_lock(struct xgpub_gcell *c, uint32_t me, uint32_t dead,
		      unsigned int tries)
{
	for (unsigned int n = 0;; n++) {
		uint32_t v = 0;

		if (__atomic_compare_exchange_n(&c->lock, &v, me, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return false;
		if ((dead && v == dead) || (tries && n >= tries)) {
			if (__atomic_compare_exchange_n(&c->lock, &v, me,
							false,
							__ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return true;
			continue;
		}
		/* a holder is inside for a few loads and stores: spin a
		 * little, then let it run */
		if (n > 64)
			sched_yield();
	}
}

void xgpub_gcell_unlock(struct xgpub_gcell *c, uint32_t me)
{
	uint32_t v = me;

	/* not ours any more (taken over): leave it to its holder */
	__atomic_compare_exchange_n(&c->lock, &v, 0, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

/* whether the worker whose word is in is inside */
static bool inside(const uint32_t *in)
{
	return __atomic_load_n(in, __ATOMIC_RELAXED) != 0;
}

/* the union ran up to now: add what is past upto (at least one inside) */
static void advance(struct xgpub_gcell *c, uint64_t now)
{
	if (c->count && now > c->upto) {
		__atomic_store_n(&c->acc, c->acc + (now - c->upto),
				 __ATOMIC_RELAXED);
		c->upto = now;
	}
}

void xgpub_gcell_enter_locked(struct xgpub_gcell *c, uint32_t *in,
			      uint64_t since)
{
	if (inside(in))
		return;
	/*
	 * The union opens at `since` unless it was counted past it (a
	 * worker that left after `since`: the time between is its).
	 */
	if (!c->count && since > c->upto)
		c->upto = since;
	c->count++;
	__atomic_store_n(in, 1, __ATOMIC_RELEASE);
}

void xgpub_gcell_progress_locked(struct xgpub_gcell *c, uint64_t now)
{
	advance(c, now);
}

void xgpub_gcell_leave_locked(struct xgpub_gcell *c, uint32_t *in,
			      uint64_t now)
{
	if (!inside(in))
		return;
	advance(c, now);
	if (c->count)
		c->count--;
	__atomic_store_n(in, 0, __ATOMIC_RELEASE);
}

void xgpub_gcell_enter(struct xgpub_gcell *c, uint32_t me, uint32_t *in,
		       uint64_t since)
{
	if (!c || inside(in))
		return;
	xgpub_gcell_lock(c, me, 0, 0);
	xgpub_gcell_enter_locked(c, in, since);
	xgpub_gcell_unlock(c, me);
}

void xgpub_gcell_progress(struct xgpub_gcell *c, uint32_t me,
			  const uint32_t *in, uint64_t now)
{
	if (!c || !inside(in))
		return;
	xgpub_gcell_lock(c, me, 0, 0);
	xgpub_gcell_progress_locked(c, now);
	xgpub_gcell_unlock(c, me);
}

void xgpub_gcell_leave(struct xgpub_gcell *c, uint32_t me, uint32_t *in,
		       uint64_t now)
{
	if (!c || !inside(in))
		return;
	xgpub_gcell_lock(c, me, 0, 0);
	xgpub_gcell_leave_locked(c, in, now);
	xgpub_gcell_unlock(c, me);
}
