// SPDX-License-Identifier: MIT
/*
 * fakecuda_green.c: green contexts on the fake device's FAKE_SMS SMs.
 *
 * A resource keeps, in the bytes cuda.h reserves for the driver, a tag:
 * a magic, the split it came from (0 for a device's, a context's or a
 * green context's whole set) and whether it is a group or the remainder,
 * so that, as the driver does, only whole sets are split and a descriptor
 * takes the groups of one split.  Groups are of the minimum count rounded
 * up to FAKE_SM_ALIGN SMs (2 with
 * CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING), at least
 * FAKE_SM_MIN.  A green context is a context whose memory, modules and
 * events are the primary's (fctx.base), holding its SM count; its streams
 * are its own and go with it.
 */
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define FAKE_SM_MIN	8	/* minSmPartitionSize, as on sm_90 */
#define FAKE_SM_ALIGN	8	/* smCoscheduledAlignment */
#define RES_MAGIC	0x66726573u	/* "fres" */

enum { ROLE_WHOLE, ROLE_GROUP, ROLE_REST };

struct res_tag {
	uint32_t magic;
	uint32_t split;
	uint32_t role;
};

struct fdesc {
	struct fobj o;
	unsigned int sms;
};

struct fgreen {
	struct fobj o;
	struct fctx ctx;
};

static uint32_t next_split = 1;

static void res_make(CUdevResource *r, unsigned int sms, uint32_t split,
		     uint32_t role)
{
	struct res_tag t = { RES_MAGIC, split, role };

	memset(r, 0, sizeof(*r));
	r->type = CU_DEV_RESOURCE_TYPE_SM;
	memcpy(r->_internal_padding, &t, sizeof(t));
	r->sm.smCount = sms;
	r->sm.minSmPartitionSize = FAKE_SM_MIN;
	r->sm.smCoscheduledAlignment = FAKE_SM_ALIGN;
}

/* the tag of a resource the fake made, or false */
static bool res_tag(const CUdevResource *r, struct res_tag *t)
{
	if (r->type != CU_DEV_RESOURCE_TYPE_SM)
		return false;
	memcpy(t, r->_internal_padding, sizeof(*t));
	return t->magic == RES_MAGIC && r->sm.smCount <= FAKE_SMS;
}

static struct fgreen *green_find(CUgreenCtx g)
{
	return (struct fgreen *)fc_obj_find(g, O_GREEN);
}

/* the SMs of a context: a green context's, or the device's */
static unsigned int ctx_sms(const struct fctx *c)
{
	return c->base ? c->sms : FAKE_SMS;
}

static CUresult whole(CUdevResource *r, CUdevResourceType type,
		      unsigned int sms)
{
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	if (type != CU_DEV_RESOURCE_TYPE_SM)
		return CUDA_ERROR_INVALID_RESOURCE_TYPE;
	res_make(r, sms, 0, ROLE_WHOLE);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetDevResource(CUdevice dev, CUdevResource *r,
				CUdevResourceType type)
{
	CHECK_DEV(dev);
	return whole(r, type, FAKE_SMS);
}

CUresult cuCtxGetDevResource(CUcontext c, CUdevResource *r,
			     CUdevResourceType type)
{
	struct fctx *x;

	NEED_INIT();
	x = c ? CTX(c) : fc_cur;
	if (!x)
		return CUDA_ERROR_INVALID_CONTEXT;
	return whole(r, type, ctx_sms(x));
}

CUresult cuGreenCtxGetDevResource(CUgreenCtx g, CUdevResource *r,
				  CUdevResourceType type)
{
	struct fgreen *x;

	NEED_INIT();
	x = green_find(g);
	if (!x)
		return CUDA_ERROR_INVALID_HANDLE;
	return whole(r, type, x->ctx.sms);
}

CUresult cuDevSmResourceSplitByCount(CUdevResource *result,
				     unsigned int *nbGroups,
				     const CUdevResource *input,
				     CUdevResource *remaining,
				     unsigned int useFlags,
				     unsigned int minCount)
{
	unsigned int align, size, max, n;
	struct res_tag t;
	uint32_t split;

	NEED_INIT();
	if (!nbGroups || !input)
		return CUDA_ERROR_INVALID_VALUE;
	if (useFlags & ~(unsigned int)(
			 CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
			 CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE))
		return CUDA_ERROR_INVALID_VALUE;
	if (!res_tag(input, &t))
		return CUDA_ERROR_INVALID_RESOURCE_TYPE;
	if (t.role != ROLE_WHOLE)	/* groups are split only in a green
					 * context made of them */
		return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
	if (minCount > input->sm.smCount)
		return CUDA_ERROR_INVALID_VALUE;
	align = useFlags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING ?
			2 : FAKE_SM_ALIGN;
	size = minCount < (align == 2 ? 2u : FAKE_SM_MIN) ?
		       (align == 2 ? 2u : FAKE_SM_MIN) : minCount;
	size = (size + align - 1) / align * align;
	max = input->sm.smCount / size;
	if (!result) {
		*nbGroups = max;
		if (remaining)
			res_make(remaining, input->sm.smCount - max * size,
				 0, ROLE_REST);
		return CUDA_SUCCESS;
	}
	n = *nbGroups < max ? *nbGroups : max;
	split = next_split++;
	for (unsigned int i = 0; i < n; i++)
		res_make(&result[i], size, split, ROLE_GROUP);
	if (remaining)
		res_make(remaining, input->sm.smCount - n * size, split,
			 ROLE_REST);
	*nbGroups = n;
	return CUDA_SUCCESS;
}

CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *phDesc,
				   CUdevResource *resources,
				   unsigned int nbResources)
{
	unsigned int sms = 0;
	struct res_tag t0, t;
	struct fdesc *d;

	NEED_INIT();
	if (!phDesc || !resources || !nbResources)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < nbResources; i++) {
		if (!res_tag(&resources[i], &t))
			return CUDA_ERROR_INVALID_RESOURCE_TYPE;
		if (i == 0)
			t0 = t;
		else if (t.split != t0.split || !t.split)
			return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
		sms += resources[i].sm.smCount;
	}
	if (sms > FAKE_SMS)
		return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
	d = calloc(1, sizeof(*d));
	if (!d)
		return CUDA_ERROR_OUT_OF_MEMORY;
	d->sms = sms;
	fc_obj_add(&d->o, O_RESDESC, NULL);
	*phDesc = (CUdevResourceDesc)d;
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxCreate(CUgreenCtx *phCtx, CUdevResourceDesc desc,
			  CUdevice dev, unsigned int flags)
{
	struct fdesc *d;
	struct fgreen *g;

	CHECK_DEV(dev);
	if (!phCtx || flags != CU_GREEN_CTX_DEFAULT_STREAM)
		return CUDA_ERROR_INVALID_VALUE;
	d = (struct fdesc *)fc_obj_find(desc, O_RESDESC);
	if (!d)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!fc_obj_find(fc_primary(), O_CTX))
		return CUDA_ERROR_INVALID_CONTEXT; /* no primary retained */
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fc_ctx_init_green(&g->ctx);
	g->ctx.sms = d->sms;
	fc_obj_add(&g->o, O_GREEN, NULL);
	fc_obj_add(&g->ctx.o, O_CTX, NULL);
	*phCtx = (CUgreenCtx)g;
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxDestroy(CUgreenCtx hCtx)
{
	struct fgreen *g;

	NEED_INIT();
	g = green_find(hCtx);
	if (!g)
		return CUDA_ERROR_INVALID_HANDLE;
	/* its streams (memory, modules and events are the primary's) */
	fc_ctx_free_resources(&g->ctx);
	fc_obj_unlink(&g->ctx.o);
	fc_obj_unlink(&g->o);
	if (fc_cur == &g->ctx)
		fc_cur = NULL;
	free(g);
	return CUDA_SUCCESS;
}

CUresult cuCtxFromGreenCtx(CUcontext *pContext, CUgreenCtx hCtx)
{
	struct fgreen *g;

	NEED_INIT();
	if (!pContext)
		return CUDA_ERROR_INVALID_VALUE;
	g = green_find(hCtx);
	if (!g)
		return CUDA_ERROR_INVALID_HANDLE;
	*pContext = (CUcontext)&g->ctx;
	return CUDA_SUCCESS;
}

/* an event of the green context's or of its primary's */
static CUresult green_event(CUgreenCtx hCtx, CUevent ev, struct fgreen **g,
			    struct fevent **e)
{
	NEED_INIT();
	*g = green_find(hCtx);
	if (!*g)
		return CUDA_ERROR_INVALID_HANDLE;
	*e = EVENT(ev);
	if (!*e)
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent ev)
{
	struct fgreen *g;
	struct fevent *e;
	CUresult rc = green_event(hCtx, ev, &g, &e);

	if (rc)
		return rc;
	if (e->o.ctx != &g->ctx && e->o.ctx != g->ctx.base)
		return CUDA_ERROR_INVALID_HANDLE;
	fc_printf_flush();
	e->recorded = true;
	clock_gettime(CLOCK_MONOTONIC, &e->when);
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent ev)
{
	struct fgreen *g;
	struct fevent *e;

	return green_event(hCtx, ev, &g, &e);
}

CUresult cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx,
				unsigned int flags, int priority)
{
	struct fctx *saved = fc_cur;
	struct fgreen *g;
	CUresult rc;

	NEED_INIT();
	g = green_find(greenCtx);
	if (!g)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!phStream || !(flags & CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	/* made in the green context, whatever is current */
	fc_cur = &g->ctx;
	rc = cuStreamCreateWithPriority(phStream, flags, priority);
	fc_cur = saved;
	return rc;
}

CUresult cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long *id)
{
	NEED_INIT();
	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	if (!green_find(greenCtx))
		return CUDA_ERROR_INVALID_HANDLE;
	*id = (unsigned long long)(uintptr_t)greenCtx;
	return CUDA_SUCCESS;
}
