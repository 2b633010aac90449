/* SPDX-License-Identifier: MIT */
/*
 * etbl_fake.h: what the export-table suites (check_etbl.c,
 * check_etbl_cls.c) drive the tables through:
 *
 *   the fake core  the identity ops the guest library's core would give
 *                  (xgpulib_etbl_init): FAKE_NDEV devices with fixed
 *                  identities, their primary contexts (ids 1, 2), the
 *                  calling thread's current context (fake_current), a
 *                  module of FAKE_NFUNCS functions; setup_ops()
 *                  installs them, as a test case's fixture;
 *   the tables     each table cudart asks for, by name and id, with its
 *                  size slot; get_table() fetches one as cudart does.
 *
 * A test case that runs without setup_ops() sees the library before the
 * core has started (each case runs in a child of its own, CK_FORK).
 */
#ifndef ETBL_FAKE_H
#define ETBL_FAKE_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>

#include "xgpulib_etbl.h"

/* ---- fake core ---------------------------------------------------------- */

#define FAKE_NDEV 2

struct CUctx_st {
	int dummy;
};

static struct CUctx_st fake_primary[FAKE_NDEV];
static __thread CUcontext fake_current;
static int fake_identity_fails;

static const struct xgpulib_integrity_dev fake_devs[FAKE_NDEV] = {
	{ { { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	      0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f } }, 0, 0x1b, 0 },
	{ { { 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	      0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f } }, 1, 0x9a, 3 },
};

static int fake_device_count(void)
{
	return FAKE_NDEV;
}

static int fake_device_identity(int ordinal, CUuuid *uuid, int *pci_domain,
				int *pci_bus, int *pci_device)
{
	if (ordinal < 0 || ordinal >= FAKE_NDEV || fake_identity_fails)
		return -1;
	*uuid = fake_devs[ordinal].uuid;
	*pci_domain = fake_devs[ordinal].pci_domain;
	*pci_bus = fake_devs[ordinal].pci_bus;
	*pci_device = fake_devs[ordinal].pci_device;
	return 0;
}

static CUresult fake_primary_ctx(CUdevice dev, CUcontext *pctx)
{
	if (dev < 0 || dev >= FAKE_NDEV)
		return CUDA_ERROR_INVALID_DEVICE;
	*pctx = &fake_primary[dev];
	return CUDA_SUCCESS;
}

static CUcontext fake_current_ctx(void)
{
	return fake_current;
}

static int fake_driver_version(void)
{
	return 13000;
}

static CUresult fake_set_current(CUcontext ctx)
{
	fake_current = ctx;
	return CUDA_SUCCESS;
}

/* the ordinal of the device whose primary context ctx is; -1: none */
static int fake_primary_of(CUcontext ctx)
{
	for (int i = 0; i < FAKE_NDEV; i++)
		if (ctx == &fake_primary[i])
			return i;
	return -1;
}

/* a primary context's id is its ordinal + 1; nothing else is a context */
static CUresult fake_ctx_id(CUcontext ctx, unsigned long long *id)
{
	int i = fake_primary_of(ctx);

	if (i < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	*id = (unsigned long long)i + 1;
	return CUDA_SUCCESS;
}

static CUresult fake_ctx_device(CUdevice *dev, CUcontext ctx)
{
	int i = fake_primary_of(ctx);

	if (i < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = i;
	return CUDA_SUCCESS;
}

/* the fake module (any non-NULL CUmodule) has these functions */
#define FAKE_NFUNCS 3
static struct CUfunc_st {
	const char *name;
	size_t nparams;
} fake_funcs[FAKE_NFUNCS] = {
	{ "fft_r2c", 4 }, { "fft_c2c", 3 }, { "fft_c2r", 5 },
};

static CUresult fake_module_each(CUmodule mod,
				 void (*visit)(void *, CUfunction,
					       const char *),
				 void *user, unsigned int *count)
{
	(void)mod;
	for (int i = 0; i < FAKE_NFUNCS; i++)
		visit(user, &fake_funcs[i], fake_funcs[i].name);
	if (count)
		*count = FAKE_NFUNCS;
	return CUDA_SUCCESS;
}

static CUresult fake_func_param_count(CUfunction f, size_t *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = f->nparams;
	return CUDA_SUCCESS;
}

/* the host driver's tables the library does not know: 16 bytes of 0x77
 * (6 slots) and of 0x78 (no size slot); nothing else */
#define FAKE_HOST_TBL6	0x77
#define FAKE_HOST_TBLX	0x78

static CUresult fake_table_size(const CUuuid *id, uint64_t *bytes)
{
	uint8_t b = (uint8_t)id->bytes[0];

	for (int i = 1; i < 16; i++)
		if ((uint8_t)id->bytes[i] != b)
			return CUDA_ERROR_NOT_FOUND;
	if (b == FAKE_HOST_TBL6)
		*bytes = 6 * sizeof(void *);
	else if (b == FAKE_HOST_TBLX)
		*bytes = 0;
	else
		return CUDA_ERROR_NOT_FOUND;
	return CUDA_SUCCESS;
}

static const struct xgpulib_identity_ops fake_ops = {
	.device_count = fake_device_count,
	.device_identity = fake_device_identity,
	.primary_ctx = fake_primary_ctx,
	.current_ctx = fake_current_ctx,
	.driver_version = fake_driver_version,
	.set_current = fake_set_current,
	.ctx_id = fake_ctx_id,
	.ctx_device = fake_ctx_device,
	.module_each = fake_module_each,
	.func_param_count = fake_func_param_count,
	.table_size = fake_table_size,
};

static void setup_ops(void)
{
	xgpulib_etbl_init(&fake_ops);
}

/* ---- tables ------------------------------------------------------------- */

enum {
	T_F8CFF951,
	T_CUDART_INTERFACE,
	T_TOOLS_HOOKS,
	T_TOOLS_TLS,
	T_CLS,
	T_CONTEXT_CHECKS,
	T_INTEGRITY_CHECK,
	T_21318C60,
	T_TOOLS_MODULE,
	T_NVML,
};

static const struct {
	const char *name;
	uint8_t id[16];
	size_t slots;		/* 0: no size slot */
} tables[] = {
	[T_F8CFF951] = { "f8cff951",
		{ 0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e,
		  0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9 }, 3 },
	[T_CUDART_INTERFACE] = { "CUDART_INTERFACE",
		{ 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
		  0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 }, 13 },
	[T_TOOLS_HOOKS] = { "TOOLS_RUNTIME_CALLBACK_HOOKS",
		{ 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
		  0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 }, 7 },
	[T_TOOLS_TLS] = { "TOOLS_TLS",
		{ 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
		  0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc }, 3 },
	[T_CLS] = { "CONTEXT_LOCAL_STORAGE",
		{ 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
		  0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 }, 0 },
	[T_CONTEXT_CHECKS] = { "CONTEXT_CHECKS",
		{ 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
		  0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e }, 15 },
	[T_INTEGRITY_CHECK] = { "INTEGRITY_CHECK",
		{ 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
		  0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 }, 3 },
	[T_21318C60] = { "21318c60",
		{ 0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
		  0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2 }, 93 },
	[T_TOOLS_MODULE] = { "6e163fbe",
		{ 0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
		  0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e }, 99 },
	[T_NVML] = { "69a28e9f",
		{ 0x69, 0xa2, 0x8e, 0x9f, 0x24, 0x49, 0x8b, 0x47,
		  0xb0, 0x30, 0xc5, 0xda, 0x33, 0x0e, 0xa4, 0xe9 }, 34 },
};

#define NTABLES (sizeof(tables) / sizeof(tables[0]))

static const void *const *get_table(int t)
{
	const void *tbl = NULL;
	CUuuid id;

	memcpy(id.bytes, tables[t].id, 16);
	ck_assert_int_eq(cuGetExportTable(&tbl, &id), CUDA_SUCCESS);
	ck_assert_ptr_nonnull(tbl);
	return tbl;
}

#endif /* ETBL_FAKE_H */
