// SPDX-License-Identifier: MIT
/*
 * xgpub_op_texref.c: legacy texture and surface references (a module's
 * .texref and .surfref).  The driver's CUtexref / CUsurfref stays here;
 * the guest names it by a TEXREF or SURFREF handle that dies with its
 * module (xgpub_op_module.c drops it with the module's functions).  A
 * kernel that reads the reference gets what is bound when it is launched,
 * as the driver does it.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

/* texture references are deprecated in cuda.h, and served */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/*
 * MODULE_GET_TEXREF and MODULE_GET_SURFREF (which: XGPUB_H_TEXREF or
 * XGPUB_H_SURFREF): cuModuleGetTexRef or cuModuleGetSurfRef of the name in
 * tail
 */
int xgpub_h_module_ref(struct xgpub_worker *w,
		       const struct xgpuif_symbol_args *a,
		       struct xgpub_hentry *owner,
		       const struct xgpub_tail *tail,
		       struct xgpuif_ref_reply *r, int which)
{
	const struct xgpub_image *img = owner->extra;
	struct xgpub_fn *x;
	void *ref = NULL;
	int rc;

	(void)a;
	if (!tail->len || !memchr(tail->p, 0, tail->len))
		return XGPUIF_ST_PROTO;
	if (!img || !img->mod)
		return CUDA_ERROR_INVALID_HANDLE;
	if (which == XGPUB_H_TEXREF)
		rc = w->D->cuModuleGetTexRef((CUtexref *)&ref, img->mod,
					     (const char *)tail->p);
	else
		rc = w->D->cuModuleGetSurfRef((CUsurfref *)&ref, img->mod,
					      (const char *)tail->p);
	if (rc)
		return rc;
	/* the same name gives the same reference, and the same handle */
	r->ref = xgpub_handle_named(&w->h, which, ref);
	if (r->ref)
		return 0;
	x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->root = img->root;
	x->ctx = img->ctx;
	return xgpub_module_handle(w, which, ref, x, &r->ref);
}

/* the driver's reference behind ref: a SURFREF for the surface's
 * array, a TEXREF otherwise */
static void *ref_of(struct xgpub_worker *w, xgpuif_handle_t ref, uint32_t what)
{
	struct xgpub_hentry *e;

	e = xgpub_handle_get(&w->h, ref, what == XGPUIF_TR_SURF_ARRAY ?
				    XGPUB_H_SURFREF : XGPUB_H_TEXREF);
	return e ? e->obj : NULL;
}

XGPUB_HANDLER(TEXREF_SET)
{
	struct xgpub_driver *D = w->D;
	void *ref = ref_of(w, a->ref, a->what);
	struct xgpub_hentry *m;
	CUDA_ARRAY_DESCRIPTOR d;
	float border[4];
	size_t off = 0;
	CUarray arr;
	int rc;

	if (!ref)
		return CUDA_ERROR_INVALID_HANDLE;
	switch (a->what) {
	case XGPUIF_TR_ADDRESS:
		rc = D->cuTexRefSetAddress_v2(&off, ref, a->mem.dptr,
					      a->mem.width);
		r->value = off;
		return rc;
	case XGPUIF_TR_ADDRESS2D:
		memset(&d, 0, sizeof(d));
		d.Width = a->mem.width;
		d.Height = a->mem.height;
		d.Format = (CUarray_format)a->mem.format;
		d.NumChannels = a->mem.channels;
		return D->cuTexRefSetAddress2D_v3(ref, &d, a->mem.dptr,
						  a->mem.pitch);
	case XGPUIF_TR_ARRAY:
	case XGPUIF_TR_SURF_ARRAY:
		arr = xgpub_array_of(w, a->array);
		if (!arr)
			return CUDA_ERROR_INVALID_HANDLE;
		return a->what == XGPUIF_TR_ARRAY ?
			D->cuTexRefSetArray(ref, arr, a->u[0]) :
			D->cuSurfRefSetArray(ref, arr, a->u[0]);
	case XGPUIF_TR_MIPMAP:
		m = xgpub_handle_get(&w->h, a->array, XGPUB_H_MIPMAP);
		if (!m)
			return CUDA_ERROR_INVALID_HANDLE;
		return D->cuTexRefSetMipmappedArray(ref, m->obj, a->u[0]);
	case XGPUIF_TR_FORMAT:
		return D->cuTexRefSetFormat(ref, (CUarray_format)a->u[0],
					    (int)a->u[1]);
	case XGPUIF_TR_FILTER:
		return D->cuTexRefSetFilterMode(ref, (CUfilter_mode)a->u[0]);
	case XGPUIF_TR_ADDR_MODE:
		return D->cuTexRefSetAddressMode(ref, (int)a->index,
						 (CUaddress_mode)a->u[0]);
	case XGPUIF_TR_FLAGS:
		return D->cuTexRefSetFlags(ref, a->u[0]);
	case XGPUIF_TR_BORDER:
		memcpy(border, a->f, sizeof(border));
		return D->cuTexRefSetBorderColor(ref, border);
	case XGPUIF_TR_ANISO:
		return D->cuTexRefSetMaxAnisotropy(ref, a->u[0]);
	case XGPUIF_TR_MIP_FILTER:
		return D->cuTexRefSetMipmapFilterMode(ref,
						      (CUfilter_mode)a->u[0]);
	case XGPUIF_TR_MIP_BIAS:
		return D->cuTexRefSetMipmapLevelBias(ref, a->f[0]);
	case XGPUIF_TR_MIP_CLAMP:
		return D->cuTexRefSetMipmapLevelClamp(ref, a->f[0], a->f[1]);
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* the guest's handle of a driver array (an array or a level), or 0 */
static xgpuif_handle_t array_handle(struct xgpub_worker *w, int type,
				    void *obj)
{
	struct xgpub_hentry *e = xgpub_handle_find(&w->h, type, obj);

	if (!e && type == XGPUB_H_ARRAY)
		e = xgpub_handle_find(&w->h, XGPUB_H_SUBARRAY, obj);
	return e ? xgpub_handle_of(&w->h, e) : 0;
}

XGPUB_HANDLER(TEXREF_GET)
{
	struct xgpub_driver *D = w->D;
	void *ref = ref_of(w, a->ref, a->what);
	CUdeviceptr dptr = 0;
	CUmipmappedArray mm = NULL;
	CUarray arr = NULL;
	CUarray_format fmt = 0;
	CUfilter_mode fm = 0;
	CUaddress_mode am = 0;
	unsigned int u = 0;
	int i = 0;
	int rc;

	if (!ref)
		return CUDA_ERROR_INVALID_HANDLE;
	switch (a->what) {
	case XGPUIF_TR_ADDRESS:
		rc = D->cuTexRefGetAddress_v2(&dptr, ref);
		r->dptr = dptr;
		return rc;
	case XGPUIF_TR_ARRAY:
	case XGPUIF_TR_SURF_ARRAY:
		rc = a->what == XGPUIF_TR_ARRAY ?
			D->cuTexRefGetArray(&arr, ref) :
			D->cuSurfRefGetArray(&arr, ref);
		if (!rc)
			r->array = array_handle(w, XGPUB_H_ARRAY, arr);
		return rc;
	case XGPUIF_TR_MIPMAP:
		rc = D->cuTexRefGetMipmappedArray(&mm, ref);
		if (!rc)
			r->array = array_handle(w, XGPUB_H_MIPMAP, mm);
		return rc;
	case XGPUIF_TR_FORMAT:
		rc = D->cuTexRefGetFormat(&fmt, &i, ref);
		r->u[0] = (uint32_t)fmt;
		r->u[1] = (uint32_t)i;
		return rc;
	case XGPUIF_TR_FILTER:
	case XGPUIF_TR_MIP_FILTER:
		rc = a->what == XGPUIF_TR_FILTER ?
			D->cuTexRefGetFilterMode(&fm, ref) :
			D->cuTexRefGetMipmapFilterMode(&fm, ref);
		r->u[0] = (uint32_t)fm;
		return rc;
	case XGPUIF_TR_ADDR_MODE:
		rc = D->cuTexRefGetAddressMode(&am, ref, (int)a->index);
		r->u[0] = (uint32_t)am;
		return rc;
	case XGPUIF_TR_FLAGS:
		rc = D->cuTexRefGetFlags(&u, ref);
		r->u[0] = u;
		return rc;
	case XGPUIF_TR_BORDER:
		return D->cuTexRefGetBorderColor(r->f, ref);
	case XGPUIF_TR_ANISO:
		rc = D->cuTexRefGetMaxAnisotropy(&i, ref);
		r->u[0] = (uint32_t)i;
		return rc;
	case XGPUIF_TR_MIP_BIAS:
		return D->cuTexRefGetMipmapLevelBias(&r->f[0], ref);
	case XGPUIF_TR_MIP_CLAMP:
		return D->cuTexRefGetMipmapLevelClamp(&r->f[0], &r->f[1], ref);
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* the launch API before CUDA 4: the driver judges the texture unit */
XGPUB_HANDLER(PARAM_SET_TEXREF)
{
	return w->D->cuParamSetTexRef(func->obj, a->texunit, ref->obj);
}
