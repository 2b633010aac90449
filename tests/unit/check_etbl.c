/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_etbl.c xen-frontend/lib/xgpulib_md2.c
 *        xen-frontend/lib/xgpulib_vec.c */
/*
 * cuGetExportTable: which tables exist and their sizes, the slots cudart
 * uses (primary context, callback buffers, context checks, integrity
 * check), driven through fake identity ops (etbl_fake.h).  The
 * context-local storage table is check_etbl_cls.c.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "xgpulib_etbl.h"
#include "xgpulib_md2.h"
#include "etbl_fake.h"
#include "check_run.h"

/* ---- tables ------------------------------------------------------------- */

START_TEST(test_table_size_slot)
{
	const void *const *tbl = get_table(_i);
	size_t i;

	if (tables[_i].slots) {
		ck_assert_msg((uintptr_t)tbl[0] ==
			      tables[_i].slots * sizeof(void *),
			      "%s: slot 0 = %p", tables[_i].name, tbl[0]);
		for (i = 1; i < tables[_i].slots; i++)
			ck_assert_msg(tbl[i] != NULL, "%s[%zu] is NULL",
				      tables[_i].name, i);
	} else {
		for (i = 0; i < 4; i++)
			ck_assert_ptr_nonnull(tbl[i]);
	}
	/* the integrity check hashes table addresses: they must not move */
	ck_assert_ptr_eq(get_table(_i), tbl);
}
END_TEST

/* Each table is its own */
START_TEST(test_tables_distinct)
{
	size_t i, j;

	for (i = 0; i < NTABLES; i++)
		for (j = i + 1; j < NTABLES; j++)
			ck_assert_ptr_ne(get_table((int)i), get_table((int)j));
}
END_TEST

static const uint8_t unknown_ids[][16] = {
	/* NVRTC's */
	{ 0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41,
	  0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28 },
	{ 0 },
	/* CUDART_INTERFACE with the last byte changed */
	{ 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
	  0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xfa },
};

START_TEST(test_unknown_table)
{
	const void *tbl = (const void *)&tbl;
	CUuuid id;

	memcpy(id.bytes, unknown_ids[_i], 16);
	ck_assert_int_eq(cuGetExportTable(&tbl, &id), CUDA_ERROR_NOT_FOUND);
	ck_assert_ptr_null(tbl);
}
END_TEST

START_TEST(test_invalid_arguments)
{
	const void *tbl;
	CUuuid id;

	memcpy(id.bytes, tables[T_CUDART_INTERFACE].id, 16);
	ck_assert_int_eq(cuGetExportTable(NULL, &id),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuGetExportTable(&tbl, NULL),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* Under XGPU_DEBUG an unknown table is named in the log */
START_TEST(test_unknown_table_logged)
{
	FILE *log = tmpfile();
	int saved = dup(STDERR_FILENO);
	const void *tbl;
	char got[256];
	size_t n;
	CUuuid id;

	ck_assert_ptr_nonnull(log);
	setenv("XGPU_DEBUG", "1", 1);
	memcpy(id.bytes, unknown_ids[0], 16);
	fflush(stderr);
	dup2(fileno(log), STDERR_FILENO);
	cuGetExportTable(&tbl, &id);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(log);
	n = fread(got, 1, sizeof(got) - 1, log);
	got[n] = 0;
	fclose(log);
	ck_assert_msg(strstr(got, "{da9151d3-3ae6-cc41-a5c0-4f26d533e328}"),
		      "log: %s", got);
}
END_TEST

/* ---- slots that only have to exist -------------------------------------- */

typedef CUresult (*noarg_fn)(void);

/* every placeholder slot answers 0, whatever it is given */
START_TEST(test_placeholder_slots)
{
	static const struct {
		int t;
		int slot;
	} s[] = {
		{ T_F8CFF951, 1 }, { T_F8CFF951, 2 },
		{ T_CUDART_INTERFACE, 1 }, { T_CUDART_INTERFACE, 12 },
		{ T_TOOLS_HOOKS, 1 }, { T_TOOLS_HOOKS, 5 },
		{ T_CLS, 3 },
		{ T_CONTEXT_CHECKS, 1 }, { T_CONTEXT_CHECKS, 14 },
		{ T_INTEGRITY_CHECK, 2 },
		{ T_21318C60, 1 }, { T_21318C60, 5 }, { T_21318C60, 92 },
	};
	size_t i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		noarg_fn fn = (noarg_fn)get_table(s[i].t)[s[i].slot];

		ck_assert_int_eq(fn(), CUDA_SUCCESS);
	}
}
END_TEST

/* Under XGPU_DEBUG a placeholder says which table and slot it is */
START_TEST(test_placeholder_logged)
{
	FILE *log = tmpfile();
	int saved = dup(STDERR_FILENO);
	char got[512];
	size_t n;

	ck_assert_ptr_nonnull(log);
	setenv("XGPU_DEBUG", "1", 1);
	fflush(stderr);
	dup2(fileno(log), STDERR_FILENO);
	((noarg_fn)get_table(T_21318C60)[5])();
	((noarg_fn)get_table(T_CONTEXT_CHECKS)[14])();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(log);
	n = fread(got, 1, sizeof(got) - 1, log);
	got[n] = 0;
	fclose(log);
	ck_assert_msg(strstr(got, "21318C60 slot 5"), "log: %s", got);
	ck_assert_msg(strstr(got, "CONTEXT_CHECKS slot 14"), "log: %s", got);
}
END_TEST

/* ---- CUDART_INTERFACE --------------------------------------------------- */

typedef CUresult (*primary_ctx_fn)(CUcontext *pctx, CUdevice dev);

START_TEST(test_cudart_primary_ctx)
{
	primary_ctx_fn fn = (primary_ctx_fn)get_table(T_CUDART_INTERFACE)[2];
	CUcontext ctx = NULL;
	int dev;

	for (dev = 0; dev < FAKE_NDEV; dev++) {
		ck_assert_int_eq(fn(&ctx, dev), CUDA_SUCCESS);
		ck_assert_ptr_eq(ctx, &fake_primary[dev]);
	}
	ck_assert_int_eq(fn(&ctx, FAKE_NDEV), CUDA_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(fn(NULL, 0), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_cudart_primary_ctx_no_core)
{
	primary_ctx_fn fn = (primary_ctx_fn)get_table(T_CUDART_INTERFACE)[2];
	CUcontext ctx = NULL;

	ck_assert_int_eq(fn(&ctx, 0), CUDA_ERROR_NOT_INITIALIZED);
}
END_TEST

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS --------------------------------------- */

typedef void (*buffer_fn)(void **ptr, size_t *size);

START_TEST(test_hooks_buffers)
{
	const void *const *tbl = get_table(T_TOOLS_HOOKS);
	void *p2 = NULL, *p6 = NULL, *again = NULL;
	size_t n2 = 0, n6 = 0, n = 0, i;

	((buffer_fn)tbl[2])(&p2, &n2);
	((buffer_fn)tbl[6])(&p6, &n6);
	ck_assert_ptr_nonnull(p2);
	ck_assert_ptr_nonnull(p6);
	ck_assert_ptr_ne(p2, p6);
	ck_assert_uint_eq(n2, 1024);
	ck_assert_uint_eq(n6, 14);
	for (i = 0; i < n2; i++)
		ck_assert_uint_eq(((uint32_t *)p2)[i], 0);
	for (i = 0; i < n6; i++)
		ck_assert_uint_eq(((uint32_t *)p6)[i], 0);
	/* cudart writes into them: the whole size must be usable */
	memset(p2, 0xa5, n2 * sizeof(uint32_t));
	memset(p6, 0x5a, n6 * sizeof(uint32_t));
	((buffer_fn)tbl[2])(&again, &n);
	ck_assert_ptr_eq(again, p2);
}
END_TEST

/* ---- CONTEXT_CHECKS ----------------------------------------------------- */

typedef CUresult (*ctx_check_fn)(CUcontext ctx, uint32_t *result,
				 void **extra);

START_TEST(test_context_checks)
{
	const void *const *tbl = get_table(T_CONTEXT_CHECKS);
	uint32_t result = 0xdeadbeef;
	void *extra = NULL;

	ck_assert_int_eq(((ctx_check_fn)tbl[2])(&fake_primary[0], &result,
						&extra), CUDA_SUCCESS);
	ck_assert_uint_eq(result, 0);
	ck_assert_int_eq(((noarg_fn)tbl[3])(), CUDA_SUCCESS);
}
END_TEST

/* ---- INTEGRITY_CHECK ---------------------------------------------------- */

typedef CUresult (*integrity_fn)(uint32_t version, uint64_t secs,
				 uint64_t result[2]);

#define SECS 1795331283ULL	/* the traced call's clock */

START_TEST(test_integrity_constants)
{
	integrity_fn fn = (integrity_fn)get_table(T_INTEGRITY_CHECK)[1];
	uint64_t r[2] = { 0, 0 };

	/* the real driver's answers (real_vecadd_static_wrapped.log) */
	ck_assert_int_eq(fn(13000, SECS, r), CUDA_SUCCESS);
	ck_assert_uint_eq(r[0], 0x3341181c03cb675cULL);
	ck_assert_uint_eq(r[1], 0x8ed383aa1f4cd1e8ULL);
	ck_assert_int_eq(fn(13001, SECS, r), CUDA_SUCCESS);
	ck_assert_uint_eq(r[0], 0x1841181c03cb675cULL);
	ck_assert_uint_eq(r[1], 0x8ed383aa1f4cd1e8ULL);
	/* by the last digit, not the exact version, and whatever the clock */
	ck_assert_int_eq(fn(12080, 1, r), CUDA_SUCCESS);
	ck_assert_uint_eq(r[0], 0x3341181c03cb675cULL);
	ck_assert_int_eq(fn(12091, 2, r), CUDA_SUCCESS);
	ck_assert_uint_eq(r[0], 0x1841181c03cb675cULL);
	ck_assert_int_eq(fn(13000, SECS, NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/*
 * The message exactly as cuda-interception.md describes it, assembled
 * byte by byte here rather than through the library's struct.
 */
static void manual_hash(uint32_t version, uint64_t secs, const void *cudart,
			const void *integrity, const void *slot1,
			uint64_t out[2])
{
	static const uint8_t key[16] = {
		0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
		0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
	};
	uint8_t msg[48 + FAKE_NDEV * 28], d[16];
	uint32_t u32;
	int i;

	u32 = 13000;
	memcpy(msg + 0, &u32, 4);
	memcpy(msg + 4, &version, 4);
	u32 = (uint32_t)getpid();
	memcpy(msg + 8, &u32, 4);
	u32 = (uint32_t)pthread_self();
	memcpy(msg + 12, &u32, 4);
	memcpy(msg + 16, &cudart, 8);
	memcpy(msg + 24, &integrity, 8);
	memcpy(msg + 32, &slot1, 8);
	memcpy(msg + 40, &secs, 8);
	for (i = 0; i < FAKE_NDEV; i++) {
		uint8_t *r = msg + 48 + 28 * i;

		memcpy(r, fake_devs[i].uuid.bytes, 16);
		memcpy(r + 16, &fake_devs[i].pci_domain, 4);
		memcpy(r + 20, &fake_devs[i].pci_bus, 4);
		memcpy(r + 24, &fake_devs[i].pci_device, 4);
	}
	xgpulib_hmac_md2(key, sizeof(key), msg, sizeof(msg), d);
	memcpy(out, d, 16);
}

START_TEST(test_integrity_hash_slot)
{
	const void *const *itbl = get_table(T_INTEGRITY_CHECK);
	const void *const *ctbl = get_table(T_CUDART_INTERFACE);
	integrity_fn fn = (integrity_fn)itbl[1];
	uint64_t got[2], want[2], manual[2];

	ck_assert_int_eq(fn(13002, SECS, got), CUDA_SUCCESS);
	xgpulib_integrity_hash(13000, 13002, (uint32_t)getpid(),
			       (uint32_t)pthread_self(), ctbl, itbl, itbl[1],
			       SECS, FAKE_NDEV, fake_devs, want);
	ck_assert_uint_eq(got[0], want[0]);
	ck_assert_uint_eq(got[1], want[1]);
	manual_hash(13002, SECS, ctbl, itbl, itbl[1], manual);
	ck_assert_uint_eq(got[0], manual[0]);
	ck_assert_uint_eq(got[1], manual[1]);

	/* every input counts */
	ck_assert_int_eq(fn(13002, SECS + 1, got), CUDA_SUCCESS);
	ck_assert(got[0] != want[0] || got[1] != want[1]);
	ck_assert_int_eq(fn(13012, SECS, got), CUDA_SUCCESS);
	ck_assert(got[0] != want[0] || got[1] != want[1]);
	manual_hash(13012, SECS, ctbl, itbl, itbl[1], manual);
	ck_assert_uint_eq(got[0], manual[0]);
	ck_assert_uint_eq(got[1], manual[1]);
}
END_TEST

/* A device that cannot say who it is fails the check rather than lie */
START_TEST(test_integrity_identity_error)
{
	integrity_fn fn = (integrity_fn)get_table(T_INTEGRITY_CHECK)[1];
	uint64_t r[2];

	fake_identity_fails = 1;
	ck_assert_int_eq(fn(13002, SECS, r), CUDA_ERROR_INVALID_DEVICE);
}
END_TEST

START_TEST(test_integrity_no_core)
{
	integrity_fn fn = (integrity_fn)get_table(T_INTEGRITY_CHECK)[1];
	uint64_t r[2];

	ck_assert_int_eq(fn(13002, SECS, r), CUDA_ERROR_NOT_INITIALIZED);
	/* the constant answers need nothing */
	ck_assert_int_eq(fn(13000, SECS, r), CUDA_SUCCESS);
}
END_TEST

/*
 * Known answer computed outside this code base (a separate Python MD2
 * under Python's hmac module, over struct.pack('<IIIIQQQQ', ...) and the
 * two device records).
 */
START_TEST(test_integrity_hash_kat)
{
	uint64_t out[2];

	xgpulib_integrity_hash(13000, 13002, 1234, 0x89abcdef,
			       (const void *)0x1000, (const void *)0x2000,
			       (const void *)0x3000, SECS, 2,
			       (const struct xgpulib_integrity_dev[]) {
		{ { { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 } },
		  0, 0x1b, 0 },
		{ { { 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
		      30, 31 } }, 1, 0x9a, 3 },
	}, out);
	ck_assert_uint_eq(out[0], 0x37ea9a46d5c22edfULL);
	ck_assert_uint_eq(out[1], 0xb82ac1945a950780ULL);
}
END_TEST

START_TEST(test_integrity_layout)
{
	ck_assert_uint_eq(sizeof(struct xgpulib_integrity_dev), 28);
}
END_TEST

static Suite *etbl_suite(void)
{
	Suite *s = suite_create("etbl");
	TCase *tc;

	tc = tcase_create("tables");
	tcase_add_checked_fixture(tc, setup_ops, NULL);
	tcase_add_loop_test(tc, test_table_size_slot, 0, NTABLES);
	tcase_add_test(tc, test_tables_distinct);
	tcase_add_loop_test(tc, test_unknown_table, 0,
			    sizeof(unknown_ids) / sizeof(unknown_ids[0]));
	tcase_add_test(tc, test_invalid_arguments);
	tcase_add_test(tc, test_unknown_table_logged);
	tcase_add_test(tc, test_placeholder_slots);
	tcase_add_test(tc, test_placeholder_logged);
	tcase_add_test(tc, test_cudart_primary_ctx);
	tcase_add_test(tc, test_hooks_buffers);
	tcase_add_test(tc, test_context_checks);
	suite_add_tcase(s, tc);

	tc = tcase_create("integrity");
	tcase_add_checked_fixture(tc, setup_ops, NULL);
	tcase_add_test(tc, test_integrity_constants);
	tcase_add_test(tc, test_integrity_hash_slot);
	tcase_add_test(tc, test_integrity_identity_error);
	tcase_add_test(tc, test_integrity_hash_kat);
	tcase_add_test(tc, test_integrity_layout);
	suite_add_tcase(s, tc);

	/* before the core has called xgpulib_etbl_init */
	tc = tcase_create("no core");
	tcase_add_test(tc, test_cudart_primary_ctx_no_core);
	tcase_add_test(tc, test_integrity_no_core);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(etbl_suite(), true);
}
