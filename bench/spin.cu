// SPDX-License-Identifier: MIT
/*
 * spin: keeps the GPU busy with kernels of a fixed length for a while, as
 * a tenant of the scheduler benchmark (run-sched.sh).
 *   spin US SECONDS [EVERY]
 *                      kernels of US microseconds (one thread, timed by
 *                      the GPU's global timer) for SECONDS, synchronising
 *                      after every EVERY kernels (default 4; 1: turns of
 *                      one kernel each, the guest idle in between)
 * Prints "spin kernels=N us=US seconds=S".
 */
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cuda_runtime.h>

__global__ void spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}

int main(int argc, char **argv)
{
	long us = argc > 1 ? atol(argv[1]) : 1000;
	double secs = argc > 2 ? atof(argv[2]) : 5.0;
	long every = argc > 3 ? atol(argv[3]) : 4;
	long n = 0;
	cudaError_t e;
	auto t0 = std::chrono::steady_clock::now();

	if (cudaFree(0) != cudaSuccess) {
		printf("spin: no GPU\n");
		return 1;
	}
	for (;;) {
		double el = std::chrono::duration<double>(
			std::chrono::steady_clock::now() - t0).count();

		if (el >= secs)
			break;
		spin<<<1, 1>>>((unsigned long long)us * 1000ull);
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
	printf("spin kernels=%ld us=%ld seconds=%.1f\n", n, us, secs);
	return 0;
}
