// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_ctx.c: contexts: primary contexts, created contexts, the
 * per-thread context stack, and the queries about the context itself
 * (xgpulib_api_ctxmisc.c: those the worker's context answers).
 *
 * The worker keeps one primary context per guest process for its whole
 * life (it retained it at start) and names it by a fixed handle; a guest's
 * retains and releases are counted here and in the worker, which mirrors
 * each of them on the real driver.  What "the primary is inactive" means
 * for the guest is therefore decided here: refcount 0.
 *
 * Context handles handed to the program are pointers to struct ctx_node
 * (whose first member is the struct CUctx_st of xgpulib.h): primaries live
 * in a static array, created contexts are malloc'ed once and, when
 * destroyed, kept on a free list instead of being freed, so that a stale
 * handle still current in some thread never points at freed memory.  Such
 * a handle keeps its old remote handle, which the worker refuses
 * (generation) with CUDA_ERROR_INVALID_CONTEXT.
 *
 * Locking: ctx_mu guards the primaries' refcounts and flags, and the live
 * and free lists.  `remote` is read without the lock by every request
 * (xgpulib_current_remote), so it is written and read atomically.  The
 * context stack is thread-local and needs no lock.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cudaProfiler.h>

#include "xgpulib.h"
#include "xgpulib_etbl.h"

#define MAX_DEVS	64

/*
 * cuCtxGetApiVersion: the documented values are context ABI versions
 * (3010, 3020), not driver versions; every context made by a driver since
 * CUDA 3.2 answers 3020, and so does the real driver today.
 */
#define CTX_API_VERSION	3020u

struct ctx_node {
	struct CUctx_st c;	/* first: a CUcontext points here */
	uint64_t id;		/* cuCtxGetId */
	int usage;		/* cuCtxAttach/cuCtxDetach; guarded by
				 * ctx_mu */
	/* a primary's flags as the worker last said (cudart asks for its
	 * state before most calls: dozens of times per PyTorch step);
	 * guarded by ctx_mu, forgotten by whatever may change them */
	bool state_known;
	unsigned int state_flags;
	struct ctx_node *next;	/* on the live list or the free list */
};

static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ctx_node primaries[MAX_DEVS];
static pthread_once_t prim_once = PTHREAD_ONCE_INIT;
static struct ctx_node *live_ctxs;	/* created, not destroyed */
static struct ctx_node *free_ctxs;	/* destroyed, for reuse */
static uint64_t next_ctx_id = MAX_DEVS + 1;	/* primaries use 1..64 */

static void prim_init(void)
{
	for (int i = 0; i < MAX_DEVS; i++) {
		primaries[i].c.magic = XGPULIB_CTX_MAGIC;
		primaries[i].c.primary = 1;
		primaries[i].c.dev = i;
		primaries[i].id = (uint64_t)i + 1;
	}
}

static inline uint64_t ctx_remote(const struct CUctx_st *c)
{
	return __atomic_load_n(&c->remote, __ATOMIC_ACQUIRE);
}

static inline void ctx_set_remote(struct CUctx_st *c, uint64_t h)
{
	__atomic_store_n(&c->remote, h, __ATOMIC_RELEASE);
}

/* ---- helpers for the rest of the library --------------------------------- */

struct CUctx_st *xgpulib_primary(CUdevice dev)
{
	if (dev < 0 || dev >= MAX_DEVS || dev >= xgpulib_ndev)
		return NULL;
	pthread_once(&prim_once, prim_init);
	return &primaries[dev].c;
}

struct CUctx_st *xgpulib_ctx_check(CUcontext ctx)
{
	struct ctx_node *n = (struct ctx_node *)ctx;
	struct CUctx_st *found = NULL;

	if (!ctx)
		return NULL;
	/* a primary: inside the array, on an element boundary */
	if ((uintptr_t)n >= (uintptr_t)&primaries[0] &&
	    (uintptr_t)n < (uintptr_t)&primaries[MAX_DEVS]) {
		if (((uintptr_t)n - (uintptr_t)&primaries[0]) % sizeof(*n))
			return NULL;
		pthread_once(&prim_once, prim_init);
		return n->c.dev < xgpulib_ndev ? &n->c : NULL;
	}
	/* a created context: only pointers on the live list are compared,
	 * never dereferenced before they are found there */
	pthread_mutex_lock(&ctx_mu);
	for (struct ctx_node *p = live_ctxs; p; p = p->next) {
		if (p == n) {
			found = &p->c;
			break;
		}
	}
	pthread_mutex_unlock(&ctx_mu);
	return found;
}

CUresult xgpulib_ctx_current(struct CUctx_st **out)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	*out = xgpulib_current();
	if (!*out)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!xgpulib_ctx_check(*out))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	return CUDA_SUCCESS;
}

CUresult xgpulib_ctx_remote_of(CUcontext ctx, struct CUctx_st **out,
			       uint64_t *remote)
{
	struct CUctx_st *c;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx) {
		c = xgpulib_ctx_check(ctx);
		if (!c)
			return CUDA_ERROR_INVALID_CONTEXT;
	} else {
		rc = xgpulib_ctx_current(&c);
		if (rc)
			return rc;
	}
	if (out)
		*out = c;
	*remote = __atomic_load_n(&c->remote, __ATOMIC_ACQUIRE);
	/* a primary context nobody retained */
	return *remote ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- local helpers ------------------------------------------------------- */

/*
 * The context a call is about: ctx, or the current context when ctx is
 * NULL; out_ok says whether its output arguments are given.
 */
static CUresult ctx_arg(CUcontext ctx, bool out_ok, struct CUctx_st **out)
{
	CUresult rc = xgpulib_query_arg(out_ok);

	if (rc)
		return rc;
	if (!ctx)
		return xgpulib_ctx_current(out);
	*out = xgpulib_ctx_check(ctx);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static struct ctx_node *prim_node(CUdevice dev)
{
	return (struct ctx_node *)xgpulib_primary(dev);
}

/* ---- primary contexts ---------------------------------------------------- */

/* the primary of a valid device */
static CUresult prim_arg(CUdevice dev, struct ctx_node **p)
{
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	*p = prim_node(dev);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* ctx_mu held */
static void prim_state_forget_locked(void)
{
	for (int i = 0; i < MAX_DEVS; i++)
		primaries[i].state_known = false;
}

void xgpulib_prim_state_forget(void)
{
	pthread_mutex_lock(&ctx_mu);
	prim_state_forget_locked();
	pthread_mutex_unlock(&ctx_mu);
}

static int prim_refcount(struct ctx_node *p)
{
	int n;

	pthread_mutex_lock(&ctx_mu);
	n = p->c.refcount;
	pthread_mutex_unlock(&ctx_mu);
	return n;
}

/*
 * The guest's primary is gone (last release, or reset): its context-local
 * storage destructors run, unlocked since they may call back into CUDA
 * with the handle still usable; then, unless somebody retained it
 * meanwhile, requests stop carrying its wire handle.
 */
static void prim_gone(struct ctx_node *p)
{
	xgpulib_cls_release_ctx(&p->c);
	pthread_mutex_lock(&ctx_mu);
	if (p->c.refcount == 0)
		ctx_set_remote(&p->c, 0);
	pthread_mutex_unlock(&ctx_mu);
}

XGPULIB_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx,
						 CUdevice dev)
{
	struct xgpuif_device_args a = { dev, 0 };
	struct xgpuif_ctx_reply r = { 0 };
	struct ctx_node *p;
	CUresult rc;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = prim_arg(dev, &p);
	if (rc)
		return rc;
	/* held across the call: guest and worker counts move together */
	pthread_mutex_lock(&ctx_mu);
	if (p->c.refcount == INT_MAX) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	prim_state_forget_locked();
	rc = xgpulib_call_PRIMARY_CTX_RETAIN(&a, &r);
	if (rc == CUDA_SUCCESS && !r.ctx)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc)
		goto out;
	p->c.refcount++;
	ctx_set_remote(&p->c, r.ctx);
	*pctx = &p->c;
out:
	pthread_mutex_unlock(&ctx_mu);
	return rc;
}

/*
 * The last release resets the primary context in CUDA: its context-local
 * storage destructors run and later use of the handle fails until it is
 * retained again (requests then carry no context and the worker's driver
 * answers CUDA_ERROR_INVALID_CONTEXT).  The worker's own primary stays
 * alive, so the guest's allocations survive; nobody can tell.
 */
XGPULIB_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	struct xgpuif_device_args a = { dev, 0 };
	struct ctx_node *p;
	CUresult rc;
	int last = 0;

	rc = prim_arg(dev, &p);
	if (rc)
		return rc;
	pthread_mutex_lock(&ctx_mu);
	prim_state_forget_locked();
	if (p->c.refcount == 0)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	else
		rc = xgpulib_call_PRIMARY_CTX_RELEASE(&a);
	if (rc == CUDA_SUCCESS)
		last = --p->c.refcount == 0;
	pthread_mutex_unlock(&ctx_mu);
	if (last)
		prim_gone(p);
	return rc;
}

/*
 * Reset keeps the retain count (CUDA: "resetting the primary context does
 * not release it").  The worker only synchronizes: see xgpub_op_ctx.c.
 * Errors of earlier posted work belong to the state being reset and are
 * dropped with it.
 */
XGPULIB_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	struct xgpuif_device_args a = { dev, 0 };
	struct ctx_node *p;
	CUresult rc;

	rc = prim_arg(dev, &p);
	if (!rc) {
		xgpulib_prim_state_forget();
		rc = xgpulib_call_PRIMARY_CTX_RESET(&a);
	}
	if (rc)
		return rc;
	(void)xgpulib_take_deferred();
	prim_gone(p);
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev,
						      unsigned int flags)
{
	struct xgpuif_dev_flags_args a = { dev, flags };
	struct ctx_node *p;
	CUresult rc;

	rc = prim_arg(dev, &p);
	if (rc)
		return rc;
	pthread_mutex_lock(&ctx_mu);
	prim_state_forget_locked();
	rc = xgpulib_call_PRIMARY_CTX_SET_FLAGS(&a);
	if (rc == CUDA_SUCCESS)
		p->c.flags = flags;
	pthread_mutex_unlock(&ctx_mu);
	return rc;
}

/* the CUDA 7.0 ABI refused to change the flags of an active primary */
#undef cuDevicePrimaryCtxSetFlags
XGPULIB_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev,
						   unsigned int flags);
XGPULIB_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev,
						   unsigned int flags)
{
	struct ctx_node *p;
	CUresult rc = prim_arg(dev, &p);

	if (rc)
		return rc;
	if (prim_refcount(p) > 0)
		return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
	return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

XGPULIB_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev,
						   unsigned int *flags,
						   int *active)
{
	struct xgpuif_device_args a = { dev, 0 };
	struct xgpuif_ctx_state_reply r = { 0 };
	struct ctx_node *p;
	CUresult rc;

	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	rc = prim_arg(dev, &p);
	if (rc)
		return rc;
	pthread_mutex_lock(&ctx_mu);
	if (p->state_known) {
		r.flags = p->state_flags;
	} else {
		rc = xgpulib_call_PRIMARY_CTX_GET_STATE(&a, &r);
		if (rc == CUDA_SUCCESS) {
			p->state_flags = r.flags;
			p->state_known = true;
		}
	}
	pthread_mutex_unlock(&ctx_mu);
	if (rc)
		return rc;
	*flags = r.flags;
	/* the worker's primary is always active; the guest's is while
	 * retained */
	*active = prim_refcount(p) > 0;
	return CUDA_SUCCESS;
}

/* ---- created contexts ---------------------------------------------------- */

static struct ctx_node *node_get(void)
{
	struct ctx_node *n;

	pthread_mutex_lock(&ctx_mu);
	n = free_ctxs;
	if (n)
		free_ctxs = n->next;
	pthread_mutex_unlock(&ctx_mu);
	if (!n)
		n = calloc(1, sizeof(*n));
	return n;
}

static void node_put(struct ctx_node *n)
{
	pthread_mutex_lock(&ctx_mu);
	n->c.magic = 0;
	n->next = free_ctxs;
	free_ctxs = n;
	pthread_mutex_unlock(&ctx_mu);
}

/* a context gone: off the live list, its node kept for reuse */
static void ctx_drop(struct ctx_node *n)
{
	struct ctx_node **pp;

	pthread_mutex_lock(&ctx_mu);
	for (pp = &live_ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	}
	pthread_mutex_unlock(&ctx_mu);
	node_put(n);
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct xgpuif_dev_flags_args a = { dev, flags };
	struct xgpuif_ctx_reply r = { 0 };
	struct ctx_node *n;
	CUresult rc;

	rc = xgpulib_dev_arg(pctx != NULL, dev);
	if (rc)
		return rc;
	/* the new context is pushed: make sure it can be */
	if (xgpulib_current_full())
		return CUDA_ERROR_OUT_OF_MEMORY;
	n = node_get();
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_CTX_CREATE(&a, &r);
	if (rc == CUDA_SUCCESS && !r.ctx)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc) {
		node_put(n);
		return rc;
	}
	pthread_mutex_lock(&ctx_mu);
	n->c.primary = 0;
	n->c.dev = dev;
	n->c.flags = flags;
	n->c.refcount = 0;
	n->usage = 1;
	n->c.green = NULL;
	ctx_set_remote(&n->c, r.ctx);
	n->id = next_ctx_id++;
	n->c.magic = XGPULIB_CTX_MAGIC;
	n->next = live_ctxs;
	live_ctxs = n;
	pthread_mutex_unlock(&ctx_mu);
	xgpulib_current_push(&n->c);
	*pctx = &n->c;
	return CUDA_SUCCESS;
}

/* the CUDA 3.2 ABI (2.0's, cuCtxCreate, has the same arguments) */
XGPULIB_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
				       CUdevice dev);
XGPULIB_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx,
				       CUexecAffinityParam *paramsArray,
				       int numParams, unsigned int flags,
				       CUdevice dev);

XGPULIB_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
				       CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

/*
 * Execution affinity (a share of the SMs) cannot be promised through the
 * worker, so a request for it is refused rather than silently ignored.
 */
XGPULIB_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx,
				       CUexecAffinityParam *paramsArray,
				       int numParams, unsigned int flags,
				       CUdevice dev)
{
	if (numParams < 0 || (numParams > 0 && !paramsArray))
		return CUDA_ERROR_INVALID_VALUE;
	if (numParams > 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	return ctx_create(pctx, flags, dev);
}

XGPULIB_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx,
				       CUctxCreateParams *params,
				       unsigned int flags, CUdevice dev)
{
	if (params) {
		if (params->numExecAffinityParams < 0)
			return CUDA_ERROR_INVALID_VALUE;
		if (params->numExecAffinityParams > 0 || params->cigParams)
			return CUDA_ERROR_NOT_SUPPORTED;
	}
	return ctx_create(pctx, flags, dev);
}

XGPULIB_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct xgpuif_handle_args a;
	struct ctx_node *n = (struct ctx_node *)ctx;
	struct CUctx_st *c;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	c = xgpulib_ctx_check(ctx);
	/* primaries are released, never destroyed; a green context's
	 * context goes with cuGreenCtxDestroy */
	if (!c || c->primary || c->green)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* destructors first: they may still use the context */
	xgpulib_cls_release_ctx(ctx);
	a.handle = ctx_remote(c);
	rc = xgpulib_call_CTX_DESTROY(&a);
	if (rc)
		return rc;
	/* keeps its remote handle: a thread where it is still current
	 * sends it and the worker refuses it */
	ctx_drop(n);
	/* CUDA pops it when it is the caller's current context */
	if (xgpulib_current() == ctx)
		xgpulib_current_pop(NULL);
	return CUDA_SUCCESS;
}

/*
 * The usage count of before CUDA 4 (deprecated): cuCtxAttach counts the
 * current context once more and returns it, cuCtxDetach counts it once
 * less and destroys it at zero; a created context starts at 1.  A
 * primary's count only says how many attaches are outstanding: detaching
 * it never releases or destroys it (retains and releases do that).
 */
XGPULIB_EXPORT CUresult cuCtxAttach(CUcontext *pctx, unsigned int flags)
{
	struct ctx_node *n;
	struct CUctx_st *c;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || flags)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_ctx_current(&c);
	if (rc)
		return rc;
	n = (struct ctx_node *)c;
	pthread_mutex_lock(&ctx_mu);
	if (n->usage == INT_MAX)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	else
		n->usage++;
	pthread_mutex_unlock(&ctx_mu);
	if (!rc)
		*pctx = c;
	return rc;
}

/* ctx must be current to the caller, as the driver wants */
XGPULIB_EXPORT CUresult cuCtxDetach(CUcontext ctx)
{
	struct ctx_node *n = (struct ctx_node *)ctx;
	struct CUctx_st *c;
	CUresult rc = CUDA_SUCCESS;
	bool last = false;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	c = xgpulib_ctx_check(ctx);
	if (!c || xgpulib_current() != ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&ctx_mu);
	if (n->usage <= 0)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	else
		last = --n->usage == 0 && !c->primary;
	pthread_mutex_unlock(&ctx_mu);
	if (rc || !last)
		return rc;
	rc = cuCtxDestroy_v2(ctx);
	if (rc) {
		/* still alive: it keeps its count */
		pthread_mutex_lock(&ctx_mu);
		n->usage++;
		pthread_mutex_unlock(&ctx_mu);
	}
	return rc;
}

/* ---- the contexts of green contexts -------------------------------------- */

struct CUctx_st *xgpulib_ctx_green_new(CUdevice dev, uint64_t remote,
				       CUgreenCtx g)
{
	struct ctx_node *n = node_get();
	struct ctx_node *p = prim_node(dev);

	if (!n)
		return NULL;
	pthread_mutex_lock(&ctx_mu);
	n->c.primary = 0;
	n->c.dev = dev;
	n->c.flags = p ? p->c.flags : 0;
	n->c.refcount = 0;
	n->c.green = g;
	ctx_set_remote(&n->c, remote);
	n->id = next_ctx_id++;
	n->c.magic = XGPULIB_CTX_MAGIC;
	n->next = live_ctxs;
	live_ctxs = n;
	pthread_mutex_unlock(&ctx_mu);
	return &n->c;
}

void xgpulib_ctx_green_gone(struct CUctx_st *c)
{
	/* keeps its remote handle, which the worker now refuses */
	ctx_drop((struct ctx_node *)c);
}

/* ---- the context stack --------------------------------------------------- */

XGPULIB_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!xgpulib_ctx_check(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	return xgpulib_current_push(ctx);
}

XGPULIB_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return xgpulib_current_pop(pctx) ? CUDA_SUCCESS :
					   CUDA_ERROR_INVALID_CONTEXT;
}

/* replaces the top of the stack; NULL pops it */
XGPULIB_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx) {
		xgpulib_current_pop(NULL);
		return CUDA_SUCCESS;
	}
	if (!xgpulib_ctx_check(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	xgpulib_current_set(ctx);
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult rc = xgpulib_query_arg(pctx);

	if (!rc)
		*pctx = xgpulib_current();
	return rc;
}

/* ---- queries ------------------------------------------------------------- */

XGPULIB_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	struct CUctx_st *c;
	CUresult rc = ctx_arg(ctx, device, &c);

	if (!rc)
		*device = c->dev;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
	return cuCtxGetDevice_v2(device, NULL);
}

XGPULIB_EXPORT CUresult cuCtxSynchronize(void)
{
	struct CUctx_st *c;
	CUresult rc = xgpulib_ctx_current(&c);

	if (rc)
		return rc;
	if (!ctx_remote(c))	/* a primary that is not retained */
		return CUDA_ERROR_INVALID_CONTEXT;
	return xgpulib_sync_ctx();
}

XGPULIB_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	struct xgpulib_current_saved saved;
	struct CUctx_st *c;
	CUresult rc;

	if (!ctx)
		return cuCtxSynchronize();
	rc = ctx_arg(ctx, true, &c);
	if (rc)
		return rc;
	if (!ctx_remote(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	/* the request carries the current context: make it ctx meanwhile */
	xgpulib_current_enter(ctx, &saved);
	rc = xgpulib_sync_ctx();
	xgpulib_current_leave(&saved);
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx,
					   unsigned int *version)
{
	struct CUctx_st *c;
	CUresult rc = ctx_arg(ctx, version, &c);

	if (!rc)
		*version = CTX_API_VERSION;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	struct CUctx_st *c;
	CUresult rc = ctx_arg(ctx, ctxId, &c);

	if (!rc)
		*ctxId = ((struct ctx_node *)c)->id;
	return rc;
}

/* ---- profiler control: no profiler runs in the guest --------------------- */

XGPULIB_EXPORT CUresult cuProfilerInitialize(const char *configFile,
					     const char *outputFile,
					     CUoutput_mode outputMode)
{
	(void)configFile;
	(void)outputFile;
	(void)outputMode;
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuProfilerStart(void)
{
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuProfilerStop(void)
{
	return CUDA_SUCCESS;
}
