// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_vmm.c: the virtual memory management API (cuMemCreate,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess, ...), as PyTorch's
 * expandable segments use it.
 *
 * Every call is forwarded: the physical allocations and the address
 * space live in the worker (device addresses, like every device pointer).
 * A physical allocation's handle is the worker's; the guest keeps mapped
 * ranges in its table of device memory (for unified copies).  Only the
 * guest's device is a location; multicast objects and array mappings are
 * refused with CUDA_ERROR_NOT_SUPPORTED.
 *
 * Shareable handles (cuMemExportToShareableHandle, between processes of
 * one guest, POSIX fds only): the worker keeps the driver's fd and gives
 * a token (xen-backend/worker/xgpub_op_share.c); the program's "fd" is a
 * small sealed memfd of ours holding XGPUIF_SHARE_MAGIC and the token, so
 * it passes over SCM_RIGHTS (or fork) like the driver's.  Importing reads
 * the token back from the fd; another process of the same guest gets the
 * allocation, another guest's worker finds no such token.  Fabric and
 * Windows handle types are refused: they would leave the guest.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_dev.h"

/* the checks of a call with properties, in the driver's order: its
 * output given, cuInit ran, then the properties */
static CUresult prop_to_wire(const void *out, const CUmemAllocationProp *p,
			     struct xgpuif_vmm_prop *w)
{
	CUresult rc = xgpulib_query_arg(out);

	if (rc)
		return rc;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	*w = (struct xgpuif_vmm_prop){
		.compression = p->allocFlags.compressionType,
		.rdma = p->allocFlags.gpuDirectRDMACapable,
		.usage = p->allocFlags.usage,
	};
	return xgpulib_mem_kind(p->type, p->requestedHandleTypes, &p->location,
				"virtual memory", &w->kind);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct xgpuif_vmm_create_args a = { .size = size, .flags = flags };
	struct xgpuif_vmm_handle_reply r = { 0 };
	CUresult rc = prop_to_wire(handle, prop, &a.prop);

	if (rc)
		return rc;
	rc = xgpulib_call_VMM_CREATE(&a, &r);
	if (rc == CUDA_SUCCESS)
		*handle = r.handle;
	return rc;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct xgpuif_handle_args a = { handle };

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return xgpulib_call_VMM_RELEASE(&a);
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
			     CUdeviceptr addr, unsigned long long flags)
{
	struct xgpuif_vmm_reserve_args a = { size, alignment, addr, flags };
	struct xgpuif_dptr_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(ptr && size);
	if (rc)
		return rc;
	rc = xgpulib_call_VMM_RESERVE(&a, &r);
	if (rc == CUDA_SUCCESS)
		*ptr = r.dptr;
	return rc;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct xgpuif_vmm_range_args a = { ptr, size };

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return xgpulib_call_VMM_ADDRESS_FREE(&a);
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct xgpuif_vmm_map_args a = { ptr, size, offset, handle, flags };
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = xgpulib_call_VMM_MAP(&a);
	if (rc == CUDA_SUCCESS)
		xgpulib_dalloc_add(ptr, size);
	return rc;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct xgpuif_vmm_range_args a = { ptr, size };
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = xgpulib_call_VMM_UNMAP(&a);
	if (rc == CUDA_SUCCESS)
		xgpulib_dalloc_del(ptr);
	return rc;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			const CUmemAccessDesc *desc, size_t count)
{
	struct xgpuif_vmm_access_args a = { .ptr = ptr, .size = size };
	CUresult rc;

	XGPULIB_CHECK_ARGS(count && desc, true);
	for (size_t i = 0; i < count; i++) {
		a.loc_type = (uint32_t)desc[i].location.type;
		a.loc_id = desc[i].location.id;
		a.flags = (uint64_t)desc[i].flags;
		rc = xgpulib_call_VMM_SET_ACCESS(&a);
		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult cuMemGetAccess(unsigned long long *flags,
			const CUmemLocation *location, CUdeviceptr ptr)
{
	struct xgpuif_vmm_access_args a = { .ptr = ptr };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(flags && location);
	if (rc)
		return rc;
	a.loc_type = (uint32_t)location->type;
	a.loc_id = location->id;
	rc = xgpulib_call_VMM_GET_ACCESS(&a, &r);
	if (rc == CUDA_SUCCESS)
		*flags = r.value;
	return rc;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity,
				       const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	struct xgpuif_vmm_granularity_args a = { .option = (uint32_t)option };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc = prop_to_wire(granularity, prop, &a.prop);

	if (rc)
		return rc;
	rc = xgpulib_call_VMM_GRANULARITY(&a, &r);
	if (rc == CUDA_SUCCESS)
		*granularity = r.value;
	return rc;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
				     void *addr)
{
	struct xgpuif_vmm_range_args a = { (uint64_t)(uintptr_t)addr, 0 };
	struct xgpuif_vmm_handle_reply r = { 0 };
	CUresult rc;

	rc = xgpulib_query_arg(handle);
	if (rc)
		return rc;
	rc = xgpulib_call_VMM_RETAIN(&a, &r);
	if (rc == CUDA_SUCCESS)
		*handle = r.handle;
	return rc;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
						CUmemGenericAllocationHandle h)
{
	struct xgpuif_handle_args a = { h };
	struct xgpuif_vmm_props_reply r;
	CUresult rc;

	rc = xgpulib_query_arg(prop);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	rc = xgpulib_call_VMM_PROPS(&a, &r);
	if (rc)
		return rc;
	memset(prop, 0, sizeof(*prop));
	prop->type = (CUmemAllocationType)r.prop.kind.type;
	prop->requestedHandleTypes =
		(CUmemAllocationHandleType)r.prop.kind.handle_types;
	prop->location.type = (CUmemLocationType)r.prop.kind.loc_type;
	prop->location.id = r.prop.kind.loc_id;
	prop->allocFlags.compressionType = r.prop.compression;
	prop->allocFlags.gpuDirectRDMACapable = r.prop.rdma;
	prop->allocFlags.usage = r.prop.usage;
	return CUDA_SUCCESS;
}

/* ---- shareable handles ------------------------------------------------- */

CUresult xgpulib_share_type(const char *call, CUmemAllocationHandleType t)
{
	if (t == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_SUCCESS;
	xgpulib_dbg("%s: handle type 0x%x not supported (POSIX file "
		    "descriptors only, between processes of one guest)",
		    call, (unsigned int)t);
	return CUDA_ERROR_NOT_SUPPORTED;
}

static int share_fd(const struct xgpuif_ipc_handle *h)
{
	/* inherited across exec like any fd the program did not mark */
	int fd = memfd_create("xgpu-shareable", MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (pwrite(fd, h->bytes, sizeof(h->bytes), 0) !=
		    (ssize_t)sizeof(h->bytes) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_WRITE | F_SEAL_SEAL)) {
		close(fd);
		return -1;
	}
	return fd;
}

static CUresult share_read(int fd, struct xgpuif_ipc_handle *h)
{
	struct stat st;

	/* a pipe, a socket or a file of another size is none of ours */
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size != (off_t)sizeof(h->bytes) ||
	    pread(fd, h->bytes, sizeof(h->bytes), 0) !=
		    (ssize_t)sizeof(h->bytes) ||
	    memcmp(h->bytes, XGPUIF_SHARE_MAGIC, 8))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult share_out(const struct xgpuif_ipc_handle *h, void *out)
{
	int fd = share_fd(h);

	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)out = fd;
	return CUDA_SUCCESS;
}

static CUresult share_in(const char *call, CUmemAllocationHandleType t,
			 void *os_handle, struct xgpuif_ipc_handle *h)
{
	CUresult rc = xgpulib_share_type(call, t);

	if (rc)
		return rc;
	return share_read((int)(uintptr_t)os_handle, h);
}

CUresult xgpulib_share_export(const char *call, xgpulib_export_fn op,
			      uint64_t handle, unsigned long long flags,
			      CUmemAllocationHandleType t, bool args_ok,
			      void *out)
{
	struct xgpuif_share_export_args a = { handle, flags };
	struct xgpuif_ipc_handle r;
	CUresult rc;

	XGPULIB_CHECK_ARGS(args_ok, true);
	rc = xgpulib_share_type(call, t);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	rc = op(&a, &r);
	return rc ? rc : share_out(&r, out);
}

CUresult xgpulib_share_import(const char *call, bool args_ok,
			      CUmemAllocationHandleType t, void *os_handle,
			      struct xgpuif_ipc_handle *h)
{
	XGPULIB_CHECK_ARGS(args_ok, true);
	return share_in(call, t, os_handle, h);
}

CUresult cuMemExportToShareableHandle(void *shareableHandle,
				      CUmemGenericAllocationHandle handle,
				      CUmemAllocationHandleType handleType,
				      unsigned long long flags)
{
	return xgpulib_share_export("cuMemExportToShareableHandle",
				    xgpulib_call_VMM_EXPORT, handle, flags,
				    handleType, shareableHandle != NULL,
				    shareableHandle);
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
					void *osHandle,
					CUmemAllocationHandleType shHandleType)
{
	struct xgpuif_vmm_handle_reply r = { 0 };
	struct xgpuif_ipc_handle a;
	CUresult rc = xgpulib_share_import("cuMemImportFromShareableHandle",
					   handle != NULL, shHandleType,
					   osHandle, &a);

	if (rc)
		return rc;
	rc = xgpulib_call_VMM_IMPORT(&a, &r);
	if (rc == CUDA_SUCCESS)
		*handle = r.handle;
	return rc;
}
