// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_tmap.c: tensor maps (TMA descriptors): cuTensorMapEncode*
 * and cuTensorMapReplaceAddress.  The driver's encoding is its own, so
 * the worker's driver makes the descriptor; the arguments travel by value
 * (at most rank 5) and the 128 bytes come back.
 */
#include <string.h>

#include "xgpulib.h"

static CUresult tmap(struct xgpuif_tmap_args *a, CUtensorMap *out)
{
	struct xgpuif_tmap_reply r;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = xgpulib_call_TENSOR_MAP(a, &r);
	if (rc == CUDA_SUCCESS)
		memcpy(out, r.map, sizeof(*out));
	return rc;
}

/* the modes every encoding has */
static void modes(struct xgpuif_tmap_args *a, CUtensorMapInterleave il,
		  CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
		  CUtensorMapFloatOOBfill oob)
{
	a->interleave = (uint32_t)il;
	a->swizzle = (uint32_t)sw;
	a->l2 = (uint32_t)l2;
	a->oob = (uint32_t)oob;
}

/* the arrays every form has: rank dims, rank - 1 strides, rank steps */
static CUresult common(struct xgpuif_tmap_args *a, CUtensorMapDataType dtype,
		       cuuint32_t rank, void *addr, const cuuint64_t *dim,
		       const cuuint64_t *strides, const cuuint32_t *steps)
{
	memset(a, 0, sizeof(*a));
	if (rank < 1 || rank > 5 || !dim || (rank > 1 && !strides) || !steps)
		return CUDA_ERROR_INVALID_VALUE;
	a->dtype = (uint32_t)dtype;
	a->rank = rank;
	a->address = (uint64_t)(uintptr_t)addr;
	memcpy(a->global_dim, dim, rank * sizeof(*dim));
	if (rank > 1)
		memcpy(a->global_strides, strides, (rank - 1) * sizeof(*strides));
	memcpy(a->element_strides, steps, rank * sizeof(*steps));
	return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap,
				CUtensorMapDataType dtype, cuuint32_t rank,
				void *globalAddress, const cuuint64_t *globalDim,
				const cuuint64_t *globalStrides,
				const cuuint32_t *boxDim,
				const cuuint32_t *elementStrides,
				CUtensorMapInterleave interleave,
				CUtensorMapSwizzle swizzle,
				CUtensorMapL2promotion l2Promotion,
				CUtensorMapFloatOOBfill oobFill)
{
	struct xgpuif_tmap_args a;
	CUresult rc = common(&a, dtype, rank, globalAddress, globalDim,
			     globalStrides, elementStrides);

	if (rc)
		return rc;
	if (!boxDim)
		return CUDA_ERROR_INVALID_VALUE;
	a.kind = XGPUIF_TMAP_TILED;
	memcpy(a.box_dim, boxDim, rank * sizeof(*boxDim));
	modes(&a, interleave, swizzle, l2Promotion, oobFill);
	return tmap(&a, tensorMap);
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *tensorMap,
				 CUtensorMapDataType dtype, cuuint32_t rank,
				 void *globalAddress,
				 const cuuint64_t *globalDim,
				 const cuuint64_t *globalStrides,
				 const int *pixelBoxLowerCorner,
				 const int *pixelBoxUpperCorner,
				 cuuint32_t channelsPerPixel,
				 cuuint32_t pixelsPerColumn,
				 const cuuint32_t *elementStrides,
				 CUtensorMapInterleave interleave,
				 CUtensorMapSwizzle swizzle,
				 CUtensorMapL2promotion l2Promotion,
				 CUtensorMapFloatOOBfill oobFill)
{
	struct xgpuif_tmap_args a;
	CUresult rc = common(&a, dtype, rank, globalAddress, globalDim,
			     globalStrides, elementStrides);

	if (rc)
		return rc;
	if (rank < 3 || !pixelBoxLowerCorner || !pixelBoxUpperCorner)
		return CUDA_ERROR_INVALID_VALUE;
	a.kind = XGPUIF_TMAP_IM2COL;
	memcpy(a.lower, pixelBoxLowerCorner, (rank - 2) * sizeof(int));
	memcpy(a.upper, pixelBoxUpperCorner, (rank - 2) * sizeof(int));
	a.channels_per_pixel = channelsPerPixel;
	a.pixels_per_column = pixelsPerColumn;
	modes(&a, interleave, swizzle, l2Promotion, oobFill);
	return tmap(&a, tensorMap);
}

CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap,
				     CUtensorMapDataType dtype,
				     cuuint32_t rank, void *globalAddress,
				     const cuuint64_t *globalDim,
				     const cuuint64_t *globalStrides,
				     int pixelBoxLowerCornerWidth,
				     int pixelBoxUpperCornerWidth,
				     cuuint32_t channelsPerPixel,
				     cuuint32_t pixelsPerColumn,
				     const cuuint32_t *elementStrides,
				     CUtensorMapInterleave interleave,
				     CUtensorMapIm2ColWideMode mode,
				     CUtensorMapSwizzle swizzle,
				     CUtensorMapL2promotion l2Promotion,
				     CUtensorMapFloatOOBfill oobFill)
{
	struct xgpuif_tmap_args a;
	CUresult rc = common(&a, dtype, rank, globalAddress, globalDim,
			     globalStrides, elementStrides);

	if (rc)
		return rc;
	a.kind = XGPUIF_TMAP_IM2COL_WIDE;
	a.lower_w = pixelBoxLowerCornerWidth;
	a.upper_w = pixelBoxUpperCornerWidth;
	a.channels_per_pixel = channelsPerPixel;
	a.pixels_per_column = pixelsPerColumn;
	a.wide_mode = (uint32_t)mode;
	modes(&a, interleave, swizzle, l2Promotion, oobFill);
	return tmap(&a, tensorMap);
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap,
				   void *globalAddress)
{
	struct xgpuif_tmap_args a;

	if (!tensorMap)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	a.kind = XGPUIF_TMAP_REPLACE_ADDRESS;
	a.rank = 1;	/* checked by the worker for every form */
	a.address = (uint64_t)(uintptr_t)globalAddress;
	memcpy(a.map, tensorMap, sizeof(a.map));
	return tmap(&a, tensorMap);
}
