// SPDX-License-Identifier: MIT
/*
 * check_gcell.c: a guest's GPU time as the union of its workers' busy
 * periods (xen-backend/common/xgpub_gcell.c).
 *
 *   - overlapping periods count once, disjoint ones add, the gap between
 *     them does not count;
 *   - a long period that began before a short one and ends after it
 *     counts whole (counting by order of completion alone lost its start);
 *   - a worker that leaves and comes back from a start before its leave
 *     (its call began before the completer found it idle) counts nothing
 *     twice;
 *   - random periods of 1 to 8 workers, told to the cell in time order
 *     with progress reports between: the cell's time equals the union
 *     measured by brute force, and the count goes back to 0;
 *   - a lock held by a dead pid is taken over at once, one held by a
 *     live holder only after the bound; threads that hammer the cell
 *     leave it consistent (count 0, time within the wall time);
 *   - the daemon's side (xgpub_spawn, xgpub_child_cell_release): two
 *     workers of one domain share one cell, another domain's has its
 *     own; a worker killed inside the cell while holding its lock is
 *     left for when reaped (the lock taken over, the count down by one),
 *     the last one's leave counts the time up to its reaping.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_daemon.h"
#include "xgpub_gcell.h"
#include "check_run.h"

static struct xgpub_gcell cell;

/* a worker's word that it is inside, for progress reports (the cell
 * counts only while a worker is inside anyway) */
static const uint32_t reporter = 1;

static void enter(uint32_t *in, uint64_t t)
{
	xgpub_gcell_enter(&cell, 1, in, t);
}

static void progress(uint64_t t)
{
	xgpub_gcell_progress(&cell, 1, &reporter, t);
}

static void leave(uint32_t *in, uint64_t t)
{
	xgpub_gcell_leave(&cell, 1, in, t);
}

START_TEST(overlap_once_disjoint_add)
{
	uint32_t a = 0, b = 0;

	memset(&cell, 0, sizeof(cell));
	enter(&a, 100);
	enter(&b, 150);
	progress(180);
	leave(&a, 200);
	leave(&b, 250);
	ck_assert_uint_eq(xgpub_gcell_time(&cell), 150);	/* 100..250 */
	ck_assert_uint_eq(cell.count, 0);
	ck_assert_uint_eq(a, 0);
	ck_assert_uint_eq(b, 0);
	/* a gap, then a period of its own */
	enter(&a, 1000);
	leave(&a, 1040);
	ck_assert_uint_eq(xgpub_gcell_time(&cell), 190);
	/* entering twice or leaving twice changes nothing */
	enter(&a, 2000);
	enter(&a, 2010);
	leave(&a, 2020);
	leave(&a, 2030);
	ck_assert_uint_eq(xgpub_gcell_time(&cell), 210);
	ck_assert_uint_eq(cell.count, 0);
}
END_TEST

START_TEST(long_period_counts_whole)
{
	uint32_t a = 0, b = 0;

	memset(&cell, 0, sizeof(cell));
	/* A: 0..10 (one long kernel, no report in between); B: 2..5 */
	enter(&a, 1000);
	enter(&b, 1002);
	progress(1005);
	leave(&b, 1005);
	leave(&a, 1010);
	ck_assert_uint_eq(xgpub_gcell_time(&cell), 10);
}
END_TEST

START_TEST(reentry_counts_nothing_twice)
{
	uint32_t a = 0;

	memset(&cell, 0, sizeof(cell));
	enter(&a, 100);
	leave(&a, 200);
	/* its next call began at 150, before the completer saw it idle */
	enter(&a, 150);
	progress(300);
	leave(&a, 300);
	ck_assert_uint_eq(xgpub_gcell_time(&cell), 200);
}
END_TEST

/* the union of n periods [s, e) by brute force over a small timeline */
#define SPAN 4000

START_TEST(random_periods_equal_brute_force)
{
	srand(12345);
	for (int round = 0; round < 300; round++) {
		int nw = 1 + rand() % 8, np = 0;
		struct { uint64_t s, e; int w; } p[64];
		static uint8_t on[SPAN];
		uint32_t in[8] = { 0 };
		uint64_t want = 0;

		memset(&cell, 0, sizeof(cell));
		memset(on, 0, sizeof(on));
		/* each worker: disjoint periods in order */
		for (int w = 0; w < nw; w++) {
			uint64_t t = (uint64_t)(rand() % 200);

			while (np < 64) {
				uint64_t s = t + (uint64_t)(rand() % 300);
				uint64_t e = s + 1 + (uint64_t)(rand() % 400);

				if (e >= SPAN)
					break;
				p[np].s = s;
				p[np].e = e;
				p[np].w = w;
				np++;
				for (uint64_t x = s; x < e; x++)
					on[x] = 1;
				t = e + (uint64_t)(rand() % 3);
			}
		}
		for (int x = 0; x < SPAN; x++)
			want += on[x];
		/* tell the cell in time order: enters, leaves, and progress
		 * reports of the workers inside now and then */
		for (uint64_t x = 0; x < SPAN; x++) {
			for (int i = 0; i < np; i++)
				if (p[i].e == x)
					leave(&in[p[i].w], x);
			for (int i = 0; i < np; i++)
				if (p[i].s == x)
					enter(&in[p[i].w], x);
			if (rand() % 50 == 0)
				progress(x);
		}
		ck_assert_msg(xgpub_gcell_time(&cell) == want,
			      "round %d: %d workers, %d periods: cell %llu, "
			      "union %llu", round, nw, np,
			      (unsigned long long)xgpub_gcell_time(&cell),
			      (unsigned long long)want);
		ck_assert_uint_eq(cell.count, 0);
	}
}
END_TEST

START_TEST(lock_taken_over)
{
	memset(&cell, 0, sizeof(cell));
	cell.lock = 4242;		/* a holder that died */
	ck_assert(xgpub_gcell_lock(&cell, 7, 4242, 0));
	ck_assert_uint_eq(cell.lock, 7);
	xgpub_gcell_unlock(&cell, 7);
	ck_assert_uint_eq(cell.lock, 0);
	/* a live holder: only after the bound */
	cell.lock = 99;
	ck_assert(xgpub_gcell_lock(&cell, 7, 4242, 200));
	ck_assert_uint_eq(cell.lock, 7);
	/* an unlock by one that lost it leaves the new holder's lock */
	xgpub_gcell_unlock(&cell, 99);
	ck_assert_uint_eq(cell.lock, 7);
	xgpub_gcell_unlock(&cell, 7);
	/* a free lock: not a take-over */
	ck_assert(!xgpub_gcell_lock(&cell, 7, 4242, 1));
	xgpub_gcell_unlock(&cell, 7);
}
END_TEST

/* threads that enter, report and leave on one clock */
static uint64_t clock_now;

static void *hammer(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg, in = 0;

	for (int i = 0; i < 20000; i++) {
		uint64_t t = __atomic_add_fetch(&clock_now, 1,
						__ATOMIC_SEQ_CST);

		xgpub_gcell_lock(&cell, me, 0, 0);
		if (!in)
			xgpub_gcell_enter_locked(&cell, &in, t);
		else if (i % 3)
			xgpub_gcell_progress_locked(&cell, t);
		else
			xgpub_gcell_leave_locked(&cell, &in, t);
		xgpub_gcell_unlock(&cell, me);
	}
	xgpub_gcell_lock(&cell, me, 0, 0);
	xgpub_gcell_leave_locked(&cell, &in,
				 __atomic_add_fetch(&clock_now, 1,
						    __ATOMIC_SEQ_CST));
	xgpub_gcell_unlock(&cell, me);
	return NULL;
}

START_TEST(threads_leave_it_consistent)
{
	pthread_t t[4];

	memset(&cell, 0, sizeof(cell));
	clock_now = 0;
	for (uintptr_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer,
						(void *)(i + 10)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(cell.count, 0);
	ck_assert_uint_eq(cell.lock, 0);
	ck_assert_uint_le(xgpub_gcell_time(&cell), clock_now);
	/* four workers, each inside two thirds of its steps: most of it
	 * (their clock readings reach the cell out of order, so not all) */
	ck_assert_uint_ge(xgpub_gcell_time(&cell), clock_now / 2);
}
END_TEST

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* a worker inside its guest's cell until killed; arg not NULL: it keeps
 * the cell's lock (it dies holding it) */
static int cell_worker(void *arg)
{
	struct xgpub_gcell *c = xgpub_self_cell;
	uint32_t me = (uint32_t)getpid();

	if (!c || !xgpub_self_stat)
		return 3;
	/* the one that keeps the lock goes in after the other */
	while (arg && !__atomic_load_n(&c->count, __ATOMIC_ACQUIRE))
		usleep(1000);
	xgpub_gcell_lock(c, me, 0, 0);
	xgpub_gcell_enter_locked(c, &xgpub_self_stat->in_cell, mono_ns());
	if (!arg)
		xgpub_gcell_unlock(c, me);
	for (;;)
		pause();
	return 0;
}

/* kill and reap the worker pid as the daemon does */
static void reap(pid_t pid)
{
	struct xgpub_child *c = xgpub_child_find(pid);

	ck_assert_ptr_nonnull(c);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	xgpub_child_cell_release(c);
	memset(c, 0, sizeof(*c));
}

START_TEST(reaped_worker_leaves)
{
	struct xgpub_child info = { .kind = XGPUB_CHILD_XEN, .domid = 7 };
	struct xgpub_gcell *cell;
	pid_t a, b, other;
	uint64_t t;
	int i;

	a = xgpub_spawn(&info, NULL, 0, cell_worker, NULL);
	info.ch = 1;
	b = xgpub_spawn(&info, NULL, 0, cell_worker, (void *)1);
	info.domid = 8;
	other = xgpub_spawn(&info, NULL, 0, cell_worker, NULL);
	ck_assert_int_gt(a, 0);
	ck_assert_int_gt(b, 0);
	ck_assert_int_gt(other, 0);
	cell = xgpub_child_cell(xgpub_child_find(a));
	ck_assert_ptr_nonnull(cell);
	ck_assert_ptr_eq(cell, xgpub_child_cell(xgpub_child_find(b)));
	ck_assert_ptr_ne(cell, xgpub_child_cell(xgpub_child_find(other)));
	for (i = 0; i < 3000; i++) {
		if (__atomic_load_n(&cell->count, __ATOMIC_ACQUIRE) == 2 &&
		    __atomic_load_n(&cell->lock, __ATOMIC_ACQUIRE) ==
			    (uint32_t)b)
			break;
		usleep(1000);
	}
	ck_assert_uint_eq(cell->count, 2);
	ck_assert_uint_eq(cell->lock, (uint32_t)b);
	/* b dies inside, holding the lock: its leave is the daemon's */
	reap(b);
	ck_assert_uint_eq(cell->count, 1);
	ck_assert_uint_eq(cell->lock, 0);
	t = xgpub_gcell_time(cell);
	usleep(20000);
	reap(a);
	ck_assert_uint_eq(cell->count, 0);
	/* a was inside the 20 ms: counted when it was reaped */
	ck_assert_uint_ge(xgpub_gcell_time(cell), t + 20000000ull);
	reap(other);
}
END_TEST

static Suite *gcell_suite(void)
{
	Suite *s = suite_create("gcell");
	TCase *tc = tcase_create("gcell");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, overlap_once_disjoint_add);
	tcase_add_test(tc, long_period_counts_whole);
	tcase_add_test(tc, reentry_counts_nothing_twice);
	tcase_add_test(tc, random_periods_equal_brute_force);
	tcase_add_test(tc, lock_taken_over);
	tcase_add_test(tc, threads_leave_it_consistent);
	tcase_add_test(tc, reaped_worker_leaves);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(gcell_suite(), false);
}
