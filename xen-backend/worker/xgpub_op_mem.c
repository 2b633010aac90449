// SPDX-License-Identifier: MIT
/*
 * xgpub_op_mem.c: device memory (with the guest's quota), host-memory
 * regions, copies, memsets, pointer attributes, arrays, texture objects.
 *
 * Copies touch guest-shared memory only through xgpub_memref, which
 * bounds them by the region.  A stream-ordered copy out of or into the
 * data area waits for its stream before replying: the guest reuses the
 * data area as soon as the reply arrives.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

#define ARGS(type, name)                                                       \
	struct type name;                                                      \
	memcpy(&name, payload, sizeof(name))

#define REPLY(type, val)                                                       \
	do {                                                                   \
		memcpy(out, &(val), sizeof(struct type));                      \
		*rlen = sizeof(struct type);                                   \
	} while (0)

/* largest host-memory region a guest may share (64 GiB) */
#define MAX_REGION_BYTES (64ull << 30)

int xgpub_op_MEM_GET_INFO(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const void *payload, uint32_t len, void *out,
			  uint32_t *rlen)
{
	struct xgpuif_mem_info_reply r;
	size_t f = 0, t = 0;
	int rc;

	(void)req;
	(void)payload;
	(void)len;
	rc = w->D->cuMemGetInfo(&f, &t);
	if (rc)
		return rc;
	r.free = f;
	r.total = t;
	if (w->opt->quota) {
		uint64_t left = w->mem_used < w->opt->quota ?
					w->opt->quota - w->mem_used : 0;

		r.total = w->opt->quota < t ? w->opt->quota : t;
		r.free = left < f ? left : f;
	}
	REPLY(xgpuif_mem_info_reply, r);
	return 0;
}

int xgpub_op_MEM_ALLOC(struct xgpub_worker *w, const struct xgpuif_request *req,
		       const void *payload, uint32_t len, void *out,
		       uint32_t *rlen)
{
	ARGS(xgpuif_mem_alloc_args, a);
	struct xgpuif_dptr_reply r;
	CUdeviceptr p;
	int rc;

	(void)req;
	(void)len;
	if (!xgpub_quota_allows(w, a.bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuMemAlloc(&p, a.bytesize);
	if (rc)
		return rc;
	if (xgpub_alloc_add(w, p, a.bytesize)) {
		w->D->cuMemFree(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r.dptr = p;
	REPLY(xgpuif_dptr_reply, r);
	return 0;
}

int xgpub_op_MEM_ALLOC_PITCH(struct xgpub_worker *w,
			     const struct xgpuif_request *req,
			     const void *payload, uint32_t len, void *out,
			     uint32_t *rlen)
{
	ARGS(xgpuif_mem_alloc_pitch_args, a);
	struct xgpuif_mem_alloc_pitch_reply r;
	CUdeviceptr p;
	size_t pitch;
	int rc;

	(void)req;
	(void)len;
	if (a.height && a.width_bytes > UINT64_MAX / a.height)
		return CUDA_ERROR_INVALID_VALUE;
	/* rows are padded to at most 512 bytes more than their width */
	if (!xgpub_quota_allows(w, (a.width_bytes + 512) * a.height))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuMemAllocPitch(&p, &pitch, a.width_bytes, a.height,
				   a.elem_size);
	if (rc)
		return rc;
	if (xgpub_alloc_add(w, p, (uint64_t)pitch * a.height)) {
		w->D->cuMemFree(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r.dptr = p;
	r.pitch = pitch;
	REPLY(xgpuif_mem_alloc_pitch_reply, r);
	return 0;
}

int xgpub_op_MEM_FREE(struct xgpub_worker *w, const struct xgpuif_request *req,
		      const void *payload, uint32_t len, void *out,
		      uint32_t *rlen)
{
	ARGS(xgpuif_dptr_args, a);
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	/* only what this guest allocated: never a pointer of the worker's */
	if (xgpub_alloc_del(w, a.dptr))
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuMemFree(a.dptr);
	return rc;
}

int xgpub_op_MEM_GET_ADDRESS_RANGE(struct xgpub_worker *w,
				   const struct xgpuif_request *req,
				   const void *payload, uint32_t len,
				   void *out, uint32_t *rlen)
{
	ARGS(xgpuif_dptr_args, a);
	struct xgpuif_range_reply r;
	CUdeviceptr base;
	size_t size;
	int rc;

	(void)req;
	(void)len;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuMemGetAddressRange);
	rc = w->D->cuMemGetAddressRange(&base, &size, a.dptr);
	if (rc)
		return rc;
	r.base = base;
	r.size = size;
	REPLY(xgpuif_range_reply, r);
	return 0;
}

/* ---- host-memory regions ------------------------------------------------------ */

int xgpub_op_HOSTMEM_REGISTER(struct xgpub_worker *w,
			      const struct xgpuif_request *req,
			      const void *payload, uint32_t len, void *out,
			      uint32_t *rlen)
{
	ARGS(xgpuif_hostmem_args, a);
	struct xgpuif_hostmem_reply r;
	struct xgpub_region *reg;
	CUdeviceptr dptr = 0;
	void *va;
	int rc;

	(void)req;
	(void)len;
	if (a.region == 0 || a.region >= XGPUB_MAX_REGIONS || !a.size ||
	    a.size > MAX_REGION_BYTES || a.size % XGPUIF_PAGE_SIZE)
		return XGPUIF_ST_PROTO;
	reg = &w->regions[a.region];
	if (reg->va)
		return XGPUIF_ST_PROTO;	/* id in use */
	if (w->t->ops->hostmem_map(w->t, a.region, a.size, &a.dir, a.guest_va,
				   &va))
		return XGPUIF_ST_PROTO;
	reg->id = a.region;
	reg->va = va;
	reg->size = a.size;
	rc = w->D->cuMemHostRegister(va, a.size,
				     CU_MEMHOSTREGISTER_PORTABLE |
					     CU_MEMHOSTREGISTER_DEVICEMAP);
	if (rc == 0) {
		reg->registered = true;
		if (w->D->cuMemHostGetDevicePointer)
			w->D->cuMemHostGetDevicePointer(&dptr, va, 0);
	} else {
		xgpub_info("%s: region %u not pinned (%d); its copies still "
			   "work through the driver's staging", w->t->who,
			   a.region, rc);
	}
	memset(&r, 0, sizeof(r));
	r.dptr = dptr;
	r.same_va = (uint64_t)(uintptr_t)va == a.guest_va;
	REPLY(xgpuif_hostmem_reply, r);
	return 0;
}

int xgpub_op_HOSTMEM_UNREGISTER(struct xgpub_worker *w,
				const struct xgpuif_request *req,
				const void *payload, uint32_t len, void *out,
				uint32_t *rlen)
{
	ARGS(xgpuif_region_args, a);
	struct xgpub_region *reg = xgpub_region_get(w, a.region);

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (!reg)
		return CUDA_ERROR_INVALID_VALUE;
	/* the guest may free it while DMA is queued: drain first */
	w->D->cuCtxSynchronize();
	if (reg->registered)
		w->D->cuMemHostUnregister(reg->va);
	w->t->ops->hostmem_unmap(w->t, reg->va, reg->size);
	memset(reg, 0, sizeof(*reg));
	return 0;
}

/* ---- copies ------------------------------------------------------------------------- */

/* a stream-ordered copy through the data area must finish before the reply */
static int finish_staged(struct xgpub_worker *w, uint32_t region,
			 uint32_t flags, CUstream s, int rc)
{
	if (rc || region != XGPUIF_REGION_DATA || !(flags & XGPUIF_CF_ASYNC))
		return rc;
	return w->D->cuStreamSynchronize(s);
}

int xgpub_op_MEMCPY_HTOD(struct xgpub_worker *w,
			 const struct xgpuif_request *req, const void *payload,
			 uint32_t len, void *out, uint32_t *rlen)
{
	ARGS(xgpuif_memcpy_htod_args, a);
	uint8_t *src = xgpub_memref(w, &a.src);
	CUstream s;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (!src)
		return XGPUIF_ST_PROTO;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a.flags & XGPUIF_CF_ASYNC)
		rc = w->D->cuMemcpyHtoDAsync(a.dst, src, a.src.len, s);
	else
		rc = w->D->cuMemcpyHtoD(a.dst, src, a.src.len);
	return finish_staged(w, a.src.region, a.flags, s, rc);
}

int xgpub_op_MEMCPY_DTOH(struct xgpub_worker *w,
			 const struct xgpuif_request *req, const void *payload,
			 uint32_t len, void *out, uint32_t *rlen)
{
	ARGS(xgpuif_memcpy_dtoh_args, a);
	uint8_t *dst = xgpub_memref(w, &a.dst);
	CUstream s;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (!dst)
		return XGPUIF_ST_PROTO;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a.flags & XGPUIF_CF_ASYNC)
		rc = w->D->cuMemcpyDtoHAsync(dst, a.src, a.dst.len, s);
	else
		rc = w->D->cuMemcpyDtoH(dst, a.src, a.dst.len);
	return finish_staged(w, a.dst.region, a.flags, s, rc);
}

int xgpub_op_MEMCPY_DTOD(struct xgpub_worker *w,
			 const struct xgpuif_request *req, const void *payload,
			 uint32_t len, void *out, uint32_t *rlen)
{
	ARGS(xgpuif_memcpy_dtod_args, a);
	CUstream s;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a.flags & XGPUIF_CF_ASYNC)
		return w->D->cuMemcpyDtoDAsync(a.dst, a.src, a.len, s);
	return w->D->cuMemcpyDtoD(a.dst, a.src, a.len);
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

int xgpub_op_MEMCPY_2D(struct xgpub_worker *w, const struct xgpuif_request *req,
		       const void *payload, uint32_t len, void *out,
		       uint32_t *rlen)
{
	ARGS(xgpuif_memcpy2d_args, a);
	CUDA_MEMCPY2D p;
	CUstream s;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	memset(&p, 0, sizeof(p));
	rc = side_2d(w, &a.src, a.width_bytes, a.height, &p.srcMemoryType,
		     &p.srcHost, &p.srcDevice, &p.srcArray, &p.srcXInBytes,
		     &p.srcY, &p.srcPitch);
	if (rc)
		return rc < 0 ? XGPUIF_ST_PROTO : rc;
	rc = side_2d(w, &a.dst, a.width_bytes, a.height, &p.dstMemoryType,
		     (const void **)&p.dstHost, &p.dstDevice, &p.dstArray,
		     &p.dstXInBytes, &p.dstY, &p.dstPitch);
	if (rc)
		return rc < 0 ? XGPUIF_ST_PROTO : rc;
	p.WidthInBytes = a.width_bytes;
	p.Height = a.height;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a.flags & XGPUIF_CF_ASYNC) {
		rc = w->D->cuMemcpy2DAsync(&p, s);
		if (!rc && ((a.src.type == XGPUIF_MT_HOST &&
			     a.src.mem.region == XGPUIF_REGION_DATA) ||
			    (a.dst.type == XGPUIF_MT_HOST &&
			     a.dst.mem.region == XGPUIF_REGION_DATA)))
			rc = w->D->cuStreamSynchronize(s);
		return rc;
	}
	return w->D->cuMemcpy2D(&p);
}

int xgpub_op_MEMSET(struct xgpub_worker *w, const struct xgpuif_request *req,
		    const void *payload, uint32_t len, void *out,
		    uint32_t *rlen)
{
	ARGS(xgpuif_memset_args, a);
	int async = a.flags & XGPUIF_CF_ASYNC;
	CUstream s;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (xgpub_stream(w, a.stream, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a.height == 1 && !a.pitch) {
		switch (a.elem_size) {
		case 1:
			return async ? w->D->cuMemsetD8Async(a.dst, (uint8_t)a.value,
							     a.width, s) :
				       w->D->cuMemsetD8(a.dst, (uint8_t)a.value,
							a.width);
		case 2:
			return async ? w->D->cuMemsetD16Async(a.dst,
							      (uint16_t)a.value,
							      a.width, s) :
				       w->D->cuMemsetD16(a.dst,
							 (uint16_t)a.value,
							 a.width);
		case 4:
			return async ? w->D->cuMemsetD32Async(a.dst, a.value,
							      a.width, s) :
				       w->D->cuMemsetD32(a.dst, a.value,
							 a.width);
		}
		return CUDA_ERROR_INVALID_VALUE;
	}
	switch (a.elem_size) {
	case 1:
		return async ? w->D->cuMemsetD2D8Async(a.dst, a.pitch,
						       (uint8_t)a.value, a.width,
						       a.height, s) :
			       w->D->cuMemsetD2D8(a.dst, a.pitch,
						  (uint8_t)a.value, a.width,
						  a.height);
	case 2:
		return async ? w->D->cuMemsetD2D16Async(a.dst, a.pitch,
							(uint16_t)a.value,
							a.width, a.height, s) :
			       w->D->cuMemsetD2D16(a.dst, a.pitch,
						   (uint16_t)a.value, a.width,
						   a.height);
	case 4:
		return async ? w->D->cuMemsetD2D32Async(a.dst, a.pitch, a.value,
							a.width, a.height, s) :
			       w->D->cuMemsetD2D32(a.dst, a.pitch, a.value,
						   a.width, a.height);
	}
	return CUDA_ERROR_INVALID_VALUE;
}

int xgpub_op_POINTER_GET_ATTRIBUTE(struct xgpub_worker *w,
				   const struct xgpuif_request *req,
				   const void *payload, uint32_t len,
				   void *out, uint32_t *rlen)
{
	ARGS(xgpuif_ptr_attr_args, a);
	struct xgpuif_u64_reply r;
	union {
		uint64_t u64;
		uint32_t u32;
		void *p;
	} v;
	int rc;

	(void)req;
	(void)len;
	/* pointers into the worker itself are nobody's business */
	if (a.attr == CU_POINTER_ATTRIBUTE_HOST_POINTER ||
	    a.attr == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE)
		return CUDA_ERROR_NOT_SUPPORTED;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuPointerGetAttribute);
	memset(&v, 0, sizeof(v));
	rc = w->D->cuPointerGetAttribute(&v, a.attr, a.ptr);
	if (rc)
		return rc;
	/* a context comes back as a worker pointer: say only that it is ok */
	r.value = a.attr == CU_POINTER_ATTRIBUTE_CONTEXT ? 1 : v.u64;
	REPLY(xgpuif_u64_reply, r);
	return 0;
}

/* ---- arrays and texture objects ------------------------------------------------------ */

int xgpub_op_ARRAY_CREATE(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const void *payload, uint32_t len, void *out,
			  uint32_t *rlen)
{
	ARGS(xgpuif_array_args, a);
	CUDA_ARRAY3D_DESCRIPTOR d;
	struct xgpuif_array_reply r;
	CUarray arr;
	int rc;

	(void)req;
	(void)len;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuArray3DCreate);
	memset(&d, 0, sizeof(d));
	d.Width = a.width;
	d.Height = a.height;
	d.Depth = a.depth;
	d.Format = (CUarray_format)a.format;
	d.NumChannels = a.channels;
	d.Flags = a.flags;
	rc = w->D->cuArray3DCreate(&arr, &d);
	if (rc)
		return rc;
	r.array = xgpub_handle_new(&w->h, XGPUB_H_ARRAY, arr, NULL);
	if (!r.array) {
		w->D->cuArrayDestroy(arr);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	REPLY(xgpuif_array_reply, r);
	return 0;
}

int xgpub_op_ARRAY_DESTROY(struct xgpub_worker *w,
			   const struct xgpuif_request *req,
			   const void *payload, uint32_t len, void *out,
			   uint32_t *rlen)
{
	ARGS(xgpuif_handle_args, a);
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, a.handle,
						  XGPUB_H_ARRAY);
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuArrayDestroy(e->obj);
	if (rc == 0)
		xgpub_handle_free(&w->h, a.handle, XGPUB_H_ARRAY);
	return rc;
}

static int find_texobj(struct xgpub_worker *w, uint64_t tex,
		       xgpuif_handle_t *h)
{
	for (uint32_t i = 0; i < w->h.n; i++) {
		struct xgpub_hentry *e = &w->h.e[i];

		if (e->type == XGPUB_H_TEXOBJ &&
		    (uint64_t)(uintptr_t)e->obj == tex) {
			*h = ((xgpuif_handle_t)e->gen << 32) | (i + 1);
			return 0;
		}
	}
	return -1;
}

int xgpub_op_TEXOBJ_CREATE(struct xgpub_worker *w,
			   const struct xgpuif_request *req,
			   const void *payload, uint32_t len, void *out,
			   uint32_t *rlen)
{
	ARGS(xgpuif_texobj_args, a);
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUDA_RESOURCE_VIEW_DESC view;
	struct xgpuif_texobj_reply r;
	CUtexObject t;
	int rc;

	(void)req;
	(void)len;
	XGPUB_NOT_SUPPORTED_IF_NULL(w, cuTexObjectCreate);
	memset(&res, 0, sizeof(res));
	memset(&tex, 0, sizeof(tex));
	memset(&view, 0, sizeof(view));
	res.resType = (CUresourcetype)a.res_type;
	res.flags = a.res_flags;
	switch (a.res_type) {
	case XGPUIF_RES_ARRAY: {
		struct xgpub_hentry *e = xgpub_handle_get(&w->h, a.array,
							  XGPUB_H_ARRAY);

		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		res.res.array.hArray = e->obj;
		break;
	}
	case XGPUIF_RES_LINEAR:
		res.res.linear.devPtr = a.dptr;
		res.res.linear.format = (CUarray_format)a.format;
		res.res.linear.numChannels = a.channels;
		res.res.linear.sizeInBytes = a.size_bytes;
		break;
	case XGPUIF_RES_PITCH2D:
		res.res.pitch2D.devPtr = a.dptr;
		res.res.pitch2D.format = (CUarray_format)a.format;
		res.res.pitch2D.numChannels = a.channels;
		res.res.pitch2D.width = a.width;
		res.res.pitch2D.height = a.height;
		res.res.pitch2D.pitchInBytes = a.pitch;
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	for (int i = 0; i < 3; i++)
		tex.addressMode[i] = (CUaddress_mode)a.address_mode[i];
	tex.filterMode = (CUfilter_mode)a.filter_mode;
	tex.flags = a.tex_flags;
	tex.maxAnisotropy = a.max_anisotropy;
	tex.mipmapFilterMode = (CUfilter_mode)a.mipmap_filter_mode;
	tex.mipmapLevelBias = a.mipmap_level_bias;
	tex.minMipmapLevelClamp = a.min_mipmap_level_clamp;
	tex.maxMipmapLevelClamp = a.max_mipmap_level_clamp;
	memcpy(tex.borderColor, a.border_color, sizeof(tex.borderColor));
	if (a.has_view) {
		view.format = (CUresourceViewFormat)a.view_format;
		view.width = a.view_width;
		view.height = a.view_height;
		view.depth = a.view_depth;
		view.firstMipmapLevel = a.view_first_mip;
		view.lastMipmapLevel = a.view_last_mip;
		view.firstLayer = a.view_first_layer;
		view.lastLayer = a.view_last_layer;
	}
	rc = w->D->cuTexObjectCreate(&t, &res, &tex, a.has_view ? &view : NULL);
	if (rc)
		return rc;
	/* kept in the table so teardown can destroy it */
	if (!xgpub_handle_new(&w->h, XGPUB_H_TEXOBJ, (void *)(uintptr_t)t,
			      NULL)) {
		w->D->cuTexObjectDestroy(t);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r.texobj = t;
	REPLY(xgpuif_texobj_reply, r);
	return 0;
}

int xgpub_op_TEXOBJ_DESTROY(struct xgpub_worker *w,
			    const struct xgpuif_request *req,
			    const void *payload, uint32_t len, void *out,
			    uint32_t *rlen)
{
	ARGS(xgpuif_dptr_args, a);
	xgpuif_handle_t h;
	int rc;

	(void)req;
	(void)len;
	(void)out;
	*rlen = 0;
	/* only texture objects this guest created */
	if (find_texobj(w, a.dptr, &h))
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuTexObjectDestroy(a.dptr);
	if (rc == 0)
		xgpub_handle_free(&w->h, h, XGPUB_H_TEXOBJ);
	return rc;
}
