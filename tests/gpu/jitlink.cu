// jitlink: JIT linking through the driver (cuLinkCreate, cuLinkAddData,
// cuLinkComplete), as Numba and programs with relocatable device code
// compiled at run time use it: two NVRTC programs compiled to PTX with
// relocatable device code (one calls a device function of the other),
// linked by the driver, the image loaded and a kernel launched.
//
// Output: deterministic result lines, then "PASS jitlink" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <vector>

#include "check.h"

static const char *lib_src =
	"extern \"C\" __device__ float twice_plus(float x, float b) {\n"
	"  return 2.0f * x + b;\n"
	"}\n";

static const char *main_src =
	"extern \"C\" __device__ float twice_plus(float x, float b);\n"
	"extern \"C\" __global__ void apply(float *y, int n, float b) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = twice_plus(y[i], b);\n"
	"}\n";

static std::vector<char> ptx_of(const char *src, const char *name)
{
	const char *opts[] = { "--gpu-architecture=compute_90",
			       "--relocatable-device-code=true" };
	nvrtcProgram p;
	size_t n;

	CKD(nvrtcCreateProgram(&p, src, name, 0, NULL, NULL));
	CKD(nvrtcCompileProgram(p, 2, opts));
	CKD(nvrtcGetPTXSize(p, &n));
	std::vector<char> ptx(n);
	CKD(nvrtcGetPTX(p, ptx.data()));
	CKD(nvrtcDestroyProgram(&p));
	return ptx;
}

int main()
{
	std::vector<char> a = ptx_of(lib_src, "lib.cu");
	std::vector<char> b = ptx_of(main_src, "main.cu");
	CUlinkState st;
	CUmodule mod;
	CUfunction f;
	void *cubin;
	size_t size;
	char err[2048] = "";
	CUjit_option jo[] = { CU_JIT_ERROR_LOG_BUFFER,
			      CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *jv[] = { err, (void *)(uintptr_t)sizeof(err) };

	CK(cudaFree(0));
	CKD(cuLinkCreate(2, jo, jv, &st));
	CKD(cuLinkAddData(st, CU_JIT_INPUT_PTX, a.data(), a.size(), "lib.ptx",
			  0, NULL, NULL));
	CKD(cuLinkAddData(st, CU_JIT_INPUT_PTX, b.data(), b.size(),
			  "main.ptx", 0, NULL, NULL));
	CKD(cuLinkComplete(st, &cubin, &size));
	printf("linked image: non-empty %d\n", size > 0);
	CKD(cuModuleLoadData(&mod, cubin));
	CKD(cuLinkDestroy(st));
	CKD(cuModuleGetFunction(&f, mod, "apply"));

	const int n = 1000;
	std::vector<float> h(n);
	for (int i = 0; i < n; i++)
		h[i] = (float)i;
	float *d, add = 0.5f;
	int nn = n;
	CK(cudaMalloc(&d, n * sizeof(float)));
	CK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	void *args[] = { &d, &nn, &add };
	CKD(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args,
			   NULL));
	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	printf("apply: y[0] %.1f y[999] %.1f\n", h[0], h[n - 1]);
	CKD(cuModuleUnload(mod));
	CK(cudaFree(d));
	if (h[n - 1] != 2.0f * (n - 1) + 0.5f) {
		printf("FAIL jitlink\n");
		return 1;
	}
	printf("PASS jitlink\n");
	return 0;
}
