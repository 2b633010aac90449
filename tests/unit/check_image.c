/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_api_module.c */
/* needs: xen-frontend/lib/xgpulib_api_launch.c */
/* needs: xen-backend/worker/XGPUIF_OP_module.c xen-backend/worker/XGPUIF_OP_launch.c */
/* needs: xen-backend/worker/xgpub_handles.c */
/*
 * Images and kernel parameters on both ends.
 *
 * Guest: how many bytes of an image are shipped (fatbin wrappers, fatbin
 * headers, ELF cubins whose sections lie past the section header table,
 * PTX text), and how a launch's kernelParams or extra buffer becomes the
 * flat parameter buffer of the wire.
 *
 * Worker: the module and launch handlers against a recording mock driver:
 * blob bounds, images that claim more bytes than they have, option
 * filtering, symbol names without a terminator, the parameter layout of
 * a function reply, kernelParams rebuilt at a launch, event handles in
 * launch attributes, and handles dropped with their module or library.
 */
#include <check.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_image.h"
#include "xgpub_worker.h"
#include "xgpub_module.h"

/* ---- guest: image sizes -------------------------------------------------- */

struct wrapper {
	uint32_t magic;
	uint32_t version;
	const void *data;
	void *unused;
};

static uint8_t fatbin_img[64 + 4400] __attribute__((aligned(8)));

static void make_fatbin(uint8_t *p, uint16_t hsize, uint64_t fsize)
{
	uint32_t magic = XGPULIB_FATBIN_MAGIC;
	uint16_t version = 1;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &hsize, 2);
	memcpy(p + 8, &fsize, 8);
}

START_TEST(test_size_null_and_ptx)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n";

	ck_assert_uint_eq(xgpulib_image_size(NULL), 0);
	ck_assert_uint_eq(xgpulib_image_size(ptx), sizeof(ptx));
	ck_assert_uint_eq(xgpulib_image_size(""), 1);
	/* a short string that starts like a magic number */
	ck_assert_uint_eq(xgpulib_image_size("\x7f" "E"), 3);
	ck_assert_uint_eq(xgpulib_image_size("\x50\xed"), 3);
}
END_TEST

START_TEST(test_size_fatbin)
{
	make_fatbin(fatbin_img, 16, 4400);
	ck_assert_uint_eq(xgpulib_image_size(fatbin_img), 16 + 4400);
	make_fatbin(fatbin_img, 64, 100);
	ck_assert_uint_eq(xgpulib_image_size(fatbin_img), 164);
	/* a header size below the header itself is not a fatbin we ship */
	make_fatbin(fatbin_img, 8, 100);
	ck_assert_uint_eq(xgpulib_image_size(fatbin_img), 0);
}
END_TEST

START_TEST(test_size_wrapper)
{
	struct wrapper wr = { XGPULIB_FATBIN_WRAPPER_MAGIC, 1, fatbin_img,
			      NULL };
	size_t n = 0;

	make_fatbin(fatbin_img, 16, 3792);
	ck_assert_uint_eq(xgpulib_image_size(&wr), 16 + 3792);
	/* the wrapper is replaced by the fatbin it points to */
	ck_assert_ptr_eq(xgpulib_image_bytes(&wr, &n), fatbin_img);
	ck_assert_uint_eq(n, 16 + 3792);
	wr.data = "not a fatbin";
	ck_assert_uint_eq(xgpulib_image_size(&wr), 0);
	wr.data = NULL;
	ck_assert_ptr_null(xgpulib_image_bytes(&wr, &n));
}
END_TEST

static uint8_t elf_img[0x2000] __attribute__((aligned(8)));

/*
 * An ELF with its section header table at 0x100 (4 entries) and sections
 * after it: the PROGBITS one at 0x400 + 0x80 is the end; the NOBITS one,
 * further "out", occupies no file bytes.
 */
static void make_elf(int extended)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[4];
	Elf64_Phdr ph;

	memset(elf_img, 0, sizeof(elf_img));
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = 0x100;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = extended ? 0 : 4;
	eh.e_phoff = 0x40;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1;
	memcpy(elf_img, &eh, sizeof(eh));
	memset(&ph, 0, sizeof(ph));
	memcpy(elf_img + 0x40, &ph, sizeof(ph));
	memset(sh, 0, sizeof(sh));
	if (extended)
		sh[0].sh_size = 4;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_offset = 0x300;
	sh[1].sh_size = 0x20;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_offset = 0x400;
	sh[2].sh_size = 0x80;
	sh[3].sh_type = SHT_NOBITS;
	sh[3].sh_offset = 0x1000;
	sh[3].sh_size = 0x5000;
	memcpy(elf_img + 0x100, sh, sizeof(sh));
}

START_TEST(test_size_elf_sections_past_table)
{
	make_elf(0);
	ck_assert_uint_eq(xgpulib_image_size(elf_img), 0x480);
}
END_TEST

START_TEST(test_size_elf_extended_numbering)
{
	make_elf(1);
	ck_assert_uint_eq(xgpulib_image_size(elf_img), 0x480);
}
END_TEST

START_TEST(test_size_elf_table_last)
{
	Elf64_Ehdr eh;

	make_elf(0);
	/* move the section header table past every section */
	memcpy(&eh, elf_img, sizeof(eh));
	memmove(elf_img + 0x800, elf_img + 0x100, 4 * sizeof(Elf64_Shdr));
	eh.e_shoff = 0x800;
	memcpy(elf_img, &eh, sizeof(eh));
	ck_assert_uint_eq(xgpulib_image_size(elf_img),
			  0x800 + 4 * sizeof(Elf64_Shdr));
}
END_TEST

START_TEST(test_size_elf32_refused)
{
	make_elf(0);
	elf_img[EI_CLASS] = ELFCLASS32;
	ck_assert_uint_eq(xgpulib_image_size(elf_img), 0);
}
END_TEST

/* ---- guest: parameter packing -------------------------------------------- */

/* vadd(float *a, float *b, float *c, int n, double scale, char tag) */
static struct xgpuif_param vadd_params[6] = {
	{ 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 }, { 32, 8 }, { 40, 1 },
};

static struct xgpulib_func vadd = {
	.magic = XGPULIB_FUNC_MAGIC,
	.kind = XGPUIF_FN_FUNCTION,
	.remote = 1,
	.name = "vadd",
	.nparams = 6,
	.param_bytes = 41,
	.params = vadd_params,
};

static struct xgpulib_func unknown = {
	.magic = XGPULIB_FUNC_MAGIC,
	.kind = XGPUIF_FN_KERNEL,
	.remote = 2,
	.name = "mystery",
	.nparams = XGPUIF_PARAMS_UNKNOWN,
};

static struct xgpulib_func noargs = {
	.magic = XGPULIB_FUNC_MAGIC,
	.kind = XGPUIF_FN_FUNCTION,
	.remote = 3,
	.name = "noargs",
	.nparams = 0,
};

START_TEST(test_pack_kernel_params)
{
	uint64_t a = 0x1111111111111111ull, b = 0x2222222222222222ull,
		 c = 0x3333333333333333ull;
	int n = 4096;
	double scale = 1.5;
	char tag = 7;
	void *args[6] = { &a, &b, &c, &n, &scale, &tag };
	uint8_t buf[64], want[41];
	uint32_t len = 0;

	memset(buf, 0xee, sizeof(buf));
	memset(want, 0, sizeof(want));
	memcpy(want, &a, 8);
	memcpy(want + 8, &b, 8);
	memcpy(want + 16, &c, 8);
	memcpy(want + 24, &n, 4);
	memcpy(want + 32, &scale, 8);
	memcpy(want + 40, &tag, 1);
	ck_assert_int_eq(xgpulib_params_len(&vadd, args, NULL, &len), 0);
	ck_assert_uint_eq(len, 41);
	ck_assert_int_eq(xgpulib_pack_params(&vadd, args, NULL, buf,
					     sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 41);
	/* the padding after n is zero, not whatever was in the buffer */
	ck_assert_mem_eq(buf, want, 41);
	/* too small a buffer */
	ck_assert_int_eq(xgpulib_pack_params(&vadd, args, NULL, buf, 40,
					     &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* a NULL argument pointer */
	args[2] = NULL;
	ck_assert_int_eq(xgpulib_pack_params(&vadd, args, NULL, buf,
					     sizeof(buf), &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* no kernelParams for a function that has parameters */
	ck_assert_int_eq(xgpulib_params_len(&vadd, NULL, NULL, &len),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_pack_extra)
{
	uint8_t argbuf[48], buf[64];
	size_t size = sizeof(argbuf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf,
			  CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  CU_LAUNCH_PARAM_END };
	void *args[6] = { 0 };
	uint32_t len = 0;

	for (size_t i = 0; i < sizeof(argbuf); i++)
		argbuf[i] = (uint8_t)i;
	/* a known layout: its bytes, even from a longer buffer */
	ck_assert_int_eq(xgpulib_pack_params(&vadd, NULL, extra, buf,
					     sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 41);
	ck_assert_mem_eq(buf, argbuf, 41);
	/* a shorter buffer leaves parameters unset */
	size = 40;
	ck_assert_int_eq(xgpulib_params_len(&vadd, NULL, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* an unknown layout: the buffer as given */
	size = 24;
	ck_assert_int_eq(xgpulib_pack_params(&unknown, NULL, extra, buf,
					     sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 24);
	ck_assert_mem_eq(buf, argbuf, 24);
	/* both forms at once */
	ck_assert_int_eq(xgpulib_params_len(&vadd, args, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* no size */
	extra[2] = CU_LAUNCH_PARAM_END;
	ck_assert_int_eq(xgpulib_params_len(&unknown, NULL, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* an unknown key */
	extra[0] = (void *)(uintptr_t)0x77;
	ck_assert_int_eq(xgpulib_params_len(&unknown, NULL, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_pack_unknown_layout_and_noargs)
{
	int x = 1;
	void *args[1] = { &x };
	uint32_t len = 99;

	ck_assert_int_eq(xgpulib_params_len(&unknown, args, NULL, &len),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(xgpulib_params_len(&noargs, NULL, NULL, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(xgpulib_pack_params(&noargs, NULL, NULL, NULL, 0,
					     &len), 0);
	ck_assert_uint_eq(len, 0);
}
END_TEST

/* ---- worker: a recording mock driver ------------------------------------- */

#define MOD	((CUmodule)(uintptr_t)0x1000)
#define LIB	((CUlibrary)(uintptr_t)0x2000)
#define FN	((CUfunction)(uintptr_t)0x3000)
#define KERN	((CUkernel)(uintptr_t)0x4000)
#define LIBMOD	((CUmodule)(uintptr_t)0x5000)
#define EVT	((CUevent)(uintptr_t)0x6000)

static struct {
	const void *image;
	unsigned int njit, nlib;
	CUjit_option jit[8];
	void *jitv[8];
	CUlibraryOption lib[8];
	void *libv[8];
	int unloads, lib_unloads;
	unsigned int grid[3], block[3];
	uint8_t params[64];
	int launched, launched_ex;
	int used_extra;
	unsigned int nattrs;
	CUlaunchAttribute attrs[4];
} rec;

static CUresult m_load(CUmodule *m, const void *image, unsigned int n,
		       CUjit_option *o, void **v)
{
	rec.image = image;
	rec.njit = n;
	for (unsigned int i = 0; i < n && i < 8; i++) {
		rec.jit[i] = o[i];
		rec.jitv[i] = v[i];
	}
	*m = MOD;
	return CUDA_SUCCESS;
}

static CUresult m_unload(CUmodule m)
{
	(void)m;
	rec.unloads++;
	return CUDA_SUCCESS;
}

static CUresult m_lib_load(CUlibrary *l, const void *code, CUjit_option *jo,
			   void **jv, unsigned int nj, CUlibraryOption *lo,
			   void **lv, unsigned int nl)
{
	(void)jo;
	(void)jv;
	rec.image = code;
	rec.njit = nj;
	rec.nlib = nl;
	for (unsigned int i = 0; i < nl && i < 8; i++) {
		rec.lib[i] = lo[i];
		rec.libv[i] = lv[i];
	}
	*l = LIB;
	return CUDA_SUCCESS;
}

static CUresult m_lib_unload(CUlibrary l)
{
	(void)l;
	rec.lib_unloads++;
	return CUDA_SUCCESS;
}

static CUresult m_get_fn(CUfunction *f, CUmodule m, const char *name)
{
	if (m != MOD && m != LIBMOD)
		return CUDA_ERROR_INVALID_HANDLE;
	if (strcmp(name, "vadd") != 0)
		return CUDA_ERROR_NOT_FOUND;
	*f = FN;
	return CUDA_SUCCESS;
}

static CUresult m_get_kernel(CUkernel *k, CUlibrary l, const char *name)
{
	if (l != LIB || strcmp(name, "vadd") != 0)
		return CUDA_ERROR_NOT_FOUND;
	*k = KERN;
	return CUDA_SUCCESS;
}

static CUresult m_lib_get_module(CUmodule *m, CUlibrary l)
{
	(void)l;
	*m = LIBMOD;
	return CUDA_SUCCESS;
}

static CUresult param_info(size_t i, size_t *off, size_t *size)
{
	if (i >= 6)
		return CUDA_ERROR_INVALID_VALUE;
	*off = vadd_params[i].offset;
	*size = vadd_params[i].size;
	return CUDA_SUCCESS;
}

static CUresult m_fn_param(CUfunction f, size_t i, size_t *off, size_t *size)
{
	(void)f;
	return param_info(i, off, size);
}

static CUresult m_kern_param(CUkernel k, size_t i, size_t *off,
			     size_t *size)
{
	(void)k;
	return param_info(i, off, size);
}

static void record_params(void **kp, void **extra)
{
	memset(rec.params, 0, sizeof(rec.params));
	rec.used_extra = extra != NULL;
	if (kp) {
		for (int i = 0; i < 6; i++)
			memcpy(rec.params + vadd_params[i].offset, kp[i],
			       vadd_params[i].size);
	} else if (extra) {
		memcpy(rec.params, extra[1], *(size_t *)extra[3]);
	}
}

static CUresult m_launch(CUfunction f, unsigned int gx, unsigned int gy,
			 unsigned int gz, unsigned int bx, unsigned int by,
			 unsigned int bz, unsigned int shmem, CUstream s,
			 void **kp, void **extra)
{
	(void)f;
	(void)shmem;
	(void)s;
	rec.grid[0] = gx;
	rec.grid[1] = gy;
	rec.grid[2] = gz;
	rec.block[0] = bx;
	rec.block[1] = by;
	rec.block[2] = bz;
	record_params(kp, extra);
	rec.launched++;
	return CUDA_SUCCESS;
}

static CUresult m_launch_ex(const CUlaunchConfig *cfg, CUfunction f,
			    void **kp, void **extra)
{
	(void)f;
	rec.nattrs = cfg->numAttrs;
	for (unsigned int i = 0; i < cfg->numAttrs && i < 4; i++)
		rec.attrs[i] = cfg->attrs[i];
	record_params(kp, extra);
	rec.launched_ex++;
	return CUDA_SUCCESS;
}

static CUresult m_fn_attr(int *v, CUfunction_attribute a, CUfunction f)
{
	(void)f;
	if (a == CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 100 + (int)a;
	return CUDA_SUCCESS;
}

/* entries the tests do not exercise: what a driver without them answers */
static CUresult m_kernel_get_fn(CUfunction *f, CUkernel k)
{
	(void)f;
	(void)k;
	return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult m_fn_set_attr(CUfunction f, CUfunction_attribute a, int v)
{
	(void)f;
	(void)a;
	(void)v;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* the worker needs every entry (xgpub_driver_open checks); the handlers
 * these tests reach use only these */
static struct xgpub_driver drv = {
	.name = "mock",
	.cuKernelGetFunction = m_kernel_get_fn,
	.cuFuncSetAttribute = m_fn_set_attr,
	.cuModuleLoadDataEx = m_load,
	.cuModuleUnload = m_unload,
	.cuModuleGetFunction = m_get_fn,
	.cuLibraryLoadData = m_lib_load,
	.cuLibraryUnload = m_lib_unload,
	.cuLibraryGetKernel = m_get_kernel,
	.cuLibraryGetModule = m_lib_get_module,
	.cuFuncGetParamInfo = m_fn_param,
	.cuKernelGetParamInfo = m_kern_param,
	.cuLaunchKernel = m_launch,
	.cuLaunchKernelEx = m_launch_ex,
	.cuFuncGetAttribute = m_fn_attr,
};

static struct xgpub_worker wk;
static struct xgpub_transport tr;
static uint8_t data_area[1 << 16];
static uint8_t out[XGPUIF_MAX_PAYLOAD];

static void wsetup(void)
{
	memset(&wk, 0, sizeof(wk));
	memset(&tr, 0, sizeof(tr));
	memset(&rec, 0, sizeof(rec));
	tr.data = data_area;
	tr.data_bytes = sizeof(data_area);
	snprintf(tr.who, sizeof(tr.who), "test");
	wk.t = &tr;
	wk.D = &drv;
}

static void wteardown(void)
{
	/* what the worker's teardown does for blobs */
	for (uint32_t i = 0; i < wk.h.n; i++)
		if (wk.h.e[i].type == XGPUB_H_BLOB)
			free(wk.h.e[i].obj);
	xgpub_handles_destroy(&wk.h);
}

/* opcode: the worker's generated entry for it, as the dispatcher calls it
 * once the request's sizes are checked */
typedef uint16_t handler_fn;

static int op_cap(handler_fn opcode, const void *p, uint32_t len,
		  uint32_t cap, uint32_t *rlen)
{
	uint32_t dummy;

	if (!rlen)
		rlen = &dummy;
	*rlen = 0;
	return xgpub_ops[opcode].call(&wk, p, len, out, cap, rlen);
}

static int op(handler_fn opcode, const void *p, uint32_t len, uint32_t *rlen)
{
	return op_cap(opcode, p, len, XGPUIF_MAX_PAYLOAD, rlen);
}

/* blob holding `n` bytes of `img`, written through the data area */
static xgpuif_handle_t blob_of(const void *img, uint64_t n)
{
	struct xgpuif_blob_create_args ca = { n };
	struct xgpuif_blob_reply br;
	struct xgpuif_blob_write_args wa;
	uint32_t rlen;

	ck_assert_int_eq(op(XGPUIF_OP_BLOB_CREATE, &ca, sizeof(ca), &rlen), 0);
	ck_assert_uint_eq(rlen, sizeof(br));
	memcpy(&br, out, sizeof(br));
	memcpy(data_area, img, n);
	memset(&wa, 0, sizeof(wa));
	wa.blob = br.blob;
	wa.off = 0;
	wa.src.region = XGPUIF_REGION_DATA;
	wa.src.len = n;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL), 0);
	return br.blob;
}

static int load(handler_fn fn, xgpuif_handle_t blob,
		const struct xgpuif_load_opt *opts, uint32_t njit,
		uint32_t nlib, xgpuif_handle_t *h)
{
	uint8_t p[sizeof(struct xgpuif_load_args) +
		  8 * sizeof(struct xgpuif_load_opt)];
	struct xgpuif_load_args la = { blob, njit, nlib };
	struct xgpuif_load_reply lr;
	uint32_t rlen;
	int rc;

	memcpy(p, &la, sizeof(la));
	if (njit + nlib)
		memcpy(p + sizeof(la), opts, (njit + nlib) * sizeof(*opts));
	rc = op(fn, p, sizeof(la) + (njit + nlib) * sizeof(*opts), &rlen);
	if (rc == 0) {
		ck_assert_uint_eq(rlen, sizeof(lr));
		memcpy(&lr, out, sizeof(lr));
		*h = lr.handle;
	}
	return rc;
}

static const char ptx_text[] = ".version 8.0\n.target sm_90\n";

START_TEST(test_blob_bounds)
{
	struct xgpuif_blob_create_args ca = { (1ull << 30) + 1 };
	struct xgpuif_blob_write_args wa;
	struct xgpuif_handle_args fa;
	xgpuif_handle_t b;

	/* one image may not exceed 1 GiB */
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_CREATE, &ca, sizeof(ca), NULL),
			 CUDA_ERROR_OUT_OF_MEMORY);
	b = blob_of(ptx_text, sizeof(ptx_text));
	memset(&wa, 0, sizeof(wa));
	wa.blob = b;
	wa.src.region = XGPUIF_REGION_DATA;
	/* past the blob's end */
	wa.off = 1;
	wa.src.len = sizeof(ptx_text);
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 XGPUIF_ST_PROTO);
	wa.off = UINT64_MAX;
	wa.src.len = 2;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 XGPUIF_ST_PROTO);
	/* past the data area */
	wa.off = 0;
	wa.src.off = sizeof(data_area) - 4;
	wa.src.len = 8;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 XGPUIF_ST_PROTO);
	/* a stale handle */
	fa.handle = b;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_FREE, &fa, sizeof(fa), NULL), 0);
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_FREE, &fa, sizeof(fa), NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	wa.blob = b;
	wa.src.off = 0;
	wa.src.len = 1;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

START_TEST(test_blob_total_limit)
{
	struct xgpuif_blob_create_args ca = { 1ull << 30 };
	int i, rc = 0;

	/* four 1 GiB blobs fill the guest's 4 GiB; malloc may refuse
	 * sooner on a small test machine, which is the same answer */
	for (i = 0; i < 5 && rc == 0; i++)
		rc = op(XGPUIF_OP_BLOB_CREATE, &ca, sizeof(ca), NULL);
	ck_assert_int_eq(rc, CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_le(i, 5);
}
END_TEST

START_TEST(test_module_load_options_and_unload)
{
	struct xgpuif_load_opt opts[3] = {
		{ CU_JIT_MAX_REGISTERS, 0, 32 },
		{ CU_JIT_OPTIMIZATION_LEVEL, 0, 3 },
		{ CU_JIT_INFO_LOG_BUFFER, 0, 0xdeadbeef },
	};
	struct xgpuif_handle_args ua;
	xgpuif_handle_t b, m = 0;

	/* a pointer-valued option is refused, and the blob is consumed */
	b = blob_of(ptx_text, sizeof(ptx_text));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, opts, 3, 0, &m),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, b, XGPUB_H_BLOB));
	/* library options on a module load are malformed */
	b = blob_of(ptx_text, sizeof(ptx_text));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, opts, 1, 1, &m),
			 XGPUIF_ST_PROTO);
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, opts, 2, 0, &m), 0);
	ck_assert_uint_eq(rec.njit, 2);
	ck_assert_int_eq(rec.jit[0], CU_JIT_MAX_REGISTERS);
	ck_assert_ptr_eq(rec.jitv[0], (void *)(uintptr_t)32);
	ck_assert_str_eq(rec.image, ptx_text);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, b, XGPUB_H_BLOB));
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, m, XGPUB_H_MODULE));
	ua.handle = m;
	ck_assert_int_eq(op(XGPUIF_OP_MODULE_UNLOAD, &ua, sizeof(ua), NULL), 0);
	ck_assert_int_eq(rec.unloads, 1);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, m, XGPUB_H_MODULE));
}
END_TEST

START_TEST(test_image_must_fit_blob)
{
	uint8_t img[64];
	struct wrapper wr = { XGPULIB_FATBIN_WRAPPER_MAGIC, 1, fatbin_img,
			      NULL };
	xgpuif_handle_t b, m = 0;

	/* a fatbin claiming more than the blob holds */
	memset(img, 0, sizeof(img));
	make_fatbin(img, 16, 4400);
	b = blob_of(img, sizeof(img));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m),
			 CUDA_ERROR_INVALID_IMAGE);
	/* the same header with its bytes */
	make_fatbin(img, 16, 48);
	b = blob_of(img, sizeof(img));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m), 0);
	/* a wrapper holds a guest pointer */
	b = blob_of(&wr, sizeof(wr));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m),
			 CUDA_ERROR_INVALID_IMAGE);
	/* an ELF whose section lies past the blob */
	make_elf(0);
	b = blob_of(elf_img, 0x470);
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m),
			 CUDA_ERROR_INVALID_IMAGE);
	b = blob_of(elf_img, 0x480);
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m), 0);
}
END_TEST

static int get_symbol(handler_fn fn, xgpuif_handle_t owner, const char *name,
		      size_t nlen, uint32_t *rlen)
{
	uint8_t p[256];
	struct xgpuif_symbol_args a = { owner };

	memcpy(p, &a, sizeof(a));
	memcpy(p + sizeof(a), name, nlen);
	return op(fn, p, sizeof(a) + (uint32_t)nlen, rlen);
}

static xgpuif_handle_t load_module(void)
{
	xgpuif_handle_t m = 0;

	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), NULL, 0, 0,
			      &m),
			 0);
	return m;
}

static xgpuif_handle_t get_vadd(xgpuif_handle_t m)
{
	struct xgpuif_func_reply r;
	struct xgpuif_param p[6];
	uint32_t rlen;

	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "vadd",
				    5, &rlen),
			 0);
	ck_assert_uint_eq(rlen, sizeof(r) + sizeof(p));
	memcpy(&r, out, sizeof(r));
	memcpy(p, out + sizeof(r), sizeof(p));
	ck_assert_uint_eq(r.nparams, 6);
	ck_assert_uint_eq(r.param_bytes, 41);
	ck_assert_mem_eq(p, vadd_params, sizeof(p));
	return r.handle;
}

START_TEST(test_get_function_layout)
{
	xgpuif_handle_t m = load_module(), f;
	uint32_t rlen;

	f = get_vadd(m);
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, f, XGPUB_H_FUNCTION));
	/* no terminator inside the request */
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "vadd",
				    4, &rlen),
			 XGPUIF_ST_PROTO);
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "", 0,
				    &rlen),
			 XGPUIF_ST_PROTO);
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "nope",
				    5, &rlen),
			 CUDA_ERROR_NOT_FOUND);
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m + 1,
				    "vadd", 5, &rlen),
			 CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

START_TEST(test_layout_too_big_for_reply)
{
	xgpuif_handle_t m = load_module();
	struct xgpuif_func_reply r;
	uint8_t p[64];
	struct xgpuif_symbol_args a = { m };
	uint32_t rlen = sizeof(r) + 8;	/* room for 2 of 6 parameters */

	memcpy(p, &a, sizeof(a));
	memcpy(p + sizeof(a), "vadd", 5);
	ck_assert_int_eq(op_cap(XGPUIF_OP_MODULE_GET_FUNCTION, p,
				sizeof(a) + 5, rlen, &rlen),
			 0);
	ck_assert_uint_eq(rlen, sizeof(r));
	memcpy(&r, out, sizeof(r));
	ck_assert_uint_eq(r.nparams, XGPUIF_PARAMS_UNKNOWN);
}
END_TEST

struct launch_msg {
	struct xgpuif_launch_args a;
	struct xgpuif_launch_attr attrs[2];
	uint8_t params[64];
};

static uint32_t launch_len(const struct launch_msg *m)
{
	return sizeof(m->a) + m->a.nattrs * sizeof(m->attrs[0]) +
	       m->a.param_bytes;
}

static uint8_t msg[XGPUIF_MAX_PAYLOAD];

/*
 * The message a guest sends: attributes, then the parameters (attribute
 * counts past the two of struct launch_msg go out as zeros).
 */
static void launch_pack(const struct launch_msg *m)
{
	uint32_t n = m->a.nattrs < 2 ? m->a.nattrs : 2;

	memset(msg, 0, sizeof(msg));
	memcpy(msg, &m->a, sizeof(m->a));
	memcpy(msg + sizeof(m->a), m->attrs, n * sizeof(m->attrs[0]));
	memcpy(msg + sizeof(m->a) + m->a.nattrs * sizeof(m->attrs[0]),
	       m->params, m->a.param_bytes);
}

static int do_launch(const struct launch_msg *m)
{
	launch_pack(m);
	return op(XGPUIF_OP_LAUNCH, msg, launch_len(m), NULL);
}

START_TEST(test_launch_rebuilds_kernel_params)
{
	xgpuif_handle_t f = get_vadd(load_module()), ev;
	struct launch_msg m;
	xgpuif_handle_t h;

	memset(&m, 0, sizeof(m));
	m.a.func = f;
	m.a.kind = XGPUIF_FN_FUNCTION;
	for (int i = 0; i < 3; i++) {
		m.a.grid[i] = 1 + i;
		m.a.block[i] = 32 >> i;
	}
	m.a.param_bytes = 41;
	for (int i = 0; i < 41; i++)
		m.params[i] = (uint8_t)(i * 7 + 1);
	ck_assert_int_eq(do_launch(&m), 0);
	ck_assert_int_eq(rec.launched, 1);
	ck_assert_int_eq(rec.used_extra, 0);
	ck_assert_uint_eq(rec.grid[1], 2);
	ck_assert_uint_eq(rec.block[2], 8);
	ck_assert_mem_eq(rec.params, m.params, 24 + 4);
	ck_assert_mem_eq(rec.params + 32, m.params + 32, 9);

	/* the layout decides the parameter bytes */
	m.a.param_bytes = 40;
	ck_assert_int_eq(do_launch(&m), XGPUIF_ST_PROTO);
	m.a.param_bytes = 41;
	/* lengths that do not add up */
	launch_pack(&m);
	ck_assert_int_eq(op(XGPUIF_OP_LAUNCH, msg, launch_len(&m) + 1, NULL),
			 XGPUIF_ST_PROTO);
	m.a.nattrs = XGPUIF_MAX_LAUNCH_ATTRS + 1;
	ck_assert_int_eq(do_launch(&m), XGPUIF_ST_PROTO);
	m.a.nattrs = 0;
	/* an empty grid */
	m.a.grid[0] = 0;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_VALUE);
	m.a.grid[0] = 1;
	/* a bad kind is malformed, a bad handle is not */
	m.a.kind = 7;
	ck_assert_int_eq(do_launch(&m), XGPUIF_ST_PROTO);
	m.a.kind = XGPUIF_FN_KERNEL;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_HANDLE);
	m.a.kind = XGPUIF_FN_FUNCTION;
	m.a.stream = (1ull << 32) | 77;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_HANDLE);
	m.a.stream = XGPUIF_STREAM_PER_THREAD;

	/* attributes: priority as is, the completion event translated */
	ev = xgpub_handle_new(&wk.h, XGPUB_H_EVENT, EVT, NULL);
	m.a.nattrs = 2;
	m.attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	memset(m.attrs[0].value, 0, sizeof(m.attrs[0].value));
	m.attrs[0].value[0] = 3;
	m.attrs[1].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
	memcpy(m.attrs[1].value, &ev, sizeof(ev));
	ck_assert_int_eq(do_launch(&m), 0);
	ck_assert_int_eq(rec.launched_ex, 1);
	ck_assert_uint_eq(rec.nattrs, 2);
	ck_assert_int_eq(rec.attrs[0].value.priority, 3);
	ck_assert_ptr_eq(rec.attrs[1].value.launchCompletionEvent.event, EVT);
	ck_assert_mem_eq(rec.params, m.params, 24 + 4);
	/* a stale event */
	h = ev + 1;
	memcpy(m.attrs[1].value, &h, sizeof(h));
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_HANDLE);
	/* a graphs-only attribute carrying an output pointer */
	m.attrs[1].id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_library_kernel_and_unload)
{
	struct xgpuif_load_opt opt = { CU_LIBRARY_BINARY_IS_PRESERVED, 0, 1 };
	struct xgpuif_load_opt bad = {
		CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE, 0, 0x1234 };
	struct xgpuif_handle_args a;
	struct xgpuif_func_reply r;
	struct xgpuif_load_reply lr;
	xgpuif_handle_t lib = 0, k, lm, mf;
	uint32_t rlen;

	ck_assert_int_eq(load(XGPUIF_OP_LIBRARY_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), &bad, 0, 1,
			      &lib),
			 CUDA_ERROR_INVALID_VALUE);
	/* the worker keeps the image, so it says so even if the guest
	 * did not */
	ck_assert_int_eq(load(XGPUIF_OP_LIBRARY_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), NULL, 0, 0,
			      &lib),
			 0);
	ck_assert_uint_eq(rec.nlib, 1);
	ck_assert_int_eq(rec.lib[0], CU_LIBRARY_BINARY_IS_PRESERVED);
	ck_assert_int_eq(load(XGPUIF_OP_LIBRARY_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), &opt, 0, 1,
			      &lib),
			 0);
	ck_assert_uint_eq(rec.nlib, 1);

	ck_assert_int_eq(get_symbol(XGPUIF_OP_LIBRARY_GET_KERNEL, lib, "vadd",
				    5, &rlen),
			 0);
	memcpy(&r, out, sizeof(r));
	ck_assert_uint_eq(r.nparams, 6);
	k = r.handle;
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, k, XGPUB_H_KERNEL));

	a.handle = lib;
	ck_assert_int_eq(op(XGPUIF_OP_LIBRARY_GET_MODULE, &a, sizeof(a), &rlen),
			 0);
	memcpy(&lr, out, sizeof(lr));
	lm = lr.handle;
	mf = get_vadd(lm);
	/* the library's module is not the guest's to unload */
	a.handle = lm;
	ck_assert_int_eq(op(XGPUIF_OP_MODULE_UNLOAD, &a, sizeof(a), NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(rec.unloads, 0);

	/* a driver that cannot give a kernel's function says so */
	a.handle = k;
	ck_assert_int_eq(op(XGPUIF_OP_KERNEL_GET_FUNCTION, &a, sizeof(a), NULL),
			 CUDA_ERROR_NOT_SUPPORTED);

	a.handle = lib;
	ck_assert_int_eq(op(XGPUIF_OP_LIBRARY_UNLOAD, &a, sizeof(a), NULL), 0);
	ck_assert_int_eq(rec.lib_unloads, 1);
	/* everything that came from the library went with it */
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, lib, XGPUB_H_LIBRARY));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, k, XGPUB_H_KERNEL));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, lm, XGPUB_H_MODULE));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, mf, XGPUB_H_FUNCTION));
}
END_TEST

START_TEST(test_func_attributes)
{
	xgpuif_handle_t f = get_vadd(load_module());
	struct xgpuif_func_attr_args a;
	struct xgpuif_func_attrs_reply r;
	uint32_t rlen;

	memset(&a, 0, sizeof(a));
	a.handle = f;
	a.kind = XGPUIF_FN_FUNCTION;
	ck_assert_int_eq(op(XGPUIF_OP_FUNC_GET_ATTRIBUTES, &a, sizeof(a),
			    &rlen),
			 0);
	ck_assert_uint_eq(rlen, sizeof(r));
	memcpy(&r, out, sizeof(r));
	ck_assert_int_eq(r.attrs[CU_FUNC_ATTRIBUTE_NUM_REGS],
			 100 + CU_FUNC_ATTRIBUTE_NUM_REGS);
	ck_assert_uint_eq(r.valid[CU_FUNC_ATTRIBUTE_NUM_REGS], 1);
	ck_assert_uint_eq(
		r.valid[CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE],
		0);
	/* a setting the driver refuses */
	ck_assert_int_eq(op(XGPUIF_OP_FUNC_SET_ATTRIBUTE, &a, sizeof(a), NULL),
			 CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

START_TEST(test_ctx_gone_drops_its_handles)
{
	CUcontext c1 = (CUcontext)(uintptr_t)0x71;
	CUcontext c2 = (CUcontext)(uintptr_t)0x72;
	xgpuif_handle_t m1, f1, m2, f2;

	wk.cur = c1;
	m1 = load_module();
	f1 = get_vadd(m1);
	wk.cur = c2;
	m2 = load_module();
	f2 = get_vadd(m2);
	xgpub_module_ctx_gone(&wk, c1);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, m1, XGPUB_H_MODULE));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, f1, XGPUB_H_FUNCTION));
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, m2, XGPUB_H_MODULE));
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, f2, XGPUB_H_FUNCTION));
	/* the driver already unloaded them with the context */
	ck_assert_int_eq(rec.unloads, 0);
}
END_TEST

static Suite *image_suite(void)
{
	Suite *s = suite_create("image");
	TCase *tc;

	tc = tcase_create("size");
	tcase_add_test(tc, test_size_null_and_ptx);
	tcase_add_test(tc, test_size_fatbin);
	tcase_add_test(tc, test_size_wrapper);
	tcase_add_test(tc, test_size_elf_sections_past_table);
	tcase_add_test(tc, test_size_elf_extended_numbering);
	tcase_add_test(tc, test_size_elf_table_last);
	tcase_add_test(tc, test_size_elf32_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("params");
	tcase_add_test(tc, test_pack_kernel_params);
	tcase_add_test(tc, test_pack_extra);
	tcase_add_test(tc, test_pack_unknown_layout_and_noargs);
	suite_add_tcase(s, tc);

	tc = tcase_create("worker");
	tcase_add_checked_fixture(tc, wsetup, wteardown);
	tcase_add_test(tc, test_blob_bounds);
	tcase_add_test(tc, test_blob_total_limit);
	tcase_add_test(tc, test_module_load_options_and_unload);
	tcase_add_test(tc, test_image_must_fit_blob);
	tcase_add_test(tc, test_get_function_layout);
	tcase_add_test(tc, test_layout_too_big_for_reply);
	tcase_add_test(tc, test_launch_rebuilds_kernel_params);
	tcase_add_test(tc, test_library_kernel_and_unload);
	tcase_add_test(tc, test_func_attributes);
	tcase_add_test(tc, test_ctx_gone_drops_its_handles);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(image_suite());
	int failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
