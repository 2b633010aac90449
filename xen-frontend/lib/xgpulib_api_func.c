// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_func.c: what the guest finds in modules and libraries:
 * functions and kernels (with their parameter layout), globals, counts.
 * Objects and locking: xgpulib_module.h, xgpulib_func.c; what is asked of
 * a function once found: xgpulib_api_funcattr.c.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_image.h"
#include "xgpulib_module.h"

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % TAB_BUCKETS;
}

/* ---- what modules and libraries share ------------------------------------ */

/* MODULE_GET_FUNCTION or LIBRARY_GET_KERNEL */
typedef CUresult (*lookup_fn)(const struct xgpuif_symbol_args *a,
			      const struct xgpuif_iov *tail, int ntail,
			      struct xgpuif_func_reply *r, void *rtail,
			      uint32_t rtail_cap, uint32_t *rtail_len);
/* MODULE_GET_GLOBAL or LIBRARY_GET_GLOBAL */
typedef CUresult (*global_fn)(const struct xgpuif_symbol_args *a,
			      const struct xgpuif_iov *tail, int ntail,
			      struct xgpuif_global_reply *r);
/* MODULE_GET_FUNCTION_COUNT or LIBRARY_GET_KERNEL_COUNT */
typedef CUresult (*count_fn)(const struct xgpuif_handle_args *a,
			     struct xgpuif_u64_reply *r);
/* MODULE_FUNCTION_NAMES or LIBRARY_KERNEL_NAMES */
typedef CUresult (*names_fn)(const struct xgpuif_names_args *a,
			     struct xgpuif_names_reply *r, void *rtail,
			     uint32_t rtail_cap, uint32_t *rtail_len);

/* the calls of a module, or of a library, and the kind of what it holds */
struct owner_calls {
	uint32_t kind;
	lookup_fn lookup;
	global_fn global;
	count_fn count;
	names_fn names;
};

static const struct owner_calls module_calls = {
	XGPUIF_FN_FUNCTION, xgpulib_call_MODULE_GET_FUNCTION,
	xgpulib_call_MODULE_GET_GLOBAL, xgpulib_call_MODULE_GET_FUNCTION_COUNT,
	xgpulib_call_MODULE_FUNCTION_NAMES
};

static const struct owner_calls library_calls = {
	XGPUIF_FN_KERNEL, xgpulib_call_LIBRARY_GET_KERNEL,
	xgpulib_call_LIBRARY_GET_GLOBAL, xgpulib_call_LIBRARY_GET_KERNEL_COUNT,
	xgpulib_call_LIBRARY_KERNEL_NAMES
};

static const struct owner_calls *calls_of(const struct symowner *o)
{
	return o->mod ? &module_calls : &library_calls;
}

static struct symowner *module_owner(CUmodule hmod)
{
	struct CUmod_st *m = xgpulib_mod_check(hmod);

	return m ? &m->own : NULL;
}

static struct symowner *library_owner(CUlibrary hlib)
{
	struct CUlib_st *l = xgpulib_lib_check(hlib);

	return l ? &l->own : NULL;
}

/* ---- functions and kernels ----------------------------------------------- */

/*
 * Build a function from a GET_FUNCTION/GET_KERNEL/KERNEL_GET_FUNCTION
 * reply and its tlen bytes of layout.  The layout is checked before use:
 * a launch writes parameters at these offsets into a buffer of
 * param_bytes.
 */
static CUresult xfunc_from_reply(uint32_t kind, const char *name,
				 const struct xgpuif_func_reply *r,
				 const struct xgpuif_param *params,
				 uint32_t tlen, struct xfunc **out)
{
	uint32_t n = 0;
	size_t nlen = strlen(name) + 1;
	struct xfunc *xf;

	if (!r->handle)
		return CUDA_ERROR_UNKNOWN;
	if (r->nparams != XGPUIF_PARAMS_UNKNOWN) {
		n = r->nparams;
		if (n > XGPUIF_MAX_PARAMS ||
		    tlen < n * sizeof(struct xgpuif_param))
			return CUDA_ERROR_UNKNOWN;
	}
	xf = calloc(1, sizeof(*xf) + n * sizeof(struct xgpuif_param) + nlen);
	if (!xf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (n)
		memcpy(xf->params, params, n * sizeof(struct xgpuif_param));
	for (uint32_t i = 0; i < n; i++) {
		if ((uint32_t)xf->params[i].offset + xf->params[i].size >
		    r->param_bytes) {
			free(xf);
			return CUDA_ERROR_UNKNOWN;
		}
	}
	xf->f.name = (char *)(xf->params + n);
	memcpy(xf->f.name, name, nlen);
	xf->f.magic = XGPULIB_FUNC_MAGIC;
	xf->f.kind = kind;
	xf->f.remote = r->handle;
	xf->f.nparams = r->nparams;
	xf->f.param_bytes =
		r->nparams == XGPUIF_PARAMS_UNKNOWN ? 0 : r->param_bytes;
	xf->f.params = xf->params;
	pthread_mutex_init(&xf->f.attr_mu, NULL);
	*out = xf;
	return CUDA_SUCCESS;
}

/*
 * One lookup round trip: by name in an owner (lookup), or a kernel's
 * function in the current context (lookup NULL, owner the kernel).  The
 * reply holds the largest layout the ring allows (the request is padded
 * to as many slots).
 */
CUresult xgpulib_symbol_req(uint64_t owner, const char *name,
			    struct xgpuif_symbol_args *a,
			    struct xgpuif_iov *tail)
{
	size_t nlen = strlen(name) + 1;

	if (nlen > XGPUIF_MAX_PAYLOAD - sizeof(*a))
		return CUDA_ERROR_INVALID_VALUE;
	a->owner = owner;
	*tail = (struct xgpuif_iov){ name, (uint32_t)nlen };
	return CUDA_SUCCESS;
}

static CUresult fetch_func(lookup_fn lookup, uint64_t owner, const char *name,
			   uint32_t kind, struct xfunc **out)
{
	uint32_t cap = XGPUIF_MAX_PARAMS * sizeof(struct xgpuif_param);
	uint32_t max = xgpulib_chan_reply_max(xgpulib_ch) -
		       (uint32_t)sizeof(struct xgpuif_func_reply);
	struct xgpuif_func_reply r;
	struct xgpuif_param *params;
	struct xgpuif_symbol_args a;
	struct xgpuif_iov tail;
	uint32_t tlen = 0;
	CUresult rc = xgpulib_symbol_req(owner, name, &a, &tail);

	if (rc)
		return rc;
	if (cap > max)
		cap = max;
	params = malloc(cap);
	if (!params)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_take_deferred();
	if (!rc && lookup) {
		rc = lookup(&a, &tail, 1, &r, params, cap, &tlen);
	} else if (!rc) {
		struct xgpuif_handle_args h = { owner };

		rc = xgpulib_call_KERNEL_GET_FUNCTION(&h, &r, params, cap,
						      &tlen);
	}
	if (!rc)
		rc = xfunc_from_reply(kind, name, &r, params, tlen, out);
	free(params);
	if (rc == CUDA_ERROR_UNKNOWN)
		xgpulib_dbg("malformed function reply for %s", name);
	return rc;
}

/*
 * A function of a module or a kernel of a library, by name: from the
 * owner's table, asking the worker the first time.  o is NULL for a
 * handle not ours.
 */
static CUresult find(struct symowner *o, bool out_ok, const char *name,
		     struct xgpulib_func **f)
{
	const struct owner_calls *calls;
	struct xfunc *xf;
	CUresult rc = CUDA_SUCCESS;
	uint32_t h;

	XGPULIB_CHECK_ARGS(out_ok && name, o);
	calls = calls_of(o);
	h = name_hash(name);
	pthread_mutex_lock(&o->tab.mu);
	for (xf = o->tab.b[h]; xf; xf = xf->next)
		if (strcmp(xf->f.name, name) == 0)
			break;
	if (!xf) {
		rc = fetch_func(calls->lookup, o->remote, name, calls->kind,
				&xf);
		if (rc == CUDA_SUCCESS) {
			xf->f.module = o->mod;
			xf->f.library = o->lib;
			xf->next = o->tab.b[h];
			o->tab.b[h] = xf;
			xgpulib_func_note(&xf->f, true);
		}
	}
	pthread_mutex_unlock(&o->tab.mu);
	if (rc == CUDA_SUCCESS)
		*f = &xf->f;
	return rc;
}

/*
 * A global (managed: cuLibraryGetManaged).  A __managed__ variable's
 * allocation is mapped coherently here, at its address (the worker says
 * which it is), before the address is handed out: the program's CPU
 * reaches it from then on, as natively.  It lives as long as the module
 * or library that holds it (a library's module: the library).
 */
static CUresult get_global(struct symowner *o, const char *name,
			   CUdeviceptr *dptr, size_t *bytes, bool managed)
{
	struct xgpuif_symbol_args a;
	struct xgpuif_global_reply r;
	struct xgpuif_iov tail;
	CUresult rc;

	XGPULIB_CHECK_ARGS(name, o);
	rc = xgpulib_symbol_req(o->remote, name, &a, &tail);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	rc = managed ? xgpulib_call_LIBRARY_GET_MANAGED(&a, &tail, 1, &r) :
		       calls_of(o)->global(&a, &tail, 1, &r);
	if (rc)
		return rc;
	if (r.flags & XGPUIF_GLOBAL_MANAGED) {
		const void *root = o->lib ? (const void *)o->lib :
					    (const void *)o->mod;

		rc = xgpulib_managed_var_map(root, r.mbase, r.msize);
		if (rc)
			return rc;
	}
	if (dptr)
		*dptr = (CUdeviceptr)r.dptr;
	if (bytes)
		*bytes = (size_t)r.size;
	return CUDA_SUCCESS;
}

static CUresult get_count(struct symowner *o, unsigned int *count)
{
	struct xgpuif_handle_args a;
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	XGPULIB_CHECK_ARGS(count, o);
	a.handle = o->remote;
	rc = calls_of(o)->count(&a, &r);
	if (rc)
		return rc;
	if (r.value > 0xffffffffu)
		return CUDA_ERROR_UNKNOWN;
	*count = (unsigned int)r.value;
	return CUDA_SUCCESS;
}

/*
 * Every function of a module or kernel of a library, in the driver's
 * order, as the handle a lookup by its name gives: the first max of them
 * into out (NULL: none), and each(arg, f) for every one (NULL: stop after
 * max).  *total: how many the owner has.
 */
static CUresult enumerate(struct symowner *o, struct xgpulib_func **out,
			  unsigned int max,
			  void (*each)(void *arg, struct xgpulib_func *f),
			  void *arg, unsigned int *total)
{
	uint32_t cap = xgpulib_chan_reply_max(xgpulib_ch) -
		       (uint32_t)sizeof(struct xgpuif_names_reply);
	struct xgpuif_names_reply r = { 0, 0, 0, 0 };
	struct xgpulib_func *f;
	uint32_t first = 0;
	CUresult rc;
	char *buf;

	XGPULIB_CHECK_ARGS(true, o);
	buf = malloc(cap);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	do {
		struct xgpuif_names_args a = { o->remote, first, 0 };
		uint32_t len = 0;
		const char *p = buf;

		rc = calls_of(o)->names(&a, &r, buf, cap, &len);
		if (!rc && (r.bytes != len || r.count > r.total - first ||
			    (!r.count && first < r.total)))
			rc = CUDA_ERROR_UNKNOWN;	/* a backend bug */
		for (uint32_t i = 0; !rc && i < r.count; i++) {
			const char *z;

			if (!each && first + i >= max)
				break;		/* out is full */
			z = memchr(p, 0, (size_t)(buf + len - p));
			if (!z) {
				rc = CUDA_ERROR_UNKNOWN;
				break;
			}
			rc = find(o, true, p, &f);
			if (rc)
				break;
			if (out && first + i < max)
				out[first + i] = f;
			if (each)
				each(arg, f);
			p = z + 1;
		}
		first += r.count;
	} while (!rc && first < r.total && (each || first < max));
	free(buf);
	if (!rc && total)
		*total = r.total;
	return rc;
}

/* the handles into fns, at most n (fewer when the owner has fewer) */
static CUresult enumerate_into(struct symowner *o, void *fns, unsigned int n)
{
	XGPULIB_CHECK_ARGS(fns, o);
	return enumerate(o, fns, n, NULL, NULL, NULL);
}

CUresult cuModuleEnumerateFunctions(CUfunction *functions,
				    unsigned int numFunctions, CUmodule mod)
{
	return enumerate_into(module_owner(mod), functions, numFunctions);
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
				   CUlibrary lib)
{
	return enumerate_into(library_owner(lib), kernels, numKernels);
}

struct each_fn {
	xgpulib_fn_visit visit;
	void *user;
};

static void each_fn(void *arg, struct xgpulib_func *f)
{
	struct each_fn *e = arg;

	e->visit(e->user, (CUfunction)f, f->name);
}

CUresult xgpulib_module_each(CUmodule mod, xgpulib_fn_visit visit,
			     void *user, unsigned int *count)
{
	struct each_fn e = { visit, user };

	return enumerate(module_owner(mod), NULL, 0, each_fn, &e, count);
}

CUresult xgpulib_func_param_count(CUfunction f, size_t *count)
{
	struct xgpulib_func *p = xgpulib_func_check(f);

	XGPULIB_CHECK_ARGS(count, p);
	if (p->nparams == XGPUIF_PARAMS_UNKNOWN)
		return CUDA_ERROR_NOT_SUPPORTED;
	*count = p->nparams;
	return CUDA_SUCCESS;
}

/* find's handle into *out (a CUfunction or a CUkernel; NULL: none) */
static CUresult find_into(struct symowner *o, void *out, const char *name)
{
	struct xgpulib_func *f;
	CUresult rc = find(o, out != NULL, name, &f);

	if (rc == CUDA_SUCCESS)
		*(struct xgpulib_func **)out = f;
	return rc;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
			     const char *name)
{
	return find_into(module_owner(hmod), hfunc, name);
}

CUresult cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
			   const char *name)
{
	return get_global(module_owner(hmod), name, dptr, bytes, false);
}

/* the 32-bit ABI of CUDA 2.x */
#undef cuModuleGetGlobal
CUresult cuModuleGetGlobal(unsigned int *dptr, unsigned int *bytes,
			   CUmodule hmod, const char *name);
CUresult cuModuleGetGlobal(unsigned int *dptr, unsigned int *bytes,
			   CUmodule hmod, const char *name)
{
	CUdeviceptr d = 0;
	size_t b = 0;
	CUresult rc = cuModuleGetGlobal_v2(&d, &b, hmod, name);

	if (rc)
		return rc;
	if (d > 0xffffffffu)
		return CUDA_ERROR_NOT_SUPPORTED;	/* not addressable */
	if (dptr)
		*dptr = (unsigned int)d;
	if (bytes)
		*bytes = (unsigned int)b;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	return get_count(module_owner(mod), count);
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
			    const char *name)
{
	return find_into(library_owner(library), pKernel, name);
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes,
			    CUlibrary library, const char *name)
{
	return get_global(library_owner(library), name, dptr, bytes, false);
}

CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes,
			     CUlibrary library, const char *name)
{
	return get_global(library_owner(library), name, dptr, bytes, true);
}

/*
 * cuLibraryGetUnifiedFunction: a unified function is host code of the
 * library, which the worker loaded in its own process: the driver's answer
 * when there is none (CUDA_ERROR_NOT_FOUND, or an error of the arguments)
 * is given as it is, but a pointer into the worker is of no use to the
 * program, so a function that exists is CUDA_ERROR_NOT_SUPPORTED.
 */
CUresult cuLibraryGetUnifiedFunction(void **fptr, CUlibrary library,
				     const char *symbol)
{
	struct symowner *o = library_owner(library);
	struct xgpuif_symbol_args a;
	struct xgpuif_u64_reply r = { 0 };
	struct xgpuif_iov tail;
	CUresult rc;

	XGPULIB_CHECK_ARGS(fptr && symbol, o);
	rc = xgpulib_symbol_req(o->remote, symbol, &a, &tail);
	if (rc)
		return rc;
	*fptr = NULL;
	rc = xgpulib_call_LIBRARY_UNIFIED_FUNCTION(&a, &tail, 1, &r);
	if (rc)
		return rc;
	xgpulib_dbg("cuLibraryGetUnifiedFunction(\"%s\"): the function "
		    "lives in the worker's process; not supported", symbol);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	return get_count(library_owner(lib), count);
}

static struct xgpulib_func *kernel_check(CUkernel k)
{
	struct xgpulib_func *f = xgpulib_func_check(k);

	return f && f->kind == XGPUIF_FN_KERNEL ? f : NULL;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	struct xgpulib_func *kf = kernel_check(kernel);
	struct xfunc *kx;
	struct CUlib_st *l;
	uint64_t ctx = xgpulib_current_remote();
	struct kfn *k;
	CUresult rc = CUDA_SUCCESS;

	XGPULIB_CHECK_ARGS(pFunc, kf && xgpulib_lib_check(kf->library));
	kx = (struct xfunc *)kf;
	l = kf->library;
	pthread_mutex_lock(&l->own.tab.mu);
	for (k = kx->kfns; k; k = k->next)
		if (k->ctx == ctx)
			break;
	if (!k) {
		struct xfunc *xf = NULL;

		k = calloc(1, sizeof(*k));
		if (!k)
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else
			rc = fetch_func(NULL, kf->remote, kf->name,
					XGPUIF_FN_FUNCTION, &xf);
		if (rc == CUDA_SUCCESS) {
			xf->f.library = l;
			xgpulib_func_note(&xf->f, true);
			k->ctx = ctx;
			k->fn = xf;
			k->next = kx->kfns;
			kx->kfns = k;
		} else {
			free(k);
			k = NULL;
		}
	}
	pthread_mutex_unlock(&l->own.tab.mu);
	if (rc == CUDA_SUCCESS)
		*pFunc = (CUfunction)&k->fn->f;
	return rc;
}

CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	struct xgpulib_func *kf = kernel_check(kernel);

	XGPULIB_CHECK_ARGS(pLib, kf);
	*pLib = kf->library;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	struct xgpulib_func *f = xgpulib_func_check(hfunc);

	XGPULIB_CHECK_ARGS(hmod, f);
	if (f->module) {
		*hmod = f->module;
		return CUDA_SUCCESS;
	}
	/* a kernel's function lives in its library's module */
	if (f->library)
		return cuLibraryGetModule(hmod, f->library);
	return CUDA_ERROR_INVALID_HANDLE;
}
