// SPDX-License-Identifier: MIT
/*
 * xgpub_op_module.c: blobs, modules, libraries, kernels and functions in
 * a worker.
 *
 * An image arrives as a blob (BLOB_CREATE, then BLOB_WRITE chunks from
 * shared memory) and is handed to the module or library loaded from it.
 * The driver parses an image with no length to go by, so before a load
 * the worker checks that the image's own idea of its size (fatbin header,
 * ELF tables, PTX terminator) stays inside the blob, and keeps zero bytes
 * after it.  Only numeric JIT and library options are accepted: an option
 * whose value the driver would dereference must never come from a guest.
 *
 * Function and kernel handles carry their parameter layout
 * (cuFuncGetParamInfo/cuKernelGetParamInfo, read once here), which the
 * guest uses to flatten kernelParams and LAUNCH uses to rebuild them.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

#define BLOB_MAX	(1ull << 30)	/* one image */
#define BLOBS_MAX	(4ull << 30)	/* all images of a guest */
#define BLOB_GUARD	16u		/* zero bytes after an image */
#define MAX_LOAD_OPTS	XGPUIF_MAX_LOAD_OPTS

_Static_assert(__builtin_offsetof(struct xgpub_image, data) % 16 == 0,
	       "image data is 16-byte aligned");

static xgpuif_handle_t handle_of(struct xgpub_worker *w,
				 const struct xgpub_hentry *e)
{
	return ((xgpuif_handle_t)e->gen << 32) |
	       (uint32_t)(e - w->h.e + 1);
}

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
	*fn = e->extra;
	return 0;
}

/* ---- image accounting and checks ----------------------------------------- */

struct sum {
	uint64_t bytes;
	bool in_obj;
};

static void sum_one(struct xgpub_hentry *e, void *arg)
{
	struct sum *s = arg;
	const struct xgpub_image *img = s->in_obj ? e->obj : e->extra;

	if (img)
		s->bytes += img->size;
}

/* bytes of every image the guest holds: blobs, modules, libraries */
static uint64_t images_total(struct xgpub_worker *w)
{
	struct sum s = { 0, true };

	xgpub_handle_each(&w->h, XGPUB_H_BLOB, sum_one, &s);
	s.in_obj = false;
	xgpub_handle_each(&w->h, XGPUB_H_MODULE, sum_one, &s);
	xgpub_handle_each(&w->h, XGPUB_H_LIBRARY, sum_one, &s);
	return s.bytes;
}

static bool range_in(uint64_t off, uint64_t n, uint64_t entsize,
		     uint64_t size)
{
	uint64_t bytes, end;

	return !__builtin_mul_overflow(n, entsize, &bytes) &&
	       !__builtin_add_overflow(off, bytes, &end) && end <= size;
}

static bool elf_fits(const uint8_t *p, uint64_t size)
{
	Elf64_Ehdr eh;
	uint64_t shnum, phnum;

	if (size < sizeof(eh))
		return false;
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return false;
	shnum = eh.e_shnum;
	phnum = eh.e_phnum;
	if (eh.e_shoff) {
		Elf64_Shdr sh;

		if (eh.e_shentsize < sizeof(sh) ||
		    !range_in(eh.e_shoff, 1, sizeof(sh), size))
			return false;
		memcpy(&sh, p + eh.e_shoff, sizeof(sh));
		if (shnum == 0)
			shnum = sh.sh_size;
		if (phnum == PN_XNUM)
			phnum = sh.sh_info;
		if (!range_in(eh.e_shoff, shnum, eh.e_shentsize, size))
			return false;
		for (uint64_t i = 0; i < shnum; i++) {
			memcpy(&sh, p + eh.e_shoff + i * eh.e_shentsize,
			       sizeof(sh));
			if (sh.sh_type != SHT_NOBITS &&
			    !range_in(sh.sh_offset, 1, sh.sh_size, size))
				return false;
		}
	} else if (shnum) {
		return false;
	}
	if (phnum && (eh.e_phentsize < sizeof(Elf64_Phdr) ||
		      !range_in(eh.e_phoff, phnum, eh.e_phentsize, size)))
		return false;
	return true;
}

/* does the image, by its own description, lie inside its blob? */
static bool image_fits(const uint8_t *p, uint64_t size)
{
	static const uint8_t wrapper[4] = { 0xb1, 0x43, 0x62, 0x46 };
	static const uint8_t fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
	static const uint8_t elf[4] = { 0x7f, 'E', 'L', 'F' };

	if (size >= 4 && memcmp(p, wrapper, 4) == 0)
		return false;	/* holds a guest pointer */
	if (size >= 4 && memcmp(p, fatbin, 4) == 0) {
		uint16_t hsize;
		uint64_t fsize;

		if (size < 16)
			return false;
		memcpy(&hsize, p + 6, sizeof(hsize));
		memcpy(&fsize, p + 8, sizeof(fsize));
		return hsize >= 16 && fsize <= size && hsize <= size - fsize;
	}
	if (size >= 4 && memcmp(p, elf, 4) == 0)
		return elf_fits(p, size);
	/* PTX: the text ends inside the blob */
	return size && memchr(p, 0, size) != NULL;
}

/* ---- blobs --------------------------------------------------------------- */

int xgpub_op_BLOB_CREATE(struct xgpub_worker *w,
			 const struct xgpuif_request *req, const void *payload,
			 uint32_t len, void *out, uint32_t *rlen)
{
	struct xgpuif_blob_create_args a;
	struct xgpuif_blob_reply r;
	struct xgpub_image *img;

	(void)req;
	(void)len;
	memcpy(&a, payload, sizeof(a));
	*rlen = 0;
	if (a.size > BLOB_MAX || a.size > BLOBS_MAX - images_total(w))
		return CUDA_ERROR_OUT_OF_MEMORY;
	img = malloc(sizeof(*img) + a.size + BLOB_GUARD);
	if (!img)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(img, 0, sizeof(*img));
	img->size = a.size;
	/* the guard ends a PTX text the guest left unterminated */
	memset(img->data + a.size, 0, BLOB_GUARD);
	r.blob = xgpub_handle_new(&w->h, XGPUB_H_BLOB, img, NULL);
	if (!r.blob) {
		free(img);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(out, &r, sizeof(r));
	*rlen = sizeof(r);
	return CUDA_SUCCESS;
}

int xgpub_op_BLOB_WRITE(struct xgpub_worker *w,
			const struct xgpuif_request *req, const void *payload,
			uint32_t len, void *out, uint32_t *rlen)
{
	struct xgpuif_blob_write_args a;
	struct xgpub_hentry *e;
	struct xgpub_image *img;
	const uint8_t *src;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	e = xgpub_handle_get(&w->h, a.blob, XGPUB_H_BLOB);
	if (!e || !e->obj)
		return CUDA_ERROR_INVALID_HANDLE;
	img = e->obj;
	if (a.off > img->size || a.src.len > img->size - a.off)
		return XGPUIF_ST_PROTO;
	src = xgpub_memref(w, &a.src);
	if (!src)
		return XGPUIF_ST_PROTO;
	memcpy(img->data + a.off, src, a.src.len);
	return CUDA_SUCCESS;
}

int xgpub_op_BLOB_FREE(struct xgpub_worker *w,
		       const struct xgpuif_request *req, const void *payload,
		       uint32_t len, void *out, uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	struct xgpub_hentry *e;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_BLOB);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	free(e->obj);
	e->obj = NULL;
	xgpub_handle_free(&w->h, a.handle, XGPUB_H_BLOB);
	return CUDA_SUCCESS;
}

/* ---- loads --------------------------------------------------------------- */


struct opts {
	CUjit_option jit[MAX_LOAD_OPTS];
	void *jitv[MAX_LOAD_OPTS];
	CUlibraryOption lib[MAX_LOAD_OPTS + 1];
	void *libv[MAX_LOAD_OPTS + 1];
	unsigned int njit, nlib;
};

/* the options after the load args: CUDA_ERROR_INVALID_VALUE if refused */
static int parse_opts(const uint8_t *p, uint32_t njit, uint32_t nlib,
		      struct opts *o)
{
	o->njit = njit;
	o->nlib = nlib;
	for (uint32_t i = 0; i < njit + nlib; i++) {
		struct xgpuif_load_opt lo;

		memcpy(&lo, p + i * sizeof(lo), sizeof(lo));
		if (i < njit) {
			if (!xgpuif_jit_option_numeric(lo.id))
				return CUDA_ERROR_INVALID_VALUE;
			o->jit[i] = (CUjit_option)lo.id;
			o->jitv[i] = (void *)(uintptr_t)lo.value;
		} else {
			/* the host table option holds a guest pointer */
			if (lo.id != CU_LIBRARY_BINARY_IS_PRESERVED)
				return CUDA_ERROR_INVALID_VALUE;
			o->lib[i - njit] = (CUlibraryOption)lo.id;
			o->libv[i - njit] = (void *)(uintptr_t)lo.value;
		}
	}
	return CUDA_SUCCESS;
}

/*
 * Take the blob a load names: from here on the image belongs to the load,
 * which frees it if it fails (the guest never frees a blob it loaded).
 */
static int take_blob(struct xgpub_worker *w, xgpuif_handle_t h,
		     struct xgpub_image **img)
{
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, h, XGPUB_H_BLOB);

	if (!e || !e->obj)
		return CUDA_ERROR_INVALID_HANDLE;
	*img = e->obj;
	e->obj = NULL;
	xgpub_handle_free(&w->h, h, XGPUB_H_BLOB);
	return CUDA_SUCCESS;
}

static int load(struct xgpub_worker *w, const void *payload, uint32_t len,
		bool library, void *out, uint32_t *rlen)
{
	struct xgpuif_load_args a;
	struct xgpuif_load_reply r;
	struct xgpub_image *img;
	static struct opts o;
	uint64_t nopts;
	void *obj = NULL;
	int rc;

	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	nopts = (uint64_t)a.njit + a.nlib;
	if (nopts > MAX_LOAD_OPTS || (!library && a.nlib) ||
	    len != sizeof(a) + nopts * sizeof(struct xgpuif_load_opt))
		return XGPUIF_ST_PROTO;
	rc = take_blob(w, a.blob, &img);
	if (rc)
		return rc;
	rc = parse_opts((const uint8_t *)payload + sizeof(a), a.njit, a.nlib,
			&o);
	if (rc == CUDA_SUCCESS && !image_fits(img->data, img->size))
		rc = CUDA_ERROR_INVALID_IMAGE;
	if (rc == CUDA_SUCCESS && !library) {
		if (!w->D->cuModuleLoadDataEx)
			rc = CUDA_ERROR_NOT_SUPPORTED;
		else
			rc = w->D->cuModuleLoadDataEx((CUmodule *)&obj,
						      img->data, o.njit, o.jit,
						      o.jitv);
	} else if (rc == CUDA_SUCCESS) {
		bool preserved = false;

		for (unsigned int i = 0; i < o.nlib; i++)
			preserved |= o.lib[i] == CU_LIBRARY_BINARY_IS_PRESERVED;
		/* the image stays with the library: spare the driver a copy */
		if (!preserved) {
			o.lib[o.nlib] = CU_LIBRARY_BINARY_IS_PRESERVED;
			o.libv[o.nlib++] = (void *)(uintptr_t)1;
		}
		if (!w->D->cuLibraryLoadData)
			rc = CUDA_ERROR_NOT_SUPPORTED;
		else
			rc = w->D->cuLibraryLoadData((CUlibrary *)&obj,
						     img->data, o.jit, o.jitv,
						     o.njit, o.lib, o.libv,
						     o.nlib);
	}
	if (rc) {
		free(img);
		return rc;
	}
	img->mod = library ? NULL : obj;
	img->ctx = library ? NULL : w->cur;
	r.handle = xgpub_handle_new(&w->h,
				    library ? XGPUB_H_LIBRARY : XGPUB_H_MODULE,
				    obj, img);
	if (!r.handle) {
		if (library && w->D->cuLibraryUnload)
			w->D->cuLibraryUnload(obj);
		else if (w->D->cuModuleUnload)
			w->D->cuModuleUnload(obj);
		free(img);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	img->root = r.handle;
	memcpy(out, &r, sizeof(r));
	*rlen = sizeof(r);
	return CUDA_SUCCESS;
}

int xgpub_op_MODULE_LOAD(struct xgpub_worker *w,
			 const struct xgpuif_request *req, const void *payload,
			 uint32_t len, void *out, uint32_t *rlen)
{
	(void)req;
	return load(w, payload, len, false, out, rlen);
}

int xgpub_op_LIBRARY_LOAD(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const void *payload, uint32_t len, void *out,
			  uint32_t *rlen)
{
	(void)req;
	return load(w, payload, len, true, out, rlen);
}

/* ---- unloads ------------------------------------------------------------- */

struct drop {
	struct xgpub_worker *w;
	xgpuif_handle_t root;
	int type;
};

static void drop_one(struct xgpub_hentry *e, void *arg)
{
	struct drop *d = arg;
	xgpuif_handle_t root;

	if (!e->extra)
		return;
	if (d->type == XGPUB_H_MODULE)
		root = ((const struct xgpub_image *)e->extra)->root;
	else
		root = ((const struct xgpub_fn *)e->extra)->root;
	/* freeing marks the entry free; the table is not reallocated */
	if (root == d->root && handle_of(d->w, e) != d->root)
		xgpub_handle_free(&d->w->h, handle_of(d->w, e), d->type);
}

/* free the handles of `type` that die with `root` */
static void drop_children(struct xgpub_worker *w, xgpuif_handle_t root,
			  int type)
{
	struct drop d = { w, root, type };

	xgpub_handle_each(&w->h, type, drop_one, &d);
}

int xgpub_op_MODULE_UNLOAD(struct xgpub_worker *w,
			   const struct xgpuif_request *req,
			   const void *payload, uint32_t len, void *out,
			   uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	struct xgpub_hentry *e;
	const struct xgpub_image *img;
	CUmodule mod;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_MODULE);
	if (!e || !e->extra)
		return CUDA_ERROR_INVALID_HANDLE;
	img = e->extra;
	/* a library's module goes with its library */
	if (img->root != a.handle)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuModuleUnload);
	mod = e->obj;
	drop_children(w, a.handle, XGPUB_H_FUNCTION);
	rc = w->D->cuModuleUnload(mod);
	/* the image goes only after the driver let go of it */
	xgpub_handle_free(&w->h, a.handle, XGPUB_H_MODULE);
	return rc;
}

int xgpub_op_LIBRARY_UNLOAD(struct xgpub_worker *w,
			    const struct xgpuif_request *req,
			    const void *payload, uint32_t len, void *out,
			    uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	struct xgpub_hentry *e;
	CUlibrary lib;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_LIBRARY);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuLibraryUnload);
	lib = e->obj;
	drop_children(w, a.handle, XGPUB_H_FUNCTION);
	drop_children(w, a.handle, XGPUB_H_KERNEL);
	drop_children(w, a.handle, XGPUB_H_MODULE);
	rc = w->D->cuLibraryUnload(lib);
	/* frees the image, which BINARY_IS_PRESERVED kept until now */
	xgpub_handle_free(&w->h, a.handle, XGPUB_H_LIBRARY);
	return rc;
}

struct gone {
	struct xgpub_worker *w;
	CUcontext ctx;
	int type;
};

static void gone_one(struct xgpub_hentry *e, void *arg)
{
	struct gone *g = arg;
	CUcontext ctx;

	if (!e->extra)
		return;
	if (g->type == XGPUB_H_MODULE)
		ctx = ((const struct xgpub_image *)e->extra)->ctx;
	else
		ctx = ((const struct xgpub_fn *)e->extra)->ctx;
	if (ctx == g->ctx)
		xgpub_handle_free(&g->w->h, handle_of(g->w, e), g->type);
}

void xgpub_module_ctx_gone(struct xgpub_worker *w, CUcontext ctx)
{
	struct gone g = { w, ctx, XGPUB_H_FUNCTION };

	if (!ctx)
		return;
	xgpub_handle_each(&w->h, XGPUB_H_FUNCTION, gone_one, &g);
	g.type = XGPUB_H_MODULE;
	xgpub_handle_each(&w->h, XGPUB_H_MODULE, gone_one, &g);
}

/* ---- symbols ------------------------------------------------------------- */

/* the owner and the NUL-terminated name of a symbol request */
static int symbol_args(const void *payload, uint32_t len,
		       struct xgpuif_symbol_args *a, const char **name)
{
	const char *n = (const char *)payload + sizeof(*a);

	memcpy(a, payload, sizeof(*a));
	if (len <= sizeof(*a) || !memchr(n, 0, len - sizeof(*a)))
		return XGPUIF_ST_PROTO;
	*name = n;
	return 0;
}

/* a module handle's CUmodule and the root its functions get */
static struct xgpub_image *module_get(struct xgpub_worker *w,
				      xgpuif_handle_t h)
{
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, h, XGPUB_H_MODULE);

	return e ? e->extra : NULL;
}

/*
 * Register a function or kernel with its parameter layout and write the
 * reply.  A layout the driver does not give, or one that does not fit the
 * reply (or uint16 offsets), is XGPUIF_PARAMS_UNKNOWN on both ends.
 */
static int reply_fn(struct xgpub_worker *w, int type, void *obj,
		    xgpuif_handle_t root, void *out, uint32_t *rlen)
{
	static struct xgpuif_param p[XGPUIF_MAX_PARAMS];
	struct xgpub_driver *D = w->D;
	bool kernel = type == XGPUB_H_KERNEL;
	bool known = kernel ? D->cuKernelGetParamInfo != NULL :
			      D->cuFuncGetParamInfo != NULL;
	struct xgpuif_func_reply r;
	struct xgpub_fn *fn;
	uint32_t n = 0, end = 0, cap = *rlen;

	*rlen = 0;
	while (known) {
		size_t off = 0, size = 0;
		CUresult rc = kernel ?
			D->cuKernelGetParamInfo(obj, n, &off, &size) :
			D->cuFuncGetParamInfo(obj, n, &off, &size);

		/* past the last parameter; a kernel without parameters fails
		 * at index 0 with an error of its own */
		if (rc)
			break;
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
	if (known && sizeof(r) + n * sizeof(p[0]) > cap) {
		xgpub_dbg("%s: layout of %u parameters does not fit a %u byte "
			  "reply", w->t->who, n, cap);
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
	r.handle = xgpub_handle_new(&w->h, type, obj, fn);
	if (!r.handle) {
		free(fn);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r.nparams = fn->nparams;
	r.param_bytes = fn->param_bytes;
	memcpy(out, &r, sizeof(r));
	memcpy((uint8_t *)out + sizeof(r), p, n * sizeof(p[0]));
	*rlen = sizeof(r) + n * sizeof(p[0]);
	return CUDA_SUCCESS;
}

int xgpub_op_MODULE_GET_FUNCTION(struct xgpub_worker *w,
				 const struct xgpuif_request *req,
				 const void *payload, uint32_t len, void *out,
				 uint32_t *rlen)
{
	struct xgpuif_symbol_args a;
	struct xgpub_image *img;
	const char *name;
	CUfunction f;
	int rc;

	(void)req;
	rc = symbol_args(payload, len, &a, &name);
	img = rc ? NULL : module_get(w, a.owner);
	if (!rc && !img)
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (!rc && !w->D->cuModuleGetFunction)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (!rc)
		rc = w->D->cuModuleGetFunction(&f, img->mod, name);
	if (rc) {
		*rlen = 0;
		return rc;
	}
	return reply_fn(w, XGPUB_H_FUNCTION, f, img->root, out, rlen);
}

int xgpub_op_LIBRARY_GET_KERNEL(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	struct xgpuif_symbol_args a;
	struct xgpub_hentry *e;
	const char *name;
	CUkernel k;
	int rc;

	(void)req;
	rc = symbol_args(payload, len, &a, &name);
	e = rc ? NULL : xgpub_handle_get(&w->h, a.owner, XGPUB_H_LIBRARY);
	if (!rc && !e)
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (!rc && !w->D->cuLibraryGetKernel)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (!rc)
		rc = w->D->cuLibraryGetKernel(&k, e->obj, name);
	if (rc) {
		*rlen = 0;
		return rc;
	}
	return reply_fn(w, XGPUB_H_KERNEL, k, a.owner, out, rlen);
}

int xgpub_op_KERNEL_GET_FUNCTION(struct xgpub_worker *w,
				 const struct xgpuif_request *req,
				 const void *payload, uint32_t len, void *out,
				 uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	const struct xgpub_fn *kfn;
	void *k;
	CUfunction f;
	int rc;

	(void)req;
	(void)len;
	memcpy(&a, payload, sizeof(a));
	rc = xgpub_fn_get(w, a.handle, XGPUIF_FN_KERNEL, &k, &kfn);
	if (!rc && !w->D->cuKernelGetFunction)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (!rc)
		rc = w->D->cuKernelGetFunction(&f, k);
	if (rc) {
		*rlen = 0;
		return rc;
	}
	return reply_fn(w, XGPUB_H_FUNCTION, f, kfn->root, out, rlen);
}

static int reply_global(int rc, CUdeviceptr dptr, size_t size, void *out,
			uint32_t *rlen)
{
	struct xgpuif_global_reply r;

	*rlen = 0;
	if (rc)
		return rc;
	r.dptr = dptr;
	r.size = size;
	memcpy(out, &r, sizeof(r));
	*rlen = sizeof(r);
	return CUDA_SUCCESS;
}

int xgpub_op_MODULE_GET_GLOBAL(struct xgpub_worker *w,
			       const struct xgpuif_request *req,
			       const void *payload, uint32_t len, void *out,
			       uint32_t *rlen)
{
	struct xgpuif_symbol_args a;
	struct xgpub_image *img = NULL;
	const char *name;
	CUdeviceptr dptr = 0;
	size_t size = 0;
	int rc;

	(void)req;
	rc = symbol_args(payload, len, &a, &name);
	if (!rc) {
		img = module_get(w, a.owner);
		if (!img)
			rc = CUDA_ERROR_INVALID_HANDLE;
	}
	if (!rc && !w->D->cuModuleGetGlobal_v2)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (!rc)
		rc = w->D->cuModuleGetGlobal_v2(&dptr, &size, img->mod, name);
	return reply_global(rc, dptr, size, out, rlen);
}

int xgpub_op_LIBRARY_GET_GLOBAL(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	struct xgpuif_symbol_args a;
	struct xgpub_hentry *e = NULL;
	const char *name;
	CUdeviceptr dptr = 0;
	size_t size = 0;
	int rc;

	(void)req;
	rc = symbol_args(payload, len, &a, &name);
	if (!rc) {
		e = xgpub_handle_get(&w->h, a.owner, XGPUB_H_LIBRARY);
		if (!e)
			rc = CUDA_ERROR_INVALID_HANDLE;
	}
	if (!rc && !w->D->cuLibraryGetGlobal)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (!rc)
		rc = w->D->cuLibraryGetGlobal(&dptr, &size, e->obj, name);
	return reply_global(rc, dptr, size, out, rlen);
}

int xgpub_op_LIBRARY_GET_MODULE(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	struct xgpuif_load_reply r;
	struct xgpub_hentry *e;
	struct xgpub_image *img;
	CUmodule mod;
	int rc;

	(void)req;
	(void)len;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_LIBRARY);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuLibraryGetModule);
	rc = w->D->cuLibraryGetModule(&mod, e->obj);
	if (rc)
		return rc;
	img = calloc(1, sizeof(*img));
	if (!img)
		return CUDA_ERROR_OUT_OF_MEMORY;
	img->mod = mod;
	img->root = a.handle;
	img->ctx = w->cur;
	/* obj stays NULL: the teardown must not unload the library's
	 * module; cuLibraryUnload does */
	r.handle = xgpub_handle_new(&w->h, XGPUB_H_MODULE, NULL, img);
	if (!r.handle) {
		free(img);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(out, &r, sizeof(r));
	*rlen = sizeof(r);
	return CUDA_SUCCESS;
}

static int reply_count(int rc, unsigned int n, void *out, uint32_t *rlen)
{
	struct xgpuif_u64_reply r = { n };

	*rlen = 0;
	if (rc)
		return rc;
	memcpy(out, &r, sizeof(r));
	*rlen = sizeof(r);
	return CUDA_SUCCESS;
}

int xgpub_op_LIBRARY_GET_KERNEL_COUNT(struct xgpub_worker *w,
				      const struct xgpuif_request *req,
				      const void *payload, uint32_t len,
				      void *out, uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	struct xgpub_hentry *e;
	unsigned int n = 0;
	int rc = CUDA_SUCCESS;

	(void)req;
	(void)len;
	memcpy(&a, payload, sizeof(a));
	e = xgpub_handle_get(&w->h, a.handle, XGPUB_H_LIBRARY);
	if (!e)
		rc = CUDA_ERROR_INVALID_HANDLE;
	else if (!w->D->cuLibraryGetKernelCount)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	else
		rc = w->D->cuLibraryGetKernelCount(&n, e->obj);
	return reply_count(rc, n, out, rlen);
}

int xgpub_op_MODULE_GET_FUNCTION_COUNT(struct xgpub_worker *w,
				       const struct xgpuif_request *req,
				       const void *payload, uint32_t len,
				       void *out, uint32_t *rlen)
{
	struct xgpuif_handle_args a;
	struct xgpub_image *img;
	unsigned int n = 0;
	int rc = CUDA_SUCCESS;

	(void)req;
	(void)len;
	memcpy(&a, payload, sizeof(a));
	img = module_get(w, a.handle);
	if (!img)
		rc = CUDA_ERROR_INVALID_HANDLE;
	else if (!w->D->cuModuleGetFunctionCount)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	else
		rc = w->D->cuModuleGetFunctionCount(&n, img->mod);
	return reply_count(rc, n, out, rlen);
}

/* ---- attributes ---------------------------------------------------------- */

int xgpub_op_FUNC_GET_ATTRIBUTES(struct xgpub_worker *w,
				 const struct xgpuif_request *req,
				 const void *payload, uint32_t len, void *out,
				 uint32_t *rlen)
{
	struct xgpuif_func_attr_args a;
	struct xgpuif_func_attrs_reply r;
	const struct xgpub_fn *fn;
	bool kernel, any = false;
	int rc, first = CUDA_SUCCESS;
	void *obj;

	(void)req;
	(void)len;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	rc = xgpub_fn_get(w, a.handle, a.kind, &obj, &fn);
	if (rc)
		return rc;
	kernel = a.kind == XGPUIF_FN_KERNEL;
	if (kernel)
		XGPUB_NOT_SUPPORTED_IF_NULL(w, cuKernelGetAttribute);
	else
		XGPUB_NOT_SUPPORTED_IF_NULL(w, cuFuncGetAttribute);
	memset(&r, 0, sizeof(r));
	for (uint32_t i = 0; i < XGPUIF_NUM_FUNC_ATTRS; i++) {
		int v = 0;

		/* the guest's device is the worker's one device */
		if (kernel)
			rc = w->D->cuKernelGetAttribute(
				&v, (CUfunction_attribute)i, obj, w->dev);
		else
			rc = w->D->cuFuncGetAttribute(
				&v, (CUfunction_attribute)i, obj);
		if (rc == CUDA_SUCCESS) {
			r.attrs[i] = v;
			r.valid[i] = 1;
			any = true;
		} else if (first == CUDA_SUCCESS) {
			first = rc;
		}
	}
	if (!any)
		return first;
	memcpy(out, &r, sizeof(r));
	*rlen = sizeof(r);
	return CUDA_SUCCESS;
}

int xgpub_op_FUNC_SET_ATTRIBUTE(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	struct xgpuif_func_attr_args a;
	const struct xgpub_fn *fn;
	void *obj;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	rc = xgpub_fn_get(w, a.handle, a.kind, &obj, &fn);
	if (rc)
		return rc;
	if (a.kind == XGPUIF_FN_KERNEL) {
		XGPUB_NOT_SUPPORTED_IF_NULL(w, cuKernelSetAttribute);
		return w->D->cuKernelSetAttribute((CUfunction_attribute)a.attr,
						  a.value, obj, w->dev);
	}
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuFuncSetAttribute);
	return w->D->cuFuncSetAttribute(obj, (CUfunction_attribute)a.attr,
					a.value);
}

int xgpub_op_FUNC_SET_CACHE_CONFIG(struct xgpub_worker *w,
				   const struct xgpuif_request *req,
				   const void *payload, uint32_t len, void *out,
				   uint32_t *rlen)
{
	struct xgpuif_func_attr_args a;
	const struct xgpub_fn *fn;
	void *obj;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memcpy(&a, payload, sizeof(a));
	rc = xgpub_fn_get(w, a.handle, a.kind, &obj, &fn);
	if (rc)
		return rc;
	if (a.kind == XGPUIF_FN_KERNEL) {
		XGPUB_NOT_SUPPORTED_IF_NULL(w, cuKernelSetCacheConfig);
		return w->D->cuKernelSetCacheConfig(obj, (CUfunc_cache)a.attr,
						    w->dev);
	}
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuFuncSetCacheConfig);
	return w->D->cuFuncSetCacheConfig(obj, (CUfunc_cache)a.attr);
}

/* the wire's JIT whitelist speaks the CUDA ABI's numbers */
_Static_assert(CU_JIT_MAX_REGISTERS == 0 && CU_JIT_FAST_COMPILE == 16 &&
		       CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES == 29 &&
		       CU_JIT_SPLIT_COMPILE == 34,
	       "CUjit_option numbering");
