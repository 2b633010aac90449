// SPDX-License-Identifier: MIT
// graphpage: memcpy nodes built with the graph API (not captured) whose
// host side is pageable memory (malloc): cudaGraphAddMemcpyNode1D from a
// pageable buffer, a kernel node, cudaGraphAddMemcpyNode back into another
// pageable buffer; then rows with a pitch and an offset of their own
// (cudaGraphAddMemcpyNode with make_cudaPitchedPtr) and slices of a 3D copy.
// The graph reads the source and writes the destination each time it runs:
// every launch sees that round's input.  Through xgpu such a node is a
// child graph of a host node and a copy through a pinned buffer; its type
// still reads as a memcpy node.  Last, copies between two host buffers:
// a graph-API memcpy node (cudaMemcpyHostToHost, rows of their own pitch)
// and a cudaMemcpyAsync between two malloc buffers captured on a stream;
// each launch copies that round's bytes, the capture none.
// Prints each round's checksum or verdict,
// then "PASS graphpage" or "FAIL graphpage".
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x)                                                              \
	do {                                                               \
		cudaError_t e_ = (x);                                      \
		if (e_ != cudaSuccess) {                                   \
			printf("FAIL %s: %s\nFAIL graphpage\n", #x,        \
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

__global__ void add_one(unsigned char *p, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = (unsigned char)(p[i] + 1);
}

// 1D: H2D node, kernel node, D2H node
static int linear(bool *ok)
{
	const int n = 100000;
	int *src = (int *)malloc(n * sizeof(int)),
	    *dst = (int *)malloc(n * sizeof(int)), *din, *dout;
	int nn = n, k = 5;
	void *args[] = { &din, &dout, &nn, &k };
	cudaGraph_t g;
	cudaGraphExec_t x;
	cudaGraphNode_t in, kern, out;
	cudaGraphNodeType t;
	cudaKernelNodeParams kp = {};
	cudaStream_t s;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&din, n * sizeof(int)));
	CK(cudaMalloc(&dout, n * sizeof(int)));
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemcpyNode1D(&in, g, NULL, 0, din, src,
				    n * sizeof(int), cudaMemcpyHostToDevice));
	kp.func = (void *)twice_plus;
	kp.gridDim = dim3((n + 255) / 256);
	kp.blockDim = dim3(256);
	kp.kernelParams = args;
	CK(cudaGraphAddKernelNode(&kern, g, &in, 1, &kp));
	CK(cudaGraphAddMemcpyNode1D(&out, g, &kern, 1, dst, dout,
				    n * sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaGraphNodeGetType(in, &t));
	printf("1d: the first node is %s\n",
	       t == cudaGraphNodeTypeMemcpy ? "a memcpy node" : "ANOTHER KIND");
	*ok &= t == cudaGraphNodeTypeMemcpy;
	CK(cudaGraphInstantiate(&x, g, 0));
	for (int r = 0; r < 4; r++) {
		unsigned sum = 0;
		bool good = true;

		for (int i = 0; i < n; i++)
			src[i] = i * (r + 2) - 5 * r;
		memset(dst, 0, n * sizeof(int));
		CK(cudaGraphLaunch(x, s));
		CK(cudaStreamSynchronize(s));
		for (int i = 0; i < n; i++) {
			good &= dst[i] == 2 * src[i] + 5;
			sum = sum * 31 + (unsigned)dst[i];
		}
		printf("1d round %d: checksum %08x %s\n", r, sum,
		       good ? "right" : "WRONG");
		*ok &= good;
	}
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(g));
	CK(cudaFree(din));
	CK(cudaFree(dout));
	CK(cudaStreamDestroy(s));
	free(src);
	free(dst);
	return 0;
}

// rows (2D) and slices (3D) of pageable memory with a pitch and an offset
// of their own, through a pitched device volume, each byte plus one
static int pitched(bool *ok, int depth)
{
	const size_t w = 1000, hp = 1600, rows = 7, hx = 300;
	const size_t slice = hp * (rows + 2), bytes = slice * depth;
	unsigned char *src = (unsigned char *)malloc(bytes),
		      *dst = (unsigned char *)malloc(bytes);
	cudaExtent ext = make_cudaExtent(w, rows, depth);
	cudaPitchedPtr dv;
	cudaMemcpy3DParms in = {}, out = {};
	cudaGraph_t g;
	cudaGraphExec_t x;
	cudaGraphNode_t a, b, c;
	cudaKernelNodeParams kp = {};
	unsigned char *base;
	size_t total;
	void *args[] = { &base, &total };
	cudaStream_t s;
	const char *name = depth > 1 ? "3d" : "2d";

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc3D(&dv, ext));
	base = (unsigned char *)dv.ptr;
	total = dv.pitch * rows * depth;
	in.srcPtr = make_cudaPitchedPtr(src, hp, hp, rows + 2);
	in.srcPos = make_cudaPos(hx, 1, 0);
	in.dstPtr = dv;
	in.extent = ext;
	in.kind = cudaMemcpyHostToDevice;
	out.srcPtr = dv;
	out.dstPtr = make_cudaPitchedPtr(dst, hp, hp, rows + 2);
	out.dstPos = make_cudaPos(hx, 1, 0);
	out.extent = ext;
	out.kind = cudaMemcpyDeviceToHost;
	kp.func = (void *)add_one;
	kp.gridDim = dim3((unsigned)((total + 255) / 256));
	kp.blockDim = dim3(256);
	kp.kernelParams = args;
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemcpyNode(&a, g, NULL, 0, &in));
	CK(cudaGraphAddKernelNode(&b, g, &a, 1, &kp));
	CK(cudaGraphAddMemcpyNode(&c, g, &b, 1, &out));
	CK(cudaGraphInstantiate(&x, g, 0));
	for (int r = 0; r < 3; r++) {
		unsigned sum = 0;
		bool good = true;

		for (size_t i = 0; i < bytes; i++)
			src[i] = (unsigned char)(i * 7 + r * 13);
		memset(dst, 0xee, bytes);
		CK(cudaGraphLaunch(x, s));
		CK(cudaStreamSynchronize(s));
		for (size_t i = 0; i < bytes; i++) {
			size_t z = i / slice, y = i % slice / hp,
			       col = i % hp;
			bool in_copy = (int)z < depth && y >= 1 &&
				       y < 1 + rows && col >= hx &&
				       col < hx + w;
			unsigned char want = in_copy ?
				(unsigned char)(src[i] + 1) : 0xee;

			good &= dst[i] == want;
			sum = sum * 31 + dst[i];
		}
		printf("%s round %d: checksum %08x %s\n", name, r, sum,
		       good ? "right" : "WRONG");
		*ok &= good;
	}
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(g));
	CK(cudaFree(dv.ptr));
	CK(cudaStreamDestroy(s));
	free(src);
	free(dst);
	return 0;
}

// host to host: a graph-API node of rows, and a captured 1D copy
static int host_to_host(bool *ok)
{
	const size_t n = 64 * 1024, w = 3000, sp = 4096, dp = 3500, rows = 9;
	unsigned char *a = (unsigned char *)malloc(n),
		      *b = (unsigned char *)malloc(n),
		      *c = (unsigned char *)malloc(n);
	cudaMemcpy3DParms p = {};
	cudaGraph_t g, cg;
	cudaGraphExec_t x, cx;
	cudaGraphNode_t node;
	cudaGraphNodeType t;
	cudaStream_t s;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	p.srcPtr = make_cudaPitchedPtr(a + 100, sp, w, rows);
	p.dstPtr = make_cudaPitchedPtr(b + 7, dp, w, rows);
	p.extent = make_cudaExtent(w, rows, 1);
	p.kind = cudaMemcpyHostToHost;
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemcpyNode(&node, g, NULL, 0, &p));
	CK(cudaGraphNodeGetType(node, &t));
	printf("h2h: the node is %s\n",
	       t == cudaGraphNodeTypeMemcpy ? "a memcpy node" : "ANOTHER KIND");
	*ok &= t == cudaGraphNodeTypeMemcpy;
	CK(cudaGraphInstantiate(&x, g, 0));
	memset(c, 0x5a, n);
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemcpyAsync(c, a, n, cudaMemcpyDefault, s));
	CK(cudaStreamEndCapture(s, &cg));
	CK(cudaGraphInstantiate(&cx, cg, 0));
	printf("h2h: the capture copied %s\n", c[0] == 0x5a ? "nothing" :
	       "BYTES");
	*ok &= c[0] == 0x5a;
	for (int r = 0; r < 3; r++) {
		bool good = true;

		for (size_t i = 0; i < n; i++)
			a[i] = (unsigned char)(i * 7 + r * 13);
		memset(b, 0xee, n);
		memset(c, 0, n);
		CK(cudaGraphLaunch(x, s));
		CK(cudaGraphLaunch(cx, s));
		CK(cudaStreamSynchronize(s));
		for (size_t i = 0; i < n; i++) {
			size_t row = i >= 7 ? (i - 7) / dp : rows,
			       col = i >= 7 ? (i - 7) % dp : 0;
			unsigned char want = row < rows && col < w ?
				a[100 + row * sp + col] : 0xee;

			good &= b[i] == want && c[i] == a[i];
		}
		printf("h2h round %d: %s\n", r, good ? "right" : "WRONG");
		*ok &= good;
	}
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphExecDestroy(cx));
	CK(cudaGraphDestroy(g));
	CK(cudaGraphDestroy(cg));
	CK(cudaStreamDestroy(s));
	free(a);
	free(b);
	free(c);
	return 0;
}

int main(void)
{
	bool ok = true;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (linear(&ok) || pitched(&ok, 1) || pitched(&ok, 3) ||
	    host_to_host(&ok))
		return 1;
	printf("%s graphpage\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
