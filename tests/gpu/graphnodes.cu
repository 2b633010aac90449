// graphnodes: graphs with host nodes, memcpy nodes to and from pinned
// memory, memset nodes and memory allocation and free nodes, as frameworks
// build them: host nodes run in order and see the copies before them,
// node queries (counts, types, edges), parameters read back and set in
// the graph and in the executable graph with a replay each, nodes disabled
// and enabled, a clone with a node found, an edge removed and a node
// destroyed, a stream capture with cudaLaunchHostFunc inside, and the dot
// file written at a path of this machine.
//
// Output: deterministic result lines, then "PASS graphnodes" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

__global__ void fill(int *x, int v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = v;
}

__global__ void twice(int *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= 2;
}

static const int n = 1024;
static int *hpin;		// pinned: the copies' host side
static char log_[4096];	// what host functions did, in order

static void say(const char *fmt, long v)
{
	size_t l = strlen(log_);

	snprintf(log_ + l, sizeof(log_) - l, fmt, v);
}

// after the copy to hpin: its sum, and hpin[0] becomes sum % 1000
static void CUDART_CB sum_fn(void *user)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += hpin[i];
	say("sum %ld;", s);
	hpin[0] = (int)(s % 1000) + (int)(long)user;
}

static void CUDART_CB mark_fn(void *user)
{
	say("mark %ld;", (long)user);
}

static volatile int destroyed;

// a user object's destructor: runs when the last reference goes
static void CUDART_CB uobj_destroy(void *user)
{
	printf("user object destructor: %ld\n", (long)user);
	fflush(stdout);
	destroyed = 1;
}

static void print_log(const char *what)
{
	printf("%s: %s\n", what, log_);
	log_[0] = 0;
}

static int first2(const int *d, int *b)
{
	int h[2];

	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	*b = h[1];
	return h[0];
}

// how many nodes of each type a graph has (types in enum order)
static void print_types(const char *what, cudaGraph_t g)
{
	cudaGraphNode_t nodes[32];
	size_t nn = 32;
	int count[32] = { 0 };

	CK(cudaGraphGetNodes(g, nodes, &nn));
	for (size_t i = 0; i < nn; i++) {
		cudaGraphNodeType t;

		CK(cudaGraphNodeGetType(nodes[i], &t));
		if ((int)t >= 0 && (int)t < 32)
			count[(int)t]++;
	}
	printf("%s: %zu nodes: kernel %d memcpy %d memset %d host %d "
	       "alloc %d free %d\n", what, nn,
	       count[cudaGraphNodeTypeKernel], count[cudaGraphNodeTypeMemcpy],
	       count[cudaGraphNodeTypeMemset], count[cudaGraphNodeTypeHost],
	       count[cudaGraphNodeTypeMemAlloc],
	       count[cudaGraphNodeTypeMemFree]);
}

int main()
{
	int *d, *d2, *d3, v = 1, nn = n, b;
	cudaStream_t s;
	cudaGraph_t g, clone, g2, gc;
	cudaGraphExec_t x, x2, xc;
	cudaGraphNode_t k1, c1, h1, c2, k2, m1, nodes[8];
	size_t cnt;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, n * sizeof(int)));
	CK(cudaMalloc(&d2, n * sizeof(int)));
	CK(cudaMalloc(&d3, n * sizeof(int)));
	CK(cudaMallocHost(&hpin, n * sizeof(int)));
	CK(cudaMemset(d3, 0, n * sizeof(int)));

	// k1: d = v; c1: d -> hpin; h1: sum, hpin[0] = sum % 1000;
	// c2: hpin -> d2; k2: d2 *= 2; m1 (a root of its own): d3 = 5
	CK(cudaGraphCreate(&g, 0));
	void *a1[] = { &d, &v, &nn };
	cudaKernelNodeParams kp = {};
	kp.func = (void *)fill;
	kp.gridDim = dim3(n / 256);
	kp.blockDim = dim3(256);
	kp.kernelParams = a1;
	CK(cudaGraphAddKernelNode(&k1, g, NULL, 0, &kp));
	CK(cudaGraphAddMemcpyNode1D(&c1, g, &k1, 1, hpin, d, n * sizeof(int),
				    cudaMemcpyDeviceToHost));
	cudaHostNodeParams hp = {};
	hp.fn = sum_fn;
	hp.userData = (void *)0;
	CK(cudaGraphAddHostNode(&h1, g, &c1, 1, &hp));
	CK(cudaGraphAddMemcpyNode1D(&c2, g, &h1, 1, d2, hpin,
				    n * sizeof(int), cudaMemcpyHostToDevice));
	void *a2[] = { &d2, &nn };
	cudaKernelNodeParams kp2 = kp;
	kp2.func = (void *)twice;
	kp2.kernelParams = a2;
	CK(cudaGraphAddKernelNode(&k2, g, &c2, 1, &kp2));
	cudaMemsetParams mp = {};
	mp.dst = d3;
	mp.value = 5;
	mp.elementSize = 4;
	mp.width = n;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&m1, g, NULL, 0, &mp));

	// queries
	print_types("graph", g);
	cnt = 0;
	CK(cudaGraphGetRootNodes(g, NULL, &cnt));
	printf("roots: %zu\n", cnt);
	cnt = 0;
	CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &cnt));
	printf("edges: %zu\n", cnt);
	cnt = 8;
	CK(cudaGraphNodeGetDependencies(h1, nodes, NULL, &cnt));
	printf("host node dependencies: %zu, the copy: %d\n", cnt,
	       cnt == 1 && nodes[0] == c1);
	cnt = 8;
	CK(cudaGraphNodeGetDependentNodes(c1, nodes, NULL, &cnt));
	printf("copy dependents: %zu, the host node: %d\n", cnt,
	       cnt == 1 && nodes[0] == h1);
	cudaHostNodeParams hq = {};
	CK(cudaGraphHostNodeGetParams(h1, &hq));
	printf("host node params back: %d\n",
	       hq.fn == sum_fn && hq.userData == (void *)0);
	cudaMemsetParams mq = {};
	CK(cudaGraphMemsetNodeGetParams(m1, &mq));
	printf("memset params back: value %u width %zu element %u\n",
	       mq.value, mq.width, mq.elementSize);
	cudaMemcpy3DParms cq = {};
	CK(cudaGraphMemcpyNodeGetParams(c1, &cq));
	printf("memcpy params back: to the pinned buffer %d, %zu bytes\n",
	       cq.dstPtr.ptr == hpin, cq.extent.width);

	// launch: 1024 ones summed; d2[0] = 2 * 24, d2[1] = 2
	CK(cudaGraphInstantiate(&x, g, 0));
	unsigned long long flags = 9;
	CK(cudaGraphExecGetFlags(x, &flags));
	printf("exec flags: %llu\n", flags);
	CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
	print_log("launch 1 host");
	printf("launch 1: d2 %d %d, d3 %d\n", first2(d2, &b), b,
	       first2(d3, &b));

	// the executable graph's host node and memset change, and k1's value
	hp.fn = sum_fn;
	hp.userData = (void *)100;
	CK(cudaGraphExecHostNodeSetParams(x, h1, &hp));
	mp.value = 9;
	CK(cudaGraphExecMemsetNodeSetParams(x, m1, &mp));
	v = 3;
	CK(cudaGraphExecKernelNodeSetParams(x, k1, &kp));
	CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
	print_log("launch 2 host");
	printf("launch 2: d2 %d %d, d3 %d\n", first2(d2, &b), b,
	       first2(d3, &b));
	CK(cudaGraphHostNodeGetParams(h1, &hq));
	printf("the graph's host node unchanged: %d\n",
	       hq.userData == (void *)0);

	// the memset disabled: d3 keeps what it has
	CK(cudaMemset(d3, 0, n * sizeof(int)));
	CK(cudaGraphNodeSetEnabled(x, m1, 0));
	unsigned int on = 7;
	CK(cudaGraphNodeGetEnabled(x, m1, &on));
	printf("memset enabled: %u\n", on);
	CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
	print_log("launch 3 host");
	printf("launch 3 (memset off): d3 %d\n", first2(d3, &b));
	CK(cudaGraphNodeSetEnabled(x, m1, 1));
	CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
	print_log("launch 4 host");
	printf("launch 4 (memset on): d3 %d\n", first2(d3, &b));

	// the graph's own host node changes: a new instantiation sees it
	hp.fn = mark_fn;
	hp.userData = (void *)7;
	CK(cudaGraphHostNodeSetParams(h1, &hp));
	CK(cudaGraphInstantiate(&x2, g, 0));
	CK(cudaGraphLaunch(x2, s));
	CK(cudaStreamSynchronize(s));
	print_log("new instantiation host");

	// a clone: a node found, an edge removed, a node destroyed
	CK(cudaGraphClone(&clone, g));
	cudaGraphNode_t hc;
	CK(cudaGraphNodeFindInClone(&hc, h1, clone));
	cudaGraphNodeType t;
	CK(cudaGraphNodeGetType(hc, &t));
	printf("found in the clone: host %d\n", t == cudaGraphNodeTypeHost);
	cudaGraphNode_t cc, mc;
	CK(cudaGraphNodeFindInClone(&cc, c1, clone));
	CK(cudaGraphNodeFindInClone(&mc, m1, clone));
	CK(cudaGraphRemoveDependencies(clone, &cc, &hc, NULL, 1));
	CK(cudaGraphDestroyNode(mc));
	cnt = 0;
	CK(cudaGraphGetEdges(clone, NULL, NULL, NULL, &cnt));
	printf("clone edges after a removal: %zu\n", cnt);
	print_types("clone after a destroy", clone);

	// memory nodes: alloc -> fill -> copy to pinned -> host -> free
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphCreate(&g2, 0));
	cudaMemAllocNodeParams ap = {};
	ap.poolProps.allocType = cudaMemAllocationTypePinned;
	ap.poolProps.location.type = cudaMemLocationTypeDevice;
	ap.poolProps.location.id = 0;
	ap.bytesize = n * sizeof(int);
	cudaGraphNode_t an, kn, cn, hn, fn;
	CK(cudaGraphAddMemAllocNode(&an, g2, NULL, 0, &ap));
	int *p = (int *)ap.dptr, four = 4;
	printf("allocation node address: %d\n", p != NULL);
	void *a3[] = { &p, &four, &nn };
	cudaKernelNodeParams kp3 = kp;
	kp3.kernelParams = a3;
	CK(cudaGraphAddKernelNode(&kn, g2, &an, 1, &kp3));
	CK(cudaGraphAddMemcpyNode1D(&cn, g2, &kn, 1, hpin, p,
				    n * sizeof(int), cudaMemcpyDeviceToHost));
	hp.fn = sum_fn;
	hp.userData = (void *)0;
	CK(cudaGraphAddHostNode(&hn, g2, &cn, 1, &hp));
	CK(cudaGraphAddMemFreeNode(&fn, g2, &hn, 1, p));
	print_types("memory graph", g2);
	cudaMemAllocNodeParams aq = {};
	CK(cudaGraphMemAllocNodeGetParams(an, &aq));
	printf("allocation back: %zu bytes, same address %d\n", aq.bytesize,
	       aq.dptr == ap.dptr);
	void *fq = NULL;
	CK(cudaGraphMemFreeNodeGetParams(fn, &fq));
	printf("free back: same address %d\n", fq == ap.dptr);
	CK(cudaGraphInstantiate(&x, g2, 0));
	for (int i = 0; i < 2; i++) {
		CK(cudaGraphLaunch(x, s));
		CK(cudaStreamSynchronize(s));
	}
	print_log("memory graph host");
	unsigned long long used = 0;
	CK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh,
					  &used));
	printf("graph memory high watermark at least the allocation: %d\n",
	       used >= n * sizeof(int));
	CK(cudaGraphExecDestroy(x));
	CK(cudaDeviceGraphMemTrim(0));

	// capture with host functions inside: host nodes of the graph
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	fill<<<n / 256, 256, 0, s>>>(d, 2, n);
	CK(cudaLaunchHostFunc(s, mark_fn, (void *)1));
	CK(cudaMemcpyAsync(hpin, d, n * sizeof(int), cudaMemcpyDeviceToHost,
			   s));
	CK(cudaLaunchHostFunc(s, sum_fn, (void *)0));
	CK(cudaLaunchHostFunc(s, mark_fn, (void *)2));
	CK(cudaStreamEndCapture(s, &gc));
	print_types("captured", gc);
	CK(cudaGraphInstantiate(&xc, gc, 0));
	for (int i = 0; i < 2; i++) {
		CK(cudaGraphLaunch(xc, s));
		CK(cudaStreamSynchronize(s));
	}
	print_log("captured host");

	// a user object moved into a graph: its destructor runs (in this
	// process) once the graph and its executable graph are gone
	cudaUserObject_t uo;
	cudaGraph_t gu;
	cudaGraphExec_t xu;
	cudaGraphNode_t hu;

	CK(cudaUserObjectCreate(&uo, (void *)42, uobj_destroy, 1,
				cudaUserObjectNoDestructorSync));
	CK(cudaGraphCreate(&gu, 0));
	hp.fn = mark_fn;
	hp.userData = (void *)9;
	CK(cudaGraphAddHostNode(&hu, gu, NULL, 0, &hp));
	CK(cudaGraphRetainUserObject(gu, uo, 1, cudaGraphUserObjectMove));
	CK(cudaGraphInstantiate(&xu, gu, 0));
	CK(cudaGraphLaunch(xu, s));
	CK(cudaStreamSynchronize(s));
	print_log("user object graph host");
	printf("destroyed while the graph lives: %d\n", destroyed);
	CK(cudaGraphExecDestroy(xu));
	CK(cudaGraphDestroy(gu));
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < 5000 && !destroyed; i++)
		usleep(1000);
	printf("destroyed after the graph: %d\n", destroyed);

	// the dot file, written at a path of this machine
	char path[] = "/tmp/graphnodes-dot-XXXXXX";
	int fd = mkstemp(path);
	struct stat st;

	if (fd < 0) {
		printf("FAIL mkstemp\n");
		return 1;
	}
	close(fd);
	CK(cudaGraphDebugDotPrint(g, path, 0));
	printf("dot file written: %d\n",
	       stat(path, &st) == 0 && st.st_size > 0);
	unlink(path);

	// pinned host -> array -> device, as memcpy nodes; read back
	{
		cudaChannelFormatDesc cd = cudaCreateChannelDesc<unsigned>();
		cudaArray_t arr;
		cudaGraph_t ga;
		cudaGraphExec_t xa;
		cudaGraphNode_t m1, m2;
		cudaMemcpy3DParms p1 = {}, p2 = {}, pq = {};
		unsigned *dv, hv[256];
		unsigned *hs = (unsigned *)hpin;

		CK(cudaMallocArray(&arr, &cd, 64, 4));
		CK(cudaMalloc(&dv, sizeof(hv)));
		CK(cudaMemset(dv, 0, sizeof(hv)));
		for (int i = 0; i < 256; i++)
			hs[i] = 7000u + 3u * i;
		p1.srcPtr = make_cudaPitchedPtr(hs, 256, 64, 4);
		p1.dstArray = arr;
		p1.extent = make_cudaExtent(64, 4, 1);
		p1.kind = cudaMemcpyHostToDevice;
		p2.srcArray = arr;
		p2.dstPtr = make_cudaPitchedPtr(dv, 256, 64, 4);
		p2.extent = make_cudaExtent(64, 4, 1);
		p2.kind = cudaMemcpyDeviceToDevice;
		CK(cudaGraphCreate(&ga, 0));
		CK(cudaGraphAddMemcpyNode(&m1, ga, NULL, 0, &p1));
		CK(cudaGraphAddMemcpyNode(&m2, ga, &m1, 1, &p2));
		CK(cudaGraphInstantiate(&xa, ga, 0));
		CK(cudaGraphLaunch(xa, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaMemcpy(hv, dv, sizeof(hv), cudaMemcpyDeviceToHost));
		unsigned long sum = 0;
		for (int i = 0; i < 256; i++)
			sum += hv[i];
		CK(cudaGraphMemcpyNodeGetParams(m2, &pq));
		printf("array nodes: first %u, last %u, sum %lu; source array "
		       "back %d\n", hv[0], hv[255], sum, pq.srcArray == arr);
		CK(cudaGraphExecDestroy(xa));
		CK(cudaGraphDestroy(ga));
		CK(cudaFreeArray(arr));
		CK(cudaFree(dv));
	}

	CK(cudaGraphExecDestroy(xc));
	CK(cudaGraphExecDestroy(x2));
	CK(cudaGraphDestroy(gc));
	CK(cudaGraphDestroy(g2));
	CK(cudaGraphDestroy(clone));
	CK(cudaGraphDestroy(g));
	CK(cudaFreeHost(hpin));
	CK(cudaFree(d));
	CK(cudaFree(d2));
	CK(cudaFree(d3));
	CK(cudaStreamDestroy(s));
	printf("PASS graphnodes\n");
	return 0;
}
