// memops: stream memory operations and stream attributes through the
// driver API, next to the runtime's kernels.
//  - cross-stream signalling: stream B waits (cuStreamWaitValue32) for a
//    flag that stream A writes (cuStreamWriteValue32) after a 20 ms
//    kernel; B's copy sees A's kernel's result
//  - a batch (cuStreamBatchMemOp) of a 64-bit write and a 64-bit wait
//  - stream attributes: priority read back, an access policy window set
//    and read back, the synchronization policy
//
// Output: deterministic result lines, then "PASS memops" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void slow_fill(int *p, int v)
{
	long long t0 = clock64();

	while (clock64() - t0 < 20000000)	/* ~10-20 ms */
		;
	p[threadIdx.x] = v + threadIdx.x;
}

int main()
{
	cudaStream_t a, b;
	int *data, *copy, h[32];
	unsigned int *flag;
	unsigned long long *w64, h64[2];

	CK(cudaStreamCreateWithPriority(&a, cudaStreamNonBlocking, 0));
	CK(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, -1));
	CK(cudaMalloc(&data, 32 * sizeof(int)));
	CK(cudaMalloc(&copy, 32 * sizeof(int)));
	CK(cudaMalloc(&flag, sizeof(*flag)));
	CK(cudaMalloc(&w64, 2 * sizeof(*w64)));
	CK(cudaMemset(flag, 0, sizeof(*flag)));
	CK(cudaMemset(data, 0, 32 * sizeof(int)));
	CK(cudaDeviceSynchronize());

	// Load slow_fill now: with lazy loading (the default) its first
	// launch loads the module, which waits for the context's streams,
	// and B's wait below would never end, natively as well.
	cudaFuncAttributes fa;
	CK(cudaFuncGetAttributes(&fa, slow_fill));

	// B waits for A's flag, then copies A's result
	CKD(cuStreamWaitValue32((CUstream)b, (CUdeviceptr)flag, 1,
				CU_STREAM_WAIT_VALUE_GEQ));
	CK(cudaMemcpyAsync(copy, data, 32 * sizeof(int),
			   cudaMemcpyDeviceToDevice, b));
	slow_fill<<<1, 32, 0, a>>>(data, 100);
	CKD(cuStreamWriteValue32((CUstream)a, (CUdeviceptr)flag, 1, 0));
	CK(cudaStreamSynchronize(b));
	CK(cudaMemcpy(h, copy, sizeof(h), cudaMemcpyDeviceToHost));
	printf("signalled copy: %d %d\n", h[0], h[31]);

	CUstreamBatchMemOpParams ops[2] = {};
	ops[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
	ops[0].writeValue.address = (CUdeviceptr)w64;
	ops[0].writeValue.value64 = 0x0123456789abcdefull;
	ops[1].operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
	ops[1].waitValue.address = (CUdeviceptr)w64;
	ops[1].waitValue.value64 = 0x0123456789abcdefull;
	ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
	CKD(cuStreamBatchMemOp((CUstream)a, 2, ops, 0));
	CK(cudaStreamSynchronize(a));
	CK(cudaMemcpy(h64, w64, sizeof(h64[0]), cudaMemcpyDeviceToHost));
	printf("batch: %#llx\n", h64[0]);

	cudaStreamAttrValue v = {};
	CK(cudaStreamGetAttribute(b, cudaStreamAttributePriority, &v));
	printf("priority of b: %d\n", v.priority);
	v = {};
	v.accessPolicyWindow.base_ptr = data;
	v.accessPolicyWindow.num_bytes = 32 * sizeof(int);
	v.accessPolicyWindow.hitRatio = 0.5f;
	v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
	v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
	CK(cudaStreamSetAttribute(a, cudaStreamAttributeAccessPolicyWindow,
				  &v));
	cudaStreamAttrValue back = {};
	CK(cudaStreamGetAttribute(a, cudaStreamAttributeAccessPolicyWindow,
				  &back));
	printf("access policy window: base ok %d, bytes %zu, hit ratio %.2f\n",
	       back.accessPolicyWindow.base_ptr == (void *)data,
	       back.accessPolicyWindow.num_bytes,
	       back.accessPolicyWindow.hitRatio);
	v = {};
	v.syncPolicy = cudaSyncPolicyBlockingSync;
	CK(cudaStreamSetAttribute(a, cudaStreamAttributeSynchronizationPolicy,
				  &v));
	back = {};
	CK(cudaStreamGetAttribute(a, cudaStreamAttributeSynchronizationPolicy,
				  &back));
	printf("sync policy blocking: %d\n",
	       back.syncPolicy == cudaSyncPolicyBlockingSync);

	CK(cudaStreamDestroy(a));
	CK(cudaStreamDestroy(b));
	CK(cudaFree(data));
	CK(cudaFree(copy));
	CK(cudaFree(flag));
	CK(cudaFree(w64));
	if (h[0] != 100 || h[31] != 131 || h64[0] != 0x0123456789abcdefull) {
		printf("FAIL memops\n");
		return 1;
	}
	printf("PASS memops\n");
	return 0;
}
