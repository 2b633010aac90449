// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_tex.c: CUDA arrays, texture and surface objects.  Arrays are guest
 * structs holding the backend handle and their descriptor (answered
 * locally); texture objects are the driver's own 64-bit values (kernels
 * receive them as parameters), created and destroyed in the worker.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_vec.h"

#define ARRAY_MAGIC 0x78617272u	/* "xarr" */

/*
 * An array of the guest's: its own (cuArray3DCreate), or one its owner
 * frees (a mipmap's level, an array's plane: owner set).  Every live one
 * is on `arrays`, so that a handle from the worker (cuTexRefGetArray)
 * finds its CUarray.
 */
struct CUarray_st {
	uint32_t magic;
	uint64_t remote;
	CUDA_ARRAY3D_DESCRIPTOR desc;
	const void *owner;	/* a CUmipmappedArray or CUarray, or NULL */
	struct CUarray_st *next;
};

static pthread_mutex_t arrays_mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUarray_st *arrays;

uint64_t xgpulib_array_remote(CUarray a)
{
	return a && a->magic == ARRAY_MAGIC ? a->remote : 0;
}

size_t xgpulib_array_elem_bytes(CUarray a)
{
	size_t b;

	if (!a || a->magic != ARRAY_MAGIC)
		return 0;
	switch (a->desc.Format) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		b = 1;
		break;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		b = 2;
		break;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		b = 4;
		break;
	default:
		return 0;	/* packed, compressed and planar formats */
	}
	return b * a->desc.NumChannels;
}

CUarray xgpulib_array_by_remote(uint64_t remote)
{
	struct CUarray_st *a;

	pthread_mutex_lock(&arrays_mu);
	for (a = arrays; a && a->remote != remote; a = a->next)
		;
	pthread_mutex_unlock(&arrays_mu);
	return remote ? a : NULL;
}

CUarray xgpulib_array_wrap(uint64_t remote, const CUDA_ARRAY3D_DESCRIPTOR *d,
			   const void *owner)
{
	struct CUarray_st *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->magic = ARRAY_MAGIC;
	a->remote = remote;
	a->desc = *d;
	a->owner = owner;
	pthread_mutex_lock(&arrays_mu);
	a->next = arrays;
	arrays = a;
	pthread_mutex_unlock(&arrays_mu);
	return a;
}

/* drop a (owner NULL) or every array owner owns (a NULL) */
static void arrays_drop(struct CUarray_st *a, const void *owner)
{
	struct CUarray_st **pp = &arrays, *dead = NULL;

	pthread_mutex_lock(&arrays_mu);
	while (*pp) {
		struct CUarray_st *x = *pp;

		if (x == a || (owner && x->owner == owner)) {
			*pp = x->next;
			x->next = dead;
			dead = x;
		} else {
			pp = &x->next;
		}
	}
	pthread_mutex_unlock(&arrays_mu);
	while (dead) {
		struct CUarray_st *x = dead;

		dead = x->next;
		x->magic = 0;
		free(x);
	}
}

void xgpulib_arrays_drop_owned(const void *owner)
{
	arrays_drop(NULL, owner);
}

CUresult cuArray3DCreate(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	struct xgpuif_array_args a;
	struct xgpuif_array_reply r;
	struct CUarray_st *arr;
	CUresult rc;

	if (!pa || !d)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&a, d, sizeof(a));	/* the same layout (xgpuif.h) */
	a._pad = 0;
	rc = xgpulib_call_ARRAY_CREATE(&a, &r);
	if (rc)
		return rc;
	arr = xgpulib_array_wrap(r.array, d, NULL);
	if (!arr) {
		struct xgpuif_handle_args h = { r.array };

		xgpulib_call_ARRAY_DESTROY(&h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pa = arr;
	return CUDA_SUCCESS;
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

	if (!a || a->magic != ARRAY_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	/* a level or a plane too: the worker refuses those (its owner
	 * frees it) */
	h.handle = a->remote;
	rc = xgpulib_call_ARRAY_DESTROY(&h);
	if (rc == CUDA_SUCCESS) {
		xgpulib_arrays_drop_owned(a);	/* its planes */
		arrays_drop(a, NULL);
	}
	return rc;
}

CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a)
{
	if (!d || !a || a->magic != ARRAY_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	*d = a->desc;
	return CUDA_SUCCESS;
}

CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR *d, CUarray a)
{
	if (!d || !a || a->magic != ARRAY_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	d->Width = a->desc.Width;
	d->Height = a->desc.Height;
	d->Format = a->desc.Format;
	d->NumChannels = a->desc.NumChannels;
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

	if (!ps || !res)
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
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
	for (size_t i = 0; i < nsurfs; i++) {
		if (surfs[i].s == s) {
			surfs[i] = surfs[--nsurfs];
			break;
		}
	}
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
