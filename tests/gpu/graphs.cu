// graphs: CUDA graphs as the samples (simpleCudaGraphs, graphMemoryNodes
// style) and frameworks use them.
//  - stream capture of kernels, a memset and device copies on two streams
//    joined by events, cudaStreamGetCaptureInfo while capturing,
//    instantiate, launch many times, results checked
//  - a graph built by hand: kernel nodes with dependencies, a memset
//    node, a device-to-device memcpy node, an empty node, a child graph,
//    event record node; cudaGraphGetNodes / GetRootNodes counts; clone
//  - cudaGraphExecUpdate with changed kernel arguments (captured again)
//  - a pinned-memory copy captured and replayed (a pageable one is not
//    tried: the driver records it, xgpu refuses it, README)
//
// Output: deterministic result lines, then "PASS graphs" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

__global__ void axpb(float *x, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = a * x[i] + b;
}

__global__ void addv(float *d, const float *s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		d[i] += s[i];
}

static double sum(const std::vector<float> &v)
{
	double s = 0;

	for (float f : v)
		s += f;
	return s;
}

int main()
{
	const int n = 1 << 16, B = 256, G = (n + B - 1) / B;
	const size_t bytes = n * sizeof(float);
	std::vector<float> h(n);
	float *x, *y, *z;
	cudaStream_t s1, s2;
	cudaEvent_t fork, join;

	CK(cudaMalloc(&x, bytes));
	CK(cudaMalloc(&y, bytes));
	CK(cudaMalloc(&z, bytes));
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

	// 1. capture across two streams
	cudaGraph_t g;
	cudaStreamCaptureStatus st;
	unsigned long long id = 0;
	CK(cudaStreamIsCapturing(s1, &st));
	printf("capturing before: %d\n", (int)st);
	CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
	CK(cudaMemsetAsync(x, 0, bytes, s1));
	CK(cudaEventRecord(fork, s1));
	CK(cudaStreamWaitEvent(s2, fork, 0));
	axpb<<<G, B, 0, s1>>>(x, 1.0f, 1.0f, n);	// x = 1 (+1 per launch)
	CK(cudaMemsetAsync(y, 0, bytes, s2));
	axpb<<<G, B, 0, s2>>>(y, 1.0f, 2.0f, n);	// y = 2
	CK(cudaEventRecord(join, s2));
	CK(cudaStreamWaitEvent(s1, join, 0));
	addv<<<G, B, 0, s1>>>(x, y, n);			// x = 3
	CK(cudaMemcpyAsync(z, x, bytes, cudaMemcpyDeviceToDevice, s1));
	CK(cudaStreamGetCaptureInfo(s1, &st, &id));
	printf("capturing during: %d, id nonzero: %d\n", (int)st, id != 0);
	CK(cudaStreamIsCapturing(s2, &st));
	printf("joined stream capturing: %d\n", (int)st);
	CK(cudaStreamEndCapture(s1, &g));
	size_t nn = 0;
	CK(cudaGraphGetNodes(g, NULL, &nn));
	printf("captured nodes: %zu\n", nn);
	cudaGraphExec_t ge;
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < 20; i++)
		CK(cudaGraphLaunch(ge, s1));
	CK(cudaStreamSynchronize(s1));
	CK(cudaMemcpy(h.data(), z, bytes, cudaMemcpyDeviceToHost));
	printf("captured graph x20: sum %.0f\n", sum(h));

	// 2. update the executable graph with new kernel arguments
	cudaGraph_t g2;
	CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
	CK(cudaMemsetAsync(x, 0, bytes, s1));
	CK(cudaEventRecord(fork, s1));
	CK(cudaStreamWaitEvent(s2, fork, 0));
	axpb<<<G, B, 0, s1>>>(x, 1.0f, 5.0f, n);	// x = 5
	CK(cudaMemsetAsync(y, 0, bytes, s2));
	axpb<<<G, B, 0, s2>>>(y, 1.0f, 7.0f, n);	// y = 7
	CK(cudaEventRecord(join, s2));
	CK(cudaStreamWaitEvent(s1, join, 0));
	addv<<<G, B, 0, s1>>>(x, y, n);			// x = 12
	CK(cudaMemcpyAsync(z, x, bytes, cudaMemcpyDeviceToDevice, s1));
	CK(cudaStreamEndCapture(s1, &g2));
	cudaGraphExecUpdateResultInfo info;
	CK(cudaGraphExecUpdate(ge, g2, &info));
	printf("exec update result: %d\n", (int)info.result);
	CK(cudaGraphLaunch(ge, s1));
	CK(cudaStreamSynchronize(s1));
	CK(cudaMemcpy(h.data(), z, bytes, cudaMemcpyDeviceToHost));
	printf("updated graph: sum %.0f\n", sum(h));

	// 3. a graph built by hand
	cudaGraph_t hg, child, cl;
	cudaGraphNode_t ms, k1, k2, cp, em, ch, ck, ev;
	CK(cudaGraphCreate(&hg, 0));
	cudaMemsetParams mp = {};
	mp.dst = y;
	mp.value = 0;
	mp.elementSize = 4;
	mp.width = n;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&ms, hg, NULL, 0, &mp));
	float a = 1.0f, b = 3.0f;
	int nv = n;
	void *args1[] = { &y, &a, &b, &nv };
	cudaKernelNodeParams kp = {};
	kp.func = (void *)axpb;
	kp.gridDim = dim3(G);
	kp.blockDim = dim3(B);
	kp.kernelParams = args1;
	CK(cudaGraphAddKernelNode(&k1, hg, &ms, 1, &kp));	// y = 3
	CK(cudaGraphAddMemcpyNode1D(&cp, hg, &k1, 1, z, y, bytes,
				    cudaMemcpyDeviceToDevice));	// z = 3
	CK(cudaGraphAddEmptyNode(&em, hg, &cp, 1));
	void *args2[] = { &z, &y, &nv };
	kp.func = (void *)addv;
	kp.kernelParams = args2;
	CK(cudaGraphAddKernelNode(&k2, hg, &em, 1, &kp));	// z = 6
	CK(cudaGraphCreate(&child, 0));
	float a2 = 2.0f, b2 = 0.0f;
	void *args3[] = { &z, &a2, &b2, &nv };
	kp.func = (void *)axpb;
	kp.kernelParams = args3;
	CK(cudaGraphAddKernelNode(&ck, child, NULL, 0, &kp));	// z = 12
	CK(cudaGraphAddChildGraphNode(&ch, hg, &k2, 1, child));
	CK(cudaGraphAddEventRecordNode(&ev, hg, &ch, 1, join));
	size_t roots = 0;
	CK(cudaGraphGetNodes(hg, NULL, &nn));
	CK(cudaGraphGetRootNodes(hg, NULL, &roots));
	std::vector<cudaGraphNode_t> nodes(nn);
	CK(cudaGraphGetNodes(hg, nodes.data(), &nn));
	int found = 0;
	for (auto nd : nodes)
		found += nd == k1 || nd == k2 || nd == ms;
	printf("built graph: %zu nodes, %zu roots, own nodes found %d\n", nn,
	       roots, found);
	CK(cudaGraphClone(&cl, hg));
	cudaGraphExec_t he;
	CK(cudaGraphInstantiateWithFlags(&he, cl, 0));
	CK(cudaGraphUpload(he, s2));
	CK(cudaGraphLaunch(he, s2));
	CK(cudaEventSynchronize(join));
	CK(cudaStreamSynchronize(s2));
	CK(cudaMemcpy(h.data(), z, bytes, cudaMemcpyDeviceToHost));
	printf("built graph (cloned): sum %.0f\n", sum(h));

	// 4. pinned host memory in a capture is recorded; pageable is not
	float *pin;
	CK(cudaMallocHost(&pin, bytes));
	cudaGraph_t g3;
	CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed));
	CK(cudaMemcpyAsync(pin, z, bytes, cudaMemcpyDeviceToHost, s1));
	CK(cudaStreamEndCapture(s1, &g3));
	cudaGraphExec_t e3;
	CK(cudaGraphInstantiate(&e3, g3, 0));
	CK(cudaGraphLaunch(e3, s1));
	CK(cudaStreamSynchronize(s1));
	double ps = 0;
	for (int i = 0; i < n; i++)
		ps += pin[i];
	printf("captured pinned copy: sum %.0f\n", ps);
	CK(cudaGraphExecDestroy(e3));
	CK(cudaGraphDestroy(g3));
	CK(cudaFreeHost(pin));
	CK(cudaGraphExecDestroy(he));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(cl));
	CK(cudaGraphDestroy(child));
	CK(cudaGraphDestroy(hg));
	CK(cudaGraphDestroy(g2));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaFree(x));
	CK(cudaFree(y));
	CK(cudaFree(z));
	printf("PASS graphs\n");
	return 0;
}
