// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_copy.c: the cuMemcpy* entry points: 1D (host, device,
 * unified addresses), 2D (rows of host, device or array memory), 3D
 * (MEMCPY_3D: any side, slices apart, and the peer form between two
 * contexts) and the 1D array forms (one row at byte offsets).  The 1D
 * transfers themselves are xgpulib_copy.c's.
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
	return xgpulib_copy_htod(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n,
				   CUstream s, int ptds)
{
	return xgpulib_copy_dtoh(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

CUresult xgpulib_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src,
				   size_t n, CUstream s, int ptds)
{
	return xgpulib_copy_dtod(dst, src, n, xgpulib_stream_remote(s, ptds),
				 1);
}

static CUresult copy_unified(uint64_t dst, uint64_t src, size_t n,
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
		struct xgpuif_handle_args h = { stream };
		CUresult rc = xgpulib_call_STREAM_SYNCHRONIZE(&h);

		if (rc)
			return rc;
	}
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult xgpulib_memcpy_unified(CUdeviceptr dst, CUdeviceptr src, size_t n,
				int ptds)
{
	return copy_unified(dst, src, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_unified_async(CUdeviceptr dst, CUdeviceptr src,
				      size_t n, CUstream s, int ptds)
{
	return copy_unified(dst, src, n, xgpulib_stream_remote(s, ptds), 1);
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

static void wire_side(struct xgpuif_copy_side *w, const struct side *s,
		      size_t width, size_t height)
{
	uint64_t off = 0;

	memset(w, 0, sizeof(*w));
	w->x_bytes = s->x;
	w->y = s->y;
	w->pitch = s->pitch;
	switch ((int)s->type) {
	case CU_MEMORYTYPE_DEVICE:
		w->type = XGPUIF_MT_DEVICE;
		w->dptr = s->dptr;
		break;
	case CU_MEMORYTYPE_ARRAY:
		w->type = XGPUIF_MT_ARRAY;
		w->array = xgpulib_array_remote(s->array);
		break;
	default:	/* shared pinned memory */
		w->type = XGPUIF_MT_HOST;
		xgpulib_region_find(s->host, 1, &off);
		w->mem = (struct xgpuif_memref){
			off, (s->y + height - 1) * s->pitch + s->x + width,
			s->reg->id, 0
		};
		break;
	}
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, uint64_t stream, int async)
{
	struct xgpulib_transport *t;
	struct xgpuif_memcpy2d_args a;
	struct side s, d;
	size_t rows_per, done = 0;
	CUresult rc = CUDA_SUCCESS;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
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
		rc = xgpulib_call_MEMCPY_2D(&a);
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
	return copy2d(p, xgpulib_stream_remote(s, ptds), 1);
}

/* ---- 3D copies ----------------------------------------------------------- */

/*
 * One side of a 3D copy, as CUDA_MEMCPY3D(_PEER) gives it.  type is HOST
 * for pageable memory (staged), DEVICE, ARRAY, or 0 for shared pinned
 * memory (reg); span is the bytes a linear side's copy reaches from host.
 */
struct side3 {
	CUmemorytype type;
	const struct xgpulib_region *reg;
	uint8_t *host;
	uint64_t dptr;
	CUarray array;
	size_t x, y, z, pitch, height;
	size_t span;
};

struct copy3 {
	struct side3 s, d;
	size_t width, rows, depth;
	uint64_t stream, src_ctx, dst_ctx;
	int async, peer;
};

/* the bytes a linear side reaches from its base: false on overflow */
static bool span_of(const struct side3 *s, size_t w, size_t h, size_t d,
		    size_t *span)
{
	size_t row;

	return !__builtin_add_overflow(s->z, d - 1, &row) &&
	       !__builtin_mul_overflow(row, s->height, &row) &&
	       !__builtin_add_overflow(row, s->y + h - 1, &row) &&
	       !__builtin_mul_overflow(row, s->pitch, span) &&
	       !__builtin_add_overflow(*span, s->x + w, span);
}

static CUresult resolve3(struct side3 *s, CUmemorytype t, const void *host,
			 CUdeviceptr dptr, CUarray arr, size_t x, size_t y,
			 size_t z, size_t pitch, size_t height, size_t w,
			 size_t h, size_t d)
{
	uint64_t off;

	memset(s, 0, sizeof(*s));
	*s = (struct side3){ .x = x, .y = y, .z = z, .pitch = pitch,
			     .height = height };
	if (t == CU_MEMORYTYPE_UNIFIED) {
		t = xgpulib_is_device(dptr) ? CU_MEMORYTYPE_DEVICE :
					      CU_MEMORYTYPE_HOST;
		host = (const void *)(uintptr_t)dptr;
	}
	s->type = t;
	switch ((int)t) {
	case CU_MEMORYTYPE_DEVICE:
		s->dptr = dptr;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_ARRAY:
		s->array = arr;
		return xgpulib_array_remote(arr) ? CUDA_SUCCESS :
						   CUDA_ERROR_INVALID_HANDLE;
	case CU_MEMORYTYPE_HOST:
		if (!host || (h > 1 && pitch < w) || (d > 1 && height < h) ||
		    !span_of(s, w, h, d, &s->span))
			return CUDA_ERROR_INVALID_VALUE;
		s->host = (uint8_t *)(uintptr_t)host;
		s->reg = xgpulib_region_find(host, s->span, &off);
		if (s->reg)
			s->type = 0;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

static void wire3(struct xgpuif_copy_side3d *w, const struct side3 *s)
{
	uint64_t off = 0;

	memset(w, 0, sizeof(*w));
	w->x_bytes = s->x;
	w->y = s->y;
	w->z = s->z;
	w->pitch = s->pitch;
	w->height = s->height;
	switch ((int)s->type) {
	case CU_MEMORYTYPE_DEVICE:
		w->type = XGPUIF_MT_DEVICE;
		w->dptr = s->dptr;
		break;
	case CU_MEMORYTYPE_ARRAY:
		w->type = XGPUIF_MT_ARRAY;
		w->array = xgpulib_array_remote(s->array);
		break;
	default:	/* shared pinned memory, from the side's base */
		w->type = XGPUIF_MT_HOST;
		xgpulib_region_find(s->host, 1, &off);
		w->mem = (struct xgpuif_memref){ off, s->span, s->reg->id, 0 };
		break;
	}
}

static void args3(struct xgpuif_memcpy3d_args *a, const struct copy3 *c)
{
	memset(a, 0, sizeof(*a));
	a->width_bytes = c->width;
	a->height = c->rows;
	a->depth = c->depth;
	a->stream = c->stream;
	a->flags = (c->async ? XGPUIF_CF_ASYNC : 0) |
		   (c->peer ? XGPUIF_CF_PEER : 0);
	if (c->peer) {
		a->src_ctx = c->src_ctx;
		a->dst_ctx = c->dst_ctx;
	}
}

/* the first byte of row r of slice k of a pageable side */
static uint8_t *row3(const struct side3 *s, size_t k, size_t r)
{
	return s->host + ((s->z + k) * s->height + s->y + r) * s->pitch +
	       s->x;
}

/* both sides pageable: the guest copies, in stream order */
static CUresult host_to_host3(const struct copy3 *c)
{
	if (c->async) {
		struct xgpuif_handle_args h = { c->stream };
		CUresult rc = xgpulib_call_STREAM_SYNCHRONIZE(&h);

		if (rc)
			return rc;
	}
	for (size_t k = 0; k < c->depth; k++)
		for (size_t r = 0; r < c->rows; r++)
			memmove(row3(&c->d, k, r), row3(&c->s, k, r),
				c->width);
	return CUDA_SUCCESS;
}

/*
 * A pageable host side: its rows go through the data area, packed, a
 * slice's rows at a time (as many as fit); the other side's y and z move
 * along.
 */
static CUresult staged3(const struct copy3 *c)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	bool to_dev = c->s.type == CU_MEMORYTYPE_HOST;
	const struct side3 *h = to_dev ? &c->s : &c->d;
	const struct side3 *o = to_dev ? &c->d : &c->s;
	struct xgpuif_memcpy3d_args a;
	size_t rows_per;
	CUresult rc = CUDA_SUCCESS;

	if (c->width > t->data_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	rows_per = t->data_bytes / c->width;
	args3(&a, c);
	a.depth = 1;
	pthread_mutex_lock(&xgpulib_data_mu);
	for (size_t k = 0; k < c->depth && rc == CUDA_SUCCESS; k++) {
		for (size_t done = 0; done < c->rows && rc == CUDA_SUCCESS;) {
			size_t rows = c->rows - done < rows_per ?
					      c->rows - done : rows_per;
			struct xgpuif_copy_side3d *hw = to_dev ? &a.src :
								 &a.dst;
			struct xgpuif_copy_side3d *ow = to_dev ? &a.dst :
								 &a.src;
			struct side3 oo = *o;

			if (to_dev)
				for (size_t r = 0; r < rows; r++)
					memcpy(t->data + r * c->width,
					       row3(h, k, done + r), c->width);
			memset(hw, 0, sizeof(*hw));
			hw->type = XGPUIF_MT_HOST;
			hw->pitch = c->width;
			hw->height = rows;
			hw->mem = (struct xgpuif_memref){
				0, rows * c->width, XGPUIF_REGION_DATA, 0
			};
			oo.y += done;
			oo.z += k;
			if (oo.type == 0)	/* pinned: its span from the
						 * new start */
				span_of(&oo, c->width, rows, 1, &oo.span);
			wire3(ow, &oo);
			a.height = rows;
			rc = xgpulib_call_MEMCPY_3D(&a);
			if (rc == CUDA_SUCCESS && !to_dev)
				for (size_t r = 0; r < rows; r++)
					memcpy(row3(h, k, done + r),
					       t->data + r * c->width,
					       c->width);
			done += rows;
		}
	}
	pthread_mutex_unlock(&xgpulib_data_mu);
	return rc;
}

static CUresult copy3(struct copy3 *c)
{
	struct xgpuif_memcpy3d_args a;
	bool sh = c->s.type == CU_MEMORYTYPE_HOST;
	bool dh = c->d.type == CU_MEMORYTYPE_HOST;

	if (sh && dh)
		return host_to_host3(c);
	if (sh || dh)
		return staged3(c);
	args3(&a, c);
	wire3(&a.src, &c->s);
	wire3(&a.dst, &c->d);
	return c->async ? xgpulib_post_MEMCPY_3D(&a) :
			  xgpulib_call_MEMCPY_3D(&a);
}

/*
 * cuMemcpy3D and cuMemcpy3DPeer and their async forms: one request, or
 * staged slices for a pageable host side.  p is a CUDA_MEMCPY3D_PEER, or a
 * CUDA_MEMCPY3D whose members up to Depth lie the same way (peer 0).
 */
static CUresult copy3d_any(const CUDA_MEMCPY3D_PEER *p, uint64_t stream,
			   int async, int peer)
{
	struct copy3 c;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!p->WidthInBytes || !p->Height || !p->Depth)
		return CUDA_SUCCESS;
	if (p->srcLOD || p->dstLOD)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&c, 0, sizeof(c));
	c.width = p->WidthInBytes;
	c.rows = p->Height;
	c.depth = p->Depth;
	c.stream = stream;
	c.async = async;
	c.peer = peer;
	if (peer) {
		struct CUctx_st *sc = xgpulib_ctx_check(p->srcContext);
		struct CUctx_st *dc = xgpulib_ctx_check(p->dstContext);

		if (!sc || !dc)
			return CUDA_ERROR_INVALID_CONTEXT;
		c.src_ctx = sc->remote;
		c.dst_ctx = dc->remote;
	}
	rc = resolve3(&c.s, p->srcMemoryType, p->srcHost, p->srcDevice,
		      p->srcArray, p->srcXInBytes, p->srcY, p->srcZ,
		      p->srcPitch, p->srcHeight, c.width, c.rows, c.depth);
	if (!rc)
		rc = resolve3(&c.d, p->dstMemoryType, p->dstHost,
			      p->dstDevice, p->dstArray, p->dstXInBytes,
			      p->dstY, p->dstZ, p->dstPitch, p->dstHeight,
			      c.width, c.rows, c.depth);
	return rc ? rc : copy3(&c);
}

/* a CUDA_MEMCPY3D as the peer form, without contexts */
static void as_peer(CUDA_MEMCPY3D_PEER *q, const CUDA_MEMCPY3D *p)
{
	memset(q, 0, sizeof(*q));
	q->srcXInBytes = p->srcXInBytes;
	q->srcY = p->srcY;
	q->srcZ = p->srcZ;
	q->srcLOD = p->srcLOD;
	q->srcMemoryType = p->srcMemoryType;
	q->srcHost = p->srcHost;
	q->srcDevice = p->srcDevice;
	q->srcArray = p->srcArray;
	q->srcPitch = p->srcPitch;
	q->srcHeight = p->srcHeight;
	q->dstXInBytes = p->dstXInBytes;
	q->dstY = p->dstY;
	q->dstZ = p->dstZ;
	q->dstLOD = p->dstLOD;
	q->dstMemoryType = p->dstMemoryType;
	q->dstHost = p->dstHost;
	q->dstDevice = p->dstDevice;
	q->dstArray = p->dstArray;
	q->dstPitch = p->dstPitch;
	q->dstHeight = p->dstHeight;
	q->WidthInBytes = p->WidthInBytes;
	q->Height = p->Height;
	q->Depth = p->Depth;
}

static CUresult copy3d(const CUDA_MEMCPY3D *p, uint64_t stream, int async)
{
	CUDA_MEMCPY3D_PEER q;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	as_peer(&q, p);
	return copy3d_any(&q, stream, async, 0);
}

CUresult xgpulib_memcpy_3d(const CUDA_MEMCPY3D *p, int ptds)
{
	return copy3d(p, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_3d_async(const CUDA_MEMCPY3D *p, CUstream s, int ptds)
{
	return copy3d(p, xgpulib_stream_remote(s, ptds), 1);
}

/* ---- peer copies between two contexts of the worker's device ------------ */

CUresult xgpulib_memcpy_3d_peer(const CUDA_MEMCPY3D_PEER *p, int ptds)
{
	return copy3d_any(p, default_stream(ptds), 0, 1);
}

CUresult xgpulib_memcpy_3d_peer_async(const CUDA_MEMCPY3D_PEER *p,
				      CUstream s, int ptds)
{
	return copy3d_any(p, xgpulib_stream_remote(s, ptds), 1, 1);
}

static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
			  CUcontext sctx, size_t n, uint64_t stream,
			  int async)
{
	CUDA_MEMCPY3D_PEER p = {
		.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = src,
		.srcContext = sctx, .dstMemoryType = CU_MEMORYTYPE_DEVICE,
		.dstDevice = dst, .dstContext = dctx, .WidthInBytes = n,
		.Height = 1, .Depth = 1,
	};

	return copy3d_any(&p, stream, async, 1);
}

CUresult xgpulib_memcpy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
			     CUcontext sctx, size_t n, int ptds)
{
	return copy_peer(dst, dctx, src, sctx, n, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_peer_async(CUdeviceptr dst, CUcontext dctx,
				   CUdeviceptr src, CUcontext sctx, size_t n,
				   CUstream s, int ptds)
{
	return copy_peer(dst, dctx, src, sctx, n,
			 xgpulib_stream_remote(s, ptds), 1);
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
