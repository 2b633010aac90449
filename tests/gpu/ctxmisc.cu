// ctxmisc: the small driver API families a program may call, with the
// values the driver answers printed (they must equal a native run's on a
// machine with one GPU):
//  - context events: a slow kernel on stream A, cuCtxRecordEvent, then
//    cuCtxWaitEvent and a copy on stream B, which must see A's result
//  - stream attributes set on one stream, copied (cuStreamCopyAttributes,
//    cudaStreamCopyAttributes) and read back on others
//  - the per-thread stream memory operations (found with
//    cudaGetDriverEntryPointByVersion and the per-thread flag)
//  - cuCtxSetFlags, execution affinity, the 1D linear texture width, host
//    and peer atomic capabilities, the peer attributes and peer access of
//    the device with itself, the LUID, cuFlushGPUDirectRDMAWrites
//  - managed range attributes of a cudaMallocManaged range after
//    cudaMemAdvise (read-mostly, preferred location, accessed-by) and
//    prefetches, single and batched, and the array form
//  - a library's kernels counted and named, cuLibraryGetUnifiedFunction
//
// Return codes of queries whose answer depends on the machine are printed,
// not checked: a run through xgpu must print the same.
//
// Output: deterministic result lines, then "PASS ctxmisc" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

__global__ void slow_fill(int *p, int v)
{
	long long t0 = clock64();

	while (clock64() - t0 < 20000000)	/* ~10-20 ms */
		;
	p[threadIdx.x] = v + threadIdx.x;
}

static const char ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .entry ctxmisc_empty()\n"
	"{\n"
	"\tret;\n"
	"}\n";

typedef CUresult (*write32_fn)(CUstream, CUdeviceptr, cuuint32_t,
			       unsigned int);

static void ctx_events(CUcontext ctx)
{
	cudaStream_t a, b;
	cudaEvent_t ev;
	int *data, *copy, h[32];

	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CK(cudaEventCreate(&ev));
	CK(cudaMalloc(&data, sizeof(h)));
	CK(cudaMalloc(&copy, sizeof(h)));
	CK(cudaMemset(data, 0, sizeof(h)));
	CK(cudaMemset(copy, 0, sizeof(h)));
	CK(cudaDeviceSynchronize());

	// A's slow kernel, then the context's work so far in the event;
	// every later work of the context waits for it, B's copy too
	slow_fill<<<1, 32, 0, a>>>(data, 700);
	CKD(cuCtxRecordEvent(ctx, (CUevent)ev));
	CKD(cuCtxWaitEvent(ctx, (CUevent)ev));
	CK(cudaMemcpyAsync(copy, data, sizeof(h), cudaMemcpyDeviceToDevice,
			   b));
	CK(cudaStreamSynchronize(b));
	CK(cudaMemcpy(h, copy, sizeof(h), cudaMemcpyDeviceToHost));
	printf("ctx event: the copy after the wait saw %d %d\n", h[0], h[31]);
	CK(cudaEventSynchronize(ev));
	printf("ctx event: query %d\n", (int)cuEventQuery((CUevent)ev));
	if (h[0] != 700 || h[31] != 731) {
		printf("FAIL ctx event ordering\n");
		exit(1);
	}
	CK(cudaEventDestroy(ev));
	CK(cudaStreamDestroy(a));
	CK(cudaStreamDestroy(b));
	CK(cudaFree(data));
	CK(cudaFree(copy));
}

static void print_attrs(const char *what, CUstream s, const void *base)
{
	CUstreamAttrValue v;

	memset(&v, 0, sizeof(v));
	CKD(cuStreamGetAttribute(s, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
				 &v));
	printf("%s: sync policy %d", what, (int)v.syncPolicy);
	memset(&v, 0, sizeof(v));
	CKD(cuStreamGetAttribute(s, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
				 &v));
	printf(", window %s base, %zu bytes, hit ratio %.2f, hit %d, miss %d\n",
	       v.accessPolicyWindow.base_ptr == base ? "the" : "another",
	       v.accessPolicyWindow.num_bytes,
	       v.accessPolicyWindow.hitRatio,
	       (int)v.accessPolicyWindow.hitProp,
	       (int)v.accessPolicyWindow.missProp);
}

static void stream_attrs(void)
{
	cudaStream_t src, dst, dst2;
	CUstreamAttrValue v;
	void *buf;

	CK(cudaMalloc(&buf, 1 << 20));
	CK(cudaStreamCreateWithFlags(&src, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&dst, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&dst2, cudaStreamNonBlocking));
	memset(&v, 0, sizeof(v));
	v.syncPolicy = CU_SYNC_POLICY_YIELD;
	CKD(cuStreamSetAttribute((CUstream)src,
				 CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
				 &v));
	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = buf;
	v.accessPolicyWindow.num_bytes = 1 << 20;
	v.accessPolicyWindow.hitRatio = 0.5f;
	v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
	v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
	CKD(cuStreamSetAttribute((CUstream)src,
				 CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	print_attrs("source", (CUstream)src, buf);
	print_attrs("before copy", (CUstream)dst, buf);
	CKD(cuStreamCopyAttributes((CUstream)dst, (CUstream)src));
	print_attrs("driver copy", (CUstream)dst, buf);
	CK(cudaStreamCopyAttributes(dst2, src));
	print_attrs("runtime copy", (CUstream)dst2, buf);
	CK(cudaStreamDestroy(src));
	CK(cudaStreamDestroy(dst));
	CK(cudaStreamDestroy(dst2));
	CK(cudaFree(buf));
}

static void memops_ptsz(void)
{
	cudaDriverEntryPointQueryResult st;
	write32_fn w32 = NULL;
	void *fn = NULL;
	unsigned int *flag, h = 0;

	// the CUDA 11.7 ABI, per-thread default stream
	CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000,
					    cudaEnablePerThreadDefaultStream,
					    &st));
	printf("per-thread cuStreamWriteValue32@12000: status %d, found %d\n",
	       (int)st, fn != NULL);
	w32 = (write32_fn)fn;
	fn = NULL;
	CK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000,
					    cudaEnablePerThreadDefaultStream,
					    &st));
	printf("per-thread cuStreamWaitValue32@12000: status %d, found %d\n",
	       (int)st, fn != NULL);
	if (!w32 || !fn) {
		printf("FAIL per-thread memory operations not found\n");
		exit(1);
	}
	CK(cudaMalloc(&flag, sizeof(*flag)));
	CK(cudaMemset(flag, 0, sizeof(*flag)));
	CK(cudaDeviceSynchronize());
	// NULL: the per-thread default stream in these entry points
	CKD(w32(NULL, (CUdeviceptr)flag, 41, 0));
	CKD(((write32_fn)fn)(NULL, (CUdeviceptr)flag, 41,
			     CU_STREAM_WAIT_VALUE_EQ));
	CK(cudaStreamSynchronize(cudaStreamPerThread));
	CK(cudaMemcpy(&h, flag, sizeof(h), cudaMemcpyDeviceToHost));
	printf("per-thread write, then wait: %u\n", h);
	// the CUDA 8 ABI is there too
	fn = NULL;
	CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 8000,
					    cudaEnablePerThreadDefaultStream,
					    &st));
	printf("per-thread cuStreamWriteValue32@8000: status %d, found %d\n",
	       (int)st, fn != NULL);
	CK(cudaFree(flag));
}

static void ctx_flags(void)
{
	unsigned int before = 0, flags = 0;

	CKD(cuCtxGetFlags(&before));
	CKD(cuCtxSetFlags(before | CU_CTX_SYNC_MEMOPS));
	CKD(cuCtxGetFlags(&flags));
	printf("ctx flags: sync memops set %d", !!(flags & CU_CTX_SYNC_MEMOPS));
	CKD(cuCtxSetFlags(before & ~CU_CTX_SYNC_MEMOPS));
	CKD(cuCtxGetFlags(&flags));
	printf(", cleared %d\n", !(flags & CU_CTX_SYNC_MEMOPS));
	printf("ctx flags: an unknown flag: %d\n",
	       (int)cuCtxSetFlags(before | 0x40000000u));
	CKD(cuCtxSetFlags(before));
}

static void device_queries(CUcontext ctx, int ndev)
{
	CUatomicOperation ops[CU_ATOMIC_OPERATION_MAX];
	unsigned int caps[CU_ATOMIC_OPERATION_MAX];
	CUexecAffinityParam aff;
	unsigned int mask = 0;
	char luid[8];
	size_t width = 0;
	int v = -1, rc;

	rc = cuDeviceGetExecAffinitySupport(&v, CU_EXEC_AFFINITY_TYPE_SM_COUNT,
					    0);
	printf("exec affinity support: rc %d, %d\n", rc, v);
	memset(&aff, 0, sizeof(aff));
	rc = cuCtxGetExecAffinity(&aff, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
	printf("ctx exec affinity: rc %d, type %d, %u SMs\n", rc,
	       (int)aff.type, aff.param.smCount.val);

	rc = cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 1,
						0);
	printf("1D linear max width, float x1: rc %d, %zu\n", rc, width);
	width = 0;
	rc = cuDeviceGetTexture1DLinearMaxWidth(&width,
						CU_AD_FORMAT_UNSIGNED_INT8, 4,
						0);
	printf("1D linear max width, uchar x4: rc %d, %zu\n", rc, width);

	for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; i++) {
		ops[i] = (CUatomicOperation)i;
		caps[i] = 0xffffffffu;
	}
	rc = cuDeviceGetHostAtomicCapabilities(caps, ops,
					       CU_ATOMIC_OPERATION_MAX, 0);
	printf("host atomic capabilities: rc %d,", rc);
	for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; i++)
		printf(" %#x", rc ? 0u : caps[i]);
	printf("\n");
	rc = cuDeviceGetP2PAtomicCapabilities(caps, ops, 3, 0, 0);
	printf("peer atomic capabilities with itself: rc %d\n", rc);

	for (int a = CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK;
	     a <= CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED; a++) {
		v = -1;
		rc = cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)a, 0,
					     0);
		printf("peer attribute %d with itself: rc %d, %d\n", a, rc,
		       rc ? -1 : v);
	}
	v = -1;
	rc = cuDeviceCanAccessPeer(&v, 0, 0);
	printf("can access peer, itself: rc %d, %d\n", rc, v);
	v = -1;
	printf("cudaDeviceCanAccessPeer, itself: %s, %d\n",
	       cudaGetErrorName(cudaDeviceCanAccessPeer(&v, 0, 0)), v);
	if (ndev == 1) {
		printf("can access peer 1: rc %d\n",
		       (int)cuDeviceCanAccessPeer(&v, 0, 1));
		printf("peer attribute with device 1: rc %d\n",
		       (int)cuDeviceGetP2PAttribute(
			       &v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0,
			       1));
	}
	printf("enable peer access to itself: rc %d\n",
	       (int)cuCtxEnablePeerAccess(ctx, 0));
	printf("disable peer access to itself: rc %d\n",
	       (int)cuCtxDisablePeerAccess(ctx));
	printf("cudaDeviceEnablePeerAccess(0): %s\n",
	       cudaGetErrorName(cudaDeviceEnablePeerAccess(0, 0)));
	cudaGetLastError();

	memset(luid, 0, sizeof(luid));
	rc = cuDeviceGetLuid(luid, &mask, 0);
	printf("LUID: rc %d", rc);
	if (!rc)
		printf(", node mask %#x", mask);
	printf("\n");
	printf("flush GPUDirect RDMA writes: rc %d\n",
	       (int)cuFlushGPUDirectRDMAWrites(
		       CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
		       CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
}

static void print_range(const char *what, CUdeviceptr p, size_t n)
{
	int rm = -9, pl = -9, lp = -9, ab[3] = { -9, -9, -9 }, pt = -9,
	    pid = -9, lt = -9;

	CKD(cuMemRangeGetAttribute(&rm, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
				   p, n));
	CKD(cuMemRangeGetAttribute(&pl, 4,
				   CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
				   p, n));
	CKD(cuMemRangeGetAttribute(&lp, 4,
				   CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
				   p, n));
	CKD(cuMemRangeGetAttribute(ab, sizeof(ab),
				   CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, n));
	CKD(cuMemRangeGetAttribute(
		&pt, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, p, n));
	CKD(cuMemRangeGetAttribute(
		&pid, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, p, n));
	CKD(cuMemRangeGetAttribute(
		&lt, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p,
		n));
	printf("%s: read mostly %d, preferred %d (type %d", what, rm, pl, pt);
	if (pt == CU_MEM_LOCATION_TYPE_DEVICE)
		printf(", id %d", pid);
	printf("), last prefetch %d (type %d), accessed by %d %d %d\n", lp,
	       lt, ab[0], ab[1], ab[2]);
}

static void range_attrs(void)
{
	const size_t mb2 = 2u << 20;
	cudaMemLocation dev = {}, host = {};
	CUmemLocation locs[2];
	CUdeviceptr ptrs[2];
	size_t sizes[2], idxs[2] = { 0, 1 };
	cudaStream_t s;
	char *m;

	dev.type = cudaMemLocationTypeDevice;
	dev.id = 0;
	host.type = cudaMemLocationTypeHost;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMallocManaged(&m, 8u << 20));
	// two 2 MiB pieces on 2 MiB boundaries (the GPU's large pages)
	CUdeviceptr a = ((CUdeviceptr)m + mb2 - 1) & ~(CUdeviceptr)(mb2 - 1);
	CUdeviceptr b = a + mb2;

	print_range("fresh", a, 2 * mb2);
	CK(cudaMemAdvise((void *)a, mb2, cudaMemAdviseSetReadMostly, dev));
	CK(cudaMemAdvise((void *)a, 2 * mb2, cudaMemAdviseSetPreferredLocation,
			 dev));
	CK(cudaMemAdvise((void *)b, mb2, cudaMemAdviseSetAccessedBy, dev));
	CK(cudaMemPrefetchAsync((void *)a, mb2, dev, 0, s));
	CK(cudaMemPrefetchAsync((void *)b, mb2, host, 0, s));
	CK(cudaStreamSynchronize(s));
	print_range("advised first", a, mb2);
	print_range("advised second", b, mb2);
	print_range("advised both", a, 2 * mb2);

	// the array form
	int rm = -9, ab[2] = { -9, -9 }, lp = -9;
	void *data[3] = { &rm, ab, &lp };
	size_t dsz[3] = { 4, sizeof(ab), 4 };
	CUmem_range_attribute as[3] = {
		CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
		CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
		CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION };
	CKD(cuMemRangeGetAttributes(data, dsz, as, 3, b, mb2));
	printf("array form, second: read mostly %d, accessed by %d %d, "
	       "last prefetch %d\n", rm, ab[0], ab[1], lp);
	printf("a wrong data size: rc %d\n",
	       (int)cuMemRangeGetAttribute(&rm, 8,
					   CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
					   a, mb2));

	// unset, and a batch: the first to the host, the second to the GPU
	CK(cudaMemAdvise((void *)a, mb2, cudaMemAdviseUnsetReadMostly, dev));
	CK(cudaMemAdvise((void *)b, mb2, cudaMemAdviseUnsetAccessedBy, dev));
	ptrs[0] = a;
	ptrs[1] = b;
	sizes[0] = sizes[1] = mb2;
	locs[0].type = CU_MEM_LOCATION_TYPE_HOST;
	locs[0].id = 0;
	locs[1].type = CU_MEM_LOCATION_TYPE_DEVICE;
	locs[1].id = 0;
	int rc = cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0,
					 (CUstream)s);
	printf("batch prefetch: rc %d\n", rc);
	CK(cudaStreamSynchronize(s));
	print_range("after batch, first", a, mb2);
	print_range("after batch, second", b, mb2);

	// the data is the program's all along
	memset((void *)a, 0x5a, 16);
	CK(cudaMemPrefetchAsync((void *)a, mb2, dev, 0, s));
	CK(cudaStreamSynchronize(s));
	printf("managed byte after the prefetches: %#x\n",
	       ((unsigned char *)a)[15]);
	CK(cudaFree(m));
	CK(cudaStreamDestroy(s));
}

static void library(void)
{
	CUlibrary lib;
	CUkernel k;
	void *fp = NULL;
	const char *name = NULL;
	unsigned int n = 0;

	CKD(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CKD(cuLibraryGetKernelCount(&n, lib));
	printf("library kernels: %u\n", n);
	if (n == 1) {
		CKD(cuLibraryEnumerateKernels(&k, 1, lib));
		CKD(cuKernelGetName(&name, k));
		printf("library kernel 0: %s\n", name);
	}
	printf("unified function of a kernel: rc %d\n",
	       (int)cuLibraryGetUnifiedFunction(&fp, lib, "ctxmisc_empty"));
	printf("unified function of no name: rc %d\n",
	       (int)cuLibraryGetUnifiedFunction(&fp, lib, "no_such"));
	CKD(cuLibraryUnload(lib));
}

int main()
{
	CUcontext ctx;
	int ndev = 0;

	CK(cudaGetDeviceCount(&ndev));
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	CKD(cuCtxGetCurrent(&ctx));
	// load slow_fill now: a lazy first launch behind a wait could hang
	cudaFuncAttributes fa;
	CK(cudaFuncGetAttributes(&fa, slow_fill));

	ctx_events(ctx);
	stream_attrs();
	memops_ptsz();
	ctx_flags();
	device_queries(ctx, ndev);
	range_attrs();
	library();
	CK(cudaDeviceSynchronize());
	printf("PASS ctxmisc\n");
	return 0;
}
