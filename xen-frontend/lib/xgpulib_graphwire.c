// SPDX-License-Identifier: MIT
/*
 * xgpulib_graphwire.c: graph nodes' parameters as the wire carries them
 * and back: memcpy nodes (host memory through its pinned region, arrays
 * by their handles), host nodes (their function's number), memset nodes
 * (checked), and the generic parameters of CUDA 12.2 as the older
 * structs.  Shared by the entry points that add nodes
 * (xgpulib_api_graphnode.c) and those that get and set their parameters
 * (xgpulib_api_graphquery.c); it calls none of them.
 */
#include <stddef.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_graph.h"

/* ---- memcpy nodes -------------------------------------------------------- */

/* one side of a copy as the wire carries it */
static CUresult side_wire(CUmemorytype type, const void *host, CUdeviceptr dev,
			  CUarray arr, size_t x, size_t y, size_t z,
			  size_t pitch, size_t height, const CUDA_MEMCPY3D *p,
			  struct xgpuif_node_side *s)
{
	const struct xgpulib_region *r;
	uint64_t off, last = 1, t;

	memset(s, 0, sizeof(*s));
	if (type == CU_MEMORYTYPE_DEVICE ||
	    (type == CU_MEMORYTYPE_UNIFIED && xgpulib_is_device(dev))) {
		s->type = CU_MEMORYTYPE_DEVICE;
		s->addr = dev;
	} else if (type == CU_MEMORYTYPE_HOST ||
		   type == CU_MEMORYTYPE_UNIFIED) {
		if (type == CU_MEMORYTYPE_UNIFIED)
			host = (const void *)(uintptr_t)dev;
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		/* the last byte the copy touches, from host */
		if (p->WidthInBytes && p->Height && p->Depth) {
			uint64_t pt = pitch ? pitch : p->WidthInBytes;

			if (__builtin_add_overflow(z, p->Depth - 1, &t) ||
			    __builtin_mul_overflow(t, height, &t) ||
			    __builtin_mul_overflow(t, pt, &last) ||
			    __builtin_add_overflow(y, p->Height - 1, &t) ||
			    __builtin_mul_overflow(t, pt, &t) ||
			    __builtin_add_overflow(last, t, &last) ||
			    __builtin_add_overflow(last, x, &last) ||
			    __builtin_add_overflow(last, p->WidthInBytes,
						   &last))
				return CUDA_ERROR_INVALID_VALUE;
		}
		r = xgpulib_region_find(host, last, &off);
		if (!r) {
			xgpulib_dbg("graph memcpy node: pageable host "
				    "memory where it cannot be staged (both "
				    "sides, or a node's new parameters; "
				    "pinned memory, cuMemHostAlloc, works "
				    "everywhere)");
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		s->type = CU_MEMORYTYPE_HOST;
		s->region = r->id;
		s->addr = off;
	} else if (type == CU_MEMORYTYPE_ARRAY) {
		s->type = CU_MEMORYTYPE_ARRAY;
		s->addr = xgpulib_array_remote(arr);
		if (!s->addr)
			return CUDA_ERROR_INVALID_VALUE;
	} else {
		return CUDA_ERROR_INVALID_VALUE;
	}
	s->x = x;
	s->y = y;
	s->z = z;
	s->pitch = pitch;
	s->height = height;
	return CUDA_SUCCESS;
}

static CUresult copy_wire(const CUDA_MEMCPY3D *p, struct xgpuif_node_copy *c)
{
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(c, 0, sizeof(*c));
	rc = side_wire(p->srcMemoryType, p->srcHost, p->srcDevice,
		       p->srcArray, p->srcXInBytes, p->srcY, p->srcZ,
		       p->srcPitch, p->srcHeight, p, &c->src);
	if (rc == CUDA_SUCCESS)
		rc = side_wire(p->dstMemoryType, p->dstHost, p->dstDevice,
			       p->dstArray, p->dstXInBytes, p->dstY, p->dstZ,
			       p->dstPitch, p->dstHeight, p, &c->dst);
	c->width = p->WidthInBytes;
	c->height = p->Height;
	c->depth = p->Depth;
	return rc;
}

/* a wire side back in a CUDA_MEMCPY3D's fields */
static void side_back(const struct xgpuif_node_side *s, CUmemorytype *type,
		      const void **host, CUdeviceptr *dev, CUarray *arr,
		      size_t *x, size_t *y, size_t *z, size_t *pitch,
		      size_t *height)
{
	if (s->type == CU_MEMORYTYPE_ARRAY) {
		*type = CU_MEMORYTYPE_ARRAY;
		*arr = xgpulib_array_by_remote(s->addr);
	} else if (s->type == CU_MEMORYTYPE_HOST) {
		uint8_t *va = xgpulib_region_va(s->region);

		*type = CU_MEMORYTYPE_HOST;
		*host = va ? va + s->addr : NULL;
	} else {
		*type = CU_MEMORYTYPE_DEVICE;
		*dev = s->addr;
	}
	*x = s->x;
	*y = s->y;
	*z = s->z;
	*pitch = s->pitch;
	*height = s->height;
}

static void copy_back(const struct xgpuif_node_copy *c, CUDA_MEMCPY3D *p)
{
	memset(p, 0, sizeof(*p));
	side_back(&c->src, &p->srcMemoryType, &p->srcHost, &p->srcDevice,
		  &p->srcArray, &p->srcXInBytes, &p->srcY, &p->srcZ,
		  &p->srcPitch, &p->srcHeight);
	side_back(&c->dst, &p->dstMemoryType, (const void **)&p->dstHost,
		  &p->dstDevice, &p->dstArray, &p->dstXInBytes, &p->dstY,
		  &p->dstZ, &p->dstPitch, &p->dstHeight);
	p->WidthInBytes = c->width;
	p->Height = c->height;
	p->Depth = c->depth;
}

/* ---- host nodes ---------------------------------------------------------- */

static CUresult host_wire(const CUDA_HOST_NODE_PARAMS *p,
			  struct xgpuif_node_host *h)
{
	if (!p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	h->fnid = xgpulib_hostfn_id(p->fn, p->userData);
	return h->fnid ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult host_back(const struct xgpuif_node_host *h,
			  CUDA_HOST_NODE_PARAMS *p)
{
	return xgpulib_hostfn_of(h->fnid, &p->fn, &p->userData) ?
		       CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

/* ---- memset nodes -------------------------------------------------------- */

static CUresult memset_wire(const CUDA_MEMSET_NODE_PARAMS *p,
			    struct xgpuif_node_memset *m)
{
	if (!p || !p->width || !p->height ||
	    (p->elementSize != 1 && p->elementSize != 2 &&
	     p->elementSize != 4)) {
		xgpulib_dbg("graph memset node: width %zu height %zu "
			    "element size %u", p ? p->width : 0,
			    p ? p->height : 0, p ? p->elementSize : 0);
		return CUDA_ERROR_INVALID_VALUE;
	}
	*m = (struct xgpuif_node_memset){ p->dst, p->pitch, p->width,
					  p->height, p->value,
					  p->elementSize };
	return CUDA_SUCCESS;
}

static void memset_back(const struct xgpuif_node_memset *m,
			CUDA_MEMSET_NODE_PARAMS *p)
{
	*p = (CUDA_MEMSET_NODE_PARAMS){ .dst = m->dst, .pitch = m->pitch,
					.value = m->value,
					.elementSize = m->elem_size,
					.width = m->width,
					.height = m->height };
}

/* ---- the fixed kinds, by type -------------------------------------------- */

uint32_t xgpulib_node_fixed_len(uint32_t type)
{
	switch (type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return sizeof(struct xgpuif_node_memset);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return sizeof(struct xgpuif_node_copy);
	default:	/* CU_GRAPH_NODE_TYPE_HOST */
		return sizeof(struct xgpuif_node_host);
	}
}

CUresult xgpulib_node_wire(uint32_t type, const void *p,
			   union xgpulib_node_fixed *w)
{
	switch (type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return memset_wire(p, &w->memset);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return copy_wire(p, &w->copy);
	default:	/* CU_GRAPH_NODE_TYPE_HOST */
		return host_wire(p, &w->host);
	}
}

CUresult xgpulib_node_unwire(uint32_t type, const union xgpulib_node_fixed *w,
			     void *p)
{
	switch (type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		memset_back(&w->memset, p);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		copy_back(&w->copy, p);
		return CUDA_SUCCESS;
	default:	/* CU_GRAPH_NODE_TYPE_HOST */
		return host_back(&w->host, p);
	}
}

/* ---- generic node parameters (CUDA 12.2 on) as the older structs --------- */

/*
 * Each older struct is the first fields of the newer one, in the same
 * order: the conversions are copies of those.
 */
#define PREFIX_OF(old, new, last)					\
	_Static_assert(offsetof(old, last) == offsetof(new, last) &&	\
		       sizeof(old) <= sizeof(new), #old " leads " #new)
PREFIX_OF(CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS_v3, ctx);
PREFIX_OF(CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS, extra);
PREFIX_OF(CUDA_MEMSET_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS_v2, height);
PREFIX_OF(CUDA_BATCH_MEM_OP_NODE_PARAMS, CUDA_BATCH_MEM_OP_NODE_PARAMS_v2,
	  flags);

void xgpulib_node_kernel_of(const CUgraphNodeParams *p,
			    CUDA_KERNEL_NODE_PARAMS *k)
{
	memcpy(k, &p->kernel, sizeof(*k));
}

void xgpulib_node_memset_of(const CUgraphNodeParams *p,
			    CUDA_MEMSET_NODE_PARAMS *m)
{
	memcpy(m, &p->memset, sizeof(*m));
}

void xgpulib_node_memop_of(const CUgraphNodeParams *p,
			   CUDA_BATCH_MEM_OP_NODE_PARAMS *b)
{
	memcpy(b, &p->memOp, sizeof(*b));
}
