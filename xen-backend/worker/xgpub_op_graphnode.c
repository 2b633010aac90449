// SPDX-License-Identifier: MIT
/*
 * xgpub_op_graphnode.c: graph nodes' parameters beyond adding them: from
 * the wire and back (memset, memcpy, host, memory nodes), and the setters
 * in a graph or an executable graph (xgpub_op_graphmisc.c: edges,
 * enabling, removal, clones, the dot text, the device's graph memory,
 * user objects).
 *
 * A host node is the driver's host node running the worker's
 * xgpub_graph_hostfn with the guest's function number as its user data;
 * it runs the guest's function through a graph slot of the host-function
 * region (xgpub_op_hostfn.c), each time the graph reaches it.
 *
 * A memcpy node's host side must be a host-memory region of the guest's
 * (pinned memory): the node keeps the worker's address of it, checked
 * against the region, and the region is kept mapped until the channel
 * closes from then on (xgpub_h_HOSTMEM_UNREGISTER, worker_teardown), since
 * a graph, its clones and executable graphs may copy to and from it at
 * any later launch.
 *
 * A memory allocation node is checked against the guest's quota and its
 * size charged to it until a free node or a free of its address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

/* ---- parameters from the wire -------------------------------------------- */

/*
 * Device addresses in nodes are checked as a copy's or memset's are
 * (xgpub_ranges.c): device memory of the guest's, when the node is made
 * or set.  (A graph launched after the guest freed that memory writes
 * where the node says, as a native one would: see the README.)
 */
static int xgpub_node_memset(struct xgpub_worker *w,
			     const struct xgpuif_node_memset *m,
			     CUDA_MEMSET_NODE_PARAMS *mp)
{
	int rc = xgpub_dev_memset_ok(w, m->dst, m->pitch, m->width, m->height,
				     m->elem_size);

	if (rc)
		return rc;
	*mp = (CUDA_MEMSET_NODE_PARAMS){
		.dst = m->dst, .pitch = m->pitch, .value = m->value,
		.elementSize = m->elem_size, .width = m->width,
		.height = m->height,
	};
	return 0;
}

/* one side of a copy: device memory, host memory inside a region, or an
 * array of the guest's (the driver bounds a copy by its array) */
static int side_in(struct xgpub_worker *w, const struct xgpuif_node_side *s,
		   const struct xgpuif_node_copy *c, CUmemorytype *type,
		   const void **host, CUdeviceptr *dev, CUarray *arr)
{
	struct xgpub_region *r;
	uint64_t pitch, last, t;

	if (s->type == CU_MEMORYTYPE_ARRAY) {
		*arr = xgpub_array_of(w, s->addr);
		if (!*arr)
			return CUDA_ERROR_INVALID_VALUE;
		*type = CU_MEMORYTYPE_ARRAY;
		return 0;
	}
	if (s->type != CU_MEMORYTYPE_DEVICE && s->type != CU_MEMORYTYPE_HOST)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* the bytes touched from addr: x + (z + depth - 1) * height *
	 * pitch + (y + height - 1) * pitch + width */
	pitch = s->pitch ? s->pitch : c->width;
	last = 0;
	if (c->width && c->height && c->depth) {
		if (__builtin_add_overflow(s->z, c->depth - 1, &t) ||
		    __builtin_mul_overflow(t, s->height, &t) ||
		    __builtin_mul_overflow(t, pitch, &t) ||
		    __builtin_add_overflow(last, t, &last) ||
		    __builtin_add_overflow(s->y, c->height - 1, &t) ||
		    __builtin_mul_overflow(t, pitch, &t) ||
		    __builtin_add_overflow(last, t, &last) ||
		    __builtin_add_overflow(last, s->x, &last) ||
		    __builtin_add_overflow(last, c->width, &last))
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (s->type == CU_MEMORYTYPE_DEVICE) {
		int rc = xgpub_dev_span_ok(w, s->addr, last);

		if (rc)
			return rc;
		*type = CU_MEMORYTYPE_DEVICE;
		*dev = s->addr;
		return 0;
	}
	r = xgpub_region_get(w, s->region);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_add_overflow(last, s->addr, &last) || last > r->size)
		return CUDA_ERROR_INVALID_VALUE;
	r->graphed = true;
	*type = CU_MEMORYTYPE_HOST;
	*host = r->va + s->addr;
	return 0;
}

static int xgpub_node_copy(struct xgpub_worker *w,
			   const struct xgpuif_node_copy *c, CUDA_MEMCPY3D *cp)
{
	int rc;

	memset(cp, 0, sizeof(*cp));
	rc = side_in(w, &c->src, c, &cp->srcMemoryType, &cp->srcHost,
		     &cp->srcDevice, &cp->srcArray);
	if (rc == 0)
		rc = side_in(w, &c->dst, c, &cp->dstMemoryType,
			     (const void **)&cp->dstHost, &cp->dstDevice,
			     &cp->dstArray);
	if (rc)
		return rc;
	cp->srcXInBytes = c->src.x;
	cp->srcY = c->src.y;
	cp->srcZ = c->src.z;
	cp->srcPitch = c->src.pitch;
	cp->srcHeight = c->src.height;
	cp->dstXInBytes = c->dst.x;
	cp->dstY = c->dst.y;
	cp->dstZ = c->dst.z;
	cp->dstPitch = c->dst.pitch;
	cp->dstHeight = c->dst.height;
	cp->WidthInBytes = c->width;
	cp->Height = c->height;
	cp->Depth = c->depth;
	return 0;
}

/*
 * A batch of memory operations: the ops are copied into `ops` (the
 * dispatch thread's; the driver copies them into the node), their
 * driver-private fields cleared.  A node that waits for a value may wait
 * for work the guest sends later: the gate counts no work of this guest's
 * as in flight from then on (xgpub_note_value_wait).
 */
static int xgpub_node_memop(struct xgpub_worker *w, const uint8_t *p,
			    uint32_t len, CUDA_BATCH_MEM_OP_NODE_PARAMS *mp)
{
	static CUstreamBatchMemOpParams ops[XGPUIF_MAX_MEMOPS];
	struct xgpuif_node_memop m;
	bool waits;
	int rc;

	if (len < sizeof(m))
		return XGPUIF_ST_PROTO;
	memcpy(&m, p, sizeof(m));
	rc = xgpub_memops_in(w, ops, m.count, p + sizeof(m), len - sizeof(m),
			     &waits);
	if (rc)
		return rc;
	if (waits)
		xgpub_note_value_wait(w, NULL);
	memset(mp, 0, sizeof(*mp));
	mp->ctx = w->cur;
	mp->count = m.count;
	mp->paramArray = ops;
	mp->flags = m.flags;
	return 0;
}

static int xgpub_node_host(struct xgpub_worker *w,
			   const struct xgpuif_node_host *h,
			   CUDA_HOST_NODE_PARAMS *hp)
{
	/* the guest sets its slots up before it makes host nodes */
	if (!h->fnid || !w->hostfn_ngraph)
		return CUDA_ERROR_INVALID_VALUE;
	hp->fn = xgpub_graph_hostfn;
	hp->userData = (void *)(uintptr_t)h->fnid;
	return 0;
}

/* the size of a node type's parameters on the wire, where it is fixed
 * (0: a batch memop node's vary, other types are not served here) */
static uint32_t node_wire_len(unsigned int type)
{
	switch (type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return sizeof(struct xgpuif_node_memset);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return sizeof(struct xgpuif_node_copy);
	case CU_GRAPH_NODE_TYPE_HOST:
		return sizeof(struct xgpuif_node_host);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return sizeof(struct xgpuif_node_handle);
	default:
		return 0;
	}
}

int xgpub_node_params(struct xgpub_worker *w, unsigned int type,
		      const uint8_t *p, uint32_t len,
		      union xgpub_node_params *u)
{
	union {
		struct xgpuif_node_memset memset;
		struct xgpuif_node_copy copy;
		struct xgpuif_node_host host;
		struct xgpuif_node_handle h;
	} in;
	uint32_t want = node_wire_len(type);
	struct xgpub_hentry *e;
	bool child = type == CU_GRAPH_NODE_TYPE_GRAPH;

	if (want) {
		if (len != want)
			return XGPUIF_ST_PROTO;
		memcpy(&in, p, want);
	}
	switch (type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return xgpub_node_memset(w, &in.memset, &u->memset);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return xgpub_node_copy(w, &in.copy, &u->copy);
	case CU_GRAPH_NODE_TYPE_HOST:
		return xgpub_node_host(w, &in.host, &u->host);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return xgpub_node_memop(w, p, len, &u->memop);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
	case CU_GRAPH_NODE_TYPE_GRAPH:
		e = xgpub_handle_get(&w->h, in.h.handle,
				     child ? XGPUB_H_GRAPH : XGPUB_H_EVENT);
		if (!e)
			return CUDA_ERROR_INVALID_HANDLE;
		u->obj = e->obj;
		return 0;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

int xgpub_node_alloc(struct xgpub_worker *w, CUgraph g, CUgraphNode *node,
		     const CUgraphNode *deps, uint32_t nd, const uint8_t *p,
		     uint32_t len, uint64_t *dptr)
{
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	struct xgpuif_node_mem m;
	int rc;

	if (len != sizeof(m))
		return XGPUIF_ST_PROTO;
	memcpy(&m, p, sizeof(m));
	if (m.loc_type != CU_MEM_LOCATION_TYPE_DEVICE || m.loc_id != 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = xgpub_alloc_check(w, m.size);
	if (rc)
		return rc;
	memset(&ap, 0, sizeof(ap));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.poolProps.location.id = (int)w->dev;
	ap.bytesize = m.size;
	rc = w->D->cuGraphAddMemAllocNode(node, g, deps, nd, &ap);
	if (rc)
		return rc;
	if (xgpub_alloc_add(w, ap.dptr, m.size)) {
		w->D->cuGraphDestroyNode(*node);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = ap.dptr;
	return 0;
}

/* ---- parameters back to the wire ----------------------------------------- */

/* a host address of the worker's as (region, offset), an array as the
 * guest's handle; false: none of the guest's */
static bool side_out(struct xgpub_worker *w, CUmemorytype type,
		     const void *host, CUdeviceptr dev, CUarray arr,
		     struct xgpuif_node_side *s)
{
	if (type == CU_MEMORYTYPE_ARRAY) {
		s->type = CU_MEMORYTYPE_ARRAY;
		s->addr = xgpub_handle_named(&w->h, XGPUB_H_ARRAY, arr);
		if (!s->addr)
			s->addr = xgpub_handle_named(&w->h, XGPUB_H_SUBARRAY,
						     arr);
		return s->addr != 0;
	}
	if (type == CU_MEMORYTYPE_DEVICE) {
		s->type = CU_MEMORYTYPE_DEVICE;
		s->addr = dev;
		return true;
	}
	if (type != CU_MEMORYTYPE_HOST)
		return false;
	for (uint32_t i = 1; i < XGPUB_MAX_REGIONS; i++) {
		struct xgpub_region *r = &w->regions[i];
		const uint8_t *h = host;

		if (r->va && h >= r->va && h <= r->va + r->size) {
			s->type = CU_MEMORYTYPE_HOST;
			s->region = i;
			s->addr = (uint64_t)(h - r->va);
			return true;
		}
	}
	return false;
}

static int get_copy(struct xgpub_worker *w, CUgraphNode n,
		    struct xgpuif_node_copy *c)
{
	CUDA_MEMCPY3D cp;
	int rc;

	memset(&cp, 0, sizeof(cp));
	rc = w->D->cuGraphMemcpyNodeGetParams(n, &cp);
	if (rc)
		return rc;
	if (!side_out(w, cp.srcMemoryType, cp.srcHost, cp.srcDevice,
		      cp.srcArray, &c->src) ||
	    !side_out(w, cp.dstMemoryType, cp.dstHost, cp.dstDevice,
		      cp.dstArray, &c->dst))
		return CUDA_ERROR_NOT_SUPPORTED;
	c->src.x = cp.srcXInBytes;
	c->src.y = cp.srcY;
	c->src.z = cp.srcZ;
	c->src.pitch = cp.srcPitch;
	c->src.height = cp.srcHeight;
	c->dst.x = cp.dstXInBytes;
	c->dst.y = cp.dstY;
	c->dst.z = cp.dstZ;
	c->dst.pitch = cp.dstPitch;
	c->dst.height = cp.dstHeight;
	c->width = cp.WidthInBytes;
	c->height = cp.Height;
	c->depth = cp.Depth;
	return 0;
}

/* the guest's handle of a driver event (0: none of the guest's) */
static xgpuif_handle_t event_handle(struct xgpub_worker *w, CUevent ev)
{
	return xgpub_handle_named(&w->h, XGPUB_H_EVENT, ev);
}

static CUgraph graph_of(struct xgpub_hentry *node)
{
	return ((struct xgpub_node_extra *)node->extra)->graph;
}

struct find_fn {
	struct xgpub_worker *w;
	CUfunction f;
	struct xgpub_hentry *found;
};

/* a kernel whose function in the current context is f */
static void kernel_of(struct xgpub_hentry *e, void *arg)
{
	struct find_fn *ff = arg;
	CUfunction f = NULL;

	if (!ff->found &&
	    ff->w->D->cuKernelGetFunction(&f, e->obj) == CUDA_SUCCESS &&
	    f == ff->f)
		ff->found = e;
}

/*
 * A kernel node's parameters as GRAPH_ADD_NODE carries them: the guest's
 * function or kernel handle (the function as the guest named it, or the
 * kernel whose function in this context it is), then the parameter bytes
 * packed by the function's layout.
 */
static int get_kernel(struct xgpub_worker *w, CUgraphNode n, uint8_t *out,
		      uint32_t cap, uint32_t *len)
{
	struct find_fn ff = { w, NULL, NULL };
	CUDA_KERNEL_NODE_PARAMS kn;
	struct xgpuif_launch_args a;
	const struct xgpub_fn *fn;
	void *obj;
	int rc;

	memset(&kn, 0, sizeof(kn));
	rc = w->D->cuGraphKernelNodeGetParams_v2(n, &kn);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	ff.f = kn.func ? kn.func : (CUfunction)kn.kern;
	ff.found = xgpub_handle_find(&w->h, XGPUB_H_FUNCTION, ff.f);
	a.kind = XGPUIF_FN_FUNCTION;
	if (!ff.found) {
		a.kind = XGPUIF_FN_KERNEL;
		ff.found = xgpub_handle_find(&w->h, XGPUB_H_KERNEL, ff.f);
		if (!ff.found)
			xgpub_handle_each(&w->h, XGPUB_H_KERNEL, kernel_of,
					  &ff);
	}
	if (!ff.found)
		return CUDA_ERROR_NOT_SUPPORTED;	/* not the guest's */
	a.func = xgpub_handle_of(&w->h, ff.found);
	rc = xgpub_fn_get(w, a.func, a.kind, &obj, &fn);
	if (rc)
		return rc;
	/* a layout to pack by, and the parameters as an array */
	if (fn->nparams == XGPUIF_PARAMS_UNKNOWN ||
	    (fn->nparams && !kn.kernelParams) ||
	    sizeof(a) + fn->param_bytes > cap)
		return CUDA_ERROR_NOT_SUPPORTED;
	a.grid[0] = kn.gridDimX;
	a.grid[1] = kn.gridDimY;
	a.grid[2] = kn.gridDimZ;
	a.block[0] = kn.blockDimX;
	a.block[1] = kn.blockDimY;
	a.block[2] = kn.blockDimZ;
	a.shmem = kn.sharedMemBytes;
	a.param_bytes = fn->param_bytes;
	memset(out + sizeof(a), 0, fn->param_bytes);
	for (uint32_t i = 0; i < fn->nparams; i++) {
		if (!kn.kernelParams[i])
			return CUDA_ERROR_NOT_SUPPORTED;
		memcpy(out + sizeof(a) + fn->params[i].offset,
		       kn.kernelParams[i], fn->params[i].size);
	}
	memcpy(out, &a, sizeof(a));
	*len = (uint32_t)(sizeof(a) + fn->param_bytes);
	return 0;
}

/* a batch memop node's parameters, written to rt->p (*len bytes) */
static int get_memop(struct xgpub_worker *w, CUgraphNode n,
		     struct xgpub_rtail *rt, uint32_t *len)
{
	CUDA_BATCH_MEM_OP_NODE_PARAMS mp;
	struct xgpuif_node_memop m;
	int rc;

	memset(&mp, 0, sizeof(mp));
	rc = w->D->cuGraphBatchMemOpNodeGetParams(n, &mp);
	if (rc)
		return rc;
	if (mp.count > XGPUIF_MAX_MEMOPS || (mp.count && !mp.paramArray))
		return CUDA_ERROR_NOT_SUPPORTED;
	m = (struct xgpuif_node_memop){ mp.count, mp.flags };
	*len = sizeof(m) + mp.count * XGPUIF_MEMOP_SIZE;
	if (*len > rt->cap)
		return CUDA_ERROR_NOT_SUPPORTED;
	memcpy(rt->p, &m, sizeof(m));
	memcpy(rt->p + sizeof(m), mp.paramArray, mp.count * XGPUIF_MEMOP_SIZE);
	return 0;
}

XGPUB_HANDLER(GRAPH_NODE_GET)
{
	/* the driver's parameters */
	union {
		CUDA_MEMSET_NODE_PARAMS m;
		CUDA_HOST_NODE_PARAMS h;
		CUDA_MEM_ALLOC_NODE_PARAMS a;
		CUevent ev;
		CUgraph child;
		CUdeviceptr d;
	} p;
	/* the wire's (kernels and memops write theirs to rt at once) */
	union {
		struct xgpuif_node_memset m;
		struct xgpuif_node_copy c;
		struct xgpuif_node_host h;
		struct xgpuif_node_handle e;
		struct xgpuif_node_mem a;
		struct xgpuif_dptr_args d;
	} b;
	CUgraphNode n = handle->obj;
	CUgraphNodeType t;
	uint32_t len = 0;
	bool written = false;
	int rc = w->D->cuGraphNodeGetType(n, &t);

	if (rc)
		return rc;
	memset(&p, 0, sizeof(p));
	memset(&b, 0, sizeof(b));
	switch (t) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		rc = w->D->cuGraphMemsetNodeGetParams(n, &p.m);
		b.m = (struct xgpuif_node_memset){ p.m.dst, p.m.pitch,
						   p.m.width, p.m.height,
						   p.m.value, p.m.elementSize };
		len = sizeof(b.m);
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		rc = get_copy(w, n, &b.c);
		len = sizeof(b.c);
		break;
	case CU_GRAPH_NODE_TYPE_HOST:
		rc = w->D->cuGraphHostNodeGetParams(n, &p.h);
		if (rc == 0 && p.h.fn == xgpub_graph_hostfn)
			b.h.fnid = (uint64_t)(uintptr_t)p.h.userData;
		len = sizeof(b.h);
		break;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		rc = t == CU_GRAPH_NODE_TYPE_EVENT_RECORD ?
			     w->D->cuGraphEventRecordNodeGetEvent(n, &p.ev) :
			     w->D->cuGraphEventWaitNodeGetEvent(n, &p.ev);
		b.e.handle = rc ? 0 : event_handle(w, p.ev);
		len = sizeof(b.e);
		break;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		rc = w->D->cuGraphChildGraphNodeGetGraph(n, &p.child);
		if (rc == 0) {
			b.e.handle = xgpub_graph_handle(w, p.child,
							graph_of(handle), n);
			if (!b.e.handle)
				rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
		len = sizeof(b.e);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		rc = w->D->cuGraphMemAllocNodeGetParams(n, &p.a);
		b.a = (struct xgpuif_node_mem){ p.a.bytesize, p.a.dptr,
						CU_MEM_LOCATION_TYPE_DEVICE,
						0 };
		len = sizeof(b.a);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		rc = w->D->cuGraphMemFreeNodeGetParams(n, &p.d);
		b.d.dptr = p.d;
		len = sizeof(b.d);
		break;
	case CU_GRAPH_NODE_TYPE_KERNEL:
		rc = get_kernel(w, n, rt->p, rt->cap, &len);
		written = true;
		break;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		rc = get_memop(w, n, rt, &len);
		written = true;
		break;
	default:
		break;
	}
	if (rc)
		return rc;
	if (!written) {
		if (len > rt->cap)
			return XGPUIF_ST_PROTO;
		memcpy(rt->p, &b, len);
	}
	r->type = (uint32_t)t;
	r->len = len;
	rt->len = len;
	return 0;
}

/* ---- setters ------------------------------------------------------------- */

XGPUB_HANDLER(GRAPH_NODE_SET)
{
	struct xgpub_driver *D = w->D;
	CUgraphNode n = node->obj;
	union xgpub_node_params u;
	CUgraphNodeType t;
	void *x;
	int rc;

	if (a->_pad)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpub_handle_opt(w, a->exec, XGPUB_H_GEXEC, &x);
	if (rc)
		return rc;
	rc = D->cuGraphNodeGetType(n, &t);
	if (rc)
		return rc;
	if ((uint32_t)t != a->type)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpub_node_params(w, t, tail->p, tail->len, &u);
	if (rc)
		return rc;
	switch (t) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return x ? D->cuGraphExecMemsetNodeSetParams(x, n, &u.memset,
							      w->cur) :
			   D->cuGraphMemsetNodeSetParams(n, &u.memset);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return x ? D->cuGraphExecMemcpyNodeSetParams(x, n, &u.copy,
							      w->cur) :
			   D->cuGraphMemcpyNodeSetParams(n, &u.copy);
	case CU_GRAPH_NODE_TYPE_HOST:
		return x ? D->cuGraphExecHostNodeSetParams(x, n, &u.host) :
			   D->cuGraphHostNodeSetParams(n, &u.host);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return x ? D->cuGraphExecBatchMemOpNodeSetParams(x, n,
								  &u.memop) :
			   D->cuGraphBatchMemOpNodeSetParams(n, &u.memop);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		/* a graph's child graph changes only in its executable
		 * graphs */
		if (!x)
			return CUDA_ERROR_NOT_SUPPORTED;
		/* a capture took nodes unchecked (xgpub_dev_captured) */
		if (w->unchecked_nodes && xgpub_graph_nodes_ok(w, u.obj))
			return CUDA_ERROR_INVALID_VALUE;
		return D->cuGraphExecChildGraphNodeSetParams(x, n, u.obj);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return x ? D->cuGraphExecEventRecordNodeSetEvent(x, n, u.obj) :
			   D->cuGraphEventRecordNodeSetEvent(n, u.obj);
	default:	/* WAIT_EVENT */
		return x ? D->cuGraphExecEventWaitNodeSetEvent(x, n, u.obj) :
			   D->cuGraphEventWaitNodeSetEvent(n, u.obj);
	}
}
