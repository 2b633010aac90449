/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_etbl.c xen-frontend/lib/xgpulib_vec.c */
/*
 * cuGetExportTable's CONTEXT_LOCAL_STORAGE table, the one cudart keeps
 * its per-context state in: put, get and delete by (context, key), the
 * current context for a NULL one, destructors run newest first when a
 * context is released (and may use the storage themselves), many threads
 * at once.  Driven through the fake core of etbl_fake.h; the other tables
 * are check_etbl.c.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda.h>

#include "xgpulib_etbl.h"
#include "etbl_fake.h"
#include "check_run.h"

/* ---- CONTEXT_LOCAL_STORAGE ---------------------------------------------- */

/* a context of no device, for what a destructor stores */
static struct CUctx_st fake_other;

typedef void (*cls_dtor)(CUcontext ctx, void *key, void *value);
typedef CUresult (*cls_put_fn)(CUcontext ctx, void *key, void *value,
			       cls_dtor dtor);
typedef CUresult (*cls_delete_fn)(CUcontext ctx, void *key);
typedef CUresult (*cls_get_fn)(void **value, CUcontext ctx, void *key);

static cls_put_fn cls_put;
static cls_delete_fn cls_delete;
static cls_get_fn cls_get;

static void setup_cls(void)
{
	const void *const *tbl;

	setup_ops();
	tbl = get_table(T_CLS);
	cls_put = (cls_put_fn)tbl[0];
	cls_delete = (cls_delete_fn)tbl[1];
	cls_get = (cls_get_fn)tbl[2];
	fake_current = NULL;
}

static int key1, key2, key3;
static int val1, val2, val3;

struct dtor_call {
	CUcontext ctx;
	void *key;
	void *value;
};

static struct dtor_call dtor_calls[8];
static int ndtor_calls;

static void record_dtor(CUcontext ctx, void *key, void *value)
{
	ck_assert_int_lt(ndtor_calls, 8);
	dtor_calls[ndtor_calls].ctx = ctx;
	dtor_calls[ndtor_calls].key = key;
	dtor_calls[ndtor_calls].value = value;
	ndtor_calls++;
}

START_TEST(test_cls_no_context)
{
	void *v = &v;

	/* cudart's first get, before any context: 201 */
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cls_put(NULL, &key1, &val1, NULL),
			 CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cls_delete(NULL, &key1),
			 CUDA_ERROR_INVALID_CONTEXT);
}
END_TEST

START_TEST(test_cls_no_core)
{
	const void *const *tbl = get_table(T_CLS);
	void *v;

	ck_assert_int_eq(((cls_get_fn)tbl[2])(&v, NULL, &key1),
			 CUDA_ERROR_INVALID_CONTEXT);
}
END_TEST

START_TEST(test_cls_put_get_delete)
{
	void *v = NULL;

	fake_current = &fake_primary[0];
	/* cudart's second get, with a context but nothing stored: 400 */
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_ERROR_INVALID_HANDLE);

	ck_assert_int_eq(cls_put(NULL, &key1, &val1, record_dtor),
			 CUDA_SUCCESS);
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val1);
	/* NULL ctx is the current one, so the explicit one sees it too */
	v = NULL;
	ck_assert_int_eq(cls_get(&v, &fake_primary[0], &key1), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val1);
	/* other keys and other contexts are separate */
	ck_assert_int_eq(cls_get(&v, NULL, &key2), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cls_get(&v, &fake_primary[1], &key1),
			 CUDA_ERROR_INVALID_HANDLE);

	/* put again replaces */
	ck_assert_int_eq(cls_put(&fake_primary[0], &key1, &val2, record_dtor),
			 CUDA_SUCCESS);
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val2);

	/* delete forgets without running the destructor */
	ck_assert_int_eq(cls_delete(&fake_primary[0], &key1), CUDA_SUCCESS);
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(ndtor_calls, 0);
	/* deleting what is not there is harmless */
	ck_assert_int_eq(cls_delete(NULL, &key1), CUDA_SUCCESS);

	ck_assert_int_eq(cls_get(NULL, NULL, &key1), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_cls_release_runs_dtors)
{
	void *v;

	fake_current = &fake_primary[0];
	ck_assert_int_eq(cls_put(NULL, &key1, &val1, record_dtor),
			 CUDA_SUCCESS);
	ck_assert_int_eq(cls_put(NULL, &key2, &val2, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(cls_put(NULL, &key3, &val3, record_dtor),
			 CUDA_SUCCESS);
	ck_assert_int_eq(cls_put(&fake_primary[1], &key1, &val3, record_dtor),
			 CUDA_SUCCESS);

	xgpulib_cls_release_ctx(&fake_primary[0]);
	/* newest first, with (ctx, key, value); none for the NULL dtor */
	ck_assert_int_eq(ndtor_calls, 2);
	ck_assert_ptr_eq(dtor_calls[0].ctx, &fake_primary[0]);
	ck_assert_ptr_eq(dtor_calls[0].key, &key3);
	ck_assert_ptr_eq(dtor_calls[0].value, &val3);
	ck_assert_ptr_eq(dtor_calls[1].ctx, &fake_primary[0]);
	ck_assert_ptr_eq(dtor_calls[1].key, &key1);
	ck_assert_ptr_eq(dtor_calls[1].value, &val1);
	/* the context's entries are gone, the other context's are not */
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cls_get(&v, NULL, &key2), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cls_get(&v, &fake_primary[1], &key1), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val3);

	/* once only */
	xgpulib_cls_release_ctx(&fake_primary[0]);
	ck_assert_int_eq(ndtor_calls, 2);
	xgpulib_cls_release_ctx(NULL);
	ck_assert_int_eq(ndtor_calls, 2);

	/* a released context can store again */
	ck_assert_int_eq(cls_put(NULL, &key1, &val2, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(cls_get(&v, NULL, &key1), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val2);
}
END_TEST

/* A destructor may use the storage itself (cudart's do) */
static void reentrant_dtor(CUcontext ctx, void *key, void *value)
{
	void *v;

	(void)value;
	ck_assert_int_eq(cls_get(&v, ctx, key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cls_delete(ctx, &key2), CUDA_SUCCESS);
	ck_assert_int_eq(cls_put(&fake_other, &key3, &val3, NULL),
			 CUDA_SUCCESS);
	ndtor_calls++;
}

START_TEST(test_cls_reentrant_dtor)
{
	void *v;

	ck_assert_int_eq(cls_put(&fake_primary[0], &key1, &val1,
				 reentrant_dtor), CUDA_SUCCESS);
	ck_assert_int_eq(cls_put(&fake_primary[0], &key2, &val2,
				 record_dtor), CUDA_SUCCESS);
	xgpulib_cls_release_ctx(&fake_primary[0]);
	/* key2's destructor ran first (newest), then key1's */
	ck_assert_int_eq(ndtor_calls, 2);
	ck_assert_ptr_eq(dtor_calls[0].key, &key2);
	ck_assert_int_eq(cls_get(&v, &fake_other, &key3), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val3);
}
END_TEST

/* Many keys, many threads, each with its own current context */
#define CLS_THREADS 8
#define CLS_KEYS 200

static char thread_keys[CLS_THREADS][CLS_KEYS];

static void *cls_worker(void *arg)
{
	int t = (int)(intptr_t)arg, k, round;
	struct CUctx_st *ctx = &fake_primary[t % FAKE_NDEV];
	void *v;

	fake_current = ctx;
	for (round = 0; round < 20; round++) {
		for (k = 0; k < CLS_KEYS; k++)
			if (cls_put(NULL, &thread_keys[t][k],
				    (void *)(intptr_t)(k + round), NULL))
				return (void *)1;
		for (k = 0; k < CLS_KEYS; k++) {
			if (cls_get(&v, NULL, &thread_keys[t][k]) ||
			    v != (void *)(intptr_t)(k + round))
				return (void *)2;
		}
		for (k = 0; k < CLS_KEYS; k += 2)
			if (cls_delete(ctx, &thread_keys[t][k]))
				return (void *)3;
		for (k = 0; k < CLS_KEYS; k++) {
			CUresult rc = cls_get(&v, NULL, &thread_keys[t][k]);

			if (rc != (k % 2 ? CUDA_SUCCESS :
				   CUDA_ERROR_INVALID_HANDLE))
				return (void *)4;
		}
	}
	return NULL;
}

START_TEST(test_cls_threads)
{
	pthread_t th[CLS_THREADS];
	void *ret;
	int i;

	for (i = 0; i < CLS_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, cls_worker,
						(void *)(intptr_t)i), 0);
	for (i = 0; i < CLS_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &ret), 0);
		ck_assert_msg(ret == NULL, "thread %d failed at step %ld", i,
			      (long)(intptr_t)ret);
	}
}
END_TEST

static Suite *etbl_cls_suite(void)
{
	Suite *s = suite_create("etbl_cls");
	TCase *tc;

	tc = tcase_create("cls");
	tcase_add_checked_fixture(tc, setup_cls, NULL);
	tcase_add_test(tc, test_cls_no_context);
	tcase_add_test(tc, test_cls_put_get_delete);
	tcase_add_test(tc, test_cls_release_runs_dtors);
	tcase_add_test(tc, test_cls_reentrant_dtor);
	tcase_add_test(tc, test_cls_threads);
	suite_add_tcase(s, tc);

	/* before the core has called xgpulib_etbl_init */
	tc = tcase_create("no core");
	tcase_add_test(tc, test_cls_no_core);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(etbl_cls_suite(), true);
}
