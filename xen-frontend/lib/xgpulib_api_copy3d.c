// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_copy3d.c: 3D copies (cuMemcpy3D and its peer form between
 * two contexts of the worker's device, cuMemcpyPeer), 2D copies (as the
 * 3D copy of one slice) and the 1D array forms (one row), one MEMCPY_3D
 * request each, with host, device or array memory on either side; a
 * pageable host side is staged through the data area a slice's rows at a
 * time.  And the batch copies of CUDA 12.8, as a run of the served forms.
 *
 * Each function serves its ABI and its per-thread default stream twin
 * (generated from xgpulib_entry.def): ptds says which the program called.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"

/* the default stream a synchronous copy is ordered with */
static uint64_t default_stream(int ptds)
{
	return xgpulib_stream_remote(NULL, ptds);
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
	uint64_t off, at;

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
		/* coherent managed memory is the worker's device memory */
		if (xgpulib_region_coherent_at(host, s->span, &at)) {
			s->type = CU_MEMORYTYPE_DEVICE;
			s->dptr = (CUdeviceptr)at;
			return CUDA_SUCCESS;
		}
		s->host = (uint8_t *)(uintptr_t)host;
		s->reg = xgpulib_region_find(host, s->span, &off);
		if (s->reg)
			s->type = 0;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/*
 * The wire type of a resolved copy side of memory type t (DEVICE, ARRAY,
 * else shared pinned memory at host, in region reg): its device pointer
 * in *wdptr, its array's wire handle in *warray, or the span bytes from
 * host in its region in *mem.
 */
static uint32_t wire_side(CUmemorytype t, uint64_t dptr, CUarray array,
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

static void wire3(struct xgpuif_copy_side3d *w, const struct side3 *s)
{
	memset(w, 0, sizeof(*w));
	w->x_bytes = s->x;
	w->y = s->y;
	w->z = s->z;
	w->pitch = s->pitch;
	w->height = s->height;
	w->type = wire_side(s->type, s->dptr, s->array, s->host, s->reg,
			    s->span, &w->dptr, &w->array, &w->mem);
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
		CUresult rc = xgpulib_sync_remote_stream(c->stream);

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
	/* no shared memory: the rows copied to the host come back */
	bool fetch = !to_dev && t->ops->expect;
	struct xgpuif_memcpy3d_args a;
	size_t rows_per;
	CUresult rc = CUDA_SUCCESS;

	args3(&a, c);
	a.depth = 1;
	/* (under the lock: buffers kept for graphs shrink the area) */
	pthread_mutex_lock(&xgpulib_data_mu);
	if (c->width > t->data_bytes) {
		pthread_mutex_unlock(&xgpulib_data_mu);
		return CUDA_ERROR_INVALID_VALUE;
	}
	rows_per = t->data_bytes / c->width;
	for (size_t k = 0; k < c->depth && rc == CUDA_SUCCESS; k++) {
		for (size_t done = 0; done < c->rows && rc == CUDA_SUCCESS;) {
			size_t rows = c->rows - done < rows_per ?
					      c->rows - done : rows_per;
			struct xgpuif_copy_side3d *hw = to_dev ? &a.src :
								 &a.dst;
			struct xgpuif_copy_side3d *ow = to_dev ? &a.dst :
								 &a.src;
			struct side3 oo = *o;
			uint64_t ticket = 0;

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
			if (to_dev)
				xgpulib_stage_sent(t, 0, rows * c->width);
			else if (fetch)
				/* the rows come back with the reply */
				xgpulib_chan_expect_next(XGPUIF_OP_MEMCPY_3D,
							 0, rows * c->width,
							 NULL, &ticket);
			rc = xgpulib_call_MEMCPY_3D(&a);
			xgpulib_chan_expect_clear();
			/* waited for even after an error: they may land in
			 * the data area still */
			if (!to_dev && fetch &&
			    (!ticket || t->ops->expect_wait(t, ticket)) &&
			    rc == CUDA_SUCCESS)
				rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
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

	XGPULIB_CHECK_ARGS(p, true);
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

/*
 * a CUDA_MEMCPY3D as the peer form, without contexts: the two have the
 * same fields where the peer form's contexts are reserved ones
 */
#define SAME_FIELD(f, g)						\
	_Static_assert(offsetof(CUDA_MEMCPY3D, f) ==			\
		       offsetof(CUDA_MEMCPY3D_PEER, g), #f " is " #g)
SAME_FIELD(reserved0, srcContext);
SAME_FIELD(srcPitch, srcPitch);
SAME_FIELD(reserved1, dstContext);
SAME_FIELD(dstPitch, dstPitch);
SAME_FIELD(Depth, Depth);
_Static_assert(sizeof(CUDA_MEMCPY3D) == sizeof(CUDA_MEMCPY3D_PEER),
	       "CUDA_MEMCPY3D is CUDA_MEMCPY3D_PEER's size");

static void as_peer(CUDA_MEMCPY3D_PEER *q, const CUDA_MEMCPY3D *p)
{
	memcpy(q, p, sizeof(*q));
	q->srcContext = NULL;
	q->dstContext = NULL;
}

CUresult xgpulib_copy_3d(const CUDA_MEMCPY3D *p, uint64_t stream, int async)
{
	CUDA_MEMCPY3D_PEER q;

	XGPULIB_CHECK_ARGS(p, true);
	as_peer(&q, p);
	return copy3d_any(&q, stream, async, 0);
}

CUresult xgpulib_memcpy_3d(const CUDA_MEMCPY3D *p, int ptds)
{
	return xgpulib_copy_3d(p, default_stream(ptds), 0);
}

CUresult xgpulib_memcpy_3d_async(const CUDA_MEMCPY3D *p, CUstream s, int ptds)
{
	bool done;
	CUresult rc = xgpulib_capcopy_3d(p, s, ptds, &done);

	if (done)
		return rc;
	return xgpulib_copy_3d(p, xgpulib_stream_remote(s, ptds), 1);
}

/* ---- 2D copies: the 3D copy of one slice they stand for ----------------- */

void xgpulib_copy_one_row_pitches(CUDA_MEMCPY3D *q)
{
	if (q->Height != 1 || q->Depth != 1)
		return;
	q->srcPitch = q->srcPitch ? q->srcPitch : q->WidthInBytes;
	q->dstPitch = q->dstPitch ? q->dstPitch : q->WidthInBytes;
}

void xgpulib_copy2d_as_3d(CUDA_MEMCPY3D *q, const CUDA_MEMCPY2D *p)
{
	*q = (CUDA_MEMCPY3D){
		.srcXInBytes = p->srcXInBytes, .srcY = p->srcY,
		.srcMemoryType = p->srcMemoryType, .srcHost = p->srcHost,
		.srcDevice = p->srcDevice, .srcArray = p->srcArray,
		.srcPitch = p->srcPitch, .srcHeight = p->Height,
		.dstXInBytes = p->dstXInBytes, .dstY = p->dstY,
		.dstMemoryType = p->dstMemoryType, .dstHost = p->dstHost,
		.dstDevice = p->dstDevice, .dstArray = p->dstArray,
		.dstPitch = p->dstPitch, .dstHeight = p->Height,
		.WidthInBytes = p->WidthInBytes, .Height = p->Height,
		.Depth = 1,
	};
	xgpulib_copy_one_row_pitches(q);
}

CUresult xgpulib_memcpy_2d(const CUDA_MEMCPY2D *p, int ptds)
{
	CUDA_MEMCPY3D q;

	XGPULIB_CHECK_ARGS(p, true);
	xgpulib_copy2d_as_3d(&q, p);
	return xgpulib_memcpy_3d(&q, ptds);
}

CUresult xgpulib_memcpy_2d_async(const CUDA_MEMCPY2D *p, CUstream s, int ptds)
{
	CUDA_MEMCPY3D q;

	XGPULIB_CHECK_ARGS(p, true);
	xgpulib_copy2d_as_3d(&q, p);
	return xgpulib_memcpy_3d_async(&q, s, ptds);
}

/* ---- 1D arrays: a copy of one row, at byte offsets ---------------------- */

/* a one-row copy; an array side's offset is its x in bytes */
static CUresult copy_row(CUmemorytype st, const void *sh, CUdeviceptr sd,
			 CUarray sa, size_t soff, CUmemorytype dt, void *dh,
			 CUdeviceptr dd, CUarray da, size_t doff, size_t n,
			 uint64_t stream, int async)
{
	CUDA_MEMCPY3D p = {
		.srcMemoryType = st, .srcHost = sh, .srcDevice = sd,
		.srcArray = sa, .srcPitch = n, .srcHeight = 1,
		.dstMemoryType = dt, .dstHost = dh, .dstDevice = dd,
		.dstArray = da, .dstPitch = n, .dstHeight = 1,
		.WidthInBytes = n, .Height = 1, .Depth = 1,
	};

	if (st == CU_MEMORYTYPE_ARRAY)
		p.srcXInBytes = soff;
	if (dt == CU_MEMORYTYPE_ARRAY)
		p.dstXInBytes = doff;
	if ((st == CU_MEMORYTYPE_ARRAY && !xgpulib_array_remote(sa)) ||
	    (dt == CU_MEMORYTYPE_ARRAY && !xgpulib_array_remote(da)))
		return xgpulib_check_init() ? CUDA_ERROR_NOT_INITIALIZED :
					      CUDA_ERROR_INVALID_HANDLE;
	return xgpulib_copy_3d(&p, stream, async);
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

/* ---- batch copies (CUDA 12.8) ------------------------------------------ */

/*
 * A batch runs as one copy after another on the stream, each a served
 * form: the driver may order the copies of a batch as it likes, so any
 * order is the batch's.  A source that must be read during the call
 * (SRC_ACCESS_ORDER_DURING_API_CALL) is: the call waits for the stream.
 */

static bool order_ok(CUmemcpySrcAccessOrder o)
{
	return o == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
	       o == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
	       o == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

/*
 * One kind of batch: check(b) checks the whole batch b before any copy
 * (*during: a source is to be read during the call), then copy(b, i,
 * stream) runs its copy i.
 */
struct batch_kind {
	CUresult (*check)(const void *b, bool *during);
	CUresult (*copy)(const void *b, size_t i, uint64_t stream);
};

/*
 * A batch of n copies: no failed index yet (*fail); the batch's stream,
 * not the legacy NULL stream (the driver's rule); the batch checked; the
 * copies in order, the first that fails named in *fail; at the end, a
 * wait for the stream when a source was to be read during the call.
 */
static CUresult batch_run(const struct batch_kind *k, const void *b,
			  size_t n, size_t *fail, CUstream s, int ptds)
{
	struct xgpuif_handle_args h;
	bool during = false;
	CUresult rc;

	if (fail)
		*fail = SIZE_MAX;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!s && !ptds)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_stream_arg(s, ptds, &h.handle);
	if (!rc)
		rc = k->check(b, &during);
	for (size_t i = 0; !rc && i < n; i++) {
		rc = k->copy(b, i, h.handle);
		if (rc && fail)
			*fail = i;
	}
	if (rc || !during)
		return rc;
	return xgpulib_sync_remote_stream(h.handle);
}

/* a batch of 1D copies */
struct batch1 {
	CUdeviceptr *dsts, *srcs;
	size_t *sizes, count;
	CUmemcpyAttributes *attrs;
	size_t *idxs, nattrs;
};

static CUresult batch1_check(const void *b, bool *during)
{
	const struct batch1 *c = b;

	if (!c->count || !c->dsts || !c->srcs || !c->sizes || !c->attrs ||
	    !c->idxs || !c->nattrs || c->nattrs > c->count || c->idxs[0] != 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t j = 0; j < c->nattrs; j++) {
		if ((j && c->idxs[j] <= c->idxs[j - 1]) ||
		    c->idxs[j] >= c->count ||
		    !order_ok(c->attrs[j].srcAccessOrder))
			return CUDA_ERROR_INVALID_VALUE;
		*during |= c->attrs[j].srcAccessOrder ==
			   CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
	}
	return CUDA_SUCCESS;
}

static CUresult batch1_copy(const void *b, size_t i, uint64_t stream)
{
	const struct batch1 *c = b;

	return xgpulib_copy_unified(c->dsts[i], c->srcs[i], c->sizes[i],
				    stream, 1);
}

static const struct batch_kind batch1_kind = { batch1_check, batch1_copy };

static CUresult batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
		      size_t count, CUmemcpyAttributes *attrs, size_t *idxs,
		      size_t nattrs, size_t *fail, CUstream s, int ptds)
{
	struct batch1 c = { dsts, srcs, sizes, count, attrs, idxs, nattrs };

	return batch_run(&batch1_kind, &c, count, fail, s, ptds);
}

CUresult xgpulib_memcpy_batch_v2(CUdeviceptr *dsts, CUdeviceptr *srcs,
				 size_t *sizes, size_t count,
				 CUmemcpyAttributes *attrs, size_t *idxs,
				 size_t nattrs, CUstream s, int ptds)
{
	return batch(dsts, srcs, sizes, count, attrs, idxs, nattrs, NULL, s,
		     ptds);
}

CUresult xgpulib_memcpy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs,
			      size_t *sizes, size_t count,
			      CUmemcpyAttributes *attrs, size_t *idxs,
			      size_t nattrs, size_t *fail, CUstream s,
			      int ptds)
{
	return batch(dsts, srcs, sizes, count, attrs, idxs, nattrs, fail, s,
		     ptds);
}

/* an operand's element bytes: its array's (0: not known), 1 for memory */
static CUresult operand_elem(const CUmemcpy3DOperand *o, size_t *esize)
{
	*esize = 1;
	if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
		*esize = xgpulib_array_elem_bytes(o->op.array.array);
	else if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* one operand of a 3D batch op as the fields of a side of a
 * CUDA_MEMCPY3D_PEER, its elements esize bytes */
static void operand(CUmemorytype *type, CUdeviceptr *dev, CUarray *arr,
		    size_t *x, size_t *y, size_t *z, size_t *pitch,
		    size_t *height, const CUmemcpy3DOperand *o,
		    const CUextent3D *e, size_t esize)
{
	bool ptr = o->type == CU_MEMCPY_OPERAND_TYPE_POINTER;
	size_t row = ptr && o->op.ptr.rowLength ? o->op.ptr.rowLength :
						  e->width;
	size_t layer = ptr && o->op.ptr.layerHeight ? o->op.ptr.layerHeight :
						      e->height;

	*type = ptr ? CU_MEMORYTYPE_UNIFIED : CU_MEMORYTYPE_ARRAY;
	if (ptr) {
		*dev = o->op.ptr.ptr;
		*pitch = row * esize;
		*height = layer;
	} else {
		*arr = o->op.array.array;
		*x = o->op.array.offset.x * esize;
		*y = o->op.array.offset.y;
		*z = o->op.array.offset.z;
	}
}

/* a 3D batch op as a CUDA_MEMCPY3D_PEER (no contexts) */
static CUresult batch_op(const CUDA_MEMCPY3D_BATCH_OP *op,
			 CUDA_MEMCPY3D_PEER *p)
{
	const CUmemcpy3DOperand *s = &op->src, *d = &op->dst;
	size_t es, ed;

	if (!order_ok(op->srcAccessOrder) || !op->extent.width ||
	    !op->extent.height || !op->extent.depth)
		return CUDA_ERROR_INVALID_VALUE;
	if (operand_elem(s, &es) || operand_elem(d, &ed))
		return CUDA_ERROR_INVALID_VALUE;
	if (!es || !ed)
		return xgpulib_array_remote(s->op.array.array) ||
			       xgpulib_array_remote(d->op.array.array) ?
			       CUDA_ERROR_NOT_SUPPORTED :
			       CUDA_ERROR_INVALID_HANDLE;
	/* the element is the array's; two arrays must agree */
	if (es != 1 && ed != 1 && es != ed)
		return CUDA_ERROR_INVALID_VALUE;
	if (es == 1)
		es = ed;
	memset(p, 0, sizeof(*p));
	operand(&p->srcMemoryType, &p->srcDevice, &p->srcArray,
		&p->srcXInBytes, &p->srcY, &p->srcZ, &p->srcPitch,
		&p->srcHeight, s, &op->extent, es);
	operand(&p->dstMemoryType, &p->dstDevice, &p->dstArray,
		&p->dstXInBytes, &p->dstY, &p->dstZ, &p->dstPitch,
		&p->dstHeight, d, &op->extent, es);
	p->WidthInBytes = op->extent.width * es;
	p->Height = op->extent.height;
	p->Depth = op->extent.depth;
	return CUDA_SUCCESS;
}

/* a batch of 3D copies; each op is checked as its turn comes */
struct batch3 {
	size_t n;
	const CUDA_MEMCPY3D_BATCH_OP *ops;
	unsigned long long flags;
};

static CUresult batch3_check(const void *b, bool *during)
{
	const struct batch3 *c = b;

	if (!c->n || !c->ops || c->flags)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < c->n; i++)
		*during |= c->ops[i].srcAccessOrder ==
			   CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
	return CUDA_SUCCESS;
}

static CUresult batch3_copy(const void *b, size_t i, uint64_t stream)
{
	const struct batch3 *c = b;
	CUDA_MEMCPY3D_PEER p;
	CUresult rc = batch_op(&c->ops[i], &p);

	return rc ? rc : copy3d_any(&p, stream, 1, 0);
}

static const struct batch_kind batch3_kind = { batch3_check, batch3_copy };

static CUresult batch3d(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail,
			unsigned long long flags, CUstream s, int ptds)
{
	struct batch3 c = { n, ops, flags };

	return batch_run(&batch3_kind, &c, n, fail, s, ptds);
}

CUresult xgpulib_memcpy_3d_batch_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
				    unsigned long long flags, CUstream s,
				    int ptds)
{
	return batch3d(n, ops, NULL, flags, s, ptds);
}

CUresult xgpulib_memcpy_3d_batch(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
				 size_t *fail, unsigned long long flags,
				 CUstream s, int ptds)
{
	return batch3d(n, ops, fail, flags, s, ptds);
}
