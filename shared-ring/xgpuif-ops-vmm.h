/* SPDX-License-Identifier: MIT */
/*
 * xgpuif-ops-vmm.h: argument and reply layouts of the operations on
 * virtual memory (reserve, create, map), IPC and shareable handles,
 * managed memory and array mappings (the conventions of xgpuif-ops.h,
 * which includes this).
 */
#ifndef XGPUIF_OPS_VMM_H
#define XGPUIF_OPS_VMM_H

/* ---- virtual memory management ------------------------------------------ */

/* CUmemAllocationProp, less the Windows metadata */
struct xgpuif_vmm_prop {
	struct xgpuif_mem_kind kind;
	uint8_t compression;
	uint8_t rdma;
	uint16_t usage;
	uint32_t _pad;
};

struct xgpuif_vmm_create_args {
	uint64_t size;
	uint64_t flags;
	struct xgpuif_vmm_prop prop;
};

struct xgpuif_vmm_handle_reply {
	xgpuif_handle_t handle;
};

struct xgpuif_vmm_reserve_args {
	uint64_t size;
	uint64_t align;
	uint64_t addr;		/* a hint */
	uint64_t flags;
};

/* VMM_ADDRESS_FREE, VMM_UNMAP, VMM_RETAIN (size 0) */
struct xgpuif_vmm_range_args {
	uint64_t ptr;
	uint64_t size;
};

struct xgpuif_vmm_map_args {
	uint64_t ptr;
	uint64_t size;
	uint64_t offset;
	xgpuif_handle_t handle;
	uint64_t flags;
};

/* VMM_SET_ACCESS (one descriptor), VMM_GET_ACCESS (size 0, flags out) */
struct xgpuif_vmm_access_args {
	uint64_t ptr;
	uint64_t size;
	uint32_t loc_type;
	int32_t loc_id;
	uint64_t flags;		/* CUmemAccess_flags */
};

struct xgpuif_vmm_granularity_args {
	struct xgpuif_vmm_prop prop;
	uint32_t option;	/* CUmemAllocationGranularity_flags */
	uint32_t _pad;
};

struct xgpuif_vmm_props_reply {
	struct xgpuif_vmm_prop prop;
};

/* ---- IPC ------------------------------------------------------------------- */

/*
 * A guest's CUipcMemHandle / CUipcEventHandle: XGPUIF_IPC_MAGIC, then the
 * worker's 16-byte token, then zeros.  The driver's handle stays in Dom0.
 */
#define XGPUIF_IPC_MAGIC	"XGPUIPC"	/* 8 bytes with its NUL */

struct xgpuif_ipc_handle {
	uint8_t bytes[64];
};

/* IPC_OPEN_MEM */
struct xgpuif_ipc_open_args {
	uint8_t bytes[64];
	uint32_t flags;
	uint32_t _pad;
};

/* ---- shareable handles between processes of one guest (285-290) ------- */

/*
 * cuMemExportToShareableHandle / cuMemPoolExportToShareableHandle (POSIX
 * file descriptors only) give an xgpuif_ipc_handle: XGPUIF_SHARE_MAGIC
 * and a registry token (the worker keeps the driver's fd; the guest
 * library wraps the 64 bytes in a memfd of its own, the program's
 * "shareable handle").  cuMemPoolExportPointer gives XGPUIF_PTR_MAGIC and
 * a token for the driver's 64-byte CUmemPoolPtrExportData.  Imports send
 * the 64 bytes back (VMM_IMPORT, POOL_IMPORT: an xgpuif_ipc_handle).
 */
#define XGPUIF_SHARE_MAGIC	"XGPUSHR"	/* 8 bytes with its NUL */
#define XGPUIF_PTR_MAGIC	"XGPUPTR"	/* 8 bytes with its NUL */

/* VMM_EXPORT, POOL_EXPORT */
struct xgpuif_share_export_args {
	xgpuif_handle_t handle;	/* VMEM or POOL */
	uint64_t flags;		/* the driver's flags argument (0) */
};

/* POOL_IMPORT_PTR */
struct xgpuif_pool_import_ptr_args {
	xgpuif_handle_t pool;
	uint8_t bytes[64];	/* XGPUIF_PTR_MAGIC and a token */
};

/* POOL_IMPORT_PTR: the imported pointer and the size of its allocation */
struct xgpuif_pool_ptr_reply {
	uint64_t dptr;
	uint64_t size;
};

/* ---- managed memory ---------------------------------------------------- */

/*
 * Coherent managed memory (README): MANAGED_ALLOC is the worker driver's
 * cuMemAllocManaged of bytesize bytes with flags (CU_MEM_ATTACH_*);
 * MANAGED_FETCH / MANAGED_FLUSH copy [dptr, dptr + mem.len), which must
 * lie in one allocation of MANAGED_ALLOC's, out of or into the guest's
 * shared pages mem (a host-memory region).  stream is the legacy stream
 * (XGPUIF_STREAM_LEGACY): the copy is GPU work, gated and charged.  A
 * fetch waits for the context's work first; flags is 0, or for a fetch
 * XGPUIF_MANAGED_BOUNDED.  A host function's blocks go through its slot
 * instead (XGPUIF_HF_FETCH/FLUSH).
 */
/*
 * The block is pinned memory made coherent (the network): a kernel may be
 * waiting for the CPU to write it, which it never will while the fetch
 * waits for that kernel, so a wait past XGPUIF_MANAGED_WAIT_S seconds
 * ends the channel (the guest's next call: CUDA_ERROR_LAUNCH_TIMEOUT)
 * rather than leave the program hanging.
 */
#define XGPUIF_MANAGED_BOUNDED	0x1u
#define XGPUIF_MANAGED_WAIT_S	10

struct xgpuif_managed_alloc_args {
	uint64_t bytesize;
	uint32_t flags;
	uint32_t _pad;
};

struct xgpuif_managed_block_args {
	uint64_t dptr;
	struct xgpuif_memref mem;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t _pad;
};

/* ---- mapping arrays --------------------------------------------------- */

/*
 * MAP_ARRAY: cuMemMapArrayAsync; count struct xgpuif_array_map follow.
 * resource is an ARRAY (or SUBARRAY) handle for CU_RESOURCE_TYPE_ARRAY, a
 * MIPMAP handle for CU_RESOURCE_TYPE_MIPMAPPED_ARRAY, else 0; mem a VMEM
 * handle for CU_MEM_OPERATION_TYPE_MAP, else 0; sub the subresource
 * union's 32 bytes as the CUDA ABI lays them.
 */
#define XGPUIF_MAX_ARRAY_MAPS	256u

struct xgpuif_map_array_args {
	xgpuif_handle_t stream;
	uint32_t count;
	uint32_t null_list;	/* 1: the program passed no list (count 0) */
};

struct xgpuif_array_map {
	uint32_t resource_type;
	uint32_t subresource_type;
	xgpuif_handle_t resource;
	uint32_t sub[8];
	uint32_t mem_op;
	uint32_t mem_handle_type;
	xgpuif_handle_t mem;
	uint64_t offset;
	uint32_t device_mask;
	uint32_t flags;
	uint32_t reserved[2];
};

#endif /* XGPUIF_OPS_VMM_H */
