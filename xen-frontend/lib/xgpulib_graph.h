/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_graph.h: the guest's graph objects (CUgraph, CUgraphExec,
 * CUgraphNode around the worker's handles), shared by
 * xgpulib_api_graph.c (capture, graphs) and xgpulib_api_graphnode.c
 * (building graphs).  Private to xen-frontend/lib.
 */
#ifndef XGPULIB_GRAPH_H
#define XGPULIB_GRAPH_H

#include <stdint.h>

enum robj_kind { RK_GRAPH = 1, RK_EXEC, RK_NODE };

struct robj;

/* the object of (kind, remote), made on first sight; NULL: no memory.
 * A node names its graph, and dies with it. */
struct robj *robj_for(int kind, uint64_t remote, struct robj *graph);
/* the worker handle of an object argument of kind; 0 if it is not one */
uint64_t robj_remote(const void *p, int kind);

#endif /* XGPULIB_GRAPH_H */
