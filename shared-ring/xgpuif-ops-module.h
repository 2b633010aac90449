/* SPDX-License-Identifier: MIT */
/*
 * xgpuif-ops-module.h: argument and reply layouts of the operations on modules, libraries and
 * kernels, arrays, textures and surfaces, tensor maps and JIT linking
 * (the conventions of xgpuif-ops.h, which includes this).
 */
#ifndef XGPUIF_OPS_MODULE_H
#define XGPUIF_OPS_MODULE_H

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

/*
 * A global: its address and size; for a __managed__ variable (flags
 * XGPUIF_GLOBAL_MANAGED) also the driver's managed allocation that holds
 * it (cuMemGetAddressRange of the variable), which the worker then takes
 * MANAGED_FETCH and MANAGED_FLUSH for until the module or library goes.
 */
struct xgpuif_global_reply {
	uint64_t dptr;
	uint64_t size;
	uint64_t mbase;
	uint64_t msize;
	uint32_t flags;
	uint32_t pad;
};

#define XGPUIF_GLOBAL_MANAGED	1u

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

#endif /* XGPUIF_OPS_MODULE_H */
