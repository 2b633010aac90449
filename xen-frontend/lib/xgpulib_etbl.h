/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_etbl.h: the export tables of cuGetExportTable, the private
 * interface between cudart (and the libraries that embed it) and the
 * driver.  See shared/research/cuda-interception.md for what each table
 * is known to do.
 *
 * The tables only need to know a little about devices and contexts; the
 * core tells them through xgpulib_identity_ops, so that this part builds
 * and tests without the rest of the library.
 */
#ifndef XGPULIB_ETBL_H
#define XGPULIB_ETBL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

struct xgpulib_identity_ops {
	int (*device_count)(void);
	/* 0 on success */
	int (*device_identity)(int ordinal, CUuuid *uuid, int *pci_domain,
			       int *pci_bus, int *pci_device);
	/* stable handle of the device's primary context, without retaining it */
	CUresult (*primary_ctx)(CUdevice dev, CUcontext *pctx);
	/* the calling thread's current context, or NULL */
	CUcontext (*current_ctx)(void);
	int (*driver_version)(void);	/* e.g. 13000 */
	/* cuCtxSetCurrent, cuCtxGetId, cuCtxGetDevice_v2 as the API has them */
	CUresult (*set_current)(CUcontext ctx);
	CUresult (*ctx_id)(CUcontext ctx, unsigned long long *id);
	CUresult (*ctx_device)(CUdevice *dev, CUcontext ctx);
	/*
	 * visit(user, f, name) for each function of mod, as
	 * cuModuleGetFunction(name) gives it; *count: how many
	 */
	CUresult (*module_each)(CUmodule mod,
				void (*visit)(void *user, CUfunction f,
					      const char *name),
				void *user, unsigned int *count);
	/* how many parameters f takes */
	CUresult (*func_param_count)(CUfunction f, size_t *count);
	/*
	 * The host driver's size in bytes of a table this library does not
	 * know (0: it has one, size unknown), or the driver's error;
	 * CUDA_ERROR_NOT_INITIALIZED before cuInit
	 */
	CUresult (*table_size)(const CUuuid *id, uint64_t *bytes);
};

/*
 * Install the core's identity callbacks; ops must outlive the library.
 * Until this is called the tables still hand out, but whatever needs a
 * device or context answers CUDA_ERROR_NOT_INITIALIZED.
 */
void xgpulib_etbl_init(const struct xgpulib_identity_ops *ops);

/*
 * Run and drop the context-local-storage destructors of ctx.  The core
 * calls it when a primary context is reset or a context destroyed,
 * without holding its own locks (a destructor may call back into CUDA).
 */
void xgpulib_cls_release_ctx(CUcontext ctx);

/* the callbacks xgpulib_etbl_init installed, or NULL */
const struct xgpulib_identity_ops *xgpulib_etbl_ops(void);

/*
 * The context-local-storage table's slots (xgpulib_etbl_cls.c): put (or
 * replace) key's value and destructor in ctx, delete key, get its value;
 * ctx NULL: the calling thread's current context.
 */
typedef void (*xgpulib_cls_dtor_fn)(CUcontext ctx, void *key, void *value);
CUresult xgpulib_cls_put(CUcontext ctx, void *key, void *value,
			 xgpulib_cls_dtor_fn dtor);
CUresult xgpulib_cls_delete(CUcontext ctx, void *key);
CUresult xgpulib_cls_get(void **value, CUcontext ctx, void *key);

/* One device as the integrity check hashes it: 28 bytes, native layout */
struct xgpulib_integrity_dev {
	CUuuid uuid;
	int32_t pci_domain;
	int32_t pci_bus;
	int32_t pci_device;
};

/*
 * The integrity check's HMAC-MD2 for versions whose last digit is neither
 * 0 nor 1: over {driver_version, version, pid, tid, cudart_tbl,
 * integrity_tbl, slot1_fn, secs} (48 bytes, native layout) followed by
 * ndev device records.  Pure, for tests.
 */
void xgpulib_integrity_hash(uint32_t driver_version, uint32_t version,
			    uint32_t pid, uint32_t tid, const void *cudart_tbl,
			    const void *integrity_tbl, const void *slot1_fn,
			    uint64_t secs, int ndev,
			    const struct xgpulib_integrity_dev *devs,
			    uint64_t out[2]);

#endif /* XGPULIB_ETBL_H */
