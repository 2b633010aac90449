// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_graphquery.c: graph nodes once they exist: their parameters
 * (get and set, in a graph or an executable graph), edges, removal,
 * enabling, clones, the executable graph's flags, the dot file, and the
 * device's graph memory; user objects, whose destructor runs in this
 * process (a host function by number, xgpulib_api_hostfn.c).
 *
 * The worker answers with wire handles, which become this process's
 * objects again: nodes and graphs through robj_for, events through the
 * table below (every event this process made), host functions through
 * their numbers (xgpulib_api_hostfn.c), host memory of a memcpy node
 * through its region (pinned memory).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_graph.h"

/* ---- events by wire handle ------------------------------------------------ */

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static CUevent *evs;
static size_t nev, capev;

void xgpulib_event_note(CUevent e, bool live)
{
	pthread_mutex_lock(&ev_mu);
	if (live && nev == capev) {
		size_t ncap = capev ? capev * 2 : 64;
		CUevent *n = realloc(evs, ncap * sizeof(*n));

		if (n) {
			evs = n;
			capev = ncap;
		}
	}
	if (live && nev < capev) {
		evs[nev++] = e;
	} else if (!live) {
		for (size_t i = 0; i < nev; i++) {
			if (evs[i] == e) {
				evs[i] = evs[--nev];
				break;
			}
		}
	}
	pthread_mutex_unlock(&ev_mu);
}

static CUevent event_of(uint64_t remote)
{
	CUevent e = NULL;

	pthread_mutex_lock(&ev_mu);
	for (size_t i = 0; i < nev && !e; i++)
		if (evs[i]->remote == remote)
			e = evs[i];
	pthread_mutex_unlock(&ev_mu);
	return e;
}

static uint64_t event_remote(CUevent e)
{
	return e && e->magic == XGPULIB_EVENT_MAGIC ? e->remote : 0;
}

/* ---- memcpy nodes --------------------------------------------------------- */

/* one side of a copy as the wire carries it */
static CUresult side_wire(CUmemorytype type, const void *host, CUdeviceptr dev,
			  size_t x, size_t y, size_t z, size_t pitch,
			  size_t height, const CUDA_MEMCPY3D *p,
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
			xgpulib_dbg("graph memcpy node: the host side is "
				    "pageable memory (only pinned memory, "
				    "cuMemHostAlloc, is supported)");
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		s->type = CU_MEMORYTYPE_HOST;
		s->region = r->id;
		s->addr = off;
	} else {
		xgpulib_dbg("graph memcpy node: arrays are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	s->x = x;
	s->y = y;
	s->z = z;
	s->pitch = pitch;
	s->height = height;
	return CUDA_SUCCESS;
}

CUresult xgpulib_node_copy_wire(const CUDA_MEMCPY3D *p,
				struct xgpuif_node_copy *c)
{
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(c, 0, sizeof(*c));
	rc = side_wire(p->srcMemoryType, p->srcHost, p->srcDevice,
		       p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch,
		       p->srcHeight, p, &c->src);
	if (rc == CUDA_SUCCESS)
		rc = side_wire(p->dstMemoryType, p->dstHost, p->dstDevice,
			       p->dstXInBytes, p->dstY, p->dstZ, p->dstPitch,
			       p->dstHeight, p, &c->dst);
	c->width = p->WidthInBytes;
	c->height = p->Height;
	c->depth = p->Depth;
	return rc;
}

/* a wire side back in a CUDA_MEMCPY3D's fields */
static void side_back(const struct xgpuif_node_side *s, CUmemorytype *type,
		      const void **host, CUdeviceptr *dev, size_t *x,
		      size_t *y, size_t *z, size_t *pitch, size_t *height)
{
	if (s->type == CU_MEMORYTYPE_HOST) {
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
		  &p->srcXInBytes, &p->srcY, &p->srcZ, &p->srcPitch,
		  &p->srcHeight);
	side_back(&c->dst, &p->dstMemoryType, (const void **)&p->dstHost,
		  &p->dstDevice, &p->dstXInBytes, &p->dstY, &p->dstZ,
		  &p->dstPitch, &p->dstHeight);
	p->WidthInBytes = c->width;
	p->Height = c->height;
	p->Depth = c->depth;
}

/* ---- parameters ------------------------------------------------------------ */

/* a node's parameters, checked to be of type `type`: at most cap bytes
 * at body, *len of them */
static CUresult node_get_var(CUgraphNode n, int type, void *body, uint32_t cap,
			     uint32_t *len)
{
	struct xgpuif_handle_args a = { robj_remote(n, RK_NODE) };
	struct xgpuif_node_get_reply r = { 0 };
	CUresult rc;

	if (!a.handle || !body)
		return CUDA_ERROR_INVALID_VALUE;
	*len = 0;
	rc = xgpulib_call_GRAPH_NODE_GET(&a, &r, body, cap, len);
	if (rc)
		return rc;
	if (r.type != (uint32_t)type)
		return CUDA_ERROR_INVALID_VALUE;
	return r.len == *len ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

/* a node's parameters of a fixed size, for the caller's out (checked) */
static CUresult node_get(CUgraphNode n, int type, const void *out, void *body,
			 uint32_t len)
{
	uint8_t buf[256];
	uint32_t got = 0;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = node_get_var(n, type, buf, sizeof(buf), &got);
	if (rc)
		return rc;
	if (got != len)
		return CUDA_ERROR_UNKNOWN;
	memcpy(body, buf, len);
	return CUDA_SUCCESS;
}

/*
 * The setters' first check: exec, a cuGraphExec*SetParams call, names its
 * executable graph x; otherwise x is NULL and the node's graph is meant.
 */
static bool exec_missing(CUgraphExec x, bool exec)
{
	return exec && !x;
}

/* new parameters of a node of `type`, in its graph or in executable x */
static CUresult node_set(CUgraphExec x, CUgraphNode n, uint32_t type,
			 const void *body, uint32_t len)
{
	struct xgpuif_node_set_args a = { 0, robj_remote(n, RK_NODE), type,
					  0 };
	struct xgpuif_iov tail = { body, len };

	if (x) {
		a.exec = robj_remote(x, RK_EXEC);
		if (!a.exec)
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (!a.node)
		return CUDA_ERROR_INVALID_VALUE;
	return xgpulib_call_GRAPH_NODE_SET(&a, &tail, 1);
}

/* host nodes */

CUresult xgpulib_node_host_wire(const CUDA_HOST_NODE_PARAMS *p,
				struct xgpuif_node_host *h)
{
	if (!p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	h->fnid = xgpulib_hostfn_id(p->fn, p->userData);
	return h->fnid ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult host_set(CUgraphExec x, bool exec, CUgraphNode n,
			 const CUDA_HOST_NODE_PARAMS *p)
{
	struct xgpuif_node_host h;
	CUresult rc = exec_missing(x, exec) ? CUDA_ERROR_INVALID_VALUE :
		      xgpulib_node_host_wire(p, &h);

	return rc ? rc : node_set(x, n, CU_GRAPH_NODE_TYPE_HOST, &h,
				  sizeof(h));
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *p)
{
	struct xgpuif_node_host h;
	CUresult rc = node_get(hNode, CU_GRAPH_NODE_TYPE_HOST, p, &h,
			       sizeof(h));

	if (rc)
		return rc;
	return xgpulib_hostfn_of(h.fnid, &p->fn, &p->userData) ?
		       CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
				  const CUDA_HOST_NODE_PARAMS *p)
{
	return host_set(NULL, false, hNode, p);
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
				      const CUDA_HOST_NODE_PARAMS *p)
{
	return host_set(hGraphExec, true, hNode, p);
}

/* memset nodes */

static CUresult memset_set(CUgraphExec x, bool exec, CUgraphNode n,
			   const CUDA_MEMSET_NODE_PARAMS *p)
{
	struct xgpuif_node_memset m;

	if (exec_missing(x, exec) || !p || !p->width || !p->height ||
	    (p->elementSize != 1 && p->elementSize != 2 &&
	     p->elementSize != 4))
		return CUDA_ERROR_INVALID_VALUE;
	m = (struct xgpuif_node_memset){ p->dst, p->pitch, p->width,
					 p->height, p->value,
					 p->elementSize };
	return node_set(x, n, CU_GRAPH_NODE_TYPE_MEMSET, &m, sizeof(m));
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode,
				    CUDA_MEMSET_NODE_PARAMS *p)
{
	struct xgpuif_node_memset m;
	CUresult rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEMSET, p, &m,
			       sizeof(m));

	if (rc)
		return rc;
	*p = (CUDA_MEMSET_NODE_PARAMS){ .dst = m.dst, .pitch = m.pitch,
					.value = m.value,
					.elementSize = m.elem_size,
					.width = m.width, .height = m.height };
	return CUDA_SUCCESS;
}

CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode,
				    const CUDA_MEMSET_NODE_PARAMS *p)
{
	return memset_set(NULL, false, hNode, p);
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec,
					CUgraphNode hNode,
					const CUDA_MEMSET_NODE_PARAMS *p,
					CUcontext ctx)
{
	(void)ctx;
	return memset_set(hGraphExec, true, hNode, p);
}

/* memcpy nodes */

static CUresult memcpy_set(CUgraphExec x, bool exec, CUgraphNode n,
			   const CUDA_MEMCPY3D *p)
{
	struct xgpuif_node_copy c;
	CUresult rc = exec_missing(x, exec) ? CUDA_ERROR_INVALID_VALUE :
		      xgpulib_node_copy_wire(p, &c);

	return rc ? rc : node_set(x, n, CU_GRAPH_NODE_TYPE_MEMCPY, &c,
				  sizeof(c));
}

CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *p)
{
	struct xgpuif_node_copy c;
	CUresult rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, p, &c,
			       sizeof(c));

	if (rc == CUDA_SUCCESS)
		copy_back(&c, p);
	return rc;
}

CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *p)
{
	return memcpy_set(NULL, false, hNode, p);
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec,
					CUgraphNode hNode,
					const CUDA_MEMCPY3D *p, CUcontext ctx)
{
	(void)ctx;
	return memcpy_set(hGraphExec, true, hNode, p);
}

/* nodes whose parameter is one object: an event, a child graph */

static CUresult handle_get(CUgraphNode n, int type, const void *out,
			   uint64_t *remote)
{
	struct xgpuif_node_handle h = { 0 };
	CUresult rc = node_get(n, type, out, &h, sizeof(h));

	*remote = h.handle;
	return rc;
}

static CUresult event_get(CUgraphNode n, int type, CUevent *out)
{
	uint64_t remote;
	CUresult rc = handle_get(n, type, out, &remote);

	if (rc)
		return rc;
	*out = event_of(remote);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

static CUresult handle_set(CUgraphExec x, bool exec, CUgraphNode n, int type,
			   uint64_t remote)
{
	struct xgpuif_node_handle h = { remote };

	if (exec_missing(x, exec) || !remote)
		return CUDA_ERROR_INVALID_VALUE;
	return node_set(x, n, (uint32_t)type, &h, sizeof(h));
}

CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
	return event_get(hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_out);
}

CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
	return event_get(hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_out);
}

CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event)
{
	return handle_set(NULL, false, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
			  event_remote(event));
}

CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event)
{
	return handle_set(NULL, false, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
			  event_remote(event));
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec,
					    CUgraphNode hNode, CUevent event)
{
	return handle_set(hGraphExec, true, hNode,
			  CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_remote(event));
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec,
					  CUgraphNode hNode, CUevent event)
{
	return handle_set(hGraphExec, true, hNode,
			  CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_remote(event));
}

CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
	uint64_t remote;
	CUresult rc = handle_get(hNode, CU_GRAPH_NODE_TYPE_GRAPH, phGraph,
				 &remote);

	if (rc)
		return rc;
	*phGraph = (CUgraph)robj_for(RK_GRAPH, remote, NULL);
	return *phGraph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec,
					    CUgraphNode hNode,
					    CUgraph childGraph)
{
	return handle_set(hGraphExec, true, hNode, CU_GRAPH_NODE_TYPE_GRAPH,
			  robj_remote(childGraph, RK_GRAPH));
}

/* memory nodes */

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
				      CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct xgpuif_node_mem m;
	CUresult rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC, p, &m,
			       sizeof(m));

	if (rc)
		return rc;
	*p = (CUDA_MEM_ALLOC_NODE_PARAMS){
		.poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
			       .location = { CU_MEM_LOCATION_TYPE_DEVICE,
					     m.loc_id } },
		.bytesize = m.size, .dptr = m.dptr
	};
	return CUDA_SUCCESS;
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
	struct xgpuif_dptr_args d;
	CUresult rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE, dptr_out,
			       &d, sizeof(d));

	if (rc == CUDA_SUCCESS)
		*dptr_out = d.dptr;
	return rc;
}

/* kernel nodes: the function and the parameters, which live with the
 * node object (until its next query, or its graph's end) */
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
				       CUDA_KERNEL_NODE_PARAMS *p)
{
	struct xgpuif_launch_args a;
	struct xgpulib_func *f;
	uint8_t *buf, *keep;
	uint32_t got = 0;
	void **kp;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	buf = malloc(XGPUIF_MAX_PAYLOAD);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = node_get_var(hNode, CU_GRAPH_NODE_TYPE_KERNEL, buf,
			  XGPUIF_MAX_PAYLOAD - 64, &got);
	if (rc == CUDA_SUCCESS && got < sizeof(a))
		rc = CUDA_ERROR_UNKNOWN;
	if (rc) {
		free(buf);
		return rc;
	}
	memcpy(&a, buf, sizeof(a));
	f = xgpulib_func_by_remote(a.func, a.kind);
	if (!f || a.param_bytes != got - sizeof(a) ||
	    a.param_bytes != f->param_bytes ||
	    f->nparams == XGPUIF_PARAMS_UNKNOWN) {
		free(buf);
		return f ? CUDA_ERROR_UNKNOWN : CUDA_ERROR_NOT_SUPPORTED;
	}
	/* the pointer array, then the bytes they point into */
	keep = malloc(f->nparams * sizeof(void *) + a.param_bytes + 1);
	if (!keep) {
		free(buf);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	kp = (void **)keep;
	memcpy(keep + f->nparams * sizeof(void *), buf + sizeof(a),
	       a.param_bytes);
	for (uint32_t i = 0; i < f->nparams; i++)
		kp[i] = keep + f->nparams * sizeof(void *) +
			f->params[i].offset;
	free(buf);
	if (!robj_cache(hNode, keep))
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	/* the object the node was made with (a CUkernel is one too) */
	p->func = (CUfunction)f;
	p->gridDimX = a.grid[0];
	p->gridDimY = a.grid[1];
	p->gridDimZ = a.grid[2];
	p->blockDimX = a.block[0];
	p->blockDimY = a.block[1];
	p->blockDimZ = a.block[2];
	p->sharedMemBytes = a.shmem;
	p->kernelParams = f->nparams ? kp : NULL;
	return CUDA_SUCCESS;
}

/* the CUDA 11 form: the parameters without a kernel and a context */
#undef cuGraphKernelNodeGetParams
XGPULIB_EXPORT CUresult cuGraphKernelNodeGetParams(
	CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode,
				    CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS k;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuGraphKernelNodeGetParams_v2(hNode, &k);
	if (rc == CUDA_SUCCESS)
		memcpy(p, &k, sizeof(*p));	/* its first fields */
	return rc;
}

/* batch memory operation nodes */

static CUresult memop_set(CUgraphExec x, bool exec, CUgraphNode n,
			  const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct xgpuif_node_memop m;
	uint8_t *buf;
	CUresult rc;

	if (exec_missing(x, exec) || !p || !p->count || !p->paramArray)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->count > XGPUIF_MAX_MEMOPS)
		return CUDA_ERROR_NOT_SUPPORTED;
	m = (struct xgpuif_node_memop){ p->count, p->flags };
	buf = malloc(sizeof(m) + p->count * XGPUIF_MEMOP_SIZE);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), p->paramArray, p->count * XGPUIF_MEMOP_SIZE);
	rc = node_set(x, n, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, buf,
		      (uint32_t)(sizeof(m) + p->count * XGPUIF_MEMOP_SIZE));
	free(buf);
	return rc;
}

/*
 * The operations come back in a buffer of the calling thread's, valid
 * until its next call of this (the driver's lives with the node).
 */
CUresult cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
					CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	static __thread uint8_t buf[sizeof(struct xgpuif_node_memop) +
				    XGPUIF_MAX_MEMOPS * XGPUIF_MEMOP_SIZE];
	struct xgpuif_node_memop m;
	uint32_t got = 0;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	rc = node_get_var(hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, buf,
			  sizeof(buf), &got);
	if (rc)
		return rc;
	memcpy(&m, buf, sizeof(m));
	if (got != sizeof(m) + m.count * XGPUIF_MEMOP_SIZE)
		return CUDA_ERROR_UNKNOWN;
	memset(p, 0, sizeof(*p));
	p->count = m.count;
	p->flags = m.flags;
	p->paramArray = (CUstreamBatchMemOpParams *)(buf + sizeof(m));
	return CUDA_SUCCESS;
}

CUresult cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode,
					const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	return memop_set(NULL, false, hNode, p);
}

CUresult cuGraphExecBatchMemOpNodeSetParams(
	CUgraphExec hGraphExec, CUgraphNode hNode,
	const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	return memop_set(hGraphExec, true, hNode, p);
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

/* the generic setters (CUDA 12.2 on) for the node kinds served */
static CUresult generic_set(CUgraphExec x, bool exec, CUgraphNode n,
			    CUgraphNodeParams *p)
{
	if (exec_missing(x, exec) || !p)
		return CUDA_ERROR_INVALID_VALUE;
	switch (p->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL: {
		CUDA_KERNEL_NODE_PARAMS k;

		xgpulib_node_kernel_of(p, &k);

		return x ? cuGraphExecKernelNodeSetParams(x, n, &k) :
			   cuGraphKernelNodeSetParams(n, &k);
	}
	case CU_GRAPH_NODE_TYPE_MEMSET: {
		CUDA_MEMSET_NODE_PARAMS m;

		xgpulib_node_memset_of(p, &m);

		return memset_set(x, exec, n, &m);
	}
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (p->memcpy.flags)
			return CUDA_ERROR_INVALID_VALUE;
		return memcpy_set(x, exec, n, &p->memcpy.copyParams);
	case CU_GRAPH_NODE_TYPE_HOST: {
		CUDA_HOST_NODE_PARAMS h = { p->host.fn, p->host.userData };

		return host_set(x, exec, n, &h);
	}
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return handle_set(x, exec, n, CU_GRAPH_NODE_TYPE_GRAPH,
				  robj_remote(p->graph.graph, RK_GRAPH));
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
		CUDA_BATCH_MEM_OP_NODE_PARAMS b;

		xgpulib_node_memop_of(p, &b);

		return memop_set(x, exec, n, &b);
	}
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return handle_set(x, exec, n, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
				  event_remote(p->eventRecord.event));
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		return handle_set(x, exec, n, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
				  event_remote(p->eventWait.event));
	default:
		xgpulib_dbg("graph node set-params: node type %d is not "
			    "supported", (int)p->type);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
	return generic_set(NULL, false, hNode, nodeParams);
}

CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
				  CUgraphNodeParams *nodeParams)
{
	return generic_set(hGraphExec, true, hNode, nodeParams);
}

/* ---- edges ----------------------------------------------------------------- */

/* edges each reply holds */
#define MAX_EDGES ((XGPUIF_MAX_PAYLOAD - 64) / sizeof(struct xgpuif_edge))

/*
 * which 0: n's dependencies (into a), 1: its dependents (into a), 2: g's
 * edges (from into a, to into b); count in/out as the driver's calls.
 */
static CUresult edges(CUgraph g, CUgraphNode n, int which, CUgraphNode *a,
		      CUgraphNode *b, CUgraphEdgeData *ed, size_t *count)
{
	struct xgpuif_edges_args q = { 0, 0, (uint32_t)which, 0 };
	struct xgpuif_edges_reply r = { 0 };
	struct xgpuif_edge *buf;
	struct robj *go;
	uint32_t got = 0;
	size_t k;
	CUresult rc;

	if (!count || (which == 2 && (!a) != (!b)))
		return CUDA_ERROR_INVALID_VALUE;
	if (which == 2) {
		q.graph = robj_remote(g, RK_GRAPH);
		go = (struct robj *)g;
		if (!q.graph)
			return CUDA_ERROR_INVALID_VALUE;
	} else {
		q.node = robj_remote(n, RK_NODE);
		if (!q.node)
			return CUDA_ERROR_INVALID_VALUE;
		go = robj_graph_of(n);
	}
	if (a)
		q.max = (uint32_t)(*count < MAX_EDGES ? *count : MAX_EDGES);
	buf = calloc(q.max ? q.max : 1, sizeof(*buf));
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_GRAPH_NODE_EDGES(&q, &r, buf,
					   q.max * (uint32_t)sizeof(*buf),
					   &got);
	k = got / sizeof(*buf);
	if (rc == CUDA_SUCCESS && a && k < *count && k < r.total) {
		xgpulib_dbg("graph edges: %zu of %llu fit one reply", k,
			    (unsigned long long)r.total);
		rc = CUDA_ERROR_NOT_SUPPORTED;
	}
	for (size_t i = 0; rc == CUDA_SUCCESS && a && i < k; i++) {
		uint64_t ha = which == 1 ? buf[i].to : buf[i].from;

		a[i] = (CUgraphNode)robj_for(RK_NODE, ha, go);
		if (b)
			b[i] = (CUgraphNode)robj_for(RK_NODE, buf[i].to, go);
		if (!a[i] || (b && !b[i]))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		if (ed)
			memcpy(&ed[i], buf[i].data, sizeof(ed[i]));
	}
	/* the driver's own rule: without edge data, only default edges */
	for (size_t i = 0; rc == CUDA_SUCCESS && a && !ed && i < k; i++) {
		static const uint8_t zero[8];

		if (memcmp(buf[i].data, zero, sizeof(zero)))
			rc = CUDA_ERROR_LOSSY_QUERY;
	}
	if (rc == CUDA_SUCCESS) {
		if (!a)
			*count = r.total;
		else if (k < *count)
			*count = k;
	}
	free(buf);
	return rc;
}

CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
			    CUgraphEdgeData *edgeData, size_t *numEdges)
{
	return edges(hGraph, NULL, 2, from, to, edgeData, numEdges);
}

CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode,
				       CUgraphNode *dependencies,
				       CUgraphEdgeData *edgeData,
				       size_t *numDependencies)
{
	return edges(NULL, hNode, 0, dependencies, NULL, edgeData,
		     numDependencies);
}

CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode,
					 CUgraphNode *dependentNodes,
					 CUgraphEdgeData *edgeData,
					 size_t *numDependentNodes)
{
	return edges(NULL, hNode, 1, dependentNodes, NULL, edgeData,
		     numDependentNodes);
}

/* the CUDA 10 forms, without edge data */
#undef cuGraphGetEdges
#undef cuGraphNodeGetDependencies
#undef cuGraphNodeGetDependentNodes
#undef cuGraphRemoveDependencies
XGPULIB_EXPORT CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from,
					CUgraphNode *to, size_t *numEdges);
XGPULIB_EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode hNode,
						   CUgraphNode *dependencies,
						   size_t *numDependencies);
XGPULIB_EXPORT CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode,
						     CUgraphNode *dependentNodes,
						     size_t *numDependentNodes);
XGPULIB_EXPORT CUresult cuGraphRemoveDependencies(CUgraph hGraph,
						  const CUgraphNode *from,
						  const CUgraphNode *to,
						  size_t numDependencies);

CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
			 size_t *numEdges)
{
	return cuGraphGetEdges_v2(hGraph, from, to, NULL, numEdges);
}

CUresult cuGraphNodeGetDependencies(CUgraphNode hNode,
				    CUgraphNode *dependencies,
				    size_t *numDependencies)
{
	return cuGraphNodeGetDependencies_v2(hNode, dependencies, NULL,
					     numDependencies);
}

CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode,
				      CUgraphNode *dependentNodes,
				      size_t *numDependentNodes)
{
	return cuGraphNodeGetDependentNodes_v2(hNode, dependentNodes, NULL,
					       numDependentNodes);
}

/*
 * Edges added (remove 0) or removed (remove 1): the pairs go as the call's
 * tail, (from, to) as remote node handles; edge data only in its default.
 */
CUresult xgpulib_graph_deps(CUgraph hGraph, const CUgraphNode *from,
			    const CUgraphNode *to,
			    const CUgraphEdgeData *edgeData,
			    size_t numDependencies, int remove)
{
	struct xgpuif_graph_deps_args a = { robj_remote(hGraph, RK_GRAPH),
					    (uint32_t)numDependencies, 0 };
	uint64_t pairs[2 * XGPUIF_MAX_CAPTURE_DEPS];
	struct xgpuif_iov tail;

	if (!a.graph || !numDependencies || !from || !to)
		return CUDA_ERROR_INVALID_VALUE;
	if (numDependencies > XGPUIF_MAX_CAPTURE_DEPS)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (size_t i = 0; i < numDependencies; i++) {
		if (edgeData && (edgeData[i].from_port ||
				 edgeData[i].to_port || edgeData[i].type))
			return CUDA_ERROR_NOT_SUPPORTED;
		pairs[2 * i] = robj_remote(from[i], RK_NODE);
		pairs[2 * i + 1] = robj_remote(to[i], RK_NODE);
		if (!pairs[2 * i] || !pairs[2 * i + 1])
			return CUDA_ERROR_INVALID_VALUE;
	}
	tail = (struct xgpuif_iov){ pairs,
				    (uint32_t)(numDependencies * 16) };
	if (remove)
		return xgpulib_call_GRAPH_REMOVE_DEPS(&a, &tail, 1);
	return xgpulib_call_GRAPH_ADD_DEPS(&a, &tail, 1);
}

CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from,
				      const CUgraphNode *to,
				      const CUgraphEdgeData *edgeData,
				      size_t numDependencies)
{
	return xgpulib_graph_deps(hGraph, from, to, edgeData, numDependencies,
				  1);
}

CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from,
				   const CUgraphNode *to,
				   size_t numDependencies)
{
	return cuGraphRemoveDependencies_v2(hGraph, from, to, NULL,
					    numDependencies);
}

/* ---- nodes, clones, executable graphs -------------------------------------- */

CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
	struct xgpuif_handle_args a = { robj_remote(hNode, RK_NODE) };
	CUresult rc;

	if (!a.handle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GRAPH_DESTROY_NODE(&a);
	if (rc == CUDA_SUCCESS)
		robj_forget((struct robj *)hNode);
	return rc;
}

static CUresult enabled(CUgraphExec x, CUgraphNode n, uint32_t set,
			unsigned int value, unsigned int *out)
{
	struct xgpuif_enabled_args a = { robj_remote(x, RK_EXEC),
					 robj_remote(n, RK_NODE), set,
					 value };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	if (!a.exec || !a.node || (!set && !out))
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GRAPH_NODE_ENABLED(&a, &r);
	if (rc == CUDA_SUCCESS && out)
		*out = (unsigned int)r.value;
	return rc;
}

CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
			       unsigned int isEnabled)
{
	return enabled(hGraphExec, hNode, 1, isEnabled, NULL);
}

CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
			       unsigned int *isEnabled)
{
	return enabled(hGraphExec, hNode, 0, 0, isEnabled);
}

CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
				CUgraph hClonedGraph)
{
	struct xgpuif_find_clone_args a = {
		robj_remote(hOriginalNode, RK_NODE),
		robj_remote(hClonedGraph, RK_GRAPH)
	};
	struct xgpuif_node_reply r = { 0, 0 };
	CUresult rc;

	if (!phNode || !a.node || !a.clone)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GRAPH_FIND_IN_CLONE(&a, &r);
	if (rc)
		return rc;
	*phNode = (CUgraphNode)robj_for(RK_NODE, r.node,
					(struct robj *)hClonedGraph);
	return *phNode ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
	struct xgpuif_handle_args a = { robj_remote(hGraphExec, RK_EXEC) };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	if (!a.handle || !flags)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GEXEC_FLAGS(&a, &r);
	if (rc == CUDA_SUCCESS)
		*flags = r.value;
	return rc;
}

/* ---- the dot file: the worker's text, written here at the guest's path --- */

CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char *path,
			      unsigned int flags)
{
	struct xgpuif_dot_args a = { robj_remote(hGraph, RK_GRAPH), flags, 0,
				     0 };
	const uint32_t cap = XGPUIF_MAX_PAYLOAD - 64;
	struct xgpuif_dot_reply r = { 0 };
	uint8_t *buf;
	CUresult rc = CUDA_SUCCESS;
	FILE *f;

	if (!a.graph || !path)
		return CUDA_ERROR_INVALID_VALUE;
	buf = malloc(cap);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	f = fopen(path, "w");
	if (!f) {
		free(buf);
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
	do {
		uint32_t got = 0;

		rc = xgpulib_call_GRAPH_DOT(&a, &r, buf, cap, &got);
		if (rc == CUDA_SUCCESS && got > r.total - a.offset)
			rc = CUDA_ERROR_UNKNOWN;
		if (rc == CUDA_SUCCESS && got &&
		    fwrite(buf, 1, got, f) != got)
			rc = CUDA_ERROR_OPERATING_SYSTEM;
		if (rc == CUDA_SUCCESS && !got && a.offset < r.total)
			rc = CUDA_ERROR_UNKNOWN;
		a.offset += got;
	} while (rc == CUDA_SUCCESS && a.offset < r.total);
	if (fclose(f) && rc == CUDA_SUCCESS)
		rc = CUDA_ERROR_OPERATING_SYSTEM;
	free(buf);
	return rc;
}

/* ---- the device's graph memory ------------------------------------------- */

static CUresult graph_mem(CUdevice dev, uint32_t op, CUgraphMem_attribute attr,
			  void *value)
{
	struct xgpuif_graph_mem_args a = { (int32_t)dev, op, (uint32_t)attr,
					   0, 0 };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (op < 2 && !value)
		return CUDA_ERROR_INVALID_VALUE;
	if (op == 1)
		memcpy(&a.value, value, sizeof(a.value));
	rc = xgpulib_call_GRAPH_MEM_ATTR(&a, &r);
	if (rc == CUDA_SUCCESS && op == 0)
		memcpy(value, &r.value, sizeof(r.value));
	return rc;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device,
				      CUgraphMem_attribute attr, void *value)
{
	return graph_mem(device, 0, attr, value);
}

CUresult cuDeviceSetGraphMemAttribute(CUdevice device,
				      CUgraphMem_attribute attr, void *value)
{
	return graph_mem(device, 1, attr, value);
}

CUresult cuDeviceGraphMemTrim(CUdevice device)
{
	return graph_mem(device, 2, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, NULL);
}

/* ---- user objects ---------------------------------------------------------- */

CUresult cuUserObjectCreate(CUuserObject *object_out, void *ptr,
			    CUhostFn destroy, unsigned int initialRefcount,
			    unsigned int flags)
{
	struct xgpuif_uobj_create_args a = { 0, initialRefcount, flags };
	struct xgpuif_uobj_reply r = { 0 };
	CUresult rc;

	if (!object_out || !destroy || !initialRefcount ||
	    (flags & ~(unsigned int)CU_USER_OBJECT_NO_DESTRUCTOR_SYNC))
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	a.fnid = xgpulib_hostfn_id(destroy, ptr);
	if (!a.fnid)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_USEROBJ_CREATE(&a, &r);
	if (rc)
		return rc;
	*object_out = (CUuserObject)robj_for(RK_UOBJ, r.handle, NULL);
	return *object_out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult uobj_ref(CUuserObject o, CUgraph g, uint32_t op,
			 unsigned int count, unsigned int flags)
{
	struct xgpuif_uobj_ref_args a = { robj_remote(o, RK_UOBJ), 0, op,
					  count, flags, 0 };

	if (!a.handle || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (op >= XGPUIF_UOBJ_GRAPH_RETAIN) {
		a.graph = robj_remote(g, RK_GRAPH);
		if (!a.graph)
			return CUDA_ERROR_INVALID_VALUE;
	}
	return xgpulib_call_USEROBJ_REF(&a);
}

CUresult cuUserObjectRetain(CUuserObject object, unsigned int count)
{
	return uobj_ref(object, NULL, XGPUIF_UOBJ_RETAIN, count, 0);
}

CUresult cuUserObjectRelease(CUuserObject object, unsigned int count)
{
	return uobj_ref(object, NULL, XGPUIF_UOBJ_RELEASE, count, 0);
}

CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object,
				 unsigned int count, unsigned int flags)
{
	return uobj_ref(object, graph, XGPUIF_UOBJ_GRAPH_RETAIN, count, flags);
}

CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object,
				  unsigned int count)
{
	return uobj_ref(object, graph, XGPUIF_UOBJ_GRAPH_RELEASE, count, 0);
}

/* ---- kernel node attributes ------------------------------------------------ */

static CUresult kernel_attr(CUgraphNode n, CUgraphNode src, uint32_t op,
			    CUkernelNodeAttrID id, CUkernelNodeAttrValue *v)
{
	struct xgpuif_kernel_attr_args a = { robj_remote(n, RK_NODE), 0, op,
					     (uint32_t)id, { 0 } };
	struct xgpuif_kernel_attr_reply r;
	CUresult rc;

	if (!a.node || (op < 2 && !v))
		return CUDA_ERROR_INVALID_VALUE;
	if (op == 2) {
		a.src = robj_remote(src, RK_NODE);
		if (!a.src)
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (op == 1)
		memcpy(a.value, v, sizeof(a.value));
	memset(&r, 0, sizeof(r));
	rc = xgpulib_call_GRAPH_KERNEL_ATTR(&a, &r);
	if (rc == CUDA_SUCCESS && op == 0)
		memcpy(v, r.value, sizeof(r.value));
	return rc;
}

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode,
				       CUkernelNodeAttrID attr,
				       CUkernelNodeAttrValue *value_out)
{
	return kernel_attr(hNode, NULL, 0, attr, value_out);
}

CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode,
				       CUkernelNodeAttrID attr,
				       const CUkernelNodeAttrValue *value)
{
	return kernel_attr(hNode, NULL, 1, attr,
			   (CUkernelNodeAttrValue *)(uintptr_t)value);
}

CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src)
{
	return kernel_attr(dst, src, 2, (CUkernelNodeAttrID)0, NULL);
}
