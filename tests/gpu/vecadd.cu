// vecadd: the smallest runtime API round: cudaMalloc, cudaMemcpy H2D, a
// kernel, cudaMemcpy D2H, compared bit for bit with a CPU reference.
//
// Output: deterministic result lines, TIME lines (timing), then
// "PASS vecadd" (exit 0) or "FAIL ..." (exit 1).
#include <chrono>
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

static uint32_t rng_state = 0x9E3779B9u;

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

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main()
{
	const int n = 1 << 20;
	const size_t bytes = (size_t)n * sizeof(float);
	std::vector<float> a(n), b(n), c(n);
	float *da, *db, *dc;
	int bad = 0;
	double sum = 0.0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < n; i++) {
		a[i] = rng_float();
		b[i] = rng_float();
	}

	auto t0 = std::chrono::steady_clock::now();
	CK(cudaMalloc(&da, bytes));
	CK(cudaMalloc(&db, bytes));
	CK(cudaMalloc(&dc, bytes));
	CK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
	vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
	CK_LAUNCH("vadd");
	CK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
	auto t1 = std::chrono::steady_clock::now();

	for (int i = 0; i < n; i++) {
		float ref = a[i] + b[i];

		if (memcmp(&ref, &c[i], sizeof ref) != 0)
			bad++;
		sum += (double)c[i] * (double)((i % 7) + 1);
	}
	printf("vecadd n=%d: %d mismatches, checksum %.6e\n", n, bad, sum);
	printf("TIME alloc+copies+kernel %.3f ms\n",
	       std::chrono::duration<double, std::milli>(t1 - t0).count());

	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
	if (bad) {
		printf("FAIL vecadd (%d mismatches)\n", bad);
		return 1;
	}
	printf("PASS vecadd\n");
	return 0;
}
