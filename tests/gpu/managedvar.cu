// managedvar: __managed__ variables, as a program declares them: the host
// reads and writes them directly (cudart looks them up in the driver,
// cuLibraryGetManaged, and host code goes through the address it keeps),
// kernels update them, cudaDeviceSynchronize, the host reads again.
//  - an initialised variable read by the host before any kernel
//  - rounds of host writes, a kernel (atomics into the counter, the
//    array read and rewritten), synchronisation and host reads
//  - cudaMemcpyFromSymbol / cudaMemcpyToSymbol on a managed variable,
//    cudaMemcpy from the array into device memory
//  - cudaPointerGetAttributes says managed
//  - a cudaMallocManaged allocation used next to the variables
//
// Output: deterministic result lines, then "PASS managedvar" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <cstdlib>

#include "check.h"

#define N 1000
#define ROUNDS 5

__managed__ int counter;
__managed__ float arr[N];
__managed__ int start = 42;

__global__ void update(int n, float add)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		arr[i] = arr[i] * 2.0f + add;
		atomicAdd(&counter, 1);
	}
}

__global__ void copy_out(float *dst, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = arr[i] + (float)start;
}

int main()
{
	cudaPointerAttributes pa;
	float *dbuf, *hbuf, *m;
	int c2 = 0;

	// the initial value, before any kernel
	printf("start: %d\n", start);
	if (start != 42) {
		printf("FAIL start is %d, not 42\n", start);
		return 1;
	}
	CK(cudaMallocManaged(&m, N * sizeof(float)));
	for (int r = 1; r <= ROUNDS; r++) {
		double sum = 0;

		counter = 10 * r;
		for (int i = 0; i < N; i++) {
			arr[i] = (float)(i * r);
			m[i] = (float)i;
		}
		update<<<(N + 255) / 256, 256>>>(N, (float)r);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		if (counter != 10 * r + N) {
			printf("FAIL round %d: counter %d, not %d\n", r, counter,
			       10 * r + N);
			return 1;
		}
		for (int i = 0; i < N; i++) {
			float want = (float)(i * r) * 2.0f + (float)r;

			if (arr[i] != want) {
				printf("FAIL round %d: arr[%d] = %g, not %g\n",
				       r, i, arr[i], want);
				return 1;
			}
			if (m[i] != (float)i) {
				printf("FAIL round %d: the allocation's [%d] = "
				       "%g\n", r, i, m[i]);
				return 1;
			}
			sum += arr[i];
		}
		printf("round %d: counter %d sum %.0f\n", r, counter, sum);
	}

	// symbols: the runtime's copies see what the host wrote
	counter = 1234;
	CK(cudaMemcpyFromSymbol(&c2, counter, sizeof(c2)));
	c2 += 1;
	CK(cudaMemcpyToSymbol(counter, &c2, sizeof(c2)));
	printf("symbols: %d\n", counter);
	if (counter != 1235) {
		printf("FAIL counter %d after cudaMemcpyToSymbol\n", counter);
		return 1;
	}

	// the array as the source of a copy, and read by a kernel
	CK(cudaMalloc(&dbuf, N * sizeof(float)));
	hbuf = (float *)malloc(N * sizeof(float));
	if (!hbuf)
		return 1;
	for (int i = 0; i < N; i++)
		arr[i] = (float)(3 * i);
	CK(cudaMemcpy(dbuf, arr, N * sizeof(float), cudaMemcpyDefault));
	CK(cudaMemcpy(hbuf, dbuf, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		if (hbuf[i] != (float)(3 * i)) {
			printf("FAIL copy: [%d] = %g\n", i, hbuf[i]);
			return 1;
		}
	copy_out<<<(N + 255) / 256, 256>>>(dbuf, N);
	CK(cudaMemcpy(hbuf, dbuf, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		if (hbuf[i] != (float)(3 * i + 42)) {
			printf("FAIL kernel read: [%d] = %g\n", i, hbuf[i]);
			return 1;
		}
	printf("copies: ok\n");

	CK(cudaPointerGetAttributes(&pa, &counter));
	printf("attributes: %s\n", pa.type == cudaMemoryTypeManaged ?
	       "managed" : "not managed");
	if (pa.type != cudaMemoryTypeManaged) {
		printf("FAIL counter is not managed memory (type %d)\n",
		       (int)pa.type);
		return 1;
	}
	CK(cudaFree(dbuf));
	CK(cudaFree(m));
	free(hbuf);
	printf("PASS managedvar\n");
	return 0;
}
