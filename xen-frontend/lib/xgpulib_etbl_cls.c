/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_etbl_cls.c: the export table CONTEXT_LOCAL_STORAGE
 * (xgpulib_etbl.c serves it), where cudart keeps its per-context state.
 *
 * Locking: cls_mu protects the array (cls_v, cls_n, cls_cap).
 * Destructors run without it.
 */
#include <pthread.h>
#include <string.h>

#include <cuda.h>

#include "xgpulib_etbl.h"
#include "xgpulib_vec.h"

/*
 * cudart keeps its per-context state here, keyed by a pointer of its own,
 * and reads it back on nearly every runtime call.  The destructor runs when
 * the context goes away (xgpulib_cls_release_ctx), not on delete: whoever
 * deletes a key owns its value.
 */
struct cls_entry {
	CUcontext ctx;
	void *key;
	void *value;
	xgpulib_cls_dtor_fn dtor;
};

static pthread_mutex_t cls_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cls_entry *cls_v;	/* in insertion order */
static size_t cls_n, cls_cap;

/* cls_mu held */
static struct cls_entry *cls_find(CUcontext ctx, void *key)
{
	size_t i;

	for (i = 0; i < cls_n; i++)
		if (cls_v[i].ctx == ctx && cls_v[i].key == key)
			return &cls_v[i];
	return NULL;
}

/*
 * Resolve *ctx (NULL: the calling thread's current context), then take
 * cls_mu and find key's entry there (*e, NULL if none).  cls_mu is held
 * on success only.
 */
static CUresult cls_lock_find(CUcontext *ctx, void *key, struct cls_entry **e)
{
	const struct xgpulib_identity_ops *ops;

	if (!*ctx) {
		ops = xgpulib_etbl_ops();
		if (ops && ops->current_ctx)
			*ctx = ops->current_ctx();
	}
	if (!*ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&cls_mu);
	*e = cls_find(*ctx, key);
	return CUDA_SUCCESS;
}

/* cls_mu held */
static void cls_remove(struct cls_entry *e)
{
	size_t i = (size_t)(e - cls_v);

	memmove(e, e + 1, (cls_n - i - 1) * sizeof(*e));
	cls_n--;
}

/* Slot 0: set (or replace) the value and destructor of key in ctx */
CUresult xgpulib_cls_put(CUcontext ctx, void *key, void *value,
			 xgpulib_cls_dtor_fn dtor)
{
	struct cls_entry *e;
	CUresult rc = cls_lock_find(&ctx, key, &e);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!e) {
		e = xgpulib_vec_grow(cls_v, cls_n, &cls_cap, sizeof(*e), 16);
		if (!e) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		cls_v = e;
		e = &cls_v[cls_n++];
		e->ctx = ctx;
		e->key = key;
	}
	e->value = value;
	e->dtor = dtor;
out:
	pthread_mutex_unlock(&cls_mu);
	return rc;
}

/* Slot 1: forget key in ctx; a key that is not there is already gone */
CUresult xgpulib_cls_delete(CUcontext ctx, void *key)
{
	struct cls_entry *e;
	CUresult rc = cls_lock_find(&ctx, key, &e);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (e)
		cls_remove(e);
	pthread_mutex_unlock(&cls_mu);
	return CUDA_SUCCESS;
}

/*
 * Slot 2: the value of key in ctx.  cudart probes with it before it has a
 * context (expects CUDA_ERROR_INVALID_CONTEXT) and before it has stored
 * anything (expects CUDA_ERROR_INVALID_HANDLE), as the real driver answers.
 */
CUresult xgpulib_cls_get(void **value, CUcontext ctx, void *key)
{
	struct cls_entry *e;
	CUresult rc;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cls_lock_find(&ctx, key, &e);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (e)
		*value = e->value;
	else
		rc = CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&cls_mu);
	return rc;
}

/*
 * Newest first, one at a time and unlocked around each destructor, which
 * may well call back into the runtime (and into this storage).
 */
void xgpulib_cls_release_ctx(CUcontext ctx)
{
	struct cls_entry e;
	size_t i;
	int found;

	if (!ctx)
		return;
	for (;;) {
		found = 0;
		pthread_mutex_lock(&cls_mu);
		for (i = cls_n; i-- > 0;) {
			if (cls_v[i].ctx == ctx) {
				e = cls_v[i];
				cls_remove(&cls_v[i]);
				found = 1;
				break;
			}
		}
		pthread_mutex_unlock(&cls_mu);
		if (!found)
			break;
		if (e.dtor)
			e.dtor(ctx, e.key, e.value);
	}
}
