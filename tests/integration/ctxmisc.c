// SPDX-License-Identifier: MIT
/*
 * ctxmisc: context events, stream attribute copies, the per-thread stream
 * memory operations, cuCtxSetFlags, the small device and peer queries,
 * peer access, managed range attributes and batch prefetches, and
 * cuLibraryGetUnifiedFunction, on the fake device, with bad inputs: forged
 * and stale handles, a huge attribute count, NULL data, bad sizes.  After
 * each bad input the channel must still serve the guest.
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
#include <unistd.h>

#include "steps.h"

/* the per-thread entry points, by their exported names */
extern CUresult copy_attrs_ptsz(CUstream dst, CUstream src)
	__asm__("cuStreamCopyAttributes_ptsz");
extern CUresult write32_ptsz(CUstream s, CUdeviceptr p, cuuint32_t v,
			     unsigned int flags)
	__asm__("cuStreamWriteValue32_ptsz");
extern CUresult wait32_ptsz(CUstream s, CUdeviceptr p, cuuint32_t v,
			    unsigned int flags)
	__asm__("cuStreamWaitValue32_ptsz");
extern CUresult write64_ptsz(CUstream s, CUdeviceptr p, cuuint64_t v,
			     unsigned int flags)
	__asm__("cuStreamWriteValue64_ptsz");
extern CUresult batch_ptsz(CUstream s, unsigned int count,
			   CUstreamBatchMemOpParams *ops, unsigned int flags)
	__asm__("cuStreamBatchMemOp_ptsz");
extern CUresult prefetch_batch_ptsz(CUdeviceptr *dptrs, size_t *sizes,
				    size_t count, CUmemLocation *locs,
				    size_t *idxs, size_t nlocs,
				    unsigned long long flags, CUstream s)
	__asm__("cuMemPrefetchBatchAsync_ptsz");

static const char image[] = "XGPU-FAKE-MODULE\n";

static CUcontext ctx;
static CUfunction fill;

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

/* xgpu_fake_fill(p, v, n) on stream s */
static CUresult launch_fill(CUdeviceptr p, uint32_t v, int n, CUstream s)
{
	void *params[] = { &p, &v, &n };

	return cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

static void test_ctx_events(void)
{
	CUdeviceptr d = 0;
	CUevent ev = NULL, gone = NULL;
	unsigned char stale[64] __attribute__((aligned(16)));
	uint32_t h[64];

	begin("ctx-events");
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, sizeof(h)));
	WANT(CUDA_SUCCESS, cuEventCreate(&ev, 0));
	WANT(CUDA_SUCCESS, launch_fill(d, 0x5eed, 64, NULL));
	WANT(CUDA_SUCCESS, cuCtxRecordEvent(ctx, ev));
	WANT(CUDA_SUCCESS, cuCtxWaitEvent(ctx, ev));
	WANT(CUDA_SUCCESS, cuEventSynchronize(ev));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(h, d, sizeof(h)));
	EXPECT(h[0] == 0x5eed && h[63] == 0x5eed, "fill not seen: %x %x",
	       h[0], h[63]);
	/* bad inputs: each refused, the channel open */
	WANT(CUDA_ERROR_INVALID_HANDLE, cuCtxRecordEvent(ctx, NULL));
	WANT(CUDA_ERROR_INVALID_CONTEXT,
	     cuCtxRecordEvent((CUcontext)(uintptr_t)0x1000, ev));
	/* a destroyed event's handle, kept: the worker knows it is stale */
	WANT(CUDA_SUCCESS, cuEventCreate(&gone, 0));
	keep_bytes(stale, sizeof(stale), gone);
	WANT(CUDA_SUCCESS, cuEventDestroy(gone));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuCtxRecordEvent(ctx, (CUevent)(void *)stale));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuCtxWaitEvent(ctx, (CUevent)(void *)stale));
	alive();
	cuEventDestroy(ev);
	cuMemFree(d);
	end();
}

static void test_stream_attrs(void)
{
	CUstream hi = NULL, lo = NULL, gone = NULL;
	CUstreamAttrValue v;
	unsigned char stale[64] __attribute__((aligned(16)));
	int least = 0, greatest = 0;

	begin("stream-attrs");
	WANT(CUDA_SUCCESS, cuCtxGetStreamPriorityRange(&least, &greatest));
	WANT(CUDA_SUCCESS, cuStreamCreateWithPriority(&hi, CU_STREAM_NON_BLOCKING,
						      greatest));
	WANT(CUDA_SUCCESS, cuStreamCreate(&lo, CU_STREAM_NON_BLOCKING));
	WANT(CUDA_SUCCESS, cuStreamCopyAttributes(lo, hi));
	memset(&v, 0, sizeof(v));
	WANT(CUDA_SUCCESS, cuStreamGetAttribute(lo, CU_LAUNCH_ATTRIBUTE_PRIORITY,
						&v));
	EXPECT(v.priority == greatest, "priority %d copied, want %d",
	       v.priority, greatest);
	WANT(CUDA_SUCCESS, copy_attrs_ptsz(NULL, hi));
	WANT(CUDA_SUCCESS, cuStreamCreate(&gone, 0));
	keep_bytes(stale, sizeof(stale), gone);
	WANT(CUDA_SUCCESS, cuStreamDestroy(gone));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuStreamCopyAttributes(lo, (CUstream)(void *)stale));
	alive();
	cuStreamDestroy(hi);
	cuStreamDestroy(lo);
	end();
}

static void test_memops_ptsz(void)
{
	CUstreamBatchMemOpParams op;
	CUdeviceptr d = 0;
	uint64_t h[2] = { 0, 0 };

	begin("memops-ptsz");
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 16));
	WANT(CUDA_SUCCESS, cuMemsetD8(d, 0, 16));
	WANT(CUDA_SUCCESS, write32_ptsz(NULL, d, 7, 0));
	WANT(CUDA_SUCCESS, wait32_ptsz(NULL, d, 7, CU_STREAM_WAIT_VALUE_EQ));
	WANT(CUDA_SUCCESS, write64_ptsz(NULL, d + 8, 0x1122334455ull, 0));
	memset(&op, 0, sizeof(op));
	op.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	op.writeValue.address = d + 4;
	op.writeValue.value = 9;
	WANT(CUDA_SUCCESS, batch_ptsz(NULL, 1, &op, 0));
	WANT(CUDA_ERROR_INVALID_VALUE, batch_ptsz(NULL, 0, &op, 0));
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(h, d, 16));
	EXPECT(h[0] == (7ull | 9ull << 32) && h[1] == 0x1122334455ull,
	       "values %llx %llx", (unsigned long long)h[0],
	       (unsigned long long)h[1]);
	cuMemFree(d);
	end();
}

static void test_ctx_flags(void)
{
	unsigned int flags = 0, before = 0;

	begin("ctx-flags");
	WANT(CUDA_SUCCESS, cuCtxGetFlags(&before));
	WANT(CUDA_SUCCESS, cuCtxSetFlags(before | CU_CTX_SYNC_MEMOPS));
	WANT(CUDA_SUCCESS, cuCtxGetFlags(&flags));
	EXPECT(flags & CU_CTX_SYNC_MEMOPS, "flags %#x", flags);
	WANT(CUDA_ERROR_INVALID_VALUE, cuCtxSetFlags(0x80000000u));
	WANT(CUDA_SUCCESS, cuCtxSetFlags(before));
	alive();
	end();
}

static void test_device_queries(CUdevice dev)
{
	CUatomicOperation ops[40];
	unsigned int caps[40];
	CUexecAffinityParam aff;
	size_t width = 0;
	char luid[8];
	unsigned int mask = 0;
	int v = -1;

	begin("device-queries");
	WANT(CUDA_SUCCESS, cuDeviceGetExecAffinitySupport(
				   &v, CU_EXEC_AFFINITY_TYPE_SM_COUNT, dev));
	EXPECT(v == 0, "exec affinity support %d", v);
	WANT(CUDA_SUCCESS, cuCtxGetExecAffinity(&aff,
						CU_EXEC_AFFINITY_TYPE_SM_COUNT));
	EXPECT(aff.type == CU_EXEC_AFFINITY_TYPE_SM_COUNT &&
	       aff.param.smCount.val == 132, "affinity %u sms",
	       aff.param.smCount.val);
	WANT(CUDA_ERROR_INVALID_VALUE, cuCtxGetExecAffinity(NULL,
			CU_EXEC_AFFINITY_TYPE_SM_COUNT));
	WANT(CUDA_SUCCESS, cuDeviceGetTexture1DLinearMaxWidth(
				   &width, CU_AD_FORMAT_FLOAT, 4, dev));
	EXPECT(width == 1u << 28, "1D linear width %zu", width);
	WANT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(
			&width, CU_AD_FORMAT_FLOAT, 3, dev));
	WANT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetTexture1DLinearMaxWidth(
			&width, CU_AD_FORMAT_FLOAT, 4, 1));
	/* more operations than one request carries: sent in pieces */
	for (int i = 0; i < 40; i++) {
		ops[i] = (CUatomicOperation)(i % CU_ATOMIC_OPERATION_MAX);
		caps[i] = 0xdead;
	}
	WANT(CUDA_SUCCESS, cuDeviceGetHostAtomicCapabilities(caps, ops, 40,
							     dev));
	EXPECT(caps[0] == 0 && caps[39] == 0, "caps %u %u", caps[0],
	       caps[39]);
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceGetHostAtomicCapabilities(caps, ops, 0, dev));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceGetHostAtomicCapabilities(caps, NULL, 4, dev));
	ops[3] = (CUatomicOperation)9999;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceGetHostAtomicCapabilities(caps, ops, 4, dev));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuDeviceGetP2PAtomicCapabilities(caps, ops, 2, dev, dev));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
				     dev, dev));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
				     dev, 1));
	v = -1;
	WANT(CUDA_SUCCESS, cuDeviceCanAccessPeer(&v, dev, dev));
	EXPECT(v == 0, "a device is its own peer: %d", v);
	WANT(CUDA_ERROR_INVALID_DEVICE, cuDeviceCanAccessPeer(&v, dev, 7));
	WANT(CUDA_ERROR_INVALID_VALUE, cuDeviceCanAccessPeer(NULL, dev, dev));
	WANT(CUDA_ERROR_NOT_SUPPORTED, cuDeviceGetLuid(luid, &mask, dev));
	WANT(CUDA_SUCCESS, cuFlushGPUDirectRDMAWrites(
				   CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
				   CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
	alive();
	end();
}

static void test_peer_access(void)
{
	begin("peer-access");
	WANT(CUDA_ERROR_INVALID_DEVICE, cuCtxEnablePeerAccess(ctx, 0));
	WANT(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(ctx));
	WANT(CUDA_ERROR_INVALID_CONTEXT,
	     cuCtxEnablePeerAccess((CUcontext)(uintptr_t)0x1000, 0));
	WANT(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(NULL, 0));
	alive();
	end();
}

/* one attribute of [p, p + n), as a 32-bit integer */
static int attr(CUmem_range_attribute a, CUdeviceptr p, size_t n)
{
	int v = 12345;
	CUresult rc = cuMemRangeGetAttribute(&v, 4, a, p, n);

	if (rc)
		failf("attribute %d: %s", (int)a, ename(rc));
	return v;
}

static void test_range_attrs(void)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	CUmemLocation dev0 = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
	CUmemLocation host = { CU_MEM_LOCATION_TYPE_HOST, 0 };
	CUmem_range_attribute as[3] = {
		CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
		CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
		CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE };
	CUdeviceptr m = 0, d = 0, ptrs[2];
	size_t sizes[2], idxs[2] = { 0, 1 }, dsz[3];
	CUmemLocation locs[2];
	int rm = -1, ab[3] = { 7, 7, 7 }, pt = -1, v;
	void *data[3] = { &rm, ab, &pt };
	CUstream s = NULL;
	CUresult rc;

	begin("range-attrs");
	rc = cuMemAllocManaged(&m, 4 * pg, CU_MEM_ATTACH_GLOBAL);
	if (rc == CUDA_ERROR_NOT_SUPPORTED) {
		printf("PASS range-attrs (managed memory refused on this "
		       "transport)\n");
		passed++;
		return;
	}
	WANT(CUDA_SUCCESS, rc);
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, pg));
	WANT(CUDA_SUCCESS, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	/* fresh: nothing advised or prefetched */
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 4 * pg) == 0,
	       "fresh range read-mostly");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 4 * pg) ==
	       CU_DEVICE_INVALID, "fresh range has a preferred location");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, pg) ==
	       CU_DEVICE_INVALID, "fresh range was prefetched");
	/* advice on part of it */
	WANT(CUDA_SUCCESS, cuMemAdvise(m, 2 * pg,
				       CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
	WANT(CUDA_SUCCESS, cuMemAdvise(m, 4 * pg,
				       CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
				       dev0));
	WANT(CUDA_SUCCESS, cuMemAdvise(m, 4 * pg,
				       CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuMemAdvise(m, pg, CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
			 (CUmemLocation){ CU_MEM_LOCATION_TYPE_DEVICE, 5 }));
	WANT(CUDA_SUCCESS, cuMemPrefetchAsync(m, pg, dev0, 0, s));
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * pg) == 1,
	       "advised pages not read-mostly");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 4 * pg) == 0,
	       "half-advised range read-mostly");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m + pg, pg) ==
	       0, "preferred location lost");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, m,
		    4 * pg) == CU_MEM_LOCATION_TYPE_DEVICE,
	       "preferred location type");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, pg) ==
	       0, "prefetch not recorded");
	v = attr(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, 2 * pg);
	EXPECT(v == CU_DEVICE_INVALID, "half-prefetched range: %d", v);
	/* the array form */
	dsz[0] = 4;
	dsz[1] = sizeof(ab);
	dsz[2] = 4;
	WANT(CUDA_SUCCESS, cuMemRangeGetAttributes(data, dsz, as, 3, m, pg));
	EXPECT(rm == 1 && ab[0] == 0 && ab[1] == CU_DEVICE_INVALID &&
	       ab[2] == CU_DEVICE_INVALID && pt == CU_MEM_LOCATION_TYPE_DEVICE,
	       "attributes %d {%d %d %d} %d", rm, ab[0], ab[1], ab[2], pt);
	/* batch prefetches: page 2 to the device, page 3 to the host */
	ptrs[0] = m + 2 * pg;
	ptrs[1] = m + 3 * pg;
	sizes[0] = sizes[1] = pg;
	locs[0] = dev0;
	locs[1] = host;
	WANT(CUDA_SUCCESS, cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs,
						   2, 0, s));
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m + 3 * pg,
		    pg) == CU_DEVICE_CPU, "batch prefetch to the host");
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
		    m + 2 * pg, pg) == CU_MEM_LOCATION_TYPE_DEVICE,
	       "batch prefetch to the device");
	WANT(CUDA_SUCCESS, prefetch_batch_ptsz(ptrs, sizes, 2, locs, idxs, 2,
					       0, NULL));
	WANT(CUDA_SUCCESS, cuMemDiscardBatchAsync(ptrs, sizes, 2, 0, s));
	WANT(CUDA_SUCCESS, cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 2,
							     locs, idxs, 2, 0,
							     s));
	/* bad batches */
	idxs[0] = 1;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, s));
	idxs[0] = 0;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 3, 0, s));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, NULL));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 1, s));
	ptrs[1] = d;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemDiscardBatchAsync(ptrs, sizes, 2, 0, s));
	/* bad queries */
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttributes(data, dsz, as, (size_t)-1, m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttributes(data, dsz, as, 1u << 30, m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttributes(NULL, dsz, as, 3, m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttributes(data, dsz, as, 0, m, pg));
	data[1] = NULL;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttributes(data, dsz, as, 3, m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(NULL, 4,
				    CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(&v, 3, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
				    m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(&v, 6, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
				    m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(&v, 4, (CUmem_range_attribute)99, m, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
				    d, pg));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
				    m, 0));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
				    m, 5 * pg));
	/* a new allocation starts with nothing recorded */
	WANT(CUDA_SUCCESS, cuMemFree(m));
	m = 0;
	WANT(CUDA_SUCCESS, cuMemAllocManaged(&m, 4 * pg, CU_MEM_ATTACH_GLOBAL));
	EXPECT(attr(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, pg) == 0,
	       "a new allocation inherited advice");
	alive();
	if (m)
		cuMemFree(m);
	cuMemFree(d);
	cuStreamDestroy(s);
	end();
}

/* answers the library keeps must follow the settings that change them */
static void test_cached_answers(CUdevice dev)
{
	unsigned int f0 = 0, f = 0;
	int active = 0, n = -1;

	begin("cached-answers");
	/* the primary's flags: asked, changed, asked again */
	WANT(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(dev, &f0, &active));
	WANT(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(dev, &f, &active));
	EXPECT(f == f0 && active, "flags %#x then %#x, active %d", f0, f,
	       active);
	WANT(CUDA_SUCCESS, cuDevicePrimaryCtxSetFlags_v2(
				   dev, CU_CTX_SCHED_BLOCKING_SYNC));
	WANT(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(dev, &f, &active));
	EXPECT((f & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC,
	       "flags %#x after setting blocking sync", f);
	WANT(CUDA_SUCCESS, cuDevicePrimaryCtxSetFlags_v2(dev, f0));
	WANT(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(dev, &f, &active));
	EXPECT(f == f0, "flags %#x after setting %#x back", f, f0);
	/* occupancy with more dynamic shared memory than the function may
	 * use, then with the limit raised, then lowered again */
	WANT(CUDA_SUCCESS, cuOccupancyMaxActiveBlocksPerMultiprocessor(
				   &n, fill, 128, 65536));
	EXPECT(n == 0, "%d blocks with 64 KiB over the limit", n);
	WANT(CUDA_SUCCESS, cuFuncSetAttribute(
		fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
	WANT(CUDA_SUCCESS, cuOccupancyMaxActiveBlocksPerMultiprocessor(
				   &n, fill, 128, 65536));
	EXPECT(n > 0, "%d blocks with the limit raised", n);
	WANT(CUDA_SUCCESS, cuFuncSetAttribute(
		fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152));
	WANT(CUDA_SUCCESS, cuOccupancyMaxActiveBlocksPerMultiprocessor(
				   &n, fill, 128, 65536));
	EXPECT(n == 0, "%d blocks with the limit lowered again", n);
	alive();
	end();
}

static void test_unified_function(void)
{
	CUlibrary lib = NULL;
	void *fp = &fp;

	begin("unified-function");
	WANT(CUDA_SUCCESS, cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL,
					     NULL, 0));
	WANT(CUDA_ERROR_NOT_FOUND,
	     cuLibraryGetUnifiedFunction(&fp, lib, "no_such_function"));
	EXPECT(fp == NULL, "a pointer for a missing function");
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLibraryGetUnifiedFunction(NULL, lib, "f"));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLibraryGetUnifiedFunction(&fp, lib, NULL));
	WANT(CUDA_SUCCESS, cuLibraryUnload(lib));
	alive();
	end();
}

int main(void)
{
	CUmodule mod;
	CUdevice dev;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuModuleLoadData(&mod, image) ||
	    cuModuleGetFunction(&fill, mod, "xgpu_fake_fill")) {
		printf("FAIL ctxmisc: no device\n");
		return 1;
	}
	test_ctx_events();
	test_stream_attrs();
	test_memops_ptsz();
	test_ctx_flags();
	test_device_queries(dev);
	test_peer_access();
	test_range_attrs();
	test_unified_function();
	test_cached_answers(dev);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
