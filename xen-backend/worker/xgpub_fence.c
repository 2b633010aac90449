// SPDX-License-Identifier: MIT
/*
 * xgpub_fence.c: a synchronize answered by the GPU (SYNC_FENCE).
 *
 * A plain synchronize goes guest -> worker -> driver, and back: when the
 * GPU is done the driver returns in the worker, which publishes the
 * reply, which the guest sees a core-to-core crossing later.  Here the
 * worker queues, after the work waited for, a write of the guest's value
 * into the guest's data area (registered with the driver, so the GPU
 * writes it) and replies at once; the guest waits for the value itself,
 * as a native program waits for the GPU, and asks the plain synchronize
 * if it does not come soon (an error, a long kernel).
 *
 * Only where that answer is the same as the driver's:
 *  - the transport shares the data area (not the network), the driver
 *    took it as pinned memory, and the driver is the host's (not xgpu's
 *    library chained to a backend on the network);
 *  - no image loaded may print (xgpub_print_scan.c): the driver writes a
 *    kernel's printf output when the program synchronizes, and the guest
 *    must have it before its synchronize returns;
 *  - no stream-ordered allocation was used (pools, cuMemAllocAsync,
 *    graph memory nodes): at a synchronize the driver releases what a
 *    pool keeps past its threshold and what was trimmed (the GPU test
 *    mempool saw 32 MiB still reserved after a trim otherwise);
 *  - a context synchronize: all the context's work since its last
 *    synchronize went to one stream (the write goes there, after it);
 *    work on two streams, or streams that ended, asks the driver;
 *  - no stream capture, and the GPU scheduler off or the guest alone on
 *    the GPU (its turn ends as a plain synchronize's would).
 */
#include <string.h>

#include "xgpub_worker.h"

/* once an image may print, for the rest of the worker */
static bool may_print;
/* the driver refused the write once: not again */
static bool refused;
/* the driver must see every synchronize (xgpub_fence_stop) */
static bool stopped;

void xgpub_fence_note_image(const uint8_t *p, uint64_t size)
{
	if (!may_print && xgpub_image_may_print(p, size)) {
		may_print = true;
		xgpub_dbg("an image that may print is loaded: synchronizes "
			  "wait for the driver from now on");
	}
}

void xgpub_fence_stop(const char *why)
{
	if (!may_print && !refused && !stopped)
		xgpub_dbg("%s: synchronizes wait for the driver from now on",
			  why);
	stopped = true;
}

/* ---- the streams each context's work went to ------------------------------ */

#define CTXS	8

static struct track {
	CUcontext ctx;
	CUstream s;
	bool have;	/* work since the context's last synchronize */
	bool many;	/* on more than one stream, or not known */
} tr[CTXS];
static bool tr_full;	/* more contexts than the table: none is known */

static struct track *track_of(CUcontext c, bool add)
{
	struct track *free_one = NULL;

	for (int i = 0; i < CTXS; i++) {
		if (tr[i].ctx == c && (tr[i].have || tr[i].many))
			return &tr[i];
		if (!tr[i].have && !tr[i].many && !free_one)
			free_one = &tr[i];
	}
	if (!add)
		return NULL;
	if (!free_one) {
		tr_full = true;
		return NULL;
	}
	free_one->ctx = c;
	return free_one;
}

void xgpub_fence_note_stream(struct xgpub_worker *w, CUstream s)
{
	struct track *t = track_of(w->cur, true);

	if (!t)
		return;
	if (!t->have) {
		t->have = true;
		t->s = s;
	} else if (t->s != s) {
		t->many = true;
	}
}

void xgpub_fence_ctx_synced(struct xgpub_worker *w)
{
	struct track *t = track_of(w->cur, false);

	if (t)
		memset(t, 0, sizeof(*t));
}

void xgpub_fence_forget(void)
{
	for (int i = 0; i < CTXS; i++)
		if (tr[i].have)
			tr[i].many = true;
}

/* ---- the request ------------------------------------------------------------ */

/*
 * Whether the GPU may answer at all now.  Not where the driver is xgpu's
 * own library chained to a backend on the network (--remote-driver):
 * the GPU there writes into that backend's copy of the memory, never
 * into this guest's.  (Such a library refuses to register the data area
 * today, so data_registered says no as well.)
 */
static bool fence_ok(struct xgpub_worker *w)
{
	return !may_print && !refused && !stopped && w->data_registered &&
	       !(w->opt && w->opt->remote_driver) &&
	       !w->t->ops->hostfn_area && !w->captures && xgpub_gate_solo();
}

/* where the write goes: whether the GPU may answer, and on which stream */
static bool fence_stream(struct xgpub_worker *w, bool ctx_wide, CUstream s,
			 CUstream *out)
{
	struct track *t;

	if (!fence_ok(w))
		return false;
	if (!ctx_wide) {
		*out = s;
		return !xgpub_capturing(w, s);
	}
	t = track_of(w->cur, false);
	if (tr_full || !t || !t->have || t->many)
		return false;	/* nothing to wait for, or not one stream */
	*out = t->s;
	return true;
}

static int fence_write(struct xgpub_worker *w, CUstream s, uint64_t off,
		       uint32_t value)
{
	static CUdeviceptr base;
	CUstreamBatchMemOpParams op;
	int rc;

	if (!base) {
		rc = w->D->cuMemHostGetDevicePointer_v2(&base, w->t->data, 0);
		if (rc)
			return rc;
	}
	memset(&op, 0, sizeof(op));
	op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	op.writeValue.address = base + off;
	op.writeValue.value = value;
	op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
	return w->D->cuStreamBatchMemOp_v2(s, 1, &op, 0);
}

XGPUB_HANDLER(SYNC_FENCE)
{
	bool ctx_wide = a->flags & XGPUIF_FENCE_CTX;
	CUstream s;
	int rc;

	memset(r, 0, sizeof(*r));
	if (a->flags & ~XGPUIF_FENCE_CTX)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->off % 4 || w->t->data_bytes < 4 ||
	    a->off > w->t->data_bytes - 4)
		return CUDA_ERROR_INVALID_VALUE;
	/*
	 * The GPU scheduler's gate is left as it is: the open batch stays
	 * open, as when the guest queued work and went on (a mark for each
	 * such synchronize made the dispatch thread wait at the bound on
	 * marks in flight: 20 us turns at 0.64-0.97 of native on the H200).
	 * A guest whose value does not come asks the plain synchronize,
	 * which counts its wait as the plain one does.
	 */
	if (fence_stream(w, ctx_wide, stream, &s)) {
		rc = fence_write(w, s, a->off, a->value);
		if (rc == CUDA_SUCCESS) {
			xgpub_fence_note_stream(w, s);
			r->fenced = 1;
			return 0;
		}
		refused = true;
		xgpub_info("%s: the driver refused a write of a value after "
			   "the work (%d): synchronizes wait for the driver",
			   w->t->who, rc);
	}
	xgpub_gate_wait(w, true);
	rc = ctx_wide ? w->D->cuCtxSynchronize() :
			w->D->cuStreamSynchronize(stream);
	xgpub_gate_wait(w, false);
	if (rc == CUDA_SUCCESS && ctx_wide)
		xgpub_fence_ctx_synced(w);
	return rc;
}

/* ---- blocking copies (XGPUIF_CF_FENCE) ------------------------------------ */

static bool reply_fenced;

bool xgpub_fence_take_reply(void)
{
	bool f = reply_fenced;

	reply_fenced = false;
	return f;
}

int xgpub_fence_copy(struct xgpub_worker *w, bool to_device, void *host,
		     uint64_t dptr, size_t len, CUstream s, uint32_t value,
		     bool *done)
{
	size_t page = XGPUIF_PAGE_SIZE;
	int rc;

	*done = false;
	if (!fence_ok(w) || xgpub_capturing(w, s) ||
	    w->t->data_bytes < 4 * page)
		return 0;
	rc = to_device ? w->D->cuMemcpyHtoDAsync_v2(dptr, host, len, s) :
			 w->D->cuMemcpyDtoHAsync_v2(host, dptr, len, s);
	*done = true;
	if (rc)
		return rc;
	/* the copy is queued: from here its bytes come, and the write
	 * after them says when; a refused write leaves the plain wait */
	rc = fence_write(w, s, w->t->data_bytes - page, value);
	if (rc) {
		refused = true;
		xgpub_info("%s: the driver refused a write of a value after "
			   "a copy (%d): copies wait for the driver",
			   w->t->who, rc);
		return w->D->cuStreamSynchronize(s);
	}
	xgpub_fence_note_stream(w, s);
	reply_fenced = true;
	return 0;
}
