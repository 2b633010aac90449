// SPDX-License-Identifier: MIT
/*
 * xgpub_op_tmap.c: tensor maps (TMA descriptors, sm_90 and later): the
 * driver encodes them, on the host, in a format of its own; the guest
 * gets the 128 bytes and hands them to its kernels as a parameter.
 */
#include <string.h>

#include "xgpub_worker.h"

XGPUB_HANDLER(TENSOR_MAP)
{
	CUtensorMap m;
	void *addr = (void *)(uintptr_t)a->address;
	int rc;

	if (a->rank < 1 || a->rank > 5)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&m, 0, sizeof(m));
	switch (a->kind) {
	case XGPUIF_TMAP_TILED:
		rc = w->D->cuTensorMapEncodeTiled(
			&m, a->dtype, a->rank, addr, a->global_dim,
			a->global_strides, a->box_dim, a->element_strides,
			a->interleave, a->swizzle, a->l2, a->oob);
		break;
	case XGPUIF_TMAP_IM2COL:
		rc = w->D->cuTensorMapEncodeIm2col(
			&m, a->dtype, a->rank, addr, a->global_dim,
			a->global_strides, a->lower, a->upper,
			a->channels_per_pixel, a->pixels_per_column,
			a->element_strides, a->interleave, a->swizzle, a->l2,
			a->oob);
		break;
	case XGPUIF_TMAP_IM2COL_WIDE:
		rc = w->D->cuTensorMapEncodeIm2colWide(
			&m, a->dtype, a->rank, addr, a->global_dim,
			a->global_strides, a->lower_w, a->upper_w,
			a->channels_per_pixel, a->pixels_per_column,
			a->element_strides, a->interleave, a->wide_mode,
			a->swizzle, a->l2, a->oob);
		break;
	case XGPUIF_TMAP_REPLACE_ADDRESS:
		memcpy(&m, a->map, sizeof(m));
		rc = w->D->cuTensorMapReplaceAddress(&m, addr);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (rc == 0)
		memcpy(r->map, &m, sizeof(m));
	return rc;
}
