// SPDX-License-Identifier: MIT
/*
 * xgpub_op_graph.c: stream capture and graphs.
 *
 * Capture is the driver's own: the guest's launches, memsets and device
 * copies reach the worker's stream in order, and the driver records them.
 * What cannot be recorded is a copy staged through the channel's data
 * area (the graph would copy from the staging buffer at every launch);
 * such a copy on a capturing stream is refused with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as the driver refuses pageable
 * memory, and copies of pinned (region) memory are captured as they are.
 * The GPU scheduler's gate does not see captured work: it runs later,
 * when the graph is launched (and charged then).
 *
 * Graphs, executable graphs and nodes are handles of kinds GRAPH, GEXEC
 * and GNODE.  A node's handle names its graph (struct xgpub_node_extra); when a
 * graph is destroyed its node handles are dropped with it, so a stale
 * node handle is refused, never passed to the driver.  So are the
 * handles of graphs a node owns (a child graph asked for, a conditional
 * node's bodies: struct xgpub_graph_extra; these handles are made in
 * xgpub_graph_handles.c).  Node queries and setters, user objects:
 * xgpub_op_graphnode.c.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

#define node_handle xgpub_node_handle
#define graph_handle(w, g) xgpub_graph_handle(w, g, NULL, NULL)

/* ---- capture ------------------------------------------------------------- */

/*
 * The capture mode the driver is given.  The worker's one thread serves
 * all the guest's threads, and the driver forbids a thread that began a
 * THREAD_LOCAL capture the potentially unsafe calls (a query, a
 * synchronize of another stream): begun as asked, every guest thread's
 * such call would be refused while any of them captures thread-locally,
 * where natively only the capturing thread's are (XLA traces command
 * buffers thread-locally while other threads query their streams: its
 * autotuner failed with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).  Such a
 * capture is begun RELAXED: the capturing thread's own unsafe calls then
 * pass where natively refused.  GLOBAL stays: natively it forbids the
 * other threads too.
 */
static CUstreamCaptureMode driver_mode(uint32_t mode)
{
	return mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ?
		       CU_STREAM_CAPTURE_MODE_RELAXED : (CUstreamCaptureMode)mode;
}

XGPUB_HANDLER(STREAM_BEGIN_CAPTURE)
{
	int rc = w->D->cuStreamBeginCapture_v2(stream, driver_mode(a->mode));

	if (rc == 0)
		w->captures++;
	return rc;
}

XGPUB_HANDLER(STREAM_END_CAPTURE)
{
	CUgraph g = NULL;
	int rc = w->D->cuStreamEndCapture(stream, &g);

	/* a capture ends here whatever the outcome, unless there was none */
	if (rc != CUDA_ERROR_ILLEGAL_STATE && w->captures)
		w->captures--;
	if (rc)
		return rc;
	if (!g)
		return CUDA_ERROR_UNKNOWN;
	r->graph = graph_handle(w, g);
	if (r->graph)
		return 0;
	w->D->cuGraphDestroy(g);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

XGPUB_HANDLER(STREAM_CAPTURE_INFO)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	const CUgraphNode *deps = NULL;
	size_t n = 0;
	int rc;

	if (a->want_deps > 1)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuStreamGetCaptureInfo_v3(stream, &st, &id,
					     a->want_deps ? &g : NULL,
					     a->want_deps ? &deps : NULL,
					     NULL, a->want_deps ? &n : NULL);
	if (rc)
		return rc;
	r->status = st;
	r->id = id;
	if (!a->want_deps || st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return 0;
	/* the capture's graph belongs to the capture: a handle, no owner */
	r->graph = graph_handle(w, g);
	if (!r->graph)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (n > XGPUIF_MAX_CAPTURE_DEPS || n * 8 > rt->cap)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (size_t i = 0; i < n; i++) {
		xgpuif_handle_t h = node_handle(w, g, deps[i]);

		if (!h)
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(rt->p + i * 8, &h, 8);
	}
	r->ndeps = (uint32_t)n;
	rt->len = (uint32_t)(n * 8);
	return 0;
}

XGPUB_HANDLER(CAPTURE_MODE)
{
	CUstreamCaptureMode m = (CUstreamCaptureMode)a->value;
	int rc = w->D->cuThreadExchangeStreamCaptureMode(&m);

	if (rc == 0)
		r->value = (int32_t)m;
	return rc;
}

/* ---- graphs -------------------------------------------------------------- */

XGPUB_HANDLER(GRAPH_CREATE)
{
	CUgraph g = NULL;
	int rc = w->D->cuGraphCreate(&g, a->value);

	return rc ? rc : xgpub_keep(w, XGPUB_H_GRAPH, g, NULL, &r->graph);
}

XGPUB_HANDLER(GRAPH_CLONE)
{
	CUgraph g = NULL;
	int rc = w->D->cuGraphClone(&g, handle->obj);

	return rc ? rc : xgpub_keep(w, XGPUB_H_GRAPH, g, NULL, &r->graph);
}

XGPUB_HANDLER(GRAPH_INSTANTIATE)
{
	/* auto-free-on-launch, upload, device launch, priority */
	const uint64_t known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
			       CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
			       CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
			       CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
	CUgraphExec x;
	int rc;

	if (a->flags & ~known)
		return CUDA_ERROR_INVALID_VALUE;
	/* an upload at instantiation needs a stream: the guest uploads */
	if (a->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
		return CUDA_ERROR_INVALID_VALUE;
	/* a capture took nodes unchecked (xgpub_dev_captured) */
	rc = w->unchecked_nodes ? xgpub_graph_nodes_ok(w, graph->obj) : 0;
	if (rc) {
		r->result = CUDA_GRAPH_INSTANTIATE_ERROR;
		return rc;
	}
	rc = w->D->cuGraphInstantiateWithFlags(&x, graph->obj, a->flags);
	r->result = rc ? CUDA_GRAPH_INSTANTIATE_ERROR :
			 CUDA_GRAPH_INSTANTIATE_SUCCESS;
	return rc ? rc : xgpub_keep(w, XGPUB_H_GEXEC, x, NULL, &r->exec);
}

XGPUB_HANDLER(GRAPH_LAUNCH)
{
	return w->D->cuGraphLaunch(exec->obj, stream);
}

XGPUB_HANDLER(GRAPH_UPLOAD)
{
	return w->D->cuGraphUpload(exec->obj, stream);
}

XGPUB_HANDLER(GRAPH_EXEC_UPDATE)
{
	CUgraphExecUpdateResultInfo info;

	memset(&info, 0, sizeof(info));
	if (w->unchecked_nodes && xgpub_graph_nodes_ok(w, graph->obj)) {
		r->status = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		r->result = CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
		return CUDA_SUCCESS;
	}
	r->status = (uint32_t)w->D->cuGraphExecUpdate_v2(exec->obj, graph->obj,
							  &info);
	r->result = (uint32_t)info.result;
	return CUDA_SUCCESS;
}

XGPUB_HANDLER(GRAPH_NODES)
{
	size_t n = 0, want;
	CUgraphNode *nodes;
	int rc;

	if (a->roots > 1)
		return CUDA_ERROR_INVALID_VALUE;
	rc = a->roots ? w->D->cuGraphGetRootNodes(graph->obj, NULL, &n) :
			w->D->cuGraphGetNodes(graph->obj, NULL, &n);
	if (rc)
		return rc;
	r->total = n;
	want = n < a->max ? n : a->max;
	if (want > rt->cap / 8)
		want = rt->cap / 8;
	if (!want)
		return 0;
	nodes = calloc(n, sizeof(*nodes));
	if (!nodes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = a->roots ? w->D->cuGraphGetRootNodes(graph->obj, nodes, &n) :
			w->D->cuGraphGetNodes(graph->obj, nodes, &n);
	for (size_t i = 0; rc == 0 && i < want && i < n; i++) {
		xgpuif_handle_t h = node_handle(w, graph->obj, nodes[i]);

		if (!h)
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(rt->p + i * 8, &h, 8);
	}
	free(nodes);
	if (rc == 0)
		rt->len = (uint32_t)(want * 8);
	return rc;
}

/* ---- nodes --------------------------------------------------------------- */

/* the dependencies of a new node: handles of nodes of the same graph */
static int deps_of(struct xgpub_worker *w, CUgraph g, const uint8_t *p,
		   uint32_t n, CUgraphNode *out)
{
	for (uint32_t i = 0; i < n; i++) {
		struct xgpub_hentry *e;
		xgpuif_handle_t h;

		memcpy(&h, p + i * 8, 8);
		e = xgpub_handle_get(&w->h, h, XGPUB_H_GNODE);
		if (!e || ((struct xgpub_node_extra *)e->extra)->graph != g)
			return CUDA_ERROR_INVALID_VALUE;
		out[i] = e->obj;
	}
	return 0;
}

/*
 * A kernel node's parameters from the wire: a launch's struct (no
 * attributes) then its parameter bytes, len in all.  kn points into the
 * launch code's buffers until the next launch (xgpub_kernel_params).
 */
static int kernel_node(struct xgpub_worker *w, const uint8_t *p, uint32_t len,
		       CUDA_KERNEL_NODE_PARAMS *kn)
{
	struct xgpuif_launch_args a;
	void *obj, **kp, **ex;
	int rc;

	if (len < sizeof(a))
		return XGPUIF_ST_PROTO;
	memcpy(&a, p, sizeof(a));
	if (a.nattrs || len - sizeof(a) != a.param_bytes)
		return XGPUIF_ST_PROTO;
	rc = xgpub_kernel_params(w, &a, p + sizeof(a), &obj, &kp, &ex);
	if (rc)
		return rc;
	*kn = (CUDA_KERNEL_NODE_PARAMS){
		.func = obj, .sharedMemBytes = a.shmem,
		.gridDimX = a.grid[0], .gridDimY = a.grid[1],
		.gridDimZ = a.grid[2], .blockDimX = a.block[0],
		.blockDimY = a.block[1], .blockDimZ = a.block[2],
		.kernelParams = kp, .extra = ex,
	};
	return 0;
}

static int add_kernel(struct xgpub_worker *w, CUgraph g, CUgraphNode *node,
		      const CUgraphNode *deps, uint32_t nd, const uint8_t *p,
		      uint32_t len)
{
	CUDA_KERNEL_NODE_PARAMS kn;
	int rc = kernel_node(w, p, len, &kn);

	if (rc)
		return rc;
	return w->D->cuGraphAddKernelNode_v2(node, g, deps, nd, &kn);
}

/* add a node of a type xgpub_node_params reads, with its parameters u */
static int add_node(struct xgpub_worker *w, unsigned int type,
		    CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
		    uint32_t nd, const union xgpub_node_params *u)
{
	struct xgpub_driver *D = w->D;

	switch (type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return D->cuGraphAddMemsetNode(node, g, deps, nd, &u->memset,
					       w->cur);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return D->cuGraphAddMemcpyNode(node, g, deps, nd, &u->copy,
					       w->cur);
	case CU_GRAPH_NODE_TYPE_HOST:
		return D->cuGraphAddHostNode(node, g, deps, nd, &u->host);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return D->cuGraphAddBatchMemOpNode(node, g, deps, nd,
						   &u->memop);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return D->cuGraphAddChildGraphNode(node, g, deps, nd, u->obj);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return D->cuGraphAddEventRecordNode(node, g, deps, nd, u->obj);
	default:	/* WAIT_EVENT */
		return D->cuGraphAddEventWaitNode(node, g, deps, nd, u->obj);
	}
}

XGPUB_HANDLER(GRAPH_ADD_NODE)
{
	static CUgraphNode deps[XGPUIF_MAX_CAPTURE_DEPS];
	union xgpub_node_params u;
	CUgraph g = graph->obj;
	CUgraphNode node = NULL;
	const uint8_t *p;
	uint32_t len;
	int rc;

	if (a->ndeps > XGPUIF_MAX_CAPTURE_DEPS ||
	    tail->len < (uint64_t)a->ndeps * 8)
		return XGPUIF_ST_PROTO;
	rc = deps_of(w, g, tail->p, a->ndeps, deps);
	if (rc)
		return rc;
	p = tail->p + a->ndeps * 8;
	len = tail->len - a->ndeps * 8;
	switch (a->type) {
	case CU_GRAPH_NODE_TYPE_EMPTY:
		if (len)
			return XGPUIF_ST_PROTO;
		rc = w->D->cuGraphAddEmptyNode(&node, g, deps, a->ndeps);
		break;
	case CU_GRAPH_NODE_TYPE_KERNEL:
		rc = add_kernel(w, g, &node, deps, a->ndeps, p, len);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		xgpub_fence_stop("graph memory nodes");
		rc = xgpub_node_alloc(w, g, &node, deps, a->ndeps, p, len,
				      &r->dptr);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_FREE: {
		struct xgpuif_dptr_args d;

		if (len != sizeof(d))
			return XGPUIF_ST_PROTO;
		memcpy(&d, p, sizeof(d));
		rc = w->D->cuGraphAddMemFreeNode(&node, g, deps, a->ndeps,
						 d.dptr);
		/* the allocation leaves the guest's account with its free */
		if (rc == 0)
			xgpub_alloc_del(w, d.dptr);
		break;
	}
	default:
		rc = xgpub_node_params(w, a->type, p, len, &u);
		if (rc == 0)
			rc = add_node(w, a->type, &node, g, deps, a->ndeps, &u);
	}
	if (rc)
		return rc;
	r->node = node_handle(w, g, node);
	if (r->node)
		return 0;
	w->D->cuGraphDestroyNode(node);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- node queries and updates -------------------------------------------- */

XGPUB_HANDLER(GRAPH_NODE_TYPE)
{
	CUgraphNodeType t;
	int rc = w->D->cuGraphNodeGetType(handle->obj, &t);

	if (rc == 0)
		r->value = (uint64_t)t;
	return rc;
}

XGPUB_HANDLER(GRAPH_KERNEL_PARAMS)
{
	CUDA_KERNEL_NODE_PARAMS kn;
	void *x;
	int rc = xgpub_handle_opt(w, a->exec, XGPUB_H_GEXEC, &x);

	if (rc)
		return rc;
	rc = kernel_node(w, tail->p, tail->len, &kn);
	if (rc)
		return rc;
	if (x)
		return w->D->cuGraphExecKernelNodeSetParams_v2(x, node->obj,
							       &kn);
	return w->D->cuGraphKernelNodeSetParams_v2(node->obj, &kn);
}

/* the (from, to) pairs of ADD_DEPS and REMOVE_DEPS */
static int dep_pairs(struct xgpub_worker *w,
		     const struct xgpuif_graph_deps_args *a,
		     struct xgpub_hentry *graph, const struct xgpub_tail *tail,
		     bool add)
{
	static CUgraphNode from[XGPUIF_MAX_CAPTURE_DEPS];
	static CUgraphNode to[XGPUIF_MAX_CAPTURE_DEPS];
	int rc;

	if (!a->count || a->count > XGPUIF_MAX_CAPTURE_DEPS ||
	    tail->len != (uint64_t)a->count * 16)
		return XGPUIF_ST_PROTO;
	for (uint32_t i = 0; i < a->count; i++) {
		uint8_t pair[16];

		memcpy(pair, tail->p + i * 16, 16);
		rc = deps_of(w, graph->obj, pair, 1, &from[i]);
		if (rc == 0)
			rc = deps_of(w, graph->obj, pair + 8, 1, &to[i]);
		if (rc)
			return rc;
	}
	if (add)
		return w->D->cuGraphAddDependencies_v2(graph->obj, from, to,
						       NULL, a->count);
	return w->D->cuGraphRemoveDependencies_v2(graph->obj, from, to, NULL,
						  a->count);
}

XGPUB_HANDLER(GRAPH_ADD_DEPS)
{
	return dep_pairs(w, a, graph, tail, true);
}

XGPUB_HANDLER(GRAPH_REMOVE_DEPS)
{
	return dep_pairs(w, a, graph, tail, false);
}

/* ---- capture into a graph, capture dependencies ---------------------------- */

XGPUB_HANDLER(CAPTURE_TO_GRAPH)
{
	static CUgraphNode deps[XGPUIF_MAX_CAPTURE_DEPS];
	int rc;

	if (a->ndeps > XGPUIF_MAX_CAPTURE_DEPS ||
	    tail->len != (uint64_t)a->ndeps * 8)
		return XGPUIF_ST_PROTO;
	if (a->mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	rc = deps_of(w, graph->obj, tail->p, a->ndeps, deps);
	if (rc)
		return rc;
	rc = w->D->cuStreamBeginCaptureToGraph(stream, graph->obj, deps, NULL,
					       a->ndeps, driver_mode(a->mode));
	if (rc == 0)
		w->captures++;
	return rc;
}

XGPUB_HANDLER(CAPTURE_DEPS)
{
	static CUgraphNode deps[XGPUIF_MAX_CAPTURE_DEPS];
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph g = NULL;
	int rc;

	if (a->ndeps > XGPUIF_MAX_CAPTURE_DEPS ||
	    tail->len != (uint64_t)a->ndeps * 8)
		return XGPUIF_ST_PROTO;
	/* the nodes must be of the capture's graph */
	rc = w->D->cuStreamGetCaptureInfo_v3(stream, &st, NULL, &g, NULL, NULL,
					     NULL);
	if (rc)
		return rc;
	if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return CUDA_ERROR_ILLEGAL_STATE;
	rc = deps_of(w, g, tail->p, a->ndeps, deps);
	if (rc)
		return rc;
	return w->D->cuStreamUpdateCaptureDependencies_v2(stream, deps, NULL,
							  a->ndeps, a->flags);
}

/* ---- conditional nodes ------------------------------------------------------ */

XGPUB_HANDLER(GRAPH_COND_HANDLE)
{
	CUgraphConditionalHandle h = 0;
	int rc;

	if (a->flags & ~(uint32_t)CU_GRAPH_COND_ASSIGN_DEFAULT)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuGraphConditionalHandleCreate(&h, graph->obj, w->cur,
						  a->dflt, a->flags);
	r->value = h;
	return rc;
}

/* a conditional node; its body graphs are the node's (borrowed handles) */
XGPUB_HANDLER(GRAPH_ADD_COND)
{
	static CUgraphNode deps[XGPUIF_MAX_CAPTURE_DEPS];
	CUgraphNodeParams np;
	CUgraphNode node = NULL;
	CUgraph g = graph->obj;
	int rc;

	if (a->ndeps > XGPUIF_MAX_CAPTURE_DEPS ||
	    tail->len != (uint64_t)a->ndeps * 8 || a->_pad)
		return XGPUIF_ST_PROTO;
	if (!a->size || a->size > XGPUIF_MAX_COND_BODIES ||
	    a->size > rt->cap / 8)
		return CUDA_ERROR_INVALID_VALUE;
	rc = deps_of(w, g, tail->p, a->ndeps, deps);
	if (rc)
		return rc;
	memset(&np, 0, sizeof(np));
	np.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	np.conditional.handle = a->handle;
	np.conditional.type = (CUgraphConditionalNodeType)a->type;
	np.conditional.size = a->size;
	np.conditional.ctx = w->cur;
	rc = w->D->cuGraphAddNode_v2(&node, g, deps, NULL, a->ndeps, &np);
	if (rc)
		return rc;
	if (!np.conditional.phGraph_out) {
		w->D->cuGraphDestroyNode(node);
		return CUDA_ERROR_UNKNOWN;
	}
	r->node = node_handle(w, g, node);
	for (uint32_t i = 0; r->node && i < a->size; i++) {
		xgpuif_handle_t h = xgpub_graph_handle(
			w, np.conditional.phGraph_out[i], g, node);

		if (!h) {
			r->node = 0;
			break;
		}
		memcpy(rt->p + i * 8, &h, 8);
	}
	if (!r->node) {
		w->D->cuGraphDestroyNode(node);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rt->len = a->size * 8;
	return 0;
}
