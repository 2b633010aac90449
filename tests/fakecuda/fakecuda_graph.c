// SPDX-License-Identifier: MIT
/*
 * fakecuda_graph.c: the fake driver's stream capture and graphs (tests
 * only, see fakecuda.h).  The fake runs everything at once, so nothing is
 * ever being captured and there are no graphs: capture and every graph
 * call answer CUDA_ERROR_NOT_SUPPORTED, which lets the tests check that
 * the worker passes the driver's answers on and refuses bad handles
 * before the driver sees them.  The capture mode is kept per process.
 */
#include "fakecuda.h"

static CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st,
				   cuuint64_t *id, CUgraph *g,
				   const CUgraphNode **deps,
				   const CUgraphEdgeData **edges,
				   size_t *ndeps)
{
	CUresult rc = cuStreamIsCapturing(s, st);

	if (rc)
		return rc;
	if (id)
		*id = 0;
	if (g)
		*g = NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return CUDA_SUCCESS;
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m)
{
	CUstreamCaptureMode old = mode;

	if (!m || *m > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	mode = *m;
	*m = old;
	return CUDA_SUCCESS;
}

/* the stubs name their parameters for the prototype check only */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NO_GRAPHS(decl)							\
	CUresult decl							\
	{								\
		NEED_INIT();						\
		return CUDA_ERROR_NOT_SUPPORTED;			\
	}

NO_GRAPHS(cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m))
NO_GRAPHS(cuStreamEndCapture(CUstream s, CUgraph *g))
NO_GRAPHS(cuGraphCreate(CUgraph *g, unsigned int flags))
NO_GRAPHS(cuGraphDestroy(CUgraph g))
NO_GRAPHS(cuGraphClone(CUgraph *c, CUgraph g))
NO_GRAPHS(cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g,
				      unsigned long long flags))
NO_GRAPHS(cuGraphLaunch(CUgraphExec x, CUstream s))
NO_GRAPHS(cuGraphUpload(CUgraphExec x, CUstream s))
NO_GRAPHS(cuGraphExecDestroy(CUgraphExec x))
NO_GRAPHS(cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g,
			       CUgraphExecUpdateResultInfo *info))
NO_GRAPHS(cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n))
NO_GRAPHS(cuGraphGetRootNodes(CUgraph g, CUgraphNode *nodes, size_t *n))
NO_GRAPHS(cuGraphAddEmptyNode(CUgraphNode *n, CUgraph g,
			      const CUgraphNode *deps, size_t nd))
NO_GRAPHS(cuGraphAddKernelNode_v2(CUgraphNode *n, CUgraph g,
				  const CUgraphNode *deps, size_t nd,
				  const CUDA_KERNEL_NODE_PARAMS *p))
NO_GRAPHS(cuGraphAddMemsetNode(CUgraphNode *n, CUgraph g,
			       const CUgraphNode *deps, size_t nd,
			       const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c))
NO_GRAPHS(cuGraphAddMemcpyNode(CUgraphNode *n, CUgraph g,
			       const CUgraphNode *deps, size_t nd,
			       const CUDA_MEMCPY3D *p, CUcontext c))
NO_GRAPHS(cuGraphAddEventRecordNode(CUgraphNode *n, CUgraph g,
				    const CUgraphNode *deps, size_t nd,
				    CUevent e))
NO_GRAPHS(cuGraphAddEventWaitNode(CUgraphNode *n, CUgraph g,
				  const CUgraphNode *deps, size_t nd,
				  CUevent e))
NO_GRAPHS(cuGraphAddChildGraphNode(CUgraphNode *n, CUgraph g,
				   const CUgraphNode *deps, size_t nd,
				   CUgraph child))
NO_GRAPHS(cuGraphDestroyNode(CUgraphNode n))
NO_GRAPHS(cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *t))
NO_GRAPHS(cuGraphKernelNodeSetParams_v2(CUgraphNode n,
					const CUDA_KERNEL_NODE_PARAMS *p))
NO_GRAPHS(cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n,
					    const CUDA_KERNEL_NODE_PARAMS *p))
NO_GRAPHS(cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *from,
				    const CUgraphNode *to,
				    const CUgraphEdgeData *e, size_t n))
