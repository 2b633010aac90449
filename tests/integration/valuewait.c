// SPDX-License-Identifier: MIT
/*
 * valuewait: a thread synchronizes work that waits (cuStreamWaitValue32)
 * for a value another thread writes later (cuStreamWriteValue32 on a
 * second stream), as a producer thread may.  Run against a daemon whose
 * fake device holds a stream at a value wait until the value is written
 * (XGPU_FAKE_VALUE_WAITS=1).  Natively each synchronize returns once the
 * other thread has written; through a channel that one blocked
 * synchronize holds, the write would never be served.
 *
 * Steps, each with the write 100 ms after the wait: by stream
 * (cuStreamSynchronize of the waiting stream), by event (cuEventSynchronize
 * of an event recorded behind the wait), by context (cuCtxSynchronize;
 * then cuCtxSynchronize_v2 of the context).  Each must return success
 * after the write (no sooner: the fake device did hold the stream) and
 * see the written value.  Then "status": a stream query during the wait
 * says CUDA_ERROR_NOT_READY, and after it CUDA_SUCCESS.
 *
 * Prints "PASS step" or "FAIL step: why" per step, then "N passed, M
 * failed"; exits 0 when all passed.  The integration script runs it
 * under a timeout: a hang is a failure.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "steps.h"

#define LATER_MS	100

static CUcontext ctx;
static CUstream a, b;
static CUdeviceptr flag;
static uint32_t value;
static CUresult write_rc;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* the other thread: the value, LATER_MS from now, on stream a */
static void *writer(void *arg)
{
	(void)arg;
	usleep(LATER_MS * 1000);
	write_rc = cuCtxSetCurrent(ctx);
	if (write_rc == CUDA_SUCCESS)
		write_rc = cuStreamWriteValue32(a, flag, value, 0);
	return NULL;
}

enum how { BY_STREAM, BY_EVENT, BY_CONTEXT, BY_CONTEXT_V2 };

static void round_of(const char *name, enum how how)
{
	CUevent e = NULL;
	pthread_t t;
	uint32_t got = 0;
	double t0, ms;
	CUresult rc;

	begin(name);
	value++;
	if (!OK(cuStreamWaitValue32(b, flag, value, CU_STREAM_WAIT_VALUE_GEQ)))
		goto out;
	if (how == BY_EVENT &&
	    (!OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)) ||
	     !OK(cuEventRecord(e, b))))
		goto out;
	t0 = now_ms();
	if (pthread_create(&t, NULL, writer, NULL)) {
		failf("pthread_create");
		goto out;
	}
	switch (how) {
	case BY_STREAM:
		rc = cuStreamSynchronize(b);
		break;
	case BY_EVENT:
		rc = cuEventSynchronize(e);
		break;
	case BY_CONTEXT:
		rc = cuCtxSynchronize();
		break;
	default:
		rc = cuCtxSynchronize_v2(ctx);
		break;
	}
	ms = now_ms() - t0;
	pthread_join(t, NULL);
	EXPECT(rc == CUDA_SUCCESS, "the synchronize: %s (%d)", ename(rc),
	       (int)rc);
	EXPECT(write_rc == CUDA_SUCCESS, "the other thread's write: %s (%d)",
	       ename(write_rc), (int)write_rc);
	EXPECT(ms >= LATER_MS * 0.8, "returned after %.1f ms, before the "
	       "write (%d ms): the stream was not held", ms, LATER_MS);
	if (OK(cuMemcpyDtoH(&got, flag, sizeof(got))))
		EXPECT(got == value, "flag %u, want %u", got, value);
out:
	if (e)
		cuEventDestroy(e);
	end();
}

static void status(void)
{
	pthread_t t;
	CUresult q;

	begin("status");
	value++;
	if (!OK(cuStreamWaitValue32(b, flag, value, CU_STREAM_WAIT_VALUE_GEQ)))
		goto out;
	q = cuStreamQuery(b);
	EXPECT(q == CUDA_ERROR_NOT_READY, "query during the wait: %s (%d)",
	       ename(q), (int)q);
	if (pthread_create(&t, NULL, writer, NULL)) {
		failf("pthread_create");
		goto out;
	}
	pthread_join(t, NULL);
	OK(cuCtxSynchronize());
	q = cuStreamQuery(b);
	EXPECT(q == CUDA_SUCCESS, "query after the write: %s (%d)", ename(q),
	       (int)q);
out:
	end();
}

int main(void)
{
	CUdevice dev;

	begin("setup");
	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx)) ||
	    !OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemAlloc(&flag, sizeof(uint32_t))) ||
	    !OK(cuMemsetD32(flag, 0, 1))) {
		end();
		return 1;
	}
	end();
	round_of("by-stream", BY_STREAM);
	round_of("by-event", BY_EVENT);
	round_of("by-context", BY_CONTEXT);
	round_of("by-context-v2", BY_CONTEXT_V2);
	status();
	cuStreamDestroy(a);
	cuStreamDestroy(b);
	cuMemFree(flag);
	cuDevicePrimaryCtxRelease(dev);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
