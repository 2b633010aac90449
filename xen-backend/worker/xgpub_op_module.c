// SPDX-License-Identifier: MIT
/*
 * xgpub_op_module.c: blobs, and the modules and libraries loaded from
 * them, in a worker.
 *
 * An image arrives as a blob (BLOB_CREATE, then BLOB_WRITE chunks from
 * shared memory) and is handed to the module or library loaded from it.
 * The driver parses an image with no length to go by, so before a load
 * the worker checks that the image's own idea of its size (fatbin header,
 * ELF tables, PTX terminator) stays inside the blob, and keeps zero bytes
 * after it.  Only numeric JIT and library options are accepted: an option
 * whose value the driver would dereference must never come from a guest.
 * What modules and libraries contain is served by xgpub_op_symbol.c.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpuif_elf.h"
#include "xgpub_worker.h"
#include "xgpub_module.h"

#define BLOB_MAX	(1ull << 30)	/* one image */
#define BLOB_GUARD	16u		/* zero bytes after an image */
#define MAX_LOAD_OPTS	XGPUIF_MAX_LOAD_OPTS

_Static_assert(__builtin_offsetof(struct xgpub_image, data) % 16 == 0,
	       "image data is 16-byte aligned");

/* the wire's JIT whitelist speaks the CUDA ABI's numbers */
_Static_assert(CU_JIT_MAX_REGISTERS == 0 && CU_JIT_FAST_COMPILE == 16 &&
		       CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES == 29 &&
		       CU_JIT_SPLIT_COMPILE == 34,
	       "CUjit_option numbering");

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

/* bytes of every image this worker holds: blobs, modules, libraries */
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

/*
 * An ELF's header tables, the file bytes of its sections and segments,
 * and the header of its section name table (e_shstrndx, or sh_link of
 * section 0 for SHN_XINDEX) lie inside size bytes: all a loader reads by
 * the ELF's own word.
 */
static bool elf_fits(const uint8_t *p, uint64_t size)
{
	Elf64_Ehdr eh;
	uint64_t shnum, phnum, shstrndx;

	if (size < sizeof(eh))
		return false;
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return false;
	if (eh.e_shoff && (eh.e_shentsize < sizeof(Elf64_Shdr) ||
			    !range_in(eh.e_shoff, 1, sizeof(Elf64_Shdr), size)))
		return false;
	xgpuif_elf_counts(p, &eh, &shnum, &phnum, &shstrndx);
	if (eh.e_shoff) {
		Elf64_Shdr sh;

		if (!range_in(eh.e_shoff, shnum, eh.e_shentsize, size) ||
		    (shstrndx != SHN_UNDEF && shstrndx >= shnum))
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
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, p + eh.e_phoff + i * eh.e_phentsize, sizeof(ph));
		if (!range_in(ph.p_offset, 1, ph.p_filesz, size))
			return false;
	}
	return true;
}

/* does the image, by its own description, lie inside its blob? */
bool xgpub_image_fits(const uint8_t *p, uint64_t size)
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

/* ---- handles ------------------------------------------------------------- */

int xgpub_module_handle(struct xgpub_worker *w, int type, void *obj,
			void *extra, xgpuif_handle_t *h)
{
	*h = xgpub_handle_new(&w->h, type, obj, extra);
	if (*h)
		return CUDA_SUCCESS;
	/* the table is full: free what the handle would have owned */
	free(type == XGPUB_H_BLOB ? obj : extra);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- blobs --------------------------------------------------------------- */

/* the guest this worker serves, for a log line: "domain 3", "user 1000" */
static void guest_name(char *buf, size_t n)
{
	uint64_t acct = 0;

	if (xgpub_self_stat)
		acct = __atomic_load_n(&xgpub_wctl_of(xgpub_self_stat)->acct,
				       __ATOMIC_ACQUIRE);
	if (acct >> 32 == 1)
		snprintf(buf, n, "domain %u", (uint32_t)acct);
	else if (acct >> 32 == 2)
		snprintf(buf, n, "user %u", (uint32_t)acct);
	else
		snprintf(buf, n, "(no account)");
}

XGPUB_HANDLER(BLOB_CREATE)
{
	const uint64_t max = w->opt && w->opt->images_max ?
				     w->opt->images_max : XGPUB_IMAGES_MAX;
	struct xgpub_image *img;
	uint64_t own, held;
	int rc;

	if (a->size > BLOB_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* the cap is the guest's: its other workers' images count too */
	own = images_total(w);
	held = own + xgpub_guest_images_others(w);
	if (held > max || a->size > max - held) {
		char g[32];

		guest_name(g, sizeof(g));
		xgpub_err("%s: guest %s holds %llu MiB of module images; %llu "
			  "more would pass its %llu MiB cap", w->t->who, g,
			  (unsigned long long)(held >> 20),
			  (unsigned long long)a->size,
			  (unsigned long long)(max >> 20));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	img = malloc(sizeof(*img) + a->size + BLOB_GUARD);
	if (!img)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(img, 0, sizeof(*img));
	img->size = a->size;
	/* the guard ends a PTX text the guest left unterminated */
	memset(img->data + a->size, 0, BLOB_GUARD);
	rc = xgpub_module_handle(w, XGPUB_H_BLOB, img, NULL, &r->blob);
	/* at once: the guest's other workers read it */
	if (rc == CUDA_SUCCESS && xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->images, own + a->size,
				 __ATOMIC_RELAXED);
	return rc;
}

/*
 * The sum changes only when a blob, module or library handle comes or
 * goes (a load moves a blob's image to its module): recount then.
 */
void xgpub_images_publish(struct xgpub_worker *w)
{
	const uint64_t seen = (uint64_t)w->h.count[XGPUB_H_BLOB] |
			      (uint64_t)w->h.count[XGPUB_H_MODULE] << 21 |
			      (uint64_t)w->h.count[XGPUB_H_LIBRARY] << 42;

	if (!xgpub_self_stat || seen == w->images_seen)
		return;
	w->images_seen = seen;
	__atomic_store_n(&xgpub_self_stat->images, images_total(w),
			 __ATOMIC_RELAXED);
}

XGPUB_HANDLER(BLOB_WRITE)
{
	struct xgpub_image *img = blob->obj;
	const uint8_t *src;

	if (a->off > img->size || a->src.len > img->size - a->off)
		return XGPUIF_ST_PROTO;
	src = xgpub_memref(w, &a->src);
	if (!src)
		return XGPUIF_ST_PROTO;
	memcpy(img->data + a->off, src, a->src.len);
	return CUDA_SUCCESS;
}

XGPUB_HANDLER(BLOB_FREE)
{
	xgpub_release(w, handle);
	xgpub_handle_drop(&w->h, handle);
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
int xgpub_take_blob(struct xgpub_worker *w, xgpuif_handle_t h,
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

static int load(struct xgpub_worker *w, const struct xgpuif_load_args *a,
		const struct xgpub_tail *tail, bool library,
		struct xgpuif_load_reply *r)
{
	struct xgpub_image *img;
	static struct opts o;
	uint64_t nopts;
	void *obj = NULL;
	int rc;

	nopts = (uint64_t)a->njit + a->nlib;
	if (nopts > MAX_LOAD_OPTS || (!library && a->nlib) ||
	    tail->len != nopts * sizeof(struct xgpuif_load_opt))
		return XGPUIF_ST_PROTO;
	rc = xgpub_take_blob(w, a->blob, &img);
	if (rc)
		return rc;
	rc = parse_opts(tail->p, a->njit, a->nlib, &o);
	if (rc == CUDA_SUCCESS && !xgpub_image_fits(img->data, img->size))
		rc = CUDA_ERROR_INVALID_IMAGE;
	if (rc == CUDA_SUCCESS && !library) {
		rc = w->D->cuModuleLoadDataEx((CUmodule *)&obj, img->data,
					      o.njit, o.jit, o.jitv);
	} else if (rc == CUDA_SUCCESS) {
		bool preserved = false;

		for (unsigned int i = 0; i < o.nlib; i++)
			preserved |= o.lib[i] == CU_LIBRARY_BINARY_IS_PRESERVED;
		/* the image stays with the library: spare the driver a copy */
		if (!preserved) {
			o.lib[o.nlib] = CU_LIBRARY_BINARY_IS_PRESERVED;
			o.libv[o.nlib++] = (void *)(uintptr_t)1;
		}
		rc = w->D->cuLibraryLoadData((CUlibrary *)&obj, img->data,
					     o.jit, o.jitv, o.njit, o.lib,
					     o.libv, o.nlib);
	}
	if (rc) {
		free(img);
		return rc;
	}
	xgpub_fence_note_image(img->data, img->size);
	img->mod = library ? NULL : obj;
	img->ctx = library ? NULL : w->cur;
	r->handle = xgpub_handle_new(&w->h,
				     library ? XGPUB_H_LIBRARY : XGPUB_H_MODULE,
				     obj, img);
	if (!r->handle) {
		if (library)
			w->D->cuLibraryUnload(obj);
		else
			w->D->cuModuleUnload(obj);
		free(img);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	img->root = r->handle;
	return CUDA_SUCCESS;
}

XGPUB_HANDLER(MODULE_LOAD)
{
	return load(w, a, tail, false, r);
}

XGPUB_HANDLER(LIBRARY_LOAD)
{
	return load(w, a, tail, true, r);
}

/* ---- unloads ------------------------------------------------------------- */

/* which handles die together: those of a root, or those made in a context */
struct drop {
	struct xgpub_worker *w;
	int type;
	xgpuif_handle_t root;	/* 0: match ctx instead */
	CUcontext ctx;
};

static void drop_one(struct xgpub_hentry *e, void *arg)
{
	const struct drop *d = arg;
	const struct xgpub_image *img = e->extra;
	const struct xgpub_fn *fn = e->extra;
	bool mod = d->type == XGPUB_H_MODULE;
	xgpuif_handle_t root;
	CUcontext ctx;

	if (!e->extra)
		return;
	root = mod ? img->root : fn->root;
	ctx = mod ? img->ctx : fn->ctx;
	if (d->root ? root == d->root : ctx == d->ctx)
		/* freeing marks the entry free; the table is not reallocated */
		xgpub_handle_drop(&d->w->h, e);
}

/* free the handles of `type` that die with root, or (root 0) with ctx */
static void drop_children(struct xgpub_worker *w, int type,
			  xgpuif_handle_t root, CUcontext ctx)
{
	struct drop d = { w, type, root, ctx };

	xgpub_handle_each(&w->h, type, drop_one, &d);
}

/*
 * Unload the module or library the guest loaded (root h) with what dies
 * with it: its functions and references, a library's kernels and
 * modules, its __managed__ variables; its globals' memory is given back
 * once the driver let go of it.  The image (a library's, which
 * BINARY_IS_PRESERVED kept) goes with the handle, after the driver let
 * go of it.
 */
static int unload_root(struct xgpub_worker *w, struct xgpub_hentry *handle,
		       xgpuif_handle_t h)
{
	static const int dies_with[] = { XGPUB_H_FUNCTION, XGPUB_H_TEXREF,
					 XGPUB_H_SURFREF, XGPUB_H_KERNEL,
					 XGPUB_H_MODULE };
	/* a module is no library: it has no kernels, and no modules but
	 * itself */
	size_t n = handle->type == XGPUB_H_LIBRARY ? 5 : 3;
	int rc;

	for (size_t i = 0; i < n; i++)
		drop_children(w, dies_with[i], h, NULL);
	xgpub_managed_vars_forget(h);
	rc = xgpub_release(w, handle);
	if (rc == CUDA_SUCCESS)
		xgpub_globals_uncharge(w, h);
	xgpub_handle_drop(&w->h, handle);
	return rc;
}

XGPUB_HANDLER(MODULE_UNLOAD)
{
	const struct xgpub_image *img = handle->extra;
	xgpuif_handle_t h = xgpub_handle_of(&w->h, handle);

	/* a library's module goes with its library */
	if (!img || img->root != h)
		return CUDA_ERROR_INVALID_HANDLE;
	return unload_root(w, handle, h);
}

XGPUB_HANDLER(LIBRARY_UNLOAD)
{
	return unload_root(w, handle, xgpub_handle_of(&w->h, handle));
}

struct move {
	CUcontext from, to;
};

static void move_one(struct xgpub_hentry *e, void *arg)
{
	const struct move *m = arg;

	if (!e->extra)
		return;
	if (e->type == XGPUB_H_MODULE) {
		struct xgpub_image *img = e->extra;

		if (img->ctx == m->from)
			img->ctx = m->to;
	} else {
		struct xgpub_fn *fn = e->extra;

		if (fn->ctx == m->from)
			fn->ctx = m->to;
	}
}

void xgpub_module_ctx_moved(struct xgpub_worker *w, CUcontext from,
			    CUcontext to)
{
	struct move m = { from, to };

	xgpub_handle_each(&w->h, XGPUB_H_MODULE, move_one, &m);
	xgpub_handle_each(&w->h, XGPUB_H_FUNCTION, move_one, &m);
	xgpub_handle_each(&w->h, XGPUB_H_TEXREF, move_one, &m);
	xgpub_handle_each(&w->h, XGPUB_H_SURFREF, move_one, &m);
}

struct vars_gone {
	struct xgpub_worker *w;
	CUcontext ctx;
};

/* a module loaded in the context that goes: its variables' memory too */
static void vars_gone_one(struct xgpub_hentry *e, void *arg)
{
	const struct vars_gone *g = arg;
	const struct xgpub_image *img = e->extra;

	if (img && img->ctx == g->ctx &&
	    img->root == xgpub_handle_of(&g->w->h, e)) {
		xgpub_managed_vars_forget(img->root);
		xgpub_globals_uncharge(g->w, img->root);
	}
}

void xgpub_module_ctx_gone(struct xgpub_worker *w, CUcontext ctx)
{
	struct vars_gone g = { w, ctx };

	if (!ctx)
		return;
	xgpub_handle_each(&w->h, XGPUB_H_MODULE, vars_gone_one, &g);
	drop_children(w, XGPUB_H_FUNCTION, 0, ctx);
	drop_children(w, XGPUB_H_TEXREF, 0, ctx);
	drop_children(w, XGPUB_H_SURFREF, 0, ctx);
	drop_children(w, XGPUB_H_MODULE, 0, ctx);
}
