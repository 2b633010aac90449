// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_graph.c: stream capture and CUDA graphs.
 *
 * Capture happens in the worker, on the driver's stream: the guest's
 * launches and device-side copies reach it in order and the driver
 * records them.  A copy staged through the data area cannot be recorded
 * (the graph would read the staging buffer at every launch); the worker
 * refuses it with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as the driver
 * does pageable memory.  Until this process begins its first capture no
 * stream can be capturing, so capture queries are answered here without a
 * round trip (PyTorch asks at every allocation).
 *
 * Graphs, executable graphs and nodes are guest objects around the
 * worker's handles, one object per handle (a capture's graph and its
 * nodes come back the same each time they are asked for;
 * xgpulib_graphobj.c).
 *
 * Nodes of built graphs: xgpulib_api_graphnode.c.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

/* captures this process began; none: nothing can be capturing */
static unsigned int captures_begun;

/* ---- capture ------------------------------------------------------------- */

bool xgpulib_captures_begun(void)
{
	return __atomic_load_n(&captures_begun, __ATOMIC_RELAXED) != 0;
}

CUresult xgpulib_begin_capture(CUstream s, CUstreamCaptureMode mode,
			       int ptds)
{
	struct xgpuif_begin_capture_args a = { .mode = (uint32_t)mode };
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if (mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	__atomic_add_fetch(&captures_begun, 1, __ATOMIC_RELAXED);
	return xgpulib_call_STREAM_BEGIN_CAPTURE(&a);
}

/* cuStreamBeginCapture of CUDA 10.0: global mode */
static CUresult begin_capture_v1(CUstream s, int ptds)
{
	return xgpulib_begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL, ptds);
}

#undef cuStreamBeginCapture
XGPULIB_EXPORT CUresult cuStreamBeginCapture(CUstream s);
XGPULIB_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s);
CUresult cuStreamBeginCapture(CUstream s)
{
	return begin_capture_v1(s, 0);
}

CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
	return begin_capture_v1(s, 1);
}

/* node handles of deps (n of them, at most XGPUIF_MAX_CAPTURE_DEPS);
 * edges other than the default one are refused */
static CUresult dep_handles(const CUgraphNode *deps, const CUgraphEdgeData *ed,
			    size_t n, uint64_t *out)
{
	if (n && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	if (n > XGPUIF_MAX_CAPTURE_DEPS)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (size_t i = 0; i < n; i++) {
		if (ed && (ed[i].from_port || ed[i].to_port || ed[i].type)) {
			xgpulib_dbg("capture dependencies: edge data other "
				    "than the default is not supported");
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		out[i] = robj_remote(deps[i], RK_NODE);
		if (!out[i])
			return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult xgpulib_capture_to_graph(CUstream s, CUgraph g,
				  const CUgraphNode *deps,
				  const CUgraphEdgeData *ed, size_t n,
				  CUstreamCaptureMode mode, int ptds)
{
	struct xgpuif_capture_graph_args a = { 0, robj_remote(g, RK_GRAPH),
					       (uint32_t)mode, (uint32_t)n };
	uint64_t hd[XGPUIF_MAX_CAPTURE_DEPS];
	struct xgpuif_iov tail;
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if (!a.graph || mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	rc = dep_handles(deps, ed, n, hd);
	if (rc)
		return rc;
	tail = (struct xgpuif_iov){ hd, (uint32_t)(n * 8) };
	__atomic_add_fetch(&captures_begun, 1, __ATOMIC_RELAXED);
	return xgpulib_call_CAPTURE_TO_GRAPH(&a, &tail, 1);
}

CUresult xgpulib_capture_deps_v2(CUstream s, CUgraphNode *deps,
				 const CUgraphEdgeData *ed, size_t n,
				 unsigned int flags, int ptds)
{
	struct xgpuif_capture_deps_args a = { 0, flags, (uint32_t)n };
	uint64_t hd[XGPUIF_MAX_CAPTURE_DEPS];
	struct xgpuif_iov tail;
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	rc = dep_handles(deps, ed, n, hd);
	if (rc)
		return rc;
	tail = (struct xgpuif_iov){ hd, (uint32_t)(n * 8) };
	return xgpulib_call_CAPTURE_DEPS(&a, &tail, 1);
}

/* the CUDA 11.3 form, without edge data */
CUresult xgpulib_capture_deps(CUstream s, CUgraphNode *deps, size_t n,
			      unsigned int flags, int ptds)
{
	return xgpulib_capture_deps_v2(s, deps, NULL, n, flags, ptds);
}

CUresult xgpulib_end_capture(CUstream s, CUgraph *graph, int ptds)
{
	struct xgpuif_stream_args a;
	struct xgpuif_graph_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_stream_out_arg(s, ptds, graph != NULL, &a.stream);
	if (rc)
		return rc;
	rc = xgpulib_call_STREAM_END_CAPTURE(&a, &r);
	if (rc)
		return rc;
	*graph = (CUgraph)robj_for(RK_GRAPH, r.graph, NULL);
	return *graph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* per thread: the dependency nodes the last capture query handed out */
static __thread CUgraphNode tls_deps[XGPUIF_MAX_CAPTURE_DEPS];

CUresult xgpulib_capture_info_v3(CUstream hStream,
				 CUstreamCaptureStatus *captureStatus_out,
				 cuuint64_t *id_out, CUgraph *graph_out,
				 const CUgraphNode **dependencies_out,
				 const CUgraphEdgeData **edgeData_out,
				 size_t *numDependencies_out, int ptds)
{
	struct xgpuif_capture_info_args a = { 0 };
	struct {
		struct xgpuif_capture_info_reply r;
		uint64_t deps[XGPUIF_MAX_CAPTURE_DEPS];
	} rep;
	uint32_t got = 0;
	struct robj *g = NULL;
	CUresult rc;

	/* edge data are only given with the nodes */
	rc = xgpulib_stream_out_arg(hStream, ptds,
				    captureStatus_out &&
				    (!edgeData_out || dependencies_out),
				    &a.stream);
	if (rc)
		return rc;
	if (!__atomic_load_n(&captures_begun, __ATOMIC_RELAXED)) {
		*captureStatus_out = CU_STREAM_CAPTURE_STATUS_NONE;
		return CUDA_SUCCESS;
	}
	a.want_deps = graph_out || dependencies_out || numDependencies_out;
	memset(&rep, 0, sizeof(rep));
	rc = xgpulib_call_STREAM_CAPTURE_INFO(&a, &rep.r, rep.deps,
					      sizeof(rep.deps), &got);
	if (rc)
		return rc;
	if (got != rep.r.ndeps * 8u)
		return CUDA_ERROR_UNKNOWN;
	*captureStatus_out = (CUstreamCaptureStatus)rep.r.status;
	if (rep.r.status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return CUDA_SUCCESS;
	if (id_out)
		*id_out = rep.r.id;
	if (rep.r.graph)
		g = robj_for(RK_GRAPH, rep.r.graph, NULL);
	if (graph_out)
		*graph_out = (CUgraph)g;
	for (uint32_t i = 0; i < rep.r.ndeps && i < XGPUIF_MAX_CAPTURE_DEPS;
	     i++) {
		tls_deps[i] = (CUgraphNode)robj_for(RK_NODE, rep.deps[i], g);
		if (!tls_deps[i])
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (dependencies_out)
		*dependencies_out = tls_deps;
	if (edgeData_out)
		*edgeData_out = NULL;	/* default edges only */
	if (numDependencies_out)
		*numDependencies_out = rep.r.ndeps;
	return CUDA_SUCCESS;
}

CUresult xgpulib_capture_info_v2(CUstream hStream,
				 CUstreamCaptureStatus *captureStatus_out,
				 cuuint64_t *id_out, CUgraph *graph_out,
				 const CUgraphNode **dependencies_out,
				 size_t *numDependencies_out, int ptds)
{
	return xgpulib_capture_info_v3(hStream, captureStatus_out, id_out,
				       graph_out, dependencies_out, NULL,
				       numDependencies_out, ptds);
}

CUresult xgpulib_capture_info(CUstream hStream,
			      CUstreamCaptureStatus *captureStatus_out,
			      cuuint64_t *id_out, int ptds)
{
	return xgpulib_capture_info_v2(hStream, captureStatus_out, id_out,
				       NULL, NULL, NULL, ptds);
}

CUresult xgpulib_stream_is_capturing(CUstream hs, CUstreamCaptureStatus *st,
				     int ptds)
{
	return xgpulib_capture_info(hs, st, NULL, ptds);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	struct xgpuif_i32_args a = { 0 };
	struct xgpuif_i32_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(mode &&
			       *mode <= CU_STREAM_CAPTURE_MODE_RELAXED);
	if (rc)
		return rc;
	a.value = (int32_t)*mode;
	rc = xgpulib_call_CAPTURE_MODE(&a, &r);
	if (rc == CUDA_SUCCESS)
		*mode = (CUstreamCaptureMode)r.value;
	return rc;
}

/* ---- graphs -------------------------------------------------------------- */

static CUresult new_graph(CUgraph *out, CUresult rc, uint64_t remote)
{
	if (rc)
		return rc;
	*out = (CUgraph)robj_for(RK_GRAPH, remote, NULL);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct xgpuif_u32_args a = { flags, 0 };
	struct xgpuif_graph_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(phGraph && !flags);
	if (rc)
		return rc;
	/* the call first: the reply is read after it (argument order is
	 * unspecified) */
	rc = xgpulib_call_GRAPH_CREATE(&a, &r);

	return new_graph(phGraph, rc, r.graph);
}

/*
 * A clone's copies of staged memcpy nodes (xgpulib_capcopy.c) stand for
 * memcpy nodes too, as in the original: its node list, the type of a
 * node found in it and its parameters say memcpy, as natively (before,
 * a clone showed the child graph that stages the copy).
 */
static CUresult clone_staged(CUgraph orig, CUgraph clone)
{
	struct robj_staged_node *v;
	size_t n = robj_staged_of(orig, &v);
	CUresult rc = CUDA_SUCCESS;

	for (size_t i = 0; i < n && rc == CUDA_SUCCESS; i++) {
		CUgraphNode node;

		rc = cuGraphNodeFindInClone(&node, v[i].node, clone);
		if (rc == CUDA_SUCCESS && !robj_stage(node, &v[i].p))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	free(v);
	return rc;
}

CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	struct xgpuif_handle_args a = { robj_remote(originalGraph,
						    RK_GRAPH) };
	struct xgpuif_graph_reply r = { 0 };

	if (!phGraphClone || !a.handle)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc;

	rc = xgpulib_call_GRAPH_CLONE(&a, &r);
	rc = new_graph(phGraphClone, rc, r.graph);
	if (rc == CUDA_SUCCESS) {
		rc = clone_staged(originalGraph, *phGraphClone);
		if (rc) {
			cuGraphDestroy(*phGraphClone);
			*phGraphClone = NULL;
		}
	}
	return rc;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
	return robj_destroy(hGraph, RK_GRAPH, xgpulib_call_GRAPH_DESTROY);
}

static CUresult instantiate(CUgraphExec *out, CUgraph g, uint64_t flags,
			    CUgraphInstantiateResult *result)
{
	struct xgpuif_instantiate_args a = { robj_remote(g, RK_GRAPH), flags };
	struct xgpuif_instantiate_reply r = { 0 };
	CUresult rc;

	if (!out || !a.graph)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GRAPH_INSTANTIATE(&a, &r);
	if (result)
		*result = (CUgraphInstantiateResult)r.result;
	if (rc)
		return rc;
	*out = (CUgraphExec)robj_for(RK_EXEC, r.exec, NULL);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
				     unsigned long long flags)
{
	return instantiate(phGraphExec, hGraph, flags, NULL);
}

/* the CUDA 11 form: no flags, an error node and a log it leaves empty */
#undef cuGraphInstantiate
XGPULIB_EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec,
					   CUgraph hGraph,
					   CUgraphNode *phErrorNode,
					   char *logBuffer, size_t bufferSize);
CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
			    CUgraphNode *phErrorNode, char *logBuffer,
			    size_t bufferSize)
{
	if (phErrorNode)
		*phErrorNode = NULL;
	if (logBuffer && bufferSize)
		logBuffer[0] = 0;
	return instantiate(phGraphExec, hGraph, 0, NULL);
}

XGPULIB_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec,
					      CUgraph hGraph,
					      CUgraphNode *phErrorNode,
					      char *logBuffer,
					      size_t bufferSize);
CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
			       CUgraphNode *phErrorNode, char *logBuffer,
			       size_t bufferSize)
{
	return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer,
				  bufferSize);
}

static CUresult exec_on_stream(CUgraphExec x, CUstream s, int ptds,
			       bool upload)
{
	struct xgpuif_graph_launch_args a = { robj_remote(x, RK_EXEC), 0 };
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if (!a.exec)
		return CUDA_ERROR_INVALID_VALUE;
	return upload ? xgpulib_post_GRAPH_UPLOAD(&a) :
			xgpulib_post_GRAPH_LAUNCH(&a);
}

CUresult xgpulib_graph_instantiate_params(CUgraphExec *phGraphExec,
					  CUgraph hGraph,
					  CUDA_GRAPH_INSTANTIATE_PARAMS *p,
					  int ptds)
{
	uint64_t flags;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	flags = p->flags & ~(uint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	p->hErrNode_out = NULL;
	rc = instantiate(phGraphExec, hGraph, flags, &p->result_out);
	/* an upload at instantiation, then: the worker's upload op */
	if (rc == CUDA_SUCCESS &&
	    (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
		rc = exec_on_stream(*phGraphExec, p->hUploadStream, ptds,
				    true);
	return rc;
}

/* (their _ptsz typedefs name the arguments differently: written out) */
#undef cuGraphLaunch
#undef cuGraphUpload
XGPULIB_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s);
XGPULIB_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec x, CUstream s);

CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
	return exec_on_stream(x, s, 0, false);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s)
{
	return exec_on_stream(x, s, 1, false);
}

CUresult cuGraphUpload(CUgraphExec x, CUstream s)
{
	return exec_on_stream(x, s, 0, true);
}

CUresult cuGraphUpload_ptsz(CUgraphExec x, CUstream s)
{
	return exec_on_stream(x, s, 1, true);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	return robj_destroy(hGraphExec, RK_EXEC, xgpulib_call_GEXEC_DESTROY);
}

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
			   CUgraphExecUpdateResultInfo *resultInfo)
{
	struct xgpuif_exec_update_args a = { robj_remote(hGraphExec, RK_EXEC),
					     robj_remote(hGraph, RK_GRAPH) };
	struct xgpuif_exec_update_reply r = { 0 };
	CUresult rc;

	if (!a.exec || !a.graph || !resultInfo)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_GRAPH_EXEC_UPDATE(&a, &r);
	if (rc == CUDA_SUCCESS)
		rc = (CUresult)r.status;
	memset(resultInfo, 0, sizeof(*resultInfo));
	resultInfo->result = (CUgraphExecUpdateResult)r.result;
	return rc;
}

/* node handles one reply holds */
#define MAX_NODES ((XGPUIF_MAX_PAYLOAD - 64) / 8)

/* cuGraphGetNodes (roots 0), cuGraphGetRootNodes (roots 1):
 * xgpulib_entry.def */
CUresult xgpulib_graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n,
			     int roots)
{
	struct xgpuif_graph_nodes_args a = { robj_remote(g, RK_GRAPH), roots,
					     0 };
	struct robj *go = (struct robj *)g;
	struct xgpuif_graph_nodes_reply rr = { 0 }, *r = &rr;
	uint8_t *buf;
	uint32_t cap, got = 0;
	CUresult rc;

	if (!a.graph || !n)
		return CUDA_ERROR_INVALID_VALUE;
	a.max = nodes ? (uint32_t)(*n < MAX_NODES ? *n : MAX_NODES) : 0;
	cap = a.max * 8;
	buf = calloc(1, cap ? cap : 1);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = xgpulib_call_GRAPH_NODES(&a, r, buf, cap, &got);
	if (rc == CUDA_SUCCESS && nodes) {
		size_t got_n = got / 8;

		if (got_n < *n && got_n < r->total) {
			xgpulib_dbg("cuGraphGetNodes: %zu of %llu nodes fit "
				    "one reply", got_n,
				    (unsigned long long)r->total);
			rc = CUDA_ERROR_NOT_SUPPORTED;
		}
		for (size_t i = 0; rc == CUDA_SUCCESS && i < got_n; i++) {
			uint64_t h;

			memcpy(&h, buf + i * 8, 8);
			nodes[i] = (CUgraphNode)robj_for(RK_NODE, h, go);
			if (!nodes[i])
				rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
		if (rc == CUDA_SUCCESS && got_n < *n)
			*n = got_n;
	} else if (rc == CUDA_SUCCESS) {
		*n = r->total;
	}
	free(buf);
	return rc;
}

