// arrays: every copy with a CUDA array on one side (the cuMemcpy*A* 1D
// forms at byte offsets, 2D and 3D copies in each direction, boxes at
// offsets, async on a stream with pinned and pageable memory), the peer
// copies between two contexts of device 0, the batch copies of CUDA 12.8
// (pointers, and 3D operands with an array), a mipmapped array read at two
// levels by a texture object, and a legacy texture reference and surface
// reference of a hand-written PTX module (cuModuleLoadData) bound to
// arrays and used by its kernels.
//
// Output: deterministic lines (checksums of what came back), then
// "PASS arrays" (exit 0) or "FAIL ..." (exit 1).
#define CUDA_ENABLE_DEPRECATED 1	// texture references are deprecated
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

static int failures;

static uint32_t fnv(const void *p, size_t n)
{
	const uint8_t *b = (const uint8_t *)p;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

// one result line: the checksum of what came back, and whether it is right
static void report(const char *what, bool ok, const void *p, size_t n)
{
	printf("%-28s %s %08x\n", what, ok ? "ok" : "WRONG", fnv(p, n));
	if (!ok)
		failures++;
}

static uint32_t val(size_t i, uint32_t seed)
{
	return (uint32_t)(i * 2654435761u) ^ seed;
}

static void fill(uint32_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = val(i, seed);
}

static CUarray make_array(size_t w, size_t h, size_t d, CUarray_format f,
			  unsigned int flags)
{
	CUDA_ARRAY3D_DESCRIPTOR desc;
	CUarray a;

	memset(&desc, 0, sizeof(desc));
	desc.Width = w;
	desc.Height = h;
	desc.Depth = d;
	desc.Format = f;
	desc.NumChannels = 1;
	desc.Flags = flags;
	CKD(cuArray3DCreate(&a, &desc));
	return a;
}

// ---- 1D arrays: cuMemcpyHtoA, AtoH, AtoA, AtoD, DtoA and the async forms

static void test_1d(CUstream s)
{
	const size_t n = 4096, bytes = n * 4;
	std::vector<uint32_t> h(n), r(n), z(n, 0), want(n);
	CUarray a1 = make_array(n, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32, 0);
	CUarray a2 = make_array(n, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32, 0);
	uint32_t *pin;
	CUdeviceptr d;

	CKD(cuMemAlloc(&d, bytes));
	CKD(cuMemHostAlloc((void **)&pin, bytes, 0));
	fill(h.data(), n, 1);

	CKD(cuMemcpyHtoA(a1, 0, h.data(), bytes));
	CKD(cuMemcpyAtoH(r.data(), a1, 0, bytes));
	report("1d HtoA/AtoH", r == h, r.data(), bytes);

	// a2 = 0 0 0 0 h[0] .. h[n-5], through device memory
	CKD(cuMemcpyHtoA(a2, 0, z.data(), bytes));
	CKD(cuMemcpyAtoA(a2, 16, a1, 0, bytes - 16));
	CKD(cuMemcpyAtoD(d, a2, 0, bytes));
	CKD(cuMemcpyDtoH(r.data(), d, bytes));
	for (size_t i = 0; i < n; i++)
		want[i] = i < 4 ? 0 : h[i - 4];
	report("1d AtoA/AtoD", r == want, r.data(), bytes);

	// 16 elements of d into a1 at byte 8
	CKD(cuMemcpyDtoA(a1, 8, d, 64));
	CKD(cuMemcpyAtoH(r.data(), a1, 0, bytes));
	want = h;
	for (size_t i = 0; i < 16; i++)
		want[2 + i] = i < 4 ? 0 : h[i - 4];
	report("1d DtoA at an offset", r == want, r.data(), bytes);

	// part of an array back, at a byte offset
	std::vector<uint32_t> part(100);
	CKD(cuMemcpyAtoH(part.data(), a1, 400, 400));
	report("1d AtoH at an offset",
	       !memcmp(part.data(), want.data() + 100, 400), part.data(), 400);

	// async on a stream: pinned in, pageable out, then the reverse
	fill(pin, n, 2);
	CKD(cuMemcpyHtoAAsync(a2, 0, pin, bytes, s));
	CKD(cuMemcpyAtoHAsync(r.data(), a2, 0, bytes, s));
	CKD(cuStreamSynchronize(s));
	report("1d async pinned->pageable", !memcmp(r.data(), pin, bytes),
	       r.data(), bytes);
	fill(h.data(), n, 3);
	CKD(cuMemcpyHtoAAsync(a2, 0, h.data(), bytes, s));
	CKD(cuMemcpyAtoHAsync(pin, a2, 0, bytes, s));
	CKD(cuStreamSynchronize(s));
	report("1d async pageable->pinned", !memcmp(h.data(), pin, bytes),
	       pin, bytes);

	CKD(cuMemFreeHost(pin));
	CKD(cuMemFree(d));
	CKD(cuArrayDestroy(a1));
	CKD(cuArrayDestroy(a2));
}

// ---- 2D copies with arrays ------------------------------------------------

static CUDA_MEMCPY2D copy2d(size_t w, size_t h)
{
	CUDA_MEMCPY2D p;

	memset(&p, 0, sizeof(p));
	p.WidthInBytes = w;
	p.Height = h;
	return p;
}

static void test_2d(CUstream s)
{
	const size_t w = 64, h = 32, n = w * h, row = w * 4;
	std::vector<uint32_t> src(n), r(n), want(n);
	CUarray b1 = make_array(w, h, 0, CU_AD_FORMAT_UNSIGNED_INT32, 0);
	CUarray b2 = make_array(w, h, 0, CU_AD_FORMAT_UNSIGNED_INT32, 0);
	CUdeviceptr d;
	size_t pitch;
	CUDA_MEMCPY2D p;

	CKD(cuMemAllocPitch(&d, &pitch, row, h, 4));
	fill(src.data(), n, 4);

	// host -> b1 -> pitched device -> b2 (async) -> host
	p = copy2d(row, h);
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src.data();
	p.srcPitch = row;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = b1;
	CKD(cuMemcpy2D(&p));
	p = copy2d(row, h);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = b1;
	p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p.dstDevice = d;
	p.dstPitch = pitch;
	CKD(cuMemcpy2D(&p));
	p = copy2d(row, h);
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = d;
	p.srcPitch = pitch;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = b2;
	CKD(cuMemcpy2DAsync(&p, s));
	p = copy2d(row, h);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = b2;
	p.dstMemoryType = CU_MEMORYTYPE_HOST;
	p.dstHost = r.data();
	p.dstPitch = row;
	CKD(cuMemcpy2DAsync(&p, s));
	CKD(cuStreamSynchronize(s));
	report("2d host->array->dev->array", r == src, r.data(), n * 4);

	// a 10 x 5 box of b1 at (4, 3) to b2 at (20, 7)
	p = copy2d(10 * 4, 5);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = b1;
	p.srcXInBytes = 4 * 4;
	p.srcY = 3;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = b2;
	p.dstXInBytes = 20 * 4;
	p.dstY = 7;
	CKD(cuMemcpy2D(&p));
	p = copy2d(row, h);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = b2;
	p.dstMemoryType = CU_MEMORYTYPE_HOST;
	p.dstHost = r.data();
	p.dstPitch = row;
	CKD(cuMemcpy2D(&p));
	want = src;
	for (size_t y = 0; y < 5; y++)
		for (size_t x = 0; x < 10; x++)
			want[(7 + y) * w + 20 + x] = src[(3 + y) * w + 4 + x];
	report("2d array->array box", r == want, r.data(), n * 4);

	CKD(cuMemFree(d));
	CKD(cuArrayDestroy(b1));
	CKD(cuArrayDestroy(b2));
}

// ---- 3D copies with arrays ------------------------------------------------

static CUDA_MEMCPY3D copy3d(size_t w, size_t h, size_t d)
{
	CUDA_MEMCPY3D p;

	memset(&p, 0, sizeof(p));
	p.WidthInBytes = w;
	p.Height = h;
	p.Depth = d;
	return p;
}

static void test_3d(CUstream s)
{
	const size_t w = 32, h = 16, dd = 8, n = w * h * dd, row = w * 4;
	size_t pitch;	// the driver's, wider than a row
	std::vector<uint32_t> src(n), r(n), want(n);
	CUarray c1 = make_array(w, h, dd, CU_AD_FORMAT_UNSIGNED_INT32, 0);
	CUarray c2 = make_array(w, h, dd, CU_AD_FORMAT_UNSIGNED_INT32, 0);
	uint32_t *pin;
	CUdeviceptr d;
	CUDA_MEMCPY3D p;

	CKD(cuMemAllocPitch(&d, &pitch, row, h * dd, 4));
	CKD(cuMemHostAlloc((void **)&pin, n * 4, 0));
	fill(src.data(), n, 5);

	// pageable host -> c1 -> device (pitched) -> c2 (async) -> pinned
	p = copy3d(row, h, dd);
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src.data();
	p.srcPitch = row;
	p.srcHeight = h;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = c1;
	CKD(cuMemcpy3D(&p));
	p = copy3d(row, h, dd);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = c1;
	p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p.dstDevice = d;
	p.dstPitch = pitch;
	p.dstHeight = h;
	CKD(cuMemcpy3D(&p));
	p = copy3d(row, h, dd);
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = d;
	p.srcPitch = pitch;
	p.srcHeight = h;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = c2;
	CKD(cuMemcpy3DAsync(&p, s));
	p = copy3d(row, h, dd);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = c2;
	p.dstMemoryType = CU_MEMORYTYPE_HOST;
	p.dstHost = pin;
	p.dstPitch = row;
	p.dstHeight = h;
	CKD(cuMemcpy3DAsync(&p, s));
	CKD(cuStreamSynchronize(s));
	report("3d host->array->dev->array", !memcmp(pin, src.data(), n * 4),
	       pin, n * 4);

	// an 8 x 4 x 3 box of c1 at (2, 1, 1) to c2 at (10, 5, 4)
	p = copy3d(8 * 4, 4, 3);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = c1;
	p.srcXInBytes = 2 * 4;
	p.srcY = 1;
	p.srcZ = 1;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = c2;
	p.dstXInBytes = 10 * 4;
	p.dstY = 5;
	p.dstZ = 4;
	CKD(cuMemcpy3D(&p));
	// a box of pageable host memory at (3, 2, 1) into c2 at (0, 0, 0)
	p = copy3d(5 * 4, 3, 2);
	p.srcMemoryType = CU_MEMORYTYPE_HOST;
	p.srcHost = src.data();
	p.srcPitch = row;
	p.srcHeight = h;
	p.srcXInBytes = 3 * 4;
	p.srcY = 2;
	p.srcZ = 1;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = c2;
	CKD(cuMemcpy3D(&p));
	p = copy3d(row, h, dd);
	p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	p.srcArray = c2;
	p.dstMemoryType = CU_MEMORYTYPE_HOST;
	p.dstHost = r.data();
	p.dstPitch = row;
	p.dstHeight = h;
	CKD(cuMemcpy3D(&p));
	want = src;
	for (size_t z = 0; z < 3; z++)
		for (size_t y = 0; y < 4; y++)
			for (size_t x = 0; x < 8; x++)
				want[((4 + z) * h + 5 + y) * w + 10 + x] =
					src[((1 + z) * h + 1 + y) * w + 2 + x];
	for (size_t z = 0; z < 2; z++)
		for (size_t y = 0; y < 3; y++)
			for (size_t x = 0; x < 5; x++)
				want[(z * h + y) * w + x] =
					src[((1 + z) * h + 2 + y) * w + 3 + x];
	report("3d boxes at offsets", r == want, r.data(), n * 4);

	CKD(cuMemFreeHost(pin));
	CKD(cuMemFree(d));
	CKD(cuArrayDestroy(c1));
	CKD(cuArrayDestroy(c2));
}

// ---- peer copies between two contexts of device 0 --------------------------

static void test_peer(CUcontext prim, CUstream s)
{
	const size_t n = 1 << 16, bytes = n * 4;
	// rows of 512 bytes: a pitch the driver's allocations would have
	const size_t w = 128, h = 16, dd = 4, n3 = w * h * dd;
	std::vector<uint32_t> src(n), r(n);
	CUdeviceptr a, a2, b, b3;
	CUcontext other;
	CUDA_MEMCPY3D_PEER p;
	CUdevice dev;

	CKD(cuCtxGetDevice(&dev));
	CKD(cuCtxCreate(&other, NULL, 0, dev));
	CKD(cuMemAlloc(&b, bytes));
	CKD(cuMemAlloc(&b3, n3 * 4));
	CKD(cuCtxSetCurrent(prim));
	CKD(cuMemAlloc(&a, bytes));
	CKD(cuMemAlloc(&a2, bytes));
	fill(src.data(), n, 6);
	CKD(cuMemcpyHtoD(a, src.data(), bytes));
	CKD(cuMemsetD32(a2, 0, n));

	CKD(cuMemcpyPeer(b, other, a, prim, bytes));
	CKD(cuMemcpyPeerAsync(a2, prim, b, other, bytes, s));
	CKD(cuStreamSynchronize(s));
	CKD(cuMemcpyDtoH(r.data(), a2, bytes));
	report("peer there and back", r == src, r.data(), bytes);

	// a 3D box into the other context's memory, and back shifted by a
	// slice
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = a;
	p.srcPitch = w * 4;
	p.srcHeight = h;
	p.srcContext = prim;
	p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p.dstDevice = b3;
	p.dstPitch = w * 4;
	p.dstHeight = h;
	p.dstContext = other;
	p.WidthInBytes = w * 4;
	p.Height = h;
	p.Depth = dd;
	CKD(cuMemcpy3DPeer(&p));
	CKD(cuMemsetD32(a2, 0, n));
	memset(&p, 0, sizeof(p));
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = b3;
	p.srcPitch = w * 4;
	p.srcHeight = h;
	p.srcZ = 1;
	p.srcContext = other;
	p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p.dstDevice = a2;
	p.dstPitch = w * 4;
	p.dstHeight = h;
	p.dstContext = prim;
	p.WidthInBytes = w * 4;
	p.Height = h;
	p.Depth = dd - 1;
	CKD(cuMemcpy3DPeerAsync(&p, s));
	CKD(cuStreamSynchronize(s));
	CKD(cuMemcpyDtoH(r.data(), a2, bytes));
	bool ok = true;
	for (size_t i = 0; i < n; i++)
		ok &= r[i] == (i < (dd - 1) * w * h ? src[i + w * h] : 0);
	report("peer 3d boxes", ok, r.data(), bytes);

	CKD(cuMemFree(a));
	CKD(cuMemFree(a2));
	CKD(cuCtxSetCurrent(other));
	CKD(cuMemFree(b));
	CKD(cuMemFree(b3));
	CKD(cuCtxSetCurrent(prim));
	CKD(cuCtxDestroy(other));
	CKD(cuCtxSetCurrent(prim));
}

// ---- batch copies (CUDA 12.8): pointers, and 3D operands with arrays ----

static void test_batch(CUstream s)
{
	const size_t n = 1 << 14, bytes = n * 4;
	const size_t w = 16, h = 8, dd = 3, n3 = w * h * dd;
	uint32_t *pin_in, *pin_out;
	std::vector<uint32_t> src(n), r(n);
	CUdeviceptr d1, d2, d3;
	CUarray a = make_array(w, h, dd, CU_AD_FORMAT_UNSIGNED_INT32, 0);

	CKD(cuMemHostAlloc((void **)&pin_in, bytes, 0));
	CKD(cuMemHostAlloc((void **)&pin_out, bytes, 0));
	CKD(cuMemAlloc(&d1, bytes));
	CKD(cuMemAlloc(&d2, bytes));
	CKD(cuMemAlloc(&d3, bytes));
	fill(pin_in, n, 8);
	fill(src.data(), n, 9);
	CKD(cuMemcpyHtoD(d2, src.data(), bytes));
	memset(pin_out, 0, bytes);

	// three independent copies: pinned to d1, d2 to d3, d2 to pinned
	CUdeviceptr dsts[3] = { d1, d3, (CUdeviceptr)(uintptr_t)pin_out };
	CUdeviceptr srcs[3] = { (CUdeviceptr)(uintptr_t)pin_in, d2, d2 };
	size_t sizes[3] = { bytes, bytes, bytes }, idx[1] = { 0 };
	CUmemcpyAttributes at;
	memset(&at, 0, sizeof(at));
	at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	CKD(cuMemcpyBatchAsync(dsts, srcs, sizes, 3, &at, idx, 1, s));
	CKD(cuStreamSynchronize(s));
	CKD(cuMemcpyDtoH(r.data(), d1, bytes));
	bool ok = !memcmp(r.data(), pin_in, bytes);
	CKD(cuMemcpyDtoH(r.data(), d3, bytes));
	ok &= r == src && !memcmp(pin_out, src.data(), bytes);
	report("batch of three copies", ok, pin_out, bytes);

	// 3D: pinned rows of 20 elements, layers of 10 rows, into the array
	// at (2, 1, 0); then the whole array to d1, packed
	CUDA_MEMCPY3D_BATCH_OP op;
	memset(&op, 0, sizeof(op));
	op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
	op.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)pin_in;
	op.src.op.ptr.rowLength = 20;
	op.src.op.ptr.layerHeight = 10;
	op.dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
	op.dst.op.array.array = a;
	op.dst.op.array.offset.x = 2;
	op.dst.op.array.offset.y = 1;
	op.extent.width = w - 2;
	op.extent.height = h - 1;
	op.extent.depth = dd;
	op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	std::vector<uint32_t> zero(n3, 0);
	CKD(cuMemcpyHtoD(d1, zero.data(), n3 * 4));
	CUDA_MEMCPY3D p = copy3d(w * 4, h, dd);
	p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p.srcDevice = d1;
	p.srcPitch = w * 4;
	p.srcHeight = h;
	p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	p.dstArray = a;
	CKD(cuMemcpy3D(&p));	// the array zeroed
	CKD(cuMemcpy3DBatchAsync(1, &op, 0, s));
	memset(&op, 0, sizeof(op));
	op.src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
	op.src.op.array.array = a;
	op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
	op.dst.op.ptr.ptr = d3;
	op.extent.width = w;
	op.extent.height = h;
	op.extent.depth = dd;
	op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	CKD(cuMemcpy3DBatchAsync(1, &op, 0, s));
	CKD(cuStreamSynchronize(s));
	CKD(cuMemcpyDtoH(r.data(), d3, n3 * 4));
	ok = true;
	for (size_t z = 0; z < dd; z++)
		for (size_t y = 0; y < h; y++)
			for (size_t x = 0; x < w; x++)
				ok &= r[(z * h + y) * w + x] ==
				      (x < 2 || y < 1 ? 0 :
				       pin_in[(z * 10 + y - 1) * 20 + x - 2]);
	report("3d batch through an array", ok, r.data(), n3 * 4);

	CKD(cuMemFreeHost(pin_in));
	CKD(cuMemFreeHost(pin_out));
	CKD(cuMemFree(d1));
	CKD(cuMemFree(d2));
	CKD(cuMemFree(d3));
	CKD(cuArrayDestroy(a));
}

// ---- a mipmapped array read by a texture object at two levels -----------

__global__ void read_levels(cudaTextureObject_t t, float *out, int w, int h,
			    float level)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < w && y < h)
		out[y * w + x] = tex2DLod<float>(t, (x + 0.5f) / w,
						 (y + 0.5f) / h, level);
}

static float texel(int level, int x, int y)
{
	return (float)(level * 10000 + y * 100 + x);
}

static void test_mipmap()
{
	const int w = 64, h = 64, levels = 3;
	CUDA_ARRAY3D_DESCRIPTOR desc;
	CUmipmappedArray m;
	CUarray lv[2], again;
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUtexObject t;
	float *out;

	memset(&desc, 0, sizeof(desc));
	desc.Width = w;
	desc.Height = h;
	desc.Format = CU_AD_FORMAT_FLOAT;
	desc.NumChannels = 1;
	CKD(cuMipmappedArrayCreate(&m, &desc, levels));
	for (int l = 0; l < 2; l++) {
		int lw = w >> l, lh = h >> l;
		std::vector<float> v(lw * lh);
		CUDA_ARRAY3D_DESCRIPTOR ld;

		CKD(cuMipmappedArrayGetLevel(&lv[l], m, l));
		CKD(cuArray3DGetDescriptor(&ld, lv[l]));
		printf("level %d: %zu x %zu\n", l, ld.Width, ld.Height);
		for (int y = 0; y < lh; y++)
			for (int x = 0; x < lw; x++)
				v[y * lw + x] = texel(l, x, y);
		CUDA_MEMCPY2D p = copy2d(lw * 4, lh);
		p.srcMemoryType = CU_MEMORYTYPE_HOST;
		p.srcHost = v.data();
		p.srcPitch = lw * 4;
		p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
		p.dstArray = lv[l];
		CKD(cuMemcpy2D(&p));
	}
	CKD(cuMipmappedArrayGetLevel(&again, m, 1));
	printf("level looked up twice is the same: %d\n", again == lv[1]);

	memset(&res, 0, sizeof(res));
	res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
	res.res.mipmap.hMipmappedArray = m;
	memset(&tex, 0, sizeof(tex));
	tex.addressMode[0] = tex.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
	tex.filterMode = CU_TR_FILTER_MODE_POINT;
	tex.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
	tex.flags = CU_TRSF_NORMALIZED_COORDINATES;
	tex.maxMipmapLevelClamp = levels - 1;
	CKD(cuTexObjectCreate(&t, &res, &tex, NULL));

	CK(cudaMalloc(&out, w * h * sizeof(float)));
	for (int l = 0; l < 2; l++) {
		int lw = w >> l, lh = h >> l;
		std::vector<float> r(lw * lh);
		bool ok = true;
		char what[40];

		read_levels<<<dim3(lw / 16, lh / 16), dim3(16, 16)>>>(
			t, out, lw, lh, (float)l);
		CK(cudaGetLastError());
		CK(cudaMemcpy(r.data(), out, lw * lh * sizeof(float),
			      cudaMemcpyDeviceToHost));
		for (int y = 0; y < lh; y++)
			for (int x = 0; x < lw; x++)
				ok &= r[y * lw + x] == texel(l, x, y);
		snprintf(what, sizeof(what), "mipmap level %d by texture", l);
		report(what, ok, r.data(), r.size() * 4);
	}
	CK(cudaFree(out));
	CKD(cuTexObjectDestroy(t));
	CKD(cuMipmappedArrayDestroy(m));
}

// ---- a texture reference and a surface reference of a PTX module --------

static const char ref_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".global .texref tref;\n"
	".global .surfref sref;\n"
	"\n"
	"// out[i] = tref at texel i (a 1D float array)\n"
	".visible .entry read_tex(\n"
	"	.param .u64 out,\n"
	"	.param .u32 n\n"
	")\n"
	"{\n"
	"	.reg .pred p;\n"
	"	.reg .b32 r<6>;\n"
	"	.reg .f32 f<6>;\n"
	"	.reg .b64 rd<4>;\n"
	"\n"
	"	ld.param.u64 rd1, [out];\n"
	"	ld.param.u32 r1, [n];\n"
	"	mov.u32 r2, %tid.x;\n"
	"	mov.u32 r3, %ctaid.x;\n"
	"	mov.u32 r4, %ntid.x;\n"
	"	mad.lo.s32 r5, r3, r4, r2;\n"
	"	setp.ge.s32 p, r5, r1;\n"
	"	@p bra DONE;\n"
	"	cvt.rn.f32.s32 f5, r5;\n"
	"	add.f32 f5, f5, 0f3F000000;\n"
	"	tex.1d.v4.f32.f32 {f1, f2, f3, f4}, [tref, {f5}];\n"
	"	cvta.to.global.u64 rd2, rd1;\n"
	"	mul.wide.s32 rd3, r5, 4;\n"
	"	add.s64 rd2, rd2, rd3;\n"
	"	st.global.f32 [rd2], f1;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n"
	"\n"
	"// sref at texel i = 3 * (tref at texel i) + 1 (a 1D float surface)\n"
	".visible .entry write_surf(\n"
	"	.param .u32 n\n"
	")\n"
	"{\n"
	"	.reg .pred p;\n"
	"	.reg .b32 r<7>;\n"
	"	.reg .f32 f<7>;\n"
	"\n"
	"	ld.param.u32 r1, [n];\n"
	"	mov.u32 r2, %tid.x;\n"
	"	mov.u32 r3, %ctaid.x;\n"
	"	mov.u32 r4, %ntid.x;\n"
	"	mad.lo.s32 r5, r3, r4, r2;\n"
	"	setp.ge.s32 p, r5, r1;\n"
	"	@p bra DONE;\n"
	"	cvt.rn.f32.s32 f5, r5;\n"
	"	add.f32 f5, f5, 0f3F000000;\n"
	"	tex.1d.v4.f32.f32 {f1, f2, f3, f4}, [tref, {f5}];\n"
	"	fma.rn.f32 f6, f1, 0f40400000, 0f3F800000;\n"
	"	shl.b32 r6, r5, 2;\n"
	"	sust.b.1d.b32.trap [sref, {r6}], {f6};\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

static void test_refs()
{
	const unsigned int n = 1024;
	std::vector<float> v(n), r(n);
	CUarray ta = make_array(n, 0, 0, CU_AD_FORMAT_FLOAT, 0);
	CUarray sa = make_array(n, 0, 0, CU_AD_FORMAT_FLOAT,
				CUDA_ARRAY3D_SURFACE_LDST);
	CUmodule mod;
	CUfunction rd, wr;
	CUtexref t, t2;
	CUsurfref sr;
	CUarray got;
	CUarray_format fmt;
	CUfilter_mode fm;
	CUaddress_mode am;
	unsigned int flags;
	int ch;
	CUdeviceptr out;

	for (unsigned int i = 0; i < n; i++)
		v[i] = 0.5f * (float)i;
	CKD(cuMemcpyHtoA(ta, 0, v.data(), n * 4));
	CKD(cuModuleLoadData(&mod, ref_ptx));
	CKD(cuModuleGetFunction(&rd, mod, "read_tex"));
	CKD(cuModuleGetFunction(&wr, mod, "write_surf"));
	CKD(cuModuleGetTexRef(&t, mod, "tref"));
	CKD(cuModuleGetTexRef(&t2, mod, "tref"));
	CKD(cuModuleGetSurfRef(&sr, mod, "sref"));
	printf("texref looked up twice is the same: %d\n", t == t2);

	CKD(cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 1));
	CKD(cuTexRefSetArray(t, ta, CU_TRSA_OVERRIDE_FORMAT));
	CKD(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT));
	CKD(cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
	CKD(cuTexRefSetFlags(t, 0));
	CKD(cuSurfRefSetArray(sr, sa, 0));
	CKD(cuTexRefGetArray(&got, t));
	printf("texref array is the bound one: %d\n", got == ta);
	CKD(cuSurfRefGetArray(&got, sr));
	printf("surfref array is the bound one: %d\n", got == sa);
	CKD(cuTexRefGetFormat(&fmt, &ch, t));
	CKD(cuTexRefGetFilterMode(&fm, t));
	CKD(cuTexRefGetAddressMode(&am, t, 0));
	CKD(cuTexRefGetFlags(&flags, t));
	printf("texref format %d x%d, filter %d, address mode %d, flags %u\n",
	       (int)fmt, ch, (int)fm, (int)am, flags);

	CKD(cuMemAlloc(&out, n * 4));
	unsigned int nn = n;
	void *rp[] = { &out, &nn };
	CKD(cuLaunchKernel(rd, n / 128, 1, 1, 128, 1, 1, 0, NULL, rp, NULL));
	CKD(cuMemcpyDtoH(r.data(), out, n * 4));
	report("texref read by a kernel", r == v, r.data(), n * 4);

	void *wp[] = { &nn };
	CKD(cuLaunchKernel(wr, n / 128, 1, 1, 128, 1, 1, 0, NULL, wp, NULL));
	CKD(cuCtxSynchronize());
	CKD(cuMemcpyAtoH(r.data(), sa, 0, n * 4));
	bool ok = true;
	for (unsigned int i = 0; i < n; i++)
		ok &= r[i] == 3.0f * v[i] + 1.0f;
	report("surfref written by a kernel", ok, r.data(), n * 4);

	CKD(cuMemFree(out));
	CKD(cuModuleUnload(mod));
	CKD(cuArrayDestroy(ta));
	CKD(cuArrayDestroy(sa));
}

int main()
{
	CUcontext prim;
	CUstream s;

	CK(cudaFree(0));
	CKD(cuCtxGetCurrent(&prim));
	CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	test_1d(s);
	test_2d(s);
	test_3d(s);
	test_peer(prim, s);
	test_batch(s);
	test_mipmap();
	test_refs();
	CKD(cuStreamDestroy(s));
	if (failures) {
		printf("FAIL arrays: %d wrong\n", failures);
		return 1;
	}
	printf("PASS arrays\n");
	return 0;
}
