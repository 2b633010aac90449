// SPDX-License-Identifier: MIT
/*
 * fence: synchronizes answered by the GPU (SYNC_FENCE, xgpub_fence.c) on
 * the fake device, whose memory operations write at once.  Each mode is
 * one run; the integration script reads the guest library's count of how
 * synchronizes ended (XGPU_DEBUG) besides the steps' results.
 *
 *   fence turns N     N turns of a kernel on the legacy stream, then
 *                     cuCtxSynchronize, then the cells read back (the GPU
 *                     answers those N)
 *   fence launches N  N kernels on the legacy stream back to back, then
 *                     one cuCtxSynchronize and the cells read back (the
 *                     gate's marks of a launch loop: integration
 *                     open-marks)
 *   fence streams N   kernels on two streams: a context synchronize after
 *                     both (the worker answers), then each stream's own
 *                     synchronizes (the GPU answers)
 *   fence print N     the turns, with an image that may print loaded (the
 *                     worker answers all)
 *   fence copies N    N kernels, each followed by a blocking copy of its
 *                     cells into pinned memory, then new values copied
 *                     from pinned memory to the device and read back (the
 *                     GPU answers each of the 3N copies)
 *   fence error       a kernel that faults, then cuCtxSynchronize: its
 *                     error; a stream synchronize likewise
 *
 * Every mode begins with a turn and a pause (under the credit scheduler
 * the daemon tells a guest that it is alone after its first slice; until
 * then the worker answers).
 *
 * Prints "PASS step" or "FAIL step: why" per step, then "N passed, M
 * failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "steps.h"

#define CELLS	64

static const char image[] = "XGPU-FAKE-MODULE\n# kernels: xgpu_fake_fill\n";
static const char image_print[] =
	"XGPU-FAKE-MODULE\n.extern .func vprintf\n";

static CUfunction fill, vadd;
static CUdeviceptr d;

static CUresult fill_on(CUstream s, CUdeviceptr p, uint32_t v)
{
	int n = CELLS;
	void *args[] = { &p, &v, &n };

	return cuLaunchKernel(fill, 1, 1, 1, CELLS, 1, 1, 0, s, args, NULL);
}

static void check_cells(CUdeviceptr p, uint32_t v)
{
	uint32_t h[CELLS];

	if (!OK(cuMemcpyDtoH(h, p, sizeof(h))))
		return;
	for (int i = 0; i < CELLS; i++) {
		if (h[i] != v) {
			failf("cell %d holds %u, want %u", i, h[i], v);
			return;
		}
	}
}

static void turns(const char *name, int n)
{
	begin(name);
	for (int i = 0; i < n && !step_failed; i++) {
		OK(fill_on(NULL, d, 1000u + (uint32_t)i));
		OK(cuCtxSynchronize());
		check_cells(d, 1000u + (uint32_t)i);
	}
	end();
}

static void launches(int n)
{
	begin("launches");
	for (int i = 0; i < n && !step_failed; i++)
		OK(fill_on(NULL, d, 6000u + (uint32_t)i));
	OK(cuCtxSynchronize());
	check_cells(d, 6000u + (uint32_t)(n - 1));
	end();
}

static void streams(int n)
{
	CUstream a = NULL, b = NULL;
	CUdeviceptr d2 = 0;

	begin("streams");
	if (!OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemAlloc(&d2, CELLS * 4)))
		goto out;
	for (int i = 0; i < n && !step_failed; i++) {
		OK(fill_on(a, d, 2000u + (uint32_t)i));
		OK(fill_on(b, d2, 3000u + (uint32_t)i));
		OK(cuCtxSynchronize());
		check_cells(d, 2000u + (uint32_t)i);
		check_cells(d2, 3000u + (uint32_t)i);
		OK(fill_on(a, d, 4000u + (uint32_t)i));
		OK(cuStreamSynchronize(a));
		check_cells(d, 4000u + (uint32_t)i);
		OK(fill_on(b, d2, 5000u + (uint32_t)i));
		OK(cuStreamSynchronize(b));
		check_cells(d2, 5000u + (uint32_t)i);
	}
out:
	if (a)
		OK(cuStreamDestroy(a));
	if (b)
		OK(cuStreamDestroy(b));
	if (d2)
		OK(cuMemFree(d2));
	end();
}

/* blocking copies between pinned memory and the device, the first after
 * a kernel that changed the cells: the GPU answers them too */
static void copies(int n)
{
	uint32_t *h = NULL;

	begin("copies");
	if (!OK(cuMemAllocHost((void **)&h, CELLS * 4)))
		goto out;
	for (int i = 0; i < n && !step_failed; i++) {
		uint32_t v = 6000u + (uint32_t)i;

		memset(h, 0, CELLS * 4);
		OK(fill_on(NULL, d, v));
		if (!OK(cuMemcpyDtoH(h, d, CELLS * 4)))
			break;
		for (int j = 0; j < CELLS; j++) {
			if (h[j] != v) {
				failf("round %d: cell %d holds %u, want %u",
				      i, j, h[j], v);
				break;
			}
		}
		/* and back: pinned to the device, then read again */
		for (int j = 0; j < CELLS; j++)
			h[j] = v * 3u + (uint32_t)j;
		if (!OK(cuMemcpyHtoD(d, h, CELLS * 4)))
			break;
		memset(h, 0, CELLS * 4);
		if (!OK(cuMemcpyDtoH(h, d, CELLS * 4)))
			break;
		for (int j = 0; j < CELLS; j++) {
			if (h[j] != v * 3u + (uint32_t)j) {
				failf("round %d: cell %d holds %u after the "
				      "copy to the device", i, j, h[j]);
				break;
			}
		}
	}
out:
	if (h)
		OK(cuMemFreeHost(h));
	end();
}

/* a kernel whose pointers are not device memory: its error comes back at
 * the synchronize that follows, fenced or not */
static void error(void)
{
	CUdeviceptr bad = 0x1000;
	int n = CELLS;
	void *args[] = { &bad, &bad, &bad, &n };
	CUstream s = NULL;
	CUresult rc;

	begin("error-ctx");
	OK(cuLaunchKernel(vadd, 1, 1, 1, CELLS, 1, 1, 0, NULL, args, NULL));
	rc = cuCtxSynchronize();
	EXPECT(rc == CUDA_ERROR_ILLEGAL_ADDRESS,
	       "cuCtxSynchronize after a faulting kernel: %s (%d)", ename(rc),
	       (int)rc);
	end();
	begin("error-stream");
	if (OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING))) {
		OK(cuLaunchKernel(vadd, 1, 1, 1, CELLS, 1, 1, 0, s, args,
				  NULL));
		rc = cuStreamSynchronize(s);
		EXPECT(rc == CUDA_ERROR_ILLEGAL_ADDRESS,
		       "cuStreamSynchronize after a faulting kernel: %s (%d)",
		       ename(rc), (int)rc);
		OK(cuStreamDestroy(s));
	}
	end();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "turns";
	int n = argc > 2 ? atoi(argv[2]) : 20;
	CUmodule m, mp = NULL;
	CUcontext ctx;
	CUdevice dev;

	begin("setup");
	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx)) ||
	    !OK(cuModuleLoadData(&m, image)) ||
	    !OK(cuModuleGetFunction(&fill, m, "xgpu_fake_fill")) ||
	    !OK(cuModuleGetFunction(&vadd, m, "xgpu_fake_vadd")) ||
	    !OK(cuMemAlloc(&d, CELLS * 4))) {
		end();
		return 1;
	}
	/* one turn, then a pause: under the credit scheduler the daemon
	 * tells a guest that it is alone once its first slice is over */
	OK(fill_on(NULL, d, 999));
	OK(cuCtxSynchronize());
	usleep(100000);
	end();
	if (!strcmp(mode, "turns")) {
		turns("turns", n);
	} else if (!strcmp(mode, "launches")) {
		launches(n);
	} else if (!strcmp(mode, "streams")) {
		streams(n);
	} else if (!strcmp(mode, "print")) {
		begin("print-image");
		OK(cuModuleLoadData(&mp, image_print));
		end();
		turns("turns-print", n);
	} else if (!strcmp(mode, "copies")) {
		copies(n);
	} else if (!strcmp(mode, "error")) {
		error();
	} else {
		fprintf(stderr, "fence: unknown mode %s\n", mode);
		return 2;
	}
	begin("teardown");
	OK(cuMemFree(d));
	OK(cuModuleUnload(m));
	if (mp)
		OK(cuModuleUnload(mp));
	end();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
