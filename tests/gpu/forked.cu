// SPDX-License-Identifier: MIT
/*
 * forked: fork() beside CUDA, as PyTorch's DataLoader workers and
 * multiprocessing do.  A child forked before the parent touches CUDA uses
 * it on its own; a child forked after it gets errors from CUDA (what the
 * driver says is printed, for comparison with a native run) and must
 * leave the parent's device memory and context alone, also when it only
 * exits.  Prints what happened, then PASS (or FAIL: the parent's data
 * changed or its CUDA failed).
 */
#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#define N (1 << 20)

__global__ void fill(unsigned int *p, unsigned int seed, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = seed ^ (unsigned int)i * 2654435761u;
}

/* fill on the GPU, copy back, check; 0 when right */
static int use_cuda(const char *who, unsigned int seed)
{
	std::vector<unsigned int> h(N);
	unsigned int *d = nullptr;
	cudaError_t e;

	e = cudaMalloc(&d, N * sizeof(*d));
	if (e == cudaSuccess) {
		fill<<<N / 256, 256>>>(d, seed, N);
		e = cudaMemcpy(h.data(), d, N * sizeof(*d),
			       cudaMemcpyDeviceToHost);
	}
	if (e != cudaSuccess) {
		printf("%s: %s\n", who, cudaGetErrorName(e));
		return 1;
	}
	cudaFree(d);
	for (int i = 0; i < N; i++)
		if (h[i] != (seed ^ (unsigned int)i * 2654435761u)) {
			printf("%s: wrong result at %d\n", who, i);
			return 1;
		}
	printf("%s: ok\n", who);
	return 0;
}

static int reap(pid_t pid)
{
	int st = 0;

	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main()
{
	std::vector<unsigned int> before(N), after(N);
	unsigned int *d = nullptr;
	int count = -1, bad = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int rc = use_cuda("child forked before CUDA", 7);

		fflush(stdout);
		_exit(rc);
	}
	printf("child forked before CUDA exited %d\n", reap(pid));

	if (use_cuda("parent", 1)) {
		printf("FAIL forked\n");
		return 1;
	}
	cudaMalloc(&d, N * sizeof(*d));
	fill<<<N / 256, 256>>>(d, 42, N);
	cudaMemcpy(before.data(), d, N * sizeof(*d), cudaMemcpyDeviceToHost);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		cudaError_t e = cudaGetDeviceCount(&count);

		printf("child forked after CUDA: cudaGetDeviceCount: %s\n",
		       cudaGetErrorName(e));
		use_cuda("child forked after CUDA", 9);
		fflush(stdout);
		exit(0);
	}
	printf("child forked after CUDA exited %d\n", reap(pid));
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(0);
	printf("child that only exits exited %d\n", reap(pid));

	cudaMemcpy(after.data(), d, N * sizeof(*d), cudaMemcpyDeviceToHost);
	if (memcmp(before.data(), after.data(), N * sizeof(*d))) {
		printf("parent: its device memory changed\n");
		bad = 1;
	}
	cudaFree(d);
	bad |= use_cuda("parent after the children", 3);
	printf("%s forked\n", bad ? "FAIL" : "PASS");
	return bad;
}
