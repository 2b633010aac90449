// SPDX-License-Identifier: MIT
/*
 * noinit: run with XGPU_SOCKET naming a socket nobody listens on.  cuInit
 * must fail (and keep failing, without a second message), and calls that
 * need it must say CUDA_ERROR_NOT_INITIALIZED.  Exits 0 when all is as
 * expected; run.sh checks the time taken and the one line on stderr.
 */
#include <cuda.h>
#include <stdio.h>

int main(void)
{
	const char *name = NULL;
	CUresult rc, rc2;
	int n = -1, bad = 0;

	rc = cuInit(0);
	cuGetErrorName(rc, &name);
	printf("noinit: cuInit: %s\n", name ? name : "?");
	if (rc == CUDA_SUCCESS) {
		printf("noinit: cuInit succeeded without a backend\n");
		return 1;
	}
	rc2 = cuInit(0);
	if (rc2 != rc) {
		printf("noinit: a second cuInit returned %d, the first %d\n",
		       rc2, rc);
		bad = 1;
	}
	rc = cuDeviceGetCount(&n);
	if (rc != CUDA_ERROR_NOT_INITIALIZED) {
		printf("noinit: cuDeviceGetCount returned %d (count %d)\n", rc,
		       n);
		bad = 1;
	}
	return bad;
}
