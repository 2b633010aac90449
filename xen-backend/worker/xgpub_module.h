/* SPDX-License-Identifier: MIT */
/*
 * xgpub_module.h: what the module and launch handlers of a worker share:
 * the per-handle data of blobs, modules, libraries, kernels and functions.
 *
 * Ownership (all single allocations, so that the handle table's free()
 * of `extra` and the teardown's free() of a blob's `obj` are complete):
 *   BLOB      obj = struct xgpub_image (the bytes), extra = NULL
 *   MODULE    obj = CUmodule (NULL for a library's module, which its
 *             library unloads), extra = struct xgpub_image (the image it
 *             was loaded from; size 0 for a library's module)
 *   LIBRARY   obj = CUlibrary, extra = struct xgpub_image (kept while the
 *             library lives: it is loaded with BINARY_IS_PRESERVED)
 *   KERNEL    obj = CUkernel, extra = struct xgpub_fn
 *   FUNCTION  obj = CUfunction, extra = struct xgpub_fn
 * `root` names the module or library whose unload ends the handle: the
 * unload frees every handle with that root, so that no handle outlives the
 * driver object behind it.
 */
#ifndef XGPUB_MODULE_H
#define XGPUB_MODULE_H

#include "xgpub.h"

struct xgpub_image {
	uint64_t size;		/* bytes of data[] */
	CUmodule mod;		/* MODULE handles */
	xgpuif_handle_t root;	/* MODULE handles: itself or its library */
	CUcontext ctx;		/* MODULE handles: current when made */
	unsigned char data[];	/* 16-byte aligned */
};

struct xgpub_fn {
	xgpuif_handle_t root;
	CUcontext ctx;		/* FUNCTION handles: current when made */
	uint32_t nparams;	/* XGPUIF_PARAMS_UNKNOWN: launch via extra */
	uint32_t param_bytes;	/* end of the last parameter */
	struct xgpuif_param params[];
};

/*
 * Does the image (a fatbin, an ELF cubin or PTX text, size bytes at p)
 * lie inside those bytes by its own description: the fatbin's header and
 * its size, the ELF's header tables and the file bytes of its sections
 * and segments, PTX's terminator?  A guest's fatbin wrapper (it holds a
 * guest pointer) does not.  The driver parses what passes, with no length
 * to go by (xgpub_op_module.c; fuzzed by tests/fuzz/fuzz_image.c).
 */
bool xgpub_image_fits(const uint8_t *p, uint64_t size);

/*
 * A new handle of `type` for obj and extra, in *h: CUDA_SUCCESS, or
 * CUDA_ERROR_OUT_OF_MEMORY when the table is full, after freeing the
 * allocation the handle was to own (a blob's obj, others' extra).
 */
/* what was made in context from (a green context's, going) is counted as
 * made in to (xgpub_op_module.c) */
void xgpub_module_ctx_moved(struct xgpub_worker *w, CUcontext from,
			    CUcontext to);

int xgpub_module_handle(struct xgpub_worker *w, int type, void *obj,
			void *extra, xgpuif_handle_t *h);

/*
 * The driver object and layout (fn may be NULL) of a launchable handle of
 * wire kind `kind`: 0, CUDA_ERROR_INVALID_HANDLE, or XGPUIF_ST_PROTO for a
 * kind that is neither XGPUIF_FN_FUNCTION nor XGPUIF_FN_KERNEL.
 */
int xgpub_fn_get(struct xgpub_worker *w, xgpuif_handle_t h, uint32_t kind,
		 void **obj, const struct xgpub_fn **fn);

/*
 * Launch attributes from the wire (n entries at src, n already checked
 * against XGPUIF_MAX_LAUNCH_ATTRS) into out[]: event handles become
 * CUevents; attributes that may carry pointers are refused.
 */
int xgpub_launch_attrs(struct xgpub_worker *w, const uint8_t *src,
		       uint32_t n, CUlaunchAttribute *out);

/*
 * A context is gone (destroyed, or a primary context reset): the driver
 * unloaded the modules loaded in it, and the CUfunctions of those modules
 * and of kernels in it are stale.  Drop their handles, without calling
 * the driver, so that no later request reaches it with a dead pointer.
 * Libraries and kernels are context independent and stay.  The context
 * handlers call this.
 */
void xgpub_module_ctx_gone(struct xgpub_worker *w, CUcontext ctx);

/*
 * Take the blob h names: from then on the image is the caller's to free
 * (xgpub_op_module.c).  CUDA_ERROR_INVALID_HANDLE for no blob.
 */
int xgpub_take_blob(struct xgpub_worker *w, xgpuif_handle_t h,
		    struct xgpub_image **img);

#endif /* XGPUB_MODULE_H */
