// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_ext.c: driver extensions the worker's driver judges (on a
 * GPU without the feature the program gets that driver's own error):
 * async notifications, batched hardware decompression and sparse array
 * mappings.
 *
 * An async notification registration is a record of ours (the program's
 * CUasyncCallbackHandle), live from the registration's reply to its
 * unregistration; a handle not among the live records is refused with
 * CUDA_ERROR_INVALID_VALUE.  The program's callback runs on the
 * host-function helper thread of this library (xgpulib_api_hostfn.c),
 * never in the worker; after cuDeviceUnregisterAsyncNotification returns
 * it runs no more.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_dev.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"
#include "xgpulib_reg.h"

struct CUasyncCallbackEntry_st {
	struct xgpulib_reg reg;		/* first: remote, the NOTIFY handle */
	CUdevice dev;
	uint64_t fnid;			/* the helper's number of it */
};

static struct xgpulib_regs nts = XGPULIB_REGS_INIT;	/* live ones */

XGPULIB_EXPORT CUresult cuDeviceRegisterAsyncNotification(
	CUdevice dev, CUasyncCallback cb, void *user,
	CUasyncCallbackHandle *out)
{
	struct xgpuif_notify_args a = { dev, 0, 0, 0 };
	struct xgpuif_ref_reply r = { 0 };
	struct CUasyncCallbackEntry_st *e;
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!cb || !out)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* the number first: a notification may come before the reply */
	a.fnid = xgpulib_notify_id(cb, user, e, &rc);
	if (!a.fnid) {
		free(e);
		return rc;
	}
	rc = xgpulib_call_NOTIFY_REGISTER(&a, &r);
	if (rc) {
		xgpulib_notify_forget(a.fnid);
		free(e);
		return rc;
	}
	e->dev = dev;
	e->reg.remote = r.ref;
	e->fnid = a.fnid;
	xgpulib_reg_add(&nts, &e->reg);
	*out = e;
	return CUDA_SUCCESS;
}

XGPULIB_EXPORT CUresult cuDeviceUnregisterAsyncNotification(
	CUdevice dev, CUasyncCallbackHandle h)
{
	struct xgpuif_notify_args a = { dev, 0, 0, 0 };
	struct CUasyncCallbackEntry_st *e;
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	e = (struct CUasyncCallbackEntry_st *)xgpulib_reg_take(&nts, h);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	if (e->dev != dev) {
		xgpulib_reg_done(&nts, &e->reg, false);
		return CUDA_ERROR_INVALID_VALUE;
	}
	a.handle = e->reg.remote;
	rc = xgpulib_call_NOTIFY_UNREGISTER(&a);
	xgpulib_reg_done(&nts, &e->reg, rc == CUDA_SUCCESS);
	if (rc)
		return rc;
	/* the worker's driver calls it no more; nor does our helper after
	 * this (it may be running it now: wait) */
	xgpulib_notify_forget(e->fnid);
	free(e);
	return CUDA_SUCCESS;
}

/* ---- hardware decompression ---------------------------------------------- */

CUresult xgpulib_mem_batch_decompress(CUmemDecompressParams *p, size_t count,
				      unsigned int flags, size_t *index,
				      CUstream s, int ptds)
{
	struct xgpuif_decompress_args a = { 0, 0, flags, index != NULL,
					    p == NULL };
	struct xgpuif_decompress_reply r = { 0, 0, CUDA_ERROR_UNKNOWN };
	struct xgpuif_decompress *e;
	struct xgpuif_iov tail;
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	/* one request carries the batch: the driver judges it as one */
	if ((count && !p) || count > XGPUIF_MAX_DECOMPRESS) {
		if (index)
			*index = SIZE_MAX;
		return CUDA_ERROR_INVALID_VALUE;
	}
	a.count = (uint32_t)count;
	e = calloc(count ? count : 1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < count; i++) {
		e[i].src_bytes = p[i].srcNumBytes;
		e[i].dst_bytes = p[i].dstNumBytes;
		e[i].dst_act_bytes = (uintptr_t)p[i].dstActBytes;
		e[i].src = (uintptr_t)p[i].src;
		e[i].dst = (uintptr_t)p[i].dst;
		e[i].algo = (uint32_t)p[i].algo;
		memcpy(e[i].padding, p[i].padding, sizeof(e[i].padding));
	}
	tail = (struct xgpuif_iov){ e, (uint32_t)(count * sizeof(*e)) };
	rc = xgpulib_call_MEM_DECOMPRESS(&a, &tail, 1, &r);
	free(e);
	if (rc)
		return rc;	/* the entries never reached the driver */
	if (index && r.index_set)
		*index = (size_t)r.index;
	return (CUresult)r.result;
}

/* ---- sparse array mappings ------------------------------------------------ */

CUresult xgpulib_mem_map_array(CUarrayMapInfo *list, unsigned int count,
			       CUstream s, int ptds)
{
	struct xgpuif_map_array_args a = { 0, count, list == NULL };
	struct xgpuif_array_map *e;
	struct xgpuif_iov tail;
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if ((count && !list) || count > XGPUIF_MAX_ARRAY_MAPS)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(count ? count : 1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned int i = 0; i < count && !rc; i++) {
		const CUarrayMapInfo *m = &list[i];

		e[i].resource_type = (uint32_t)m->resourceType;
		if (m->resourceType == CU_RESOURCE_TYPE_ARRAY) {
			e[i].resource = xgpulib_array_remote(m->resource.array);
			if (!e[i].resource)
				rc = CUDA_ERROR_INVALID_HANDLE;
		} else if (m->resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) {
			e[i].resource =
				xgpulib_mipmap_remote(m->resource.mipmap);
			if (!e[i].resource)
				rc = CUDA_ERROR_INVALID_HANDLE;
		}
		e[i].subresource_type = (uint32_t)m->subresourceType;
		memcpy(e[i].sub, &m->subresource, sizeof(e[i].sub));
		e[i].mem_op = (uint32_t)m->memOperationType;
		e[i].mem_handle_type = (uint32_t)m->memHandleType;
		/* a physical allocation's handle is its wire handle; the
		 * worker refuses one not of this guest's.  An unmap takes
		 * none */
		if (m->memOperationType == CU_MEM_OPERATION_TYPE_MAP)
			e[i].mem = m->memHandle.memHandle;
		e[i].offset = m->offset;
		e[i].device_mask = m->deviceBitMask;
		e[i].flags = m->flags;
		e[i].reserved[0] = m->reserved[0];
		e[i].reserved[1] = m->reserved[1];
	}
	if (rc == CUDA_SUCCESS) {
		tail = (struct xgpuif_iov){ e, count * (uint32_t)sizeof(*e) };
		rc = xgpulib_call_MAP_ARRAY(&a, &tail, 1);
	}
	free(e);
	return rc;
}
