// managed: unified (managed) memory as the samples use it
// (cudaMallocManaged, then touch it from both sides).
//  - arrays initialised by the CPU, a kernel, cudaDeviceSynchronize, the
//    CPU checks and updates, a second kernel, checked again
//  - atomics from the device into a managed counter
//  - prefetch and advice (hints), cudaStreamAttachMemAsync on a stream
//  - cudaMemcpy to and from managed memory, cudaMemset on it
//  - cudaPointerGetAttributes says managed
//
// Output: deterministic result lines, then "PASS managed" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

__global__ void saxpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void count_odd(const float *y, int n, unsigned int *count)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && ((int)y[i]) % 2)
		atomicAdd(count, 1u);
}

int main()
{
	const int n = 1 << 20;
	float *x, *y;
	unsigned int *count;
	int dev = 0, managed_ok = 0;

	CK(cudaDeviceGetAttribute(&managed_ok, cudaDevAttrManagedMemory, dev));
	printf("managed memory supported: %d\n", managed_ok);
	CK(cudaMallocManaged(&x, n * sizeof(float)));
	CK(cudaMallocManaged(&y, n * sizeof(float)));
	CK(cudaMallocManaged(&count, sizeof(*count)));
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % 1000);
		y[i] = 1.0f;
	}
	*count = 0;

	cudaMemLocation loc = {};
	loc.type = cudaMemLocationTypeDevice;
	loc.id = dev;
	CK(cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetReadMostly,
			 loc));
	CK(cudaMemPrefetchAsync(x, n * sizeof(float), loc, 0, 0));
	saxpy<<<(n + 255) / 256, 256>>>(y, x, 2.0f, n);
	CK(cudaDeviceSynchronize());
	double s = 0;
	for (int i = 0; i < n; i++)
		s += y[i];
	printf("after saxpy: sum %.0f\n", s);

	for (int i = 0; i < n; i += 2)		// the CPU changes half
		y[i] += 1.0f;
	count_odd<<<(n + 255) / 256, 256>>>(y, n, count);
	CK(cudaDeviceSynchronize());
	printf("odd values counted by the device: %u\n", *count);

	// a stream-attached allocation, memset and copies
	cudaStream_t st;
	float *z;
	std::vector<float> h(1024, 3.0f), back(1024);
	CK(cudaStreamCreate(&st));
	CK(cudaMallocManaged(&z, 1024 * sizeof(float), cudaMemAttachHost));
	CK(cudaStreamAttachMemAsync(st, z, 0, cudaMemAttachSingle));
	CK(cudaMemcpyAsync(z, h.data(), 1024 * sizeof(float),
			   cudaMemcpyHostToDevice, st));
	saxpy<<<4, 256, 0, st>>>(z, z, 1.0f, 1024);		// z = 6
	CK(cudaStreamSynchronize(st));
	printf("stream-attached: z[0] %.0f z[1023] %.0f\n", z[0], z[1023]);
	CK(cudaMemset(z, 0, 512 * sizeof(float)));
	CK(cudaMemcpy(back.data(), z, 1024 * sizeof(float),
		      cudaMemcpyDefault));
	printf("after memset: %.0f %.0f\n", back[0], back[1023]);

	cudaPointerAttributes pa;
	CK(cudaPointerGetAttributes(&pa, y));
	printf("pointer type managed: %d\n", pa.type == cudaMemoryTypeManaged);

	CK(cudaStreamDestroy(st));
	CK(cudaFree(z));
	CK(cudaFree(count));
	CK(cudaFree(y));
	CK(cudaFree(x));
	printf("PASS managed\n");
	return 0;
}
