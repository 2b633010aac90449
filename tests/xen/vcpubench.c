// SPDX-License-Identifier: MIT
/*
 * vcpubench: the guest side of the VCPU coordination measurement
 * (tests/xen, step vcpu-coord).  A guest that feeds the GPU in turns:
 * CPU work to prepare a batch, a kernel (the fake device's
 * xgpu_fake_spin, GPU_MS long), cuCtxSynchronize, again.  Beside a CPU
 * hog on the same physical CPU, how many turns it gets through depends on
 * how much of that CPU Xen gives its VCPU, which is what the coordinator
 * changes (VCPU weight from the GPU weight, a boost after completions).
 *
 *   vcpubench calib MS          loop count for MS ms of CPU work (idle)
 *   vcpubench run K GPU_MS SECS turns of K loops + a GPU_MS kernel
 *   vcpubench hog SECS          spin on the CPU
 *
 * `run` prints "VCPUBENCH turns=N secs=S rate=R cpu_ms=C wait_ms=W":
 * turns per second, the mean time of the CPU part and of launch + sync.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char image[] = "XGPU-FAKE-MODULE\n";
static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a fixed amount of CPU work: what it takes in time depends on the VCPU */
static void work(uint64_t k)
{
	uint64_t x = sink + 1;

	for (uint64_t i = 0; i < k; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static void check(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return;
	cuGetErrorName(rc, &name);
	printf("vcpubench: %s: %s\n", what, name ? name : "unknown error");
	exit(1);
}

static int calib(double ms)
{
	uint64_t k = 1000;
	double best = 1e9;

	/* grow until a run takes 20 ms, then keep the fastest of five */
	for (;;) {
		double t = now_s();

		work(k);
		t = now_s() - t;
		if (t > 0.02 || k > (1ull << 40))
			break;
		k *= 2;
	}
	for (int i = 0; i < 5; i++) {
		double t = now_s();

		work(k);
		t = now_s() - t;
		if (t < best)
			best = t;
	}
	printf("VCPUCALIB k=%llu\n",
	       (unsigned long long)((double)k * (ms / 1e3) / best));
	return 0;
}

static int run(uint64_t k, int gpu_ms, double secs)
{
	void *params[] = { &gpu_ms };
	double t0, t, cpu = 0, wait = 0;
	unsigned long turns = 0;
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
	do {
		double a = now_s(), b;

		work(k);
		b = now_s();
		cpu += b - a;
		check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params,
				     NULL), "cuLaunchKernel");
		check(cuCtxSynchronize(), "cuCtxSynchronize");
		t = now_s();
		wait += t - b;
		turns++;
	} while (t - t0 < secs);
	t -= t0;
	printf("VCPUBENCH turns=%lu secs=%.2f rate=%.2f cpu_ms=%.2f "
	       "wait_ms=%.2f\n", turns, t, (double)turns / t,
	       1e3 * cpu / (double)turns, 1e3 * wait / (double)turns);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "calib"))
		return calib(atof(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "run"))
		return run(strtoull(argv[2], NULL, 10), atoi(argv[3]),
			   atof(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "hog")) {
		double t0 = now_s(), secs = atof(argv[2]);

		while (now_s() - t0 < secs)
			work(100000);
		return 0;
	}
	fprintf(stderr, "usage: vcpubench calib MS | run K GPU_MS SECS | "
		"hog SECS\n");
	return 2;
}
