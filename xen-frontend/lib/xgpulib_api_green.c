// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_green.c: green contexts: SM resources, their split, resource
 * descriptors, green contexts and their context, events and id
 * (cuGreenCtxStreamCreate and cuStreamGetGreenCtx are with the streams).
 *
 * A CUdevResource is the bytes the worker answered (the driver's, with
 * the driver's own bytes replaced by a token of the worker's), copied
 * whole; the program hands them back and they travel unchanged (the
 * worker takes back only resources it gave).  A CUdevResourceDesc is
 * the descriptor's wire handle itself (never dereferenced here; the
 * driver has no destroy for it, and the worker refuses a forged one).  A
 * CUgreenCtx points at a struct CUgreenCtx_st: malloc'ed once and, when
 * destroyed, kept on a free list (magic cleared) so that a stale handle
 * is refused without touching freed memory.  Its context, made by
 * cuCtxFromGreenCtx, is a context like any other (xgpulib_api_ctx.c),
 * until the green context goes.
 *
 * The SM partition is the driver's, inside the worker: the GPU scheduler
 * shares the GPU between guests, and a green context's SMs bound this
 * guest's kernels within its own share.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"
#include "xgpulib_etbl.h"

#define XGPULIB_GREEN_MAGIC 0x78677263u	/* "xgrc" */

_Static_assert(sizeof(CUdevResource) == XGPUIF_DEVRES_BYTES,
	       "CUdevResource travels as its bytes");

struct CUgreenCtx_st {
	uint32_t magic;
	CUdevice dev;
	uint64_t remote;
	uint64_t id;			/* cuGreenCtxGetId */
	struct CUctx_st *ctx;		/* cuCtxFromGreenCtx's; green_mu */
	struct CUgreenCtx_st *next;	/* live or free list; green_mu */
};

static pthread_mutex_t green_mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUgreenCtx_st *live_greens, *free_greens;
static uint64_t next_green_id = 1;

/* g if it is a live green context of ours (compared, not dereferenced,
 * until found) */
static struct CUgreenCtx_st *green_check(CUgreenCtx g)
{
	struct CUgreenCtx_st *p;

	if (!g)
		return NULL;
	pthread_mutex_lock(&green_mu);
	for (p = live_greens; p && p != g; p = p->next)
		;
	pthread_mutex_unlock(&green_mu);
	return p;
}

/* ---- resources ----------------------------------------------------------- */

static CUresult dev_resource(uint32_t of, uint64_t handle, CUdevice dev,
			     CUdevResource *res, CUdevResourceType type)
{
	struct xgpuif_devres_args a = {
		.handle = handle, .of = of, .type = (uint32_t)type,
		.device = dev,
	};
	struct xgpuif_devres_reply r;
	CUresult rc;

	memset(&r, 0, sizeof(r));
	rc = xgpulib_call_DEV_RESOURCE(&a, &r);
	if (rc == CUDA_SUCCESS)
		memcpy(res, r.res.b, sizeof(*res));
	return rc;
}

XGPULIB_EXPORT CUresult cuDeviceGetDevResource(CUdevice device,
					       CUdevResource *resource,
					       CUdevResourceType type)
{
	CUresult rc;

	XGPULIB_CHECK_ARGS(resource, true);
	rc = xgpulib_check_dev(device);
	if (rc)
		return rc;
	return dev_resource(XGPUIF_DR_DEVICE, 0, device, resource, type);
}

XGPULIB_EXPORT CUresult cuCtxGetDevResource(CUcontext hCtx,
					    CUdevResource *resource,
					    CUdevResourceType type)
{
	struct CUctx_st *c;
	uint64_t remote;
	CUresult rc;

	XGPULIB_CHECK_ARGS(resource, true);
	rc = xgpulib_ctx_remote_of(hCtx, &c, &remote);
	if (rc)
		return rc;
	return dev_resource(XGPUIF_DR_CTX, remote, c->dev, resource, type);
}

XGPULIB_EXPORT CUresult cuGreenCtxGetDevResource(CUgreenCtx hCtx,
						 CUdevResource *resource,
						 CUdevResourceType type)
{
	struct CUgreenCtx_st *g = green_check(hCtx);

	XGPULIB_CHECK_ARGS(resource, g);
	return dev_resource(XGPUIF_DR_GREEN, g->remote, g->dev, resource,
			    type);
}

/*
 * More groups than XGPUIF_MAX_DEVRES are never made (no GPU has that
 * many SMs): a larger *nbGroups asks for as many as the driver makes.
 */
XGPULIB_EXPORT CUresult cuDevSmResourceSplitByCount(CUdevResource *result,
						    unsigned int *nbGroups,
						    const CUdevResource *input,
						    CUdevResource *remaining,
						    unsigned int useFlags,
						    unsigned int minCount)
{
	struct xgpuif_sm_split_args a;
	struct xgpuif_sm_split_reply r = { 0, 0 };
	uint32_t n, cap, got = 0, groups;
	uint8_t *buf;
	CUresult rc;

	XGPULIB_CHECK_ARGS(nbGroups && input, true);
	memset(&a, 0, sizeof(a));
	memcpy(a.input.b, input, sizeof(*input));
	a.how = (result ? 0 : XGPUIF_SPLIT_QUERY) |
		(remaining ? XGPUIF_SPLIT_REST : 0);
	n = result ? (*nbGroups < XGPUIF_MAX_DEVRES ? *nbGroups :
						       XGPUIF_MAX_DEVRES) : 0;
	a.ngroups = n;
	a.flags = useFlags;
	a.min_count = minCount;
	cap = (n + 1) * XGPUIF_DEVRES_BYTES;
	buf = malloc(cap);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_SM_SPLIT(&a, &r, buf, cap, &got);
	groups = result ? r.ngroups : 0;
	if (rc == CUDA_SUCCESS &&
	    (groups > n || got != (groups + 1) * XGPUIF_DEVRES_BYTES))
		rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS) {
		if (result)
			memcpy(result, buf, groups * XGPUIF_DEVRES_BYTES);
		if (remaining)
			memcpy(remaining, buf + groups * XGPUIF_DEVRES_BYTES,
			       sizeof(*remaining));
		*nbGroups = r.ngroups;
	}
	free(buf);
	return rc;
}

XGPULIB_EXPORT CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *phDesc,
						  CUdevResource *resources,
						  unsigned int nbResources)
{
	struct xgpuif_resdesc_args a = { nbResources, 0 };
	struct xgpuif_resdesc_reply r = { 0 };
	struct xgpuif_iov iov;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!phDesc || !resources || nbResources == 0 ||
	    nbResources > XGPUIF_MAX_DEVRES)
		return CUDA_ERROR_INVALID_VALUE;
	iov.base = resources;
	iov.len = nbResources * XGPUIF_DEVRES_BYTES;
	rc = xgpulib_call_RESDESC_CREATE(&a, &iov, 1, &r);
	if (rc == CUDA_SUCCESS && !r.desc)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS)
		*phDesc = (CUdevResourceDesc)(uintptr_t)r.desc;
	return rc;
}

/* ---- green contexts ------------------------------------------------------ */

XGPULIB_EXPORT CUresult cuGreenCtxCreate(CUgreenCtx *phCtx,
					 CUdevResourceDesc desc, CUdevice dev,
					 unsigned int flags)
{
	struct xgpuif_green_create_args a = {
		(uint64_t)(uintptr_t)desc, dev, flags
	};
	struct xgpuif_green_reply r = { 0 };
	struct CUgreenCtx_st *g;
	CUresult rc;

	XGPULIB_CHECK_ARGS(phCtx && desc, true);
	rc = xgpulib_check_dev(dev);
	if (rc)
		return rc;
	pthread_mutex_lock(&green_mu);
	g = free_greens;
	if (g)
		free_greens = g->next;
	pthread_mutex_unlock(&green_mu);
	if (!g)
		g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_GREENCTX_CREATE(&a, &r);
	if (rc == CUDA_SUCCESS && !r.green)
		rc = CUDA_ERROR_UNKNOWN;
	pthread_mutex_lock(&green_mu);
	if (rc) {
		g->next = free_greens;
		free_greens = g;
	} else {
		g->dev = dev;
		g->remote = r.green;
		g->id = next_green_id++;
		g->ctx = NULL;
		g->magic = XGPULIB_GREEN_MAGIC;
		g->next = live_greens;
		live_greens = g;
		*phCtx = g;
	}
	pthread_mutex_unlock(&green_mu);
	return rc;
}

XGPULIB_EXPORT CUresult cuGreenCtxDestroy(CUgreenCtx hCtx)
{
	struct xgpuif_handle_args a;
	struct CUgreenCtx_st *g, **pp;
	struct CUctx_st *c;
	CUresult rc;

	g = green_check(hCtx);
	XGPULIB_CHECK_ARGS(true, g);
	pthread_mutex_lock(&green_mu);
	c = g->ctx;
	pthread_mutex_unlock(&green_mu);
	/* its context's local storage destructors first: they may use it */
	if (c)
		xgpulib_cls_release_ctx(c);
	a.handle = g->remote;
	rc = xgpulib_call_GREENCTX_DESTROY(&a);
	if (rc)
		return rc;
	pthread_mutex_lock(&green_mu);
	for (pp = &live_greens; *pp; pp = &(*pp)->next) {
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	}
	c = g->ctx;
	g->ctx = NULL;
	g->magic = 0;
	g->next = free_greens;
	free_greens = g;
	pthread_mutex_unlock(&green_mu);
	/* a thread where its context is still current finds it destroyed */
	if (c)
		xgpulib_ctx_green_gone(c);
	return CUDA_SUCCESS;
}

CUresult xgpulib_green_ctx(CUgreenCtx hCtx, CUcontext *ctx)
{
	struct xgpuif_handle_args a;
	struct xgpuif_ctx_reply r = { 0 };
	struct CUgreenCtx_st *g;
	CUresult rc = CUDA_SUCCESS;

	g = green_check(hCtx);
	if (!g)
		return CUDA_ERROR_INVALID_HANDLE;
	/* held across the call: one context per green context */
	pthread_mutex_lock(&green_mu);
	if (!g->ctx) {
		a.handle = g->remote;
		rc = xgpulib_call_CTX_FROM_GREEN(&a, &r);
		if (rc == CUDA_SUCCESS && !r.ctx)
			rc = CUDA_ERROR_UNKNOWN;
		if (rc == CUDA_SUCCESS) {
			g->ctx = xgpulib_ctx_green_new(g->dev, r.ctx, g);
			if (!g->ctx)
				rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	if (rc == CUDA_SUCCESS)
		*ctx = g->ctx;
	pthread_mutex_unlock(&green_mu);
	return rc;
}

uint64_t xgpulib_green_remote(CUgreenCtx g)
{
	return g->remote;
}

XGPULIB_EXPORT CUresult cuCtxFromGreenCtx(CUcontext *pContext, CUgreenCtx hCtx)
{
	XGPULIB_CHECK_ARGS(pContext, true);
	return xgpulib_green_ctx(hCtx, pContext);
}

/* cuGreenCtxRecordEvent (wait 0), cuGreenCtxWaitEvent (wait 1):
 * xgpulib_entry.def */
CUresult xgpulib_green_event(CUgreenCtx hCtx, CUevent ev, int wait)
{
	struct xgpuif_ctx_event_args a = { .wait = (uint32_t)wait };
	struct CUgreenCtx_st *g = green_check(hCtx);

	XGPULIB_CHECK_ARGS(true, g && ev && ev->magic == XGPULIB_EVENT_MAGIC);
	a.ctx = g->remote;
	a.event = ev->remote;
	return xgpulib_call_GREENCTX_EVENT(&a);
}

/* NULL: the green context of the current context, if it is one */
XGPULIB_EXPORT CUresult cuGreenCtxGetId(CUgreenCtx greenCtx,
					unsigned long long *greenCtxId)
{
	struct CUgreenCtx_st *g;
	struct CUctx_st *c;
	CUresult rc;

	XGPULIB_CHECK_ARGS(greenCtxId, true);
	if (!greenCtx) {
		rc = xgpulib_ctx_current(&c);
		if (rc)
			return rc;
		if (!c->green)
			return CUDA_ERROR_INVALID_CONTEXT;
		greenCtx = c->green;
	}
	g = green_check(greenCtx);
	if (!g)
		return CUDA_ERROR_INVALID_HANDLE;
	*greenCtxId = g->id;
	return CUDA_SUCCESS;
}
