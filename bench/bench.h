// SPDX-License-Identifier: MIT
// bench.h: what the benchmark programs share: the check of every CUDA
// call, the host clock, and the median of a few runs.
#ifndef XGPU_BENCH_H
#define XGPU_BENCH_H

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// --turns (bench/pair.c): the program serves one sample per line it reads
// on its standard input, each ended by a line "END", until the input ends
static inline bool bench_turns(int argc, char **argv)
{
	return argc > 1 && !strcmp(argv[1], "--turns");
}

// wait for the next turn: false when the input ended
static inline bool bench_turn_wait()
{
	char line[64];

	return fgets(line, sizeof(line), stdin) != NULL;
}

static inline void bench_turn_end()
{
	printf("END\n");
	fflush(stdout);
}

#endif // XGPU_BENCH_H
