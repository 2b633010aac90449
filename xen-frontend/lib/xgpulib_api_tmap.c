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

	rc = xgpulib_query_arg(out);
	if (rc)
		return rc;
	rc = xgpulib_call_TENSOR_MAP(a, &r);
	if (rc == CUDA_SUCCESS)
		memcpy(out, r.map, sizeof(*out));
	return rc;
}

/*
 * One encoding: a holds the form's kind and scalars; what every form has
 * is checked first (rank dims, rank - 1 strides, rank steps), then the
 * form's own arrays (tiled: rank box sizes; im2col: rank - 2 corners).
 */
static CUresult encode(CUtensorMap *out, struct xgpuif_tmap_args *a,
		       const cuuint32_t *box, const int *lower,
		       const int *upper, CUtensorMapDataType dtype,
		       cuuint32_t rank, void *addr, const cuuint64_t *dim,
		       const cuuint64_t *strides, const cuuint32_t *steps,
		       CUtensorMapInterleave il, CUtensorMapSwizzle sw,
		       CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
	if (rank < 1 || rank > 5 || !dim || (rank > 1 && !strides) || !steps)
		return CUDA_ERROR_INVALID_VALUE;
	a->dtype = (uint32_t)dtype;
	a->rank = rank;
	a->address = (uint64_t)(uintptr_t)addr;
	memcpy(a->global_dim, dim, rank * sizeof(*dim));
	if (rank > 1)
		memcpy(a->global_strides, strides, (rank - 1) * sizeof(*strides));
	memcpy(a->element_strides, steps, rank * sizeof(*steps));
	if (a->kind == XGPUIF_TMAP_TILED) {
		if (!box)
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(a->box_dim, box, rank * sizeof(*box));
	} else if (a->kind == XGPUIF_TMAP_IM2COL) {
		if (rank < 3 || !lower || !upper)
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(a->lower, lower, (rank - 2) * sizeof(int));
		memcpy(a->upper, upper, (rank - 2) * sizeof(int));
	}
	a->interleave = (uint32_t)il;
	a->swizzle = (uint32_t)sw;
	a->l2 = (uint32_t)l2;
	a->oob = (uint32_t)oob;
	return tmap(a, out);
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
	struct xgpuif_tmap_args a = { .kind = XGPUIF_TMAP_TILED };

	return encode(tensorMap, &a, boxDim, NULL, NULL, dtype, rank,
		      globalAddress, globalDim, globalStrides, elementStrides,
		      interleave, swizzle, l2Promotion, oobFill);
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
	struct xgpuif_tmap_args a = {
		.kind = XGPUIF_TMAP_IM2COL,
		.channels_per_pixel = channelsPerPixel,
		.pixels_per_column = pixelsPerColumn,
	};

	return encode(tensorMap, &a, NULL, pixelBoxLowerCorner,
		      pixelBoxUpperCorner, dtype, rank, globalAddress,
		      globalDim, globalStrides, elementStrides, interleave,
		      swizzle, l2Promotion, oobFill);
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
	struct xgpuif_tmap_args a = {
		.kind = XGPUIF_TMAP_IM2COL_WIDE,
		.lower_w = pixelBoxLowerCornerWidth,
		.upper_w = pixelBoxUpperCornerWidth,
		.channels_per_pixel = channelsPerPixel,
		.pixels_per_column = pixelsPerColumn,
		.wide_mode = (uint32_t)mode,
	};

	return encode(tensorMap, &a, NULL, NULL, NULL, dtype, rank,
		      globalAddress, globalDim, globalStrides, elementStrides,
		      interleave, swizzle, l2Promotion, oobFill);
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
