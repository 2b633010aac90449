// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_launch.c: the kernel launches of CUDA 4 and later, and
 * occupancy queries.  Every launch goes out through
 * xgpulib_launch_config (xgpulib_launch.c).
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_image.h"
#include "xgpulib_entry.h"

/* ---- launches ------------------------------------------------------------ */

/*
 * The launches of CUDA 4 and later: they invalidate what cuFuncSetBlockShape
 * and cuParamSet* set for f, as the driver says they do.
 */
CUresult xgpulib_launch_kernel_ex(const CUlaunchConfig *config, CUfunction f,
				  void **kernelParams, void **extra, int ptsz)
{
	struct xgpulib_func *fn = xgpulib_func_check(f);

	if (fn)
		xgpulib_legacy_drop(fn);
	return xgpulib_launch_config(config, f, kernelParams, extra, ptsz);
}

/* cuLaunchKernel's and cuLaunchCooperativeKernel's dimensions as a config */
static CUlaunchConfig config_of(unsigned int gx, unsigned int gy,
				unsigned int gz, unsigned int bx,
				unsigned int by, unsigned int bz,
				unsigned int shmem, CUstream s)
{
	CUlaunchConfig c = {
		.gridDimX = gx,
		.gridDimY = gy,
		.gridDimZ = gz,
		.blockDimX = bx,
		.blockDimY = by,
		.blockDimZ = bz,
		.sharedMemBytes = shmem,
		.hStream = s,
	};

	return c;
}

CUresult xgpulib_launch_kernel(CUfunction f, unsigned int gx,
			       unsigned int gy, unsigned int gz,
			       unsigned int bx, unsigned int by,
			       unsigned int bz, unsigned int shmem, CUstream s,
			       void **kernelParams, void **extra, int ptsz)
{
	CUlaunchConfig c = config_of(gx, gy, gz, bx, by, bz, shmem, s);

	return xgpulib_launch_kernel_ex(&c, f, kernelParams, extra, ptsz);
}

CUresult xgpulib_launch_cooperative(CUfunction f, unsigned int gx,
				    unsigned int gy, unsigned int gz,
				    unsigned int bx, unsigned int by,
				    unsigned int bz, unsigned int shmem,
				    CUstream s, void **kernelParams, int ptsz)
{
	CUlaunchConfig c = config_of(gx, gy, gz, bx, by, bz, shmem, s);
	CUlaunchAttribute attr;

	memset(&attr, 0, sizeof(attr));
	attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	attr.value.cooperative = 1;
	c.attrs = &attr;
	c.numAttrs = 1;
	return xgpulib_launch_kernel_ex(&c, f, kernelParams, NULL, ptsz);
}

/*
 * Deprecated.  One entry is a cooperative launch on that entry's stream
 * (the flags only order work across the GPUs of the list); more entries
 * name more GPUs than a worker has.
 */
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *list,
					      unsigned int numDevices,
					      unsigned int flags)
{
	const unsigned int known =
		CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC |
		CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC;
	CUstream s;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!list || !numDevices || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	if (numDevices > 1) {
		xgpulib_dbg("cooperative launch over %u devices: one GPU per "
			    "worker", numDevices);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	s = list[0].hStream;
	/* the driver wants a stream of cuStreamCreate */
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_VALUE;
	return xgpulib_launch_cooperative(list[0].function, list[0].gridDimX,
					  list[0].gridDimY, list[0].gridDimZ,
					  list[0].blockDimX, list[0].blockDimY,
					  list[0].blockDimZ,
					  list[0].sharedMemBytes, s,
					  list[0].kernelParams, 0);
}

/* ---- occupancy ----------------------------------------------------------- */

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
	int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize,
	unsigned int flags)
{
	struct xgpulib_func *fn = xgpulib_func_check(func);
	struct xgpuif_occupancy_args a;
	struct xgpuif_i32_reply r = { 0, 0 };
	uint64_t gen;
	CUresult rc;

	XGPULIB_CHECK_ARGS(numBlocks && blockSize >= 0, fn);
	if (xgpulib_occ_cached(fn, (uint32_t)blockSize, dynamicSMemSize, flags,
		       numBlocks))
		return CUDA_SUCCESS;
	gen = xgpulib_occ_gen();
	memset(&a, 0, sizeof(a));
	a.func = fn->remote;
	a.kind = fn->kind;
	a.flags = flags;
	a.block_size = (uint32_t)blockSize;
	a.dyn_smem = dynamicSMemSize;
	rc = xgpulib_call_OCC_MAX_ACTIVE_BLOCKS(&a, &r);
	if (rc)
		return rc;
	xgpulib_occ_keep(fn, gen, (uint32_t)blockSize, dynamicSMemSize, flags,
		 r.value);
	*numBlocks = r.value;
	return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
						     CUfunction func,
						     int blockSize,
						     size_t dynamicSMemSize)
{
	return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		numBlocks, func, blockSize, dynamicSMemSize,
		CU_OCCUPANCY_DEFAULT);
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
						 CUfunction func,
						 int numBlocks, int blockSize)
{
	struct xgpulib_func *fn = xgpulib_func_check(func);
	struct xgpuif_occupancy_args a;
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	XGPULIB_CHECK_ARGS(dynamicSmemSize && numBlocks >= 0 && blockSize >= 0,
			   fn);
	memset(&a, 0, sizeof(a));
	a.func = fn->remote;
	a.kind = fn->kind;
	a.block_size = (uint32_t)blockSize;
	a.num_blocks = (uint32_t)numBlocks;
	rc = xgpulib_call_OCC_AVAILABLE_DSMEM(&a, &r);
	if (rc)
		return rc;
	*dynamicSmemSize = (size_t)r.value;
	return CUDA_SUCCESS;
}

static int dev_attr(const struct xgpuif_device_info_reply *i,
		    CUdevice_attribute a)
{
	return i->attr_valid[a] ? i->attrs[a] : 0;
}

/*
 * The block size with the most resident threads per multiprocessor: the
 * search the CUDA occupancy calculator does, over warp-size steps from the
 * largest block the function allows down, each step asking the driver
 * how many blocks fit.  The guest's callback (dynamic shared memory per
 * block size) runs here, in the guest.
 */
static CUresult max_potential_block_size(int *minGridSize, int *blockSize,
					 CUfunction func,
					 CUoccupancyB2DSize b2d,
					 size_t dynamicSMemSize,
					 int blockSizeLimit,
					 unsigned int flags)
{
	struct xgpulib_func *fn = xgpulib_func_check(func);
	const struct xgpuif_device_info_reply *info;
	struct CUctx_st *ctx;
	int dev_max, sm_threads, warp, nsm, fn_max, max_bs;
	int best_bs = 0, best_blocks = 0, best_threads = 0;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!minGridSize || !blockSize || blockSizeLimit < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn)
		return CUDA_ERROR_INVALID_HANDLE;
	ctx = xgpulib_current();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	rc = xgpulib_check_dev(ctx->dev);
	if (rc)
		return rc;
	info = &xgpulib_devs[ctx->dev].info;
	dev_max = dev_attr(info, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	sm_threads = dev_attr(
		info, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
	warp = dev_attr(info, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
	nsm = dev_attr(info, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	if (dev_max <= 0 || sm_threads <= 0 || warp <= 0 || nsm <= 0)
		return CUDA_ERROR_UNKNOWN;
	rc = xgpulib_func_attr(fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
			       &fn_max);
	if (rc)
		return rc;
	max_bs = fn_max > 0 && fn_max < dev_max ? fn_max : dev_max;
	if (blockSizeLimit > 0 && blockSizeLimit < max_bs)
		max_bs = blockSizeLimit;
	for (int aligned = (max_bs + warp - 1) / warp * warp; aligned > 0;
	     aligned -= warp) {
		int bs = aligned < max_bs ? aligned : max_bs;
		size_t smem = b2d ? b2d(bs) : dynamicSMemSize;
		int blocks = 0;

		rc = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
			&blocks, func, bs, smem, flags);
		if (rc)
			return rc;
		if (blocks * bs > best_threads) {
			best_bs = bs;
			best_blocks = blocks;
			best_threads = blocks * bs;
		}
		/* a full multiprocessor cannot be beaten */
		if (best_threads >= sm_threads)
			break;
	}
	*minGridSize = best_blocks * nsm;
	*blockSize = best_bs;
	return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
					  CUfunction func,
					  CUoccupancyB2DSize
						  blockSizeToDynamicSMemSize,
					  size_t dynamicSMemSize,
					  int blockSizeLimit)
{
	return max_potential_block_size(minGridSize, blockSize, func,
					blockSizeToDynamicSMemSize,
					dynamicSMemSize, blockSizeLimit,
					CU_OCCUPANCY_DEFAULT);
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
	int *minGridSize, int *blockSize, CUfunction func,
	CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
	int blockSizeLimit, unsigned int flags)
{
	return max_potential_block_size(minGridSize, blockSize, func,
					blockSizeToDynamicSMemSize,
					dynamicSMemSize, blockSizeLimit, flags);
}

/* cuOccupancyMaxActiveClusters (which 0), cuOccupancyMaxPotentialClusterSize
 * (which 1): xgpulib_entry.def */
CUresult xgpulib_occ_clusters(int *out, CUfunction func,
			      const CUlaunchConfig *config, int which)
{
	struct xgpulib_func *fn = xgpulib_func_check(func);
	struct xgpuif_occ_cluster_args a;
	struct xgpuif_launch_attr attrs[XGPUIF_MAX_LAUNCH_ATTRS];
	struct xgpuif_i32_reply r = { 0, 0 };
	struct xgpuif_iov tail;
	CUresult rc;

	XGPULIB_CHECK_ARGS(out && config, fn);
	memset(&a, 0, sizeof(a));
	rc = xgpulib_launch_stream(config->hStream, 0, &a.stream);
	if (!rc)
		rc = xgpulib_launch_attrs(config->attrs, config->numAttrs,
					  attrs, &a.nattrs);
	if (rc)
		return rc;
	a.func = fn->remote;
	a.kind = fn->kind;
	a.shmem = config->sharedMemBytes;
	xgpulib_launch_dims(config, a.grid, a.block);
	a.which = which;
	tail = (struct xgpuif_iov){
		attrs, a.nattrs * (uint32_t)sizeof(attrs[0]) };
	rc = xgpulib_call_OCC_CLUSTERS(&a, &tail, 1, &r);
	if (rc)
		return rc;
	*out = r.value;
	return CUDA_SUCCESS;
}

