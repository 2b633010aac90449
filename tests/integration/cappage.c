// SPDX-License-Identifier: MIT
/*
 * cappage: asynchronous copies between pageable host memory and the
 * device on a stream being captured (xgpulib_capcopy.c), on the fake
 * device.  The graph reads and writes the program's memory when it runs,
 * not when it was captured:
 *
 *   htod-dtoh   capture H2D from a pageable buffer, then D2H into another
 *               (cuMemcpyHtoDAsync, cuMemcpyDtoHAsync); instantiate; for
 *               several rounds change the source, launch, synchronize:
 *               the destination holds that round's bytes
 *   unified     the same through cuMemcpyAsync (unified addresses)
 *   recapture   capture, launch and destroy the graph 20 times (each
 *               capture frees the pinned buffers that destroyed graphs
 *               left)
 *   pinned      a copy from pinned memory on a capturing stream is still
 *               one memcpy node (nothing added)
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

#define N	3000	/* bytes: not a multiple of anything */

static CUstream s;
static CUdeviceptr d;
static uint8_t *src, *dst;

/* capture H2D src -> d and D2H d -> dst on s (unified: cuMemcpyAsync) */
static bool capture_round_trip(CUgraph *g, bool unified)
{
	if (!OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)))
		return false;
	if (unified) {
		OK(cuMemcpyAsync(d, (CUdeviceptr)(uintptr_t)src, N, s));
		OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, d, N, s));
	} else {
		OK(cuMemcpyHtoDAsync(d, src, N, s));
		OK(cuMemcpyDtoHAsync(dst, d, N, s));
	}
	return OK(cuStreamEndCapture(s, g));
}

/* launch exec ROUNDS times, each with new source bytes */
static void rounds(CUgraphExec x, int nrounds, int salt)
{
	for (int r = 0; r < nrounds; r++) {
		for (int i = 0; i < N; i++)
			src[i] = (uint8_t)(i * 7 + r * 31 + salt);
		memset(dst, 0, N);
		if (!OK(cuGraphLaunch(x, s)) || !OK(cuStreamSynchronize(s)))
			return;
		if (memcmp(src, dst, N)) {
			failf("round %d: the destination does not hold that "
			      "round's bytes (first: %u, want %u)", r, dst[0],
			      src[0]);
			return;
		}
	}
}

static void step_copies(const char *name, bool unified)
{
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	size_t nn = 0;

	begin(name);
	if (capture_round_trip(&g, unified) &&
	    OK(cuGraphGetNodes(g, NULL, &nn)) &&
	    OK(cuGraphInstantiate(&x, g, 0))) {
		/* a host node and a copy each way */
		EXPECT(nn == 4, "%zu nodes in the graph, want 4", nn);
		rounds(x, 5, unified ? 3 : 0);
	}
	if (x)
		cuGraphExecDestroy(x);
	if (g)
		cuGraphDestroy(g);
	end();
}

static void step_recapture(void)
{
	begin("recapture");
	for (int k = 0; k < 20 && !step_failed; k++) {
		CUgraph g = NULL;
		CUgraphExec x = NULL;

		if (capture_round_trip(&g, false) &&
		    OK(cuGraphInstantiate(&x, g, 0)))
			rounds(x, 1, k);
		if (x)
			cuGraphExecDestroy(x);
		if (g)
			cuGraphDestroy(g);
	}
	end();
}

static void step_pinned(void)
{
	CUgraph g = NULL;
	void *p = NULL;
	size_t nn = 0;

	begin("pinned");
	if (OK(cuMemHostAlloc(&p, N, 0)) &&
	    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
		OK(cuMemcpyHtoDAsync(d, p, N, s));
		if (OK(cuStreamEndCapture(s, &g)) &&
		    OK(cuGraphGetNodes(g, NULL, &nn)))
			EXPECT(nn == 1, "%zu nodes, want 1", nn);
	}
	if (g)
		cuGraphDestroy(g);
	if (p)
		cuMemFreeHost(p);
	end();
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	src = malloc(N);
	dst = malloc(N);
	if (!src || !dst || cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAlloc(&d, N)) {
		printf("FAIL setup\n");
		return 1;
	}
	step_copies("htod-dtoh", false);
	step_copies("unified", true);
	step_recapture();
	step_pinned();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
