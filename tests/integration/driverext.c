// SPDX-License-Identifier: MIT
/*
 * driverext: driver extensions the worker's driver judges, on the fake
 * device: texture references of no module (cuTexRefCreate: set, get,
 * destroy, stale and module references refused), batched decompression
 * (the fake's is the identity: data, counts, errorIndex of a bad entry,
 * a general error, an absurd count, the _ptsz twin), sparse array
 * mappings (map and unmap a physical allocation into a sparse array; a
 * dense array, a foreign array, a released or unknown allocation
 * refused), and
 * async notifications (the fake's budget is half its memory: an
 * allocation over it notifies; the program's callback runs on a thread
 * of the guest library with its userData and handle; after
 * unregistering it runs no more; stale, forged and wrong-device handles
 * refused).  After each bad input the channel must still serve the guest.
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "steps.h"

/* texture references are deprecated in cuda.h */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* the per-thread-stream twins cuda.h names only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM */
CUresult cuMemBatchDecompressAsync_ptsz(CUmemDecompressParams *p,
					size_t count, unsigned int flags,
					size_t *index, CUstream s);
CUresult cuMemMapArrayAsync_ptsz(CUarrayMapInfo *list, unsigned int count,
				 CUstream s);

static const char image[] = "XGPU-FAKE-MODULE\n";

static void alive(void)
{
	WANT(CUDA_SUCCESS, cuCtxSynchronize());
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- texture references of no module ---------------------------------- */

static void test_texref(CUmodule mod)
{
	CUtexref t = NULL, t2 = NULL, mt = NULL;
	CUarray_format fmt = 0;
	CUfilter_mode fm = 0;
	CUdeviceptr d = 0, got = 0;
	size_t off = 1;
	int ch = 0;

	begin("texref-create");
	WANT(CUDA_ERROR_INVALID_VALUE, cuTexRefCreate(NULL));
	WANT(CUDA_SUCCESS, cuTexRefCreate(&t));
	WANT(CUDA_SUCCESS, cuMemAlloc(&d, 4096));
	WANT(CUDA_SUCCESS, cuTexRefSetAddress(&off, t, d, 4096));
	EXPECT(off == 0, "offset %zu", off);
	WANT(CUDA_SUCCESS, cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT8, 4));
	WANT(CUDA_SUCCESS, cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
	WANT(CUDA_SUCCESS, cuTexRefGetAddress(&got, t));
	WANT(CUDA_SUCCESS, cuTexRefGetFormat(&fmt, &ch, t));
	WANT(CUDA_SUCCESS, cuTexRefGetFilterMode(&fm, t));
	EXPECT(got == d && fmt == CU_AD_FORMAT_UNSIGNED_INT8 && ch == 4 &&
		       fm == CU_TR_FILTER_MODE_LINEAR,
	       "got back %llx %d %d %d", (unsigned long long)got, (int)fmt,
	       ch, (int)fm);
	/* a module's reference is its module's to free */
	WANT(CUDA_SUCCESS, cuModuleGetTexRef(&mt, mod, "texA"));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuTexRefDestroy(mt));
	WANT(CUDA_SUCCESS, cuTexRefSetFlags(mt, 0));
	WANT(CUDA_SUCCESS, cuTexRefDestroy(t));
	/* destroyed: stale */
	WANT(CUDA_ERROR_INVALID_HANDLE, cuTexRefDestroy(t));
	WANT(CUDA_ERROR_INVALID_HANDLE,
	     cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuTexRefGetAddress(&got, t));
	WANT(CUDA_ERROR_INVALID_HANDLE, cuTexRefDestroy((CUtexref)&d));
	/* a new one works, and is not the old one's driver object */
	WANT(CUDA_SUCCESS, cuTexRefCreate(&t2));
	WANT(CUDA_SUCCESS, cuTexRefGetFormat(&fmt, &ch, t2));
	EXPECT(fmt == CU_AD_FORMAT_FLOAT && ch == 1,
	       "a new reference has format %d x%d", (int)fmt, ch);
	WANT(CUDA_SUCCESS, cuTexRefDestroy(t2));
	WANT(CUDA_SUCCESS, cuMemFree(d));
	alive();
	end();
}

/* ---- batched decompression ------------------------------------------- */

static void entry(CUmemDecompressParams *p, CUdeviceptr src, CUdeviceptr dst,
		  CUdeviceptr act, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->srcNumBytes = n;
	p->dstNumBytes = n;
	p->src = (const void *)(uintptr_t)src;
	p->dst = (void *)(uintptr_t)dst;
	p->dstActBytes = (cuuint32_t *)(uintptr_t)act;
	p->algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
}

static void test_decompress(void)
{
	enum { N = 1024 };
	static CUmemDecompressParams big[300];
	CUmemDecompressParams p[2];
	CUdeviceptr src = 0, dst = 0, act = 0;
	unsigned char h[N], r[N];
	uint32_t acts[2] = { 0, 0 };
	CUstream s = NULL;
	size_t idx = 77;

	begin("decompress");
	for (int i = 0; i < N; i++)
		h[i] = (unsigned char)(i * 7 + 1);
	WANT(CUDA_SUCCESS, cuStreamCreate(&s, 0));
	WANT(CUDA_SUCCESS, cuMemAlloc(&src, N));
	WANT(CUDA_SUCCESS, cuMemAlloc(&dst, 2 * N));
	WANT(CUDA_SUCCESS, cuMemAlloc(&act, 8));
	WANT(CUDA_SUCCESS, cuMemcpyHtoD(src, h, N));
	WANT(CUDA_SUCCESS, cuMemsetD8(dst, 0, 2 * N));
	entry(&p[0], src, dst, act, N);
	entry(&p[1], src, dst + N, act + 4, N / 2);
	WANT(CUDA_SUCCESS, cuMemBatchDecompressAsync(p, 2, 0, &idx, s));
	WANT(CUDA_SUCCESS, cuStreamSynchronize(s));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(r, dst, N));
	WANT(CUDA_SUCCESS, cuMemcpyDtoH(acts, act, 8));
	EXPECT(!memcmp(r, h, N) && acts[0] == N && acts[1] == N / 2,
	       "output %u %u, data %s", acts[0], acts[1],
	       memcmp(r, h, N) ? "differs" : "equal");
	EXPECT(idx == 77, "errorIndex written on success: %zu", idx);
	/* the per-thread stream twin, no errorIndex */
	WANT(CUDA_SUCCESS, cuMemBatchDecompressAsync_ptsz(p, 1, 0, NULL, 0));
	/* the driver's errorIndex of the bad entry */
	p[1].algo = (CUmemDecompressAlgorithm)0;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(p, 2, 0, &idx, s));
	EXPECT(idx == 1, "errorIndex %zu, want 1", idx);
	p[1].algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
	p[1].padding[3] = 1;
	idx = 77;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(p, 2, 0, &idx, s));
	EXPECT(idx == 1, "padding: errorIndex %zu, want 1", idx);
	/* a general error: SIZE_MAX */
	idx = 77;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(p, 1, 1, &idx, s));
	EXPECT(idx == SIZE_MAX, "flags: errorIndex %zu", idx);
	/* a device address of no allocation */
	entry(&p[0], src, 0x1000, act, N);
	idx = 77;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(p, 1, 0, &idx, s));
	EXPECT(idx == 0, "bad dst: errorIndex %zu", idx);
	/* no array: the driver's general error */
	idx = 77;
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(NULL, 0, 0, &idx, s));
	EXPECT(idx == SIZE_MAX, "no array: errorIndex %zu", idx);
	/* refused before sending */
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(NULL, 1, 0, &idx, s));
	for (int i = 0; i < 300; i++)
		entry(&big[i], src, dst, act, 16);
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(big, 300, 0, NULL, s));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuMemBatchDecompressAsync(big, (size_t)1 << 40, 0, NULL, s));
	/* 256 entries: one request */
	WANT(CUDA_SUCCESS, cuMemBatchDecompressAsync(big, 256, 0, NULL, s));
	WANT(CUDA_SUCCESS, cuStreamDestroy(s));
	cuMemFree(src);
	cuMemFree(dst);
	cuMemFree(act);
	alive();
	end();
}

/* ---- sparse array mappings ------------------------------------------- */

static void map_info(CUarrayMapInfo *m, CUarray a,
		     CUmemGenericAllocationHandle mem, CUmemOperationType op)
{
	memset(m, 0, sizeof(*m));
	m->resourceType = CU_RESOURCE_TYPE_ARRAY;
	m->resource.array = a;
	m->subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
	m->subresource.sparseLevel.extentWidth = 64;
	m->subresource.sparseLevel.extentHeight = 64;
	m->subresource.sparseLevel.extentDepth = 1;
	m->memOperationType = op;
	m->memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
	m->memHandle.memHandle = mem;
	m->deviceBitMask = 1;
}

static void test_map_array(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle mem = 0;
	CUarray sparse = NULL, dense = NULL;
	CUarrayMapInfo m[2];

	begin("map-array");
	memset(&d, 0, sizeof(d));
	d.Width = 64;
	d.Height = 64;
	d.Format = CU_AD_FORMAT_FLOAT;
	d.NumChannels = 1;
	WANT(CUDA_SUCCESS, cuArray3DCreate(&dense, &d));
	d.Flags = CUDA_ARRAY3D_SPARSE;
	WANT(CUDA_SUCCESS, cuArray3DCreate(&sparse, &d));
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	WANT(CUDA_SUCCESS, cuMemCreate(&mem, 65536, &prop, 0));
	map_info(&m[0], sparse, mem, CU_MEM_OPERATION_TYPE_MAP);
	map_info(&m[1], sparse, 0, CU_MEM_OPERATION_TYPE_UNMAP);
	WANT(CUDA_SUCCESS, cuMemMapArrayAsync(m, 1, 0));
	WANT(CUDA_SUCCESS, cuMemMapArrayAsync_ptsz(&m[1], 1, 0));
	WANT(CUDA_SUCCESS, cuMemMapArrayAsync(m, 2, 0));
	/* the driver's judgement: a dense array, a second device */
	map_info(&m[0], dense, mem, CU_MEM_OPERATION_TYPE_MAP);
	WANT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(m, 1, 0));
	map_info(&m[0], sparse, mem, CU_MEM_OPERATION_TYPE_MAP);
	m[0].deviceBitMask = 2;
	WANT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(m, 1, 0));
	/* handles not of ours (a destroyed array's record is freed in the
	 * guest, as natively: the released allocation below is the stale
	 * handle the worker refuses) */
	map_info(&m[0], (CUarray)&d, mem, CU_MEM_OPERATION_TYPE_MAP);
	WANT(CUDA_ERROR_INVALID_HANDLE, cuMemMapArrayAsync(m, 1, 0));
	map_info(&m[0], sparse, 0xdead0001ull, CU_MEM_OPERATION_TYPE_MAP);
	WANT(CUDA_ERROR_INVALID_HANDLE, cuMemMapArrayAsync(m, 1, 0));
	m[0].resourceType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
	m[0].resource.mipmap = (CUmipmappedArray)&d;
	WANT(CUDA_ERROR_INVALID_HANDLE, cuMemMapArrayAsync(m, 1, 0));
	WANT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(NULL, 1, 0));
	WANT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(NULL, 0, 0));
	WANT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(m, 100000, 0));
	/* the whole batch is refused when one entry is bad, before the
	 * driver sees any */
	map_info(&m[0], sparse, mem, CU_MEM_OPERATION_TYPE_MAP);
	map_info(&m[1], (CUarray)&d, 0, CU_MEM_OPERATION_TYPE_UNMAP);
	WANT(CUDA_ERROR_INVALID_HANDLE, cuMemMapArrayAsync(m, 2, 0));
	WANT(CUDA_SUCCESS, cuMemRelease(mem));
	map_info(&m[0], sparse, mem, CU_MEM_OPERATION_TYPE_MAP);
	WANT(CUDA_ERROR_INVALID_HANDLE, cuMemMapArrayAsync(m, 1, 0));
	cuArrayDestroy(sparse);
	cuArrayDestroy(dense);
	alive();
	end();
}

/* ---- async notifications --------------------------------------------- */

static pthread_t main_thread;
static int calls_a, calls_b, on_main, bad_type;
static unsigned long long over_bytes;
static void *seen_user;
static CUasyncCallbackHandle seen_handle;

static void on_a(CUasyncNotificationInfo *info, void *user,
		 CUasyncCallbackHandle h)
{
	if (pthread_equal(pthread_self(), main_thread))
		__atomic_add_fetch(&on_main, 1, __ATOMIC_SEQ_CST);
	if (info->type != CU_ASYNC_NOTIFICATION_TYPE_OVER_BUDGET)
		bad_type++;
	over_bytes = info->info.overBudget.bytesOverBudget;
	seen_user = user;
	seen_handle = h;
	__atomic_add_fetch(&calls_a, 1, __ATOMIC_SEQ_CST);
}

static void on_b(CUasyncNotificationInfo *info, void *user,
		 CUasyncCallbackHandle h)
{
	(void)info;
	(void)user;
	(void)h;
	__atomic_add_fetch(&calls_b, 1, __ATOMIC_SEQ_CST);
}

/* wait up to 5 s for *n to reach want */
static bool wait_calls(int *n, int want)
{
	for (int i = 0; i < 500; i++) {
		if (__atomic_load_n(n, __ATOMIC_SEQ_CST) >= want)
			return true;
		nap_ms(10);
	}
	return false;
}

#define BIG (600ull << 20)	/* over the fake's 512 MiB budget */

static void test_notify(CUdevice dev)
{
	CUasyncCallbackHandle ha = NULL, hb = NULL, hc = NULL;
	CUdeviceptr big = 0;
	int cookie_a, cookie_b;

	begin("notify");
	main_thread = pthread_self();
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceRegisterAsyncNotification(dev, NULL, NULL, &ha));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceRegisterAsyncNotification(dev, on_a, NULL, NULL));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuDeviceRegisterAsyncNotification(7, on_a, NULL, &ha));
	WANT(CUDA_SUCCESS,
	     cuDeviceRegisterAsyncNotification(dev, on_a, &cookie_a, &ha));
	WANT(CUDA_SUCCESS,
	     cuDeviceRegisterAsyncNotification(dev, on_b, &cookie_b, &hb));
	EXPECT(ha && hb && ha != hb, "handles %p %p", (void *)ha,
	       (void *)hb);
	/* b goes: it is not called */
	WANT(CUDA_SUCCESS, cuDeviceUnregisterAsyncNotification(dev, hb));
	WANT(CUDA_SUCCESS, cuMemAlloc(&big, BIG));
	EXPECT(wait_calls(&calls_a, 1), "no notification in 5 s");
	nap_ms(100);
	EXPECT(calls_a == 1 && calls_b == 0, "calls %d %d", calls_a,
	       calls_b);
	EXPECT(!on_main && !bad_type, "on the main thread %d, type %d",
	       on_main, bad_type);
	EXPECT(seen_user == &cookie_a && seen_handle == ha,
	       "userData %p handle %p", seen_user, (void *)seen_handle);
	EXPECT(over_bytes > 0 && over_bytes <= BIG - (512ull << 20),
	       "%llu bytes over budget", over_bytes);
	WANT(CUDA_SUCCESS, cuMemFree(big));
	big = 0;
	/* stale, foreign and wrong-device handles */
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceUnregisterAsyncNotification(dev, hb));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceUnregisterAsyncNotification(
		     dev, (CUasyncCallbackHandle)&cookie_a));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceUnregisterAsyncNotification(dev, NULL));
	WANT(CUDA_ERROR_INVALID_DEVICE,
	     cuDeviceUnregisterAsyncNotification(7, ha));
	/* a goes too: over the budget again, nothing is called */
	WANT(CUDA_SUCCESS, cuDeviceUnregisterAsyncNotification(dev, ha));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuDeviceUnregisterAsyncNotification(dev, ha));
	WANT(CUDA_SUCCESS, cuMemAlloc(&big, BIG));
	nap_ms(300);
	EXPECT(calls_a == 1 && calls_b == 0, "after unregistering: %d %d",
	       calls_a, calls_b);
	WANT(CUDA_SUCCESS, cuMemFree(big));
	/* registered again, notified again; left registered at exit (the
	 * worker's teardown unregisters it) */
	WANT(CUDA_SUCCESS,
	     cuDeviceRegisterAsyncNotification(dev, on_a, &cookie_b, &hc));
	WANT(CUDA_SUCCESS, cuMemAlloc(&big, BIG));
	EXPECT(wait_calls(&calls_a, 2), "no second notification");
	EXPECT(seen_user == &cookie_b && seen_handle == hc,
	       "second: userData %p handle %p", seen_user,
	       (void *)seen_handle);
	WANT(CUDA_SUCCESS, cuMemFree(big));
	alive();
	end();
}

int main(void)
{
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuModuleLoadData(&mod, image)) {
		printf("FAIL driverext: no device\n");
		return 1;
	}
	test_texref(mod);
	test_decompress();
	test_map_array();
	test_notify(dev);
	if (cuModuleUnload(mod))
		failed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
