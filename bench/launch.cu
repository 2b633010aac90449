// launch: kernel launch cost of an empty kernel.
//   async: 100000 launches back to back, then one cudaDeviceSynchronize;
//          the time per launch (three runs, the median)
//   sync:  launch + cudaDeviceSynchronize, 10000 times (median of three
//          runs of the mean)
//
// Output:
//   LAUNCH async_us_per_launch <x>
//   LAUNCH sync_us_per_launch <x>
// On a CUDA error: "FAIL <call>: <error name>", exit 1.
#include "bench.h"

enum { ASYNC_N = 100000, SYNC_N = 10000, RUNS = 3 };

__global__ void empty() {}

int main()
{
	double a[RUNS], s[RUNS];

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < 1000; i++)
		empty<<<1, 1>>>();
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());

	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s();

		for (int i = 0; i < ASYNC_N; i++)
			empty<<<1, 1>>>();
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		a[r] = (now_s() - t0) / ASYNC_N;
	}
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s();

		for (int i = 0; i < SYNC_N; i++) {
			empty<<<1, 1>>>();
			CK(cudaDeviceSynchronize());
		}
		CK(cudaGetLastError());
		s[r] = (now_s() - t0) / SYNC_N;
	}
	printf("LAUNCH async_us_per_launch %.3f\n", median_of(a, RUNS) * 1e6);
	printf("LAUNCH sync_us_per_launch %.3f\n", median_of(s, RUNS) * 1e6);
	return 0;
}
