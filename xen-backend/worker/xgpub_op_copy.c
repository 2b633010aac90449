// SPDX-License-Identifier: MIT
/*
 * xgpub_op_copy.c: copies and memsets.
 *
 * Copies touch guest-shared memory only through xgpub_memref, which
 * bounds them by the region.  A stream-ordered copy out of or into the
 * data area waits for its stream before replying: the guest reuses the
 * data area as soon as the reply arrives.
 *
 * Device addresses the guest names are checked before the driver sees
 * them (xgpub_dev_span_ok, xgpub_ranges.c).
 */
#include <string.h>

#include "xgpub_worker.h"

/*
 * Small copies to the device out of the data area go from a copy on the
 * worker's stack.  The driver writes a copy of a few KiB from pageable
 * memory into its command stream, and one from pinned memory (the data
 * area is pinned) by DMA: 64 bytes 6.2 against 7.4 us, 16 KiB 8.2
 * against 9.4 us; from 32 KiB the DMA wins (H200, sync copies, the
 * bytes from memfd memory registered as the data area is).  The guest
 * staged the bytes when it asked, so reading them now changes nothing,
 * and a stream-ordered copy from pageable memory has taken its bytes
 * when the driver returns: it need not wait for its stream either.
 */
#define XGPUB_INLINE_HTOD_MAX 16384

static int inline_htod(struct xgpub_worker *w, uint64_t dptr,
		       const uint8_t *host, size_t len, bool async, CUstream s)
{
	uint8_t buf[XGPUB_INLINE_HTOD_MAX];

	memcpy(buf, host, len);
	return async ? w->D->cuMemcpyHtoDAsync(dptr, buf, len, s) :
		       w->D->cuMemcpyHtoD(dptr, buf, len);
}

/*
 * A copy between shared memory and the device.  A stream-ordered copy
 * through the data area finishes before the reply: the guest reuses the
 * data area as soon as the reply arrives.  A blocking copy the guest
 * lets the GPU answer (XGPUIF_CF_FENCE, xgpub_fence.c) is queued with
 * the write of its fence value after it.
 */
static int host_copy(struct xgpub_worker *w, bool to_device, uint64_t dptr,
		     const struct xgpuif_memref *mem, uint32_t flags,
		     uint32_t fence, CUstream s)
{
	uint8_t *host = xgpub_memref(w, mem);
	bool async = flags & XGPUIF_CF_ASYNC;
	int rc;

	if (!host)
		return XGPUIF_ST_PROTO;
	rc = xgpub_dev_span_ok(w, dptr, mem->len);
	if (rc)
		return rc;
	/* a graph would copy from the staging buffer at every launch; a
	 * pinned region it copies stays mapped (xgpub_op_graphnode.c) */
	if (async && xgpub_capturing(w, s)) {
		if (mem->region == XGPUIF_REGION_DATA)
			return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		xgpub_region_get(w, mem->region)->graphed = true;
	}
	if (to_device && mem->region == XGPUIF_REGION_DATA &&
	    mem->len <= XGPUB_INLINE_HTOD_MAX)
		return inline_htod(w, dptr, host, mem->len, async, s);
	if (!async && (flags & XGPUIF_CF_FENCE)) {
		bool done;

		rc = xgpub_fence_copy(w, to_device, host, dptr, mem->len, s,
				      fence, &done);
		if (done)
			return rc;
	}
	if (to_device)
		rc = async ? w->D->cuMemcpyHtoDAsync(dptr, host, mem->len, s) :
			     w->D->cuMemcpyHtoD(dptr, host, mem->len);
	else
		rc = async ? w->D->cuMemcpyDtoHAsync(host, dptr, mem->len, s) :
			     w->D->cuMemcpyDtoH(host, dptr, mem->len);
	if (rc || !async || mem->region != XGPUIF_REGION_DATA)
		return rc;
	return w->D->cuStreamSynchronize(s);
}

XGPUB_HANDLER(MEMCPY_HTOD)
{
	return host_copy(w, true, a->dst, &a->src, a->flags, a->fence,
			 stream);
}

XGPUB_HANDLER(MEMCPY_DTOH)
{
	return host_copy(w, false, a->src, &a->dst, a->flags, a->fence,
			 stream);
}

XGPUB_HANDLER(MEMCPY_DTOD)
{
	int rc = xgpub_dev_span_ok(w, a->dst, a->len);

	if (!rc)
		rc = xgpub_dev_span_ok(w, a->src, a->len);
	if (a->flags & XGPUIF_CF_ASYNC)
		rc = xgpub_dev_captured(w, rc, stream);
	if (rc)
		return rc;
	if (a->flags & XGPUIF_CF_ASYNC)
		return w->D->cuMemcpyDtoDAsync(a->dst, a->src, a->len, stream);
	return w->D->cuMemcpyDtoD(a->dst, a->src, a->len);
}

/* cuMemsetD8/16/32[Async] of one row, by element size */
static int memset_1d(struct xgpub_worker *w, const struct xgpuif_memset_args *a,
		     bool async, CUstream s)
{
	switch (a->elem_size) {
	case 1:
		return async ?
			w->D->cuMemsetD8Async(a->dst, (uint8_t)a->value,
					      a->width, s) :
			w->D->cuMemsetD8(a->dst, (uint8_t)a->value, a->width);
	case 2:
		return async ?
			w->D->cuMemsetD16Async(a->dst, (uint16_t)a->value,
					       a->width, s) :
			w->D->cuMemsetD16(a->dst, (uint16_t)a->value, a->width);
	case 4:
		return async ?
			w->D->cuMemsetD32Async(a->dst, a->value, a->width, s) :
			w->D->cuMemsetD32(a->dst, a->value, a->width);
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* cuMemsetD2D8/16/32[Async], by element size */
static int memset_2d(struct xgpub_worker *w, const struct xgpuif_memset_args *a,
		     bool async, CUstream s)
{
	switch (a->elem_size) {
	case 1:
		return async ?
			w->D->cuMemsetD2D8Async(a->dst, a->pitch,
						(uint8_t)a->value, a->width,
						a->height, s) :
			w->D->cuMemsetD2D8(a->dst, a->pitch, (uint8_t)a->value,
					   a->width, a->height);
	case 2:
		return async ?
			w->D->cuMemsetD2D16Async(a->dst, a->pitch,
						 (uint16_t)a->value, a->width,
						 a->height, s) :
			w->D->cuMemsetD2D16(a->dst, a->pitch,
					    (uint16_t)a->value, a->width,
					    a->height);
	case 4:
		return async ?
			w->D->cuMemsetD2D32Async(a->dst, a->pitch, a->value,
						 a->width, a->height, s) :
			w->D->cuMemsetD2D32(a->dst, a->pitch, a->value,
					    a->width, a->height);
	}
	return CUDA_ERROR_INVALID_VALUE;
}

XGPUB_HANDLER(MEMSET)
{
	bool async = a->flags & XGPUIF_CF_ASYNC;
	int rc = xgpub_dev_memset_ok(w, a->dst, a->pitch, a->width, a->height,
				     a->elem_size);

	if (async)
		rc = xgpub_dev_captured(w, rc, stream);
	if (rc)
		return rc;
	if (a->height == 1 && !a->pitch)
		return memset_1d(w, a, async, stream);
	return memset_2d(w, a, async, stream);
}
