// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_copy.c: the cuMemcpy* entry points: 1D (host, device,
 * unified addresses), 2D (rows of host, device or array memory) and the
 * 1D array forms (one row at byte offsets).  3D, peer and batch copies
 * are xgpulib_api_copy3d.c's; the 1D transfers themselves xgpulib_copy.c's.
 *
 * Each function serves its ABI and its per-thread default stream twin
 * (_ptds, _ptsz; generated from xgpulib_entry.def): ptds says which the
 * program called, and picks the default stream.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"

/* ---- 1D copies ----------------------------------------------------------- */

/* the default stream a synchronous copy is ordered with */
static uint64_t default_stream(int ptds)
{
	return xgpulib_stream_remote(NULL, ptds);
}

CUresult xgpulib_memcpy_htod(CUdeviceptr dst, const void *src, size_t n,
			     int ptds)
{
	return xgpulib_copy_htod(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_dtoh(void *dst, CUdeviceptr src, size_t n, int ptds)
{
	return xgpulib_copy_dtoh(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n,
			     int ptds)
{
	return xgpulib_copy_dtod(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_htod_async(CUdeviceptr dst, const void *src,
				   size_t n, CUstream s, int ptds)
{
	if (xgpulib_capcopy_wanted(src, n, s, ptds))
		return xgpulib_capcopy(true, dst, (void *)src, n, s, ptds);
	return xgpulib_copy_htod(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n,
				   CUstream s, int ptds)
{
	if (xgpulib_capcopy_wanted(dst, n, s, ptds))
		return xgpulib_capcopy(false, src, dst, n, s, ptds);
	return xgpulib_copy_dtoh(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src,
				   size_t n, CUstream s, int ptds)
{
	return xgpulib_copy_dtod(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_copy_unified(uint64_t dst, uint64_t src, size_t n,
			      uint64_t stream, int async)
{
	bool dd = xgpulib_is_device(dst), sd = xgpulib_is_device(src);

	if (dd && sd)
		return xgpulib_copy_dtod(dst, src, n, stream, async);
	if (dd)
		return xgpulib_copy_htod(dst, (const void *)(uintptr_t)src, n,
					 stream, async);
	if (sd)
		return xgpulib_copy_dtoh((void *)(uintptr_t)dst, src, n,
					 stream, async);
	/* host to host: CUDA does it, so do we, in stream order */
	if (async) {
		CUresult rc = xgpulib_sync_remote_stream(stream);

		if (rc)
			return rc;
	}
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult xgpulib_memcpy_unified(CUdeviceptr dst, CUdeviceptr src, size_t n,
				int ptds)
{
	return xgpulib_copy_unified(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_unified_async(CUdeviceptr dst, CUdeviceptr src,
				      size_t n, CUstream s, int ptds)
{
	bool dd = xgpulib_is_device(dst), sd = xgpulib_is_device(src);

	if (!dd && !sd) {
		/* host to host on a stream being captured: a host node */
		bool done;
		CUresult rc = xgpulib_capcopy_h2h((void *)(uintptr_t)dst,
						  (const void *)(uintptr_t)src,
						  n, s, ptds, &done);

		if (done)
			return rc;
	}
	if (dd != sd && xgpulib_capcopy_wanted((void *)(uintptr_t)(dd ? src :
								    dst),
					       n, s, ptds))
		return xgpulib_capcopy(dd, dd ? dst : src,
				       (void *)(uintptr_t)(dd ? src : dst), n,
				       s, ptds);
	return xgpulib_copy_unified(dst, src, n,
				    xgpulib_stream_remote(s, ptds), 1);
}

/* ---- 2D copies ----------------------------------------------------------- */

struct side {
	CUmemorytype type;	/* HOST (pageable), DEVICE, ARRAY, or 0 for
				 * shared pinned memory */
	const struct xgpulib_region *reg;
	uint8_t *host;
	uint64_t dptr;
	CUarray array;
	size_t x, y, pitch;
};

static void resolve_side(struct side *s, CUmemorytype t, const void *host,
			 CUdeviceptr dptr, CUarray arr, size_t x, size_t y,
			 size_t pitch, size_t width, size_t height)
{
	uint64_t off;

	memset(s, 0, sizeof(*s));
	s->x = x;
	s->y = y;
	s->pitch = pitch;
	if (t == CU_MEMORYTYPE_UNIFIED) {
		t = xgpulib_is_device(dptr) ? CU_MEMORYTYPE_DEVICE :
					      CU_MEMORYTYPE_HOST;
		host = (const void *)(uintptr_t)dptr;
	}
	/* coherent managed memory is the worker's device memory */
	if (t == CU_MEMORYTYPE_HOST &&
	    xgpulib_region_coherent(host, (y + height - 1) * pitch + x +
					  width)) {
		t = CU_MEMORYTYPE_DEVICE;
		dptr = (CUdeviceptr)(uintptr_t)host;
	}
	s->type = t;
	if (t == CU_MEMORYTYPE_DEVICE) {
		s->dptr = dptr;
	} else if (t == CU_MEMORYTYPE_ARRAY) {
		s->array = arr;
	} else {
		s->host = (uint8_t *)(uintptr_t)host;
		s->reg = xgpulib_region_find(
			host, (y + height - 1) * pitch + x + width, &off);
		if (s->reg)
			s->type = 0;
	}
}

uint32_t xgpulib_wire_side(CUmemorytype t, uint64_t dptr, CUarray array,
			   const void *host, const struct xgpulib_region *reg,
			   uint64_t span, uint64_t *wdptr,
			   xgpuif_handle_t *warray, struct xgpuif_memref *mem)
{
	uint64_t off = 0;

	switch ((int)t) {
	case CU_MEMORYTYPE_DEVICE:
		*wdptr = dptr;
		return XGPUIF_MT_DEVICE;
	case CU_MEMORYTYPE_ARRAY:
		*warray = xgpulib_array_remote(array);
		return XGPUIF_MT_ARRAY;
	default:	/* shared pinned memory, from the side's base */
		xgpulib_region_find(host, 1, &off);
		*mem = (struct xgpuif_memref){ off, span, reg->id, 0 };
		return XGPUIF_MT_HOST;
	}
}

static void wire_side(struct xgpuif_copy_side *w, const struct side *s,
		      size_t width, size_t height)
{
	/* shared pinned memory: its rows from the side's base */
	size_t span = (s->y + height - 1) * s->pitch + s->x + width;

	memset(w, 0, sizeof(*w));
	w->x_bytes = s->x;
	w->y = s->y;
	w->pitch = s->pitch;
	w->type = xgpulib_wire_side(s->type, s->dptr, s->array, s->host,
				    s->reg, span, &w->dptr, &w->array,
				    &w->mem);
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, uint64_t stream, int async)
{
	struct xgpulib_transport *t;
	struct xgpuif_memcpy2d_args a;
	struct side s, d;
	size_t rows_per, done = 0;
	CUresult rc = CUDA_SUCCESS;

	XGPULIB_CHECK_ARGS(p, true);
	if (!p->WidthInBytes || !p->Height)
		return CUDA_SUCCESS;
	t = xgpulib_ch->t;
	resolve_side(&s, p->srcMemoryType, p->srcHost, p->srcDevice,
		     p->srcArray, p->srcXInBytes, p->srcY, p->srcPitch,
		     p->WidthInBytes, p->Height);
	resolve_side(&d, p->dstMemoryType, p->dstHost, p->dstDevice,
		     p->dstArray, p->dstXInBytes, p->dstY, p->dstPitch,
		     p->WidthInBytes, p->Height);
	if ((s.type == CU_MEMORYTYPE_HOST && !s.host) ||
	    (d.type == CU_MEMORYTYPE_HOST && !d.host))
		return CUDA_ERROR_INVALID_VALUE;
	if (s.type == CU_MEMORYTYPE_HOST && d.type == CU_MEMORYTYPE_HOST)
		return CUDA_ERROR_INVALID_VALUE;

	memset(&a, 0, sizeof(a));
	a.width_bytes = p->WidthInBytes;
	a.stream = stream;
	a.flags = async ? XGPUIF_CF_ASYNC : 0;
	if (s.type != CU_MEMORYTYPE_HOST && d.type != CU_MEMORYTYPE_HOST) {
		wire_side(&a.src, &s, p->WidthInBytes, p->Height);
		wire_side(&a.dst, &d, p->WidthInBytes, p->Height);
		a.height = p->Height;
		if (async)
			return xgpulib_post_MEMCPY_2D(&a);
		return xgpulib_call_MEMCPY_2D(&a);
	}

	/* pageable host side: rows packed tightly in the data area */
	if (p->WidthInBytes > t->data_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&xgpulib_data_mu);
	rows_per = t->data_bytes / p->WidthInBytes;
	while (done < p->Height && rc == CUDA_SUCCESS) {
		size_t rows = p->Height - done < rows_per ? p->Height - done :
							    rows_per;
		struct side *h = s.type == CU_MEMORYTYPE_HOST ? &s : &d;
		struct side *o = h == &s ? &d : &s;
		struct xgpuif_copy_side *hw = h == &s ? &a.src : &a.dst;
		struct xgpuif_copy_side *ow = h == &s ? &a.dst : &a.src;
		struct side oo = *o;

		if (h == &s)
			for (size_t r = 0; r < rows; r++)
				memcpy(t->data + r * p->WidthInBytes,
				       s.host + (s.y + done + r) * s.pitch +
					       s.x,
				       p->WidthInBytes);
		memset(hw, 0, sizeof(*hw));
		hw->type = XGPUIF_MT_HOST;
		hw->pitch = p->WidthInBytes;
		hw->mem = (struct xgpuif_memref){ 0, rows * p->WidthInBytes,
						  XGPUIF_REGION_DATA, 0 };
		oo.y += done;
		wire_side(ow, &oo, p->WidthInBytes, rows);
		a.height = rows;
		if (h == &s)
			xgpulib_stage_sent(t, 0, rows * p->WidthInBytes);
		rc = xgpulib_call_MEMCPY_2D(&a);
		if (rc == CUDA_SUCCESS && h == &d &&
		    xgpulib_stage_fetch(t, 0, rows * p->WidthInBytes))
			rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
		if (rc == CUDA_SUCCESS && h == &d)
			for (size_t r = 0; r < rows; r++)
				memcpy(d.host + (d.y + done + r) * d.pitch +
					       d.x,
				       t->data + r * p->WidthInBytes,
				       p->WidthInBytes);
		done += rows;
	}
	pthread_mutex_unlock(&xgpulib_data_mu);
	return rc;
}

CUresult xgpulib_memcpy_2d(const CUDA_MEMCPY2D *p, int ptds)
{
	return copy2d(p, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_2d_async(const CUDA_MEMCPY2D *p, CUstream s, int ptds)
{
	bool done;
	CUresult rc = xgpulib_capcopy_2d(p, s, ptds, &done);

	if (done)
		return rc;
	return copy2d(p, xgpulib_stream_remote(s, ptds), 1);
}

/* ---- 1D arrays: a copy of one row, at byte offsets ---------------------- */

/* a one-row copy; an array side's offset is its x in bytes */
static CUresult copy_row(CUmemorytype st, const void *sh, CUdeviceptr sd,
			 CUarray sa, size_t soff, CUmemorytype dt, void *dh,
			 CUdeviceptr dd, CUarray da, size_t doff, size_t n,
			 uint64_t stream, int async)
{
	CUDA_MEMCPY2D p = {
		.srcMemoryType = st, .srcHost = sh, .srcDevice = sd,
		.srcArray = sa, .srcPitch = n,
		.dstMemoryType = dt, .dstHost = dh, .dstDevice = dd,
		.dstArray = da, .dstPitch = n, .WidthInBytes = n, .Height = 1,
	};

	if (st == CU_MEMORYTYPE_ARRAY)
		p.srcXInBytes = soff;
	if (dt == CU_MEMORYTYPE_ARRAY)
		p.dstXInBytes = doff;
	if ((st == CU_MEMORYTYPE_ARRAY && !xgpulib_array_remote(sa)) ||
	    (dt == CU_MEMORYTYPE_ARRAY && !xgpulib_array_remote(da)))
		return xgpulib_check_init() ? CUDA_ERROR_NOT_INITIALIZED :
					      CUDA_ERROR_INVALID_HANDLE;
	return copy2d(&p, stream, async);
}

CUresult xgpulib_memcpy_htoa(CUarray dst, size_t off, const void *src,
			     size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_HOST, src, 0, NULL, 0,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, off, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_atoh(void *dst, CUarray src, size_t off, size_t n,
			     int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, off,
			CU_MEMORYTYPE_HOST, dst, 0, NULL, 0, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_htoa_async(CUarray dst, size_t off, const void *src,
				   size_t n, CUstream s, int ptds)
{
	return copy_row(CU_MEMORYTYPE_HOST, src, 0, NULL, 0,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, off, n,
			xgpulib_stream_remote(s, ptds), 1);
}

CUresult xgpulib_memcpy_atoh_async(void *dst, CUarray src, size_t off,
				   size_t n, CUstream s, int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, off,
			CU_MEMORYTYPE_HOST, dst, 0, NULL, 0, n,
			xgpulib_stream_remote(s, ptds), 1);
}

CUresult xgpulib_memcpy_atod(CUdeviceptr dst, CUarray src, size_t off,
			     size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, off,
			CU_MEMORYTYPE_DEVICE, NULL, dst, NULL, 0, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_dtoa(CUarray dst, size_t off, CUdeviceptr src,
			     size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_DEVICE, NULL, src, NULL, 0,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, off, n,
			default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_atoa(CUarray dst, size_t doff, CUarray src,
			     size_t soff, size_t n, int ptds)
{
	return copy_row(CU_MEMORYTYPE_ARRAY, NULL, 0, src, soff,
			CU_MEMORYTYPE_ARRAY, NULL, 0, dst, doff, n,
			default_stream(ptds), 0);
}
