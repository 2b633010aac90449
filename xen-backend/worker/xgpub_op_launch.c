// SPDX-License-Identifier: MIT
/*
 * xgpub_op_launch.c: kernel launches and occupancy queries in a worker.
 *
 * LAUNCH carries the parameters flattened at the offsets of the
 * function's layout; the worker copies them into an aligned buffer and
 * points kernelParams[i] at offset i, or, for a function whose layout the
 * driver did not give, hands the buffer over as
 * CU_LAUNCH_PARAM_BUFFER_POINTER.  Launch attributes travel in the CUDA
 * ABI's layout; event handles in them are translated, and attributes that
 * could carry a pointer the driver would follow are refused.
 */
#include <limits.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

#define ATTR_SIZE ((uint32_t)sizeof(struct xgpuif_launch_attr))

_Static_assert(sizeof(CUlaunchAttribute) == sizeof(struct xgpuif_launch_attr),
	       "launch attributes travel as the CUDA ABI lays them out");

/* the dispatch thread is the only user of these */
static _Alignas(16) uint8_t param_buf[XGPUIF_MAX_PAYLOAD];
static void *kparams[XGPUIF_MAX_PARAMS];
static CUlaunchAttribute attr_buf[XGPUIF_MAX_LAUNCH_ATTRS];

/* attributes whose value is numbers or a device address */
bool xgpub_attr_plain(uint32_t id)
{
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
	case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
		return true;
	default:
		return false;
	}
}

int xgpub_launch_attrs(struct xgpub_worker *w, const uint8_t *src,
		       uint32_t n, CUlaunchAttribute *out)
{
	for (uint32_t i = 0; i < n; i++) {
		struct xgpuif_launch_attr a;

		memcpy(&a, src + i * ATTR_SIZE, sizeof(a));
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = (CUlaunchAttributeID)a.id;
		if (a.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    a.id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT) {
			xgpuif_handle_t h;
			CUevent ev = NULL;

			memcpy(&out[i].value, a.value, sizeof(out[i].value));
			memcpy(&h, a.value, sizeof(h));
			if (h) {
				struct xgpub_hentry *e = xgpub_handle_get(
					&w->h, h, XGPUB_H_EVENT);

				if (!e)
					return CUDA_ERROR_INVALID_HANDLE;
				ev = e->obj;
			}
			/* both values put the CUevent first */
			out[i].value.launchCompletionEvent.event = ev;
		} else if (xgpub_attr_plain(a.id)) {
			memcpy(&out[i].value, a.value, sizeof(out[i].value));
		} else {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

/* the driver's launch configuration; nattrs attributes from attr_buf */
static void launch_cfg(CUlaunchConfig *cfg, const uint32_t grid[3],
		       const uint32_t block[3], uint32_t shmem, CUstream stream,
		       uint32_t nattrs)
{
	*cfg = (CUlaunchConfig){
		.gridDimX = grid[0],
		.gridDimY = grid[1],
		.gridDimZ = grid[2],
		.blockDimX = block[0],
		.blockDimY = block[1],
		.blockDimZ = block[2],
		.sharedMemBytes = shmem,
		.hStream = stream,
		.attrs = nattrs ? attr_buf : NULL,
		.numAttrs = nattrs,
	};
}

/* what a failed launch was, for the debug log (the guest gets only rc) */
static void launch_failed(struct xgpub_worker *w,
			  const struct xgpuif_launch_args *a, void *obj,
			  const struct xgpub_fn *fn, int rc)
{
	const char *name = NULL;

	if (a->kind == XGPUIF_FN_KERNEL)
		w->D->cuKernelGetName(&name, obj);
	else
		w->D->cuFuncGetName(&name, obj);
	xgpub_dbg("%s: launch of %s failed with %d: grid %ux%ux%u, block "
		  "%ux%ux%u, %u bytes shared, %u attributes, %u parameter "
		  "bytes (%d parameters)", w->t->who, name ? name : "?", rc,
		  a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1],
		  a->block[2], a->shmem, a->nattrs, a->param_bytes,
		  (int)fn->nparams);
}

/*
 * The function and parameters of a launch or a kernel node: *kp (a
 * known layout) or *ex (a flat buffer) point into this file's buffers,
 * valid until the next launch.  A known layout decides where every
 * parameter is read from.
 */
int xgpub_kernel_params(struct xgpub_worker *w,
			const struct xgpuif_launch_args *a,
			const uint8_t *params, void **obj, void ***kp,
			void ***ex)
{
	static void *extra[5];
	static size_t psize;
	const struct xgpub_fn *fn;
	int rc;

	*kp = NULL;
	*ex = NULL;
	rc = xgpub_fn_get(w, a->func, a->kind, obj, &fn);
	if (rc)
		return rc;
	if (fn->nparams != XGPUIF_PARAMS_UNKNOWN &&
	    a->param_bytes != fn->param_bytes)
		return XGPUIF_ST_PROTO;
	for (int i = 0; i < 3; i++)
		if (!a->grid[i] || !a->block[i])
			return CUDA_ERROR_INVALID_VALUE;
	memcpy(param_buf, params, a->param_bytes);
	if (fn->nparams != XGPUIF_PARAMS_UNKNOWN) {
		/* offset + size <= param_bytes was checked at registration */
		for (uint32_t i = 0; i < fn->nparams; i++)
			kparams[i] = param_buf + fn->params[i].offset;
		*kp = fn->nparams ? kparams : NULL;
	} else if (a->param_bytes) {
		psize = a->param_bytes;
		extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		extra[1] = param_buf;
		extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		extra[3] = &psize;
		extra[4] = CU_LAUNCH_PARAM_END;
		*ex = extra;
	}
	return 0;
}

XGPUB_HANDLER(LAUNCH)
{
	const struct xgpub_fn *fn;
	void **ex, **kp;
	CUlaunchConfig cfg;
	void *obj;
	int rc;

	if (a->nattrs > XGPUIF_MAX_LAUNCH_ATTRS ||
	    tail->len != (uint64_t)a->nattrs * ATTR_SIZE + a->param_bytes)
		return XGPUIF_ST_PROTO;
	rc = xgpub_kernel_params(w, a, tail->p + a->nattrs * ATTR_SIZE, &obj,
				 &kp, &ex);
	if (rc)
		return rc;
	rc = xgpub_launch_attrs(w, tail->p, a->nattrs, attr_buf);
	if (rc)
		return rc;
	if (a->nattrs == 0) {
		/* a CUkernel launches through the CUfunction entry points */
		rc = w->D->cuLaunchKernel(obj, a->grid[0], a->grid[1],
					  a->grid[2], a->block[0], a->block[1],
					  a->block[2], a->shmem, stream, kp, ex);
	} else {
		launch_cfg(&cfg, a->grid, a->block, a->shmem, stream,
			   a->nattrs);
		rc = w->D->cuLaunchKernelEx(&cfg, obj, kp, ex);
	}
	if (rc && xgpub_fn_get(w, a->func, a->kind, &obj, &fn) == 0)
		launch_failed(w, a, obj, fn, rc);
	return rc;
}

/* ---- occupancy ----------------------------------------------------------- */

/* the function an occupancy query names; its block size must fit an int */
static int occ_fn(struct xgpub_worker *w,
		  const struct xgpuif_occupancy_args *a, void **obj)
{
	int rc = xgpub_fn_get(w, a->func, a->kind, obj, NULL);

	if (rc == CUDA_SUCCESS && a->block_size > INT_MAX)
		rc = CUDA_ERROR_INVALID_VALUE;
	return rc;
}

XGPUB_HANDLER(OCC_MAX_ACTIVE_BLOCKS)
{
	void *obj;
	int n = 0, rc;

	rc = occ_fn(w, a, &obj);
	if (rc)
		return rc;
	rc = w->D->cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		&n, obj, (int)a->block_size, (size_t)a->dyn_smem, a->flags);
	r->value = n;
	return rc;
}

XGPUB_HANDLER(OCC_AVAILABLE_DSMEM)
{
	size_t size = 0;
	void *obj;
	int rc;

	rc = occ_fn(w, a, &obj);
	if (rc)
		return rc;
	if (a->num_blocks > INT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuOccupancyAvailableDynamicSMemPerBlock(
		&size, obj, (int)a->num_blocks, (int)a->block_size);
	r->value = size;
	return rc;
}

XGPUB_HANDLER(OCC_CLUSTERS)
{
	CUlaunchConfig cfg;
	void *obj;
	int n = 0, rc;

	if (a->nattrs > XGPUIF_MAX_LAUNCH_ATTRS || a->which > 1 ||
	    tail->len != (uint64_t)a->nattrs * ATTR_SIZE)
		return XGPUIF_ST_PROTO;
	rc = xgpub_fn_get(w, a->func, a->kind, &obj, NULL);
	if (rc)
		return rc;
	rc = xgpub_launch_attrs(w, tail->p, a->nattrs, attr_buf);
	if (rc)
		return rc;
	launch_cfg(&cfg, a->grid, a->block, a->shmem, stream, a->nattrs);
	if (a->which == 0)
		rc = w->D->cuOccupancyMaxActiveClusters(&n, obj, &cfg);
	else
		rc = w->D->cuOccupancyMaxPotentialClusterSize(&n, obj, &cfg);
	r->value = n;
	return rc;
}
