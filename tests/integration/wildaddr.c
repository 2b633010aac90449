// SPDX-License-Identifier: MIT
/*
 * wildaddr: device addresses that are not the guest's, in copies and
 * memsets.  Run against a daemon whose fake driver copies wherever it is
 * told (XGPU_FAKE_WILD_COPIES=1, as a driver whose GPU reaches all of the
 * process's memory would): only the worker's own check stands between
 * these copies and the worker's memory.
 *
 *   wildaddr bad         copies and memsets at an address of the worker's
 *                        own heap (just below an allocation of the fake's),
 *                        into a freed allocation and past the end of one,
 *                        synchronous and asynchronous, 1D, 2D and 3D, and
 *                        stream memory operations and graph memset and
 *                        memcpy nodes at such an address: each
 *                        must be CUDA_ERROR_INVALID_VALUE, and the guest's
 *                        own copies must still work after them
 *   wildaddr good SECS   a well-behaved guest copying and checking for
 *                        SECS seconds (run beside `bad`)
 *
 * Prints "PASS step" or "FAIL step: why" and exits non-zero on a failure.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096

static int failures;

static void check(const char *what, CUresult rc, CUresult want)
{
	const char *s = NULL;

	if (rc == want) {
		printf("PASS %s\n", what);
		return;
	}
	cuGetErrorName(rc, &s);
	printf("FAIL %s: %s (%d), want %d\n", what, s ? s : "?", (int)rc,
	       (int)want);
	failures++;
}

/* an asynchronous call's error: from the call or from the next sync */
static CUresult async_rc(CUresult rc, CUstream s)
{
	return rc ? rc : cuStreamSynchronize(s);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* copy a pattern through the device and back; true if it came back */
static bool round_trip(unsigned int seed)
{
	static uint8_t in[N], out[N];
	CUdeviceptr a = 0, b = 0;
	bool ok = false;

	for (int i = 0; i < N; i++)
		in[i] = (uint8_t)(i * 7 + seed);
	if (cuMemAlloc(&a, N) || cuMemAlloc(&b, N))
		goto out;
	if (cuMemcpyHtoD(a, in, N) || cuMemcpyDtoD(b, a, N) ||
	    cuMemsetD8(b + N / 2, (uint8_t)seed, 16) ||
	    cuMemcpyDtoH(out, b, N))
		goto out;
	memset(in + N / 2, (uint8_t)seed, 16);
	ok = memcmp(in, out, N) == 0;
out:
	if (a)
		cuMemFree(a);
	if (b)
		cuMemFree(b);
	return ok;
}

static int good(double secs)
{
	double end = now() + secs;
	unsigned long n = 0;

	while (now() < end) {
		if (!round_trip((unsigned int)n)) {
			printf("FAIL wildaddr good: round trip %lu wrong\n", n);
			return 1;
		}
		n++;
	}
	printf("PASS wildaddr good: %lu round trips\n", n);
	return n ? 0 : 1;
}

/* memset and memcpy nodes at addresses not the guest's */
static int graph_nodes(CUdeviceptr a, CUdeviceptr freed, CUdeviceptr wild)
{
	CUDA_MEMSET_NODE_PARAMS mp;
	CUDA_MEMCPY3D c;
	CUcontext ctx;
	CUgraphNode n;
	CUgraph g;

	if (cuCtxGetCurrent(&ctx) || cuGraphCreate(&g, 0)) {
		printf("FAIL graph set-up\n");
		return 1;
	}
	memset(&mp, 0, sizeof(mp));
	mp.dst = wild;
	mp.elementSize = 1;
	mp.width = 64;
	mp.height = 1;
	mp.value = 0x5a;
	check("worker memory: graph memset node",
	      cuGraphAddMemsetNode(&n, g, NULL, 0, &mp, ctx),
	      CUDA_ERROR_INVALID_VALUE);
	mp.dst = a + N - 32;
	check("past the end: graph memset node",
	      cuGraphAddMemsetNode(&n, g, NULL, 0, &mp, ctx),
	      CUDA_ERROR_INVALID_VALUE);
	mp.dst = a;
	mp.elementSize = 4;
	mp.width = 16;
	mp.height = 4;
	mp.pitch = N;
	check("past the end: graph memset node 2D",
	      cuGraphAddMemsetNode(&n, g, NULL, 0, &mp, ctx),
	      CUDA_ERROR_INVALID_VALUE);
	mp.height = 1;
	check("in bounds: graph memset node",
	      cuGraphAddMemsetNode(&n, g, NULL, 0, &mp, ctx), CUDA_SUCCESS);
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = wild;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = a;
	c.WidthInBytes = 64;
	c.Height = 1;
	c.Depth = 1;
	check("worker memory: graph memcpy node",
	      cuGraphAddMemcpyNode(&n, g, NULL, 0, &c, ctx),
	      CUDA_ERROR_INVALID_VALUE);
	c.srcDevice = a;
	c.dstDevice = freed;
	check("freed: graph memcpy node",
	      cuGraphAddMemcpyNode(&n, g, NULL, 0, &c, ctx),
	      CUDA_ERROR_INVALID_VALUE);
	c.dstDevice = a + 64;
	check("in bounds: graph memcpy node",
	      cuGraphAddMemcpyNode(&n, g, NULL, 0, &c, ctx), CUDA_SUCCESS);
	return cuGraphDestroy(g) ? 1 : 0;
}

static int bad(void)
{
	static uint8_t buf[2 * N];
	CUdeviceptr a, freed, wild;
	CUDA_MEMCPY2D c2;
	CUDA_MEMCPY3D c3;
	CUstream s;

	if (cuMemAlloc(&a, N) || cuMemAlloc(&freed, N) || cuMemFree(freed) ||
	    cuStreamCreate(&s, 0)) {
		printf("FAIL wildaddr set-up\n");
		return 1;
	}
	/* the fake's allocations come from the worker's heap: below one
	 * is the worker's own memory, no allocation of the guest's */
	wild = a - 256;

	check("worker memory: DtoH", cuMemcpyDtoH(buf, wild, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: HtoD", cuMemcpyHtoD(wild, buf, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: DtoD from", cuMemcpyDtoD(a, wild, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: DtoD to", cuMemcpyDtoD(wild, a, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: memset", cuMemsetD8(wild, 0x5a, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: DtoH async",
	      async_rc(cuMemcpyDtoHAsync(buf, wild, 64, s), s),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: memset async",
	      async_rc(cuMemsetD32Async(wild, 0x5a5a5a5a, 16, s), s),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: stream write value",
	      async_rc(cuStreamWriteValue32(s, wild, 1, 0), s),
	      CUDA_ERROR_INVALID_VALUE);
	check("worker memory: stream wait value",
	      async_rc(cuStreamWaitValue32(s, wild, 0,
					   CU_STREAM_WAIT_VALUE_GEQ), s),
	      CUDA_ERROR_INVALID_VALUE);
	check("own memory: stream write value",
	      async_rc(cuStreamWriteValue32(s, a + N - 4, 1, 0), s),
	      CUDA_SUCCESS);
	/* a span that starts in the allocation and reaches below: no */
	check("worker memory: straddling", cuMemcpyDtoH(buf, wild, 512),
	      CUDA_ERROR_INVALID_VALUE);

	check("freed: HtoD", cuMemcpyHtoD(freed, buf, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("freed: DtoH", cuMemcpyDtoH(buf, freed, 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("freed: memset", cuMemsetD16(freed, 0x5a5a, 32),
	      CUDA_ERROR_INVALID_VALUE);
	check("freed: HtoD async",
	      async_rc(cuMemcpyHtoDAsync(freed, buf, 64, s), s),
	      CUDA_ERROR_INVALID_VALUE);

	check("past the end: DtoH", cuMemcpyDtoH(buf, a, N + 1),
	      CUDA_ERROR_INVALID_VALUE);
	check("past the end: HtoD", cuMemcpyHtoD(a + 1, buf, N),
	      CUDA_ERROR_INVALID_VALUE);
	check("past the end: DtoD", cuMemcpyDtoD(a + N / 2, a, N / 2 + 64),
	      CUDA_ERROR_INVALID_VALUE);
	check("past the end: memset", cuMemsetD32(a, 0, N / 4 + 1),
	      CUDA_ERROR_INVALID_VALUE);
	check("past the end: memset 2D", cuMemsetD2D8(a, 1024, 0, 512, 5),
	      CUDA_ERROR_INVALID_VALUE);
	check("past the end: DtoD async",
	      async_rc(cuMemcpyDtoDAsync(a, a + 64, N, s), s),
	      CUDA_ERROR_INVALID_VALUE);
	memset(&c2, 0, sizeof(c2));
	c2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c2.srcDevice = a;
	c2.srcPitch = 1024;
	c2.dstMemoryType = CU_MEMORYTYPE_HOST;
	c2.dstHost = buf;
	c2.dstPitch = 1024;
	c2.WidthInBytes = 1024;
	c2.Height = 5;
	check("past the end: 2D", cuMemcpy2D(&c2), CUDA_ERROR_INVALID_VALUE);
	c2.Height = 4;
	check("in bounds: 2D", cuMemcpy2D(&c2), CUDA_SUCCESS);
	c2.srcDevice = wild;
	c2.Height = 1;
	check("worker memory: 2D", cuMemcpy2D(&c2), CUDA_ERROR_INVALID_VALUE);
	memset(&c3, 0, sizeof(c3));
	c3.srcMemoryType = CU_MEMORYTYPE_HOST;
	c3.srcHost = buf;
	c3.srcPitch = 512;
	c3.srcHeight = 4;
	c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c3.dstDevice = a;
	c3.dstPitch = 512;
	c3.dstHeight = 4;
	c3.WidthInBytes = 512;
	c3.Height = 4;
	c3.Depth = 3;
	check("past the end: 3D", cuMemcpy3D(&c3), CUDA_ERROR_INVALID_VALUE);
	c3.Depth = 2;
	check("in bounds: 3D", cuMemcpy3D(&c3), CUDA_SUCCESS);
	c3.dstDevice = freed;
	check("freed: 3D", cuMemcpy3D(&c3), CUDA_ERROR_INVALID_VALUE);

	/* graph nodes: checked when they are made */
	if (graph_nodes(a, freed, wild))
		failures++;

	/* the channel and the context are still this guest's to use */
	check("own copies after", round_trip(3) ? CUDA_SUCCESS :
						   CUDA_ERROR_UNKNOWN,
	      CUDA_SUCCESS);
	check("context after", cuCtxSynchronize(), CUDA_SUCCESS);
	check("stream destroyed", cuStreamDestroy(s), CUDA_SUCCESS);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdevice dev;

	if (argc < 2 || (strcmp(argv[1], "bad") && strcmp(argv[1], "good"))) {
		fprintf(stderr, "usage: wildaddr bad | good SECS\n");
		return 2;
	}
	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		printf("FAIL wildaddr: no context\n");
		return 1;
	}
	if (!strcmp(argv[1], "good"))
		return good(argc > 2 ? atof(argv[2]) : 3);
	return bad();
}
