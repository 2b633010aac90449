// SPDX-License-Identifier: MIT
/*
 * xgpub_ranges.c: the device addresses a guest names, checked before the
 * driver sees them.  Every byte a copy, memset or stream memory
 * operation touches must lie in a range the driver knows as device
 * memory of this worker (xgpub_dev_span_ok).  A driver that lets the GPU
 * reach pageable host memory (HMM, ATS) would otherwise copy the worker's
 * own memory, and even without, a wild address is the driver's problem
 * only once it was tried.  The last few ranges the driver named are
 * kept (w->dranges) and forgotten at any request that may free memory
 * (xgpub_worker.c).  It calls the driver and the guest's list of
 * allocations (xgpub_account.c), so the handlers that check addresses
 * (copies, memsets, stream memory operations, graph nodes) stand on it.
 */
#include <stdlib.h>

#include "xgpub_worker.h"

#define NDRANGES (sizeof(((struct xgpub_worker *)0)->dranges) / \
		  sizeof(((struct xgpub_worker *)0)->dranges[0]))

void xgpub_dev_ranges_forget(struct xgpub_worker *w)
{
	w->ndranges = 0;
}

void xgpub_capture_mode_swap(struct xgpub_worker *w, CUstreamCaptureMode *mode)
{
	if (w->captures)
		w->D->cuThreadExchangeStreamCaptureMode(mode);
}

/*
 * The range (allocation, mapping, registration) the driver knows at d:
 * its start and size in *r, or false where d is no device memory of this
 * worker.  Asked as pointer attributes; the address range as a second
 * opinion.  Inside a global-mode capture the questions are asked relaxed,
 * so that they cannot touch the capture.
 */
static bool driver_range(struct xgpub_worker *w, uint64_t d,
			 struct xgpub_drange *r)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUdeviceptr base = 0;
	size_t size = 0;
	bool ok;

	xgpub_capture_mode_swap(w, &mode);
	ok = w->D->cuPointerGetAttribute(&base,
					 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
					 d) == 0 &&
	     w->D->cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
					 d) == 0 &&
	     size;
	if (!ok) {
		base = 0;
		size = 0;
		ok = w->D->cuMemGetAddressRange(&base, &size, d) == 0 && size;
	}
	xgpub_capture_mode_swap(w, &mode);
	if (!ok || base > d || d - base >= size)
		return false;
	r->base = base;
	r->size = size;
	return true;
}

/* the known range holding d, from the last few or from the driver */
static const struct xgpub_drange *range_at(struct xgpub_worker *w, uint64_t d)
{
	struct xgpub_drange *r;

	for (uint32_t i = 0; i < w->ndranges; i++) {
		r = &w->dranges[i];
		if (d >= r->base && d - r->base < r->size)
			return r;
	}
	r = &w->dranges[w->drange_next];
	if (!driver_range(w, d, r))
		return NULL;
	w->drange_next = (w->drange_next + 1) % NDRANGES;
	if (w->ndranges < NDRANGES)
		w->ndranges++;
	return r;
}

static int refused(struct xgpub_worker *w, uint64_t d)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUdeviceptr base = 0;
	size_t size = 0;
	unsigned int type = 0;
	int a, b;

	/* what the driver says of it (-v only: the questions cost) */
	if (!xgpub_debugging())
		return CUDA_ERROR_INVALID_VALUE;
	xgpub_capture_mode_swap(w, &mode);
	a = w->D->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					d);
	b = w->D->cuMemGetAddressRange(&base, &size, d);
	xgpub_capture_mode_swap(w, &mode);
	xgpub_dbg("%s: a copy or memset touches %#llx, no device memory of "
		  "this guest's (driver: memory type %u, error %d; address "
		  "range %#llx+%zu, error %d; %u allocations known)",
		  w->t->who, (unsigned long long)d, type, a,
		  (unsigned long long)base, size, b, w->nallocs);
	return CUDA_ERROR_INVALID_VALUE;
}

int xgpub_dev_span_ok(struct xgpub_worker *w, uint64_t d, uint64_t len)
{
	uint64_t end;

	if (!len)
		return 0;
	if (__builtin_add_overflow(d, len, &end))
		return CUDA_ERROR_INVALID_VALUE;
	/*
	 * An allocation of the guest's that the driver does not name yet:
	 * a graph's (an allocation node's, or cuMemAllocAsync captured into
	 * a graph) has its address before its memory, which comes at launch
	 */
	if (!range_at(w, d))
		return xgpub_alloc_holds(w, d, end) ? 0 :
						       refused(w, d);
	/* a span over adjacent ranges (virtual memory mapped in pieces)
	 * is checked piece by piece, a few pieces at most */
	for (int n = 0; n < 16; n++) {
		const struct xgpub_drange *r = range_at(w, d);

		if (!r)
			break;
		if (end - r->base <= r->size)
			return 0;
		d = r->base + r->size;
	}
	return refused(w, d);
}

int xgpub_dev_memset_ok(struct xgpub_worker *w, uint64_t dst, uint64_t pitch,
			uint64_t width, uint64_t height, uint32_t elem_size)
{
	uint64_t bytes;

	if (elem_size != 1 && elem_size != 2 && elem_size != 4)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow(width, (uint64_t)elem_size, &bytes))
		return CUDA_ERROR_INVALID_VALUE;
	/* (one row: the span from dst, whatever the pitch) */
	return xgpub_dev_rows_ok(w, dst, 0, 0, height, pitch, bytes);
}

int xgpub_dev_rows_ok(struct xgpub_worker *w, uint64_t d, uint64_t x,
		      uint64_t row0, uint64_t rows, uint64_t pitch,
		      uint64_t width)
{
	uint64_t start, last;

	if (!rows || !width)
		return 0;
	if (__builtin_mul_overflow(row0, pitch, &start) ||
	    __builtin_add_overflow(start, x, &start) ||
	    __builtin_add_overflow(start, d, &start) ||
	    __builtin_mul_overflow(rows - 1, pitch, &last) ||
	    __builtin_add_overflow(last, width, &last))
		return CUDA_ERROR_INVALID_VALUE;
	return xgpub_dev_span_ok(w, start, last);
}

/* ---- captured work --------------------------------------------------------- */

/*
 * A native capture takes a memset or a copy at any address: the driver
 * checks the node when the graph is instantiated (a framework may
 * capture placeholders and set the real addresses before then: XLA's
 * autotuner memsets address 0x80 in a capture).  The worker does the
 * same: such work on a capturing stream goes to the driver, and from then
 * on the guest's graphs are walked before each instantiation and update,
 * so that no node reaches memory that is not the guest's device memory
 * (where the GPU can reach pageable memory, the worker's own).  The
 * legacy stream is never asked (asking it during another stream's
 * capture would end that capture); the bodies of conditional nodes are
 * not walked (the driver gives them through cuGraphNodeGetParams, which
 * the worker does not use).
 */
int xgpub_dev_captured(struct xgpub_worker *w, int rc, CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	if (rc != CUDA_ERROR_INVALID_VALUE || !w->captures || !s ||
	    s == CU_STREAM_LEGACY ||
	    w->D->cuStreamIsCapturing(s, &st) ||
	    st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return rc;
	if (!w->unchecked_nodes)
		xgpub_dbg("%s: a capture takes work at an address that is no "
			  "device memory of the guest's; its graphs are "
			  "checked when instantiated", w->t->who);
	w->unchecked_nodes = true;
	return 0;
}

/* one side of copy node c: device memory (or a unified address) */
static int copy_side_ok(struct xgpub_worker *w, CUmemorytype t,
			CUdeviceptr d, size_t x, size_t y, size_t z,
			size_t pitch, size_t height, const CUDA_MEMCPY3D *c)
{
	uint64_t row0, rows;

	if (t != CU_MEMORYTYPE_DEVICE && t != CU_MEMORYTYPE_UNIFIED)
		return 0;
	if (!c->WidthInBytes || !c->Height || !c->Depth)
		return 0;
	if (!pitch)
		pitch = c->WidthInBytes;
	/* the rows from the first touched to the last, slices' gaps in */
	if (__builtin_mul_overflow((uint64_t)z, (uint64_t)height, &row0) ||
	    __builtin_add_overflow(row0, (uint64_t)y, &row0) ||
	    __builtin_mul_overflow((uint64_t)c->Depth - 1, (uint64_t)height,
				   &rows) ||
	    __builtin_add_overflow(rows, (uint64_t)c->Height, &rows))
		return CUDA_ERROR_INVALID_VALUE;
	return xgpub_dev_rows_ok(w, d, x, row0, rows, pitch, c->WidthInBytes);
}

static int nodes_ok(struct xgpub_worker *w, CUgraph g, int depth)
{
	CUgraphNode *nodes;
	size_t n = 0;
	int rc;

	if (depth > 16)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuGraphGetNodes(g, NULL, &n);
	if (rc || !n)
		return rc;
	nodes = calloc(n, sizeof(*nodes));
	if (!nodes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuGraphGetNodes(g, nodes, &n);
	for (size_t i = 0; !rc && i < n; i++) {
		CUgraphNodeType t;
		CUDA_MEMSET_NODE_PARAMS m;
		CUDA_MEMCPY3D c;
		CUgraph child;

		rc = w->D->cuGraphNodeGetType(nodes[i], &t);
		if (rc)
			break;
		switch (t) {
		case CU_GRAPH_NODE_TYPE_MEMSET:
			rc = w->D->cuGraphMemsetNodeGetParams(nodes[i], &m);
			if (!rc)
				rc = xgpub_dev_memset_ok(w, m.dst, m.pitch,
							 m.width, m.height,
							 m.elementSize);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			rc = w->D->cuGraphMemcpyNodeGetParams(nodes[i], &c);
			if (!rc)
				rc = copy_side_ok(w, c.srcMemoryType,
						  c.srcDevice, c.srcXInBytes,
						  c.srcY, c.srcZ, c.srcPitch,
						  c.srcHeight, &c);
			if (!rc)
				rc = copy_side_ok(w, c.dstMemoryType,
						  c.dstDevice, c.dstXInBytes,
						  c.dstY, c.dstZ, c.dstPitch,
						  c.dstHeight, &c);
			break;
		case CU_GRAPH_NODE_TYPE_GRAPH:
			rc = w->D->cuGraphChildGraphNodeGetGraph(nodes[i],
								 &child);
			if (!rc)
				rc = nodes_ok(w, child, depth + 1);
			break;
		default:
			break;
		}
	}
	free(nodes);
	return rc;
}

int xgpub_graph_nodes_ok(struct xgpub_worker *w, CUgraph g)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	int rc;

	xgpub_capture_mode_swap(w, &mode);
	rc = nodes_ok(w, g, 0);
	xgpub_capture_mode_swap(w, &mode);
	return rc ? CUDA_ERROR_INVALID_VALUE : 0;
}
