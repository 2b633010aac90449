// SPDX-License-Identifier: MIT
// cappage: stream capture of cudaMemcpyAsync between pageable host memory
// (malloc) and the device, around a kernel.  The graph reads the source
// and writes the destination when it runs: each of 5 launches sees that
// round's input.  Through xgpu the library captures each such copy as
// one node standing for the memcpy node (a child graph of a host node
// and a copy through a pinned buffer of its own): the graph's nodes and
// edges are printed, to equal native's.  A copy on a second stream that
// joined the capture between two kernels reads the first one's output.
// Then the same for cudaMemcpy2DAsync (pageable rows with a pitch and an
// offset of their own) and cudaMemcpy3DAsync (pageable slices to a
// cudaMalloc3D volume).  Prints each round's checksum or verdict, then
// "PASS cappage" or "FAIL cappage".
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
	{
		size_t edges = 0;

		CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
		printf("graph: %zu nodes, %zu edges\n", nodes, edges);
	}
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(g));

	/* a pageable copy on a second stream that joined the capture
	 * between two kernels of the first: it reads the first kernel's
	 * output, not the second's */
	{
		cudaStream_t b;
		cudaEvent_t e1, e2;
		size_t edges = 0;

		CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
		CK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		twice_plus<<<(n + 255) / 256, 256, 0, s>>>(din, dout, n, 1);
		CK(cudaEventRecord(e1, s));
		CK(cudaStreamWaitEvent(b, e1, 0));
		CK(cudaMemcpyAsync(dst, dout, n * sizeof(int),
				   cudaMemcpyDeviceToHost, b));
		CK(cudaEventRecord(e2, b));
		CK(cudaStreamWaitEvent(s, e2, 0));
		twice_plus<<<(n + 255) / 256, 256, 0, s>>>(din, dout, n, 100);
		CK(cudaStreamEndCapture(s, &g));
		CK(cudaGraphGetNodes(g, NULL, &nodes));
		CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
		printf("joined graph: %zu nodes, %zu edges\n", nodes, edges);
		CK(cudaGraphInstantiate(&x, g, 0));
		for (int r = 0; r < 3; r++) {
			bool good = true;

			for (int i = 0; i < n; i++)
				src[i] = i * 3 + r;
			CK(cudaMemcpy(din, src, n * sizeof(int),
				      cudaMemcpyHostToDevice));
			memset(dst, 0, n * sizeof(int));
			CK(cudaGraphLaunch(x, s));
			CK(cudaStreamSynchronize(s));
			for (int i = 0; i < n; i++)
				good &= dst[i] == 2 * src[i] + 1;
			printf("joined round %d: %s\n", r,
			       good ? "right" : "WRONG");
			ok &= good;
		}
		CK(cudaGraphExecDestroy(x));
		CK(cudaGraphDestroy(g));
		CK(cudaEventDestroy(e1));
		CK(cudaEventDestroy(e2));
		CK(cudaStreamDestroy(b));
	}

	/* 2D: pageable rows of their own pitch, at an offset, to pitched
	 * device memory and back into other pageable rows */
	{
		enum { W = 300, H = 40, SP = 512, DP = 333, OFF = 7 };
		unsigned char *hs = (unsigned char *)malloc(SP * H),
			      *hd = (unsigned char *)malloc(DP * H), *dd;
		size_t dpitch = 0;

		CK(cudaMallocPitch((void **)&dd, &dpitch, W, H));
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		CK(cudaMemcpy2DAsync(dd, dpitch, hs + OFF, SP, W, H,
				     cudaMemcpyHostToDevice, s));
		CK(cudaMemcpy2DAsync(hd + OFF, DP, dd, dpitch, W, H,
				     cudaMemcpyDeviceToHost, s));
		CK(cudaStreamEndCapture(s, &g));
		CK(cudaGraphInstantiate(&x, g, 0));
		for (int r = 0; r < 3; r++) {
			bool good = true;

			for (int i = 0; i < SP * H; i++)
				hs[i] = (unsigned char)(i * 3 + r * 11);
			memset(hd, 0xAB, DP * H);
			CK(cudaGraphLaunch(x, s));
			CK(cudaStreamSynchronize(s));
			for (int y = 0; y < H; y++)
				for (int c = 0; c < DP; c++) {
					bool in = c >= OFF && c < OFF + W;
					unsigned char want = in ?
						hs[y * SP + c] : 0xAB;

					good &= hd[y * DP + c] == want;
				}
			printf("2d round %d: %s\n", r, good ? "right" : "WRONG");
			ok &= good;
		}
		CK(cudaGraphExecDestroy(x));
		CK(cudaGraphDestroy(g));
		CK(cudaFree(dd));
		free(hs);
		free(hd);
	}
	/* 3D: pageable slices to a cudaMalloc3D volume and back */
	{
		enum { W = 64, H = 10, D = 4 };
		unsigned char *hs = (unsigned char *)malloc(W * H * D),
			      *hd = (unsigned char *)malloc(W * H * D);
		cudaExtent ext = make_cudaExtent(W, H, D);
		cudaPitchedPtr dv;
		cudaMemcpy3DParms in = {}, out = {};

		CK(cudaMalloc3D(&dv, ext));
		in.srcPtr = make_cudaPitchedPtr(hs, W, W, H);
		in.dstPtr = dv;
		in.extent = ext;
		in.kind = cudaMemcpyHostToDevice;
		out.srcPtr = dv;
		out.dstPtr = make_cudaPitchedPtr(hd, W, W, H);
		out.extent = ext;
		out.kind = cudaMemcpyDeviceToHost;
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		CK(cudaMemcpy3DAsync(&in, s));
		CK(cudaMemcpy3DAsync(&out, s));
		CK(cudaStreamEndCapture(s, &g));
		CK(cudaGraphInstantiate(&x, g, 0));
		for (int r = 0; r < 3; r++) {
			for (int i = 0; i < W * H * D; i++)
				hs[i] = (unsigned char)(i * 13 + r * 5);
			memset(hd, 0, W * H * D);
			CK(cudaGraphLaunch(x, s));
			CK(cudaStreamSynchronize(s));
			bool good = !memcmp(hs, hd, W * H * D);
			printf("3d round %d: %s\n", r, good ? "right" : "WRONG");
			ok &= good;
		}
		CK(cudaGraphExecDestroy(x));
		CK(cudaGraphDestroy(g));
		CK(cudaFree(dv.ptr));
		free(hs);
		free(hd);
	}
	printf("%s cappage\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
