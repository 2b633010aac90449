// gpaver: what a program of a newer toolkit gets from this driver when it
// looks up driver functions by version (cudaGetDriverEntryPointByVersion,
// which asks cuGetProcAddress): a name this driver does not have, a
// version above the driver's, a version below a function's first ABI,
// and known names with the per-thread and legacy flags.  The return codes
// and statuses are printed; a run through xgpu must print the same.
//
// Output: deterministic result lines, then "PASS gpaver" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>

#include "check.h"

static void ask(const char *name, unsigned int version,
		unsigned long long flags)
{
	cudaDriverEntryPointQueryResult st =
		(cudaDriverEntryPointQueryResult)-1;
	void *fn = NULL;
	cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, version,
							 flags, &st);

	printf("%s@%u flags %llu: %s, status %d, found %d\n", name, version,
	       flags, cudaGetErrorName(e), (int)st, fn != NULL);
	cudaGetLastError();
}

int main()
{
	int drv = 0;

	CK(cudaFree(0));
	CK(cudaDriverGetVersion(&drv));
	ask("cuFunctionOfCuda135", 12000, cudaEnableDefault);
	ask("cuFunctionOfCuda135", 12000, cudaEnablePerThreadDefaultStream);
	ask("cuMemAlloc", 3020, cudaEnableDefault);
	ask("cuMemAlloc", 1000, cudaEnableDefault);
	ask("cuMemcpyHtoD", 3020, cudaEnablePerThreadDefaultStream);
	ask("cuMemcpyHtoD", 3020, cudaEnableLegacyStream);
	ask("cuCtxRecordEvent", 12050, cudaEnableDefault);
	// a version above the driver's (the driver's own plus 50, then far)
	printf("above the driver's version:\n");
	ask("cuMemAlloc", (unsigned int)drv + 50, cudaEnableDefault);
	ask("cuFunctionOfCuda135", (unsigned int)drv + 50, cudaEnableDefault);
	ask("cuMemAlloc", 99990, cudaEnableDefault);
	printf("PASS gpaver\n");
	return 0;
}
