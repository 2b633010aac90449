/* SPDX-License-Identifier: MIT */
/*
 * worker_mock.h: the worker's module and launch handlers against a
 * recording mock driver, for check_worker_module.c.
 *
 *   the mock   the driver entries those handlers use (xgpub_driver):
 *              module and library loads record their image and options,
 *              launches their grid, block, parameters and attributes
 *              (struct rec); vadd is the one function a module has;
 *   wsetup     a fresh worker on a data area of its own (the test case's
 *              checked fixture; wteardown frees what it holds);
 *   op         a request through the generated dispatch table xgpub_ops[]
 *              (the entry the dispatcher calls once the request's sizes
 *              are checked), the reply in out[];
 *   blob_of, load, load_module, get_symbol, get_vadd: the steps a guest
 *              takes to load an image and look up vadd.
 */
#ifndef WORKER_MOCK_H
#define WORKER_MOCK_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "image_samples.h"

/* ---- the recording mock driver ------------------------------------------ */

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

/* ---- a worker and the requests a guest sends it ------------------------- */

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

/* a PTX image: the mock takes any, the worker ships it as text */
static const char ptx_text[] = ".version 8.0\n.target sm_90\n";

/* a lookup of `name` (nlen bytes, terminator included if any) in owner */
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

#endif /* WORKER_MOCK_H */
