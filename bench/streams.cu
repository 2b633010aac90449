// streams: concurrency inside one process, the way many-stream programs
// use the GPU.
//   many:    K streams (8, then 32), each given ROUNDS short kernels of
//            fixed work (one block; about 20-40 us alone on an H100/H200),
//            issued round-robin across the streams from one thread, then
//            one cudaDeviceSynchronize; natively the kernels of different
//            streams run at the same time.  Wall time in ms (median of 3).
//   overlap: 4 streams, each iteration a pinned 4 MiB copy to the device,
//            a kernel over it and a copy back, on each stream; copies of
//            one stream overlap kernels of another.  Time per iteration
//            in ms (median of 3 runs of ITERS).
// With --turns (bench/pair.c) each sample is one run of each.
// Output:
//   STREAMS many_8_ms <x>
//   STREAMS many_32_ms <x>
//   STREAMS overlap4_ms_per_iter <x>
// On a CUDA error: "FAIL <call>: <error name>", exit 1.
#include "bench.h"

enum { ROUNDS = 200, RUNS = 3, ITERS = 50, MAXS = 32 };
static const size_t CHUNK = 4u << 20;	/* bytes per stream per iteration */

// fixed work: a dependent chain of multiply-adds per thread
__global__ void work(float *out, int iters)
{
	float x = threadIdx.x * 0.001f, y = 1.0001f;

	for (int i = 0; i < iters; i++)
		x = x * y + 0.0001f;
	if (x == -1.0f)		/* never: keeps the chain */
		out[threadIdx.x] = x;
}

__global__ void scale(float *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = p[i] * 2.0f + 1.0f;
}

static double many(cudaStream_t *s, int k, float *sink, int runs)
{
	double t[RUNS];

	for (int r = 0; r < runs; r++) {
		double t0 = now_s();

		for (int i = 0; i < ROUNDS; i++)
			for (int j = 0; j < k; j++)
				work<<<1, 128, 0, s[j]>>>(sink, 20000);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		t[r] = (now_s() - t0) * 1e3;
	}
	return median_of(t, runs);
}

// ms per iteration of copy + kernel + copy on 4 streams
static double overlap(cudaStream_t *s, float **h, float **d, int runs)
{
	double t[RUNS];

	for (int r = 0; r < runs; r++) {
		double t0 = now_s();

		for (int it = 0; it < ITERS; it++) {
			for (int i = 0; i < 4; i++) {
				CK(cudaMemcpyAsync(d[i], h[i], CHUNK,
						   cudaMemcpyHostToDevice,
						   s[i]));
				scale<<<264, 256, 0, s[i]>>>(
					d[i], CHUNK / sizeof(float));
				CK(cudaMemcpyAsync(h[i], d[i], CHUNK,
						   cudaMemcpyDeviceToHost,
						   s[i]));
			}
		}
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		t[r] = (now_s() - t0) * 1e3 / ITERS;
	}
	return median_of(t, runs);
}

int main(int argc, char **argv)
{
	cudaStream_t s[MAXS];
	float *sink, *h[4], *d[4];

	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cudaMalloc(&sink, 128 * sizeof(float)));
	for (int i = 0; i < MAXS; i++)
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
	/* warm up: the module, the streams */
	many(s, MAXS, sink, 1);

	for (int i = 0; i < 4; i++) {
		CK(cudaMallocHost(&h[i], CHUNK));
		CK(cudaMalloc(&d[i], CHUNK));
		for (size_t j = 0; j < CHUNK / sizeof(float); j++)
			h[i][j] = (float)j;
	}
	if (bench_turns(argc, argv)) {
		while (bench_turn_wait()) {
			printf("STREAMS many_8_ms %.3f\n", many(s, 8, sink, 1));
			printf("STREAMS many_32_ms %.3f\n",
			       many(s, 32, sink, 1));
			printf("STREAMS overlap4_ms_per_iter %.3f\n",
			       overlap(s, h, d, 1));
			bench_turn_end();
		}
	} else {
		printf("STREAMS many_8_ms %.3f\n", many(s, 8, sink, RUNS));
		printf("STREAMS many_32_ms %.3f\n", many(s, 32, sink, RUNS));
		printf("STREAMS overlap4_ms_per_iter %.3f\n",
		       overlap(s, h, d, RUNS));
	}

	for (int i = 0; i < 4; i++) {
		CK(cudaFreeHost(h[i]));
		CK(cudaFree(d[i]));
	}
	for (int i = 0; i < MAXS; i++)
		CK(cudaStreamDestroy(s[i]));
	CK(cudaFree(sink));
	return 0;
}
