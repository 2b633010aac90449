/* SPDX-License-Identifier: MIT */
/*
 * xgpub_gcell.h: a guest's GPU time, the union of its workers' busy
 * periods.
 *
 * Each worker measures the time its own GPU work was in flight
 * (worker/xgpub_gate.c).  A guest with several processes (a domain's
 * channels) has several workers whose work overlaps: on a real GPU their
 * contexts are time-sliced, so each sees its work in flight while the
 * other's runs, and the sum of their times counts the same wall time
 * twice (a domain with two busy processes was charged twice its time and
 * got half its share).  What the guest held the GPU for is the union of
 * its workers' busy periods: the time during which at least one of them
 * had work in flight.
 *
 * The guest's workers count it together in a cell, a page shared by them
 * and the daemon (daemon/xgpub_children.c) and by no other worker: a
 * worker enters when its work begins (from the start of the submission
 * that began it), tells the cell how far its work has run at each
 * completion, and leaves when none is in flight; the cell adds the time
 * during which one at least was in.  A short lock (the holder's pid)
 * guards the few words; the daemon leaves for a worker that died inside,
 * and takes the lock from one that died holding it.  The daemon only
 * reads `acc`.
 */
#ifndef XGPUB_GCELL_H
#define XGPUB_GCELL_H

#include <stdbool.h>
#include <stdint.h>

struct xgpub_gcell {
	uint32_t lock;		/* 0: free, else the holder's pid */
	uint32_t count;		/* workers inside (work in flight) */
	uint64_t upto;		/* the union is counted up to here (ns) */
	uint64_t acc;		/* the union's length so far (ns) */
};

struct xgpub_gcell_page {
	struct xgpub_gcell c;
	uint8_t _page[4096 - sizeof(struct xgpub_gcell)];
} __attribute__((aligned(4096)));

/*
 * Take the cell's lock as `me` (a pid, not 0).  `dead`, if not 0, is a
 * pid known to be gone: its lock is taken over at once.  After `tries`
 * yields (0: no bound) the lock is taken over from whoever holds it
 * (the daemon's bound: a holder inside for that long is stuck, and only
 * its own guest's count can suffer).  True: taken over.
 */
bool xgpub_gcell_lock(struct xgpub_gcell *c, uint32_t me, uint32_t dead,
		      unsigned int tries);
void xgpub_gcell_unlock(struct xgpub_gcell *c, uint32_t me);

/*
 * With the lock held.  *in is the worker's word that it is inside (in its
 * status slot: the daemon reads it when the worker dies).
 * enter: its work began at `since`;
 * progress: its work ran up to `now`;
 * leave: it has none in flight since `now`.
 */
void xgpub_gcell_enter_locked(struct xgpub_gcell *c, uint32_t *in,
			      uint64_t since);
void xgpub_gcell_progress_locked(struct xgpub_gcell *c, uint64_t now);
void xgpub_gcell_leave_locked(struct xgpub_gcell *c, uint32_t *in,
			      uint64_t now);

/*
 * The same, a worker's way: the lock taken as `me` (waited for without
 * bound), and only where they change something: enter when not inside,
 * progress and leave when inside.  c NULL: no cell, nothing done.
 */
void xgpub_gcell_enter(struct xgpub_gcell *c, uint32_t me, uint32_t *in,
		       uint64_t since);
void xgpub_gcell_progress(struct xgpub_gcell *c, uint32_t me,
			  const uint32_t *in, uint64_t now);
void xgpub_gcell_leave(struct xgpub_gcell *c, uint32_t me, uint32_t *in,
		       uint64_t now);

/* the guest's GPU time so far (ns), as the daemon reads it */
static inline uint64_t xgpub_gcell_time(const struct xgpub_gcell *c)
{
	return __atomic_load_n(&c->acc, __ATOMIC_RELAXED);
}

#endif
