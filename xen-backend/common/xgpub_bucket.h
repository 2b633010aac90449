/* SPDX-License-Identifier: MIT */
/*
 * xgpub_bucket.h: a token bucket, for work that a guest can ask for as
 * often as it likes (the daemon's looks at xenstore after its events):
 * up to `burst` at once, then `per_s` a second.  The credit is kept in
 * nanoseconds of the bucket's clock (CLOCK_MONOTONIC, xgpub_now_ns).
 */
#ifndef XGPUB_BUCKET_H
#define XGPUB_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct xgpub_bucket {
	uint64_t last_ns;	/* when the credit was last brought up */
	uint64_t credit_ns;	/* at most max_ns */
	uint64_t cost_ns;	/* one token: 1 s / per_s */
	uint64_t max_ns;	/* burst tokens */
};

static inline void xgpub_bucket_init(struct xgpub_bucket *b, uint32_t per_s,
				     uint32_t burst)
{
	b->cost_ns = 1000000000ull / (per_s ? per_s : 1);
	b->max_ns = b->cost_ns * (burst ? burst : 1);
	b->credit_ns = b->max_ns;
	b->last_ns = 0;
}

static inline void xgpub_bucket_fill(struct xgpub_bucket *b, uint64_t now)
{
	uint64_t room = b->max_ns - b->credit_ns, add;

	if (now <= b->last_ns)
		return;	/* the same instant, or a clock gone back */
	add = now - b->last_ns;
	b->credit_ns += add < room ? add : room;
	b->last_ns = now;
}

/* one token at now: true, or false (none left: nothing taken) */
static inline bool xgpub_bucket_take(struct xgpub_bucket *b, uint64_t now)
{
	xgpub_bucket_fill(b, now);
	if (b->credit_ns < b->cost_ns)
		return false;
	b->credit_ns -= b->cost_ns;
	return true;
}

/* ns from now until a token is there (0: now) */
static inline uint64_t xgpub_bucket_wait_ns(struct xgpub_bucket *b,
					    uint64_t now)
{
	xgpub_bucket_fill(b, now);
	return b->credit_ns >= b->cost_ns ? 0 : b->cost_ns - b->credit_ns;
}

#endif
