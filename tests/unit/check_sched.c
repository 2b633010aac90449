// SPDX-License-Identifier: MIT
/*
 * check_sched.c: the GPU scheduler core under a fake clock, driving a small
 * simulator of one exclusive GPU.
 *
 * The model: when the scheduler picks a guest, the GPU first idles for the
 * switch (SWITCH_NS: revoke, drain, grant); then the holder runs its
 * synthetic jobs back to back while the slice lasts and it has work; the
 * job running at the end of the slice overshoots (kernels are not
 * preemptible); then the guest is charged the sum of its jobs' durations
 * and gives the token back.  Guests join, go idle, come back and change
 * weight through timed events, which the simulator reports to the
 * scheduler at their exact time, as does it with accounting ticks.  Shares
 * are measured from the simulator's own log of jobs, not from the
 * scheduler's statistics, so that the scheduler cannot grade itself.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpu_sched.h"
#include "check_run.h"

#define US	1000ull
#define MS	1000000ull
#define SEC	1000000000ull

#define SWITCH_NS	(20 * US)
#define PERIOD		XGPU_SCHED_PERIOD_DEFAULT
#define SLICE		XGPU_SCHED_SLICE_DEFAULT
#define SIM_MAX		8
#define SIM_EVENTS	256

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum job_kind { JOB_FIXED, JOB_MIXED };
enum ev_type { EV_JOIN, EV_BUSY, EV_IDLE, EV_SET, EV_LEAVE };

struct sim_guest {
	uint32_t id;
	enum job_kind kind;
	uint64_t job_ns;
	uint64_t rng;
	bool present;
	bool busy;
};

struct sim_ev {
	uint64_t t;
	enum ev_type type;
	unsigned int g;
	unsigned int weight;
	unsigned int cap;
};

struct sim_job {
	uint64_t start;
	uint64_t end;
	unsigned int g;
};

struct sim {
	struct xgpu_sched *s;
	struct sim_guest g[SIM_MAX];
	unsigned int n;
	struct sim_ev ev[SIM_EVENTS];
	unsigned int nev;
	unsigned int evi;
	bool sorted;
	uint64_t now;
	uint64_t next_tick;
	struct sim_job *log;
	size_t nlog;
	size_t alog;
	uint64_t kmax;		/* longest job seen */
	unsigned int min_jobs;	/* jobs a turn takes at least */
};

static void sim_init(struct sim *m, const char *policy)
{
	memset(m, 0, sizeof(*m));
	m->s = xgpu_sched_create(policy, NULL, 0);
	ck_assert_ptr_nonnull(m->s);
	m->min_jobs = 1;
	m->next_tick = xgpu_sched_tick(m->s, 0);
}

static void sim_fini(struct sim *m)
{
	xgpu_sched_destroy(m->s);
	free(m->log);
}

static void sim_event(struct sim *m, uint64_t t, enum ev_type type,
		      unsigned int g, unsigned int weight, unsigned int cap)
{
	ck_assert_uint_lt(m->nev, SIM_EVENTS);
	m->ev[m->nev++] = (struct sim_ev){ t, type, g, weight, cap };
	m->sorted = false;
}

/* a guest that joins at `join` and is busy from then on */
static unsigned int sim_guest(struct sim *m, uint64_t join,
			      unsigned int weight, unsigned int cap,
			      enum job_kind kind, uint64_t job_ns)
{
	unsigned int i = m->n++;

	ck_assert_uint_le(m->n, SIM_MAX);
	m->g[i].id = 100 + i;
	m->g[i].kind = kind;
	m->g[i].job_ns = job_ns;
	m->g[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
	sim_event(m, join, EV_JOIN, i, weight, cap);
	sim_event(m, join, EV_BUSY, i, 0, 0);
	return i;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct sim_ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* a join comes before its first busy */
	return (int)x->type - (int)y->type;
}

static uint64_t next_job(struct sim_guest *g)
{
	static const uint64_t mix[] = { 500 * US, 1 * MS, 2 * MS, 5 * MS,
					10 * MS, 20 * MS };

	if (g->kind == JOB_FIXED)
		return g->job_ns;
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return mix[g->rng % ARRAY_SIZE(mix)];
}

static void apply(struct sim *m, const struct sim_ev *e)
{
	struct sim_guest *g = &m->g[e->g];

	switch (e->type) {
	case EV_JOIN:
		ck_assert_int_eq(xgpu_sched_guest_add(m->s, g->id, e->t), 0);
		ck_assert_int_eq(xgpu_sched_guest_set(m->s, g->id, e->weight,
						      e->cap, e->t), 0);
		g->present = true;
		break;
	case EV_BUSY:
		g->busy = true;
		ck_assert_int_eq(xgpu_sched_guest_runnable(m->s, g->id, true,
							   e->t), 0);
		break;
	case EV_IDLE:
		g->busy = false;
		ck_assert_int_eq(xgpu_sched_guest_runnable(m->s, g->id, false,
							   e->t), 0);
		break;
	case EV_SET:
		ck_assert_int_eq(xgpu_sched_guest_set(m->s, g->id, e->weight,
						      e->cap, e->t), 0);
		break;
	case EV_LEAVE:
		g->present = false;
		g->busy = false;
		ck_assert_int_eq(xgpu_sched_guest_remove(m->s, g->id, e->t), 0);
		break;
	}
}

/* report every event and accounting tick up to t, in time order */
static void sim_advance(struct sim *m, uint64_t t)
{
	if (!m->sorted) {
		qsort(m->ev + m->evi, m->nev - m->evi, sizeof(m->ev[0]),
		      ev_cmp);
		m->sorted = true;
	}
	for (;;) {
		uint64_t te = m->evi < m->nev ? m->ev[m->evi].t : UINT64_MAX;

		if (te <= m->next_tick && te <= t) {
			m->now = te;
			apply(m, &m->ev[m->evi++]);
		} else if (m->next_tick <= t) {
			m->now = m->next_tick;
			m->next_tick = xgpu_sched_tick(m->s, m->now);
			ck_assert_uint_gt(m->next_tick, m->now);
		} else {
			break;
		}
	}
	m->now = t;
}

static void log_job(struct sim *m, unsigned int g, uint64_t start,
		    uint64_t end)
{
	if (m->nlog == m->alog) {
		m->alog = m->alog ? 2 * m->alog : 4096;
		m->log = realloc(m->log, m->alog * sizeof(*m->log));
		ck_assert_ptr_nonnull(m->log);
	}
	m->log[m->nlog++] = (struct sim_job){ start, end, g };
	if (end - start > m->kmax)
		m->kmax = end - start;
}

static unsigned int sim_index(struct sim *m, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->g[i].id == id)
			return i;
	ck_abort_msg("picked unknown guest %u", id);
	return 0;
}

static void sim_run(struct sim *m, uint64_t until)
{
	while (m->now < until) {
		uint64_t slice, deadline, used = 0;
		struct sim_guest *g;
		uint32_t id;
		int rc;

		sim_advance(m, m->now);
		rc = xgpu_sched_pick(m->s, m->now, &id);
		if (rc) {
			/* the GPU idles until something happens */
			uint64_t nx = m->next_tick;

			ck_assert_int_eq(rc, -EAGAIN);
			if (m->evi < m->nev && m->ev[m->evi].t < nx)
				nx = m->ev[m->evi].t;
			sim_advance(m, nx < until ? nx : until);
			continue;
		}
		g = &m->g[sim_index(m, id)];
		ck_assert(g->present && g->busy);
		slice = xgpu_sched_slice(m->s, id, m->now);
		ck_assert_uint_gt(slice, 0);
		sim_advance(m, m->now + SWITCH_NS);
		deadline = m->now + slice;
		/*
		 * Jobs back to back; the last one overshoots the deadline.
		 * A turn takes at least min_jobs: the work already in flight
		 * when the slice ends (see xgpub_gate.c).
		 */
		for (unsigned int nj = 0;
		     (m->now < deadline || nj < m->min_jobs) && g->present &&
		     g->busy;
		     nj++) {
			uint64_t d = next_job(g);

			log_job(m, (unsigned int)(g - m->g), m->now,
				m->now + d);
			used += d;
			sim_advance(m, m->now + d);
		}
		if (!g->present)
			continue;	/* left while holding: dropped */
		ck_assert_int_eq(xgpu_sched_charge(m->s, id, used, m->now), 0);
		ck_assert_int_eq(xgpu_sched_release(m->s, id, m->now), 0);
	}
}

/* % of [a, b) that guest g (or every guest, g < 0) had the GPU */
static double share(const struct sim *m, int g, uint64_t a, uint64_t b)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < m->nlog; i++) {
		const struct sim_job *j = &m->log[i];
		uint64_t s = j->start > a ? j->start : a;
		uint64_t e = j->end < b ? j->end : b;

		if ((g < 0 || j->g == (unsigned int)g) && e > s)
			sum += e - s;
	}
	return 100.0 * (double)sum / (double)(b - a);
}

static uint64_t max_wait(struct sim *m, unsigned int g)
{
	struct xgpu_sched_info in;

	ck_assert_int_eq(xgpu_sched_guest_info(m->s, m->g[g].id, m->now, &in),
			 0);
	return in.max_wait_ns;
}

/*
 * Check every guest's share of [a, b) against its target (%) within tol
 * points, and print them with the normalised shares (share / target).
 */
static void check_shares(struct sim *m, const char *what, uint64_t a,
			 uint64_t b, const double *target, double tol)
{
	double lo = 1e9, hi = 0;
	unsigned int i;

	printf("%-34s", what);
	for (i = 0; i < m->n; i++) {
		double sh = share(m, (int)i, a, b);

		printf(" %6.2f/%5.2f", sh, target[i]);
		if (target[i] > 0) {
			if (sh / target[i] < lo)
				lo = sh / target[i];
			if (sh / target[i] > hi)
				hi = sh / target[i];
		}
	}
	printf("  busy %6.2f  norm %.3f..%.3f\n", share(m, -1, a, b), lo, hi);
	fflush(stdout);
	for (i = 0; i < m->n; i++) {
		double sh = share(m, (int)i, a, b);

		ck_assert_msg(fabs(sh - target[i]) <= tol,
			      "%s: guest %u share %.2f%%, target %.2f%% +-%.1f",
			      what, i, sh, target[i], tol);
	}
}

/* ---- shares follow weights ----------------------------------------------- */

static const struct weights_case {
	const char *policy;
	enum job_kind kind;
	uint64_t job;
	unsigned int min_jobs;
	bool expect_fair;
	const char *what;
} weights_cases[] = {
	{ "credit", JOB_FIXED, 1 * MS, 1, true, "credit 1:2:4, 1 ms" },
	{ "credit", JOB_FIXED, 20 * MS, 1, true, "credit 1:2:4, 20 ms" },
	/*
	 * Two 20 ms kernels a turn (40 ms turns, longer than the 30 ms
	 * period): with the credit ceiling fixed at one period the heavy
	 * guest lost what it earned while the others had their turns, and
	 * 1:2:4 came out 1:2:3.
	 */
	{ "credit", JOB_FIXED, 20 * MS, 2, true,
	  "credit 1:2:4, 20 ms, 2 a turn" },
	{ "credit", JOB_MIXED, 0, 1, true, "credit 1:2:4, mixed" },
	{ "fifo", JOB_FIXED, 1 * MS, 1, false, "fifo 1:2:4, 1 ms" },
};

START_TEST(weights)
{
	static const unsigned int w[] = { 256, 512, 1024 };
	const struct weights_case *c = &weights_cases[_i];
	double target[3];
	struct sim m;
	unsigned int i;

	sim_init(&m, c->policy);
	m.min_jobs = c->min_jobs;
	for (i = 0; i < 3; i++) {
		sim_guest(&m, 0, w[i], 0, c->kind, c->job);
		target[i] = 100.0 * w[i] / 1792.0;
	}
	sim_run(&m, 30 * SEC);
	if (c->expect_fair) {
		check_shares(&m, c->what, 0, 30 * SEC, target, 1.0);
		ck_assert_double_ge(share(&m, -1, 0, 30 * SEC), 99.0);
	} else {
		double eq[3] = { 100.0 / 3, 100.0 / 3, 100.0 / 3 };

		/*
		 * fifo hands out turns: ~1/3 each whatever the weights, far
		 * from 1:2:4 -- which is why xgpu needs credit.
		 */
		check_shares(&m, c->what, 0, 30 * SEC, eq, 1.0);
		ck_assert_double_lt(share(&m, 2, 0, 30 * SEC),
				    target[2] - 10.0);
		ck_assert_double_gt(share(&m, 0, 0, 30 * SEC),
				    target[0] + 10.0);
	}
	sim_fini(&m);
}
END_TEST

/*
 * Equal weights, unequal kernels (1 ms, 20 ms, mixed): credit gives a
 * third each; fifo gives the long-kernel guest far more, because a turn
 * lasts at least one kernel.
 */
static void equal_run(const char *policy, struct sim *m)
{
	sim_init(m, policy);
	sim_guest(m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_guest(m, 0, 256, 0, JOB_FIXED, 20 * MS);
	sim_guest(m, 0, 256, 0, JOB_MIXED, 0);
	sim_run(m, 30 * SEC);
}

START_TEST(equal_weights_unequal_kernels)
{
	double eq[3] = { 100.0 / 3, 100.0 / 3, 100.0 / 3 };
	struct sim m;

	equal_run("credit", &m);
	check_shares(&m, "credit equal, 1/20/mixed ms", 0, 30 * SEC, eq, 1.0);
	sim_fini(&m);

	equal_run("fifo", &m);
	printf("%-34s %6.2f %6.2f %6.2f\n", "fifo equal, 1/20/mixed ms",
	       share(&m, 0, 0, 30 * SEC), share(&m, 1, 0, 30 * SEC),
	       share(&m, 2, 0, 30 * SEC));
	ck_assert_double_gt(share(&m, 1, 0, 30 * SEC), 50.0);
	ck_assert_double_lt(share(&m, 0, 0, 30 * SEC), 20.0);
	sim_fini(&m);
}
END_TEST

START_TEST(equal_weights_same_kernels)
{
	double eq[4] = { 25, 25, 25, 25 };
	struct sim m;
	unsigned int i;

	sim_init(&m, "credit");
	for (i = 0; i < 4; i++)
		sim_guest(&m, 0, 256, 0, JOB_FIXED, 2 * MS);
	sim_run(&m, 30 * SEC);
	check_shares(&m, "credit 4 equal, 2 ms", 0, 30 * SEC, eq, 1.0);
	sim_fini(&m);
}
END_TEST

/* ---- caps ---------------------------------------------------------------- */

/* a guest capped at 25%, 1 or 20 ms kernels, beside 2 busy others or alone */
static const struct cap_case {
	uint64_t job;
	unsigned int others;
	const char *what;
} cap_cases[] = {
	{ 1 * MS, 2, "credit cap 25% + 2 busy, 1 ms" },
	{ 20 * MS, 2, "credit cap 25% + 2 busy, 20 ms" },
	{ 1 * MS, 0, "credit cap 25% alone, 1 ms" },
	{ 20 * MS, 0, "credit cap 25% alone, 20 ms" },
};

START_TEST(cap)
{
	const struct cap_case *c = &cap_cases[_i];
	double target[3] = { 25.0, 37.5, 37.5 };
	struct sim m;
	unsigned int i;
	uint64_t t;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 25, JOB_FIXED, c->job);
	for (i = 0; i < c->others; i++)
		sim_guest(&m, 0, 256, 0, JOB_MIXED, 0);
	sim_run(&m, 30 * SEC);
	check_shares(&m, c->what, 0, 30 * SEC, target, 1.0);
	/*
	 * Not only on average: no second goes over the cap by more than
	 * one banked period and one kernel.
	 */
	for (t = 0; t < 30 * SEC; t += 1 * SEC)
		ck_assert_double_le(share(&m, 0, t, t + 1 * SEC),
				    25.0 + 100.0 * (7500 * US + c->job) / SEC);
	if (!c->others) {
		/* alone: the GPU idles the rest of the time */
		ck_assert_double_le(share(&m, -1, 0, 30 * SEC), 26.0);
	} else {
		ck_assert_double_ge(share(&m, -1, 0, 30 * SEC), 99.0);
	}
	sim_fini(&m);
}
END_TEST

/* ---- idle share lent, guests going and coming ---------------------------- */

START_TEST(idle_share_lent)
{
	double two[3] = { 100.0 / 3, 200.0 / 3, 0 };
	double three[3] = { 100.0 / 6, 100.0 / 3, 50.0 };
	struct sim m;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_MIXED, 0);
	sim_guest(&m, 0, 512, 0, JOB_MIXED, 0);
	sim_guest(&m, 0, 768, 0, JOB_MIXED, 0);
	/* the third one goes idle from 10 s to 20 s */
	sim_event(&m, 10 * SEC, EV_IDLE, 2, 0, 0);
	sim_event(&m, 20 * SEC, EV_BUSY, 2, 0, 0);
	sim_run(&m, 30 * SEC);
	check_shares(&m, "credit 1:2:3, 3rd idle 10-20 s",
		     10 * SEC + 2 * PERIOD, 20 * SEC, two, 1.0);
	ck_assert_double_ge(share(&m, -1, 10 * SEC, 20 * SEC), 99.0);
	check_shares(&m, "credit 1:2:3, 3rd back 20-30 s",
		     20 * SEC + 2 * PERIOD, 30 * SEC, three, 1.0);
	ck_assert_double_ge(share(&m, -1, 0, 30 * SEC), 99.0);
	sim_fini(&m);
}
END_TEST

/*
 * A guest that was runnable now and then but used little comes back busy:
 * its credit is at most the ceiling (one period) and the busy guest that
 * used its part owes at most as much, so over the 300 ms after its return
 * it gets no more than its share plus 2 periods' worth.  Without the
 * ceiling it would come back with seconds of credit and take the GPU.
 */
START_TEST(no_burst_after_idle)
{
	struct sim m;
	struct xgpu_sched_info in;
	uint64_t t;
	double sh;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_event(&m, 1 * SEC, EV_IDLE, 1, 0, 0);
	for (t = 1 * SEC + 100 * MS; t < 5 * SEC; t += 200 * MS) {
		sim_event(&m, t, EV_BUSY, 1, 0, 0);
		sim_event(&m, t + 2 * MS, EV_IDLE, 1, 0, 0);
	}
	sim_event(&m, 5 * SEC, EV_BUSY, 1, 0, 0);
	sim_run(&m, 5 * SEC);
	ck_assert_int_eq(xgpu_sched_guest_info(m.s, m.g[1].id, m.now, &in), 0);
	ck_assert_int_le(in.credit_ns, (int64_t)PERIOD);
	sim_run(&m, 6 * SEC);
	sh = share(&m, 1, 5 * SEC, 5 * SEC + 300 * MS);
	printf("%-34s %6.2f%% of the 300 ms after return (credit %.2f ms)\n",
	       "credit back from near-idle", sh, in.credit_ns / 1e6);
	ck_assert_double_le(sh, 50.0 + 100.0 * 2 * PERIOD / (300 * MS) + 1.0);
	sim_fini(&m);
}
END_TEST

/*
 * A guest joining at t: its share measured over [t + 2 periods,
 * t + 2 periods + 1 s] is within 2 points of its target.
 */
static const struct join_case {
	uint64_t job;
	const char *what;
} join_cases[] = {
	{ 1 * MS, "credit join at 5.012 s, 1 ms" },
	{ 5 * MS, "credit join at 5.012 s, 5 ms" },
};

START_TEST(join)
{
	const struct join_case *c = &join_cases[_i];
	const uint64_t t = 5 * SEC + 12345 * US;	/* mid-period */
	double target[3] = { 100.0 / 3, 100.0 / 3, 100.0 / 3 };
	struct sim m;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_FIXED, c->job);
	sim_guest(&m, 0, 256, 0, JOB_FIXED, c->job);
	sim_guest(&m, t, 256, 0, JOB_FIXED, c->job);
	sim_run(&m, t + 2 * PERIOD + 1 * SEC);
	check_shares(&m, c->what, t + 2 * PERIOD, t + 2 * PERIOD + 1 * SEC,
		     target, 2.0);
	sim_fini(&m);
}
END_TEST

/* weights changed live: shares follow within two periods */
START_TEST(set_live)
{
	const uint64_t t = 10 * SEC + 7100 * US;
	double before[2] = { 50, 50 }, after[2] = { 75, 25 };
	struct sim m;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_event(&m, t, EV_SET, 0, 768, XGPU_SCHED_KEEP);
	sim_run(&m, t + 2 * PERIOD + 1 * SEC);
	check_shares(&m, "credit 1:1", 0, t, before, 1.0);
	check_shares(&m, "credit set 3:1 live at 10.007 s", t + 2 * PERIOD,
		     t + 2 * PERIOD + 1 * SEC, after, 2.0);
	sim_fini(&m);
}
END_TEST

/* a guest leaving while it holds the token is dropped; the others go on */
START_TEST(leave_while_holding)
{
	double two[3] = { 50, 50, 0 };
	struct sim m;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	/* every 5 ms slice of 1 ms jobs: 2.5 ms is inside someone's hold */
	sim_event(&m, 2 * SEC + 2500 * US, EV_LEAVE, 2, 0, 0);
	sim_run(&m, 10 * SEC);
	check_shares(&m, "credit 3rd leaves at 2.0025 s", 3 * SEC, 10 * SEC,
		     two, 1.0);
	sim_fini(&m);
}
END_TEST

/* ---- no starvation, little overhead -------------------------------------- */

/*
 * Longest wait for the token while runnable.  Two bounds:
 *
 * - the simple one, (n - 1) x (slice + longest kernel) + period: every
 *   other guest holds the token once, then an accounting point;
 *
 * - the one credit scheduling can promise whatever the job mix: a hold of
 *   h <= slice + k by a guest with share f = w/W must be paid for by the
 *   others running h (1 - f) / f; each of the n - 1 others may overshoot
 *   that by one hold of its own (kernels are not preemptible), and credit
 *   arrives once a period:  (s + k)(1 - f)/f + (n - 1)(s + k) + period.
 *
 * The simple bound holds for equal weights and fixed kernels.  It does not
 * hold in general: with equal weights and mixed kernels (0.5..20 ms) a
 * guest that just ran 24 ms waits until both others have run as long, and
 * their holds overshoot by up to a kernel each (measured: up to ~85 ms
 * against 80 over several seeds); a weight-1 guest among 1:2:4 must wait
 * 30 ms on average between its 5 ms slices to get 1/7, and per-period
 * credit adds jitter (up to ~55 ms against 42).  Those runs are held to
 * the second bound, which still catches starvation.
 */
static void starve_run(unsigned int n, const unsigned int *w,
		       enum job_kind kind, uint64_t job, bool simple,
		       const char *what)
{
	uint64_t wsum = 0, worst = 0, bound_simple;
	struct sim m;
	unsigned int i;

	sim_init(&m, "credit");
	for (i = 0; i < n; i++) {
		sim_guest(&m, 0, w[i], 0, kind, job);
		wsum += w[i];
	}
	sim_run(&m, 30 * SEC);
	bound_simple = (n - 1) * (SLICE + m.kmax) + PERIOD;
	for (i = 0; i < n; i++) {
		uint64_t mw = max_wait(&m, i), hold = SLICE + m.kmax;
		uint64_t bound = (n - 1) * hold + PERIOD +
				 hold * (wsum - w[i]) / w[i];

		if (simple)
			bound = bound_simple;
		if (mw > worst)
			worst = mw;
		ck_assert_msg(mw <= bound, "%s: guest %u waited %.2f ms > %.2f",
			      what, i, mw / 1e6, bound / 1e6);
	}
	printf("%-34s max wait %.2f ms (simple bound %.2f ms%s)\n", what,
	       worst / 1e6, bound_simple / 1e6, simple ? ", asserted" : "");
	sim_fini(&m);
}

START_TEST(no_starvation)
{
	static const unsigned int eq[] = { 256, 256, 256, 256 };
	static const unsigned int w124[] = { 256, 512, 1024 };

	starve_run(3, eq, JOB_FIXED, 20 * MS, true, "credit equal, 20 ms");
	starve_run(4, eq, JOB_FIXED, 2 * MS, true, "credit 4 equal, 2 ms");
	starve_run(3, eq, JOB_MIXED, 0, false, "credit equal, mixed");
	starve_run(3, w124, JOB_FIXED, 1 * MS, false, "credit 1:2:4, 1 ms");
	starve_run(3, w124, JOB_MIXED, 0, false, "credit 1:2:4, mixed");
}
END_TEST

START_TEST(alone_gets_gpu)
{
	double all[1] = { 100 };
	struct sim m;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_FIXED, 1 * MS);
	sim_run(&m, 30 * SEC);
	/* the switch cost (20 us per 5 ms slice) is all that is lost */
	check_shares(&m, "credit alone, 1 ms", 0, 30 * SEC, all, 1.0);
	ck_assert_double_ge(share(&m, 0, 0, 30 * SEC), 99.0);
	sim_fini(&m);
}
END_TEST

/* ---- the statistics ------------------------------------------------------ */

START_TEST(stats_follow_sim)
{
	struct xgpu_sched_info in;
	struct sim m;
	unsigned int i;
	size_t j;

	sim_init(&m, "credit");
	sim_guest(&m, 0, 256, 0, JOB_MIXED, 0);
	sim_guest(&m, 0, 768, 0, JOB_MIXED, 0);
	sim_run(&m, 70 * SEC + 12 * MS);
	for (i = 0; i < 2; i++) {
		uint64_t used = 0, picks = 0, last = UINT64_MAX;

		for (j = 0; j < m.nlog; j++) {
			if (m.log[j].g != i)
				continue;
			used += m.log[j].end - m.log[j].start;
			/* a new hold starts after the switch gap */
			if (m.log[j].start != last)
				picks++;
			last = m.log[j].end;
		}
		ck_assert_int_eq(xgpu_sched_guest_info(m.s, m.g[i].id, m.now,
						       &in), 0);
		/* the job running now is not charged yet */
		ck_assert_uint_le(in.gpu_ns, used);
		ck_assert_uint_ge(in.gpu_ns + SLICE + 20 * MS, used);
		ck_assert_uint_ge(in.picks, picks);
		ck_assert_uint_le(in.picks, picks + 1);
		/* the minute share is over the last 60..61 s */
		ck_assert_double_le(fabs(in.share_minute -
					 share(&m, (int)i, m.now - 60 * SEC,
					       m.now)), 1.0);
		ck_assert_double_ge(in.share_period, 0.0);
		ck_assert_double_le(in.share_period, 100.0);
		printf("%-34s guest %u: minute %.2f%% (sim %.2f%%), "
		       "period %.2f%%, picks %llu\n", "credit stats 1:3, 70 s",
		       i, in.share_minute,
		       share(&m, (int)i, m.now - 60 * SEC, m.now),
		       in.share_period, (unsigned long long)in.picks);
	}
	sim_fini(&m);
}
END_TEST

static Suite *sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *sim = tcase_create("sim");

	tcase_set_timeout(sim, 120);
	/* the table-driven tests: one run per row of their table */
	tcase_add_loop_test(sim, weights, 0, ARRAY_SIZE(weights_cases));
	tcase_add_test(sim, equal_weights_unequal_kernels);
	tcase_add_test(sim, equal_weights_same_kernels);
	tcase_add_loop_test(sim, cap, 0, ARRAY_SIZE(cap_cases));
	tcase_add_test(sim, idle_share_lent);
	tcase_add_test(sim, no_burst_after_idle);
	tcase_add_loop_test(sim, join, 0, ARRAY_SIZE(join_cases));
	tcase_add_test(sim, set_live);
	tcase_add_test(sim, leave_while_holding);
	tcase_add_test(sim, no_starvation);
	tcase_add_test(sim, alone_gets_gpu);
	tcase_add_test(sim, stats_follow_sim);
	suite_add_tcase(s, sim);
	return s;
}

int main(void)
{
	return check_run(sched_suite(), false);
}
