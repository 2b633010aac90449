// libs: the toolkit's libraries a CUDA program links, each through a
// typical call sequence, results checked on the host:
//  - cuRAND: a Philox generator, uniform and normal numbers (device API
//    too: curand_init in a kernel)
//  - cuSPARSE: a CSR matrix times a dense vector (cusparseSpMV)
//  - cuSOLVER: an LU factorisation and solve (cusolverDnSgetrf/getrs)
//  - NVRTC: a kernel compiled at run time to PTX, loaded with
//    cuModuleLoadDataEx and launched through the driver API
//
// Output: deterministic result lines, then "PASS libs" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <curand.h>
#include <curand_kernel.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <nvrtc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

__global__ void dev_rand(float *out, int n, unsigned long long seed)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	curandStatePhilox4_32_10_t st;

	if (i >= n)
		return;
	curand_init(seed, i, 0, &st);
	out[i] = curand_uniform(&st);
}

static void rand_test()
{
	const int n = 1 << 20;
	float *d;
	std::vector<float> h(n);
	curandGenerator_t g;
	double s = 0, s2 = 0;

	CK(cudaMalloc(&d, n * sizeof(float)));
	CKD(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
	CKD(curandSetPseudoRandomGeneratorSeed(g, 1234));
	CKD(curandGenerateUniform(g, d, n));
	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (float v : h)
		s += v;
	printf("curand uniform: first %.6f mean %.4f\n", h[0], s / n);
	CKD(curandGenerateNormal(g, d, n, 0.0f, 1.0f));
	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	s = 0;
	for (float v : h) {
		s += v;
		s2 += v * v;
	}
	printf("curand normal: first %.6f mean %.3f var %.3f\n", h[0], s / n,
	       s2 / n);
	CKD(curandDestroyGenerator(g));
	dev_rand<<<n / 256, 256>>>(d, n, 42);
	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	printf("curand device API: %.6f %.6f\n", h[0], h[n - 1]);
	CK(cudaFree(d));
}

static void sparse_test()
{
	// a tridiagonal n x n matrix (2 on the diagonal, -1 beside it)
	const int n = 10000;
	std::vector<int> rows(n + 1), cols;
	std::vector<float> vals, x(n), y(n);
	for (int i = 0; i < n; i++) {
		rows[i] = (int)cols.size();
		for (int j = i - 1; j <= i + 1; j++) {
			if (j < 0 || j >= n)
				continue;
			cols.push_back(j);
			vals.push_back(j == i ? 2.0f : -1.0f);
		}
		x[i] = (float)(i % 7);
	}
	rows[n] = (int)cols.size();
	int nnz = rows[n];
	int *dr, *dc;
	float *dv, *dx, *dy;
	CK(cudaMalloc(&dr, (n + 1) * sizeof(int)));
	CK(cudaMalloc(&dc, nnz * sizeof(int)));
	CK(cudaMalloc(&dv, nnz * sizeof(float)));
	CK(cudaMalloc(&dx, n * sizeof(float)));
	CK(cudaMalloc(&dy, n * sizeof(float)));
	CK(cudaMemcpy(dr, rows.data(), (n + 1) * sizeof(int),
		      cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dc, cols.data(), nnz * sizeof(int),
		      cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dv, vals.data(), nnz * sizeof(float),
		      cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dx, x.data(), n * sizeof(float),
		      cudaMemcpyHostToDevice));
	cusparseHandle_t h;
	cusparseSpMatDescr_t A;
	cusparseDnVecDescr_t vx, vy;
	float one = 1.0f, zero = 0.0f;
	size_t ws = 0;
	void *buf = NULL;
	CKD(cusparseCreate(&h));
	CKD(cusparseCreateCsr(&A, n, n, nnz, dr, dc, dv, CUSPARSE_INDEX_32I,
			      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
			      CUDA_R_32F));
	CKD(cusparseCreateDnVec(&vx, n, dx, CUDA_R_32F));
	CKD(cusparseCreateDnVec(&vy, n, dy, CUDA_R_32F));
	CKD(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
				    A, vx, &zero, vy, CUDA_R_32F,
				    CUSPARSE_SPMV_ALG_DEFAULT, &ws));
	CK(cudaMalloc(&buf, ws ? ws : 1));
	CKD(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx,
			 &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
			 buf));
	CK(cudaMemcpy(y.data(), dy, n * sizeof(float),
		      cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++) {
		float want = 2 * x[i] - (i ? x[i - 1] : 0) -
			     (i < n - 1 ? x[i + 1] : 0);
		bad += fabsf(y[i] - want) > 1e-4f;
	}
	printf("cusparse SpMV: %d wrong of %d\n", bad, n);
	CKD(cusparseDestroyDnVec(vx));
	CKD(cusparseDestroyDnVec(vy));
	CKD(cusparseDestroySpMat(A));
	CKD(cusparseDestroy(h));
	CK(cudaFree(buf));
	CK(cudaFree(dr));
	CK(cudaFree(dc));
	CK(cudaFree(dv));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	if (bad)
		exit(1);
}

static void solver_test()
{
	const int n = 64;
	std::vector<float> a(n * n), b(n), x(n);
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)	// column major, diagonally dominant
			a[i + j * n] = i == j ? n + 1.0f : 1.0f / (1 + i + j);
	for (int i = 0; i < n; i++)
		b[i] = (float)(i + 1);
	float *da, *db, *work;
	int *ipiv, *info, lwork = 0, hinfo = -1;
	cusolverDnHandle_t h;
	CKD(cusolverDnCreate(&h));
	CK(cudaMalloc(&da, n * n * sizeof(float)));
	CK(cudaMalloc(&db, n * sizeof(float)));
	CK(cudaMalloc(&ipiv, n * sizeof(int)));
	CK(cudaMalloc(&info, sizeof(int)));
	CK(cudaMemcpy(da, a.data(), n * n * sizeof(float),
		      cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, b.data(), n * sizeof(float),
		      cudaMemcpyHostToDevice));
	CKD(cusolverDnSgetrf_bufferSize(h, n, n, da, n, &lwork));
	CK(cudaMalloc(&work, lwork * sizeof(float)));
	CKD(cusolverDnSgetrf(h, n, n, da, n, work, ipiv, info));
	CKD(cusolverDnSgetrs(h, CUBLAS_OP_N, n, 1, da, n, ipiv, db, n, info));
	CK(cudaMemcpy(&hinfo, info, sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(x.data(), db, n * sizeof(float),
		      cudaMemcpyDeviceToHost));
	double err = 0;
	for (int i = 0; i < n; i++) {
		double r = -b[i];
		for (int j = 0; j < n; j++)
			r += a[i + j * n] * x[j];
		err = fmax(err, fabs(r));
	}
	printf("cusolver getrf/getrs: info %d, residual below 1e-3: %d\n",
	       hinfo, err < 1e-3);
	CKD(cusolverDnDestroy(h));
	CK(cudaFree(work));
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(ipiv));
	CK(cudaFree(info));
	if (hinfo || err >= 1e-3)
		exit(1);
}

static const char *src =
	"extern \"C\" __global__ void axpy(float a, const float *x, float *y,"
	" int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = a * x[i] + y[i];\n"
	"}\n";

static void nvrtc_test()
{
	nvrtcProgram prog;
	const char *opts[] = { "--gpu-architecture=compute_90" };
	size_t ptx_size;
	CKD(nvrtcCreateProgram(&prog, src, "axpy.cu", 0, NULL, NULL));
	CKD(nvrtcCompileProgram(prog, 1, opts));
	CKD(nvrtcGetPTXSize(prog, &ptx_size));
	std::vector<char> ptx(ptx_size);
	CKD(nvrtcGetPTX(prog, ptx.data()));
	CKD(nvrtcDestroyProgram(&prog));

	CK(cudaFree(0));
	CUmodule mod;
	CUfunction f;
	char log[4096] = "";
	CUjit_option jo[] = { CU_JIT_ERROR_LOG_BUFFER,
			      CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *jv[] = { log, (void *)(uintptr_t)sizeof(log) };
	CKD(cuModuleLoadDataEx(&mod, ptx.data(), 2, jo, jv));
	CKD(cuModuleGetFunction(&f, mod, "axpy"));
	const int n = 4096;
	std::vector<float> hx(n), hy(n);
	for (int i = 0; i < n; i++) {
		hx[i] = (float)i;
		hy[i] = 1.0f;
	}
	float *dx, *dy, a = 0.5f;
	int nn = n;
	CK(cudaMalloc(&dx, n * sizeof(float)));
	CK(cudaMalloc(&dy, n * sizeof(float)));
	CK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	void *args[] = { &a, &dx, &dy, &nn };
	CKD(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	CK(cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
	printf("nvrtc axpy: y[0] %.1f y[4095] %.1f\n", hy[0], hy[n - 1]);
	CKD(cuModuleUnload(mod));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	if (hy[n - 1] != 0.5f * (n - 1) + 1)
		exit(1);
}

int main()
{
	rand_test();
	sparse_test();
	solver_test();
	nvrtc_test();
	printf("PASS libs\n");
	return 0;
}
