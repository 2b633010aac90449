// SPDX-License-Identifier: MIT
/*
 * spin: launches xgpu_fake_spin(100000) on the fake device (tests/fakecuda)
 * and waits for it in cuCtxSynchronize, so that the integration test can
 * kill this guest in the middle of a call and watch the backend clean up
 * after it.
 * Prints "spin: launched" (flushed) just before it starts waiting.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static const char image[] = "XGPU-FAKE-MODULE\n";

static void check(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return;
	cuGetErrorName(rc, &name);
	printf("spin: %s: %s\n", what, name ? name : "unknown error");
	exit(1);
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 100000;
	void *params[] = { &ms };
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUdevice dev;

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
	check(cuModuleGetFunction(&f, mod, "xgpu_fake_spin"),
	      "cuModuleGetFunction");
	check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
	      "cuLaunchKernel");
	printf("spin: launched\n");
	fflush(stdout);
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	printf("spin: done\n");
	return 0;
}
