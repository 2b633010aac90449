// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_ipc.c: IPC memory handles between processes of one guest
 * (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle; the event
 * ones are with the events, xgpulib_api_stream.c).
 *
 * The handle a program gets holds a token of the worker's: it can pass it
 * to another process of the same guest (a Xen domain, or local clients of
 * one user), whose worker opens the driver's handle behind it; a process
 * of another guest gets CUDA_ERROR_INVALID_VALUE, as for a handle that
 * names nothing.
 */
#include <string.h>

#include "xgpulib.h"

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	struct xgpuif_ipc_handle r;
	CUresult rc;

	rc = xgpulib_query_arg(pHandle);
	if (rc)
		return rc;
	rc = xgpulib_call_IPC_GET_MEM(&a, &r);
	if (rc == CUDA_SUCCESS)
		memcpy(pHandle->reserved, r.bytes, sizeof(pHandle->reserved));
	return rc;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
			       unsigned int Flags)
{
	struct xgpuif_ipc_open_args a;
	struct xgpuif_dptr_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(pdptr);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	memcpy(a.bytes, handle.reserved, sizeof(a.bytes));
	a.flags = Flags;
	rc = xgpulib_call_IPC_OPEN_MEM(&a, &r);
	if (rc == CUDA_SUCCESS)
		*pdptr = r.dptr;
	return rc;
}

/* the CUDA 4.1 form: the same arguments */
#undef cuIpcOpenMemHandle
XGPULIB_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr,
					   CUipcMemHandle handle,
					   unsigned int Flags);
CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
			    unsigned int Flags)
{
	return cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return xgpulib_call_IPC_CLOSE_MEM(&a);
}
