// SPDX-License-Identifier: MIT
/*
 * greenctx: green contexts on the fake device (132 SMs): the device's SM
 * resource, a split into groups of 16, a descriptor, a green context, its
 * context made current with an allocation and a kernel, a stream of the
 * green context, events recorded and waited on, its id, and its destroy;
 * with bad inputs: forged and altered resources, a stale and a forged
 * descriptor, a destroyed green context (and its left-over stream), a
 * huge group count.  After each bad input the channel must still serve
 * the guest.
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

static const char image[] = "XGPU-FAKE-MODULE\n";

#define SMS	132u	/* the fake device's */
#define GROUP	16u

static CUcontext primary;
static CUfunction fill;

/* what the steps hand on */
static CUdevResource dev_res, groups[256], rest;
static unsigned int ngroups;
static CUdevResourceDesc desc;
static CUgreenCtx green;
static CUcontext gctx;
static unsigned long long gid;

/* the channel still serves this guest */
static void alive(void)
{
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
}

/* xgpu_fake_fill(p, v, n) on stream s */
static CUresult launch_fill(CUdeviceptr p, uint32_t v, int n, CUstream s)
{
	void *params[] = { &p, &v, &n };

	return cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

/* fill n words at d with v on stream s and read them back */
static void fill_check(CUdeviceptr d, uint32_t v, CUstream s)
{
	uint32_t h[64];

	memset(h, 0, sizeof(h));
	WANT(CUDA_SUCCESS, launch_fill(d, v, 64, s));
	WANT(CUDA_SUCCESS, cuStreamSynchronize(s));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(h, d, sizeof(h)));
	EXPECT(h[0] == v && h[63] == v, "fill %x not seen: %x %x", v, h[0],
	       h[63]);
}

static void test_resources(CUdevice dev)
{
	CUdevResource r;

	begin("resources");
	memset(&dev_res, 0, sizeof(dev_res));
	WANT(CUDA_SUCCESS, cuDeviceGetDevResource(dev, &dev_res,
						  CU_DEV_RESOURCE_TYPE_SM));
	EXPECT(dev_res.type == CU_DEV_RESOURCE_TYPE_SM &&
	       dev_res.sm.smCount == SMS && dev_res.sm.minSmPartitionSize > 0,
	       "device resource: type %d, %u SMs, min %u", dev_res.type,
	       dev_res.sm.smCount, dev_res.sm.minSmPartitionSize);
	/* the driver's own bytes stay in the worker: a token instead */
	EXPECT(!memcmp(dev_res._internal_padding, "xgpu-res", 8),
	       "the driver's own bytes of a resource reached the guest");
	memset(&r, 0, sizeof(r));
	WANT(CUDA_SUCCESS, cuCtxGetDevResource(primary, &r,
					       CU_DEV_RESOURCE_TYPE_SM));
	EXPECT(r.sm.smCount == SMS, "context resource: %u SMs", r.sm.smCount);
	/* bad inputs */
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceGetDevResource(dev, NULL, CU_DEV_RESOURCE_TYPE_SM));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuDeviceGetDevResource(7, &r, CU_DEV_RESOURCE_TYPE_SM));
	WANT(CUDA_ERROR_INVALID_RESOURCE_TYPE,
	     cuDeviceGetDevResource(dev, &r, (CUdevResourceType)77));
	WANT(CUDA_ERROR_INVALID_CONTEXT,
	     cuCtxGetDevResource((CUcontext)(uintptr_t)0x1000, &r,
				 CU_DEV_RESOURCE_TYPE_SM));
	alive();
	end();
}

static void test_split(void)
{
	CUdevResource forged, r2[4], big[256];
	unsigned int n;

	begin("split");
	/* how many groups of 16 there would be */
	n = 0;
	WANT(CUDA_SUCCESS, cuDevSmResourceSplitByCount(NULL, &n, &dev_res,
						       NULL, 0, GROUP));
	EXPECT(n == SMS / GROUP, "a query says %u groups, want %u", n,
	       SMS / GROUP);
	ngroups = n;
	memset(groups, 0, sizeof(groups));
	WANT(CUDA_SUCCESS, cuDevSmResourceSplitByCount(groups, &ngroups,
						       &dev_res, &rest, 0,
						       GROUP));
	EXPECT(ngroups == SMS / GROUP, "%u groups, want %u", ngroups,
	       SMS / GROUP);
	for (unsigned int i = 0; i < ngroups; i++)
		EXPECT(groups[i].type == CU_DEV_RESOURCE_TYPE_SM &&
		       groups[i].sm.smCount == GROUP,
		       "group %u: type %d, %u SMs", i, groups[i].type,
		       groups[i].sm.smCount);
	EXPECT(rest.sm.smCount == SMS - ngroups * GROUP,
	       "remainder: %u SMs, want %u", rest.sm.smCount,
	       SMS - ngroups * GROUP);
	/* fewer groups than there could be */
	n = 2;
	WANT(CUDA_SUCCESS, cuDevSmResourceSplitByCount(r2, &n, &dev_res,
						       NULL, 0, GROUP));
	EXPECT(n == 2, "2 groups asked, %u made", n);
	/* a huge group count: as many as the driver makes */
	n = 1000000;
	WANT(CUDA_SUCCESS, cuDevSmResourceSplitByCount(big, &n, &dev_res,
						       NULL, 0, GROUP));
	EXPECT(n == SMS / GROUP, "1000000 groups asked, %u made", n);
	/* bytes the worker never gave: refused before the driver */
	forged = dev_res;
	forged._internal_padding[10] ^= 0x5a;
	n = 4;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevSmResourceSplitByCount(r2, &n, &forged, NULL, 0, GROUP));
	memset(&forged, 0, sizeof(forged));
	forged.type = CU_DEV_RESOURCE_TYPE_SM;
	forged.sm.smCount = SMS;
	n = 4;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevSmResourceSplitByCount(r2, &n, &forged, NULL, 0, GROUP));
	/* a group is split only in a green context made of it */
	n = 4;
	WANT(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
	     cuDevSmResourceSplitByCount(r2, &n, &groups[0], NULL, 0, 8));
	n = 4;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevSmResourceSplitByCount(r2, &n, &dev_res, NULL, 0, 1000));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevSmResourceSplitByCount(r2, NULL, &dev_res, NULL, 0, 8));
	alive();
	end();
}

static void test_desc(void)
{
	CUdevResourceDesc d2 = NULL, bad = NULL;
	CUdevResource other[2], forged;
	unsigned int n = 2;

	begin("descriptor");
	WANT(CUDA_SUCCESS, cuDevResourceGenerateDesc(&desc, &groups[0], 1));
	EXPECT(desc != NULL, "no descriptor");
	WANT(CUDA_SUCCESS, cuDevResourceGenerateDesc(&d2, &groups[1], 2));
	/* groups of two splits in one descriptor */
	WANT(CUDA_SUCCESS, cuDevSmResourceSplitByCount(other, &n, &dev_res,
						       NULL, 0, GROUP));
	other[1] = groups[3];
	WANT(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
	     cuDevResourceGenerateDesc(&bad, other, 2));
	forged = groups[0];
	forged.sm.smCount = SMS;	/* no resource the worker gave */
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevResourceGenerateDesc(&bad, &forged, 1));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevResourceGenerateDesc(&bad, groups, 0));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevResourceGenerateDesc(&bad, groups, 100000));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDevResourceGenerateDesc(NULL, groups, 1));
	alive();
	end();
}

static void test_create(CUdevice dev)
{
	CUgreenCtx g2 = NULL, bad = NULL;
	CUdevResourceDesc stale;
	CUdevResource r;
	unsigned long long id2 = 0;

	begin("green-create");
	WANT(CUDA_SUCCESS, cuGreenCtxCreate(&green, desc, dev,
					    CU_GREEN_CTX_DEFAULT_STREAM));
	memset(&r, 0, sizeof(r));
	WANT(CUDA_SUCCESS, cuGreenCtxGetDevResource(green, &r,
						    CU_DEV_RESOURCE_TYPE_SM));
	EXPECT(r.sm.smCount == GROUP, "green context: %u SMs, want %u",
	       r.sm.smCount, GROUP);
	WANT(CUDA_SUCCESS, cuGreenCtxGetId(green, &gid));
	EXPECT(gid != 0, "green context id 0");
	/* a second one on the same descriptor: another id */
	WANT(CUDA_SUCCESS, cuGreenCtxCreate(&g2, desc, dev,
					    CU_GREEN_CTX_DEFAULT_STREAM));
	WANT(CUDA_SUCCESS, cuGreenCtxGetId(g2, &id2));
	EXPECT(id2 != gid, "two green contexts with id %llu", gid);
	WANT(CUDA_SUCCESS, cuGreenCtxDestroy(g2));
	/* bad inputs: the default stream flag is required */
	WANT(CUDA_ERROR_INVALID_VALUE, cuGreenCtxCreate(&bad, desc, dev, 0));
	/* a stale descriptor (another generation of its handle) and a
	 * forged one: the worker knows neither */
	stale = (CUdevResourceDesc)((uintptr_t)desc + (1ull << 32));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxCreate(&bad, stale, dev, CU_GREEN_CTX_DEFAULT_STREAM));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxCreate(&bad, (CUdevResourceDesc)(uintptr_t)0x1234, dev,
			      CU_GREEN_CTX_DEFAULT_STREAM));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuGreenCtxCreate(&bad, NULL, dev, CU_GREEN_CTX_DEFAULT_STREAM));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuGreenCtxCreate(&bad, desc, 9, CU_GREEN_CTX_DEFAULT_STREAM));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxGetDevResource((CUgreenCtx)(uintptr_t)0x1000, &r,
				      CU_DEV_RESOURCE_TYPE_SM));
	alive();
	end();
}

static void test_ctx(CUdevice dev)
{
	CUcontext again = NULL, cur = NULL;
	CUdevResource r;
	CUdeviceptr d = 0;
	CUdevice cdev = -1;
	unsigned long long id = 0;

	begin("green-ctx");
	WANT(CUDA_SUCCESS, cuCtxFromGreenCtx(&gctx, green));
	WANT(CUDA_SUCCESS, cuCtxFromGreenCtx(&again, green));
	EXPECT(gctx && gctx == again && gctx != primary,
	       "cuCtxFromGreenCtx: not one context of its own");
	memset(&r, 0, sizeof(r));
	WANT(CUDA_SUCCESS, cuCtxGetDevResource(gctx, &r,
					       CU_DEV_RESOURCE_TYPE_SM));
	EXPECT(r.sm.smCount == GROUP, "its context: %u SMs", r.sm.smCount);
	/* current: memory, a kernel, the queries */
	WANT(CUDA_SUCCESS, cuCtxPushCurrent(gctx));
	WANT(CUDA_SUCCESS, cuCtxGetCurrent(&cur));
	EXPECT(cur == gctx, "not current");
	WANT(CUDA_SUCCESS, cuCtxGetDevice(&cdev));
	EXPECT(cdev == dev, "device %d", cdev);
	WANT(CUDA_SUCCESS, cuGreenCtxGetId(NULL, &id));
	EXPECT(id == gid, "current green context id %llu, want %llu", id,
	       gid);
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 256));
	fill_check(d, 0x6ee0, NULL);
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	/* it is the green context's: cuCtxDestroy refuses it */
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(gctx));
	WANT(CUDA_SUCCESS, cuCtxPopCurrent(&cur));
	EXPECT(cur == gctx, "popped another context");
	/* no green context current */
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxGetId(NULL, &id));
	/* its memory is the primary's */
	fill_check(d, 0x6ee1, NULL);
	WANT(CUDA_SUCCESS, cuMemFree(d));
	WANT(CUDA_ERROR_INVALID_VALUE, cuCtxFromGreenCtx(NULL, green));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuCtxFromGreenCtx(&again, (CUgreenCtx)(uintptr_t)0x1000));
	alive();
	end();
}

static void test_stream(void)
{
	CUstream s = NULL, plain = NULL, bad = NULL;
	CUgreenCtx g = NULL;
	CUcontext c = NULL;
	CUdeviceptr d = 0;

	begin("green-stream");
	WANT(CUDA_SUCCESS, cuGreenCtxStreamCreate(&s, green,
						  CU_STREAM_NON_BLOCKING, 0));
	WANT(CUDA_SUCCESS, cuStreamGetGreenCtx(s, &g));
	EXPECT(g == green, "the stream's green context is another");
	WANT(CUDA_SUCCESS, cuStreamGetCtx(s, &c));
	EXPECT(c == gctx, "the stream's context is not the green one's");
	WANT(CUDA_SUCCESS, cuStreamGetCtx_v2(s, &c, &g));
	EXPECT(c == primary && g == green,
	       "cuStreamGetCtx_v2: not the primary and the green context");
	WANT(CUDA_SUCCESS, cuStreamCreate(&plain, CU_STREAM_NON_BLOCKING));
	WANT(CUDA_SUCCESS, cuStreamGetGreenCtx(plain, &g));
	EXPECT(g == NULL, "a plain stream has a green context");
	WANT(CUDA_SUCCESS, cuStreamGetGreenCtx(NULL, &g));
	EXPECT(g == NULL, "the primary's NULL stream has a green context");
	/* a kernel on it, from the primary and from the green context */
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 256));
	fill_check(d, 0x57e0, s);
	WANT(CUDA_SUCCESS, cuCtxPushCurrent(gctx));
	fill_check(d, 0x57e1, s);
	WANT(CUDA_SUCCESS, cuStreamGetGreenCtx(NULL, &g));
	EXPECT(g == green, "the green context's NULL stream: no green");
	WANT(CUDA_SUCCESS, cuCtxPopCurrent(NULL));
	/* bad inputs */
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuGreenCtxStreamCreate(&bad, green, 0, 0));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuGreenCtxStreamCreate(NULL, green, CU_STREAM_NON_BLOCKING, 0));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxStreamCreate(&bad, (CUgreenCtx)(uintptr_t)0x1000,
				    CU_STREAM_NON_BLOCKING, 0));
	WANT(CUDA_SUCCESS, cuStreamDestroy(s));
	WANT(CUDA_SUCCESS, cuStreamDestroy(plain));
	WANT(CUDA_SUCCESS, cuMemFree(d));
	alive();
	end();
}

static void test_events(void)
{
	CUevent ev = NULL, gev = NULL;
	unsigned char stale[64] __attribute__((aligned(16)));
	CUevent gone = NULL;
	size_t n;

	begin("green-events");
	WANT(CUDA_SUCCESS, cuEventCreate(&ev, 0));
	WANT(CUDA_SUCCESS, cuGreenCtxRecordEvent(green, ev));
	WANT(CUDA_SUCCESS, cuEventSynchronize(ev));
	WANT(CUDA_SUCCESS, cuGreenCtxWaitEvent(green, ev));
	/* an event made in the green context */
	WANT(CUDA_SUCCESS, cuCtxPushCurrent(gctx));
	WANT(CUDA_SUCCESS, cuEventCreate(&gev, 0));
	WANT(CUDA_SUCCESS, cuCtxPopCurrent(NULL));
	WANT(CUDA_SUCCESS, cuGreenCtxRecordEvent(green, gev));
	WANT(CUDA_SUCCESS, cuEventQuery(gev));
	/* bad inputs */
	WANT(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxRecordEvent(green, NULL));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxWaitEvent((CUgreenCtx)(uintptr_t)0x1000, ev));
	/* a destroyed event's bytes: the worker knows it is stale */
	WANT(CUDA_SUCCESS, cuEventCreate(&gone, 0));
	n = malloc_usable_size((void *)gone);
	memset(stale, 0, sizeof(stale));
	memcpy(stale, gone, n < sizeof(stale) ? n : sizeof(stale));
	WANT(CUDA_SUCCESS, cuEventDestroy(gone));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxRecordEvent(green, (CUevent)(void *)stale));
	alive();
	WANT(CUDA_SUCCESS, cuEventDestroy(ev));
	WANT(CUDA_SUCCESS, cuEventDestroy(gev));
	end();
}

static void test_destroy(CUdevice dev)
{
	CUstream left = NULL, made = NULL, s = NULL;
	CUevent ev = NULL, gev = NULL;
	CUgreenCtx g = NULL;
	CUcontext c = NULL;
	CUdevResource r;
	CUdeviceptr d = 0;
	unsigned long long id;
	uint32_t h[64];

	begin("green-destroy");
	WANT(CUDA_SUCCESS, cuEventCreate(&ev, 0));
	/* memory and an event made in the green context, streams left
	 * behind */
	WANT(CUDA_SUCCESS, cuCtxPushCurrent(gctx));
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 256));
	WANT(CUDA_SUCCESS, launch_fill(d, 0xd00d, 64, NULL));
	WANT(CUDA_SUCCESS, cuEventCreate(&gev, 0));
	WANT(CUDA_SUCCESS, cuStreamCreate(&made, CU_STREAM_NON_BLOCKING));
	WANT(CUDA_SUCCESS, cuStreamGetGreenCtx(made, &g));
	EXPECT(g == green, "a stream made in its context: not its");
	WANT(CUDA_SUCCESS, cuCtxPopCurrent(NULL));
	WANT(CUDA_SUCCESS, cuGreenCtxStreamCreate(&left, green,
						  CU_STREAM_NON_BLOCKING, 0));
	WANT(CUDA_SUCCESS, cuGreenCtxDestroy(green));
	/* the destroyed green context: refused, for this guest alone */
	WANT(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxDestroy(green));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxGetId(green, &id));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuCtxFromGreenCtx(&c, green));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxRecordEvent(green, ev));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxWaitEvent(green, ev));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuGreenCtxGetDevResource(green, &r, CU_DEV_RESOURCE_TYPE_SM));
	/* its context is destroyed; its left-over stream is gone */
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxPushCurrent(gctx));
	WANT(CUDA_ERROR_INVALID_CONTEXT,
	     cuCtxGetDevResource(gctx, &r, CU_DEV_RESOURCE_TYPE_SM));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(left));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(made));
	/* their destroy is posted: the worker's refusal comes back once,
	 * at the next synchronous call */
	WANT(CUDA_SUCCESS, cuStreamDestroy(left));
	WANT(CUDA_SUCCESS, cuStreamDestroy(made));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuCtxSynchronize());
	/* the event is the primary's, and survives it */
	WANT(CUDA_SUCCESS, cuEventRecord(gev, NULL));
	WANT(CUDA_SUCCESS, cuEventSynchronize(gev));
	WANT(CUDA_SUCCESS, cuEventDestroy(gev));
	/* the memory is the primary's, and survives it */
	memset(h, 0, sizeof(h));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(h, d, sizeof(h)));
	EXPECT(h[0] == 0xd00d && h[63] == 0xd00d, "memory lost: %x %x",
	       h[0], h[63]);
	WANT(CUDA_SUCCESS, cuMemFree(d));
	/* the descriptor lives on: a new green context from it */
	WANT(CUDA_SUCCESS, cuGreenCtxCreate(&green, desc, dev,
					    CU_GREEN_CTX_DEFAULT_STREAM));
	WANT(CUDA_SUCCESS, cuCtxFromGreenCtx(&c, green));
	EXPECT(c != NULL, "no context");
	WANT(CUDA_SUCCESS, cuCtxPushCurrent(c));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	WANT(CUDA_SUCCESS, cuCtxPopCurrent(NULL));
	WANT(CUDA_SUCCESS, cuGreenCtxDestroy(green));
	WANT(CUDA_SUCCESS, cuEventDestroy(ev));
	alive();
	end();
}

int main(void)
{
	CUmodule mod;
	CUdevice dev;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&primary, dev) ||
	    cuCtxSetCurrent(primary) || cuModuleLoadData(&mod, image) ||
	    cuModuleGetFunction(&fill, mod, "xgpu_fake_fill")) {
		printf("FAIL greenctx: no device\n");
		return 1;
	}
	test_resources(dev);
	test_split();
	test_desc();
	test_create(dev);
	test_ctx(dev);
	test_stream();
	test_events();
	test_destroy(dev);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
