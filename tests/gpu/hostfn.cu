// hostfn: host functions and stream callbacks (cudaLaunchHostFunc,
// cudaStreamAddCallback) as the samples (simpleCallback) use them.
//  - on 4 streams: copy in, kernel, copy out to pinned memory, then a host
//    function that checks the copied result (stream order), then a
//    callback with the stream's status; 25 rounds
//  - the stream is held while a host function runs: events around a
//    host function that sleeps 30 ms are >= 30 ms apart
//  - host functions run in issue order on one stream
//
// Output: deterministic result lines, then "PASS hostfn" (exit 0) or
// "FAIL ..." (exit 1).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "check.h"

__global__ void square(int *d, int n, int add)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		d[i] = d[i] * d[i] + add;
}

struct job {
	int *host;
	int n, round, stream;
	std::atomic<int> *good, *seen;
};

static void CUDART_CB check_job(void *p)
{
	job *j = (job *)p;
	int ok = 1;

	for (int i = 0; i < j->n; i++)
		if (j->host[i] != i * i + j->round + j->stream)
			ok = 0;
	*j->good += ok;
	*j->seen += 1;
}

static std::atomic<int> cb_calls, cb_errors;

static void CUDART_CB on_done(cudaStream_t s, cudaError_t st, void *p)
{
	(void)s;
	(void)p;
	cb_calls++;
	if (st != cudaSuccess)
		cb_errors++;
}

static std::vector<int> order;

static void CUDART_CB note(void *p)
{
	order.push_back((int)(intptr_t)p);
}

static void CUDART_CB nap(void *p)
{
	(void)p;
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

int main()
{
	const int ns = 4, n = 4096, rounds = 25;
	cudaStream_t s[ns];
	int *h[ns], *d[ns];
	std::vector<int> src(n);
	std::atomic<int> good(0), seen(0);
	std::vector<job> jobs(ns * rounds);

	for (int i = 0; i < n; i++)
		src[i] = i;
	for (int k = 0; k < ns; k++) {
		CK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
		CK(cudaMallocHost(&h[k], n * sizeof(int) * rounds));
		CK(cudaMalloc(&d[k], n * sizeof(int)));
	}
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < ns; k++) {
			job &j = jobs[r * ns + k];

			j = job{ h[k] + r * n, n, r, k, &good, &seen };
			CK(cudaMemcpyAsync(d[k], src.data(), n * sizeof(int),
					   cudaMemcpyHostToDevice, s[k]));
			square<<<(n + 255) / 256, 256, 0, s[k]>>>(d[k], n,
								   r + k);
			CK(cudaMemcpyAsync(j.host, d[k], n * sizeof(int),
					   cudaMemcpyDeviceToHost, s[k]));
			CK(cudaLaunchHostFunc(s[k], check_job, &j));
			CK(cudaStreamAddCallback(s[k], on_done, NULL, 0));
		}
	}
	CK(cudaDeviceSynchronize());
	printf("host functions: %d ran, %d saw their stream's results\n",
	       seen.load(), good.load());
	printf("callbacks: %d, with errors: %d\n", cb_calls.load(),
	       cb_errors.load());

	cudaEvent_t a, b;
	float ms = 0;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	CK(cudaEventRecord(a, s[0]));
	CK(cudaLaunchHostFunc(s[0], nap, NULL));
	CK(cudaEventRecord(b, s[0]));
	CK(cudaEventSynchronize(b));
	CK(cudaEventElapsedTime(&ms, a, b));
	printf("stream held while a 30 ms host function ran: %d\n",
	       ms >= 29.0f);

	for (int i = 0; i < 10; i++)
		CK(cudaLaunchHostFunc(s[1], note, (void *)(intptr_t)i));
	CK(cudaStreamSynchronize(s[1]));
	int inorder = (int)order.size() == 10;
	for (int i = 0; i < (int)order.size(); i++)
		inorder &= order[i] == i;
	printf("10 host functions in issue order: %d\n", inorder);

	for (int k = 0; k < ns; k++) {
		CK(cudaStreamDestroy(s[k]));
		CK(cudaFreeHost(h[k]));
		CK(cudaFree(d[k]));
	}
	if (seen != ns * rounds || good != ns * rounds ||
	    cb_calls != ns * rounds || cb_errors || ms < 29.0f || !inorder) {
		printf("FAIL hostfn\n");
		return 1;
	}
	printf("PASS hostfn\n");
	return 0;
}
