// mempool: stream-ordered allocation and memory pools, as the CUDA
// samples (streamOrderedAllocation) and PyTorch's cudaMallocAsync backend
// use them.
//  - cudaMallocAsync / cudaFreeAsync on several streams, a kernel between,
//    many rounds (the pool reuses memory), results checked
//  - the device's default pool: the same handle twice, the current pool,
//    its release threshold set and read back, used memory after a free
//  - an explicit pool (cudaMemPoolCreate), cudaMallocFromPoolAsync, used
//    memory counters, cudaMemPoolTrimTo, access of the own device, made
//    the device's current pool and back, destroyed
//  - cross-stream reuse ordered by an event
//
// Output: deterministic result lines, then "PASS mempool" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

__global__ void fill(uint32_t *p, uint32_t v, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v + (uint32_t)i;
}

__global__ void add(uint32_t *dst, const uint32_t *src, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] += src[i];
}

static int check(const std::vector<uint32_t> &h, uint32_t v, const char *what)
{
	for (size_t i = 0; i < h.size(); i++) {
		uint32_t want = 2 * (v + (uint32_t)i);

		if (h[i] != want) {
			printf("FAIL %s: [%zu] = %u, want %u\n", what, i, h[i],
			       want);
			return 1;
		}
	}
	return 0;
}

int main()
{
	const size_t n = 1 << 18, bytes = n * sizeof(uint32_t);
	const int nstreams = 4, rounds = 50;
	cudaStream_t s[nstreams];
	std::vector<uint32_t> h(n);
	uint64_t sum = 0;
	int bad = 0;

	int supported = 0;
	CK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported,
				  0));
	printf("pools supported: %d\n", supported);
	for (int i = 0; i < nstreams; i++)
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));

	// many rounds of allocate, compute, copy back, free on each stream
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < nstreams; i++) {
			uint32_t *a, *b;

			CK(cudaMallocAsync((void **)&a, bytes, s[i]));
			CK(cudaMallocAsync((void **)&b, bytes, s[i]));
			fill<<<(n + 255) / 256, 256, 0, s[i]>>>(a, r * 10 + i, n);
			fill<<<(n + 255) / 256, 256, 0, s[i]>>>(b, r * 10 + i, n);
			add<<<(n + 255) / 256, 256, 0, s[i]>>>(a, b, n);
			CK(cudaFreeAsync(b, s[i]));
			if (r == rounds - 1) {
				CK(cudaMemcpyAsync(h.data(), a, bytes,
						   cudaMemcpyDeviceToHost, s[i]));
				CK(cudaStreamSynchronize(s[i]));
				bad |= check(h, r * 10 + i, "round");
				sum += h[n - 1];
			}
			CK(cudaFreeAsync(a, s[i]));
		}
	}
	CK(cudaDeviceSynchronize());
	printf("rounds: %d x %d streams, last values sum %llu\n", rounds,
	       nstreams, (unsigned long long)sum);

	// the default pool
	cudaMemPool_t def, def2, cur;
	CK(cudaDeviceGetDefaultMemPool(&def, 0));
	CK(cudaDeviceGetDefaultMemPool(&def2, 0));
	CK(cudaDeviceGetMemPool(&cur, 0));
	printf("default pool stable: %d, current is default: %d\n",
	       def == def2, cur == def);
	uint64_t thr = 64ull << 20, thr2 = 0, used = 0;
	CK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
	CK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr2));
	CK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used));
	printf("default threshold %llu MiB, used after frees %llu\n",
	       (unsigned long long)(thr2 >> 20), (unsigned long long)used);
	thr = 0;
	CK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));

	// an explicit pool
	cudaMemPoolProps props = {};
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	cudaMemPool_t pool;
	CK(cudaMemPoolCreate(&pool, &props));
	uint32_t *p;
	CK(cudaMallocFromPoolAsync((void **)&p, bytes, pool, s[0]));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
	printf("explicit pool used: %llu (>= %zu: %d)\n",
	       (unsigned long long)used, bytes, used >= bytes);
	int reuse = -1;
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic,
				   &reuse));
	printf("opportunistic reuse: %d\n", reuse);
	cudaMemLocation loc = {};
	loc.type = cudaMemLocationTypeDevice;
	loc.id = 0;
	cudaMemAccessFlags acc;
	CK(cudaMemPoolGetAccess(&acc, pool, &loc));
	printf("own device access: %d\n", (int)acc);
	fill<<<(n + 255) / 256, 256, 0, s[0]>>>(p, 7, n);
	add<<<(n + 255) / 256, 256, 0, s[0]>>>(p, p, n);

	// reuse across streams: s[1] waits for s[0]'s free through an event
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaMemcpyAsync(h.data(), p, bytes, cudaMemcpyDeviceToHost, s[0]));
	CK(cudaFreeAsync(p, s[0]));
	CK(cudaEventRecord(ev, s[0]));
	CK(cudaStreamWaitEvent(s[1], ev, 0));
	CK(cudaMallocFromPoolAsync((void **)&p, bytes, pool, s[1]));
	CK(cudaStreamSynchronize(s[0]));
	bad |= check(h, 7, "explicit pool");
	CK(cudaFreeAsync(p, s[1]));
	CK(cudaStreamSynchronize(s[1]));
	CK(cudaMemPoolTrimTo(pool, 0));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
				   &used));
	printf("reserved after trim: %llu\n", (unsigned long long)used);

	// the explicit pool as the device's current pool
	CK(cudaDeviceSetMemPool(0, pool));
	CK(cudaDeviceGetMemPool(&cur, 0));
	CK(cudaMallocAsync((void **)&p, bytes, s[2]));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
	printf("current pool set: %d, allocates from it: %d\n", cur == pool,
	       used >= bytes);
	CK(cudaFreeAsync(p, s[2]));
	CK(cudaStreamSynchronize(s[2]));
	CK(cudaDeviceSetMemPool(0, def));
	CK(cudaMemPoolDestroy(pool));

	// a synchronous free of an asynchronous allocation
	CK(cudaMallocAsync((void **)&p, bytes, s[3]));
	CK(cudaStreamSynchronize(s[3]));
	CK(cudaFree(p));

	CK(cudaEventDestroy(ev));
	for (int i = 0; i < nstreams; i++)
		CK(cudaStreamDestroy(s[i]));
	if (bad)
		return 1;
	printf("PASS mempool\n");
	return 0;
}
