// SPDX-License-Identifier: MIT
/*
 * arrays: copies with array sides (1D byte offsets, 2D, 3D slices, async
 * on a stream, pinned and pageable host memory), peer copies between two
 * contexts of the device, batch copies, mipmapped arrays and their
 * levels, and legacy texture and surface references of a module, against
 * the fake driver
 * (whose arrays are host memory, tests/fakecuda/fakecuda_array.c).  Also
 * the bad handles: a destroyed array, a mipmap level destroyed by itself
 * or used after its mipmap, a reference of an unloaded module.
 *
 * Prints "PASS step" or "FAIL step: why" for every step, and exits
 * non-zero if any failed.
 */
#define CUDA_ENABLE_DEPRECATED 1	/* texture references are served */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

#define EXPECT_RC(call, want)                                                \
	do {                                                                 \
		CUresult rc_ = (call);                                       \
		if (rc_ != (want))                                           \
			failf("%s gave %s, not %s", #call, ename(rc_),       \
			      ename(want));                                  \
	} while (0)

static const char fake_image[] = "XGPU-FAKE-MODULE\n"
				 "# kernels: xgpu_fake_vadd xgpu_fake_fill "
				 "xgpu_fake_scale xgpu_fake_spin "
				 "xgpu_fake_printf\n";

static CUcontext ctx;

static uint32_t val(size_t i, uint32_t seed)
{
	return (uint32_t)(i * 2654435761u) ^ seed;
}

static void fill(uint32_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = val(i, seed);
}

/* the first index where p differs from the pattern, or n */
static size_t diff(const uint32_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != val(i, seed))
			return i;
	return n;
}

static CUresult array(CUarray *a, size_t w, size_t h, size_t d)
{
	CUDA_ARRAY3D_DESCRIPTOR desc = {
		.Width = w, .Height = h, .Depth = d,
		.Format = CU_AD_FORMAT_UNSIGNED_INT32, .NumChannels = 1,
	};

	return cuArray3DCreate(a, &desc);
}

/* 1D arrays: every cuMemcpy*A* form, at byte offsets */
static void test_copies_1d(void)
{
	enum { N = 1024 };
	uint32_t *src = malloc(N * 4), *dst = malloc(N * 4), *pin = NULL;
	CUarray a = NULL, b = NULL;
	CUdeviceptr d = 0;
	CUstream s = NULL;

	begin("arrays-1d");
	if (!src || !dst || !OK(array(&a, N, 0, 0)) ||
	    !OK(array(&b, N, 0, 0)) || !OK(cuMemAlloc(&d, N * 4)) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemHostAlloc((void **)&pin, N * 4, 0)))
		goto out;
	fill(src, N, 1);
	memset(dst, 0, N * 4);
	/* pageable host to array and back, whole and at an offset */
	if (OK(cuMemcpyHtoA(a, 0, src, N * 4)) &&
	    OK(cuMemcpyAtoH(dst, a, 0, N * 4)))
		EXPECT(diff(dst, N, 1) == N, "HtoA/AtoH differ at %zu",
		       diff(dst, N, 1));
	memset(dst, 0, N * 4);
	if (OK(cuMemcpyAtoH(dst, a, 400, 64)))
		EXPECT(!memcmp(dst, src + 100, 64), "AtoH at byte 400");
	/* array to array at offsets, array to device and back */
	if (OK(cuMemsetD32(d, 0, N)) && OK(cuMemcpyAtoA(b, 0, a, 0, N * 4)) &&
	    OK(cuMemcpyAtoA(b, 8, a, 16, 32)) &&
	    OK(cuMemcpyAtoD(d, b, 0, N * 4)) &&
	    OK(cuMemcpyDtoH(dst, d, N * 4))) {
		EXPECT(dst[2] == src[4] && dst[9] == src[11] &&
		       dst[10] == src[10] && dst[0] == src[0],
		       "AtoA at offsets / AtoD");
	}
	if (OK(cuMemcpyDtoA(a, 4, d, 8)) && OK(cuMemcpyAtoH(dst, a, 0, 16)))
		EXPECT(dst[0] == src[0] && dst[1] == src[0] &&
		       dst[2] == src[1] && dst[3] == src[3], "DtoA at byte 4");
	/* async on a stream, pinned and pageable */
	fill(pin, N, 2);
	if (OK(cuMemcpyHtoAAsync(b, 0, pin, N * 4, s)) &&
	    OK(cuMemcpyAtoHAsync(dst, b, 0, N * 4, s)) &&
	    OK(cuStreamSynchronize(s)))
		EXPECT(diff(dst, N, 2) == N, "async pinned in, pageable out");
	fill(src, N, 3);
	memset(pin, 0, N * 4);
	if (OK(cuMemcpyHtoAAsync(b, 0, src, N * 4, s)) &&
	    OK(cuMemcpyAtoHAsync(pin, b, 0, N * 4, s)) &&
	    OK(cuStreamSynchronize(s)))
		EXPECT(diff(pin, N, 3) == N, "async pageable in, pinned out");
	/* out of the array's bounds: the driver's error, no crash */
	EXPECT_RC(cuMemcpyHtoA(a, N * 4 - 4, src, 8), CUDA_ERROR_INVALID_VALUE);
out:
	if (pin)
		cuMemFreeHost(pin);
	if (s)
		cuStreamDestroy(s);
	if (d)
		cuMemFree(d);
	if (a)
		cuArrayDestroy(a);
	if (b)
		cuArrayDestroy(b);
	free(src);
	free(dst);
	end();
}

/* 3D copies with arrays on either side, at offsets, sync and async */
static void test_copies_3d(void)
{
	enum { W = 16, H = 8, D = 4, N = W * H * D };
	uint32_t *src = malloc(N * 4), *dst = calloc(N, 4), *pin = NULL;
	CUarray a = NULL, b = NULL;
	CUdeviceptr d = 0;
	size_t pitch = 0;
	CUstream s = NULL;
	CUDA_MEMCPY3D p;

	begin("arrays-3d");
	if (!src || !dst || !OK(array(&a, W, H, D)) ||
	    !OK(array(&b, W, H, D)) ||
	    !OK(cuMemAllocPitch(&d, &pitch, W * 4, H * D, 4)) ||
	    !OK(cuStreamCreate(&s, 0)) ||
	    !OK(cuMemHostAlloc((void **)&pin, N * 4, 0)))
		goto out;
	fill(src, N, 7);
	/* pageable host to array */
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src;
	p.srcPitch = W * 4;
	p.srcHeight = H;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = a;
	p.WidthInBytes = W * 4;
	p.Height = H;
	p.Depth = D;
	if (!OK(cuMemcpy3D(&p)))
		goto out;
	/* array to pitched device memory */
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = a;
	p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p.dstDevice = d;
	p.dstPitch = pitch;
	p.dstHeight = H;
	p.WidthInBytes = W * 4;
	p.Height = H;
	p.Depth = D;
	if (!OK(cuMemcpy3D(&p)))
		goto out;
	/* device to array b, async */
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = d;
	p.srcPitch = pitch;
	p.srcHeight = H;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = b;
	p.WidthInBytes = W * 4;
	p.Height = H;
	p.Depth = D;
	if (!OK(cuMemcpy3DAsync(&p, s)))
		goto out;
	/* array b to pinned host, async */
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = b;
	p.dstMemoryType = CU_MEMORYTYPE_HOST;
	p.dstHost = pin;
	p.dstPitch = W * 4;
	p.dstHeight = H;
	p.WidthInBytes = W * 4;
	p.Height = H;
	p.Depth = D;
	if (OK(cuMemcpy3DAsync(&p, s)) && OK(cuStreamSynchronize(s)))
		EXPECT(diff(pin, N, 7) == N, "host->array->device->array->"
		       "pinned differs at %zu", diff(pin, N, 7));
	/* a box at offsets: array a (x 2, y 1, z 1) to array b (0, 0, 0),
	 * then b to pageable host */
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = a;
	p.srcXInBytes = 8;
	p.srcY = 1;
	p.srcZ = 1;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = b;
	p.WidthInBytes = 4 * 4;
	p.Height = 3;
	p.Depth = 2;
	if (OK(cuMemcpy3D(&p))) {
		memset(&p, 0, sizeof(p));
		p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
		p.srcArray = b;
		p.dstMemoryType = CU_MEMORYTYPE_HOST;
		p.dstHost = dst;
		p.dstPitch = W * 4;
		p.dstHeight = H;
		p.WidthInBytes = W * 4;
		p.Height = H;
		p.Depth = D;
		if (OK(cuMemcpy3D(&p)))
			EXPECT(dst[0] == src[1 * W * H + 1 * W + 2] &&
			       dst[W * H + 2 * W + 3] ==
				       src[2 * W * H + 3 * W + 5] &&
			       dst[4] == src[4],
			       "array-to-array box at offsets");
	}
	/* a 3D box to an array out of its bounds */
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = a;
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src;
	p.dstZ = 1;
	EXPECT_RC(cuMemcpy3D(&p), CUDA_ERROR_INVALID_VALUE);
	/* a level of detail is not a copy form */
	memset(&p, 0, sizeof(p));
	p.srcLOD = 1;
	p.WidthInBytes = p.Height = p.Depth = 1;
	EXPECT_RC(cuMemcpy3D(&p), CUDA_ERROR_INVALID_VALUE);
out:
	if (pin)
		cuMemFreeHost(pin);
	if (s)
		cuStreamDestroy(s);
	if (d)
		cuMemFree(d);
	if (a)
		cuArrayDestroy(a);
	if (b)
		cuArrayDestroy(b);
	free(src);
	free(dst);
	end();
}

/* peer copies between two contexts of device 0 */
static void test_peer(void)
{
	enum { N = 4096 };
	uint32_t *buf = malloc(N * 4);
	CUcontext other = NULL;
	CUdeviceptr a = 0, b = 0;
	CUarray arr = NULL;
	CUDA_MEMCPY3D_PEER p;
	CUstream s = NULL;
	CUdevice dev = 0;

	begin("arrays-peer");
	if (!buf || !OK(cuCtxCreate(&other, NULL, 0, dev)))
		goto out;
	cuCtxSetCurrent(other);
	if (!OK(cuMemAlloc(&b, N * 4)) || !OK(cuMemsetD32(b, 0, N)))
		goto out;
	cuCtxSetCurrent(ctx);
	fill(buf, N, 9);
	if (!OK(cuMemAlloc(&a, N * 4)) || !OK(cuMemcpyHtoD(a, buf, N * 4)) ||
	    !OK(cuStreamCreate(&s, 0)) || !OK(array(&arr, N, 0, 0)))
		goto out;
	memset(buf, 0, N * 4);
	if (OK(cuMemcpyPeer(b, other, a, ctx, N * 4)) &&
	    OK(cuMemcpyDtoH(buf, b, N * 4)))
		EXPECT(diff(buf, N, 9) == N, "cuMemcpyPeer");
	if (OK(cuMemsetD32(a, 0, N)) &&
	    OK(cuMemcpyPeerAsync(a, ctx, b, other, N * 4, s)) &&
	    OK(cuStreamSynchronize(s)) && OK(cuMemcpyDtoH(buf, a, N * 4)))
		EXPECT(diff(buf, N, 9) == N, "cuMemcpyPeerAsync");
	/* the other context's memory into an array of this one's */
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = b;
	p.srcContext = other;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = arr;
	p.dstContext = ctx;
	p.WidthInBytes = N * 4;
	p.Height = 1;
	p.Depth = 1;
	memset(buf, 0, N * 4);
	if (OK(cuMemcpy3DPeer(&p)) && OK(cuMemcpy3DPeerAsync(&p, s)) &&
	    OK(cuStreamSynchronize(s)) && OK(cuMemcpyAtoH(buf, arr, 0, N * 4)))
		EXPECT(diff(buf, N, 9) == N, "cuMemcpy3DPeer into an array");
	p.srcContext = (CUcontext)buf;
	EXPECT_RC(cuMemcpy3DPeer(&p), CUDA_ERROR_INVALID_CONTEXT);
out:
	cuCtxSetCurrent(ctx);
	if (arr)
		cuArrayDestroy(arr);
	if (s)
		cuStreamDestroy(s);
	if (a)
		cuMemFree(a);
	if (other) {
		cuCtxSetCurrent(other);
		if (b)
			cuMemFree(b);
		cuCtxSetCurrent(ctx);
		cuCtxDestroy(other);
	}
	free(buf);
	end();
}

/* mipmapped arrays: levels are arrays the mipmap owns */
static void test_mipmap(void)
{
	CUDA_ARRAY3D_DESCRIPTOR desc = {
		.Width = 64, .Height = 32, .Format = CU_AD_FORMAT_UNSIGNED_INT32,
		.NumChannels = 1,
	}, ld;
	uint32_t src[32 * 16], dst[32 * 16];
	unsigned char saved[64] = { 0 }, saved_m[64] = { 0 };
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	CUmipmappedArray m = NULL;
	CUarray l0 = NULL, l1 = NULL, again = NULL, plane = NULL, a = NULL;
	CUDA_MEMCPY2D p;
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUtexObject t = 0;

	begin("arrays-mipmap");
	if (!OK(cuMipmappedArrayCreate(&m, &desc, 3)) ||
	    !OK(cuMipmappedArrayGetLevel(&l0, m, 0)) ||
	    !OK(cuMipmappedArrayGetLevel(&l1, m, 1)) ||
	    !OK(cuMipmappedArrayGetLevel(&again, m, 1)))
		goto out;
	EXPECT(again == l1 && l0 != l1, "a level looked up twice");
	if (OK(cuArray3DGetDescriptor(&ld, l1)))
		EXPECT(ld.Width == 32 && ld.Height == 16,
		       "level 1 is %zux%zu", ld.Width, ld.Height);
	EXPECT_RC(cuMipmappedArrayGetLevel(&again, m, 3),
		  CUDA_ERROR_INVALID_VALUE);
	fill(src, 32 * 16, 11);
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src;
	p.srcPitch = 32 * 4;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = l1;
	p.WidthInBytes = 32 * 4;
	p.Height = 16;
	if (OK(cuMemcpy2D(&p)) && OK(cuMemcpyAtoH(dst, l1, 0, 32 * 4)))
		EXPECT(diff(dst, 32, 11) == 32, "a row of level 1");
	if (OK(cuMipmappedArrayGetMemoryRequirements(&req, m, 0)))
		EXPECT(req.size == (64 * 32 + 32 * 16 + 16 * 8) * 4,
		       "mipmap requirements %zu", req.size);
	EXPECT_RC(cuMipmappedArrayGetMemoryRequirements(&req, m, 1),
		  CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RC(cuMipmappedArrayGetSparseProperties(&sp, m),
		  CUDA_ERROR_INVALID_VALUE);
	/* a level is not the program's to destroy */
	EXPECT_RC(cuArrayDestroy(l1), CUDA_ERROR_INVALID_HANDLE);
	/* arrays: requirements, planes, sparse properties */
	if (OK(array(&a, 100, 0, 0)) &&
	    OK(cuArrayGetMemoryRequirements(&req, a, 0)))
		EXPECT(req.size == 400, "array requirements %zu", req.size);
	EXPECT_RC(cuArrayGetPlane(&plane, a, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuArrayGetSparseProperties(&sp, a),
		  CUDA_ERROR_INVALID_VALUE);
	/* a texture object on the mipmap reaches the driver (the fake has
	 * none) */
	memset(&res, 0, sizeof(res));
	memset(&tex, 0, sizeof(tex));
	res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
	res.res.mipmap.hMipmappedArray = m;
	EXPECT_RC(cuTexObjectCreate(&t, &res, &tex, NULL),
		  CUDA_ERROR_NOT_SUPPORTED);
	/* the bytes a stale handle is made of: magic and wire handle */
	memcpy(saved, l1, 16);
	memcpy(saved_m, m, 16);
	if (OK(cuMipmappedArrayDestroy(m))) {
		m = NULL;
		/* its level went with it: the worker refuses the handle */
		EXPECT_RC(cuMemcpyAtoH(dst, (CUarray)saved, 0, 16),
			  CUDA_ERROR_INVALID_HANDLE);
		res.res.mipmap.hMipmappedArray = (CUmipmappedArray)saved_m;
		EXPECT_RC(cuTexObjectCreate(&t, &res, &tex, NULL),
			  CUDA_ERROR_INVALID_HANDLE);
		EXPECT_RC(cuMipmappedArrayGetLevel(
				  &again, (CUmipmappedArray)saved_m, 0),
			  CUDA_ERROR_INVALID_HANDLE);
	}
	/* a destroyed array */
	memcpy(saved, a, 16);
	if (OK(cuArrayDestroy(a))) {
		a = NULL;
		EXPECT_RC(cuMemcpyHtoA((CUarray)saved, 0, src, 16),
			  CUDA_ERROR_INVALID_HANDLE);
		EXPECT_RC(cuArrayDestroy((CUarray)saved),
			  CUDA_ERROR_INVALID_HANDLE);
	}
out:
	if (a)
		cuArrayDestroy(a);
	if (m)
		cuMipmappedArrayDestroy(m);
	end();
}

/* texture and surface references of a module */
static void test_refs(void)
{
	CUmodule mod = NULL;
	CUtexref t = NULL, t2 = NULL;
	CUsurfref sr = NULL;
	CUarray a = NULL, got = NULL;
	CUmipmappedArray mm = NULL, gotm = NULL;
	CUDA_ARRAY3D_DESCRIPTOR md = {
		.Width = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
	};
	CUDA_ARRAY_DESCRIPTOR d2 = {
		.Width = 16, .Height = 4, .Format = CU_AD_FORMAT_FLOAT,
		.NumChannels = 1,
	};
	CUdeviceptr d = 0, gotd = 0;
	float border[4] = { 1, 2, 3, 4 }, b2[4] = { 0 }, lo = 0, hi = 0, f = 0;
	CUarray_format fmt;
	CUfilter_mode fm;
	CUaddress_mode am;
	unsigned int flags = 0;
	size_t off = 1;
	int n = 0;

	begin("arrays-texref");
	if (!OK(cuModuleLoadData(&mod, fake_image)) ||
	    !OK(cuModuleGetTexRef(&t, mod, "tex_in")) ||
	    !OK(cuModuleGetTexRef(&t2, mod, "tex_in")) ||
	    !OK(cuModuleGetSurfRef(&sr, mod, "surf_out")) ||
	    !OK(array(&a, 64, 0, 0)) || !OK(cuMemAlloc(&d, 4096)) ||
	    !OK(cuMipmappedArrayCreate(&mm, &md, 2)))
		goto out;
	EXPECT(t == t2, "one name, two references");
	EXPECT_RC(cuModuleGetTexRef(&t2, mod, "nothing"), CUDA_ERROR_NOT_FOUND);
	if (OK(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT)) &&
	    OK(cuTexRefGetArray(&got, t)))
		EXPECT(got == a, "the bound array");
	if (OK(cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT32, 2)) &&
	    OK(cuTexRefGetFormat(&fmt, &n, t)))
		EXPECT(fmt == CU_AD_FORMAT_UNSIGNED_INT32 && n == 2, "format");
	if (OK(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR)) &&
	    OK(cuTexRefGetFilterMode(&fm, t)))
		EXPECT(fm == CU_TR_FILTER_MODE_LINEAR, "filter mode");
	if (OK(cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_MIRROR)) &&
	    OK(cuTexRefGetAddressMode(&am, t, 1)))
		EXPECT(am == CU_TR_ADDRESS_MODE_MIRROR, "address mode");
	EXPECT_RC(cuTexRefSetAddressMode(t, 7, CU_TR_ADDRESS_MODE_MIRROR),
		  CUDA_ERROR_INVALID_VALUE);
	if (OK(cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES)) &&
	    OK(cuTexRefGetFlags(&flags, t)))
		EXPECT(flags == CU_TRSF_NORMALIZED_COORDINATES, "flags");
	if (OK(cuTexRefSetBorderColor(t, border)) &&
	    OK(cuTexRefGetBorderColor(b2, t)))
		EXPECT(!memcmp(border, b2, sizeof(b2)), "border color");
	if (OK(cuTexRefSetMaxAnisotropy(t, 4)) &&
	    OK(cuTexRefGetMaxAnisotropy(&n, t)))
		EXPECT(n == 4, "anisotropy");
	if (OK(cuTexRefSetMipmapFilterMode(t, CU_TR_FILTER_MODE_LINEAR)) &&
	    OK(cuTexRefGetMipmapFilterMode(&fm, t)))
		EXPECT(fm == CU_TR_FILTER_MODE_LINEAR, "mipmap filter");
	if (OK(cuTexRefSetMipmapLevelBias(t, 0.5f)) &&
	    OK(cuTexRefGetMipmapLevelBias(&f, t)))
		EXPECT(f == 0.5f, "level bias");
	if (OK(cuTexRefSetMipmapLevelClamp(t, 0.25f, 3.0f)) &&
	    OK(cuTexRefGetMipmapLevelClamp(&lo, &hi, t)))
		EXPECT(lo == 0.25f && hi == 3.0f, "level clamp");
	if (OK(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT)) &&
	    OK(cuTexRefGetMipmappedArray(&gotm, t)))
		EXPECT(gotm == mm, "the bound mipmap");
	if (OK(cuTexRefSetAddress(&off, t, d, 4096)) &&
	    OK(cuTexRefGetAddress(&gotd, t)))
		EXPECT(off == 0 && gotd == d, "linear memory");
	EXPECT(OK(cuTexRefSetAddress2D(t, &d2, d, 256)), "2D memory");
	if (OK(cuSurfRefSetArray(sr, a, 0)) && OK(cuSurfRefGetArray(&got, sr)))
		EXPECT(got == a, "the surface's array");
	/* a texture reference is no surface reference, and the reverse */
	EXPECT_RC(cuSurfRefSetArray((CUsurfref)t, a, 0),
		  CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuTexRefSetFlags((CUtexref)sr, 0),
		  CUDA_ERROR_INVALID_HANDLE);
	/* the module goes, its references with it */
	if (OK(cuModuleUnload(mod))) {
		mod = NULL;
		EXPECT_RC(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT),
			  CUDA_ERROR_INVALID_HANDLE);
		EXPECT_RC(cuTexRefGetArray(&got, t), CUDA_ERROR_INVALID_HANDLE);
		EXPECT_RC(cuSurfRefGetArray(&got, sr),
			  CUDA_ERROR_INVALID_HANDLE);
	}
	/* one of no module's is the worker driver's (driverext tests it) */
	if (OK(cuTexRefCreate(&t2)))
		EXPECT(OK(cuTexRefDestroy(t2)), "destroy a created reference");
out:
	if (mm)
		cuMipmappedArrayDestroy(mm);
	if (d)
		cuMemFree(d);
	if (a)
		cuArrayDestroy(a);
	if (mod)
		cuModuleUnload(mod);
	end();
}

/* batch copies: pointers, and 3D operands with arrays */
static void test_batch(void)
{
	enum { N = 1024, W = 8, H = 4, D = 2 };
	uint32_t *h = malloc(N * 4), *r = malloc(N * 4), *pin = NULL;
	CUdeviceptr d1 = 0, d2 = 0;
	CUstream s = NULL;
	CUarray a = NULL;
	CUdeviceptr dsts[3], srcs[3];
	size_t sizes[3] = { N * 4, N * 4, N * 4 }, idx[2] = { 0, 2 };
	CUmemcpyAttributes at[2];
	CUDA_MEMCPY3D_BATCH_OP op[2];

	begin("arrays-batch");
	if (!h || !r || !OK(cuMemAlloc(&d1, N * 4)) ||
	    !OK(cuMemAlloc(&d2, N * 4)) || !OK(cuStreamCreate(&s, 0)) ||
	    !OK(cuMemHostAlloc((void **)&pin, N * 4, 0)) ||
	    !OK(array(&a, W, H, D)))
		goto out;
	fill(h, N, 21);
	fill(pin, N, 22);
	memset(at, 0, sizeof(at));
	at[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	at[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
	/* pageable to d1, pinned to d2; then d1 to pageable (a second
	 * batch: copies of one batch may run in any order) */
	dsts[0] = d1;
	srcs[0] = (CUdeviceptr)(uintptr_t)h;
	dsts[1] = d2;
	srcs[1] = (CUdeviceptr)(uintptr_t)pin;
	dsts[2] = (CUdeviceptr)(uintptr_t)r;
	srcs[2] = d1;
	if (OK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx, 1, s)) &&
	    OK(cuMemcpyBatchAsync(dsts + 2, srcs + 2, sizes + 2, 1, at + 1,
				  idx, 1, s)))
		EXPECT(diff(r, N, 21) == N, "batch there and back");
	if (OK(cuMemcpyDtoH(r, d2, N * 4)))
		EXPECT(diff(r, N, 22) == N, "batch from pinned memory");
	EXPECT_RC(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx, 1, NULL),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx + 1, 1, s),
		  CUDA_ERROR_INVALID_VALUE);
	/* 3D: host rows of 10 elements into the array at (1, 1, 0), and
	 * the whole array to d1, packed */
	memset(op, 0, sizeof(op));
	op[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
	op[0].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)h;
	op[0].src.op.ptr.rowLength = 10;
	op[0].src.op.ptr.layerHeight = 3;
	op[0].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
	op[0].dst.op.array.array = a;
	op[0].dst.op.array.offset.x = 1;
	op[0].dst.op.array.offset.y = 1;
	op[0].extent.width = W - 1;
	op[0].extent.height = H - 1;
	op[0].extent.depth = D;
	op[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	op[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
	op[1].src.op.array.array = a;
	op[1].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
	op[1].dst.op.ptr.ptr = d1;
	op[1].extent.width = W;
	op[1].extent.height = H;
	op[1].extent.depth = D;
	op[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	if (OK(cuMemsetD32(d1, 0, N)) &&
	    OK(cuMemcpy3DBatchAsync(1, op, 0, s)) &&
	    OK(cuMemcpy3DBatchAsync(1, op + 1, 0, s)) &&
	    OK(cuStreamSynchronize(s)) && OK(cuMemcpyDtoH(r, d1, N * 4)))
		EXPECT(r[1 * W * H + 1 * W + 1] == h[30 + 0] &&
		       r[1 * W * H + 3 * W + 7] == h[30 + 2 * 10 + 6] &&
		       r[W + 1] == h[0],
		       "3D batch through an array");
	EXPECT_RC(cuMemcpy3DBatchAsync(1, op, 1, s), CUDA_ERROR_INVALID_VALUE);
	op[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
	EXPECT_RC(cuMemcpy3DBatchAsync(2, op, 0, s), CUDA_ERROR_INVALID_VALUE);
out:
	if (a)
		cuArrayDestroy(a);
	if (pin)
		cuMemFreeHost(pin);
	if (s)
		cuStreamDestroy(s);
	if (d1)
		cuMemFree(d1);
	if (d2)
		cuMemFree(d2);
	free(h);
	free(r);
	end();
}

/* a 3D copy whose slices are larger than the data area (run with
 * XGPU_DATA_MB=1): pageable rows staged a part of a slice at a time */
static void test_staged(void)
{
	enum { W = 1024, H = 384, D = 3, N = W * H * D };
	uint32_t *src = malloc((size_t)N * 4), *dst = calloc(N, 4);
	CUarray a = NULL;
	CUDA_MEMCPY3D p;

	begin("arrays-staged");
	if (!src || !dst || !OK(array(&a, W, H, D)))
		goto out;
	fill(src, N, 31);
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src;
	p.srcPitch = W * 4;
	p.srcHeight = H;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = a;
	p.WidthInBytes = W * 4;
	p.Height = H;
	p.Depth = D;
	if (!OK(cuMemcpy3D(&p)))
		goto out;
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = a;
	p.dstMemoryType = CU_MEMORYTYPE_HOST;
	p.dstHost = dst;
	p.dstPitch = W * 4;
	p.dstHeight = H;
	p.WidthInBytes = W * 4;
	p.Height = H;
	p.Depth = D;
	if (OK(cuMemcpy3DAsync(&p, NULL)) && OK(cuCtxSynchronize()))
		EXPECT(diff(dst, N, 31) == N, "staged slices differ at %zu",
		       diff(dst, N, 31));
out:
	if (a)
		cuArrayDestroy(a);
	free(src);
	free(dst);
	end();
}

int main(void)
{
	CUdevice dev;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		printf("FAIL arrays: no context\n");
		return 1;
	}
	test_copies_1d();
	test_copies_3d();
	test_peer();
	test_mipmap();
	test_refs();
	test_batch();
	test_staged();
	cuDevicePrimaryCtxRelease(dev);
	printf("%s arrays: %d failed\n", failed ? "FAIL" : "PASS", failed);
	return failed ? 1 : 0;
}
