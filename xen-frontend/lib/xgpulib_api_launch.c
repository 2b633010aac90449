// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_launch.c: kernel launches and occupancy queries.
 *
 * A launch is one POSTED request: struct xgpuif_launch_args, the launch
 * attributes, then the parameters flattened at the offsets of the
 * function's layout (the worker rebuilds kernelParams from them).  Its
 * error, if any, comes back at the next synchronous call, as an
 * asynchronous launch failure does with the real driver; what can be
 * checked here (handles, dimensions, the argument form) is checked before
 * anything is sent.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_image.h"
#include "xgpulib_entry.h"

_Static_assert(sizeof(CUlaunchAttributeValue) == 64,
	       "launch attribute values are 64 bytes");
_Static_assert(sizeof(CUlaunchAttribute) == sizeof(struct xgpuif_launch_attr),
	       "launch attributes travel as the CUDA ABI lays them out");

/* ---- parameters ---------------------------------------------------------- */

/* CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE of an `extra` array */
static int parse_extra(void **extra, const void **buf, size_t *size)
{
	bool have_size = false;

	*buf = NULL;
	*size = 0;
	for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
			*buf = extra[i + 1];
		} else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
			if (!extra[i + 1])
				return CUDA_ERROR_INVALID_VALUE;
			*size = *(const size_t *)extra[i + 1];
			have_size = true;
		} else {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	if (!have_size || (*size && !*buf))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

int xgpulib_params_len(const struct xgpulib_func *f, void **kernelParams,
		       void **extra, uint32_t *len)
{
	bool known = f->nparams != XGPUIF_PARAMS_UNKNOWN;

	if (kernelParams && extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (extra) {
		const void *buf;
		size_t size;
		int rc = parse_extra(extra, &buf, &size);

		if (rc)
			return rc;
		if (known) {
			/* the driver reads the layout's bytes; a shorter
			 * buffer would leave parameters unset */
			if (size < f->param_bytes)
				return CUDA_ERROR_INVALID_VALUE;
			*len = f->param_bytes;
			return CUDA_SUCCESS;
		}
		if (size > XGPUIF_MAX_PAYLOAD)
			return CUDA_ERROR_INVALID_VALUE;
		*len = (uint32_t)size;
		return CUDA_SUCCESS;
	}
	if (!known) {
		xgpulib_dbg("launch of %s: its parameter layout is unknown, so "
			    "kernelParams cannot be flattened (use extra)",
			    f->name ? f->name : "?");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (f->nparams && !kernelParams)
		return CUDA_ERROR_INVALID_VALUE;
	*len = f->param_bytes;
	return CUDA_SUCCESS;
}

int xgpulib_pack_params(const struct xgpulib_func *f, void **kernelParams,
			void **extra, void *buf, uint32_t cap, uint32_t *len)
{
	uint8_t *out = buf;
	uint32_t n;
	int rc = xgpulib_params_len(f, kernelParams, extra, &n);

	if (rc)
		return rc;
	if (n > cap)
		return CUDA_ERROR_INVALID_VALUE;
	if (extra) {
		const void *src;
		size_t size;

		parse_extra(extra, &src, &size);
		if (n)
			memcpy(out, src, n);
		*len = n;
		return CUDA_SUCCESS;
	}
	/* padding between parameters goes out as zeros, not stack bytes */
	if (n)
		memset(out, 0, n);
	for (uint32_t i = 0; i < f->nparams; i++) {
		const struct xgpuif_param *p = &f->params[i];

		if (!p->size)
			continue;
		if (!kernelParams[i])
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(out + p->offset, kernelParams[i], p->size);
	}
	*len = n;
	return CUDA_SUCCESS;
}

/* ---- attributes and streams ---------------------------------------------- */

static CUresult event_remote(CUevent ev, uint64_t *out)
{
	*out = 0;
	if (!ev)
		return CUDA_SUCCESS;	/* the driver judges a NULL event */
	if (ev->magic != XGPULIB_EVENT_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = ev->remote;
	return CUDA_SUCCESS;
}

/*
 * CUlaunchAttribute -> wire.  The value bytes travel as they are except
 * for event handles, which become the events' wire handles.
 */
static CUresult attrs_to_wire(const CUlaunchAttribute *in, unsigned int n,
			      struct xgpuif_launch_attr *out, uint32_t *nout)
{
	uint32_t k = 0;

	if (n && !in)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		struct xgpuif_launch_attr *a;

		if (in[i].id == CU_LAUNCH_ATTRIBUTE_IGNORE)
			continue;
		/* graphs only; stream capture is not forwarded */
		if (in[i].id ==
		    CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
			return CUDA_ERROR_NOT_SUPPORTED;
		if (k == XGPUIF_MAX_LAUNCH_ATTRS) {
			xgpulib_dbg("launch with more than %u attributes",
				    XGPUIF_MAX_LAUNCH_ATTRS);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		a = &out[k++];
		memset(a, 0, sizeof(*a));
		a->id = (uint32_t)in[i].id;
		memcpy(a->value, &in[i].value, sizeof(a->value));
		if (in[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    in[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT) {
			uint64_t r;
			/* both put the CUevent first */
			CUresult rc = event_remote(
				in[i].value.launchCompletionEvent.event, &r);

			if (rc)
				return rc;
			memcpy(a->value, &r, sizeof(r));
		}
	}
	*nout = k;
	return CUDA_SUCCESS;
}

static CUresult stream_of(CUstream s, int ptsz, uint64_t *out)
{
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD &&
	    s->magic != XGPULIB_STREAM_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = xgpulib_stream_remote(s, ptsz);
	return CUDA_SUCCESS;
}

/* the grid and block of a launch configuration, as the wire has them */
static void dims_to_wire(const CUlaunchConfig *c, uint32_t grid[3],
			 uint32_t block[3])
{
	grid[0] = c->gridDimX;
	grid[1] = c->gridDimY;
	grid[2] = c->gridDimZ;
	block[0] = c->blockDimX;
	block[1] = c->blockDimY;
	block[2] = c->blockDimZ;
}

/* ---- launches ------------------------------------------------------------ */

/* every launch comes here: cuLaunchKernel and the others build a config */
CUresult xgpulib_launch_config(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra, int ptsz)
{
	struct xgpulib_func *fn = xgpulib_func_check(f);
	struct xgpuif_launch_attr attrs[XGPUIF_MAX_LAUNCH_ATTRS];
	struct xgpuif_launch_args a;
	struct xgpuif_iov tail[2];
	uint8_t small[1024];	/* most kernels take a few pointers */
	uint8_t *buf = small;
	uint32_t len = 0, fixed;
	CUresult rc;

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	rc = attrs_to_wire(config->attrs, config->numAttrs, attrs, &a.nattrs);
	if (rc)
		return rc;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!fn)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!xgpulib_current_remote())
		return CUDA_ERROR_INVALID_CONTEXT;
	dims_to_wire(config, a.grid, a.block);
	for (int i = 0; i < 3; i++)
		if (!a.grid[i] || !a.block[i])
			return CUDA_ERROR_INVALID_VALUE;
	rc = stream_of(config->hStream, ptsz, &a.stream);
	if (rc)
		return rc;
	rc = xgpulib_params_len(fn, kernelParams, extra, &len);
	if (rc)
		return rc;
	fixed = sizeof(a) + a.nattrs * sizeof(struct xgpuif_launch_attr);
	if (len > XGPUIF_MAX_PAYLOAD - fixed) {
		xgpulib_dbg("launch of %s: %u parameter bytes do not fit one "
			    "message", fn->name, len);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (len > sizeof(small)) {
		buf = malloc(len);
		if (!buf)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rc = xgpulib_pack_params(fn, kernelParams, extra, buf, len, &len);
	if (rc == CUDA_SUCCESS) {
		a.func = fn->remote;
		a.kind = fn->kind;
		a.shmem = config->sharedMemBytes;
		a.param_bytes = len;
		tail[0] = (struct xgpuif_iov){
			attrs, a.nattrs * (uint32_t)sizeof(attrs[0]) };
		tail[1] = (struct xgpuif_iov){ buf, len };
		rc = xgpulib_post_LAUNCH(&a, tail, 2);
	}
	if (buf != small)
		free(buf);
	return rc;
}

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

/*
 * The answer depends on the function, its settings and the context's
 * cache configuration only; frameworks ask it before launches (PyTorch:
 * twice per training step), so each function keeps its last few.  A
 * setting that may change it bumps the generation.
 */
static uint64_t xgpulib_occ_gen = 1;

void xgpulib_occupancy_forget(void)
{
	__atomic_add_fetch(&xgpulib_occ_gen, 1, __ATOMIC_ACQ_REL);
}

static bool occ_cached(struct xgpulib_func *fn, uint32_t bs, uint64_t smem,
		       uint32_t flags, int *out)
{
	uint64_t gen = __atomic_load_n(&xgpulib_occ_gen, __ATOMIC_ACQUIRE);
	bool hit = false;

	pthread_mutex_lock(&fn->attr_mu);
	for (unsigned int i = 0; i < (sizeof(fn->occ) / sizeof(fn->occ[0])) && !hit; i++) {
		if (fn->occ[i].gen == gen && fn->occ[i].block_size == bs &&
		    fn->occ[i].dyn_smem == smem && fn->occ[i].flags == flags) {
			*out = fn->occ[i].value;
			hit = true;
		}
	}
	pthread_mutex_unlock(&fn->attr_mu);
	return hit;
}

/* gen: the generation before the question was sent */
static void occ_keep(struct xgpulib_func *fn, uint64_t gen, uint32_t bs,
		     uint64_t smem, uint32_t flags, int32_t value)
{
	pthread_mutex_lock(&fn->attr_mu);
	fn->occ[fn->occ_next].gen = gen;
	fn->occ[fn->occ_next].block_size = bs;
	fn->occ[fn->occ_next].dyn_smem = smem;
	fn->occ[fn->occ_next].flags = flags;
	fn->occ[fn->occ_next].value = value;
	fn->occ_next = (fn->occ_next + 1) % (sizeof(fn->occ) / sizeof(fn->occ[0]));
	pthread_mutex_unlock(&fn->attr_mu);
}

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
	if (occ_cached(fn, (uint32_t)blockSize, dynamicSMemSize, flags,
		       numBlocks))
		return CUDA_SUCCESS;
	gen = __atomic_load_n(&xgpulib_occ_gen, __ATOMIC_ACQUIRE);
	memset(&a, 0, sizeof(a));
	a.func = fn->remote;
	a.kind = fn->kind;
	a.flags = flags;
	a.block_size = (uint32_t)blockSize;
	a.dyn_smem = dynamicSMemSize;
	rc = xgpulib_call_OCC_MAX_ACTIVE_BLOCKS(&a, &r);
	if (rc)
		return rc;
	occ_keep(fn, gen, (uint32_t)blockSize, dynamicSMemSize, flags,
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

static CUresult occ_clusters(int *out, CUfunction func,
			     const CUlaunchConfig *config, uint32_t which)
{
	struct xgpulib_func *fn = xgpulib_func_check(func);
	struct xgpuif_occ_cluster_args a;
	struct xgpuif_launch_attr attrs[XGPUIF_MAX_LAUNCH_ATTRS];
	struct xgpuif_i32_reply r = { 0, 0 };
	struct xgpuif_iov tail;
	CUresult rc;

	XGPULIB_CHECK_ARGS(out && config, fn);
	memset(&a, 0, sizeof(a));
	rc = stream_of(config->hStream, 0, &a.stream);
	if (!rc)
		rc = attrs_to_wire(config->attrs, config->numAttrs, attrs,
				   &a.nattrs);
	if (rc)
		return rc;
	a.func = fn->remote;
	a.kind = fn->kind;
	a.shmem = config->sharedMemBytes;
	dims_to_wire(config, a.grid, a.block);
	a.which = which;
	tail = (struct xgpuif_iov){
		attrs, a.nattrs * (uint32_t)sizeof(attrs[0]) };
	rc = xgpulib_call_OCC_CLUSTERS(&a, &tail, 1, &r);
	if (rc)
		return rc;
	*out = r.value;
	return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
				      const CUlaunchConfig *config)
{
	return occ_clusters(numClusters, func, config, 0);
}

CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize,
					    CUfunction func,
					    const CUlaunchConfig *config)
{
	return occ_clusters(clusterSize, func, config, 1);
}
