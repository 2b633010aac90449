// SPDX-License-Identifier: MIT
/*
 * xgpulib_capcopy.c: an asynchronous copy between pageable host memory and
 * the device on a stream being captured (1D; 2D and 3D: rows, slices).
 *
 * The driver records such a copy as a memcpy node that reads (or writes)
 * the host memory each time the graph runs.  The worker cannot reach a
 * guest's pageable memory when the graph runs; it refuses to capture a
 * copy staged through the channel (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
 * the graph would copy from the staging area at every launch).  So the
 * library captures the copy as the program's process would do it: a
 * pinned staging buffer of its own (shared with the worker) and two
 * nodes, a host function that moves the bytes between the program's
 * memory and the buffer (a 2D or 3D copy's rows packed in it), run by the
 * library in the program's process when the graph gets there, and a
 * memcpy node between the buffer and the device (or array).  Host to
 * device: host node, then copy; device to host: copy, then host node.
 * The bytes are read and written when the graph runs, as natively.  The
 * two are a child graph, added to the capture's graph as one node that
 * stands for the memcpy node, as below.
 *
 * A memcpy node that the program adds with the graph API
 * (cuGraphAddMemcpyNode, cuGraphAddNode) with one side in pageable memory
 * becomes the same two nodes in a child graph, whose node stands for the
 * memcpy node: cuGraphNodeGetType says CU_GRAPH_NODE_TYPE_MEMCPY and
 * cuGraphMemcpyNodeGetParams gives the program's parameters; changing
 * them (cuGraphMemcpyNodeSetParams, cuGraphExecMemcpyNodeSetParams) is
 * refused with CUDA_ERROR_NOT_SUPPORTED; a clone's copy of the node
 * stands for the memcpy node too (cuGraphClone), while
 * cuGraphNodeGetParams sees a child graph node.
 *
 * A copy between two host sides (pageable or pinned), captured or added
 * with the graph API, is one host node that copies the rows when the
 * graph gets there (in a child graph for the graph API, standing for the
 * memcpy node as above): the worker's driver cannot reach the program's
 * pageable memory, and outside a graph the library copies host to host
 * itself.
 *
 * The buffer lives as long as the graph does (and the executable graphs
 * made from it): a user object that owns it is moved to the graph; its
 * destructor, which may not call the driver API, leaves the buffer on a
 * list of spare ones that later captures take from.  A buffer is never
 * freed: unregistering pinned memory while a stream is captured is a call
 * the driver refuses there (and it invalidates the capture), so the
 * process keeps as many buffers as it had graphs alive at once.
 *
 * A circle of calls, kept on purpose: the copy entry points
 * (xgpulib_api_copy.c, xgpulib_api_copy3d.c) ask this file whether a copy
 * is one to stage, and this file puts the staged copy through them again
 * (its host side is then pinned memory, which they serve as any copy);
 * the graph API's memcpy nodes (xgpulib_api_graphnode.c) come here too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

/* a copy's host side: depth slices of rows x width bytes from host, pitch
 * bytes between rows, slice bytes between slices */
struct hrows {
	uint8_t *host;		/* the program's pageable memory: its first
				 * row */
	size_t width, rows, pitch, depth, slice;
};

struct pcopy {
	uint8_t *staging;	/* pinned, the worker's too: rows of width
				 * bytes, one after the other */
	size_t cap;		/* the buffer's bytes */
	/* the network: the buffer is a part of the data area kept for good
	 * (xgpulib_hostmem_kept): its bytes go to the worker with the host
	 * node's DONE, or come from it first */
	bool kept;
	/* the network: the host side was pinned memory (this process's own
	 * pages), which the program may free while the graph lives; its
	 * host node then moves nothing (natively the worker's pinned
	 * mapping would stay; here the pages are gone) */
	bool plain;
	struct hrows h;		/* the host side it stands for */
	struct pcopy *next;	/* on the list of spare buffers */
};

static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pcopy *spare;

/* the buffer's rows and the host's, one after the other (in: to the
 * buffer) */
static void move_rows(struct pcopy *c, bool in)
{
	const struct hrows *w = &c->h;
	uint8_t *b = c->staging;

	for (size_t z = 0; z < w->depth; z++)
		for (size_t r = 0; r < w->rows; r++, b += w->width) {
			uint8_t *h = w->host + z * w->slice + r * w->pitch;

			if (in)
				memcpy(b, h, w->width);
			else
				memcpy(h, b, w->width);
		}
}

static size_t staged_bytes(const struct pcopy *c)
{
	return c->h.width * c->h.rows * c->h.depth;
}

/* a kept buffer's offset in the data area */
static size_t kept_off(const struct pcopy *c)
{
	return (size_t)(c->staging - xgpulib_ch->t->data);
}

/* the host side's span */
static size_t host_span(const struct hrows *h)
{
	return (h->depth - 1) * h->slice + (h->rows - 1) * h->pitch + h->width;
}

/* the host side is pinned memory the program freed (the network) */
static bool host_gone(const struct pcopy *c)
{
	if (!c->plain || xgpulib_plain_holds(c->h.host, host_span(&c->h)))
		return false;
	xgpulib_log_once("a graph's copy of pinned memory the program freed: "
			 "nothing moved");
	return true;
}

static void CUDA_CB copy_in(void *p)
{
	struct pcopy *c = p;

	if (host_gone(c))
		return;
	move_rows(c, true);
	if (c->kept && !xgpulib_hostfn_push(kept_off(c), staged_bytes(c)))
		xgpulib_log_once("a graph's copy of host memory: its bytes "
				 "could not go to the worker");
}

static void CUDA_CB copy_out(void *p)
{
	struct pcopy *c = p;
	CUresult rc;

	if (host_gone(c))
		return;
	if (c->kept) {
		rc = xgpulib_hostfn_pull(kept_off(c), staged_bytes(c));
		if (rc) {
			xgpulib_log("a graph's copy to host memory at %p: its "
				    "bytes did not come from the worker "
				    "(error %d); the memory is left as it was",
				    (void *)c->h.host, rc);
			return;
		}
	}
	move_rows(c, false);
}

/* the user object's destructor: no driver call here */
static void CUDA_CB drop(void *p)
{
	struct pcopy *c = p;

	pthread_mutex_lock(&spare_mu);
	c->next = spare;
	spare = c;
	pthread_mutex_unlock(&spare_mu);
}

/* a spare buffer of at least bytes, taken off the list, or NULL */
static struct pcopy *take_spare(size_t bytes)
{
	struct pcopy **pp, *c = NULL;

	pthread_mutex_lock(&spare_mu);
	for (pp = &spare; *pp; pp = &(*pp)->next) {
		if ((*pp)->cap >= bytes) {
			c = *pp;
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&spare_mu);
	return c;
}

/* obj owned by graph g: a user object whose destructor is drop, moved
 * to g (on an error drop has run) */
static CUresult graph_owns(CUgraph g, void *obj, void (CUDA_CB *drop)(void *))
{
	CUuserObject uo;
	CUresult rc;

	rc = cuUserObjectCreate(&uo, obj, drop, 1,
				CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
	if (rc) {
		drop(obj);
		return rc;
	}
	rc = cuGraphRetainUserObject(g, uo, 1, CU_GRAPH_USER_OBJECT_MOVE);
	if (rc)
		cuUserObjectRelease(uo, 1);	/* its destructor runs */
	return rc;
}

/*
 * A pinned buffer for the host rows *want describes, owned by a user
 * object moved to graph g: *out, or an error.
 */
static CUresult staging_owned(CUgraph g, const struct hrows *want,
			      struct pcopy **out)
{
	size_t bytes = want->width * want->rows * want->depth;
	struct pcopy *c;
	void *buf = NULL;
	CUresult rc;

	c = take_spare(bytes);
	if (!c) {
		bool net = xgpulib_ch->t->ops->put != NULL;
		uint32_t id;

		c = calloc(1, sizeof(*c));
		if (!c)
			return CUDA_ERROR_OUT_OF_MEMORY;
		/* over the network pinned memory is this process's own: the
		 * buffer is a part of the data area kept for good, whose
		 * bytes the host nodes move */
		rc = net ? xgpulib_hostmem_kept(bytes, &buf, &id) :
			   xgpulib_pinned_alloc(&buf, bytes, 0);
		if (rc) {
			free(c);
			return rc;
		}
		c->staging = buf;
		c->cap = bytes;
		c->kept = net;
	}
	c->h = *want;
	c->plain = c->kept && xgpulib_plain_holds(want->host,
						  host_span(want));
	/* on an error, drop leaves it a spare buffer */
	rc = graph_owns(g, c, drop);
	if (rc == CUDA_SUCCESS)
		*out = c;
	return rc;
}

/*
 * The graph stream s captures into, and (deps not NULL) a copy of its
 * current nodes, *nd of them (the query's own list is the thread's, the
 * next query's too)
 */
static CUresult capture_graph(CUstream s, int ptds, CUgraph *g,
			      CUgraphNode deps[XGPUIF_MAX_CAPTURE_DEPS],
			      size_t *nd)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	const CUgraphNode *got = NULL;
	size_t n = 0;
	CUresult rc;

	*g = NULL;
	rc = xgpulib_capture_info_v3(s, &st, NULL, g, deps ? &got : NULL,
				     NULL, deps ? &n : NULL, ptds);
	if (rc)
		return rc;
	if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || !*g ||
	    n > XGPUIF_MAX_CAPTURE_DEPS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (deps) {
		if (n)
			memcpy(deps, got, n * sizeof(deps[0]));
		*nd = n;
	}
	return CUDA_SUCCESS;
}

/* ---- copies between two host sides ---------------------------------------- */

/*
 * A copy whose sides are both host memory (pageable, which the worker's
 * driver cannot reach, or pinned), in a graph: a host node that moves the
 * rows in the program's process when the graph gets there, as natively
 * the copy reads and writes at each launch.  Its rows are owned by the
 * graph.  (Outside a capture the library copies host to host itself, in
 * stream order: xgpulib_api_copy.c, xgpulib_api_copy3d.c.)
 */
struct hcopy {
	struct hrows s, d;
};

static void CUDA_CB host_copy(void *p)
{
	const struct hcopy *c = p;

	for (size_t z = 0; z < c->s.depth; z++)
		for (size_t r = 0; r < c->s.rows; r++)
			memmove(c->d.host + z * c->d.slice + r * c->d.pitch,
				c->s.host + z * c->s.slice + r * c->s.pitch,
				c->s.width);
}

static void CUDA_CB hcopy_drop(void *p)
{
	free(p);
}

/* the host node's parameters for *want, owned by graph g */
static CUresult hcopy_owned(CUgraph g, const struct hcopy *want,
			    CUDA_HOST_NODE_PARAMS *hp)
{
	struct hcopy *c = malloc(sizeof(*c));
	CUresult rc;

	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*c = *want;
	rc = graph_owns(g, c, hcopy_drop);
	*hp = (CUDA_HOST_NODE_PARAMS){ host_copy, c };
	return rc;
}

/* the copy *want on the stream s being captured: its host node */
static CUresult capture_h2h(CUstream s, int ptds, const struct hcopy *want)
{
	CUDA_HOST_NODE_PARAMS hp;
	CUgraph g;
	CUresult rc = capture_graph(s, ptds, &g, NULL, NULL);

	if (rc == CUDA_SUCCESS)
		rc = hcopy_owned(g, want, &hp);
	return rc ? rc : xgpulib_launch_host_func(s, hp.fn, hp.userData,
						  ptds);
}

/*
 * Side `side` (src or dst) of the 3D copy q becomes the staging buffer b,
 * its rows and slices packed.
 */
#define STAGED_3D(q, side, b)						\
	((q).side##MemoryType = CU_MEMORYTYPE_HOST, (q).side##Host = (b), \
	 (q).side##XInBytes = 0, (q).side##Y = 0,			\
	 (q).side##Pitch = (q).WidthInBytes, (q).side##Z = 0,		\
	 (q).side##LOD = 0, (q).side##Height = (q).Height)

static CUresult staged_graph(CUgraph *cg, const CUDA_MEMCPY3D *q, bool in,
			     struct pcopy *c);

/* *cg: the child graph that stages the copy *q0 (its host side the rows
 * *h describes; in: to the device) through a buffer graph g owns */
static CUresult staged_child(CUgraph g, const struct hrows *h, bool in,
			     const CUDA_MEMCPY3D *q0, CUgraph *cg)
{
	CUDA_MEMCPY3D q = *q0;
	struct pcopy *c;
	CUresult rc = staging_owned(g, h, &c);

	if (rc)
		return rc;
	if (in)
		STAGED_3D(q, src, c->staging);
	else
		STAGED_3D(q, dst, c->staging);
	return staged_graph(cg, &q, in, c);
}

/* child graph cg (destroyed here) as node *out of g after the nd nodes
 * deps, standing for the memcpy node *p */
static CUresult add_standing(CUgraphNode *out, CUgraph g,
			     const CUgraphNode *deps, size_t nd, CUgraph cg,
			     const CUDA_MEMCPY3D *p)
{
	CUresult rc = cuGraphAddChildGraphNode(out, g, deps, nd, cg);

	cuGraphDestroy(cg);	/* the node holds its own copy */
	if (rc == CUDA_SUCCESS && !robj_stage(*out, p)) {
		cuGraphDestroyNode(*out);
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	return rc;
}

/*
 * The copy *v (its host side the rows *want describes; to the device:
 * in) on the stream s being captured: one child graph node standing for
 * it, as the graph API's memcpy nodes are (xgpulib_capcopy_node), added
 * to the capture's graph after the capture's current nodes, which it
 * then replaces (cuStreamUpdateCaptureDependencies).  Inside: to the
 * device, a host node packs the rows into a buffer, then the copy with
 * the buffer as its host side; from the device, that copy, then a host
 * node that unpacks it.  The captured graph's node list then shows one
 * memcpy node where a native capture does (it showed a host node and a
 * memcpy node: the GPU test graphnodes through a chain).
 */
static CUresult capture(CUstream s, int ptds, const struct hrows *want,
			bool in, const CUDA_MEMCPY3D *v)
{
	CUgraphNode deps[XGPUIF_MAX_CAPTURE_DEPS], node;
	size_t nd = 0;
	CUgraph g, cg;
	CUresult rc = capture_graph(s, ptds, &g, deps, &nd);

	if (rc)
		return rc;
	rc = staged_child(g, want, in, v, &cg);
	if (rc == CUDA_SUCCESS)
		rc = add_standing(&node, g, nd ? deps : NULL, nd, cg, v);
	if (rc)
		return rc;
	return xgpulib_capture_deps_v2(s, &node, NULL, 1,
				       CU_STREAM_SET_CAPTURE_DEPENDENCIES,
				       ptds);
}

CUresult xgpulib_capcopy(bool to_dev, CUdeviceptr dev, void *host, size_t n,
			 CUstream s, int ptds)
{
	const struct hrows want = { .host = host, .width = n, .rows = 1,
				    .pitch = n, .depth = 1, .slice = n };
	CUDA_MEMCPY3D v = { .WidthInBytes = n, .Height = 1, .Depth = 1 };

	if (to_dev) {
		v.srcMemoryType = CU_MEMORYTYPE_HOST;
		v.srcHost = host;
		v.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		v.dstDevice = dev;
	} else {
		v.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		v.srcDevice = dev;
		v.dstMemoryType = CU_MEMORYTYPE_HOST;
		v.dstHost = host;
	}
	xgpulib_copy_one_row_pitches(&v);
	return capture(s, ptds, &want, to_dev, &v);
}

/* a copy's side in host memory (type t; a unified address in dptr): its
 * base address, or NULL */
static uint8_t *host_base(CUmemorytype t, const void *host, CUdeviceptr dptr)
{
	if (t == CU_MEMORYTYPE_UNIFIED && !xgpulib_is_device(dptr))
		host = (const void *)(uintptr_t)dptr;
	else if (t != CU_MEMORYTYPE_HOST)
		return NULL;
	return (uint8_t *)(uintptr_t)host;
}

/*
 * A copy's side in host memory (type t; a unified address in dptr):
 * depth slices of rows x width bytes from byte x of row y of slice z,
 * pitch bytes a row, height rows a slice.  Its first byte, or NULL;
 * pageable: NULL for pinned memory too.
 */
static uint8_t *host_at(CUmemorytype t, const void *host, CUdeviceptr dptr,
			size_t x, size_t y, size_t z, size_t pitch,
			size_t height, size_t width, size_t rows, size_t depth,
			bool pageable)
{
	size_t slice = pitch * height,
	       span = (z + depth - 1) * slice + (y + rows - 1) * pitch + x +
		      width;
	uint8_t *base = host_base(t, host, dptr);
	uint64_t off;

	/* pinned memory (a copy that begins in a buffer but runs past its
	 * end is not staged either: it is refused as it stands; over the
	 * network, where pinned memory is the process's own and staged,
	 * the same for one that runs past its buffer) */
	if (!base || (pageable && (xgpulib_region_find(base, 1, &off) ||
				   xgpulib_region_coherent(base, span) ||
				   (xgpulib_plain_holds(base, 1) &&
				    !xgpulib_plain_holds(base, span)))))
		return NULL;
	return base + z * slice + y * pitch + x;
}

/* the same, pageable memory only */
static uint8_t *pageable_at(CUmemorytype t, const void *host,
			    CUdeviceptr dptr, size_t x, size_t y, size_t z,
			    size_t pitch, size_t height, size_t width,
			    size_t rows, size_t depth)
{
	return host_at(t, host, dptr, x, y, z, pitch, height, width, rows,
		       depth, true);
}

/* stream s is being captured */
static bool capturing(CUstream s, int ptds)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	return xgpulib_captures_begun() &&
	       xgpulib_capture_info(s, &st, NULL, ptds) == CUDA_SUCCESS &&
	       st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

bool xgpulib_capcopy_wanted(const void *host, size_t n, CUstream s, int ptds)
{
	return n && xgpulib_captures_begun() &&
	       pageable_at(CU_MEMORYTYPE_HOST, host, 0, 0, 0, 0, n, 1, n, 1,
			   1) &&
	       capturing(s, ptds);
}

/* the copy *p has a size, and no host side's pitch is below its width */
static bool copy_shape_ok(const CUDA_MEMCPY3D *p)
{
	return p->WidthInBytes && p->Height && p->Depth &&
	       (p->srcMemoryType != CU_MEMORYTYPE_HOST ||
		p->srcPitch >= p->WidthInBytes) &&
	       (p->dstMemoryType != CU_MEMORYTYPE_HOST ||
		p->dstPitch >= p->WidthInBytes);
}

/*
 * The 3D copy *p has exactly one side in pageable memory: true, with *h
 * the host rows of that side and *in whether it is the source.  A host
 * side's pitch below the width is never ours.
 */
static bool pageable_3d(const CUDA_MEMCPY3D *p, struct hrows *h, bool *in)
{
	uint8_t *src, *dst;
	size_t pitch, height;

	if (!copy_shape_ok(p))
		return false;
	src = pageable_at(p->srcMemoryType, p->srcHost, p->srcDevice,
			  p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch,
			  p->srcHeight, p->WidthInBytes, p->Height, p->Depth);
	dst = pageable_at(p->dstMemoryType, p->dstHost, p->dstDevice,
			  p->dstXInBytes, p->dstY, p->dstZ, p->dstPitch,
			  p->dstHeight, p->WidthInBytes, p->Height, p->Depth);
	if (!src == !dst)
		return false;	/* neither side, or both */
	pitch = src ? p->srcPitch : p->dstPitch;
	height = src ? p->srcHeight : p->dstHeight;
	*h = (struct hrows){ .host = src ? src : dst, .width = p->WidthInBytes,
			     .rows = p->Height, .pitch = pitch,
			     .depth = p->Depth, .slice = pitch * height };
	*in = src != NULL;
	return true;
}

/*
 * The 3D copy *p is between two host sides (neither's pitch below the
 * width): true, with *c their rows.
 */
static bool host_3d(const CUDA_MEMCPY3D *p, struct hcopy *c)
{
	uint8_t *src, *dst;

	if (!copy_shape_ok(p) || p->srcPitch < p->WidthInBytes ||
	    p->dstPitch < p->WidthInBytes)
		return false;
	src = host_at(p->srcMemoryType, p->srcHost, p->srcDevice,
		      p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch,
		      p->srcHeight, p->WidthInBytes, p->Height, p->Depth,
		      false);
	dst = host_at(p->dstMemoryType, p->dstHost, p->dstDevice,
		      p->dstXInBytes, p->dstY, p->dstZ, p->dstPitch,
		      p->dstHeight, p->WidthInBytes, p->Height, p->Depth,
		      false);
	if (!src || !dst)
		return false;
	c->s = (struct hrows){ .host = src, .width = p->WidthInBytes,
			       .rows = p->Height, .pitch = p->srcPitch,
			       .depth = p->Depth,
			       .slice = p->srcPitch * p->srcHeight };
	c->d = c->s;
	c->d.host = dst;
	c->d.pitch = p->dstPitch;
	c->d.slice = p->dstPitch * p->dstHeight;
	return true;
}


/*
 * The 3D copy *v (its one-row pitches filled) on stream s if s is being
 * captured: between two host sides, a host node; with one pageable side,
 * the two staged nodes.  *done says whether it was either.
 */
static CUresult capture_copy(const CUDA_MEMCPY3D *v, CUstream s, int ptds,
			     bool *done)
{
	struct hcopy hc;
	struct hrows h;
	bool in;

	if (host_3d(v, &hc)) {
		if (!capturing(s, ptds))
			return CUDA_SUCCESS;
		*done = true;
		return capture_h2h(s, ptds, &hc);
	}
	if (!pageable_3d(v, &h, &in) || !capturing(s, ptds))
		return CUDA_SUCCESS;
	*done = true;
	return capture(s, ptds, &h, in, v);
}

CUresult xgpulib_capcopy_3d(const CUDA_MEMCPY3D *p, CUstream s, int ptds,
			    bool *done)
{
	CUDA_MEMCPY3D q;

	*done = false;
	if (!p || !xgpulib_captures_begun())
		return CUDA_SUCCESS;
	q = *p;
	xgpulib_copy_one_row_pitches(&q);
	return capture_copy(&q, s, ptds, done);
}

CUresult xgpulib_capcopy_h2h(void *dst, const void *src, size_t n,
			     CUstream s, int ptds, bool *done)
{
	const CUDA_MEMCPY3D q = {
		.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = src,
		.dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = dst,
		.WidthInBytes = n, .Height = 1, .Depth = 1,
	};

	return xgpulib_capcopy_3d(&q, s, ptds, done);
}

/* ---- memcpy nodes of the graph API ------------------------------------- */

/*
 * The child graph of a staged copy: to the device (in), a host node that
 * packs the rows into c's buffer, then the memcpy node q (its host side
 * the buffer); from the device, q, then a host node that unpacks them.
 */
static CUresult staged_graph(CUgraph *cg, const CUDA_MEMCPY3D *q, bool in,
			     struct pcopy *c)
{
	CUDA_HOST_NODE_PARAMS h = { in ? copy_in : copy_out, c };
	CUgraphNode first, second;
	CUresult rc = cuGraphCreate(cg, 0);

	if (rc)
		return rc;
	if (in) {
		rc = cuGraphAddHostNode(&first, *cg, NULL, 0, &h);
		if (rc == CUDA_SUCCESS)
			rc = cuGraphAddMemcpyNode(&second, *cg, &first, 1, q,
						  NULL);
	} else {
		rc = cuGraphAddMemcpyNode(&first, *cg, NULL, 0, q, NULL);
		if (rc == CUDA_SUCCESS)
			rc = cuGraphAddHostNode(&second, *cg, &first, 1, &h);
	}
	if (rc) {
		cuGraphDestroy(*cg);
		*cg = NULL;
	}
	return rc;
}

/* the child graph of a copy between two host sides: its host node */
static CUresult host_graph(CUgraph *cg, CUgraph g, const struct hcopy *hc)
{
	CUDA_HOST_NODE_PARAMS hp;
	CUgraphNode n;
	CUresult rc = hcopy_owned(g, hc, &hp);

	if (rc)
		return rc;
	rc = cuGraphCreate(cg, 0);
	if (rc)
		return rc;
	rc = cuGraphAddHostNode(&n, *cg, NULL, 0, &hp);
	if (rc) {
		cuGraphDestroy(*cg);
		*cg = NULL;
	}
	return rc;
}

CUresult xgpulib_capcopy_node(CUgraphNode *out, CUgraph g,
			      const CUgraphNode *deps, size_t nd,
			      const CUDA_MEMCPY3D *p, bool *done)
{
	CUDA_MEMCPY3D q;
	struct hcopy hc;
	struct hrows h;
	CUgraph cg;
	CUresult rc;
	bool in;

	*done = false;
	if (!out || !g || !p)
		return CUDA_SUCCESS;
	q = *p;
	xgpulib_copy_one_row_pitches(&q);
	if (host_3d(&q, &hc)) {
		*done = true;
		rc = host_graph(&cg, g, &hc);
	} else if (pageable_3d(&q, &h, &in)) {
		*done = true;
		rc = staged_child(g, &h, in, &q, &cg);
	} else {
		return CUDA_SUCCESS;
	}
	return rc ? rc : add_standing(out, g, deps, nd, cg, p);
}
