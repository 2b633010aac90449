// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_module.c: modules, libraries, kernels and functions in the
 * guest.
 *
 * An image is shipped once per load: sized here (a fatbin wrapper is
 * replaced by the fatbin it points to, since the worker cannot follow a
 * guest pointer), copied into a worker blob through the data area, then
 * named by MODULE_LOAD or LIBRARY_LOAD, which hands the blob to the new
 * module or library (the worker frees it with them).  Blobs are not cached
 * across loads for that reason.
 *
 * CUfunction and CUkernel handles are struct xgpulib_func (xgpulib.h),
 * carrying the parameter layout the worker read with cuFuncGetParamInfo /
 * cuKernelGetParamInfo, so that a launch can flatten kernelParams without
 * asking.  Each module and library keeps a table by name: looking the
 * same name up twice gives the same handle, as the real driver does, and
 * costs no round trip.  Function attributes are fetched once and cached.
 *
 * Locking: a module's or library's table (and a kernel's per-context
 * functions) is guarded by the owner's tab.mu; a function's attribute
 * cache by its attr_mu.  Unloading while another thread still uses the
 * module is the application's bug, as with the real driver.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_image.h"

/* ---- image sizes --------------------------------------------------------- */

/* images are shipped whole; anything larger than this cannot be real */
#define IMAGE_MAX	(1ull << 36)

/*
 * Compare the first n bytes of p with magic, byte by byte: none of the
 * magic numbers holds a zero byte, so a short PTX string mismatches at its
 * NUL before anything past it is read.
 */
static bool has_magic(const uint8_t *p, const uint8_t *magic, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != magic[i])
			return false;
	return true;
}

static size_t fatbin_size(const uint8_t *p)
{
	uint16_t hsize;
	uint64_t fsize;

	memcpy(&hsize, p + 6, sizeof(hsize));
	memcpy(&fsize, p + 8, sizeof(fsize));
	if (hsize < 16 || fsize > IMAGE_MAX)
		return 0;
	return (size_t)hsize + (size_t)fsize;
}

/* end of [off, off + n * entsize), or 0 when it overflows the image cap */
static uint64_t table_end(uint64_t off, uint64_t n, uint64_t entsize)
{
	uint64_t bytes, end;

	if (__builtin_mul_overflow(n, entsize, &bytes) ||
	    __builtin_add_overflow(off, bytes, &end) || end > IMAGE_MAX)
		return 0;
	return end;
}

/*
 * A cubin is an ELF file with no length field: it ends where the furthest
 * of its header tables or section contents ends (sections may lie after
 * the section header table).
 */
static size_t elf64_size(const uint8_t *p)
{
	Elf64_Ehdr eh;
	uint64_t end = sizeof(eh), shnum, phnum, e;

	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	if (eh.e_ehsize > end)
		end = eh.e_ehsize;
	shnum = eh.e_shnum;
	phnum = eh.e_phnum;
	if (eh.e_shoff) {
		Elf64_Shdr sh0;

		if (eh.e_shentsize < sizeof(Elf64_Shdr) ||
		    eh.e_shoff > IMAGE_MAX)
			return 0;
		/* extended numbering keeps the real counts in section 0 */
		memcpy(&sh0, p + eh.e_shoff, sizeof(sh0));
		if (shnum == 0)
			shnum = sh0.sh_size;
		if (phnum == PN_XNUM)
			phnum = sh0.sh_info;
		if (shnum > (1u << 24))
			return 0;
		e = table_end(eh.e_shoff, shnum, eh.e_shentsize);
		if (!e)
			return 0;
		if (e > end)
			end = e;
		for (uint64_t i = 0; i < shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, p + eh.e_shoff + i * eh.e_shentsize,
			       sizeof(sh));
			if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
				continue;
			e = table_end(sh.sh_offset, 1, sh.sh_size);
			if (!e)
				return 0;
			if (e > end)
				end = e;
		}
	}
	if (eh.e_phoff && phnum) {
		e = table_end(eh.e_phoff, phnum, eh.e_phentsize);
		if (!e)
			return 0;
		if (e > end)
			end = e;
	}
	return (size_t)end;
}

const void *xgpulib_image_bytes(const void *image, size_t *size)
{
	static const uint8_t wrapper[4] = { 0xb1, 0x43, 0x62, 0x46 };
	static const uint8_t fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
	static const uint8_t elf[4] = { 0x7f, 'E', 'L', 'F' };
	const uint8_t *p = image;
	size_t n;

	if (!p)
		return NULL;
	if (has_magic(p, wrapper, 4)) {
		const void *data;

		memcpy(&data, p + 8, sizeof(data));
		/* the wrapper's data is a fatbin; nothing else is shipped */
		if (!data || !has_magic(data, fatbin, 4))
			return NULL;
		p = data;
	}
	if (has_magic(p, fatbin, 4))
		n = fatbin_size(p);
	else if (has_magic(p, elf, 4))
		n = elf64_size(p);
	else
		n = strlen((const char *)p) + 1;
	if (!n)
		return NULL;
	*size = n;
	return p;
}

size_t xgpulib_image_size(const void *image)
{
	size_t n;

	return xgpulib_image_bytes(image, &n) ? n : 0;
}

/* ---- guest objects ------------------------------------------------------- */

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

struct CUmod_st {
	uint32_t magic;
	uint64_t remote;
	CUcontext ctx;		/* current at load */
	struct CUlib_st *lib;	/* set for a library's module */
	struct symtab tab;
};

struct CUlib_st {
	uint32_t magic;
	uint64_t remote;
	struct symtab tab;	/* kernels; tab.mu also guards mods, kfns */
	struct libmod *mods;
};

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % TAB_BUCKETS;
}

struct xgpulib_func *xgpulib_func_check(const void *f)
{
	struct xgpulib_func *p = (struct xgpulib_func *)f;

	if (!p || p->magic != XGPULIB_FUNC_MAGIC)
		return NULL;
	return p;
}

static struct CUmod_st *mod_check(CUmodule m)
{
	return m && m->magic == XGPULIB_MOD_MAGIC ? m : NULL;
}

static struct CUlib_st *lib_check(CUlibrary l)
{
	return l && l->magic == XGPULIB_LIB_MAGIC ? l : NULL;
}

static void xfunc_free(struct xfunc *xf)
{
	struct kfn *k, *kn;

	for (k = xf->kfns; k; k = kn) {
		kn = k->next;
		xfunc_free(k->fn);
		free(k);
	}
	pthread_mutex_destroy(&xf->f.attr_mu);
	/* a stale handle used after the unload then fails the magic check
	 * until the memory is reused */
	xf->f.magic = XGPULIB_DEAD_MAGIC;
	free(xf);
}

static void symtab_init(struct symtab *t)
{
	pthread_mutex_init(&t->mu, NULL);
	memset(t->b, 0, sizeof(t->b));
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

static void mod_free(struct CUmod_st *m)
{
	symtab_free(&m->tab);
	m->magic = XGPULIB_DEAD_MAGIC;
	free(m);
}

/* ---- calls --------------------------------------------------------------- */

/*
 * Call and wait for this request's own status: a deferred error of an
 * earlier posted request stays for the next call instead of hiding that
 * this one created (or freed) something in the worker.
 */
static CUresult call_exact(uint16_t op, const struct xgpuif_iov *iov,
			   int niov, void *reply, uint32_t cap,
			   uint32_t *rlen)
{
	struct xgpulib_waiter w;
	CUresult rc;

	rc = xgpulib_submit(op, iov, niov, &w, reply, cap);
	if (rc)
		return rc;
	rc = xgpulib_wait(&w);
	if (rlen)
		*rlen = w.reply_len;
	return rc;
}

static CUresult call_exact1(uint16_t op, const void *args, uint32_t alen,
			    void *reply, uint32_t cap, uint32_t *rlen)
{
	struct xgpuif_iov iov = { args, alen };

	return call_exact(op, &iov, 1, reply, cap, rlen);
}

/* the largest reply a request may ask for on this ring */
static uint32_t reply_cap_max(void)
{
	uint32_t slots = RING_SIZE(&xgpulib_ch->ring);

	if (slots > XGPUIF_MAX_SLOTS)
		slots = XGPUIF_MAX_SLOTS;
	return xgpuif_capacity(slots);
}

/* ---- blobs and loads ----------------------------------------------------- */

/*
 * Copy an image into a new worker blob through the data area.  The data
 * area is one buffer per channel, so the whole upload holds
 * xgpulib_data_mu and each chunk is acknowledged before the next one
 * overwrites it.
 */
static CUresult upload(const void *bytes, size_t size, uint64_t *blob)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct xgpuif_blob_create_args ca = { size };
	struct xgpuif_blob_reply br = { 0 };
	uint32_t rlen = 0;
	CUresult rc;

	if (!t->data || !t->data_bytes)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&xgpulib_data_mu);
	rc = call_exact1(XGPUIF_OP_BLOB_CREATE, &ca, sizeof(ca), &br,
			 sizeof(br), &rlen);
	if (rc == CUDA_SUCCESS && (rlen < sizeof(br) || !br.blob))
		rc = CUDA_ERROR_UNKNOWN;
	for (size_t off = 0; rc == CUDA_SUCCESS && off < size;) {
		size_t n = size - off;
		struct xgpuif_blob_write_args wa;

		if (n > t->data_bytes)
			n = t->data_bytes;
		memcpy(t->data, (const uint8_t *)bytes + off, n);
		memset(&wa, 0, sizeof(wa));
		wa.blob = br.blob;
		wa.off = off;
		wa.src.region = XGPUIF_REGION_DATA;
		wa.src.off = 0;
		wa.src.len = n;
		rc = call_exact1(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL, 0,
				 NULL);
		off += n;
	}
	if (rc != CUDA_SUCCESS && br.blob) {
		struct xgpuif_handle_args fa = { br.blob };

		xgpulib_post1(XGPUIF_OP_BLOB_FREE, &fa, sizeof(fa));
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
	if (n && (!opt || !val))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		if (xgpuif_jit_option_numeric(opt[i])) {
			CUresult rc = add_opt(lo, (uint32_t)opt[i], val[i]);

			if (rc)
				return rc;
			lo->njit++;
		} else if (opt[i] < 0 || opt[i] >= CU_JIT_NUM_OPTIONS) {
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
			   void **val, struct load_opts *lo)
{
	if (n && (!opt || !val))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		if (opt[i] == CU_LIBRARY_BINARY_IS_PRESERVED) {
			CUresult rc = add_opt(lo, (uint32_t)opt[i], val[i]);

			if (rc)
				return rc;
			lo->nlib++;
		} else if (opt[i] ==
			   CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) {
			xgpulib_dbg("library option %d points into the guest; "
				    "not forwarded", (int)opt[i]);
		} else {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

/* upload, then MODULE_LOAD or LIBRARY_LOAD; *remote is the new handle */
static CUresult load_bytes(uint16_t op, const void *bytes, size_t size,
			   const struct load_opts *lo, uint64_t *remote)
{
	struct xgpuif_load_args la;
	struct xgpuif_load_reply lr = { 0 };
	struct xgpuif_iov iov[2];
	uint32_t rlen = 0;
	CUresult rc;

	/* report an earlier posted request's failure before creating
	 * anything, so that no success is ever hidden behind it */
	rc = xgpulib_take_deferred();
	if (rc)
		return rc;
	memset(&la, 0, sizeof(la));
	rc = upload(bytes, size, &la.blob);
	if (rc)
		return rc;
	la.njit = lo->njit;
	la.nlib = lo->nlib;
	iov[0] = (struct xgpuif_iov){ &la, sizeof(la) };
	iov[1] = (struct xgpuif_iov){ lo->o, (uint32_t)((lo->njit + lo->nlib) *
					     sizeof(lo->o[0])) };
	/* the load consumes the blob, whatever its outcome */
	rc = call_exact(op, iov, 2, &lr, sizeof(lr), &rlen);
	if (rc == CUDA_SUCCESS && (rlen < sizeof(lr) || !lr.handle))
		rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS)
		*remote = lr.handle;
	else
		xgpulib_dbg("%s of a %zu byte image failed: %d",
			    op == XGPUIF_OP_MODULE_LOAD ? "module load" :
							  "library load",
			    size, rc);
	return rc;
}

static CUresult new_module(uint64_t remote, struct CUlib_st *lib,
			   CUmodule *out)
{
	struct CUmod_st *m = calloc(1, sizeof(*m));

	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = XGPULIB_MOD_MAGIC;
	m->remote = remote;
	m->ctx = xgpulib_current();
	m->lib = lib;
	symtab_init(&m->tab);
	*out = m;
	return CUDA_SUCCESS;
}

static void remote_unload(uint16_t op, uint64_t remote)
{
	struct xgpuif_handle_args a = { remote };

	call_exact1(op, &a, sizeof(a), NULL, 0, NULL);
}

static CUresult module_load(CUmodule *module, const void *bytes, size_t size,
			    unsigned int nopt, CUjit_option *opt, void **val)
{
	struct load_opts lo;
	uint64_t remote = 0;
	CUresult rc;

	memset(&lo, 0, sizeof(lo));
	rc = jit_filter(nopt, opt, val, &lo);
	if (rc)
		return rc;
	rc = load_bytes(XGPUIF_OP_MODULE_LOAD, bytes, size, &lo, &remote);
	if (nopt)
		jit_outputs(nopt, opt, val, rc);
	if (rc)
		return rc;
	rc = new_module(remote, NULL, module);
	if (rc)
		remote_unload(XGPUIF_OP_MODULE_UNLOAD, remote);
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
static CUresult read_file(const char *path, uint8_t **buf, size_t *size)
{
	struct stat st;
	uint8_t *b;
	size_t got = 0;
	int fd;

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

/* ---- module entry points ------------------------------------------------- */

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
			    unsigned int numOptions, CUjit_option *options,
			    void **optionValues)
{
	const void *bytes;
	size_t size;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!module)
		return CUDA_ERROR_INVALID_VALUE;
	rc = image_of(image, &bytes, &size);
	if (rc)
		return rc;
	return module_load(module, bytes, size, numOptions, options,
			   optionValues);
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
	uint8_t *buf;
	size_t size;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	rc = read_file(fname, &buf, &size);
	if (rc)
		return rc;
	rc = module_load(module, buf, size, 0, NULL, NULL);
	free(buf);
	return rc;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	struct CUmod_st *m = mod_check(hmod);
	struct xgpuif_handle_args a;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* a library's module lives and dies with its library */
	if (!m || m->lib)
		return CUDA_ERROR_INVALID_HANDLE;
	a.handle = m->remote;
	rc = call_exact1(XGPUIF_OP_MODULE_UNLOAD, &a, sizeof(a), NULL, 0,
			 NULL);
	/* the worker dropped its handles whatever the driver said */
	mod_free(m);
	return rc ? rc : xgpulib_take_deferred();
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
	const char *e = getenv("CUDA_MODULE_LOADING");

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	*mode = e && strcasecmp(e, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING :
						   CU_MODULE_LAZY_LOADING;
	return CUDA_SUCCESS;
}

/* ---- functions and kernels ----------------------------------------------- */

/*
 * Build a function from a GET_FUNCTION/GET_KERNEL/KERNEL_GET_FUNCTION
 * reply.  The layout is checked before use: a launch writes parameters at
 * these offsets into a buffer of param_bytes.
 */
static CUresult xfunc_from_reply(uint32_t kind, const char *name,
				 const uint8_t *reply, uint32_t rlen,
				 struct xfunc **out)
{
	struct xgpuif_func_reply r;
	uint32_t n = 0;
	size_t nlen = strlen(name) + 1;
	struct xfunc *xf;

	if (rlen < sizeof(r))
		return CUDA_ERROR_UNKNOWN;
	memcpy(&r, reply, sizeof(r));
	if (!r.handle)
		return CUDA_ERROR_UNKNOWN;
	if (r.nparams != XGPUIF_PARAMS_UNKNOWN) {
		n = r.nparams;
		if (n > XGPUIF_MAX_PARAMS ||
		    rlen < sizeof(r) + n * sizeof(struct xgpuif_param))
			return CUDA_ERROR_UNKNOWN;
	}
	xf = calloc(1, sizeof(*xf) + n * sizeof(struct xgpuif_param) + nlen);
	if (!xf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (n)
		memcpy(xf->params, reply + sizeof(r),
		       n * sizeof(struct xgpuif_param));
	for (uint32_t i = 0; i < n; i++) {
		if ((uint32_t)xf->params[i].offset + xf->params[i].size >
		    r.param_bytes) {
			free(xf);
			return CUDA_ERROR_UNKNOWN;
		}
	}
	xf->f.name = (char *)(xf->params + n);
	memcpy(xf->f.name, name, nlen);
	xf->f.magic = XGPULIB_FUNC_MAGIC;
	xf->f.kind = kind;
	xf->f.remote = r.handle;
	xf->f.nparams = r.nparams;
	xf->f.param_bytes = r.nparams == XGPUIF_PARAMS_UNKNOWN ? 0 :
								 r.param_bytes;
	xf->f.params = xf->params;
	pthread_mutex_init(&xf->f.attr_mu, NULL);
	*out = xf;
	return CUDA_SUCCESS;
}

/*
 * One lookup round trip.  The reply buffer holds the largest layout the
 * ring allows (the request is padded to as many slots).
 */
static CUresult fetch_func(uint16_t op, uint64_t owner, const char *name,
			   bool send_name, uint32_t kind, struct xfunc **out)
{
	struct xgpuif_symbol_args a = { owner };
	struct xgpuif_iov iov[2];
	uint32_t cap = sizeof(struct xgpuif_func_reply) +
		       XGPUIF_MAX_PARAMS * sizeof(struct xgpuif_param);
	size_t nlen = strlen(name) + 1;
	uint32_t rlen = 0;
	uint8_t *reply;
	CUresult rc;

	if (nlen > XGPUIF_MAX_PAYLOAD - sizeof(a))
		return CUDA_ERROR_INVALID_VALUE;
	if (cap > reply_cap_max())
		cap = reply_cap_max();
	reply = malloc(cap);
	if (!reply)
		return CUDA_ERROR_OUT_OF_MEMORY;
	iov[0] = (struct xgpuif_iov){ &a, sizeof(a) };
	iov[1] = (struct xgpuif_iov){ name, (uint32_t)nlen };
	rc = xgpulib_take_deferred();
	if (!rc)
		rc = call_exact(op, iov, send_name ? 2 : 1, reply, cap, &rlen);
	if (!rc)
		rc = xfunc_from_reply(kind, name, reply, rlen, out);
	free(reply);
	if (rc == CUDA_ERROR_UNKNOWN)
		xgpulib_dbg("malformed function reply for %s", name);
	return rc;
}

/* look `name` up in an owner's table, asking the worker the first time */
static CUresult tab_lookup(struct symtab *t, uint16_t op, uint64_t owner,
			   uint32_t kind, const char *name, CUmodule mod,
			   CUlibrary lib, struct xfunc **out)
{
	uint32_t h = name_hash(name);
	struct xfunc *xf;
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&t->mu);
	for (xf = t->b[h]; xf; xf = xf->next)
		if (strcmp(xf->f.name, name) == 0)
			break;
	if (!xf) {
		rc = fetch_func(op, owner, name, true, kind, &xf);
		if (rc == CUDA_SUCCESS) {
			xf->f.module = mod;
			xf->f.library = lib;
			xf->next = t->b[h];
			t->b[h] = xf;
		}
	}
	pthread_mutex_unlock(&t->mu);
	if (rc == CUDA_SUCCESS)
		*out = xf;
	return rc;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
			     const char *name)
{
	struct CUmod_st *m = mod_check(hmod);
	struct xfunc *xf;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = tab_lookup(&m->tab, XGPUIF_OP_MODULE_GET_FUNCTION, m->remote,
			XGPUIF_FN_FUNCTION, name, m, m->lib, &xf);
	if (rc == CUDA_SUCCESS)
		*hfunc = (CUfunction)&xf->f;
	return rc;
}

static CUresult get_global(uint16_t op, uint64_t owner, const char *name,
			   CUdeviceptr *dptr, size_t *bytes)
{
	struct xgpuif_symbol_args a = { owner };
	struct xgpuif_global_reply r = { 0, 0 };
	struct xgpuif_iov iov[2];
	size_t nlen = strlen(name) + 1;
	uint32_t rlen = 0;
	CUresult rc;

	if (nlen > XGPUIF_MAX_PAYLOAD - sizeof(a))
		return CUDA_ERROR_INVALID_VALUE;
	iov[0] = (struct xgpuif_iov){ &a, sizeof(a) };
	iov[1] = (struct xgpuif_iov){ name, (uint32_t)nlen };
	rc = xgpulib_call(op, iov, 2, &r, sizeof(r), &rlen);
	if (rc)
		return rc;
	if (rlen < sizeof(r))
		return CUDA_ERROR_UNKNOWN;
	if (dptr)
		*dptr = (CUdeviceptr)r.dptr;
	if (bytes)
		*bytes = (size_t)r.size;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
			   const char *name)
{
	struct CUmod_st *m = mod_check(hmod);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	return get_global(XGPUIF_OP_MODULE_GET_GLOBAL, m->remote, name, dptr,
			  bytes);
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

static CUresult get_count(uint16_t op, uint64_t owner, unsigned int *count)
{
	struct xgpuif_handle_args a = { owner };
	struct xgpuif_u64_reply r = { 0 };
	struct xgpuif_iov iov = { &a, sizeof(a) };
	uint32_t rlen = 0;
	CUresult rc;

	rc = xgpulib_call(op, &iov, 1, &r, sizeof(r), &rlen);
	if (rc)
		return rc;
	if (rlen < sizeof(r) || r.value > 0xffffffffu)
		return CUDA_ERROR_UNKNOWN;
	*count = (unsigned int)r.value;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	struct CUmod_st *m = mod_check(mod);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	return get_count(XGPUIF_OP_MODULE_GET_FUNCTION_COUNT, m->remote,
			 count);
}

/* ---- libraries ----------------------------------------------------------- */

static CUresult library_load(CUlibrary *library, const void *bytes,
			     size_t size, CUjit_option *jitOptions,
			     void **jitOptionsValues,
			     unsigned int numJitOptions,
			     CUlibraryOption *libraryOptions,
			     void **libraryOptionValues,
			     unsigned int numLibraryOptions)
{
	struct load_opts lo;
	struct CUlib_st *l;
	uint64_t remote = 0;
	CUresult rc;

	memset(&lo, 0, sizeof(lo));
	rc = jit_filter(numJitOptions, jitOptions, jitOptionsValues, &lo);
	if (rc)
		return rc;
	/* the wire puts JIT options first */
	rc = lib_filter(numLibraryOptions, libraryOptions,
			libraryOptionValues, &lo);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = load_bytes(XGPUIF_OP_LIBRARY_LOAD, bytes, size, &lo, &remote);
	if (numJitOptions)
		jit_outputs(numJitOptions, jitOptions, jitOptionsValues, rc);
	if (rc) {
		free(l);
		return rc;
	}
	l->magic = XGPULIB_LIB_MAGIC;
	l->remote = remote;
	symtab_init(&l->tab);
	*library = l;
	return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
			   CUjit_option *jitOptions, void **jitOptionsValues,
			   unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions,
			   void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	const void *bytes;
	size_t size;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!library)
		return CUDA_ERROR_INVALID_VALUE;
	rc = image_of(code, &bytes, &size);
	if (rc)
		return rc;
	return library_load(library, bytes, size, jitOptions,
			    jitOptionsValues, numJitOptions, libraryOptions,
			    libraryOptionValues, numLibraryOptions);
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
			       CUjit_option *jitOptions,
			       void **jitOptionsValues,
			       unsigned int numJitOptions,
			       CUlibraryOption *libraryOptions,
			       void **libraryOptionValues,
			       unsigned int numLibraryOptions)
{
	uint8_t *buf;
	size_t size;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!library || !fileName)
		return CUDA_ERROR_INVALID_VALUE;
	rc = read_file(fileName, &buf, &size);
	if (rc)
		return rc;
	rc = library_load(library, buf, size, jitOptions, jitOptionsValues,
			  numJitOptions, libraryOptions, libraryOptionValues,
			  numLibraryOptions);
	free(buf);
	return rc;
}

CUresult cuLibraryUnload(CUlibrary library)
{
	struct CUlib_st *l = lib_check(library);
	struct xgpuif_handle_args a;
	struct libmod *lm, *next;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	a.handle = l->remote;
	rc = call_exact1(XGPUIF_OP_LIBRARY_UNLOAD, &a, sizeof(a), NULL, 0,
			 NULL);
	/* the worker dropped the library's kernels, functions and modules
	 * with it */
	for (lm = l->mods; lm; lm = next) {
		next = lm->next;
		mod_free(lm->mod);
		free(lm);
	}
	symtab_free(&l->tab);
	l->magic = XGPULIB_DEAD_MAGIC;
	free(l);
	return rc ? rc : xgpulib_take_deferred();
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
			    const char *name)
{
	struct CUlib_st *l = lib_check(library);
	struct xfunc *xf;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = tab_lookup(&l->tab, XGPUIF_OP_LIBRARY_GET_KERNEL, l->remote,
			XGPUIF_FN_KERNEL, name, NULL, l, &xf);
	if (rc == CUDA_SUCCESS)
		*pKernel = (CUkernel)&xf->f;
	return rc;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes,
			    CUlibrary library, const char *name)
{
	struct CUlib_st *l = lib_check(library);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	return get_global(XGPUIF_OP_LIBRARY_GET_GLOBAL, l->remote, name, dptr,
			  bytes);
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	struct CUlib_st *l = lib_check(lib);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	return get_count(XGPUIF_OP_LIBRARY_GET_KERNEL_COUNT, l->remote, count);
}

/* the library's module in the current context, made once per context */
CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
	struct CUlib_st *l = lib_check(library);
	uint64_t ctx = xgpulib_current_remote();
	struct xgpuif_handle_args a;
	struct xgpuif_load_reply r = { 0 };
	struct libmod *lm;
	uint32_t rlen = 0;
	CUresult rc = CUDA_SUCCESS;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pMod)
		return CUDA_ERROR_INVALID_VALUE;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&l->tab.mu);
	for (lm = l->mods; lm; lm = lm->next)
		if (lm->ctx == ctx)
			break;
	if (!lm) {
		a.handle = l->remote;
		rc = xgpulib_take_deferred();
		if (!rc)
			rc = call_exact1(XGPUIF_OP_LIBRARY_GET_MODULE, &a,
					 sizeof(a), &r, sizeof(r), &rlen);
		if (rc == CUDA_SUCCESS && (rlen < sizeof(r) || !r.handle))
			rc = CUDA_ERROR_UNKNOWN;
		if (rc == CUDA_SUCCESS) {
			lm = calloc(1, sizeof(*lm));
			if (!lm || new_module(r.handle, l, &lm->mod)) {
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
	pthread_mutex_unlock(&l->tab.mu);
	if (rc == CUDA_SUCCESS)
		*pMod = lm->mod;
	return rc;
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

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!kf || !lib_check(kf->library))
		return CUDA_ERROR_INVALID_HANDLE;
	kx = (struct xfunc *)kf;
	l = kf->library;
	pthread_mutex_lock(&l->tab.mu);
	for (k = kx->kfns; k; k = k->next)
		if (k->ctx == ctx)
			break;
	if (!k) {
		struct xfunc *xf = NULL;

		k = calloc(1, sizeof(*k));
		if (!k)
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else
			rc = fetch_func(XGPUIF_OP_KERNEL_GET_FUNCTION,
					kf->remote, kf->name, false,
					XGPUIF_FN_FUNCTION, &xf);
		if (rc == CUDA_SUCCESS) {
			xf->f.library = l;
			k->ctx = ctx;
			k->fn = xf;
			k->next = kx->kfns;
			kx->kfns = k;
		} else {
			free(k);
			k = NULL;
		}
	}
	pthread_mutex_unlock(&l->tab.mu);
	if (rc == CUDA_SUCCESS)
		*pFunc = (CUfunction)&k->fn->f;
	return rc;
}

CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	struct xgpulib_func *kf = kernel_check(kernel);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	if (!kf)
		return CUDA_ERROR_INVALID_HANDLE;
	*pLib = kf->library;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	struct xgpulib_func *f = xgpulib_func_check(hfunc);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hmod)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (f->module) {
		*hmod = f->module;
		return CUDA_SUCCESS;
	}
	/* a kernel's function lives in its library's module */
	if (f->library)
		return cuLibraryGetModule(hmod, f->library);
	return CUDA_ERROR_INVALID_HANDLE;
}

/* ---- attributes ---------------------------------------------------------- */

CUresult xgpulib_func_attr(struct xgpulib_func *f, int attr, int *value)
{
	struct xgpuif_func_attr_args a;
	struct xgpuif_func_attrs_reply r;
	uint32_t rlen = 0;
	CUresult rc = CUDA_SUCCESS;

	if (attr < 0 || (unsigned int)attr >= XGPUIF_NUM_FUNC_ATTRS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&f->attr_mu);
	if (!f->attrs_valid) {
		struct xgpuif_iov iov = { &a, sizeof(a) };

		memset(&a, 0, sizeof(a));
		a.handle = f->remote;
		a.kind = f->kind;
		memset(&r, 0, sizeof(r));
		rc = xgpulib_call(XGPUIF_OP_FUNC_GET_ATTRIBUTES, &iov, 1, &r,
				  sizeof(r), &rlen);
		if (rc == CUDA_SUCCESS && rlen < sizeof(r))
			rc = CUDA_ERROR_UNKNOWN;
		if (rc == CUDA_SUCCESS) {
			f->attrs = r;
			f->attrs_valid = true;
		}
	}
	if (rc == CUDA_SUCCESS) {
		if (f->attrs.valid[attr])
			*value = f->attrs.attrs[attr];
		else
			rc = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&f->attr_mu);
	return rc;
}

static CUresult func_set(uint16_t op, struct xgpulib_func *f, int dev,
			 uint32_t attr, int32_t value)
{
	struct xgpuif_func_attr_args a;
	CUresult rc;

	memset(&a, 0, sizeof(a));
	a.handle = f->remote;
	a.kind = f->kind;
	a.dev = dev;
	a.attr = attr;
	a.value = value;
	rc = xgpulib_call1(op, &a, sizeof(a), NULL, 0);
	/* a setting may move other attributes (the carveout, the dynamic
	 * shared memory limit): fetch them all again next time */
	pthread_mutex_lock(&f->attr_mu);
	f->attrs_valid = false;
	pthread_mutex_unlock(&f->attr_mu);
	return rc;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
			    CUfunction hfunc)
{
	struct xgpulib_func *f = xgpulib_func_check(hfunc);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return xgpulib_func_attr(f, (int)attrib, pi);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
			    int value)
{
	struct xgpulib_func *f = xgpulib_func_check(hfunc);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_set(XGPUIF_OP_FUNC_SET_ATTRIBUTE, f, 0, (uint32_t)attrib,
			value);
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	struct xgpulib_func *f = xgpulib_func_check(hfunc);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_set(XGPUIF_OP_FUNC_SET_CACHE_CONFIG, f, 0,
			(uint32_t)config, 0);
}

/* bank size configuration is gone from the GPUs CUDA 13 supports */
CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!xgpulib_func_check(hfunc))
		return CUDA_ERROR_INVALID_HANDLE;
	if ((unsigned int)config >
	    CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
			      CUkernel kernel, CUdevice dev)
{
	struct xgpulib_func *f = xgpulib_func_check(kernel);
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	/* one device per guest: the cache needs no device key */
	return xgpulib_func_attr(f, (int)attrib, pi);
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
			      CUkernel kernel, CUdevice dev)
{
	struct xgpulib_func *f = xgpulib_func_check(kernel);
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_set(XGPUIF_OP_FUNC_SET_ATTRIBUTE, f, dev, (uint32_t)attrib,
			val);
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
				CUdevice dev)
{
	struct xgpulib_func *f = xgpulib_func_check(kernel);
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_set(XGPUIF_OP_FUNC_SET_CACHE_CONFIG, f, dev,
			(uint32_t)config, 0);
}

static CUresult get_name(const char **name, const void *h)
{
	struct xgpulib_func *f = xgpulib_func_check(h);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->name;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	return get_name(name, hfunc);
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	return get_name(name, hfunc);
}

static CUresult param_info(const void *h, size_t index, size_t *offset,
			   size_t *size)
{
	struct xgpulib_func *f = xgpulib_func_check(h);

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!offset)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (f->nparams == XGPUIF_PARAMS_UNKNOWN)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (index >= f->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*offset = f->params[index].offset;
	if (size)
		*size = f->params[index].size;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
			    size_t *paramOffset, size_t *paramSize)
{
	return param_info(func, paramIndex, paramOffset, paramSize);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
			      size_t *paramOffset, size_t *paramSize)
{
	return param_info(kernel, paramIndex, paramOffset, paramSize);
}

/* the worker's driver loads lazily on its own; to the guest every
 * function is ready */
CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!state)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_func_check(function))
		return CUDA_ERROR_INVALID_HANDLE;
	*state = CU_FUNCTION_LOADING_STATE_LOADED;
	return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction function)
{
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!xgpulib_func_check(function))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}
