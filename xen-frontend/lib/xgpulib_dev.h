/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_dev.h: the devices the backend gives this guest, read once at
 * cuInit (everything about a device that never changes); every device
 * query is answered from this copy (xgpulib_dev.c).
 */
#ifndef XGPULIB_DEV_H
#define XGPULIB_DEV_H

#include <stdbool.h>

#include <cuda.h>

#include "xgpuif.h"

struct xgpulib_device {
	struct xgpuif_device_info_reply info;
};

extern int xgpulib_ndev;
extern int xgpulib_driver_version;
extern struct xgpulib_device *xgpulib_devs;

/* ask the backend for its devices (cuInit); CUresult */
CUresult xgpulib_dev_load(uint32_t count, int driver_version);
/* CUDA_SUCCESS if dev is a valid ordinal (and cuInit succeeded) */
CUresult xgpulib_check_dev(CUdevice dev);
/* a call's output place given (out_ok: else CUDA_ERROR_INVALID_VALUE),
 * then xgpulib_check_dev(dev): the driver's order */
CUresult xgpulib_dev_arg(bool out_ok, CUdevice dev);
/*
 * A memory location that must be a device of ours (call names the caller
 * in the debug line): another location type is CUDA_ERROR_NOT_SUPPORTED,
 * a device we do not have CUDA_ERROR_INVALID_DEVICE.
 */
CUresult xgpulib_check_dev_loc(const CUmemLocation *loc, const char *call);
/*
 * The wire's kind of memory (allocation type, shareable handle types,
 * location) of a pool's or a physical allocation's properties, once the
 * location passed xgpulib_check_dev_loc.
 */
CUresult xgpulib_mem_kind(CUmemAllocationType type,
			  CUmemAllocationHandleType handle_types,
			  const CUmemLocation *loc, const char *call,
			  struct xgpuif_mem_kind *k);

#endif /* XGPULIB_DEV_H */
