// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_module.c: loading and unloading modules and libraries.
 *
 * An image is shipped once per load: sized (xgpulib_image.c), copied into
 * a worker blob through the data area, then named by MODULE_LOAD or
 * LIBRARY_LOAD, which hands the blob to the new module or library (the
 * worker frees it with them).  Blobs are not cached across loads for that
 * reason.  Objects and locking: xgpulib_module.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_image.h"
#include "xgpulib_module.h"

/* ---- lifetimes ----------------------------------------------------------- */

static void xfunc_free(struct xfunc *xf)
{
	struct kfn *k, *kn;

	for (k = xf->kfns; k; k = kn) {
		kn = k->next;
		xfunc_free(k->fn);
		free(k);
	}
	xgpulib_func_note(&xf->f, false);
	xgpulib_legacy_drop(&xf->f);
	pthread_mutex_destroy(&xf->f.attr_mu);
	/* a stale handle used after the unload then fails the magic check
	 * until the memory is reused */
	xf->f.magic = XGPULIB_DEAD_MAGIC;
	free(xf);
}

static void symtab_free(struct symtab *t)
{
	for (uint32_t i = 0; i < TAB_BUCKETS; i++) {
		struct xfunc *xf, *n;

		for (xf = t->b[i]; xf; xf = n) {
			n = xf->next;
			xfunc_free(xf);
		}
		t->b[i] = NULL;
	}
	pthread_mutex_destroy(&t->mu);
}

static void owner_init(struct symowner *o, uint64_t remote,
		       struct CUmod_st *mod, struct CUlib_st *lib)
{
	o->remote = remote;
	pthread_mutex_init(&o->tab.mu, NULL);
	memset(o->tab.b, 0, sizeof(o->tab.b));
	o->mod = mod;
	o->lib = lib;
}

/* the module (of library lib, or NULL) with wire handle remote */
static CUresult module_new(uint64_t remote, struct CUlib_st *lib,
			   struct CUmod_st **out)
{
	struct CUmod_st *m = calloc(1, sizeof(*m));

	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = XGPULIB_MOD_MAGIC;
	m->ctx = xgpulib_current();
	owner_init(&m->own, remote, m, lib);
	*out = m;
	return CUDA_SUCCESS;
}

static CUresult library_new(uint64_t remote, struct CUlib_st **out)
{
	struct CUlib_st *l = calloc(1, sizeof(*l));

	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	l->magic = XGPULIB_LIB_MAGIC;
	owner_init(&l->own, remote, NULL, l);
	*out = l;
	return CUDA_SUCCESS;
}

static void mod_free(struct CUmod_st *m)
{
	symtab_free(&m->own.tab);
	m->magic = XGPULIB_DEAD_MAGIC;
	free(m);
}

/* a library with its kernels, their functions and its modules */
static void lib_free(struct CUlib_st *l)
{
	struct libmod *lm, *next;

	for (lm = l->mods; lm; lm = next) {
		next = lm->next;
		mod_free(lm->mod);
		free(lm);
	}
	symtab_free(&l->own.tab);
	l->magic = XGPULIB_DEAD_MAGIC;
	free(l);
}

/* MODULE_UNLOAD or LIBRARY_UNLOAD */
static CUresult remote_unload(bool library, uint64_t remote)
{
	struct xgpuif_handle_args a = { remote };

	return library ? xgpulib_call_LIBRARY_UNLOAD(&a) :
			 xgpulib_call_MODULE_UNLOAD(&a);
}

/* ---- blobs and loads ----------------------------------------------------- */

/*
 * Copy an image into a new worker blob through the data area.  The data
 * area is one buffer per channel, so the whole upload holds
 * xgpulib_data_mu and each chunk is acknowledged before the next one
 * overwrites it.
 */
CUresult xgpulib_image_upload(const void *bytes, size_t size, uint64_t *blob)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct xgpuif_blob_create_args ca = { size };
	struct xgpuif_blob_reply br = { 0 };
	CUresult rc;

	if (!t->data || !t->data_bytes)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&xgpulib_data_mu);
	rc = xgpulib_call_BLOB_CREATE(&ca, &br);
	if (rc == CUDA_SUCCESS && !br.blob)
		rc = CUDA_ERROR_UNKNOWN;
	for (size_t off = 0; rc == CUDA_SUCCESS && off < size;) {
		size_t n = size - off;
		struct xgpuif_blob_write_args wa;

		if (n > t->data_bytes)
			n = t->data_bytes;
		xgpulib_stage_put(t, 0, (const uint8_t *)bytes + off, n);
		memset(&wa, 0, sizeof(wa));
		wa.blob = br.blob;
		wa.off = off;
		wa.src.region = XGPUIF_REGION_DATA;
		wa.src.off = 0;
		wa.src.len = n;
		rc = xgpulib_call_BLOB_WRITE(&wa);
		off += n;
	}
	if (rc != CUDA_SUCCESS && br.blob) {
		struct xgpuif_handle_args fa = { br.blob };

		xgpulib_post_BLOB_FREE(&fa);
	}
	pthread_mutex_unlock(&xgpulib_data_mu);
	if (rc == CUDA_SUCCESS)
		*blob = br.blob;
	return rc;
}

#define MAX_LOAD_OPTS XGPUIF_MAX_LOAD_OPTS

struct load_opts {
	struct xgpuif_load_opt o[MAX_LOAD_OPTS];
	uint32_t njit, nlib;
};


static CUresult add_opt(struct load_opts *lo, uint32_t id, void *value)
{
	if (lo->njit + lo->nlib >= MAX_LOAD_OPTS)
		return CUDA_ERROR_INVALID_VALUE;
	lo->o[lo->njit + lo->nlib] = (struct xgpuif_load_opt){
		id, 0, (uint64_t)(uintptr_t)value };
	return CUDA_SUCCESS;
}

/*
 * Forward the numeric JIT options.  Those that point into guest memory
 * (log buffers, symbol tables) cannot travel; they are answered locally
 * after the load (jit_outputs).
 */
static CUresult jit_filter(unsigned int n, const CUjit_option *opt,
			   void **val, struct load_opts *lo)
{
	if (n && (!opt || !val)) {
		xgpulib_dbg("load: %u JIT options without their arrays", n);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (xgpuif_jit_option_numeric(opt[i])) {
			CUresult rc = add_opt(lo, (uint32_t)opt[i], val[i]);

			if (rc)
				return rc;
			lo->njit++;
		} else if (opt[i] < 0 || opt[i] >= CU_JIT_NUM_OPTIONS) {
			xgpulib_dbg("load: unknown JIT option %d", (int)opt[i]);
			return CUDA_ERROR_INVALID_VALUE;
		} else if (opt[i] != CU_JIT_INFO_LOG_BUFFER &&
			   opt[i] != CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES &&
			   opt[i] != CU_JIT_ERROR_LOG_BUFFER &&
			   opt[i] != CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES &&
			   opt[i] != CU_JIT_WALL_TIME) {
			xgpulib_dbg("JIT option %d carries guest pointers; "
				    "not forwarded", (int)opt[i]);
		}
	}
	return CUDA_SUCCESS;
}

/* the guest's log buffers get a (short) string, the outputs 0 */
static void jit_outputs(unsigned int n, const CUjit_option *opt, void **val,
			CUresult rc)
{
	char *info = NULL, *err = NULL;
	size_t info_sz = 0, err_sz = 0;

	for (unsigned int i = 0; i < n; i++) {
		switch (opt[i]) {
		case CU_JIT_INFO_LOG_BUFFER:
			info = val[i];
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			info_sz = (size_t)(uintptr_t)val[i];
			break;
		case CU_JIT_ERROR_LOG_BUFFER:
			err = val[i];
			break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			err_sz = (size_t)(uintptr_t)val[i];
			break;
		default:
			break;
		}
	}
	if (info && info_sz)
		info[0] = 0;
	if (err && err_sz) {
		if (rc == CUDA_SUCCESS)
			err[0] = 0;
		else
			snprintf(err, err_sz, "xgpu: the load failed with "
				 "error %d; the JIT log stays on the host",
				 (int)rc);
	}
	for (unsigned int i = 0; i < n; i++) {
		switch (opt[i]) {
		case CU_JIT_WALL_TIME:
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			val[i] = NULL;	/* 0, as an integer or a float */
			break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			val[i] = (void *)(uintptr_t)(err && err_sz ?
						     strlen(err) : 0);
			break;
		default:
			break;
		}
	}
}

static CUresult lib_filter(unsigned int n, const CUlibraryOption *opt,
			  struct load_opts *lo)
{
	/*
	 * Neither library option needs a value the worker could use, and
	 * cuBLASLt passes BINARY_IS_PRESERVED with no value array at all
	 * (measured: 1 option, values NULL), which the driver accepts.
	 */
	if (n && !opt) {
		xgpulib_dbg("load: %u library options without their array",
			    n);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (opt[i] == CU_LIBRARY_BINARY_IS_PRESERVED) {
			CUresult rc = add_opt(lo, (uint32_t)opt[i],
					      (void *)(uintptr_t)1);

			if (rc)
				return rc;
			lo->nlib++;
		} else if (opt[i] ==
			   CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) {
			xgpulib_dbg("library option %d points into the guest; "
				    "not forwarded", (int)opt[i]);
		} else {
			xgpulib_dbg("load: unknown library option %d",
				    (int)opt[i]);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

/* upload, then MODULE_LOAD or LIBRARY_LOAD; *remote is the new handle */
static CUresult load_bytes(bool library, const void *bytes, size_t size,
			   const struct load_opts *lo, uint64_t *remote)
{
	struct xgpuif_load_args la;
	struct xgpuif_load_reply lr = { 0 };
	struct xgpuif_iov opts;
	CUresult rc;

	/* report an earlier posted request's failure before creating
	 * anything, so that no success is ever hidden behind it */
	rc = xgpulib_take_deferred();
	if (rc)
		return rc;
	memset(&la, 0, sizeof(la));
	rc = xgpulib_image_upload(bytes, size, &la.blob);
	if (rc)
		return rc;
	la.njit = lo->njit;
	la.nlib = lo->nlib;
	opts = (struct xgpuif_iov){
		lo->o, (uint32_t)((lo->njit + lo->nlib) * sizeof(lo->o[0])) };
	/* the load consumes the blob, whatever its outcome */
	rc = library ? xgpulib_call_LIBRARY_LOAD(&la, &opts, 1, &lr) :
		       xgpulib_call_MODULE_LOAD(&la, &opts, 1, &lr);
	if (rc == CUDA_SUCCESS && !lr.handle)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS)
		*remote = lr.handle;
	else
		xgpulib_dbg("%s of a %zu byte image failed: %d",
			    library ? "library load" : "module load", size,
			    rc);
	return rc;
}

static CUresult image_of(const void *image, const void **bytes,
			 size_t *size)
{
	if (!image)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = xgpulib_image_bytes(image, size);
	if (!*bytes) {
		xgpulib_dbg("image at %p: unknown format or size", image);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	return CUDA_SUCCESS;
}

/* a whole file, NUL terminated (PTX files need not carry one) */
CUresult xgpulib_read_file(const char *path, uint8_t **buf, size_t *size)
{
	struct stat st;
	uint8_t *b;
	size_t got = 0;
	int fd;

	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size >= (1ull << 30)) {
		close(fd);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	b[got] = 0;
	*buf = b;
	*size = got + 1;
	return CUDA_SUCCESS;
}

/* a load as the entry points ask for it */
struct load_req {
	bool library;		/* a library, else a module */
	CUmodule *mod_out;
	CUlibrary *lib_out;
	bool from_file;
	const void *image;
	const char *path;
	unsigned int njit;
	CUjit_option *jit_opt;
	void **jit_val;
	unsigned int nlib;
	CUlibraryOption *lib_opt;
	void **lib_val;
};

/* the guest's module or library for a loaded one */
static CUresult loaded(const struct load_req *r, uint64_t remote)
{
	struct CUmod_st *m;
	struct CUlib_st *l;
	CUresult rc;

	if (r->library) {
		rc = library_new(remote, &l);
		if (rc == CUDA_SUCCESS)
			*r->lib_out = l;
	} else {
		rc = module_new(remote, NULL, &m);
		if (rc == CUDA_SUCCESS)
			*r->mod_out = m;
	}
	if (rc)
		remote_unload(r->library, remote);
	return rc;
}

/*
 * Every module and library load: the checks in the driver's order
 * (cuInit, the output, the image or file, the options), the upload and
 * the load, then the guest's object.
 */
static CUresult load(const struct load_req *r)
{
	struct load_opts lo;
	const void *bytes;
	uint8_t *buf = NULL;
	uint64_t remote = 0;
	size_t size;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (xgpulib_trace_on())
		xgpulib_dbg("%s load: image %p file %s, %u JIT options, "
			    "%u library options", r->library ? "library" :
			    "module", r->image, r->path ? r->path : "-",
			    r->njit, r->nlib);
	if (r->library ? !r->lib_out : !r->mod_out)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->from_file) {
		rc = xgpulib_read_file(r->path, &buf, &size);
		bytes = buf;
	} else {
		rc = image_of(r->image, &bytes, &size);
	}
	if (rc)
		return rc;
	memset(&lo, 0, sizeof(lo));
	rc = jit_filter(r->njit, r->jit_opt, r->jit_val, &lo);
	/* the wire puts JIT options first */
	if (rc == CUDA_SUCCESS)
		rc = lib_filter(r->nlib, r->lib_opt, &lo);
	if (rc == CUDA_SUCCESS) {
		rc = load_bytes(r->library, bytes, size, &lo, &remote);
		if (r->njit)
			jit_outputs(r->njit, r->jit_opt, r->jit_val, rc);
	}
	free(buf);
	return rc ? rc : loaded(r, remote);
}

/* the worker drops its handles whatever the driver says: so does the guest */
static CUresult unload(struct symowner *o)
{
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!o)
		return CUDA_ERROR_INVALID_HANDLE;
	/* its __managed__ variables' pages first: the worker frees them */
	xgpulib_managed_vars_unmap(o->mod ? (const void *)o->mod :
					    (const void *)o->lib);
	rc = remote_unload(!o->mod, o->remote);
	if (o->mod)
		mod_free(o->mod);
	else
		lib_free(o->lib);
	return rc ? rc : xgpulib_take_deferred();
}

/* ---- module entry points ------------------------------------------------- */

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
			    unsigned int numOptions, CUjit_option *options,
			    void **optionValues)
{
	const struct load_req r = {
		.mod_out = module, .image = image, .njit = numOptions,
		.jit_opt = options, .jit_val = optionValues,
	};

	return load(&r);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	return cuModuleLoadDataEx(module, image, 0, NULL, NULL);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return cuModuleLoadDataEx(module, fatCubin, 0, NULL, NULL);
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	const struct load_req r = {
		.mod_out = module, .from_file = true, .path = fname,
	};

	return load(&r);
}

CUresult cuModuleUnload(CUmodule hmod)
{
	struct CUmod_st *m = xgpulib_mod_check(hmod);

	/* a library's module lives and dies with its library */
	return unload(m && !m->own.lib ? &m->own : NULL);
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
	const char *e = xgpulib_env_str("CUDA_MODULE_LOADING", NULL);
	CUresult rc = xgpulib_query_arg(mode);

	if (rc)
		return rc;
	*mode = e && strcasecmp(e, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING :
						   CU_MODULE_LAZY_LOADING;
	return CUDA_SUCCESS;
}

/* ---- libraries ----------------------------------------------------------- */

CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
			   CUjit_option *jitOptions, void **jitOptionsValues,
			   unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions,
			   void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	const struct load_req r = {
		.library = true, .lib_out = library, .image = code,
		.njit = numJitOptions, .jit_opt = jitOptions,
		.jit_val = jitOptionsValues, .nlib = numLibraryOptions,
		.lib_opt = libraryOptions, .lib_val = libraryOptionValues,
	};

	return load(&r);
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
			       CUjit_option *jitOptions,
			       void **jitOptionsValues,
			       unsigned int numJitOptions,
			       CUlibraryOption *libraryOptions,
			       void **libraryOptionValues,
			       unsigned int numLibraryOptions)
{
	const struct load_req r = {
		.library = true, .lib_out = library, .from_file = true,
		.path = fileName, .njit = numJitOptions, .jit_opt = jitOptions,
		.jit_val = jitOptionsValues, .nlib = numLibraryOptions,
		.lib_opt = libraryOptions, .lib_val = libraryOptionValues,
	};

	return load(&r);
}

CUresult cuLibraryUnload(CUlibrary library)
{
	struct CUlib_st *l = xgpulib_lib_check(library);

	return unload(l ? &l->own : NULL);
}

/* the library's module in the current context, made once per context */
CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
	struct CUlib_st *l = xgpulib_lib_check(library);
	uint64_t ctx = xgpulib_current_remote();
	struct xgpuif_handle_args a;
	struct xgpuif_load_reply r = { 0 };
	struct libmod *lm;
	CUresult rc = CUDA_SUCCESS;

	XGPULIB_CHECK_ARGS(pMod, l);
	pthread_mutex_lock(&l->own.tab.mu);
	for (lm = l->mods; lm; lm = lm->next)
		if (lm->ctx == ctx)
			break;
	if (!lm) {
		a.handle = l->own.remote;
		rc = xgpulib_take_deferred();
		if (!rc)
			rc = xgpulib_call_LIBRARY_GET_MODULE(&a, &r);
		if (rc == CUDA_SUCCESS && !r.handle)
			rc = CUDA_ERROR_UNKNOWN;
		if (rc == CUDA_SUCCESS) {
			lm = calloc(1, sizeof(*lm));
			if (!lm || module_new(r.handle, l, &lm->mod)) {
				/* the worker frees it with the library */
				free(lm);
				lm = NULL;
				rc = CUDA_ERROR_OUT_OF_MEMORY;
			}
		}
		if (lm) {
			lm->ctx = ctx;
			lm->next = l->mods;
			l->mods = lm;
		}
	}
	pthread_mutex_unlock(&l->own.tab.mu);
	if (rc == CUDA_SUCCESS)
		*pMod = lm->mod;
	return rc;
}
