// SPDX-License-Identifier: MIT
/*
 * fakecuda_ctxmisc.c: context events, cuStreamCopyAttributes,
 * cuCtxSetFlags, peer access and the small device queries of a machine
 * with one GPU (values plausible for an H100 on Linux).
 */
#include <string.h>

#include "fakecuda.h"

CUresult cuCtxRecordEvent(CUcontext c, CUevent ev)
{
	struct fctx *x;
	struct fevent *e;

	NEED_INIT();
	x = CTX(c);
	if (!x)
		return CUDA_ERROR_INVALID_CONTEXT;
	e = EVENT(ev);
	/* a green context's events are its primary's */
	if (!e || e->o.ctx != (x->base ? x->base : x))
		return CUDA_ERROR_INVALID_HANDLE;
	fc_printf_flush();
	e->recorded = true;
	clock_gettime(CLOCK_MONOTONIC, &e->when);
	return CUDA_SUCCESS;
}

CUresult cuCtxWaitEvent(CUcontext c, CUevent ev)
{
	NEED_INIT();
	if (!CTX(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	return EVENT(ev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
	struct fstream *d, *s;

	NEED_CTX();
	if (fc_stream_ok(dst) || fc_stream_ok(src))
		return CUDA_ERROR_INVALID_HANDLE;
	d = STREAM(dst);
	s = STREAM(src);
	if (d)
		d->priority = s ? s->priority : 0;
	return CUDA_SUCCESS;
}

#define FAKE_CTX_FLAGS (CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | \
			CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_SYNC_MEMOPS)

CUresult cuCtxSetFlags(unsigned int flags)
{
	NEED_CTX();
	if (flags & ~FAKE_CTX_FLAGS)
		return CUDA_ERROR_INVALID_VALUE;
	fc_cur->flags = flags;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetExecAffinity(CUexecAffinityParam *p, CUexecAffinityType type)
{
	NEED_CTX();
	if (!p || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->param.smCount.val = FAKE_SMS;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type,
					CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pi || (unsigned int)type >= CU_EXEC_AFFINITY_TYPE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = 0;	/* SM count affinity needs MPS */
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetTexture1DLinearMaxWidth(size_t *w, CUarray_format fmt,
					    unsigned int channels, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!w || (channels != 1 && channels != 2 && channels != 4) ||
	    fmt < CU_AD_FORMAT_UNSIGNED_INT8)
		return CUDA_ERROR_INVALID_VALUE;
	*w = 1u << 28;
	return CUDA_SUCCESS;
}

static CUresult atomic_caps(unsigned int *caps, const CUatomicOperation *ops,
			    unsigned int count)
{
	if (!caps || !ops || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < count; i++) {
		if ((unsigned int)ops[i] >= CU_ATOMIC_OPERATION_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		caps[i] = 0;
	}
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetHostAtomicCapabilities(unsigned int *caps,
					   const CUatomicOperation *ops,
					   unsigned int count, CUdevice dev)
{
	CHECK_DEV(dev);
	return atomic_caps(caps, ops, count);
}

CUresult cuDeviceGetP2PAtomicCapabilities(unsigned int *caps,
					  const CUatomicOperation *ops,
					  unsigned int count, CUdevice src,
					  CUdevice dst)
{
	CHECK_DEV(src);
	CHECK_DEV(dst);
	if (atomic_caps(caps, ops, count))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_INVALID_DEVICE;	/* not its own peer */
}

CUresult cuDeviceGetP2PAttribute(int *v, CUdevice_P2PAttribute attr,
				 CUdevice src, CUdevice dst)
{
	CHECK_DEV(src);
	CHECK_DEV(dst);
	if (!v || attr < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ||
	    attr > CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
	CHECK_DEV(dev);
	CHECK_DEV(peer);
	if (!can)
		return CUDA_ERROR_INVALID_VALUE;
	*can = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetLuid(char *luid, unsigned int *mask, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!luid || !mask)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_NOT_SUPPORTED;	/* Windows only */
}

CUresult cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
				    CUflushGPUDirectRDMAWritesScope scope)
{
	NEED_CTX();
	if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
	    (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
	     scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
	NEED_CTX();
	if (!CTX(peer))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_INVALID_DEVICE;	/* its own device */
}

CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
	NEED_CTX();
	if (!CTX(peer))
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

CUresult cuLibraryGetUnifiedFunction(void **fp, CUlibrary lib,
				     const char *name)
{
	NEED_INIT();
	if (!fp || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!LIBRARY(lib))
		return CUDA_ERROR_INVALID_HANDLE;
	*fp = NULL;
	return CUDA_ERROR_NOT_FOUND;
}
