// SPDX-License-Identifier: MIT
/*
 * capmark: stream capture next to the GPU scheduler's marks, on the fake
 * device (which captures, tests/fakecuda/fakecuda_graph.c).  The gate
 * closes a batch of work with a mark, an event on each stream the batch
 * used, when the worker goes idle; a mark recorded on a stream that is
 * being captured becomes part of the capture, and the gate's wait for it
 * invalidates the capture (as PyTorch saw on an H200: warm-up on a side
 * stream, then capture on it), so does a mark on the legacy stream while
 * a blocking stream is captured, and so does any wait for an event by a
 * thread not in RELAXED mode while a GLOBAL capture is open.
 *
 *   capmark              the capture steps (ROUNDS rounds each):
 *     capture-own-nb     work on a non-blocking stream S, a GLOBAL capture
 *                        begun on S, work into it, a pause (the worker
 *                        goes idle and marks), the capture ended: a graph,
 *                        instantiated and launched on S
 *     capture-own-blk    the same on a blocking stream
 *     capture-join       a capture begun on C, work on S, S joined to the
 *                        capture by an event wait, work on S into it, S
 *                        joined back, a pause, the capture ended on C
 *   capmark rr N OPS     OPS launches round-robin on N streams, checked
 *                        (the worker's log says marks and events per op
 *                        under --verbose)
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "steps.h"

#define ROUNDS	10
#define WARM	40	/* launches before a capture */
#define CELLS	64

static const char image[] = "XGPU-FAKE-MODULE\n# kernels: xgpu_fake_fill\n";

static CUfunction fill;
static CUdeviceptr d;

/* fill the CELLS cells at d with v, on stream s */
static CUresult fill_on(CUstream s, uint32_t v)
{
	int n = CELLS;
	void *args[] = { &d, &v, &n };

	return cuLaunchKernel(fill, 1, 1, 1, CELLS, 1, 1, 0, s, args, NULL);
}

/* the cells hold v */
static void check_cells(uint32_t v)
{
	uint32_t h[CELLS];

	if (!OK(cuMemcpyDtoH(h, d, sizeof(h))))
		return;
	for (int i = 0; i < CELLS; i++) {
		if (h[i] != v) {
			failf("cell %d holds %u, want %u", i, h[i], v);
			return;
		}
	}
}

/* end the capture on s: a graph, which launches on s */
static void finish(CUstream s, int round)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraphExec x = NULL;
	CUgraph g = NULL;
	CUresult rc;

	if (OK(cuStreamIsCapturing(s, &st)) &&
	    st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		failf("round %d: capture status %d before its end", round,
		      (int)st);
	rc = cuStreamEndCapture(s, &g);
	if (rc != CUDA_SUCCESS || !g) {
		failf("round %d: cuStreamEndCapture: %s (%d), graph %p", round,
		      ename(rc), (int)rc, (void *)g);
		return;
	}
	if (OK(cuGraphInstantiateWithFlags(&x, g, 0))) {
		OK(cuGraphLaunch(x, s));
		OK(cuStreamSynchronize(s));
		OK(cuGraphExecDestroy(x));
	}
	OK(cuGraphDestroy(g));
}

/* work on s, a capture begun on s, work into it, idle, its end */
static void capture_own(const char *name, unsigned int flags)
{
	CUstream s = NULL;

	begin(name);
	if (!OK(cuStreamCreate(&s, flags)))
		goto out;
	for (int r = 0; r < ROUNDS && !step_failed; r++) {
		uint32_t v = 100u + (uint32_t)r;

		for (int i = 0; i < WARM; i++)
			fill_on(s, v);
		if (!OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)))
			break;
		for (int i = 0; i < 3; i++)
			OK(fill_on(s, 7));
		usleep(20000);	/* the worker goes idle */
		finish(s, r);
		OK(cuStreamSynchronize(s));
		check_cells(v);	/* captured work never ran */
	}
out:
	if (s)
		OK(cuStreamDestroy(s));
	end();
}

/* a capture on c, work on s, s joined to it by an event wait */
static void capture_join(void)
{
	CUstream c = NULL, s = NULL;
	CUevent fork_ev = NULL, join_ev = NULL;

	begin("capture-join");
	if (!OK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuEventCreate(&fork_ev, CU_EVENT_DISABLE_TIMING)) ||
	    !OK(cuEventCreate(&join_ev, CU_EVENT_DISABLE_TIMING)))
		goto out;
	for (int r = 0; r < ROUNDS && !step_failed; r++) {
		uint32_t v = 200u + (uint32_t)r;

		if (!OK(cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_GLOBAL)))
			break;
		/* work on s outside the capture, then s joins it */
		for (int i = 0; i < WARM; i++)
			fill_on(s, v);
		OK(cuEventRecord(fork_ev, c));
		OK(cuStreamWaitEvent(s, fork_ev, 0));
		for (int i = 0; i < 3; i++)
			OK(fill_on(s, 7));
		OK(cuEventRecord(join_ev, s));
		OK(cuStreamWaitEvent(c, join_ev, 0));
		usleep(20000);	/* the worker goes idle */
		finish(c, r);
		OK(cuStreamSynchronize(s));
		check_cells(v);
	}
out:
	if (fork_ev)
		OK(cuEventDestroy(fork_ev));
	if (join_ev)
		OK(cuEventDestroy(join_ev));
	if (s)
		OK(cuStreamDestroy(s));
	if (c)
		OK(cuStreamDestroy(c));
	end();
}

/* ops launches round-robin on n streams */
static void round_robin(int n, int ops)
{
	CUstream s[64];
	char name[32];

	snprintf(name, sizeof(name), "rr-%d", n);
	begin(name);
	if (n < 1 || n > 64 || ops < 1) {
		failf("bad arguments");
		end();
		return;
	}
	for (int i = 0; i < n; i++)
		if (!OK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING)))
			n = i;
	for (int i = 0; i < ops && !step_failed; i++)
		OK(fill_on(s[i % n], (uint32_t)i));
	for (int i = 0; i < n; i++)
		OK(cuStreamSynchronize(s[i]));
	check_cells((uint32_t)(ops - 1));
	for (int i = 0; i < n; i++)
		OK(cuStreamDestroy(s[i]));
	end();
}

int main(int argc, char **argv)
{
	CUcontext ctx = NULL;
	CUmodule mod = NULL;
	CUdevice dev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	begin("setup");
	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx)) ||
	    !OK(cuModuleLoadData(&mod, image)) ||
	    !OK(cuModuleGetFunction(&fill, mod, "xgpu_fake_fill")) ||
	    !OK(cuMemAlloc(&d, CELLS * sizeof(uint32_t)))) {
		end();
		printf("%d passed, %d failed\n", passed, failed);
		return 1;
	}
	end();
	if (argc == 4 && !strcmp(argv[1], "rr")) {
		round_robin(atoi(argv[2]), atoi(argv[3]));
	} else {
		capture_own("capture-own-nb", CU_STREAM_NON_BLOCKING);
		capture_own("capture-own-blk", 0);
		capture_join();
	}
	OK(cuMemFree(d));
	OK(cuModuleUnload(mod));
	OK(cuDevicePrimaryCtxRelease(dev));
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
