// SPDX-License-Identifier: MIT
/*
 * xgpulib_etbl_ops.c: the core's identity callbacks, installed at cuInit
 * (xgpulib_etbl_init) and asked by the export tables' slots
 * (xgpulib_etbl.c, xgpulib_etbl_cls.c).  A leaf below both.
 *
 * Locking: etbl_ops is written once by xgpulib_etbl_init and read with
 * atomic loads.
 */
#include <cuda.h>

#include "xgpulib_etbl.h"

static const struct xgpulib_identity_ops *etbl_ops;

void xgpulib_etbl_init(const struct xgpulib_identity_ops *ops)
{
	__atomic_store_n(&etbl_ops, ops, __ATOMIC_RELEASE);
}

const struct xgpulib_identity_ops *xgpulib_etbl_ops(void)
{
	return __atomic_load_n(&etbl_ops, __ATOMIC_ACQUIRE);
}
