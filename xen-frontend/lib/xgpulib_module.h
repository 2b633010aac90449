/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_module.h: modules, libraries and the functions and kernels
 * found in them, as the guest keeps them (xgpulib_api_module.c loads and
 * unloads, xgpulib_api_func.c looks up).
 *
 * CUfunction and CUkernel handles are struct xgpulib_func (xgpulib.h),
 * carrying the parameter layout the worker read with cuFuncGetParamInfo /
 * cuKernelGetParamInfo, so that a launch can flatten kernelParams without
 * asking.  Each module and library keeps a table by name: looking the
 * same name up twice gives the same handle, as the real driver does, and
 * costs no round trip.  Function attributes are fetched once and cached.
 *
 * Locking: a module's or library's table (and a kernel's per-context
 * functions, and a library's modules) is guarded by its own.tab.mu; a
 * function's attribute cache by its attr_mu.  Unloading while another
 * thread still uses the module is the application's bug, as with the real
 * driver.
 */
#ifndef XGPULIB_MODULE_H
#define XGPULIB_MODULE_H

#include "xgpulib.h"

#define XGPULIB_MOD_MAGIC 0x786d6f64u	/* "xmod" */
#define XGPULIB_LIB_MAGIC 0x786c6962u	/* "xlib" */
#define XGPULIB_DEAD_MAGIC 0xdeadf00du
#define TAB_BUCKETS 64u

struct xfunc;

/* a kernel's CUfunction in one context */
struct kfn {
	uint64_t ctx;
	struct xfunc *fn;
	struct kfn *next;
};

/*
 * A function or kernel: the public struct first (CUfunction/CUkernel
 * point at it), then the owner's bookkeeping; params and the name follow
 * in the same allocation.
 */
struct xfunc {
	struct xgpulib_func f;
	struct xfunc *next;	/* hash chain in the owner's table */
	struct kfn *kfns;	/* kernels: their functions per context */
	struct xgpuif_param params[];
};

struct symtab {
	pthread_mutex_t mu;
	struct xfunc *b[TAB_BUCKETS];
};

/* a library's module in one context */
struct libmod {
	uint64_t ctx;
	struct CUmod_st *mod;
	struct libmod *next;
};

/*
 * What modules and libraries share, all that a lookup by name needs: the
 * wire handle, the table of what was found (a module's functions, a
 * library's kernels) and what those belong to.
 */
struct symowner {
	uint64_t remote;
	struct symtab tab;
	struct CUmod_st *mod;	/* the module itself; NULL in a library */
	struct CUlib_st *lib;	/* the library itself, or the module's */
};

struct CUmod_st {
	uint32_t magic;
	CUcontext ctx;		/* current at load */
	struct symowner own;	/* own.lib set for a library's module */
};

struct CUlib_st {
	uint32_t magic;
	struct symowner own;	/* kernels; own.tab.mu also guards mods and
				 * the kernels' kfns */
	struct libmod *mods;
};

static inline struct CUmod_st *xgpulib_mod_check(CUmodule m)
{
	return m && m->magic == XGPULIB_MOD_MAGIC ? m : NULL;
}

static inline struct CUlib_st *xgpulib_lib_check(CUlibrary l)
{
	return l && l->magic == XGPULIB_LIB_MAGIC ? l : NULL;
}

/* one function of a module, with its name (xgpulib_module_each) */
typedef void (*xgpulib_fn_visit)(void *user, CUfunction f, const char *name);
/*
 * visit(user, f, name) for every function of mod, in the driver's order,
 * as cuModuleGetFunction(name) would give it; *count: how many.
 */
CUresult xgpulib_module_each(CUmodule mod, xgpulib_fn_visit visit,
			     void *user, unsigned int *count);
/* the number of parameters of f (NOT_SUPPORTED where the layout is not
 * known) */
CUresult xgpulib_func_param_count(CUfunction f, size_t *count);

/*
 * The request of a lookup by name in the module or library with wire
 * handle owner: its arguments (*a) and the name, NUL included, as its
 * tail; CUDA_ERROR_INVALID_VALUE for a name too long for one request.
 */
CUresult xgpulib_symbol_req(uint64_t owner, const char *name,
			    struct xgpuif_symbol_args *a,
			    struct xgpuif_iov *tail);

/* an image's bytes into a new blob of the worker's (*blob its handle) */
CUresult xgpulib_image_upload(const void *bytes, size_t size, uint64_t *blob);
/* a whole file, NUL terminated; *buf is the caller's to free */
CUresult xgpulib_read_file(const char *path, uint8_t **buf, size_t *size);

#endif /* XGPULIB_MODULE_H */
