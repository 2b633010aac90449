// SPDX-License-Identifier: MIT
/*
 * legacylaunch: the launch API before CUDA 4 (cuFuncSetBlockShape,
 * cuFuncSetSharedSize, cuParamSet*, cuLaunch, cuLaunchGrid,
 * cuLaunchGridAsync, cuParamSetTexRef), cuCtxAttach/cuCtxDetach and
 * cuLaunchCooperativeKernelMultiDevice with one entry, on the fake
 * device, with bad inputs: parameters past the size set, a size over the
 * driver's 4 KiB, a function of an unloaded module, a stale context.
 * After each bad input the channel must still serve the guest.
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

/* every call under test is deprecated */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const char image[] = "XGPU-FAKE-MODULE\n";

static CUcontext ctx;
static CUmodule mod;
static CUfunction vadd, fill;

/*
 * A handle that outlives its object: the bytes the library's handle points
 * at, kept before the destroy (the library frees them then), so that they
 * still name the worker's handle, which is stale by then.
 */
static void keep_bytes(unsigned char *buf, size_t cap, const void *h)
{
	size_t n = malloc_usable_size((void *)h);

	memset(buf, 0, cap);
	memcpy(buf, h, n < cap ? n : cap);
}

/* the channel still serves this guest */
static void alive(void)
{
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
}

/* the offset of a parameter of align bytes after off, as nvcc lays it */
static int align_up(int off, int align)
{
	return (off + align - 1) / align * align;
}

/*
 * xgpu_fake_vadd(a, b, c, n) through cuParamSet*, the way the CUDA 3
 * samples did it: each parameter at the next offset of its alignment,
 * then the size.
 */
static CUresult set_vadd(CUfunction f, CUdeviceptr a, CUdeviceptr b,
			 CUdeviceptr c, int n)
{
	CUresult rc;
	int off = 0;

	off = align_up(off, __alignof(a));
	if ((rc = cuParamSetv(f, off, &a, sizeof(a))))
		return rc;
	off += sizeof(a);
	off = align_up(off, __alignof(b));
	if ((rc = cuParamSetv(f, off, &b, sizeof(b))))
		return rc;
	off += sizeof(b);
	off = align_up(off, __alignof(c));
	if ((rc = cuParamSetv(f, off, &c, sizeof(c))))
		return rc;
	off += sizeof(c);
	off = align_up(off, __alignof(n));
	if ((rc = cuParamSeti(f, off, (unsigned int)n)))
		return rc;
	off += sizeof(n);
	return cuParamSetSize(f, (unsigned int)off);
}

/* vadd through cuParamSet* + cuLaunch*, and through cuLaunchKernel: same */
static void test_params(void)
{
	enum { N = 256 };
	float ha[N], hb[N], r1[N], r2[N], r3[N];
	CUdeviceptr a = 0, b = 0, c = 0;
	CUstream s = NULL;
	int n = N;
	void *params[] = { &a, &b, &c, &n };

	begin("legacy-params");
	for (int i = 0; i < N; i++) {
		ha[i] = (float)i * 0.5f;
		hb[i] = (float)(N - i) * 0.25f;
	}
	WANT(CUDA_SUCCESS, cuMemAlloc(&a, sizeof(ha)));
	WANT(CUDA_SUCCESS, cuMemAlloc(&b, sizeof(hb)));
	WANT(CUDA_SUCCESS, cuMemAlloc(&c, sizeof(r1)));
	WANT(CUDA_SUCCESS, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	WANT(CUDA_SUCCESS, cuMemcpyHtoD(a, ha, sizeof(ha)));
	WANT(CUDA_SUCCESS, cuMemcpyHtoD(b, hb, sizeof(hb)));
	if (step_failed)
		goto out;
	WANT(CUDA_SUCCESS, set_vadd(vadd, a, b, c, N));
	WANT(CUDA_SUCCESS, cuFuncSetBlockShape(vadd, 128, 1, 1));
	WANT(CUDA_SUCCESS, cuFuncSetSharedSize(vadd, 0));
	WANT(CUDA_SUCCESS, cuLaunchGrid(vadd, 2, 1));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(r1, c, sizeof(r1)));
	/* the state persists: the same launch again, on a stream */
	WANT(CUDA_SUCCESS, cuMemsetD32(c, 0, N));
	WANT(CUDA_SUCCESS, cuLaunchGridAsync(vadd, 2, 1, s));
	WANT(CUDA_SUCCESS, cuStreamSynchronize(s));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(r2, c, sizeof(r2)));
	/* and as a grid of one block */
	WANT(CUDA_SUCCESS, cuMemsetD32(c, 0, N));
	WANT(CUDA_SUCCESS, cuLaunch(vadd));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(r3, c, sizeof(r3)));
	for (int i = 0; i < N && !step_failed; i++)
		EXPECT(r1[i] == ha[i] + hb[i] && r2[i] == r1[i] &&
		       r3[i] == r1[i], "c[%d] %g %g %g, want %g", i, r1[i],
		       r2[i], r3[i], ha[i] + hb[i]);
	/* what cuLaunchKernel gives for the same parameters */
	WANT(CUDA_SUCCESS, cuMemsetD32(c, 0, N));
	WANT(CUDA_SUCCESS, cuLaunchKernel(vadd, 2, 1, 1, 128, 1, 1, 0, NULL,
					  params, NULL));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(r2, c, sizeof(r2)));
	EXPECT(!memcmp(r1, r2, sizeof(r1)), "cuLaunchKernel differs");
	/* which invalidates the state of before CUDA 4 */
	WANT(CUDA_ERROR_INVALID_VALUE, cuLaunch(vadd));
	alive();
	/* cuParamSetf writes the float's bits */
	{
		CUdeviceptr p = c;
		float v = 1.5f;
		uint32_t bits, got[4];
		int cnt = 4;

		memcpy(&bits, &v, sizeof(bits));
		/* the size first works too */
		WANT(CUDA_SUCCESS, cuParamSetSize(fill, 16));
		WANT(CUDA_SUCCESS, cuParamSetv(fill, 0, &p, sizeof(p)));
		WANT(CUDA_SUCCESS, cuParamSetf(fill, 8, v));
		WANT(CUDA_SUCCESS, cuParamSeti(fill, 12, (unsigned int)cnt));
		WANT(CUDA_SUCCESS, cuFuncSetBlockShape(fill, 4, 1, 1));
		WANT(CUDA_SUCCESS, cuLaunch(fill));
		WANT(CUDA_SUCCESS, cuMemcpyDtoH(got, c, sizeof(got)));
		EXPECT(got[0] == bits && got[3] == bits, "fill %x, want %x",
		       got[0], bits);
	}
out:
	if (s)
		cuStreamDestroy(s);
	cuMemFree(a);
	cuMemFree(b);
	cuMemFree(c);
	end();
}

static void test_bad_inputs(void)
{
	unsigned char stale[256] __attribute__((aligned(16)));
	unsigned char big[8] = { 0 };
	CUmodule m2 = NULL;
	CUfunction gone = NULL;
	CUtexref t = NULL;
	CUdeviceptr d = 0;
	CUresult rc;
	int x = 7;

	begin("legacy-bad");
	/* past the driver's 4 KiB of parameters */
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSetv(fill, 4090, big, 8));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSeti(fill, 4096, 1));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSetf(fill, 4093, 1.0f));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSetv(fill, 0, big, 4097));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSeti(fill, -4, 1));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSetv(fill, 0, NULL, 4));
	WANT(CUDA_SUCCESS, cuParamSetv(fill, 8, big, 8));
	WANT(CUDA_SUCCESS, cuParamSetv(fill, 4092, &x, sizeof(x)));
	WANT(CUDA_SUCCESS, cuParamSetSize(fill, 4096));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSetSize(fill, 4097));
	/* a size short of the function's parameters: refused at launch */
	WANT(CUDA_SUCCESS, cuFuncSetBlockShape(fill, 1, 1, 1));
	WANT(CUDA_SUCCESS, cuParamSetSize(fill, 12));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLaunch(fill));
	/* shapes and grids */
	WANT(CUDA_ERROR_INVALID_VALUE, cuFuncSetBlockShape(fill, 0, 1, 1));
	WANT(CUDA_ERROR_INVALID_VALUE, cuFuncSetBlockShape(fill, 1, -1, 1));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLaunchGrid(fill, 0, 1));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLaunchGrid(fill, 1, -2));
	/* a shape never set: no block */
	WANT(CUDA_SUCCESS, cuParamSetSize(vadd, 28));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLaunch(vadd));
	/* forged functions */
	WANT(CUDA_ERROR_INVALID_HANDLE, cuLaunch(NULL));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuParamSeti((CUfunction)(void *)big, 0, 1));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuFuncSetBlockShape((CUfunction)(void *)big, 1, 1, 1));
	/* a function of an unloaded module, kept: the worker refuses it at
	 * the launch (its error comes with the next synchronous call) */
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 64));
	WANT(CUDA_SUCCESS, cuModuleLoadData(&m2, image));
	WANT(CUDA_SUCCESS, cuModuleGetFunction(&gone, m2, "xgpu_fake_fill"));
	if (step_failed)
		goto out;
	keep_bytes(stale, sizeof(stale), gone);
	WANT(CUDA_SUCCESS, cuModuleUnload(m2));
	{
		CUfunction sf = (CUfunction)(void *)stale;
		int cnt = 16;

		WANT(CUDA_SUCCESS, cuParamSetSize(sf, 16));
		WANT(CUDA_SUCCESS, cuParamSetv(sf, 0, &d, sizeof(d)));
		WANT(CUDA_SUCCESS, cuParamSeti(sf, 8, 5));
		WANT(CUDA_SUCCESS, cuParamSeti(sf, 12, (unsigned int)cnt));
		WANT(CUDA_SUCCESS, cuFuncSetBlockShape(sf, 16, 1, 1));
		rc = cuLaunch(sf);
		if (rc == CUDA_SUCCESS)
			rc = cuCtxSynchronize();
		EXPECT(rc == CUDA_ERROR_INVALID_HANDLE,
		       "launch of an unloaded module's function: %s",
		       ename(rc));
	}
	alive();
	/*
	 * cuParamSetTexRef: the driver judges a live function and reference
	 * (the CUDA 13 driver, and so the fake, refuses even
	 * CU_PARAM_TR_DEFAULT); stale or missing ones are refused first
	 */
	WANT(CUDA_SUCCESS, cuModuleLoadData(&m2, image));
	WANT(CUDA_SUCCESS, cuModuleGetTexRef(&t, m2, "tex_in"));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuParamSetTexRef(fill, CU_PARAM_TR_DEFAULT, t));
	WANT(CUDA_ERROR_INVALID_VALUE, cuParamSetTexRef(fill, 0, t));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuParamSetTexRef(fill, CU_PARAM_TR_DEFAULT, NULL));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuParamSetTexRef(NULL, CU_PARAM_TR_DEFAULT, t));
	WANT(CUDA_SUCCESS, cuModuleUnload(m2));
	m2 = NULL;
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuParamSetTexRef(fill, CU_PARAM_TR_DEFAULT, t));
	alive();
out:
	if (m2)
		cuModuleUnload(m2);
	cuMemFree(d);
	end();
}

static void test_attach(CUdevice dev)
{
	CUcontext c = NULL, got = NULL, cur = NULL;
	unsigned char stale[64] __attribute__((aligned(16)));
	CUdeviceptr d = 0;

	begin("ctx-attach");
	WANT(CUDA_SUCCESS, cuCtxCreate(&c, NULL, 0, dev));
	if (step_failed)
		goto out;
	/* count 1 -> 3 -> 1: still alive */
	WANT(CUDA_SUCCESS, cuCtxAttach(&got, 0));
	EXPECT(got == c, "attach gave another context");
	WANT(CUDA_SUCCESS, cuCtxAttach(&got, 0));
	WANT(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(&got, 1));
	WANT(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(NULL, 0));
	WANT(CUDA_SUCCESS, cuCtxDetach(c));
	WANT(CUDA_SUCCESS, cuCtxDetach(c));
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 64));
	WANT(CUDA_SUCCESS, cuMemFree(d));
	/* not current: refused */
	WANT(CUDA_SUCCESS, cuCtxPushCurrent(ctx));
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDetach(c));
	WANT(CUDA_SUCCESS, cuCtxPopCurrent(&cur));
	/* count 0: destroyed, and popped */
	keep_bytes(stale, sizeof(stale), c);
	WANT(CUDA_SUCCESS, cuCtxDetach(c));
	WANT(CUDA_SUCCESS, cuCtxGetCurrent(&cur));
	EXPECT(cur == ctx, "the detached context is still current");
	/* stale, and forged */
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDetach(c));
	WANT(CUDA_ERROR_INVALID_CONTEXT,
	     cuCtxDetach((CUcontext)(void *)stale));
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDetach(NULL));
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(c));
	/* the primary: counted, never destroyed by a detach */
	WANT(CUDA_SUCCESS, cuCtxAttach(&got, 0));
	EXPECT(got == ctx, "attach to the primary gave another context");
	WANT(CUDA_SUCCESS, cuCtxDetach(ctx));
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDetach(ctx));
	alive();
out:
	end();
}

static void test_multidevice(void)
{
	CUDA_LAUNCH_PARAMS lp;
	CUdeviceptr d = 0;
	CUstream s = NULL;
	uint32_t v = 0x77, h[8] = { 0 };
	int n = 8;
	void *params[] = { &d, &v, &n };

	begin("coop-multidevice");
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, sizeof(h)));
	WANT(CUDA_SUCCESS, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	memset(&lp, 0, sizeof(lp));
	lp.function = fill;
	lp.gridDimX = lp.gridDimY = lp.gridDimZ = 1;
	lp.blockDimX = 8;
	lp.blockDimY = lp.blockDimZ = 1;
	lp.hStream = s;
	lp.kernelParams = params;
	WANT(CUDA_SUCCESS, cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
	WANT(CUDA_SUCCESS, cuStreamSynchronize(s));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(h, d, sizeof(h)));
	EXPECT(h[0] == 0x77 && h[7] == 0x77, "fill %x %x", h[0], h[7]);
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLaunchCooperativeKernelMultiDevice(&lp, 0, 0));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLaunchCooperativeKernelMultiDevice(NULL, 1, 0));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLaunchCooperativeKernelMultiDevice(&lp, 1, 4));
	lp.hStream = NULL;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
	alive();
	cuStreamDestroy(s);
	cuMemFree(d);
	end();
}

/*
 * The ABIs before the current ones, found by name as an old binary finds
 * them: the memory ABI of 32-bit pointers answers
 * CUDA_ERROR_INVALID_CONTEXT whatever its arguments (as the real driver
 * does in a context of the current API); the CUDA 10/11 kernel node
 * parameters and cuGraphExecUpdate work; the rest run as the current form.
 */
static void test_old_abi(void)
{
	static const char *const old32[] = {
		"cuMemAlloc", "cuMemAllocPitch", "cuMemFree",
		"cuMemGetAddressRange", "cuMemGetInfo",
		"cuMemHostGetDevicePointer", "cuArrayCreate",
		"cuArrayGetDescriptor", "cuArray3DCreate",
		"cuArray3DGetDescriptor", "cuMemcpyHtoD", "cuMemcpyDtoH",
		"cuMemcpyDtoD", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync",
		"cuMemcpyDtoDAsync", "cuMemcpyHtoA", "cuMemcpyAtoH",
		"cuMemcpyHtoAAsync", "cuMemcpyAtoHAsync", "cuMemcpyAtoD",
		"cuMemcpyDtoA", "cuMemcpyAtoA", "cuMemcpy2D",
		"cuMemcpy2DUnaligned", "cuMemcpy2DAsync", "cuMemcpy3D",
		"cuMemcpy3DAsync", "cuMemsetD8", "cuMemsetD16", "cuMemsetD32",
		"cuMemsetD2D8", "cuMemsetD2D16", "cuMemsetD2D32",
		"cuTexRefGetAddress", "cuTexRefSetAddress",
		"cuTexRefSetAddress2D",
	};
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
	enum { N = 64 };
	float ha[N], hb[N];
	CUdeviceptr a = 0, b = 0, c = 0, d = 0;
	int n = N;
	void *args[] = { &a, &b, &c, &n };
	CUDA_KERNEL_NODE_PARAMS_v1 kp, got;
	CUgraph g = NULL, g2 = NULL;
	CUgraphExec x = NULL;
	CUgraphNode node, node2, err = (CUgraphNode)1;
	CUgraphExecUpdateResult ur = CU_GRAPH_EXEC_UPDATE_ERROR;
	CUlinkState ls = NULL;
	void *page;

	begin("old-abi");
	for (size_t i = 0; i < sizeof(old32) / sizeof(old32[0]); i++) {
		any6 f = (any6)dlsym(RTLD_DEFAULT, old32[i]);

		EXPECT(f != NULL, "%s: not exported", old32[i]);
		if (f)
			EXPECT(f(0, 0, 0, 0, 0, 0) == CUDA_ERROR_INVALID_CONTEXT,
			       "%s: not CUDA_ERROR_INVALID_CONTEXT", old32[i]);
	}
	add1 = (__typeof__(add1))dlsym(RTLD_DEFAULT, "cuGraphAddKernelNode");
	set1 = (__typeof__(set1))dlsym(RTLD_DEFAULT,
				       "cuGraphKernelNodeSetParams");
	get1 = (__typeof__(get1))dlsym(RTLD_DEFAULT,
				       "cuGraphKernelNodeGetParams");
	xset1 = (__typeof__(xset1))dlsym(RTLD_DEFAULT,
					 "cuGraphExecKernelNodeSetParams");
	upd1 = (__typeof__(upd1))dlsym(RTLD_DEFAULT, "cuGraphExecUpdate");
	reg1 = (__typeof__(reg1))dlsym(RTLD_DEFAULT, "cuMemHostRegister");
	link1 = (__typeof__(link1))dlsym(RTLD_DEFAULT, "cuLinkCreate");
	EXPECT(add1 && set1 && get1 && xset1 && upd1 && reg1 && link1,
	       "an older ABI is not exported");
	if (step_failed)
		goto out;
	for (int i = 0; i < N; i++) {
		ha[i] = (float)i;
		hb[i] = (float)(2 * i + 1);
	}
	WANT(CUDA_SUCCESS, cuMemAlloc(&a, sizeof(ha)));
	WANT(CUDA_SUCCESS, cuMemAlloc(&b, sizeof(hb)));
	WANT(CUDA_SUCCESS, cuMemAlloc(&c, sizeof(ha)));
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, sizeof(ha)));
	WANT(CUDA_SUCCESS, cuMemcpyHtoD(a, ha, sizeof(ha)));
	WANT(CUDA_SUCCESS, cuMemcpyHtoD(b, hb, sizeof(hb)));
	WANT(CUDA_SUCCESS, cuMemsetD32(c, 0, N));
	WANT(CUDA_SUCCESS, cuMemsetD32(d, 0, N));
	if (step_failed)
		goto out;
	/* a kernel node of CUDA 10 parameters, read back the same way */
	memset(&kp, 0, sizeof(kp));
	kp.func = vadd;
	kp.gridDimX = 1;
	kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = N;
	kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	WANT(CUDA_SUCCESS, cuGraphCreate(&g, 0));
	WANT(CUDA_SUCCESS, add1(&node, g, NULL, 0, &kp));
	WANT(CUDA_SUCCESS, get1(node, &got));
	EXPECT(got.func == vadd && got.blockDimX == N,
	       "parameters read back: func %p block %u", (void *)got.func,
	       got.blockDimX);
	/* (the fake device runs no kernel node: tests/gpu/oldabi checks the
	 * results on the GPU) */
	WANT(CUDA_SUCCESS, cuGraphInstantiate(&x, g, 0));
	WANT(CUDA_SUCCESS, cuGraphLaunch(x, NULL));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	/* new output in the executable graph, then in the graph */
	args[2] = &d;
	WANT(CUDA_SUCCESS, xset1(x, node, &kp));
	WANT(CUDA_SUCCESS, cuGraphLaunch(x, NULL));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	WANT(CUDA_SUCCESS, set1(node, &kp));
	WANT(CUDA_SUCCESS, get1(node, &got));
	EXPECT(got.kernelParams &&
	       *(CUdeviceptr *)got.kernelParams[2] == d,
	       "the third parameter after a set is not the new output");
	WANT(CUDA_ERROR_INVALID_VALUE, set1(node, NULL));
	/* cuGraphExecUpdate of CUDA 10.2 from a graph of the same shape */
	WANT(CUDA_SUCCESS, cuGraphCreate(&g2, 0));
	WANT(CUDA_SUCCESS, add1(&node2, g2, NULL, 0, &kp));
	WANT(CUDA_SUCCESS, upd1(x, g2, &err, &ur));
	EXPECT(ur == CU_GRAPH_EXEC_UPDATE_SUCCESS && err == NULL,
	       "update result %d, error node %p", (int)ur, (void *)err);
	WANT(CUDA_ERROR_INVALID_VALUE, upd1(x, g2, NULL, &ur));
	/* no executable graph: an error, the outputs left as they were */
	ur = (CUgraphExecUpdateResult)77;
	WANT(CUDA_ERROR_INVALID_VALUE, upd1(NULL, g2, &err, &ur));
	EXPECT(ur == (CUgraphExecUpdateResult)77,
	       "update of no executable graph wrote result %d", (int)ur);
	/* another shape: refused, and the result says why */
	WANT(CUDA_SUCCESS, add1(&node2, g2, &node2, 1, &kp));
	WANT(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, upd1(x, g2, &err, &ur));
	EXPECT(ur == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
	       "update of another shape: result %d", (int)ur);
	/* the forms with the current arguments */
	page = aligned_alloc(4096, 4096);
	if (page) {
		WANT(CUDA_SUCCESS, reg1(page, 4096, 0));
		WANT(CUDA_SUCCESS, cuMemHostUnregister(page));
		free(page);
	}
	WANT(CUDA_SUCCESS, link1(0, NULL, NULL, &ls));
	if (ls)
		WANT(CUDA_SUCCESS, cuLinkDestroy(ls));
	alive();
out:
	if (x)
		cuGraphExecDestroy(x);
	if (g)
		cuGraphDestroy(g);
	if (g2)
		cuGraphDestroy(g2);
	cuMemFree(a);
	cuMemFree(b);
	cuMemFree(c);
	cuMemFree(d);
	end();
}

int main(void)
{
	CUdevice dev;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuModuleLoadData(&mod, image) ||
	    cuModuleGetFunction(&vadd, mod, "xgpu_fake_vadd") ||
	    cuModuleGetFunction(&fill, mod, "xgpu_fake_fill")) {
		printf("FAIL legacylaunch: no device\n");
		return 1;
	}
	test_params();
	test_bad_inputs();
	test_attach(dev);
	test_multidevice();
	test_old_abi();
	cuModuleUnload(mod);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
