// SPDX-License-Identifier: MIT
/*
 * check_spin.c: the worker's adaptive poll before sleeping
 * (xgpub_spin_adapt, xen-backend/worker/xgpub_worker.c).
 */
#include <check.h>
#include <stdint.h>

#include "xgpub_worker.h"
#include "check_run.h"

START_TEST(test_tight_loop_keeps_full_spin)
{
	/* requests that come within the spin never reach the adaptation;
	 * one that came soon after a sleep restores the spin */
	ck_assert_uint_eq(xgpub_spin_adapt(2000, 10, 2000), 2000);
	ck_assert_uint_eq(xgpub_spin_adapt(20, 10, 2000), 20);
	ck_assert_uint_eq(xgpub_spin_adapt(20, 300, 2000), 600);
	ck_assert_uint_eq(xgpub_spin_adapt(20, 1500, 2000), 2000);
	ck_assert_uint_eq(xgpub_spin_adapt(20, 2000, 2000), 2000);
}
END_TEST

START_TEST(test_long_gaps_decay)
{
	unsigned int s = 2000;
	int steps = 0;

	/* a guest that calls every 5 ms: the spin halves down to 20 us */
	while (s > 20 && steps < 20) {
		unsigned int next = xgpub_spin_adapt(s, 5000, 2000);

		ck_assert_uint_lt(next, s);
		s = next;
		steps++;
	}
	ck_assert_uint_eq(s, 20);
	ck_assert_int_le(steps, 7);
	ck_assert_uint_eq(xgpub_spin_adapt(20, 5000, 2000), 20);
	/* a timed-out wait counts as a long gap */
	ck_assert_uint_eq(xgpub_spin_adapt(2000, UINT64_MAX, 2000), 1000);
}
END_TEST

START_TEST(test_bounds)
{
	/* never above the daemon's --spin-us, never below the floor unless
	 * the daemon's bound is lower; 0 turns spinning off */
	ck_assert_uint_eq(xgpub_spin_adapt(5, UINT64_MAX, 10), 10);
	ck_assert_uint_eq(xgpub_spin_adapt(100, 90, 100), 100);
	ck_assert_uint_eq(xgpub_spin_adapt(0, 5, 0), 0);
	ck_assert_uint_eq(xgpub_spin_adapt(0, UINT64_MAX, 0), 0);
	ck_assert_uint_eq(xgpub_spin_adapt(1000, UINT64_MAX - 1, 4000000),
			  500);
}
END_TEST

static Suite *spin_suite(void)
{
	Suite *s = suite_create("spin");
	TCase *tc = tcase_create("spin");

	tcase_add_test(tc, test_tight_loop_keeps_full_spin);
	tcase_add_test(tc, test_long_gaps_decay);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(spin_suite(), false);
}
