// matmul: tiled shared-memory matrix multiply C = A * B with
// A 512x768, B 768x384 (row-major, float), checked against a CPU reference
// in double: every element within 1e-4 of the reference, relative to the
// sum of the magnitudes of its products (the scale of its rounding error).
//
// Output: deterministic result lines, TIME lines (timing), then
// "PASS matmul" (exit 0) or "FAIL ..." (exit 1).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

enum { TILE = 16 };

static uint32_t rng_state = 0x1234567u;

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

// One TILE x TILE block of C per thread block; A and B tiles staged in
// shared memory. Bounds-checked, so any M, K, N work.
__global__ void matmul(const float *A, const float *B, float *C, int M,
		       int K, int N)
{
	__shared__ float As[TILE][TILE];
	__shared__ float Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;

	for (int t = 0; t < K; t += TILE) {
		int ak = t + threadIdx.x, bk = t + threadIdx.y;

		As[threadIdx.y][threadIdx.x] =
			row < M && ak < K ? A[(size_t)row * K + ak] : 0.0f;
		Bs[threadIdx.y][threadIdx.x] =
			bk < K && col < N ? B[(size_t)bk * N + col] : 0.0f;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N)
		C[(size_t)row * N + col] = acc;
}

int main()
{
	const int M = 512, K = 768, N = 384;
	std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N);
	std::vector<double> ref((size_t)M * N, 0.0), mag((size_t)M * N, 0.0);
	float *dA, *dB, *dC;
	cudaEvent_t e0, e1;
	float ms;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (auto &v : A)
		v = rng_float();
	for (auto &v : B)
		v = rng_float();

	CK(cudaMalloc(&dA, A.size() * sizeof(float)));
	CK(cudaMalloc(&dB, B.size() * sizeof(float)));
	CK(cudaMalloc(&dC, C.size() * sizeof(float)));
	CK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float),
		      cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float),
		      cudaMemcpyHostToDevice));
	CK(cudaMemset(dC, 0xFF, C.size() * sizeof(float)));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));

	dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
	CK(cudaEventRecord(e0));
	matmul<<<grid, block>>>(dA, dB, dC, M, K, N);
	CK_LAUNCH("matmul");
	CK(cudaEventRecord(e1));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float),
		      cudaMemcpyDeviceToHost));

	// CPU reference, i-k-j order for cache friendliness.
	for (int i = 0; i < M; i++)
		for (int k = 0; k < K; k++) {
			double a = A[(size_t)i * K + k];
			const float *brow = &B[(size_t)k * N];
			double *r = &ref[(size_t)i * N], *m = &mag[(size_t)i * N];

			for (int j = 0; j < N; j++) {
				r[j] += a * brow[j];
				m[j] += fabs(a * brow[j]);
			}
		}

	double maxrel = 0.0, sum = 0.0;
	long bad = 0;
	for (size_t i = 0; i < C.size(); i++) {
		double rel = fabs((double)C[i] - ref[i]) / mag[i];

		if (!(rel <= 1e-4))
			bad++;
		if (rel > maxrel || rel != rel)
			maxrel = rel;
		sum += (double)C[i] * (double)((i % 7) + 1);
	}
	printf("matmul %dx%d * %dx%d tile %d: %ld elements off, max rel err %.3e\n",
	       M, K, K, N, TILE, bad, maxrel);
	printf("matmul checksum %.6e\n", sum);
	printf("TIME matmul kernel %.3f ms (%.1f GFLOP/s)\n", ms,
	       2.0 * M * N * K / (ms * 1e6));

	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	if (bad) {
		printf("FAIL matmul (%ld elements off)\n", bad);
		return 1;
	}
	printf("PASS matmul\n");
	return 0;
}
