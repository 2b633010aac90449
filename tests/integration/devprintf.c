// SPDX-License-Identifier: MIT
/*
 * devprintf: device printf reaches the guest's stdout, in order with the
 * program's own lines.  The fake device's xgpu_fake_printf(value, n)
 * "prints" n lines that the fake driver writes to the worker's fd 1 at
 * the next synchronising call, as the real driver does.
 *
 *   devprintf          host lines around launches and the three kinds
 *                      of synchronize; run.sh compares stdout with the
 *                      order a native run prints
 *   devprintf flood N  one launch of N lines, more than the worker keeps:
 *                      what fits, then "host: after flood"; the guest
 *                      library says on stderr how much was lost
 *
 * Errors go to stderr, so that stdout holds only what is compared.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* its kernels print: the worker reads what they wrote after each call */
static const char image[] = "XGPU-FAKE-MODULE\n.extern .func vprintf\n";

static CUfunction fn;

static void check(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return;
	cuGetErrorName(rc, &name);
	fprintf(stderr, "devprintf: %s: %s\n", what, name ? name : "unknown");
	exit(1);
}

/* xgpu_fake_printf(value, n) on stream s */
static void launch(int value, int n, CUstream s)
{
	void *params[] = { &value, &n };

	check(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL),
	      "cuLaunchKernel");
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUmodule mod;
	CUstream s;
	CUevent ev;
	CUdevice dev;

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
	check(cuModuleGetFunction(&fn, mod, "xgpu_fake_printf"),
	      "cuModuleGetFunction");

	if (argc > 2 && !strcmp(argv[1], "flood")) {
		printf("host: before flood\n");
		launch(9, atoi(argv[2]), NULL);
		check(cuCtxSynchronize(), "cuCtxSynchronize");
		printf("host: after flood\n");
		return 0;
	}

	/* the program's lines are buffered (stdout is a file): the device's
	 * must still come after those printed before the synchronize */
	printf("host 1\n");
	launch(1, 2, NULL);
	printf("host 2\n");
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	printf("host 3\n");

	check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	launch(2, 1, s);
	printf("host 4\n");
	check(cuStreamSynchronize(s), "cuStreamSynchronize");
	printf("host 5\n");

	check(cuEventCreate(&ev, CU_EVENT_DEFAULT), "cuEventCreate");
	launch(3, 1, s);
	check(cuEventRecord(ev, s), "cuEventRecord");
	printf("host 6\n");
	check(cuEventSynchronize(ev), "cuEventSynchronize");
	printf("host 7\n");

	/* nothing printed: nothing written */
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	printf("host 8\n");

	check(cuEventDestroy(ev), "cuEventDestroy");
	check(cuStreamDestroy(s), "cuStreamDestroy");
	check(cuModuleUnload(mod), "cuModuleUnload");
	check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
	return 0;
}
