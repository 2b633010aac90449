// cublas_sgemm: cuBLAS (a shared library that reaches the driver through
// cudart and the driver's private tables) running SGEMM:
//  - 1024 x 1024 x 1024, C = 0.75 * A * B + 0.5 * C
//  - 257 x 131 x 515 with A transposed, C = A^T * B (odd sizes)
// in the default math mode (no TF32), checked against a CPU reference in
// double: every element within 1e-4 of the reference, relative to the sum
// of the magnitudes of its terms.
//
// Output: deterministic result lines, TIME lines (timing), then
// "PASS cublas_sgemm" (exit 0) or "FAIL ..." (exit 1).
#include <cublas_v2.h>

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

#define CKB(call)                                                       \
	do {                                                            \
		cublasStatus_t s_ = (call);                             \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                      \
			printf("FAIL %s: %s\n", #call,                  \
			       cublasGetStatusName(s_));                \
			exit(1);                                        \
		}                                                       \
	} while (0)

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static uint32_t rng_state = 0x3C6EF372u;

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

static double checksum(const std::vector<float> &v)
{
	double s = 0.0;

	for (size_t i = 0; i < v.size(); i++)
		s += (double)v[i] * (double)((i % 7) + 1);
	return s;
}

// Column-major C(MxN) = alpha * op(A) * B(KxN) + beta * C, op(A) MxK;
// A is MxK (lda = M) or, transposed, KxM (lda = K). Returns the number of
// elements off and the largest relative error.
static long check_gemm(bool transa, int M, int N, int K, float alpha,
		       const std::vector<float> &A, const std::vector<float> &B,
		       float beta, const std::vector<float> &C0,
		       const std::vector<float> &C, double *maxrel)
{
	std::vector<double> ref((size_t)M, 0.0), mag((size_t)M, 0.0);
	long bad = 0;

	*maxrel = 0.0;
	for (int j = 0; j < N; j++) {
		for (int i = 0; i < M; i++)
			ref[i] = mag[i] = 0.0;
		for (int k = 0; k < K; k++) {
			double b = B[(size_t)k + (size_t)j * K];

			if (transa) {
				for (int i = 0; i < M; i++) {
					double p = A[(size_t)k + (size_t)i * K] * b;

					ref[i] += p;
					mag[i] += fabs(p);
				}
			} else {
				const float *acol = &A[(size_t)k * M];

				for (int i = 0; i < M; i++) {
					double p = acol[i] * b;

					ref[i] += p;
					mag[i] += fabs(p);
				}
			}
		}
		for (int i = 0; i < M; i++) {
			size_t idx = (size_t)i + (size_t)j * M;
			double c0 = beta != 0.0f ? (double)beta * C0[idx] : 0.0;
			double r = (double)alpha * ref[i] + c0;
			double m = fabs((double)alpha) * mag[i] + fabs(c0);
			double rel = fabs((double)C[idx] - r) / (m > 0 ? m : 1.0);

			if (!(rel <= 1e-4))
				bad++;
			if (rel > *maxrel || rel != rel)
				*maxrel = rel;
		}
	}
	return bad;
}

int main()
{
	const int n = 1024;
	const float alpha = 0.75f, beta = 0.5f, one = 1.0f, zero = 0.0f;
	std::vector<float> A((size_t)n * n), B((size_t)n * n), C0((size_t)n * n),
		C((size_t)n * n);
	float *dA, *dB, *dC, *dT;
	cublasHandle_t h;
	cudaStream_t st;
	cudaEvent_t e0, e1;
	cublasMath_t mode;
	int ver;
	float ms;
	double maxrel;
	long bad;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (auto &v : A)
		v = rng_float();
	for (auto &v : B)
		v = rng_float();
	for (auto &v : C0)
		v = rng_float();

	CK(cudaStreamCreate(&st));
	CKB(cublasCreate(&h));
	CKB(cublasGetVersion(h, &ver));
	printf("cuBLAS version %d\n", ver);
	CKB(cublasSetStream(h, st));
	CKB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
	CKB(cublasGetMathMode(h, &mode));
	expect(mode == CUBLAS_DEFAULT_MATH, "default math mode (no TF32)");

	CK(cudaMalloc(&dA, A.size() * sizeof(float)));
	CK(cudaMalloc(&dB, B.size() * sizeof(float)));
	CK(cudaMalloc(&dC, C.size() * sizeof(float)));
	CK(cudaMalloc(&dT, C.size() * sizeof(float)));
	CKB(cublasSetMatrix(n, n, sizeof(float), A.data(), n, dA, n));
	CKB(cublasSetMatrix(n, n, sizeof(float), B.data(), n, dB, n));
	CK(cudaMemcpy(dC, C0.data(), C0.size() * sizeof(float),
		      cudaMemcpyHostToDevice));

	CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, dA, n, dB,
			n, &beta, dC, n));
	CKB(cublasGetMatrix(n, n, sizeof(float), dC, n, C.data(), n));
	CK(cudaStreamSynchronize(st));
	bad = check_gemm(false, n, n, n, alpha, A, B, beta, C0, C, &maxrel);
	printf("sgemm %dx%dx%d: %ld elements off, max rel err %.3e, checksum "
	       "%.6e\n", n, n, n, bad, maxrel, checksum(C));
	expect(bad == 0, "sgemm 1024^3 within 1e-4");

	// Odd sizes, A transposed: M=257, N=131, K=515; A stored KxM.
	{
		const int M = 257, N = 131, K = 515;
		std::vector<float> At((size_t)K * M), Bs((size_t)K * N),
			Cs((size_t)M * N), none;

		for (auto &v : At)
			v = rng_float();
		for (auto &v : Bs)
			v = rng_float();
		CK(cudaMemcpyAsync(dA, At.data(), At.size() * sizeof(float),
				   cudaMemcpyHostToDevice, st));
		CK(cudaMemcpyAsync(dB, Bs.data(), Bs.size() * sizeof(float),
				   cudaMemcpyHostToDevice, st));
		CKB(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, dA, K,
				dB, K, &zero, dC, M));
		CK(cudaMemcpyAsync(Cs.data(), dC, Cs.size() * sizeof(float),
				   cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
		bad = check_gemm(true, M, N, K, 1.0f, At, Bs, 0.0f, none, Cs,
				 &maxrel);
		printf("sgemm T,N %dx%dx%d: %ld elements off, max rel err %.3e, "
		       "checksum %.6e\n", M, N, K, bad, maxrel, checksum(Cs));
		expect(bad == 0, "sgemm 257x131x515 (A^T) within 1e-4");
	}

	// Throughput, 1024^3 with beta = 0, ten times.
	CKB(cublasSetMatrix(n, n, sizeof(float), A.data(), n, dA, n));
	CKB(cublasSetMatrix(n, n, sizeof(float), B.data(), n, dB, n));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n,
			&zero, dT, n));
	CK(cudaEventRecord(e0, st));
	for (int r = 0; r < 10; r++)
		CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n,
				dB, n, &zero, dT, n));
	CK(cudaEventRecord(e1, st));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	printf("TIME sgemm 1024^3: %.3f ms each, %.1f GFLOP/s\n", ms / 10,
	       10 * 2.0 * n * n * n / (ms * 1e6));

	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	CK(cudaFree(dT));
	CKB(cublasDestroy(h));
	CK(cudaStreamDestroy(st));
	if (failures) {
		printf("FAIL cublas_sgemm (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS cublas_sgemm\n");
	return 0;
}
