// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_graphnode.c: building graphs node by node.
 *
 * Nodes: empty, kernel, memset, memcpy (device memory and pinned host
 * memory), host (the function runs in this process: xgpulib_api_hostfn.c),
 * event record and wait, child graph, memory allocation and free, by their
 * typed calls or cuGraphAddNode, and conditional nodes (cuGraphAddNode;
 * their body graphs are graphs of ours), batch memory operations.
 * A memcpy node with a pageable host side is a child graph of a host node
 * and a memcpy node through a pinned buffer (xgpulib_capcopy.c); external
 * semaphore nodes are refused with CUDA_ERROR_NOT_SUPPORTED (XGPU_DEBUG says
 * which).  Queries and setters: xgpulib_api_graphquery.c.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"
#include "xgpulib_image.h"

/* ---- building graphs ----------------------------------------------------- */

/* GRAPH_ADD_NODE: the dependencies, then `body` (len bytes); a memory
 * allocation node's address in *dptr */
static CUresult add_node_d(CUgraphNode *out, CUgraph g,
			   const CUgraphNode *deps, size_t nd, uint32_t type,
			   const void *body, uint32_t len, const void *body2,
			   uint32_t len2, uint64_t *dptr)
{
	struct xgpuif_add_node_args a = { robj_remote(g, RK_GRAPH), type,
					  (uint32_t)nd };
	uint64_t hd[XGPUIF_MAX_CAPTURE_DEPS];
	struct xgpuif_iov tail[3];
	struct xgpuif_node_reply r = { 0 };
	CUresult rc;

	if (!out || !a.graph || (nd && !deps)) {
		xgpulib_dbg("graph node of type %u: %s", type,
			    !out ? "no place for the node" :
			    !a.graph ? "not a graph of this process" :
				       "dependencies missing");
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (nd > XGPUIF_MAX_CAPTURE_DEPS)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (size_t i = 0; i < nd; i++) {
		hd[i] = robj_remote(deps[i], RK_NODE);
		if (!hd[i]) {
			xgpulib_dbg("graph node of type %u: dependency %zu "
				    "is not a node of this process", type, i);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	tail[0] = (struct xgpuif_iov){ hd, (uint32_t)(nd * 8) };
	tail[1] = (struct xgpuif_iov){ body, len };
	tail[2] = (struct xgpuif_iov){ body2, len2 };
	rc = xgpulib_call_GRAPH_ADD_NODE(&a, tail, 3, &r);
	if (rc)
		return rc;
	if (dptr)
		*dptr = r.dptr;
	*out = (CUgraphNode)robj_for(RK_NODE, r.node, (struct robj *)g);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
			 size_t nd, uint32_t type, const void *body,
			 uint32_t len, const void *body2, uint32_t len2)
{
	return add_node_d(out, g, deps, nd, type, body, len, body2, len2,
			  NULL);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			     const CUgraphNode *dependencies,
			     size_t numDependencies)
{
	return add_node(phGraphNode, hGraph, dependencies, numDependencies,
			CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0, NULL, 0);
}

/*
 * A kernel node's parameters as the wire carries them: a launch's struct
 * in *a and the packed parameter bytes in *buf (*len of them; the
 * caller frees *buf).
 */
static CUresult kernel_payload(const CUDA_KERNEL_NODE_PARAMS *p,
			       struct xgpuif_launch_args *a, uint8_t **buf,
			       uint32_t *len)
{
	struct xgpulib_func *fn;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	fn = xgpulib_func_check(p->func ? (const void *)p->func :
					  (const void *)p->kern);
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	memset(a, 0, sizeof(*a));
	a->func = fn->remote;
	a->kind = fn->kind;
	a->shmem = p->sharedMemBytes;
	a->grid[0] = p->gridDimX;
	a->grid[1] = p->gridDimY;
	a->grid[2] = p->gridDimZ;
	a->block[0] = p->blockDimX;
	a->block[1] = p->blockDimY;
	a->block[2] = p->blockDimZ;
	*len = 0;
	rc = xgpulib_params_len(fn, p->kernelParams, p->extra, len);
	if (rc)
		return rc;
	if (*len > XGPUIF_MAX_PAYLOAD - sizeof(*a) - 1024)
		return CUDA_ERROR_NOT_SUPPORTED;
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_pack_params(fn, p->kernelParams, p->extra, *buf, *len,
				 len);
	a->param_bytes = *len;
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			      const CUgraphNode *dependencies,
			      size_t numDependencies,
			      const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct xgpuif_launch_args a;
	uint8_t *buf = NULL;
	uint32_t len;
	CUresult rc = kernel_payload(p, &a, &buf, &len);

	if (rc == CUDA_SUCCESS)
		rc = add_node(phGraphNode, hGraph, dependencies,
			      numDependencies, CU_GRAPH_NODE_TYPE_KERNEL, &a,
			      sizeof(a), buf, len);
	free(buf);
	return rc;
}

/* a kernel node's new parameters, in its graph or in an executable one */
static CUresult kernel_params(uint64_t exec, CUgraphNode node,
			      const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct xgpuif_kernel_params_args k = { exec,
					       robj_remote(node, RK_NODE) };
	struct xgpuif_launch_args a;
	struct xgpuif_iov tail[2];
	uint8_t *buf = NULL;
	uint32_t len;
	CUresult rc;

	if (!k.node)
		return CUDA_ERROR_INVALID_VALUE;
	rc = kernel_payload(p, &a, &buf, &len);
	if (rc)
		return rc;
	tail[0] = (struct xgpuif_iov){ &a, sizeof(a) };
	tail[1] = (struct xgpuif_iov){ buf, len };
	rc = xgpulib_call_GRAPH_KERNEL_PARAMS(&k, tail, 2);
	free(buf);
	return rc;
}

CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
				    const CUDA_KERNEL_NODE_PARAMS *p)
{
	return kernel_params(0, hNode, p);
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec,
					CUgraphNode hNode,
					const CUDA_KERNEL_NODE_PARAMS *p)
{
	uint64_t x = robj_remote(hGraphExec, RK_EXEC);

	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_params(x, hNode, p);
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	uint64_t v;
	CUresult rc;

	/* the child graph node of a staged copy stands for a memcpy node */
	if (type && robj_staged(hNode, NULL)) {
		*type = CU_GRAPH_NODE_TYPE_MEMCPY;
		return CUDA_SUCCESS;
	}
	rc = robj_ask(hNode, RK_NODE, xgpulib_call_GRAPH_NODE_TYPE,
			       type ? &v : NULL);

	if (rc == CUDA_SUCCESS)
		*type = (CUgraphNodeType)v;
	return rc;
}

/* the CUDA 10 form, without edge data */
#undef cuGraphAddDependencies
XGPULIB_EXPORT CUresult cuGraphAddDependencies(CUgraph hGraph,
					       const CUgraphNode *from,
					       const CUgraphNode *to,
					       size_t numDependencies);
CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from,
				const CUgraphNode *to, size_t numDependencies)
{
	return cuGraphAddDependencies_v2(hGraph, from, to, NULL,
					 numDependencies);
}

/* a memset, memcpy or host node: one struct on the wire */
static CUresult add_fixed(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
			  size_t nd, uint32_t type, const void *p)
{
	union xgpulib_node_fixed w;
	CUresult rc = xgpulib_node_wire(type, p, &w);

	return rc ? rc : add_node(out, g, deps, nd, type, &w,
				  xgpulib_node_fixed_len(type), NULL, 0);
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			      const CUgraphNode *dependencies,
			      size_t numDependencies,
			      const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	(void)ctx;	/* the worker's current context, as the guest's */
	return add_fixed(phGraphNode, hGraph, dependencies, numDependencies,
			 CU_GRAPH_NODE_TYPE_MEMSET, p);
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			      const CUgraphNode *dependencies,
			      size_t numDependencies, const CUDA_MEMCPY3D *p,
			      CUcontext ctx)
{
	bool staged;
	CUresult rc;

	(void)ctx;	/* the worker's current context, as the guest's */
	/* a pageable host side: a child graph that stages it */
	rc = xgpulib_capcopy_node(phGraphNode, hGraph, dependencies,
				  numDependencies, p, &staged);
	if (staged)
		return rc;
	return add_fixed(phGraphNode, hGraph, dependencies, numDependencies,
			 CU_GRAPH_NODE_TYPE_MEMCPY, p);
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			    const CUgraphNode *dependencies,
			    size_t numDependencies,
			    const CUDA_HOST_NODE_PARAMS *p)
{
	return add_fixed(phGraphNode, hGraph, dependencies, numDependencies,
			 CU_GRAPH_NODE_TYPE_HOST, p);
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				const CUgraphNode *dependencies,
				size_t numDependencies,
				CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct xgpuif_node_mem m = { 0 };
	CUresult rc;

	if (!p || !p->bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	/* device memory of the device, no IPC; access for this device only */
	if (p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    p->poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < p->accessDescCount; i++) {
		if (!p->accessDescs ||
		    p->accessDescs[i].location.type !=
			    CU_MEM_LOCATION_TYPE_DEVICE ||
		    p->accessDescs[i].location.id !=
			    p->poolProps.location.id) {
			xgpulib_dbg("cuGraphAddMemAllocNode: access from "
				    "other devices is not supported");
			return CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	m.size = p->bytesize;
	m.loc_type = CU_MEM_LOCATION_TYPE_DEVICE;
	m.loc_id = p->poolProps.location.id;
	rc = add_node_d(phGraphNode, hGraph, dependencies, numDependencies,
			CU_GRAPH_NODE_TYPE_MEM_ALLOC, &m, sizeof(m), NULL, 0,
			&m.dptr);
	return xgpulib_dalloc_out(rc, m.dptr, m.size, &p->dptr);
}

CUresult cuGraphAddBatchMemOpNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				  const CUgraphNode *dependencies,
				  size_t numDependencies,
				  const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct xgpuif_node_memop m;

	if (!p || !p->count || !p->paramArray)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->count > XGPUIF_MAX_MEMOPS)
		return CUDA_ERROR_NOT_SUPPORTED;
	m = (struct xgpuif_node_memop){ p->count, p->flags };
	xgpulib_note_memops(p->paramArray, p->count);
	return add_node(phGraphNode, hGraph, dependencies, numDependencies,
			CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, &m, sizeof(m),
			p->paramArray, p->count * XGPUIF_MEMOP_SIZE);
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			       const CUgraphNode *dependencies,
			       size_t numDependencies, CUdeviceptr dptr)
{
	struct xgpuif_dptr_args d = { dptr };

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies,
			CU_GRAPH_NODE_TYPE_MEM_FREE, &d, sizeof(d), NULL, 0);
}

static CUresult add_handle_node(CUgraphNode *out, CUgraph g,
				const CUgraphNode *deps, size_t nd,
				uint32_t type, uint64_t h)
{
	struct xgpuif_node_handle nh = { h };

	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(out, g, deps, nd, type, &nh, sizeof(nh), NULL, 0);
}

/* cuGraphAddEventRecordNode (wait 0), cuGraphAddEventWaitNode (wait 1):
 * xgpulib_entry.def */
CUresult xgpulib_graph_add_event_node(CUgraphNode *out, CUgraph g,
				      const CUgraphNode *deps, size_t nd,
				      CUevent event, int wait)
{
	return add_handle_node(out, g, deps, nd, xgpulib_event_node_type(wait),
			       xgpulib_event_remote(event));
}

CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				  const CUgraphNode *dependencies,
				  size_t numDependencies, CUgraph childGraph)
{
	return add_handle_node(phGraphNode, hGraph, dependencies,
			       numDependencies, CU_GRAPH_NODE_TYPE_GRAPH,
			       robj_remote(childGraph, RK_GRAPH));
}

CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out,
					CUgraph hGraph, CUcontext ctx,
					unsigned int defaultLaunchValue,
					unsigned int flags)
{
	struct xgpuif_cond_handle_args a = { robj_remote(hGraph, RK_GRAPH),
					     defaultLaunchValue, flags };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	(void)ctx;	/* the worker's current context, as the guest's */
	if (!pHandle_out || !a.graph)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GRAPH_COND_HANDLE(&a, &r);
	if (rc == CUDA_SUCCESS)
		*pHandle_out = r.value;
	return rc;
}

/* a conditional node: its body graphs come back, in an array kept with
 * the node object (the driver's lives with the node) */
static CUresult add_cond(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
			 size_t nd, CUDA_CONDITIONAL_NODE_PARAMS *p)
{
	struct xgpuif_add_cond_args a = { robj_remote(g, RK_GRAPH), p->handle,
					  (uint32_t)p->type, p->size,
					  (uint32_t)nd, 0 };
	uint64_t hd[XGPUIF_MAX_CAPTURE_DEPS], hb[XGPUIF_MAX_COND_BODIES];
	struct xgpuif_node_reply r = { 0, 0 };
	struct xgpuif_iov tail;
	uint32_t got = 0;
	CUgraph *bodies;
	CUresult rc;

	if (!out || !a.graph || (nd && !deps) || !p->size)
		return CUDA_ERROR_INVALID_VALUE;
	if (nd > XGPUIF_MAX_CAPTURE_DEPS || p->size > XGPUIF_MAX_COND_BODIES)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (size_t i = 0; i < nd; i++) {
		hd[i] = robj_remote(deps[i], RK_NODE);
		if (!hd[i])
			return CUDA_ERROR_INVALID_VALUE;
	}
	bodies = calloc(p->size, sizeof(*bodies));
	if (!bodies)
		return CUDA_ERROR_OUT_OF_MEMORY;
	tail = (struct xgpuif_iov){ hd, (uint32_t)(nd * 8) };
	rc = xgpulib_call_GRAPH_ADD_COND(&a, &tail, 1, &r, hb,
					 p->size * 8u, &got);
	if (rc == CUDA_SUCCESS && got != p->size * 8u)
		rc = CUDA_ERROR_UNKNOWN;
	for (uint32_t i = 0; rc == CUDA_SUCCESS && i < p->size; i++) {
		bodies[i] = (CUgraph)robj_for(RK_GRAPH, hb[i], NULL);
		if (!bodies[i])
			rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (rc == CUDA_SUCCESS) {
		*out = (CUgraphNode)robj_for(RK_NODE, r.node,
					     (struct robj *)g);
		rc = *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (rc) {
		free(bodies);
		return rc;
	}
	p->phGraph_out = bodies;
	return robj_cache(*out, bodies) ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

/*
 * The generic form (CUDA 12.2 on), which cudart uses for every node it
 * adds: the typed calls above by node type.  Edges other than the
 * default one are refused.
 */
CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
			   const CUgraphNode *dependencies,
			   const CUgraphEdgeData *dependencyData,
			   size_t numDependencies,
			   CUgraphNodeParams *nodeParams)
{
	CUgraphNodeParams *p = nodeParams;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; dependencyData && i < numDependencies; i++) {
		const CUgraphEdgeData *e = &dependencyData[i];

		if (e->from_port || e->to_port || e->type) {
			xgpulib_dbg("cuGraphAddNode: edge data other than "
				    "the default is not supported");
			return CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	switch (p->type) {
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return cuGraphAddEmptyNode(phGraphNode, hGraph, dependencies,
					   numDependencies);
	case CU_GRAPH_NODE_TYPE_KERNEL: {
		CUDA_KERNEL_NODE_PARAMS k;

		xgpulib_node_kernel_of(p, &k);

		return cuGraphAddKernelNode(phGraphNode, hGraph, dependencies,
					    numDependencies, &k);
	}
	case CU_GRAPH_NODE_TYPE_MEMSET: {
		CUDA_MEMSET_NODE_PARAMS m;

		xgpulib_node_memset_of(p, &m);

		return cuGraphAddMemsetNode(phGraphNode, hGraph, dependencies,
					    numDependencies, &m,
					    p->memset.ctx);
	}
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (p->memcpy.flags)
			return CUDA_ERROR_INVALID_VALUE;
		return cuGraphAddMemcpyNode(phGraphNode, hGraph, dependencies,
					    numDependencies,
					    &p->memcpy.copyParams,
					    p->memcpy.copyCtx);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return cuGraphAddChildGraphNode(phGraphNode, hGraph,
						dependencies, numDependencies,
						p->graph.graph);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return cuGraphAddEventRecordNode(phGraphNode, hGraph,
						 dependencies, numDependencies,
						 p->eventRecord.event);
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		return cuGraphAddEventWaitNode(phGraphNode, hGraph,
					       dependencies, numDependencies,
					       p->eventWait.event);
	case CU_GRAPH_NODE_TYPE_HOST: {
		CUDA_HOST_NODE_PARAMS h = { p->host.fn, p->host.userData };

		return cuGraphAddHostNode(phGraphNode, hGraph, dependencies,
					  numDependencies, &h);
	}
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
		CUDA_MEM_ALLOC_NODE_PARAMS a = {
			.poolProps = p->alloc.poolProps,
			.accessDescs = p->alloc.accessDescs,
			.accessDescCount = p->alloc.accessDescCount,
			.bytesize = p->alloc.bytesize,
		};
		CUresult rc = cuGraphAddMemAllocNode(phGraphNode, hGraph,
						     dependencies,
						     numDependencies, &a);

		if (rc == CUDA_SUCCESS)
			p->alloc.dptr = a.dptr;
		return rc;
	}
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		return cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies,
					     numDependencies, p->free.dptr);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
		CUDA_BATCH_MEM_OP_NODE_PARAMS b;

		xgpulib_node_memop_of(p, &b);

		return cuGraphAddBatchMemOpNode(phGraphNode, hGraph,
						dependencies, numDependencies,
						&b);
	}
	case CU_GRAPH_NODE_TYPE_CONDITIONAL:
		return add_cond(phGraphNode, hGraph, dependencies,
				numDependencies, &p->conditional);
	default:
		xgpulib_dbg("cuGraphAddNode: node type %d is not supported "
			    "(external semaphore nodes)",
			    (int)p->type);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* the CUDA 12.2 form, without edge data */
#undef cuGraphAddNode
XGPULIB_EXPORT CUresult cuGraphAddNode(CUgraphNode *phGraphNode,
				       CUgraph hGraph,
				       const CUgraphNode *dependencies,
				       size_t numDependencies,
				       CUgraphNodeParams *nodeParams);
CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			const CUgraphNode *dependencies,
			size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, NULL,
				 numDependencies, nodeParams);
}
