// launch: kernel launch cost of an empty kernel.
//   async: 100000 launches back to back, then one cudaDeviceSynchronize;
//          the time per launch (three runs, the median)
//   sync:  launch + cudaDeviceSynchronize, 10000 times (median of three
//          runs of the mean)
// With --turns (bench/pair.c) each sample is one run of half as many.
//
// Output:
//   LAUNCH async_us_per_launch <x>
//   LAUNCH sync_us_per_launch <x>
// On a CUDA error: "FAIL <call>: <error name>", exit 1.
#include "bench.h"

enum { ASYNC_N = 100000, SYNC_N = 10000, RUNS = 3 };

__global__ void empty() {}

// us per launch of n launches, then one synchronize
static double async_run(int n)
{
	double t0 = now_s();

	for (int i = 0; i < n; i++)
		empty<<<1, 1>>>();
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	return (now_s() - t0) / n * 1e6;
}

// us per launch + synchronize, n times
static double sync_run(int n)
{
	double t0 = now_s();

	for (int i = 0; i < n; i++) {
		empty<<<1, 1>>>();
		CK(cudaDeviceSynchronize());
	}
	CK(cudaGetLastError());
	return (now_s() - t0) / n * 1e6;
}

int main(int argc, char **argv)
{
	double a[RUNS], s[RUNS];

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < 1000; i++)
		empty<<<1, 1>>>();
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());

	if (bench_turns(argc, argv)) {
		while (bench_turn_wait()) {
			printf("LAUNCH async_us_per_launch %.3f\n",
			       async_run(ASYNC_N / 2));
			printf("LAUNCH sync_us_per_launch %.3f\n",
			       sync_run(SYNC_N / 2));
			bench_turn_end();
		}
		return 0;
	}
	for (int r = 0; r < RUNS; r++)
		a[r] = async_run(ASYNC_N);
	for (int r = 0; r < RUNS; r++)
		s[r] = sync_run(SYNC_N);
	printf("LAUNCH async_us_per_launch %.3f\n", median_of(a, RUNS));
	printf("LAUNCH sync_us_per_launch %.3f\n", median_of(s, RUNS));
	return 0;
}
