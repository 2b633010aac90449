/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_gpa.c xen-frontend/lib/xgpulib_stubs.c */
/*
 * cuGetProcAddress: version mapping, per-thread variants, misses, and
 * every row of the table.  Every lookup CUDA 13.0 cudart makes at start,
 * with the answers the real driver gave, is check_gpa_cudart.c.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "check_run.h"

/* cuDriverGetVersion's answer (xgpulib_dev.c): the toolkit's until cuInit */
extern int xgpulib_driver_version;

/*
 * The exported functions, reached by symbol name whatever their C type
 * (cuda.h's prototypes, or none at all for the legacy names).
 */
#define SYM(s) extern int sym_##s(void) __asm__(#s);
SYM(cuInit)
SYM(cuMemcpyHtoD)
SYM(cuMemcpyHtoD_v2)
SYM(cuMemcpyHtoD_v2_ptds)
SYM(cuMemcpy)
SYM(cuMemcpy_ptds)
SYM(cuMemPrefetchAsync)
SYM(cuMemPrefetchAsync_ptsz)
SYM(cuMemPrefetchAsync_v2)
SYM(cuMemPrefetchAsync_v2_ptsz)
SYM(cuCtxCreate)
SYM(cuCtxCreate_v2)
SYM(cuCtxCreate_v3)
SYM(cuCtxCreate_v4)
SYM(cuCtxSynchronize)
SYM(cuCtxSynchronize_v2)
SYM(cuCtxGetDevice)
SYM(cuCtxGetDevice_v2)
SYM(cuEventElapsedTime)
SYM(cuEventElapsedTime_v2)
SYM(cuGetProcAddress)
SYM(cuGetProcAddress_v2)
SYM(cuGraphInstantiate)
SYM(cuGraphInstantiate_v2)
SYM(cuGraphInstantiateWithFlags)
SYM(cuDevicePrimaryCtxRelease)
SYM(cuDevicePrimaryCtxRelease_v2)
SYM(cuDeviceGetUuid)
SYM(cuDeviceGetUuid_v2)
SYM(cuStreamBeginCapture)
SYM(cuStreamBeginCapture_ptsz)
SYM(cuStreamBeginCapture_v2)
SYM(cuStreamBeginCapture_v2_ptsz)
SYM(cuStreamGetCaptureInfo_v2_ptsz)
SYM(cuStreamGetCaptureInfo_v3)
SYM(cuStreamGetCaptureInfo_v3_ptsz)
SYM(cuLaunchKernel)
SYM(cuLaunchKernel_ptsz)
SYM(cuMemAlloc)
SYM(cuMemAlloc_v2)
SYM(cuProfilerStart)
SYM(cuDeviceGetNvSciSyncAttributes)
SYM(cuGetErrorName)
#undef SYM

/* the CUDA 11.3 ABI, which cuda.h hides behind the _v2 rename */
extern CUresult gpa_v1(const char *symbol, void **pfn, int cudaVersion,
		       cuuint64_t flags) __asm__("cuGetProcAddress");

#define F(s) ((void *)sym_##s)
#define PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define LEGACY CU_GET_PROC_ADDRESS_LEGACY_STREAM

static void *lookup(const char *name, int version, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
	void *fn = (void *)&st;
	CUresult rc = cuGetProcAddress_v2(name, &fn, version, flags, &st);

	ck_assert_int_eq(rc, CUDA_SUCCESS);
	ck_assert_msg(st == CU_GET_PROC_ADDRESS_SUCCESS,
		      "%s@%d flags %d: status %d", name, version, (int)flags,
		      (int)st);
	ck_assert_ptr_nonnull(fn);
	return fn;
}

/* ---- version mapping ---------------------------------------------------- */

static const struct {
	const char *name;
	int version;
	int flags;
	void *want;
} cases[] = {
	{ "cuMemcpyHtoD", 2000, 0, F(cuMemcpyHtoD) },
	{ "cuMemcpyHtoD", 3020, 0, F(cuMemcpyHtoD_v2) },
	{ "cuMemcpyHtoD", 7000, 0, F(cuMemcpyHtoD_v2) },
	{ "cuMemcpyHtoD", 7000, LEGACY, F(cuMemcpyHtoD_v2) },
	{ "cuMemcpyHtoD", 7000, PTDS, F(cuMemcpyHtoD_v2_ptds) },
	{ "cuMemcpyHtoD", 13000, PTDS, F(cuMemcpyHtoD_v2_ptds) },
	{ "cuMemcpy", 4000, 0, F(cuMemcpy) },
	{ "cuMemcpy", 7000, PTDS, F(cuMemcpy_ptds) },
	{ "cuMemPrefetchAsync", 8000, 0, F(cuMemPrefetchAsync) },
	{ "cuMemPrefetchAsync", 8000, PTDS, F(cuMemPrefetchAsync_ptsz) },
	{ "cuMemPrefetchAsync", 11000, PTDS, F(cuMemPrefetchAsync_ptsz) },
	{ "cuMemPrefetchAsync", 12020, 0, F(cuMemPrefetchAsync_v2) },
	{ "cuMemPrefetchAsync", 12020, PTDS, F(cuMemPrefetchAsync_v2_ptsz) },
	{ "cuMemPrefetchAsync", 13000, LEGACY, F(cuMemPrefetchAsync_v2) },
	{ "cuCtxCreate", 2000, 0, F(cuCtxCreate) },
	{ "cuCtxCreate", 3020, 0, F(cuCtxCreate_v2) },
	{ "cuCtxCreate", 11000, 0, F(cuCtxCreate_v2) },
	{ "cuCtxCreate", 11040, 0, F(cuCtxCreate_v3) },
	{ "cuCtxCreate", 12050, 0, F(cuCtxCreate_v4) },
	{ "cuCtxCreate", 13000, PTDS, F(cuCtxCreate_v4) },
	{ "cuCtxSynchronize", 2000, 0, F(cuCtxSynchronize) },
	{ "cuCtxSynchronize", 12090, 0, F(cuCtxSynchronize) },
	{ "cuCtxSynchronize", 13000, 0, F(cuCtxSynchronize_v2) },
	{ "cuCtxGetDevice", 2000, 0, F(cuCtxGetDevice) },
	{ "cuCtxGetDevice", 13000, 0, F(cuCtxGetDevice_v2) },
	{ "cuEventElapsedTime", 2000, 0, F(cuEventElapsedTime) },
	{ "cuEventElapsedTime", 12080, 0, F(cuEventElapsedTime_v2) },
	{ "cuGetProcAddress", 11030, 0, F(cuGetProcAddress) },
	{ "cuGetProcAddress", 12000, 0, F(cuGetProcAddress_v2) },
	{ "cuGetProcAddress", 13000, PTDS, F(cuGetProcAddress_v2) },
	/* CUDA 12 redefined cuGraphInstantiate as ...WithFlags */
	{ "cuGraphInstantiate", 10000, 0, F(cuGraphInstantiate) },
	{ "cuGraphInstantiate", 11000, 0, F(cuGraphInstantiate_v2) },
	{ "cuGraphInstantiate", 11080, 0, F(cuGraphInstantiate_v2) },
	{ "cuGraphInstantiate", 12000, 0, F(cuGraphInstantiateWithFlags) },
	{ "cuGraphInstantiate", 13000, 0, F(cuGraphInstantiateWithFlags) },
	{ "cuGraphInstantiateWithFlags", 11040, 0,
	  F(cuGraphInstantiateWithFlags) },
	/* the v7000 ABI lives in the legacy (#if) part of cudaTypedefs.h */
	{ "cuDevicePrimaryCtxRelease", 7000, 0, F(cuDevicePrimaryCtxRelease) },
	{ "cuDevicePrimaryCtxRelease", 11000, 0,
	  F(cuDevicePrimaryCtxRelease_v2) },
	{ "cuDeviceGetUuid", 9020, 0, F(cuDeviceGetUuid) },
	{ "cuDeviceGetUuid", 11040, 0, F(cuDeviceGetUuid_v2) },
	{ "cuStreamBeginCapture", 10000, 0, F(cuStreamBeginCapture) },
	{ "cuStreamBeginCapture", 10000, PTDS, F(cuStreamBeginCapture_ptsz) },
	{ "cuStreamBeginCapture", 10010, 0, F(cuStreamBeginCapture_v2) },
	{ "cuStreamBeginCapture", 10010, PTDS,
	  F(cuStreamBeginCapture_v2_ptsz) },
	{ "cuStreamGetCaptureInfo", 11030, PTDS,
	  F(cuStreamGetCaptureInfo_v2_ptsz) },
	{ "cuStreamGetCaptureInfo", 12030, 0, F(cuStreamGetCaptureInfo_v3) },
	{ "cuStreamGetCaptureInfo", 12030, PTDS,
	  F(cuStreamGetCaptureInfo_v3_ptsz) },
	{ "cuLaunchKernel", 4000, 0, F(cuLaunchKernel) },
	{ "cuLaunchKernel", 7000, PTDS, F(cuLaunchKernel_ptsz) },
	{ "cuMemAlloc", 2000, 0, F(cuMemAlloc) },
	{ "cuMemAlloc", 3020, 0, F(cuMemAlloc_v2) },
	{ "cuInit", 2000, 0, F(cuInit) },
	{ "cuInit", 13000, PTDS, F(cuInit) },
	/* cudaProfilerTypedefs.h */
	{ "cuProfilerStart", 4000, 0, F(cuProfilerStart) },
};

START_TEST(test_mapping)
{
	void *fn = lookup(cases[_i].name, cases[_i].version, cases[_i].flags);

	ck_assert_msg(fn == cases[_i].want, "%s@%d flags %d: wrong ABI",
		      cases[_i].name, cases[_i].version, cases[_i].flags);
}
END_TEST

/* The old entry point resolves the same way */
START_TEST(test_mapping_v1)
{
	void *fn = NULL;

	ck_assert_int_eq(gpa_v1(cases[_i].name, &fn, cases[_i].version,
				cases[_i].flags), CUDA_SUCCESS);
	ck_assert_ptr_eq(fn, cases[_i].want);
}
END_TEST

/*
 * A host driver newer than the library's toolkit (cuDriverGetVersion says
 * so once cuInit ran): a version above the toolkit's gets the newest ABI
 * the library knows.
 */
static const struct {
	const char *name;
	int version;
	int flags;
	void *want;
} newer_cases[] = {
	{ "cuCtxCreate", 13050, 0, F(cuCtxCreate_v4) },
	{ "cuMemcpyHtoD", 13050, PTDS, F(cuMemcpyHtoD_v2_ptds) },
	{ "cuCtxSynchronize", 13050, 0, F(cuCtxSynchronize_v2) },
	{ "cuMemPrefetchAsync", 99999, PTDS, F(cuMemPrefetchAsync_v2_ptsz) },
};

START_TEST(test_newer_driver)
{
	void *fn;

	xgpulib_driver_version = 99999;
	fn = lookup(newer_cases[_i].name, newer_cases[_i].version,
		    newer_cases[_i].flags);
	xgpulib_driver_version = CUDA_VERSION;
	ck_assert_msg(fn == newer_cases[_i].want, "%s@%d: wrong ABI",
		      newer_cases[_i].name, newer_cases[_i].version);
}
END_TEST

/*
 * A program of a newer toolkit on this (older) driver: each query with
 * the return code and symbol status of cuGetProcAddress_v2 (cuda.h), and
 * the return code of the CUDA 11.3 entry point (no status: a miss is
 * CUDA_ERROR_NOT_FOUND).  want_fn: the function expected, NULL for none.
 */
static const struct {
	const char *what;
	const char *name;
	int version;	/* above CUDA_VERSION: the driver's is lower */
	cuuint64_t flags;
	CUresult rc_v2;
	CUdriverProcAddressQueryResult status;
	CUresult rc_v1;
	void *want_fn;
} newer_toolkit[] = {
	{ "an unknown name", "cuFunctionOfCuda135", CUDA_VERSION, 0,
	  CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	  CUDA_ERROR_NOT_FOUND, NULL },
	{ "an unknown name, per-thread", "cuFunctionOfCuda135", CUDA_VERSION,
	  PTDS, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	  CUDA_ERROR_NOT_FOUND, NULL },
	{ "a known name, a version above the driver's", "cuCtxCreate",
	  CUDA_VERSION + 50, 0, CUDA_ERROR_INVALID_VALUE,
	  (CUdriverProcAddressQueryResult)-1, CUDA_ERROR_INVALID_VALUE,
	  NULL },
	{ "a known name, a far higher version", "cuMemAlloc", 99999, 0,
	  CUDA_ERROR_INVALID_VALUE, (CUdriverProcAddressQueryResult)-1,
	  CUDA_ERROR_INVALID_VALUE, NULL },
	{ "an unknown name, a far higher version", "cuFunctionOfCuda135",
	  99999, 0, CUDA_ERROR_INVALID_VALUE,
	  (CUdriverProcAddressQueryResult)-1, CUDA_ERROR_INVALID_VALUE,
	  NULL },
	{ "a known name with the per-thread flag", "cuMemcpyHtoD",
	  CUDA_VERSION, PTDS, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS,
	  CUDA_SUCCESS, F(cuMemcpyHtoD_v2_ptds) },
	{ "a known name with the legacy flag", "cuMemcpyHtoD", CUDA_VERSION,
	  LEGACY, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS,
	  F(cuMemcpyHtoD_v2) },
	{ "a known name with flags, a version too old", "cuLaunchKernel",
	  3020, PTDS, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
	  CUDA_ERROR_NOT_FOUND, NULL },
};

START_TEST(test_newer_toolkit)
{
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
	void *fn = (void *)&st;

	ck_assert_int_eq(xgpulib_driver_version, CUDA_VERSION);
	ck_assert_msg(cuGetProcAddress_v2(newer_toolkit[_i].name, &fn,
					  newer_toolkit[_i].version,
					  newer_toolkit[_i].flags, &st) ==
		      newer_toolkit[_i].rc_v2, "%s: v2 return code",
		      newer_toolkit[_i].what);
	ck_assert_msg(st == newer_toolkit[_i].status,
		      "%s: status %d, want %d", newer_toolkit[_i].what,
		      (int)st, (int)newer_toolkit[_i].status);
	ck_assert_msg(fn == newer_toolkit[_i].want_fn, "%s: v2 function",
		      newer_toolkit[_i].what);
	fn = (void *)&st;
	ck_assert_msg(gpa_v1(newer_toolkit[_i].name, &fn,
			     newer_toolkit[_i].version,
			     newer_toolkit[_i].flags) ==
		      newer_toolkit[_i].rc_v1, "%s: v1 return code",
		      newer_toolkit[_i].what);
	if (newer_toolkit[_i].rc_v1 != CUDA_ERROR_INVALID_VALUE)
		ck_assert_msg(fn == newer_toolkit[_i].want_fn,
			      "%s: v1 function", newer_toolkit[_i].what);
}
END_TEST

/* Not exported, but the real driver answers for them and so must we */
START_TEST(test_graphics_interop)
{
	void *legacy = lookup("cuGLMapBufferObject", 3020, 0);
	void *ptds = lookup("cuGLMapBufferObject", 7000, PTDS);
	void *old = lookup("cuGLMapBufferObject", 2000, 0);

	ck_assert_ptr_ne(legacy, ptds);
	ck_assert_ptr_ne(legacy, old);
	ck_assert_ptr_eq(lookup("cuGLMapBufferObject", 7000, 0), legacy);
	lookup("cuGraphicsGLRegisterBuffer", 3000, 0);
	lookup("cuEGLStreamConsumerConnect", 7000, 0);
	lookup("cuVDPAUCtxCreate", 3020, 0);
	/* what they do when called */
	ck_assert_int_eq(((int (*)(void))legacy)(), CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

/*
 * Unimplemented entry points are there, and say so when called: once per
 * name, and only under XGPU_DEBUG (read at the first call; each test runs
 * in a fresh child, CK_FORK).  NvSciSync is Tegra-only and GL interop has
 * no backend, so nobody should ever implement these two.
 */
START_TEST(test_unimplemented_returns_not_supported)
{
	int (*fn)(void) = (int (*)(void))lookup(
		"cuDeviceGetNvSciSyncAttributes", 10020, 0);

	ck_assert_ptr_eq((void *)fn, F(cuDeviceGetNvSciSyncAttributes));
	ck_assert_int_eq(fn(), CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

static void capture_stderr(int (*fn)(void), int calls, char *out,
			   size_t cap)
{
	FILE *log = tmpfile();
	int saved = dup(STDERR_FILENO), i;
	size_t n;

	ck_assert_ptr_nonnull(log);
	fflush(stderr);
	dup2(fileno(log), STDERR_FILENO);
	for (i = 0; i < calls; i++)
		ck_assert_int_eq(fn(), CUDA_ERROR_NOT_SUPPORTED);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(log);
	n = fread(out, 1, cap - 1, log);
	out[n] = 0;
	fclose(log);
}

START_TEST(test_unimplemented_logged_once)
{
	int (*fn)(void);
	char got[256];

	/* read once, at the first lookup (XGPU_DEBUG=2 traces lookups) */
	setenv("XGPU_DEBUG", "1", 1);
	fn = (int (*)(void))lookup("cuGLInit", 2000, 0);
	capture_stderr(fn, 3, got, sizeof(got));
	ck_assert_str_eq(got, "xgpu: cuGLInit is not supported "
			 "(CUDA_ERROR_NOT_SUPPORTED)\n");
}
END_TEST

START_TEST(test_unimplemented_quiet)
{
	int (*fn)(void) = (int (*)(void))lookup("cuGLInit", 2000, 0);
	char got[256];

	unsetenv("XGPU_DEBUG");
	capture_stderr(fn, 2, got, sizeof(got));
	ck_assert_str_eq(got, "");
}
END_TEST

#if defined(__x86_64__)
/* XGPU_DEBUG=3: a trampoline that says the call and makes it */
START_TEST(test_call_trace)
{
	CUresult (*fn)(CUresult, const char **);
	const char *name = NULL;
	FILE *log = tmpfile();
	int saved = dup(STDERR_FILENO);
	char got[256];
	size_t n;

	setenv("XGPU_DEBUG", "3", 1);
	fn = (CUresult (*)(CUresult, const char **))lookup("cuGetErrorName",
							   6000, 0);
	ck_assert_ptr_ne((void *)fn, F(cuGetErrorName));
	ck_assert_ptr_nonnull(log);
	fflush(stderr);
	dup2(fileno(log), STDERR_FILENO);
	ck_assert_int_eq(fn(CUDA_ERROR_INVALID_VALUE, &name), CUDA_SUCCESS);
	ck_assert_int_eq(fn(CUDA_ERROR_OUT_OF_MEMORY, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(log);
	n = fread(got, 1, sizeof(got) - 1, log);
	got[n] = 0;
	fclose(log);
	ck_assert_str_eq(name, "CUDA_ERROR_INVALID_VALUE");
	ck_assert_str_eq(got, "xgpu: call cuGetErrorName\n"
			 "xgpu: call cuGetErrorName\n");
}
END_TEST
#endif

/* ---- misses ------------------------------------------------------------- */

static const struct {
	const char *name;
	int version;
	CUdriverProcAddressQueryResult status;
} misses[] = {
	{ "", 0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "cuNoSuchFunction", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	/* exported, but by versioned name: not a base name */
	{ "cuMemAlloc_v2", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "cuinit", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "cuInitX", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "cu", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "zzz", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	/* a function a newer toolkit added: not found, so cudart falls back */
	{ "cuFunctionOfCuda135", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND },
	{ "cuCtxCreate", 1000, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
	{ "cuInit", 0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
	{ "cuLogsDumpToMemory", 12080,
	  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
	{ "cuCtxSynchronize", 1999,
	  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
};

/*
 * The CUDA 12 entry point reports misses in symbolStatus and returns
 * CUDA_SUCCESS with a NULL function, as the real driver does.
 */
START_TEST(test_miss_v2)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
	void *fn = (void *)&st;
	int flags;

	for (flags = 0; flags <= 2; flags++) {
		st = CU_GET_PROC_ADDRESS_SUCCESS;
		fn = (void *)&st;
		ck_assert_int_eq(cuGetProcAddress_v2(misses[_i].name, &fn,
						     misses[_i].version, flags,
						     &st), CUDA_SUCCESS);
		ck_assert_int_eq(st, misses[_i].status);
		ck_assert_ptr_null(fn);
		/* symbolStatus is optional */
		fn = (void *)&st;
		ck_assert_int_eq(cuGetProcAddress_v2(misses[_i].name, &fn,
						     misses[_i].version, flags,
						     NULL), CUDA_SUCCESS);
		ck_assert_ptr_null(fn);
	}
}
END_TEST

/* The CUDA 11.3 entry point has no symbolStatus: a miss is an error */
START_TEST(test_miss_v1)
{
	void *fn = (void *)&fn;

	ck_assert_int_eq(gpa_v1(misses[_i].name, &fn, misses[_i].version, 0),
			 CUDA_ERROR_NOT_FOUND);
	ck_assert_ptr_null(fn);
}
END_TEST

/*
 * The per-thread form asked of a version before the function had one: too
 * old (the real driver, measured on the H100), not the legacy ABI; the
 * legacy form of the same version is found.
 */
START_TEST(test_ptds_too_old)
{
	static const int versions[] = { 2000, 3020, 6050 };
	CUdriverProcAddressQueryResult st;
	void *fn;

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		st = CU_GET_PROC_ADDRESS_SUCCESS;
		fn = (void *)&st;
		ck_assert_int_eq(cuGetProcAddress_v2("cuMemcpyHtoD", &fn,
						     versions[i], PTDS, &st),
				 CUDA_SUCCESS);
		ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
		ck_assert_ptr_null(fn);
		ck_assert_int_eq(cuGetProcAddress_v2("cuMemcpyHtoD", &fn,
						     versions[i], LEGACY, &st),
				 CUDA_SUCCESS);
		ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
		ck_assert_ptr_nonnull(fn);
	}
	/* a function with no per-thread form at all: the plain one */
	ck_assert_int_eq(cuGetProcAddress_v2("cuMemAlloc", &fn, 3020, PTDS,
					     &st), CUDA_SUCCESS);
	ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
	ck_assert_ptr_eq(fn, F(cuMemAlloc_v2));
}
END_TEST

START_TEST(test_invalid_arguments)
{
	CUdriverProcAddressQueryResult st;
	void *fn;

	ck_assert_int_eq(cuGetProcAddress_v2(NULL, &fn, 13000, 0, &st),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuGetProcAddress_v2("cuInit", NULL, 13000, 0, &st),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa_v1(NULL, &fn, 13000, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa_v1("cuInit", NULL, 13000, 0),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* ---- the whole table ---------------------------------------------------- */

/*
 * Each row, asked for at its own version (with the per-thread flag for a
 * per-thread row), must come back as itself: proves the table is sorted the
 * way the binary search needs and that no row shadows another.
 */
#define XGPULIB_GPA_SYM(sym) extern int tbl_##sym(void) __asm__(#sym);
#include "xgpulib_gpa_table.inc"
#undef XGPULIB_GPA_SYM

static const struct {
	const char *name;
	int version;
	int ptds;
	void *fn;
} rows[] = {
#define XGPULIB_GPA_ROW(name, ver, ptds, sym) \
	{ name, ver, ptds, (void *)tbl_##sym },
#include "xgpulib_gpa_table.inc"
#undef XGPULIB_GPA_ROW
};

START_TEST(test_every_row)
{
	void *fn = lookup(rows[_i].name, rows[_i].version,
			  rows[_i].ptds ? PTDS : 0);

	ck_assert_msg(fn == rows[_i].fn, "row %d: %s@%d%s", _i, rows[_i].name,
		      rows[_i].version, rows[_i].ptds ? " ptds" : "");
}
END_TEST

static Suite *gpa_suite(void)
{
	Suite *s = suite_create("gpa");
	TCase *tc;

	tc = tcase_create("mapping");
	tcase_add_loop_test(tc, test_mapping, 0,
			    sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, test_mapping_v1, 0,
			    sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, test_newer_driver, 0,
			    sizeof(newer_cases) / sizeof(newer_cases[0]));
	tcase_add_loop_test(tc, test_newer_toolkit, 0,
			    sizeof(newer_toolkit) / sizeof(newer_toolkit[0]));
	tcase_add_test(tc, test_graphics_interop);
	tcase_add_test(tc, test_unimplemented_returns_not_supported);
	tcase_add_test(tc, test_unimplemented_logged_once);
	tcase_add_test(tc, test_unimplemented_quiet);
#if defined(__x86_64__)
	tcase_add_test(tc, test_call_trace);
#endif
	suite_add_tcase(s, tc);

	tc = tcase_create("misses");
	tcase_add_loop_test(tc, test_miss_v2, 0,
			    sizeof(misses) / sizeof(misses[0]));
	tcase_add_loop_test(tc, test_miss_v1, 0,
			    sizeof(misses) / sizeof(misses[0]));
	tcase_add_test(tc, test_ptds_too_old);
	tcase_add_test(tc, test_invalid_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_loop_test(tc, test_every_row, 0,
			    sizeof(rows) / sizeof(rows[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(gpa_suite(), true);
}
