// SPDX-License-Identifier: MIT
/*
 * xbench: a small CUDA Driver API benchmark for the nested-Xen test.  Run
 * once in a DomU (Xen transport) and once in Dom0 against a local-transport
 * daemon, it shows what the Xen path costs relative to the local one.
 * Under QEMU TCG the CPU is emulated: compare the two runs' ratios, not
 * the absolute numbers.
 *
 *   xbench [LAT_ITERS [BW_REPS]]     (defaults 200 and 5)
 *
 * Measures the round trip of a 64-byte cuMemcpyHtoD and of
 * cuCtxSynchronize on an idle context (p50 and p99), and the bandwidth of
 * 4 MiB and 16 MiB pageable copies both ways (median of BW_REPS).  Checks
 * that the data survives the round trip.  Prints one machine-readable line
 *   XBENCH key=value ...
 * and exits non-zero on any error.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BIG (16u << 20)

static void check(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return;
	cuGetErrorName(rc, &name);
	printf("xbench: %s: %s\n", what, name ? name : "unknown error");
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the q-quantile (0..1) of n samples, sorted in place */
static double quantile(double *v, int n, double q)
{
	int i;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	i = (int)(q * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	static const size_t sizes[] = { 4u << 20, BIG };
	double memcpy_p50, memcpy_p99, sync_p50, sync_p99;
	double h2d[2], d2h[2], *lat, *bw;
	unsigned char *src, *dst;
	CUdeviceptr d;
	CUcontext ctx;
	CUdevice dev;

	if (iters < 10 || reps < 1) {
		fprintf(stderr, "usage: xbench [LAT_ITERS>=10 [BW_REPS>=1]]\n");
		return 2;
	}
	lat = calloc((size_t)iters, sizeof(*lat));
	bw = calloc((size_t)reps, sizeof(*bw));
	src = malloc(BIG);
	dst = malloc(BIG);
	if (!lat || !bw || !src || !dst) {
		printf("xbench: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < BIG; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 12));
	memset(dst, 0, BIG);

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuMemAlloc(&d, BIG), "cuMemAlloc");

	/* small synchronous copy: one request, one reply */
	for (int i = 0; i < 10; i++)
		check(cuMemcpyHtoD(d, src, 64), "cuMemcpyHtoD 64 (warm-up)");
	for (int i = 0; i < iters; i++) {
		double t = now_us();

		check(cuMemcpyHtoD(d, src, 64), "cuMemcpyHtoD 64");
		lat[i] = now_us() - t;
	}
	memcpy_p50 = quantile(lat, iters, 0.50);
	memcpy_p99 = quantile(lat, iters, 0.99);

	/* synchronize with nothing in flight: the bare round trip */
	check(cuCtxSynchronize(), "cuCtxSynchronize (warm-up)");
	for (int i = 0; i < iters; i++) {
		double t = now_us();

		check(cuCtxSynchronize(), "cuCtxSynchronize");
		lat[i] = now_us() - t;
	}
	sync_p50 = quantile(lat, iters, 0.50);
	sync_p99 = quantile(lat, iters, 0.99);

	/* pageable bulk copies through the data area */
	for (int s = 0; s < 2; s++) {
		size_t n = sizes[s];

		check(cuMemcpyHtoD(d, src, n), "cuMemcpyHtoD (warm-up)");
		for (int r = 0; r < reps; r++) {
			double t = now_us();

			check(cuMemcpyHtoD(d, src, n), "cuMemcpyHtoD");
			bw[r] = n / (now_us() - t);	/* bytes/us = MB/s */
		}
		h2d[s] = quantile(bw, reps, 0.5);
		for (int r = 0; r < reps; r++) {
			double t = now_us();

			check(cuMemcpyDtoH(dst, d, n), "cuMemcpyDtoH");
			bw[r] = n / (now_us() - t);
		}
		d2h[s] = quantile(bw, reps, 0.5);
		if (memcmp(src, dst, n) != 0) {
			size_t first = 0, pages = 0;

			while (src[first] == dst[first])
				first++;
			for (size_t p = 0; p < n; p += 4096)
				pages += memcmp(src + p, dst + p, 4096) != 0;
			printf("xbench: %zu-byte round trip (H2D, D2H) came "
			       "back different: first at byte %zu (page %zu), %zu "
			       "of %zu pages differ; got", n, first,
			       first / 4096, pages, n / 4096);
			for (size_t i = first; i < first + 8 && i < n; i++)
				printf(" %02x", dst[i]);
			printf(", expected");
			for (size_t i = first; i < first + 8 && i < n; i++)
				printf(" %02x", src[i]);
			/* a copy still being written after the call returned? */
			usleep(200000);
			pages = 0;
			for (size_t p = 0; p < n; p += 4096)
				pages += memcmp(src + p, dst + p, 4096) != 0;
			printf("; 200 ms later %zu pages differ\n", pages);
			return 1;
		}
		memset(dst, 0, n);
	}
	check(cuMemFree(d), "cuMemFree");
	check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");

	printf("xbench: %d round trips per latency, median of %d copies per "
	       "bandwidth\n", iters, reps);
	printf("XBENCH memcpy64_p50_us=%.1f memcpy64_p99_us=%.1f "
	       "sync_p50_us=%.1f sync_p99_us=%.1f h2d_4m_MBps=%.0f "
	       "d2h_4m_MBps=%.0f h2d_16m_MBps=%.0f d2h_16m_MBps=%.0f\n",
	       memcpy_p50, memcpy_p99, sync_p50, sync_p99, h2d[0], d2h[0],
	       h2d[1], d2h[1]);
	free(lat);
	free(bw);
	free(src);
	free(dst);
	return 0;
}
