// check.h: the GPU test programs' checks of runtime and driver calls: on
// an error, one "FAIL <call>: <error>" line and exit status 1 (the harness
// compares outputs and wants the last line to be PASS).
#ifndef XGPU_GPU_CHECK_H
#define XGPU_GPU_CHECK_H

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                        \
	do {                                                            \
		cudaError_t e_ = (call);                                \
		if (e_ != cudaSuccess) {                                \
			printf("FAIL %s: %s\n", #call,                  \
			       cudaGetErrorName(e_));                   \
			exit(1);                                        \
		}                                                       \
	} while (0)

/* a driver API call (CUresult) or a library status (0 is success) */
#define CKD(call)                                                       \
	do {                                                            \
		int r_ = (int)(call);                                   \
		if (r_ != 0) {                                          \
			printf("FAIL %s: %d\n", #call, r_);             \
			exit(1);                                        \
		}                                                       \
	} while (0)

#endif
