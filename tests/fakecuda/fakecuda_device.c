// SPDX-License-Identifier: MIT
/*
 * fakecuda_device.c: the fake driver's device and contexts (tests only,
 * see fakecuda.h): cuInit, one H100-like device, its primary context and
 * created contexts with their limits, flags and cache configuration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakecuda.h"

/* ---- the device's attributes (H100-like) --------------------------------- */

/*
 * Values of an H100 SXM where the fake has nothing to say otherwise;
 * features the fake does not emulate (managed memory, memory pools,
 * virtual memory management, IPC, RDMA, sparse arrays) read 0 so that a
 * program does not try them.
 */
static const int dev_attr[CU_DEVICE_ATTRIBUTE_MAX] = {
	[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] = 1024,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] = 1024,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] = 64,
	[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] = 2147483647,
	[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] = 65535,
	[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] = 65535,
	[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK] = 49152,
	[CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY] = 65536,
	[CU_DEVICE_ATTRIBUTE_WARP_SIZE] = 32,
	[CU_DEVICE_ATTRIBUTE_MAX_PITCH] = 2147483647,
	[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK] = 65536,
	[CU_DEVICE_ATTRIBUTE_CLOCK_RATE] = 1980000,
	[CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT] = 512,
	[CU_DEVICE_ATTRIBUTE_GPU_OVERLAP] = 1,
	[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = FAKE_SMS,
	[CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT] = 0,
	[CU_DEVICE_ATTRIBUTE_INTEGRATED] = 0,
	[CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] = 1,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_MODE] = CU_COMPUTEMODE_DEFAULT,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT] = 65536,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT] = 512,
	[CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] = 1,
	[CU_DEVICE_ATTRIBUTE_ECC_ENABLED] = 1,
	[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = 0xfe,	/* not a real slot */
	[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID] = 0,
	[CU_DEVICE_ATTRIBUTE_TCC_DRIVER] = 0,
	[CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE] = 2619000,
	[CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH] = 5120,
	[CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE] = 52428800,
	[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] = 2048,
	[CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT] = 3,
	[CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING] = 1,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER] = 1,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE] = 8192,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE] = 8192,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE] = 32768,
	[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID] = 0,
	[CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT] = 32,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS] = 2046,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT] = 65536,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS] = 2046,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH] = 268435456,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT] = 65000,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH] = 2097120,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 9,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = 0,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] =
		FAKE_SMEM_PER_SM,
	[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR] = 65536,
	[CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY] = 1,
	[CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD] = 0,
	[CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO] = 2,
	[CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS] = 0,
	[CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS] = 1,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM] = 1,
	[CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH] = 1,
	[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] =
		FAKE_MAX_DYN_SMEM,
	[CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = 32,
	[CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE] = 32768000,
	[CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE] = 134217728,
	[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK] =
		FAKE_SMEM_RESERVED,
	[CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH] = 1,
	[CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS] = 1,
	[CU_DEVICE_ATTRIBUTE_NUMA_ID] = -1,
	[CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID] = -1,
	[CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT] = 4,
	[CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID] = 0x233010de,
	[CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID] = 0x16c110de,
};

/* ---- context state ------------------------------------------------------- */

static struct fctx primary;
static int primary_refs;
static unsigned int primary_flags;

static const size_t default_limits[CU_LIMIT_MAX] = {
	[CU_LIMIT_STACK_SIZE] = 1024,
	[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20,
	[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20,
	[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
	[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
	[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 32,
	[CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0,
	[CU_LIMIT_SHMEM_SIZE] = FAKE_MAX_DYN_SMEM,
	[CU_LIMIT_CIG_ENABLED] = 0,
	[CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 0,
};

static void ctx_init(struct fctx *c, unsigned int flags)
{
	c->flags = flags;
	memcpy(c->limits, default_limits, sizeof(c->limits));
	c->cache = CU_FUNC_CACHE_PREFER_NONE;
}

struct fctx *fc_primary(void)
{
	return &primary;
}

void fc_ctx_init_green(struct fctx *c)
{
	ctx_init(c, primary.flags);
	c->base = &primary;
}

/* free what a context owns: modules, streams, events, allocations */
void fc_ctx_free_resources(struct fctx *c)
{
	struct fobj **pp = &fc_objs;

	while (*pp) {
		struct fobj *o = *pp;

		if (o->ctx != c || o == &c->o) {
			pp = &o->next;
			continue;
		}
		if (o->type == O_MODULE) {
			fc_module_free((struct fmodule *)o);
			pp = &fc_objs;	/* the list changed under us */
			continue;
		}
		*pp = o->next;
		fc_obj_free(o);
	}
	for (size_t i = 0; i < fc_nranges;) {
		if (fc_ranges[i].kind == R_DEVICE && fc_ranges[i].ctx == c)
			fc_range_del(&fc_ranges[i]);
		else
			i++;
	}
}

/* ---- init and device ----------------------------------------------------- */

CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	fc_inited = true;
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = FAKE_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
	NEED_INIT();
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	NEED_INIT();
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "xgpu fake device (testing only)");
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = FAKE_TOTAL_MEM;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pi || (int)a <= 0 || (int)a >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = dev_attr[a];
	/* a driver whose kernels reach pageable host memory (HMM, ATS):
	 * XGPU_FAKE_PAGEABLE=1 (the daemon refuses it unless told) */
	if (a == CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS &&
	    getenv("XGPU_FAKE_PAGEABLE"))
		*pi = atoi(getenv("XGPU_FAKE_PAGEABLE")) != 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	static const char id[16] = { 'X', 'G', 'P', 'U', '-', 'F', 'A', 'K',
				     'E', '-', 'D', 'E', 'V', 'I', 'C', 'E' };

	CHECK_DEV(dev);
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, id, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

/* the address of the fake's PCI attributes, as the driver writes it */
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!id || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(id, (size_t)len, "%04x:%02x:%02x.0",
		 dev_attr[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID],
		 dev_attr[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID],
		 dev_attr[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID]);
	return CUDA_SUCCESS;
}

/* ---- primary context ----------------------------------------------------- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (primary_refs == 0) {
		ctx_init(&primary, primary_flags);
		fc_obj_add(&primary.o, O_CTX, NULL);
	}
	primary_refs++;
	*pctx = (CUcontext)&primary;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CHECK_DEV(dev);
	if (primary_refs == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--primary_refs == 0) {
		fc_ctx_free_resources(&primary);
		fc_obj_unlink(&primary.o);
		if (fc_cur == &primary)
			fc_cur = NULL;
	}
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	CHECK_DEV(dev);
	if (primary_refs)
		fc_ctx_free_resources(&primary);
	primary_flags = 0;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	CHECK_DEV(dev);
	if (flags & ~(unsigned int)CU_CTX_FLAGS_MASK)
		return CUDA_ERROR_INVALID_VALUE;
	primary_flags = flags;
	if (primary_refs)
		primary.flags = flags;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
				    int *active)
{
	CHECK_DEV(dev);
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = primary_flags;
	*active = primary_refs > 0;
	return CUDA_SUCCESS;
}

/* ---- contexts ------------------------------------------------------------ */

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
			unsigned int flags, CUdevice dev)
{
	struct fctx *c;

	CHECK_DEV(dev);
	if (!pctx || (flags & ~(unsigned int)CU_CTX_FLAGS_MASK))
		return CUDA_ERROR_INVALID_VALUE;
	if (params && (params->execAffinityParams || params->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_init(c, flags);
	fc_obj_add(&c->o, O_CTX, NULL);
	fc_cur = c;		/* a new context is made current */
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct fctx *c;

	NEED_INIT();
	c = CTX(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* the primary is only released; a green context's goes with it */
	if (c == &primary || c->base)
		return CUDA_ERROR_INVALID_CONTEXT;
	fc_ctx_free_resources(c);
	fc_obj_unlink(&c->o);
	if (fc_cur == c)
		fc_cur = NULL;
	free(c);
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	NEED_INIT();
	if (ctx && !CTX(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	fc_cur = (struct fctx *)ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	NEED_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)fc_cur;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	NEED_CTX();
	/* everything completed when issued, but what waits for a value */
	while (fc_ctx_waits(fc_cur))
		usleep(1000);
	fc_printf_flush();
	return CUDA_SUCCESS;
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	NEED_CTX();
	if (!pvalue)
		return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned int)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	*pvalue = fc_cur->limits[limit];
	return CUDA_SUCCESS;
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
	NEED_CTX();
	if ((unsigned int)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	switch (limit) {
	case CU_LIMIT_SHMEM_SIZE:
	case CU_LIMIT_CIG_ENABLED:
		return CUDA_ERROR_INVALID_VALUE;	/* query only */
	case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
		if (value > 128)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
		if (value > (size_t)dev_attr[
			    CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE])
			return CUDA_ERROR_INVALID_VALUE;
		break;
	default:
		break;
	}
	fc_cur->limits[limit] = value;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	NEED_CTX();
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
	NEED_CTX();
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = fc_cur->flags;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
	NEED_CTX();
	if (!pconfig)
		return CUDA_ERROR_INVALID_VALUE;
	*pconfig = fc_cur->cache;
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
	NEED_CTX();
	if (!fc_cache_config_ok(config))
		return CUDA_ERROR_INVALID_VALUE;
	fc_cur->cache = config;
	return CUDA_SUCCESS;
}

/* a table of FAKE_ETBL_SLOTS slots, for the guest library's handling of
 * tables it does not know; every other id is not found */
static CUresult fake_etbl_slot(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuGetExportTable(const void **tbl, const CUuuid *id)
{
	static const void *table[FAKE_ETBL_SLOTS];

	if (!tbl || !id)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < 16; i++)
		if ((uint8_t)id->bytes[i] != FAKE_ETBL_BYTE)
			return CUDA_ERROR_NOT_FOUND;
	table[0] = (const void *)(uintptr_t)sizeof(table);
	for (int i = 1; i < FAKE_ETBL_SLOTS; i++)
		table[i] = (const void *)(uintptr_t)fake_etbl_slot;
	*tbl = table;
	return CUDA_SUCCESS;
}
