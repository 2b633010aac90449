// SPDX-License-Identifier: MIT
/*
 * xgpub_op_copy.c: copies and memsets.
 *
 * Copies touch guest-shared memory only through xgpub_memref, which
 * bounds them by the region.  A stream-ordered copy out of or into the
 * data area waits for its stream before replying: the guest reuses the
 * data area as soon as the reply arrives.
 */
#include <string.h>

#include "xgpub_worker.h"


/* a stream-ordered copy through the data area must finish before the reply */
static int finish_staged(struct xgpub_worker *w, uint32_t region,
			 uint32_t flags, CUstream s, int rc)
{
	if (rc || region != XGPUIF_REGION_DATA || !(flags & XGPUIF_CF_ASYNC))
		return rc;
	return w->D->cuStreamSynchronize(s);
}

int xgpub_h_MEMCPY_HTOD(struct xgpub_worker *w,
			const struct xgpuif_memcpy_htod_args *a)
{
	uint8_t *src = xgpub_memref(w, &a->src);
	CUstream s;
	int rc;

	if (!src)
		return XGPUIF_ST_PROTO;
	if (xgpub_stream(w, a->stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->flags & XGPUIF_CF_ASYNC)
		rc = w->D->cuMemcpyHtoDAsync(a->dst, src, a->src.len, s);
	else
		rc = w->D->cuMemcpyHtoD(a->dst, src, a->src.len);
	return finish_staged(w, a->src.region, a->flags, s, rc);
}

int xgpub_h_MEMCPY_DTOH(struct xgpub_worker *w,
			const struct xgpuif_memcpy_dtoh_args *a)
{
	uint8_t *dst = xgpub_memref(w, &a->dst);
	CUstream s;
	int rc;

	if (!dst)
		return XGPUIF_ST_PROTO;
	if (xgpub_stream(w, a->stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->flags & XGPUIF_CF_ASYNC)
		rc = w->D->cuMemcpyDtoHAsync(dst, a->src, a->dst.len, s);
	else
		rc = w->D->cuMemcpyDtoH(dst, a->src, a->dst.len);
	return finish_staged(w, a->dst.region, a->flags, s, rc);
}

int xgpub_h_MEMCPY_DTOD(struct xgpub_worker *w,
			const struct xgpuif_memcpy_dtod_args *a)
{
	CUstream s;

	if (xgpub_stream(w, a->stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->flags & XGPUIF_CF_ASYNC)
		return w->D->cuMemcpyDtoDAsync(a->dst, a->src, a->len, s);
	return w->D->cuMemcpyDtoD(a->dst, a->src, a->len);
}

/* fill one side of a CUDA_MEMCPY2D; -1 for a protocol error, else a
 * CUresult */
static int side_2d(struct xgpub_worker *w, const struct xgpuif_copy_side *s,
		   uint64_t width, uint64_t height, CUmemorytype *type,
		   const void **host, CUdeviceptr *dptr, CUarray *arr,
		   size_t *x, size_t *y, size_t *pitch)
{
	*x = s->x_bytes;
	*y = s->y;
	*pitch = s->pitch;
	switch (s->type) {
	case XGPUIF_MT_HOST: {
		uint8_t *base = xgpub_memref(w, &s->mem);
		uint64_t need;

		/* the rows the driver will touch must lie in the memref */
		if (!base || !height || s->pitch < width ||
		    s->y > UINT64_MAX / 2 / (s->pitch ? s->pitch : 1) ||
		    height > UINT64_MAX / 2 / (s->pitch ? s->pitch : 1))
			return -1;
		need = (s->y + height - 1) * s->pitch + s->x_bytes + width;
		if (s->x_bytes > UINT64_MAX / 4 || need > s->mem.len)
			return -1;
		*type = CU_MEMORYTYPE_HOST;
		*host = base;
		return 0;
	}
	case XGPUIF_MT_DEVICE:
		*type = CU_MEMORYTYPE_DEVICE;
		*dptr = s->dptr;
		return 0;
	case XGPUIF_MT_ARRAY: {
		struct xgpub_hentry *e = xgpub_handle_get(&w->h, s->array,
							  XGPUB_H_ARRAY);

		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		*type = CU_MEMORYTYPE_ARRAY;
		*arr = e->obj;
		return 0;
	}
	default:
		return -1;
	}
}

int xgpub_h_MEMCPY_2D(struct xgpub_worker *w,
		      const struct xgpuif_memcpy2d_args *a)
{
	CUDA_MEMCPY2D p;
	CUstream s;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = side_2d(w, &a->src, a->width_bytes, a->height, &p.srcMemoryType,
		     &p.srcHost, &p.srcDevice, &p.srcArray, &p.srcXInBytes,
		     &p.srcY, &p.srcPitch);
	if (rc)
		return rc < 0 ? XGPUIF_ST_PROTO : rc;
	rc = side_2d(w, &a->dst, a->width_bytes, a->height, &p.dstMemoryType,
		     (const void **)&p.dstHost, &p.dstDevice, &p.dstArray,
		     &p.dstXInBytes, &p.dstY, &p.dstPitch);
	if (rc)
		return rc < 0 ? XGPUIF_ST_PROTO : rc;
	p.WidthInBytes = a->width_bytes;
	p.Height = a->height;
	if (xgpub_stream(w, a->stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->flags & XGPUIF_CF_ASYNC) {
		rc = w->D->cuMemcpy2DAsync(&p, s);
		if (!rc && ((a->src.type == XGPUIF_MT_HOST &&
			     a->src.mem.region == XGPUIF_REGION_DATA) ||
			    (a->dst.type == XGPUIF_MT_HOST &&
			     a->dst.mem.region == XGPUIF_REGION_DATA)))
			rc = w->D->cuStreamSynchronize(s);
		return rc;
	}
	return w->D->cuMemcpy2D(&p);
}

int xgpub_h_MEMSET(struct xgpub_worker *w, const struct xgpuif_memset_args *a)
{
	int async = a->flags & XGPUIF_CF_ASYNC;
	CUstream s;

	if (xgpub_stream(w, a->stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->height == 1 && !a->pitch) {
		switch (a->elem_size) {
		case 1:
			return async ? w->D->cuMemsetD8Async(a->dst, (uint8_t)a->value,
							     a->width, s) :
				       w->D->cuMemsetD8(a->dst, (uint8_t)a->value,
							a->width);
		case 2:
			return async ? w->D->cuMemsetD16Async(a->dst,
							      (uint16_t)a->value,
							      a->width, s) :
				       w->D->cuMemsetD16(a->dst,
							 (uint16_t)a->value,
							 a->width);
		case 4:
			return async ? w->D->cuMemsetD32Async(a->dst, a->value,
							      a->width, s) :
				       w->D->cuMemsetD32(a->dst, a->value,
							 a->width);
		}
		return CUDA_ERROR_INVALID_VALUE;
	}
	switch (a->elem_size) {
	case 1:
		return async ? w->D->cuMemsetD2D8Async(a->dst, a->pitch,
						       (uint8_t)a->value, a->width,
						       a->height, s) :
			       w->D->cuMemsetD2D8(a->dst, a->pitch,
						  (uint8_t)a->value, a->width,
						  a->height);
	case 2:
		return async ? w->D->cuMemsetD2D16Async(a->dst, a->pitch,
							(uint16_t)a->value,
							a->width, a->height, s) :
			       w->D->cuMemsetD2D16(a->dst, a->pitch,
						   (uint16_t)a->value, a->width,
						   a->height);
	case 4:
		return async ? w->D->cuMemsetD2D32Async(a->dst, a->pitch, a->value,
							a->width, a->height, s) :
			       w->D->cuMemsetD2D32(a->dst, a->pitch, a->value,
						   a->width, a->height);
	}
	return CUDA_ERROR_INVALID_VALUE;
}
