// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_oldabi.c: the older ABIs that need more than a call of the
 * current form with the same arguments (those are lines of
 * xgpulib_entry.def).
 *
 * - The memory ABI of 32-bit device pointers and sizes (before CUDA 3.2:
 *   cuMemAlloc, cuMemcpyHtoD, cuArrayCreate, ...): the real driver answers
 *   every one of them CUDA_ERROR_INVALID_CONTEXT in a context of the
 *   current API whatever the arguments (measured on the H100 and the H200,
 *   driver 580), and the library makes no other kind of context;
 *   xgpulib_old_abi_32bit is that answer (the list is in xgpulib_entry.def).
 * - The kernel node parameters of CUDA 10 and 11 (CUDA_KERNEL_NODE_PARAMS_v1:
 *   no kernel and context fields) and cuGraphExecUpdate of CUDA 10.2 (the
 *   error node and the result in two out-parameters): converted to and from
 *   the current forms.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"

CUresult xgpulib_old_abi_32bit(void)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_ERROR_INVALID_CONTEXT;
}

/* the current form of CUDA 10/11 parameters: no kernel, no context */
static const CUDA_KERNEL_NODE_PARAMS *kernel_v2(
	const CUDA_KERNEL_NODE_PARAMS_v1 *p, CUDA_KERNEL_NODE_PARAMS *k)
{
	if (!p)
		return NULL;
	memset(k, 0, sizeof(*k));
	memcpy(k, p, sizeof(*p));	/* its first fields */
	return k;
}

#undef cuGraphAddKernelNode
XGPULIB_EXPORT CUresult cuGraphAddKernelNode(
	CUgraphNode *phGraphNode, CUgraph hGraph,
	const CUgraphNode *dependencies, size_t numDependencies,
	const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			      const CUgraphNode *dependencies,
			      size_t numDependencies,
			      const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS k;

	return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies,
				       numDependencies, kernel_v2(p, &k));
}

#undef cuGraphKernelNodeSetParams
XGPULIB_EXPORT CUresult cuGraphKernelNodeSetParams(
	CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
				    const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS k;

	return cuGraphKernelNodeSetParams_v2(hNode, kernel_v2(p, &k));
}

#undef cuGraphExecKernelNodeSetParams
XGPULIB_EXPORT CUresult cuGraphExecKernelNodeSetParams(
	CUgraphExec hGraphExec, CUgraphNode hNode,
	const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec,
					CUgraphNode hNode,
					const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS k;

	return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode,
						 kernel_v2(p, &k));
}

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

#undef cuGraphExecUpdate
XGPULIB_EXPORT CUresult cuGraphExecUpdate(
	CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
	CUgraphExecUpdateResult *updateResult_out);
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
			   CUgraphNode *hErrorNode_out,
			   CUgraphExecUpdateResult *updateResult_out)
{
	CUgraphExecUpdateResultInfo info;
	CUresult rc;

	if (!hErrorNode_out || !updateResult_out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
	/* info is filled once the update was tried (bad handles: not) */
	if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
		*hErrorNode_out = info.errorNode;
		*updateResult_out = info.result;
	}
	return rc;
}
