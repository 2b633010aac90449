// legacylaunch: the launch API before CUDA 4 and the context usage count,
// as a CUDA 3 program used them:
//  - a kernel of a PTX module with int, pointer, float and pointer
//    parameters (the float after a pointer and the pointer after the int
//    need padding), its parameters set with cuParamSeti / cuParamSetv /
//    cuParamSetf at offsets aligned with __alignof, then cuParamSetSize,
//    cuFuncSetBlockShape and cuFuncSetSharedSize; launched with
//    cuLaunchGrid (a 2D grid), cuLaunchGridAsync on a stream and cuLaunch
//    (one block), each result checked and summed
//  - the same kernel through cuLaunchKernel gives the same result
//  - cuParamSetTexRef with CU_PARAM_TR_DEFAULT, for a kernel that reads
//    the module's texture reference (its return code is printed)
//  - cuCtxAttach / cuCtxDetach: a created context attached twice, detached
//    back to one, still usable, then detached to zero: destroyed, so no
//    longer current
//  - cuLaunchCooperativeKernelMultiDevice with one device, where the
//    device says it can (its return code is printed either way)
//
// Output: deterministic result lines, then "PASS legacylaunch" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

// every call under test is deprecated
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// y[i] = a * x[i] + n for i < n, i counted over a 2D grid of 1D blocks
static const char ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".global .texref tref;\n"
	"\n"
	".visible .entry saxpy_legacy(\n"
	"	.param .u32 n,\n"
	"	.param .u64 x,\n"
	"	.param .f32 a,\n"
	"	.param .u64 y\n"
	")\n"
	"{\n"
	"	.reg .pred p;\n"
	"	.reg .b32 r<6>;\n"
	"	.reg .f32 f<5>;\n"
	"	.reg .b64 rd<6>;\n"
	"\n"
	"	ld.param.u32 r1, [n];\n"
	"	ld.param.u64 rd1, [x];\n"
	"	ld.param.f32 f1, [a];\n"
	"	ld.param.u64 rd2, [y];\n"
	"	mov.u32 r2, %ctaid.y;\n"
	"	mov.u32 r3, %nctaid.x;\n"
	"	mov.u32 r4, %ctaid.x;\n"
	"	mad.lo.s32 r2, r2, r3, r4;\n"
	"	mov.u32 r3, %ntid.x;\n"
	"	mov.u32 r4, %tid.x;\n"
	"	mad.lo.s32 r5, r2, r3, r4;\n"
	"	setp.ge.s32 p, r5, r1;\n"
	"	@p bra DONE;\n"
	"	cvta.to.global.u64 rd3, rd1;\n"
	"	cvta.to.global.u64 rd4, rd2;\n"
	"	mul.wide.s32 rd5, r5, 4;\n"
	"	add.s64 rd3, rd3, rd5;\n"
	"	add.s64 rd4, rd4, rd5;\n"
	"	ld.global.f32 f2, [rd3];\n"
	"	cvt.rn.f32.s32 f3, r1;\n"
	"	fma.rn.f32 f4, f1, f2, f3;\n"
	"	st.global.f32 [rd4], f4;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n"
	"\n"
	"// out[0] = tref at texel 0: a kernel that reads the reference\n"
	".visible .entry read_tex(\n"
	"	.param .u64 out\n"
	")\n"
	"{\n"
	"	.reg .f32 f<6>;\n"
	"	.reg .b64 rd<3>;\n"
	"\n"
	"	ld.param.u64 rd1, [out];\n"
	"	mov.f32 f5, 0f3F000000;\n"
	"	tex.1d.v4.f32.f32 {f1, f2, f3, f4}, [tref, {f5}];\n"
	"	cvta.to.global.u64 rd2, rd1;\n"
	"	st.global.f32 [rd2], f1;\n"
	"	ret;\n"
	"}\n";

static const char *ename(CUresult rc)
{
	const char *n = NULL;

	cuGetErrorName(rc, &n);
	return n ? n : "?";
}

#define ALIGN_UP(off, a) ((off) = ((off) + (a) - 1) / (a) * (a))

// the parameters as the CUDA 3 samples set them; returns the size
static int set_params(CUfunction f, int n, CUdeviceptr x, float a,
		      CUdeviceptr y)
{
	int off = 0;
	void *px = (void *)(uintptr_t)x, *py = (void *)(uintptr_t)y;

	ALIGN_UP(off, __alignof(n));
	CKD(cuParamSeti(f, off, (unsigned int)n));
	off += sizeof(n);
	ALIGN_UP(off, __alignof(px));
	CKD(cuParamSetv(f, off, &px, sizeof(px)));
	off += sizeof(px);
	ALIGN_UP(off, __alignof(a));
	CKD(cuParamSetf(f, off, a));
	off += sizeof(a);
	ALIGN_UP(off, __alignof(py));
	CKD(cuParamSetv(f, off, &py, sizeof(py)));
	off += sizeof(py);
	CKD(cuParamSetSize(f, (unsigned int)off));
	return off;
}

// y checked against a * x[i] + n; prints the first, last and sum
static void report(const char *what, CUdeviceptr dy, int n, float a,
		   const std::vector<float> &x)
{
	std::vector<float> y(n);
	double sum = 0;
	int bad = 0;

	CKD(cuMemcpyDtoH(y.data(), dy, (size_t)n * 4));
	for (int i = 0; i < n; i++) {
		if (y[i] != a * x[i] + (float)n)
			bad++;
		sum += y[i];
	}
	printf("%s: y[0] %.2f y[%d] %.2f sum %.2f, %d wrong\n", what, y[0],
	       n - 1, y[n - 1], sum, bad);
	if (bad) {
		printf("FAIL %s\n", what);
		exit(1);
	}
}

int main()
{
	const int n = 1000;
	const float a = 2.0f;
	std::vector<float> x(n);
	CUdevice dev;
	CUcontext ctx, got, cur;
	CUmodule mod;
	CUfunction f, rt;
	CUtexref t;
	CUstream s;
	CUdeviceptr dx, dy;
	CUresult rc;
	int size, coop = 0;

	for (int i = 0; i < n; i++)
		x[i] = 0.25f * (float)i;
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuCtxCreate(&ctx, NULL, 0, dev));
	CKD(cuModuleLoadData(&mod, ptx));
	CKD(cuModuleGetFunction(&f, mod, "saxpy_legacy"));
	CKD(cuMemAlloc(&dx, (size_t)n * 4));
	CKD(cuMemAlloc(&dy, (size_t)n * 4));
	CKD(cuMemcpyHtoD(dx, x.data(), (size_t)n * 4));
	CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	// the launch API before CUDA 4
	size = set_params(f, n, dx, a, dy);
	printf("parameter bytes: %d\n", size);
	CKD(cuFuncSetBlockShape(f, 128, 1, 1));
	CKD(cuFuncSetSharedSize(f, 256));
	CKD(cuMemsetD32(dy, 0, n));
	CKD(cuLaunchGrid(f, 4, 2));
	CKD(cuCtxSynchronize());
	report("cuLaunchGrid 4x2", dy, n, a, x);

	CKD(cuMemsetD32(dy, 0, n));
	CKD(cuCtxSynchronize());
	CKD(cuLaunchGridAsync(f, 8, 1, s));
	CKD(cuStreamSynchronize(s));
	report("cuLaunchGridAsync 8x1", dy, n, a, x);

	// one block of 1024 covers n
	CKD(cuFuncSetBlockShape(f, 1024, 1, 1));
	CKD(cuMemsetD32(dy, 0, n));
	CKD(cuLaunch(f));
	CKD(cuCtxSynchronize());
	report("cuLaunch 1x1", dy, n, a, x);

	CKD(cuModuleGetFunction(&rt, mod, "read_tex"));
	CKD(cuModuleGetTexRef(&t, mod, "tref"));
	rc = cuParamSetTexRef(rt, CU_PARAM_TR_DEFAULT, t);
	printf("cuParamSetTexRef(CU_PARAM_TR_DEFAULT): %s\n", ename(rc));

	// the same through cuLaunchKernel
	{
		int nn = n;
		float aa = a;
		void *params[] = { &nn, &dx, &aa, &dy };

		CKD(cuMemsetD32(dy, 0, n));
		CKD(cuLaunchKernel(f, 8, 1, 1, 128, 1, 1, 0, NULL, params,
				   NULL));
		CKD(cuCtxSynchronize());
		report("cuLaunchKernel", dy, n, a, x);
	}

	// one device of a cooperative multi-device launch
	CKD(cuDeviceGetAttribute(
		&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, dev));
	printf("cooperative multi-device launch attribute: %d\n", coop);
	if (coop) {
		int nn = n;
		float aa = a;
		void *params[] = { &nn, &dx, &aa, &dy };
		CUDA_LAUNCH_PARAMS lp;

		memset(&lp, 0, sizeof(lp));
		lp.function = f;
		lp.gridDimX = 8;
		lp.gridDimY = lp.gridDimZ = 1;
		lp.blockDimX = 128;
		lp.blockDimY = lp.blockDimZ = 1;
		lp.hStream = s;
		lp.kernelParams = params;
		CKD(cuMemsetD32(dy, 0, n));
		CKD(cuCtxSynchronize());
		rc = cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0);
		printf("cuLaunchCooperativeKernelMultiDevice, one device: %s\n",
		       ename(rc));
		if (rc == CUDA_SUCCESS) {
			CKD(cuStreamSynchronize(s));
			report("cooperative multi-device", dy, n, a, x);
		}
	}

	CKD(cuStreamDestroy(s));
	CKD(cuMemFree(dx));
	CKD(cuMemFree(dy));
	CKD(cuModuleUnload(mod));

	// the usage count: 1, attached twice: 3, detached twice: 1
	CKD(cuCtxAttach(&got, 0));
	printf("cuCtxAttach gives the current context: %d\n", got == ctx);
	CKD(cuCtxAttach(&got, 0));
	CKD(cuCtxDetach(ctx));
	CKD(cuCtxDetach(ctx));
	CKD(cuCtxGetCurrent(&cur));
	printf("after two detaches still current: %d\n", cur == ctx);
	CKD(cuMemAlloc(&dx, 64));
	CKD(cuMemFree(dx));
	printf("and usable: 1\n");
	// the last detach destroys it
	CKD(cuCtxDetach(ctx));
	CKD(cuCtxGetCurrent(&cur));
	printf("after the last detach current: %s\n",
	       cur == NULL ? "none" : cur == ctx ? "the same" : "another");
	printf("PASS legacylaunch\n");
	return 0;
}
