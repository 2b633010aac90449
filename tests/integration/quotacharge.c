// SPDX-License-Identifier: MIT
/*
 * quotacharge: what the guest's device-memory quota charges besides
 * cuMemAlloc, against a daemon with --quota-mb 64 --ctx-charge-kb 4096
 * --images-mb 2 and the fake driver: arrays and mipmapped arrays (by
 * their descriptor), contexts (a fixed charge; the primary's once; a
 * green context's 6 MiB) and
 * the limits that cost memory, module globals (at first lookup), and the
 * guest's module image bytes.  Each is seen in cuMemGetInfo, refused with
 * CUDA_ERROR_OUT_OF_MEMORY past the quota, and given back when destroyed
 * (the same request then succeeds).
 *
 *   quotacharge [--uid N] steps          every step; PASS/FAIL lines
 *   quotacharge [--uid N] holdimg KIB S  load a KIB KiB image, print
 *       "quotacharge: holdimg: ERR", hold it S seconds
 *   quotacharge [--uid N] holdall S      fill the quota with an array,
 *       print "quotacharge: holdall: ERR free N", hold it S seconds
 *
 * --uid N: become user N first (root only): another guest.
 */
#include <cuda.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "steps.h"

#define MIB		(1ull << 20)
#define QUOTA		(64 * MIB)
#define CTX_CHARGE	(4 * MIB)

static uint64_t mem_free(void)
{
	size_t f = 0, t = 0;
	CUresult rc = cuMemGetInfo(&f, &t);

	if (rc)
		failf("cuMemGetInfo: %s", ename(rc));
	else if (t != QUOTA)
		failf("cuMemGetInfo total %zu, wanted the quota %llu", t,
		      (unsigned long long)QUOTA);
	return f;
}

#define FREE_IS(want)                                                         \
	do {                                                                  \
		uint64_t f_ = mem_free(), w_ = (want);                        \
		if (f_ != w_)                                                 \
			failf("free %llu, wanted %llu (line %d)",             \
			      (unsigned long long)f_, (unsigned long long)w_, \
			      __LINE__);                                      \
	} while (0)

/* allocations that leave exactly `left` bytes of the quota free */
static CUdeviceptr fill[2];

static void fill_leave(uint64_t left)
{
	uint64_t f = mem_free(), n, big;

	if (f < left) {
		failf("only %llu free, wanted to leave %llu",
		      (unsigned long long)f, (unsigned long long)left);
		return;
	}
	n = f - left;
	big = n & ~(2 * MIB - 1);
	if (big)
		WANT(CUDA_SUCCESS, cuMemAlloc(&fill[0], big));
	if (n - big)
		WANT(CUDA_SUCCESS, cuMemAlloc(&fill[1], n - big));
	FREE_IS(left);
}

static void fill_release(void)
{
	for (int i = 0; i < 2; i++) {
		if (fill[i])
			WANT(CUDA_SUCCESS, cuMemFree(fill[i]));
		fill[i] = 0;
	}
}

static CUDA_ARRAY3D_DESCRIPTOR desc(size_t w, size_t h, size_t d,
				    CUarray_format f, unsigned int ch)
{
	CUDA_ARRAY3D_DESCRIPTOR a;

	memset(&a, 0, sizeof(a));
	a.Width = w;
	a.Height = h;
	a.Depth = d;
	a.Format = f;
	a.NumChannels = ch;
	return a;
}

static const char fake_image[] = "XGPU-FAKE-MODULE\n"
				 "# kernels: xgpu_fake_vadd\n";

/* a fake module's image of `bytes` bytes (PTX-like text: it ends at its
 * NUL) */
static char *big_image(size_t bytes)
{
	char *p = malloc(bytes);

	if (!p)
		return NULL;
	memset(p, '#', bytes);
	memcpy(p, fake_image, strlen(fake_image));
	p[bytes - 1] = 0;
	return p;
}

static CUcontext primary;
static CUdevice dev;
static uint64_t base;	/* free with the primary alone */

static void step_primary(void)
{
	begin("primary-charged");
	/* the primary context, once, whatever else the guest holds */
	base = mem_free();
	if (base != QUOTA - CTX_CHARGE)
		failf("free %llu with the primary context, wanted %llu",
		      (unsigned long long)base,
		      (unsigned long long)(QUOTA - CTX_CHARGE));
	end();
}

static void step_arrays(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d16 = desc(1024, 1024, 0, CU_AD_FORMAT_FLOAT,
					   4);
	CUDA_ARRAY3D_DESCRIPTOR d8 = desc(1024, 512, 0, CU_AD_FORMAT_FLOAT, 4);
	CUDA_ARRAY3D_DESCRIPTOR dm = desc(1024, 1024, 0, CU_AD_FORMAT_FLOAT,
					  1);
	CUDA_ARRAY3D_DESCRIPTOR huge = desc(1ull << 40, 1ull << 40, 1ull << 40,
					    CU_AD_FORMAT_FLOAT, 4);
	CUDA_ARRAY_DESCRIPTOR d2 = { 1, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1 };
	CUarray a = NULL, b = NULL;
	CUmipmappedArray m = NULL;

	begin("array-charge");
	/* 1024 x 1024 x 4 floats: 16 MiB */
	WANT(CUDA_SUCCESS, cuArray3DCreate(&a, &d16));
	FREE_IS(base - 16 * MIB);
	/* 11 levels of 1024 x 1024 floats: 5.33 MiB, 6 in 2 MiB pages */
	WANT(CUDA_SUCCESS, cuMipmappedArrayCreate(&m, &dm, 11));
	FREE_IS(base - 22 * MIB);
	WANT(CUDA_SUCCESS, cuArrayDestroy(a));
	WANT(CUDA_SUCCESS, cuMipmappedArrayDestroy(m));
	FREE_IS(base);
	end();

	begin("array-refused");
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuArray3DCreate(&a, &huge));
	huge.Depth = 0;
	huge.NumChannels = 1;
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuMipmappedArrayCreate(&m, &huge, 60));
	fill_leave(8 * MIB);
	WANT(CUDA_SUCCESS, cuArray3DCreate(&a, &d8));
	FREE_IS(0);
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuArray3DCreate(&b, &d8));
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuArrayCreate(&b, &d2));
	WANT(CUDA_SUCCESS, cuArrayDestroy(a));
	FREE_IS(8 * MIB);
	/* given back: the same array again */
	WANT(CUDA_SUCCESS, cuArray3DCreate(&b, &d8));
	WANT(CUDA_SUCCESS, cuArrayDestroy(b));
	/* a mipmap of 6 MiB does not fit 5 */
	fill_release();
	fill_leave(5 * MIB);
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuMipmappedArrayCreate(&m, &dm, 11));
	fill_release();
	WANT(CUDA_SUCCESS, cuMipmappedArrayCreate(&m, &dm, 11));
	WANT(CUDA_SUCCESS, cuMipmappedArrayDestroy(m));
	FREE_IS(base);
	end();
}

static void step_contexts(void)
{
	CUcontext c = NULL;

	begin("ctx-charge");
	WANT(CUDA_SUCCESS, cuCtxCreate(&c, NULL, 0, dev));
	FREE_IS(base - CTX_CHARGE);
	/* its limits: the heap and printf FIFO by their size */
	WANT(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 8 * MIB));
	FREE_IS(base - CTX_CHARGE - 8 * MIB);
	WANT(CUDA_SUCCESS, cuCtxDestroy(c));
	WANT(CUDA_SUCCESS, cuCtxSetCurrent(primary));
	FREE_IS(base);
	end();

	begin("ctx-refused");
	fill_leave(3 * MIB);
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuCtxCreate(&c, NULL, 0, dev));
	WANT(CUDA_SUCCESS, cuCtxSetCurrent(primary));
	fill_release();
	fill_leave(4 * MIB);
	WANT(CUDA_SUCCESS, cuCtxCreate(&c, NULL, 0, dev));
	FREE_IS(0);
	WANT(CUDA_SUCCESS, cuCtxDestroy(c));
	WANT(CUDA_SUCCESS, cuCtxSetCurrent(primary));
	FREE_IS(4 * MIB);
	/* given back: the same again */
	WANT(CUDA_SUCCESS, cuCtxCreate(&c, NULL, 0, dev));
	WANT(CUDA_SUCCESS, cuCtxDestroy(c));
	WANT(CUDA_SUCCESS, cuCtxSetCurrent(primary));
	fill_release();
	FREE_IS(base);
	end();

	begin("limit-charge");
	WANT(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 16 * MIB));
	FREE_IS(base - 16 * MIB);
	/* a new value replaces the old one's charge */
	WANT(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 2 * MIB));
	FREE_IS(base - 2 * MIB);
	WANT(CUDA_ERROR_OUT_OF_MEMORY,
	     cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 128 * MIB));
	FREE_IS(base - 2 * MIB);
	/* 1 KiB more stack for each of 132 x 2048 resident threads:
	 * 264 MiB */
	WANT(CUDA_ERROR_OUT_OF_MEMORY,
	     cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2048));
	WANT(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024 + 64));
	/* 64 bytes x 270336 threads: 16.5 MiB, 18 in 2 MiB pages */
	FREE_IS(base - 2 * MIB - 18 * MIB);
	WANT(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024));
	WANT(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 0));
	FREE_IS(base);
	end();
}

static void step_green(void)
{
	CUdevResource all, groups[64];
	CUdevResourceDesc d = NULL;
	unsigned int n = 64;
	CUgreenCtx g = NULL;

	begin("green-charge");
	memset(&all, 0, sizeof(all));
	WANT(CUDA_SUCCESS, cuDeviceGetDevResource(dev, &all,
						  CU_DEV_RESOURCE_TYPE_SM));
	WANT(CUDA_SUCCESS, cuDevSmResourceSplitByCount(groups, &n, &all, NULL,
						       0, 16));
	WANT(CUDA_SUCCESS, cuDevResourceGenerateDesc(&d, groups, 1));
	/* 6 MiB each */
	WANT(CUDA_SUCCESS, cuGreenCtxCreate(&g, d, dev,
					    CU_GREEN_CTX_DEFAULT_STREAM));
	FREE_IS(base - 6 * MIB);
	WANT(CUDA_SUCCESS, cuGreenCtxDestroy(g));
	WANT(CUDA_SUCCESS, cuCtxSetCurrent(primary));
	FREE_IS(base);
	fill_leave(5 * MIB);
	WANT(CUDA_ERROR_OUT_OF_MEMORY,
	     cuGreenCtxCreate(&g, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
	fill_release();
	fill_leave(6 * MIB);
	WANT(CUDA_SUCCESS, cuGreenCtxCreate(&g, d, dev,
					    CU_GREEN_CTX_DEFAULT_STREAM));
	FREE_IS(0);
	WANT(CUDA_SUCCESS, cuGreenCtxDestroy(g));
	WANT(CUDA_SUCCESS, cuCtxSetCurrent(primary));
	fill_release();
	FREE_IS(base);
	end();
}

static void step_globals(void)
{
	CUmodule mod = NULL;
	CUdeviceptr g = 0;
	size_t size = 0;
	CUresult rc;

	begin("global-charge");
	WANT(CUDA_SUCCESS, cuModuleLoadData(&mod, fake_image));
	WANT(CUDA_SUCCESS,
	     cuModuleGetGlobal(&g, &size, mod, "xgpu_fake_global"));
	if (size != 256)
		failf("the global's size %zu, wanted 256", size);
	FREE_IS(base - 256);
	/* once */
	WANT(CUDA_SUCCESS,
	     cuModuleGetGlobal(&g, &size, mod, "xgpu_fake_global"));
	FREE_IS(base - 256);
	WANT(CUDA_SUCCESS, cuModuleUnload(mod));
	FREE_IS(base);
	end();

	begin("global-refused");
	fill_leave(0);
	mod = NULL;
	rc = cuModuleLoadData(&mod, fake_image);
	if (rc == CUDA_SUCCESS)
		rc = cuModuleGetGlobal(&g, &size, mod, "xgpu_fake_global");
	if (rc != CUDA_ERROR_OUT_OF_MEMORY)
		failf("a global with the quota used up: %s", ename(rc));
	if (mod)
		WANT(CUDA_SUCCESS, cuModuleUnload(mod));
	fill_release();
	fill_leave(256);
	WANT(CUDA_SUCCESS, cuModuleLoadData(&mod, fake_image));
	WANT(CUDA_SUCCESS,
	     cuModuleGetGlobal(&g, &size, mod, "xgpu_fake_global"));
	FREE_IS(0);
	WANT(CUDA_SUCCESS, cuModuleUnload(mod));
	FREE_IS(256);
	fill_release();
	FREE_IS(base);
	end();
}

static void step_images(void)
{
	char *a = big_image(1536 << 10), *b = big_image(1 << 20);
	CUmodule ma = NULL, mb = NULL;

	begin("image-cap");
	if (!a || !b) {
		failf("out of host memory");
	} else {
		/* 1.5 MiB and 1 MiB do not fit the guest's 2 MiB */
		WANT(CUDA_SUCCESS, cuModuleLoadData(&ma, a));
		WANT(CUDA_ERROR_OUT_OF_MEMORY, cuModuleLoadData(&mb, b));
		WANT(CUDA_SUCCESS, cuModuleUnload(ma));
		WANT(CUDA_SUCCESS, cuModuleLoadData(&mb, b));
		WANT(CUDA_SUCCESS, cuModuleUnload(mb));
		/* images are not device memory */
		FREE_IS(base);
	}
	free(a);
	free(b);
	end();
}

static int setup(void)
{
	CUresult rc = cuInit(0);

	if (!rc)
		rc = cuDeviceGet(&dev, 0);
	if (!rc)
		rc = cuDevicePrimaryCtxRetain(&primary, dev);
	if (!rc)
		rc = cuCtxSetCurrent(primary);
	if (rc) {
		printf("FAIL setup: %s\n", ename(rc));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--uid") == 0) {
		unsigned long uid = strtoul(argv[2], NULL, 10);

		if (setgroups(0, NULL) || setgid((gid_t)uid) ||
		    setuid((uid_t)uid)) {
			printf("FAIL setup: cannot become uid %lu\n", uid);
			return 1;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || setup())
		return 2;
	if (strcmp(argv[1], "steps") == 0) {
		step_primary();
		step_arrays();
		step_contexts();
		step_green();
		step_globals();
		step_images();
		printf("%s\n", failed ? "FAIL" : "PASS");
		return failed ? 1 : 0;
	}
	if (strcmp(argv[1], "holdimg") == 0 && argc == 4) {
		char *img = big_image(strtoull(argv[2], NULL, 10) << 10);
		CUmodule m = NULL;

		printf("quotacharge: holdimg: %s\n",
		       img ? ename(cuModuleLoadData(&m, img)) : "no memory");
		fflush(stdout);
		sleep((unsigned int)atoi(argv[3]));
		return 0;
	}
	if (strcmp(argv[1], "holdall") == 0 && argc == 3) {
		/* everything but the primary's charge, as one array */
		CUDA_ARRAY3D_DESCRIPTOR d = desc(QUOTA - CTX_CHARGE, 0, 0,
						 CU_AD_FORMAT_UNSIGNED_INT8,
						 1);
		CUarray a = NULL;
		CUresult rc;
		size_t f = 0, t = 0;

		rc = cuArray3DCreate(&a, &d);
		cuMemGetInfo(&f, &t);
		printf("quotacharge: holdall: %s free %zu\n", ename(rc), f);
		fflush(stdout);
		sleep((unsigned int)atoi(argv[2]));
		return 0;
	}
	fprintf(stderr, "usage: quotacharge [--uid N] steps | holdimg KIB S |"
		" holdall S\n");
	return 2;
}
