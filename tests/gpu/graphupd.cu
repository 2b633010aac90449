// graphupd: updating graphs in place, as frameworks do to replay a graph
// with new arguments without instantiating it again: a graph built by
// hand, node types read back, a dependency added, then
// cudaGraphExecKernelNodeSetParams and cudaGraphKernelNodeSetParams with
// new kernel arguments, each replay checked.
//
// Output: deterministic result lines, then "PASS graphupd" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <vector>

#include "check.h"

__global__ void setv(float *x, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = v;
}

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= a;
}

static double sum_of(const float *d, int n)
{
	std::vector<float> h(n);
	double s = 0;

	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (float v : h)
		s += v;
	return s;
}

int main()
{
	const int n = 4096;
	float *x, v = 1.0f, a = 3.0f;
	int nn = n;
	cudaGraph_t g;
	cudaGraphNode_t k1, k2;
	cudaGraphExec_t ge;
	cudaStream_t s;

	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaStreamCreate(&s));
	CK(cudaGraphCreate(&g, 0));
	void *a1[] = { &x, &v, &nn };
	cudaKernelNodeParams p1 = {};
	p1.func = (void *)setv;
	p1.gridDim = dim3(n / 256);
	p1.blockDim = dim3(256);
	p1.kernelParams = a1;
	CK(cudaGraphAddKernelNode(&k1, g, NULL, 0, &p1));
	void *a2[] = { &x, &a, &nn };
	cudaKernelNodeParams p2 = p1;
	p2.func = (void *)scale;
	p2.kernelParams = a2;
	CK(cudaGraphAddKernelNode(&k2, g, NULL, 0, &p2));
	CK(cudaGraphAddDependencies(g, &k1, &k2, NULL, 1));	// set, then scale
	cudaGraphNodeType t;
	CK(cudaGraphNodeGetType(k2, &t));
	printf("node type kernel: %d\n", t == cudaGraphNodeTypeKernel);
	size_t roots = 0;
	CK(cudaGraphGetRootNodes(g, NULL, &roots));
	printf("roots after the dependency: %zu\n", roots);

	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("replay: sum %.0f\n", sum_of(x, n));		// 1 * 3

	a = 5.0f;	// the executable graph gets scale's new argument
	CK(cudaGraphExecKernelNodeSetParams(ge, k2, &p2));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("exec node updated: sum %.0f\n", sum_of(x, n));	// 1 * 5

	v = 2.0f;	// the graph's own node, then a new instantiation
	CK(cudaGraphKernelNodeSetParams(k1, &p1));
	cudaGraphExec_t ge2;
	CK(cudaGraphInstantiate(&ge2, g, 0));
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("graph node updated: sum %.0f\n", sum_of(x, n));	// 2 * 5

	CK(cudaGraphExecDestroy(ge2));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(x));
	printf("PASS graphupd\n");
	return 0;
}
