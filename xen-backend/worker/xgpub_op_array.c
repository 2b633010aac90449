// SPDX-License-Identifier: MIT
/*
 * xgpub_op_array.c: CUDA arrays, mipmapped arrays (their levels, and an
 * array's planes, are SUBARRAY handles their owner frees) and texture and
 * surface objects.  A texture object's value travels unchanged (kernels
 * use it); it is kept in the handle table only so that the guest can
 * destroy nothing but its own and the teardown finds it.
 *
 * An array or mipmapped array the guest makes is charged to its quota by
 * its descriptor (xgpub_array_charge), the charge kept in its handle's
 * extra and given back once the driver destroyed it (xgpub_release).
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

/*
 * Make an array (levels 0) or a mipmapped array of d, charged to the
 * quota first: CUDA_ERROR_OUT_OF_MEMORY past it, as the driver says when
 * device memory runs out.
 */
static int keep_charged(struct xgpub_worker *w, int type,
			CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int levels,
			xgpuif_handle_t *h)
{
	uint64_t c = xgpub_array_charge(d, levels), *extra;
	void *obj = NULL;
	int rc;

	if (c == UINT64_MAX || !xgpub_quota_allows(w, c))
		return CUDA_ERROR_OUT_OF_MEMORY;
	extra = malloc(sizeof(*extra));
	if (!extra)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = type == XGPUB_H_ARRAY ?
		     w->D->cuArray3DCreate((CUarray *)&obj, d) :
		     w->D->cuMipmappedArrayCreate((CUmipmappedArray *)&obj, d,
						  levels);
	if (rc) {
		free(extra);
		return rc;
	}
	*extra = c;
	xgpub_charge(w, c);
	/* a full table releases it, which gives the charge back */
	return xgpub_keep(w, type, obj, extra, h);
}

XGPUB_HANDLER(ARRAY_CREATE)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	memcpy(&d, a, sizeof(d));	/* the same layout (xgpuif.h) */
	return keep_charged(w, XGPUB_H_ARRAY, &d, 0, &r->array);
}

/* the handle of a texture or surface object value of this guest's */
static int find_obj(struct xgpub_worker *w, int type, uint64_t v,
		    xgpuif_handle_t *h)
{
	*h = xgpub_handle_named(&w->h, type, (void *)(uintptr_t)v);
	return *h ? 0 : -1;
}

/* a texture or surface object the driver made (rc 0): kept in the table so
 * that teardown can destroy it, its value answered in *out */
static int keep_obj(struct xgpub_worker *w, int type, int rc, uint64_t v,
		    uint64_t *out)
{
	xgpuif_handle_t h;

	if (rc == 0)
		rc = xgpub_keep(w, type, (void *)(uintptr_t)v, NULL, &h);
	if (rc == 0)
		*out = v;
	return rc;
}

/* TEXOBJ_DESTROY and SURFOBJ_DESTROY (which: XGPUB_H_TEXOBJ or
 * XGPUB_H_SURFOBJ): only texture or surface objects this guest created */
int xgpub_h_obj_destroy(struct xgpub_worker *w,
			const struct xgpuif_dptr_args *a, int which)
{
	xgpuif_handle_t h;
	int rc;

	if (find_obj(w, which, a->dptr, &h))
		return CUDA_ERROR_INVALID_VALUE;
	if (which == XGPUB_H_TEXOBJ)
		rc = w->D->cuTexObjectDestroy(a->dptr);
	else
		rc = w->D->cuSurfObjectDestroy(a->dptr);
	if (rc == 0)
		xgpub_handle_free(&w->h, h, which);
	return rc;
}

XGPUB_HANDLER(TEXOBJ_CREATE)
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
	if (a->res_type == XGPUIF_RES_ARRAY) {
		res.res.array.hArray = xgpub_array_of(w, a->array);
		if (!res.res.array.hArray)
			return CUDA_ERROR_INVALID_HANDLE;
	} else if (a->res_type == XGPUIF_RES_MIPMAP) {
		struct xgpub_hentry *e = xgpub_handle_get(&w->h, a->array,
							  XGPUB_H_MIPMAP);

		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		res.res.mipmap.hMipmappedArray = e->obj;
	} else if (xgpuif_tex_mem_len(a->res_type)) {
		memcpy(&res.res, &a->mem, xgpuif_tex_mem_len(a->res_type));
	} else {
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	/* the wire's layouts are CUDA's, reserved[] left zero (xgpuif.h) */
	memcpy(&tex, &a->tex, sizeof(a->tex));
	memcpy(&view, &a->view, sizeof(a->view));
	rc = w->D->cuTexObjectCreate(&t, &res, &tex, a->has_view ? &view : NULL);
	return keep_obj(w, XGPUB_H_TEXOBJ, rc, t, &r->texobj);
}

XGPUB_HANDLER(SURFOBJ_CREATE)
{
	CUDA_RESOURCE_DESC res;
	CUsurfObject sobj;
	int rc;

	memset(&res, 0, sizeof(res));
	res.resType = CU_RESOURCE_TYPE_ARRAY;
	res.res.array.hArray = xgpub_array_of(w, a->handle);
	if (!res.res.array.hArray)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = w->D->cuSurfObjectCreate(&sobj, &res);
	return keep_obj(w, XGPUB_H_SURFOBJ, rc, sobj, &r->texobj);
}

/* ---- mipmapped arrays, levels and planes --------------------------------- */

XGPUB_HANDLER(MIPMAP_CREATE)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	memcpy(&d, &a->desc, sizeof(d));	/* the same layout (xgpuif.h) */
	return keep_charged(w, XGPUB_H_MIPMAP, &d, a->levels, &r->array);
}

/*
 * The handle of array arr, which parent (a mipmap or an array) owns: the
 * one handed out before for it, or a new one; with its descriptor.
 */
static int reply_sub(struct xgpub_worker *w, struct xgpub_hentry *parent,
		     CUarray arr, struct xgpuif_subarray_reply *r)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = w->D->cuArray3DGetDescriptor_v2(&d, arr);
	if (rc)
		return rc;
	memcpy(&r->desc, &d, sizeof(r->desc));
	return xgpub_keep_named(w, XGPUB_H_SUBARRAY, arr, parent, &r->array);
}

/* MIPMAP_LEVEL and ARRAY_PLANE (which: XGPUB_H_MIPMAP or XGPUB_H_ARRAY,
 * the kind of handle): a mipmapped array's level, an array's plane */
int xgpub_h_subarray(struct xgpub_worker *w,
		     const struct xgpuif_subarray_args *a,
		     struct xgpub_hentry *handle,
		     struct xgpuif_subarray_reply *r, int which)
{
	CUarray arr;
	int rc;

	if (which == XGPUB_H_MIPMAP)
		rc = w->D->cuMipmappedArrayGetLevel(&arr, handle->obj,
						    a->index);
	else
		rc = w->D->cuArrayGetPlane(&arr, handle->obj, a->index);
	return rc ? rc : reply_sub(w, handle, arr, r);
}

XGPUB_HANDLER(ARRAY_QUERY)
{
	CUDA_ARRAY_MEMORY_REQUIREMENTS req;
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	struct xgpub_hentry *m = NULL;
	CUarray arr = NULL;
	int rc;

	memset(&req, 0, sizeof(req));
	memset(&sp, 0, sizeof(sp));
	if (a->what == XGPUIF_AQ_MEMREQ || a->what == XGPUIF_AQ_SPARSE)
		arr = xgpub_array_of(w, a->handle);
	else if (a->what == XGPUIF_AQ_MIP_MEMREQ ||
		 a->what == XGPUIF_AQ_MIP_SPARSE)
		m = xgpub_handle_get(&w->h, a->handle, XGPUB_H_MIPMAP);
	else
		return CUDA_ERROR_INVALID_VALUE;
	if (!arr && !m)
		return CUDA_ERROR_INVALID_HANDLE;
	/* one device per worker: the guest's device 0 */
	if ((a->what == XGPUIF_AQ_MEMREQ || a->what == XGPUIF_AQ_MIP_MEMREQ) &&
	    a->device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (a->what) {
	case XGPUIF_AQ_MEMREQ:
		rc = w->D->cuArrayGetMemoryRequirements(&req, arr, w->dev);
		break;
	case XGPUIF_AQ_MIP_MEMREQ:
		rc = w->D->cuMipmappedArrayGetMemoryRequirements(&req, m->obj,
								 w->dev);
		break;
	case XGPUIF_AQ_SPARSE:
		rc = w->D->cuArrayGetSparseProperties(&sp, arr);
		break;
	default:
		rc = w->D->cuMipmappedArrayGetSparseProperties(&sp, m->obj);
		break;
	}
	if (rc)
		return rc;
	if (a->what == XGPUIF_AQ_MEMREQ || a->what == XGPUIF_AQ_MIP_MEMREQ)
		memcpy(r->bytes, &req, sizeof(req));
	else
		memcpy(r->bytes, &sp, sizeof(sp));
	return 0;
}
