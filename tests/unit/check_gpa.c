/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_gpa.c xen-frontend/lib/xgpulib_stubs.c */
/*
 * cuGetProcAddress: version mapping, per-thread variants, misses, and
 * every lookup CUDA 13.0 cudart makes at start with the answers the real
 * driver gave (research/cuda13-traces/gpa_requests_cuda13.txt).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

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
	/* asked for per-thread before there was one: the legacy ABI */
	{ "cuMemcpyHtoD", 3020, PTDS, F(cuMemcpyHtoD_v2) },
	{ "cuMemcpyHtoD", 2000, PTDS, F(cuMemcpyHtoD) },
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
	int (*fn)(void) =
		(int (*)(void))lookup("cuDeviceGetNvSciSyncAttributes", 10020, 0);

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
	int (*fn)(void) = (int (*)(void))lookup("cuGLInit", 2000, 0);
	char got[256];

	setenv("XGPU_DEBUG", "1", 1);
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
	{ "cuCtxCreate", 1000, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
	{ "cuInit", 0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
	{ "cuLogsDumpToMemory", 12080,
	  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
	{ "cuCtxSynchronize", 1999, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT },
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

/* ---- what cudart asks --------------------------------------------------- */

/* order, name, cudaVersion, flags, real driver's result and symbolStatus */
static const struct {
	const char *name;
	int version;
	int flags;
	int result;
	int status;
} trace[] = {
	{ "", 0, 0, 0, 1 },
	{ "cuInit", 2000, 0, 0, 0 },
	{ "cuGetProcAddress", 11030, 0, 0, 0 },
	{ "cuGetProcAddress", 12000, 0, 0, 0 },
	{ "cuDeviceGet", 2000, 0, 0, 0 },
	{ "cuDeviceGetCount", 2000, 0, 0, 0 },
	{ "cuDeviceGetName", 2000, 0, 0, 0 },
	{ "cuDeviceTotalMem", 3020, 0, 0, 0 },
	{ "cuDeviceGetAttribute", 2000, 0, 0, 0 },
	{ "cuDeviceGetP2PAttribute", 8000, 0, 0, 0 },
	{ "cuDeviceGetHostAtomicCapabilities", 13000, 0, 0, 0 },
	{ "cuDeviceGetP2PAtomicCapabilities", 13000, 0, 0, 0 },
	{ "cuDriverGetVersion", 2020, 0, 0, 0 },
	{ "cuDeviceGetByPCIBusId", 4010, 0, 0, 0 },
	{ "cuDeviceGetPCIBusId", 4010, 0, 0, 0 },
	{ "cuDeviceGetUuid", 9020, 0, 0, 0 },
	{ "cuDeviceGetTexture1DLinearMaxWidth", 11010, 0, 0, 0 },
	{ "cuDeviceGetDefaultMemPool", 11020, 0, 0, 0 },
	{ "cuDeviceSetMemPool", 11020, 0, 0, 0 },
	{ "cuDeviceGetMemPool", 11020, 0, 0, 0 },
	{ "cuFlushGPUDirectRDMAWrites", 11030, 0, 0, 0 },
	{ "cuDevicePrimaryCtxRetain", 7000, 0, 0, 0 },
	{ "cuDevicePrimaryCtxRelease", 7000, 0, 0, 0 },
	{ "cuDevicePrimaryCtxSetFlags", 11000, 0, 0, 0 },
	{ "cuDevicePrimaryCtxGetState", 7000, 0, 0, 0 },
	{ "cuDevicePrimaryCtxReset", 7000, 0, 0, 0 },
	{ "cuCtxCreate", 3020, 0, 0, 0 },
	{ "cuCtxGetFlags", 7000, 0, 0, 0 },
	{ "cuCtxSetCurrent", 4000, 0, 0, 0 },
	{ "cuCtxGetCurrent", 4000, 0, 0, 0 },
	{ "cuCtxDetach", 2000, 0, 0, 0 },
	{ "cuCtxGetApiVersion", 3020, 0, 0, 0 },
	{ "cuCtxGetDevice", 2000, 0, 0, 0 },
	{ "cuCtxGetDevice", 13000, 0, 0, 0 },
	{ "cuCtxGetLimit", 3010, 0, 0, 0 },
	{ "cuCtxSetLimit", 3010, 0, 0, 0 },
	{ "cuCtxGetCacheConfig", 3020, 0, 0, 0 },
	{ "cuCtxSetCacheConfig", 3020, 0, 0, 0 },
	{ "cuCtxGetSharedMemConfig", 4020, 0, 0, 0 },
	{ "cuCtxGetStreamPriorityRange", 5050, 0, 0, 0 },
	{ "cuCtxSetSharedMemConfig", 4020, 0, 0, 0 },
	{ "cuCtxSynchronize", 2000, 0, 0, 0 },
	{ "cuCtxSynchronize", 13000, 0, 0, 0 },
	{ "cuCtxResetPersistingL2Cache", 11000, 0, 0, 0 },
	{ "cuCtxPopCurrent", 4000, 0, 0, 0 },
	{ "cuCtxPushCurrent", 4000, 0, 0, 0 },
	{ "cuModuleLoad", 2000, 0, 0, 0 },
	{ "cuModuleLoadData", 2000, 0, 0, 0 },
	{ "cuModuleLoadFatBinary", 2000, 0, 0, 0 },
	{ "cuModuleUnload", 2000, 0, 0, 0 },
	{ "cuModuleGetFunction", 2000, 0, 0, 0 },
	{ "cuModuleGetGlobal", 3020, 0, 0, 0 },
	{ "cuModuleGetTexRef", 2000, 0, 0, 0 },
	{ "cuModuleGetSurfRef", 3000, 0, 0, 0 },
	{ "cuModuleGetLoadingMode", 11070, 0, 0, 0 },
	{ "cuLibraryLoadData", 12000, 0, 0, 0 },
	{ "cuLibraryLoadFromFile", 12000, 0, 0, 0 },
	{ "cuLibraryUnload", 12000, 0, 0, 0 },
	{ "cuLibraryGetKernel", 12000, 0, 0, 0 },
	{ "cuLibraryGetModule", 12000, 0, 0, 0 },
	{ "cuKernelGetFunction", 12000, 0, 0, 0 },
	{ "cuLibraryGetGlobal", 12000, 0, 0, 0 },
	{ "cuLibraryGetManaged", 12000, 0, 0, 0 },
	{ "cuLibraryGetUnifiedFunction", 12000, 0, 0, 0 },
	{ "cuLibraryGetKernelCount", 12040, 0, 0, 0 },
	{ "cuLibraryEnumerateKernels", 12040, 0, 0, 0 },
	{ "cuKernelGetAttribute", 12000, 0, 0, 0 },
	{ "cuKernelSetAttribute", 12000, 0, 0, 0 },
	{ "cuKernelSetCacheConfig", 12000, 0, 0, 0 },
	{ "cuKernelGetName", 12030, 0, 0, 0 },
	{ "cuKernelGetParamInfo", 12040, 0, 0, 0 },
	{ "cuLinkCreate", 5050, 0, 0, 0 },
	{ "cuLinkAddData", 5050, 0, 0, 0 },
	{ "cuLinkAddFile", 5050, 0, 0, 0 },
	{ "cuLinkComplete", 5050, 0, 0, 0 },
	{ "cuLinkDestroy", 5050, 0, 0, 0 },
	{ "cuMemGetInfo", 3020, 0, 0, 0 },
	{ "cuMemAllocManaged", 6000, 0, 0, 0 },
	{ "cuMemAlloc", 3020, 0, 0, 0 },
	{ "cuMemAllocPitch", 3020, 0, 0, 0 },
	{ "cuMemFree", 3020, 0, 0, 0 },
	{ "cuMemGetAddressRange", 3020, 0, 0, 0 },
	{ "cuMemFreeHost", 2000, 0, 0, 0 },
	{ "cuMemHostAlloc", 2020, 0, 0, 0 },
	{ "cuMemHostGetDevicePointer", 3020, 0, 0, 0 },
	{ "cuMemHostGetFlags", 2030, 0, 0, 0 },
	{ "cuMemHostRegister", 6050, 0, 0, 0 },
	{ "cuMemHostUnregister", 4000, 0, 0, 0 },
	{ "cuPointerGetAttribute", 4000, 0, 0, 0 },
	{ "cuPointerGetAttributes", 7000, 0, 0, 0 },
	{ "cuMemAllocAsync", 11020, 0, 0, 0 },
	{ "cuMemAllocAsync", 11020, 2, 0, 0 },
	{ "cuMemAllocFromPoolAsync", 11020, 0, 0, 0 },
	{ "cuMemAllocFromPoolAsync", 11020, 2, 0, 0 },
	{ "cuMemFreeAsync", 11020, 0, 0, 0 },
	{ "cuMemFreeAsync", 11020, 2, 0, 0 },
	{ "cuMemPoolTrimTo", 11020, 0, 0, 0 },
	{ "cuMemPoolSetAttribute", 11020, 0, 0, 0 },
	{ "cuMemPoolGetAttribute", 11020, 0, 0, 0 },
	{ "cuMemPoolSetAccess", 11020, 0, 0, 0 },
	{ "cuMemPoolGetAccess", 11020, 0, 0, 0 },
	{ "cuMemPoolCreate", 11020, 0, 0, 0 },
	{ "cuMemPoolDestroy", 11020, 0, 0, 0 },
	{ "cuMemPoolExportToShareableHandle", 11020, 0, 0, 0 },
	{ "cuMemPoolImportFromShareableHandle", 11020, 0, 0, 0 },
	{ "cuMemPoolExportPointer", 11020, 0, 0, 0 },
	{ "cuMemPoolImportPointer", 11020, 0, 0, 0 },
	{ "cuMemGetDefaultMemPool", 13000, 0, 0, 0 },
	{ "cuMemGetMemPool", 13000, 0, 0, 0 },
	{ "cuMemSetMemPool", 13000, 0, 0, 0 },
	{ "cuMemcpy", 4000, 0, 0, 0 },
	{ "cuMemcpy", 7000, 2, 0, 0 },
	{ "cuMemcpyAsync", 4000, 0, 0, 0 },
	{ "cuMemcpyAsync", 7000, 2, 0, 0 },
	{ "cuMemcpyPeer", 4000, 0, 0, 0 },
	{ "cuMemcpyPeer", 7000, 2, 0, 0 },
	{ "cuMemcpyPeerAsync", 4000, 0, 0, 0 },
	{ "cuMemcpyPeerAsync", 7000, 2, 0, 0 },
	{ "cuMemcpyHtoD", 3020, 0, 0, 0 },
	{ "cuMemcpyHtoD", 7000, 2, 0, 0 },
	{ "cuMemcpyHtoDAsync", 3020, 0, 0, 0 },
	{ "cuMemcpyHtoDAsync", 7000, 2, 0, 0 },
	{ "cuMemcpyDtoH", 3020, 0, 0, 0 },
	{ "cuMemcpyDtoH", 7000, 2, 0, 0 },
	{ "cuMemcpyDtoHAsync", 3020, 0, 0, 0 },
	{ "cuMemcpyDtoHAsync", 7000, 2, 0, 0 },
	{ "cuMemcpyDtoD", 3020, 0, 0, 0 },
	{ "cuMemcpyDtoD", 7000, 2, 0, 0 },
	{ "cuMemcpyDtoDAsync", 3020, 0, 0, 0 },
	{ "cuMemcpyDtoDAsync", 7000, 2, 0, 0 },
	{ "cuMemcpy2DUnaligned", 3020, 0, 0, 0 },
	{ "cuMemcpy2DUnaligned", 7000, 2, 0, 0 },
	{ "cuMemcpy2DAsync", 3020, 0, 0, 0 },
	{ "cuMemcpy2DAsync", 7000, 2, 0, 0 },
	{ "cuMemcpy3D", 3020, 0, 0, 0 },
	{ "cuMemcpy3D", 7000, 2, 0, 0 },
	{ "cuMemcpy3DAsync", 3020, 0, 0, 0 },
	{ "cuMemcpy3DAsync", 7000, 2, 0, 0 },
	{ "cuMemcpy3DPeer", 4000, 0, 0, 0 },
	{ "cuMemcpy3DPeer", 7000, 2, 0, 0 },
	{ "cuMemcpy3DPeerAsync", 4000, 0, 0, 0 },
	{ "cuMemcpy3DPeerAsync", 7000, 2, 0, 0 },
	{ "cuMemcpyBatchAsync", 13000, 0, 0, 0 },
	{ "cuMemcpyBatchAsync", 13000, 2, 0, 0 },
	{ "cuMemcpy3DBatchAsync", 13000, 0, 0, 0 },
	{ "cuMemcpy3DBatchAsync", 13000, 2, 0, 0 },
	{ "cuMemcpyBatchAsync", 12080, 0, 0, 0 },
	{ "cuMemcpyBatchAsync", 12080, 2, 0, 0 },
	{ "cuMemcpy3DBatchAsync", 12080, 0, 0, 0 },
	{ "cuMemcpy3DBatchAsync", 12080, 2, 0, 0 },
	{ "cuMemsetD8", 3020, 0, 0, 0 },
	{ "cuMemsetD8", 7000, 2, 0, 0 },
	{ "cuMemsetD8Async", 3020, 0, 0, 0 },
	{ "cuMemsetD8Async", 7000, 2, 0, 0 },
	{ "cuMemsetD2D8", 3020, 0, 0, 0 },
	{ "cuMemsetD2D8", 7000, 2, 0, 0 },
	{ "cuMemsetD2D8Async", 3020, 0, 0, 0 },
	{ "cuMemsetD2D8Async", 7000, 2, 0, 0 },
	{ "cuFuncSetCacheConfig", 3000, 0, 0, 0 },
	{ "cuFuncSetSharedMemConfig", 4020, 0, 0, 0 },
	{ "cuFuncGetAttribute", 2020, 0, 0, 0 },
	{ "cuFuncSetAttribute", 9000, 0, 0, 0 },
	{ "cuFuncGetName", 12030, 0, 0, 0 },
	{ "cuFuncGetParamInfo", 12040, 0, 0, 0 },
	{ "cuArrayCreate", 3020, 0, 0, 0 },
	{ "cuArrayGetDescriptor", 3020, 0, 0, 0 },
	{ "cuArrayGetSparseProperties", 11010, 0, 0, 0 },
	{ "cuArrayGetPlane", 11020, 0, 0, 0 },
	{ "cuArray3DCreate", 3020, 0, 0, 0 },
	{ "cuArray3DGetDescriptor", 3020, 0, 0, 0 },
	{ "cuArrayDestroy", 2000, 0, 0, 0 },
	{ "cuMipmappedArrayCreate", 5000, 0, 0, 0 },
	{ "cuMipmappedArrayGetLevel", 5000, 0, 0, 0 },
	{ "cuMipmappedArrayGetSparseProperties", 11010, 0, 0, 0 },
	{ "cuMipmappedArrayDestroy", 5000, 0, 0, 0 },
	{ "cuArrayGetMemoryRequirements", 11060, 0, 0, 0 },
	{ "cuMipmappedArrayGetMemoryRequirements", 11060, 0, 0, 0 },
	{ "cuTexObjectCreate", 5000, 0, 0, 0 },
	{ "cuTexObjectDestroy", 5000, 0, 0, 0 },
	{ "cuTexObjectGetResourceDesc", 5000, 0, 0, 0 },
	{ "cuTexObjectGetTextureDesc", 5000, 0, 0, 0 },
	{ "cuTexObjectGetResourceViewDesc", 5000, 0, 0, 0 },
	{ "cuSurfObjectCreate", 5000, 0, 0, 0 },
	{ "cuSurfObjectDestroy", 5000, 0, 0, 0 },
	{ "cuSurfObjectGetResourceDesc", 5000, 0, 0, 0 },
	{ "cuImportExternalMemory", 10000, 0, 0, 0 },
	{ "cuExternalMemoryGetMappedBuffer", 10000, 0, 0, 0 },
	{ "cuExternalMemoryGetMappedMipmappedArray", 10000, 0, 0, 0 },
	{ "cuDestroyExternalMemory", 10000, 0, 0, 0 },
	{ "cuImportExternalSemaphore", 10000, 0, 0, 0 },
	{ "cuSignalExternalSemaphoresAsync", 10000, 0, 0, 0 },
	{ "cuSignalExternalSemaphoresAsync", 10000, 2, 0, 0 },
	{ "cuWaitExternalSemaphoresAsync", 10000, 0, 0, 0 },
	{ "cuWaitExternalSemaphoresAsync", 10000, 2, 0, 0 },
	{ "cuDestroyExternalSemaphore", 10000, 0, 0, 0 },
	{ "cuDeviceGetNvSciSyncAttributes", 10020, 0, 0, 0 },
	{ "cuLaunchKernel", 4000, 0, 0, 0 },
	{ "cuLaunchKernel", 7000, 2, 0, 0 },
	{ "cuLaunchCooperativeKernel", 9000, 0, 0, 0 },
	{ "cuLaunchCooperativeKernel", 9000, 2, 0, 0 },
	{ "cuLaunchHostFunc", 10000, 0, 0, 0 },
	{ "cuLaunchHostFunc", 10000, 2, 0, 0 },
	{ "cuLaunchKernelEx", 11060, 0, 0, 0 },
	{ "cuLaunchKernelEx", 11060, 2, 0, 0 },
	{ "cuEventCreate", 2000, 0, 0, 0 },
	{ "cuEventRecord", 2000, 0, 0, 0 },
	{ "cuEventRecord", 7000, 2, 0, 0 },
	{ "cuEventRecordWithFlags", 11010, 0, 0, 0 },
	{ "cuEventRecordWithFlags", 11010, 2, 0, 0 },
	{ "cuEventQuery", 2000, 0, 0, 0 },
	{ "cuEventSynchronize", 2000, 0, 0, 0 },
	{ "cuEventDestroy", 4000, 0, 0, 0 },
	{ "cuEventElapsedTime", 2000, 0, 0, 0 },
	{ "cuEventElapsedTime", 12080, 0, 0, 0 },
	{ "cuStreamWaitValue32", 8000, 0, 0, 0 },
	{ "cuStreamWaitValue32", 8000, 2, 0, 0 },
	{ "cuStreamWriteValue32", 8000, 0, 0, 0 },
	{ "cuStreamWriteValue32", 8000, 2, 0, 0 },
	{ "cuStreamWaitValue64", 9000, 0, 0, 0 },
	{ "cuStreamWaitValue64", 9000, 2, 0, 0 },
	{ "cuStreamWriteValue64", 9000, 0, 0, 0 },
	{ "cuStreamWriteValue64", 9000, 2, 0, 0 },
	{ "cuStreamBatchMemOp", 8000, 0, 0, 0 },
	{ "cuStreamBatchMemOp", 8000, 2, 0, 0 },
	{ "cuStreamCreate", 2000, 0, 0, 0 },
	{ "cuStreamCreateWithPriority", 5050, 0, 0, 0 },
	{ "cuStreamGetPriority", 5050, 0, 0, 0 },
	{ "cuStreamGetPriority", 7000, 2, 0, 0 },
	{ "cuStreamGetFlags", 5050, 0, 0, 0 },
	{ "cuStreamGetDevice", 12080, 0, 0, 0 },
	{ "cuStreamGetDevice", 12080, 2, 0, 0 },
	{ "cuStreamGetCtx", 9020, 0, 0, 0 },
	{ "cuStreamGetFlags", 7000, 2, 0, 0 },
	{ "cuStreamGetId", 12000, 0, 0, 0 },
	{ "cuStreamGetId", 12000, 2, 0, 0 },
	{ "cuStreamDestroy", 4000, 0, 0, 0 },
	{ "cuStreamWaitEvent", 3020, 0, 0, 0 },
	{ "cuStreamWaitEvent", 7000, 2, 0, 0 },
	{ "cuStreamAddCallback", 5000, 0, 0, 0 },
	{ "cuStreamAddCallback", 7000, 2, 0, 0 },
	{ "cuStreamSynchronize", 2000, 0, 0, 0 },
	{ "cuStreamSynchronize", 7000, 2, 0, 0 },
	{ "cuStreamQuery", 2000, 0, 0, 0 },
	{ "cuStreamQuery", 7000, 2, 0, 0 },
	{ "cuStreamAttachMemAsync", 6000, 0, 0, 0 },
	{ "cuStreamAttachMemAsync", 7000, 2, 0, 0 },
	{ "cuStreamCopyAttributes", 11000, 0, 0, 0 },
	{ "cuStreamCopyAttributes", 11000, 2, 0, 0 },
	{ "cuStreamGetAttribute", 11000, 0, 0, 0 },
	{ "cuStreamGetAttribute", 11000, 2, 0, 0 },
	{ "cuStreamSetAttribute", 11000, 0, 0, 0 },
	{ "cuStreamSetAttribute", 11000, 2, 0, 0 },
	{ "cuDeviceCanAccessPeer", 4000, 0, 0, 0 },
	{ "cuCtxEnablePeerAccess", 4000, 0, 0, 0 },
	{ "cuCtxDisablePeerAccess", 4000, 0, 0, 0 },
	{ "cuIpcGetEventHandle", 4010, 0, 0, 0 },
	{ "cuIpcOpenEventHandle", 4010, 0, 0, 0 },
	{ "cuIpcGetMemHandle", 4010, 0, 0, 0 },
	{ "cuIpcOpenMemHandle", 4010, 0, 0, 0 },
	{ "cuIpcOpenMemHandle", 11000, 0, 0, 0 },
	{ "cuIpcCloseMemHandle", 4010, 0, 0, 0 },
	{ "cuGLCtxCreate", 3020, 0, 0, 0 },
	{ "cuGLInit", 2000, 0, 0, 0 },
	{ "cuGLGetDevices", 4010, 0, 0, 0 },
	{ "cuGLRegisterBufferObject", 2000, 0, 0, 0 },
	{ "cuGLMapBufferObject", 3020, 0, 0, 0 },
	{ "cuGLMapBufferObject", 7000, 2, 0, 0 },
	{ "cuGLMapBufferObjectAsync", 3020, 0, 0, 0 },
	{ "cuGLMapBufferObjectAsync", 7000, 2, 0, 0 },
	{ "cuGLUnmapBufferObject", 2000, 0, 0, 0 },
	{ "cuGLUnmapBufferObjectAsync", 2030, 0, 0, 0 },
	{ "cuGLUnregisterBufferObject", 2000, 0, 0, 0 },
	{ "cuGLSetBufferObjectMapFlags", 2030, 0, 0, 0 },
	{ "cuGraphicsGLRegisterImage", 3000, 0, 0, 0 },
	{ "cuGraphicsGLRegisterBuffer", 3000, 0, 0, 0 },
	{ "cuGraphicsEGLRegisterImage", 7000, 0, 0, 0 },
	{ "cuEGLStreamConsumerConnect", 7000, 0, 0, 0 },
	{ "cuEGLStreamConsumerDisconnect", 7000, 0, 0, 0 },
	{ "cuEGLStreamConsumerAcquireFrame", 7000, 0, 0, 0 },
	{ "cuEGLStreamConsumerReleaseFrame", 7000, 0, 0, 0 },
	{ "cuEGLStreamProducerConnect", 7000, 0, 0, 0 },
	{ "cuEGLStreamProducerDisconnect", 7000, 0, 0, 0 },
	{ "cuEGLStreamProducerPresentFrame", 7000, 0, 0, 0 },
	{ "cuEGLStreamProducerReturnFrame", 7000, 0, 0, 0 },
	{ "cuGraphicsResourceGetMappedEglFrame", 7000, 0, 0, 0 },
	{ "cuEGLStreamConsumerConnectWithFlags", 8000, 0, 0, 0 },
	{ "cuGraphicsUnregisterResource", 3000, 0, 0, 0 },
	{ "cuGraphicsMapResources", 3000, 0, 0, 0 },
	{ "cuGraphicsMapResources", 7000, 2, 0, 0 },
	{ "cuGraphicsUnmapResources", 3000, 0, 0, 0 },
	{ "cuGraphicsUnmapResources", 7000, 2, 0, 0 },
	{ "cuGraphicsResourceSetMapFlags", 6050, 0, 0, 0 },
	{ "cuGraphicsSubResourceGetMappedArray", 3000, 0, 0, 0 },
	{ "cuGraphicsResourceGetMappedMipmappedArray", 5000, 0, 0, 0 },
	{ "cuGraphicsResourceGetMappedPointer", 3020, 0, 0, 0 },
	{ "cuProfilerInitialize", 4000, 0, 0, 0 },
	{ "cuProfilerStart", 4000, 0, 0, 0 },
	{ "cuProfilerStop", 4000, 0, 0, 0 },
	{ "cuVDPAUGetDevice", 3010, 0, 0, 0 },
	{ "cuVDPAUCtxCreate", 3020, 0, 0, 0 },
	{ "cuGraphicsVDPAURegisterVideoSurface", 3010, 0, 0, 0 },
	{ "cuGraphicsVDPAURegisterOutputSurface", 3010, 0, 0, 0 },
	{ "cuGetExportTable", 3000, 0, 0, 0 },
	{ "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000, 0, 0, 0 },
	{ "cuOccupancyAvailableDynamicSMemPerBlock", 10020, 0, 0, 0 },
	{ "cuOccupancyMaxPotentialClusterSize", 11070, 0, 0, 0 },
	{ "cuOccupancyMaxActiveClusters", 11070, 0, 0, 0 },
	{ "cuMemAdvise", 8000, 0, 0, 0 },
	{ "cuMemPrefetchAsync", 8000, 0, 0, 0 },
	{ "cuMemPrefetchAsync", 8000, 2, 0, 0 },
	{ "cuMemAdvise", 12020, 0, 0, 0 },
	{ "cuMemPrefetchAsync", 12020, 0, 0, 0 },
	{ "cuMemPrefetchAsync", 12020, 2, 0, 0 },
	{ "cuMemPrefetchBatchAsync", 13000, 0, 0, 0 },
	{ "cuMemPrefetchBatchAsync", 13000, 2, 0, 0 },
	{ "cuMemDiscardBatchAsync", 13000, 0, 0, 0 },
	{ "cuMemDiscardBatchAsync", 13000, 2, 0, 0 },
	{ "cuMemDiscardAndPrefetchBatchAsync", 13000, 0, 0, 0 },
	{ "cuMemDiscardAndPrefetchBatchAsync", 13000, 2, 0, 0 },
	{ "cuMemRangeGetAttribute", 8000, 0, 0, 0 },
	{ "cuMemRangeGetAttributes", 8000, 0, 0, 0 },
	{ "cuGetErrorString", 6000, 0, 0, 0 },
	{ "cuGetErrorName", 6000, 0, 0, 0 },
	{ "cuGraphCreate", 10000, 0, 0, 0 },
	{ "cuGraphAddKernelNode", 12000, 0, 0, 0 },
	{ "cuGraphKernelNodeGetParams", 12000, 0, 0, 0 },
	{ "cuGraphKernelNodeSetParams", 12000, 0, 0, 0 },
	{ "cuGraphAddMemcpyNode", 10000, 0, 0, 0 },
	{ "cuGraphMemcpyNodeGetParams", 10000, 0, 0, 0 },
	{ "cuGraphMemcpyNodeSetParams", 10000, 0, 0, 0 },
	{ "cuGraphAddMemsetNode", 10000, 0, 0, 0 },
	{ "cuGraphMemsetNodeGetParams", 10000, 0, 0, 0 },
	{ "cuGraphMemsetNodeSetParams", 10000, 0, 0, 0 },
	{ "cuGraphAddHostNode", 10000, 0, 0, 0 },
	{ "cuGraphHostNodeGetParams", 10000, 0, 0, 0 },
	{ "cuGraphHostNodeSetParams", 10000, 0, 0, 0 },
	{ "cuGraphAddChildGraphNode", 10000, 0, 0, 0 },
	{ "cuGraphChildGraphNodeGetGraph", 10000, 0, 0, 0 },
	{ "cuGraphAddEmptyNode", 10000, 0, 0, 0 },
	{ "cuGraphAddEventRecordNode", 11010, 0, 0, 0 },
	{ "cuGraphEventRecordNodeGetEvent", 11010, 0, 0, 0 },
	{ "cuGraphEventRecordNodeSetEvent", 11010, 0, 0, 0 },
	{ "cuGraphAddEventWaitNode", 11010, 0, 0, 0 },
	{ "cuGraphEventWaitNodeGetEvent", 11010, 0, 0, 0 },
	{ "cuGraphEventWaitNodeSetEvent", 11010, 0, 0, 0 },
	{ "cuGraphAddExternalSemaphoresSignalNode", 11020, 0, 0, 0 },
	{ "cuGraphExternalSemaphoresSignalNodeGetParams", 11020, 0, 0, 0 },
	{ "cuGraphExternalSemaphoresSignalNodeSetParams", 11020, 0, 0, 0 },
	{ "cuGraphAddExternalSemaphoresWaitNode", 11020, 0, 0, 0 },
	{ "cuGraphExternalSemaphoresWaitNodeGetParams", 11020, 0, 0, 0 },
	{ "cuGraphExternalSemaphoresWaitNodeSetParams", 11020, 0, 0, 0 },
	{ "cuGraphExecExternalSemaphoresSignalNodeSetParams", 11020, 0, 0, 0 },
	{ "cuGraphExecExternalSemaphoresWaitNodeSetParams", 11020, 0, 0, 0 },
	{ "cuGraphAddMemAllocNode", 11040, 0, 0, 0 },
	{ "cuGraphMemAllocNodeGetParams", 11040, 0, 0, 0 },
	{ "cuGraphAddMemFreeNode", 11040, 0, 0, 0 },
	{ "cuGraphMemFreeNodeGetParams", 11040, 0, 0, 0 },
	{ "cuDeviceGraphMemTrim", 11040, 0, 0, 0 },
	{ "cuDeviceGetGraphMemAttribute", 11040, 0, 0, 0 },
	{ "cuDeviceSetGraphMemAttribute", 11040, 0, 0, 0 },
	{ "cuGraphClone", 10000, 0, 0, 0 },
	{ "cuGraphNodeFindInClone", 10000, 0, 0, 0 },
	{ "cuGraphNodeGetType", 10000, 0, 0, 0 },
	{ "cuGraphGetNodes", 10000, 0, 0, 0 },
	{ "cuGraphGetRootNodes", 10000, 0, 0, 0 },
	{ "cuGraphGetEdges", 10000, 0, 0, 0 },
	{ "cuGraphGetEdges", 12030, 0, 0, 0 },
	{ "cuGraphNodeGetDependencies", 10000, 0, 0, 0 },
	{ "cuGraphNodeGetDependencies", 12030, 0, 0, 0 },
	{ "cuGraphNodeGetDependentNodes", 10000, 0, 0, 0 },
	{ "cuGraphNodeGetDependentNodes", 12030, 0, 0, 0 },
	{ "cuGraphAddDependencies", 10000, 0, 0, 0 },
	{ "cuGraphAddDependencies", 12030, 0, 0, 0 },
	{ "cuGraphRemoveDependencies", 10000, 0, 0, 0 },
	{ "cuGraphRemoveDependencies", 12030, 0, 0, 0 },
	{ "cuGraphDestroyNode", 10000, 0, 0, 0 },
	{ "cuGraphInstantiate", 10000, 0, 0, 0 },
	{ "cuGraphInstantiate", 11000, 0, 0, 0 },
	{ "cuGraphInstantiateWithFlags", 11040, 0, 0, 0 },
	{ "cuGraphUpload", 11010, 0, 0, 0 },
	{ "cuGraphUpload", 11010, 2, 0, 0 },
	{ "cuGraphLaunch", 10000, 0, 0, 0 },
	{ "cuGraphLaunch", 10000, 2, 0, 0 },
	{ "cuGraphExecDestroy", 10000, 0, 0, 0 },
	{ "cuGraphDestroy", 10000, 0, 0, 0 },
	{ "cuStreamBeginCapture", 10000, 0, 0, 0 },
	{ "cuStreamBeginCapture", 10000, 2, 0, 0 },
	{ "cuStreamBeginCapture", 10010, 0, 0, 0 },
	{ "cuStreamBeginCapture", 10010, 2, 0, 0 },
	{ "cuStreamBeginCaptureToGraph", 12030, 0, 0, 0 },
	{ "cuStreamBeginCaptureToGraph", 12030, 2, 0, 0 },
	{ "cuStreamEndCapture", 10000, 0, 0, 0 },
	{ "cuStreamEndCapture", 10000, 2, 0, 0 },
	{ "cuStreamIsCapturing", 10000, 0, 0, 0 },
	{ "cuStreamIsCapturing", 10000, 2, 0, 0 },
	{ "cuStreamGetCaptureInfo", 10010, 0, 0, 0 },
	{ "cuStreamGetCaptureInfo", 10010, 2, 0, 0 },
	{ "cuStreamGetCaptureInfo", 11030, 0, 0, 0 },
	{ "cuStreamGetCaptureInfo", 11030, 2, 0, 0 },
	{ "cuStreamGetCaptureInfo", 12030, 0, 0, 0 },
	{ "cuStreamGetCaptureInfo", 12030, 2, 0, 0 },
	{ "cuStreamUpdateCaptureDependencies", 11030, 0, 0, 0 },
	{ "cuStreamUpdateCaptureDependencies", 11030, 2, 0, 0 },
	{ "cuStreamUpdateCaptureDependencies", 12030, 0, 0, 0 },
	{ "cuStreamUpdateCaptureDependencies", 12030, 2, 0, 0 },
	{ "cuGraphExecKernelNodeSetParams", 12000, 0, 0, 0 },
	{ "cuGraphExecMemcpyNodeSetParams", 10020, 0, 0, 0 },
	{ "cuGraphExecMemsetNodeSetParams", 10020, 0, 0, 0 },
	{ "cuGraphExecHostNodeSetParams", 10020, 0, 0, 0 },
	{ "cuGraphExecChildGraphNodeSetParams", 11010, 0, 0, 0 },
	{ "cuGraphExecEventRecordNodeSetEvent", 11010, 0, 0, 0 },
	{ "cuGraphExecEventWaitNodeSetEvent", 11010, 0, 0, 0 },
	{ "cuThreadExchangeStreamCaptureMode", 10010, 0, 0, 0 },
	{ "cuGraphExecUpdate", 12000, 0, 0, 0 },
	{ "cuGraphKernelNodeCopyAttributes", 11000, 0, 0, 0 },
	{ "cuGraphKernelNodeGetAttribute", 11000, 0, 0, 0 },
	{ "cuGraphKernelNodeSetAttribute", 11000, 0, 0, 0 },
	{ "cuGraphDebugDotPrint", 11030, 0, 0, 0 },
	{ "cuUserObjectCreate", 11030, 0, 0, 0 },
	{ "cuUserObjectRetain", 11030, 0, 0, 0 },
	{ "cuUserObjectRelease", 11030, 0, 0, 0 },
	{ "cuGraphRetainUserObject", 11030, 0, 0, 0 },
	{ "cuGraphReleaseUserObject", 11030, 0, 0, 0 },
	{ "cuGraphNodeSetEnabled", 11060, 0, 0, 0 },
	{ "cuGraphNodeGetEnabled", 11060, 0, 0, 0 },
	{ "cuGraphInstantiateWithParams", 12000, 0, 0, 0 },
	{ "cuGraphInstantiateWithParams", 12000, 2, 0, 0 },
	{ "cuGraphExecGetFlags", 12000, 0, 0, 0 },
	{ "cuGraphAddNode", 12020, 0, 0, 0 },
	{ "cuGraphAddNode", 12030, 0, 0, 0 },
	{ "cuGraphNodeSetParams", 12020, 0, 0, 0 },
	{ "cuGraphExecNodeSetParams", 12020, 0, 0, 0 },
	{ "cuGraphConditionalHandleCreate", 12030, 0, 0, 0 },
	{ "cuDeviceRegisterAsyncNotification", 12040, 0, 0, 0 },
	{ "cuDeviceUnregisterAsyncNotification", 12040, 0, 0, 0 },
	{ "cuLogsRegisterCallback", 12090, 0, 0, 0 },
	{ "cuLogsUnregisterCallback", 12090, 0, 0, 0 },
	{ "cuLogsCurrent", 12090, 0, 0, 0 },
	{ "cuLogsDumpToFile", 12090, 0, 0, 0 },
	{ "cuLogsDumpToMemory", 12090, 0, 0, 0 },
};

START_TEST(test_cudart_requests)
{
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
	void *fn = (void *)&st;
	CUresult rc;

	rc = cuGetProcAddress_v2(trace[_i].name, &fn, trace[_i].version,
				 (cuuint64_t)trace[_i].flags, &st);
	ck_assert_msg(rc == (CUresult)trace[_i].result,
		      "request %d (%s@%d): result %d, real driver %d", _i + 1,
		      trace[_i].name, trace[_i].version, rc, trace[_i].result);
	ck_assert_msg((int)st == trace[_i].status,
		      "request %d (%s@%d): status %d, real driver %d", _i + 1,
		      trace[_i].name, trace[_i].version, st, trace[_i].status);
	if (st == CU_GET_PROC_ADDRESS_SUCCESS)
		ck_assert_ptr_nonnull(fn);
	else
		ck_assert_ptr_null(fn);
}
END_TEST

START_TEST(test_cudart_request_count)
{
	ck_assert_int_eq(sizeof(trace) / sizeof(trace[0]), 440);
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
	tcase_add_test(tc, test_graphics_interop);
	tcase_add_test(tc, test_unimplemented_returns_not_supported);
	tcase_add_test(tc, test_unimplemented_logged_once);
	tcase_add_test(tc, test_unimplemented_quiet);
	suite_add_tcase(s, tc);

	tc = tcase_create("misses");
	tcase_add_loop_test(tc, test_miss_v2, 0,
			    sizeof(misses) / sizeof(misses[0]));
	tcase_add_loop_test(tc, test_miss_v1, 0,
			    sizeof(misses) / sizeof(misses[0]));
	tcase_add_test(tc, test_invalid_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_loop_test(tc, test_every_row, 0,
			    sizeof(rows) / sizeof(rows[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("cudart");
	tcase_add_loop_test(tc, test_cudart_requests, 0,
			    sizeof(trace) / sizeof(trace[0]));
	tcase_add_test(tc, test_cudart_request_count);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(gpa_suite());
	int failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
