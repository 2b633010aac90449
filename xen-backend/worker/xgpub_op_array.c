// SPDX-License-Identifier: MIT
/*
 * xgpub_op_array.c: CUDA arrays and texture objects.  A texture object's
 * value travels unchanged (kernels use it); it is kept in the handle table
 * only so that the guest can destroy nothing but its own and the teardown
 * finds it.
 */
#include <string.h>

#include "xgpub_worker.h"

int xgpub_h_ARRAY_CREATE(struct xgpub_worker *w,
			 const struct xgpuif_array_args *a,
			 struct xgpuif_array_reply *r)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUarray arr;
	int rc;

	memset(&d, 0, sizeof(d));
	d.Width = a->width;
	d.Height = a->height;
	d.Depth = a->depth;
	d.Format = (CUarray_format)a->format;
	d.NumChannels = a->channels;
	d.Flags = a->flags;
	rc = w->D->cuArray3DCreate(&arr, &d);
	if (rc)
		return rc;
	r->array = xgpub_handle_new(&w->h, XGPUB_H_ARRAY, arr, NULL);
	if (!r->array) {
		w->D->cuArrayDestroy(arr);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return 0;
}

int xgpub_h_ARRAY_DESTROY(struct xgpub_worker *w, struct xgpub_hentry *handle)
{
	int rc = xgpub_release(w, handle);

	if (rc == 0)
		xgpub_handle_drop(&w->h, handle);
	return rc;
}

static int find_texobj(struct xgpub_worker *w, uint64_t tex,
		       xgpuif_handle_t *h)
{
	for (uint32_t i = 0; i < w->h.n; i++) {
		struct xgpub_hentry *e = &w->h.e[i];

		if (e->type == XGPUB_H_TEXOBJ &&
		    (uint64_t)(uintptr_t)e->obj == tex) {
			*h = xgpub_handle_of(&w->h, e);
			return 0;
		}
	}
	return -1;
}

int xgpub_h_TEXOBJ_CREATE(struct xgpub_worker *w,
			  const struct xgpuif_texobj_args *a,
			  struct xgpuif_texobj_reply *r)
{
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUDA_RESOURCE_VIEW_DESC view;
	CUtexObject t;
	int rc;

	memset(&res, 0, sizeof(res));
	memset(&tex, 0, sizeof(tex));
	memset(&view, 0, sizeof(view));
	res.resType = (CUresourcetype)a->res_type;
	res.flags = a->res_flags;
	switch (a->res_type) {
	case XGPUIF_RES_ARRAY: {
		struct xgpub_hentry *e = xgpub_handle_get(&w->h, a->array,
							  XGPUB_H_ARRAY);

		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		res.res.array.hArray = e->obj;
		break;
	}
	case XGPUIF_RES_LINEAR:
		res.res.linear.devPtr = a->dptr;
		res.res.linear.format = (CUarray_format)a->format;
		res.res.linear.numChannels = a->channels;
		res.res.linear.sizeInBytes = a->size_bytes;
		break;
	case XGPUIF_RES_PITCH2D:
		res.res.pitch2D.devPtr = a->dptr;
		res.res.pitch2D.format = (CUarray_format)a->format;
		res.res.pitch2D.numChannels = a->channels;
		res.res.pitch2D.width = a->width;
		res.res.pitch2D.height = a->height;
		res.res.pitch2D.pitchInBytes = a->pitch;
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	for (int i = 0; i < 3; i++)
		tex.addressMode[i] = (CUaddress_mode)a->address_mode[i];
	tex.filterMode = (CUfilter_mode)a->filter_mode;
	tex.flags = a->tex_flags;
	tex.maxAnisotropy = a->max_anisotropy;
	tex.mipmapFilterMode = (CUfilter_mode)a->mipmap_filter_mode;
	tex.mipmapLevelBias = a->mipmap_level_bias;
	tex.minMipmapLevelClamp = a->min_mipmap_level_clamp;
	tex.maxMipmapLevelClamp = a->max_mipmap_level_clamp;
	memcpy(tex.borderColor, a->border_color, sizeof(tex.borderColor));
	if (a->has_view) {
		view.format = (CUresourceViewFormat)a->view_format;
		view.width = a->view_width;
		view.height = a->view_height;
		view.depth = a->view_depth;
		view.firstMipmapLevel = a->view_first_mip;
		view.lastMipmapLevel = a->view_last_mip;
		view.firstLayer = a->view_first_layer;
		view.lastLayer = a->view_last_layer;
	}
	rc = w->D->cuTexObjectCreate(&t, &res, &tex, a->has_view ? &view : NULL);
	if (rc)
		return rc;
	/* kept in the table so teardown can destroy it */
	if (!xgpub_handle_new(&w->h, XGPUB_H_TEXOBJ, (void *)(uintptr_t)t,
			      NULL)) {
		w->D->cuTexObjectDestroy(t);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->texobj = t;
	return 0;
}

int xgpub_h_TEXOBJ_DESTROY(struct xgpub_worker *w,
			   const struct xgpuif_dptr_args *a)
{
	xgpuif_handle_t h;
	int rc;

	/* only texture objects this guest created */
	if (find_texobj(w, a->dptr, &h))
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuTexObjectDestroy(a->dptr);
	if (rc == 0)
		xgpub_handle_free(&w->h, h, XGPUB_H_TEXOBJ);
	return rc;
}
