// SPDX-License-Identifier: MIT
/*
 * pinhold MIB: pins MIB MiB of host memory (cuMemHostAlloc), prints
 * "pinhold: <CUresult>" (flushed), holds it 3 s.  Two of them at once,
 * against a daemon with --pinned-mb, share the guest's pinned quota.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
	CUcontext ctx;
	CUdevice dev;
	void *p = NULL;
	CUresult rc;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		printf("pinhold: no context\n");
		return 1;
	}
	rc = cuMemHostAlloc(&p, mib << 20, 0);
	printf("pinhold: %d\n", (int)rc);
	fflush(stdout);
	sleep(3);
	if (!rc)
		cuMemFreeHost(p);
	return 0;
}
