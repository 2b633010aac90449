// greenctx: green contexts (CUDA 12.4 and later) through the driver API:
//  - the device's SM resource (count, minimum partition, alignment)
//  - a split into groups of at least 16 SMs: the number of groups a query
//    announces, then the groups and the remainder made
//  - a descriptor of the first group, a green context on it, its SMs
//    (from the green context and from its context)
//  - a stream of the green context; with the green context's context
//    current, a kernel on that stream records the SM (%smid) each block
//    ran on and writes a result; the result is checked, and the number of
//    distinct SMs the blocks used must not exceed the group's SM count
//    (which SMs are in the group cannot be known by id; the count is
//    printed on a TIME line, since it may vary between runs)
//  - events recorded in and waited on by the green context, its id, the
//    stream's green context and contexts
//  - destroy
//
// Output: deterministic result lines, then "PASS greenctx" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

#define MIN_SMS		16u
#define BLOCKS		1024
#define THREADS		128

__global__ void where(unsigned int *smid, int *out, int n)
{
	unsigned int id;
	long long t0 = clock64();
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
	/* a little time in each block, so that blocks spread over every
	 * SM the kernel may use */
	while (clock64() - t0 < 20000)
		;
	if (threadIdx.x == 0)
		smid[blockIdx.x] = id;
	if (i < n)
		out[i] = 3 * i + 1;
}

int main(void)
{
	CUdevResource dev_res, *groups, rest, g_res, c_res;
	CUdevResourceDesc desc;
	CUcontext primary, gctx, sctx = NULL;
	CUgreenCtx green, sgreen = NULL;
	CUstream s;
	CUevent ev;
	CUdevice dev;
	unsigned int n = 0, made, *d_smid, *smid;
	unsigned long long id = 0;
	int *d_out, *out, sms = 0, bad = 0, distinct = 0;
	static bool seen[1024];
	const int N = BLOCKS * THREADS;

	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	CKD(cuCtxGetCurrent(&primary));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDeviceGetAttribute(&sms,
				 CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				 dev));

	memset(&dev_res, 0, sizeof(dev_res));
	CKD(cuDeviceGetDevResource(dev, &dev_res, CU_DEV_RESOURCE_TYPE_SM));
	printf("device: %u SMs (attribute %d), minimum partition %u, "
	       "alignment %u\n", dev_res.sm.smCount, sms,
	       dev_res.sm.minSmPartitionSize,
	       dev_res.sm.smCoscheduledAlignment);
	if ((int)dev_res.sm.smCount != sms) {
		printf("FAIL the SM resource is not the device's SMs\n");
		return 1;
	}

	/* how many groups, then the groups */
	CKD(cuDevSmResourceSplitByCount(NULL, &n, &dev_res, NULL, 0, MIN_SMS));
	printf("split by at least %u SMs: %u groups announced\n", MIN_SMS, n);
	if (n == 0) {
		printf("FAIL no group of %u SMs\n", MIN_SMS);
		return 1;
	}
	groups = (CUdevResource *)calloc(n, sizeof(*groups));
	made = n;
	memset(&rest, 0, sizeof(rest));
	CKD(cuDevSmResourceSplitByCount(groups, &made, &dev_res, &rest, 0,
					MIN_SMS));
	printf("groups made: %u\n", made);
	for (unsigned int i = 0; i < made; i++)
		printf("group %u: %u SMs\n", i, groups[i].sm.smCount);
	printf("remainder: %u SMs\n", rest.sm.smCount);
	if (made == 0 || groups[0].sm.smCount < MIN_SMS) {
		printf("FAIL the groups are smaller than asked\n");
		return 1;
	}

	/* a green context of the first group */
	CKD(cuDevResourceGenerateDesc(&desc, &groups[0], 1));
	CKD(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
	memset(&g_res, 0, sizeof(g_res));
	CKD(cuGreenCtxGetDevResource(green, &g_res, CU_DEV_RESOURCE_TYPE_SM));
	CKD(cuCtxFromGreenCtx(&gctx, green));
	memset(&c_res, 0, sizeof(c_res));
	CKD(cuCtxGetDevResource(gctx, &c_res, CU_DEV_RESOURCE_TYPE_SM));
	printf("green context: %u SMs, its context: %u SMs\n",
	       g_res.sm.smCount, c_res.sm.smCount);
	CKD(cuGreenCtxGetId(green, &id));
	printf("green context id: %s\n", id ? "nonzero" : "zero");
	CKD(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0));
	CKD(cuStreamGetGreenCtx(s, &sgreen));
	printf("stream's green context: %s\n",
	       sgreen == green ? "the green context" : "another");
	CKD(cuStreamGetCtx_v2(s, &sctx, &sgreen));
	printf("stream's contexts: %s, %s\n",
	       sctx == primary ? "the primary" : "another",
	       sgreen == green ? "the green context" : "another");

	/* memory from the primary, the kernel in the green context */
	CK(cudaMalloc(&d_smid, BLOCKS * sizeof(unsigned int)));
	CK(cudaMalloc(&d_out, N * sizeof(int)));
	CK(cudaMemset(d_smid, 0xff, BLOCKS * sizeof(unsigned int)));
	CK(cudaMemset(d_out, 0, N * sizeof(int)));
	CKD(cuCtxSetCurrent(gctx));
	where<<<BLOCKS, THREADS, 0, (cudaStream_t)s>>>(d_smid, d_out, N);
	CK(cudaGetLastError());
	CKD(cuStreamSynchronize(s));

	/* an event of the green context's work, waited on by it */
	CKD(cuEventCreate(&ev, CU_EVENT_DEFAULT));
	CKD(cuGreenCtxRecordEvent(green, ev));
	CKD(cuEventSynchronize(ev));
	CKD(cuGreenCtxWaitEvent(green, ev));
	CKD(cuCtxSynchronize());
	CKD(cuCtxSetCurrent(primary));

	smid = (unsigned int *)malloc(BLOCKS * sizeof(unsigned int));
	out = (int *)malloc(N * sizeof(int));
	CK(cudaMemcpy(smid, d_smid, BLOCKS * sizeof(unsigned int),
		      cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(out, d_out, N * sizeof(int), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		if (out[i] != 3 * i + 1)
			bad++;
	for (int b = 0; b < BLOCKS; b++) {
		if (smid[b] >= sizeof(seen)) {
			printf("FAIL block %d: SM id %u\n", b, smid[b]);
			return 1;
		}
		if (!seen[smid[b]]) {
			seen[smid[b]] = true;
			distinct++;
		}
	}
	printf("kernel ran: %d blocks, %d wrong results\n", BLOCKS, bad);
	printf("TIME distinct SMs used: %d of the group's %u\n", distinct,
	       g_res.sm.smCount);
	printf("distinct SMs within the group's count: %s\n",
	       distinct >= 1 && distinct <= (int)g_res.sm.smCount ? "yes" :
								   "no");
	if (bad || distinct < 1 || distinct > (int)g_res.sm.smCount) {
		printf("FAIL the kernel in the green context\n");
		return 1;
	}

	CKD(cuEventDestroy(ev));
	CKD(cuStreamDestroy(s));
	CKD(cuGreenCtxDestroy(green));
	CK(cudaFree(d_smid));
	CK(cudaFree(d_out));
	/* the primary goes on */
	CK(cudaDeviceSynchronize());
	free(groups);
	free(smid);
	free(out);
	printf("PASS greenctx\n");
	return 0;
}
