// SPDX-License-Identifier: MIT
/*
 * idle: a guest that connects, allocates, then does nothing for SECONDS
 * (argv[1], default 3) before it frees and exits.  The integration test
 * reads its worker's CPU time from the daemon's log: an idle guest must
 * cost Dom0 no CPU beyond the worker's short spin after a request.
 * Prints "idle: connected" (flushed) once it starts waiting.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 3;
	CUdeviceptr p = 0;
	CUcontext ctx;
	CUdevice dev;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&p, 1 << 20)) {
		printf("FAIL idle: no device\n");
		return 1;
	}
	printf("idle: connected\n");
	fflush(stdout);
	sleep((unsigned int)(secs > 0 ? secs : 3));
	if (cuMemFree(p) || cuDevicePrimaryCtxRelease(dev)) {
		printf("FAIL idle: the channel did not survive %d idle s\n",
		       secs);
		return 1;
	}
	printf("PASS idle\n");
	return 0;
}
