// SPDX-License-Identifier: MIT
/*
 * spin: keeps the GPU busy with kernels of a fixed length for a while, as
 * a tenant of the scheduler benchmark (run-sched.sh).
 *   spin copy SECONDS  1 GiB host-to-device copies from pageable memory
 *                      for SECONDS (run-hostile.sh kills it mid-way)
 *   spin US SECONDS [EVERY]
 *                      kernels of US microseconds (one thread, timed by
 *                      the GPU's global timer) for SECONDS, synchronising
 *                      after every EVERY kernels (default 4; 1: turns of
 *                      one kernel each, the guest idle in between)
 * Prints "spin kernels=N us=US seconds=S".  The clock starts once the
 * program's CUDA context is up and its kernel loaded: one kernel runs
 * first, untimed in the count ("spin first kernel ms=M": its launch loads
 * the module, which through xgpu ships the image to the worker).
 *
 * A kernel that waits for the GPU's timer finishes on time even when the
 * driver time-slices it with other processes' kernels (it is not running
 * while it waits): to compare work done, not time waited, SPIN_ITERS=K
 * makes each kernel a chain of K dependent multiply-adds instead, and
 *   spin calibrate US
 * prints "spin iters=K": the K that takes US microseconds on this GPU
 * alone.  SPIN_START_AT=T (seconds since the epoch) holds the clock's
 * start until then, so that tenants started one after another run their
 * timed windows together ("spin: late by S s" when T had passed).
 * SPIN_STAMPS=FILE: each timed kernel of US microseconds notes the GPU's
 * global timer when it starts and when it ends, and FILE gets them, one
 * kernel a line ("START END", ns), in launch order: run-sched.sh counts
 * each tenant's GPU time inside the window all tenants were running
 * (the kernels a tenant counts include its last few, which end after
 * the others stopped).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <chrono>
#include <cuda_runtime.h>

__global__ void spin(unsigned long long ns, unsigned long long *stamp)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
	if (stamp) {
		stamp[0] = t0;
		stamp[1] = t;
	}
}

__global__ void work(unsigned long long iters, float *sink)
{
	float a = 1.0f, b = 0.999999f;

	for (unsigned long long i = 0; i < iters; i++)
		a = a * b + 1e-7f;
	if (a == 12345.0f)	/* never: keeps the loop */
		*sink = a;
}

static int calibrate(long us)
{
	unsigned long long iters = 1ull << 20;
	cudaEvent_t e0, e1;
	float ms = 0;

	if (cudaFree(0) != cudaSuccess) {
		printf("spin: no GPU\n");
		return 1;
	}
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	work<<<1, 1>>>(iters, NULL);	/* loads the kernel */
	for (;;) {
		cudaEventRecord(e0);
		work<<<1, 1>>>(iters, NULL);
		cudaEventRecord(e1);
		if (cudaEventSynchronize(e1) != cudaSuccess) {
			printf("spin: kernel failed\n");
			return 1;
		}
		cudaEventElapsedTime(&ms, e0, e1);
		if (ms >= 50.0f || iters >= (1ull << 40))
			break;
		iters *= 2;
	}
	printf("spin iters=%llu\n",
	       (unsigned long long)((double)iters * us / (ms * 1000.0)));
	return 0;
}

/* 1 GiB host-to-device copies from pageable memory for secs; prints
 * "spin copying" (flushed) before the first */
static int copy_loop(double secs)
{
	const size_t bytes = 1ull << 30;
	char *h = (char *)malloc(bytes);
	void *d = NULL;
	long n = 0;

	if (!h || cudaMalloc(&d, bytes) != cudaSuccess) {
		printf("spin: no memory for the copies\n");
		return 1;
	}
	memset(h, 0x5a, bytes);
	printf("spin copying\n");
	fflush(stdout);
	auto t0 = std::chrono::steady_clock::now();
	while (std::chrono::duration<double>(
		       std::chrono::steady_clock::now() - t0).count() < secs) {
		if (cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) !=
		    cudaSuccess) {
			printf("spin: copy failed\n");
			return 1;
		}
		n++;
	}
	printf("spin copies=%ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *it = getenv("SPIN_ITERS");
	unsigned long long iters = it ? strtoull(it, NULL, 10) : 0;
	long us;
	double secs = argc > 2 ? atof(argv[2]) : 5.0;
	long every = argc > 3 ? atol(argv[3]) : 4;
	long n = 0, cap = 0;
	const char *stamps = getenv("SPIN_STAMPS");
	unsigned long long *dstamp = NULL;
	cudaError_t e;

	if (argc > 2 && !strcmp(argv[1], "calibrate"))
		return calibrate(atol(argv[2]));
	if (argc > 2 && !strcmp(argv[1], "copy"))
		return copy_loop(atof(argv[2]));
	us = argc > 1 ? atol(argv[1]) : 1000;
	if (cudaFree(0) != cudaSuccess) {
		printf("spin: no GPU\n");
		return 1;
	}
	{
		auto f0 = std::chrono::steady_clock::now();

		if (iters)
			work<<<1, 1>>>(1, NULL);
		else
			spin<<<1, 1>>>(1000ull, NULL);
		if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
			printf("spin: kernel failed: %s\n", cudaGetErrorName(e));
			return 1;
		}
		printf("spin first kernel ms=%.2f\n",
		       std::chrono::duration<double>(
			       std::chrono::steady_clock::now() - f0).count() *
			       1e3);
		fflush(stdout);	/* a test may wait for this line */
	}
	if (stamps && us > 0 && !iters) {
		cap = (long)(secs * 1e6 / (double)us) * 2 + 64;
		if (cudaMalloc(&dstamp, (size_t)cap * 16) != cudaSuccess) {
			printf("spin: no memory for the stamps\n");
			return 1;
		}
	}
	if (getenv("SPIN_START_AT")) {
		double at = atof(getenv("SPIN_START_AT")), now;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
		if (at > now)
			usleep((useconds_t)((at - now) * 1e6));
		else
			printf("spin: late by %.2f s\n", now - at);
	}
	auto t0 = std::chrono::steady_clock::now();
	for (;;) {
		double el = std::chrono::duration<double>(
			std::chrono::steady_clock::now() - t0).count();

		if (el >= secs)
			break;
		if (iters)
			work<<<1, 1>>>(iters, NULL);
		else
			spin<<<1, 1>>>((unsigned long long)us * 1000ull,
				       n < cap ? dstamp + 2 * n : NULL);
		n++;
		/* a few kernels queued at a time, as a real program would */
		if (every > 0 && n % every == 0 &&
		    (e = cudaDeviceSynchronize()) != cudaSuccess) {
			printf("spin: kernel failed: %s\n", cudaGetErrorName(e));
			return 1;
		}
	}
	e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		printf("spin: kernel failed: %s\n", cudaGetErrorName(e));
		return 1;
	}
	if (dstamp) {
		long k = n < cap ? n : cap;
		unsigned long long *h = (unsigned long long *)malloc(
			(size_t)(k ? k : 1) * 16);
		FILE *f = fopen(stamps, "w");

		if (!h || !f || cudaMemcpy(h, dstamp, (size_t)k * 16,
					   cudaMemcpyDeviceToHost) !=
					cudaSuccess) {
			printf("spin: the stamps could not be written\n");
			return 1;
		}
		for (long i = 0; i < k; i++)
			fprintf(f, "%llu %llu\n", h[2 * i], h[2 * i + 1]);
		fclose(f);
		free(h);
	}
	printf("spin kernels=%ld us=%ld seconds=%.1f\n", n, us, secs);
	return 0;
}
