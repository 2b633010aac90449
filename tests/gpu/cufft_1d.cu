// SPDX-License-Identifier: MIT
/*
 * cufft_1d: cuFFT plans (complex-to-complex forward and inverse, real to
 * complex) on 1024-point batches, checked against a direct DFT on the
 * CPU.  cuFFT finds its kernels through the driver's private tables, which
 * the guest library must answer as the real driver does.  Prints PASS or
 * FAIL with the largest error.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cufft.h>

#define N 1024
#define BATCH 4

#define CK(x)								\
	do {								\
		cudaError_t e_ = (x);					\
		if (e_ != cudaSuccess) {				\
			printf("FAIL cufft_1d: %s: %s\n", #x,		\
			       cudaGetErrorName(e_));			\
			return 1;					\
		}							\
	} while (0)

#define CKF(x)								\
	do {								\
		cufftResult r_ = (x);					\
		if (r_ != CUFFT_SUCCESS) {				\
			printf("FAIL cufft_1d: %s: cufft error %d\n",	\
			       #x, (int)r_);				\
			return 1;					\
		}							\
	} while (0)

/* X[k] = sum x[n] e^(sign 2 pi i k n / N), in double */
static void dft(const cufftComplex *x, std::vector<double> &re,
		std::vector<double> &im, int sign)
{
	for (int k = 0; k < N; k++) {
		double sr = 0, si = 0;

		for (int n = 0; n < N; n++) {
			double a = sign * 2.0 * M_PI * (double)k * n / N;

			sr += x[n].x * cos(a) - x[n].y * sin(a);
			si += x[n].x * sin(a) + x[n].y * cos(a);
		}
		re[k] = sr;
		im[k] = si;
	}
}

int main()
{
	std::vector<cufftComplex> h(N * BATCH), out(N * BATCH);
	std::vector<double> re(N), im(N);
	cufftComplex *d = nullptr;
	cufftHandle plan, rplan;
	float *dr = nullptr;
	cufftComplex *dc = nullptr;
	double err = 0, rerr = 0;

	srand(7);
	for (auto &c : h) {
		c.x = (float)rand() / RAND_MAX - 0.5f;
		c.y = (float)rand() / RAND_MAX - 0.5f;
	}
	CK(cudaMalloc(&d, sizeof(cufftComplex) * N * BATCH));
	CK(cudaMemcpy(d, h.data(), sizeof(cufftComplex) * N * BATCH,
		      cudaMemcpyHostToDevice));
	CKF(cufftPlan1d(&plan, N, CUFFT_C2C, BATCH));
	CKF(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
	CK(cudaMemcpy(out.data(), d, sizeof(cufftComplex) * N * BATCH,
		      cudaMemcpyDeviceToHost));
	for (int b = 0; b < BATCH; b++) {
		dft(&h[b * N], re, im, -1);
		for (int k = 0; k < N; k++)
			err = fmax(err, fmax(fabs(out[b * N + k].x - re[k]),
					     fabs(out[b * N + k].y - im[k])));
	}
	/* inverse: back to N times the input */
	CKF(cufftExecC2C(plan, d, d, CUFFT_INVERSE));
	CK(cudaMemcpy(out.data(), d, sizeof(cufftComplex) * N * BATCH,
		      cudaMemcpyDeviceToHost));
	for (int i = 0; i < N * BATCH; i++)
		err = fmax(err, fmax(fabs(out[i].x / N - h[i].x),
				     fabs(out[i].y / N - h[i].y)));

	/* real to complex: the first N/2 + 1 outputs of the real input */
	std::vector<float> x(N);
	std::vector<cufftComplex> xr(N), rc(N / 2 + 1);

	for (int n = 0; n < N; n++) {
		x[n] = h[n].x;
		xr[n].x = x[n];
		xr[n].y = 0;
	}
	CK(cudaMalloc(&dr, sizeof(float) * N));
	CK(cudaMalloc(&dc, sizeof(cufftComplex) * (N / 2 + 1)));
	CK(cudaMemcpy(dr, x.data(), sizeof(float) * N,
		      cudaMemcpyHostToDevice));
	CKF(cufftPlan1d(&rplan, N, CUFFT_R2C, 1));
	CKF(cufftExecR2C(rplan, dr, dc));
	CK(cudaMemcpy(rc.data(), dc, sizeof(cufftComplex) * (N / 2 + 1),
		      cudaMemcpyDeviceToHost));
	dft(xr.data(), re, im, -1);
	for (int k = 0; k <= N / 2; k++)
		rerr = fmax(rerr, fmax(fabs(rc[k].x - re[k]),
				       fabs(rc[k].y - im[k])));
	cufftDestroy(plan);
	cufftDestroy(rplan);
	cudaFree(d);
	cudaFree(dr);
	cudaFree(dc);
	if (err > 1e-2 || rerr > 1e-2) {
		printf("FAIL cufft_1d: largest error %.3g (c2c), %.3g (r2c)\n",
		       err, rerr);
		return 1;
	}
	printf("cufft_1d: c2c and r2c of %d points agree with a direct DFT\n",
	       N);
	printf("PASS cufft_1d\n");
	return 0;
}
