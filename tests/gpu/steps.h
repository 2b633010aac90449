// steps.h: for the GPU test programs that check in steps (broad, broad2):
// a failed CUDA call ends its step, not the program ("FAIL call: error"),
// verdict() prints a step's result, and `failed` counts what failed: the
// program ends with "PASS name" or "FAIL name" by it.  Not with check.h,
// whose CK ends the program.
#ifndef XGPU_GPU_STEPS_H
#define XGPU_GPU_STEPS_H

#include <cstdio>

static int failed;

#define CK(x)                                                              \
	do {                                                               \
		cudaError_t e_ = (x);                                      \
		if (e_ != cudaSuccess) {                                   \
			printf("FAIL %s: %s\n", #x, cudaGetErrorName(e_)); \
			failed++;                                          \
			return;                                            \
		}                                                          \
	} while (0)

static void verdict(const char *step, bool ok)
{
	printf("%s %s\n", ok ? "PASS" : "FAIL", step);
	if (!ok)
		failed++;
}

#endif
