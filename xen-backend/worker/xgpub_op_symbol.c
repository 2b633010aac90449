// SPDX-License-Identifier: MIT
/*
 * xgpub_op_symbol.c: what a worker finds in modules and libraries:
 * functions and kernels (with the parameter layout the guest flattens
 * launches by), globals (and the managed memory of __managed__ ones,
 * xgpub_op_managed.c), counts, and function attributes.
 *
 * Function and kernel handles carry their parameter layout
 * (cuFuncGetParamInfo/cuKernelGetParamInfo, read once here), which the
 * guest uses to flatten kernelParams and LAUNCH uses to rebuild them.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

int xgpub_fn_get(struct xgpub_worker *w, xgpuif_handle_t h, uint32_t kind,
		 void **obj, const struct xgpub_fn **fn)
{
	struct xgpub_hentry *e;
	int type;

	if (kind == XGPUIF_FN_FUNCTION)
		type = XGPUB_H_FUNCTION;
	else if (kind == XGPUIF_FN_KERNEL)
		type = XGPUB_H_KERNEL;
	else
		return XGPUIF_ST_PROTO;
	e = xgpub_handle_get(&w->h, h, type);
	if (!e || !e->extra)
		return CUDA_ERROR_INVALID_HANDLE;
	*obj = e->obj;
	if (fn)
		*fn = e->extra;
	return 0;
}

/* ---- symbols ------------------------------------------------------------- */

/*
 * Register a function or kernel with its parameter layout and write the
 * reply.  A layout the driver does not give, or one that does not fit the
 * reply (or uint16 offsets), is XGPUIF_PARAMS_UNKNOWN on both ends.
 */
static int reply_fn(struct xgpub_worker *w, int type, void *obj,
		    xgpuif_handle_t root, const struct xgpub_fn *like,
		    struct xgpuif_func_reply *r, struct xgpub_rtail *rt)
{
	static struct xgpuif_param p[XGPUIF_MAX_PARAMS];
	struct xgpub_driver *D = w->D;
	bool kernel = type == XGPUB_H_KERNEL;
	bool known = true, borrowed = false;
	struct xgpub_fn *fn;
	uint32_t n = 0, end = 0;

	/* a kernel's function in a context: the kernel's layout */
	if (like) {
		known = like->nparams != XGPUIF_PARAMS_UNKNOWN;
		n = known ? like->nparams : 0;
		end = like->param_bytes;
		memcpy(p, like->params, n * sizeof(p[0]));
	}
	/*
	 * A kernel's layout is the same in every context, but the driver
	 * answers only with one current: a request made on a thread with
	 * none (cudart resolves kernels lazily, on any thread) borrows the
	 * primary context for the question.
	 */
	if (kernel && !w->cur && w->primary &&
	    D->cuCtxSetCurrent(w->primary) == CUDA_SUCCESS)
		borrowed = true;
	while (known && !like) {
		size_t off = 0, size = 0;
		CUresult rc = kernel ?
			D->cuKernelGetParamInfo(obj, n, &off, &size) :
			D->cuFuncGetParamInfo(obj, n, &off, &size);

		/* past the last parameter; a kernel without parameters fails
		 * at index 0 with an error of its own */
		if (rc) {
			if (!n)
				xgpub_dbg("%s: %s reports no parameters (%d)",
					  w->t->who,
					  kernel ? "a kernel" : "a function",
					  rc);
			break;
		}
		if (n == XGPUIF_MAX_PARAMS || off > 0xffff ||
		    size > 0xffff || off + size > 0xffff) {
			known = false;
			break;
		}
		p[n].offset = (uint16_t)off;
		p[n].size = (uint16_t)size;
		if (off + size > end)
			end = (uint32_t)(off + size);
		n++;
	}
	if (borrowed)
		D->cuCtxSetCurrent(NULL);
	if (known && n * sizeof(p[0]) > rt->cap) {
		xgpub_dbg("%s: layout of %u parameters does not fit a %zu byte "
			  "reply", w->t->who, n, sizeof(*r) + rt->cap);
		known = false;
	}
	if (!known)
		n = 0;
	fn = malloc(sizeof(*fn) + n * sizeof(p[0]));
	if (!fn)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fn->root = root;
	fn->ctx = kernel ? NULL : w->cur;
	fn->nparams = known ? n : XGPUIF_PARAMS_UNKNOWN;
	fn->param_bytes = known ? end : 0;
	memcpy(fn->params, p, n * sizeof(p[0]));
	if (xgpub_module_handle(w, type, obj, fn, &r->handle))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->nparams = fn->nparams;
	r->param_bytes = fn->param_bytes;
	memcpy(rt->p, p, n * sizeof(p[0]));
	rt->len = n * (uint32_t)sizeof(p[0]);
	return CUDA_SUCCESS;
}

/*
 * The image of a module entry (its CUmodule, and the root its functions
 * get), or NULL for a module whose image is gone with its context.
 */
static const struct xgpub_image *image_of(const struct xgpub_hentry *module)
{
	return module->extra;
}

/*
 * A symbol request's owner and name: the driver's module (which
 * XGPUB_SYM_MODULE: its image's, NULL for a module gone with its context)
 * or library to look the NUL-terminated name after the args up in, and
 * root, the handle whose life the symbol's handle and memory follow.
 */
static int symbol_of(const struct xgpuif_symbol_args *a,
		     const struct xgpub_hentry *owner,
		     const struct xgpub_tail *tail, int which, void **obj,
		     xgpuif_handle_t *root, const char **name)
{
	const struct xgpub_image *img;

	*obj = owner->obj;
	*root = a->owner;
	if (which == XGPUB_SYM_MODULE) {
		img = image_of(owner);
		*obj = img ? img->mod : NULL;
		*root = img ? img->root : 0;
	}
	if (!tail->len || !memchr(tail->p, 0, tail->len))
		return XGPUIF_ST_PROTO;
	if (!*obj)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = (const char *)tail->p;
	return 0;
}

/* MODULE_GET_FUNCTION and LIBRARY_GET_KERNEL (which: XGPUB_SYM_MODULE or
 * XGPUB_SYM_LIBRARY): cuModuleGetFunction or cuLibraryGetKernel of the
 * name in tail */
int xgpub_h_get_fn(struct xgpub_worker *w, const struct xgpuif_symbol_args *a,
		   struct xgpub_hentry *owner, const struct xgpub_tail *tail,
		   struct xgpuif_func_reply *r, struct xgpub_rtail *rt,
		   int which)
{
	xgpuif_handle_t root;
	const char *name;
	CUfunction f;
	CUkernel k;
	void *obj;
	int rc = symbol_of(a, owner, tail, which, &obj, &root, &name);

	if (rc)
		return rc;
	if (which == XGPUB_SYM_LIBRARY) {
		rc = w->D->cuLibraryGetKernel(&k, obj, name);
		return rc ? rc :
			    reply_fn(w, XGPUB_H_KERNEL, k, root, NULL, r, rt);
	}
	rc = w->D->cuModuleGetFunction(&f, obj, name);
	return rc ? rc : reply_fn(w, XGPUB_H_FUNCTION, f, root, NULL, r, rt);
}

XGPUB_HANDLER(KERNEL_GET_FUNCTION)
{
	const struct xgpub_fn *kfn = handle->extra;
	CUfunction f;
	int rc;

	if (!kfn)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuKernelGetFunction(&f, handle->obj);
	if (rc)
		return rc;
	return reply_fn(w, XGPUB_H_FUNCTION, f, kfn->root, kfn, r, rt);
}

/*
 * A __managed__ variable at dptr (the driver says so): the managed
 * allocation holding it goes in the reply, and its blocks are served to
 * the guest (which maps it coherently) until root goes.  Any other global
 * is answered as it is.
 */
static int managed_var(struct xgpub_worker *w, xgpuif_handle_t root,
		       struct xgpuif_global_reply *r)
{
	struct xgpub_driver *D = w->D;
	unsigned int managed = 0;
	CUdeviceptr base = 0;
	size_t size = 0;
	bool borrowed = false;
	int rc;

	/* a library's variable may be asked for on a thread with no
	 * context (cudart resolves them lazily): the questions below
	 * borrow the primary */
	if (!w->cur && w->primary &&
	    D->cuCtxSetCurrent(w->primary) == CUDA_SUCCESS)
		borrowed = true;
	rc = D->cuPointerGetAttribute(&managed,
				      CU_POINTER_ATTRIBUTE_IS_MANAGED,
				      r->dptr);
	if (rc == CUDA_SUCCESS && managed &&
	    (D->cuMemGetAddressRange_v2(&base, &size, r->dptr) ||
	     r->dptr < base || r->dptr - base > size ||
	     r->size > size - (r->dptr - base))) {
		/* no allocation the driver names: the variable alone */
		xgpub_dbg("%s: no managed allocation holds the variable at "
			  "%#llx; mapping it alone", w->t->who,
			  (unsigned long long)r->dptr);
		base = r->dptr;
		size = r->size;
	}
	if (borrowed)
		D->cuCtxSetCurrent(NULL);
	if (rc != CUDA_SUCCESS || !managed)
		return CUDA_SUCCESS;
	/*
	 * Whole pages: the driver packs a module's variables, each an
	 * allocation of its own to cuMemGetAddressRange, into shared pages
	 * (H200: three of them in two pages), all of them its managed
	 * memory; the guest maps and copies pages.
	 */
	size += base & (XGPUIF_PAGE_SIZE - 1);
	base &= ~(uint64_t)(XGPUIF_PAGE_SIZE - 1);
	size = (size + XGPUIF_PAGE_SIZE - 1) & ~(uint64_t)(XGPUIF_PAGE_SIZE - 1);
	rc = xgpub_managed_var_note(root, base, size);
	if (rc)
		return rc;
	r->mbase = base;
	r->msize = size;
	r->flags = XGPUIF_GLOBAL_MANAGED;
	return CUDA_SUCCESS;
}

/*
 * MODULE_GET_GLOBAL, LIBRARY_GET_GLOBAL and LIBRARY_GET_MANAGED (which:
 * XGPUB_SYM_MODULE, _LIBRARY or _MANAGED): cuModuleGetGlobal,
 * cuLibraryGetGlobal or cuLibraryGetManaged of the name in tail; a managed
 * variable's allocation lives as long as the module or library
 */
int xgpub_h_get_global(struct xgpub_worker *w,
		       const struct xgpuif_symbol_args *a,
		       struct xgpub_hentry *owner,
		       const struct xgpub_tail *tail,
		       struct xgpuif_global_reply *r, int which)
{
	CUdeviceptr dptr = 0;
	xgpuif_handle_t root;
	const char *name;
	size_t size = 0;
	void *obj;
	int rc = symbol_of(a, owner, tail, which, &obj, &root, &name);

	if (rc)
		return rc;
	switch (which) {
	case XGPUB_SYM_MODULE:
		rc = w->D->cuModuleGetGlobal_v2(&dptr, &size, obj, name);
		break;
	case XGPUB_SYM_LIBRARY:
		rc = w->D->cuLibraryGetGlobal(&dptr, &size, obj, name);
		break;
	default:
		rc = w->D->cuLibraryGetManaged(&dptr, &size, obj, name);
		break;
	}
	if (rc)
		return rc;
	/* its memory is the guest's: charged once, until the unload */
	rc = xgpub_global_charge(w, root, dptr, size);
	if (rc)
		return rc;
	r->dptr = dptr;
	r->size = size;
	return managed_var(w, root, r);
}

XGPUB_HANDLER(LIBRARY_GET_MODULE)
{
	struct xgpub_image *img;
	CUmodule mod;
	int rc;

	rc = w->D->cuLibraryGetModule(&mod, handle->obj);
	if (rc)
		return rc;
	img = calloc(1, sizeof(*img));
	if (!img)
		return CUDA_ERROR_OUT_OF_MEMORY;
	img->mod = mod;
	img->root = xgpub_handle_of(&w->h, handle);
	img->ctx = w->cur;
	/* obj stays NULL: the teardown must not unload the library's
	 * module; cuLibraryUnload does */
	return xgpub_module_handle(w, XGPUB_H_MODULE, NULL, img, &r->handle);
}

XGPUB_HANDLER(LIBRARY_GET_KERNEL_COUNT)
{
	unsigned int n = 0;
	int rc = w->D->cuLibraryGetKernelCount(&n, handle->obj);

	r->value = n;
	return rc;
}

XGPUB_HANDLER(MODULE_GET_FUNCTION_COUNT)
{
	const struct xgpub_image *img = image_of(handle);
	unsigned int n = 0;
	int rc;

	if (!img)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuModuleGetFunctionCount(&n, img->mod);
	r->value = n;
	return rc;
}

/*
 * The names of a module's functions or a library's kernels, in the
 * driver's enumeration order, from index a->first on, as many whole names
 * as fit in the reply.
 */
static int names(struct xgpub_worker *w, bool library, void *owner,
		 const struct xgpuif_names_args *a,
		 struct xgpuif_names_reply *r, struct xgpub_rtail *rt)
{
	struct xgpub_driver *D = w->D;
	unsigned int n = 0;
	void **objs;
	int rc;

	rc = library ? D->cuLibraryGetKernelCount(&n, owner) :
		       D->cuModuleGetFunctionCount(&n, owner);
	if (rc)
		return rc;
	r->total = n;
	if (a->first >= n)
		return CUDA_SUCCESS;
	objs = calloc(n, sizeof(*objs));
	if (!objs)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = library ? D->cuLibraryEnumerateKernels((CUkernel *)objs, n, owner) :
		       D->cuModuleEnumerateFunctions((CUfunction *)objs, n,
						     owner);
	rt->len = 0;
	for (uint32_t i = a->first; rc == CUDA_SUCCESS && i < n; i++) {
		const char *name = NULL;
		size_t len;

		rc = library ? D->cuKernelGetName(&name, objs[i]) :
			       D->cuFuncGetName(&name, objs[i]);
		if (rc || !name) {
			rc = rc ? rc : CUDA_ERROR_UNKNOWN;
			break;
		}
		len = strlen(name) + 1;
		if (len > rt->cap - rt->len) {
			/* one name longer than a whole reply: none can say */
			if (!r->count)
				rc = CUDA_ERROR_NOT_SUPPORTED;
			break;
		}
		memcpy(rt->p + rt->len, name, len);
		rt->len += (uint32_t)len;
		r->count++;
	}
	r->bytes = rt->len;
	free(objs);
	return rc;
}

XGPUB_HANDLER(MODULE_FUNCTION_NAMES)
{
	const struct xgpub_image *img = image_of(handle);

	if (!img)
		return CUDA_ERROR_INVALID_HANDLE;
	return names(w, false, img->mod, a, r, rt);
}

XGPUB_HANDLER(LIBRARY_KERNEL_NAMES)
{
	return names(w, true, handle->obj, a, r, rt);
}

/* ---- attributes ---------------------------------------------------------- */

XGPUB_HANDLER(FUNC_GET_ATTRIBUTES)
{
	bool kernel = a->kind == XGPUIF_FN_KERNEL, any = false;
	int rc, first = CUDA_SUCCESS;
	void *obj;

	rc = xgpub_fn_get(w, a->handle, a->kind, &obj, NULL);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < XGPUIF_NUM_FUNC_ATTRS; i++) {
		CUfunction_attribute at = (CUfunction_attribute)i;
		int v = 0;

		/* the guest's device is the worker's one device */
		rc = kernel ? w->D->cuKernelGetAttribute(&v, at, obj, w->dev) :
			      w->D->cuFuncGetAttribute(&v, at, obj);
		if (rc == CUDA_SUCCESS) {
			r->attrs[i] = v;
			r->valid[i] = 1;
			any = true;
		} else if (first == CUDA_SUCCESS) {
			first = rc;
		}
	}
	return any ? CUDA_SUCCESS : first;
}

/* cuFuncSetAttribute/cuKernelSetAttribute, or the cache configuration */
static int fn_set(struct xgpub_worker *w, const struct xgpuif_func_attr_args *a,
		  bool cache)
{
	CUfunction_attribute at = (CUfunction_attribute)a->attr;
	CUfunc_cache cfg = (CUfunc_cache)a->attr;
	void *obj;
	int rc = xgpub_fn_get(w, a->handle, a->kind, &obj, NULL);

	if (rc)
		return rc;
	if (a->kind == XGPUIF_FN_KERNEL)
		return cache ?
			w->D->cuKernelSetCacheConfig(obj, cfg, w->dev) :
			w->D->cuKernelSetAttribute(at, a->value, obj, w->dev);
	return cache ? w->D->cuFuncSetCacheConfig(obj, cfg) :
		       w->D->cuFuncSetAttribute(obj, at, a->value);
}

XGPUB_HANDLER(FUNC_SET_ATTRIBUTE)
{
	return fn_set(w, a, false);
}

XGPUB_HANDLER(FUNC_SET_CACHE_CONFIG)
{
	return fn_set(w, a, true);
}
