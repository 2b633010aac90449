/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_dev.h: the devices the backend gives this guest, read once at
 * cuInit (everything about a device that never changes); every device
 * query is answered from this copy (xgpulib_dev.c).
 */
#ifndef XGPULIB_DEV_H
#define XGPULIB_DEV_H

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

#endif /* XGPULIB_DEV_H */
