// SPDX-License-Identifier: MIT
/*
 * fakecuda_module.c: the fake driver's modules, libraries, functions and
 * kernels and their attributes (tests only, see fakecuda.h).  An image is
 * accepted only if it starts with "XGPU-FAKE-MODULE\n"; each module has
 * one function per test kernel, one 256-byte global, xgpu_fake_global,
 * and two __managed__ variables in managed memory (fakecuda.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda.h"

/* ---- module objects ------------------------------------------------------ */

static bool image_ok(const void *image)
{
	/* strncmp stops at the first difference, so a short image is not
	 * read past its terminating byte */
	return image && strncmp(image, FAKE_MODULE_MAGIC,
				strlen(FAKE_MODULE_MAGIC)) == 0;
}

/* the managed variables' allocation of m, initialised; 0 or -1 */
static int managed_new(struct fmodule *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	float *arr;
	struct range *r;
	uint32_t init = FAKE_MANAGED_INIT;

	m->mmap = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->mmap == MAP_FAILED) {
		m->mmap = NULL;
		return -1;
	}
	m->mseg = m->mmap + FAKE_MSEG_OFF;
	memcpy(m->mseg, &init, sizeof(init));
	arr = (float *)(void *)(m->mseg + 16);
	for (unsigned int i = 0; i < FAKE_MANAGED_N; i++)
		arr[i] = (float)i;
	r = fc_range_add((uintptr_t)m->mseg, FAKE_MSEG_SIZE, R_GLOBAL);
	if (!r) {
		munmap(m->mmap, 2 * page);
		m->mmap = NULL;
		return -1;
	}
	r->managed = true;
	return 0;
}

static void managed_free(struct fmodule *m)
{
	struct range *r;

	if (!m->mmap)
		return;
	r = fc_range_at((uintptr_t)m->mseg, R_GLOBAL);
	if (r)
		fc_range_del(r);
	munmap(m->mmap, 2 * (size_t)sysconf(_SC_PAGESIZE));
}

static struct fmodule *module_new(struct fctx *ctx, struct flibrary *lib)
{
	struct fmodule *m = calloc(1, sizeof(*m));
	struct range *r;

	if (!m)
		return NULL;
	if (posix_memalign((void **)&m->global, FAKE_ALIGN,
			   FAKE_GLOBAL_SIZE)) {
		free(m);
		return NULL;
	}
	memset(m->global, 0, FAKE_GLOBAL_SIZE);
	r = fc_range_add((uintptr_t)m->global, FAKE_GLOBAL_SIZE, R_GLOBAL);
	if (!r) {
		free(m->global);
		free(m);
		return NULL;
	}
	if (managed_new(m)) {
		fc_range_del(fc_range_at((uintptr_t)m->global, R_GLOBAL));
		free(m->global);
		free(m);
		return NULL;
	}
	m->lib = lib;
	for (unsigned int i = 0; i < NKERNELS; i++) {
		struct ffunc *f = &m->funcs[i];

		f->magic = FUNC_MAGIC;
		f->mod = m;
		f->def = &fc_kernels[i];
		f->max_dyn_smem = FAKE_DEFAULT_DYN_SMEM;
		f->carveout = -1;
	}
	fc_obj_add(&m->o, O_MODULE, ctx);
	return m;
}

void fc_module_free(struct fmodule *m)
{
	struct range *r = fc_range_at((uintptr_t)m->global, R_GLOBAL);

	if (r)
		fc_range_del(r);
	managed_free(m);
	fc_obj_unlink(&m->o);
	free(m->global);
	free(m);
}

/* ---- modules and libraries ----------------------------------------------- */

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
			    unsigned int nopt, CUjit_option *opts, void **vals)
{
	struct fmodule *m;

	NEED_CTX();
	if (!module || (nopt && (!opts || !vals)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!image_ok(image))
		return CUDA_ERROR_INVALID_IMAGE;
	m = module_new(fc_owner(), NULL);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*module = (CUmodule)m;
	return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	struct fmodule *m;

	NEED_INIT();
	m = MODULE(hmod);
	if (!m || m->lib)	/* a library's module goes with it */
		return CUDA_ERROR_INVALID_HANDLE;
	fc_module_free(m);
	return CUDA_SUCCESS;
}

/*
 * Index of the test kernel `name` in a module's functions or a library's
 * kernels, checked in the driver's order: cuInit ran, the output and the
 * name are given, the owner is live, the name is known.
 */
static CUresult kernel_index(bool out_ok, const char *name, bool owner_ok,
			     unsigned int *i)
{
	NEED_INIT();
	if (!out_ok || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!owner_ok)
		return CUDA_ERROR_INVALID_HANDLE;
	for (*i = 0; *i < NKERNELS; (*i)++)
		if (strcmp(fc_kernels[*i].name, name) == 0)
			return CUDA_SUCCESS;
	return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	struct fmodule *m = MODULE(hmod);
	unsigned int i;
	CUresult rc = kernel_index(hfunc != NULL, name, m != NULL, &i);

	if (rc == CUDA_SUCCESS)
		*hfunc = (CUfunction)&m->funcs[i];
	return fc_log_return("cuModuleGetFunction", rc);
}

/*
 * A global of module m (a library's own; NULL if not live): only its
 * __managed__ variables if managed (cuLibraryGetManaged), all of them
 * otherwise (cuModuleGetGlobal gives a managed variable's address too).
 */
static CUresult module_global(struct fmodule *m, CUdeviceptr *dptr,
			      size_t *bytes, const char *name, bool managed)
{
	uint8_t *p;
	size_t n;

	NEED_INIT();
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!strcmp(name, FAKE_GLOBAL_NAME) && !managed) {
		p = m->global;
		n = FAKE_GLOBAL_SIZE;
	} else if (!strcmp(name, FAKE_MANAGED_NAME)) {
		p = m->mseg;
		n = 4;
	} else if (!strcmp(name, FAKE_MANAGED_ARR_NAME)) {
		p = m->mseg + 16;
		n = 4 * FAKE_MANAGED_N;
	} else {
		return CUDA_ERROR_NOT_FOUND;
	}
	if (dptr)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	if (bytes)
		*bytes = n;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
			      const char *name)
{
	return module_global(MODULE(hmod), dptr, bytes, name, false);
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
			   CUjit_option *jo, void **jv, unsigned int njit,
			   CUlibraryOption *lo, void **lv, unsigned int nlib)
{
	struct flibrary *l;

	NEED_INIT();
	if (!library || (njit && (!jo || !jv)) || (nlib && (!lo || !lv)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!image_ok(code))
		return CUDA_ERROR_INVALID_IMAGE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* libraries are context-independent: no owner context */
	l->mod = module_new(NULL, l);
	if (!l->mod) {
		free(l);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (unsigned int i = 0; i < NKERNELS; i++) {
		l->kern[i].magic = KERNEL_MAGIC;
		l->kern[i].lib = l;
		l->kern[i].index = i;
	}
	fc_obj_add(&l->o, O_LIBRARY, NULL);
	*library = (CUlibrary)l;
	return CUDA_SUCCESS;
}

CUresult cuLibraryUnload(CUlibrary library)
{
	struct flibrary *l;

	NEED_INIT();
	l = LIBRARY(library);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	fc_module_free(l->mod);
	fc_obj_unlink(&l->o);
	free(l);
	return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pk, CUlibrary library, const char *name)
{
	struct flibrary *l = LIBRARY(library);
	unsigned int i;
	CUresult rc = kernel_index(pk != NULL, name, l != NULL, &i);

	if (rc == CUDA_SUCCESS)
		*pk = (CUkernel)&l->kern[i];
	return rc;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
			    const char *name)
{
	struct flibrary *l = LIBRARY(library);

	return module_global(l ? l->mod : NULL, dptr, bytes, name, false);
}

CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes,
			     CUlibrary library, const char *name)
{
	struct flibrary *l = LIBRARY(library);

	return module_global(l ? l->mod : NULL, dptr, bytes, name, true);
}

CUresult cuLibraryGetModule(CUmodule *pmod, CUlibrary library)
{
	struct flibrary *l;

	NEED_INIT();
	if (!pmod)
		return CUDA_ERROR_INVALID_VALUE;
	l = LIBRARY(library);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	*pmod = (CUmodule)l->mod;
	return CUDA_SUCCESS;
}

/* ---- counting and enumerating: every module has all the test kernels ----- */

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	if (!count || !MODULE(mod))
		return count ? CUDA_ERROR_INVALID_HANDLE :
			       CUDA_ERROR_INVALID_VALUE;
	*count = NKERNELS;
	return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	if (!count || !LIBRARY(lib))
		return count ? CUDA_ERROR_INVALID_HANDLE :
			       CUDA_ERROR_INVALID_VALUE;
	*count = NKERNELS;
	return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions(CUfunction *fns, unsigned int n,
				    CUmodule mod)
{
	struct fmodule *m = MODULE(mod);

	if (!fns || !m)
		return fns ? CUDA_ERROR_INVALID_HANDLE :
			     CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n && i < NKERNELS; i++)
		fns[i] = (CUfunction)&m->funcs[i];
	return CUDA_SUCCESS;
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int n,
				   CUlibrary lib)
{
	struct flibrary *l = LIBRARY(lib);

	if (!kernels || !l)
		return kernels ? CUDA_ERROR_INVALID_HANDLE :
				 CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n && i < NKERNELS; i++)
		kernels[i] = (CUkernel)&l->kern[i];
	return CUDA_SUCCESS;
}

/* ---- functions and kernels ----------------------------------------------- */

/* the function of a CUfunction, or of a CUkernel (kernel); NULL if none */
static struct ffunc *func_of(const void *h, bool kernel)
{
	struct fkernel *k;

	if (!kernel)
		return fc_func_find(h);
	k = fc_kernel_find(h);
	return k ? &k->lib->mod->funcs[k->index] : NULL;
}

static CUresult get_name(const char **name, const void *h, bool kernel)
{
	struct ffunc *f = func_of(h, kernel);

	if (!name || !f)
		return name ? CUDA_ERROR_INVALID_HANDLE :
			      CUDA_ERROR_INVALID_VALUE;
	*name = f->def->name;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	return get_name(name, hfunc, false);
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	return get_name(name, hfunc, true);
}

CUresult cuKernelGetFunction(CUfunction *pfunc, CUkernel kernel)
{
	struct ffunc *f;

	NEED_CTX();
	if (!pfunc)
		return CUDA_ERROR_INVALID_VALUE;
	f = func_of(kernel, true);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*pfunc = (CUfunction)f;
	return CUDA_SUCCESS;
}

static CUresult param_info(const void *h, bool kernel, size_t index,
			   size_t *off, size_t *size)
{
	const struct ffunc *f;

	NEED_INIT();
	f = func_of(h, kernel);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (index >= f->def->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = f->def->p[index].off;
	if (size)
		*size = f->def->p[index].size;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t index, size_t *off,
			    size_t *size)
{
	return param_info(func, false, index, off, size);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *off,
			      size_t *size)
{
	return param_info(kernel, true, index, off, size);
}

/* ---- function attributes ------------------------------------------------- */

/*
 * The function an attribute call is about, checked in the driver's
 * order: cuInit ran (a CUkernel's: dev is our device), the output is
 * given, the handle is live.
 */
static CUresult attr_func(const void *h, bool kernel, CUdevice dev,
			  bool out_ok, struct ffunc **f)
{
	if (kernel)
		CHECK_DEV(dev);
	else
		NEED_INIT();
	if (!out_ok)
		return CUDA_ERROR_INVALID_VALUE;
	*f = func_of(h, kernel);
	return *f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult get_attr(const void *h, bool kernel, CUdevice dev,
			 CUfunction_attribute a, int *pi)
{
	struct ffunc *f;
	CUresult rc = attr_func(h, kernel, dev, pi != NULL, &f);
	int v;

	if (rc)
		return rc;
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		v = 1024;
		break;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
		v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		v = 16;
		break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		v = 90;
		break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		v = f->max_dyn_smem;
		break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		v = f->carveout;
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		v = f->req_cluster[a -
				   CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH];
		break;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		v = f->non_portable_cluster;
		break;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		v = f->sched_policy;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pi = v;
	return CUDA_SUCCESS;
}

static CUresult set_attr(const void *h, bool kernel, CUdevice dev,
			 CUfunction_attribute a, int v)
{
	struct ffunc *f;
	CUresult rc = attr_func(h, kernel, dev, true, &f);

	if (rc)
		return rc;
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		if (v < 0 || v > FAKE_MAX_DYN_SMEM)
			return CUDA_ERROR_INVALID_VALUE;
		f->max_dyn_smem = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		if (v < -1 || v > 100)
			return CUDA_ERROR_INVALID_VALUE;
		f->carveout = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		if (v != 0 && v != 1)
			return CUDA_ERROR_INVALID_VALUE;
		f->non_portable_cluster = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		if (v < 0 || v > 2)
			return CUDA_ERROR_INVALID_VALUE;
		f->sched_policy = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		if (v < 0 || v > 16)
			return CUDA_ERROR_INVALID_VALUE;
		f->req_cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] =
			v;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult set_cache(const void *h, bool kernel, CUdevice dev,
			  CUfunc_cache config)
{
	struct ffunc *f;
	CUresult rc = attr_func(h, kernel, dev, true, &f);

	if (rc)
		return rc;
	if (!fc_cache_config_ok(config))
		return CUDA_ERROR_INVALID_VALUE;
	f->cache = config;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction hfunc)
{
	return get_attr(hfunc, false, 0, a, pi);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute a, int v)
{
	return set_attr(hfunc, false, 0, a, v);
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	return set_cache(hfunc, false, 0, config);
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute a, CUkernel kernel,
			      CUdevice dev)
{
	return get_attr(kernel, true, dev, a, pi);
}

CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel kernel,
			      CUdevice dev)
{
	return set_attr(kernel, true, dev, a, v);
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
				CUdevice dev)
{
	return set_cache(kernel, true, dev, config);
}

/* ---- JIT linking: the fake "links" by keeping its first fake image ------ */

struct flink {
	uint32_t magic;
	void *image;
	size_t size;
};

#define LINK_MAGIC 0x666c6e6bu	/* "flnk" */

static struct flink *link_of(CUlinkState s)
{
	struct flink *l = (struct flink *)s;

	return l && l->magic == LINK_MAGIC ? l : NULL;
}

CUresult cuLinkCreate_v2(unsigned int n, CUjit_option *opt, void **val,
			 CUlinkState *out)
{
	struct flink *l;

	NEED_CTX();
	if (!out || (n && (!opt || !val)))
		return CUDA_ERROR_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	l->magic = LINK_MAGIC;
	*out = (CUlinkState)l;
	return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState s, CUjitInputType type, void *data,
			  size_t size, const char *name, unsigned int n,
			  CUjit_option *opt, void **val)
{
	struct flink *l = link_of(s);

	(void)type;
	(void)name;
	(void)opt;
	(void)val;
	NEED_CTX();
	if (!l || !data || !size || n)
		return CUDA_ERROR_INVALID_VALUE;
	if (size < strlen(FAKE_MODULE_MAGIC) ||
	    memcmp(data, FAKE_MODULE_MAGIC, strlen(FAKE_MODULE_MAGIC)))
		return CUDA_ERROR_INVALID_IMAGE;
	if (!l->image) {
		l->image = malloc(size);
		if (!l->image)
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(l->image, data, size);
		l->size = size;
	}
	return CUDA_SUCCESS;
}

CUresult cuLinkComplete(CUlinkState s, void **cubin, size_t *size)
{
	struct flink *l = link_of(s);

	NEED_CTX();
	if (!l || !cubin || !size || !l->image)
		return CUDA_ERROR_INVALID_VALUE;
	*cubin = l->image;
	*size = l->size;
	return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState s)
{
	struct flink *l = link_of(s);

	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	l->magic = 0;
	free(l->image);
	free(l);
	return CUDA_SUCCESS;
}
