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
 * A program built with a newer toolkit may ask for names the table lacks
 * (functions its toolkit added) and for versions above the driver's.  The
 * guest answers as an older real driver does (cuda.h, cuGetProcAddress):
 * a name it does not have is CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND (v2:
 * CUDA_SUCCESS with *pfn NULL; the CUDA 11.3 ABI: CUDA_ERROR_NOT_FOUND),
 * a version below the name's first ABI is
 * CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, and a cudaVersion above the
 * driver's version (cuDriverGetVersion: the host driver's once cuInit ran,
 * the toolkit's before) is CUDA_ERROR_INVALID_VALUE.  cudart asks by the
 * version of each function's typedef, never above its own, and falls back
 * on all three.
 *
 * No locking: the table is constant.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "xgpulib_dev.h"
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
 * XGPU_DEBUG=3 traces every call a program makes through a pointer
 * cuGetProcAddress gave it (cudart finds every driver function so):
 * instead of the function, it gets trampoline i of a table, which keeps
 * the argument registers, says "xgpu: call <name>" on stderr and jumps
 * to row i's function.  x86-64 only; elsewhere the level means 2.
 */
#define GPA_TRAMPS 4096

#if defined(__x86_64__)
void *xgpulib_gpa_trace_hit(unsigned long row);
extern const char xgpulib_gpa_tramps[];

void *xgpulib_gpa_trace_hit(unsigned long row)
{
	fprintf(stderr, "xgpu: call %s\n", gpa_table[row].name);
	return gpa_table[row].fn;
}

/*
 * Trampoline i (16 bytes each): push i, jump to the common part, which
 * saves the six integer and eight vector argument registers (keeping the
 * stack 16-byte aligned for the call), asks
 * xgpulib_gpa_trace_hit(i) for the function, restores them, drops i and
 * jumps there with the caller's return address in place.
 */
__asm__(".pushsection .text\n"
	".balign 16\n"
	"xgpulib_gpa_tramps:\n"
	".set xgpulib_tr_i, 0\n"
	".rept " "4096" "\n"
	"  pushq $xgpulib_tr_i\n"
	"  jmp xgpulib_gpa_tramp_common\n"
	"  .balign 16\n"
	"  .set xgpulib_tr_i, xgpulib_tr_i + 1\n"
	".endr\n"
	"xgpulib_gpa_tramp_common:\n"
	"  pushq %rdi\n pushq %rsi\n pushq %rdx\n"
	"  pushq %rcx\n pushq %r8\n pushq %r9\n"
	"  subq $144, %rsp\n"
	"  movdqu %xmm0, 0(%rsp)\n movdqu %xmm1, 16(%rsp)\n"
	"  movdqu %xmm2, 32(%rsp)\n movdqu %xmm3, 48(%rsp)\n"
	"  movdqu %xmm4, 64(%rsp)\n movdqu %xmm5, 80(%rsp)\n"
	"  movdqu %xmm6, 96(%rsp)\n movdqu %xmm7, 112(%rsp)\n"
	"  movq 192(%rsp), %rdi\n"
	"  call xgpulib_gpa_trace_hit\n"
	"  movq %rax, %r11\n"
	"  movdqu 0(%rsp), %xmm0\n movdqu 16(%rsp), %xmm1\n"
	"  movdqu 32(%rsp), %xmm2\n movdqu 48(%rsp), %xmm3\n"
	"  movdqu 64(%rsp), %xmm4\n movdqu 80(%rsp), %xmm5\n"
	"  movdqu 96(%rsp), %xmm6\n movdqu 112(%rsp), %xmm7\n"
	"  addq $144, %rsp\n"
	"  popq %r9\n popq %r8\n popq %rcx\n"
	"  popq %rdx\n popq %rsi\n popq %rdi\n"
	"  addq $8, %rsp\n"
	"  jmp *%r11\n"
	".popsection\n");

_Static_assert(GPA_NROWS <= GPA_TRAMPS, "more rows than trampolines");

static void *gpa_traced(const struct gpa_abi *a)
{
	if (!xgpulib_call_trace_on())
		return a->fn;
	return (void *)(xgpulib_gpa_tramps + 16 * (size_t)(a - gpa_table));
}
#else
static void *gpa_traced(const struct gpa_abi *a)
{
	return a->fn;
}
#endif

/*
 * Pick the function for (symbol, cudaVersion, flags).  The ABI in force is
 * the newest one not newer than cudaVersion.  A per-thread variant counts
 * when the caller asked for one and it belongs to that ABI, i.e. it
 * appeared at or after the ABI and not after cudaVersion (such a variant
 * is named after the ABI in force at its own version).  A function that has
 * per-thread variants, asked for one at a version before the first of
 * them, is VERSION_NOT_SUFFICIENT.
 */
static CUdriverProcAddressQueryResult gpa_resolve(const char *symbol,
						  int cudaVersion,
						  cuuint64_t flags, void **fn)
{
	size_t lo = 0, hi = GPA_NROWS, i;
	const struct gpa_abi *plain = NULL, *ptds = NULL;
	int has_ptds = 0;
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

		if (a->ptds)
			has_ptds = 1;
		if (a->version > cudaVersion)
			continue;
		if (!a->ptds)
			plain = a;
		else
			ptds = a;
	}
	/* a per-thread form asked of a version before the function had one:
	 * the driver says the version is too old (measured on the H100) */
	if (!plain || (want_ptds && has_ptds && !ptds))
		return CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
	if (want_ptds && ptds && ptds->version >= plain->version)
		*fn = gpa_traced(ptds);
	else
		*fn = gpa_traced(plain);
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
			"no such function" :
			st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ?
			"no ABI that old" : "a version above the driver's");
}

/*
 * The CUDA 11.3 ABI reports a miss as CUDA_ERROR_NOT_FOUND, the only way
 * it has to tell.
 */
XGPULIB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
					 int cudaVersion, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st;

	if (!symbol || !pfn || cudaVersion > xgpulib_driver_version)
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
	if (cudaVersion > xgpulib_driver_version) {
		gpa_log_miss(symbol, cudaVersion, flags,
			     CU_GET_PROC_ADDRESS_SUCCESS);
		*pfn = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	st = gpa_resolve(symbol, cudaVersion, flags, pfn);
	if (symbolStatus)
		*symbolStatus = st;
	if (st != CU_GET_PROC_ADDRESS_SUCCESS)
		gpa_log_miss(symbol, cudaVersion, flags, st);
	else
		gpa_trace(symbol, cudaVersion, flags);
	return CUDA_SUCCESS;
}
