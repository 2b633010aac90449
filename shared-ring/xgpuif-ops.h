/* SPDX-License-Identifier: MIT */
/*
 * xgpuif-ops.h: argument and reply layouts of each operation, those of
 * virtual memory, IPC, shareable handles and managed memory in
 * xgpuif-ops-vmm.h, of modules, arrays and textures in
 * xgpuif-ops-module.h, of graphs in xgpuif-ops-graph.h and of NVML in
 * xgpuif-ops-nvml.h (included at the end).  Included by xgpuif.h only.
 * The fixed part of each request is the struct named in
 * xgpu_calls.def; a request may carry trailing bytes where the comment
 * above the struct says so.  Replies are the named reply struct, possibly
 * followed by trailing entries as documented.
 *
 * Conventions: sizes in bytes are uint64_t; CUDA enums and flags are
 * uint32_t or int32_t as in cuda.h; device pointers are uint64_t; handles
 * are xgpuif_handle_t; every _pad is zero.  Every size is asserted at the
 * end of xgpuif.h.
 */
#ifndef XGPUIF_OPS_H
#define XGPUIF_OPS_H

/* ---- generic ---------------------------------------------------------- */

struct xgpuif_handle_args {
	xgpuif_handle_t handle;
};

/* ---- init and devices -------------------------------------------------- */

struct xgpuif_init_args {
	uint32_t flags;
	uint32_t guest_version;	/* XGPUIF_VERSION of the guest library */
};

struct xgpuif_init_reply {
	int32_t driver_version;	/* the host driver's cuDriverGetVersion */
	uint32_t device_count;	/* devices this guest may use */
};

/* an export table's id, the bytes of a CUuuid */
struct xgpuif_uuid_args {
	uint8_t uuid[16];
};

/* the largest export table size EXPORT_TABLE_SIZE reports (the known
 * ones have at most 99 slots) */
#define XGPUIF_MAX_ETBL_BYTES	(1024u * 8u)

#define XGPUIF_NUM_DEV_ATTRS	160u
#define XGPUIF_DEV_NAME_LEN	256u

struct xgpuif_device_args {
	int32_t ordinal;
	uint32_t _pad;
};

/*
 * DEVICE_INFO: everything immutable the guest caches about a device.
 * attrs[i] is cuDeviceGetAttribute(i); attr_valid[i] is 1 where the driver
 * answered CUDA_SUCCESS.
 */
struct xgpuif_device_info_reply {
	char name[XGPUIF_DEV_NAME_LEN];
	uint64_t total_mem;
	uint8_t uuid[16];
	int32_t pci_domain;
	int32_t pci_bus;
	int32_t pci_device;
	uint32_t nattrs;	/* XGPUIF_NUM_DEV_ATTRS */
	int32_t attrs[XGPUIF_NUM_DEV_ATTRS];
	uint8_t attr_valid[XGPUIF_NUM_DEV_ATTRS];
};

/* ---- contexts ----------------------------------------------------------- */

struct xgpuif_dev_flags_args {
	int32_t dev;
	uint32_t flags;
};

struct xgpuif_ctx_reply {
	xgpuif_handle_t ctx;
};

struct xgpuif_ctx_state_reply {
	uint32_t flags;
	int32_t active;
};

struct xgpuif_limit_args {
	uint32_t limit;		/* CUlimit */
	uint32_t _pad;
	uint64_t value;		/* SET only */
};

struct xgpuif_u64_reply {
	uint64_t value;
};

struct xgpuif_u32_args {
	uint32_t value;
	uint32_t _pad;
};

struct xgpuif_priority_range_reply {
	int32_t least;
	int32_t greatest;
};

/* ---- memory ------------------------------------------------------------- */

struct xgpuif_mem_info_reply {
	uint64_t free;
	uint64_t total;
};

struct xgpuif_mem_alloc_args {
	uint64_t bytesize;
};

struct xgpuif_dptr_reply {
	uint64_t dptr;
};

struct xgpuif_mem_alloc_pitch_args {
	uint64_t width_bytes;
	uint64_t height;
	uint32_t elem_size;
	uint32_t _pad;
};

struct xgpuif_mem_alloc_pitch_reply {
	uint64_t dptr;
	uint64_t pitch;
};

struct xgpuif_dptr_args {
	uint64_t dptr;
};

struct xgpuif_range_reply {
	uint64_t base;
	uint64_t size;
};

/*
 * HOSTMEM_REGISTER: the guest shares `size` bytes of its memory with the
 * worker as region `region` (guest chosen, != 0, unique while
 * registered).  How the pages travel is the transport's business (local:
 * a sealed memfd sent over the socket just before this request; Xen: a
 * page directory of grant references in the data area, see xgpuif.md).
 * The worker maps them, at guest_va if it can, and registers them with
 * the driver.
 *
 * HOST_REGISTER (cuMemHostRegister, zero copy) carries the same struct:
 * the pages are the program's own memory, already moved into shared
 * memory at guest_va by the guest.  The worker must map them at guest_va
 * and register them with `flags` (CU_MEMHOSTREGISTER_*), or refuse
 * (unmapped again); the device pointer then equals guest_va.
 */
struct xgpuif_hostmem_args {
	uint32_t region;
	uint32_t flags;		/* CU_MEMHOSTALLOC_* */
	uint64_t size;
	uint64_t guest_va;
	struct xgpuif_memref dir;	/* Xen: grant directory; local: 0 */
};

struct xgpuif_hostmem_reply {
	uint64_t dptr;		/* device pointer of the mapping */
	uint32_t same_va;	/* 1: worker mapped it at guest_va */
	uint32_t _pad;
};

struct xgpuif_region_args {
	uint32_t region;
	uint32_t _pad;
};

/* MEMCPY_* flags */
#define XGPUIF_CF_ASYNC		0x1u	/* stream ordered (cuMemcpy*Async) */
/*
 * MEMCPY_DTOH and MEMCPY_HTOD, not ASYNC: the worker may queue the copy
 * with a write of `fence` to the first word of the data area's last page
 * after it and reply at once with XGPUIF_SF_FENCED (the copy is over once
 * the word holds the value; SYNC_FENCE says when it may); without that
 * flag in the reply the copy is done as a blocking one.
 */
#define XGPUIF_CF_FENCE		0x4u

struct xgpuif_memcpy_htod_args {
	uint64_t dst;
	struct xgpuif_memref src;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t fence;		/* XGPUIF_CF_FENCE's value, else 0 */
};

struct xgpuif_memcpy_dtoh_args {
	struct xgpuif_memref dst;
	uint64_t src;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t fence;		/* XGPUIF_CF_FENCE's value, else 0 */
};

struct xgpuif_memcpy_dtod_args {
	uint64_t dst;
	uint64_t src;
	uint64_t len;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t _pad;
};

/* the memory type of one side of a copy (struct xgpuif_copy_side3d) */
#define XGPUIF_MT_HOST		1u	/* mem names shared memory */
#define XGPUIF_MT_DEVICE	2u	/* dptr */
#define XGPUIF_MT_ARRAY		3u	/* array handle */

/* memsets of 8, 16 or 32 bit elements; height 1 for 1D */
struct xgpuif_memset_args {
	uint64_t dst;
	uint64_t pitch;
	uint64_t width;		/* elements per row */
	uint64_t height;
	xgpuif_handle_t stream;
	uint32_t value;
	uint32_t elem_size;	/* 1, 2 or 4 */
	uint32_t flags;		/* XGPUIF_CF_ASYNC */
	uint32_t _pad;
};

struct xgpuif_ptr_attr_args {
	uint64_t ptr;
	uint32_t attr;		/* CUpointer_attribute */
	uint32_t _pad;
};

/* ---- launches and occupancy --------------------------------------------- */

/* one CUlaunchAttribute, value bytes as the CUDA ABI lays them out */
struct xgpuif_launch_attr {
	uint32_t id;
	uint32_t _pad;
	uint8_t value[64];
};

/*
 * LAUNCH: followed by nattrs struct xgpuif_launch_attr, then param_bytes
 * bytes of parameters laid out at the offsets of the function's
 * parameter layout.
 */
struct xgpuif_launch_args {
	xgpuif_handle_t func;
	uint32_t kind;		/* XGPUIF_FN_* */
	uint32_t shmem;
	uint32_t grid[3];
	uint32_t block[3];
	xgpuif_handle_t stream;
	uint32_t nattrs;
	uint32_t param_bytes;
};

#define XGPUIF_MAX_LAUNCH_ATTRS	16u

struct xgpuif_occupancy_args {
	xgpuif_handle_t func;
	uint32_t kind;
	uint32_t flags;
	uint32_t block_size;
	uint32_t num_blocks;	/* AVAILABLE_DSMEM */
	uint64_t dyn_smem;
};

/* OCC_CLUSTERS: followed by nattrs struct xgpuif_launch_attr */
struct xgpuif_occ_cluster_args {
	xgpuif_handle_t func;
	uint32_t kind;
	uint32_t shmem;
	uint32_t grid[3];
	uint32_t block[3];
	xgpuif_handle_t stream;
	uint32_t nattrs;
	uint32_t which;		/* 0 max active clusters, 1 max potential
				 * cluster size */
};

struct xgpuif_i32_reply {
	int32_t value;
	uint32_t _pad;
};

/* ---- streams and events -------------------------------------------------- */

struct xgpuif_stream_create_args {
	uint32_t flags;
	int32_t priority;
};

struct xgpuif_stream_reply {
	xgpuif_handle_t stream;
};

struct xgpuif_stream_wait_args {
	xgpuif_handle_t stream;
	xgpuif_handle_t event;
	uint32_t flags;
	uint32_t _pad;
};

struct xgpuif_event_reply {
	xgpuif_handle_t event;
};

struct xgpuif_event_record_args {
	xgpuif_handle_t event;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t with_flags;	/* 1: cuEventRecordWithFlags */
};

struct xgpuif_elapsed_args {
	xgpuif_handle_t start;
	xgpuif_handle_t end;
};

struct xgpuif_elapsed_reply {
	float ms;
	uint32_t _pad;
};

/* ---- stream-ordered memory and pools ------------------------------------ */

struct xgpuif_mem_alloc_async_args {
	uint64_t bytesize;
	xgpuif_handle_t stream;
	xgpuif_handle_t pool;	/* 0: the device's current pool */
};

struct xgpuif_mem_free_async_args {
	uint64_t dptr;
	xgpuif_handle_t stream;
};

/* what CUmemPoolProps and CUmemAllocationProp (struct xgpuif_vmm_prop)
 * begin with: the kind of memory, the shareable handle types it may be
 * exported as, and its location */
struct xgpuif_mem_kind {
	uint32_t type;		/* CUmemAllocationType */
	uint32_t handle_types;	/* CUmemAllocationHandleType mask */
	uint32_t loc_type;	/* CUmemLocationType */
	int32_t loc_id;
};

/* CUmemPoolProps, less the Windows security attributes */
struct xgpuif_pool_create_args {
	struct xgpuif_mem_kind kind;
	uint64_t max_size;
	uint16_t usage;
	uint16_t _pad[3];
};

struct xgpuif_pool_reply {
	xgpuif_handle_t pool;
};

/* the pool attributes whose value is an int; the others are cuuint64_t
 * (CUmemPool_attribute values of the CUDA ABI) */
static inline int xgpuif_pool_attr_is_int(uint32_t attr)
{
	return attr == 1 ||	/* CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES */
	       attr == 2 ||	/* CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC */
	       attr == 3;	/* CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES */
}

/* cuMemPoolGet/SetAttribute: an int attribute travels in value too */
struct xgpuif_pool_attr_args {
	xgpuif_handle_t pool;
	uint32_t attr;		/* CUmemPool_attribute */
	uint32_t set;		/* 1: set to value, 0: get */
	uint64_t value;
};

struct xgpuif_pool_trim_args {
	xgpuif_handle_t pool;
	uint64_t min_bytes;
};

/* which device pool: XGPUIF_DEVPOOL_* */
#define XGPUIF_DEVPOOL_DEFAULT	0u	/* cuDeviceGetDefaultMemPool */
#define XGPUIF_DEVPOOL_CURRENT	1u	/* cuDeviceGetMemPool */
#define XGPUIF_DEVPOOL_SET	2u	/* cuDeviceSetMemPool */

struct xgpuif_device_pool_args {
	uint32_t which;
	int32_t device;		/* the guest's ordinal */
	xgpuif_handle_t pool;	/* XGPUIF_DEVPOOL_SET: the new current */
};

/* cuMemPoolSetAccess (one descriptor) / cuMemPoolGetAccess */
struct xgpuif_pool_access_args {
	xgpuif_handle_t pool;
	uint32_t loc_type;
	int32_t loc_id;
	uint32_t set;
	uint32_t flags;		/* CUmemAccess_flags, when set */
};

/* ---- device output ------------------------------------------------------ */

/*
 * DEVICE_OUTPUT: what kernels wrote to the worker's stdout (device
 * printf), oldest first, followed by `bytes` bytes of it: as many as fit
 * in the reply.  `waiting`: bytes still in the worker after these;
 * `dropped`: bytes lost since the previous DEVICE_OUTPUT reply because
 * the worker's buffer was full (they were never kept).
 */
struct xgpuif_output_reply {
	uint32_t bytes;
	uint32_t _pad;
	uint64_t waiting;
	uint64_t dropped;
};

/* ---- host functions --------------------------------------------------------- */

/*
 * A host function's slot in the guest's callback region (64 bytes, one
 * cache line).  The guest takes a FREE slot (QUEUED) and posts
 * HOSTFN_LAUNCH; when the stream reaches it the worker writes the stream's
 * status and DUE and holds the stream; the guest runs the function and
 * writes DONE; the worker frees the slot (FREE) and lets the stream go.
 */
#define XGPUIF_HF_FREE		0u
#define XGPUIF_HF_QUEUED	1u
#define XGPUIF_HF_DUE		2u
#define XGPUIF_HF_DONE		3u
/*
 * While DUE, the function running may touch coherent managed memory
 * (README): the guest asks the worker's thread that holds the stream,
 * not the ring (the worker may be blocked in a synchronisation waiting
 * for this very function), to copy block mc_* out of (FETCH) or into
 * (FLUSH) the managed allocation, by writing the block and the state;
 * the worker answers mc_status and DUE again.
 */
#define XGPUIF_HF_FETCH		4u
#define XGPUIF_HF_FLUSH		5u

struct xgpuif_hostfn_slot {
	uint32_t state;		/* XGPUIF_HF_*, accessed atomically */
	int32_t status;		/* the stream's CUresult (callbacks) */
	uint64_t seq;		/* the guest's count, for its own checks */
	uint64_t fnid;		/* graph slots: the function's number */
	uint64_t mc_dptr;	/* FETCH/FLUSH: the block's managed address */
	uint64_t mc_off;	/* its bytes' offset in region mc_region */
	uint32_t mc_len;	/* its length */
	uint32_t mc_region;
	int32_t mc_status;	/* the answer (a CUresult) */
	uint32_t nt_type;	/* notification slots: its CUasyncNotificationType */
	uint64_t nt_info;	/* and its info union's 8 bytes */
};

/*
 * HOSTFN_SETUP: region `region` holds nslots struct xgpuif_hostfn_slot
 * the guest takes for its launches, then ngraph slots the worker takes
 * (FREE -> QUEUED, fnid, DUE) when a graph's host node or a captured host
 * function runs: the guest runs function number fnid and writes DONE.
 */
/* HOSTFN_SETUP's region where the transport keeps the slots in step
 * (the network: no memory is shared; xgpu_mirror.h, HOSTFN frames) */
#define XGPUIF_HOSTFN_MIRRORED	0xffffffffu

struct xgpuif_hostfn_setup_args {
	uint32_t region;
	uint32_t nslots;
	uint32_t ngraph;
	uint32_t _pad;
};

/* HOSTFN_CAPTURE: a host function on a capturing stream (a host node) */
struct xgpuif_hostfn_capture_args {
	xgpuif_handle_t stream;
	uint64_t fnid;
	uint32_t callback;	/* 1: cuStreamAddCallback */
	uint32_t _pad;
};

struct xgpuif_hostfn_launch_args {
	xgpuif_handle_t stream;
	uint32_t slot;
	uint32_t callback;	/* 1: cuStreamAddCallback (a status), 0:
				 * cuLaunchHostFunc */
};

/* ---- stream memory operations and attributes ---------------------------- */

/* STREAM_MEMOP: count CUstreamBatchMemOpParams follow (the CUDA ABI's
 * 48-byte union, as it is) */
struct xgpuif_memop_args {
	xgpuif_handle_t stream;
	uint32_t count;
	uint32_t flags;
};

#define XGPUIF_MEMOP_SIZE	48u
#define XGPUIF_MAX_MEMOPS	256u

/* STREAM_ATTR: a CUstreamAttrValue (64 bytes) in, and out for a get */
struct xgpuif_stream_attr_args {
	xgpuif_handle_t stream;
	uint32_t attr;		/* CUstreamAttrID */
	uint32_t set;
	uint8_t value[64];
};

struct xgpuif_stream_attr_reply {
	uint8_t value[64];
};

/* ---- context events, peers and device queries (250-255) ----------------- */

/* CTX_EVENT: cuCtxRecordEvent (wait 0) / cuCtxWaitEvent (wait 1) */
struct xgpuif_ctx_event_args {
	xgpuif_handle_t ctx;
	xgpuif_handle_t event;
	uint32_t wait;
	uint32_t _pad;
};

/* STREAM_COPY_ATTRS: cuStreamCopyAttributes(dst, src) */
struct xgpuif_stream_pair_args {
	xgpuif_handle_t dst;
	xgpuif_handle_t src;
};

/*
 * DEVICE_QUERY: the small device questions, asked of the worker's device
 * (the guest's device 0; a peer is the same device, as on a machine with
 * one GPU).  what is one of XGPUIF_DQ_*; a, b are its numbers; for the
 * atomic capabilities, count operations of ops[] (the guest sends at most
 * XGPUIF_DQ_MAX_OPS at a time) and the capabilities come back in caps[].
 */
#define XGPUIF_DQ_EXEC_AFFINITY_SUPPORT	1u	/* a: CUexecAffinityType */
#define XGPUIF_DQ_TEX1D_LINEAR_MAX	2u	/* a: format, b: channels */
#define XGPUIF_DQ_HOST_ATOMIC_CAPS	3u
#define XGPUIF_DQ_P2P_ATOMIC_CAPS	4u
#define XGPUIF_DQ_P2P_ATTRIBUTE		5u	/* a: CUdevice_P2PAttribute */
#define XGPUIF_DQ_CAN_ACCESS_PEER	6u
#define XGPUIF_DQ_LUID			7u	/* value: mask, bytes: luid */
#define XGPUIF_DQ_FLUSH_RDMA		8u	/* a: target, b: scope */
#define XGPUIF_DQ_CTX_EXEC_AFFINITY	9u	/* a: type; value: smCount */
#define XGPUIF_DQ_MAX_OPS		32u

struct xgpuif_device_query_args {
	uint32_t what;
	int32_t a;
	int32_t b;
	uint32_t count;
	uint32_t ops[XGPUIF_DQ_MAX_OPS];
};

struct xgpuif_device_query_reply {
	int64_t value;
	uint8_t bytes[8];
	uint32_t caps[XGPUIF_DQ_MAX_OPS];
};

/* PEER_ACCESS: cuCtxEnablePeerAccess (enable 1) / cuCtxDisablePeerAccess */
struct xgpuif_peer_access_args {
	xgpuif_handle_t peer;
	uint32_t enable;
	uint32_t flags;
};

/* ---- green contexts ------------------------------------------------------ */

/*
 * A CUdevResource travels as its bytes in the CUDA ABI's layout (type,
 * 92 bytes the driver keeps for itself, the SM counts): the guest gets
 * what the worker's driver wrote, with the driver's 92 bytes replaced by
 * a token of the worker's, and sends it back unchanged.  The worker takes
 * back only bytes it handed to this guest (xgpub_op_green.c).
 */
#define XGPUIF_DEVRES_BYTES	144u
/* groups of one split, resources of one descriptor */
#define XGPUIF_MAX_DEVRES	200u

struct xgpuif_devres {
	uint8_t b[XGPUIF_DEVRES_BYTES];
};

/* DEV_RESOURCE: whose resource */
#define XGPUIF_DR_DEVICE	0u	/* device: the guest's ordinal */
#define XGPUIF_DR_CTX		1u	/* handle: a CTX */
#define XGPUIF_DR_GREEN		2u	/* handle: a GREENCTX */

struct xgpuif_devres_args {
	xgpuif_handle_t handle;
	uint32_t of;		/* XGPUIF_DR_* */
	uint32_t type;		/* CUdevResourceType */
	int32_t device;
	uint32_t _pad;
};

struct xgpuif_devres_reply {
	struct xgpuif_devres res;
};

/* SM_SPLIT: how: XGPUIF_SPLIT_QUERY (result NULL): only the count, else
 * up to ngroups groups (at most XGPUIF_MAX_DEVRES); XGPUIF_SPLIT_REST:
 * the program asks for the remainder (else the driver is given NULL) */
#define XGPUIF_SPLIT_QUERY	1u
#define XGPUIF_SPLIT_REST	2u

struct xgpuif_sm_split_args {
	struct xgpuif_devres input;
	uint32_t ngroups;
	uint32_t how;		/* XGPUIF_SPLIT_* */
	uint32_t flags;		/* useFlags */
	uint32_t min_count;
};

/* followed by ngroups struct xgpuif_devres (not for a query), then the
 * remainder (zeros unless asked for) */
struct xgpuif_sm_split_reply {
	uint32_t ngroups;
	uint32_t _pad;
};

/* RESDESC_CREATE: followed by n struct xgpuif_devres (1..XGPUIF_MAX_DEVRES) */
struct xgpuif_resdesc_args {
	uint32_t n;
	uint32_t _pad;
};

struct xgpuif_resdesc_reply {
	xgpuif_handle_t desc;
};

struct xgpuif_green_create_args {
	xgpuif_handle_t desc;
	int32_t device;
	uint32_t flags;
};

struct xgpuif_green_reply {
	xgpuif_handle_t green;
};

struct xgpuif_green_stream_args {
	xgpuif_handle_t green;
	uint32_t flags;
	int32_t priority;
};

/*
 * Driver extensions (330-335).
 *
 * NOTIFY_REGISTER: cuDeviceRegisterAsyncNotification on the guest's
 * device; fnid is the guest's number of the program's callback and
 * userData (its host functions' numbering).  The worker registers a
 * callback of its own; when its driver calls it, the worker takes one of
 * the graph slots of the host-function region (FREE -> QUEUED), writes
 * fnid, nt_type and nt_info, DUE, and waits for the guest's DONE as for a
 * graph's host function.  NOTIFY_UNREGISTER: its driver's unregister;
 * afterwards no slot names fnid.
 */
struct xgpuif_notify_args {
	int32_t device;
	uint32_t _pad;
	uint64_t fnid;		/* REGISTER: nonzero; UNREGISTER: 0 */
	xgpuif_handle_t handle;	/* UNREGISTER: the NOTIFY handle */
};

/*
 * MEM_DECOMPRESS: cuMemBatchDecompressAsync; count struct
 * xgpuif_decompress follow (the CUDA ABI's CUmemDecompressParams, device
 * addresses as they are).  The request's status is 0 once the entries
 * reached the driver: the reply carries the driver's answer (result) and
 * its errorIndex, when want_index and the driver wrote it (index_set),
 * since a failed request's reply carries no payload.
 */
#define XGPUIF_DECOMPRESS_SIZE	64u
#define XGPUIF_MAX_DECOMPRESS	256u

struct xgpuif_decompress_args {
	xgpuif_handle_t stream;
	uint32_t count;
	uint32_t flags;
	uint32_t want_index;
	uint32_t null_params;	/* 1: the program passed no array (count 0) */
};

struct xgpuif_decompress {
	uint64_t src_bytes;
	uint64_t dst_bytes;
	uint64_t dst_act_bytes;	/* a device address */
	uint64_t src;
	uint64_t dst;
	uint32_t algo;
	uint8_t padding[20];	/* the driver's to check (zero) */
};

struct xgpuif_decompress_reply {
	uint64_t index;
	uint32_t index_set;
	int32_t result;		/* the driver's CUresult */
};

/* ---- the driver's error log (cuLogs*) --------------------------------------- */

/*
 * LOGS_REGISTER: cuLogsRegisterCallback; the worker registers a callback
 * of its own for this id (nonzero; 0: the program passed NULL, for the
 * driver to refuse), whose messages come back with LOGS_TAKE.
 * LOGS_CURRENT: cuLogsCurrent (id unused, 0).
 */
struct xgpuif_logs_args {
	uint64_t id;
	uint32_t flags;
	uint32_t null_out;	/* the program passed no out pointer */
};

/*
 * LOGS_DUMP: cuLogsDumpToMemory into a buffer of `size` bytes (at most
 * XGPUIF_LOGS_DUMP_MAX), from `iterator` unless no_iterator.  The reply
 * carries the iterator after it, the driver's size and then size + 1
 * bytes (the text and its NUL) where size is nonzero.
 */
#define XGPUIF_LOGS_DUMP_MAX	28672u

struct xgpuif_logs_dump_args {
	uint64_t size;
	uint32_t iterator;
	uint32_t no_iterator;
	uint32_t flags;
	uint32_t _pad;
};

struct xgpuif_logs_dump_reply {
	uint64_t size;
	uint32_t iterator;
	uint32_t bytes;		/* of text that follow (size + 1, or 0) */
};

/*
 * LOGS_TAKE: the messages the worker's callbacks received since the last
 * take: count entries of struct xgpuif_log_entry, each followed by its
 * len bytes and padded to 8; `waiting` says more remain.
 */
struct xgpuif_logs_take_reply {
	uint32_t count;
	uint32_t waiting;
	uint64_t dropped;	/* messages lost to a full queue */
};

struct xgpuif_log_entry {
	uint64_t id;		/* the LOGS_REGISTER id it is for */
	uint32_t level;		/* CUlogLevel */
	uint32_t len;
};

/*
 * COREDUMP_ATTR: cuCoredumpGetAttribute[Global] and
 * cuCoredumpSetAttribute[Global] of the worker's driver.  A set carries
 * the value's size bytes after the struct; a get's reply carries up to
 * size bytes of it after the reply.  FILE and PIPE are the guest's own
 * strings: for them the worker only asks its driver for the size (with
 * no value), which says whether the attribute is one of that scope.
 * Setting ENABLE_ON_EXCEPTION or ENABLE_USER_TRIGGER true is refused
 * with CUDA_ERROR_NOT_PERMITTED: a dump would be written in Dom0.
 */
#define XGPUIF_CD_GLOBAL	0x1u
#define XGPUIF_CD_SET		0x2u
#define XGPUIF_CD_NULL_VALUE	0x4u
#define XGPUIF_CD_NULL_SIZE	0x8u
#define XGPUIF_CD_VALUE_MAX	1024u

struct xgpuif_coredump_args {
	uint32_t attrib;	/* CUcoredumpSettings */
	uint32_t flags;		/* XGPUIF_CD_* */
	uint64_t size;
};

struct xgpuif_coredump_reply {
	uint64_t size;
};

/*
 * SYNC_FENCE: cuCtxSynchronize (XGPUIF_FENCE_CTX) or cuStreamSynchronize
 * of `stream`, answered by the GPU where the worker can: it queues a
 * write of `value` to the 4 bytes at `off` in the data area after the
 * work waited for and replies at once with fenced 1; the guest then
 * waits for the value itself (the GPU writes it once that work is done)
 * and, if it does not come soon, asks the plain synchronize.  fenced 0:
 * the worker synchronized as the plain op does, and the status is its.
 */
#define XGPUIF_FENCE_CTX	0x1u

struct xgpuif_fence_args {
	xgpuif_handle_t stream;	/* the stream (not with XGPUIF_FENCE_CTX) */
	uint32_t flags;		/* XGPUIF_FENCE_* */
	uint32_t value;
	uint64_t off;		/* in the data area, 4-byte aligned */
};

struct xgpuif_fence_reply {
	uint32_t fenced;
	uint32_t pad;
};

#include "xgpuif-ops-vmm.h"
#include "xgpuif-ops-module.h"
#include "xgpuif-ops-graph.h"
#include "xgpuif-ops-nvml.h"

#endif /* XGPUIF_OPS_H */
