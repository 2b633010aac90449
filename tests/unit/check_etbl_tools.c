/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_etbl.c xen-frontend/lib/xgpulib_vec.c */
/*
 * The tools tables of cuGetExportTable that cuBLASLt, cuFFT and NVML
 * call (research/export-tables-2.md): TOOLS_TLS (current context),
 * 21318c60 (a context's device and id), 6e163fbe (a module's functions,
 * a function's parameter count) and NVML's 69a28e9f (refused), and the
 * tables of the host driver the library does not know (refusing slots),
 * driven through the fake core of etbl_fake.h.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "xgpulib_etbl.h"
#include "etbl_fake.h"
#include "check_run.h"

/* ---- TOOLS_TLS ------------------------------------------------------------ */

typedef CUresult (*set_ctx_fn)(CUcontext ctx);
typedef CUresult (*get_ctx_fn)(CUcontext *pctx);

START_TEST(test_tls_current)
{
	set_ctx_fn set = (set_ctx_fn)get_table(T_TOOLS_TLS)[1];
	get_ctx_fn get = (get_ctx_fn)get_table(T_TOOLS_TLS)[2];
	CUcontext c = (CUcontext)&c;	/* garbage, as cuBLASLt's stack */

	/* no context: NULL is written, not left as it was */
	ck_assert_int_eq(get(&c), CUDA_SUCCESS);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(set(&fake_primary[1]), CUDA_SUCCESS);
	ck_assert_ptr_eq(fake_current, &fake_primary[1]);
	ck_assert_int_eq(get(&c), CUDA_SUCCESS);
	ck_assert_ptr_eq(c, &fake_primary[1]);
	ck_assert_int_eq(set(NULL), CUDA_SUCCESS);
	ck_assert_int_eq(get(&c), CUDA_SUCCESS);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(get(NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_tls_no_core)
{
	get_ctx_fn get = (get_ctx_fn)get_table(T_TOOLS_TLS)[2];
	set_ctx_fn set = (set_ctx_fn)get_table(T_TOOLS_TLS)[1];
	CUcontext c = (CUcontext)&c;

	ck_assert_int_eq(get(&c), CUDA_SUCCESS);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(set(&fake_primary[0]), CUDA_ERROR_NOT_INITIALIZED);
}
END_TEST

/* ---- 21318c60 ------------------------------------------------------------- */

typedef CUresult (*ctx_device_fn)(CUcontext ctx, uint32_t *index);
typedef CUresult (*ctx_id_fn)(CUcontext ctx, uint64_t *id);

START_TEST(test_tools_ctx)
{
	ctx_device_fn dev = (ctx_device_fn)get_table(T_21318C60)[3];
	ctx_id_fn id = (ctx_id_fn)get_table(T_21318C60)[4];
	struct CUctx_st other;
	uint32_t d = 99;
	uint64_t v = 99;

	ck_assert_int_eq(dev(&fake_primary[1], &d), CUDA_SUCCESS);
	ck_assert_uint_eq(d, 1);
	ck_assert_int_eq(dev(NULL, &d), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(dev(&fake_primary[0], NULL),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(dev(&other, &d), CUDA_ERROR_INVALID_CONTEXT);

	ck_assert_int_eq(id(&fake_primary[0], &v), CUDA_SUCCESS);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(id(&fake_primary[1], &v), CUDA_SUCCESS);
	ck_assert_uint_eq(v, 2);
	/* NULL is no context: id 0, not the current context's */
	fake_current = &fake_primary[1];
	ck_assert_int_eq(id(NULL, &v), CUDA_SUCCESS);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(id(&fake_primary[0], NULL), CUDA_ERROR_UNKNOWN);
	ck_assert_int_eq(id(&other, &v), CUDA_ERROR_INVALID_CONTEXT);
}
END_TEST

/* ---- 6e163fbe ------------------------------------------------------------- */

typedef void (*visit_fn)(void *user, CUfunction f, const char *name);
typedef int (*module_fns_fn)(CUcontext ctx, CUmodule mod, visit_fn cb,
			     void *user);
typedef CUresult (*param_count_fn)(CUfunction f, size_t *count);

struct seen {
	int n;
	CUfunction f[8];
	const char *name[8];
};

static void remember(void *user, CUfunction f, const char *name)
{
	struct seen *s = user;

	if (s->n < 8) {
		s->f[s->n] = f;
		s->name[s->n] = name;
	}
	s->n++;
}

START_TEST(test_module_functions)
{
	module_fns_fn each = (module_fns_fn)get_table(T_TOOLS_MODULE)[7];
	param_count_fn count = (param_count_fn)get_table(T_TOOLS_MODULE)[33];
	struct seen s = { 0 };
	CUmodule mod = (CUmodule)&s;
	size_t n = 0;

	ck_assert_int_eq(each(NULL, mod, remember, &s), FAKE_NFUNCS);
	ck_assert_int_eq(s.n, FAKE_NFUNCS);
	for (int i = 0; i < FAKE_NFUNCS; i++) {
		ck_assert_ptr_eq(s.f[i], &fake_funcs[i]);
		ck_assert_str_eq(s.name[i], fake_funcs[i].name);
		ck_assert_int_eq(count(s.f[i], &n), CUDA_SUCCESS);
		ck_assert_uint_eq(n, fake_funcs[i].nparams);
	}
	/* no module, no callback: nothing visited */
	ck_assert_int_eq(each(NULL, NULL, remember, &s), 0);
	ck_assert_int_eq(each(NULL, mod, NULL, &s), 0);
	ck_assert_int_eq(s.n, FAKE_NFUNCS);
}
END_TEST

typedef CUresult (*noarg_fn)(void);

/* the slots of 6e163fbe and NVML's table that are not known are refused */
START_TEST(test_unknown_slots_refused)
{
	static const struct {
		int t;
		int slot;
	} s[] = {
		{ T_TOOLS_MODULE, 1 }, { T_TOOLS_MODULE, 5 },
		{ T_TOOLS_MODULE, 34 }, { T_TOOLS_MODULE, 98 },
		{ T_NVML, 1 }, { T_NVML, 19 }, { T_NVML, 24 },
		{ T_NVML, 25 }, { T_NVML, 33 },
	};

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		noarg_fn fn = (noarg_fn)get_table(s[i].t)[s[i].slot];

		ck_assert_int_eq(fn(), CUDA_ERROR_NOT_SUPPORTED);
	}
}
END_TEST

START_TEST(test_module_no_core)
{
	module_fns_fn each = (module_fns_fn)get_table(T_TOOLS_MODULE)[7];
	struct seen s = { 0 };

	ck_assert_int_eq(each(NULL, (CUmodule)&s, remember, &s), 0);
	ck_assert_int_eq(s.n, 0);
}
END_TEST

/* ---- tables of the host driver the library does not know ---------------- */

static CUresult get_host_table(uint8_t b, const void *const **tbl)
{
	CUuuid id;

	memset(id.bytes, b, 16);
	*tbl = (const void *const *)&id;	/* to see it overwritten */
	return cuGetExportTable((const void **)tbl, &id);
}

START_TEST(test_host_tables)
{
	const void *const *t6, *const *again, *const *tx, *const *none;

	ck_assert_int_eq(get_host_table(FAKE_HOST_TBL6, &t6), CUDA_SUCCESS);
	ck_assert_uint_eq((uintptr_t)t6[0], 6 * sizeof(void *));
	for (int i = 1; i < 6; i++)
		ck_assert_int_eq(((noarg_fn)t6[i])(), CUDA_ERROR_NOT_SUPPORTED);
	/* one table per id, kept */
	ck_assert_int_eq(get_host_table(FAKE_HOST_TBL6, &again), CUDA_SUCCESS);
	ck_assert_ptr_eq(again, t6);
	/* no size slot: every slot refuses, the first too */
	ck_assert_int_eq(get_host_table(FAKE_HOST_TBLX, &tx), CUDA_SUCCESS);
	ck_assert_ptr_ne(tx, t6);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(((noarg_fn)tx[i])(), CUDA_ERROR_NOT_SUPPORTED);
	/* what the host driver does not have either */
	ck_assert_int_eq(get_host_table(0x79, &none), CUDA_ERROR_NOT_FOUND);
	ck_assert_ptr_null(none);
}
END_TEST

START_TEST(test_host_tables_no_core)
{
	const void *const *t;

	ck_assert_int_eq(get_host_table(FAKE_HOST_TBL6, &t),
			 CUDA_ERROR_NOT_FOUND);
	ck_assert_ptr_null(t);
}
END_TEST

static Suite *tools_suite(void)
{
	Suite *s = suite_create("etbl_tools");
	TCase *tc = tcase_create("tools");
	TCase *none = tcase_create("no_core");

	tcase_add_checked_fixture(tc, setup_ops, NULL);
	tcase_add_test(tc, test_tls_current);
	tcase_add_test(tc, test_tools_ctx);
	tcase_add_test(tc, test_module_functions);
	tcase_add_test(tc, test_unknown_slots_refused);
	tcase_add_test(tc, test_host_tables);
	suite_add_tcase(s, tc);
	tcase_add_test(none, test_tls_no_core);
	tcase_add_test(none, test_module_no_core);
	tcase_add_test(none, test_host_tables_no_core);
	suite_add_tcase(s, none);
	return s;
}

int main(void)
{
	return check_run(tools_suite(), true);
}
