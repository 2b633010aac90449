// SPDX-License-Identifier: MIT
/*
 * xgpub_op_ctxmisc.c: context events (cuCtxRecordEvent, cuCtxWaitEvent),
 * cuStreamCopyAttributes, cuCtxSetFlags, peer access, the small device
 * queries (exec affinity, 1D linear texture width, atomic and peer
 * capabilities, LUID), cuFlushGPUDirectRDMAWrites and
 * cuLibraryGetUnifiedFunction.
 *
 * A worker serves one GPU: the guest's device 0 is w->dev, and the only
 * peer a guest can name is that same device (the guest refuses other
 * ordinals, as a real driver on a machine with one GPU does), so every
 * peer question is asked of the driver as (w->dev, w->dev), and it gives
 * the answer a one-GPU machine gives.
 */
#include <string.h>

#include "xgpub_worker.h"

/* CTX_EVENT and GREENCTX_EVENT (which: XGPUB_H_CTX or XGPUB_H_GREENCTX,
 * the kind of ctx): the context records the event, or waits for it */
int xgpub_h_ctx_event(struct xgpub_worker *w,
		      const struct xgpuif_ctx_event_args *a,
		      struct xgpub_hentry *ctx, struct xgpub_hentry *event,
		      int which)
{
	const bool green = which == XGPUB_H_GREENCTX;

	if (a->wait > 1)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->wait)
		return green ? w->D->cuGreenCtxWaitEvent(ctx->obj, event->obj) :
			       w->D->cuCtxWaitEvent(ctx->obj, event->obj);
	return green ? w->D->cuGreenCtxRecordEvent(ctx->obj, event->obj) :
		       w->D->cuCtxRecordEvent(ctx->obj, event->obj);
}

XGPUB_HANDLER(STREAM_COPY_ATTRS)
{
	return w->D->cuStreamCopyAttributes(dst, src);
}

XGPUB_HANDLER(CTX_SET_FLAGS)
{
	int rc = xgpub_ctx_flags_check(a->value);

	if (rc)
		return rc;
	return w->D->cuCtxSetFlags(a->value);
}

/* the atomic capabilities of count operations (bounded by the table) */
static int atomic_caps(struct xgpub_worker *w,
		       const struct xgpuif_device_query_args *a,
		       struct xgpuif_device_query_reply *r, bool p2p)
{
	CUatomicOperation ops[XGPUIF_DQ_MAX_OPS];
	unsigned int caps[XGPUIF_DQ_MAX_OPS];
	int rc;

	if (!a->count || a->count > XGPUIF_DQ_MAX_OPS)
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < a->count; i++)
		ops[i] = (CUatomicOperation)a->ops[i];
	memset(caps, 0, sizeof(caps));
	rc = p2p ? w->D->cuDeviceGetP2PAtomicCapabilities(caps, ops, a->count,
							   w->dev, w->dev) :
		   w->D->cuDeviceGetHostAtomicCapabilities(caps, ops, a->count,
							    w->dev);
	for (uint32_t i = 0; i < a->count; i++)
		r->caps[i] = caps[i];
	return rc;
}

XGPUB_HANDLER(DEVICE_QUERY)
{
	CUexecAffinityParam aff;
	unsigned int mask = 0;
	size_t width = 0;
	char luid[8];
	int v = 0, rc;

	switch (a->what) {
	case XGPUIF_DQ_EXEC_AFFINITY_SUPPORT:
		rc = w->D->cuDeviceGetExecAffinitySupport(
			&v, (CUexecAffinityType)a->a, w->dev);
		r->value = v;
		return rc;
	case XGPUIF_DQ_TEX1D_LINEAR_MAX:
		rc = w->D->cuDeviceGetTexture1DLinearMaxWidth(
			&width, (CUarray_format)a->a, (unsigned int)a->b,
			w->dev);
		r->value = (int64_t)width;
		return rc;
	case XGPUIF_DQ_HOST_ATOMIC_CAPS:
		return atomic_caps(w, a, r, false);
	case XGPUIF_DQ_P2P_ATOMIC_CAPS:
		return atomic_caps(w, a, r, true);
	case XGPUIF_DQ_P2P_ATTRIBUTE:
		rc = w->D->cuDeviceGetP2PAttribute(
			&v, (CUdevice_P2PAttribute)a->a, w->dev, w->dev);
		r->value = v;
		return rc;
	case XGPUIF_DQ_CAN_ACCESS_PEER:
		rc = w->D->cuDeviceCanAccessPeer(&v, w->dev, w->dev);
		r->value = v;
		return rc;
	case XGPUIF_DQ_LUID:
		memset(luid, 0, sizeof(luid));
		rc = w->D->cuDeviceGetLuid(luid, &mask, w->dev);
		memcpy(r->bytes, luid, sizeof(luid));
		r->value = mask;
		return rc;
	case XGPUIF_DQ_FLUSH_RDMA:
		return w->D->cuFlushGPUDirectRDMAWrites(
			(CUflushGPUDirectRDMAWritesTarget)a->a,
			(CUflushGPUDirectRDMAWritesScope)a->b);
	case XGPUIF_DQ_CTX_EXEC_AFFINITY:
		memset(&aff, 0, sizeof(aff));
		rc = w->D->cuCtxGetExecAffinity(&aff,
						(CUexecAffinityType)a->a);
		r->value = aff.param.smCount.val;
		return rc;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

XGPUB_HANDLER(PEER_ACCESS)
{
	if (a->enable > 1)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->enable)
		return w->D->cuCtxEnablePeerAccess(peer->obj, a->flags);
	return w->D->cuCtxDisablePeerAccess(peer->obj);
}

/*
 * cuLibraryGetUnifiedFunction: the driver's answer; the pointer itself is
 * the worker's and never goes back (the guest says so).
 */
XGPUB_HANDLER(LIBRARY_UNIFIED_FUNCTION)
{
	void *fp = NULL;
	const char *name;
	int rc;

	(void)a;
	if (!tail->len || !memchr(tail->p, 0, tail->len))
		return XGPUIF_ST_PROTO;
	name = (const char *)tail->p;
	rc = w->D->cuLibraryGetUnifiedFunction(&fp, owner->obj, name);
	r->value = fp != NULL;
	return rc;
}
