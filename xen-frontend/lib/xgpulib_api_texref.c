// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_texref.c: legacy texture and surface references, the
 * .texref and .surfref of a module (PTX still declares them; CUDA C++
 * no longer does).  The driver's reference stays in the worker; the
 * program's CUtexref / CUsurfref points at a small guest record holding
 * the wire handle.  Looking a name up again gives the same record.
 * Records are kept for the process's life: after its module is unloaded
 * a reference's handle is stale and the worker refuses it
 * (CUDA_ERROR_INVALID_HANDLE), where a freed record would be a dangling
 * pointer.  Every property is set and read in the worker, so the driver
 * binds it to the module's kernels at launch as it always does.
 *
 * cuTexRefCreate makes a reference of no module's in the worker's driver;
 * cuTexRefDestroy frees it there, and its record is reused by a later
 * create (as the driver reuses its memory): until then the record's
 * handle is stale and the worker refuses it.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_module.h"

#define REF_MAGIC 0x78726566u	/* "xref" */

/* both kinds; a CUsurfref points at one with surf set */
struct CUtexref_st {
	uint32_t magic;
	bool surf;
	bool dead;		/* cuTexRefDestroy'ed: reusable */
	uint64_t remote;
	struct CUtexref_st *next;
};

static pthread_mutex_t ref_mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUtexref_st *refs;

/* the record of wire handle remote, made if new; NULL when out of memory */
static struct CUtexref_st *ref_for(uint64_t remote, bool surf)
{
	struct CUtexref_st *r;

	pthread_mutex_lock(&ref_mu);
	for (r = refs; r; r = r->next)
		if (r->remote == remote && r->surf == surf)
			break;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (r) {
			r->magic = REF_MAGIC;
			r->surf = surf;
			r->remote = remote;
			r->next = refs;
			refs = r;
		}
	}
	pthread_mutex_unlock(&ref_mu);
	return r;
}

/* the wire handle of a reference of ours of that kind, 0 if not one */
static uint64_t ref_remote(const void *p, bool surf)
{
	const struct CUtexref_st *r = p;

	return r && r->magic == REF_MAGIC && r->surf == surf ? r->remote : 0;
}

static CUresult get_ref(void **out, CUmodule hmod, const char *name,
			bool surf)
{
	struct CUmod_st *m = xgpulib_mod_check(hmod);
	struct xgpuif_symbol_args a;
	struct xgpuif_ref_reply r;
	struct xgpuif_iov tail;
	struct CUtexref_st *ref;
	CUresult rc;

	XGPULIB_CHECK_ARGS(out && name, m);
	rc = xgpulib_symbol_req(m->own.remote, name, &a, &tail);
	if (rc)
		return rc;
	rc = surf ? xgpulib_call_MODULE_GET_SURFREF(&a, &tail, 1, &r) :
		    xgpulib_call_MODULE_GET_TEXREF(&a, &tail, 1, &r);
	if (rc)
		return rc;
	ref = ref_for(r.ref, surf);
	if (!ref)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = ref;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetTexRef(CUtexref *t, CUmodule hmod, const char *name)
{
	return get_ref((void **)t, hmod, name, false);
}

CUresult cuModuleGetSurfRef(CUsurfref *s, CUmodule hmod, const char *name)
{
	return get_ref((void **)s, hmod, name, true);
}

/* a destroyed reference's record for remote, else a new one */
static struct CUtexref_st *ref_reuse(uint64_t remote)
{
	struct CUtexref_st *r;

	pthread_mutex_lock(&ref_mu);
	for (r = refs; r; r = r->next)
		if (r->dead)
			break;
	if (r) {
		r->dead = false;
		r->remote = remote;
	}
	pthread_mutex_unlock(&ref_mu);
	return r ? r : ref_for(remote, false);
}

CUresult cuTexRefCreate(CUtexref *t)
{
	struct xgpuif_ref_reply r = { 0 };
	CUresult rc;

	XGPULIB_CHECK_ARGS(t, true);
	rc = xgpulib_call_TEXREF_CREATE(&r);
	if (rc)
		return rc;
	*t = ref_reuse(r.ref);
	return xgpulib_kept(*t, r.ref, xgpulib_call_TEXREF_DESTROY);
}

CUresult cuTexRefDestroy(CUtexref t)
{
	struct xgpuif_handle_args a = { ref_remote(t, false) };
	CUresult rc;

	XGPULIB_CHECK_ARGS(true, a.handle);
	/* the worker refuses a module's reference and a stale one */
	rc = xgpulib_call_TEXREF_DESTROY(&a);
	if (rc == CUDA_SUCCESS) {
		pthread_mutex_lock(&ref_mu);
		if (t->remote == a.handle)
			t->dead = true;
		pthread_mutex_unlock(&ref_mu);
	}
	return rc;
}

/* ---- setting ---------------------------------------------------------- */

static CUresult set(const void *ref, struct xgpuif_texref_set_args *a,
		    uint64_t *value)
{
	struct xgpuif_u64_reply r = { 0 };
	bool surf = a->what == XGPUIF_TR_SURF_ARRAY;
	CUresult rc;

	XGPULIB_CHECK_ARGS(true, ref_remote(ref, surf));
	a->ref = ref_remote(ref, surf);
	rc = xgpulib_call_TEXREF_SET(a, &r);
	if (rc == CUDA_SUCCESS && value)
		*value = r.value;
	return rc;
}

/* a property of one or two 32-bit values */
static CUresult set_u(const void *ref, uint32_t what, uint32_t index,
		      uint32_t u0, uint32_t u1)
{
	struct xgpuif_texref_set_args a;

	memset(&a, 0, sizeof(a));
	a.what = what;
	a.index = index;
	a.u[0] = u0;
	a.u[1] = u1;
	return set(ref, &a, NULL);
}

static CUresult set_f(const void *ref, uint32_t what, const float *f, int n)
{
	struct xgpuif_texref_set_args a;

	memset(&a, 0, sizeof(a));
	a.what = what;
	memcpy(a.f, f, (size_t)n * sizeof(float));
	return set(ref, &a, NULL);
}

CUresult cuTexRefSetAddress_v2(size_t *off, CUtexref t, CUdeviceptr dptr,
			       size_t bytes)
{
	struct xgpuif_texref_set_args a;
	uint64_t v = 0;
	CUresult rc;

	memset(&a, 0, sizeof(a));
	a.what = XGPUIF_TR_ADDRESS;
	a.mem.dptr = dptr;
	a.mem.width = bytes;
	rc = set(t, &a, &v);
	if (rc == CUDA_SUCCESS && off)
		*off = (size_t)v;
	return rc;
}

CUresult cuTexRefSetAddress2D_v3(CUtexref t, const CUDA_ARRAY_DESCRIPTOR *d,
				 CUdeviceptr dptr, size_t pitch)
{
	struct xgpuif_texref_set_args a;

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	a.what = XGPUIF_TR_ADDRESS2D;
	a.mem.dptr = dptr;
	a.mem.format = d->Format;
	a.mem.channels = d->NumChannels;
	a.mem.width = d->Width;
	a.mem.height = d->Height;
	a.mem.pitch = pitch;
	return set(t, &a, NULL);
}

/* an array or mipmapped array (wire handle remote, 0: not one) bound */
static CUresult set_array(const void *ref, uint32_t what, uint64_t remote,
			  unsigned int flags)
{
	struct xgpuif_texref_set_args a;

	if (!remote)
		return CUDA_ERROR_INVALID_HANDLE;
	memset(&a, 0, sizeof(a));
	a.what = what;
	a.array = remote;
	a.u[0] = flags;
	return set(ref, &a, NULL);
}

CUresult cuTexRefSetArray(CUtexref t, CUarray arr, unsigned int flags)
{
	return set_array(t, XGPUIF_TR_ARRAY, xgpulib_array_remote(arr), flags);
}

CUresult cuTexRefSetMipmappedArray(CUtexref t, CUmipmappedArray m,
				   unsigned int flags)
{
	return set_array(t, XGPUIF_TR_MIPMAP, xgpulib_mipmap_remote(m), flags);
}

CUresult cuSurfRefSetArray(CUsurfref s, CUarray arr, unsigned int flags)
{
	return set_array(s, XGPUIF_TR_SURF_ARRAY, xgpulib_array_remote(arr),
			 flags);
}

CUresult cuTexRefSetFormat(CUtexref t, CUarray_format f, int n)
{
	return set_u(t, XGPUIF_TR_FORMAT, 0, (uint32_t)f, (uint32_t)n);
}

CUresult cuTexRefSetFilterMode(CUtexref t, CUfilter_mode m)
{
	return set_u(t, XGPUIF_TR_FILTER, 0, (uint32_t)m, 0);
}

CUresult cuTexRefSetAddressMode(CUtexref t, int dim, CUaddress_mode m)
{
	return set_u(t, XGPUIF_TR_ADDR_MODE, (uint32_t)dim, (uint32_t)m, 0);
}

CUresult cuTexRefSetFlags(CUtexref t, unsigned int flags)
{
	return set_u(t, XGPUIF_TR_FLAGS, 0, flags, 0);
}

CUresult cuTexRefSetMaxAnisotropy(CUtexref t, unsigned int n)
{
	return set_u(t, XGPUIF_TR_ANISO, 0, n, 0);
}

CUresult cuTexRefSetMipmapFilterMode(CUtexref t, CUfilter_mode m)
{
	return set_u(t, XGPUIF_TR_MIP_FILTER, 0, (uint32_t)m, 0);
}

CUresult cuTexRefSetBorderColor(CUtexref t, float *c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	return set_f(t, XGPUIF_TR_BORDER, c, 4);
}

CUresult cuTexRefSetMipmapLevelBias(CUtexref t, float bias)
{
	return set_f(t, XGPUIF_TR_MIP_BIAS, &bias, 1);
}

CUresult cuTexRefSetMipmapLevelClamp(CUtexref t, float lo, float hi)
{
	float f[2] = { lo, hi };

	return set_f(t, XGPUIF_TR_MIP_CLAMP, f, 2);
}

/* ---- reading ---------------------------------------------------------- */

static CUresult get(const void *ref, uint32_t what, uint32_t index,
		    const void *out, struct xgpuif_texref_get_reply *r)
{
	bool surf = what == XGPUIF_TR_SURF_ARRAY;
	struct xgpuif_texref_get_args a = { 0, what, index };

	XGPULIB_CHECK_ARGS(out, ref_remote(ref, surf));
	a.ref = ref_remote(ref, surf);
	memset(r, 0, sizeof(*r));
	return xgpulib_call_TEXREF_GET(&a, r);
}

CUresult cuTexRefGetAddress_v2(CUdeviceptr *dptr, CUtexref t)
{
	struct xgpuif_texref_get_reply r;
	CUresult rc = get(t, XGPUIF_TR_ADDRESS, 0, dptr, &r);

	if (rc == CUDA_SUCCESS)
		*dptr = r.dptr;
	return rc;
}

/* the array bound (what: XGPUIF_TR_ARRAY or XGPUIF_TR_SURF_ARRAY) */
static CUresult get_array(const void *ref, uint32_t what, CUarray *arr)
{
	struct xgpuif_texref_get_reply r;
	CUresult rc = get(ref, what, 0, arr, &r);

	if (rc == CUDA_SUCCESS)
		*arr = xgpulib_array_by_remote(r.array);
	return rc;
}

CUresult cuTexRefGetArray(CUarray *arr, CUtexref t)
{
	return get_array(t, XGPUIF_TR_ARRAY, arr);
}

CUresult cuSurfRefGetArray(CUarray *arr, CUsurfref s)
{
	return get_array(s, XGPUIF_TR_SURF_ARRAY, arr);
}

CUresult cuTexRefGetMipmappedArray(CUmipmappedArray *m, CUtexref t)
{
	struct xgpuif_texref_get_reply r;
	CUresult rc = get(t, XGPUIF_TR_MIPMAP, 0, m, &r);

	if (rc == CUDA_SUCCESS)
		*m = xgpulib_mipmap_by_remote(r.array);
	return rc;
}

CUresult cuTexRefGetFormat(CUarray_format *f, int *n, CUtexref t)
{
	struct xgpuif_texref_get_reply r;
	CUresult rc;

	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	rc = get(t, XGPUIF_TR_FORMAT, 0, f, &r);
	if (rc == CUDA_SUCCESS) {
		*f = (CUarray_format)r.u[0];
		*n = (int)r.u[1];
	}
	return rc;
}

/* a property of one 32-bit value */
static CUresult get_u(const void *ref, uint32_t what, uint32_t index,
		      uint32_t *out)
{
	struct xgpuif_texref_get_reply r;
	CUresult rc = get(ref, what, index, out, &r);

	if (rc == CUDA_SUCCESS)
		*out = r.u[0];
	return rc;
}

CUresult cuTexRefGetFilterMode(CUfilter_mode *m, CUtexref t)
{
	_Static_assert(sizeof(*m) == sizeof(uint32_t), "enum size");
	return get_u(t, XGPUIF_TR_FILTER, 0, (uint32_t *)m);
}

CUresult cuTexRefGetAddressMode(CUaddress_mode *m, CUtexref t, int dim)
{
	_Static_assert(sizeof(*m) == sizeof(uint32_t), "enum size");
	return get_u(t, XGPUIF_TR_ADDR_MODE, (uint32_t)dim, (uint32_t *)m);
}

CUresult cuTexRefGetFlags(unsigned int *flags, CUtexref t)
{
	return get_u(t, XGPUIF_TR_FLAGS, 0, flags);
}

CUresult cuTexRefGetMaxAnisotropy(int *n, CUtexref t)
{
	return get_u(t, XGPUIF_TR_ANISO, 0, (uint32_t *)n);
}

CUresult cuTexRefGetMipmapFilterMode(CUfilter_mode *m, CUtexref t)
{
	return get_u(t, XGPUIF_TR_MIP_FILTER, 0, (uint32_t *)m);
}

/* a property of n floats */
static CUresult get_f(const void *ref, uint32_t what, float *f, int n)
{
	struct xgpuif_texref_get_reply r;
	CUresult rc = get(ref, what, 0, f, &r);

	if (rc == CUDA_SUCCESS)
		memcpy(f, r.f, (size_t)n * sizeof(float));
	return rc;
}

CUresult cuTexRefGetBorderColor(float *c, CUtexref t)
{
	return get_f(t, XGPUIF_TR_BORDER, c, 4);
}

CUresult cuTexRefGetMipmapLevelBias(float *bias, CUtexref t)
{
	return get_f(t, XGPUIF_TR_MIP_BIAS, bias, 1);
}

CUresult cuTexRefGetMipmapLevelClamp(float *lo, float *hi, CUtexref t)
{
	float f[2];
	CUresult rc;

	if (!hi)
		return CUDA_ERROR_INVALID_VALUE;
	rc = get_f(t, XGPUIF_TR_MIP_CLAMP, lo ? f : NULL, 2);
	if (rc == CUDA_SUCCESS) {
		*lo = f[0];
		*hi = f[1];
	}
	return rc;
}

/*
 * The launch API before CUDA 4: bind reference t to function f's texture
 * unit.  The worker's driver judges it (the CUDA 13 driver refuses even
 * CU_PARAM_TR_DEFAULT for a module's own function and reference); a stale
 * reference or function gets CUDA_ERROR_INVALID_HANDLE.
 */
CUresult cuParamSetTexRef(CUfunction f, int texunit, CUtexref t)
{
	struct xgpulib_func *fn = xgpulib_func_check(f);
	struct xgpuif_param_texref_args a = { 0 };

	XGPULIB_CHECK_ARGS(true, fn && ref_remote(t, false));
	a.func = fn->remote;
	a.ref = ref_remote(t, false);
	a.texunit = texunit;
	return xgpulib_call_PARAM_SET_TEXREF(&a);
}
