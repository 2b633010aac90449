// SPDX-License-Identifier: MIT
/*
 * xgpulib_func.c: functions and kernels as objects (struct xgpulib_func,
 * xgpulib.h): the check of a handle, the table by wire handle (graph
 * queries), the attribute cache and the occupancy answers each keeps.
 * Modules and libraries make and free them (xgpulib_api_module.c,
 * xgpulib_api_func.c); launches, graphs and the attribute entry points
 * read them.  It calls no entry point.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_module.h"

struct xgpulib_func *xgpulib_func_check(const void *f)
{
	struct xgpulib_func *p = (struct xgpulib_func *)f;

	if (!p || p->magic != XGPULIB_FUNC_MAGIC)
		return NULL;
	return p;
}

/* ---- functions by wire handle (graph queries) ---------------------------- */

struct fn_ref {
	struct xgpulib_func *f;
	struct fn_ref *next;
};

static pthread_mutex_t fnreg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fn_ref *fnreg[TAB_BUCKETS];

static unsigned int fnreg_bucket(uint64_t remote)
{
	return (unsigned int)((remote * 0x9e3779b97f4a7c15ull) >> 58) %
	       TAB_BUCKETS;
}

void xgpulib_func_note(struct xgpulib_func *f, bool live)
{
	unsigned int b = fnreg_bucket(f->remote);
	struct fn_ref **pp, *r;

	pthread_mutex_lock(&fnreg_mu);
	if (live) {
		r = malloc(sizeof(*r));
		if (r) {
			r->f = f;
			r->next = fnreg[b];
			fnreg[b] = r;
		}
	} else {
		for (pp = &fnreg[b]; *pp; pp = &(*pp)->next) {
			if ((*pp)->f == f) {
				r = *pp;
				*pp = r->next;
				free(r);
				break;
			}
		}
	}
	pthread_mutex_unlock(&fnreg_mu);
}

struct xgpulib_func *xgpulib_func_by_remote(uint64_t remote, uint32_t kind)
{
	struct xgpulib_func *f = NULL;

	pthread_mutex_lock(&fnreg_mu);
	for (struct fn_ref *r = fnreg[fnreg_bucket(remote)]; r && !f;
	     r = r->next)
		if (r->f->remote == remote && r->f->kind == kind)
			f = r->f;
	pthread_mutex_unlock(&fnreg_mu);
	return f;
}

/* ---- attributes ---------------------------------------------------------- */

CUresult xgpulib_func_attr(struct xgpulib_func *f, int attr, int *value)
{
	struct xgpuif_func_attr_args a;
	struct xgpuif_func_attrs_reply r;
	CUresult rc = CUDA_SUCCESS;

	if (attr < 0 || (unsigned int)attr >= XGPUIF_NUM_FUNC_ATTRS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&f->attr_mu);
	if (!f->attrs_valid) {
		memset(&a, 0, sizeof(a));
		a.handle = f->remote;
		a.kind = f->kind;
		memset(&r, 0, sizeof(r));
		rc = xgpulib_call_FUNC_GET_ATTRIBUTES(&a, &r);
		if (rc == CUDA_SUCCESS) {
			f->attrs = r;
			f->attrs_valid = true;
		}
	}
	if (rc == CUDA_SUCCESS) {
		if (f->attrs.valid[attr])
			*value = f->attrs.attrs[attr];
		else
			rc = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&f->attr_mu);
	return rc;
}

/* ---- occupancy answers --------------------------------------------------- */

/*
 * The answer depends on the function, its settings and the context's
 * cache configuration only; frameworks ask it before launches (PyTorch:
 * twice per training step), so each function keeps its last few.  A
 * setting that may change it bumps the generation.
 */
static uint64_t occ_gen = 1;

void xgpulib_occupancy_forget(void)
{
	__atomic_add_fetch(&occ_gen, 1, __ATOMIC_ACQ_REL);
}

uint64_t xgpulib_occ_gen(void)
{
	return __atomic_load_n(&occ_gen, __ATOMIC_ACQUIRE);
}

bool xgpulib_occ_cached(struct xgpulib_func *fn, uint32_t bs, uint64_t smem,
		       uint32_t flags, int *out)
{
	uint64_t gen = xgpulib_occ_gen();
	bool hit = false;

	pthread_mutex_lock(&fn->attr_mu);
	for (unsigned int i = 0; i < (sizeof(fn->occ) / sizeof(fn->occ[0])) && !hit; i++) {
		if (fn->occ[i].gen == gen && fn->occ[i].block_size == bs &&
		    fn->occ[i].dyn_smem == smem && fn->occ[i].flags == flags) {
			*out = fn->occ[i].value;
			hit = true;
		}
	}
	pthread_mutex_unlock(&fn->attr_mu);
	return hit;
}

/* gen: the generation before the question was sent */
void xgpulib_occ_keep(struct xgpulib_func *fn, uint64_t gen, uint32_t bs,
		     uint64_t smem, uint32_t flags, int32_t value)
{
	pthread_mutex_lock(&fn->attr_mu);
	fn->occ[fn->occ_next].gen = gen;
	fn->occ[fn->occ_next].block_size = bs;
	fn->occ[fn->occ_next].dyn_smem = smem;
	fn->occ[fn->occ_next].flags = flags;
	fn->occ[fn->occ_next].value = value;
	fn->occ_next = (fn->occ_next + 1) % (sizeof(fn->occ) / sizeof(fn->occ[0]));
	pthread_mutex_unlock(&fn->attr_mu);
}
