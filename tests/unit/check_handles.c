/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_handles.c */
/*
 * The worker's per-guest handle tables: a guest names every backend object
 * by a handle, so a stale, forged or mistyped one must be refused, and a
 * handle must never collide with the null handle or the special stream
 * values.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "check_run.h"

static struct xgpub_handles t;

static void setup(void)
{
	memset(&t, 0, sizeof(t));
}

static void teardown(void)
{
	xgpub_handles_destroy(&t);
}

static void *obj(uintptr_t v)
{
	return (void *)v;
}

START_TEST(test_new_get_free)
{
	xgpuif_handle_t h;
	struct xgpub_hentry *e;
	int *extra = malloc(sizeof(*extra));

	ck_assert_ptr_nonnull(extra);
	h = xgpub_handle_new(&t, XGPUB_H_STREAM, obj(0x1234), extra);
	ck_assert_uint_ne(h, 0);
	ck_assert_uint_eq(t.count[XGPUB_H_STREAM], 1);
	e = xgpub_handle_get(&t, h, XGPUB_H_STREAM);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_eq(e->obj, obj(0x1234));
	ck_assert_ptr_eq(e->extra, extra);
	ck_assert_int_eq(e->type, XGPUB_H_STREAM);
	/* extra is freed with the handle (ASan/valgrind would tell) */
	ck_assert_int_eq(xgpub_handle_free(&t, h, XGPUB_H_STREAM), 0);
	ck_assert_uint_eq(t.count[XGPUB_H_STREAM], 0);
	ck_assert_ptr_null(xgpub_handle_get(&t, h, XGPUB_H_STREAM));
}
END_TEST

START_TEST(test_distinct)
{
	xgpuif_handle_t a, b;

	a = xgpub_handle_new(&t, XGPUB_H_EVENT, obj(1), NULL);
	b = xgpub_handle_new(&t, XGPUB_H_EVENT, obj(2), NULL);
	ck_assert_uint_ne(a, b);
	ck_assert_ptr_eq(xgpub_handle_get(&t, a, XGPUB_H_EVENT)->obj, obj(1));
	ck_assert_ptr_eq(xgpub_handle_get(&t, b, XGPUB_H_EVENT)->obj, obj(2));
}
END_TEST

START_TEST(test_never_special)
{
	for (int i = 0; i < 1000; i++) {
		xgpuif_handle_t h = xgpub_handle_new(&t, XGPUB_H_STREAM,
						     obj(i + 1), NULL);

		ck_assert_uint_ne(h, 0);
		ck_assert_uint_ne(h, XGPUIF_STREAM_LEGACY);
		ck_assert_uint_ne(h, XGPUIF_STREAM_PER_THREAD);
		/* free every other one: reused slots too */
		if (i % 2)
			ck_assert_int_eq(xgpub_handle_free(&t, h,
							   XGPUB_H_STREAM), 0);
	}
	/* and the special values name nothing */
	ck_assert_ptr_null(xgpub_handle_get(&t, 0, XGPUB_H_STREAM));
	ck_assert_ptr_null(xgpub_handle_get(&t, XGPUIF_STREAM_LEGACY,
					    XGPUB_H_STREAM));
	ck_assert_ptr_null(xgpub_handle_get(&t, XGPUIF_STREAM_PER_THREAD,
					    XGPUB_H_STREAM));
}
END_TEST

START_TEST(test_type_mismatch)
{
	xgpuif_handle_t h = xgpub_handle_new(&t, XGPUB_H_MODULE, obj(7), NULL);

	ck_assert_ptr_null(xgpub_handle_get(&t, h, XGPUB_H_STREAM));
	ck_assert_ptr_null(xgpub_handle_get(&t, h, XGPUB_H_CTX));
	ck_assert_ptr_null(xgpub_handle_get(&t, h, XGPUB_H_FREE));
	ck_assert_int_eq(xgpub_handle_free(&t, h, XGPUB_H_EVENT), -1);
	/* still there after the refused free */
	ck_assert_ptr_nonnull(xgpub_handle_get(&t, h, XGPUB_H_MODULE));
	ck_assert_uint_eq(t.count[XGPUB_H_MODULE], 1);
}
END_TEST

START_TEST(test_generation_mismatch)
{
	xgpuif_handle_t h = xgpub_handle_new(&t, XGPUB_H_CTX, obj(9), NULL);
	uint32_t idx = (uint32_t)h, gen = (uint32_t)(h >> 32);

	/* same slot, other generations: forged */
	ck_assert_ptr_null(xgpub_handle_get(
		&t, ((xgpuif_handle_t)(gen + 1) << 32) | idx, XGPUB_H_CTX));
	ck_assert_ptr_null(xgpub_handle_get(
		&t, ((xgpuif_handle_t)(gen - 1) << 32) | idx, XGPUB_H_CTX));
	ck_assert_ptr_null(xgpub_handle_get(&t, idx, XGPUB_H_CTX));
	/* indices out of the table */
	ck_assert_ptr_null(xgpub_handle_get(
		&t, ((xgpuif_handle_t)gen << 32) | (idx + 1), XGPUB_H_CTX));
	ck_assert_ptr_null(xgpub_handle_get(
		&t, ((xgpuif_handle_t)gen << 32) | 0xffffffffu, XGPUB_H_CTX));
	ck_assert_ptr_null(xgpub_handle_get(&t, ~(xgpuif_handle_t)0,
					    XGPUB_H_CTX));
	ck_assert_int_eq(xgpub_handle_free(
		&t, ((xgpuif_handle_t)(gen + 1) << 32) | idx, XGPUB_H_CTX), -1);
	ck_assert_ptr_nonnull(xgpub_handle_get(&t, h, XGPUB_H_CTX));
}
END_TEST

START_TEST(test_reuse_new_generation)
{
	xgpuif_handle_t a, b;

	a = xgpub_handle_new(&t, XGPUB_H_EVENT, obj(1), NULL);
	ck_assert_int_eq(xgpub_handle_free(&t, a, XGPUB_H_EVENT), 0);
	b = xgpub_handle_new(&t, XGPUB_H_EVENT, obj(2), NULL);
	/* the slot is reused under a new generation */
	ck_assert_uint_eq((uint32_t)a, (uint32_t)b);
	ck_assert_uint_ne(a >> 32, b >> 32);
	ck_assert_ptr_null(xgpub_handle_get(&t, a, XGPUB_H_EVENT));
	ck_assert_ptr_eq(xgpub_handle_get(&t, b, XGPUB_H_EVENT)->obj, obj(2));
	/* the stale handle cannot free the new object */
	ck_assert_int_eq(xgpub_handle_free(&t, a, XGPUB_H_EVENT), -1);
	ck_assert_ptr_nonnull(xgpub_handle_get(&t, b, XGPUB_H_EVENT));
}
END_TEST

START_TEST(test_free_twice)
{
	xgpuif_handle_t h = xgpub_handle_new(&t, XGPUB_H_BLOB, obj(3), NULL);

	ck_assert_int_eq(xgpub_handle_free(&t, h, XGPUB_H_BLOB), 0);
	ck_assert_int_eq(xgpub_handle_free(&t, h, XGPUB_H_BLOB), -1);
	ck_assert_uint_eq(t.count[XGPUB_H_BLOB], 0);
	/* the free list is intact: two new handles get two slots */
	{
		xgpuif_handle_t a = xgpub_handle_new(&t, XGPUB_H_BLOB, obj(4),
						     NULL);
		xgpuif_handle_t b = xgpub_handle_new(&t, XGPUB_H_BLOB, obj(5),
						     NULL);

		ck_assert_uint_ne((uint32_t)a, (uint32_t)b);
		ck_assert_ptr_eq(xgpub_handle_get(&t, a, XGPUB_H_BLOB)->obj,
				 obj(4));
		ck_assert_ptr_eq(xgpub_handle_get(&t, b, XGPUB_H_BLOB)->obj,
				 obj(5));
	}
}
END_TEST

#define MANY 10000

START_TEST(test_growth)
{
	static xgpuif_handle_t h[MANY];

	for (uint32_t i = 0; i < MANY; i++) {
		h[i] = xgpub_handle_new(&t, XGPUB_H_ARRAY, obj(i + 100), NULL);
		ck_assert_uint_ne(h[i], 0);
	}
	ck_assert_uint_ge(t.cap, MANY);
	ck_assert_uint_eq(t.count[XGPUB_H_ARRAY], MANY);
	/* every handle still finds its object after the reallocations */
	for (uint32_t i = 0; i < MANY; i++) {
		struct xgpub_hentry *e = xgpub_handle_get(&t, h[i],
							  XGPUB_H_ARRAY);

		ck_assert_ptr_nonnull(e);
		ck_assert_ptr_eq(e->obj, obj(i + 100));
	}
	for (uint32_t i = 0; i < MANY; i += 3)
		ck_assert_int_eq(xgpub_handle_free(&t, h[i], XGPUB_H_ARRAY),
				 0);
	for (uint32_t i = 0; i < MANY; i++) {
		struct xgpub_hentry *e = xgpub_handle_get(&t, h[i],
							  XGPUB_H_ARRAY);

		if (i % 3 == 0)
			ck_assert_ptr_null(e);
		else
			ck_assert_ptr_nonnull(e);
	}
}
END_TEST

struct each_arg {
	int n;
	uintptr_t sum;
};

static void count_one(struct xgpub_hentry *e, void *arg)
{
	struct each_arg *a = arg;

	a->n++;
	a->sum += (uintptr_t)e->obj;
}

/* lookups by driver object follow adds and frees, by type */
START_TEST(test_find)
{
	enum { N = 5000 };
	static xgpuif_handle_t h[N];

	for (uintptr_t i = 0; i < N; i++) {
		h[i] = xgpub_handle_new(&t, XGPUB_H_GNODE, obj(0x1000 + i * 16),
					NULL);
		ck_assert_uint_ne(h[i], 0);
	}
	/* the same object under another type is another entry */
	ck_assert_uint_ne(xgpub_handle_new(&t, XGPUB_H_GRAPH, obj(0x1000),
					   NULL), 0);
	for (uintptr_t i = 0; i < N; i += 2)
		ck_assert_int_eq(xgpub_handle_free(&t, h[i], XGPUB_H_GNODE), 0);
	for (uintptr_t i = 0; i < N; i++) {
		struct xgpub_hentry *e = xgpub_handle_find(
			&t, XGPUB_H_GNODE, obj(0x1000 + i * 16));

		if (i % 2) {
			ck_assert_ptr_nonnull(e);
			ck_assert_uint_eq(xgpub_handle_of(&t, e), h[i]);
		} else {
			ck_assert_ptr_null(e);
		}
	}
	ck_assert_ptr_nonnull(
		xgpub_handle_find(&t, XGPUB_H_GRAPH, obj(0x1000)));
	ck_assert_ptr_null(xgpub_handle_find(&t, XGPUB_H_EVENT, obj(0x1010)));
	/* freed slots come back: found again under their new objects */
	for (uintptr_t i = 0; i < N; i += 2) {
		h[i] = xgpub_handle_new(&t, XGPUB_H_GNODE, obj(0x900000 + i),
					NULL);
		ck_assert_ptr_nonnull(xgpub_handle_find(&t, XGPUB_H_GNODE,
							obj(0x900000 + i)));
	}
}
END_TEST

START_TEST(test_each)
{
	struct each_arg a = { 0, 0 };
	xgpuif_handle_t h;

	xgpub_handle_new(&t, XGPUB_H_STREAM, obj(1), NULL);
	h = xgpub_handle_new(&t, XGPUB_H_STREAM, obj(2), NULL);
	xgpub_handle_new(&t, XGPUB_H_STREAM, obj(4), NULL);
	xgpub_handle_new(&t, XGPUB_H_EVENT, obj(8), NULL);
	xgpub_handle_free(&t, h, XGPUB_H_STREAM);
	xgpub_handle_each(&t, XGPUB_H_STREAM, count_one, &a);
	ck_assert_int_eq(a.n, 2);
	ck_assert_uint_eq(a.sum, 5);
}
END_TEST

static Suite *handles_suite(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("handles");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_new_get_free);
	tcase_add_test(tc, test_distinct);
	tcase_add_test(tc, test_never_special);
	tcase_add_test(tc, test_type_mismatch);
	tcase_add_test(tc, test_generation_mismatch);
	tcase_add_test(tc, test_reuse_new_generation);
	tcase_add_test(tc, test_free_twice);
	tcase_add_test(tc, test_growth);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_each);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(handles_suite(), true);
}
