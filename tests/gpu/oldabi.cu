// oldabi: the ABIs older than the current ones, found by name as an old
// binary (or cuGetProcAddress with an old version) finds them:
//  - the memory ABI of 32-bit device pointers and sizes (before CUDA 3.2:
//    cuMemAlloc, cuMemcpyHtoD, cuArrayCreate, cuMemsetD2D8, the texture
//    reference address calls, ...): each one's return code is printed
//  - cuTexRefSetAddress2D_v2 (the CUDA 3.2 form) on a module's texture
//    reference
//  - a kernel node of the CUDA 10 parameters (cuGraphAddKernelNode,
//    cuGraphKernelNodeGetParams/SetParams, cuGraphExecKernelNodeSetParams)
//    launched, the results checked; cuGraphExecUpdate of CUDA 10.2 with a
//    graph of the same shape (results checked) and of another shape
//  - cuLinkCreate / cuLinkAddData of CUDA 5.5 linking the PTX into an
//    image that runs; cuMemHostRegister of CUDA 4 as a copy's source
//
// Output: deterministic result lines, then "PASS oldabi" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <dlfcn.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// y[i] = a * x[i] for i < n
static const char ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".global .texref tref;\n"
	"\n"
	".visible .entry scale(\n"
	"	.param .u64 y,\n"
	"	.param .u64 x,\n"
	"	.param .f32 a,\n"
	"	.param .u32 n\n"
	")\n"
	"{\n"
	"	.reg .pred p;\n"
	"	.reg .b32 r<5>;\n"
	"	.reg .f32 f<4>;\n"
	"	.reg .b64 rd<8>;\n"
	"\n"
	"	ld.param.u64 rd1, [y];\n"
	"	ld.param.u64 rd2, [x];\n"
	"	ld.param.f32 f1, [a];\n"
	"	ld.param.u32 r1, [n];\n"
	"	mov.u32 r2, %ctaid.x;\n"
	"	mov.u32 r3, %ntid.x;\n"
	"	mov.u32 r4, %tid.x;\n"
	"	mad.lo.s32 r2, r2, r3, r4;\n"
	"	setp.ge.u32 p, r2, r1;\n"
	"	@p bra DONE;\n"
	"	cvta.to.global.u64 rd3, rd1;\n"
	"	cvta.to.global.u64 rd4, rd2;\n"
	"	mul.wide.u32 rd5, r2, 4;\n"
	"	add.s64 rd6, rd4, rd5;\n"
	"	ld.global.f32 f2, [rd6];\n"
	"	mul.f32 f3, f2, f1;\n"
	"	add.s64 rd7, rd3, rd5;\n"
	"	st.global.f32 [rd7], f3;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

static const char *const old32[] = {
	"cuMemAlloc", "cuMemAllocPitch", "cuMemFree", "cuMemGetAddressRange",
	"cuMemGetInfo", "cuMemHostGetDevicePointer", "cuArrayCreate",
	"cuArrayGetDescriptor", "cuArray3DCreate", "cuArray3DGetDescriptor",
	"cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD", "cuMemcpyHtoDAsync",
	"cuMemcpyDtoHAsync", "cuMemcpyDtoDAsync", "cuMemcpyHtoA",
	"cuMemcpyAtoH", "cuMemcpyHtoAAsync", "cuMemcpyAtoHAsync",
	"cuMemcpyAtoD", "cuMemcpyDtoA", "cuMemcpyAtoA", "cuMemcpy2D",
	"cuMemcpy2DUnaligned", "cuMemcpy2DAsync", "cuMemcpy3D",
	"cuMemcpy3DAsync", "cuMemsetD8", "cuMemsetD16", "cuMemsetD32",
	"cuMemsetD2D8", "cuMemsetD2D16", "cuMemsetD2D32",
	"cuTexRefGetAddress", "cuTexRefSetAddress", "cuTexRefSetAddress2D",
};

enum { N = 1000, BLOCK = 128 };
static int failures;

static const char *ename(CUresult r)
{
	const char *s = "(unknown)";

	cuGetErrorName(r, &s);
	return s;
}

static void *sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f) {
		printf("FAIL %s: not exported\n", name);
		exit(1);
	}
	return f;
}

// y = a * x, checked on the host
static void check(const char *what, CUdeviceptr y, const float *x, float a)
{
	static float h[N];
	int bad = 0;

	CKD(cuMemcpyDtoH(h, y, sizeof(h)));
	for (int i = 0; i < N; i++)
		bad += h[i] != a * x[i];
	printf("%s: %d mismatches\n", what, bad);
	if (bad) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

int main()
{
	typedef CUresult (*any6)(uintptr_t, uintptr_t, uintptr_t, uintptr_t,
				 uintptr_t, uintptr_t);
	CUresult (*add1)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			 const CUDA_KERNEL_NODE_PARAMS_v1 *);
	CUresult (*set1)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *);
	CUresult (*get1)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1 *);
	CUresult (*xset1)(CUgraphExec, CUgraphNode,
			  const CUDA_KERNEL_NODE_PARAMS_v1 *);
	CUresult (*upd1)(CUgraphExec, CUgraph, CUgraphNode *,
			 CUgraphExecUpdateResult *);
	CUresult (*reg1)(void *, size_t, unsigned int);
	CUresult (*link1)(unsigned int, CUjit_option *, void **,
			  CUlinkState *);
	CUresult (*adddata1)(CUlinkState, CUjitInputType, void *, size_t,
			     const char *, unsigned int, CUjit_option *,
			     void **);
	CUresult (*tex2d_v2)(CUtexref, const CUDA_ARRAY_DESCRIPTOR *,
			     CUdeviceptr, size_t);
	static unsigned char junk[512];
	static float hx[N];
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod, lmod;
	CUfunction f, lf;
	CUtexref tref;
	CUdeviceptr x, y, z, pitched;
	size_t pitch;
	CUgraph g, g2, g3;
	CUgraphExec ex;
	CUgraphNode node, node2, n3a, n3b, err;
	CUgraphExecUpdateResult ur;
	CUDA_KERNEL_NODE_PARAMS_v1 kp, got;
	CUDA_ARRAY_DESCRIPTOR ad;
	CUlinkState ls;
	CUresult rc;
	void *cubin, *page;
	size_t cubin_size;
	float a = 2.0f;
	unsigned int n = N;
	void *args[] = { &y, &x, &a, &n };

	add1 = (__typeof__(add1))sym("cuGraphAddKernelNode");
	set1 = (__typeof__(set1))sym("cuGraphKernelNodeSetParams");
	get1 = (__typeof__(get1))sym("cuGraphKernelNodeGetParams");
	xset1 = (__typeof__(xset1))sym("cuGraphExecKernelNodeSetParams");
	upd1 = (__typeof__(upd1))sym("cuGraphExecUpdate");
	reg1 = (__typeof__(reg1))sym("cuMemHostRegister");
	link1 = (__typeof__(link1))sym("cuLinkCreate");
	adddata1 = (__typeof__(adddata1))sym("cuLinkAddData");
	tex2d_v2 = (__typeof__(tex2d_v2))sym("cuTexRefSetAddress2D_v2");

	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	CKD(cuModuleLoadData(&mod, ptx));
	CKD(cuModuleGetFunction(&f, mod, "scale"));
	CKD(cuModuleGetTexRef(&tref, mod, "tref"));
	for (int i = 0; i < N; i++)
		hx[i] = (float)(i % 97) - 40.0f;
	CKD(cuMemAlloc(&x, sizeof(hx)));
	CKD(cuMemAlloc(&y, sizeof(hx)));
	CKD(cuMemAlloc(&z, sizeof(hx)));
	CKD(cuMemcpyHtoD(x, hx, sizeof(hx)));

	// the 32-bit memory ABI: pointer arguments point at zeroed bytes,
	// the others are that address cut to their width
	for (size_t i = 0; i < sizeof(old32) / sizeof(old32[0]); i++) {
		uintptr_t j = (uintptr_t)junk;
		any6 fn = (any6)sym(old32[i]);

		if (!strncmp(old32[i], "cuTexRef", 8)) {
			rc = fn(j, (uintptr_t)tref, j, j, 0, 0);
		} else {
			rc = fn(j, j, j, j, j, j);
		}
		printf("%s: %s\n", old32[i], ename(rc));
	}

	// the CUDA 3.2 form of a texture reference over pitched memory
	CKD(cuMemAllocPitch(&pitched, &pitch, 256, 16, 4));
	memset(&ad, 0, sizeof(ad));
	ad.Width = 64;
	ad.Height = 16;
	ad.Format = CU_AD_FORMAT_FLOAT;
	ad.NumChannels = 1;
	printf("cuTexRefSetAddress2D_v2: %s\n",
	       ename(tex2d_v2(tref, &ad, pitched, pitch)));

	// a kernel node of the CUDA 10 parameters
	memset(&kp, 0, sizeof(kp));
	kp.func = f;
	kp.gridDimX = (N + BLOCK - 1) / BLOCK;
	kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = BLOCK;
	kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	CKD(cuGraphCreate(&g, 0));
	CKD(add1(&node, g, NULL, 0, &kp));
	memset(&got, 0, sizeof(got));
	CKD(get1(node, &got));
	printf("node parameters: same function %d, grid %u, block %u, "
	       "a %g\n", got.func == f, got.gridDimX, got.blockDimX,
	       got.kernelParams ? *(float *)got.kernelParams[2] : -1.0f);
	CKD(cuGraphInstantiate(&ex, g, 0));
	CKD(cuGraphLaunch(ex, NULL));
	CKD(cuCtxSynchronize());
	check("v1 kernel node", y, hx, 2.0f);
	// a new factor in the executable graph
	a = 3.0f;
	CKD(xset1(ex, node, &kp));
	CKD(cuGraphLaunch(ex, NULL));
	CKD(cuCtxSynchronize());
	check("v1 exec kernel node set", y, hx, 3.0f);
	// in the graph: read back
	a = -1.5f;
	CKD(set1(node, &kp));
	CKD(get1(node, &got));
	printf("after set: a %g\n", *(float *)got.kernelParams[2]);
	printf("set with no parameters: %s\n", ename(set1(node, NULL)));

	// cuGraphExecUpdate of CUDA 10.2: the same shape, another output
	args[0] = &z;
	a = 4.0f;
	CKD(cuGraphCreate(&g2, 0));
	CKD(add1(&node2, g2, NULL, 0, &kp));
	err = (CUgraphNode)&junk;
	ur = CU_GRAPH_EXEC_UPDATE_ERROR;
	rc = upd1(ex, g2, &err, &ur);
	printf("update, same shape: %s, result %d, error node %s\n",
	       ename(rc), (int)ur, err ? "set" : "none");
	CKD(cuGraphLaunch(ex, NULL));
	CKD(cuCtxSynchronize());
	check("v1 exec update", z, hx, 4.0f);
	// another shape: two nodes
	CKD(cuGraphCreate(&g3, 0));
	CKD(add1(&n3a, g3, NULL, 0, &kp));
	CKD(add1(&n3b, g3, &n3a, 1, &kp));
	err = (CUgraphNode)&junk;
	ur = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	rc = upd1(ex, g3, &err, &ur);
	// the real driver's CUDA 10.2 form names no reason here (6, not
	// supported) where the current form does (2, topology changed):
	// xgpu's answers the current form's; either is a refusal
	printf("update, another shape: %s, refused %d, error node %s\n",
	       ename(rc), ur != CU_GRAPH_EXEC_UPDATE_SUCCESS,
	       err ? "set" : "none");
	{
		CUgraphExecUpdateResultInfo info;

		memset(&info, 0, sizeof(info));
		rc = cuGraphExecUpdate_v2(ex, g3, &info);
		printf("update (current form), another shape: %s, result %d\n",
		       ename(rc), (int)info.result);
	}

	// JIT linking through the CUDA 5.5 entry points
	CKD(link1(0, NULL, NULL, &ls));
	CKD(adddata1(ls, CU_JIT_INPUT_PTX, (void *)ptx, sizeof(ptx), "scale",
		     0, NULL, NULL));
	CKD(cuLinkComplete(ls, &cubin, &cubin_size));
	CKD(cuModuleLoadData(&lmod, cubin));
	CKD(cuLinkDestroy(ls));
	CKD(cuModuleGetFunction(&lf, lmod, "scale"));
	args[0] = &y;
	a = 0.5f;
	CKD(cuLaunchKernel(lf, (N + BLOCK - 1) / BLOCK, 1, 1, BLOCK, 1, 1, 0,
			   NULL, args, NULL));
	CKD(cuCtxSynchronize());
	check("v1 linked image", y, hx, 0.5f);

	// cuMemHostRegister of CUDA 4: registered memory as a copy's source
	page = aligned_alloc(4096, 4096 * 2);
	if (!page) {
		printf("FAIL malloc\n");
		return 1;
	}
	memcpy(page, hx, sizeof(hx));
	printf("cuMemHostRegister (v1): %s\n", ename(reg1(page, 8192, 0)));
	CKD(cuMemcpyHtoD(z, page, sizeof(hx)));
	CKD(cuMemHostUnregister(page));
	free(page);
	check("v1 registered copy", z, hx, 1.0f);

	CKD(cuGraphExecDestroy(ex));
	CKD(cuGraphDestroy(g));
	CKD(cuGraphDestroy(g2));
	CKD(cuGraphDestroy(g3));
	CKD(cuModuleUnload(lmod));
	CKD(cuModuleUnload(mod));
	if (failures) {
		printf("FAIL oldabi (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS oldabi\n");
	return 0;
}
