// SPDX-License-Identifier: MIT
/*
 * fakecuda_array.c: arrays for the fake driver (TESTS ONLY).  An array is
 * host memory with its rows packed (width x element bytes), its slices
 * after one another; a mipmapped array holds one such array per level.
 * Copies with an array side, 2D or 3D, peer or not, move bytes as the
 * driver would.  Texture and surface references of a module are records
 * of what was set on them (names starting with "tex" or "surf"); no fake
 * kernel reads them.  Sparse arrays and multi-planar formats are not
 * emulated.
 */
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define ARRAY_MAGIC	0x66617272u	/* "farr" */
#define MIPMAP_MAGIC	0x666d6970u	/* "fmip" */
#define TEXREF_MAGIC	0x66746578u	/* "ftex" */
#define MAX_LEVELS	16

struct farray {
	uint32_t magic;
	bool level;		/* owned by a mipmap */
	CUDA_ARRAY3D_DESCRIPTOR d;
	size_t row, rows, slices;	/* bytes per row, rows, slices */
	uint8_t *data;
};

struct fmipmap {
	uint32_t magic;
	unsigned int levels;
	struct farray *lv[MAX_LEVELS];
};

/* ---- arrays -------------------------------------------------------------- */

static size_t format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		return 4;
	default:
		return 0;
	}
}

static struct farray *array_find(CUarray a)
{
	struct farray *f = (struct farray *)a;

	return f && f->magic == ARRAY_MAGIC ? f : NULL;
}

static struct fmipmap *mipmap_find(CUmipmappedArray m)
{
	struct fmipmap *f = (struct fmipmap *)m;

	return f && f->magic == MIPMAP_MAGIC ? f : NULL;
}

static CUresult array_new(const CUDA_ARRAY3D_DESCRIPTOR *d, bool level,
			  struct farray **out)
{
	size_t eb = format_bytes(d->Format), total;
	struct farray *a;

	if (!eb || !d->Width || (d->NumChannels != 1 && d->NumChannels != 2 &&
				 d->NumChannels != 4))
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->d = *d;
	a->level = level;
	a->rows = d->Height ? d->Height : 1;
	a->slices = d->Depth ? d->Depth : 1;
	if (__builtin_mul_overflow(d->Width, eb * d->NumChannels, &a->row) ||
	    __builtin_mul_overflow(a->row, a->rows, &total) ||
	    __builtin_mul_overflow(total, a->slices, &total) ||
	    total > FAKE_TOTAL_MEM || !(a->data = calloc(1, total))) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->magic = ARRAY_MAGIC;
	*out = a;
	return CUDA_SUCCESS;
}

static void array_free(struct farray *a)
{
	a->magic = 0;
	free(a->data);
	free(a);
}

CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	struct farray *a;
	CUresult rc;

	NEED_CTX();
	if (!arr || !d)
		return CUDA_ERROR_INVALID_VALUE;
	rc = array_new(d, false, &a);
	if (rc == CUDA_SUCCESS)
		*arr = (CUarray)a;
	return rc;
}

CUresult cuArrayDestroy(CUarray arr)
{
	struct farray *a = array_find(arr);

	NEED_INIT();
	/* a mipmap's level goes with its mipmap */
	if (!a || a->level)
		return CUDA_ERROR_INVALID_HANDLE;
	array_free(a);
	return CUDA_SUCCESS;
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray arr)
{
	struct farray *a = array_find(arr);

	NEED_INIT();
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	*d = a->d;
	return CUDA_SUCCESS;
}

CUresult cuArrayGetPlane(CUarray *plane, CUarray arr, unsigned int idx)
{
	NEED_INIT();
	(void)idx;
	if (!plane)
		return CUDA_ERROR_INVALID_VALUE;
	/* no multi-planar formats here: every array is single-planar */
	return array_find(arr) ? CUDA_ERROR_INVALID_VALUE :
				 CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req,
				      CUarray arr, CUdevice dev)
{
	struct farray *a = array_find(arr);

	CHECK_DEV(dev);
	if (!req)
		return CUDA_ERROR_INVALID_VALUE;
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	memset(req, 0, sizeof(*req));
	req->size = a->row * a->rows * a->slices;
	req->alignment = FAKE_PITCH_ALIGN;
	return CUDA_SUCCESS;
}

CUresult cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *p,
				    CUarray arr)
{
	NEED_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	/* no array here is sparse */
	return array_find(arr) ? CUDA_ERROR_INVALID_VALUE :
				 CUDA_ERROR_INVALID_HANDLE;
}

/* ---- mipmapped arrays ---------------------------------------------------- */

static void mipmap_free(struct fmipmap *m)
{
	for (unsigned int i = 0; i < m->levels; i++)
		if (m->lv[i])
			array_free(m->lv[i]);
	m->magic = 0;
	free(m);
}

static size_t half(size_t v)
{
	return v > 1 ? v / 2 : v;
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pm,
				const CUDA_ARRAY3D_DESCRIPTOR *d,
				unsigned int levels)
{
	CUDA_ARRAY3D_DESCRIPTOR ld;
	struct fmipmap *m;
	CUresult rc;

	NEED_CTX();
	if (!pm || !d || !levels || levels > MAX_LEVELS)
		return CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MIPMAP_MAGIC;
	ld = *d;
	for (unsigned int i = 0; i < levels; i++) {
		rc = array_new(&ld, true, &m->lv[i]);
		if (rc) {
			m->levels = i;
			mipmap_free(m);
			return rc;
		}
		ld.Width = half(ld.Width);
		ld.Height = half(ld.Height);
		ld.Depth = half(ld.Depth);
	}
	m->levels = levels;
	*pm = (CUmipmappedArray)m;
	return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hm)
{
	struct fmipmap *m = mipmap_find(hm);

	NEED_INIT();
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	mipmap_free(m);
	return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetLevel(CUarray *level, CUmipmappedArray hm,
				  unsigned int i)
{
	struct fmipmap *m = mipmap_find(hm);

	NEED_INIT();
	if (!level)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= m->levels)
		return CUDA_ERROR_INVALID_VALUE;
	*level = (CUarray)m->lv[i];
	return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetMemoryRequirements(
	CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUmipmappedArray hm, CUdevice dev)
{
	struct fmipmap *m = mipmap_find(hm);

	CHECK_DEV(dev);
	if (!req)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	memset(req, 0, sizeof(*req));
	for (unsigned int i = 0; i < m->levels; i++)
		req->size += m->lv[i]->row * m->lv[i]->rows * m->lv[i]->slices;
	req->alignment = FAKE_PITCH_ALIGN;
	return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *p,
					     CUmipmappedArray hm)
{
	NEED_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return mipmap_find(hm) ? CUDA_ERROR_INVALID_VALUE :
				 CUDA_ERROR_INVALID_HANDLE;
}

/* ---- copies -------------------------------------------------------------- */

/* one side of a copy: its first byte, row pitch and slice pitch */
static CUresult side_3d(CUmemorytype type, const void *host, CUdeviceptr dev,
			CUarray arr, size_t x, size_t y, size_t z,
			size_t pitch, size_t height, const CUDA_MEMCPY3D *c,
			uint8_t **out, size_t *rp, size_t *sp)
{
	size_t start, extent, slice;

	if (type == CU_MEMORYTYPE_ARRAY) {
		struct farray *a = array_find(arr);

		if (!a)
			return CUDA_ERROR_INVALID_HANDLE;
		if (x > a->row || c->WidthInBytes > a->row - x ||
		    y > a->rows || c->Height > a->rows - y ||
		    z > a->slices || c->Depth > a->slices - z)
			return CUDA_ERROR_INVALID_VALUE;
		*rp = a->row;
		*sp = a->row * a->rows;
		*out = a->data + z * *sp + y * a->row + x;
		return CUDA_SUCCESS;
	}
	if ((c->Height > 1 && pitch < c->WidthInBytes) ||
	    (c->Depth > 1 && height < c->Height) ||
	    __builtin_mul_overflow(pitch, height, &slice) ||
	    __builtin_mul_overflow(z, slice, &start) ||
	    __builtin_mul_overflow(y, pitch, &extent) ||
	    __builtin_add_overflow(start, extent, &start) ||
	    __builtin_add_overflow(start, x, &start) ||
	    __builtin_mul_overflow(c->Depth - 1, slice, &extent) ||
	    __builtin_add_overflow(extent, (c->Height - 1) * pitch, &extent) ||
	    __builtin_add_overflow(extent, c->WidthInBytes, &extent))
		return CUDA_ERROR_INVALID_VALUE;
	*rp = pitch;
	*sp = slice;
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)(uintptr_t)host + start;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		if (dev + start < dev || !fc_copy_ok(dev + start, extent))
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)(uintptr_t)(dev + start);
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult fc_copy_3d(const CUDA_MEMCPY3D *c)
{
	uint8_t *s, *d;
	size_t srp, ssp, drp, dsp;
	CUresult rc;

	NEED_CTX();
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c->WidthInBytes || !c->Height || !c->Depth)
		return CUDA_SUCCESS;
	rc = side_3d(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray,
		     c->srcXInBytes, c->srcY, c->srcZ, c->srcPitch,
		     c->srcHeight, c, &s, &srp, &ssp);
	if (!rc)
		rc = side_3d(c->dstMemoryType, c->dstHost, c->dstDevice,
			     c->dstArray, c->dstXInBytes, c->dstY, c->dstZ,
			     c->dstPitch, c->dstHeight, c, &d, &drp, &dsp);
	if (rc)
		return rc;
	for (size_t z = 0; z < c->Depth; z++)
		for (size_t r = 0; r < c->Height; r++)
			memmove(d + z * dsp + r * drp, s + z * ssp + r * srp,
				c->WidthInBytes);
	return CUDA_SUCCESS;
}

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *c)
{
	return fc_copy_3d(c);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream s)
{
	struct fc_capnode n = { .type = CU_GRAPH_NODE_TYPE_MEMCPY };
	bool captured;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	n.cp = *c;	/* captured: a memcpy node of the copy */
	rc = fc_stream_work_as(s, &captured, &n);
	return rc || captured ? rc : fc_copy_3d(c);
}

/* a peer copy between two contexts of the one device */
CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *p)
{
	CUDA_MEMCPY3D q;

	NEED_CTX();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!CTX(p->srcContext) || !CTX(p->dstContext))
		return CUDA_ERROR_INVALID_CONTEXT;
	memset(&q, 0, sizeof(q));
	q.srcXInBytes = p->srcXInBytes;
	q.srcY = p->srcY;
	q.srcZ = p->srcZ;
	q.srcMemoryType = p->srcMemoryType;
	q.srcHost = p->srcHost;
	q.srcDevice = p->srcDevice;
	q.srcArray = p->srcArray;
	q.srcPitch = p->srcPitch;
	q.srcHeight = p->srcHeight;
	q.dstXInBytes = p->dstXInBytes;
	q.dstY = p->dstY;
	q.dstZ = p->dstZ;
	q.dstMemoryType = p->dstMemoryType;
	q.dstHost = p->dstHost;
	q.dstDevice = p->dstDevice;
	q.dstArray = p->dstArray;
	q.dstPitch = p->dstPitch;
	q.dstHeight = p->dstHeight;
	q.WidthInBytes = p->WidthInBytes;
	q.Height = p->Height;
	q.Depth = p->Depth;
	return fc_copy_3d(&q);
}

CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
	CUresult rc = fc_stream_ok(s);

	return rc ? rc : cuMemcpy3DPeer(p);
}

/* ---- texture and surface references -------------------------------------- */

struct fref {
	uint32_t magic;
	bool surf;
	CUmodule mod;
	char name[64];
	CUdeviceptr dptr;
	size_t bytes;
	CUarray array;
	CUmipmappedArray mipmap;
	CUarray_format format;
	int channels;
	CUfilter_mode filter, mip_filter;
	CUaddress_mode mode[3];
	unsigned int flags;
	float border[4];
	int aniso;
	float bias, min_clamp, max_clamp;
	struct fref *next;
};

static struct fref *refs;

static CUresult ref_get(void **out, CUmodule hmod, const char *name,
			bool surf)
{
	const char *prefix = surf ? "surf" : "tex";
	struct fref *r;

	NEED_CTX();
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!MODULE(hmod))
		return CUDA_ERROR_INVALID_HANDLE;
	if (strncmp(name, prefix, strlen(prefix)) || strlen(name) >= 64)
		return CUDA_ERROR_NOT_FOUND;
	for (r = refs; r; r = r->next) {
		if (r->mod == hmod && r->surf == surf &&
		    !strcmp(r->name, name)) {
			*out = r;
			return CUDA_SUCCESS;
		}
	}
	/* kept for the process's life: the fake does not track unloads */
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->magic = TEXREF_MAGIC;
	r->surf = surf;
	r->mod = hmod;
	strcpy(r->name, name);
	r->format = CU_AD_FORMAT_FLOAT;
	r->channels = 1;
	r->next = refs;
	refs = r;
	*out = r;
	return CUDA_SUCCESS;
}

static struct fref *ref_find(const void *p, bool surf)
{
	struct fref *r = (struct fref *)(uintptr_t)p;

	return r && r->magic == TEXREF_MAGIC && r->surf == surf ? r : NULL;
}

#define TEXREF(t)							\
	struct fref *r = ref_find((t), false);				\
	NEED_INIT();							\
	if (!r)								\
		return CUDA_ERROR_INVALID_HANDLE

CUresult cuModuleGetTexRef(CUtexref *t, CUmodule hmod, const char *name)
{
	return ref_get((void **)t, hmod, name, false);
}

CUresult cuModuleGetSurfRef(CUsurfref *s, CUmodule hmod, const char *name)
{
	return ref_get((void **)s, hmod, name, true);
}

CUresult cuTexRefSetAddress_v2(size_t *off, CUtexref t, CUdeviceptr dptr,
			       size_t bytes)
{
	TEXREF(t);
	if (bytes && !fc_dev_ok(dptr, bytes))
		return CUDA_ERROR_INVALID_VALUE;
	r->dptr = dptr;
	r->bytes = bytes;
	r->array = NULL;
	r->mipmap = NULL;
	if (off)
		*off = 0;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetAddress2D_v3(CUtexref t, const CUDA_ARRAY_DESCRIPTOR *d,
				 CUdeviceptr dptr, size_t pitch)
{
	TEXREF(t);
	if (!d || pitch < d->Width || !fc_dev_ok(dptr, pitch * d->Height))
		return CUDA_ERROR_INVALID_VALUE;
	r->dptr = dptr;
	r->bytes = pitch * d->Height;
	r->format = d->Format;
	r->channels = (int)d->NumChannels;
	r->array = NULL;
	r->mipmap = NULL;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetArray(CUtexref t, CUarray arr, unsigned int flags)
{
	struct farray *a = array_find(arr);

	TEXREF(t);
	if (!a || flags != CU_TRSA_OVERRIDE_FORMAT)
		return CUDA_ERROR_INVALID_VALUE;
	r->array = arr;
	r->mipmap = NULL;
	r->dptr = 0;
	r->format = a->d.Format;
	r->channels = (int)a->d.NumChannels;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetMipmappedArray(CUtexref t, CUmipmappedArray m,
				   unsigned int flags)
{
	TEXREF(t);
	if (!mipmap_find(m) || flags != CU_TRSA_OVERRIDE_FORMAT)
		return CUDA_ERROR_INVALID_VALUE;
	r->mipmap = m;
	r->array = NULL;
	r->dptr = 0;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetFormat(CUtexref t, CUarray_format f, int channels)
{
	TEXREF(t);
	if (!format_bytes(f) || (channels != 1 && channels != 2 &&
				 channels != 4))
		return CUDA_ERROR_INVALID_VALUE;
	r->format = f;
	r->channels = channels;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetFilterMode(CUtexref t, CUfilter_mode m)
{
	TEXREF(t);
	r->filter = m;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetAddressMode(CUtexref t, int dim, CUaddress_mode m)
{
	TEXREF(t);
	if (dim < 0 || dim > 2)
		return CUDA_ERROR_INVALID_VALUE;
	r->mode[dim] = m;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetFlags(CUtexref t, unsigned int flags)
{
	TEXREF(t);
	r->flags = flags;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetBorderColor(CUtexref t, float *c)
{
	TEXREF(t);
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(r->border, c, sizeof(r->border));
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetMaxAnisotropy(CUtexref t, unsigned int a)
{
	TEXREF(t);
	r->aniso = (int)a;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetMipmapFilterMode(CUtexref t, CUfilter_mode m)
{
	TEXREF(t);
	r->mip_filter = m;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetMipmapLevelBias(CUtexref t, float bias)
{
	TEXREF(t);
	r->bias = bias;
	return CUDA_SUCCESS;
}

CUresult cuTexRefSetMipmapLevelClamp(CUtexref t, float lo, float hi)
{
	TEXREF(t);
	r->min_clamp = lo;
	r->max_clamp = hi;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetAddress_v2(CUdeviceptr *dptr, CUtexref t)
{
	TEXREF(t);
	if (!dptr || !r->dptr)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = r->dptr;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetArray(CUarray *arr, CUtexref t)
{
	TEXREF(t);
	if (!arr || !r->array)
		return CUDA_ERROR_INVALID_VALUE;
	*arr = r->array;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetMipmappedArray(CUmipmappedArray *m, CUtexref t)
{
	TEXREF(t);
	if (!m || !r->mipmap)
		return CUDA_ERROR_INVALID_VALUE;
	*m = r->mipmap;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetFormat(CUarray_format *f, int *channels, CUtexref t)
{
	TEXREF(t);
	if (!f || !channels)
		return CUDA_ERROR_INVALID_VALUE;
	*f = r->format;
	*channels = r->channels;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetFilterMode(CUfilter_mode *m, CUtexref t)
{
	TEXREF(t);
	if (!m)
		return CUDA_ERROR_INVALID_VALUE;
	*m = r->filter;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetAddressMode(CUaddress_mode *m, CUtexref t, int dim)
{
	TEXREF(t);
	if (!m || dim < 0 || dim > 2)
		return CUDA_ERROR_INVALID_VALUE;
	*m = r->mode[dim];
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetFlags(unsigned int *flags, CUtexref t)
{
	TEXREF(t);
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = r->flags;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetBorderColor(float *c, CUtexref t)
{
	TEXREF(t);
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(c, r->border, sizeof(r->border));
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetMaxAnisotropy(int *a, CUtexref t)
{
	TEXREF(t);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	*a = r->aniso;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetMipmapFilterMode(CUfilter_mode *m, CUtexref t)
{
	TEXREF(t);
	if (!m)
		return CUDA_ERROR_INVALID_VALUE;
	*m = r->mip_filter;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetMipmapLevelBias(float *bias, CUtexref t)
{
	TEXREF(t);
	if (!bias)
		return CUDA_ERROR_INVALID_VALUE;
	*bias = r->bias;
	return CUDA_SUCCESS;
}

CUresult cuTexRefGetMipmapLevelClamp(float *lo, float *hi, CUtexref t)
{
	TEXREF(t);
	if (!lo || !hi)
		return CUDA_ERROR_INVALID_VALUE;
	*lo = r->min_clamp;
	*hi = r->max_clamp;
	return CUDA_SUCCESS;
}

/* a reference of no module's: cuTexRefDestroy frees it */
CUresult cuTexRefCreate(CUtexref *t)
{
	struct fref *r;

	NEED_CTX();
	if (!t)
		return CUDA_ERROR_INVALID_VALUE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->magic = TEXREF_MAGIC;
	r->format = CU_AD_FORMAT_FLOAT;
	r->channels = 1;
	r->next = refs;
	refs = r;
	*t = (CUtexref)r;
	return CUDA_SUCCESS;
}

CUresult cuTexRefDestroy(CUtexref t)
{
	struct fref **pp;

	NEED_INIT();
	for (pp = &refs; *pp; pp = &(*pp)->next) {
		struct fref *r = *pp;

		if (r != (struct fref *)t || r->mod)
			continue;
		*pp = r->next;
		r->magic = 0;
		free(r);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_HANDLE;
}

/*
 * Sparse mappings: the fake keeps no tiles; it checks each entry as the
 * driver documents (a sparse array or mipmap, a level's subresource, a
 * physical allocation to map, device 0) and maps nothing.
 */
static CUresult map_entry_ok(const CUarrayMapInfo *m)
{
	const struct farray *a = NULL;
	const struct fmipmap *mm = NULL;

	if (m->resourceType == CU_RESOURCE_TYPE_ARRAY)
		a = array_find(m->resource.array);
	else if (m->resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY)
		mm = mipmap_find(m->resource.mipmap);
	else
		return CUDA_ERROR_INVALID_VALUE;
	if (!a && !mm)
		return CUDA_ERROR_INVALID_HANDLE;
	if (mm)
		a = mm->lv[0];
	if (!a || !(a->d.Flags & CUDA_ARRAY3D_SPARSE) || (!mm && a->level))
		return CUDA_ERROR_INVALID_VALUE;
	if (m->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL &&
	    m->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL)
		return CUDA_ERROR_INVALID_VALUE;
	if (m->memHandleType != CU_MEM_HANDLE_TYPE_GENERIC ||
	    m->deviceBitMask != 1 || m->flags || m->reserved[0] ||
	    m->reserved[1])
		return CUDA_ERROR_INVALID_VALUE;
	if (m->memOperationType == CU_MEM_OPERATION_TYPE_MAP)
		return fc_phys_ok(m->memHandle.memHandle, m->offset) ?
			       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	return m->memOperationType == CU_MEM_OPERATION_TYPE_UNMAP ?
		       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemMapArrayAsync(CUarrayMapInfo *list, unsigned int count,
			    CUstream s)
{
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!list || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < count; i++) {
		rc = map_entry_ok(&list[i]);
		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult cuSurfRefSetArray(CUsurfref s, CUarray arr, unsigned int flags)
{
	struct fref *r = ref_find(s, true);

	NEED_INIT();
	if (!r)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!array_find(arr) || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r->array = arr;
	return CUDA_SUCCESS;
}

CUresult cuSurfRefGetArray(CUarray *arr, CUsurfref s)
{
	struct fref *r = ref_find(s, true);

	NEED_INIT();
	if (!r)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!arr || !r->array)
		return CUDA_ERROR_INVALID_VALUE;
	*arr = r->array;
	return CUDA_SUCCESS;
}

/*
 * The launch API before CUDA 4.  The CUDA 13 driver returned
 * CUDA_ERROR_INVALID_VALUE for CU_PARAM_TR_DEFAULT with a module's own
 * function and reference (H100, H200): so does the fake, after the
 * reference is judged (the worker judged the function).
 */
CUresult cuParamSetTexRef(CUfunction f, int texunit, CUtexref t)
{
	TEXREF(t);
	(void)r;
	(void)texunit;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_ERROR_INVALID_VALUE;
}
