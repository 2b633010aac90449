// managed: unified (managed) memory as the samples use it
// (cudaMallocManaged, then touch it from both sides).
//  - arrays initialised by the CPU, a kernel, cudaDeviceSynchronize, the
//    CPU checks and updates, a second kernel, checked again
//  - atomics from the device into a managed counter
//  - prefetch and advice (hints), cudaStreamAttachMemAsync on a stream
//  - cudaMemcpy to and from managed memory, cudaMemset on it
//  - cudaPointerGetAttributes says managed
//  - rounds of CPU writes, kernels and CPU reads on the same arrays, and
//    host threads doing the same each on its own stream and arrays (in
//    xgpu's coherent mode, XGPU_MANAGED=coherent, every round moves the
//    blocks the CPU touched to and from the worker)
//
// Output: deterministic result lines, then "PASS managed" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <cstdlib>
#include <thread>
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

__global__ void add_index(unsigned int *p, int n, unsigned int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += (unsigned int)i * k;
}

// a host function reads and writes managed memory (its stream is held
// while it runs: in coherent mode its fetch must not wait for the GPU)
static void CUDART_CB bump(void *arg)
{
	unsigned int *c = (unsigned int *)arg;

	c[1] = c[0] + 1;
}

// rounds of CPU and GPU updates of one array: p[i] ends as
// sum over rounds of (i * k + (i % 5 == r ? r : 0)); 0 when all matched
static int rounds(unsigned int *p, int n, cudaStream_t st, unsigned int k,
		  unsigned long long *sum)
{
	for (int i = 0; i < n; i++)
		p[i] = 0;
	for (int r = 0; r < 5; r++) {
		for (int i = r; i < n; i += 5)	// the CPU writes a fifth
			p[i] += (unsigned int)r;
		add_index<<<(n + 255) / 256, 256, 0, st>>>(p, n, k);
		if (cudaStreamSynchronize(st) != cudaSuccess)
			return 1;
		for (int i = 0; i < n; i++) {	// the CPU reads it all
			unsigned int want = (unsigned int)i * k * (r + 1);

			for (int q = 0; q <= r; q++)
				if (i % 5 == q)
					want += (unsigned int)q;
			if (p[i] != want)
				return 1;
		}
	}
	*sum = 0;
	for (int i = 0; i < n; i++)
		*sum += p[i];
	return 0;
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

	unsigned int *hc;
	CK(cudaMallocManaged(&hc, 2 * sizeof(unsigned int)));
	hc[0] = 0;
	hc[1] = 0;
	add_index<<<1, 2, 0, st>>>(hc, 2, 41);		// hc[1] = 41
	CK(cudaLaunchHostFunc(st, bump, hc));		// hc[1] = hc[0] + 1
	add_index<<<1, 2, 0, st>>>(hc, 2, 1);		// hc[1] += 1
	CK(cudaStreamSynchronize(st));
	printf("host function on managed memory: %u %u\n", hc[0], hc[1]);
	CK(cudaFree(hc));

	// rounds on the legacy stream, then from host threads at once
	const int m = 300000 + 17;		// not a page multiple
	unsigned int *r0;
	unsigned long long sum0 = 0;
	CK(cudaMallocManaged(&r0, m * sizeof(unsigned int)));
	if (rounds(r0, m, 0, 3, &sum0)) {
		printf("FAIL managed: rounds on the legacy stream differ\n");
		return 1;
	}
	printf("rounds: sum %llu\n", sum0);
	CK(cudaFree(r0));
	const int nth = 3;
	std::vector<std::thread> th;
	std::vector<unsigned long long> sums(nth, 0);
	std::vector<int> bad(nth, 0);
	for (int t = 0; t < nth; t++)
		th.emplace_back([&, t]() {
			cudaStream_t ts;
			unsigned int *p;

			if (cudaStreamCreateWithFlags(&ts,
					cudaStreamNonBlocking) != cudaSuccess ||
			    cudaMallocManaged(&p, m * sizeof(unsigned int)) !=
					cudaSuccess) {
				bad[t] = 1;
				return;
			}
			bad[t] = rounds(p, m, ts, 5 + t, &sums[t]);
			cudaFree(p);
			cudaStreamDestroy(ts);
		});
	for (auto &x : th)
		x.join();
	for (int t = 0; t < nth; t++) {
		if (bad[t]) {
			printf("FAIL managed: thread %d's rounds differ\n", t);
			return 1;
		}
		printf("thread %d rounds: sum %llu\n", t, sums[t]);
	}

	CK(cudaStreamDestroy(st));
	CK(cudaFree(z));
	CK(cudaFree(count));
	CK(cudaFree(y));
	CK(cudaFree(x));
	printf("PASS managed\n");
	return 0;
}
