// SPDX-License-Identifier: MIT
/*
 * threads: several threads share one channel (one guest process, one
 * worker): each interleaves synchronous copies with posted launches and
 * async memsets on its own stream and checks every result, so replies
 * must reach the right waiter and posted work must stay in order.
 * Prints "PASS threads" or "FAIL threads: why"; exits non-zero on failure.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8
#define ITERS 40
#define MAXBYTES (512u << 10)

static const char image[] = "XGPU-FAKE-MODULE\n";
static CUcontext ctx;
static CUfunction fill;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static int failed;

static int bad(int t, const char *what, CUresult rc)
{
	const char *name = NULL;

	cuGetErrorName(rc, &name);
	pthread_mutex_lock(&out_mu);
	if (!failed)
		printf("FAIL threads: thread %d: %s: %s\n", t, what,
		       name ? name : "?");
	failed = 1;
	pthread_mutex_unlock(&out_mu);
	return 1;
}

#define CK(t, call)                                                          \
	do {                                                                 \
		CUresult rc_ = (call);                                       \
		if (rc_ != CUDA_SUCCESS) {                                   \
			bad(t, #call, rc_);                                  \
			goto out;                                            \
		}                                                            \
	} while (0)

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint32_t seed = 0x1234567u * (uint32_t)(t + 1);
	uint8_t *h = malloc(MAXBYTES), *g = malloc(MAXBYTES);
	CUdeviceptr d = 0;
	CUstream s = NULL;

	if (!h || !g) {
		bad(t, "malloc", CUDA_ERROR_OUT_OF_MEMORY);
		goto out;
	}
	CK(t, cuCtxSetCurrent(ctx));
	CK(t, cuMemAlloc(&d, MAXBYTES));
	CK(t, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int it = 0; it < ITERS && !failed; it++) {
		size_t n;
		uint32_t v = seed ^ (uint32_t)it;
		int words;
		void *params[] = { &d, &v, &words };

		seed = seed * 1664525u + 1013904223u;
		n = 4 + seed % (MAXBYTES - 4);
		for (size_t i = 0; i < n; i++)
			h[i] = (uint8_t)(i * 31u + (uint32_t)it + (uint32_t)t);
		CK(t, cuMemcpyHtoD(d, h, n));
		CK(t, cuMemcpyDtoH(g, d, n));
		if (memcmp(g, h, n) != 0) {
			bad(t, "copy round trip differs", CUDA_SUCCESS);
			goto out;
		}
		/* posted work on the stream, then one synchronous check */
		words = (int)(n / 4);
		CK(t, cuMemsetD8Async(d, 0, n, s));
		CK(t, cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, s, params,
				     NULL));
		CK(t, cuStreamSynchronize(s));
		CK(t, cuMemcpyDtoH(g, d, n));
		for (int i = 0; i < words; i++) {
			uint32_t w;

			memcpy(&w, g + 4 * i, 4);
			if (w != v) {
				bad(t, "fill result differs", CUDA_SUCCESS);
				goto out;
			}
		}
	}
out:
	if (s)
		cuStreamDestroy(s);
	if (d)
		cuMemFree(d);
	free(h);
	free(g);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	CUmodule mod = NULL;
	CUdevice dev;

	CK(-1, cuInit(0));
	CK(-1, cuDeviceGet(&dev, 0));
	CK(-1, cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(-1, cuCtxSetCurrent(ctx));
	CK(-1, cuModuleLoadData(&mod, image));
	CK(-1, cuModuleGetFunction(&fill, mod, "xgpu_fake_fill"));
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	CK(-1, cuCtxSynchronize());
	CK(-1, cuModuleUnload(mod));
out:
	if (!failed)
		printf("PASS threads\n");
	return failed;
}
