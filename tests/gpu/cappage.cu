// SPDX-License-Identifier: MIT
// cappage: stream capture of cudaMemcpyAsync between pageable host memory
// (malloc) and the device, around a kernel.  The graph reads the source
// and writes the destination when it runs: each of 5 launches sees that
// round's input.  Through xgpu the library captures each such copy as a
// host node and a copy through a pinned buffer of its own.  Prints each
// round's checksum, then "PASS cappage" or "FAIL cappage".
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x)                                                              \
	do {                                                               \
		cudaError_t e_ = (x);                                      \
		if (e_ != cudaSuccess) {                                   \
			printf("FAIL %s: %s\nFAIL cappage\n", #x,          \
			       cudaGetErrorName(e_));                      \
			return 1;                                          \
		}                                                          \
	} while (0)

__global__ void twice_plus(const int *in, int *out, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = 2 * in[i] + k;
}

int main(void)
{
	const int n = 100000;
	int *src = (int *)malloc(n * sizeof(int)),
	    *dst = (int *)malloc(n * sizeof(int)), *din, *dout;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;
	size_t nodes = 0;
	bool ok = true;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&din, n * sizeof(int)));
	CK(cudaMalloc(&dout, n * sizeof(int)));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemcpyAsync(din, src, n * sizeof(int), cudaMemcpyHostToDevice,
			   s));
	twice_plus<<<(n + 255) / 256, 256, 0, s>>>(din, dout, n, 7);
	CK(cudaMemcpyAsync(dst, dout, n * sizeof(int), cudaMemcpyDefault, s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphGetNodes(g, NULL, &nodes));
	CK(cudaGraphInstantiate(&x, g, 0));
	for (int r = 0; r < 5; r++) {
		unsigned sum = 0;
		bool good = true;

		for (int i = 0; i < n; i++)
			src[i] = i * (r + 1) - 3 * r;
		memset(dst, 0, n * sizeof(int));
		CK(cudaGraphLaunch(x, s));
		CK(cudaStreamSynchronize(s));
		for (int i = 0; i < n; i++) {
			good &= dst[i] == 2 * src[i] + 7;
			sum = sum * 31 + (unsigned)dst[i];
		}
		printf("round %d: checksum %08x %s\n", r, sum,
		       good ? "right" : "WRONG");
		ok &= good;
	}
	printf("graph has %s nodes\n", nodes >= 3 ? "at least 3" : "too few");
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(g));
	printf("%s cappage\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
