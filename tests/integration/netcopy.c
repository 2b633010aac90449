// SPDX-License-Identifier: MIT
/*
 * netcopy: what moves bytes over a transport without shared memory (the
 * network one), checked byte for byte: pageable copies of sizes around
 * and past the data area's chunks both ways, synchronous and in stream
 * order, several chunks in flight; pinned memory (ordinary pages there,
 * staged); 2D copies of pageable memory; a module image; host functions
 * (launched, stream callbacks, more than the slots, a graph's host node),
 * whose slots that transport keeps in step at both ends; and where
 * "netcopy net" is asked, managed memory, whose blocks that transport
 * carries through the data area (written by the CPU, copied; set by the
 * device, read by the CPU), and pinned memory asked for a device
 * pointer (written through it by the device, read by the CPU, and the
 * other way round).  Run on any transport it passes too.  "small": copies of 5 MiB at most (an
 * emulated CPU).  "xen": the Xen transport (registered memory has no
 * device pointer there).  "nomodule": no module step (its image is the fake
 * driver's; on a real GPU the test programs load real ones).  Exits 1 if
 * a step failed.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

static const char image[] = "XGPU-FAKE-MODULE\n";

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* n bytes there and back through device memory: equal? */
static void round_trip(size_t n, CUstream s, uint8_t *src, uint8_t *dst)
{
	CUdeviceptr d;

	fill(src, n, (uint32_t)n);
	memset(dst, 0x5a, n);
	if (!OK(cuMemAlloc(&d, n ? n : 1)))
		return;
	if (s) {
		OK(cuMemcpyHtoDAsync(d, src, n, s));
		OK(cuMemcpyDtoHAsync(dst, d, n, s));
		OK(cuStreamSynchronize(s));
	} else {
		OK(cuMemcpyHtoD(d, src, n));
		OK(cuMemcpyDtoH(dst, d, n));
	}
	EXPECT(!memcmp(src, dst, n), "%zu bytes%s came back different", n,
	       s ? " (stream)" : "");
	OK(cuMemFree(d));
}

/* host functions: each appends a digit to *p (1: a host function, 2: a
 * stream callback that saw success) */
static void CUDA_CB note(void *p)
{
	*(int *)p = *(int *)p * 10 + 1;
}

static void CUDA_CB note_cb(CUstream s, CUresult status, void *p)
{
	(void)s;
	*(int *)p = *(int *)p * 10 + (status == CUDA_SUCCESS ? 2 : 9);
}

static void CUDA_CB count(void *p)
{
	++*(int *)p;
}

/* host functions run in this process, in stream order: launched, as
 * callbacks, more of them than there are slots (each slot used again
 * once the worker freed it), and as a graph's host node */
static void host_functions(CUstream s)
{
	int order = 0, n = 0, g = 0;
	CUgraph graph;
	CUgraphExec exec;

	begin("host-functions");
	if (OK(cuLaunchHostFunc(s, note, &order)) &&
	    OK(cuStreamAddCallback(s, note_cb, &order, 0)) &&
	    OK(cuLaunchHostFunc(s, note, &order)) &&
	    OK(cuStreamSynchronize(s)))
		EXPECT(order == 121, "host functions ran as %d, want 121",
		       order);
	for (int i = 0; i < 300; i++)
		if (!OK(cuLaunchHostFunc(s, count, &n)))
			break;
	if (OK(cuStreamSynchronize(s)))
		EXPECT(n == 300, "%d of 300 host functions ran", n);
	if (OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)) &&
	    OK(cuLaunchHostFunc(s, count, &g)) &&
	    OK(cuStreamEndCapture(s, &graph))) {
		if (OK(cuGraphInstantiate(&exec, graph, 0))) {
			for (int i = 0; i < 3; i++)
				OK(cuGraphLaunch(exec, s));
			if (OK(cuStreamSynchronize(s)))
				EXPECT(g == 3, "the host node ran %d times, "
				       "want 3", g);
			cuGraphExecDestroy(exec);
		}
		cuGraphDestroy(graph);
	}
	end();
}

/*
 * Registered memory a kernel reaches (cuMemHostRegister with DEVICEMAP,
 * cuMemHostGetDevicePointer).  Over the network and through a chain,
 * pinned memory of the GPU host's worker at the range's own address,
 * kept equal to it by comparison (xgpulib_shadow.h): the device pointer
 * is the host pointer, the device's writes are seen after a synchronize,
 * the CPU's by the next launch, a byte the CPU wrote meanwhile is kept.
 * A registration without DEVICEMAP gets the same at the first question
 * (through a chain the worker asks its driver then).  Under the address
 * sanitizer the GPU host's worker has its own sanitizer heap where the
 * program's malloc puts the range: the network takes device memory
 * elsewhere, a chain stages the registration.  xen: the program is on the Xen
 * transport, where a registration has no device pointer at all (only
 * the pinned part runs); module: the fake driver's kernel is there.
 */
static void registered_mapped(bool net, bool xen, bool module, CUstream s)
{
	size_t n = 3 * 4096 + 100;
	uint8_t *base = malloc(n + 64), *x = base ? base + 16 : NULL;
	uint8_t back[16] = { 0 };
	uint32_t cells[8] = { 0 };
	CUdeviceptr dx = 0, dd = 0;
	unsigned int fl = 0;
	CUmodule m = NULL;
	CUfunction f = NULL;

	begin("registered-mapped");
	if (!x || !OK(cuMemAlloc(&dd, n)) ||
	    (module && (!OK(cuModuleLoadData(&m, image)) ||
			!OK(cuModuleGetFunction(&f, m, "xgpu_fake_fill")))))
		goto out;
	memset(x, 0x11, n);
	if (xen)
		goto pinned;
	if (!OK(cuMemHostRegister(x, n, CU_MEMHOSTREGISTER_DEVICEMAP)))
		goto out;
#ifdef __SANITIZE_ADDRESS__
	/* through a chain the program's registration is zero copy only at
	 * its own address, which the GPU host's worker reserves for it;
	 * under the address sanitizer malloc's memory lies where that
	 * worker's sanitizer keeps its own heap, so there it is staged */
	if (!net && cuMemHostGetDevicePointer(&dx, x, 0) ==
			    CUDA_ERROR_NOT_SUPPORTED) {
		printf("registered-mapped: staged through the chain (the "
		       "address is the sanitizer's in the worker)\n");
		OK(cuMemHostUnregister(x));
		goto pinned;
	}
#endif
	if (OK(cuMemHostGetDevicePointer(&dx, x, 0))) {
		printf("registered-mapped: the device pointer is %s\n",
		       dx == (CUdeviceptr)(uintptr_t)x ? "the host pointer" :
							  "another address");
#ifndef __SANITIZE_ADDRESS__
		EXPECT(dx == (CUdeviceptr)(uintptr_t)x, "device pointer "
		       "%#llx, host pointer %p", (unsigned long long)dx,
		       (void *)x);
#endif
		/* the device writes, the CPU reads after a synchronize */
		if (OK(cuMemsetD8(dx + 100, 0x22, 5000)) &&
		    OK(cuCtxSynchronize()))
			EXPECT(x[99] == 0x11 && x[100] == 0x22 &&
			       x[5099] == 0x22 && x[5100] == 0x11,
			       "after a memset the CPU reads %#x %#x %#x %#x",
			       x[99], x[100], x[5099], x[5100]);
		/* the CPU writes, the device reads */
		memset(x + 8000, 0x33, 10);
		if (OK(cuMemcpyDtoD(dd, dx, n)) &&
		    OK(cuMemcpyDtoH(back, dd + 8000, 16)))
			EXPECT(back[0] == 0x33 && back[9] == 0x33 &&
			       back[10] == 0x11, "the device reads %#x %#x "
			       "%#x", back[0], back[9], back[10]);
		/* a kernel writes, the CPU writes elsewhere meanwhile: both
		 * stay (a memset where the fake kernel is not there) */
		if (!module) {
			uint32_t v = 0xabababab;

			if (OK(cuMemsetD32Async(dx + 4096, v, 8, s))) {
				x[300] = 0x55;
				if (OK(cuStreamSynchronize(s))) {
					memcpy(cells, x + 4096, sizeof(cells));
					EXPECT(cells[0] == v && cells[7] == v &&
					       x[300] == 0x55,
					       "cells %#x %#x, CPU's byte %#x",
					       cells[0], cells[7], x[300]);
				}
			}
		} else {
			CUdeviceptr at = dx + 4096;
			uint32_t v = 0xabcd0123u;
			int cnt = 8;
			void *args[] = { &at, &v, &cnt };

			if (OK(cuLaunchKernel(f, 1, 1, 1, 8, 1, 1, 0, s, args,
					      NULL))) {
				x[300] = 0x55;
				if (OK(cuStreamSynchronize(s))) {
					memcpy(cells, x + 4096, sizeof(cells));
					EXPECT(cells[0] == v && cells[7] == v &&
					       x[300] == 0x55 &&
					       x[4096 + 32] == 0x22,
					       "cells %#x %#x, CPU's byte "
					       "%#x, next %#x", cells[0],
					       cells[7], x[300], x[4096 + 32]);
				}
			}
		}
		/* the CPU's byte reaches the device at the next launch */
		if (OK(cuMemcpyDtoD(dd, dx + 300, 1)) &&
		    OK(cuMemcpyDtoH(back, dd, 1)))
			EXPECT(back[0] == 0x55, "the device reads %#x, want "
			       "0x55", back[0]);
		if (OK(cuMemHostGetFlags(&fl, x)))
			EXPECT(fl & CU_MEMHOSTREGISTER_DEVICEMAP,
			       "flags %#x", fl);
	}
	OK(cuMemHostUnregister(x));
	EXPECT(x[100] == 0x22 && x[300] == 0x55, "after unregistering %#x "
	       "%#x", x[100], x[300]);
	/* no DEVICEMAP: asked for, it is made (over the network by this
	 * library, through a chain by the worker's: HOSTMEM_DPTR) */
	if (OK(cuMemHostRegister(x, n, 0))) {
		CUresult rc = cuMemHostGetDevicePointer(&dx, x + 10, 0);

#ifdef __SANITIZE_ADDRESS__
		if (!net && rc == CUDA_ERROR_NOT_SUPPORTED)
			printf("registered-mapped: asked later, staged "
			       "through the chain (as above)\n");
		else
#endif
		if (OK(rc)) {
#ifndef __SANITIZE_ADDRESS__
			/* (under the sanitizer the network's fallback
			 * address, as above) */
			EXPECT(dx == (CUdeviceptr)(uintptr_t)(x + 10),
			       "asked later: device pointer %#llx, host "
			       "pointer %p", (unsigned long long)dx,
			       (void *)(x + 10));
#endif
			if (OK(cuMemsetD8(dx, 0x66, 1)) &&
			    OK(cuCtxSynchronize()))
				EXPECT(x[10] == 0x66, "asked later: the CPU "
				       "reads %#x", x[10]);
		}
		OK(cuMemHostUnregister(x));
	}
	/* through a chain, pinned memory too (over the network directly:
	 * mapped-pinned-on-the-network) */
pinned:
	if (!net) {
		uint8_t *p = NULL;
		CUdeviceptr dp = 0;

		if (OK(cuMemAllocHost((void **)&p, 65536))) {
			memset(p, 0x11, 65536);
			if (OK(cuMemHostGetDevicePointer(&dp, p + 4096, 0)) &&
			    OK(cuMemsetD8(dp, 0x77, 100)) &&
			    OK(cuCtxSynchronize()))
				EXPECT(p[4095] == 0x11 && p[4096] == 0x77 &&
				       p[4195] == 0x77 && p[4196] == 0x11,
				       "pinned: the CPU reads %#x %#x %#x %#x",
				       p[4095], p[4096], p[4195], p[4196]);
			p[5000] = 0x78;
			if (dp && OK(cuMemcpyDtoD(dd, dp + 904, 1)) &&
			    OK(cuMemcpyDtoH(back, dd, 1)))
				EXPECT(back[0] == 0x78, "pinned: the device "
				       "reads %#x, want 0x78", back[0]);
			OK(cuMemFreeHost(p));
		}
	}
out:
	if (m)
		OK(cuModuleUnload(m));
	if (dd)
		OK(cuMemFree(dd));
	free(base);
	end();
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {
		1, 127, 4096, 65537, (4u << 20) - 1, (4u << 20) + 3,
		(64u << 20) + 4097, 150u << 20,
	};
	bool net = false, xen = false, module = true;
	size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	size_t big = 150u << 20;
	uint8_t *a = malloc(big), *b = malloc(big);
	CUcontext ctx;
	CUdevice dev;
	CUstream s;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "net"))
			net = true;
		else if (!strcmp(argv[i], "small"))
			nsizes = 6;	/* up to 4 MiB + 3 */
		else if (!strcmp(argv[i], "nomodule"))
			module = false;
		else if (!strcmp(argv[i], "xen"))
			xen = true;
	}
	if (!a || !b || cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuCtxCreate(&ctx, NULL, 0, dev) ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
		printf("FAIL netcopy: set-up\n");
		return 1;
	}

	begin("pageable");
	for (size_t i = 0; i < nsizes; i++)
		round_trip(sizes[i], NULL, a, b);
	end();

	begin("pageable-stream");
	for (size_t i = 0; i < nsizes; i++)
		round_trip(sizes[i], s, a, b);
	end();

	begin("pinned");
	{
		uint8_t *p = NULL, *q = NULL;
		size_t n = (9u << 20) + 5;
		CUdeviceptr d;

		if (OK(cuMemAllocHost((void **)&p, n)) &&
		    OK(cuMemHostAlloc((void **)&q, n, 0)) &&
		    OK(cuMemAlloc(&d, n))) {
			fill(p, n, 7);
			memset(q, 0, n);
			OK(cuMemcpyHtoDAsync(d, p, n, s));
			OK(cuMemcpyDtoHAsync(q, d, n, s));
			OK(cuStreamSynchronize(s));
			EXPECT(!memcmp(p, q, n), "pinned bytes differ");
			OK(cuMemFree(d));
		}
		if (p)
			OK(cuMemFreeHost(p));
		if (q)
			OK(cuMemFreeHost(q));
	}
	end();

	begin("2d");
	{
		const size_t w = 1000, h = 300, hp = 1024;
		CUdeviceptr d;
		size_t dp;
		CUDA_MEMCPY2D c;

		fill(a, hp * h, 11);
		memset(b, 0, hp * h);
		if (OK(cuMemAllocPitch(&d, &dp, w, h, 4))) {
			memset(&c, 0, sizeof(c));
			c.srcMemoryType = CU_MEMORYTYPE_HOST;
			c.srcHost = a;
			c.srcPitch = hp;
			c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
			c.dstDevice = d;
			c.dstPitch = dp;
			c.WidthInBytes = w;
			c.Height = h;
			OK(cuMemcpy2D(&c));
			memset(&c, 0, sizeof(c));
			c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
			c.srcDevice = d;
			c.srcPitch = dp;
			c.dstMemoryType = CU_MEMORYTYPE_HOST;
			c.dstHost = b;
			c.dstPitch = hp;
			c.WidthInBytes = w;
			c.Height = h;
			OK(cuMemcpy2D(&c));
			for (size_t r = 0; r < h; r++)
				EXPECT(!memcmp(a + r * hp, b + r * hp, w),
				       "row %zu differs", r);
			OK(cuMemFree(d));
		}
	}
	end();

	if (module) {
		CUmodule m;
		CUfunction f;

		begin("module");
		if (OK(cuModuleLoadData(&m, image))) {
			OK(cuModuleGetFunction(&f, m, "xgpu_fake_fill"));
			OK(cuModuleUnload(m));
		}
		end();
	}

	if (net) {
		/* coherent managed memory, its blocks through the data area
		 * (the managed test does the rest over the network) */
		begin("managed-on-the-network");
		{
			CUdeviceptr d;
			uint8_t *p, back[64];

			if (OK(cuMemAllocManaged(&d, 3u << 20,
						 CU_MEM_ATTACH_GLOBAL))) {
				p = (uint8_t *)(uintptr_t)d;
				memset(p + (1u << 20), 0x5a, sizeof(back));
				/* written back before the copy reads it */
				OK(cuMemcpyDtoH(back, d + (1u << 20),
						sizeof(back)));
				EXPECT(back[0] == 0x5a && back[63] == 0x5a,
				       "copied %#x %#x, want 0x5a", back[0],
				       back[63]);
				/* fetched at the CPU's next touch */
				OK(cuMemsetD8(d + (2u << 20), 0xa5, 4096));
				OK(cuCtxSynchronize());
				EXPECT(p[2u << 20] == 0xa5 &&
				       p[(2u << 20) + 4095] == 0xa5 &&
				       p[1u << 20] == 0x5a,
				       "read %#x %#x %#x", p[2u << 20],
				       p[(2u << 20) + 4095], p[1u << 20]);
				OK(cuMemFree(d));
			}
			/* and the channel goes on */
			round_trip(12345, s, a, b);
		}
		end();
	}
	if (net) {
		/* pinned memory asked for a device pointer: the buffer
		 * becomes coherent, the device writes through that pointer
		 * and the CPU sees it, and the other way round */
		begin("mapped-pinned-on-the-network");
		{
			uint8_t *p = NULL, back[4] = { 0 };
			CUdeviceptr dp = 0, again = 0, dd = 0;

			if (OK(cuMemAllocHost((void **)&p, 65536)) &&
			    OK(cuMemAlloc(&dd, 65536))) {
				unsigned int mt = 0;

				/* host memory, before and after */
				if (OK(cuPointerGetAttribute(&mt,
					CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					(CUdeviceptr)(uintptr_t)(p + 10))))
					EXPECT(mt == CU_MEMORYTYPE_HOST,
					       "memory type %u", mt);
				memset(p, 0x11, 65536);
				if (OK(cuMemHostGetDevicePointer(&dp, p + 4096,
								 0)) &&
				    OK(cuMemsetD8(dp, 0x22, 4096)) &&
				    OK(cuCtxSynchronize()))
					EXPECT(p[4096] == 0x22 &&
					       p[8191] == 0x22 &&
					       p[8192] == 0x11 && p[0] == 0x11,
					       "the CPU reads %#x %#x %#x %#x",
					       p[4096], p[8191], p[8192], p[0]);
				p[100] = 0x33;
				if (dp && OK(cuMemcpyDtoH(back, dp - 4096 + 100,
							 1)))
					EXPECT(back[0] == 0x33, "the device "
					       "reads %#x, want 0x33", back[0]);
				mt = 0;
				if (OK(cuPointerGetAttribute(&mt,
					CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					(CUdeviceptr)(uintptr_t)(p + 10))))
					EXPECT(mt == CU_MEMORYTYPE_HOST,
					       "memory type %u once coherent",
					       mt);
				if (OK(cuMemHostGetDevicePointer(&again, p,
								 0)))
					EXPECT(again == dp - 4096, "a second "
					       "device pointer %#llx, want "
					       "%#llx",
					       (unsigned long long)again,
					       (unsigned long long)(dp - 4096));
				/* copies with the buffer as their host side */
				memset(p + 20000, 0x44, 1000);
				if (OK(cuMemcpyHtoD(dd, p + 20000, 1000)) &&
				    OK(cuMemcpyDtoH(back, dd + 999, 1)))
					EXPECT(back[0] == 0x44, "copied %#x, "
					       "want 0x44", back[0]);
				if (OK(cuMemsetD8(dd, 0x55, 16)) &&
				    OK(cuMemcpyDtoH(p + 30000, dd, 16)))
					EXPECT(p[30000] == 0x55 &&
					       p[30015] == 0x55 &&
					       p[30016] == 0x11,
					       "copied back %#x %#x %#x",
					       p[30000], p[30015], p[30016]);
			}
			if (dd)
				OK(cuMemFree(dd));
			if (p)
				OK(cuMemFreeHost(p));
		}
		end();
	}
	registered_mapped(net, xen, module, s);
	host_functions(s);

	cuStreamDestroy(s);
	cuCtxDestroy(ctx);
	free(a);
	free(b);
	printf("%s netcopy: %d passed, %d failed\n", failed ? "FAIL" : "PASS",
	       passed, failed);
	return failed ? 1 : 0;
}
