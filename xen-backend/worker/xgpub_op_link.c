// SPDX-License-Identifier: MIT
/*
 * xgpub_op_link.c: JIT linking (cuLinkCreate, cuLinkAddData, cuLinkComplete,
 * cuLinkDestroy).  The inputs arrive as blobs, as module images do; the
 * linked image stays the driver's until cuLinkDestroy and the guest reads
 * it in pieces (LINK_READ), then loads it like any image.  Only numeric
 * JIT options travel (log buffers are the guest's, as for loads).
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

XGPUB_HANDLER(LINK_CREATE)
{
	CUjit_option opt[XGPUIF_MAX_LOAD_OPTS];
	void *val[XGPUIF_MAX_LOAD_OPTS];
	struct xgpub_link *x;
	CUlinkState st;
	int rc;

	if (a->njit > XGPUIF_MAX_LOAD_OPTS ||
	    tail->len != a->njit * sizeof(struct xgpuif_load_opt))
		return XGPUIF_ST_PROTO;
	for (uint32_t i = 0; i < a->njit; i++) {
		struct xgpuif_load_opt lo;

		memcpy(&lo, tail->p + i * sizeof(lo), sizeof(lo));
		if (!xgpuif_jit_option_numeric(lo.id))
			return CUDA_ERROR_INVALID_VALUE;
		opt[i] = (CUjit_option)lo.id;
		val[i] = (void *)(uintptr_t)lo.value;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuLinkCreate_v2(a->njit, opt, val, &st);
	return xgpub_keep_made(w, rc, XGPUB_H_LINK, st, x, &r->link);
}

XGPUB_HANDLER(LINK_ADD)
{
	char name[XGPUIF_MAX_LINK_NAME + 1];
	struct xgpub_image *img;
	int rc;

	if (a->namelen > XGPUIF_MAX_LINK_NAME || tail->len != a->namelen)
		return XGPUIF_ST_PROTO;
	memcpy(name, tail->p, a->namelen);
	name[a->namelen] = 0;
	rc = xgpub_take_blob(w, a->blob, &img);
	if (rc)
		return rc;
	/* the linker has its copy when this returns */
	rc = w->D->cuLinkAddData_v2(link->obj, (CUjitInputType)a->type,
				    img->data, img->size, name, 0, NULL, NULL);
	free(img);
	return rc;
}

XGPUB_HANDLER(LINK_COMPLETE)
{
	struct xgpub_link *x = handle->extra;
	void *cubin = NULL;
	size_t size = 0;
	int rc;

	rc = w->D->cuLinkComplete(handle->obj, &cubin, &size);
	if (rc)
		return rc;
	x->cubin = cubin;
	x->size = size;
	r->size = size;
	return 0;
}

XGPUB_HANDLER(LINK_READ)
{
	struct xgpub_link *x = link->extra;
	uint64_t n;

	(void)w;
	if (!x->cubin)
		return CUDA_ERROR_INVALID_VALUE;	/* not completed */
	if (a->off > x->size)
		return CUDA_ERROR_INVALID_VALUE;
	n = x->size - a->off;
	if (n > rt->cap)
		n = rt->cap;
	memcpy(rt->p, (const uint8_t *)x->cubin + a->off, n);
	rt->len = (uint32_t)n;
	r->len = (uint32_t)n;
	return 0;
}
