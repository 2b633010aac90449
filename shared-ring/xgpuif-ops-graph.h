/* SPDX-License-Identifier: MIT */
/*
 * xgpuif-ops-graph.h: argument and reply layouts of the operations on
 * stream capture and graphs (the conventions of xgpuif-ops.h, which
 * includes this).
 */
#ifndef XGPUIF_OPS_GRAPH_H
#define XGPUIF_OPS_GRAPH_H

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
	uint32_t type;		/* CU_MEMORYTYPE_DEVICE, _HOST or _ARRAY */
	uint32_t region;	/* HOST: the region */
	uint64_t addr;		/* DEVICE: the pointer; HOST: the offset;
				 * ARRAY: the array's handle */
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

/* the request succeeds whenever its handles are good, so that the result
 * of an update the driver refuses reaches the guest too */
struct xgpuif_exec_update_reply {
	uint32_t result;	/* CUgraphExecUpdateResult */
	uint32_t status;	/* the driver's CUresult */
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

#endif /* XGPUIF_OPS_GRAPH_H */
