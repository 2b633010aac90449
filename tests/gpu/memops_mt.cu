// memops_mt: one thread synchronizes a stream that waits for a value which
// another thread writes only later, as a program with a producer thread
// may do.
//  - thread W: stream b waits (cuStreamWaitValue32) for flag >= 1, then
//    copies data; W then synchronizes b (cudaStreamSynchronize) and
//    checks the copy
//  - thread S: 200 ms later, a kernel on stream a fills data and
//    cuStreamWriteValue32 sets the flag
// Natively W's synchronize returns once S has written.  Also the same
// with cudaEventSynchronize on an event recorded on b, and with a third
// stream c that waits (cudaStreamWaitEvent) for an event recorded on b
// after the wait, then does the copy: W synchronizes c.  And with
// cudaDeviceSynchronize (cuCtxSynchronize: the context's work, the
// waiting stream's included).
//
// Output: deterministic result lines, then "PASS memops_mt" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <pthread.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void fill(int *p, int v)
{
	p[threadIdx.x] = v + threadIdx.x;
}

static cudaStream_t a, b, c;
static int *data, *copy, *flag;
static int round_no;

static void *signaller(void *arg)
{
	(void)arg;
	usleep(200000);
	fill<<<1, 32, 0, a>>>(data, 100 * round_no);
	CK(cudaGetLastError());
	CKD(cuStreamWriteValue32((CUstream)a, (CUdeviceptr)flag, round_no, 0));
	return NULL;
}

enum how { BY_STREAM, BY_EVENT, THROUGH_EVENT, BY_CONTEXT };

static void one_round(int r, enum how how)
{
	static const char *const name[] = { "stream", "event", "other stream",
					    "context" };
	pthread_t t;
	cudaEvent_t e;
	int h[32];

	round_no = r;
	CKD(cuStreamWaitValue32((CUstream)b, (CUdeviceptr)flag, r,
				CU_STREAM_WAIT_VALUE_GEQ));
	CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	if (how == THROUGH_EVENT) {
		CK(cudaEventRecord(e, b));
		CK(cudaStreamWaitEvent(c, e, 0));
		CK(cudaMemcpyAsync(copy, data, sizeof(h),
				   cudaMemcpyDeviceToDevice, c));
	} else {
		CK(cudaMemcpyAsync(copy, data, sizeof(h),
				   cudaMemcpyDeviceToDevice, b));
		CK(cudaEventRecord(e, b));
	}
	if (pthread_create(&t, NULL, signaller, NULL)) {
		printf("FAIL pthread_create\n");
		exit(1);
	}
	if (how == BY_EVENT)
		CK(cudaEventSynchronize(e));
	else if (how == BY_CONTEXT)
		CK(cudaDeviceSynchronize());
	else
		CK(cudaStreamSynchronize(how == THROUGH_EVENT ? c : b));
	pthread_join(t, NULL);
	CK(cudaMemcpy(h, copy, sizeof(h), cudaMemcpyDeviceToHost));
	printf("round %d (%s): copy after the other thread's write: %d %d\n",
	       r, name[how], h[0], h[31]);
	if (h[0] != 100 * r || h[31] != 100 * r + 31) {
		printf("FAIL round %d: the copy ran before the write\n", r);
		exit(1);
	}
	CK(cudaEventDestroy(e));
}

int main()
{
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
	CK(cudaMalloc(&data, 32 * sizeof(int)));
	CK(cudaMalloc(&copy, 32 * sizeof(int)));
	CK(cudaMalloc(&flag, sizeof(int)));
	CK(cudaMemset(flag, 0, sizeof(int)));
	CK(cudaMemset(data, 0, 32 * sizeof(int)));
	// Load fill before any stream waits: with lazy loading (CUDA's
	// default) a kernel's first launch loads its module, which waits for
	// the context's work, the waiting stream included, so the signaller's
	// first launch would never return (natively as well as through xgpu)
	fill<<<1, 32, 0, a>>>(data, 0);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	one_round(1, BY_STREAM);
	one_round(2, BY_EVENT);
	one_round(3, THROUGH_EVENT);
	one_round(4, BY_CONTEXT);
	CK(cudaStreamDestroy(a));
	CK(cudaStreamDestroy(b));
	CK(cudaStreamDestroy(c));
	printf("PASS memops_mt\n");
	return 0;
}
