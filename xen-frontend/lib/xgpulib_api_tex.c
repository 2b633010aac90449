// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_tex.c: CUDA arrays, texture and surface objects.  Arrays
 * are guest objects holding the backend handle and their descriptor
 * (answered locally; xgpulib_array.c); texture objects are the driver's own 64-bit values (kernels
 * receive them as parameters), created and destroyed in the worker.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_vec.h"

CUresult cuArray3DCreate(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	struct xgpuif_array_args a;
	struct xgpuif_array_reply r;
	CUresult rc;

	if (!pa || !d)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&a, d, sizeof(a));	/* the same layout (xgpuif.h) */
	a._pad = 0;
	rc = xgpulib_call_ARRAY_CREATE(&a, &r);
	if (rc)
		return rc;
	*pa = xgpulib_array_wrap(r.array, d, NULL);
	return xgpulib_kept(*pa, r.array, xgpulib_call_ARRAY_DESTROY);
}

CUresult cuArrayCreate(CUarray *pa, const CUDA_ARRAY_DESCRIPTOR *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d3, 0, sizeof(d3));
	d3.Width = d->Width;
	d3.Height = d->Height;
	d3.Format = d->Format;
	d3.NumChannels = d->NumChannels;
	return cuArray3DCreate(pa, &d3);
}

CUresult cuArrayDestroy(CUarray a)
{
	struct xgpuif_handle_args h;
	CUresult rc;

	h.handle = xgpulib_array_remote(a);
	if (!h.handle)
		return CUDA_ERROR_INVALID_HANDLE;
	/* a level or a plane too: the worker refuses those (its owner
	 * frees it) */
	rc = xgpulib_call_ARRAY_DESTROY(&h);
	if (rc == CUDA_SUCCESS)
		xgpulib_arrays_forget(a);	/* with its planes */
	return rc;
}

CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a)
{
	const CUDA_ARRAY3D_DESCRIPTOR *ad = xgpulib_array_desc(a);

	if (!d || !ad)
		return CUDA_ERROR_INVALID_VALUE;
	*d = *ad;
	return CUDA_SUCCESS;
}

CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR *d, CUarray a)
{
	const CUDA_ARRAY3D_DESCRIPTOR *ad = xgpulib_array_desc(a);

	if (!d || !ad)
		return CUDA_ERROR_INVALID_VALUE;
	d->Width = ad->Width;
	d->Height = ad->Height;
	d->Format = ad->Format;
	d->NumChannels = ad->NumChannels;
	return CUDA_SUCCESS;
}

/*
 * The descriptors a texture object was made from, kept in the guest so
 * that cuTexObjectGet*Desc (cudart's cudaGetTextureObject*Desc) need no
 * round trip: they never change.
 */
struct texdesc {
	CUtexObject t;
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUDA_RESOURCE_VIEW_DESC view;
	bool has_view;
	struct texdesc *next;
};

static pthread_mutex_t tex_mu = PTHREAD_MUTEX_INITIALIZER;
static struct texdesc *texdescs;

static void texdesc_add(CUtexObject t, const CUDA_RESOURCE_DESC *res,
			const CUDA_TEXTURE_DESC *tex,
			const CUDA_RESOURCE_VIEW_DESC *view)
{
	struct texdesc *d = calloc(1, sizeof(*d));

	if (!d)
		return;	/* the Get*Desc calls then say INVALID_VALUE */
	d->t = t;
	d->res = *res;
	d->tex = *tex;
	if (view) {
		d->view = *view;
		d->has_view = true;
	}
	pthread_mutex_lock(&tex_mu);
	d->next = texdescs;
	texdescs = d;
	pthread_mutex_unlock(&tex_mu);
}

static void texdesc_del(CUtexObject t)
{
	struct texdesc **pp, *d = NULL;

	pthread_mutex_lock(&tex_mu);
	for (pp = &texdescs; *pp; pp = &(*pp)->next) {
		if ((*pp)->t == t) {
			d = *pp;
			*pp = d->next;
			break;
		}
	}
	pthread_mutex_unlock(&tex_mu);
	free(d);
}

/* copy out what was kept for t; false if t is unknown */
static bool texdesc_get(CUtexObject t, CUDA_RESOURCE_DESC *res,
			CUDA_TEXTURE_DESC *tex, CUDA_RESOURCE_VIEW_DESC *view)
{
	bool found = false;

	pthread_mutex_lock(&tex_mu);
	for (struct texdesc *d = texdescs; d; d = d->next) {
		if (d->t != t)
			continue;
		if (res)
			*res = d->res;
		if (tex)
			*tex = d->tex;
		if (view) {
			if (d->has_view)
				*view = d->view;
			else
				memset(view, 0, sizeof(*view));
		}
		found = true;
		break;
	}
	pthread_mutex_unlock(&tex_mu);
	return found;
}

/* one of the descriptions of a texture object of this guest's */
static CUresult tex_query(CUtexObject t, const void *out,
			  CUDA_RESOURCE_DESC *res, CUDA_TEXTURE_DESC *tex,
			  CUDA_RESOURCE_VIEW_DESC *view)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out || !texdesc_get(t, res, tex, view))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *res, CUtexObject t)
{
	return tex_query(t, res, res, NULL, NULL);
}

CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *tex, CUtexObject t)
{
	return tex_query(t, tex, NULL, tex, NULL);
}

CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC *view,
					CUtexObject t)
{
	return tex_query(t, view, NULL, NULL, view);
}

CUresult cuTexObjectCreate(CUtexObject *pt, const CUDA_RESOURCE_DESC *res,
			   const CUDA_TEXTURE_DESC *tex,
			   const CUDA_RESOURCE_VIEW_DESC *view)
{
	struct xgpuif_texobj_args a;
	struct xgpuif_texobj_reply r;
	CUresult rc;

	if (!pt || !res || !tex)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	a.res_type = res->resType;
	a.res_flags = res->flags;
	if (a.res_type == XGPUIF_RES_ARRAY) {
		a.array = xgpulib_array_remote(res->res.array.hArray);
		if (!a.array)
			return CUDA_ERROR_INVALID_HANDLE;
	} else if (a.res_type == XGPUIF_RES_MIPMAP) {
		a.array = xgpulib_mipmap_remote(res->res.mipmap.hMipmappedArray);
		if (!a.array)
			return CUDA_ERROR_INVALID_HANDLE;
	} else if (xgpuif_tex_mem_len(a.res_type)) {
		memcpy(&a.mem, &res->res, xgpuif_tex_mem_len(a.res_type));
	} else {
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	/* the wire's layouts are CUDA's (xgpuif.h) */
	memcpy(&a.tex, tex, sizeof(a.tex));
	if (view) {
		a.has_view = 1;
		memcpy(&a.view, view, sizeof(a.view));
		a.view._pad = 0;
	}
	rc = xgpulib_call_TEXOBJ_CREATE(&a, &r);
	if (rc == CUDA_SUCCESS) {
		*pt = r.texobj;
		texdesc_add(r.texobj, res, tex, view);
	}
	return rc;
}

CUresult cuTexObjectDestroy(CUtexObject t)
{
	struct xgpuif_dptr_args a = { t };

	texdesc_del(t);
	return xgpulib_call_TEXOBJ_DESTROY(&a);
}

/* ---- surface objects ----------------------------------------------------- */

/* the array behind each surface object of ours, for its resource desc */
struct surf {
	CUsurfObject s;
	CUarray array;
};

static pthread_mutex_t surf_mu = PTHREAD_MUTEX_INITIALIZER;
static struct surf *surfs;
static size_t nsurfs, cap_surfs;

CUresult cuSurfObjectCreate(CUsurfObject *ps, const CUDA_RESOURCE_DESC *res)
{
	struct xgpuif_handle_args a = { 0 };
	struct xgpuif_texobj_reply r;
	struct surf *v;
	CUresult rc;

	rc = xgpulib_query_arg(ps && res);
	if (rc)
		return rc;
	/* surfaces are arrays only (the driver's rule) */
	if (res->resType != CU_RESOURCE_TYPE_ARRAY)
		return CUDA_ERROR_INVALID_VALUE;
	a.handle = xgpulib_array_remote(res->res.array.hArray);
	if (!a.handle)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = xgpulib_call_SURFOBJ_CREATE(&a, &r);
	if (rc)
		return rc;
	*ps = r.texobj;
	pthread_mutex_lock(&surf_mu);
	v = xgpulib_vec_grow(surfs, nsurfs, &cap_surfs, sizeof(*v), 16);
	if (v) {
		surfs = v;
		surfs[nsurfs++] = (struct surf){ r.texobj,
						 res->res.array.hArray };
	}
	pthread_mutex_unlock(&surf_mu);
	return CUDA_SUCCESS;
}

CUresult cuSurfObjectDestroy(CUsurfObject s)
{
	struct xgpuif_dptr_args a = { s };
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = xgpulib_call_SURFOBJ_DESTROY(&a);
	if (rc)
		return rc;
	pthread_mutex_lock(&surf_mu);
	xgpulib_vec_take(surfs, &nsurfs, sizeof(*surfs), &s, sizeof(s), NULL);
	pthread_mutex_unlock(&surf_mu);
	return CUDA_SUCCESS;
}

CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *res, CUsurfObject s)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (!res)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&surf_mu);
	for (size_t i = 0; i < nsurfs; i++) {
		if (surfs[i].s == s) {
			memset(res, 0, sizeof(*res));
			res->resType = CU_RESOURCE_TYPE_ARRAY;
			res->res.array.hArray = surfs[i].array;
			rc = CUDA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&surf_mu);
	return rc;
}
