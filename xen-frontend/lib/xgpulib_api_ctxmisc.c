// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_ctxmisc.c: context events (cuCtxRecordEvent, cuCtxWaitEvent),
 * the context's limits, flags, cache and shared memory configuration and
 * stream priority range, execution affinity, peer access and the small
 * device queries (1D linear texture width, atomic and peer capabilities,
 * LUID), and cuFlushGPUDirectRDMAWrites.
 *
 * The worker answers them from the real driver, on its one device.  The
 * guest sees one device, so a peer is always that same device: the answers
 * are those of a machine with one GPU (a device is not its own peer), and
 * any other ordinal is CUDA_ERROR_INVALID_DEVICE, as there.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_dev.h"
#include "xgpulib_entry.h"

/* the wire handle of a context argument (NULL: the current one) */
static CUresult ctx_remote_of(CUcontext ctx, uint64_t *remote)
{
	return xgpulib_ctx_remote_of(ctx, NULL, remote);
}

/* cuCtxRecordEvent (wait 0), cuCtxWaitEvent (wait 1): xgpulib_entry.def */
CUresult xgpulib_ctx_event(CUcontext ctx, CUevent ev, int wait)
{
	struct xgpuif_ctx_event_args a = { .wait = (uint32_t)wait };
	CUresult rc = ctx_remote_of(ctx, &a.ctx);

	if (rc)
		return rc;
	if (!ev || ev->magic != XGPULIB_EVENT_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	a.event = ev->remote;
	return xgpulib_call_CTX_EVENT(&a);
}

CUresult cuCtxSetFlags(unsigned int flags)
{
	struct xgpuif_u32_args a = { flags, 0 };
	uint64_t remote;
	CUresult rc = ctx_remote_of(NULL, &remote);

	if (rc)
		return rc;
	/* the current context may be a primary */
	xgpulib_prim_state_forget();
	return xgpulib_call_CTX_SET_FLAGS(&a);
}

/* ---- device queries ------------------------------------------------------ */

/* a device argument: the guest's one device */
static CUresult one_dev(CUdevice dev)
{
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult query(struct xgpuif_device_query_args *a,
		      struct xgpuif_device_query_reply *r)
{
	memset(r, 0, sizeof(*r));
	return xgpulib_call_DEVICE_QUERY(a, r);
}

CUresult cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity,
			      CUexecAffinityType type)
{
	struct xgpuif_device_query_args a = {
		.what = XGPUIF_DQ_CTX_EXEC_AFFINITY, .a = (int32_t)type };
	struct xgpuif_device_query_reply r;
	uint64_t remote;
	CUresult rc;

	if (!pExecAffinity)
		return CUDA_ERROR_INVALID_VALUE;
	rc = ctx_remote_of(NULL, &remote);
	if (!rc)
		rc = query(&a, &r);
	if (!rc) {
		memset(pExecAffinity, 0, sizeof(*pExecAffinity));
		pExecAffinity->type = type;
		pExecAffinity->param.smCount.val = (unsigned int)r.value;
	}
	return rc;
}

CUresult cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type,
					CUdevice dev)
{
	struct xgpuif_device_query_args a = {
		.what = XGPUIF_DQ_EXEC_AFFINITY_SUPPORT, .a = (int32_t)type };
	struct xgpuif_device_query_reply r;
	CUresult rc = pi ? one_dev(dev) : CUDA_ERROR_INVALID_VALUE;

	if (!rc)
		rc = query(&a, &r);
	if (!rc)
		*pi = (int)r.value;
	return rc;
}

CUresult cuDeviceGetTexture1DLinearMaxWidth(size_t *maxWidthInElements,
					    CUarray_format format,
					    unsigned numChannels, CUdevice dev)
{
	struct xgpuif_device_query_args a = {
		.what = XGPUIF_DQ_TEX1D_LINEAR_MAX, .a = (int32_t)format,
		.b = (int32_t)numChannels };
	struct xgpuif_device_query_reply r;
	CUresult rc = maxWidthInElements ? one_dev(dev) :
					   CUDA_ERROR_INVALID_VALUE;

	if (!rc)
		rc = query(&a, &r);
	if (!rc)
		*maxWidthInElements = (size_t)r.value;
	return rc;
}

/* atomic capabilities, XGPUIF_DQ_MAX_OPS operations at a time */
static CUresult atomic_caps(uint32_t what, unsigned int *caps,
			    const CUatomicOperation *ops, unsigned int count)
{
	struct xgpuif_device_query_args a = { .what = what };
	struct xgpuif_device_query_reply r;
	CUresult rc = CUDA_SUCCESS;

	if (!caps || !ops || !count)
		return CUDA_ERROR_INVALID_VALUE;
	while (count && !rc) {
		a.count = count < XGPUIF_DQ_MAX_OPS ? count :
						      XGPUIF_DQ_MAX_OPS;
		for (uint32_t i = 0; i < a.count; i++)
			a.ops[i] = (uint32_t)ops[i];
		rc = query(&a, &r);
		if (!rc)
			memcpy(caps, r.caps, a.count * sizeof(*caps));
		caps += a.count;
		ops += a.count;
		count -= a.count;
	}
	return rc;
}

CUresult cuDeviceGetHostAtomicCapabilities(unsigned int *capabilities,
					   const CUatomicOperation *operations,
					   unsigned int count, CUdevice dev)
{
	CUresult rc = one_dev(dev);

	return rc ? rc : atomic_caps(XGPUIF_DQ_HOST_ATOMIC_CAPS, capabilities,
				     operations, count);
}

CUresult cuDeviceGetP2PAtomicCapabilities(unsigned int *capabilities,
					  const CUatomicOperation *operations,
					  unsigned int count,
					  CUdevice srcDevice,
					  CUdevice dstDevice)
{
	CUresult rc = one_dev(srcDevice);

	if (!rc)
		rc = one_dev(dstDevice);
	return rc ? rc : atomic_caps(XGPUIF_DQ_P2P_ATOMIC_CAPS, capabilities,
				     operations, count);
}

/* a query about two devices (each must be ours), one int answer */
static CUresult pair_query(int *value, CUdevice d0, CUdevice d1,
			   uint32_t what, int32_t arg)
{
	struct xgpuif_device_query_args a = { .what = what, .a = arg };
	struct xgpuif_device_query_reply r;
	CUresult rc = value ? one_dev(d0) : CUDA_ERROR_INVALID_VALUE;

	if (!rc)
		rc = one_dev(d1);
	if (!rc)
		rc = query(&a, &r);
	if (!rc)
		*value = (int)r.value;
	return rc;
}

CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
				 CUdevice srcDevice, CUdevice dstDevice)
{
	return pair_query(value, srcDevice, dstDevice,
			  XGPUIF_DQ_P2P_ATTRIBUTE, (int32_t)attrib);
}

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev,
			       CUdevice peerDev)
{
	return pair_query(canAccessPeer, dev, peerDev,
			  XGPUIF_DQ_CAN_ACCESS_PEER, 0);
}

/* Windows only: the worker's (Linux) driver gives its answer */
CUresult cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask,
			 CUdevice dev)
{
	struct xgpuif_device_query_args a = { .what = XGPUIF_DQ_LUID };
	struct xgpuif_device_query_reply r;
	CUresult rc = luid && deviceNodeMask ? one_dev(dev) :
					       CUDA_ERROR_INVALID_VALUE;

	if (!rc)
		rc = query(&a, &r);
	if (!rc) {
		memcpy(luid, r.bytes, sizeof(r.bytes));
		*deviceNodeMask = (unsigned int)r.value;
	}
	return rc;
}

CUresult cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
				    CUflushGPUDirectRDMAWritesScope scope)
{
	struct xgpuif_device_query_args a = {
		.what = XGPUIF_DQ_FLUSH_RDMA, .a = (int32_t)target,
		.b = (int32_t)scope };
	struct xgpuif_device_query_reply r;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return query(&a, &r);
}

/* ---- peer access --------------------------------------------------------- */

static CUresult peer_access(CUcontext peer, unsigned int flags,
			    uint32_t enable)
{
	struct xgpuif_peer_access_args a = { .enable = enable,
					     .flags = flags };
	uint64_t cur;
	CUresult rc = ctx_remote_of(NULL, &cur);

	if (rc)
		return rc;
	if (!peer)
		return CUDA_ERROR_INVALID_CONTEXT;
	rc = ctx_remote_of(peer, &a.peer);
	return rc ? rc : xgpulib_call_PEER_ACCESS(&a);
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
	return peer_access(peerContext, Flags, 1);
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
	return peer_access(peerContext, 0, 0);
}

/* ---- the context's settings ---------------------------------------------- */

XGPULIB_EXPORT CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	struct xgpuif_limit_args a = { (uint32_t)limit, 0, 0 };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc = xgpulib_query_arg(pvalue);

	if (!rc)
		rc = xgpulib_call_CTX_GET_LIMIT(&a, &r);
	if (!rc)
		*pvalue = (size_t)r.value;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
	struct xgpuif_limit_args a = { (uint32_t)limit, 0, value };

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return xgpulib_call_CTX_SET_LIMIT(&a);
}

/* a property of the device; asked once */
static pthread_mutex_t prio_mu = PTHREAD_MUTEX_INITIALIZER;
static bool prio_known;
static int prio_least, prio_greatest;

XGPULIB_EXPORT CUresult cuCtxGetStreamPriorityRange(int *leastPriority,
						    int *greatestPriority)
{
	struct xgpuif_priority_range_reply r = { 0, 0 };
	CUresult rc = CUDA_SUCCESS;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&prio_mu);
	if (!prio_known) {
		rc = xgpulib_call_CTX_GET_PRIORITY_RANGE(&r);
		if (rc == CUDA_SUCCESS) {
			prio_least = r.least;
			prio_greatest = r.greatest;
			prio_known = true;
		}
	}
	if (rc == CUDA_SUCCESS) {
		if (leastPriority)
			*leastPriority = prio_least;
		if (greatestPriority)
			*greatestPriority = prio_greatest;
	}
	pthread_mutex_unlock(&prio_mu);
	return rc;
}

/* a query the worker answers with one number; out_ok: its output given */
static CUresult ctx_get_u64(CUresult (*call)(struct xgpuif_u64_reply *r),
			    bool out_ok, uint64_t *value)
{
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc = xgpulib_query_arg(out_ok);

	if (!rc)
		rc = call(&r);
	*value = r.value;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
	uint64_t v;
	CUresult rc = ctx_get_u64(xgpulib_call_CTX_GET_FLAGS, flags, &v);

	if (!rc)
		*flags = (unsigned int)v;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
	uint64_t v;
	CUresult rc = ctx_get_u64(xgpulib_call_CTX_GET_CACHE_CONFIG, pconfig,
				  &v);

	if (!rc)
		*pconfig = (CUfunc_cache)v;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
	struct xgpuif_u32_args a = { (uint32_t)config, 0 };

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	xgpulib_occupancy_forget();	/* functions without a preference */
	return xgpulib_call_CTX_SET_CACHE_CONFIG(&a);
}

/*
 * Shared memory bank size: configurable only on Kepler; every device the
 * CUDA 13 driver supports has 4-byte banks and ignores the setting.
 */
XGPULIB_EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig *pConfig)
{
	CUresult rc = xgpulib_query_arg(pConfig);

	if (!rc)
		*pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
	return rc;
}

XGPULIB_EXPORT CUresult cuCtxSetSharedMemConfig(CUsharedconfig config)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if ((unsigned int)config >
	    (unsigned int)CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* persisting L2 lines are a performance hint; nothing to reset here */
XGPULIB_EXPORT CUresult cuCtxResetPersistingL2Cache(void)
{
	return xgpulib_check_init();
}
