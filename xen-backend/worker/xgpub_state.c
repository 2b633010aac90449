// SPDX-License-Identifier: MIT
/*
 * xgpub_state.c: the worker's state that the dispatcher and the handlers
 * share: shared-memory references, the stream and optional handle
 * arguments, whether a stream is being captured, the context flags and
 * limits a guest may set, the streams that carry value waits, and the
 * release of a driver object by its handle's kind (with what each kind
 * owns: a graph its node handles, an array its levels or planes; the
 * kinds whose release is a handler file's are hooks that file's function
 * fills at setup).  It calls no handler, so the handlers (xgpub_op_*.c)
 * and the dispatcher (xgpub_worker.c) both stand on it; memory accounting
 * is xgpub_account.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpu_rules.h"
#include "xgpub_broker.h"
#include "xgpub_worker.h"

/* ---- shared memory references ------------------------------------------- */

struct xgpub_region *xgpub_region_get(struct xgpub_worker *w, uint32_t id)
{
	struct xgpub_region *r;

	if (id == 0 || id >= XGPUB_MAX_REGIONS)
		return NULL;
	r = &w->regions[id];
	return r->va ? r : NULL;
}

uint8_t *xgpub_memref(struct xgpub_worker *w, const struct xgpuif_memref *ref)
{
	uint8_t *base;
	uint64_t size;

	if (ref->region == XGPUIF_REGION_DATA) {
		base = w->t->data;
		size = w->t->data_bytes;
	} else {
		struct xgpub_region *r = xgpub_region_get(w, ref->region);

		if (!r)
			return NULL;
		base = r->va;
		size = r->size;
	}
	if (ref->off > size || ref->len > size - ref->off)
		return NULL;
	return base + ref->off;
}

int xgpub_stream(struct xgpub_worker *w, xgpuif_handle_t h, CUstream *out)
{
	struct xgpub_hentry *e;

	if (h == 0 || h == XGPUIF_STREAM_LEGACY ||
	    h == XGPUIF_STREAM_PER_THREAD) {
		*out = (CUstream)(uintptr_t)h;
		return 0;
	}
	e = xgpub_handle_get(&w->h, h, XGPUB_H_STREAM);
	if (!e)
		return -1;
	*out = e->obj;
	return 0;
}

int xgpub_handle_opt(struct xgpub_worker *w, xgpuif_handle_t h, int type,
		     void **obj)
{
	struct xgpub_hentry *e;

	*obj = NULL;
	if (!h)
		return 0;
	e = xgpub_handle_get(&w->h, h, type);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	*obj = e->obj;
	return 0;
}

/* ---- context flags and limits ---------------------------------------------- */

/*
 * Context flags a guest may give: scheduling, mapped memory, local memory
 * kept, synchronous memops.  Core dumps are refused: the driver would
 * write them in Dom0, as root, where the guest's dumps could fill a disk.
 */
int xgpub_ctx_flags_check(unsigned int flags)
{
	if (flags & ~(unsigned int)CU_CTX_FLAGS_MASK)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & (CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE))
		return CUDA_ERROR_NOT_SUPPORTED;
	return 0;
}

/*
 * Context limits a guest may set: those of its own context.  The
 * persisting L2 size is the whole device's (it would change the GPU for
 * every guest); the shared memory and CIG limits cannot be set; anything
 * past CU_LIMIT_MAX is unknown.
 */
int xgpub_ctx_limit_check(unsigned int limit)
{
	switch (limit) {
	case CU_LIMIT_STACK_SIZE:
	case CU_LIMIT_PRINTF_FIFO_SIZE:
	case CU_LIMIT_MALLOC_HEAP_SIZE:
	case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
	case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
	case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
	case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
		return 0;
	case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* ---- stream capture ------------------------------------------------------ */

bool xgpub_capturing(struct xgpub_worker *w, CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!w->captures)
		return false;
	if (w->D->cuStreamIsCapturing(s, &st))
		return false;
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* ---- value waits ---------------------------------------------------------- */

/*
 * A stream that waits for a value may wait for work the guest sends
 * later, on another stream: the gate must not hold the dispatcher until
 * its work completes, or the signalling work never comes (the gate still
 * makes it wait for its turn and measures it, xgpub_worker.c).  Such
 * streams are remembered for the channel's life (a special stream, or
 * more than fit, means all).
 */
void xgpub_note_value_wait(struct xgpub_worker *w, CUstream s)
{
	uintptr_t v = (uintptr_t)s;

	if (v <= 2 || w->nwaiting == sizeof(w->waiting) / sizeof(w->waiting[0])) {
		w->wait_any = true;
		return;
	}
	if (!xgpub_waits_on_value(w, s))
		w->waiting[w->nwaiting++] = s;
}

bool xgpub_waits_on_value(struct xgpub_worker *w, CUstream s)
{
	if (w->wait_any)
		return true;
	for (uint32_t i = 0; i < w->nwaiting; i++)
		if (w->waiting[i] == s)
			return true;
	return false;
}

/*
 * A stream made to wait for an event recorded on a waiting stream waits
 * for the value too (two threads: one queues the value wait and an event
 * behind it, another makes its stream wait for the event).  The events
 * last recorded on waiting streams are remembered (more than fit: every
 * stream then counts as waiting); one recorded again on another stream
 * is forgotten.
 */
void xgpub_note_event_record(struct xgpub_worker *w, CUevent ev, CUstream s)
{
	uint32_t i;

	for (i = 0; i < w->nwait_events; i++)
		if (w->wait_events[i] == ev)
			break;
	if (!xgpub_waits_on_value(w, s)) {
		if (i < w->nwait_events)
			w->wait_events[i] = w->wait_events[--w->nwait_events];
		return;
	}
	if (i < w->nwait_events)
		return;
	if (w->nwait_events ==
	    sizeof(w->wait_events) / sizeof(w->wait_events[0])) {
		w->wait_any = true;
		return;
	}
	w->wait_events[w->nwait_events++] = ev;
}

void xgpub_note_event_wait(struct xgpub_worker *w, CUstream s, CUevent ev)
{
	for (uint32_t i = 0; i < w->nwait_events; i++)
		if (w->wait_events[i] == ev) {
			xgpub_note_value_wait(w, s);
			return;
		}
}

/* ---- caps given at run time ---------------------------------------------- */

/*
 * A local or network client's caps given at run time for its key (`xgpu
 * config set local:NAME quota-mb=N`), over the daemon's options; asked
 * once the guest has said its name, before its first request.  (A
 * domain's are in its options already.)
 */
const struct xgpub_options *xgpub_client_caps(struct xgpub_worker *w,
					      const struct xgpub_options *opt)
{
	static struct xgpub_options own;
	struct xgpub_caps c;

	/* asked only where the daemon says caps are set for some client */
	if (!strcmp(w->t->ops->name, "xen") || !xgpub_self_stat ||
	    !__atomic_load_n(&xgpub_wctl_of(xgpub_self_stat)->client_caps,
			     __ATOMIC_ACQUIRE) ||
	    xgpub_broker_caps(&c) || !c.has)
		return opt;
	own = *opt;
	if (c.has & XGPU_RULE_QUOTA)
		own.quota = c.quota;
	if (c.has & XGPU_RULE_PINNED)
		own.pin_quota = c.pin_quota;
	if (c.has & XGPU_RULE_IMAGES)
		own.images_max = c.images_max;
	w->opt = &own;
	__atomic_store_n(&xgpub_self_stat->quota, own.quota,
			 __ATOMIC_RELAXED);
	xgpub_info("%s: caps set for its key at run time: quota %llu MiB, "
		   "pinned %llu MiB, images %llu MiB (0: no limit)",
		   w->t->who, (unsigned long long)(own.quota >> 20),
		   (unsigned long long)(own.pin_quota >> 20),
		   (unsigned long long)(own.images_max >> 20));
	return &own;
}

/* ---- keeping and releasing objects by kind ------------------------------------------- */

bool xgpub_pool_is_default(struct xgpub_worker *w, void *pool)
{
	return w->default_pool && pool == (void *)w->default_pool;
}

static void drop_node_of(struct xgpub_hentry *e, void *arg)
{
	struct xgpub_node_extra *x = e->extra;
	struct xgpub_worker *w = ((void **)arg)[0];

	if (x && x->graph == ((void **)arg)[1])
		xgpub_handle_drop(&w->h, e);
}

static void forget_nodes(struct xgpub_worker *w, void *graph);

static void drop_child_of(struct xgpub_hentry *e, void *arg)
{
	struct xgpub_graph_extra *x = e->extra;
	struct xgpub_worker *w = ((void **)arg)[0];

	if (x && x->owner == ((void **)arg)[1]) {
		forget_nodes(w, e->obj);
		xgpub_handle_drop(&w->h, e);
	}
}

/* a graph is going away: its nodes' handles with it, and its child
 * graphs' (with theirs) */
static void forget_nodes(struct xgpub_worker *w, void *graph)
{
	void *arg[2] = { w, graph };

	xgpub_handle_each(&w->h, XGPUB_H_GNODE, drop_node_of, arg);
	xgpub_handle_each(&w->h, XGPUB_H_GRAPH, drop_child_of, arg);
}

static void drop_sub_of(struct xgpub_hentry *e, void *arg)
{
	struct xgpub_owner *x = e->extra;
	struct xgpub_worker *w = ((void **)arg)[0];

	if (x && x->owner == *(xgpuif_handle_t *)((void **)arg)[1])
		xgpub_handle_drop(&w->h, e);
}

/* a mipmap or an array is going away: its levels' or planes' handles */
static void forget_subs(struct xgpub_worker *w, struct xgpub_hentry *parent)
{
	xgpuif_handle_t h = xgpub_handle_of(&w->h, parent);
	void *arg[2] = { w, &h };

	xgpub_handle_each(&w->h, XGPUB_H_SUBARRAY, drop_sub_of, arg);
}

CUarray xgpub_array_of(struct xgpub_worker *w, xgpuif_handle_t h)
{
	struct xgpub_hentry *e = xgpub_handle_get(&w->h, h, XGPUB_H_ARRAY);

	if (!e)
		e = xgpub_handle_get(&w->h, h, XGPUB_H_SUBARRAY);
	return e ? e->obj : NULL;
}

/*
 * Kinds whose release is a handler file's own (a green context's takes
 * its streams and modules along, a physical allocation's its exports):
 * set once at the worker's setup (xgpub_worker.c), so that this file
 * calls no handler file.
 */
static xgpub_release_fn *release_hook[XGPUB_H_NTYPES];

void xgpub_release_hook(int type, xgpub_release_fn *fn)
{
	release_hook[type] = fn;
}

int xgpub_release(struct xgpub_worker *w, struct xgpub_hentry *e)
{
	struct xgpub_driver *D = w->D;

	if (e->type < XGPUB_H_NTYPES && release_hook[e->type])
		return release_hook[e->type](w, e);
	switch (e->type) {
	case XGPUB_H_STREAM:
		return D->cuStreamDestroy_v2(e->obj);
	case XGPUB_H_EVENT:
		return D->cuEventDestroy_v2(e->obj);
	case XGPUB_H_MODULE:
		/* a library's module has no object of its own */
		return e->obj ? D->cuModuleUnload(e->obj) : CUDA_SUCCESS;
	case XGPUB_H_LIBRARY:
		return D->cuLibraryUnload(e->obj);
	case XGPUB_H_BLOB:
		free(e->obj);
		e->obj = NULL;
		return CUDA_SUCCESS;
	case XGPUB_H_TEXOBJ:
		return D->cuTexObjectDestroy((CUtexObject)(uintptr_t)e->obj);
	case XGPUB_H_LINK:
		return D->cuLinkDestroy(e->obj);
	case XGPUB_H_SURFOBJ:
		return D->cuSurfObjectDestroy((CUsurfObject)(uintptr_t)e->obj);
	case XGPUB_H_ARRAY:
	case XGPUB_H_MIPMAP: {
		int rc = e->type == XGPUB_H_ARRAY ?
				 D->cuArrayDestroy(e->obj) :
				 D->cuMipmappedArrayDestroy(e->obj);

		/* its planes or levels went with it, and its charge */
		if (rc == 0) {
			forget_subs(w, e);
			if (e->extra) {
				xgpub_uncharge(w, *(uint64_t *)e->extra);
				*(uint64_t *)e->extra = 0;
			}
		}
		return rc;
	}
	case XGPUB_H_TEXREF:
		/* one of cuTexRefCreate's has no module (no extra) */
		return e->extra ? CUDA_SUCCESS : D->cuTexRefDestroy(e->obj);
	case XGPUB_H_SUBARRAY:
	case XGPUB_H_SURFREF:
		return CUDA_SUCCESS;	/* their owner frees them */
	case XGPUB_H_NOTIFY:
		/* its extra goes only once the driver calls it no more */
		return D->cuDeviceUnregisterAsyncNotification(w->dev, e->obj);
	case XGPUB_H_LOGCB:
		/* likewise: no message of it is queued after this */
		return D->cuLogsUnregisterCallback(e->obj);
	case XGPUB_H_GEXEC:
		return D->cuGraphExecDestroy(e->obj);
	case XGPUB_H_GRAPH:
		forget_nodes(w, e->obj);
		/* a child graph is its node's: only its handle goes */
		return e->extra ? CUDA_SUCCESS : D->cuGraphDestroy(e->obj);
	case XGPUB_H_GNODE:
		return CUDA_SUCCESS;	/* its graph owns it */
	case XGPUB_H_POOL:
		/* its allocations stay valid until freed (the driver's rule) */
		return xgpub_pool_is_default(w, e->obj) ?
			       CUDA_SUCCESS : D->cuMemPoolDestroy(e->obj);
	case XGPUB_H_CTX:
		/* the primary is released by the teardown, not destroyed;
		 * a green context's goes with its green context */
		if (e->obj != w->primary && !e->extra) {
			int rc = D->cuCtxDestroy_v2(e->obj);

			if (rc == 0)
				xgpub_ctx_uncharge(w, e->obj);
			return rc;
		}
		return CUDA_SUCCESS;
	case XGPUB_H_RESDESC:
		return CUDA_SUCCESS;	/* the driver has no destroy for it */
	}
	return CUDA_SUCCESS;
}

int xgpub_keep(struct xgpub_worker *w, int type, void *obj, void *extra,
	       xgpuif_handle_t *h)
{
	struct xgpub_hentry e = { .type = (uint16_t)type, .obj = obj,
				  .extra = extra };

	*h = xgpub_handle_new(&w->h, type, obj, extra);
	if (*h)
		return 0;
	xgpub_release(w, &e);
	free(extra);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

int xgpub_keep_owned(struct xgpub_worker *w, int type, void *obj,
		     struct xgpub_hentry *owner, xgpuif_handle_t *h)
{
	struct xgpub_owner *x = malloc(sizeof(*x));

	*h = 0;
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->owner = xgpub_handle_of(&w->h, owner);
	*h = xgpub_handle_new(&w->h, type, obj, x);
	if (*h)
		return 0;
	free(x);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

int xgpub_keep_named(struct xgpub_worker *w, int type, void *obj,
		     struct xgpub_hentry *owner, xgpuif_handle_t *h)
{
	*h = xgpub_handle_named(&w->h, type, obj);
	if (*h)
		return 0;
	if (owner)
		return xgpub_keep_owned(w, type, obj, owner, h);
	return xgpub_keep(w, type, obj, NULL, h);
}

int xgpub_keep_made(struct xgpub_worker *w, int rc, int type, void *obj,
		    void *extra, xgpuif_handle_t *h)
{
	if (rc) {
		free(extra);
		return rc;
	}
	return xgpub_keep(w, type, obj, extra, h);
}

bool xgpub_vmem_ref(struct xgpub_worker *w, CUmemGenericAllocationHandle h,
		    xgpuif_handle_t *out)
{
	struct xgpub_hentry *e = xgpub_handle_find(&w->h, XGPUB_H_VMEM,
						   (void *)(uintptr_t)h);

	if (!e)
		return false;
	((struct xgpub_vmem *)e->extra)->refs++;
	*out = xgpub_handle_of(&w->h, e);
	return true;
}

int xgpub_vmem_keep(struct xgpub_worker *w, CUmemGenericAllocationHandle h,
		    uint64_t size, xgpuif_handle_t *out)
{
	struct xgpub_vmem *v = malloc(sizeof(*v));

	*out = 0;
	if (v) {
		*v = (struct xgpub_vmem){ size, 1 };
		*out = xgpub_handle_new(&w->h, XGPUB_H_VMEM,
					(void *)(uintptr_t)h, v);
	}
	if (*out)
		return 0;
	free(v);
	w->D->cuMemRelease(h);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

int xgpub_release_drop(struct xgpub_worker *w, struct xgpub_hentry *e)
{
	int rc = xgpub_release(w, e);

	if (rc == 0)
		xgpub_handle_drop(&w->h, e);
	return rc;
}

void xgpub_vmm_teardown(struct xgpub_worker *w)
{
	for (uint32_t i = 0; i < w->nvres; i++) {
		/* whatever is still mapped, then the range */
		w->D->cuMemUnmap(w->vres[i].dptr, w->vres[i].size);
		w->D->cuMemAddressFree(w->vres[i].dptr, w->vres[i].size);
	}
	w->nvres = 0;
	free(w->vres);
	w->vres = NULL;
	w->cap_vres = 0;
}
