// SPDX-License-Identifier: MIT
/*
 * xgpulib_array.c: the guest's CUDA arrays and mipmapped arrays, objects
 * around the worker's handles.  An array is the program's own
 * (cuArray3DCreate), or one its owner frees (a mipmap's level, an array's
 * plane: owner set).  Every live object is on one list, so that a handle
 * from the worker (cuTexRefGetArray, cuTexRefGetMipmappedArray) finds its
 * guest object.  Calls nothing of the library's API files (the entry
 * points of xgpulib_api_tex.c, _mipmap.c, _texref.c... call it).
 */
#include <stdlib.h>

#include "xgpulib.h"

#define ARRAY_MAGIC 0x78617272u		/* "xarr" */
#define MIPMAP_MAGIC 0x786d6970u	/* "xmip" */

/* an array or a mipmapped array; desc and owner: arrays only */
struct aobj {
	uint32_t magic;
	uint64_t remote;
	CUDA_ARRAY3D_DESCRIPTOR desc;
	const void *owner;	/* a CUmipmappedArray or CUarray, or NULL */
	struct aobj *next;
};

struct CUarray_st {
	struct aobj o;
};

struct CUmipmappedArray_st {
	struct aobj o;
};

static pthread_mutex_t aobj_mu = PTHREAD_MUTEX_INITIALIZER;
static struct aobj *aobjs;

/* p, if it is a live object of kind magic: looked up in the list before
 * it is read, so that a destroyed or made-up handle is refused, not read */
static const struct aobj *aobj_check(const void *p, uint32_t magic)
{
	const struct aobj *o;

	if (!p)
		return NULL;
	pthread_mutex_lock(&aobj_mu);
	for (o = aobjs; o && o != p; o = o->next)
		;
	pthread_mutex_unlock(&aobj_mu);
	return o && o->magic == magic ? o : NULL;
}

static struct aobj *aobj_by_remote(uint32_t magic, uint64_t remote)
{
	struct aobj *o;

	if (!remote)
		return NULL;
	pthread_mutex_lock(&aobj_mu);
	for (o = aobjs; o && (o->remote != remote || o->magic != magic);
	     o = o->next)
		;
	pthread_mutex_unlock(&aobj_mu);
	return o;
}

static struct aobj *aobj_new(uint32_t magic, uint64_t remote,
			     const CUDA_ARRAY3D_DESCRIPTOR *d,
			     const void *owner)
{
	struct aobj *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->magic = magic;
	o->remote = remote;
	if (d)
		o->desc = *d;
	o->owner = owner;
	pthread_mutex_lock(&aobj_mu);
	o->next = aobjs;
	aobjs = o;
	pthread_mutex_unlock(&aobj_mu);
	return o;
}

uint64_t xgpulib_array_remote(CUarray a)
{
	const struct aobj *o = aobj_check(a, ARRAY_MAGIC);

	return o ? o->remote : 0;
}

const CUDA_ARRAY3D_DESCRIPTOR *xgpulib_array_desc(CUarray a)
{
	const struct aobj *o = aobj_check(a, ARRAY_MAGIC);

	return o ? &o->desc : NULL;
}

size_t xgpulib_array_elem_bytes(CUarray a)
{
	const CUDA_ARRAY3D_DESCRIPTOR *d = xgpulib_array_desc(a);
	size_t b;

	if (!d)
		return 0;
	switch (d->Format) {
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
	return b * d->NumChannels;
}

CUarray xgpulib_array_by_remote(uint64_t remote)
{
	return (CUarray)aobj_by_remote(ARRAY_MAGIC, remote);
}

CUarray xgpulib_array_wrap(uint64_t remote, const CUDA_ARRAY3D_DESCRIPTOR *d,
			   const void *owner)
{
	return (CUarray)aobj_new(ARRAY_MAGIC, remote, d, owner);
}

uint64_t xgpulib_mipmap_remote(CUmipmappedArray m)
{
	const struct aobj *o = aobj_check(m, MIPMAP_MAGIC);

	return o ? o->remote : 0;
}

CUmipmappedArray xgpulib_mipmap_by_remote(uint64_t remote)
{
	return (CUmipmappedArray)aobj_by_remote(MIPMAP_MAGIC, remote);
}

CUmipmappedArray xgpulib_mipmap_wrap(uint64_t remote)
{
	return (CUmipmappedArray)aobj_new(MIPMAP_MAGIC, remote, NULL, NULL);
}

void xgpulib_arrays_forget(const void *obj)
{
	struct aobj **pp = &aobjs, *dead = NULL;

	pthread_mutex_lock(&aobj_mu);
	while (*pp) {
		struct aobj *x = *pp;

		if (x == obj || x->owner == obj) {
			*pp = x->next;
			x->next = dead;
			dead = x;
		} else {
			pp = &x->next;
		}
	}
	pthread_mutex_unlock(&aobj_mu);
	while (dead) {
		struct aobj *x = dead;

		dead = x->next;
		x->magic = 0;
		free(x);
	}
}
