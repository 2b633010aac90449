// SPDX-License-Identifier: MIT
/*
 * fakecuda_graph.c: the fake driver's stream capture and graphs (tests
 * only, see fakecuda.h).  The fake runs everything at once, so nothing is
 * ever being captured: capture answers CUDA_ERROR_NOT_SUPPORTED.  Graphs
 * built node by node are kept (nodes, their parameters and edges), and a
 * launch runs their host, memset, memcpy and event record nodes at once,
 * in dependency order; kernel nodes do nothing (their parameter arrays are
 * the caller's, not kept).  An executable graph is a copy of its graph.
 *
 * Stream capture (the end of this file): a stream being captured runs
 * nothing; a host function, a 1D copy between host and device memory, a
 * 2D or a 3D copy on it becomes a host or memcpy node of the capture's graph
 * (run when the graph launches, in dependency order), a memset a memset
 * node (its address unchecked until the graph runs, as the driver checks
 * it only at instantiation), any other
 * launch or copy an empty node, each after the stream's current
 * nodes (then its only one); an event recorded on it is "captured" and
 * stands for the stream's current nodes (no node of its own), and a
 * stream that waits for such an event joins the capture after them
 * (cuStreamGetCaptureInfo gives a stream's current nodes,
 * cuStreamUpdateCaptureDependencies sets or adds to them).  As the driver: waiting for or querying a
 * captured event or a capturing stream answers
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture;
 * work on the legacy stream while a blocking stream of the context is
 * captured answers CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and invalidates it;
 * a thread whose capture mode is not RELAXED may not wait for or query an
 * event while a GLOBAL capture of another thread (or a capture of its
 * own, not RELAXED) is open (UNSUPPORTED, the capture invalidated); an
 * invalidated capture ends in CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.  Not
 * modelled: edge data, more than FC_CAP_DEPS current nodes of a stream
 * (the rest are dropped), unjoined streams at the end (they just leave),
 * per-thread default streams.  The capture mode is per thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define FG_MAGIC	0x66677270u	/* "fgrp" */
#define FN_MAGIC	0x666e6f64u	/* "fnod" */
#define FX_MAGIC	0x66657865u	/* "fexe" */

struct fgraph;

struct fnode {
	uint32_t magic;
	struct fgraph *g;
	CUgraphNodeType type;
	bool enabled;
	struct fnode *orig;	/* in a copy: the node it copies */
	struct fnode **deps;
	size_t ndeps;
	union {
		CUDA_HOST_NODE_PARAMS host;
		CUDA_MEMSET_NODE_PARAMS memset;
		CUDA_MEMCPY3D cp;
		CUevent ev;
		struct fgraph *child;
		/* a conditional node's bodies (the original node owns them;
		 * a copy has none: conditional nodes never run) */
		struct {
			struct fgraph **bodies;
			unsigned int n;
		} cond;
		CUDA_MEM_ALLOC_NODE_PARAMS alloc;
		CUdeviceptr free;
		struct {
			unsigned int count, flags;
			CUstreamBatchMemOpParams ops[16];
		} memop;
		struct {
			CUDA_KERNEL_NODE_PARAMS kp;
			uint8_t buf[64];
			void *ptrs[MAX_KPARAMS];
			int priority;
		} kern;
	} u;
};

struct fgraph {
	uint32_t magic;
	struct fnode **nodes;
	size_t n;
	/* user objects the graph holds references to (released with it;
	 * an instantiated copy holds none) */
	struct { CUuserObject o; unsigned int n; } *uobjs;
	size_t nuobjs;
};

static void graph_uobjs_release(struct fgraph *g);

struct fexec {
	uint32_t magic;
	struct fgraph *g;
	unsigned long long flags;
};

static struct fgraph *G(CUgraph g)
{
	struct fgraph *f = (struct fgraph *)g;

	return f && f->magic == FG_MAGIC ? f : NULL;
}

static struct fnode *N(CUgraphNode n)
{
	struct fnode *f = (struct fnode *)n;

	return f && f->magic == FN_MAGIC ? f : NULL;
}

static struct fnode *typed(CUgraphNode hn, CUgraphNodeType t);

static struct fexec *X(CUgraphExec x)
{
	struct fexec *f = (struct fexec *)x;

	return f && f->magic == FX_MAGIC ? f : NULL;
}

static void graph_free(struct fgraph *g);

/* what node n owns: a child graph, conditional bodies */
static void node_free_owned(struct fnode *n)
{
	if (n->type == CU_GRAPH_NODE_TYPE_GRAPH)
		graph_free(n->u.child);
	if (n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
		for (unsigned int i = 0; i < n->u.cond.n; i++)
			graph_free(n->u.cond.bodies[i]);
		free(n->u.cond.bodies);
	}
}

static void graph_free(struct fgraph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct fnode *n = g->nodes[i];

		node_free_owned(n);
		free(n->deps);
		n->magic = 0;
		free(n);
	}
	free(g->nodes);
	graph_uobjs_release(g);
	g->magic = 0;
	free(g);
}

CUresult cuGraphCreate(CUgraph *out, unsigned int flags)
{
	struct fgraph *g;

	NEED_INIT();
	if (!out || flags)
		return CUDA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->magic = FG_MAGIC;
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hg)
{
	struct fgraph *g = G(hg);

	NEED_INIT();
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(g);
	return CUDA_SUCCESS;
}

static struct fnode *find_in(struct fgraph *g, struct fnode *orig)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i]->orig == orig || g->nodes[i] == orig)
			return g->nodes[i];
	return NULL;
}

/* a deep copy of g; its nodes name the ones they copy */
static struct fgraph *graph_copy(struct fgraph *g)
{
	struct fgraph *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = FG_MAGIC;
	c->nodes = calloc(g->n ? g->n : 1, sizeof(*c->nodes));	/* uobjs none */
	if (!c->nodes) {
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < g->n; i++) {
		struct fnode *o = g->nodes[i], *n = malloc(sizeof(*n));

		if (!n)
			goto fail;
		*n = *o;
		n->g = c;
		n->orig = o;
		/* a kernel's parameter pointers point into its own copy */
		if (o->type == CU_GRAPH_NODE_TYPE_KERNEL &&
		    o->u.kern.kp.kernelParams) {
			for (int k = 0; k < MAX_KPARAMS; k++)
				if (o->u.kern.ptrs[k])
					n->u.kern.ptrs[k] =
						n->u.kern.buf +
						((uint8_t *)o->u.kern.ptrs[k] -
						 o->u.kern.buf);
			n->u.kern.kp.kernelParams = n->u.kern.ptrs;
		}
		n->deps = calloc(o->ndeps ? o->ndeps : 1, sizeof(*n->deps));
		if (!n->deps) {
			free(n);
			goto fail;
		}
		if (o->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
			n->u.cond.bodies = NULL;
			n->u.cond.n = 0;
		}
		if (o->type == CU_GRAPH_NODE_TYPE_GRAPH) {
			n->u.child = graph_copy(o->u.child);
			if (!n->u.child) {
				free(n->deps);
				free(n);
				goto fail;
			}
		}
		c->nodes[c->n++] = n;
	}
	for (size_t i = 0; i < c->n; i++)
		for (size_t d = 0; d < c->nodes[i]->ndeps; d++)
			c->nodes[i]->deps[d] =
				find_in(c, g->nodes[i]->deps[d]);
	return c;
fail:
	graph_free(c);
	return NULL;
}

CUresult cuGraphClone(CUgraph *out, CUgraph hg)
{
	struct fgraph *g = G(hg);

	NEED_INIT();
	if (!out || !g)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUgraph)graph_copy(g);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGraphNodeFindInClone(CUgraphNode *out, CUgraphNode orig,
				CUgraph clone)
{
	struct fgraph *c = G(clone);
	struct fnode *o = N(orig);

	NEED_INIT();
	if (!out || !c || !o)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < c->n; i++) {
		if (c->nodes[i]->orig == o) {
			*out = (CUgraphNode)c->nodes[i];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph hg,
				     unsigned long long flags)
{
	struct fgraph *g = G(hg);
	struct fexec *x;

	NEED_CTX();
	if (!out || !g)
		return CUDA_ERROR_INVALID_VALUE;
	x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->g = graph_copy(g);
	if (!x->g) {
		free(x);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	x->magic = FX_MAGIC;
	x->flags = flags;
	*out = (CUgraphExec)x;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec hx)
{
	struct fexec *x = X(hx);

	NEED_INIT();
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(x->g);
	x->magic = 0;
	free(x);
	return CUDA_SUCCESS;
}

CUresult cuGraphExecGetFlags(CUgraphExec hx, cuuint64_t *flags)
{
	struct fexec *x = X(hx);

	NEED_INIT();
	if (!x || !flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = x->flags;
	return CUDA_SUCCESS;
}

static CUresult run_node(struct fnode *n);

/* every node once, each after its dependencies */
static CUresult run_graph(struct fgraph *g)
{
	bool *done = calloc(g->n ? g->n : 1, sizeof(*done));
	size_t left = g->n;
	CUresult rc = CUDA_SUCCESS;

	if (!done)
		return CUDA_ERROR_OUT_OF_MEMORY;
	while (left && rc == CUDA_SUCCESS) {
		size_t ran = 0;

		for (size_t i = 0; i < g->n && rc == CUDA_SUCCESS; i++) {
			struct fnode *n = g->nodes[i];
			bool ready = !done[i];

			for (size_t d = 0; ready && d < n->ndeps; d++)
				for (size_t j = 0; j < g->n; j++)
					if (g->nodes[j] == n->deps[d] &&
					    !done[j])
						ready = false;
			if (!ready)
				continue;
			rc = run_node(n);
			done[i] = true;
			left--;
			ran++;
		}
		if (!ran)
			rc = CUDA_ERROR_INVALID_VALUE;	/* a cycle */
	}
	free(done);
	return rc;
}

static CUresult run_node(struct fnode *n)
{
	const CUDA_MEMSET_NODE_PARAMS *m = &n->u.memset;

	if (!n->enabled)
		return CUDA_SUCCESS;
	switch (n->type) {
	case CU_GRAPH_NODE_TYPE_HOST:
		n->u.host.fn(n->u.host.userData);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		if (m->elementSize == 1)
			return cuMemsetD2D8_v2(m->dst, m->pitch,
					       (unsigned char)m->value,
					       m->width, m->height);
		if (m->elementSize == 2)
			return cuMemsetD2D16_v2(m->dst, m->pitch,
						(unsigned short)m->value,
						m->width, m->height);
		return cuMemsetD2D32_v2(m->dst, m->pitch, m->value, m->width,
					m->height);
	case CU_GRAPH_NODE_TYPE_MEMCPY: {
		const CUDA_MEMCPY3D *c = &n->u.cp;
		CUDA_MEMCPY2D c2 = {
			.srcXInBytes = c->srcXInBytes, .srcY = c->srcY,
			.srcMemoryType = c->srcMemoryType,
			.srcHost = c->srcHost, .srcDevice = c->srcDevice,
			.srcArray = c->srcArray, .srcPitch = c->srcPitch,
			.dstXInBytes = c->dstXInBytes, .dstY = c->dstY,
			.dstMemoryType = c->dstMemoryType,
			.dstHost = c->dstHost, .dstDevice = c->dstDevice,
			.dstArray = c->dstArray, .dstPitch = c->dstPitch,
			.WidthInBytes = c->WidthInBytes, .Height = c->Height,
		};

		if (c->Depth > 1 || c->srcZ || c->dstZ)
			return fc_copy_3d(c);
		if (c2.Height <= 1) {
			c2.srcPitch = c2.srcPitch ? c2.srcPitch :
						    c2.WidthInBytes;
			c2.dstPitch = c2.dstPitch ? c2.dstPitch :
						    c2.WidthInBytes;
		}
		return cuMemcpy2D_v2(&c2);
	}
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return cuEventRecord(n->u.ev, NULL);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return run_graph(n->u.child);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return cuStreamBatchMemOp_v2(NULL, n->u.memop.count,
					     n->u.memop.ops,
					     n->u.memop.flags);
	default:
		return CUDA_SUCCESS;
	}
}

CUresult cuGraphLaunch(CUgraphExec hx, CUstream s)
{
	struct fexec *x = X(hx);
	CUresult rc;

	bool captured;

	NEED_CTX();
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	rc = fc_stream_work(s, &captured);
	if (rc || captured)
		return rc;
	return run_graph(x->g);
}

CUresult cuGraphUpload(CUgraphExec hx, CUstream s)
{
	NEED_CTX();
	if (!X(hx))
		return CUDA_ERROR_INVALID_VALUE;
	return fc_stream_ok(s);
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hx, CUgraph hg,
			      CUgraphExecUpdateResultInfo *info)
{
	struct fexec *x = X(hx);
	struct fgraph *g = G(hg), *c;

	NEED_INIT();
	if (!x || !g || !info)
		return CUDA_ERROR_INVALID_VALUE;
	memset(info, 0, sizeof(*info));
	if (g->n != x->g->n) {
		info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	c = graph_copy(g);
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	graph_free(x->g);
	x->g = c;
	info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	return CUDA_SUCCESS;
}

static CUresult list(struct fgraph *g, CUgraphNode *out, size_t *n,
		     bool roots)
{
	size_t k = 0;

	NEED_INIT();
	if (!g || !n)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < g->n; i++) {
		if (roots && g->nodes[i]->ndeps)
			continue;
		if (out && k < *n)
			out[k] = (CUgraphNode)g->nodes[i];
		k++;
	}
	if (!out || k < *n)
		*n = k;
	return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	return list(G(g), nodes, n, false);
}

CUresult cuGraphGetRootNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	return list(G(g), nodes, n, true);
}

/* a new node of g after deps (nodes of g) */
static CUresult add(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps,
		    size_t nd, CUgraphNodeType type, struct fnode **made)
{
	struct fgraph *g = G(hg);
	struct fnode *n, **nn;

	NEED_INIT();
	if (!out || !g || (nd && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < nd; i++)
		if (!N(deps[i]) || N(deps[i])->g != g)
			return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	nn = realloc(g->nodes, (g->n + 1) * sizeof(*nn));
	if (nn)
		g->nodes = nn;
	if (!n || !nn || !(n->deps = calloc(nd ? nd : 1, sizeof(*n->deps)))) {
		free(n);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	n->magic = FN_MAGIC;
	n->g = g;
	n->type = type;
	n->enabled = true;
	if (nd)
		memcpy(n->deps, deps, nd * sizeof(*deps));
	n->ndeps = nd;
	g->nodes[g->n++] = n;
	*out = (CUgraphNode)n;
	*made = n;
	return CUDA_SUCCESS;
}

CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g,
			     const CUgraphNode *deps, size_t nd)
{
	struct fnode *n;

	return add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_EMPTY, &n);
}

/* a kernel node keeps a copy of the parameters of a fake function */
static CUresult kern_keep(struct fnode *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	const struct ffunc *f = (const struct ffunc *)p->func;

	n->u.kern.kp = *p;
	n->u.kern.kp.kernelParams = NULL;
	n->u.kern.kp.extra = NULL;
	if (!f || f->magic != FUNC_MAGIC || !p->kernelParams)
		return CUDA_SUCCESS;	/* a CUkernel, or extra: not kept */
	for (unsigned int i = 0; i < f->def->nparams; i++) {
		if (f->def->p[i].off + f->def->p[i].size >
		    sizeof(n->u.kern.buf))
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(n->u.kern.buf + f->def->p[i].off, p->kernelParams[i],
		       f->def->p[i].size);
		n->u.kern.ptrs[i] = n->u.kern.buf + f->def->p[i].off;
	}
	n->u.kern.kp.kernelParams = n->u.kern.ptrs;
	return CUDA_SUCCESS;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g,
				 const CUgraphNode *deps, size_t nd,
				 const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct fnode *n;
	CUresult rc;

	if (!p || (!p->func && !p->kern))
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_KERNEL, &n);
	return rc ? rc : kern_keep(n, p);
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hn,
				       const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_KERNEL);

	NEED_INIT();
	return n && p ? kern_keep(n, p) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hn,
				       CUDA_KERNEL_NODE_PARAMS *p)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_KERNEL);

	NEED_INIT();
	if (!n || !p)
		return CUDA_ERROR_INVALID_VALUE;
	*p = n->u.kern.kp;
	return CUDA_SUCCESS;
}

static bool memset_ok(const CUDA_MEMSET_NODE_PARAMS *p)
{
	return p && (p->elementSize == 1 || p->elementSize == 2 ||
		     p->elementSize == 4) && p->width && p->height;
}

CUresult cuGraphAddMemsetNode(CUgraphNode *out, CUgraph g,
			      const CUgraphNode *deps, size_t nd,
			      const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c)
{
	struct fnode *n;
	CUresult rc;

	(void)c;
	if (!memset_ok(p))
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_MEMSET, &n);
	if (rc == CUDA_SUCCESS)
		n->u.memset = *p;
	return rc;
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g,
			      const CUgraphNode *deps, size_t nd,
			      const CUDA_MEMCPY3D *p, CUcontext c)
{
	struct fnode *n;
	CUresult rc;

	(void)c;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_MEMCPY, &n);
	if (rc == CUDA_SUCCESS)
		n->u.cp = *p;
	return rc;
}

CUresult cuGraphAddHostNode(CUgraphNode *out, CUgraph g,
			    const CUgraphNode *deps, size_t nd,
			    const CUDA_HOST_NODE_PARAMS *p)
{
	struct fnode *n;
	CUresult rc;

	if (!p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_HOST, &n);
	if (rc == CUDA_SUCCESS)
		n->u.host = *p;
	return rc;
}

static CUresult add_event(CUgraphNode *out, CUgraph g,
			  const CUgraphNode *deps, size_t nd, CUevent e,
			  CUgraphNodeType t)
{
	struct fnode *n;
	CUresult rc;

	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, t, &n);
	if (rc == CUDA_SUCCESS)
		n->u.ev = e;
	return rc;
}

CUresult cuGraphAddEventRecordNode(CUgraphNode *out, CUgraph g,
				   const CUgraphNode *deps, size_t nd,
				   CUevent e)
{
	return add_event(out, g, deps, nd, e, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

CUresult cuGraphAddEventWaitNode(CUgraphNode *out, CUgraph g,
				 const CUgraphNode *deps, size_t nd,
				 CUevent e)
{
	return add_event(out, g, deps, nd, e, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

CUresult cuGraphAddChildGraphNode(CUgraphNode *out, CUgraph g,
				  const CUgraphNode *deps, size_t nd,
				  CUgraph child)
{
	struct fgraph *c = G(child), *copy;
	struct fnode *n;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	copy = graph_copy(c);
	if (!copy)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_GRAPH, &n);
	if (rc == CUDA_SUCCESS)
		n->u.child = copy;
	else
		graph_free(copy);
	return rc;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *out, CUgraph g,
				const CUgraphNode *deps, size_t nd,
				CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct fnode *n;
	CUresult rc;

	if (!p || !p->bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	/* the fake allocates at once: the address is the graph's */
	rc = cuMemAlloc_v2(&p->dptr, p->bytesize);
	if (rc)
		return rc;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_MEM_ALLOC, &n);
	if (rc == CUDA_SUCCESS)
		n->u.alloc = *p;
	else
		cuMemFree_v2(p->dptr);
	return rc;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *out, CUgraph g,
			       const CUgraphNode *deps, size_t nd,
			       CUdeviceptr d)
{
	struct fnode *n;
	CUresult rc;

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_MEM_FREE, &n);
	if (rc == CUDA_SUCCESS)
		n->u.free = d;
	return rc;
}

CUresult cuGraphNodeGetType(CUgraphNode hn, CUgraphNodeType *t)
{
	struct fnode *n = N(hn);

	NEED_INIT();
	if (!n || !t)
		return CUDA_ERROR_INVALID_VALUE;
	*t = n->type;
	return CUDA_SUCCESS;
}

/* node hn of type t, or NULL */
static struct fnode *typed(CUgraphNode hn, CUgraphNodeType t)
{
	struct fnode *n = N(hn);

	return n && n->type == t ? n : NULL;
}

#define GETTER(name, type, field, T)					\
	CUresult name(CUgraphNode hn, T *out)				\
	{								\
		struct fnode *n = typed(hn, type);			\
									\
		NEED_INIT();						\
		if (!n || !out)						\
			return CUDA_ERROR_INVALID_VALUE;		\
		*out = n->u.field;					\
		return CUDA_SUCCESS;					\
	}

GETTER(cuGraphHostNodeGetParams, CU_GRAPH_NODE_TYPE_HOST, host,
       CUDA_HOST_NODE_PARAMS)
GETTER(cuGraphMemsetNodeGetParams, CU_GRAPH_NODE_TYPE_MEMSET, memset,
       CUDA_MEMSET_NODE_PARAMS)
GETTER(cuGraphMemcpyNodeGetParams, CU_GRAPH_NODE_TYPE_MEMCPY, cp,
       CUDA_MEMCPY3D)
GETTER(cuGraphEventRecordNodeGetEvent, CU_GRAPH_NODE_TYPE_EVENT_RECORD, ev,
       CUevent)
GETTER(cuGraphEventWaitNodeGetEvent, CU_GRAPH_NODE_TYPE_WAIT_EVENT, ev,
       CUevent)
GETTER(cuGraphMemAllocNodeGetParams, CU_GRAPH_NODE_TYPE_MEM_ALLOC, alloc,
       CUDA_MEM_ALLOC_NODE_PARAMS)
GETTER(cuGraphMemFreeNodeGetParams, CU_GRAPH_NODE_TYPE_MEM_FREE, free,
       CUdeviceptr)

CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hn, CUgraph *out)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_GRAPH);

	NEED_INIT();
	if (!n || !out)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUgraph)n->u.child;
	return CUDA_SUCCESS;
}

/* node hn of type t, in x's copy when x is given */
static struct fnode *target(CUgraphExec hx, CUgraphNode hn, CUgraphNodeType t)
{
	struct fnode *n = typed(hn, t);
	struct fexec *x;

	if (!n || !hx)
		return n;
	x = X(hx);
	return x ? find_in(x->g, n) : NULL;
}

#define SETTER(name, type, field, T)					\
	CUresult name(CUgraphNode hn, const T *p)			\
	{								\
		struct fnode *n = typed(hn, type);			\
									\
		NEED_INIT();						\
		if (!n || !p)						\
			return CUDA_ERROR_INVALID_VALUE;		\
		n->u.field = *p;					\
		return CUDA_SUCCESS;					\
	}

SETTER(cuGraphHostNodeSetParams, CU_GRAPH_NODE_TYPE_HOST, host,
       CUDA_HOST_NODE_PARAMS)
SETTER(cuGraphMemsetNodeSetParams, CU_GRAPH_NODE_TYPE_MEMSET, memset,
       CUDA_MEMSET_NODE_PARAMS)
SETTER(cuGraphMemcpyNodeSetParams, CU_GRAPH_NODE_TYPE_MEMCPY, cp,
       CUDA_MEMCPY3D)

CUresult cuGraphExecHostNodeSetParams(CUgraphExec x, CUgraphNode hn,
				      const CUDA_HOST_NODE_PARAMS *p)
{
	struct fnode *n = target(x, hn, CU_GRAPH_NODE_TYPE_HOST);

	NEED_INIT();
	if (!x || !n || !p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	n->u.host = *p;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec x, CUgraphNode hn,
					const CUDA_MEMSET_NODE_PARAMS *p,
					CUcontext c)
{
	struct fnode *n = target(x, hn, CU_GRAPH_NODE_TYPE_MEMSET);

	(void)c;
	NEED_INIT();
	if (!x || !n || !memset_ok(p))
		return CUDA_ERROR_INVALID_VALUE;
	n->u.memset = *p;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec x, CUgraphNode hn,
					const CUDA_MEMCPY3D *p, CUcontext c)
{
	struct fnode *n = target(x, hn, CU_GRAPH_NODE_TYPE_MEMCPY);

	(void)c;
	NEED_INIT();
	if (!x || !n || !p)
		return CUDA_ERROR_INVALID_VALUE;
	n->u.cp = *p;
	return CUDA_SUCCESS;
}

#define EVSET(name, type)						\
	CUresult name(CUgraphNode hn, CUevent e)			\
	{								\
		struct fnode *n = typed(hn, type);			\
									\
		NEED_INIT();						\
		if (!n || !e)						\
			return CUDA_ERROR_INVALID_VALUE;		\
		n->u.ev = e;						\
		return CUDA_SUCCESS;					\
	}								\
	static CUresult name##_exec(CUgraphExec x, CUgraphNode hn,	\
				    CUevent e)				\
	{								\
		struct fnode *n = target(x, hn, type);			\
									\
		NEED_INIT();						\
		if (!x || !n || !e)					\
			return CUDA_ERROR_INVALID_VALUE;		\
		n->u.ev = e;						\
		return CUDA_SUCCESS;					\
	}

EVSET(cuGraphEventRecordNodeSetEvent, CU_GRAPH_NODE_TYPE_EVENT_RECORD)
EVSET(cuGraphEventWaitNodeSetEvent, CU_GRAPH_NODE_TYPE_WAIT_EVENT)

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec x, CUgraphNode n,
					    CUevent e)
{
	return cuGraphEventRecordNodeSetEvent_exec(x, n, e);
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec x, CUgraphNode n,
					  CUevent e)
{
	return cuGraphEventWaitNodeSetEvent_exec(x, n, e);
}

CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec x, CUgraphNode hn,
					    CUgraph child)
{
	struct fnode *n = target(x, hn, CU_GRAPH_NODE_TYPE_GRAPH);
	struct fgraph *c = G(child), *copy;

	NEED_INIT();
	if (!x || !n || !c)
		return CUDA_ERROR_INVALID_VALUE;
	copy = graph_copy(c);
	if (!copy)
		return CUDA_ERROR_OUT_OF_MEMORY;
	graph_free(n->u.child);
	n->u.child = copy;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n,
					   const CUDA_KERNEL_NODE_PARAMS *p)
{
	NEED_INIT();
	return X(x) && target(x, n, CU_GRAPH_NODE_TYPE_KERNEL) && p ?
		       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphNodeSetEnabled(CUgraphExec x, CUgraphNode hn,
			       unsigned int on)
{
	struct fnode *n = N(hn);

	NEED_INIT();
	if (!X(x) || !n || !(n = find_in(X(x)->g, n)))
		return CUDA_ERROR_INVALID_VALUE;
	n->enabled = on != 0;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetEnabled(CUgraphExec x, CUgraphNode hn,
			       unsigned int *on)
{
	struct fnode *n = N(hn);

	NEED_INIT();
	if (!X(x) || !n || !on || !(n = find_in(X(x)->g, n)))
		return CUDA_ERROR_INVALID_VALUE;
	*on = n->enabled;
	return CUDA_SUCCESS;
}

/* ---- edges ------------------------------------------------------------- */

static bool depends(struct fnode *n, struct fnode *on)
{
	for (size_t d = 0; d < n->ndeps; d++)
		if (n->deps[d] == on)
			return true;
	return false;
}

CUresult cuGraphAddDependencies_v2(CUgraph hg, const CUgraphNode *from,
				   const CUgraphNode *to,
				   const CUgraphEdgeData *e, size_t count)
{
	struct fgraph *g = G(hg);

	(void)e;
	NEED_INIT();
	if (!g || !from || !to)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++) {
		struct fnode *f = N(from[i]), *t = N(to[i]), **nd;

		if (!f || !t || f->g != g || t->g != g || f == t)
			return CUDA_ERROR_INVALID_VALUE;
		if (depends(t, f))
			continue;
		nd = realloc(t->deps, (t->ndeps + 1) * sizeof(*nd));
		if (!nd)
			return CUDA_ERROR_OUT_OF_MEMORY;
		t->deps = nd;
		t->deps[t->ndeps++] = f;
	}
	return CUDA_SUCCESS;
}

static void undepend(struct fnode *n, struct fnode *on)
{
	for (size_t d = 0; d < n->ndeps; d++) {
		if (n->deps[d] == on) {
			n->deps[d] = n->deps[--n->ndeps];
			return;
		}
	}
}

CUresult cuGraphRemoveDependencies_v2(CUgraph hg, const CUgraphNode *from,
				      const CUgraphNode *to,
				      const CUgraphEdgeData *e, size_t count)
{
	struct fgraph *g = G(hg);

	(void)e;
	NEED_INIT();
	if (!g || !from || !to)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++) {
		struct fnode *f = N(from[i]), *t = N(to[i]);

		if (!f || !t || f->g != g || t->g != g || !depends(t, f))
			return CUDA_ERROR_INVALID_VALUE;
		undepend(t, f);
	}
	return CUDA_SUCCESS;
}

static void put_edge(CUgraphNode *a, CUgraphNode *b, CUgraphEdgeData *ed,
		     size_t k, size_t cap, struct fnode *x, struct fnode *y)
{
	if (k >= cap)
		return;
	if (a)
		a[k] = (CUgraphNode)x;
	if (b)
		b[k] = (CUgraphNode)y;
	if (ed)
		memset(&ed[k], 0, sizeof(ed[k]));
}

CUresult cuGraphGetEdges_v2(CUgraph hg, CUgraphNode *from, CUgraphNode *to,
			    CUgraphEdgeData *ed, size_t *n)
{
	struct fgraph *g = G(hg);
	size_t k = 0, cap;

	NEED_INIT();
	if (!g || !n || (!from) != (!to))
		return CUDA_ERROR_INVALID_VALUE;
	cap = from ? *n : 0;
	for (size_t i = 0; i < g->n; i++)
		for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
			put_edge(from, to, ed, k++, cap, g->nodes[i]->deps[d],
				 g->nodes[i]);
	if (!from || k < *n)
		*n = k;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hn, CUgraphNode *deps,
				       CUgraphEdgeData *ed, size_t *n)
{
	struct fnode *x = N(hn);
	size_t cap;

	NEED_INIT();
	if (!x || !n)
		return CUDA_ERROR_INVALID_VALUE;
	cap = deps ? *n : 0;
	for (size_t d = 0; d < x->ndeps; d++)
		put_edge(deps, NULL, ed, d, cap, x->deps[d], NULL);
	if (!deps || x->ndeps < *n)
		*n = x->ndeps;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hn, CUgraphNode *out,
					 CUgraphEdgeData *ed, size_t *n)
{
	struct fnode *x = N(hn);
	size_t k = 0, cap;

	NEED_INIT();
	if (!x || !n)
		return CUDA_ERROR_INVALID_VALUE;
	cap = out ? *n : 0;
	for (size_t i = 0; i < x->g->n; i++)
		if (depends(x->g->nodes[i], x))
			put_edge(out, NULL, ed, k++, cap, x->g->nodes[i],
				 NULL);
	if (!out || k < *n)
		*n = k;
	return CUDA_SUCCESS;
}

CUresult cuGraphDestroyNode(CUgraphNode hn)
{
	struct fnode *n = N(hn);
	struct fgraph *g;

	NEED_INIT();
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	g = n->g;
	for (size_t i = 0; i < g->n; i++) {
		if (g->nodes[i] == n) {
			g->nodes[i] = g->nodes[--g->n];
			i--;
			continue;
		}
		while (depends(g->nodes[i], n))
			undepend(g->nodes[i], n);
	}
	node_free_owned(n);
	free(n->deps);
	n->magic = 0;
	free(n);
	return CUDA_SUCCESS;
}

CUresult cuGraphDebugDotPrint(CUgraph hg, const char *path, unsigned int flags)
{
	struct fgraph *g = G(hg);
	FILE *f;

	(void)flags;
	NEED_INIT();
	if (!g || !path)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(path, "w");
	if (!f)
		return CUDA_ERROR_OPERATING_SYSTEM;
	fprintf(f, "digraph fake {\n");
	for (size_t i = 0; i < g->n; i++)
		fprintf(f, "\"node_%zu\"[label=\"%d\"];\n", i,
			(int)g->nodes[i]->type);
	fprintf(f, "}\n");
	return fclose(f) ? CUDA_ERROR_OPERATING_SYSTEM : CUDA_SUCCESS;
}

/* ---- batch memory operations: at most 16 kept ---------------------------- */

static CUresult memop_keep(struct fnode *n,
			   const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	if (!p || !p->count || p->count > 16 || !p->paramArray)
		return CUDA_ERROR_INVALID_VALUE;
	n->u.memop.count = p->count;
	n->u.memop.flags = p->flags;
	memcpy(n->u.memop.ops, p->paramArray,
	       p->count * sizeof(*p->paramArray));
	return CUDA_SUCCESS;
}

CUresult cuGraphAddBatchMemOpNode(CUgraphNode *out, CUgraph g,
				  const CUgraphNode *deps, size_t nd,
				  const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct fnode *n;
	CUresult rc;

	if (!p || !p->count || p->count > 16 || !p->paramArray)
		return CUDA_ERROR_INVALID_VALUE;
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, &n);
	return rc ? rc : memop_keep(n, p);
}

CUresult cuGraphBatchMemOpNodeGetParams(CUgraphNode hn,
					CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);

	NEED_INIT();
	if (!n || !p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->count = n->u.memop.count;
	p->flags = n->u.memop.flags;
	p->paramArray = n->u.memop.ops;
	return CUDA_SUCCESS;
}

CUresult cuGraphBatchMemOpNodeSetParams(CUgraphNode hn,
					const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);

	NEED_INIT();
	return n ? memop_keep(n, p) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphExecBatchMemOpNodeSetParams(
	CUgraphExec x, CUgraphNode hn, const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct fnode *n = target(x, hn, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);

	NEED_INIT();
	return x && n ? memop_keep(n, p) : CUDA_ERROR_INVALID_VALUE;
}

/* ---- kernel node attributes: a priority is kept, others refused ------- */

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hn, CUkernelNodeAttrID id,
				       CUkernelNodeAttrValue *v)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_KERNEL);

	NEED_INIT();
	if (!n || !v || id != CU_LAUNCH_ATTRIBUTE_PRIORITY)
		return CUDA_ERROR_INVALID_VALUE;
	memset(v, 0, sizeof(*v));
	v->priority = n->u.kern.priority;
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hn, CUkernelNodeAttrID id,
				       const CUkernelNodeAttrValue *v)
{
	struct fnode *n = typed(hn, CU_GRAPH_NODE_TYPE_KERNEL);

	NEED_INIT();
	if (!n || !v || id != CU_LAUNCH_ATTRIBUTE_PRIORITY)
		return CUDA_ERROR_INVALID_VALUE;
	n->u.kern.priority = v->priority;
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src)
{
	struct fnode *d = typed(dst, CU_GRAPH_NODE_TYPE_KERNEL);
	struct fnode *s = typed(src, CU_GRAPH_NODE_TYPE_KERNEL);

	NEED_INIT();
	if (!d || !s)
		return CUDA_ERROR_INVALID_VALUE;
	d->u.kern.priority = s->u.kern.priority;
	return CUDA_SUCCESS;
}

/* ---- conditional nodes: kept with their bodies, never run ------------- */

CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *out,
					CUgraph g, CUcontext c,
					unsigned int dflt, unsigned int flags)
{
	static CUgraphConditionalHandle next = 0x100;

	(void)c;
	(void)dflt;
	NEED_CTX();
	if (!out || !G(g) ||
	    (flags & ~(unsigned int)CU_GRAPH_COND_ASSIGN_DEFAULT))
		return CUDA_ERROR_INVALID_VALUE;
	*out = next++;
	return CUDA_SUCCESS;
}

CUresult cuGraphAddNode_v2(CUgraphNode *out, CUgraph g,
			   const CUgraphNode *deps, const CUgraphEdgeData *ed,
			   size_t nd, CUgraphNodeParams *p)
{
	static CUgraph bodies[64];	/* the fake's: one node at a time */
	struct fgraph **owned;
	struct fnode *n;
	CUresult rc;

	(void)ed;
	if (!p || p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!p->conditional.size || p->conditional.size > 64)
		return CUDA_ERROR_INVALID_VALUE;
	/* the bodies are child graphs the node owns (freed with it) */
	owned = calloc(p->conditional.size, sizeof(*owned));
	if (!owned)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned int i = 0; i < p->conditional.size; i++) {
		rc = cuGraphCreate(&bodies[i], 0);
		if (rc) {
			while (i--)
				graph_free(owned[i]);
			free(owned);
			return rc;
		}
		owned[i] = (struct fgraph *)bodies[i];
	}
	rc = add(out, g, deps, nd, CU_GRAPH_NODE_TYPE_CONDITIONAL, &n);
	if (rc != CUDA_SUCCESS) {
		for (unsigned int i = 0; i < p->conditional.size; i++)
			graph_free(owned[i]);
		free(owned);
		return rc;
	}
	n->u.cond.bodies = owned;
	n->u.cond.n = p->conditional.size;
	p->conditional.phGraph_out = bodies;
	return rc;
}

/* ---- graph memory: none is kept apart ------------------------------------ */

CUresult cuDeviceGetGraphMemAttribute(CUdevice d, CUgraphMem_attribute a,
				      void *v)
{
	NEED_INIT();
	if (d != 0 || !v || a > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
		return CUDA_ERROR_INVALID_VALUE;
	*(cuuint64_t *)v = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceSetGraphMemAttribute(CUdevice d, CUgraphMem_attribute a,
				      void *v)
{
	NEED_INIT();
	if (d != 0 || !v || (a != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH &&
			     a != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGraphMemTrim(CUdevice d)
{
	NEED_INIT();
	return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* ---- user objects: destroyed when the last reference goes ------------- */

#define FU_MAGIC	0x66756f62u	/* "fuob" */

struct fuobj {
	uint32_t magic;
	unsigned int refs;
	void *ptr;
	CUhostFn destroy;
};

static struct fuobj *U(CUuserObject o)
{
	struct fuobj *u = (struct fuobj *)o;

	return u && u->magic == FU_MAGIC ? u : NULL;
}

CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy,
			    unsigned int refs, unsigned int flags)
{
	struct fuobj *u;

	NEED_INIT();
	if (!out || !destroy || !refs ||
	    (flags & ~(unsigned int)CU_USER_OBJECT_NO_DESTRUCTOR_SYNC))
		return CUDA_ERROR_INVALID_VALUE;
	u = calloc(1, sizeof(*u));
	if (!u)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*u = (struct fuobj){ FU_MAGIC, refs, ptr, destroy };
	*out = (CUuserObject)u;
	return CUDA_SUCCESS;
}

CUresult cuUserObjectRetain(CUuserObject o, unsigned int n)
{
	struct fuobj *u = U(o);

	NEED_INIT();
	if (!u || !n)
		return CUDA_ERROR_INVALID_VALUE;
	u->refs += n;
	return CUDA_SUCCESS;
}

CUresult cuUserObjectRelease(CUuserObject o, unsigned int n)
{
	struct fuobj *u = U(o);

	NEED_INIT();
	if (!u || !n || n > u->refs)
		return CUDA_ERROR_INVALID_VALUE;
	u->refs -= n;
	if (!u->refs) {
		u->destroy(u->ptr);
		u->magic = 0;
		free(u);
	}
	return CUDA_SUCCESS;
}

/* a graph's references are counted per graph, released with it */
static size_t graph_uobj(struct fgraph *g, CUuserObject o)
{
	size_t i;

	for (i = 0; i < g->nuobjs && g->uobjs[i].o != o; i++)
		;
	return i;
}

static void graph_uobjs_release(struct fgraph *g)
{
	for (size_t i = 0; i < g->nuobjs; i++)
		cuUserObjectRelease(g->uobjs[i].o, g->uobjs[i].n);
	free(g->uobjs);
	g->uobjs = NULL;
	g->nuobjs = 0;
}

CUresult cuGraphRetainUserObject(CUgraph hg, CUuserObject o, unsigned int n,
				 unsigned int flags)
{
	struct fgraph *g = G(hg);
	size_t i;
	CUresult rc;

	NEED_INIT();
	if (!g || !U(o) || !n ||
	    (flags & ~(unsigned int)CU_GRAPH_USER_OBJECT_MOVE))
		return CUDA_ERROR_INVALID_VALUE;
	i = graph_uobj(g, o);
	if (i == g->nuobjs) {
		void *p = realloc(g->uobjs, (i + 1) * sizeof(*g->uobjs));

		if (!p)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->uobjs = p;
		g->uobjs[i].o = o;
		g->uobjs[i].n = 0;
		g->nuobjs++;
	}
	/* MOVE: the caller's references become the graph's */
	rc = flags ? CUDA_SUCCESS : cuUserObjectRetain(o, n);
	if (rc == CUDA_SUCCESS)
		g->uobjs[i].n += n;
	return rc;
}

CUresult cuGraphReleaseUserObject(CUgraph hg, CUuserObject o, unsigned int n)
{
	struct fgraph *g = G(hg);
	size_t i;

	NEED_INIT();
	if (!g || !n)
		return CUDA_ERROR_INVALID_VALUE;
	i = graph_uobj(g, o);
	if (i == g->nuobjs || n > g->uobjs[i].n)
		return CUDA_ERROR_INVALID_VALUE;
	g->uobjs[i].n -= n;
	if (!g->uobjs[i].n)
		g->uobjs[i] = g->uobjs[--g->nuobjs];
	return cuUserObjectRelease(o, n);
}

/* ---- stream capture -------------------------------------------------------- */

#define MAX_CAPS 16

/* an open capture (live), found by its id; the worker's gate completion
 * thread waits for events while the dispatch thread captures: the table
 * has a lock of its own */
static struct fcap {
	bool live, invalid, own_graph;
	CUstreamCaptureMode mode;
	uint64_t id;
	struct fgraph *g;
	struct fctx *ctx;
	struct fstream *origin;
	pthread_t thr;
} caps[MAX_CAPS];
static uint64_t cap_ids;
static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static bool legacy(CUstream s)
{
	return s == NULL || s == CU_STREAM_LEGACY;
}

static struct fcap *cap_of(uint64_t id)
{
	if (!id)
		return NULL;
	for (unsigned int i = 0; i < MAX_CAPS; i++)
		if (caps[i].live && caps[i].id == id)
			return &caps[i];
	return NULL;
}

static struct fcap *stream_cap(CUstream s)
{
	struct fstream *st = legacy(s) ? NULL : STREAM(s);

	return st ? cap_of(st->cap) : NULL;
}

/* a valid capture of context c with a blocking stream in it (cap_mu) */
static struct fcap *blocking_cap(struct fctx *c)
{
	for (struct fobj *o = fc_objs; o; o = o->next) {
		struct fstream *st = (struct fstream *)o;
		struct fcap *k;

		if (o->type != O_STREAM || (st->flags & CU_STREAM_NON_BLOCKING))
			continue;
		k = cap_of(st->cap);
		if (k && !k->invalid && k->ctx == c)
			return k;
	}
	return NULL;
}

CUresult fc_stream_work(CUstream s, bool *captured)
{
	return fc_stream_work_as(s, captured, NULL);
}

const struct fc_capnode fc_no_node = { .type = CU_GRAPH_NODE_TYPE_EMPTY };

/* a's deps become b's (b's own kept with add); at most FC_CAP_DEPS */
static void deps_merge(CUgraphNode *b, size_t *nb, const CUgraphNode *a,
		       size_t na, bool add)
{
	if (!add)
		*nb = 0;
	for (size_t i = 0; i < na; i++) {
		bool have = false;

		for (size_t j = 0; j < *nb && !have; j++)
			have = b[j] == a[i];
		if (!have && *nb < FC_CAP_DEPS)
			b[(*nb)++] = a[i];
	}
}

CUresult fc_stream_work_as(CUstream s, bool *captured,
			   const struct fc_capnode *as)
{
	CUresult rc = fc_stream_ok(s);
	struct fcap *k;

	*captured = false;
	if (rc)
		return rc;
	pthread_mutex_lock(&cap_mu);
	if (legacy(s)) {
		k = blocking_cap(fc_cur);
		if (k) {
			k->invalid = true;
			rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
		}
	} else if ((k = stream_cap(s))) {
		struct fstream *st = STREAM(s);
		CUgraphNode n = NULL;
		const CUgraphNode *d = st->ncdeps ? st->cdeps : NULL;

		/* a node after the stream's current ones, then its only one */
		if (k->invalid)
			rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		else if (as == &fc_no_node)
			;
		else if (as && as->type == CU_GRAPH_NODE_TYPE_HOST)
			rc = cuGraphAddHostNode(&n, (CUgraph)k->g, d,
						st->ncdeps, &as->host);
		else if (as && as->type == CU_GRAPH_NODE_TYPE_MEMCPY)
			rc = cuGraphAddMemcpyNode(&n, (CUgraph)k->g, d,
						  st->ncdeps, &as->cp, NULL);
		else if (as && as->type == CU_GRAPH_NODE_TYPE_MEMSET)
			rc = cuGraphAddMemsetNode(&n, (CUgraph)k->g, d,
						  st->ncdeps, &as->ms, NULL);
		else
			rc = cuGraphAddEmptyNode(&n, (CUgraph)k->g, d,
						 st->ncdeps);
		if (rc == CUDA_SUCCESS && n) {
			st->cdeps[0] = n;
			st->ncdeps = 1;
		}
		*captured = true;
	}
	pthread_mutex_unlock(&cap_mu);
	return rc;
}

void fc_event_recorded(struct fevent *e, CUstream s, bool captured)
{
	struct fcap *k;

	pthread_mutex_lock(&cap_mu);
	k = captured ? stream_cap(s) : NULL;
	e->cap = k ? k->id : 0;
	e->ncdeps = 0;
	if (k)
		deps_merge(e->cdeps, &e->ncdeps, STREAM(s)->cdeps,
			   STREAM(s)->ncdeps, false);
	pthread_mutex_unlock(&cap_mu);
}

CUresult fc_stream_wait(CUstream s, struct fevent *e)
{
	struct fcap *k, *mine;
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&cap_mu);
	k = cap_of(e->cap);
	mine = stream_cap(s);
	if (k && k->invalid) {
		rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	} else if (k && legacy(s)) {
		k->invalid = true;
		rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	} else if (k && mine && mine != k) {
		/* two captures would merge: not modelled */
		k->invalid = true;
		mine->invalid = true;
		rc = CUDA_ERROR_STREAM_CAPTURE_MERGE;
	} else if (k && !mine) {
		/* s joins the capture, after the event's nodes */
		STREAM(s)->cap = k->id;
		deps_merge(STREAM(s)->cdeps, &STREAM(s)->ncdeps, e->cdeps,
			   e->ncdeps, false);
	} else if (k) {
		/* and within it, after those nodes too */
		deps_merge(STREAM(s)->cdeps, &STREAM(s)->ncdeps, e->cdeps,
			   e->ncdeps, true);
	}
	pthread_mutex_unlock(&cap_mu);
	return rc;
}

CUresult fc_host_wait(struct fevent *e, CUstream s)
{
	struct fcap *k = NULL;
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&cap_mu);
	if (e)
		k = cap_of(e->cap);
	else if (s)
		k = stream_cap(s);
	if (k) {
		k->invalid = true;
		rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	} else if (e && mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
		/* a potentially unsafe call during another's capture */
		for (unsigned int i = 0; i < MAX_CAPS; i++) {
			struct fcap *c = &caps[i];
			bool mine = pthread_equal(c->thr, pthread_self());

			if (!c->live || c->invalid ||
			    c->mode == CU_STREAM_CAPTURE_MODE_RELAXED ||
			    (!mine && c->mode != CU_STREAM_CAPTURE_MODE_GLOBAL))
				continue;
			c->invalid = true;
			rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	}
	pthread_mutex_unlock(&cap_mu);
	return rc;
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m)
{
	CUstreamCaptureMode old = mode;

	if (!m || *m > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	mode = *m;
	*m = old;
	return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	struct fcap *k;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&cap_mu);
	if (legacy(s) && blocking_cap(fc_cur)) {
		rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	} else {
		k = stream_cap(s);
		*st = !k ? CU_STREAM_CAPTURE_STATUS_NONE :
		      k->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED :
				   CU_STREAM_CAPTURE_STATUS_ACTIVE;
	}
	pthread_mutex_unlock(&cap_mu);
	return rc;
}

CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st,
				   cuuint64_t *id, CUgraph *g,
				   const CUgraphNode **deps,
				   const CUgraphEdgeData **edges,
				   size_t *ndeps)
{
	CUresult rc = cuStreamIsCapturing(s, st);
	struct fcap *k;

	if (rc)
		return rc;
	pthread_mutex_lock(&cap_mu);
	k = stream_cap(s);
	if (id)
		*id = k ? k->id : 0;
	if (g)
		*g = k ? (CUgraph)k->g : NULL;
	if (k) {
		static __thread CUgraphNode out[FC_CAP_DEPS];
		struct fstream *st = STREAM(s);

		memcpy(out, st->cdeps, st->ncdeps * sizeof(out[0]));
		if (deps)
			*deps = st->ncdeps ? out : NULL;
		if (ndeps)
			*ndeps = st->ncdeps;
	} else {
		if (deps)
			*deps = NULL;
		if (ndeps)
			*ndeps = 0;
	}
	pthread_mutex_unlock(&cap_mu);
	if (edges)
		*edges = NULL;
	return CUDA_SUCCESS;
}

static CUresult begin_capture(CUstream s, struct fgraph *into,
			      CUstreamCaptureMode m)
{
	struct fstream *st;
	struct fcap *k = NULL;
	CUgraph g = (CUgraph)into;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (legacy(s) || s == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (m > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	st = STREAM(s);
	pthread_mutex_lock(&cap_mu);
	if (cap_of(st->cap)) {
		rc = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	for (unsigned int i = 0; i < MAX_CAPS && !k; i++)
		if (!caps[i].live)
			k = &caps[i];
	if (!k) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (!g) {
		rc = cuGraphCreate(&g, 0);
		if (rc)
			goto out;
	}
	memset(k, 0, sizeof(*k));
	k->live = true;
	k->own_graph = !into;
	k->mode = m;
	k->id = ++cap_ids;
	k->g = G(g);
	k->ctx = fc_cur;
	k->origin = st;
	k->thr = pthread_self();
	st->cap = k->id;
	st->ncdeps = 0;
out:
	pthread_mutex_unlock(&cap_mu);
	return rc;
}

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m)
{
	return begin_capture(s, NULL, m);
}

CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph hg,
				     const CUgraphNode *deps,
				     const CUgraphEdgeData *ed, size_t n,
				     CUstreamCaptureMode m)
{
	struct fgraph *g = G(hg);

	(void)ed;
	NEED_INIT();
	if (!g || (n && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc;

	for (size_t i = 0; i < n; i++)
		if (!N(deps[i]) || N(deps[i])->g != g)
			return CUDA_ERROR_INVALID_VALUE;
	rc = begin_capture(s, g, m);
	if (rc == CUDA_SUCCESS) {
		/* the capture's first nodes follow deps */
		pthread_mutex_lock(&cap_mu);
		deps_merge(STREAM(s)->cdeps, &STREAM(s)->ncdeps, deps, n,
			   false);
		pthread_mutex_unlock(&cap_mu);
	}
	return rc;
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *out)
{
	struct fstream *st;
	struct fcap *k;
	CUresult rc = CUDA_SUCCESS;

	NEED_CTX();
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	st = legacy(s) ? NULL : STREAM(s);
	pthread_mutex_lock(&cap_mu);
	k = st ? cap_of(st->cap) : NULL;
	if (!k) {
		rc = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	if (k->origin != st) {
		rc = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
		goto out;
	}
	if (k->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
	    !pthread_equal(k->thr, pthread_self())) {
		rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
		goto out;
	}
	/* every stream in it leaves the capture */
	for (struct fobj *o = fc_objs; o; o = o->next)
		if (o->type == O_STREAM && ((struct fstream *)o)->cap == k->id)
			((struct fstream *)o)->cap = 0;
	k->live = false;
	if (k->invalid) {
		*out = NULL;
		if (k->own_graph)
			graph_free(k->g);
		rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	} else {
		*out = (CUgraph)k->g;
	}
out:
	pthread_mutex_unlock(&cap_mu);
	return rc;
}

CUresult cuStreamUpdateCaptureDependencies_v2(CUstream s, CUgraphNode *deps,
					      const CUgraphEdgeData *ed,
					      size_t n, unsigned int flags)
{
	struct fcap *k;
	CUresult rc;

	(void)ed;
	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if ((n && !deps) || flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&cap_mu);
	k = stream_cap(s);
	if (!k)
		rc = CUDA_ERROR_ILLEGAL_STATE;
	else if (k->invalid)
		rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	else
		for (size_t i = 0; i < n; i++)
			if (!N(deps[i]) || N(deps[i])->g != k->g)
				rc = CUDA_ERROR_INVALID_VALUE;
	if (k && rc == CUDA_SUCCESS)
		deps_merge(STREAM(s)->cdeps, &STREAM(s)->ncdeps, deps, n,
			   flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES);
	pthread_mutex_unlock(&cap_mu);
	return rc;
}
