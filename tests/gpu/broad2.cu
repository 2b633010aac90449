// SPDX-License-Identifier: MIT
// broad2: how programs use the runtime from several threads and over a
// program's life, each step printing what it computed, then PASS/FAIL:
//   threads   8 host threads at once, each with a stream of its own: pinned
//             copies in, a kernel, copies out, a stream synchronize, 200
//             times, every result checked
//   devmalloc malloc and free inside a kernel, after cudaDeviceSetLimit
//             (cudaLimitMallocHeapSize)
//   pooltrim  cudaMallocAsync/cudaFreeAsync on two streams ordered by an
//             event, a release threshold, cudaMemPoolTrimTo
//   reset     cudaDeviceReset, then allocations and a kernel again
//   cdp       (built with -rdc=true only: broad2_cdp) a kernel that launches
//             a child grid from the device
// Built twice more: broad2_ptds with --default-stream per-thread (the
// runtime then calls the driver's per-thread-stream entry points), and
// broad2_cdp with relocatable device code and dynamic parallelism.
// Last line "PASS <name>" or "FAIL <name>".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include "steps.h"

#ifndef BROAD2_NAME
#define BROAD2_NAME "broad2"
#endif

__global__ void affine(const int *in, int *out, int n, int a, int b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[i] * a + b;
}

// ---- threads ---------------------------------------------------------------
enum { NTHREADS = 8, ROUNDS = 200, N = 4096 };

struct worker {
	int id;
	int bad;	/* rounds with a wrong result, or -1: a CUDA error */
};

static void *thread_main(void *p)
{
	struct worker *w = (struct worker *)p;
	cudaStream_t s;
	int *hin, *hout, *din, *dout;

	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) ||
	    cudaMallocHost(&hin, N * sizeof(int)) ||
	    cudaMallocHost(&hout, N * sizeof(int)) ||
	    cudaMalloc(&din, N * sizeof(int)) ||
	    cudaMalloc(&dout, N * sizeof(int))) {
		w->bad = -1;
		return NULL;
	}
	for (int r = 0; r < ROUNDS; r++) {
		int a = w->id + 2, b = r;

		for (int i = 0; i < N; i++)
			hin[i] = i ^ (r * 131 + w->id);
		if (cudaMemcpyAsync(din, hin, N * sizeof(int),
				    cudaMemcpyHostToDevice, s)) {
			w->bad = -1;
			break;
		}
		affine<<<N / 256, 256, 0, s>>>(din, dout, N, a, b);
		if (cudaMemcpyAsync(hout, dout, N * sizeof(int),
				    cudaMemcpyDeviceToHost, s) ||
		    cudaStreamSynchronize(s)) {
			w->bad = -1;
			break;
		}
		for (int i = 0; i < N; i++)
			if (hout[i] != hin[i] * a + b) {
				w->bad++;
				break;
			}
	}
	cudaFree(din);
	cudaFree(dout);
	cudaFreeHost(hin);
	cudaFreeHost(hout);
	cudaStreamDestroy(s);
	return NULL;
}

static void step_threads(void)
{
	pthread_t t[NTHREADS];
	struct worker w[NTHREADS];
	bool ok = true;

	CK(cudaFree(0));
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ i, 0 };
		pthread_create(&t[i], NULL, thread_main, &w[i]);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("threads:");
	for (int i = 0; i < NTHREADS; i++) {
		printf(" %d", w[i].bad);
		ok &= w[i].bad == 0;
	}
	printf(" (rounds wrong per thread, -1: an error)\n");
	verdict("threads", ok);
}

// ---- devmalloc -------------------------------------------------------------
__global__ void heap_user(int *out)
{
	int *p = (int *)malloc(64 * sizeof(int));

	if (!p) {
		out[threadIdx.x] = -1;
		return;
	}
	for (int i = 0; i < 64; i++)
		p[i] = i * (int)threadIdx.x;
	int s = 0;
	for (int i = 0; i < 64; i++)
		s += p[i];
	free(p);
	out[threadIdx.x] = s;
}

static void step_devmalloc(void)
{
	int *out, h[128];
	bool ok = true;
	size_t heap = 0;

	CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16u << 20));
	CK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
	CK(cudaMalloc(&out, sizeof(h)));
	heap_user<<<1, 128>>>(out);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 128; i++)
		ok &= h[i] == 2016 * i;
	printf("devmalloc: heap %zu MiB, thread 5 sum %d\n", heap >> 20, h[5]);
	verdict("devmalloc", ok && heap >= (16u << 20));
	cudaFree(out);
}

// ---- pooltrim --------------------------------------------------------------
static void step_pooltrim(void)
{
	cudaMemPool_t pool;
	cudaStream_t s1, s2;
	cudaEvent_t ev;
	int *a, *b, h[1024];
	unsigned long long thr = 1u << 20, got = 0;
	bool ok = true;

	CK(cudaDeviceGetDefaultMemPool(&pool, 0));
	CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
				   &thr));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
				   &got));
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaMallocAsync(&a, sizeof(h), s1));
	CK(cudaMemsetAsync(a, 0, sizeof(h), s1));
	for (int k = 0; k < 3; k++)
		affine<<<4, 256, 0, s1>>>(a, a, 1024, 1, 5);
	CK(cudaEventRecord(ev, s1));
	CK(cudaStreamWaitEvent(s2, ev, 0));
	CK(cudaMallocAsync(&b, sizeof(h), s2));
	affine<<<4, 256, 0, s2>>>(a, b, 1024, 3, 1);
	CK(cudaFreeAsync(a, s2));
	CK(cudaMemcpyAsync(h, b, sizeof(h), cudaMemcpyDeviceToHost, s2));
	CK(cudaFreeAsync(b, s2));
	CK(cudaStreamSynchronize(s2));
	CK(cudaMemPoolTrimTo(pool, 0));
	for (int i = 0; i < 1024; i++)
		ok &= h[i] == 46;
	printf("pooltrim: threshold %llu, value %d\n", (unsigned long long)got,
	       h[0]);
	verdict("pooltrim", ok && got == thr);
	thr = 0;
	cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
	cudaEventDestroy(ev);
	cudaStreamDestroy(s1);
	cudaStreamDestroy(s2);
}

// ---- reset -----------------------------------------------------------------
static void step_reset(void)
{
	int *d, h[256], *hin = (int *)malloc(sizeof(h));
	bool ok = true;

	CK(cudaDeviceReset());
	for (int i = 0; i < 256; i++)
		hin[i] = i;
	CK(cudaMalloc(&d, sizeof(h)));
	CK(cudaMemcpy(d, hin, sizeof(h), cudaMemcpyHostToDevice));
	affine<<<1, 256>>>(d, d, 256, 2, 1);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 256; i++)
		ok &= h[i] == 2 * i + 1;
	printf("reset: after cudaDeviceReset h[255] = %d\n", h[255]);
	verdict("reset", ok);
	cudaFree(d);
	free(hin);
}

// ---- cdp -------------------------------------------------------------------
#ifdef BROAD2_CDP
__global__ void child(int *out, int base)
{
	out[base + threadIdx.x] = base * 1000 + (int)threadIdx.x;
}

__global__ void parent(int *out)
{
	child<<<1, 32>>>(out, (int)threadIdx.x * 32);
}

static void step_cdp(void)
{
	int *out, h[4 * 32];
	bool ok = true;

	CK(cudaMalloc(&out, sizeof(h)));
	CK(cudaMemset(out, 0xff, sizeof(h)));
	parent<<<1, 4>>>(out);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
	for (int t = 0; t < 4; t++)
		for (int i = 0; i < 32; i++)
			ok &= h[t * 32 + i] == t * 32 * 1000 + i;
	printf("cdp: h[33] = %d, h[127] = %d\n", h[33], h[127]);
	verdict("cdp", ok);
	cudaFree(out);
}
#endif

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	step_threads();
	step_devmalloc();
	step_pooltrim();
	step_reset();
#ifdef BROAD2_CDP
	step_cdp();
#endif
	printf("%s %s\n", failed ? "FAIL" : "PASS", BROAD2_NAME);
	return failed ? 1 : 0;
}
