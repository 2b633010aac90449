/*
 * drvapi: a CUDA Driver API program in plain C.
 *
 * It links against the toolkit's libcuda stub, so at run time it uses
 * whichever libcuda.so.1 the loader finds: the host driver's, or xgpu's.
 * The kernels come from kern.cu, embedded (by the Makefile, with bin2c) as
 * a fatbin image and as PTX text.
 *
 * Every CUDA call is checked: an unexpected error prints
 * "FAIL <call>: <error name>" and exits 1. Results are checked against CPU
 * references; each failed check prints "FAIL check: ..." and the program
 * ends with "FAIL drvapi ..." and exit 1, else "PASS drvapi". Lines that
 * depend on timing start with TIME; every other line is deterministic, so
 * native and xgpu outputs can be compared line by line.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_images.h"

static int failures;

static void die(const char *what, CUresult rc)
{
	const char *name = NULL;

	if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == NULL)
		name = "unknown error";
	printf("FAIL %s: %s\n", what, name);
	fflush(stdout);
	exit(1);
}

#define CK(call)                                                       \
	do {                                                           \
		CUresult rc_ = (call);                                 \
		if (rc_ != CUDA_SUCCESS)                               \
			die(#call, rc_);                               \
	} while (0)

static void expect(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static const char *err_name(CUresult rc)
{
	const char *name = NULL;

	if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == NULL)
		return "unknown error";
	return name;
}

/* xorshift32: fresh, never-zero pseudo-random inputs from a fixed seed. */
static uint32_t rng_state = 0x2545F491u;

static uint32_t rng_u32(void)
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	rng_state = x;
	return x;
}

/* Uniform in [-1, 1), never exactly zero. */
static float rng_float(void)
{
	float f = (float)(rng_u32() >> 8) * (2.0f / 16777216.0f) - 1.0f;

	return f == 0.0f ? 0.5f : f;
}

static double checksum(const float *v, int n)
{
	double s = 0.0;
	int i;

	for (i = 0; i < n; i++)
		s += (double)v[i] * (double)((i % 7) + 1);
	return s;
}

/* Same arithmetic as kern.cu's vadd: float add, then double mul and add. */
static int check_vadd(const char *what, const float *a, const float *b,
		      const float *c, int n, double scale, char tag)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		double s = (double)(a[i] + b[i]);
		float ref = (float)(s * scale + (double)tag);

		if (memcmp(&ref, &c[i], sizeof ref) != 0)
			bad++;
	}
	printf("%s: %d mismatches, checksum %.6e\n", what, bad,
	       checksum(c, n));
	expect(bad == 0, what);
	return bad;
}

/* An 8-byte aligned heap copy of an embedded image. */
static void *aligned_copy(const void *src, size_t len)
{
	uint64_t *p = malloc((len + 7) / 8 * 8);

	if (p == NULL) {
		printf("FAIL malloc: out of memory\n");
		exit(1);
	}
	memset(p, 0, (len + 7) / 8 * 8);
	memcpy(p, src, len);
	return p;
}

int main(void)
{
	enum { N = 100003, BLOCK = 128, TW = 200, TH = 120, TN = 4096 };
	static const CUresult codes[] = {
		CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY,
		CUDA_ERROR_NOT_FOUND, CUDA_ERROR_LAUNCH_FAILED,
		CUDA_ERROR_INVALID_HANDLE,
	};
	static const struct {
		CUdevice_attribute attr;
		const char *name;
	} attrs[] = {
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc_major" },
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc_minor" },
		{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "sm_count" },
		{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max_threads_per_block" },
		{ CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp_size" },
		{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "max_smem_per_block" },
		{ CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified_addressing" },
		{ CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "can_map_host_memory" },
		{ CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, "texture_pitch_alignment" },
		{ CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, "concurrent_kernels" },
	};
	static const size_t want_off[] = { 0, 8, 16, 24, 32, 40 };
	static const size_t want_size[] = { 8, 8, 8, 4, 8, 1 };

	CUdevice dev;
	CUcontext ctx, cur;
	CUmodule mod, ptxmod;
	CUlibrary lib;
	CUkernel kern;
	CUfunction fvadd, fbias, ffill, fcount, ftexlin, ftex2d, fptx, fkern;
	CUstream stream;
	CUevent ev0, ev1;
	CUdeviceptr da, db, dc, dd, dbad, gbias, gcount, dtex, dpitch, dtexout;
	CUdeviceptr hdptr;
	CUtexObject tex;
	CUDA_RESOURCE_DESC rd;
	CUDA_TEXTURE_DESC td;
	CUDA_MEMCPY2D cp;
	CUlaunchConfig cfg;
	CUlaunchAttribute lattr;
	CUuuid uuid;
	size_t total, freemem, devtotal, bytes, off, size, pitch;
	unsigned int memtype, count, nkernels, pattern32;
	int ver, ndev, i, v, n = N, least, greatest, nblocks, tw = TW, th = TH;
	int tn = TN;
	char name[256], infolog[4096], errlog[4096], msg[128];
	const char *s1, *s2, *fname;
	float *ha, *hb, *hc, *hhost, *texsrc, *texout, bias = 0.25f;
	unsigned int *hu, *hpin;
	void *fatbin, *ptx;
	double scale;
	char tag;
	void *args[6];
	unsigned char argbuf[64];
	size_t argbuf_size, got_off[6], got_size[6];
	void *extra[5];
	CUjit_option jopt[5];
	void *jval[5];
	unsigned short *h16;
	float ms;
	int bad;
	unsigned int grid = (N + BLOCK - 1) / BLOCK;
	size_t sz = (size_t)N * sizeof(float);

	setvbuf(stdout, NULL, _IOLBF, 0);

	/* ---- driver, device ---- */
	CK(cuInit(0));
	CK(cuDriverGetVersion(&ver));
	printf("driver version %d\n", ver);
	CK(cuDeviceGetCount(&ndev));
	expect(ndev >= 1, "device count >= 1");
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof name, dev));
	printf("device 0: %s\n", name);
	CK(cuDeviceTotalMem(&devtotal, dev));
	printf("device 0 total memory %zu\n", devtotal);
	CK(cuDeviceGetUuid(&uuid, dev));
	printf("device 0 uuid ");
	for (i = 0; i < 16; i++)
		printf("%02x", (unsigned char)uuid.bytes[i]);
	printf("\n");
	for (i = 0; i < (int)(sizeof attrs / sizeof attrs[0]); i++) {
		CK(cuDeviceGetAttribute(&v, attrs[i].attr, dev));
		printf("attribute %s %d\n", attrs[i].name, v);
	}

	/* ---- error names and strings (answered by the library itself) ---- */
	for (i = 0; i < (int)(sizeof codes / sizeof codes[0]); i++) {
		CK(cuGetErrorName(codes[i], &s1));
		CK(cuGetErrorString(codes[i], &s2));
		printf("error %d: %s: %s\n", (int)codes[i], s1, s2);
	}
	{
		CUresult rc = cuGetErrorName((CUresult)987654, &s1);

		printf("cuGetErrorName(987654) -> %s\n", err_name(rc));
		expect(rc == CUDA_ERROR_INVALID_VALUE,
		       "cuGetErrorName of an unknown code is INVALID_VALUE");
	}

	/* ---- context ---- */
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuCtxGetCurrent(&cur));
	expect(cur == ctx, "cuCtxGetCurrent returns the primary context");
	{
		CUdevice d2;

		CK(cuCtxGetDevice(&d2));
		expect(d2 == dev, "cuCtxGetDevice returns device 0");
	}
	CK(cuMemGetInfo(&freemem, &total));
	expect(total == devtotal, "cuMemGetInfo total == cuDeviceTotalMem");
	expect(freemem > 0 && freemem <= total, "0 < free <= total");
	printf("cuMemGetInfo: total %zu, free within total: %s\n", total,
	       freemem > 0 && freemem <= total ? "yes" : "no");

	/* ---- module from the fatbin ---- */
	fatbin = aligned_copy(kern_fatbin, sizeof kern_fatbin);
	ptx = aligned_copy(kern_ptx, sizeof kern_ptx);
	CK(cuModuleLoadData(&mod, fatbin));
	CK(cuModuleGetFunction(&fvadd, mod, "vadd"));
	CK(cuModuleGetFunction(&fbias, mod, "addbias"));
	CK(cuModuleGetFunction(&ffill, mod, "fill_u32"));
	CK(cuModuleGetFunction(&fcount, mod, "count_ne_u32"));
	CK(cuModuleGetFunction(&ftexlin, mod, "tex_linear"));
	CK(cuModuleGetFunction(&ftex2d, mod, "tex_pitch2d"));
	{
		CUfunction fnone;
		CUresult rc = cuModuleGetFunction(&fnone, mod, "no_such_kernel");

		printf("cuModuleGetFunction(no_such_kernel) -> %s\n",
		       err_name(rc));
		expect(rc == CUDA_ERROR_NOT_FOUND,
		       "missing kernel is CUDA_ERROR_NOT_FOUND");
	}
	CK(cuFuncGetName(&fname, fvadd));
	printf("cuFuncGetName: %s\n", fname);
	expect(strcmp(fname, "vadd") == 0, "cuFuncGetName is vadd");

	for (i = 0; i < 6; i++) {
		CK(cuFuncGetParamInfo(fvadd, (size_t)i, &off, &size));
		printf("vadd param %d: offset %zu size %zu\n", i, off, size);
		got_off[i] = off;
		got_size[i] = size;
		snprintf(msg, sizeof msg, "vadd param %d layout", i);
		expect(off == want_off[i] && size == want_size[i], msg);
	}
	{
		CUresult rc = cuFuncGetParamInfo(fvadd, 6, &off, &size);

		printf("vadd param 6: %s\n", err_name(rc));
		expect(rc == CUDA_ERROR_INVALID_VALUE,
		       "param index past the end is INVALID_VALUE");
	}
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fvadd));
	printf("vadd num_regs %d\n", v);
	expect(v > 0, "vadd uses registers");
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, fvadd));
	printf("vadd ptx_version %d\n", v);
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fvadd));
	printf("vadd binary_version %d\n", v);
	expect(v == 90, "vadd binary version 90 (SASS sm_90 chosen)");
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
			      fvadd));
	printf("vadd max_threads_per_block %d\n", v);
	CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nblocks, fvadd, BLOCK,
						       0));
	printf("vadd occupancy: %d blocks of %d per SM\n", nblocks, BLOCK);
	expect(nblocks > 0, "occupancy > 0");

	/* ---- memory and the launch forms ---- */
	ha = malloc(sz);
	hb = malloc(sz);
	hc = malloc(sz);
	hu = malloc(sz);
	h16 = malloc(sz);
	if (!ha || !hb || !hc || !hu || !h16) {
		printf("FAIL malloc: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		ha[i] = rng_float();
		hb[i] = rng_float();
	}
	CK(cuMemAlloc(&da, sz));
	CK(cuMemAlloc(&db, sz));
	CK(cuMemAlloc(&dc, sz));
	CK(cuMemAlloc(&dd, sz));
	CK(cuMemAlloc(&dbad, sizeof(unsigned int)));
	CK(cuMemcpyHtoD(da, ha, sz));
	CK(cuMemcpyHtoD(db, hb, sz));
	CK(cuMemcpyDtoD(dd, da, sz));
	CK(cuMemcpyDtoH(hc, dd, sz));
	expect(memcmp(hc, ha, sz) == 0, "cuMemcpyDtoD copy");
	printf("cuMemcpyDtoD: %s\n", memcmp(hc, ha, sz) == 0 ? "ok" : "bad");

	CK(cuMemGetInfo(&freemem, &total));
	expect(freemem <= total, "free <= total after allocations");

	CK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				 da));
	printf("memory type of cuMemAlloc pointer: %u\n", memtype);
	expect(memtype == CU_MEMORYTYPE_DEVICE, "cuMemAlloc memory is DEVICE");

	/* 1: kernelParams */
	scale = 1.5;
	tag = 7;
	args[0] = &da;
	args[1] = &db;
	args[2] = &dc;
	args[3] = &n;
	args[4] = &scale;
	args[5] = &tag;
	CK(cuMemsetD32(dc, 0xFFFFFFFFu, (size_t)n));
	CK(cuLaunchKernel(fvadd, grid, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("launch kernelParams", ha, hb, hc, n, scale, tag);

	/* 2: extra, CU_LAUNCH_PARAM_BUFFER_POINTER, laid out from the
	 * offsets that cuFuncGetParamInfo gave. The size is the end of the
	 * last parameter (41 here): the driver refuses a larger one (48, the
	 * size of an equivalent C struct) with LAUNCH_OUT_OF_RESOURCES. */
	scale = -0.75;
	tag = -3;
	memset(argbuf, 0, sizeof argbuf);
	for (i = 0; i < 6; i++) {
		if (got_off[i] + got_size[i] > sizeof argbuf) {
			printf("FAIL check: vadd parameters fit in 64 bytes\n");
			return 1;
		}
		memcpy(argbuf + got_off[i], args[i], got_size[i]);
	}
	argbuf_size = got_off[5] + got_size[5];
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = argbuf;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &argbuf_size;
	extra[4] = CU_LAUNCH_PARAM_END;
	CK(cuMemsetD32(dc, 0xFFFFFFFFu, (size_t)n));
	CK(cuLaunchKernel(fvadd, grid, 1, 1, BLOCK, 1, 1, 0, NULL, NULL, extra));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("launch extra buffer", ha, hb, hc, n, scale, tag);

	/* 3: cuLaunchKernelEx, no attributes, on a created stream */
	CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
	scale = 2.0;
	tag = 1;
	memset(&cfg, 0, sizeof cfg);
	cfg.gridDimX = grid;
	cfg.gridDimY = 1;
	cfg.gridDimZ = 1;
	cfg.blockDimX = BLOCK;
	cfg.blockDimY = 1;
	cfg.blockDimZ = 1;
	cfg.sharedMemBytes = 0;
	cfg.hStream = stream;
	cfg.attrs = NULL;
	cfg.numAttrs = 0;
	CK(cuMemsetD32Async(dc, 0xFFFFFFFFu, (size_t)n, stream));
	CK(cuLaunchKernelEx(&cfg, fvadd, args, NULL));
	CK(cuStreamSynchronize(stream));
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("cuLaunchKernelEx", ha, hb, hc, n, scale, tag);

	/* 4: cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_PRIORITY */
	CK(cuCtxGetStreamPriorityRange(&least, &greatest));
	printf("stream priority range: least %d greatest %d\n", least,
	       greatest);
	memset(&lattr, 0, sizeof lattr);
	lattr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	lattr.value.priority = greatest;
	cfg.attrs = &lattr;
	cfg.numAttrs = 1;
	scale = 0.5;
	tag = 0;
	CK(cuMemsetD32Async(dc, 0xFFFFFFFFu, (size_t)n, stream));
	CK(cuLaunchKernelEx(&cfg, fvadd, args, NULL));
	CK(cuStreamSynchronize(stream));
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("cuLaunchKernelEx priority", ha, hb, hc, n, scale, tag);

	/* ---- module from PTX text (JIT), with log buffers ---- */
	memset(infolog, 0, sizeof infolog);
	memset(errlog, 0, sizeof errlog);
	jopt[0] = CU_JIT_INFO_LOG_BUFFER;
	jval[0] = infolog;
	jopt[1] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
	jval[1] = (void *)(uintptr_t)sizeof infolog;
	jopt[2] = CU_JIT_ERROR_LOG_BUFFER;
	jval[2] = errlog;
	jopt[3] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	jval[3] = (void *)(uintptr_t)sizeof errlog;
	jopt[4] = CU_JIT_OPTIMIZATION_LEVEL;
	jval[4] = (void *)(uintptr_t)4;
	CK(cuModuleLoadDataEx(&ptxmod, ptx, 5, jopt, jval));
	expect(memchr(errlog, 0, sizeof errlog) != NULL,
	       "JIT error log is a terminated string");
	expect(memchr(infolog, 0, sizeof infolog) != NULL,
	       "JIT info log is a terminated string");
	CK(cuModuleGetFunction(&fptx, ptxmod, "vadd"));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, fptx));
	printf("PTX vadd ptx_version %d\n", v);
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fptx));
	printf("PTX vadd binary_version %d\n", v);
	scale = 3.0;
	tag = 5;
	/* on the launch's own stream: a non-blocking stream does not wait
	 * for work of the legacy stream, so a memset there could land after
	 * the kernel's stores */
	CK(cuMemsetD32Async(dc, 0xFFFFFFFFu, (size_t)n, stream));
	CK(cuLaunchKernel(fptx, grid, 1, 1, BLOCK, 1, 1, 0, stream, args,
			  NULL));
	CK(cuStreamSynchronize(stream));
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("PTX module launch", ha, hb, hc, n, scale, tag);

	/* ---- library API: CUkernel launched through cuLaunchKernel ---- */
	CK(cuLibraryLoadData(&lib, fatbin, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernelCount(&nkernels, lib));
	printf("library kernel count %u\n", nkernels);
	expect(nkernels == 6, "library holds 6 kernels");
	CK(cuLibraryGetKernel(&kern, lib, "vadd"));
	scale = -2.0;
	tag = 11;
	CK(cuMemsetD32(dc, 0xFFFFFFFFu, (size_t)n));
	CK(cuLaunchKernel((CUfunction)kern, grid, 1, 1, BLOCK, 1, 1, 0, NULL,
			  args, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("library CUkernel launch", ha, hb, hc, n, scale, tag);
	CK(cuKernelGetFunction(&fkern, kern));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fkern));
	printf("library vadd binary_version %d\n", v);
	CK(cuLibraryGetGlobal(&gbias, &bytes, lib, "gbias"));
	printf("library global gbias: %zu bytes\n", bytes);
	expect(bytes == sizeof(float), "library gbias is 4 bytes");

	/* ---- module globals ---- */
	CK(cuModuleGetGlobal(&gbias, &bytes, mod, "gbias"));
	printf("module global gbias: %zu bytes\n", bytes);
	expect(bytes == sizeof(float), "gbias is 4 bytes");
	CK(cuModuleGetGlobal(&gcount, &bytes, mod, "gcount"));
	printf("module global gcount: %zu bytes\n", bytes);
	expect(bytes == sizeof(unsigned int), "gcount is 4 bytes");
	{
		CUdeviceptr dnone;
		CUresult rc = cuModuleGetGlobal(&dnone, &bytes, mod, "nothing");

		printf("cuModuleGetGlobal(nothing) -> %s\n", err_name(rc));
		expect(rc == CUDA_ERROR_NOT_FOUND,
		       "missing global is CUDA_ERROR_NOT_FOUND");
	}
	CK(cuMemcpyHtoD(gbias, &bias, sizeof bias));
	CK(cuMemsetD32(gcount, 0, 1));
	CK(cuMemcpyHtoD(dc, ha, sz));
	{
		void *bargs[2] = { &dc, &n };

		CK(cuLaunchKernel(fbias, grid, 1, 1, BLOCK, 1, 1, 0, NULL, bargs,
				  NULL));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(hc, dc, sz));
	CK(cuMemcpyDtoH(&count, gcount, sizeof count));
	for (i = 0, bad = 0; i < n; i++) {
		float ref = ha[i] + bias;

		if (memcmp(&ref, &hc[i], sizeof ref) != 0)
			bad++;
	}
	printf("addbias with gbias: %d mismatches, gcount %u\n", bad, count);
	expect(bad == 0, "addbias read gbias");
	expect(count == (unsigned int)n, "gcount counted every thread");

	/* ---- memsets ---- */
	pattern32 = 0xDEADBEEFu;
	CK(cuMemsetD32(dc, pattern32, (size_t)n));
	CK(cuMemsetD32(dbad, 0, 1));
	{
		void *cargs[4] = { &dc, &n, &pattern32, &dbad };

		CK(cuLaunchKernel(fcount, grid, 1, 1, BLOCK, 1, 1, 0, NULL, cargs,
				  NULL));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(&count, dbad, sizeof count));
	CK(cuMemcpyDtoH(hu, dc, sz));
	for (i = 0, bad = 0; i < n; i++)
		bad += hu[i] != pattern32;
	printf("cuMemsetD32 0x%08x: %u wrong on device, %d wrong on host\n",
	       pattern32, count, bad);
	expect(count == 0 && bad == 0, "cuMemsetD32");

	CK(cuMemsetD16(dc, 0xBEEF, (size_t)n * 2));
	CK(cuMemsetD8(dc + 3, 0x5A, 1001));
	CK(cuMemcpyDtoH(h16, dc, sz));
	for (i = 0, bad = 0; i < 2 * n; i++) {
		unsigned short want = 0xBEEF;
		unsigned char *bytesp = (unsigned char *)&want;
		unsigned short got = h16[i];

		/* bytes 3 .. 1003 were overwritten with 0x5A */
		if (2 * i >= 3 && 2 * i < 1004)
			bytesp[0] = 0x5A;
		if (2 * i + 1 >= 3 && 2 * i + 1 < 1004)
			bytesp[1] = 0x5A;
		bad += got != want;
	}
	printf("cuMemsetD16 + cuMemsetD8: %d wrong halves\n", bad);
	expect(bad == 0, "cuMemsetD16 + cuMemsetD8");

	/* ---- events on the stream ---- */
	CK(cuEventCreate(&ev0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&ev1, CU_EVENT_DEFAULT));
	scale = 1.25;
	tag = 2;
	CK(cuEventRecord(ev0, stream));
	CK(cuLaunchKernel(fvadd, grid, 1, 1, BLOCK, 1, 1, 0, stream, args,
			  NULL));
	CK(cuEventRecord(ev1, stream));
	CK(cuEventSynchronize(ev1));
	CK(cuEventQuery(ev1));
	CK(cuStreamQuery(stream));
	CK(cuEventElapsedTime(&ms, ev0, ev1));
	printf("TIME vadd on stream: %.3f ms\n", ms);
	expect(ms >= 0.0f, "elapsed time >= 0");
	CK(cuMemcpyDtoH(hc, dc, sz));
	check_vadd("launch on stream between events", ha, hb, hc, n, scale,
		   tag);

	/* ---- page-locked host memory, mapped into the device ---- */
	CK(cuMemAllocHost((void **)&hpin, sz));
	CK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				 (CUdeviceptr)(uintptr_t)hpin));
	printf("memory type of cuMemAllocHost pointer: %u\n", memtype);
	expect(memtype == CU_MEMORYTYPE_HOST, "cuMemAllocHost memory is HOST");
	CK(cuMemHostGetDevicePointer(&hdptr, hpin, 0));
	memset(hpin, 0, sz);
	{
		unsigned int base = 0x12345678u;
		void *fargs[3] = { &hdptr, &n, &base };

		CK(cuLaunchKernel(ffill, grid, 1, 1, BLOCK, 1, 1, 0, NULL, fargs,
				  NULL));
		CK(cuCtxSynchronize());
		for (i = 0, bad = 0; i < n; i++)
			bad += hpin[i] != (base ^ (unsigned int)i * 2654435761u);
	}
	printf("kernel write to mapped host memory: %d mismatches\n", bad);
	expect(bad == 0, "kernel write through cuMemHostGetDevicePointer");
	CK(cuMemsetD32Async(dc, 0xCAFEBABEu, (size_t)n, stream));
	CK(cuMemcpyDtoHAsync(hpin, dc, sz, stream));
	CK(cuStreamSynchronize(stream));
	for (i = 0, bad = 0; i < n; i++)
		bad += hpin[i] != 0xCAFEBABEu;
	for (i = 0; i < n; i++)
		hpin[i] = rng_u32();
	CK(cuMemcpyHtoDAsync(dd, hpin, sz, stream));
	CK(cuMemcpyDtoHAsync(hu, dd, sz, stream));
	CK(cuStreamSynchronize(stream));
	bad += memcmp(hu, hpin, sz) != 0;
	printf("async copies with pinned memory: %d mismatches\n", bad);
	expect(bad == 0, "async copies with cuMemAllocHost memory");
	CK(cuMemFreeHost(hpin));

	/* ---- texture objects: linear and pitch2D resources ---- */
	texsrc = malloc((size_t)TW * TH * sizeof(float));
	texout = malloc((size_t)TW * TH * sizeof(float));
	hhost = texsrc;
	if (!texsrc || !texout) {
		printf("FAIL malloc: out of memory\n");
		return 1;
	}
	for (i = 0; i < TW * TH; i++)
		texsrc[i] = rng_float();
	CK(cuMemAlloc(&dtex, (size_t)TN * sizeof(float)));
	CK(cuMemAlloc(&dtexout, (size_t)TW * TH * sizeof(float)));
	CK(cuMemcpyHtoD(dtex, texsrc, (size_t)TN * sizeof(float)));
	memset(&rd, 0, sizeof rd);
	rd.resType = CU_RESOURCE_TYPE_LINEAR;
	rd.res.linear.devPtr = dtex;
	rd.res.linear.format = CU_AD_FORMAT_FLOAT;
	rd.res.linear.numChannels = 1;
	rd.res.linear.sizeInBytes = (size_t)TN * sizeof(float);
	memset(&td, 0, sizeof td);
	td.filterMode = CU_TR_FILTER_MODE_POINT;
	CK(cuTexObjectCreate(&tex, &rd, &td, NULL));
	{
		void *targs[3] = { &tex, &dtexout, &tn };

		CK(cuLaunchKernel(ftexlin, (TN + BLOCK - 1) / BLOCK, 1, 1, BLOCK,
				  1, 1, 0, NULL, targs, NULL));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(texout, dtexout, (size_t)TN * sizeof(float)));
	bad = memcmp(texout, texsrc, (size_t)TN * sizeof(float)) != 0;
	printf("tex1Dfetch over linear memory: %s, checksum %.6e\n",
	       bad ? "mismatch" : "ok", checksum(texout, TN));
	expect(!bad, "tex1Dfetch over linear memory");
	CK(cuTexObjectDestroy(tex));

	CK(cuMemAllocPitch(&dpitch, &pitch, (size_t)TW * sizeof(float), TH,
			   sizeof(float)));
	expect(pitch >= (size_t)TW * sizeof(float), "pitch >= row width");
	memset(&cp, 0, sizeof cp);
	cp.srcMemoryType = CU_MEMORYTYPE_HOST;
	cp.srcHost = hhost;
	cp.srcPitch = (size_t)TW * sizeof(float);
	cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.dstDevice = dpitch;
	cp.dstPitch = pitch;
	cp.WidthInBytes = (size_t)TW * sizeof(float);
	cp.Height = TH;
	CK(cuMemcpy2D(&cp));
	memset(&rd, 0, sizeof rd);
	rd.resType = CU_RESOURCE_TYPE_PITCH2D;
	rd.res.pitch2D.devPtr = dpitch;
	rd.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
	rd.res.pitch2D.numChannels = 1;
	rd.res.pitch2D.width = TW;
	rd.res.pitch2D.height = TH;
	rd.res.pitch2D.pitchInBytes = pitch;
	memset(&td, 0, sizeof td);
	td.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
	td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
	td.filterMode = CU_TR_FILTER_MODE_POINT;
	CK(cuTexObjectCreate(&tex, &rd, &td, NULL));
	CK(cuMemsetD32(dtexout, 0xFFFFFFFFu, (size_t)TW * TH));
	{
		void *targs[4] = { &tex, &dtexout, &tw, &th };

		CK(cuLaunchKernel(ftex2d, (TW + 15) / 16, (TH + 15) / 16, 1, 16,
				  16, 1, 0, NULL, targs, NULL));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(texout, dtexout, (size_t)TW * TH * sizeof(float)));
	bad = memcmp(texout, texsrc, (size_t)TW * TH * sizeof(float)) != 0;
	printf("tex2D over pitch2D memory: %s, checksum %.6e\n",
	       bad ? "mismatch" : "ok", checksum(texout, TW * TH));
	expect(!bad, "tex2D over pitch2D memory");
	CK(cuTexObjectDestroy(tex));

	/* ---- teardown ---- */
	CK(cuEventDestroy(ev0));
	CK(cuEventDestroy(ev1));
	CK(cuStreamDestroy(stream));
	CK(cuMemFree(dpitch));
	CK(cuMemFree(dtex));
	CK(cuMemFree(dtexout));
	CK(cuMemFree(dbad));
	CK(cuMemFree(dd));
	CK(cuMemFree(dc));
	CK(cuMemFree(db));
	CK(cuMemFree(da));
	CK(cuLibraryUnload(lib));
	CK(cuModuleUnload(ptxmod));
	CK(cuModuleUnload(mod));
	CK(cuCtxSynchronize());
	CK(cuDevicePrimaryCtxRelease(dev));
	free(fatbin);
	free(ptx);
	free(ha);
	free(hb);
	free(hc);
	free(hu);
	free(h16);
	free(texsrc);
	free(texout);

	if (failures) {
		printf("FAIL drvapi (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS drvapi\n");
	return 0;
}
