/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_image.h: module images and kernel parameters in the guest
 * library: how many bytes of an image to ship to the worker, and how a
 * launch's arguments become the flat parameter buffer of the wire.
 * Private to xen-frontend/lib (and its unit tests).
 */
#ifndef XGPULIB_IMAGE_H
#define XGPULIB_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "xgpulib.h"

/* __fatBinC_Wrapper_t: {u32 magic, u32 version, const void *data, ...} */
#define XGPULIB_FATBIN_WRAPPER_MAGIC	0x466243B1u
/* fatbin header: {u32 magic, u16 version, u16 headerSize, u64 fatSize} */
#define XGPULIB_FATBIN_MAGIC		0xBA55ED50u

/*
 * Bytes of an image as cuModuleLoadData/cuLibraryLoadData take it: a
 * fatbin wrapper counts as the fatbin it points to, a fatbin is its header
 * plus fatSize, an ELF (64-bit) object ends with the last of its header
 * tables and section contents, and anything else is PTX text with its
 * NUL.  0 for NULL or an image that cannot be sized.
 */
size_t xgpulib_image_size(const void *image);

/*
 * The bytes to ship for `image`: a wrapper is replaced by the fatbin it
 * points to (the worker cannot follow a guest pointer).  NULL when the
 * image cannot be sized; *size is set otherwise.
 */
const void *xgpulib_image_bytes(const void *image, size_t *size);

/*
 * Kernel parameters.  xgpulib_params_len checks the launch's argument
 * form (kernelParams, or extra with CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE;
 * not both) against the function's layout and gives the length of the
 * flat buffer; xgpulib_pack_params fills `buf` (cap bytes, padding
 * zeroed) with the parameters at their offsets.  Both return a CUresult:
 * CUDA_ERROR_INVALID_VALUE for a malformed form, CUDA_ERROR_NOT_SUPPORTED
 * for kernelParams with no known layout.
 */
int xgpulib_params_len(const struct xgpulib_func *f, void **kernelParams,
		       void **extra, uint32_t *len);
int xgpulib_pack_params(const struct xgpulib_func *f, void **kernelParams,
			void **extra, void *buf, uint32_t cap, uint32_t *len);

/*
 * A launch configuration's parts as the wire has them (xgpulib_launch.c):
 * its stream (CUDA_ERROR_INVALID_HANDLE for one not ours), its attributes
 * (event handles become wire handles; at most XGPUIF_MAX_LAUNCH_ATTRS),
 * its grid and block.
 */
struct xgpuif_launch_attr;
CUresult xgpulib_launch_stream(CUstream s, int ptsz, uint64_t *out);
CUresult xgpulib_launch_attrs(const CUlaunchAttribute *in, unsigned int n,
			      struct xgpuif_launch_attr *out, uint32_t *nout);
void xgpulib_launch_dims(const CUlaunchConfig *c, uint32_t grid[3],
			 uint32_t block[3]);

#endif /* XGPULIB_IMAGE_H */
