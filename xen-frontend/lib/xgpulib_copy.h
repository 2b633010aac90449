/* SPDX-License-Identifier: MIT */
/* xgpulib_copy.h: the guest's copy engine (xgpulib_copy.c). */
#ifndef XGPULIB_COPY_H
#define XGPULIB_COPY_H

#include "xgpulib.h"

/* memcpy that splits large copies over a few threads */
void xgpulib_memcpy(void *dst, const void *src, size_t len);

/*
 * Copies between guest memory and the device.  stream is a wire stream
 * handle; async makes the copy stream ordered (cuMemcpy*Async): from
 * shared pinned memory it is then posted, from pageable memory it returns
 * once the guest's buffer is no longer needed, as CUDA's does.
 */
CUresult xgpulib_copy_htod(uint64_t dst, const void *src, size_t n,
			   uint64_t stream, int async);
CUresult xgpulib_copy_dtoh(void *dst, uint64_t src, size_t n, uint64_t stream,
			   int async);

#endif /* XGPULIB_COPY_H */
