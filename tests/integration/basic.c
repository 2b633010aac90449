// SPDX-License-Identifier: MIT
/*
 * basic: a plain CUDA Driver API program run against xen-gpubackd with the
 * fake driver of tests/fakecuda (host memory and a few test kernels
 * written in C, see fakecuda.h).  It goes through the guest library, the
 * local transport and a worker, exactly as a real program would.
 *
 * Prints "PASS step" or "FAIL step: why" for every step, and exits
 * non-zero if any failed.  Steps go on after a failure where they can.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

static uint8_t pat(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed;

	return (uint8_t)((x >> 13) ^ (x >> 24) ^ (uint32_t)(i >> 16));
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(i, seed);
}

/* index of the first byte that differs from the pattern, or n */
static size_t check_pat(const uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return i;
	return n;
}

static const char fake_image[] = "XGPU-FAKE-MODULE\n"
				 "# kernels: xgpu_fake_vadd xgpu_fake_fill "
				 "xgpu_fake_scale xgpu_fake_spin "
				 "xgpu_fake_printf\n";

static CUdevice dev;
static CUcontext ctx;
static CUmodule mod;
static CUfunction vadd;

static void test_init(void)
{
	int ver = 0, n = 0;

	begin("init");
	if (OK(cuInit(0)) && OK(cuDriverGetVersion(&ver)))
		EXPECT(ver >= 12000, "driver version %d", ver);
	if (OK(cuDeviceGetCount(&n)))
		EXPECT(n == 1, "%d devices, expected 1", n);
	OK(cuDeviceGet(&dev, 0));
	end();
}

static void test_device(void)
{
	char name[256] = "";
	size_t total = 0;
	int major = 0, minor = 0, sms = 0, warp = 0, maxt = 0;
	CUuuid uuid;

	begin("device");
	if (OK(cuDeviceGetName(name, sizeof(name), dev)))
		EXPECT(strstr(name, "xgpu fake device"), "device name \"%s\"",
		       name);
	if (OK(cuDeviceTotalMem(&total, dev)))
		EXPECT(total == (1ull << 30), "total memory %zu", total);
	OK(cuDeviceGetAttribute(&major,
				CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
				dev));
	OK(cuDeviceGetAttribute(&minor,
				CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
				dev));
	OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				dev));
	OK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
	OK(cuDeviceGetAttribute(&maxt,
				CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
	EXPECT(major == 9 && minor == 0 && sms == 132 && warp == 32 &&
	       maxt == 1024, "attributes cc %d.%d, %d SMs, warp %d, %d "
	       "threads", major, minor, sms, warp, maxt);
	if (OK(cuDeviceGetUuid(&uuid, dev)))
		EXPECT(memcmp(uuid.bytes, "XGPU-FAKE-DEVICE", 16) == 0,
		       "uuid");
	end();
}

static void test_context(void)
{
	CUcontext c = NULL;

	begin("context");
	if (OK(cuDevicePrimaryCtxRetain(&ctx, dev)) &&
	    OK(cuCtxSetCurrent(ctx)) && OK(cuCtxGetCurrent(&c)))
		EXPECT(c == ctx, "current context %p, expected %p", (void *)c,
		       (void *)ctx);
	OK(cuCtxSynchronize());
	end();
}

static void round_trip(size_t n, uint32_t seed)
{
	uint8_t *src = malloc(n), *dst = malloc(n);
	CUdeviceptr d = 0;
	size_t bad;

	if (!src || !dst) {
		failf("out of host memory for %zu bytes", n);
		goto out;
	}
	fill(src, n, seed);
	memset(dst, 0, n);
	if (!OK(cuMemAlloc(&d, n)))
		goto out;
	if (OK(cuMemcpyHtoD(d, src, n)) && OK(cuMemcpyDtoH(dst, d, n))) {
		bad = check_pat(dst, n, seed);
		EXPECT(bad == n, "%zu bytes: byte %zu is %#x, expected %#x",
		       n, bad, dst[bad], pat(bad, seed));
	}
	OK(cuMemFree(d));
out:
	free(src);
	free(dst);
}

static void test_copies(void)
{
	static const size_t sizes[] = { 1, 4096, (1u << 20) + 3,
					(64u << 20) + 5 };

	begin("copies");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		round_trip(sizes[i], (uint32_t)i * 77u + 1);
	end();
}

static void test_meminfo(void)
{
	size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
	const size_t n = 256u << 20;
	CUdeviceptr d = 0;

	begin("meminfo");
	if (!OK(cuMemGetInfo(&free0, &total)))
		goto out;
	EXPECT(total == (1ull << 30) && free0 <= total, "free %zu total %zu",
	       free0, total);
	if (!OK(cuMemAlloc(&d, n)))
		goto out;
	if (OK(cuMemGetInfo(&free1, &total)))
		EXPECT(free1 + n <= free0, "free %zu after allocating %zu "
		       "(before: %zu)", free1, n, free0);
	OK(cuMemFree(d));
	if (OK(cuMemGetInfo(&free2, &total)))
		EXPECT(free2 == free0, "free %zu after freeing, %zu before",
		       free2, free0);
out:
	end();
}

static void test_memset(void)
{
	const size_t n = 1u << 20;
	uint8_t *h = malloc(n);
	CUdeviceptr d = 0;
	size_t i;

	begin("memset");
	if (!h || !OK(cuMemAlloc(&d, n)))
		goto out;
	if (OK(cuMemsetD8(d, 0xab, n)) && OK(cuMemcpyDtoH(h, d, n))) {
		for (i = 0; i < n && h[i] == 0xab; i++)
			;
		EXPECT(i == n, "D8: byte %zu is %#x", i, h[i]);
	}
	if (OK(cuMemsetD16(d, 0x1234, n / 2)) && OK(cuMemcpyDtoH(h, d, n))) {
		uint16_t v;

		for (i = 0; i < n / 2; i++) {
			memcpy(&v, h + 2 * i, 2);
			if (v != 0x1234)
				break;
		}
		EXPECT(i == n / 2, "D16: element %zu is %#x", i, v);
	}
	if (OK(cuMemsetD32(d, 0xdeadbeefu, n / 4)) &&
	    OK(cuMemcpyDtoH(h, d, n))) {
		uint32_t v;

		for (i = 0; i < n / 4; i++) {
			memcpy(&v, h + 4 * i, 4);
			if (v != 0xdeadbeefu)
				break;
		}
		EXPECT(i == n / 4, "D32: element %zu is %#x", i, v);
	}
	/* a memset in the middle leaves its neighbours alone */
	if (OK(cuMemsetD8(d, 0, n)) && OK(cuMemsetD8(d + 3, 0x5a, 10)) &&
	    OK(cuMemcpyDtoH(h, d, 16)))
		EXPECT(h[2] == 0 && h[3] == 0x5a && h[12] == 0x5a &&
		       h[13] == 0, "partial D8: %#x %#x %#x %#x", h[2], h[3],
		       h[12], h[13]);
	/* out of range: an error, not a crash of the worker */
	EXPECT(cuMemsetD8(d + n - 4, 1, 8) == CUDA_ERROR_INVALID_VALUE,
	       "a memset past the allocation did not fail");
	OK(cuMemFree(d));
out:
	free(h);
	end();
}

static void test_dtod(void)
{
	const size_t n = (3u << 20) + 11;
	uint8_t *h = malloc(n);
	CUdeviceptr a = 0, b = 0;
	size_t bad;

	begin("dtod");
	if (!h || !OK(cuMemAlloc(&a, n)) || !OK(cuMemAlloc(&b, n)))
		goto out;
	fill(h, n, 99);
	if (OK(cuMemcpyHtoD(a, h, n)) && OK(cuMemsetD8(b, 0, n)) &&
	    OK(cuMemcpyDtoD(b, a, n))) {
		memset(h, 0, n);
		if (OK(cuMemcpyDtoH(h, b, n))) {
			bad = check_pat(h, n, 99);
			EXPECT(bad == n, "byte %zu differs", bad);
		}
	}
out:
	if (a)
		cuMemFree(a);
	if (b)
		cuMemFree(b);
	free(h);
	end();
}

static void test_module(void)
{
	static const size_t off[] = { 0, 8, 16, 24 }, size[] = { 8, 8, 8, 4 };
	CUfunction f2 = NULL;
	size_t o, s;

	begin("module");
	if (!OK(cuModuleLoadData(&mod, fake_image)) ||
	    !OK(cuModuleGetFunction(&vadd, mod, "xgpu_fake_vadd")))
		goto out;
	for (size_t i = 0; i < 4; i++) {
		if (OK(cuFuncGetParamInfo(vadd, i, &o, &s)))
			EXPECT(o == off[i] && s == size[i], "param %zu at %zu "
			       "size %zu", i, o, s);
	}
	EXPECT(cuFuncGetParamInfo(vadd, 4, &o, &s) == CUDA_ERROR_INVALID_VALUE,
	       "param 4 of a 4-parameter function");
	EXPECT(cuModuleGetFunction(&f2, mod, "no_such_kernel") ==
	       CUDA_ERROR_NOT_FOUND, "an unknown kernel was found");
	{
		/* enumerated functions are the ones found by name */
		CUfunction fns[16], byname;
		unsigned int n = 0, found = 0;
		const char *name;

		if (OK(cuModuleGetFunctionCount(&n, mod)) &&
		    (n >= 2 && n <= 16 ? 1 : (failf("%u functions", n), 0)) &&
		    OK(cuModuleEnumerateFunctions(fns, n, mod))) {
			for (unsigned int i = 0; i < n; i++) {
				if (!OK(cuFuncGetName(&name, fns[i])) ||
				    !OK(cuModuleGetFunction(&byname, mod,
							    name)))
					break;
				EXPECT(byname == fns[i], "%s: enumerated %p, "
				       "by name %p", name, (void *)fns[i],
				       (void *)byname);
				found += byname == vadd;
			}
			EXPECT(found == 1, "xgpu_fake_vadd enumerated %u "
			       "times", found);
		}
		/* a shorter buffer gets the first ones */
		fns[1] = NULL;
		if (n >= 2 && OK(cuModuleEnumerateFunctions(fns, 1, mod)))
			EXPECT(fns[1] == NULL, "wrote past 1 function");
	}
	{
		CUmodule bad = NULL;
		static const char not_an_image[] = "this is not a module";

		EXPECT(cuModuleLoadData(&bad, not_an_image) ==
		       CUDA_ERROR_INVALID_IMAGE, "a bad image loaded");
	}
out:
	end();
}

#define VN 1000

static int vadd_check(CUdeviceptr dc, const float *a, const float *b)
{
	float c[VN];

	if (!OK(cuMemcpyDtoH(c, dc, sizeof(c))))
		return 0;
	for (int i = 0; i < VN; i++) {
		if (c[i] != a[i] + b[i]) {
			failf("c[%d] = %g, expected %g", i, c[i], a[i] + b[i]);
			return 0;
		}
	}
	return 1;
}

static void test_launch(void)
{
	float a[VN], b[VN];
	CUdeviceptr da = 0, db = 0, dc = 0;
	int n = VN;

	begin("launch");
	if (!vadd) {
		failf("no function (module step failed)");
		goto out;
	}
	for (int i = 0; i < VN; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = 1000.0f - (float)i;
	}
	if (!OK(cuMemAlloc(&da, sizeof(a))) ||
	    !OK(cuMemAlloc(&db, sizeof(b))) ||
	    !OK(cuMemAlloc(&dc, sizeof(a))) ||
	    !OK(cuMemcpyHtoD(da, a, sizeof(a))) ||
	    !OK(cuMemcpyHtoD(db, b, sizeof(b))))
		goto out;
	{
		void *params[] = { &da, &db, &dc, &n };

		if (OK(cuMemsetD32(dc, 0, VN)) &&
		    OK(cuLaunchKernel(vadd, (VN + 255) / 256, 1, 1, 256, 1, 1,
				      0, NULL, params, NULL)) &&
		    OK(cuCtxSynchronize()))
			vadd_check(dc, a, b);
	}
	{
		/* the `extra` form: one buffer laid out as the kernel's
		 * parameters are */
		uint8_t buf[32];
		size_t bsize = 28;
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
				  CU_LAUNCH_PARAM_BUFFER_SIZE, &bsize,
				  CU_LAUNCH_PARAM_END };

		memset(buf, 0, sizeof(buf));
		memcpy(buf, &da, 8);
		memcpy(buf + 8, &db, 8);
		memcpy(buf + 16, &dc, 8);
		memcpy(buf + 24, &n, 4);
		if (OK(cuMemsetD32(dc, 0, VN)) &&
		    OK(cuLaunchKernel(vadd, 4, 1, 1, 256, 1, 1, 0, NULL, NULL,
				      extra)) &&
		    OK(cuCtxSynchronize()))
			vadd_check(dc, a, b);
	}
out:
	if (da)
		cuMemFree(da);
	if (db)
		cuMemFree(db);
	if (dc)
		cuMemFree(dc);
	end();
}

static int fill_check(CUdeviceptr d, uint32_t v, int n)
{
	uint32_t h[256];

	if (!OK(cuMemcpyDtoH(h, d, sizeof(uint32_t) * (size_t)n)))
		return 0;
	for (int i = 0; i < n; i++) {
		if (h[i] != v) {
			failf("p[%d] = %#x, expected %#x", i, h[i], v);
			return 0;
		}
	}
	return 1;
}

static void test_library(void)
{
	CUlibrary lib = NULL;
	CUkernel k = NULL;
	CUfunction f = NULL;
	CUdeviceptr d = 0;
	uint32_t v = 0xc0ffee11u;
	int n = 256;
	void *params[] = { &d, &v, &n };
	size_t o, s;
	CUlibraryOption keep = CU_LIBRARY_BINARY_IS_PRESERVED;

	begin("library");
	if (!OK(cuLibraryLoadData(&lib, fake_image, NULL, NULL, 0, NULL, NULL,
				  0)) ||
	    !OK(cuLibraryGetKernel(&k, lib, "xgpu_fake_fill")) ||
	    !OK(cuMemAlloc(&d, 256 * sizeof(uint32_t))))
		goto out;
	if (OK(cuKernelGetParamInfo(k, 2, &o, &s)))
		EXPECT(o == 12 && s == 4, "fill param 2 at %zu size %zu", o, s);
	/* a CUkernel launches as a CUfunction, as cudart does it */
	if (OK(cuMemsetD32(d, 0, 256)) &&
	    OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 256, 1, 1, 0, NULL,
			      params, NULL)) &&
	    OK(cuCtxSynchronize()))
		fill_check(d, v, n);
	v = 0x12345678u;
	if (OK(cuKernelGetFunction(&f, k)) && OK(cuMemsetD32(d, 0, 256)) &&
	    OK(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, NULL, params, NULL)) &&
	    OK(cuCtxSynchronize()))
		fill_check(d, v, n);
out:
	if (d)
		cuMemFree(d);
	if (lib)
		OK(cuLibraryUnload(lib));
	lib = NULL;
	/* cuBLASLt's form: BINARY_IS_PRESERVED with no value array */
	if (OK(cuLibraryLoadData(&lib, fake_image, NULL, NULL, 0, &keep, NULL,
				 1)) &&
	    OK(cuLibraryGetKernel(&k, lib, "xgpu_fake_fill")))
		OK(cuLibraryUnload(lib));
	end();
}

/* index of the first byte of p[0..n) that is not v, n if none */
static size_t check_byte(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n && p[i] == v; i++)
		;
	return i;
}

static void test_pools(void)
{
	const size_t n = 4096;
	uint8_t *h = malloc(n);
	CUdeviceptr a = 0, b = 0;
	CUmemoryPool def = NULL, def2 = NULL, cur = NULL, pool = NULL;
	CUmemPoolProps props;
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
	CUmemAccess_flags acc = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	CUstream s = NULL;
	cuuint64_t used = 0, thr = 1 << 20, thr2 = 0;
	size_t bad;

	begin("pools");
	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location = loc;
	if (!h || !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemAllocAsync(&a, n, s)) ||
	    !OK(cuMemsetD8Async(a, 0x5c, n, s)) ||
	    !OK(cuMemcpyDtoHAsync(h, a, n, s)) ||
	    !OK(cuMemFreeAsync(a, s)) || !OK(cuStreamSynchronize(s)))
		goto out;
	bad = check_byte(h, n, 0x5c);
	EXPECT(bad == n, "async allocation: byte %zu differs", bad);
	/* the default pool is one object, and the current one at first */
	if (!OK(cuDeviceGetDefaultMemPool(&def, 0)) ||
	    !OK(cuDeviceGetDefaultMemPool(&def2, 0)) ||
	    !OK(cuDeviceGetMemPool(&cur, 0)))
		goto out;
	EXPECT(def && def == def2 && cur == def, "default pool %p %p %p",
	       (void *)def, (void *)def2, (void *)cur);
	EXPECT(cuMemPoolDestroy(def) == CUDA_ERROR_INVALID_VALUE,
	       "the default pool was destroyed");
	if (!OK(cuMemPoolCreate(&pool, &props)) ||
	    !OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
				      &thr)) ||
	    !OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
				      &thr2)) ||
	    !OK(cuMemAllocFromPoolAsync(&b, n, pool, s)) ||
	    !OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
				      &used)) ||
	    !OK(cuMemPoolGetAccess(&acc, pool, &loc)))
		goto out;
	EXPECT(thr2 == thr && used >= n &&
	       acc == CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	       "threshold %llu used %llu access %d",
	       (unsigned long long)thr2, (unsigned long long)used, (int)acc);
	/* a pool the guest made can be the current one, then allocates */
	if (!OK(cuDeviceSetMemPool(0, pool)) ||
	    !OK(cuDeviceGetMemPool(&cur, 0)))
		goto out;
	EXPECT(cur == pool, "current pool %p, set %p", (void *)cur,
	       (void *)pool);
	OK(cuDeviceSetMemPool(0, def));
	/* a freed pointer is not freed twice; a forged one is refused */
	OK(cuMemFreeAsync(b, s));
	b = 0;
	EXPECT(cuStreamSynchronize(s) == CUDA_SUCCESS, "sync after free");
	EXPECT(cuMemFreeAsync(0x1000, s) == CUDA_SUCCESS &&
	       cuStreamSynchronize(s) == CUDA_ERROR_INVALID_VALUE,
	       "a forged pointer was freed");
	EXPECT(cuMemAllocFromPoolAsync(&b, n, (CUmemoryPool)h, s) ==
	       CUDA_ERROR_INVALID_VALUE, "a forged pool was taken");
	b = 0;
	/* shareable only by POSIX fd, within the guest (shareable.c) */
	props.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
	EXPECT(cuMemPoolCreate(&def2, &props) == CUDA_ERROR_NOT_SUPPORTED,
	       "a pool of fabric handles was created");
out:
	if (b)
		cuMemFree(b);
	if (pool)
		OK(cuMemPoolDestroy(pool));
	if (s)
		cuStreamDestroy(s);
	free(h);
	end();
}

/*
 * Capture and graphs against the fake driver: a capture begins, its
 * stream says so, it ends in a graph; the capture mode travels, and
 * objects that are not graphs of this process are refused by the guest.
 * (Graphs built node by node: the graphnodes client; captures next to
 * the GPU scheduler's marks: capmark.)
 */
static void test_graphs(void)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	CUstream s = NULL;
	uint64_t junk[8] = { 0 };

	begin("graphs");
	if (!OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuStreamIsCapturing(s, &st)))
		goto out;
	EXPECT(st == CU_STREAM_CAPTURE_STATUS_NONE, "capturing %d", (int)st);
	if (!OK(cuThreadExchangeStreamCaptureMode(&m)))
		goto out;
	EXPECT(m == CU_STREAM_CAPTURE_MODE_GLOBAL, "old mode %d", (int)m);
	OK(cuThreadExchangeStreamCaptureMode(&m));
	if (OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
		/* a capture was begun: the query now goes to the worker */
		st = CU_STREAM_CAPTURE_STATUS_NONE;
		if (OK(cuStreamIsCapturing(s, &st)))
			EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE,
			       "capturing %d", (int)st);
		if (OK(cuStreamEndCapture(s, &g))) {
			EXPECT(g != NULL, "no graph from a capture");
			if (g)
				OK(cuGraphDestroy(g));
		}
	}
	st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (OK(cuStreamIsCapturing(s, &st)))
		EXPECT(st == CU_STREAM_CAPTURE_STATUS_NONE, "capturing %d",
		       (int)st);
	if (OK(cuGraphCreate(&g, 0)))
		OK(cuGraphDestroy(g));
	EXPECT(cuGraphLaunch((CUgraphExec)junk, s) == CUDA_ERROR_INVALID_VALUE,
	       "a forged executable graph launched");
	EXPECT(cuGraphInstantiateWithFlags(&x, (CUgraph)junk, 0) ==
	       CUDA_ERROR_INVALID_VALUE, "a forged graph instantiated");
	EXPECT(cuGraphDestroy((CUgraph)junk) == CUDA_ERROR_INVALID_VALUE,
	       "a forged graph destroyed");
	EXPECT(cuStreamSynchronize(s) == CUDA_SUCCESS, "stream after refusals");
out:
	if (s)
		cuStreamDestroy(s);
	end();
}

static int hf_order[8], hf_n;
static CUresult hf_status = CUDA_ERROR_UNKNOWN;

static void CUDA_CB hf_note(void *user)
{
	if (hf_n < 8)
		hf_order[hf_n++] = (int)(intptr_t)user;
}

static void CUDA_CB hf_callback(CUstream s, CUresult status, void *user)
{
	(void)s;
	hf_status = status;
	hf_note(user);
}

/*
 * Host functions run in this process, in stream order, between the
 * stream's other work: the second one sees the memset before it.
 */
static uint8_t hf_seen;
static CUdeviceptr hf_dptr;

static void CUDA_CB hf_peek(void *user)
{
	(void)user;
	hf_note((void *)(intptr_t)3);
	hf_seen = 1;
}

static void test_hostfn(void)
{
	CUstream s = NULL;
	uint8_t b = 0;

	begin("hostfn");
	hf_n = 0;
	if (!OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemAlloc(&hf_dptr, 256)) ||
	    !OK(cuLaunchHostFunc(s, hf_note, (void *)1)) ||
	    !OK(cuStreamAddCallback(s, hf_callback, (void *)2, 0)) ||
	    !OK(cuMemsetD8Async(hf_dptr, 0x7e, 256, s)) ||
	    !OK(cuLaunchHostFunc(s, hf_peek, NULL)) ||
	    !OK(cuStreamSynchronize(s)))
		goto out;
	EXPECT(hf_n == 3 && hf_order[0] == 1 && hf_order[1] == 2 &&
	       hf_order[2] == 3 && hf_status == CUDA_SUCCESS && hf_seen,
	       "%d ran: %d %d %d, status %d", hf_n, hf_order[0],
	       hf_order[1], hf_order[2], (int)hf_status);
	/* many more than the slots, on the NULL stream too */
	hf_n = 0;
	for (int i = 0; i < 200; i++)
		if (!OK(cuLaunchHostFunc(i % 2 ? s : NULL, hf_peek, NULL)))
			goto out;
	if (OK(cuCtxSynchronize()) && OK(cuMemcpyDtoH(&b, hf_dptr, 1)))
		EXPECT(b == 0x7e, "memset byte %#x", b);
	EXPECT(cuStreamAddCallback(s, hf_callback, NULL, 1) ==
	       CUDA_ERROR_INVALID_VALUE, "callback flags accepted");
	EXPECT(cuLaunchHostFunc(s, NULL, NULL) == CUDA_ERROR_INVALID_VALUE,
	       "a NULL host function accepted");
out:
	if (hf_dptr)
		cuMemFree(hf_dptr);
	if (s)
		cuStreamDestroy(s);
	end();
}

/* managed memory: one pointer for the program and the device */
static void test_managed(void)
{
	CUdeviceptr m = 0, d = 0;
	unsigned int managed = 0, type = 0;
	uint8_t *p;
	size_t bad;
	CUresult rc;

	begin("managed");
	/* zero copy on the local transport, coherent on Xen (README) */
	rc = cuMemAllocManaged(&m, 8192, CU_MEM_ATTACH_GLOBAL);
	if (!OK(rc) || !OK(cuMemAlloc(&d, 8192)))
		goto out;
	p = (uint8_t *)(uintptr_t)m;
	memset(p, 0x11, 8192);			/* the CPU writes */
	if (!OK(cuMemcpyDtoD(d, m, 8192)) ||	/* the device reads */
	    !OK(cuMemsetD8(m + 4096, 0x22, 4096)) ||	/* and writes */
	    !OK(cuCtxSynchronize()))
		goto out;
	bad = check_byte(p, 4096, 0x11);
	EXPECT(bad == 4096, "byte %zu lost the CPU's write", bad);
	bad = check_byte(p + 4096, 4096, 0x22);
	EXPECT(bad == 4096, "byte %zu lost the device's write", 4096 + bad);
	if (OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
				     m)) &&
	    OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     m)))
		EXPECT(managed == 1 && type == CU_MEMORYTYPE_DEVICE,
		       "is managed %u, type %u", managed, type);
	OK(cuMemPrefetchAsync(m, 8192, (CUmemLocation){
				      CU_MEM_LOCATION_TYPE_DEVICE, 0 }, 0,
			      NULL));
	OK(cuMemAdvise(m, 8192, CU_MEM_ADVISE_SET_READ_MOSTLY,
		       (CUmemLocation){ CU_MEM_LOCATION_TYPE_DEVICE, 0 }));
	EXPECT(cuMemAdvise(d, 8192, CU_MEM_ADVISE_SET_READ_MOSTLY,
			   (CUmemLocation){ CU_MEM_LOCATION_TYPE_DEVICE, 0 }) ==
	       CUDA_ERROR_INVALID_VALUE, "advice on unmanaged memory taken");
	EXPECT(cuMemAllocManaged(&d, 16, 0) == CUDA_ERROR_INVALID_VALUE,
	       "no attach flag accepted");
out:
	if (m)
		OK(cuMemFree(m));
	if (d)
		cuMemFree(d);
	end();
}

/* the virtual memory API: reserve, create, map, access, copy, unmap */
static void test_vmm(void)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h = 0, h2 = 0;
	CUdeviceptr va = 0;
	unsigned long long fl = 0;
	size_t g = 0, size = 0;
	uint8_t *buf = NULL;
	size_t bad;

	begin("vmm");
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	if (!OK(cuMemGetAllocationGranularity(&g, &prop,
				CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
		goto out;
	size = 4 * g;
	buf = malloc(size);
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (!buf || !OK(cuMemAddressReserve(&va, 2 * size, 0, 0, 0)) ||
	    !OK(cuMemCreate(&h, size, &prop, 0)) ||
	    !OK(cuMemMap(va, size, 0, h, 0)) ||
	    !OK(cuMemSetAccess(va, size, &acc, 1)) ||
	    !OK(cuMemGetAccess(&fl, &prop.location, va)))
		goto out;
	EXPECT(fl == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "access %llu", fl);
	memset(buf, 0x3c, size);
	if (OK(cuMemcpyHtoD(va, buf, size)) && OK(cuMemsetD8(va + g, 0x5a, g))) {
		memset(buf, 0, size);
		if (OK(cuMemcpyDtoH(buf, va, size))) {
			bad = check_byte(buf, g, 0x3c);
			EXPECT(bad == g, "byte %zu", bad);
			bad = check_byte(buf + g, g, 0x5a);
			EXPECT(bad == g, "byte %zu", g + bad);
		}
	}
	/* a retained handle is the same allocation */
	if (OK(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)va)))
		EXPECT(h2 == h, "retained %llu, created %llu",
		       (unsigned long long)h2, (unsigned long long)h);
	OK(cuMemRelease(h2));
	/* outside the guest's reservations: refused before the driver */
	EXPECT(cuMemMap(0x10000, size, 0, h, 0) == CUDA_ERROR_INVALID_VALUE,
	       "a map outside the reservations");
	EXPECT(cuMemAddressFree(va + g, g) == CUDA_ERROR_INVALID_VALUE,
	       "part of a reservation freed");
	EXPECT(cuMemRelease(0x12345) == CUDA_ERROR_INVALID_HANDLE,
	       "a forged handle released");
	OK(cuMemUnmap(va, size));
out:
	if (h)
		OK(cuMemRelease(h));
	if (va)
		OK(cuMemAddressFree(va, 2 * size));
	free(buf);
	end();
}

/* stream memory operations and attributes */
static void test_memops(void)
{
	CUstreamBatchMemOpParams ops[2];
	CUstreamAttrValue v;
	CUdeviceptr d = 0;
	CUstream s = NULL;
	uint64_t got[2] = { 0, 0 };

	begin("memops");
	if (!OK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -1)) ||
	    !OK(cuMemAlloc(&d, 64)) || !OK(cuMemsetD8(d, 0, 64)) ||
	    !OK(cuStreamWriteValue32(s, d, 0x1234, 0)) ||
	    !OK(cuStreamWriteValue64(s, d + 8, 0x1122334455667788ull, 0)) ||
	    !OK(cuStreamWaitValue32(s, d, 0x1234, CU_STREAM_WAIT_VALUE_EQ)))
		goto out;
	memset(ops, 0, sizeof(ops));
	ops[0].operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
	ops[0].waitValue.address = d + 8;
	ops[0].waitValue.value64 = 0x1122334455667788ull;
	ops[0].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
	ops[1].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	ops[1].writeValue.address = d + 4;
	ops[1].writeValue.value = 7;
	if (!OK(cuStreamBatchMemOp(s, 2, ops, 0)) ||
	    !OK(cuStreamSynchronize(s)) || !OK(cuMemcpyDtoH(got, d, 16)))
		goto out;
	EXPECT(got[0] == (0x1234ull | 7ull << 32) &&
	       got[1] == 0x1122334455667788ull, "read %#llx %#llx",
	       (unsigned long long)got[0], (unsigned long long)got[1]);
	memset(&v, 0, sizeof(v));
	if (OK(cuStreamGetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v)))
		EXPECT(v.priority == -1, "priority %d", v.priority);
	v.priority = 0;
	OK(cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
	EXPECT(cuStreamBatchMemOp(s, 0, ops, 0) == CUDA_ERROR_INVALID_VALUE,
	       "an empty batch accepted");
out:
	if (d)
		cuMemFree(d);
	if (s)
		cuStreamDestroy(s);
	end();
}

/* surface objects: arrays of this guest's only, values of its own */
static void test_surfaces(void)
{
	CUDA_RESOURCE_DESC res;
	CUsurfObject so = 0;
	uint64_t junk[8] = { 0 };

	begin("surfaces");
	memset(&res, 0, sizeof(res));
	res.resType = CU_RESOURCE_TYPE_LINEAR;
	EXPECT(cuSurfObjectCreate(&so, &res) == CUDA_ERROR_INVALID_VALUE,
	       "a surface on linear memory");
	res.resType = CU_RESOURCE_TYPE_ARRAY;
	res.res.array.hArray = (CUarray)junk;
	EXPECT(cuSurfObjectCreate(&so, &res) == CUDA_ERROR_INVALID_HANDLE,
	       "a surface on a forged array");
	EXPECT(cuSurfObjectDestroy(0x1234) == CUDA_ERROR_INVALID_VALUE,
	       "a surface object of nobody's destroyed");
	end();
}

/* JIT linking: inputs uploaded, the linked image fetched and loaded */
static void test_link(void)
{
	CUlinkState st = NULL;
	CUmodule mod = NULL;
	CUfunction f = NULL;
	CUdeviceptr d = 0;
	uint32_t v = 0x5a5a0001u;
	int n = 64;
	void *params[] = { &d, &v, &n };
	void *cubin = NULL;
	size_t size = 0;
	char log[64] = "x";
	CUjit_option jo[] = { CU_JIT_ERROR_LOG_BUFFER,
			      CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *jv[] = { log, (void *)(uintptr_t)sizeof(log) };

	begin("link");
	if (!OK(cuLinkCreate(2, jo, jv, &st)) ||
	    !OK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)fake_image,
			      strlen(fake_image) + 1, "fake.ptx", 0, NULL,
			      NULL)) ||
	    !OK(cuLinkComplete(st, &cubin, &size)))
		goto out;
	EXPECT(size == strlen(fake_image) + 1 && log[0] == 0,
	       "linked %zu bytes, log '%s'", size, log);
	if (OK(cuModuleLoadData(&mod, cubin)) &&
	    OK(cuModuleGetFunction(&f, mod, "xgpu_fake_fill")) &&
	    OK(cuMemAlloc(&d, 64 * sizeof(uint32_t))) &&
	    OK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL)) &&
	    OK(cuCtxSynchronize()))
		fill_check(d, v, n);
	EXPECT(cuLinkComplete((CUlinkState)log, &cubin, &size) ==
	       CUDA_ERROR_INVALID_HANDLE, "a forged link state completed");
out:
	if (d)
		cuMemFree(d);
	if (mod)
		cuModuleUnload(mod);
	if (st)
		OK(cuLinkDestroy(st));
	end();
}

static void test_scale(void)
{
	static const size_t off[] = { 0, 8, 16, 20 }, size[] = { 8, 8, 1, 4 };
	double h[100], r[100];
	CUfunction f = NULL;
	CUdeviceptr d = 0;
	double s = 2.5;
	char m = 'm';
	int n = 100;
	void *params[] = { &d, &s, &m, &n };
	size_t o, z;

	begin("scale");
	if (!mod || !OK(cuModuleGetFunction(&f, mod, "xgpu_fake_scale")))
		goto out;
	for (size_t i = 0; i < 4; i++)
		if (OK(cuFuncGetParamInfo(f, i, &o, &z)))
			EXPECT(o == off[i] && z == size[i], "param %zu at %zu "
			       "size %zu", i, o, z);
	for (int i = 0; i < n; i++)
		h[i] = i - 50.25;
	if (!OK(cuMemAlloc(&d, sizeof(h))) ||
	    !OK(cuMemcpyHtoD(d, h, sizeof(h))))
		goto out;
	/* multiply, then add: the char and the int after it must arrive */
	if (OK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, params, NULL))) {
		s = 1.0;
		m = 'a';
		if (OK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, params,
				      NULL)) &&
		    OK(cuCtxSynchronize()) &&
		    OK(cuMemcpyDtoH(r, d, sizeof(r)))) {
			for (int i = 0; i < n; i++) {
				if (r[i] != h[i] * 2.5 + 1.0) {
					failf("p[%d] = %g, expected %g", i,
					      r[i], h[i] * 2.5 + 1.0);
					break;
				}
			}
		}
	}
out:
	if (d)
		cuMemFree(d);
	end();
}

static void test_global(void)
{
	CUdeviceptr g = 0;
	size_t size = 0;
	uint8_t in[256], out[256];

	begin("global");
	if (!mod || !OK(cuModuleGetGlobal(&g, &size, mod, "xgpu_fake_global")))
		goto out;
	EXPECT(size == 256, "global of %zu bytes", size);
	fill(in, sizeof(in), 5);
	if (OK(cuMemcpyHtoD(g, in, sizeof(in))) &&
	    OK(cuMemcpyDtoH(out, g, sizeof(out))))
		EXPECT(memcmp(in, out, sizeof(in)) == 0, "global contents");
out:
	end();
}

static void test_streams_events(void)
{
	CUstream s = NULL;
	CUevent e0 = NULL, e1 = NULL, e2 = NULL;
	CUfunction spin = NULL;
	float ms = -1.0f;
	int wait_ms = 20;
	void *params[] = { &wait_ms };

	begin("streams+events");
	if (!mod || !OK(cuModuleGetFunction(&spin, mod, "xgpu_fake_spin")) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuEventCreate(&e0, CU_EVENT_DEFAULT)) ||
	    !OK(cuEventCreate(&e1, CU_EVENT_DEFAULT)) ||
	    !OK(cuEventCreate(&e2, CU_EVENT_DEFAULT)))
		goto out;
	if (OK(cuEventRecord(e0, s)) &&
	    OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, params, NULL)) &&
	    OK(cuEventRecord(e1, s)) && OK(cuStreamWaitEvent(NULL, e1, 0)) &&
	    OK(cuStreamSynchronize(s)) && OK(cuEventSynchronize(e1)) &&
	    OK(cuStreamQuery(s)) && OK(cuEventQuery(e1)) &&
	    OK(cuEventElapsedTime(&ms, e0, e1)))
		EXPECT(ms >= 0.0f && ms < 60000.0f, "elapsed %g ms", ms);
	/* the fake sleeps for real: 20 ms must show */
	EXPECT(ms >= 15.0f, "elapsed %g ms around a 20 ms kernel", ms);
	EXPECT(cuEventElapsedTime(&ms, e0, e2) == CUDA_ERROR_INVALID_HANDLE,
	       "elapsed time to an unrecorded event");
out:
	if (e0)
		OK(cuEventDestroy(e0));
	if (e1)
		OK(cuEventDestroy(e1));
	if (e2)
		OK(cuEventDestroy(e2));
	if (s)
		OK(cuStreamDestroy(s));
	OK(cuCtxSynchronize());
	end();
}

static void test_pinned(void)
{
	const size_t n = (2u << 20) + 7;
	uint8_t *h = NULL, *h2 = NULL;
	CUdeviceptr d = 0;
	CUstream s = NULL;
	size_t bad;

	begin("pinned");
	if (!OK(cuMemAllocHost((void **)&h, n)) ||
	    !OK(cuMemAllocHost((void **)&h2, n)) || !OK(cuMemAlloc(&d, n)) ||
	    !OK(cuStreamCreate(&s, 0)))
		goto out;
	fill(h, n, 1234);
	memset(h2, 0, n);
	if (OK(cuMemcpyHtoD(d, h, n)) && OK(cuMemcpyDtoH(h2, d, n))) {
		bad = check_pat(h2, n, 1234);
		EXPECT(bad == n, "sync: byte %zu differs", bad);
	}
	fill(h, n, 4321);
	memset(h2, 0, n);
	if (OK(cuMemcpyHtoDAsync(d, h, n, s)) &&
	    OK(cuMemcpyDtoHAsync(h2, d, n, s)) && OK(cuStreamSynchronize(s))) {
		bad = check_pat(h2, n, 4321);
		EXPECT(bad == n, "async: byte %zu differs", bad);
	}
out:
	if (s)
		cuStreamDestroy(s);
	if (d)
		cuMemFree(d);
	if (h)
		OK(cuMemFreeHost(h));
	if (h2)
		OK(cuMemFreeHost(h2));
	end();
}

static void test_deferred_error(void)
{
	CUdeviceptr a = 0, b = 0, c = 0;
	int n = VN;
	void *params[] = { &a, &b, &c, &n };
	CUresult rc;

	begin("deferred-error");
	if (!vadd || !OK(cuMemAlloc(&a, VN * sizeof(float))) ||
	    !OK(cuMemAlloc(&b, VN * sizeof(float))))
		goto out;
	/* c's last element lies 4 bytes past a's allocation */
	c = a + 4;
	rc = cuLaunchKernel(vadd, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
	EXPECT(rc == CUDA_SUCCESS, "a posted launch returned %s at once",
	       ename(rc));
	rc = cuCtxSynchronize();
	EXPECT(rc == CUDA_ERROR_ILLEGAL_ADDRESS, "cuCtxSynchronize returned "
	       "%s, expected CUDA_ERROR_ILLEGAL_ADDRESS", ename(rc));
	/* reported once (the fake device does not make it sticky) */
	rc = cuCtxSynchronize();
	EXPECT(rc == CUDA_SUCCESS, "the error came back twice (%s)",
	       ename(rc));
out:
	if (a)
		cuMemFree(a);
	if (b)
		cuMemFree(b);
	end();
}

/* a table the library does not know but the host driver has (the fake
 * driver's, 16 bytes of 0x5a, 5 slots): that size, every slot refused */
static void test_host_export_table(void)
{
	typedef CUresult (*slot_fn)(void);
	const void *const *tbl = NULL;
	CUuuid id;

	begin("host-export-table");
	memset(id.bytes, 0x5a, sizeof(id.bytes));
	if (OK(cuGetExportTable((const void **)&tbl, &id))) {
		EXPECT((uintptr_t)tbl[0] == 5 * sizeof(void *),
		       "size slot %zu", (size_t)(uintptr_t)tbl[0]);
		for (int i = 1; i < 5; i++)
			EXPECT(((slot_fn)tbl[i])() == CUDA_ERROR_NOT_SUPPORTED,
			       "slot %d not refused", i);
	}
	memset(id.bytes, 0x5b, sizeof(id.bytes));
	EXPECT(cuGetExportTable((const void **)&tbl, &id) ==
	       CUDA_ERROR_NOT_FOUND, "a table nobody has was found");
	end();
}

static void test_error_names(void)
{
	const char *s = NULL;

	begin("error-names");
	if (OK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s)))
		EXPECT(s && strcmp(s, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0,
		       "name \"%s\"", s ? s : "(null)");
	if (OK(cuGetErrorName(CUDA_SUCCESS, &s)))
		EXPECT(s && strcmp(s, "CUDA_SUCCESS") == 0, "name \"%s\"",
		       s ? s : "(null)");
	EXPECT(cuGetErrorName((CUresult)987654, &s) ==
	       CUDA_ERROR_INVALID_VALUE, "a name for error 987654");
	end();
}

static void test_cleanup(void)
{
	size_t free_b = 0, total = 0;

	begin("cleanup");
	if (mod)
		OK(cuModuleUnload(mod));
	if (OK(cuMemGetInfo(&free_b, &total)))
		EXPECT(free_b == total, "%zu bytes still allocated",
		       total - free_b);
	OK(cuCtxSynchronize());
	OK(cuDevicePrimaryCtxRelease(dev));
	end();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_init();
	if (failed) {
		printf("basic: cuInit failed; nothing else to try\n");
		return 1;
	}
	test_device();
	test_context();
	test_copies();
	test_meminfo();
	test_memset();
	test_dtod();
	test_module();
	test_launch();
	test_library();
	test_pools();
	test_graphs();
	test_hostfn();
	test_managed();
	test_vmm();
	test_memops();
	test_surfaces();
	test_link();
	test_scale();
	test_global();
	test_streams_events();
	test_pinned();
	test_deferred_error();
	test_host_export_table();
	test_error_names();
	test_cleanup();
	printf("basic: %d step(s) failed\n", failed);
	return failed ? 1 : 0;
}
