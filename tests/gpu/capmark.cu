// capmark: CUDA graph capture right after work on the same stream, as
// PyTorch does it (warm-up on a side stream, then capture on it, or a
// stream joined to a capture by an event), with pauses inside the
// capture so that xgpu's worker goes idle and its GPU scheduler marks
// the work it has (a mark must never land in the capture).
//  - own-nb:  non-blocking stream S, 200 kernels, capture begun on S (GLOBAL),
//             10 kernels captured, 20 ms pause, end, instantiate, launch
//  - own-blk: the same on a blocking stream
//  - join:    capture begun on C, 200 kernels on S, S joined by an event,
//             10 kernels on S captured, S joined back, pause, end on C
// Each of 10 rounds checks that captured kernels did not run before the
// graph's launch and ran once after it.
//
// Output: deterministic lines, then "PASS capmark" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "check.h"

__global__ void add1(int *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] += 1;
}

static const int N = 4096, B = 256, G = N / B;

static int value(const int *d)
{
	int h[N];

	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 1; i < N; i++) {
		if (h[i] != h[0]) {
			printf("FAIL cell %d: %d, cell 0: %d\n", i, h[i], h[0]);
			exit(1);
		}
	}
	return h[0];
}

static void launch_graph(cudaGraph_t g, cudaStream_t s)
{
	cudaGraphExec_t x;

	CK(cudaGraphInstantiate(&x, g, 0));
	CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(g));
}

static void own(const char *name, unsigned int flags, int *d)
{
	cudaStream_t s;

	CK(cudaStreamCreateWithFlags(&s, flags));
	for (int r = 0; r < 10; r++) {
		cudaGraph_t g;
		int v0;

		for (int i = 0; i < 200; i++)
			add1<<<G, B, 0, s>>>(d, N);
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		for (int i = 0; i < 10; i++) {
			add1<<<G, B, 0, s>>>(d, N);
			if (i == 4)
				usleep(20000);
		}
		usleep(20000);
		CK(cudaStreamEndCapture(s, &g));
		CK(cudaStreamSynchronize(s));
		v0 = value(d);
		launch_graph(g, s);
		if (value(d) != v0 + 10) {
			printf("FAIL %s round %d: %d after the graph, want %d\n",
			       name, r, value(d), v0 + 10);
			exit(1);
		}
	}
	CK(cudaStreamDestroy(s));
	printf("%s: 10 rounds, %d\n", name, value(d));
}

static void join(int *d)
{
	cudaStream_t c, s;
	cudaEvent_t f, j;

	CK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&f, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&j, cudaEventDisableTiming));
	for (int r = 0; r < 10; r++) {
		cudaGraph_t g;
		int v0;

		CK(cudaStreamBeginCapture(c, cudaStreamCaptureModeGlobal));
		for (int i = 0; i < 200; i++)
			add1<<<G, B, 0, s>>>(d, N);
		CK(cudaEventRecord(f, c));
		CK(cudaStreamWaitEvent(s, f, 0));
		for (int i = 0; i < 10; i++)
			add1<<<G, B, 0, s>>>(d, N);
		CK(cudaEventRecord(j, s));
		CK(cudaStreamWaitEvent(c, j, 0));
		usleep(20000);
		CK(cudaStreamEndCapture(c, &g));
		CK(cudaStreamSynchronize(s));
		v0 = value(d);
		launch_graph(g, c);
		if (value(d) != v0 + 10) {
			printf("FAIL join round %d: %d after the graph, want %d\n",
			       r, value(d), v0 + 10);
			exit(1);
		}
	}
	CK(cudaEventDestroy(f));
	CK(cudaEventDestroy(j));
	CK(cudaStreamDestroy(s));
	CK(cudaStreamDestroy(c));
	printf("join: 10 rounds, %d\n", value(d));
}

int main()
{
	int *d;

	CK(cudaMalloc(&d, N * sizeof(int)));
	CK(cudaMemset(d, 0, N * sizeof(int)));
	own("own-nb", cudaStreamNonBlocking, d);
	own("own-blk", cudaStreamDefault, d);
	join(d);
	CK(cudaFree(d));
	printf("PASS capmark\n");
	return 0;
}
