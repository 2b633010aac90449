/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_state.c xen-backend/worker/xgpub_handles.c */
/*
 * The worker state the handlers share: memory accounting against the
 * quota, and the streams that carry a value wait (left out of the gate so
 * that a wait for later work never holds the dispatcher).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "check_run.h"

static struct xgpub_options opt;
static struct xgpub_worker w;

static void setup(void)
{
	memset(&w, 0, sizeof(w));
	memset(&opt, 0, sizeof(opt));
	w.opt = &opt;
}

static void teardown(void)
{
	free(w.allocs);
}

START_TEST(test_value_waits)
{
	CUstream a = (CUstream)(uintptr_t)0x1000, b = (CUstream)(uintptr_t)0x2000;

	ck_assert(!xgpub_waits_on_value(&w, a));
	xgpub_note_value_wait(&w, a);
	xgpub_note_value_wait(&w, a);
	ck_assert_uint_eq(w.nwaiting, 1);
	ck_assert(xgpub_waits_on_value(&w, a));
	ck_assert(!xgpub_waits_on_value(&w, b));
	/* a wait on the NULL or legacy stream: every stream */
	xgpub_note_value_wait(&w, (CUstream)(uintptr_t)1);
	ck_assert(xgpub_waits_on_value(&w, b));
}
END_TEST

START_TEST(test_value_waits_through_events)
{
	CUstream a = (CUstream)(uintptr_t)0x1000, b = (CUstream)(uintptr_t)0x2000,
		 c = (CUstream)(uintptr_t)0x3000;
	CUevent e = (CUevent)(uintptr_t)0x7000, f = (CUevent)(uintptr_t)0x7100;

	/* an event on a stream that waits for nothing: nothing follows */
	xgpub_note_event_record(&w, e, a);
	xgpub_note_event_wait(&w, b, e);
	ck_assert(!xgpub_waits_on_value(&w, b));
	/* a waits for a value; b waits for an event recorded behind it */
	xgpub_note_value_wait(&w, a);
	xgpub_note_event_record(&w, e, a);
	xgpub_note_event_wait(&w, b, e);
	ck_assert(xgpub_waits_on_value(&w, b));
	/* and so on down the line: c waits for an event behind b */
	xgpub_note_event_record(&w, f, b);
	xgpub_note_event_wait(&w, c, f);
	ck_assert(xgpub_waits_on_value(&w, c));
	/* e recorded again on a stream that waits for nothing: forgotten */
	xgpub_note_event_record(&w, e, (CUstream)(uintptr_t)0x4000);
	xgpub_note_event_wait(&w, (CUstream)(uintptr_t)0x5000, e);
	ck_assert(!xgpub_waits_on_value(&w, (CUstream)(uintptr_t)0x5000));
	/* more events than it remembers: every stream */
	for (uintptr_t i = 0; i < 17; i++)
		xgpub_note_event_record(&w, (CUevent)(0x8000 + i * 16), a);
	ck_assert(w.wait_any);
}
END_TEST

START_TEST(test_value_waits_overflow)
{
	CUstream s = NULL;

	for (uintptr_t i = 0; i < 64; i++)
		xgpub_note_value_wait(&w, (CUstream)(0x1000 + i * 16));
	ck_assert(!w.wait_any);
	s = (CUstream)(uintptr_t)0x9000;
	ck_assert(!xgpub_waits_on_value(&w, s));
	/* one more than it remembers: all, never a stream forgotten */
	xgpub_note_value_wait(&w, (CUstream)(uintptr_t)0x8000);
	ck_assert(w.wait_any);
	ck_assert(xgpub_waits_on_value(&w, s));
}
END_TEST

START_TEST(test_quota_accounting)
{
	opt.quota = 1024;
	ck_assert(xgpub_quota_allows(&w, 1024));
	ck_assert(!xgpub_quota_allows(&w, 1025));
	ck_assert_int_eq(xgpub_alloc_add(&w, 0x100, 600), 0);
	ck_assert_uint_eq(w.mem_used, 768);		/* 256-byte granules */
	ck_assert(!xgpub_quota_allows(&w, 257));
	ck_assert(xgpub_quota_allows(&w, 256));
	ck_assert_int_ne(xgpub_alloc_del(&w, 0x200), 0);	/* not ours */
	ck_assert_uint_eq(w.mem_used, 768);
	ck_assert_int_eq(xgpub_alloc_del(&w, 0x100), 0);
	ck_assert_uint_eq(w.mem_used, 0);
	ck_assert_int_ne(xgpub_alloc_del(&w, 0x100), 0);	/* twice */
}
END_TEST

START_TEST(test_charge_size)
{
	ck_assert_uint_eq(xgpub_charge_size(0), 256);
	ck_assert_uint_eq(xgpub_charge_size(1), 256);
	ck_assert_uint_eq(xgpub_charge_size(257), 512);
	ck_assert_uint_eq(xgpub_charge_size((2u << 20) - 1), 2u << 20);
	ck_assert_uint_eq(xgpub_charge_size(2u << 20), 2u << 20);
	ck_assert_uint_eq(xgpub_charge_size((2u << 20) + 1), 4u << 20);
	ck_assert_uint_eq(xgpub_charge_size(UINT64_MAX), UINT64_MAX);
	ck_assert_uint_eq(xgpub_charge_size(UINT64_MAX - (1u << 20)),
			  UINT64_MAX);
}
END_TEST

START_TEST(test_ctx_flags_and_limits)
{
	ck_assert_int_eq(xgpub_ctx_flags_check(0), 0);
	ck_assert_int_eq(xgpub_ctx_flags_check(CU_CTX_SCHED_BLOCKING_SYNC |
					       CU_CTX_MAP_HOST |
					       CU_CTX_LMEM_RESIZE_TO_MAX |
					       CU_CTX_SYNC_MEMOPS), 0);
	ck_assert_int_eq(xgpub_ctx_flags_check(CU_CTX_COREDUMP_ENABLE),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(xgpub_ctx_flags_check(CU_CTX_USER_COREDUMP_ENABLE),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(xgpub_ctx_flags_check(0x100),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(xgpub_ctx_limit_check(CU_LIMIT_STACK_SIZE), 0);
	ck_assert_int_eq(xgpub_ctx_limit_check(CU_LIMIT_MALLOC_HEAP_SIZE), 0);
	ck_assert_int_eq(xgpub_ctx_limit_check(
				 CU_LIMIT_PERSISTING_L2_CACHE_SIZE),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(xgpub_ctx_limit_check(CU_LIMIT_SHMEM_SIZE),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(xgpub_ctx_limit_check(CU_LIMIT_MAX),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(xgpub_ctx_limit_check(0x7fffffff),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_value_waits);
	tcase_add_test(tc, test_value_waits_through_events);
	tcase_add_test(tc, test_value_waits_overflow);
	tcase_add_test(tc, test_quota_accounting);
	tcase_add_test(tc, test_charge_size);
	tcase_add_test(tc, test_ctx_flags_and_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(state_suite(), false);
}
