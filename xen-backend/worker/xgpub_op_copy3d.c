// SPDX-License-Identifier: MIT
/*
 * xgpub_op_copy3d.c: 3D copies (MEMCPY_3D), which carry the guest's 3D,
 * 2D (one slice) and 1D array copies: host, device or array memory on
 * either side, slices of linear memory `height` rows apart, and the peer
 * form between two contexts of this worker's device.  A host side is
 * shared memory, bounded by its memref.
 */
#include <string.h>

#include "xgpub_worker.h"

/* the end of the bytes a copy of width x rows x depth touches on a
 * linear side; false if it overflows */
static bool linear_end(const struct xgpuif_copy_side3d *s, uint64_t width,
		       uint64_t rows, uint64_t depth, uint64_t *end)
{
	uint64_t row, slices;

	if (!rows || !depth || (rows > 1 && s->pitch < width) ||
	    (depth > 1 && s->height < rows))
		return false;
	/* the last row touched: (z + depth - 1) * height + y + rows - 1 */
	if (__builtin_add_overflow(s->z, depth - 1, &slices) ||
	    __builtin_mul_overflow(slices, s->height, &row) ||
	    __builtin_add_overflow(row, s->y, &row) ||
	    __builtin_add_overflow(row, rows - 1, &row) ||
	    __builtin_mul_overflow(row, s->pitch, end) ||
	    __builtin_add_overflow(*end, s->x_bytes, end) ||
	    __builtin_add_overflow(*end, width, end))
		return false;
	return true;
}

/*
 * A device or array side (wire type wtype: XGPUIF_MT_DEVICE at d, or
 * XGPUIF_MT_ARRAY array) as the driver's: 0, INVALID_HANDLE for an array
 * not the guest's, -1 (a protocol error) for any other type
 */
static int copy_side(struct xgpub_worker *w, uint32_t wtype, uint64_t d,
		     xgpuif_handle_t array, CUmemorytype *type,
		     CUdeviceptr *dptr, CUarray *arr)
{
	switch (wtype) {
	case XGPUIF_MT_DEVICE:
		*type = CU_MEMORYTYPE_DEVICE;
		*dptr = d;
		return 0;
	case XGPUIF_MT_ARRAY:
		*arr = xgpub_array_of(w, array);
		if (!*arr)
			return CUDA_ERROR_INVALID_HANDLE;
		*type = CU_MEMORYTYPE_ARRAY;
		return 0;
	default:
		return -1;
	}
}

/* one side of the driver's copy; -1 for a protocol error, else a
 * CUresult */
static int side_3d(struct xgpub_worker *w, const struct xgpuif_copy_side3d *s,
		   const struct xgpuif_memcpy3d_args *a, CUmemorytype *type,
		   const void **host, CUdeviceptr *dptr, CUarray *arr)
{
	uint64_t end;

	if (s->type == XGPUIF_MT_HOST) {
		*host = xgpub_memref(w, &s->mem);
		if (!*host || !linear_end(s, a->width_bytes, a->height,
					  a->depth, &end) ||
		    end > s->mem.len)
			return -1;
		*type = CU_MEMORYTYPE_HOST;
		return 0;
	}
	return copy_side(w, s->type, s->dptr, s->array, type, dptr, arr);
}

/* a device side's bytes: slices height rows apart, the span from the
 * first row touched to the last (after the handles were checked) */
static int dev_side_3d(struct xgpub_worker *w,
		       const struct xgpuif_copy_side3d *s,
		       const struct xgpuif_memcpy3d_args *a)
{
	uint64_t row0, rows;

	if (s->type != XGPUIF_MT_DEVICE || !a->depth || !a->height)
		return 0;
	if (__builtin_mul_overflow(s->z, s->height, &row0) ||
	    __builtin_add_overflow(row0, s->y, &row0) ||
	    __builtin_mul_overflow(a->depth - 1, s->height, &rows) ||
	    __builtin_add_overflow(rows, a->height, &rows))
		return CUDA_ERROR_INVALID_VALUE;
	return xgpub_dev_rows_ok(w, s->dptr, s->x_bytes, row0, rows, s->pitch,
				 a->width_bytes);
}

/* a context of this guest's, by handle */
static CUcontext ctx_of(struct xgpub_worker *w, xgpuif_handle_t h)
{
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, h, XGPUB_H_CTX);

	return e ? e->obj : NULL;
}

static bool staged_side(const struct xgpuif_copy_side3d *s)
{
	return s->type == XGPUIF_MT_HOST && s->mem.region == XGPUIF_REGION_DATA;
}

XGPUB_HANDLER(MEMCPY_3D)
{
	CUDA_MEMCPY3D_PEER p;
	bool async = a->flags & XGPUIF_CF_ASYNC;
	bool staged = staged_side(&a->src) || staged_side(&a->dst);
	int rc;

	if (a->flags & ~(XGPUIF_CF_ASYNC | XGPUIF_CF_PEER))
		return XGPUIF_ST_PROTO;
	memset(&p, 0, sizeof(p));
	rc = side_3d(w, &a->src, a, &p.srcMemoryType, &p.srcHost,
		     &p.srcDevice, &p.srcArray);
	if (rc)
		return rc < 0 ? XGPUIF_ST_PROTO : rc;
	rc = side_3d(w, &a->dst, a, &p.dstMemoryType,
		     (const void **)&p.dstHost, &p.dstDevice, &p.dstArray);
	if (rc)
		return rc < 0 ? XGPUIF_ST_PROTO : rc;
	p.srcXInBytes = a->src.x_bytes;
	p.srcY = a->src.y;
	p.srcZ = a->src.z;
	p.srcPitch = a->src.pitch;
	p.srcHeight = a->src.height;
	p.dstXInBytes = a->dst.x_bytes;
	p.dstY = a->dst.y;
	p.dstZ = a->dst.z;
	p.dstPitch = a->dst.pitch;
	p.dstHeight = a->dst.height;
	p.WidthInBytes = a->width_bytes;
	p.Height = a->height;
	p.Depth = a->depth;
	/* a graph would copy from the staging buffer at every launch */
	if (async && staged && xgpub_capturing(w, stream))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (a->flags & XGPUIF_CF_PEER) {
		p.srcContext = ctx_of(w, a->src_ctx);
		p.dstContext = ctx_of(w, a->dst_ctx);
		if (!p.srcContext || !p.dstContext)
			return CUDA_ERROR_INVALID_CONTEXT;
	}
	rc = dev_side_3d(w, &a->src, a);
	if (!rc)
		rc = dev_side_3d(w, &a->dst, a);
	if (rc)
		return rc;
	if (a->flags & XGPUIF_CF_PEER) {
		rc = async ? w->D->cuMemcpy3DPeerAsync(&p, stream) :
			     w->D->cuMemcpy3DPeer(&p);
	} else {
		CUDA_MEMCPY3D q;

		/* the same members, less the contexts and with two
		 * reserved fields */
		memset(&q, 0, sizeof(q));
		q.srcXInBytes = p.srcXInBytes;
		q.srcY = p.srcY;
		q.srcZ = p.srcZ;
		q.srcMemoryType = p.srcMemoryType;
		q.srcHost = p.srcHost;
		q.srcDevice = p.srcDevice;
		q.srcArray = p.srcArray;
		q.srcPitch = p.srcPitch;
		q.srcHeight = p.srcHeight;
		q.dstXInBytes = p.dstXInBytes;
		q.dstY = p.dstY;
		q.dstZ = p.dstZ;
		q.dstMemoryType = p.dstMemoryType;
		q.dstHost = p.dstHost;
		q.dstDevice = p.dstDevice;
		q.dstArray = p.dstArray;
		q.dstPitch = p.dstPitch;
		q.dstHeight = p.dstHeight;
		q.WidthInBytes = p.WidthInBytes;
		q.Height = p.Height;
		q.Depth = p.Depth;
		rc = async ? w->D->cuMemcpy3DAsync_v2(&q, stream) :
			     w->D->cuMemcpy3D_v2(&q);
	}
	/* the guest reuses the data area as soon as the reply arrives */
	if (!rc && async && staged)
		rc = w->D->cuStreamSynchronize(stream);
	return rc;
}
