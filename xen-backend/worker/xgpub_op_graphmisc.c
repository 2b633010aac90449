// SPDX-License-Identifier: MIT
/*
 * xgpub_op_graphmisc.c: existing graph nodes and graphs beyond their
 * parameters (xgpub_op_graphnode.c): edges, enabling, removal, clones,
 * the executable graph's flags, the dot text, the device's graph memory,
 * user objects, kernel node attributes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

/* ---- structure ----------------------------------------------------------- */

XGPUB_HANDLER(GRAPH_NODE_EDGES)
{
	struct xgpub_hentry *e;
	CUgraphNode *from = NULL, *to = NULL, self = NULL;
	CUgraphEdgeData *ed = NULL;
	CUgraph g;
	size_t n = 0, want;
	int rc;

	if (a->which > 2)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->which == 2) {
		e = xgpub_handle_get(&w->h, a->graph, XGPUB_H_GRAPH);
		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		g = e->obj;
		rc = w->D->cuGraphGetEdges_v2(g, NULL, NULL, NULL, &n);
	} else {
		e = xgpub_handle_get(&w->h, a->node, XGPUB_H_GNODE);
		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		g = ((struct xgpub_node_extra *)e->extra)->graph;
		self = e->obj;
		rc = a->which == 0 ?
			     w->D->cuGraphNodeGetDependencies_v2(self, NULL,
								 NULL, &n) :
			     w->D->cuGraphNodeGetDependentNodes_v2(self, NULL,
								   NULL, &n);
	}
	if (rc)
		return rc;
	r->total = n;
	want = n < a->max ? n : a->max;
	if (want > rt->cap / sizeof(struct xgpuif_edge))
		want = rt->cap / sizeof(struct xgpuif_edge);
	if (!want)
		return 0;
	from = calloc(n, sizeof(*from));
	to = calloc(n, sizeof(*to));
	ed = calloc(n, sizeof(*ed));
	if (!from || !to || !ed) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (a->which == 2)
		rc = w->D->cuGraphGetEdges_v2(g, from, to, ed, &n);
	else if (a->which == 0)
		rc = w->D->cuGraphNodeGetDependencies_v2(self, from, ed, &n);
	else
		rc = w->D->cuGraphNodeGetDependentNodes_v2(self, to, ed, &n);
	for (size_t i = 0; rc == 0 && i < want && i < n; i++) {
		struct xgpuif_edge x;

		memset(&x, 0, sizeof(x));
		x.from = xgpub_node_handle(w, g, a->which == 1 ? self : from[i]);
		x.to = xgpub_node_handle(w, g, a->which == 0 ? self : to[i]);
		_Static_assert(sizeof(CUgraphEdgeData) == sizeof(x.data),
			       "edge data is 8 bytes");
		memcpy(x.data, &ed[i], sizeof(x.data));
		if (!x.from || !x.to)
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(rt->p + i * sizeof(x), &x, sizeof(x));
	}
	if (rc == 0)
		rt->len = (uint32_t)((want < n ? want : n) *
				     sizeof(struct xgpuif_edge));
out:
	free(from);
	free(to);
	free(ed);
	return rc;
}

XGPUB_HANDLER(GRAPH_DESTROY_NODE)
{
	int rc;

	xgpub_node_forget_children(w, handle->obj);
	rc = w->D->cuGraphDestroyNode(handle->obj);
	if (rc == 0)
		xgpub_handle_drop(&w->h, handle);
	return rc;
}

XGPUB_HANDLER(GRAPH_NODE_ENABLED)
{
	unsigned int on = 0;
	int rc;

	if (a->set > 1)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->set)
		return w->D->cuGraphNodeSetEnabled(exec->obj, node->obj,
						   a->value);
	rc = w->D->cuGraphNodeGetEnabled(exec->obj, node->obj, &on);
	r->value = on;
	return rc;
}

XGPUB_HANDLER(GRAPH_FIND_IN_CLONE)
{
	CUgraphNode n = NULL;
	int rc = w->D->cuGraphNodeFindInClone(&n, node->obj, clone->obj);

	if (rc)
		return rc;
	r->node = xgpub_node_handle(w, clone->obj, n);
	return r->node ? 0 : CUDA_ERROR_OUT_OF_MEMORY;
}

XGPUB_HANDLER(GEXEC_FLAGS)
{
	cuuint64_t f = 0;
	int rc = w->D->cuGraphExecGetFlags(handle->obj, &f);

	r->value = f;
	return rc;
}

/* ---- dot text ------------------------------------------------------------ */

/*
 * The driver writes the dot text to a path: a memfd of the worker's,
 * named by /proc/self/fd.  The text is kept until the next GRAPH_DOT
 * from offset 0.  Details that would show the worker's own addresses
 * (host node functions, host copy sides, kernel parameter arrays, driver
 * handles) are not asked for.
 */
static char *dot_text;
static size_t dot_len;

#define DOT_HIDDEN (CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE |			\
		    CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS |	\
		    CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS |	\
		    CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS |		\
		    CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS |	\
		    CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_SIGNAL_NODE_PARAMS | \
		    CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_WAIT_NODE_PARAMS | \
		    CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES)

/* at most this much dot text */
#define DOT_MAX (64u << 20)

static int dot_write(struct xgpub_worker *w, CUgraph g, unsigned int flags)
{
	char path[64];
	off_t end;
	int fd, rc;

	free(dot_text);
	dot_text = NULL;
	dot_len = 0;
	fd = memfd_create("xgpu-dot", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = w->D->cuGraphDebugDotPrint(g, path, flags & ~DOT_HIDDEN);
	if (rc == 0) {
		end = lseek(fd, 0, SEEK_END);
		if (end < 0 || (uint64_t)end > DOT_MAX)
			rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (rc == 0) {
		dot_text = malloc((size_t)end + 1);
		if (!dot_text ||
		    pread(fd, dot_text, (size_t)end, 0) != (ssize_t)end) {
			free(dot_text);
			dot_text = NULL;
			rc = CUDA_ERROR_OPERATING_SYSTEM;
		} else {
			dot_len = (size_t)end;
		}
	}
	close(fd);
	return rc;
}

XGPUB_HANDLER(GRAPH_DOT)
{
	size_t n;

	if (a->_pad)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->offset == 0) {
		int rc = dot_write(w, graph->obj, a->flags);

		if (rc)
			return rc;
	}
	if (a->offset > dot_len)
		return CUDA_ERROR_INVALID_VALUE;
	n = dot_len - a->offset;
	if (n > rt->cap)
		n = rt->cap;
	if (n)
		memcpy(rt->p, dot_text + a->offset, n);
	rt->len = (uint32_t)n;
	r->total = dot_len;
	return 0;
}

/* ---- the device's graph memory -------------------------------------------- */

XGPUB_HANDLER(GRAPH_MEM_ATTR)
{
	cuuint64_t v = a->value;
	int rc;

	if (a->device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (a->_pad)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a->op) {
	case 0:
		if (a->attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
			return CUDA_ERROR_INVALID_VALUE;
		rc = w->D->cuDeviceGetGraphMemAttribute(
			w->dev, (CUgraphMem_attribute)a->attr, &v);
		r->value = v;
		return rc;
	case 1:
		/* only the high watermarks may be reset (to 0) */
		if (a->attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH &&
		    a->attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
			return CUDA_ERROR_INVALID_VALUE;
		return w->D->cuDeviceSetGraphMemAttribute(
			w->dev, (CUgraphMem_attribute)a->attr, &v);
	case 2:
		return w->D->cuDeviceGraphMemTrim(w->dev);
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* ---- user objects ---------------------------------------------------------- */

/* the driver destroys a user object: the guest's destructor, then dead */
static void CUDA_CB uobj_destroy(void *user)
{
	struct xgpub_uobj *u = user;

	xgpub_graph_hostfn((void *)(uintptr_t)u->fnid);
	__atomic_store_n(&u->dead, 1, __ATOMIC_RELEASE);
}

XGPUB_HANDLER(USEROBJ_CREATE)
{
	struct xgpub_uobj *u;
	int rc;

	if (!a->fnid || !a->refs || !w->hostfn_ngraph ||
	    (a->flags & ~(uint32_t)CU_USER_OBJECT_NO_DESTRUCTOR_SYNC))
		return CUDA_ERROR_INVALID_VALUE;
	/* freed once the destructor ran and the handle is gone (it may run
	 * at any time before) */
	u = calloc(1, sizeof(*u));
	if (!u)
		return CUDA_ERROR_OUT_OF_MEMORY;
	u->fnid = a->fnid;
	u->refs = a->refs;
	rc = w->D->cuUserObjectCreate(&u->uo, u, uobj_destroy, a->refs,
				      a->flags);
	if (rc) {
		free(u);
		return rc;
	}
	r->handle = xgpub_handle_new(&w->h, XGPUB_H_USEROBJ, u, NULL);
	return r->handle ? 0 : CUDA_ERROR_OUT_OF_MEMORY;
}

XGPUB_HANDLER(USEROBJ_REF)
{
	struct xgpub_uobj *u = handle->obj;
	struct xgpub_hentry *g = NULL;
	int rc;

	/* destroyed by the driver: the handle goes, and u (the destructor
	 * is done with it) */
	if (__atomic_load_n(&u->dead, __ATOMIC_ACQUIRE)) {
		xgpub_handle_drop(&w->h, handle);
		free(u);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (!a->count || a->_pad || a->op > XGPUIF_UOBJ_GRAPH_RELEASE)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->op >= XGPUIF_UOBJ_GRAPH_RETAIN) {
		g = xgpub_handle_get(&w->h, a->graph, XGPUB_H_GRAPH);
		if (!g)
			return CUDA_ERROR_INVALID_HANDLE;
	}
	switch (a->op) {
	case XGPUIF_UOBJ_RETAIN:
		if (a->flags)
			return CUDA_ERROR_INVALID_VALUE;
		rc = w->D->cuUserObjectRetain(u->uo, a->count);
		if (rc == 0)
			u->refs += a->count;
		return rc;
	case XGPUIF_UOBJ_RELEASE:
		/* only references the guest holds */
		if (a->flags || a->count > u->refs)
			return CUDA_ERROR_INVALID_VALUE;
		u->refs -= a->count;
		return w->D->cuUserObjectRelease(u->uo, a->count);
	case XGPUIF_UOBJ_GRAPH_RETAIN:
		if (a->flags & ~(uint32_t)CU_GRAPH_USER_OBJECT_MOVE)
			return CUDA_ERROR_INVALID_VALUE;
		if ((a->flags & CU_GRAPH_USER_OBJECT_MOVE) && a->count > u->refs)
			return CUDA_ERROR_INVALID_VALUE;
		rc = w->D->cuGraphRetainUserObject(g->obj, u->uo, a->count,
						   a->flags);
		if (rc == 0 && (a->flags & CU_GRAPH_USER_OBJECT_MOVE))
			u->refs -= a->count;
		return rc;
	default:
		if (a->flags)
			return CUDA_ERROR_INVALID_VALUE;
		return w->D->cuGraphReleaseUserObject(g->obj, u->uo,
						      a->count);
	}
}

static void uobj_drop(struct xgpub_hentry *e, void *arg)
{
	struct xgpub_worker *w = arg;
	struct xgpub_uobj *u = e->obj;

	if (!__atomic_load_n(&u->dead, __ATOMIC_ACQUIRE) && u->refs) {
		uint64_t n = u->refs;

		u->refs = 0;
		w->D->cuUserObjectRelease(u->uo, (unsigned int)n);
	}
	xgpub_handle_drop(&w->h, e);
	/* destroyed (the destructor ran and is done with u): u goes; else
	 * a graph still holds it and the driver may call the destructor */
	if (__atomic_load_n(&u->dead, __ATOMIC_ACQUIRE))
		free(u);
}

void xgpub_uobj_teardown(struct xgpub_worker *w)
{
	xgpub_handle_each(&w->h, XGPUB_H_USEROBJ, uobj_drop, w);
}

/* ---- kernel node attributes ------------------------------------------------ */

XGPUB_HANDLER(GRAPH_KERNEL_ATTR)
{
	CUkernelNodeAttrValue v;
	struct xgpub_hentry *src;
	int rc;

	_Static_assert(sizeof(v) == sizeof(a->value),
		       "attribute values travel as the CUDA ABI lays them out");
	switch (a->op) {
	case 0:
		if (!xgpub_attr_plain(a->id))
			return CUDA_ERROR_NOT_SUPPORTED;
		memset(&v, 0, sizeof(v));
		rc = w->D->cuGraphKernelNodeGetAttribute(
			node->obj, (CUkernelNodeAttrID)a->id, &v);
		if (rc == 0)
			memcpy(r->value, &v, sizeof(v));
		return rc;
	case 1:
		if (!xgpub_attr_plain(a->id))
			return CUDA_ERROR_NOT_SUPPORTED;
		memcpy(&v, a->value, sizeof(v));
		return w->D->cuGraphKernelNodeSetAttribute(
			node->obj, (CUkernelNodeAttrID)a->id, &v);
	case 2:
		src = xgpub_handle_get(&w->h, a->src, XGPUB_H_GNODE);
		if (!src)
			return CUDA_ERROR_INVALID_HANDLE;
		return w->D->cuGraphKernelNodeCopyAttributes(node->obj,
							     src->obj);
	}
	return CUDA_ERROR_INVALID_VALUE;
}
