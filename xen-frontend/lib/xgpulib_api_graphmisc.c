// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_graphmisc.c: existing graph nodes and graphs beyond their
 * parameters (xgpulib_api_graphquery.c): edges, removal, enabling,
 * clones, the executable graph's flags, the dot file, and the device's
 * graph memory; user objects, whose destructor runs in this process (a
 * host function by number, xgpulib_api_hostfn.c); kernel node attributes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

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
 * tail, (from, to) as remote node handles; edge data only in its default
 * (cuGraphAddDependencies_v2, cuGraphRemoveDependencies_v2:
 * xgpulib_entry.def).
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
	return robj_destroy(hNode, RK_NODE, xgpulib_call_GRAPH_DESTROY_NODE);
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
	return robj_ask(hGraphExec, RK_EXEC, xgpulib_call_GEXEC_FLAGS, flags);
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
