// hostreg: page-locking the program's own memory (cudaHostRegister) and
// using it from the device in place (mapped, zero copy).
//  - malloc'd buffers, not page aligned (a large one and a small one on
//    the heap), registered with cudaHostRegisterMapped; their contents
//    stay what they were
//  - a kernel reads one through cudaHostGetDevicePointer and writes the
//    other in place; a second kernel updates it through the raw pointer
//    (unified addressing); the CPU sees the device's writes directly
//  - cudaMemcpyAsync to and from registered memory on a stream
//  - cudaHostGetFlags (on cudaHostAlloc'd memory and, where the driver
//    answers, on registered memory), cudaPointerGetAttributes
//  - unregister: the data is still there
//
// Output: deterministic result lines (checksums, no pointers), then
// "PASS hostreg" (exit 0) or "FAIL ..." (exit 1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

__global__ void twice_plus_one(unsigned int *y, const unsigned int *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = 2 * x[i] + 1;
}

__global__ void add_mod7(unsigned int *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] += (unsigned int)(i % 7);
}

static unsigned long long sum(const unsigned int *p, int n)
{
	unsigned long long s = 0;

	for (int i = 0; i < n; i++)
		s += (unsigned long long)p[i] * (unsigned long long)(i % 13 + 1);
	return s;
}

int main()
{
	const int n = 1 << 20;			// 4 MiB of unsigned ints
	const int m = 3000;			// a small heap buffer
	const size_t bytes = n * sizeof(unsigned int);
	// 16 bytes into each malloc: not page aligned
	char *xbase = (char *)malloc(bytes + 64);
	char *ybase = (char *)malloc(m * sizeof(unsigned int) + 64);
	unsigned int *x = (unsigned int *)(xbase + 16);
	unsigned int *y = (unsigned int *)(ybase + 16);
	unsigned int *dx, *dy, *d;
	unsigned int flags = 0;
	cudaStream_t st;
	int bad = 0, failed = 0;

	if (!xbase || !ybase) {
		printf("FAIL malloc\n");
		return 1;
	}
	for (int i = 0; i < n; i++)
		x[i] = (unsigned int)(i * 2654435761u) >> 8;
	for (int i = 0; i < m; i++)
		y[i] = 7;
	printf("x before: %llu\n", sum(x, n));

	CK(cudaHostRegister(x, bytes, cudaHostRegisterMapped));
	CK(cudaHostRegister(y, m * sizeof(unsigned int),
			    cudaHostRegisterMapped));
	printf("x registered: %llu, y registered: %llu\n", sum(x, n),
	       sum(y, m));

	// pointers and flags
	CK(cudaHostGetDevicePointer((void **)&dx, x, 0));
	CK(cudaHostGetDevicePointer((void **)&dy, y, 0));
	CK(cudaHostGetDevicePointer((void **)&d, x + 1000, 0));
	printf("device pointers equal host pointers: %d %d %d\n", dx == x,
	       dy == y, d == x + 1000);
	// documented for cudaHostAlloc's memory only: where the driver
	// answers for registered memory, it must say mapped
	cudaError_t e = cudaHostGetFlags(&flags, x);
	printf("flags mapped where answered: %d\n",
	       e != cudaSuccess || (flags & cudaHostAllocMapped) != 0);
	(void)cudaGetLastError();
	unsigned int *pinned;
	CK(cudaHostAlloc((void **)&pinned, 4096, cudaHostAllocMapped));
	CK(cudaHostGetFlags(&flags, pinned));
	printf("cudaHostAlloc'd flags mapped: %d\n",
	       (flags & cudaHostAllocMapped) != 0);
	CK(cudaFreeHost(pinned));
	cudaPointerAttributes pa;
	CK(cudaPointerGetAttributes(&pa, x + 5));
	printf("attributes: host %d, dptr ok %d, hptr ok %d\n",
	       pa.type == cudaMemoryTypeHost,
	       pa.devicePointer == (void *)(x + 5),
	       pa.hostPointer == (void *)(x + 5));

	// a kernel reads x through its device pointer, writes y in place
	twice_plus_one<<<(m + 255) / 256, 256>>>(dy, dx, m);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < m; i++)
		if (y[i] != 2 * x[i] + 1)
			bad++;
	printf("kernel through device pointers: y %llu, wrong %d\n",
	       sum(y, m), bad);
	failed |= bad != 0;
	// the CPU changes y, a kernel updates it through the raw pointer
	for (int i = 0; i < m; i += 2)
		y[i] = 100;
	add_mod7<<<(m + 255) / 256, 256>>>(y, m);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	bad = 0;
	for (int i = 0; i < m; i += 2)
		if (y[i] != 100u + (unsigned int)(i % 7))
			bad++;
	printf("kernel through the raw pointer: y %llu, wrong %d\n",
	       sum(y, m), bad);
	failed |= bad != 0;
	// the whole of x in place: it doubles, plus one
	twice_plus_one<<<(n + 255) / 256, 256>>>(x, x, n);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("x updated in place: %llu\n", sum(x, n));

	// copies to and from registered memory
	CK(cudaStreamCreate(&st));
	CK(cudaMalloc(&d, bytes));
	CK(cudaMemcpyAsync(d, x, bytes, cudaMemcpyHostToDevice, st));
	add_mod7<<<(n + 255) / 256, 256, 0, st>>>(d, n);
	CK(cudaGetLastError());
	CK(cudaMemcpyAsync(x, d, bytes, cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	printf("after async copies: %llu\n", sum(x, n));
	CK(cudaMemcpy(d, y, m * sizeof(unsigned int), cudaMemcpyDefault));
	CK(cudaMemcpy(x, d, m * sizeof(unsigned int), cudaMemcpyDefault));
	bad = memcmp(x, y, m * sizeof(unsigned int)) != 0;
	printf("y copied into x through the device: differs %d\n", bad);
	failed |= bad != 0;

	// unregistered, the data stays
	unsigned long long sx = sum(x, n), sy = sum(y, m);
	CK(cudaHostUnregister(x));
	CK(cudaHostUnregister(y));
	printf("after unregister: x %s, y %s\n",
	       sum(x, n) == sx ? "kept" : "CHANGED",
	       sum(y, m) == sy ? "kept" : "CHANGED");
	failed |= sum(x, n) != sx || sum(y, m) != sy;
	printf("x final: %llu, y final: %llu\n", sum(x, n), sum(y, m));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(st));
	free(xbase);
	free(ybase);
	if (failed) {
		printf("FAIL hostreg\n");
		return 1;
	}
	printf("PASS hostreg\n");
	return 0;
}
