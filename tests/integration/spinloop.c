// SPDX-License-Identifier: MIT
/*
 * spinloop: launches xgpu_fake_spin(MS) kernels back to back for SECONDS
 * on the fake device (synchronising every EVERY, default 8), then prints
 * "spinloop: N kernels".  The scheduler test runs several at once with
 * different weights and compares the GPU time the daemon measured.
 *   spinloop [MS [SECONDS [EVERY]]]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char image[] = "XGPU-FAKE-MODULE\n";

static void check(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return;
	cuGetErrorName(rc, &name);
	printf("spinloop: %s: %s\n", what, name ? name : "unknown error");
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 2;
	double secs = argc > 2 ? atof(argv[2]) : 3.0, t0;
	long every = argc > 3 ? atol(argv[3]) : 8;
	void *params[] = { &ms };
	long n = 0;
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
	t0 = now_s();
	while (now_s() - t0 < secs) {
		check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params,
				     NULL), "cuLaunchKernel");
		if (++n % (every > 0 ? every : 8) == 0)
			check(cuCtxSynchronize(), "cuCtxSynchronize");
	}
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	printf("spinloop: %ld kernels\n", n);
	return 0;
}
