// SPDX-License-Identifier: MIT
/*
 * hostreg: cuMemHostRegister on the program's own memory, against the fake
 * driver over the local transport.  The registered pages become shared
 * memory at the same address (their contents kept), the worker maps them
 * there and registers them, so that the device pointer is the host
 * pointer: a fake kernel and device-to-device copies use it in place, and
 * copies from or to it are single requests.  Memory that cannot be shared
 * (a file mapping) falls back to staged copies.
 *
 *   hostreg [QUOTA_MB]   QUOTA_MB: the daemon's --pinned-mb, to test it
 *
 * Prints "PASS step" or "FAIL step: why" for every step, and exits
 * non-zero if any failed.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "steps.h"

#define EXPECT_RC(call, want)                                                \
	do {                                                                 \
		CUresult rc_ = (call);                                       \
		if (rc_ != (want))                                           \
			failf("%s: %s, expected %s", #call, ename(rc_),      \
			      ename(want));                                  \
	} while (0)

static uint8_t pat(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed;

	return (uint8_t)(x >> 24);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(i, seed);
}

/* index of the first byte that differs from the pattern, n if none */
static size_t check(const uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return i;
	return n;
}

/* the name of the mapping holding p in /proc/self/maps ("" if none) */
static void mapping_of(const void *p, char *name, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	name[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char path[256] = "";

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255[^\n]", &lo, &hi,
			   path) < 2)
			continue;
		if ((uintptr_t)p >= lo && (uintptr_t)p < hi) {
			snprintf(name, len, "%s", path);
			break;
		}
	}
	fclose(f);
}

static bool shared_pages(const void *p)
{
	char name[256];

	mapping_of(p, name, sizeof(name));
	return strstr(name, "memfd:xgpu-hostreg") != NULL;
}

/*
 * Under AddressSanitizer the small allocations of every process come from
 * the same fixed addresses, which the worker (built with it too) holds:
 * such memory cannot be mapped at the program's address in the worker,
 * and is staged (the unwind step tests that).  The heap buffer is then an
 * anonymous mapping of its own.  (The library may be the sanitized one
 * while this program is not: ask whether the runtime is loaded.)
 */
static bool under_asan(void)
{
	return dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
}

#define UNDER_ASAN under_asan()

static uint8_t *buf_alloc(size_t n)
{
	void *p;

	if (!UNDER_ASAN)
		return malloc(n);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void buf_free(uint8_t *p, size_t n)
{
	if (!UNDER_ASAN)
		free(p);
	else if (p)
		munmap(p, n);
}

static const char fake_image[] = "XGPU-FAKE-MODULE\n"
				 "# kernels: xgpu_fake_vadd\n";

static CUcontext ctx;
static CUmodule mod;
static CUfunction vadd;

/* the test's heap buffer: the registered range starts 40 bytes in, is not
 * page aligned, and has neighbours on its first and last pages */
#define BUF_BYTES	(3 * 4096 + 200)
#define REG_OFF		40
#define REG_BYTES	(2 * 4096 + 300)
static uint8_t *buf, *reg;

static void test_register(void)
{
	begin("hostreg-register");
	buf = buf_alloc(BUF_BYTES);
	if (!buf) {
		failf("malloc");
		end();
		return;
	}
	fill(buf, BUF_BYTES, 1);
	reg = buf + REG_OFF;
	if (OK(cuMemHostRegister(reg, REG_BYTES,
				 CU_MEMHOSTREGISTER_PORTABLE |
					 CU_MEMHOSTREGISTER_DEVICEMAP))) {
		size_t bad = check(buf, BUF_BYTES, 1);

		EXPECT(bad == BUF_BYTES, "byte %zu of the buffer changed", bad);
		EXPECT(shared_pages(reg) && shared_pages(reg + REG_BYTES - 1),
		       "the registered pages are not shared memory");
	}
	end();
}

static void test_attrs(void)
{
	CUdeviceptr d = 0, dp = 0, hp = 0;
	unsigned int flags = 0, type = 0, managed = 9, mapped = 0;
	CUpointer_attribute attrs[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
		CU_POINTER_ATTRIBUTE_HOST_POINTER,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
		CU_POINTER_ATTRIBUTE_MAPPED,
	};
	void *data[] = { &type, &dp, &hp, &managed, &mapped };

	begin("hostreg-attributes");
	if (OK(cuMemHostGetDevicePointer(&d, reg + 100, 0)))
		EXPECT(d == (CUdeviceptr)(uintptr_t)(reg + 100),
		       "device pointer is not the host pointer");
	if (OK(cuMemHostGetFlags(&flags, reg)))
		EXPECT(flags & CU_MEMHOSTREGISTER_DEVICEMAP, "flags %#x",
		       flags);
	if (OK(cuPointerGetAttributes(5, attrs, data,
				      (CUdeviceptr)(uintptr_t)(reg + 8))))
		EXPECT(type == CU_MEMORYTYPE_HOST &&
			       dp == (CUdeviceptr)(uintptr_t)(reg + 8) &&
			       hp == dp && managed == 0 && mapped == 1,
		       "type %u, dptr %s, hptr %s, managed %u, mapped %u",
		       type, dp == (CUdeviceptr)(uintptr_t)(reg + 8) ? "ok" :
		       "wrong", hp == dp ? "ok" : "wrong", managed, mapped);
	end();
}

static void test_copies(void)
{
	uint8_t *back = malloc(REG_BYTES);
	CUdeviceptr d = 0;
	CUstream s = NULL;
	size_t bad;

	begin("hostreg-copies");
	if (!back || !OK(cuMemAlloc(&d, REG_BYTES)) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)))
		goto out;
	/* host to device from it, device to host into it */
	if (!OK(cuMemcpyHtoD(d, reg, REG_BYTES)) ||
	    !OK(cuMemcpyDtoH(back, d, REG_BYTES)))
		goto out;
	/* reg is 40 bytes into the pattern */
	for (bad = 0; bad < REG_BYTES && back[bad] == pat(bad + REG_OFF, 1);
	     bad++)
		;
	EXPECT(bad == REG_BYTES, "byte %zu wrong after a round trip", bad);
	fill(back, REG_BYTES, 7);
	if (!OK(cuMemcpyHtoDAsync(d, back, REG_BYTES, s)) ||
	    !OK(cuMemcpyDtoHAsync(reg, d, REG_BYTES, s)) ||
	    !OK(cuStreamSynchronize(s)))
		goto out;
	bad = check(reg, REG_BYTES, 7);
	EXPECT(bad == REG_BYTES, "byte %zu wrong after an async copy", bad);
	bad = check(buf, REG_OFF, 1);
	EXPECT(bad == REG_OFF, "a neighbour before it changed");
	for (bad = REG_OFF + REG_BYTES; bad < BUF_BYTES &&
	     buf[bad] == pat(bad, 1); bad++)
		;
	EXPECT(bad == BUF_BYTES, "a neighbour after it changed");
	/* the device reads and writes it through its device pointer: only
	 * the worker's registration at the same address makes this work */
	if (!OK(cuMemsetD8(d, 0x5a, REG_BYTES)) ||
	    !OK(cuMemcpyDtoD((CUdeviceptr)(uintptr_t)reg, d, 1000)) ||
	    !OK(cuMemcpyDtoD(d + 1000, (CUdeviceptr)(uintptr_t)(reg + 2000),
			     1000)) ||
	    !OK(cuMemcpyDtoH(back, d, 2000)))
		goto out;
	for (bad = 0; bad < 1000 && reg[bad] == 0x5a; bad++)
		;
	EXPECT(bad == 1000, "the device's write through it lost at %zu", bad);
	for (bad = 0; bad < 1000 && back[1000 + bad] == pat(2000 + bad, 7);
	     bad++)
		;
	EXPECT(bad == 1000, "the device's read through it wrong at %zu", bad);
out:
	if (s)
		cuStreamDestroy(s);
	if (d)
		cuMemFree(d);
	free(back);
	end();
}

/* a kernel reads two arrays in registered memory and writes a third */
static void test_kernel(void)
{
	float *a = (float *)(void *)(((uintptr_t)reg + 15) & ~(uintptr_t)15);
	int n = 512;
	float *b = a + n, *c = b + n;
	CUdeviceptr da = (CUdeviceptr)(uintptr_t)a;
	CUdeviceptr db = (CUdeviceptr)(uintptr_t)b;
	CUdeviceptr dc = (CUdeviceptr)(uintptr_t)c;
	void *params[] = { &da, &db, &dc, &n };
	int bad = -1;

	begin("hostreg-kernel");
	if (!OK(cuModuleLoadData(&mod, fake_image)) ||
	    !OK(cuModuleGetFunction(&vadd, mod, "xgpu_fake_vadd")))
		goto out;
	for (int round = 0; round < 2 && bad < 0; round++) {
		for (int i = 0; i < n; i++) {
			a[i] = (float)(i + round);
			b[i] = (float)(2 * i);
			c[i] = -1;
		}
		if (!OK(cuLaunchKernel(vadd, 1, 1, 1, 1, 1, 1, 0, NULL,
				       params, NULL)) ||
		    !OK(cuCtxSynchronize()))
			goto out;
		for (int i = 0; i < n && bad < 0; i++)
			if (c[i] != (float)(3 * i + round))
				bad = i;
	}
	EXPECT(bad < 0, "c[%d] = %g", bad, bad < 0 ? 0.0 : (double)c[bad]);
out:
	end();
}

/* a forked child's writes to registered memory stay the child's */
static void test_fork(void)
{
	uint8_t *snap = malloc(BUF_BYTES);
	int status = -1;
	pid_t pid;

	begin("hostreg-fork");
	if (!snap) {
		failf("malloc");
		goto out;
	}
	memcpy(snap, buf, BUF_BYTES);
	pid = fork();
	if (pid == 0) {
		/* the registered bytes and a neighbour on the same page */
		memset(reg, 0xee, 100);
		buf[0] ^= 0xff;
		_exit(reg[99] == 0xee && shared_pages(reg) == false ? 0 : 3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		failf("fork");
		goto out;
	}
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the child's view: status %#x", status);
	EXPECT(!memcmp(snap, buf, BUF_BYTES),
	       "the child's writes reached the parent");
	EXPECT(shared_pages(reg), "the parent's pages are no longer shared");
out:
	free(snap);
	end();
}

static void test_twice(void)
{
	void *pinned = NULL;
	uint8_t *pg = (uint8_t *)((uintptr_t)reg & ~(uintptr_t)4095);

	begin("hostreg-twice");
	EXPECT_RC(cuMemHostRegister(reg + 10, 10, 0),
		  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	/* a neighbour on the same page: registrations are page granular */
	EXPECT_RC(cuMemHostRegister(buf, 8, 0),
		  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	EXPECT_RC(cuMemHostUnregister(reg + 1),
		  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	EXPECT_RC(cuMemFreeHost(pg), CUDA_ERROR_INVALID_VALUE);
	if (OK(cuMemHostAlloc(&pinned, 8192, 0))) {
		EXPECT_RC(cuMemHostRegister(pinned, 4096, 0),
			  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
		EXPECT_RC(cuMemHostUnregister(pinned),
			  CUDA_ERROR_INVALID_VALUE);
		OK(cuMemFreeHost(pinned));
	}
	EXPECT_RC(cuMemHostRegister(buf, 8, 0x100), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemHostRegister(NULL, 8, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemHostRegister(buf, 0, 0), CUDA_ERROR_INVALID_VALUE);
	end();
}

static void test_unregister(void)
{
	CUdeviceptr d;
	size_t bad;

	begin("hostreg-unregister");
	fill(reg, REG_BYTES, 9);
	if (!OK(cuMemHostUnregister(reg)))
		goto out;
	bad = check(reg, REG_BYTES, 9);
	EXPECT(bad == REG_BYTES, "byte %zu lost at unregister", bad);
	EXPECT(!shared_pages(reg), "the pages are still shared memory");
	EXPECT_RC(cuMemHostGetDevicePointer(&d, reg, 0),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemHostUnregister(reg),
		  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	/* registrable again, and the heap is still the heap */
	if (OK(cuMemHostRegister(reg, REG_BYTES, 0))) {
		EXPECT(shared_pages(reg), "the second registration is staged");
		OK(cuMemHostUnregister(reg));
	}
	bad = check(reg, REG_BYTES, 9);
	EXPECT(bad == REG_BYTES, "byte %zu lost at the second round", bad);
out:
	buf_free(buf, BUF_BYTES);
	buf = reg = NULL;
	end();
}

/* a large malloc (its own mmap), page aligned or not */
static void test_large(void)
{
	const size_t n = 3u << 20;
	uint8_t *p = malloc(n + 64), *back = malloc(n);
	CUdeviceptr d = 0, dp = 0;
	size_t bad;

	begin("hostreg-large");
	if (!p || !back || !OK(cuMemAlloc(&d, n)))
		goto out;
	fill(p + 64, n, 3);
	if (!OK(cuMemHostRegister(p + 64, n, CU_MEMHOSTREGISTER_DEVICEMAP)))
		goto out;
	EXPECT(shared_pages(p + 64), "not shared memory");
	if (OK(cuMemHostGetDevicePointer(&dp, p + 64, 0)) &&
	    OK(cuMemcpyDtoD(d, dp, n)) && OK(cuMemcpyDtoH(back, d, n))) {
		bad = check(back, n, 3);
		EXPECT(bad == n, "byte %zu wrong", bad);
	}
	OK(cuMemHostUnregister(p + 64));
	bad = check(p + 64, n, 3);
	EXPECT(bad == n, "byte %zu lost at unregister", bad);
out:
	if (d)
		cuMemFree(d);
	free(p);
	free(back);
	end();
}

/*
 * Memory the worker cannot map at the program's address: the pages were
 * moved into shared memory, the worker refused, the library put them back
 * (private again, contents kept) and stages the copies.  Only under
 * AddressSanitizer is such an address known (see UNDER_ASAN).
 */
static void test_unwind(void)
{
	const size_t n = 5000;
	uint8_t *p = malloc(n), *back = malloc(n);
	CUdeviceptr d = 0, dp;
	size_t bad;

	begin("hostreg-unwind");
	if (!p || !back || !OK(cuMemAlloc(&d, n)))
		goto out;
	fill(p, n, 13);
	if (!OK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_DEVICEMAP)))
		goto out;
	EXPECT(!shared_pages(p), "the pages stayed shared memory");
	EXPECT_RC(cuMemHostGetDevicePointer(&dp, p, 0),
		  CUDA_ERROR_NOT_SUPPORTED);
	bad = check(p, n, 13);
	EXPECT(bad == n, "byte %zu lost in the unwind", bad);
	if (OK(cuMemcpyHtoD(d, p, n)) && OK(cuMemcpyDtoH(back, d, n))) {
		bad = check(back, n, 13);
		EXPECT(bad == n, "staged copy wrong at %zu", bad);
	}
	OK(cuMemHostUnregister(p));
out:
	if (d)
		cuMemFree(d);
	free(p);
	free(back);
	end();
}

/* a file mapping cannot move into shared memory: registered, staged */
static void test_file(void)
{
	char path[] = "/tmp/xgpu-hostreg.XXXXXX";
	const size_t n = 3 * 4096;
	uint8_t *p = MAP_FAILED, *back = malloc(n);
	CUdeviceptr d = 0, dp;
	unsigned int type = 0, mapped = 9;
	size_t bad;
	int fd;

	begin("hostreg-file");
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)n) < 0) {
		failf("temporary file");
		goto out;
	}
	unlink(path);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || !back || !OK(cuMemAlloc(&d, n))) {
		failf("setup");
		goto out;
	}
	fill(p, n, 5);
	if (!OK(cuMemHostRegister(p + 100, n - 200, 0)))
		goto out;
	bad = check(p, n, 5);
	EXPECT(bad == n, "byte %zu changed", bad);
	EXPECT(!shared_pages(p), "a file mapping was moved");
	EXPECT_RC(cuMemHostGetDevicePointer(&dp, p + 100, 0),
		  CUDA_ERROR_NOT_SUPPORTED);
	if (OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     (CUdeviceptr)(uintptr_t)(p + 200))) &&
	    OK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED,
				     (CUdeviceptr)(uintptr_t)(p + 200))))
		EXPECT(type == CU_MEMORYTYPE_HOST && mapped == 0,
		       "type %u, mapped %u", type, mapped);
	if (OK(cuMemcpyHtoD(d, p + 100, n - 200)) &&
	    OK(cuMemcpyDtoH(back, d, n - 200))) {
		for (bad = 0; bad < n - 200 && back[bad] == pat(bad + 100, 5);
		     bad++)
			;
		EXPECT(bad == n - 200, "staged copy wrong at %zu", bad);
	}
	OK(cuMemHostUnregister(p + 100));
out:
	if (d)
		cuMemFree(d);
	if (p != MAP_FAILED)
		munmap(p, n);
	if (fd >= 0)
		close(fd);
	free(back);
	end();
}

/*
 * Registered memory is pinned Dom0 memory: past the worker's quota
 * (xen-gpubackd --pinned-mb, quota_mb here) a registration is staged and
 * an allocation of pinned memory refused.
 */
static void test_quota(unsigned long quota_mb)
{
	const size_t n = (quota_mb + 8) << 20;
	uint8_t *p = malloc(n);
	void *pinned = NULL;
	CUdeviceptr dp;
	size_t bad;

	begin("hostreg-quota");
	if (!p) {
		failf("malloc");
		goto out;
	}
	fill(p, n, 11);
	if (OK(cuMemHostRegister(p, n, 0))) {
		EXPECT(!shared_pages(p), "registered past the quota");
		EXPECT_RC(cuMemHostGetDevicePointer(&dp, p, 0),
			  CUDA_ERROR_NOT_SUPPORTED);
		bad = check(p, n, 11);
		EXPECT(bad == n, "byte %zu lost in the fallback", bad);
		OK(cuMemHostUnregister(p));
	}
	EXPECT_RC(cuMemHostAlloc(&pinned, n, 0), CUDA_ERROR_OUT_OF_MEMORY);
	if (pinned)
		cuMemFreeHost(pinned);
out:
	free(p);
	end();
}

int main(int argc, char **argv)
{
	CUdevice dev;

	begin("hostreg-init");
	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx))) {
		end();
		return 1;
	}
	end();
	test_register();
	if (buf) {
		test_attrs();
		test_copies();
		test_kernel();
		test_fork();
		test_twice();
		test_unregister();
	}
	test_large();
	test_file();
	if (UNDER_ASAN)
		test_unwind();
	if (argc > 1)
		test_quota(strtoul(argv[1], NULL, 10));
	cuDevicePrimaryCtxRelease(dev);
	return failed ? 1 : 0;
}
