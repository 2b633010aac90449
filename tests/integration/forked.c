// SPDX-License-Identifier: MIT
/*
 * forked: fork() and the driver, as the real driver behaves.
 *   1. A child forked after the parent initialised gets
 *      CUDA_ERROR_NOT_INITIALIZED from every call, cuInit included, and
 *      the parent's channel, memory and context are untouched by it (by its
 *      calls and by its exit).
 *   2. A child forked before the parent initialised initialises as usual,
 *      on a channel of its own, while the parent goes on with its own.
 * Prints "FAIL ..." lines and exits 1 on any difference.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096

static int bad;

static void expect(const char *what, CUresult got, CUresult want)
{
	if (got != want) {
		printf("FAIL forked %s: %d, expected %d\n", what, got, want);
		fflush(stdout);
		bad = 1;
	}
}

/* a round trip through a fresh allocation in the current context */
static void round_trip(const char *who, unsigned char seed)
{
	unsigned char in[N], out[N];
	CUdeviceptr d = 0;

	for (int i = 0; i < N; i++)
		in[i] = (unsigned char)(seed + i * 7);
	memset(out, 0, sizeof(out));
	expect(who, cuMemAlloc(&d, N), CUDA_SUCCESS);
	expect(who, cuMemcpyHtoD(d, in, N), CUDA_SUCCESS);
	expect(who, cuMemcpyDtoH(out, d, N), CUDA_SUCCESS);
	expect(who, cuMemFree(d), CUDA_SUCCESS);
	if (memcmp(in, out, N)) {
		printf("FAIL forked %s: the copy came back different\n", who);
		bad = 1;
	}
}

/* wait for the child; its exit status is its own verdict */
static void reap(pid_t pid, const char *what)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		printf("FAIL forked %s: the child failed (status 0x%x)\n",
		       what, st);
		bad = 1;
	}
}

static int child_after_init(void)
{
	CUdeviceptr d = 0;
	CUdevice dev;
	int n = -1;

	expect("child cuInit", cuInit(0), CUDA_ERROR_NOT_INITIALIZED);
	expect("child cuDeviceGetCount", cuDeviceGetCount(&n),
	       CUDA_ERROR_NOT_INITIALIZED);
	expect("child cuDeviceGet", cuDeviceGet(&dev, 0),
	       CUDA_ERROR_NOT_INITIALIZED);
	expect("child cuMemAlloc", cuMemAlloc(&d, N),
	       CUDA_ERROR_NOT_INITIALIZED);
	expect("child cuCtxSynchronize", cuCtxSynchronize(),
	       CUDA_ERROR_NOT_INITIALIZED);
	return bad;
}

static int child_before_init(void)
{
	CUcontext ctx;
	CUdevice dev;

	expect("early child cuInit", cuInit(0), CUDA_SUCCESS);
	expect("early child cuDeviceGet", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	expect("early child cuDevicePrimaryCtxRetain",
	       cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	expect("early child cuCtxSetCurrent", cuCtxSetCurrent(ctx),
	       CUDA_SUCCESS);
	round_trip("early child round trip", 11);
	return bad;
}

int main(void)
{
	unsigned char in[N], out[N];
	CUdeviceptr d = 0;
	CUcontext ctx;
	CUdevice dev;
	pid_t pid;

	/* 2: fork before the parent initialises */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child_before_init());
	expect("parent cuInit", cuInit(0), CUDA_SUCCESS);
	expect("parent cuDeviceGet", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	expect("parent cuDevicePrimaryCtxRetain",
	       cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	expect("parent cuCtxSetCurrent", cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	reap(pid, "child forked before cuInit");

	/* 1: memory of the parent's, then a child that tries the driver */
	for (int i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 13 + 5);
	expect("parent cuMemAlloc", cuMemAlloc(&d, N), CUDA_SUCCESS);
	expect("parent cuMemcpyHtoD", cuMemcpyHtoD(d, in, N), CUDA_SUCCESS);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(child_after_init());	/* exit handlers run */
	reap(pid, "child forked after cuInit");
	/* a child that only exits */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(0);
	reap(pid, "child that only exits");

	memset(out, 0, sizeof(out));
	expect("parent cuMemcpyDtoH after the children",
	       cuMemcpyDtoH(out, d, N), CUDA_SUCCESS);
	if (memcmp(in, out, N)) {
		printf("FAIL forked: the parent's memory changed\n");
		bad = 1;
	}
	expect("parent cuMemFree", cuMemFree(d), CUDA_SUCCESS);
	round_trip("parent round trip", 3);
	expect("parent cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
	printf("forked: %s\n", bad ? "differences" : "as the driver does");
	return bad;
}
