/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_graph.h: the guest's graph objects (CUgraph, CUgraphExec,
 * CUgraphNode around the worker's handles), shared by
 * the graph entry points (xgpulib_api_graph*.c); the objects live in
 * xgpulib_graphobj.c.  Private to xen-frontend/lib.
 */
#ifndef XGPULIB_GRAPH_H
#define XGPULIB_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "xgpuif.h"

/* the guest objects around the worker's handles that it keeps one per
 * handle: graphs, executable graphs, nodes, user objects, and memory
 * pools (xgpulib_api_pool.c) */
enum robj_kind { RK_GRAPH = 1, RK_EXEC, RK_NODE, RK_UOBJ, RK_POOL };

struct robj;

/* the object of (kind, remote), made on first sight; NULL: no memory.
 * A node names its graph, and dies with it. */
struct robj *robj_for(int kind, uint64_t remote, struct robj *graph);
/* the worker handle of an object argument of kind; 0 if it is not one */
uint64_t robj_remote(const void *p, int kind);

/* keep p (malloc'd) with node object o, freeing what it kept before;
 * false (p freed) if o is not a node of ours */
bool robj_cache(void *node, void *p);

/*
 * A memcpy node with a pageable host side is a child graph node of ours
 * (xgpulib_capcopy_node): robj_stage marks node object `node` as standing
 * for the memcpy node *p (false: not a node of ours, or no memory);
 * robj_staged says whether it does, and gives its parameters.
 */
bool robj_stage(void *node, const CUDA_MEMCPY3D *p);
bool robj_staged(const void *node, CUDA_MEMCPY3D *p);

/* the staged nodes of graph object `graph` (a cuGraphClone carries them
 * over): *out (malloc'd, the caller frees it) holds the count returned;
 * 0 with *out NULL when there are none or no such graph; short of
 * memory, those found until then */
struct robj_staged_node {
	CUgraphNode node;
	CUDA_MEMCPY3D p;
};
size_t robj_staged_of(const void *graph, struct robj_staged_node **out);

/* the graph object of a node object of ours, NULL if it is not one */
struct robj *robj_graph_of(const void *node);

/*
 * The nodes whose parameters are one struct of a fixed size on the wire
 * (xgpulib_graphwire.c, as the other conversions of nodes' parameters):
 * type CU_GRAPH_NODE_TYPE_MEMSET (p a CUDA_MEMSET_NODE_PARAMS), _MEMCPY
 * (a CUDA_MEMCPY3D; its host side must be pinned memory:
 * CUDA_ERROR_NOT_SUPPORTED otherwise; cuGraphAddMemcpyNode stages a
 * pageable one first, xgpulib_capcopy_node) or _HOST (a CUDA_HOST_NODE_PARAMS;
 * its function and data registered: xgpulib_hostfn_id).
 * xgpulib_node_fixed_len: how many bytes of w the wire carries;
 * xgpulib_node_wire: p as the wire carries it (w); xgpulib_node_unwire:
 * w back in p.
 */
union xgpulib_node_fixed {
	struct xgpuif_node_memset memset;
	struct xgpuif_node_copy copy;
	struct xgpuif_node_host host;
};
uint32_t xgpulib_node_fixed_len(uint32_t type);
CUresult xgpulib_node_wire(uint32_t type, const void *p,
			   union xgpulib_node_fixed *w);
CUresult xgpulib_node_unwire(uint32_t type, const union xgpulib_node_fixed *w,
			     void *p);

/* the kernel, memset and batch memop parameters of generic node
 * parameters p as the older structs the other entries take */
void xgpulib_node_kernel_of(const CUgraphNodeParams *p,
			    CUDA_KERNEL_NODE_PARAMS *k);
void xgpulib_node_memset_of(const CUgraphNodeParams *p,
			    CUDA_MEMSET_NODE_PARAMS *m);
void xgpulib_node_memop_of(const CUgraphNodeParams *p,
			   CUDA_BATCH_MEM_OP_NODE_PARAMS *b);

/* forget a node object of ours (destroyed), or a graph with its nodes */
void robj_forget(struct robj *dead);

struct xgpuif_handle_args;
struct xgpuif_u64_reply;
/* destroy object o of kind in the worker (call), then forget it here;
 * CUDA_ERROR_INVALID_VALUE if o is not one of ours */
CUresult robj_destroy(void *o, int kind,
		      CUresult (*call)(const struct xgpuif_handle_args *));
/* the worker's one-number answer (call) about object o of kind, in *out;
 * CUDA_ERROR_INVALID_VALUE if o is not one of ours or out is NULL */
CUresult robj_ask(const void *o, int kind,
		  CUresult (*call)(const struct xgpuif_handle_args *,
				   struct xgpuif_u64_reply *),
		  uint64_t *out);

/* the events of this process by their wire handle, for graph queries
 * (xgpulib_graphobj.c): note one made (live) or being destroyed; the
 * event of a wire handle, NULL if none */
void xgpulib_event_note(CUevent e, bool live);
CUevent xgpulib_event_by_remote(uint64_t remote);
/* the wire handle of an event of ours, 0 if e is not one */
uint64_t xgpulib_event_remote(CUevent e);

/* the node type of an event node: one that waits (wait 1) or records */
static inline uint32_t xgpulib_event_node_type(int wait)
{
	return wait ? CU_GRAPH_NODE_TYPE_WAIT_EVENT :
		      CU_GRAPH_NODE_TYPE_EVENT_RECORD;
}

/* whether this process began a capture (none: nothing is capturing) */
bool xgpulib_captures_begun(void);

/* the number of a host function for graphs (xgpulib_api_hostfn.c); 0: no
 * memory, or the host-function set-up failed */
uint64_t xgpulib_hostfn_id(CUhostFn fn, void *user);
/* the function of a number; false: none */
bool xgpulib_hostfn_of(uint64_t id, CUhostFn *fn, void **user);
/* a new number for an async notification callback cb with user and its
 * handle h (the helper runs cb when the worker names it); 0 and *rc when
 * there is no memory or the set-up failed (xgpulib_api_hostfn.c) */
uint64_t xgpulib_notify_id(CUasyncCallback cb, void *user,
			   CUasyncCallbackHandle h, CUresult *rc);
/* forget number id: once this returns its callback does not run (it
 * waits while the helper runs it, unless called from the helper) */
void xgpulib_notify_forget(uint64_t id);

#endif /* XGPULIB_GRAPH_H */
