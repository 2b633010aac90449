// SPDX-License-Identifier: MIT
/*
 * managedvar: __managed__ variables of a module and of a library, as a
 * program built with nvcc uses them (cudart looks them up with
 * cuModuleGetGlobal or cuLibraryGetManaged and the host code goes through
 * the address): the host reads their initial values, writes them, a
 * kernel reads and updates them, the host reads what the kernel wrote,
 * several rounds.  The fake driver's modules hold two (fakecuda.h), in a
 * managed allocation that starts and ends inside a page.  Also: a second
 * lookup gives the same address, the pointer attributes say managed,
 * cuMemFree refuses the address, a library's module shares the library's
 * variables, a non-managed name is refused by cuLibraryGetManaged,
 * unloading unmaps the pages, and variables looked up with no current
 * context (as cudart does) work in rounds with the context's kernels.  Prints "PASS managedvar ..." lines, "FAIL
 * ..." on any difference (exit 1).
 */
#include <cuda.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define N 1000			/* FAKE_MANAGED_N */
#define INIT 7u			/* FAKE_MANAGED_INIT */
#define ROUNDS 4

static const char image[] = "XGPU-FAKE-MODULE\n";
static int failed;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (failed < 10) {
		printf("FAIL managedvar: ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	failed++;
}

static int ok_(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return 1;
	cuGetErrorName(rc, &name);
	fail("%s: %s", what, name ? name : "?");
	return 0;
}

#define OK(call) ok_((call), #call)

/* is the page holding p mapped in this process? */
static int mapped(const void *p)
{
	long ps = sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)(ps - 1));

	return !(msync(page, (size_t)ps, MS_ASYNC) && errno == ENOMEM);
}

/*
 * The variables at counter and arr (looked up by the caller) through
 * rounds of host writes, kernels (f_vadd, f_fill: functions of their
 * module or library) and synchronisation.
 */
static void rounds(const char *how, CUdeviceptr counter, CUdeviceptr arr,
		   CUfunction f_vadd, CUfunction f_fill)
{
	volatile uint32_t *c = (uint32_t *)(uintptr_t)counter;
	float *a = (float *)(uintptr_t)arr;
	int bad = 0;

	/* the initial values, from the worker's memory */
	if (*c != INIT)
		fail("%s: counter starts as %u, not %u", how, *c, INIT);
	for (int i = 0; i < N && bad < 3; i++)
		if (a[i] != (float)i && ++bad)
			fail("%s: arr[%d] starts as %g", how, i, a[i]);
	for (int r = 1; r <= ROUNDS && !bad; r++) {
		uint32_t v = 0, want = 1000u * (uint32_t)r;
		int32_t n = N, one = 1;
		void *pv[] = { &arr, &arr, &arr, &n };
		void *pf[] = { &counter, &want, &one };

		*c = 100u + (uint32_t)r;
		for (int i = 0; i < N; i++)
			a[i] = (float)(i * r);
		/* what the host wrote reaches the device before a request */
		if (OK(cuMemcpyDtoH(&v, counter, sizeof(v))) &&
		    v != 100u + (uint32_t)r)
			fail("%s round %d: the device reads %u, the host wrote "
			     "%u", how, r, v, 100u + r);
		/* the kernel reads the host's values: arr doubles */
		if (!OK(cuLaunchKernel(f_vadd, 1, 1, 1, 1, 1, 1, 0, NULL, pv,
				       NULL)) ||
		    !OK(cuLaunchKernel(f_fill, 1, 1, 1, 1, 1, 1, 0, NULL, pf,
				       NULL)) ||
		    !OK(cuCtxSynchronize()))
			return;
		if (*c != want)
			fail("%s round %d: counter %u, the kernel wrote %u",
			     how, r, *c, want);
		for (int i = 0; i < N && bad < 3; i++)
			if (a[i] != (float)(2 * i * r) && ++bad)
				fail("%s round %d: arr[%d] = %g, not %d", how,
				     r, i, a[i], 2 * i * r);
	}
	if (!failed)
		printf("PASS managedvar %s (%d rounds)\n", how, ROUNDS);
}

/* what a managed variable's address answers besides its bytes */
static void attrs(const char *how, CUdeviceptr counter)
{
	unsigned int m = 0, type = 0;

	if (OK(cuPointerGetAttribute(&m, CU_POINTER_ATTRIBUTE_IS_MANAGED,
				     counter)) && m != 1)
		fail("%s: IS_MANAGED %u", how, m);
	if (OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     counter)) && type != CU_MEMORYTYPE_DEVICE)
		fail("%s: memory type %u", how, type);
	/* what cudaPointerGetAttributes asks, in one call */
	{
		CUpointer_attribute at[] = {
			CU_POINTER_ATTRIBUTE_CONTEXT,
			CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
			CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
			CU_POINTER_ATTRIBUTE_HOST_POINTER,
			CU_POINTER_ATTRIBUTE_IS_MANAGED,
			CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		};
		CUcontext ctx = NULL;
		unsigned int t2 = 0, m2 = 0;
		CUdeviceptr dp = 0;
		void *hp = NULL;
		int ord = -1;
		void *val[] = { &ctx, &t2, &dp, &hp, &m2, &ord };

		if (OK(cuPointerGetAttributes(6, at, val, counter)) &&
		    (!ctx || t2 != CU_MEMORYTYPE_DEVICE || dp != counter ||
		     hp != (void *)(uintptr_t)counter || m2 != 1 || ord != 0))
			fail("%s: attributes ctx %p type %u dptr %#llx host %p "
			     "managed %u ordinal %d", how, (void *)ctx, t2,
			     (unsigned long long)dp, hp, m2, ord);
	}
	if (cuMemFree(counter) == CUDA_SUCCESS)
		fail("%s: cuMemFree of a variable succeeded", how);
}

static void module_vars(void)
{
	CUmodule mod;
	CUfunction f_vadd, f_fill;
	CUdeviceptr counter = 0, arr = 0, again = 0;
	size_t csize = 0, asize = 0;

	if (!OK(cuModuleLoadData(&mod, image)) ||
	    !OK(cuModuleGetFunction(&f_vadd, mod, "xgpu_fake_vadd")) ||
	    !OK(cuModuleGetFunction(&f_fill, mod, "xgpu_fake_fill")) ||
	    !OK(cuModuleGetGlobal(&counter, &csize, mod,
				  "xgpu_fake_managed")) ||
	    !OK(cuModuleGetGlobal(&arr, &asize, mod,
				  "xgpu_fake_managed_arr")) ||
	    !OK(cuModuleGetGlobal(&again, NULL, mod, "xgpu_fake_managed")))
		return;
	if (csize != 4 || asize != 4 * N)
		fail("module: sizes %zu and %zu", csize, asize);
	if (again != counter)
		fail("module: a second lookup gives another address");
	rounds("module", counter, arr, f_vadd, f_fill);
	attrs("module", counter);
	if (!OK(cuModuleUnload(mod)))
		return;
	if (mapped((void *)(uintptr_t)counter) ||
	    mapped((void *)(uintptr_t)(arr + 4 * N - 1)))
		fail("module: the variables' pages are mapped after unload");
	else if (!failed)
		printf("PASS managedvar module unload\n");
}

/* the fake's image as a library, with its two kernels as functions */
static int load_library(CUlibrary *lib, CUfunction *f_vadd, CUfunction *f_fill)
{
	CUkernel k_vadd, k_fill;

	return OK(cuLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL,
				    0)) &&
	       OK(cuLibraryGetKernel(&k_vadd, *lib, "xgpu_fake_vadd")) &&
	       OK(cuLibraryGetKernel(&k_fill, *lib, "xgpu_fake_fill")) &&
	       OK(cuKernelGetFunction(f_vadd, k_vadd)) &&
	       OK(cuKernelGetFunction(f_fill, k_fill));
}

static void library_vars(void)
{
	CUlibrary lib;
	CUfunction f_vadd, f_fill;
	CUmodule lmod;
	CUdeviceptr counter = 0, arr = 0, g = 0, m = 0;
	size_t csize = 0, asize = 0;
	CUresult rc;

	if (!load_library(&lib, &f_vadd, &f_fill) ||
	    !OK(cuLibraryGetManaged(&counter, &csize, lib,
				    "xgpu_fake_managed")) ||
	    !OK(cuLibraryGetManaged(&arr, &asize, lib,
				    "xgpu_fake_managed_arr")) ||
	    !OK(cuLibraryGetGlobal(&g, NULL, lib, "xgpu_fake_managed_arr")) ||
	    !OK(cuLibraryGetModule(&lmod, lib)) ||
	    !OK(cuModuleGetGlobal(&m, NULL, lmod, "xgpu_fake_managed")))
		return;
	if (csize != 4 || asize != 4 * N)
		fail("library: sizes %zu and %zu", csize, asize);
	if (g != arr || m != counter)
		fail("library: cuLibraryGetGlobal or its module's "
		     "cuModuleGetGlobal gives another address");
	rc = cuLibraryGetManaged(&g, NULL, lib, "xgpu_fake_global");
	if (rc != CUDA_ERROR_NOT_FOUND)
		fail("library: cuLibraryGetManaged of a plain global: %d", rc);
	rounds("library", counter, arr, f_vadd, f_fill);
	attrs("library", counter);
	if (!OK(cuLibraryUnload(lib)))
		return;
	if (mapped((void *)(uintptr_t)counter))
		fail("library: the variables' pages are mapped after unload");
	else if (!failed)
		printf("PASS managedvar library unload\n");
}

/*
 * The library's variables looked up with no current context, as cudart
 * does lazily (the library API needs none): their blocks are then
 * fetched in no context of the program's, between kernels of its
 * context.  Through a chain the first worker once recorded its GPU
 * scheduler's marks of those kernels while it was in no context; the
 * record, a posted request of its driver (xgpu's library), failed later,
 * and a synchronize of the program answered CUDA_ERROR_INVALID_CONTEXT.
 */
static void library_vars_lazy(CUcontext ctx)
{
	CUlibrary lib;
	CUfunction f_vadd, f_fill;
	CUdeviceptr counter = 0, arr = 0;
	int found;

	if (!load_library(&lib, &f_vadd, &f_fill) ||
	    !OK(cuCtxSetCurrent(NULL)))
		return;
	found = OK(cuLibraryGetManaged(&counter, NULL, lib,
				       "xgpu_fake_managed")) &&
		OK(cuLibraryGetManaged(&arr, NULL, lib,
				       "xgpu_fake_managed_arr"));
	if (OK(cuCtxSetCurrent(ctx)) && found)
		rounds("library-lazy", counter, arr, f_vadd, f_fill);
	OK(cuLibraryUnload(lib));
}

int main(void)
{
	CUcontext ctx;
	CUdevice dev;

	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx)))
		return 1;
	module_vars();
	library_vars();
	/* a module loaded again maps its variables again (its pages were
	 * given back), with fresh values */
	module_vars();
	library_vars_lazy(ctx);
	OK(cuDevicePrimaryCtxRelease(dev));
	if (failed)
		return 1;
	printf("PASS managedvar\n");
	return 0;
}
