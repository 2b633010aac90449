/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_gpa.c: cuGetProcAddress and cuGetProcAddress_v2.
 *
 * cudart finds every driver function through cuGetProcAddress_v2 (440
 * lookups at start), asking by base name, the CUDA version whose ABI it
 * was built for, and whether it wants the per-thread-default-stream
 * variant.  The table of ABIs is generated from the toolkit's PFN typedefs
 * by tools/gen/gen-exports.sh (xgpulib_gpa_table.inc), sorted by name, so a
 * lookup is a binary search followed by a walk over the name's few rows.
 *
 * No locking: the table is constant.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "xgpulib_env.h"


/*
 * cuda.h renames cuGetProcAddress to the CUDA 12 ABI; the CUDA 11.3 one
 * (no symbolStatus) is still exported under the plain name.
 */
#undef cuGetProcAddress

XGPULIB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
					 int cudaVersion, cuuint64_t flags);
XGPULIB_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
					    int cudaVersion, cuuint64_t flags,
					    CUdriverProcAddressQueryResult *
					    symbolStatus);

/*
 * The exported functions have real cuda.h prototypes elsewhere (and in
 * this file), so the table refers to them through asm labels: one
 * int (void) alias per symbol, whatever its true type.
 */
#define XGPULIB_GPA_SYM(sym) \
	extern int xgpulib_gpa_sym_##sym(void) __asm__(#sym);
#include "xgpulib_gpa_table.inc"
#undef XGPULIB_GPA_SYM

struct gpa_abi {
	const char *name;
	int version;		/* 0: any */
	int ptds;		/* a _ptds/_ptsz variant */
	void *fn;
};

static const struct gpa_abi gpa_table[] = {
#define XGPULIB_GPA_ROW(name, ver, ptds, sym) \
	{ name, ver, ptds, (void *)xgpulib_gpa_sym_##sym },
#include "xgpulib_gpa_table.inc"
#undef XGPULIB_GPA_ROW
};

#define GPA_NROWS (sizeof(gpa_table) / sizeof(gpa_table[0]))

/*
 * Pick the function for (symbol, cudaVersion, flags).  The ABI in force is
 * the newest one not newer than cudaVersion.  A per-thread variant counts
 * when the caller asked for one and it belongs to that ABI, i.e. it
 * appeared at or after the ABI and not after cudaVersion (such a variant
 * is named after the ABI in force at its own version).
 */
static CUdriverProcAddressQueryResult gpa_resolve(const char *symbol,
						  int cudaVersion,
						  cuuint64_t flags, void **fn)
{
	size_t lo = 0, hi = GPA_NROWS, i;
	const struct gpa_abi *plain = NULL, *ptds = NULL;
	int want_ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
			!= 0;

	*fn = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(gpa_table[mid].name, symbol) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == GPA_NROWS || strcmp(gpa_table[lo].name, symbol) != 0)
		return CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;

	/* rows of one name are sorted by version */
	for (i = lo; i < GPA_NROWS && !strcmp(gpa_table[i].name, symbol);
	     i++) {
		const struct gpa_abi *a = &gpa_table[i];

		if (a->version > cudaVersion)
			break;
		if (!a->ptds)
			plain = a;
		else
			ptds = a;
	}
	if (!plain)
		return CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
	if (want_ptds && ptds && ptds->version >= plain->version)
		*fn = ptds->fn;
	else
		*fn = plain->fn;
	return CU_GET_PROC_ADDRESS_SUCCESS;
}

static void gpa_trace(const char *symbol, int cudaVersion, cuuint64_t flags)
{
	if (xgpulib_trace_on())
		fprintf(stderr, "xgpu: cuGetProcAddress(\"%s\", %d, %llu)\n",
			symbol, cudaVersion, (unsigned long long)flags);
}

static void gpa_log_miss(const char *symbol, int cudaVersion,
			 cuuint64_t flags, CUdriverProcAddressQueryResult st)
{
	if (xgpulib_debug_on())
		fprintf(stderr, "xgpu: cuGetProcAddress(\"%s\", %d, %llu): %s\n",
			symbol, cudaVersion, (unsigned long long)flags,
			st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND ?
			"no such function" : "no ABI that old");
}

/*
 * The CUDA 11.3 ABI reports a miss as CUDA_ERROR_NOT_FOUND, the only way
 * it has to tell.
 */
XGPULIB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
					 int cudaVersion, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	st = gpa_resolve(symbol, cudaVersion, flags, pfn);
	if (st == CU_GET_PROC_ADDRESS_SUCCESS) {
		gpa_trace(symbol, cudaVersion, flags);
		return CUDA_SUCCESS;
	}
	gpa_log_miss(symbol, cudaVersion, flags, st);
	return CUDA_ERROR_NOT_FOUND;
}

/*
 * The CUDA 12 ABI reports a miss in symbolStatus and returns CUDA_SUCCESS
 * with *pfn = NULL: cuda.h documents it so, and the real 580 driver
 * answered cudart's first lookup (the empty name, version 0) that way
 * (gpa_requests_cuda13.txt: result 0, status 1).
 */
XGPULIB_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
					    int cudaVersion, cuuint64_t flags,
					    CUdriverProcAddressQueryResult *
					    symbolStatus)
{
	CUdriverProcAddressQueryResult st;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	st = gpa_resolve(symbol, cudaVersion, flags, pfn);
	if (symbolStatus)
		*symbolStatus = st;
	if (st != CU_GET_PROC_ADDRESS_SUCCESS)
		gpa_log_miss(symbol, cudaVersion, flags, st);
	else
		gpa_trace(symbol, cudaVersion, flags);
	return CUDA_SUCCESS;
}
