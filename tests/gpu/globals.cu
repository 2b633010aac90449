// globals: module-scope variables through the runtime's symbol API.
//  - a __constant__ array written with cudaMemcpyToSymbol (whole, then a
//    part at an offset) and read by a kernel
//  - __device__ variables written by a kernel and read back with
//    cudaMemcpyFromSymbol / cudaMemcpyFromSymbolAsync
//  - a __device__ array written with cudaMemcpyToSymbol and read by a kernel
//  - cudaGetSymbolAddress + cudaGetSymbolSize + plain cudaMemcpy
//
// Output: deterministic result lines, then "PASS globals" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                        \
	do {                                                            \
		cudaError_t e_ = (call);                                \
		if (e_ != cudaSuccess) {                                \
			printf("FAIL %s: %s\n", #call,                  \
			       cudaGetErrorName(e_));                   \
			exit(1);                                        \
		}                                                       \
	} while (0)

#define CK_LAUNCH(what)                                                 \
	do {                                                            \
		cudaError_t e_ = cudaGetLastError();                    \
		if (e_ != cudaSuccess) {                                \
			printf("FAIL launch %s: %s\n", what,            \
			       cudaGetErrorName(e_));                   \
			exit(1);                                        \
		}                                                       \
	} while (0)

enum { NC = 64, NV = 4096, N = 1 << 16 };

__constant__ float coef[NC];
__device__ unsigned int dcount;
__device__ float dsum_part[NV];
__device__ int dtable[NV];

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static uint32_t rng_state = 0xA5A5F00Du;

static uint32_t rng_u32()
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

// Uniform in [-1, 1), never exactly zero.
static float rng_float()
{
	float f = (float)(rng_u32() >> 8) * (2.0f / 16777216.0f) - 1.0f;

	return f == 0.0f ? 0.5f : f;
}

// out[i] = in[i] * coef[i % NC]; also writes the __device__ variables.
__global__ void scale_by_const(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		out[i] = __fmul_rn(in[i], coef[i % NC]);
		if (i < NV)
			dsum_part[i] = __fadd_rn(out[i], (float)dtable[i]);
		atomicAdd(&dcount, 1u);
	}
}

static double checksum(const float *v, int n)
{
	double s = 0.0;

	for (int i = 0; i < n; i++)
		s += (double)v[i] * (double)((i % 7) + 1);
	return s;
}

int main()
{
	std::vector<float> hcoef(NC), in(N), out(N), part(NV), part2(NV);
	std::vector<int> table(NV);
	float *din, *dout;
	unsigned int count = 0, zero = 0;
	void *addr;
	size_t symsize;
	cudaStream_t st;
	int bad;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (auto &v : hcoef)
		v = rng_float();
	for (auto &v : in)
		v = rng_float();
	for (int i = 0; i < NV; i++)
		table[i] = (int)(rng_u32() % 2001) - 1000;

	CK(cudaStreamCreate(&st));
	CK(cudaMalloc(&din, N * sizeof(float)));
	CK(cudaMalloc(&dout, N * sizeof(float)));
	CK(cudaMemcpy(din, in.data(), N * sizeof(float),
		      cudaMemcpyHostToDevice));

	// The whole array first with other values, then the real values:
	// the first 32 in one call, the rest at an offset.
	{
		std::vector<float> junk(NC, 123.0f);

		CK(cudaMemcpyToSymbol(coef, junk.data(), NC * sizeof(float)));
	}
	CK(cudaMemcpyToSymbol(coef, hcoef.data(), 32 * sizeof(float)));
	CK(cudaMemcpyToSymbol(coef, hcoef.data() + 32, (NC - 32) * sizeof(float),
			      32 * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpyToSymbol(dtable, table.data(), NV * sizeof(int)));
	CK(cudaMemcpyToSymbolAsync(dcount, &zero, sizeof zero, 0,
				   cudaMemcpyHostToDevice, st));
	CK(cudaStreamSynchronize(st));

	scale_by_const<<<(N + 255) / 256, 256>>>(din, dout, N);
	CK_LAUNCH("scale_by_const");
	CK(cudaMemcpy(out.data(), dout, N * sizeof(float),
		      cudaMemcpyDeviceToHost));
	CK(cudaMemcpyFromSymbol(&count, dcount, sizeof count));
	CK(cudaMemcpyFromSymbolAsync(part.data(), dsum_part, NV * sizeof(float),
				     0, cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));

	bad = 0;
	for (int i = 0; i < N; i++) {
		float ref = in[i] * hcoef[i % NC];

		bad += memcmp(&ref, &out[i], sizeof ref) != 0;
	}
	printf("__constant__ via cudaMemcpyToSymbol: %d mismatches, checksum "
	       "%.6e\n", bad, checksum(out.data(), N));
	expect(bad == 0, "kernel read of the __constant__ array");
	printf("__device__ counter via cudaMemcpyFromSymbol: %u\n", count);
	expect(count == (unsigned int)N, "__device__ counter");
	bad = 0;
	for (int i = 0; i < NV; i++) {
		float ref = in[i] * hcoef[i % NC] + (float)table[i];

		bad += memcmp(&ref, &part[i], sizeof ref) != 0;
	}
	printf("__device__ array via cudaMemcpyFromSymbolAsync: %d mismatches, "
	       "checksum %.6e\n", bad, checksum(part.data(), NV));
	expect(bad == 0, "__device__ array written by the kernel");

	// Symbol address and size, then a plain cudaMemcpy from it; also an
	// offset read of the constant array through its address.
	CK(cudaGetSymbolSize(&symsize, dsum_part));
	printf("cudaGetSymbolSize(dsum_part) = %zu\n", symsize);
	expect(symsize == NV * sizeof(float), "symbol size");
	CK(cudaGetSymbolAddress(&addr, dsum_part));
	CK(cudaMemcpy(part2.data(), addr, NV * sizeof(float),
		      cudaMemcpyDeviceToHost));
	bad = memcmp(part.data(), part2.data(), NV * sizeof(float)) != 0;
	CK(cudaGetSymbolAddress(&addr, coef));
	{
		std::vector<float> c2(NC / 2);

		CK(cudaMemcpy(c2.data(), (char *)addr + 16 * sizeof(float),
			      (NC / 2) * sizeof(float), cudaMemcpyDeviceToHost));
		bad += memcmp(c2.data(), hcoef.data() + 16,
			      (NC / 2) * sizeof(float)) != 0;
	}
	// Write a __device__ variable through its address and read it back
	// through the symbol.
	CK(cudaGetSymbolAddress(&addr, dcount));
	CK(cudaMemset(addr, 0x7F, sizeof(unsigned int)));
	CK(cudaMemcpyFromSymbol(&count, dcount, sizeof count));
	bad += count != 0x7F7F7F7Fu;
	printf("cudaGetSymbolAddress + cudaMemcpy/cudaMemset: %d errors\n", bad);
	expect(bad == 0, "symbol addresses");

	CK(cudaStreamDestroy(st));
	CK(cudaFree(din));
	CK(cudaFree(dout));
	if (failures) {
		printf("FAIL globals (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS globals\n");
	return 0;
}
