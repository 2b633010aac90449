// SPDX-License-Identifier: MIT
/*
 * check_sched_api.c: the GPU scheduler's API step by step under a fake
 * clock: lookup and parameters, guests, credit states, debt and cap
 * bounds, clock jumps, the fifo policy.  The shares a whole run gives are
 * check_sched.c's.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "xgpu_sched.h"
#include "check_run.h"

#define US	1000ull
#define MS	1000000ull
#define SEC	1000000000ull

#define PERIOD		XGPU_SCHED_PERIOD_DEFAULT
#define SLICE		XGPU_SCHED_SLICE_DEFAULT


/* the usual start: guests 1 and 2, added at 0, runnable from t1 and t2 */
static struct xgpu_sched *two_guests(const char *policy, uint64_t t1,
				     uint64_t t2)
{
	struct xgpu_sched *s = xgpu_sched_create(policy, NULL, 0);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(xgpu_sched_guest_add(s, 1, 0), 0);
	ck_assert_int_eq(xgpu_sched_guest_add(s, 2, 0), 0);
	ck_assert_int_eq(xgpu_sched_guest_runnable(s, 1, true, t1), 0);
	ck_assert_int_eq(xgpu_sched_guest_runnable(s, 2, true, t2), 0);
	return s;
}

START_TEST(api_lookup_create)
{
	struct xgpu_sched_params p = { 0 };
	struct xgpu_sched *s;

	ck_assert_ptr_eq(xgpu_sched_lookup("credit"), &xgpu_sched_credit_ops);
	ck_assert_ptr_eq(xgpu_sched_lookup("fifo"), &xgpu_sched_fifo_ops);
	ck_assert_ptr_null(xgpu_sched_lookup("rr"));
	ck_assert_ptr_null(xgpu_sched_lookup(NULL));
	errno = 0;
	ck_assert_ptr_null(xgpu_sched_create("nope", NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	p.slice_ns = 1 * MS;
	p.min_slice_ns = 2 * MS;
	ck_assert_ptr_null(xgpu_sched_create("credit", &p, 0));
	p.min_slice_ns = 0;
	p.period_ns = 10 * MS;
	s = xgpu_sched_create("credit", &p, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_eq(xgpu_sched_ops_of(s), &xgpu_sched_credit_ops);
	xgpu_sched_params_get(s, &p);
	ck_assert_uint_eq(p.period_ns, 10 * MS);
	ck_assert_uint_eq(p.slice_ns, 1 * MS);
	ck_assert_uint_eq(p.min_slice_ns, 100 * US);
	ck_assert_uint_eq(p.credit_max_ns, 10 * MS);
	ck_assert_uint_eq(p.debt_max_ns, 100 * MS);
	ck_assert_uint_eq(xgpu_sched_tick(s, 0), 10 * MS);
	xgpu_sched_destroy(s);
	xgpu_sched_destroy(NULL);
}
END_TEST

START_TEST(api_guests)
{
	struct xgpu_sched *s = xgpu_sched_create("credit", NULL, 0);
	struct xgpu_sched_info in;
	uint32_t id, ids[4];

	ck_assert_int_eq(xgpu_sched_guest_add(s, 1, 0), 0);
	ck_assert_int_eq(xgpu_sched_guest_add(s, 1, 0), -EEXIST);
	ck_assert_int_eq(xgpu_sched_guest_add(s, 2, 0), 0);
	ck_assert_uint_eq(xgpu_sched_guest_ids(s, ids, 4), 2);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 3, 256, 0, 0), -ENOENT);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, 0, 0, 0), -EINVAL);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, 65536, 0, 0), -EINVAL);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, 256, 101, 0), -EINVAL);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, 65535, 100, 0), 0);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, XGPU_SCHED_KEEP, 0, 0), 0);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 0, &in), 0);
	ck_assert_uint_eq(in.weight, 65535);
	ck_assert_uint_eq(in.cap, 0);
	ck_assert_int_eq(in.state, XGPU_SCHED_IDLE);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, 0, &in), 0);
	ck_assert_uint_eq(in.weight, XGPU_SCHED_WEIGHT_DEFAULT);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 9, 0, &in), -ENOENT);

	/* nobody runnable: nothing to pick */
	ck_assert_int_eq(xgpu_sched_pick(s, 0, &id), -EAGAIN);
	ck_assert_int_eq(xgpu_sched_guest_runnable(s, 9, true, 0), -ENOENT);
	ck_assert_int_eq(xgpu_sched_guest_runnable(s, 2, true, 1 * MS), 0);
	ck_assert_int_eq(xgpu_sched_guest_runnable(s, 1, true, 2 * MS), 0);
	/* both at zero credit: the one waiting longest */
	ck_assert_int_eq(xgpu_sched_pick(s, 3 * MS, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(xgpu_sched_holder(s, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(xgpu_sched_pick(s, 3 * MS, &id), -EBUSY);
	ck_assert_uint_eq(xgpu_sched_slice(s, 2, 3 * MS), SLICE);
	ck_assert_uint_eq(xgpu_sched_slice(s, 1, 3 * MS), 0);
	ck_assert_int_eq(xgpu_sched_release(s, 1, 4 * MS), -EPERM);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 3 * MS, &in), 0);
	ck_assert_uint_eq(in.picks, 0);
	/* a wait still going on counts */
	ck_assert_uint_eq(in.max_wait_ns, 1 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, 3 * MS, &in), 0);
	ck_assert(in.holder);
	ck_assert_uint_eq(in.picks, 1);
	ck_assert_uint_eq(in.max_wait_ns, 2 * MS);

	/* a leaving holder is dropped */
	ck_assert_int_eq(xgpu_sched_guest_remove(s, 2, 4 * MS), 0);
	ck_assert_int_eq(xgpu_sched_guest_remove(s, 2, 4 * MS), -ENOENT);
	ck_assert_int_eq(xgpu_sched_holder(s, &id), -ENOENT);
	ck_assert_int_eq(xgpu_sched_charge(s, 2, 1 * MS, 4 * MS), -ENOENT);
	ck_assert_int_eq(xgpu_sched_pick(s, 4 * MS, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 4 * MS, &in), 0);
	ck_assert_uint_eq(in.max_wait_ns, 2 * MS);
	xgpu_sched_destroy(s);
}
END_TEST

START_TEST(api_credit_states)
{
	struct xgpu_sched *s = two_guests("credit", 0, 0);
	struct xgpu_sched_info in;
	uint32_t id;
	uint64_t t;

	xgpu_sched_guest_set(s, 2, 768, XGPU_SCHED_KEEP, 0);
	ck_assert_int_eq(xgpu_sched_pick(s, 0, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(xgpu_sched_charge(s, 1, 8 * MS, 8 * MS), 0);
	ck_assert_int_eq(xgpu_sched_release(s, 1, 8 * MS), 0);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 8 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, -(int64_t)(8 * MS));
	ck_assert_int_eq(in.state, XGPU_SCHED_OVER);
	ck_assert_uint_eq(in.gpu_ns, 8 * MS);
	/* 1 is in debt now: 2 first */
	ck_assert_int_eq(xgpu_sched_pick(s, 8 * MS, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(xgpu_sched_charge(s, 2, 20 * MS, 28 * MS), 0);
	ck_assert_int_eq(xgpu_sched_release(s, 2, 28 * MS), 0);
	/* the period's 28 ms go 1:3 at the accounting point */
	ck_assert_uint_eq(xgpu_sched_tick(s, 30 * MS), 60 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 30 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, -(int64_t)(8 * MS) + 7 * MS);
	ck_assert_double_eq_tol(in.share_period, 100.0 * 8 / 30, 1e-9);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, 30 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, -(int64_t)(20 * MS) + 21 * MS);
	ck_assert_int_eq(in.state, XGPU_SCHED_UNDER);
	ck_assert_double_eq_tol(in.share_period, 100.0 * 20 / 30, 1e-9);
	ck_assert_int_eq(xgpu_sched_pick(s, 30 * MS, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(xgpu_sched_release(s, 2, 30 * MS), 0);

	/*
	 * A new guest starts at zero credit (the others' average, 0 here,
	 * is not lower), credited from the next period.
	 */
	xgpu_sched_guest_add(s, 3, 31 * MS);
	xgpu_sched_guest_runnable(s, 3, true, 31 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 3, 31 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, 0);
	ck_assert_int_eq(in.state, XGPU_SCHED_OVER);
	xgpu_sched_charge(s, 1, 10 * MS, 40 * MS);
	xgpu_sched_tick(s, 60 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 3, 60 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, 10 * MS * 256 / (256 + 768 + 256));

	/*
	 * 3 goes idle (it gets its part of this period at 90 ms: 6 ms, then
	 * nothing).  2 is runnable but never charged: its part goes up to
	 * the ceiling (one period), then to 1.  The sum of the credits stays
	 * 0: credit handed out is GPU time charged.
	 */
	xgpu_sched_guest_runnable(s, 3, false, 61 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 61 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, -(int64_t)(9 * MS));
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, 61 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, 7 * MS);
	for (t = 90 * MS; t < 3 * SEC; t += PERIOD) {
		xgpu_sched_charge(s, 1, 30 * MS, t - 1);
		xgpu_sched_tick(s, t);
	}
	ck_assert_int_eq(xgpu_sched_guest_info(s, 3, t, &in), 0);
	ck_assert_int_eq(in.credit_ns, 8 * MS);
	ck_assert_int_eq(in.state, XGPU_SCHED_IDLE);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, t, &in), 0);
	ck_assert_int_eq(in.credit_ns, (int64_t)PERIOD);
	ck_assert_int_eq(in.state, XGPU_SCHED_UNDER);
	/*
	 * 1 holds the rest: -38 ms, less what 2 had above one period while
	 * the ceiling was still two of its 20 ms turns (it fades).
	 */
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, t, &in), 0);
	ck_assert_int_le(in.credit_ns, -(int64_t)(38 * MS));
	ck_assert_int_ge(in.credit_ns, -(int64_t)(48 * MS));
	ck_assert_int_eq(in.state, XGPU_SCHED_OVER);
	xgpu_sched_destroy(s);
}
END_TEST

/* a guest joining busy guests that sit in debt starts at their level */
START_TEST(api_join_level)
{
	struct xgpu_sched *s = two_guests("credit", 0, 0);
	struct xgpu_sched_info in;

	xgpu_sched_guest_add(s, 9, 0);
	xgpu_sched_charge(s, 1, 40 * MS, 1 * MS);
	xgpu_sched_charge(s, 2, 80 * MS, 1 * MS);
	/* 9 is idle: not part of the level */
	xgpu_sched_charge(s, 9, 1 * MS, 1 * MS);
	xgpu_sched_guest_add(s, 3, 2 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 3, 2 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, -(int64_t)(60 * MS));
	/* never above zero */
	xgpu_sched_guest_remove(s, 1, 3 * MS);
	xgpu_sched_guest_remove(s, 2, 3 * MS);
	xgpu_sched_guest_remove(s, 3, 3 * MS);
	xgpu_sched_guest_add(s, 1, 3 * MS);
	xgpu_sched_guest_runnable(s, 1, true, 3 * MS);
	xgpu_sched_charge(s, 1, 10 * MS, 4 * MS);
	xgpu_sched_tick(s, 30 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 30 * MS, &in), 0);
	ck_assert_int_gt(in.credit_ns, 0);
	xgpu_sched_guest_add(s, 4, 31 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 4, 31 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, 0);
	xgpu_sched_destroy(s);
}
END_TEST

/* debt is bounded; a bogus charge is handed out no faster than wall time */
START_TEST(api_debt_bound)
{
	struct xgpu_sched *s = two_guests("credit", 0, 0);
	struct xgpu_sched_info in;
	uint64_t t;

	ck_assert_int_eq(xgpu_sched_charge(s, 1, UINT64_MAX, 1 * MS), 0);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 1 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, -(int64_t)(300 * MS));
	xgpu_sched_tick(s, 30 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, 30 * MS, &in), 0);
	ck_assert_int_eq(in.credit_ns, 15 * MS);
	for (t = 60 * MS; t <= 1 * SEC; t += PERIOD)
		xgpu_sched_tick(s, t);
	/*
	 * 330 ms were handed out at 30 ms a period: 2 took 30 (its
	 * ceiling), 1 the rest; then the carry is gone.
	 */
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, t, &in), 0);
	ck_assert_int_eq(in.credit_ns, 0);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 2, t, &in), 0);
	ck_assert_int_eq(in.credit_ns, (int64_t)PERIOD);
	xgpu_sched_destroy(s);
}
END_TEST

START_TEST(api_cap)
{
	struct xgpu_sched *s = xgpu_sched_create("credit", NULL, 0);
	struct xgpu_sched_info in;
	uint32_t id;

	xgpu_sched_guest_add(s, 1, 0);
	/* 25% of a 30 ms period: 7.5 ms, pro rata from 6 ms: 6 ms */
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, 256, 25, 6 * MS), 0);
	xgpu_sched_guest_runnable(s, 1, true, 6 * MS);
	ck_assert_int_eq(xgpu_sched_pick(s, 6 * MS, &id), 0);
	ck_assert_uint_eq(xgpu_sched_slice(s, 1, 6 * MS), 5 * MS);
	xgpu_sched_charge(s, 1, 5 * MS, 11 * MS);
	xgpu_sched_release(s, 1, 11 * MS);
	ck_assert_int_eq(xgpu_sched_pick(s, 11 * MS, &id), 0);
	ck_assert_uint_eq(xgpu_sched_slice(s, 1, 11 * MS), 1 * MS);
	/* a 3 ms kernel overshoots: the budget goes 2 ms into debt */
	xgpu_sched_charge(s, 1, 3 * MS, 14 * MS);
	xgpu_sched_release(s, 1, 14 * MS);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 14 * MS, &in), 0);
	ck_assert_int_eq(in.state, XGPU_SCHED_CAPPED);
	ck_assert_int_eq(xgpu_sched_pick(s, 14 * MS, &id), -EAGAIN);
	/* next period: 7.5 - 2 = 5.5 ms */
	ck_assert_int_eq(xgpu_sched_pick(s, 30 * MS, &id), 0);
	ck_assert_uint_eq(xgpu_sched_slice(s, 1, 30 * MS), 5 * MS);
	xgpu_sched_charge(s, 1, 5 * MS + 450 * US, 36 * MS);
	xgpu_sched_release(s, 1, 36 * MS);
	/* 50 us left: the slice does not go below min_slice */
	ck_assert_int_eq(xgpu_sched_pick(s, 36 * MS, &id), 0);
	ck_assert_uint_eq(xgpu_sched_slice(s, 1, 36 * MS), 100 * US);
	xgpu_sched_release(s, 1, 36 * MS);
	/* cap removed: eligible again at once */
	xgpu_sched_charge(s, 1, 1 * MS, 37 * MS);
	ck_assert_int_eq(xgpu_sched_pick(s, 37 * MS, &id), -EAGAIN);
	ck_assert_int_eq(xgpu_sched_guest_set(s, 1, XGPU_SCHED_KEEP, 0,
					      37 * MS), 0);
	ck_assert_int_eq(xgpu_sched_pick(s, 37 * MS, &id), 0);
	xgpu_sched_destroy(s);
}
END_TEST

/*
 * Created on one clock, driven on another (or after a long stall): the
 * first period is hours long.  The minute window starts after it instead
 * of averaging over it.
 */
START_TEST(api_clock_jump)
{
	struct xgpu_sched *s = xgpu_sched_create("credit", NULL, 0);
	const uint64_t t0 = 3600 * SEC;
	struct xgpu_sched_info in;
	uint64_t t;
	uint32_t id;

	xgpu_sched_guest_add(s, 1, t0);
	xgpu_sched_guest_runnable(s, 1, true, t0);
	ck_assert_uint_eq(xgpu_sched_tick(s, t0), t0 + PERIOD);
	for (t = t0; t < t0 + 2 * SEC; t += 10 * MS) {
		ck_assert_int_eq(xgpu_sched_pick(s, t, &id), 0);
		xgpu_sched_charge(s, 1, 5 * MS, t + 10 * MS);
		xgpu_sched_release(s, 1, t + 10 * MS);
	}
	xgpu_sched_tick(s, t);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, t, &in), 0);
	ck_assert_double_eq_tol(in.share_minute, 50.0, 0.5);
	ck_assert_double_eq_tol(in.share_period, 50.0, 0.5);
	xgpu_sched_destroy(s);
}
END_TEST

START_TEST(api_fifo)
{
	struct xgpu_sched *s = two_guests("fifo", 1, 2);
	struct xgpu_sched_info in;
	uint32_t id;

	xgpu_sched_guest_set(s, 2, 4096, 10, 0);
	ck_assert_int_eq(xgpu_sched_pick(s, 3, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_uint_eq(xgpu_sched_slice(s, 1, 3), SLICE);
	xgpu_sched_charge(s, 1, 50 * MS, 50 * MS);
	xgpu_sched_release(s, 1, 50 * MS);
	ck_assert_int_eq(xgpu_sched_pick(s, 50 * MS, &id), 0);
	ck_assert_uint_eq(id, 2);
	/* no cap in fifo */
	ck_assert_uint_eq(xgpu_sched_slice(s, 2, 50 * MS), SLICE);
	xgpu_sched_release(s, 2, 50 * MS);
	ck_assert_int_eq(xgpu_sched_pick(s, 50 * MS, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(xgpu_sched_guest_info(s, 1, 50 * MS, &in), 0);
	ck_assert_int_eq(in.state, XGPU_SCHED_UNDER);
	ck_assert_int_eq(in.credit_ns, 0);
	xgpu_sched_destroy(s);
}
END_TEST

static Suite *sched_api_suite(void)
{
	Suite *s = suite_create("sched_api");
	TCase *api = tcase_create("api");

	tcase_add_test(api, api_lookup_create);
	tcase_add_test(api, api_guests);
	tcase_add_test(api, api_credit_states);
	tcase_add_test(api, api_join_level);
	tcase_add_test(api, api_debt_bound);
	tcase_add_test(api, api_cap);
	tcase_add_test(api, api_clock_jump);
	tcase_add_test(api, api_fifo);
	suite_add_tcase(s, api);
	return s;
}

int main(void)
{
	return check_run(sched_api_suite(), false);
}
