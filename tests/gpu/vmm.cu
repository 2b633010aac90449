// vmm: the driver's virtual memory management API as the CUDA samples
// (vectorAddMMAP) and PyTorch's expandable segments use it: granularity,
// an address range reserved, physical allocations created and mapped in
// two pieces, access set, kernels and copies on the range, a retained
// handle, the range grown by mapping a third piece, unmapped, released.
//
// Output: deterministic result lines, then "PASS vmm" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

__global__ void fill(int *p, size_t n, int base)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = base + (int)(i % 1000);
}

__global__ void add1(int *p, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += 1;
}

static long long sum(const int *d, size_t n)
{
	std::vector<int> h(n);
	long long s = 0;

	CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
	for (int v : h)
		s += v;
	return s;
}

int main()
{
	CUmemAllocationProp prop = {};
	CUmemAccessDesc acc = {};
	CUmemGenericAllocationHandle h[3], r;
	CUdeviceptr va;
	size_t g = 0, piece;

	CK(cudaFree(0));		// the runtime's context, current
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CKD(cuMemGetAllocationGranularity(&g, &prop,
					  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	printf("granularity 2 MiB multiple: %d\n", g % (2 << 20) == 0);
	piece = 8 * g;
	CKD(cuMemAddressReserve(&va, 3 * piece, 0, 0, 0));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	for (int i = 0; i < 2; i++) {
		CKD(cuMemCreate(&h[i], piece, &prop, 0));
		CKD(cuMemMap(va + i * piece, piece, 0, h[i], 0));
	}
	CKD(cuMemSetAccess(va, 2 * piece, &acc, 1));
	size_t n = 2 * piece / sizeof(int);
	int *p = (int *)(uintptr_t)va;
	fill<<<(unsigned)((n + 255) / 256), 256>>>(p, n, 7);
	add1<<<(unsigned)((n + 255) / 256), 256>>>(p, n);
	CK(cudaDeviceSynchronize());
	printf("two pieces: sum %lld\n", sum(p, n));

	// the range grows: a third piece, mapped after the others
	CKD(cuMemCreate(&h[2], piece, &prop, 0));
	CKD(cuMemMap(va + 2 * piece, piece, 0, h[2], 0));
	CKD(cuMemSetAccess(va + 2 * piece, piece, &acc, 1));
	n = 3 * piece / sizeof(int);
	CK(cudaMemset(p + 2 * piece / sizeof(int), 0, piece));
	add1<<<(unsigned)((n + 255) / 256), 256>>>(p, n);
	CK(cudaDeviceSynchronize());
	printf("three pieces: sum %lld\n", sum(p, n));

	CKD(cuMemRetainAllocationHandle(&r, (void *)(va + piece)));
	printf("retained handle is piece 1: %d\n", r == h[1]);
	CKD(cuMemRelease(r));
	CUmemAllocationProp got = {};
	CKD(cuMemGetAllocationPropertiesFromHandle(&got, h[0]));
	printf("properties: pinned %d device %d\n",
	       got.type == CU_MEM_ALLOCATION_TYPE_PINNED,
	       got.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
	unsigned long long fl = 0;
	CKD(cuMemGetAccess(&fl, &prop.location, va));
	printf("access read-write: %d\n",
	       fl == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

	for (int i = 0; i < 3; i++) {
		CKD(cuMemUnmap(va + i * piece, piece));
		CKD(cuMemRelease(h[i]));
	}
	CKD(cuMemAddressFree(va, 3 * piece));
	printf("PASS vmm\n");
	return 0;
}
