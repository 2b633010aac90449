// SPDX-License-Identifier: MIT
/*
 * xgpub_op_ext.c: driver extensions the worker's driver judges: async
 * notifications (cuDeviceRegisterAsyncNotification), batched hardware
 * decompression (cuMemBatchDecompressAsync), sparse array mappings
 * (cuMemMapArrayAsync) and texture references of no module
 * (cuTexRefCreate).  On a GPU without the feature the guest gets the
 * driver's own answer.
 *
 * A notification registration is a NOTIFY handle whose extra names the
 * guest's function number; the driver calls on_notify on a thread of its
 * own, which hands the notification to the guest through a graph slot of
 * the host-function region (xgpub_op_hostfn.c) and returns once the
 * guest's callback ran.  Unregistering asks the driver first, so no call
 * follows the reply.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

/* texture references are deprecated in cuda.h, and served */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

struct xgpub_notify {
	struct xgpub_worker *w;
	uint64_t fnid;		/* the guest's number of the callback */
};

_Static_assert(sizeof(((CUasyncNotificationInfo *)0)->info) <=
		       sizeof(uint64_t),
	       "a notification's info fits the slot's nt_info");
_Static_assert(sizeof(((CUarrayMapInfo *)0)->subresource) ==
		       sizeof(((struct xgpuif_array_map *)0)->sub),
	       "the subresource union travels as it is");
_Static_assert(sizeof(CUmemDecompressParams) == XGPUIF_DECOMPRESS_SIZE,
	       "CUmemDecompressParams is 64 bytes");

static void CUDA_CB on_notify(CUasyncNotificationInfo *info, void *user,
			      CUasyncCallbackHandle h)
{
	const struct xgpub_notify *n = user;
	uint64_t v = 0;

	(void)h;
	if (!info || !n)
		return;
	memcpy(&v, &info->info, sizeof(info->info));
	xgpub_hostfn_notify(n->w, n->fnid, (uint32_t)info->type, v);
}

XGPUB_HANDLER(NOTIFY_REGISTER)
{
	CUasyncCallbackHandle h = NULL;
	struct xgpub_notify *n;
	int rc;

	if (a->device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	/* the guest sets its slots up first: notifications go through them */
	if (!a->fnid || a->_pad || a->handle || !w->hostfn_ngraph)
		return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->w = w;
	n->fnid = a->fnid;
	rc = w->D->cuDeviceRegisterAsyncNotification(w->dev, on_notify, n, &h);
	/* a full table unregisters it and frees n */
	return xgpub_keep_made(w, rc, XGPUB_H_NOTIFY, h, n, &r->ref);
}

XGPUB_HANDLER(NOTIFY_UNREGISTER)
{
	if (a->device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (a->fnid || a->_pad)
		return CUDA_ERROR_INVALID_VALUE;
	/* the driver calls it no more once it answered; then n goes */
	return xgpub_release_drop(w, handle);
}

/* a value the driver cannot mean: errorIndex untouched */
#define INDEX_UNSET ((size_t)0x7ab1e5e7da5e1ull)

XGPUB_HANDLER(MEM_DECOMPRESS)
{
	static CUmemDecompressParams p[XGPUIF_MAX_DECOMPRESS];
	size_t idx = INDEX_UNSET;
	int rc;

	if (a->count > XGPUIF_MAX_DECOMPRESS || a->want_index > 1 ||
	    a->null_params > (a->count == 0) ||
	    tail->len != a->count * XGPUIF_DECOMPRESS_SIZE)
		return XGPUIF_ST_PROTO;
	for (uint32_t i = 0; i < a->count; i++) {
		struct xgpuif_decompress e;

		memcpy(&e, tail->p + (size_t)i * sizeof(e), sizeof(e));
		memset(&p[i], 0, sizeof(p[i]));
		p[i].srcNumBytes = e.src_bytes;
		p[i].dstNumBytes = e.dst_bytes;
		p[i].dstActBytes = (cuuint32_t *)(uintptr_t)e.dst_act_bytes;
		p[i].src = (const void *)(uintptr_t)e.src;
		p[i].dst = (void *)(uintptr_t)e.dst;
		p[i].algo = (CUmemDecompressAlgorithm)e.algo;
		memcpy(p[i].padding, e.padding, sizeof(p[i].padding));
	}
	rc = w->D->cuMemBatchDecompressAsync(a->null_params ? NULL : p,
					     a->count, a->flags,
					     a->want_index ? &idx : NULL,
					     stream);
	if (a->want_index && idx != INDEX_UNSET) {
		r->index = idx;
		r->index_set = 1;
	}
	/* the reply goes back with the driver's error in it */
	r->result = rc;
	return 0;
}

/* entry e from the wire as the driver's, its handles resolved */
static int map_entry(struct xgpub_worker *w, const struct xgpuif_array_map *e,
		     CUarrayMapInfo *m)
{
	struct xgpub_hentry *h;

	memset(m, 0, sizeof(*m));
	m->resourceType = (CUresourcetype)e->resource_type;
	if (e->resource_type == CU_RESOURCE_TYPE_ARRAY) {
		m->resource.array = xgpub_array_of(w, e->resource);
		if (!m->resource.array)
			return CUDA_ERROR_INVALID_HANDLE;
	} else if (e->resource_type == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) {
		h = xgpub_handle_get(&w->h, e->resource, XGPUB_H_MIPMAP);
		if (!h)
			return CUDA_ERROR_INVALID_HANDLE;
		m->resource.mipmap = h->obj;
	} else if (e->resource) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	m->subresourceType = (CUarraySparseSubresourceType)e->subresource_type;
	memcpy(&m->subresource, e->sub, sizeof(e->sub));
	m->memOperationType = (CUmemOperationType)e->mem_op;
	m->memHandleType = (CUmemHandleType)e->mem_handle_type;
	if (e->mem) {
		h = xgpub_handle_get(&w->h, e->mem, XGPUB_H_VMEM);
		if (!h)
			return CUDA_ERROR_INVALID_HANDLE;
		m->memHandle.memHandle =
			(CUmemGenericAllocationHandle)(uintptr_t)h->obj;
	}
	m->offset = e->offset;
	/* the guest's device 0 is the worker's device */
	if (e->device_mask & ~1u)
		return CUDA_ERROR_INVALID_VALUE;
	m->deviceBitMask = e->device_mask ? 1u << w->dev : 0;
	m->flags = e->flags;
	m->reserved[0] = e->reserved[0];
	m->reserved[1] = e->reserved[1];
	return CUDA_SUCCESS;
}

XGPUB_HANDLER(MAP_ARRAY)
{
	static CUarrayMapInfo m[XGPUIF_MAX_ARRAY_MAPS];
	int rc;

	if (a->count > XGPUIF_MAX_ARRAY_MAPS ||
	    a->null_list > (a->count == 0) ||
	    tail->len != a->count * sizeof(struct xgpuif_array_map))
		return XGPUIF_ST_PROTO;
	for (uint32_t i = 0; i < a->count; i++) {
		struct xgpuif_array_map e;

		memcpy(&e, tail->p + (size_t)i * sizeof(e), sizeof(e));
		rc = map_entry(w, &e, &m[i]);
		if (rc)
			return rc;
	}
	return w->D->cuMemMapArrayAsync(a->null_list ? NULL : m, a->count,
					stream);
}

XGPUB_HANDLER(TEXREF_CREATE)
{
	CUtexref t = NULL;
	int rc = w->D->cuTexRefCreate(&t);

	if (rc)
		return rc;
	/* no extra: no module's unload or context's end drops it */
	return xgpub_keep(w, XGPUB_H_TEXREF, t, NULL, &r->ref);
}

XGPUB_HANDLER(TEXREF_DESTROY)
{
	/* a module's reference goes with its module */
	if (handle->extra)
		return CUDA_ERROR_INVALID_HANDLE;
	return xgpub_release_drop(w, handle);
}
