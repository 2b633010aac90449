// SPDX-License-Identifier: MIT
/*
 * xgpub_op_green.c: green contexts (CUDA 12.4 and later): a device's SMs
 * as a resource, split into groups, a descriptor of some of them, and a
 * green context made on it.
 *
 * A CUdevResource is a plain struct (no pointer a guest could see), but
 * 92 of its bytes are the driver's own and describe where the resource
 * came from (the split it belongs to, say).  The worker keeps every
 * resource it answered (the last MAX_RESOURCES different ones) and gives
 * the guest its bytes with the driver's own replaced by a token naming
 * the kept one; it takes back only exactly such bytes and hands the kept
 * resource to the driver.  So a split or a descriptor of anything else
 * (an altered resource, one forgotten) is CUDA_ERROR_INVALID_VALUE: never
 * bytes of the guest's making in the driver, and nothing of the worker's
 * memory in the guest.
 *
 * Descriptors and green contexts are driver objects: RESDESC and GREENCTX
 * handles.  cuCtxFromGreenCtx gives a CUcontext that becomes a CTX handle
 * like any other (the dispatcher makes it current for the requests that
 * carry it), marked as the green context's: cuCtxDestroy refuses it and
 * it goes with cuGreenCtxDestroy, which also takes the streams made in it
 * (the driver leaves them unusable; their handles go).  What else is made
 * with it current (memory, modules, functions, events) is the primary
 * context's, as the driver has it, and stays.
 *
 * Scheduling: the GPU scheduler shares the GPU between workers (guests),
 * not between contexts.  A green context's SM partition is the driver's:
 * it bounds where the guest's kernels in that context run, within the
 * share of GPU time the scheduler gives this guest; it gives the guest no
 * SMs of its own against other guests.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

/* resources answered and remembered; far more than a program keeps */
#define MAX_RESOURCES 1024u

/* where the driver's own bytes lie in a CUdevResource */
#define PAD_OFF offsetof(CUdevResource, _internal_padding)
#define PAD_LEN sizeof(((CUdevResource *)0)->_internal_padding)
static const char token_magic[8] = "xgpu-res";

struct res_entry {
	uint64_t token;
	CUdevResource real;
};

struct xgpub_resources {
	uint32_t n, next;
	uint64_t last_token;
	struct res_entry e[MAX_RESOURCES];
};

_Static_assert(sizeof(CUdevResource) == sizeof(struct xgpuif_devres),
	       "CUdevResource travels as its bytes");
_Static_assert(PAD_LEN >= sizeof(token_magic) + sizeof(uint64_t),
	       "a token fits in the driver's bytes");

/*
 * What the guest sees of entry e: the resource with the driver's own
 * bytes replaced by a token, so that nothing of the worker's (were they
 * addresses) reaches the guest.
 */
static void res_wire(const struct res_entry *e, uint8_t *out)
{
	memcpy(out, &e->real, sizeof(e->real));
	memset(out + PAD_OFF, 0, PAD_LEN);
	memcpy(out + PAD_OFF, token_magic, sizeof(token_magic));
	memcpy(out + PAD_OFF + sizeof(token_magic), &e->token,
	       sizeof(e->token));
}

/* hand the driver's resource r to the guest: its bytes in out (one entry
 * per different resource; the oldest is forgotten when full) */
static int res_give(struct xgpub_worker *w, const CUdevResource *r,
		    uint8_t *out)
{
	struct xgpub_resources *s = w->resources;
	struct res_entry *e;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return CUDA_ERROR_OUT_OF_MEMORY;
		w->resources = s;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		if (!memcmp(&s->e[i].real, r, sizeof(*r))) {
			res_wire(&s->e[i], out);
			return 0;
		}
	}
	e = &s->e[s->next];
	e->token = ++s->last_token;
	memcpy(&e->real, r, sizeof(*r));
	s->next = (s->next + 1) % MAX_RESOURCES;
	if (s->n < MAX_RESOURCES)
		s->n++;
	res_wire(e, out);
	return 0;
}

/* the driver's resource behind bytes b the guest sent: only exactly what
 * it was given */
static bool res_take(struct xgpub_worker *w, const uint8_t *b,
		     CUdevResource *r)
{
	const struct xgpub_resources *s = w->resources;
	uint8_t want[XGPUIF_DEVRES_BYTES];
	uint64_t token;

	if (!s || memcmp(b + PAD_OFF, token_magic, sizeof(token_magic)))
		return false;
	memcpy(&token, b + PAD_OFF + sizeof(token_magic), sizeof(token));
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->e[i].token != token)
			continue;
		res_wire(&s->e[i], want);
		if (memcmp(want, b, sizeof(want)))
			return false;
		memcpy(r, &s->e[i].real, sizeof(*r));
		return true;
	}
	return false;
}

void xgpub_green_teardown(struct xgpub_worker *w)
{
	free(w->resources);
	w->resources = NULL;
}

/* put the worker's current context back to c (cuGreenCtx* may move it) */
static void keep_current(struct xgpub_worker *w, CUcontext c)
{
	CUcontext now = NULL;

	if (w->D->cuCtxGetCurrent(&now) == CUDA_SUCCESS && now == c) {
		w->cur = c;
		return;
	}
	if (w->D->cuCtxSetCurrent(c) == CUDA_SUCCESS)
		w->cur = c;
	else
		w->cur = now;
}

/* ---- resources ----------------------------------------------------------- */

XGPUB_HANDLER(DEV_RESOURCE)
{
	struct xgpub_hentry *e;
	CUdevResource res;
	CUdevResourceType type = (CUdevResourceType)a->type;
	bool green = a->of == XGPUIF_DR_GREEN;
	int rc;

	memset(&res, 0, sizeof(res));
	switch (a->of) {
	case XGPUIF_DR_DEVICE:
		if (a->device != 0)
			return CUDA_ERROR_INVALID_DEVICE;
		rc = w->D->cuDeviceGetDevResource(w->dev, &res, type);
		break;
	case XGPUIF_DR_CTX:
	case XGPUIF_DR_GREEN:
		e = xgpub_handle_get(&w->h, a->handle,
				     green ? XGPUB_H_GREENCTX : XGPUB_H_CTX);
		if (!e)
			return green ? CUDA_ERROR_INVALID_HANDLE :
				       CUDA_ERROR_INVALID_CONTEXT;
		rc = green ? w->D->cuGreenCtxGetDevResource(e->obj, &res, type) :
			     w->D->cuCtxGetDevResource(e->obj, &res, type);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (rc)
		return rc;
	return res_give(w, &res, r->res.b);
}

XGPUB_HANDLER(SM_SPLIT)
{
	bool query = a->how & XGPUIF_SPLIT_QUERY;
	bool want_rest = a->how & XGPUIF_SPLIT_REST;
	CUdevResource in, rem, *out;
	unsigned int n = query ? 0 : a->ngroups;
	uint32_t len;
	int rc;

	if (a->how & ~(XGPUIF_SPLIT_QUERY | XGPUIF_SPLIT_REST) ||
	    n > XGPUIF_MAX_DEVRES)
		return CUDA_ERROR_INVALID_VALUE;
	if (rt->cap < ((uint64_t)n + 1) * XGPUIF_DEVRES_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	/* a resource this guest was given, never bytes of its making */
	if (!res_take(w, a->input.b, &in))
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rem, 0, sizeof(rem));
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuDevSmResourceSplitByCount(query ? NULL : out, &n, &in,
					       want_rest ? &rem : NULL,
					       a->flags, a->min_count);
	if (rc == CUDA_SUCCESS && !query && n > a->ngroups)
		rc = CUDA_ERROR_UNKNOWN;	/* more than it was asked for */
	if (rc == CUDA_SUCCESS && query && n > XGPUIF_MAX_DEVRES)
		n = XGPUIF_MAX_DEVRES;	/* as many as one split may ask */
	len = 0;
	for (uint32_t i = 0; rc == CUDA_SUCCESS && !query && i < n; i++) {
		rc = res_give(w, &out[i], rt->p + len);
		len += XGPUIF_DEVRES_BYTES;
	}
	if (rc == CUDA_SUCCESS && want_rest)
		rc = res_give(w, &rem, rt->p + len);
	else
		memset(rt->p + len, 0, XGPUIF_DEVRES_BYTES);
	if (rc) {
		free(out);
		return rc;
	}
	rt->len = len + XGPUIF_DEVRES_BYTES;
	r->ngroups = n;
	free(out);
	return 0;
}

XGPUB_HANDLER(RESDESC_CREATE)
{
	CUdevResourceDesc d = NULL;
	CUdevResource *res;
	int rc;

	if (a->n < 1 || a->n > XGPUIF_MAX_DEVRES ||
	    tail->len != a->n * XGPUIF_DEVRES_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	res = malloc(tail->len);
	if (!res)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < a->n; i++) {
		if (!res_take(w, tail->p + i * XGPUIF_DEVRES_BYTES, &res[i])) {
			free(res);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	rc = w->D->cuDevResourceGenerateDesc(&d, res, a->n);
	free(res);
	if (rc)
		return rc;
	return xgpub_keep(w, XGPUB_H_RESDESC, d, NULL, &r->desc);
}

/* ---- green contexts ------------------------------------------------------ */

XGPUB_HANDLER(GREENCTX_CREATE)
{
	CUcontext saved = w->cur;
	struct xgpub_green *g;
	CUgreenCtx gc = NULL;
	int rc;

	if (a->device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	/* it costs device memory: refused past the quota */
	if (!xgpub_quota_allows(w, XGPUB_GREEN_CHARGE))
		return CUDA_ERROR_OUT_OF_MEMORY;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuGreenCtxCreate(&gc, desc->obj, w->dev, a->flags);
	keep_current(w, saved);
	if (rc) {
		free(g);
		return rc;
	}
	/* a full table releases it, which gives the charge back */
	xgpub_ctx_charge_n(w, (CUcontext)(void *)gc, XGPUB_GREEN_CHARGE,
			   true);
	return xgpub_keep(w, XGPUB_H_GREENCTX, gc, g, &r->green);
}

/* the CUcontext of green context e, asked once */
static int green_ctx(struct xgpub_worker *w, struct xgpub_hentry *e,
		     CUcontext *c)
{
	struct xgpub_green *g = e->extra;
	int rc;

	if (!g->ctx) {
		rc = w->D->cuCtxFromGreenCtx(&g->ctx, e->obj);
		if (rc) {
			g->ctx = NULL;
			return rc;
		}
	}
	*c = g->ctx;
	return 0;
}

int xgpub_green_release(struct xgpub_worker *w, struct xgpub_hentry *e)
{
	struct xgpub_green *g = e->extra;
	CUcontext saved = w->cur, back;
	struct xgpub_hentry *ce;
	/* a context the worker knew before (the primary) is not its own */
	bool own = g && g->ctx && g->ctx != w->primary;
	int rc;

	/* the streams made in it, which the driver leaves unusable:
	 * destroyed now, their handles gone; what else was made in it is
	 * the primary's and stays */
	if (own && w->D->cuCtxSetCurrent(g->ctx) == CUDA_SUCCESS) {
		w->cur = g->ctx;
		xgpub_ctx_green_gone(w, g->ctx);
	}
	if (own)
		xgpub_module_ctx_moved(w, g->ctx, w->primary);
	rc = w->D->cuGreenCtxDestroy(e->obj);
	back = own && saved == g->ctx ? w->primary : saved;
	if (rc) {
		keep_current(w, saved);
		return rc;
	}
	/* its charge, and its context's limits' */
	xgpub_ctx_uncharge(w, (CUcontext)(void *)e->obj);
	if (own)
		xgpub_ctx_uncharge(w, g->ctx);
	if (g && g->ctx_h) {
		ce = xgpub_handle_get(&w->h, g->ctx_h, XGPUB_H_CTX);
		if (ce && ce->extra)
			xgpub_handle_drop(&w->h, ce);
		g->ctx_h = 0;
	}
	if (own && w->cur == g->ctx)
		w->cur = NULL;	/* never compared with a live one */
	keep_current(w, back);
	return 0;
}

XGPUB_HANDLER(CTX_FROM_GREEN)
{
	struct xgpub_green *g = handle->extra;
	CUcontext c;
	int rc;

	if (g->ctx_h && xgpub_handle_get(&w->h, g->ctx_h, XGPUB_H_CTX)) {
		r->ctx = g->ctx_h;
		return 0;
	}
	rc = green_ctx(w, handle, &c);
	if (rc)
		return rc;
	/* a context the worker already names (should the driver answer
	 * the primary itself): that handle, not marked as the green's */
	r->ctx = xgpub_handle_named(&w->h, XGPUB_H_CTX, c);
	if (r->ctx)
		return 0;
	rc = xgpub_keep_owned(w, XGPUB_H_CTX, c, handle, &r->ctx);
	if (rc == 0)
		g->ctx_h = r->ctx;
	return rc;
}

XGPUB_HANDLER(GREENCTX_STREAM)
{
	CUcontext c, saved = w->cur;
	CUstream s = NULL;
	int rc;

	/* the stream is its context's: destroyed with the green context */
	rc = green_ctx(w, green, &c);
	if (rc)
		return rc;
	rc = w->D->cuGreenCtxStreamCreate(&s, green->obj, a->flags,
					  a->priority);
	keep_current(w, saved);
	if (rc)
		return rc;
	r->stream = xgpub_owned_handle(w, XGPUB_H_STREAM, s, c);
	return r->stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
