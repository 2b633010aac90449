/* SPDX-License-Identifier: MIT */
/*
 * xgpuif-ops.h: argument and reply layouts of each operation.  Included by
 * xgpuif.h only.  The fixed part of each request is the struct named in
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

struct xgpuif_memcpy_htod_args {
	uint64_t dst;
	struct xgpuif_memref src;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t _pad;
};

struct xgpuif_memcpy_dtoh_args {
	struct xgpuif_memref dst;
	uint64_t src;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t _pad;
};

struct xgpuif_memcpy_dtod_args {
	uint64_t dst;
	uint64_t src;
	uint64_t len;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t _pad;
};

/* one side of a 2D copy */
#define XGPUIF_MT_HOST		1u	/* mem names shared memory */
#define XGPUIF_MT_DEVICE	2u	/* dptr */
#define XGPUIF_MT_ARRAY		3u	/* array handle */

struct xgpuif_copy_side {
	uint32_t type;		/* XGPUIF_MT_* */
	uint32_t _pad;
	uint64_t x_bytes;
	uint64_t y;
	uint64_t pitch;
	uint64_t dptr;		/* DEVICE */
	xgpuif_handle_t array;	/* ARRAY */
	struct xgpuif_memref mem;	/* HOST: region, offset of the start */
};

struct xgpuif_memcpy2d_args {
	struct xgpuif_copy_side src;
	struct xgpuif_copy_side dst;
	uint64_t width_bytes;
	uint64_t height;
	xgpuif_handle_t stream;
	uint32_t flags;
	uint32_t _pad;
};

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

/* ---- arrays and texture objects ---------------------------------------- */

/*
 * The CUDA descriptors of arrays and texture objects travel as the CUDA
 * ABI (LP64) lays them out, whole or up to their reserved[] fields, so
 * that both ends copy them as they are; xgpuif.h checks each layout
 * against cuda.h.
 */

/* ARRAY_CREATE: a CUDA_ARRAY3D_DESCRIPTOR */
struct xgpuif_array_args {
	uint64_t width;
	uint64_t height;
	uint64_t depth;
	uint32_t format;	/* CUarray_format */
	uint32_t channels;
	uint32_t flags;
	uint32_t _pad;
};

struct xgpuif_array_reply {
	xgpuif_handle_t array;
};

#define XGPUIF_RES_ARRAY	0u	/* CU_RESOURCE_TYPE_ARRAY */
#define XGPUIF_RES_MIPMAP	1u	/* CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
					 * array names the mipmap */
#define XGPUIF_RES_LINEAR	2u	/* CU_RESOURCE_TYPE_LINEAR */
#define XGPUIF_RES_PITCH2D	3u	/* CU_RESOURCE_TYPE_PITCH2D */

/*
 * res.pitch2D of a CUDA_RESOURCE_DESC; res.linear is its first 24 bytes,
 * sizeInBytes where width stands.
 */
struct xgpuif_tex_mem {
	uint64_t dptr;
	uint32_t format;	/* CUarray_format */
	uint32_t channels;
	uint64_t width;		/* LINEAR: size in bytes */
	uint64_t height;	/* PITCH2D only */
	uint64_t pitch;		/* PITCH2D only */
};

/* the bytes of struct xgpuif_tex_mem a resource type uses; 0: none */
static inline size_t xgpuif_tex_mem_len(uint32_t res_type)
{
	switch (res_type) {
	case XGPUIF_RES_LINEAR:
		return offsetof(struct xgpuif_tex_mem, height);
	case XGPUIF_RES_PITCH2D:
		return sizeof(struct xgpuif_tex_mem);
	default:
		return 0;
	}
}

/* a CUDA_TEXTURE_DESC up to its reserved[] */
struct xgpuif_tex_desc {
	uint32_t address_mode[3];
	uint32_t filter_mode;
	uint32_t flags;
	uint32_t max_anisotropy;
	uint32_t mipmap_filter_mode;
	float mipmap_level_bias;
	float min_mipmap_level_clamp;
	float max_mipmap_level_clamp;
	float border_color[4];
};

/* a CUDA_RESOURCE_VIEW_DESC up to its reserved[] */
struct xgpuif_tex_view {
	uint32_t format;	/* CUresourceViewFormat */
	uint32_t _pad;
	uint64_t width;
	uint64_t height;
	uint64_t depth;
	uint32_t first_mip;
	uint32_t last_mip;
	uint32_t first_layer;
	uint32_t last_layer;
};

/*
 * TEXOBJ_CREATE: the resource (CUDA_RESOURCE_DESC: array for ARRAY, the
 * first xgpuif_tex_mem_len(res_type) bytes of mem otherwise, the rest
 * zero), the texture and, when has_view, the resource view.
 */
struct xgpuif_texobj_args {
	uint32_t res_type;	/* XGPUIF_RES_* */
	uint32_t res_flags;
	xgpuif_handle_t array;
	struct xgpuif_tex_mem mem;
	struct xgpuif_tex_desc tex;
	uint32_t has_view;
	uint32_t _pad;
	struct xgpuif_tex_view view;
};

struct xgpuif_texobj_reply {
	uint64_t texobj;	/* the driver's CUtexObject value */
};

/* ---- modules, libraries, kernels ---------------------------------------- */

/*
 * Images travel as blobs: BLOB_CREATE reserves `size` bytes in the worker,
 * BLOB_WRITE fills them from shared memory, and a LOAD names the blob.  A
 * blob belongs to the module or library loaded from it afterwards.
 */
struct xgpuif_blob_create_args {
	uint64_t size;
};

struct xgpuif_blob_reply {
	xgpuif_handle_t blob;
};

struct xgpuif_blob_write_args {
	xgpuif_handle_t blob;
	uint64_t off;
	struct xgpuif_memref src;
};

/* one numeric load option (JIT or library option) */
struct xgpuif_load_opt {
	uint32_t id;
	uint32_t _pad;
	uint64_t value;
};

/* most options one load may carry (njit + nlib) */
#define XGPUIF_MAX_LOAD_OPTS	64u

/*
 * JIT options allowed on the wire: those whose value is a plain number
 * (the others carry pointers into the guest: log buffers and the like).
 * Numbers are CUjit_option values of the CUDA ABI.
 */
static inline int xgpuif_jit_option_numeric(uint32_t id)
{
	switch (id) {
	case 0:		/* CU_JIT_MAX_REGISTERS */
	case 1:		/* CU_JIT_THREADS_PER_BLOCK */
	case 7:		/* CU_JIT_OPTIMIZATION_LEVEL */
	case 8:		/* CU_JIT_TARGET_FROM_CUCONTEXT */
	case 9:		/* CU_JIT_TARGET */
	case 10:	/* CU_JIT_FALLBACK_STRATEGY */
	case 11:	/* CU_JIT_GENERATE_DEBUG_INFO */
	case 12:	/* CU_JIT_LOG_VERBOSE */
	case 13:	/* CU_JIT_GENERATE_LINE_INFO */
	case 14:	/* CU_JIT_CACHE_MODE */
	case 15:	/* CU_JIT_NEW_SM3X_OPT */
	case 16:	/* CU_JIT_FAST_COMPILE */
	case 20:	/* CU_JIT_LTO */
	case 21:	/* CU_JIT_FTZ */
	case 22:	/* CU_JIT_PREC_DIV */
	case 23:	/* CU_JIT_PREC_SQRT */
	case 24:	/* CU_JIT_FMA */
	case 29:	/* CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES */
	case 30:	/* CU_JIT_POSITION_INDEPENDENT_CODE */
	case 31:	/* CU_JIT_MIN_CTA_PER_SM */
	case 32:	/* CU_JIT_MAX_THREADS_PER_BLOCK */
	case 33:	/* CU_JIT_OVERRIDE_DIRECTIVE_VALUES */
	case 34:	/* CU_JIT_SPLIT_COMPILE */
		return 1;
	default:
		return 0;
	}
}

/* followed by njit + nlib struct xgpuif_load_opt, JIT options first */
struct xgpuif_load_args {
	xgpuif_handle_t blob;
	uint32_t njit;
	uint32_t nlib;
};

struct xgpuif_load_reply {
	xgpuif_handle_t handle;	/* module or library */
};

/* followed by the NUL-terminated symbol name */
struct xgpuif_symbol_args {
	xgpuif_handle_t owner;	/* module or library */
};

struct xgpuif_global_reply {
	uint64_t dptr;
	uint64_t size;
};

/* kinds of launchable handle */
#define XGPUIF_FN_FUNCTION	1u	/* CUfunction */
#define XGPUIF_FN_KERNEL	2u	/* CUkernel */

struct xgpuif_param {
	uint16_t offset;
	uint16_t size;
};

#define XGPUIF_PARAMS_UNKNOWN	0xffffffffu

/*
 * Reply to GET_FUNCTION / GET_KERNEL / KERNEL_GET_FUNCTION: the handle
 * and its parameter layout from cuFuncGetParamInfo/cuKernelGetParamInfo,
 * followed by nparams struct xgpuif_param.  nparams is
 * XGPUIF_PARAMS_UNKNOWN where the driver gave no layout.
 */
struct xgpuif_func_reply {
	xgpuif_handle_t handle;
	uint32_t nparams;
	uint32_t param_bytes;	/* end of the last parameter */
};

#define XGPUIF_MAX_PARAMS	1024u

/* names of a module's functions or a library's kernels, in the driver's
 * enumeration order, starting at index first */
struct xgpuif_names_args {
	xgpuif_handle_t handle;
	uint32_t first;
	uint32_t _pad;
};

/* followed by `bytes` bytes: `count` NUL-terminated names */
struct xgpuif_names_reply {
	uint32_t total;		/* functions or kernels in all */
	uint32_t count;		/* names in this reply */
	uint32_t bytes;
	uint32_t _pad;
};

struct xgpuif_func_attr_args {
	xgpuif_handle_t handle;
	uint32_t kind;		/* XGPUIF_FN_* */
	int32_t dev;		/* kernels only */
	uint32_t attr;		/* SET only: CUfunction_attribute or
				 * CUfunc_cache */
	int32_t value;		/* SET only */
};

#define XGPUIF_NUM_FUNC_ATTRS	16u

struct xgpuif_func_attrs_reply {
	int32_t attrs[XGPUIF_NUM_FUNC_ATTRS];
	uint8_t valid[XGPUIF_NUM_FUNC_ATTRS];
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

/* CUmemPoolProps, less the Windows security attributes */
struct xgpuif_pool_create_args {
	uint32_t alloc_type;	/* CUmemAllocationType */
	uint32_t handle_types;	/* CUmemAllocationHandleType mask */
	uint32_t loc_type;	/* CUmemLocationType */
	int32_t loc_id;
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

/* ---- stream capture and graphs ------------------------------------------ */

struct xgpuif_begin_capture_args {
	xgpuif_handle_t stream;
	uint32_t mode;		/* CUstreamCaptureMode */
	uint32_t _pad;
};

struct xgpuif_stream_args {
	xgpuif_handle_t stream;
};

struct xgpuif_graph_reply {
	xgpuif_handle_t graph;
};

/* STREAM_CAPTURE_INFO: the reply is followed by ndeps node handles */
struct xgpuif_capture_info_args {
	xgpuif_handle_t stream;
	uint32_t want_deps;	/* 1: the graph and its dependency nodes */
	uint32_t _pad;
};

struct xgpuif_capture_info_reply {
	uint32_t status;	/* CUstreamCaptureStatus */
	uint32_t ndeps;
	uint64_t id;
	xgpuif_handle_t graph;	/* want_deps and capturing, else 0 */
};

#define XGPUIF_MAX_CAPTURE_DEPS	256u

struct xgpuif_i32_args {
	int32_t value;
	uint32_t _pad;
};

struct xgpuif_instantiate_args {
	xgpuif_handle_t graph;
	uint64_t flags;
};

struct xgpuif_instantiate_reply {
	xgpuif_handle_t exec;
	uint32_t result;	/* CUgraphInstantiateResult */
	uint32_t _pad;
};

struct xgpuif_graph_launch_args {
	xgpuif_handle_t exec;
	xgpuif_handle_t stream;
};

/* node types of GRAPH_ADD_NODE (CUgraphNodeType values) */
struct xgpuif_add_node_args {
	xgpuif_handle_t graph;
	uint32_t type;		/* CU_GRAPH_NODE_TYPE_* */
	uint32_t ndeps;		/* node handles follow, then the node's */
};

/* the parameters of a node, after the dependencies */
struct xgpuif_node_memset {
	uint64_t dst;
	uint64_t pitch;
	uint64_t width;
	uint64_t height;
	uint32_t value;
	uint32_t elem_size;
};

/*
 * MEMCPY: one side of a copy: device memory (addr: a device pointer of
 * the guest's) or host memory, which must be a host-memory region of the
 * guest's (pinned memory: addr is the offset in region `region`), at
 * (x bytes, row y, slice z) of rows `pitch` bytes apart, `height` rows a
 * slice
 */
struct xgpuif_node_side {
	uint32_t type;		/* CU_MEMORYTYPE_DEVICE or CU_MEMORYTYPE_HOST */
	uint32_t region;	/* HOST: the region */
	uint64_t addr;		/* DEVICE: the pointer; HOST: the offset */
	uint64_t x, y, z;
	uint64_t pitch, height;
};

struct xgpuif_node_copy {
	struct xgpuif_node_side src, dst;
	uint64_t width;		/* bytes */
	uint64_t height, depth;
};

/* BATCH_MEM_OP: count CUstreamBatchMemOpParams (XGPUIF_MEMOP_SIZE bytes
 * each, at most XGPUIF_MAX_MEMOPS) follow */
struct xgpuif_node_memop {
	uint32_t count;
	uint32_t flags;
};

/* HOST: the guest's host function, by its number (xgpulib_api_hostfn.c) */
struct xgpuif_node_host {
	uint64_t fnid;
};

/* EVENT_RECORD, WAIT_EVENT: an event handle; GRAPH (child): a graph */
struct xgpuif_node_handle {
	xgpuif_handle_t handle;
};
/* KERNEL: struct xgpuif_launch_args (stream 0, no attributes), then the
 * parameter bytes */

struct xgpuif_node_reply {
	xgpuif_handle_t node;
	uint64_t dptr;		/* MEM_ALLOC: the allocation's address */
};

struct xgpuif_exec_update_args {
	xgpuif_handle_t exec;
	xgpuif_handle_t graph;
};

struct xgpuif_exec_update_reply {
	uint32_t result;	/* CUgraphExecUpdateResult */
	uint32_t _pad;
};

/* GRAPH_NODES: the reply is followed by count node handles (at most max) */
struct xgpuif_graph_nodes_args {
	xgpuif_handle_t graph;
	uint32_t roots;		/* 1: root nodes only */
	uint32_t max;
};

struct xgpuif_graph_nodes_reply {
	uint64_t total;		/* nodes in the graph (may exceed max) */
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

struct xgpuif_hostfn_slot {
	uint32_t state;		/* XGPUIF_HF_*, accessed atomically */
	int32_t status;		/* the stream's CUresult (callbacks) */
	uint64_t seq;		/* the guest's count, for its own checks */
	uint64_t fnid;		/* graph slots: the function's number */
	uint64_t _pad[5];
};

/*
 * HOSTFN_SETUP: region `region` holds nslots struct xgpuif_hostfn_slot
 * the guest takes for its launches, then ngraph slots the worker takes
 * (FREE -> QUEUED, fnid, DUE) when a graph's host node or a captured host
 * function runs: the guest runs function number fnid and writes DONE.
 */
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

/* ---- virtual memory management ------------------------------------------ */

/* CUmemAllocationProp, less the Windows metadata */
struct xgpuif_vmm_prop {
	uint32_t type;		/* CUmemAllocationType */
	uint32_t handle_types;	/* CUmemAllocationHandleType mask */
	uint32_t loc_type;	/* CUmemLocationType */
	int32_t loc_id;
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

/* ---- tensor maps (TMA descriptors) ---------------------------------------- */

#define XGPUIF_TMAP_TILED		0u
#define XGPUIF_TMAP_IM2COL		1u
#define XGPUIF_TMAP_IM2COL_WIDE		2u
#define XGPUIF_TMAP_REPLACE_ADDRESS	3u

/*
 * cuTensorMapEncode{Tiled,Im2col,Im2colWide} and cuTensorMapReplaceAddress:
 * the driver encodes the 128-byte descriptor in the worker (its format is
 * the driver's).  Arrays carry `rank` entries (strides rank - 1, corners
 * rank - 2); REPLACE_ADDRESS sends the descriptor in `map`.
 */
struct xgpuif_tmap_args {
	uint32_t kind;		/* XGPUIF_TMAP_* */
	uint32_t dtype;
	uint32_t rank;
	uint32_t interleave;
	uint32_t swizzle;
	uint32_t l2;
	uint32_t oob;
	uint32_t wide_mode;
	uint32_t channels_per_pixel;
	uint32_t pixels_per_column;
	int32_t lower_w, upper_w;
	uint64_t address;
	uint64_t global_dim[5];
	uint64_t global_strides[4];
	uint32_t box_dim[5];
	uint32_t element_strides[5];
	int32_t lower[3];
	int32_t upper[3];
	uint8_t map[128];
};

struct xgpuif_tmap_reply {
	uint8_t map[128];
};

/* ---- JIT linking ----------------------------------------------------------- */

/* LINK_CREATE: followed by njit struct xgpuif_load_opt (numeric options) */
struct xgpuif_link_create_args {
	uint32_t njit;
	uint32_t _pad;
};

struct xgpuif_link_reply {
	xgpuif_handle_t link;
};

/* LINK_ADD: an uploaded blob of `type` (CUjitInputType); the name follows
 * (namelen bytes, no NUL) */
struct xgpuif_link_add_args {
	xgpuif_handle_t link;
	xgpuif_handle_t blob;
	uint32_t type;
	uint32_t namelen;
};

struct xgpuif_link_complete_reply {
	uint64_t size;		/* of the linked image */
};

/* LINK_READ: the linked image's bytes from `off`, as many as fit */
struct xgpuif_link_read_args {
	xgpuif_handle_t link;
	uint64_t off;
};

struct xgpuif_link_read_reply {
	uint32_t len;
	uint32_t _pad;
};

#define XGPUIF_MAX_LINK_NAME	256u

/* ---- graph node queries and updates -------------------------------------- */

/* GRAPH_KERNEL_PARAMS: a kernel node's new parameters, in a graph (exec 0)
 * or in an executable graph; a launch's struct and parameter bytes follow */
struct xgpuif_kernel_params_args {
	xgpuif_handle_t exec;	/* 0: the node's own graph */
	xgpuif_handle_t node;
};

/* GRAPH_ADD_DEPS: count (from, to) node handle pairs follow */
struct xgpuif_graph_deps_args {
	xgpuif_handle_t graph;
	uint32_t count;
	uint32_t _pad;
};

/* GRAPH_NODE_GET: a node's type and parameters: `len` bytes follow, the
 * body GRAPH_ADD_NODE carries for that type (none for kernels and empty
 * nodes; MEM_ALLOC: xgpuif_node_mem) */
struct xgpuif_node_get_reply {
	uint32_t type;
	uint32_t len;
};

/* GRAPH_NODE_SET: new parameters of a node in its graph (exec 0) or in an
 * executable graph; the body of GRAPH_ADD_NODE for `type` follows */
struct xgpuif_node_set_args {
	xgpuif_handle_t exec;
	xgpuif_handle_t node;
	uint32_t type;
	uint32_t _pad;
};

/* GRAPH_NODE_EDGES: which 0: a node's dependencies, 1: its dependents,
 * 2: every edge of a graph; at most max entries follow the reply */
struct xgpuif_edges_args {
	xgpuif_handle_t graph;	/* which 2 */
	xgpuif_handle_t node;	/* which 0, 1 */
	uint32_t which;
	uint32_t max;
};

struct xgpuif_edges_reply {
	uint64_t total;
};

/* one edge: from, to (the node asked about is `to` of its dependencies
 * and `from` of its dependents), and its CUgraphEdgeData */
struct xgpuif_edge {
	xgpuif_handle_t from;
	xgpuif_handle_t to;
	uint8_t data[8];
};

/* GRAPH_NODE_ENABLED: cuGraphNodeGet/SetEnabled of a node in exec */
struct xgpuif_enabled_args {
	xgpuif_handle_t exec;
	xgpuif_handle_t node;
	uint32_t set;
	uint32_t value;
};

/* GRAPH_FIND_IN_CLONE */
struct xgpuif_find_clone_args {
	xgpuif_handle_t node;
	xgpuif_handle_t clone;
};

/* GRAPH_DOT: the driver's dot text from byte `offset` on (offset 0
 * writes it anew); the reply is followed by as many bytes as fit */
struct xgpuif_dot_args {
	xgpuif_handle_t graph;
	uint32_t flags;
	uint32_t _pad;
	uint64_t offset;
};

struct xgpuif_dot_reply {
	uint64_t total;
};

/* MEM_ALLOC node: its allocation (reply of GRAPH_ADD_NODE's node too) */
struct xgpuif_node_mem {
	uint64_t size;		/* bytes */
	uint64_t dptr;		/* the allocation's address (the worker's) */
	uint32_t loc_type;	/* CUmemLocationType (device) */
	int32_t loc_id;
};

/* MEM_FREE node: struct xgpuif_dptr_args */

/* GRAPH_MEM_ATTR: cuDeviceGet/SetGraphMemAttribute, cuDeviceGraphMemTrim */
struct xgpuif_graph_mem_args {
	int32_t device;
	uint32_t op;		/* 0 get, 1 set, 2 trim */
	uint32_t attr;
	uint32_t _pad;
	uint64_t value;
};

/* USEROBJ_CREATE: the destructor is the guest's host function fnid */
struct xgpuif_uobj_create_args {
	uint64_t fnid;
	uint32_t refs;		/* initial references, the guest's */
	uint32_t flags;		/* CU_USER_OBJECT_NO_DESTRUCTOR_SYNC */
};

struct xgpuif_uobj_reply {
	xgpuif_handle_t handle;
};

/* USEROBJ_REF: op 0 retain, 1 release (the guest's references), 2 a
 * graph retains (flags: CU_GRAPH_USER_OBJECT_MOVE takes the guest's),
 * 3 a graph releases */
#define XGPUIF_UOBJ_RETAIN		0u
#define XGPUIF_UOBJ_RELEASE		1u
#define XGPUIF_UOBJ_GRAPH_RETAIN	2u
#define XGPUIF_UOBJ_GRAPH_RELEASE	3u

struct xgpuif_uobj_ref_args {
	xgpuif_handle_t handle;
	xgpuif_handle_t graph;	/* ops 2, 3 */
	uint32_t op;
	uint32_t count;
	uint32_t flags;
	uint32_t _pad;
};

/* CAPTURE_TO_GRAPH: ndeps node handles of the graph follow */
struct xgpuif_capture_graph_args {
	xgpuif_handle_t stream;
	xgpuif_handle_t graph;
	uint32_t mode;		/* CUstreamCaptureMode */
	uint32_t ndeps;
};

/* CAPTURE_DEPS: ndeps node handles follow */
struct xgpuif_capture_deps_args {
	xgpuif_handle_t stream;
	uint32_t flags;		/* CU_STREAM_ADD/SET_CAPTURE_DEPENDENCIES */
	uint32_t ndeps;
};

/* GRAPH_KERNEL_ATTR: op 0 get, 1 set (value), 2 copy every attribute
 * from kernel node src; values as CUkernelNodeAttrValue lays them out
 * (numbers and device addresses only) */
struct xgpuif_kernel_attr_args {
	xgpuif_handle_t node;
	xgpuif_handle_t src;	/* op 2 */
	uint32_t op;
	uint32_t id;		/* CUkernelNodeAttrID */
	uint8_t value[64];
};

struct xgpuif_kernel_attr_reply {
	uint8_t value[64];
};

/* GRAPH_COND_HANDLE: cuGraphConditionalHandleCreate in the request's
 * context */
struct xgpuif_cond_handle_args {
	xgpuif_handle_t graph;
	uint32_t dflt;		/* defaultLaunchValue */
	uint32_t flags;		/* CU_GRAPH_COND_ASSIGN_DEFAULT */
};

/* GRAPH_ADD_COND: ndeps node handles follow; the reply (struct
 * xgpuif_node_reply) is followed by `size` graph handles, the node's
 * bodies (they belong to the node: destroyed with its graph) */
struct xgpuif_add_cond_args {
	xgpuif_handle_t graph;
	uint64_t handle;	/* CUgraphConditionalHandle */
	uint32_t type;		/* CUgraphConditionalNodeType */
	uint32_t size;
	uint32_t ndeps;
	uint32_t _pad;
};

#define XGPUIF_MAX_COND_BODIES	256u

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

/* ---- array copies, mipmapped arrays, texture references ------------------ */

/* MEMCPY_3D flags, with XGPUIF_CF_ASYNC */
#define XGPUIF_CF_PEER		0x2u	/* src_ctx and dst_ctx name the
					 * sides' contexts (cuMemcpy3DPeer) */

/*
 * One side of a 3D copy: a CUDA_MEMCPY3D side.  Linear memory (HOST,
 * DEVICE) is `height` rows of `pitch` bytes per slice; HOST names shared
 * memory from its start, which must hold every byte the copy touches.
 */
struct xgpuif_copy_side3d {
	uint32_t type;		/* XGPUIF_MT_* */
	uint32_t _pad;
	uint64_t x_bytes;
	uint64_t y;
	uint64_t z;
	uint64_t pitch;
	uint64_t height;	/* rows per slice of linear memory */
	uint64_t dptr;		/* DEVICE */
	xgpuif_handle_t array;	/* ARRAY: an array or a mipmap level */
	struct xgpuif_memref mem;	/* HOST */
};

struct xgpuif_memcpy3d_args {
	struct xgpuif_copy_side3d src;
	struct xgpuif_copy_side3d dst;
	uint64_t width_bytes;
	uint64_t height;
	uint64_t depth;
	xgpuif_handle_t stream;
	xgpuif_handle_t src_ctx;	/* XGPUIF_CF_PEER only */
	xgpuif_handle_t dst_ctx;	/* XGPUIF_CF_PEER only */
	uint32_t flags;		/* XGPUIF_CF_* */
	uint32_t _pad;
};

/* MIPMAP_CREATE: a CUDA_ARRAY3D_DESCRIPTOR and the number of levels */
struct xgpuif_mipmap_args {
	struct xgpuif_array_args desc;
	uint32_t levels;
	uint32_t _pad;
};

/* MIPMAP_LEVEL (level of a mipmap), ARRAY_PLANE (plane of an array) */
struct xgpuif_subarray_args {
	xgpuif_handle_t handle;
	uint32_t index;
	uint32_t _pad;
};

struct xgpuif_subarray_reply {
	xgpuif_handle_t array;		/* owned by the mipmap or the array */
	struct xgpuif_array_args desc;	/* its CUDA_ARRAY3D_DESCRIPTOR */
};

/* ARRAY_QUERY: what */
#define XGPUIF_AQ_MEMREQ	0u	/* cuArrayGetMemoryRequirements */
#define XGPUIF_AQ_SPARSE	1u	/* cuArrayGetSparseProperties */
#define XGPUIF_AQ_MIP_MEMREQ	2u	/* cuMipmappedArrayGetMemoryRequirements */
#define XGPUIF_AQ_MIP_SPARSE	3u	/* cuMipmappedArrayGetSparseProperties */

struct xgpuif_array_query_args {
	xgpuif_handle_t handle;	/* an array (AQ_MEMREQ, AQ_SPARSE) or a
				 * mipmap */
	uint32_t what;		/* XGPUIF_AQ_* */
	int32_t device;		/* AQ_*MEMREQ: the guest's ordinal */
};

/* the CUDA struct the query fills (CUDA_ARRAY_MEMORY_REQUIREMENTS or
 * CUDA_ARRAY_SPARSE_PROPERTIES), as the CUDA ABI lays it out */
struct xgpuif_array_query_reply {
	uint8_t bytes[64];
};

/* MODULE_GET_TEXREF, MODULE_GET_SURFREF */
struct xgpuif_ref_reply {
	xgpuif_handle_t ref;
};

/* TEXREF_SET / TEXREF_GET: which property of a texture reference */
#define XGPUIF_TR_ADDRESS	1u	/* mem.dptr, mem.width bytes; reply:
					 * the byte offset */
#define XGPUIF_TR_ADDRESS2D	2u	/* mem (format, channels, width,
					 * height, dptr, pitch) */
#define XGPUIF_TR_ARRAY		3u	/* array */
#define XGPUIF_TR_MIPMAP	4u	/* array: a mipmap */
#define XGPUIF_TR_FORMAT	5u	/* u[0] format, u[1] channels */
#define XGPUIF_TR_FILTER	6u	/* u[0] */
#define XGPUIF_TR_ADDR_MODE	7u	/* index: the dimension; u[0] */
#define XGPUIF_TR_FLAGS		8u	/* u[0] */
#define XGPUIF_TR_BORDER	9u	/* f[0..3] */
#define XGPUIF_TR_ANISO		10u	/* u[0] */
#define XGPUIF_TR_MIP_FILTER	11u	/* u[0] */
#define XGPUIF_TR_MIP_BIAS	12u	/* f[0] */
#define XGPUIF_TR_MIP_CLAMP	13u	/* f[0] min, f[1] max */
#define XGPUIF_TR_SURF_ARRAY	14u	/* a surface reference's array */

struct xgpuif_texref_set_args {
	xgpuif_handle_t ref;	/* TEXREF, or SURFREF for TR_SURF_ARRAY */
	uint32_t what;		/* XGPUIF_TR_* */
	uint32_t index;
	xgpuif_handle_t array;
	struct xgpuif_tex_mem mem;
	uint32_t u[4];
	float f[4];
};

struct xgpuif_texref_get_args {
	xgpuif_handle_t ref;
	uint32_t what;		/* XGPUIF_TR_* */
	uint32_t index;
};

/* cuParamSetTexRef(func, texunit, ref) */
struct xgpuif_param_texref_args {
	xgpuif_handle_t func;
	xgpuif_handle_t ref;
	int32_t texunit;
	uint32_t _pad;
};

struct xgpuif_texref_get_reply {
	uint64_t dptr;		/* TR_ADDRESS */
	xgpuif_handle_t array;	/* TR_ARRAY, TR_MIPMAP, TR_SURF_ARRAY */
	uint32_t u[2];
	float f[4];
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
 * Coherent managed memory (README): MANAGED_ALLOC is the worker driver's
 * cuMemAllocManaged of bytesize bytes with flags (CU_MEM_ATTACH_*);
 * MANAGED_FETCH / MANAGED_FLUSH copy [dptr, dptr + mem.len), which must
 * lie in one allocation of MANAGED_ALLOC's, out of or into the guest's
 * shared pages mem (a host-memory region).  stream is the legacy stream
 * (XGPUIF_STREAM_LEGACY): the copy is GPU work, gated and charged.  A
 * fetch waits for the context's work first, unless flags has
 * XGPUIF_MF_NOSYNC (the program touched the memory in a host function,
 * which holds its stream: the copy then goes on a stream of its own).
 */
#define XGPUIF_MF_NOSYNC	1u

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

#endif /* XGPUIF_OPS_H */
