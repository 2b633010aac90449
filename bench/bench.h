// SPDX-License-Identifier: MIT
// bench.h: what the benchmark programs share: the check of every CUDA
// call, the host clock, and the median of a few runs.
#ifndef XGPU_BENCH_H
#define XGPU_BENCH_H

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

// A CUDA runtime call that failed: "FAIL <call>: <error name>", exit 1.
static inline void bench_check(cudaError_t e, const char *call)
{
	if (e != cudaSuccess) {
		printf("FAIL %s: %s\n", call, cudaGetErrorName(e));
		exit(1);
	}
}
#define CK(call) bench_check((call), #call)

// the host's monotonic clock, in seconds
static inline double now_s()
{
	return std::chrono::duration<double>(
		std::chrono::steady_clock::now().time_since_epoch()).count();
}

// the median of the n values of v (sorts them)
static inline double median_of(double *v, int n)
{
	std::sort(v, v + n);
	return v[n / 2];
}

#endif // XGPU_BENCH_H
