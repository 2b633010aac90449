// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_graphquery.c: graph nodes' parameters once the nodes exist,
 * got and set, in a graph or an executable graph, by type and in the
 * generic form of CUDA 12.2 (xgpulib_api_graphmisc.c: the rest of what
 * is asked of existing nodes and graphs).
 *
 * The worker answers with wire handles, which become this process's
 * objects again: nodes and graphs through robj_for, events through the
 * table of xgpulib_graphobj.c (every event this process made), host
 * functions through their numbers (xgpulib_api_hostfn.c), host memory of
 * a memcpy node through its region (pinned memory).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

/* ---- parameters ---------------------------------------------------------- */

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

/* memset, memcpy and host nodes: one struct each on the wire */

static CUresult fixed_set(CUgraphExec x, bool exec, CUgraphNode n,
			  uint32_t type, const void *p)
{
	union xgpulib_node_fixed w;
	CUresult rc = exec_missing(x, exec) ? CUDA_ERROR_INVALID_VALUE :
		      xgpulib_node_wire(type, p, &w);

	return rc ? rc : node_set(x, n, type, &w,
				  xgpulib_node_fixed_len(type));
}

static CUresult fixed_get(CUgraphNode n, uint32_t type, void *p)
{
	union xgpulib_node_fixed w;
	CUresult rc = node_get(n, (int)type, p, &w,
			       xgpulib_node_fixed_len(type));

	return rc ? rc : xgpulib_node_unwire(type, &w, p);
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *p)
{
	return fixed_get(hNode, CU_GRAPH_NODE_TYPE_HOST, p);
}

CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
				  const CUDA_HOST_NODE_PARAMS *p)
{
	return fixed_set(NULL, false, hNode, CU_GRAPH_NODE_TYPE_HOST, p);
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
				      const CUDA_HOST_NODE_PARAMS *p)
{
	return fixed_set(hGraphExec, true, hNode, CU_GRAPH_NODE_TYPE_HOST, p);
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode,
				    CUDA_MEMSET_NODE_PARAMS *p)
{
	return fixed_get(hNode, CU_GRAPH_NODE_TYPE_MEMSET, p);
}

CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode,
				    const CUDA_MEMSET_NODE_PARAMS *p)
{
	return fixed_set(NULL, false, hNode, CU_GRAPH_NODE_TYPE_MEMSET, p);
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec,
					CUgraphNode hNode,
					const CUDA_MEMSET_NODE_PARAMS *p,
					CUcontext ctx)
{
	(void)ctx;
	return fixed_set(hGraphExec, true, hNode, CU_GRAPH_NODE_TYPE_MEMSET,
			 p);
}

CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *p)
{
	/* a staged copy's node gives the program's parameters */
	if (p && robj_staged(hNode, p))
		return CUDA_SUCCESS;
	return fixed_get(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, p);
}

/* a staged copy's node: its parameters stay (its child graph holds the
 * buffer and the rows it was made for) */
static CUresult staged_set(CUgraphNode n)
{
	if (!robj_staged(n, NULL))
		return CUDA_SUCCESS;
	xgpulib_dbg("graph memcpy node with a pageable host side: its "
		    "parameters cannot be changed (add a new node)");
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *p)
{
	CUresult rc = staged_set(hNode);

	return rc ? rc : fixed_set(NULL, false, hNode,
				   CU_GRAPH_NODE_TYPE_MEMCPY, p);
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec,
					CUgraphNode hNode,
					const CUDA_MEMCPY3D *p, CUcontext ctx)
{
	CUresult rc = staged_set(hNode);

	(void)ctx;
	return rc ? rc : fixed_set(hGraphExec, true, hNode,
				   CU_GRAPH_NODE_TYPE_MEMCPY, p);
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

/* cuGraphEventRecordNodeGetEvent (wait 0), cuGraphEventWaitNodeGetEvent
 * (wait 1): xgpulib_entry.def */
CUresult xgpulib_graph_event_get(CUgraphNode n, CUevent *out, int wait)
{
	uint64_t remote;
	CUresult rc = handle_get(n, (int)xgpulib_event_node_type(wait), out,
				 &remote);

	if (rc)
		return rc;
	*out = xgpulib_event_by_remote(remote);
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

/* cuGraphEventRecordNodeSetEvent (wait 0), cuGraphEventWaitNodeSetEvent
 * (wait 1): xgpulib_entry.def */
CUresult xgpulib_graph_event_set(CUgraphNode n, CUevent event, int wait)
{
	return handle_set(NULL, false, n, (int)xgpulib_event_node_type(wait),
			  xgpulib_event_remote(event));
}

/* cuGraphExecEventRecordNodeSetEvent (wait 0),
 * cuGraphExecEventWaitNodeSetEvent (wait 1): xgpulib_entry.def */
CUresult xgpulib_graph_exec_event_set(CUgraphExec x, CUgraphNode n,
				      CUevent event, int wait)
{
	return handle_set(x, true, n, (int)xgpulib_event_node_type(wait),
			  xgpulib_event_remote(event));
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
	xgpulib_note_memops(p->paramArray, p->count);
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

		return fixed_set(x, exec, n, CU_GRAPH_NODE_TYPE_MEMSET, &m);
	}
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (p->memcpy.flags)
			return CUDA_ERROR_INVALID_VALUE;
		return fixed_set(x, exec, n, CU_GRAPH_NODE_TYPE_MEMCPY,
				 &p->memcpy.copyParams);
	case CU_GRAPH_NODE_TYPE_HOST: {
		CUDA_HOST_NODE_PARAMS h = { p->host.fn, p->host.userData };

		return fixed_set(x, exec, n, CU_GRAPH_NODE_TYPE_HOST, &h);
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
				  xgpulib_event_remote(p->eventRecord.event));
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		return handle_set(x, exec, n, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
				  xgpulib_event_remote(p->eventWait.event));
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
