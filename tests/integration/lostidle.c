// SPDX-License-Identifier: MIT
/*
 * lostidle: a program that idles between two CUDA calls while its backend
 * may go away under it (integration: its worker is killed; tests/xen: its
 * domain is saved and restored, checkpointed, or not migrated).
 *
 *   lostidle TRIGGER [WAIT_S]
 *
 * It connects, allocates 1 MiB on the device, copies a pattern there and
 * back, prints "lostidle: connected" (flushed) and sleeps until the file
 * TRIGGER exists (at most WAIT_S seconds, default 600); its first word
 * says what must happen next, "lost" or "alive" (write it elsewhere and
 * rename it to TRIGGER).  Then, timed:
 * cuMemcpyDtoH of that 1 MiB (a call that must wait for the backend),
 * then cuMemcpyHtoD, cuCtxSynchronize and cuMemFree.
 *   lost:  the first three must fail with CUDA_ERROR_DEVICE_UNAVAILABLE
 *          (what the library says of a lost backend), the first within
 *          10 s;
 *   alive: all must succeed, the pattern come back intact and a new
 *          allocation work.
 * Prints "PASS lostidle: ..." or "FAIL lostidle: ..." with the time the
 * first call took, and exits 0 or 1 (2: bad usage or trigger).
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIZE (1u << 20)
#define FIRST_CALL_MS 10000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *ename(CUresult rc)
{
	const char *s = NULL;

	cuGetErrorName(rc, &s);
	return s ? s : "(unknown error)";
}

static void fill(uint32_t *p, uint32_t seed)
{
	for (uint32_t i = 0; i < SIZE / 4; i++)
		p[i] = i * 2654435761u + seed;
}

/* the first word that differs from the pattern, or -1 */
static long differs(const uint32_t *p, uint32_t seed)
{
	for (uint32_t i = 0; i < SIZE / 4; i++)
		if (p[i] != i * 2654435761u + seed)
			return (long)i;
	return -1;
}

int main(int argc, char **argv)
{
	const char *trigger = argc > 1 ? argv[1] : NULL;
	int wait_s = argc > 2 ? atoi(argv[2]) : 600;
	char want[16] = "";
	CUdeviceptr dp = 0;
	CUresult rc, rc2, rc3, rc4;
	uint32_t *host;
	CUcontext ctx;
	CUdevice dev;
	double t0, t1, t2;
	long bad;
	FILE *f;
	int lost;

	if (!trigger) {
		fprintf(stderr, "usage: lostidle TRIGGER [WAIT_S]\n");
		return 2;
	}
	host = malloc(SIZE);
	if (!host) {
		printf("FAIL lostidle: no memory\n");
		return 1;
	}
	fill(host, 7);
	if ((rc = cuInit(0)) || (rc = cuDeviceGet(&dev, 0)) ||
	    (rc = cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    (rc = cuCtxSetCurrent(ctx)) || (rc = cuMemAlloc(&dp, SIZE)) ||
	    (rc = cuMemcpyHtoD(dp, host, SIZE))) {
		printf("FAIL lostidle: setting up: %s\n", ename(rc));
		return 1;
	}
	memset(host, 0, SIZE);
	rc = cuMemcpyDtoH(host, dp, SIZE);
	if (rc || (bad = differs(host, 7)) >= 0) {
		printf("FAIL lostidle: the first copy back: %s\n",
		       rc ? ename(rc) : "wrong data");
		return 1;
	}
	printf("lostidle: connected\n");
	fflush(stdout);

	/* idle: no call at all until the trigger */
	t0 = now_ms();
	while (access(trigger, F_OK)) {
		if (now_ms() - t0 > wait_s * 1e3) {
			printf("FAIL lostidle: no %s within %d s\n", trigger,
			       wait_s);
			return 1;
		}
		usleep(100000);
	}
	f = fopen(trigger, "r");
	if (!f || fscanf(f, "%15s", want) != 1 ||
	    (strcmp(want, "lost") && strcmp(want, "alive"))) {
		printf("FAIL lostidle: %s says neither lost nor alive\n",
		       trigger);
		return 2;
	}
	fclose(f);
	lost = !strcmp(want, "lost");
	printf("lostidle: idle for %.1f s; calling (expecting %s)\n",
	       (now_ms() - t0) / 1e3, want);
	fflush(stdout);

	memset(host, 0, SIZE);
	t1 = now_ms();
	rc = cuMemcpyDtoH(host, dp, SIZE);
	t2 = now_ms();
	bad = rc ? -1 : differs(host, 7);
	fill(host, 11);
	rc2 = cuMemcpyHtoD(dp, host, SIZE);
	rc3 = cuCtxSynchronize();
	rc4 = cuMemFree(dp);
	printf("lostidle: cuMemcpyDtoH %s after %.0f ms; then cuMemcpyHtoD %s, cuCtxSynchronize %s, cuMemFree %s\n",
	       ename(rc), t2 - t1, ename(rc2), ename(rc3), ename(rc4));

	if (lost) {
		if (rc != CUDA_ERROR_DEVICE_UNAVAILABLE)
			printf("FAIL lostidle: the first call after the backend went: %s, not CUDA_ERROR_DEVICE_UNAVAILABLE\n",
			       ename(rc));
		else if (t2 - t1 > FIRST_CALL_MS)
			printf("FAIL lostidle: the first call took %.0f ms (bound %d ms)\n",
			       t2 - t1, FIRST_CALL_MS);
		else if (rc2 != CUDA_ERROR_DEVICE_UNAVAILABLE ||
			 rc3 != CUDA_ERROR_DEVICE_UNAVAILABLE)
			printf("FAIL lostidle: the calls after it: %s, %s\n",
			       ename(rc2), ename(rc3));
		else {
			printf("PASS lostidle: CUDA_ERROR_DEVICE_UNAVAILABLE after %.0f ms\n",
			       t2 - t1);
			return 0;
		}
		return 1;
	}
	if (rc || bad >= 0) {
		printf("FAIL lostidle: the copy back after idling: %s\n",
		       rc ? ename(rc) : "wrong data");
		return 1;
	}
	if (rc2 || rc3 || rc4) {
		printf("FAIL lostidle: the calls after it: %s, %s, %s\n",
		       ename(rc2), ename(rc3), ename(rc4));
		return 1;
	}
	/* and the channel takes new work */
	fill(host, 13);
	rc = cuMemAlloc(&dp, SIZE);
	if (!rc)
		rc = cuMemcpyHtoD(dp, host, SIZE);
	memset(host, 0, SIZE);
	if (!rc)
		rc = cuMemcpyDtoH(host, dp, SIZE);
	if (rc || differs(host, 13) >= 0) {
		printf("FAIL lostidle: a new allocation after it: %s\n",
		       rc ? ename(rc) : "wrong data");
		return 1;
	}
	cuMemFree(dp);
	printf("PASS lostidle: the data came back intact after %.0f ms\n",
	       t2 - t1);
	return 0;
}
