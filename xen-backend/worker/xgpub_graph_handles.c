// SPDX-License-Identifier: MIT
/*
 * xgpub_graph_handles.c: the handles of the graph objects the driver
 * makes and the guest did not ask to create: a node's (one per node,
 * dropped with its graph), a captured graph's, and a graph a node owns
 * (a child graph, a conditional node's bodies: borrowed, dropped with
 * its node or its owner; see xgpub_release in xgpub_state.c).  Both the
 * graph handlers (xgpub_op_graph.c) and the node handlers
 * (xgpub_op_graphnode.c, xgpub_op_graphmisc.c) name such objects, so
 * these stand below them all, on the handle table and xgpub_state.c.
 */
#include <stdlib.h>

#include "xgpub_worker.h"

/* the handle of a node of graph g, one per node */
xgpuif_handle_t xgpub_node_handle(struct xgpub_worker *w, CUgraph g,
				  CUgraphNode n)
{
	xgpuif_handle_t h = xgpub_handle_named(&w->h, XGPUB_H_GNODE, n);
	struct xgpub_node_extra *x;

	if (h)
		return h;
	x = malloc(sizeof(*x));
	if (!x)
		return 0;
	x->graph = g;
	/* a node is its graph's: nothing to release if it cannot be kept */
	xgpub_keep(w, XGPUB_H_GNODE, n, x, &h);
	return h;
}

/*
 * The handle of a graph the driver made (capture: owner NULL), one per
 * graph; a child graph's (owner: the graph of its node) is borrowed: it
 * is dropped with its owner and never destroyed by itself.
 */
xgpuif_handle_t xgpub_graph_handle(struct xgpub_worker *w, CUgraph g,
				   CUgraph owner, CUgraphNode node)
{
	xgpuif_handle_t h = xgpub_handle_named(&w->h, XGPUB_H_GRAPH, g);
	struct xgpub_graph_extra *x = NULL;

	if (h)
		return h;
	if (owner) {
		x = malloc(sizeof(*x));
		if (!x)
			return 0;
		x->owner = owner;
		x->node = node;
	}
	h = xgpub_handle_new(&w->h, XGPUB_H_GRAPH, g, x);
	if (!h)
		free(x);
	return h;
}

static void drop_body(struct xgpub_hentry *e, void *arg)
{
	struct xgpub_graph_extra *x = e->extra;
	void **a = arg;

	if (x && x->node == a[1])
		xgpub_release_drop(a[0], e);
}

void xgpub_node_forget_children(struct xgpub_worker *w, CUgraphNode n)
{
	void *arg[2] = { w, n };

	xgpub_handle_each(&w->h, XGPUB_H_GRAPH, drop_body, arg);
}
