// printf_dev: a kernel's printf reaches the program's stdout at the
// synchronising call, in order with the program's own printf lines, both
// natively and through xgpu (where the worker's driver writes it and the
// guest library passes it on).
//
// Part 1, ordered: kernels whose threads print one after another
// (__syncthreads between them, so the order is fixed), between host
// lines, synchronised with cudaDeviceSynchronize, cudaStreamSynchronize
// and cudaEventSynchronize. The host line printed after a launch but
// before its synchronize comes before the kernel's lines.
//
// Part 2, unordered: 4 blocks of 64 threads print at once. Their order is
// unspecified, so fd 1 is pointed at a temporary file around launch and
// synchronize, and the lines found there are checked and printed sorted.
// That they are in the file when the synchronize returns is the point:
// the output arrives at the synchronize, not later.
//
// Output: deterministic lines, then "PASS printf_dev" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <algorithm>
#include <vector>
#include <unistd.h>

#define CK(call)                                                        \
	do {                                                            \
		cudaError_t e_ = (call);                                \
		if (e_ != cudaSuccess) {                                \
			printf("FAIL %s: %s\n", #call,                  \
			       cudaGetErrorName(e_));                   \
			exit(1);                                        \
		}                                                       \
	} while (0)

enum { UBLOCKS = 4, UTHREADS = 64 };

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

// thread i prints its line after thread i - 1 has printed its own
__global__ void ordered(int tag, int n)
{
	for (int i = 0; i < n; i++) {
		if ((int)threadIdx.x == i)
			printf("device %d: thread %d of %d, %s\n", tag, i, n,
			       i % 2 ? "odd" : "even");
		__syncthreads();
	}
}

// every thread at once
__global__ void unordered(int tag)
{
	printf("device %d: block %d thread %02d value %d\n", tag,
	       (int)blockIdx.x, (int)threadIdx.x,
	       (int)(blockIdx.x * blockDim.x + threadIdx.x) * 3);
}

static void part_ordered()
{
	cudaStream_t s;
	cudaEvent_t ev;

	printf("host 1: before the first kernel\n");
	ordered<<<1, 4>>>(1, 4);
	CK(cudaGetLastError());
	printf("host 2: launched, not synchronised\n");
	CK(cudaDeviceSynchronize());
	printf("host 3: after cudaDeviceSynchronize\n");

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	ordered<<<1, 3, 0, s>>>(2, 3);
	CK(cudaGetLastError());
	printf("host 4: launched on a stream\n");
	CK(cudaStreamSynchronize(s));
	printf("host 5: after cudaStreamSynchronize\n");

	CK(cudaEventCreate(&ev));
	ordered<<<1, 2, 0, s>>>(3, 2);
	CK(cudaGetLastError());
	CK(cudaEventRecord(ev, s));
	printf("host 6: event recorded\n");
	CK(cudaEventSynchronize(ev));
	printf("host 7: after cudaEventSynchronize\n");

	// nothing printed since: nothing comes
	CK(cudaDeviceSynchronize());
	printf("host 8: after an empty synchronize\n");
	CK(cudaEventDestroy(ev));
	CK(cudaStreamDestroy(s));
}

// the lines the unordered kernel prints, in the order sort() gives
static std::vector<std::string> unordered_want(int tag)
{
	std::vector<std::string> v;
	char buf[128];

	for (int b = 0; b < UBLOCKS; b++)
		for (int t = 0; t < UTHREADS; t++) {
			snprintf(buf, sizeof(buf),
				 "device %d: block %d thread %02d value %d",
				 tag, b, t, (b * UTHREADS + t) * 3);
			v.push_back(buf);
		}
	std::sort(v.begin(), v.end());
	return v;
}

static void part_unordered()
{
	char path[] = "/tmp/printf_dev.XXXXXX";
	std::vector<std::string> got, want = unordered_want(4);
	int fd = mkstemp(path), saved;
	FILE *f;
	char line[256];

	if (fd < 0) {
		printf("FAIL mkstemp\n");
		exit(1);
	}
	unlink(path);
	printf("host 9: unordered kernel\n");
	fflush(stdout);
	saved = dup(1);
	if (saved < 0 || dup2(fd, 1) < 0) {
		printf("FAIL dup2\n");
		exit(1);
	}
	unordered<<<UBLOCKS, UTHREADS>>>(4);
	cudaError_t launch = cudaGetLastError();
	cudaError_t sync = cudaDeviceSynchronize();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	CK(launch);
	CK(sync);

	f = fdopen(fd, "r");
	if (!f) {
		printf("FAIL fdopen\n");
		exit(1);
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		got.push_back(line);
	}
	fclose(f);
	std::sort(got.begin(), got.end());
	expect(got.size() == want.size(),
	       "the unordered kernel's lines were all there at the synchronize");
	expect(got == want, "the unordered kernel's lines are the expected ones");
	for (const std::string &l : got)
		printf("%s\n", l.c_str());
	printf("host 10: %zu lines sorted\n", got.size());
}

int main()
{
	CK(cudaFree(0));
	part_ordered();
	part_unordered();
	if (failures) {
		printf("FAIL printf_dev: %d checks failed\n", failures);
		return 1;
	}
	printf("PASS printf_dev\n");
	return 0;
}
