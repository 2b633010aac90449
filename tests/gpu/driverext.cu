// driverext: driver extensions xgpu forwards for the worker's driver to
// judge, through the driver API; natively and through xgpu the lines must
// be equal (on a GPU without a feature, the driver's error both ways):
//  - cuDeviceRegisterAsyncNotification and its unregistration (no
//    notification is expected: the program stays far below any budget)
//  - cuMemBatchDecompressAsync with one small entry (a stored DEFLATE
//    block of 5 bytes): its result and errorIndex; where it succeeds, the
//    bytes written and the data
//  - cuMemMapArrayAsync of one tile of a sparse 2D array to a tile pool
//    allocation and back, where the device supports sparse arrays
//  - cuTexRefCreate, its address, format and filter mode set and read
//    back, cuTexRefDestroy
//
// Output: deterministic result lines, then "PASS driverext" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const char *ename(CUresult rc)
{
	const char *n = NULL;

	cuGetErrorName(rc, &n);
	return n ? n : "?";
}

static int notified;

static void on_notify(CUasyncNotificationInfo *info, void *user,
		      CUasyncCallbackHandle h)
{
	(void)info;
	(void)user;
	(void)h;
	notified++;
}

static void notifications(CUdevice dev)
{
	CUasyncCallbackHandle h = NULL;
	CUresult rc;

	rc = cuDeviceRegisterAsyncNotification(dev, on_notify, &notified, &h);
	printf("register async notification: %s\n", ename(rc));
	if (rc == CUDA_SUCCESS) {
		rc = cuDeviceUnregisterAsyncNotification(dev, h);
		printf("unregister async notification: %s\n", ename(rc));
	}
	rc = cuDeviceRegisterAsyncNotification(dev, NULL, NULL, &h);
	printf("register a NULL callback: %s\n", ename(rc));
}

static void decompress(void)
{
	/* a raw DEFLATE stream: one final stored block of "hello" */
	static const unsigned char block[] = { 0x01, 0x05, 0x00, 0xfa, 0xff,
					       'h', 'e', 'l', 'l', 'o' };
	CUdeviceptr src, dst, act;
	CUmemDecompressParams p;
	char out[8] = { 0 };
	uint32_t n = 0;
	size_t idx = 12345;
	CUstream s;
	CUresult rc;

	CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CKD(cuMemAlloc(&src, 256));
	CKD(cuMemAlloc(&dst, 256));
	CKD(cuMemAlloc(&act, 256));
	CKD(cuMemcpyHtoD(src, block, sizeof(block)));
	CKD(cuMemsetD8(dst, 0, 256));
	CKD(cuMemsetD8(act, 0, 256));
	CKD(cuCtxSynchronize());	/* s is non-blocking: it does not wait */
	memset(&p, 0, sizeof(p));
	p.srcNumBytes = sizeof(block);
	p.dstNumBytes = 5;
	p.src = (const void *)(uintptr_t)src;
	p.dst = (void *)(uintptr_t)dst;
	p.dstActBytes = (cuuint32_t *)(uintptr_t)act;
	p.algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
	rc = cuMemBatchDecompressAsync(&p, 1, 0, &idx, s);
	printf("batch decompress: %s, errorIndex %llu\n", ename(rc),
	       rc == CUDA_SUCCESS ? 0ull : (unsigned long long)idx);
	if (rc == CUDA_SUCCESS) {
		rc = cuStreamSynchronize(s);
		printf("batch decompress done: %s\n", ename(rc));
		if (rc == CUDA_SUCCESS) {
			CKD(cuMemcpyDtoH(&n, act, 4));
			CKD(cuMemcpyDtoH(out, dst, 5));
			printf("decompressed %u bytes: %s\n", n, out);
		}
	}
	/* a general error: flags must be 0 */
	idx = 12345;
	rc = cuMemBatchDecompressAsync(&p, 1, 1, &idx, s);
	printf("batch decompress, flags 1: %s, errorIndex %s\n", ename(rc),
	       idx == 12345 ? "untouched" :
	       idx == SIZE_MAX ? "SIZE_MAX" : "an entry");
	CKD(cuStreamDestroy(s));
	CKD(cuMemFree(src));
	CKD(cuMemFree(dst));
	CKD(cuMemFree(act));
}

static void map_array(CUdevice dev)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle mem;
	CUarrayMapInfo m;
	CUarray a;
	size_t gran = 0;
	int sparse = 0;
	CUresult rc;

	CKD(cuDeviceGetAttribute(
		&sparse, CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, dev));
	if (!sparse) {
		printf("sparse arrays: not supported\n");
		return;
	}
	memset(&d, 0, sizeof(d));
	d.Width = 1024;
	d.Height = 1024;
	d.Format = CU_AD_FORMAT_FLOAT;
	d.NumChannels = 1;
	d.Flags = CUDA_ARRAY3D_SPARSE;
	CKD(cuArray3DCreate(&a, &d));
	CKD(cuArrayGetSparseProperties(&sp, a));
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = (int)dev;
	prop.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
	CKD(cuMemGetAllocationGranularity(&gran, &prop,
					  CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CKD(cuMemCreate(&mem, gran, &prop, 0));
	memset(&m, 0, sizeof(m));
	m.resourceType = CU_RESOURCE_TYPE_ARRAY;
	m.resource.array = a;
	m.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
	m.subresource.sparseLevel.extentWidth = sp.tileExtent.width;
	m.subresource.sparseLevel.extentHeight = sp.tileExtent.height;
	m.subresource.sparseLevel.extentDepth = 1;
	m.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
	m.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
	m.memHandle.memHandle = mem;
	m.deviceBitMask = 1u << dev;
	rc = cuMemMapArrayAsync(&m, 1, 0);
	printf("map a sparse array tile: %s\n", ename(rc));
	printf("synchronize: %s\n", ename(cuCtxSynchronize()));
	m.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
	m.memHandle.memHandle = 0;
	rc = cuMemMapArrayAsync(&m, 1, 0);
	printf("unmap it: %s\n", ename(rc));
	printf("synchronize: %s\n", ename(cuCtxSynchronize()));
	/* a dense array: the driver refuses */
	d.Flags = 0;
	CUarray dense;
	CKD(cuArray3DCreate(&dense, &d));
	m.resource.array = dense;
	m.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
	m.memHandle.memHandle = mem;
	printf("map a dense array: %s\n", ename(cuMemMapArrayAsync(&m, 1, 0)));
	CKD(cuArrayDestroy(dense));
	CKD(cuMemRelease(mem));
	CKD(cuArrayDestroy(a));
}

static void texref(void)
{
	CUtexref t;
	CUdeviceptr d, got = 0;
	CUarray_format fmt;
	CUfilter_mode fm;
	size_t off = 7;
	int ch = 0;
	CUresult rc;

	rc = cuTexRefCreate(&t);
	printf("texref create: %s\n", ename(rc));
	if (rc != CUDA_SUCCESS)
		return;
	CKD(cuMemAlloc(&d, 4096));
	printf("set address: %s, offset %zu\n",
	       ename(cuTexRefSetAddress(&off, t, d, 4096)), off);
	printf("set format: %s\n",
	       ename(cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT8, 4)));
	printf("set filter mode: %s\n",
	       ename(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR)));
	rc = cuTexRefGetAddress(&got, t);
	printf("get address: %s, %s\n", ename(rc),
	       got == d ? "the same" : "another");
	rc = cuTexRefGetFormat(&fmt, &ch, t);
	printf("get format: %s, %d x%d\n", ename(rc), (int)fmt, ch);
	rc = cuTexRefGetFilterMode(&fm, t);
	printf("get filter mode: %s, %d\n", ename(rc), (int)fm);
	printf("texref destroy: %s\n", ename(cuTexRefDestroy(t)));
	CKD(cuMemFree(d));
}

int main(void)
{
	CUcontext ctx;
	CUdevice dev;

	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	notifications(dev);
	decompress();
	map_array(dev);
	texref();
	CKD(cuCtxSynchronize());
	printf("notifications: %d\n", notified);
	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("PASS driverext\n");
	return 0;
}
