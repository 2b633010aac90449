/* SPDX-License-Identifier: MIT */
/*
 * xgpub_worker.h: one worker process serves one guest channel.  It owns
 * the guest's CUDA context(s), its handle tables and memory accounting,
 * and one dispatch thread takes requests off the ring in order, so
 * nothing in struct xgpub_worker needs a lock (the gate's completion
 * thread keeps its own state, see xgpub_gate.c).
 */
#ifndef XGPUB_WORKER_H
#define XGPUB_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "xgpub.h"
#include "xgpub_ipc.h"
#include "xgpub_transport.h"
#include "xgpu_spin.h"

/* ---- the executor: a table of driver entry points ----------------------- */

/* texture and surface references are deprecated in cuda.h, and served */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct xgpub_driver {
	const char *name;	/* the driver's absolute path, for the log */
	void *dl;		/* its dlopen handle */
#define XGPUB_DRV(fn) __typeof__(&fn) fn;
#include "xgpub_driver.def"
#undef XGPUB_DRV
};
#pragma GCC diagnostic pop

/* the host's driver, opened by absolute path; NULL and *msg on failure */
struct xgpub_driver *xgpub_driver_open(const char *path, char *msg,
				       size_t msglen);
void xgpub_driver_close(struct xgpub_driver *d);

/* ---- handles ------------------------------------------------------------- */

enum xgpub_htype {
	XGPUB_H_FREE = 0,
	XGPUB_H_CTX,
	XGPUB_H_MODULE,
	XGPUB_H_LIBRARY,
	XGPUB_H_KERNEL,
	XGPUB_H_FUNCTION,
	XGPUB_H_STREAM,
	XGPUB_H_EVENT,
	XGPUB_H_BLOB,
	XGPUB_H_ARRAY,
	XGPUB_H_TEXOBJ,
	XGPUB_H_POOL,
	XGPUB_H_SURFOBJ,
	XGPUB_H_LINK,
	XGPUB_H_GRAPH,
	XGPUB_H_GEXEC,
	XGPUB_H_GNODE,
	XGPUB_H_VMEM,
	XGPUB_H_MIPMAP,		/* obj = CUmipmappedArray */
	XGPUB_H_SUBARRAY,	/* obj = CUarray its owner frees (a mipmap
				 * level, a plane), extra = struct
				 * xgpub_owner */
	XGPUB_H_TEXREF,		/* obj = CUtexref, extra = struct xgpub_fn
				 * (its module is the root) */
	XGPUB_H_SURFREF,	/* obj = CUsurfref, as TEXREF */
	XGPUB_H_USEROBJ,
	XGPUB_H_RESDESC,	/* obj = CUdevResourceDesc (the driver has no
				 * destroy: it lives as long as the worker) */
	XGPUB_H_GREENCTX,	/* obj = CUgreenCtx, extra = struct
				 * xgpub_green */
	XGPUB_H_NOTIFY,		/* obj = CUasyncCallbackHandle, extra =
				 * struct xgpub_notify (xgpub_op_ext.c) */
	XGPUB_H_LOGCB,		/* obj = CUlogsCallbackHandle, extra =
				 * struct xgpub_logcb (xgpub_op_logs.c) */
	XGPUB_H_NTYPES
};

struct xgpub_hentry {
	uint32_t gen;
	uint16_t type;
	void *obj;		/* the driver's handle */
	void *extra;		/* per-type data, freed with the handle */
};

struct xgpub_handles {
	struct xgpub_hentry *e;
	uint32_t n, cap;
	uint32_t free_head;	/* index + 1 of a free entry, 0: none */
	uint32_t count[XGPUB_H_NTYPES];
	/* index by (type, driver object) for xgpub_handle_find: open
	 * addressing, slots hold index + 1 (0 empty, UINT32_MAX removed);
	 * hobj[i]: the object entry i was indexed under.  No index (no
	 * memory for it): finds walk the table. */
	uint32_t *hslot;
	void **hobj;
	uint32_t hcap, hused;
	bool hbroken;
};

#define XGPUB_MAX_HANDLES (1u << 20)

/* 0 if the table is full */
xgpuif_handle_t xgpub_handle_new(struct xgpub_handles *t, int type,
				 void *obj, void *extra);
/* NULL unless h is live and of `type` */
struct xgpub_hentry *xgpub_handle_get(struct xgpub_handles *t,
				      xgpuif_handle_t h, int type);
/* drop h (its extra is freed); 0, or -1 if h was not live and of type */
int xgpub_handle_free(struct xgpub_handles *t, xgpuif_handle_t h, int type);
/* the live entry of `type` holding the driver's object obj, or NULL
 * (hashed: constant time) */
struct xgpub_hentry *xgpub_handle_find(struct xgpub_handles *t, int type,
				       const void *obj);
/* the handle of the live entry of `type` holding obj, or 0 */
xgpuif_handle_t xgpub_handle_named(struct xgpub_handles *t, int type,
				   const void *obj);
/* drop live entry e, as xgpub_handle_free does its handle */
void xgpub_handle_drop(struct xgpub_handles *t, struct xgpub_hentry *e);
/* the handle that names live entry e */
xgpuif_handle_t xgpub_handle_of(const struct xgpub_handles *t,
				const struct xgpub_hentry *e);
/* call fn on every live handle of `type` (fn may free that handle) */
void xgpub_handle_each(struct xgpub_handles *t, int type,
		       void (*fn)(struct xgpub_hentry *e, void *arg),
		       void *arg);
void xgpub_handles_destroy(struct xgpub_handles *t);

/* ---- dispatch control: the worker's half of the GPU scheduler ------------ */

struct xgpub_worker;
void xgpub_gate_init(struct xgpub_worker *w);
/* ops that put GPU work on a stream wait for the GPU (scheduler on) */
bool xgpub_gate_on(void);
/* publish the replies the worker holds back (before it waits) */
void xgpub_publish_held(struct xgpub_worker *w);
/* before such an op; returns the time its submission starts */
uint64_t xgpub_gate_enter(struct xgpub_worker *w);
/*
 * After such an op: submitted (on stream s, since t0) or not.  bound:
 * wait while too much work is in flight (false for a stream whose work may
 * wait for work not sent yet: a value wait)
 */
void xgpub_gate_done(struct xgpub_worker *w, bool submitted, CUstream s,
		     uint64_t t0, bool bound);
/* the worker's exit status when the daemon ended it for running past the
 * GPU time limit (SIGUSR2; the guest is told XGPUIF_FAULT_TIMEOUT) */
#define XGPUB_EXIT_LIMIT	7
void xgpub_gate_idle(struct xgpub_worker *w);
/*
 * Around a wait for the guest's GPU work (a context, stream or event
 * synchronize): work of a batch not yet closed by a mark counts as in
 * flight from the wait's start (the GPU time limit, utilization), as a
 * mark's work does.  After a query that found work not done: the open
 * batch gets its mark, so that work a guest polls for is seen as well.
 */
void xgpub_gate_wait(struct xgpub_worker *w, bool begin);
void xgpub_gate_not_ready(struct xgpub_worker *w);
/* the scheduler is off, or the daemon says the guest is alone on the GPU */
bool xgpub_gate_solo(void);
/* close the open batch now: before a stream may become captured or is
 * destroyed */
void xgpub_gate_mark(struct xgpub_worker *w);
/* close the open batch, wait for every mark, and drop the events kept
 * for reuse: before a context may end */
void xgpub_gate_drain(struct xgpub_worker *w);
void xgpub_gate_stop(struct xgpub_worker *w);
/*
 * While a mark of a guest whose turn is over is not done: whether the
 * completion thread asks again at once (true) or sleeps first.  It spins
 * for a bounded time from the first call (*since, 0 before it).
 */
bool xgpub_gate_drain_spin(uint64_t *since, uint64_t now);

/* ---- the worker ------------------------------------------------------------ */

struct xgpub_region {
	uint32_t id;
	uint8_t *va;
	uint64_t size;
	bool registered;	/* with cuMemHostRegister */
	/* a part of the data area (the network: kept by the guest for a
	 * graph), pinned with the area: never unregistered on its own */
	bool in_data;
	bool hostreg;		/* the guest's own memory (HOST_REGISTER) */
	bool graphed;		/* a graph's memcpy node copies it: kept
				 * mapped until the teardown */
};

#define XGPUB_MAX_REGIONS 4096u

struct xgpub_alloc {
	uint64_t dptr;
	uint64_t size;
};


struct xgpub_worker {
	struct xgpub_transport *t;
	struct xgpuif_back_ring ring;
	struct xgpub_driver *D;
	const struct xgpub_options *opt;
	struct xgpub_handles h;
	CUdevice dev;			/* the host device */
	CUcontext cur;			/* current in the dispatch thread */
	/* primary context: retained once, its guest handle fixed */
	CUcontext primary;
	xgpuif_handle_t primary_h;
	int primary_refs;
	/* host-memory regions, data area registration */
	struct xgpub_region regions[XGPUB_MAX_REGIONS];
	uint32_t nregions;
	uint64_t pinned;	/* bytes of host-memory regions (pin_quota) */
	/* regions the guest unregistered that a graph may still copy: kept
	 * mapped until the teardown (xgpub_op_graphnode.c) */
	struct xgpub_region *retired;
	uint32_t nretired, cap_retired;
	bool data_registered;
	/* device memory accounting for the quota */
	struct xgpub_alloc *allocs;
	uint32_t nallocs, cap_allocs;
	uint64_t mem_used;	/* allocations and the charges below */
	/* charges that are not allocations (xgpub_account.c): contexts and
	 * their limits, module globals */
	struct xgpub_ctxq *ctxq;
	uint32_t nctxq, cap_ctxq;
	struct xgpub_globq *globq;
	uint32_t nglobq, cap_globq;
	uint64_t images_seen;	/* handle counts when images were summed */
	/* the device's default memory pool, once asked for */
	CUmemoryPool default_pool;
	/* IPC mappings this guest opened (xgpub_op_ipc.c) */
	uint64_t *ipc_opened;
	uint32_t nipc, cap_ipc;
	/* shareable handles this guest exported (xgpub_op_share.c) */
	struct xgpub_share *shares;
	uint32_t nshares, cap_shares;
	/* the guest's address reservations (xgpub_op_vmm.c) */
	struct xgpub_alloc *vres;
	uint32_t nvres, cap_vres;
	/* the guest's host-function slots (xgpub_op_hostfn.c) */
	uint32_t hostfn_region, hostfn_nslots;
	uint32_t hostfn_ngraph;	/* slots after the guest's, the worker's */
	int hostfn_closing;	/* set at teardown: held callbacks return */
	/* the slots in the worker's own memory, the transport keeping
	 * the guest's copy in step (XGPUIF_HOSTFN_MIRRORED), else NULL */
	struct xgpuif_hostfn_slot *hostfn_local;
	/* streams that carried a value wait (cuStreamWaitValue*): their work
	 * is not gated (xgpub_state.c); wait_any: one was a special stream */
	CUstream waiting[64];
	uint32_t nwaiting;
	bool wait_any;
	/* events last recorded on such a stream: a stream made to wait for
	 * one (cuStreamWaitEvent) waits for the value too */
	CUevent wait_events[16];
	uint32_t nwait_events;
	/* stream captures begun and not ended */
	uint32_t captures;
	/* a capture took a memset or copy at an address the worker could
	 * not place: graphs are walked at instantiation from then on */
	bool unchecked_nodes;
	/* the CUdevResource values handed to the guest (xgpub_op_green.c) */
	struct xgpub_resources *resources;
	/* device ranges the driver named for recent copies' addresses
	 * (xgpub_ranges.c), forgotten at any request but a copy, memset
	 * or launch (xgpub_worker.c) */
	struct xgpub_drange {
		uint64_t base, size;
	} dranges[4];
	uint32_t ndranges, drange_next;
	/* statistics */
	uint64_t calls;
	/* why the channel was closed on a protocol error */
	char why[160];
};

/* serve one guest until it goes away; returns the process exit code */
int xgpub_worker_run(struct xgpub_transport *t,
		     const struct xgpub_options *opt);
/*
 * The pieces of xgpub_worker_run, also driven by the fuzz target
 * (tests/fuzz/fuzz_worker.c) on a worker whose t, opt, D and ring are
 * set: the driver's device and primary context (0, or -1 logged); serve
 * every request on the ring (0 when drained, -1 when the channel must
 * close, w->why saying why); free everything the guest left.
 */
int xgpub_worker_setup(struct xgpub_worker *w);
int xgpub_worker_serve(struct xgpub_worker *w);
void xgpub_worker_teardown(struct xgpub_worker *w);

/*
 * Enter the worker's sandbox (xgpub_sandbox.c) once what needs privilege
 * is open: the worker user of opt, no new privileges, not dumpable, the
 * seccomp filter.  0, or -1 (logged): the worker must not serve.
 */
int xgpub_sandbox_enter(const struct xgpub_options *opt, const char *who);

/*
 * Resolve a shared-memory reference from the guest: the address of
 * [ref->off, ref->off + ref->len) in the worker, or NULL if it is not
 * inside the named region (a protocol error).
 */
uint8_t *xgpub_memref(struct xgpub_worker *w, const struct xgpuif_memref *ref);
/* the region with this id, or NULL */
struct xgpub_region *xgpub_region_get(struct xgpub_worker *w, uint32_t id);

/*
 * Put the driver's new object (and what its entry keeps, extra, malloc'd)
 * in the handle table; if the table is full, release the object, free
 * extra and answer CUDA_ERROR_OUT_OF_MEMORY (xgpub_state.c).
 */
int xgpub_keep(struct xgpub_worker *w, int type, void *obj, void *extra,
	       xgpuif_handle_t *h);
/* the same for the driver's answer rc to making obj: unless 0, extra is
 * freed and rc answered */
int xgpub_keep_made(struct xgpub_worker *w, int rc, int type, void *obj,
		    void *extra, xgpuif_handle_t *h);
/* is VMEM handle h (the driver's) one the guest holds?  Then one more
 * reference of the guest's, its wire handle in *out (xgpub_state.c) */
bool xgpub_vmem_ref(struct xgpub_worker *w, CUmemGenericAllocationHandle h,
		    xgpuif_handle_t *out);
/* a new VMEM handle h of the guest's, charged size bytes, in the table,
 * its wire handle in *out; if it cannot be kept (no memory, the table
 * full), h released and CUDA_ERROR_OUT_OF_MEMORY (xgpub_state.c) */
int xgpub_vmem_keep(struct xgpub_worker *w, CUmemGenericAllocationHandle h,
		    uint64_t size, xgpuif_handle_t *out);
/* release the object behind live entry e and drop the entry, unless the
 * driver refused (its answer) */
int xgpub_release_drop(struct xgpub_worker *w, struct xgpub_hentry *e);

/* release the driver object behind live entry e (the entry stays) */
int xgpub_release(struct xgpub_worker *w, struct xgpub_hentry *e);
/*
 * The release of the kind `type` is fn, a handler file's (xgpub_release
 * calls it instead of its own): set at the worker's setup for the kinds
 * whose release needs that file's state (GREENCTX, VMEM).
 */
typedef int xgpub_release_fn(struct xgpub_worker *w, struct xgpub_hentry *e);
void xgpub_release_hook(int type, xgpub_release_fn *fn);

/*
 * What a handle of an object its owner frees keeps (a SUBARRAY's: the
 * mipmap or array whose release ends it; a green context's CTX: the
 * GREENCTX): the owner's handle.  xgpub_keep_owned puts obj in the table
 * so (nothing to release if it cannot: CUDA_ERROR_OUT_OF_MEMORY).
 */
struct xgpub_owner {
	xgpuif_handle_t owner;
};
int xgpub_keep_owned(struct xgpub_worker *w, int type, void *obj,
		     struct xgpub_hentry *owner, xgpuif_handle_t *h);
/*
 * An object the driver may answer again (an imported pool, an array's
 * level or plane): the handle the guest holds for it, else obj put in the
 * table as xgpub_keep_owned puts it (owner given) or as xgpub_keep does
 * (no owner, no extra).
 */
int xgpub_keep_named(struct xgpub_worker *w, int type, void *obj,
		     struct xgpub_hentry *owner, xgpuif_handle_t *h);

/* the driver's array behind an ARRAY or SUBARRAY handle, or NULL */
CUarray xgpub_array_of(struct xgpub_worker *w, xgpuif_handle_t h);
/*
 * Does [d, d + len) lie in device memory the driver knows in this worker
 * (the guest's allocations, pools, managed and mapped memory, registered
 * host memory, module globals, IPC mappings)?  0, or
 * CUDA_ERROR_INVALID_VALUE: never a guest's copy into the worker's own
 * memory (xgpub_ranges.c).  xgpub_dev_ranges_forget: after anything
 * that may have freed or unmapped memory.
 */
int xgpub_dev_span_ok(struct xgpub_worker *w, uint64_t d, uint64_t len);
void xgpub_dev_ranges_forget(struct xgpub_worker *w);
/* the same for rows rows of width bytes, pitch apart, the first at
 * d + row0 * pitch + x */
/* a memset of height rows of width elements of elem_size bytes (1, 2 or
 * 4), pitch bytes apart, from dst: 0, or CUDA_ERROR_INVALID_VALUE */
int xgpub_dev_memset_ok(struct xgpub_worker *w, uint64_t dst, uint64_t pitch,
			uint64_t width, uint64_t height, uint32_t elem_size);
int xgpub_dev_rows_ok(struct xgpub_worker *w, uint64_t d, uint64_t x,
		      uint64_t row0, uint64_t rows, uint64_t pitch,
		      uint64_t width);
/*
 * Calls the worker makes for itself during a guest's global-mode capture
 * (questions, pinning) must not touch it: *mode, RELAXED at first, is
 * swapped with the thread's capture mode while a capture is open; the
 * same call with the same variable puts the old mode back.
 */
void xgpub_capture_mode_swap(struct xgpub_worker *w, CUstreamCaptureMode *mode);
/*
 * rc from one of the checks above for work on stream s: a stream being
 * captured takes the work as a node whatever its addresses, as the
 * driver does (they are checked when the graph is instantiated): 0 then,
 * and w->unchecked_nodes set
 */
int xgpub_dev_captured(struct xgpub_worker *w, int rc, CUstream s);
/* the device memory graph g's memset and memcpy nodes name, its child
 * graphs' too: 0 or CUDA_ERROR_INVALID_VALUE */
int xgpub_graph_nodes_ok(struct xgpub_worker *w, CUgraph g);

/*
 * Green contexts (xgpub_op_green.c).  A GREENCTX handle keeps the
 * CUcontext cuCtxFromGreenCtx gave and the CTX handle naming it (0 until
 * asked); that CTX handle's extra is a struct xgpub_owner, which says it
 * is a green context's: never destroyed as a context, dropped with its
 * green context.
 */
struct xgpub_green {
	CUcontext ctx;
	xgpuif_handle_t ctx_h;
};
/* destroy the green context behind live entry e, with the streams and
 * events made in it and its CTX handle (the entry stays) */
int xgpub_green_release(struct xgpub_worker *w, struct xgpub_hentry *e);
/* forget the resources handed out (teardown) */
void xgpub_green_teardown(struct xgpub_worker *w);
/*
 * A handle for a new stream or event made in context ctx (destroyed with
 * it); without one, the driver object is destroyed and 0 returned
 * (xgpub_op_stream.c).
 */
xgpuif_handle_t xgpub_owned_handle(struct xgpub_worker *w, int type,
				   void *obj, CUcontext ctx);

/* an optional handle argument h of `type`: its driver object in *obj
 * (NULL for h 0); 0, or CUDA_ERROR_INVALID_HANDLE (xgpub_state.c) */
int xgpub_handle_opt(struct xgpub_worker *w, xgpuif_handle_t h, int type,
		     void **obj);
/* stream argument: 0/1/2 pass through, others through the table */
int xgpub_stream(struct xgpub_worker *w, xgpuif_handle_t h, CUstream *out);
/*
 * Destroy the streams and events created in context c and drop their
 * handles (c is being destroyed; xgpub_op_stream.c).  c must be current.
 */
void xgpub_ctx_drop_streams(struct xgpub_worker *w, CUcontext c);
/*
 * Green context context c is being destroyed: its streams are destroyed
 * and their handles dropped (the driver leaves them unusable); its events,
 * which are the primary's as everything a green context makes but its
 * streams, are counted as the primary's from now on (xgpub_op_stream.c).
 * c must be current.
 */
void xgpub_ctx_green_gone(struct xgpub_worker *w, CUcontext c);

/*
 * Room for one more element in an array of n (cap allocated, elem bytes
 * each): the array itself while n < cap, else the array reallocated to
 * twice cap (first when empty), *cap updated; NULL past max elements or
 * without memory, the array as it was (xgpub_handles.c).
 */
void *xgpub_grow(void *a, uint32_t n, uint32_t *cap, size_t elem,
		 uint32_t first, uint32_t max);
/*
 * One more element at the end of the array whose pointer is at ap (a
 * struct x **) and which holds *n, grown as xgpub_grow grows it: the new
 * element (not yet set), the array's pointer and *n updated; NULL as
 * xgpub_grow, nothing changed.
 */
void *xgpub_push(void *ap, uint32_t *n, uint32_t *cap, size_t elem,
		 uint32_t first, uint32_t max);

/* device memory accounting */
int xgpub_alloc_add(struct xgpub_worker *w, uint64_t dptr, uint64_t size);
int xgpub_alloc_del(struct xgpub_worker *w, uint64_t dptr);
/* coherent managed memory (xgpub_op_managed.c): an allocation freed; a
 * host function's block request in slot s (state FETCH or FLUSH), its
 * answer in s->mc_status (true: copied; the caller marks it DUE) */
void xgpub_managed_forget(uint64_t dptr);
bool xgpub_managed_hostfn(struct xgpub_worker *w,
			  struct xgpuif_hostfn_slot *s, uint32_t state);
/*
 * The managed allocation [base, base + size) holding __managed__
 * variables of the module or library root (its handle), which the guest
 * maps coherently: blocks of it are served until
 * xgpub_managed_vars_forget(root), when the module or library goes.  0,
 * or CUDA_ERROR_OUT_OF_MEMORY when the table is full.
 */
int xgpub_managed_var_note(xgpuif_handle_t root, uint64_t base,
			   uint64_t size);
void xgpub_managed_vars_forget(xgpuif_handle_t root);
/* context flags and limits a guest may set: 0 or the CUresult refusing */
int xgpub_ctx_flags_check(unsigned int flags);
int xgpub_ctx_limit_check(unsigned int limit);
/* device memory the guest holds: this worker's and its other workers' */
uint64_t xgpub_guest_mem_used(struct xgpub_worker *w);
/* host memory the guest pins: this worker's regions and its others' */
uint64_t xgpub_guest_pinned(struct xgpub_worker *w);
/* at teardown, its regions, memory and contexts freed: no longer its
 * guest's (the guest's next process may have them at once, not when the
 * daemon has reaped this worker) */
void xgpub_account_freed(struct xgpub_worker *w);
/* what an allocation of size bytes is charged (the driver's granularity) */
uint64_t xgpub_charge_size(uint64_t size);
bool xgpub_quota_allows(struct xgpub_worker *w, uint64_t size);
/* may the guest allocate size bytes (a pool's, a graph's, a physical
 * allocation)?  0, CUDA_ERROR_INVALID_VALUE for 0 bytes, or
 * CUDA_ERROR_OUT_OF_MEMORY past the quota */
int xgpub_alloc_check(struct xgpub_worker *w, uint64_t size);
/*
 * Charges that are not cuMemAlloc's (xgpub_account.c), all in mem_used and
 * so in the guest's cuMemGetInfo and NVML view:
 *   xgpub_charge/xgpub_uncharge  bytes already at the driver's granularity
 *   xgpub_array_charge  what an array (levels 0) or a mipmapped array of
 *       `levels` costs by its descriptor, rounded by xgpub_charge_size;
 *       UINT64_MAX when it overflows (the quota refuses it)
 *   xgpub_ctx_charge  a context the guest made: CUDA_ERROR_OUT_OF_MEMORY
 *       past the quota (force: charged anyway, the worker's primary)
 *   xgpub_ctx_uncharge  a context went: its charge and its limits'
 *   xgpub_ctx_limit_cost  what limit (STACK_SIZE, PRINTF_FIFO_SIZE,
 *       MALLOC_HEAP_SIZE) set to value costs, 0 for the others;
 *       xgpub_ctx_limit_check_quota may it be set in ctx (OOM if not), and
 *       xgpub_ctx_limit_set record it once the driver set it
 *   xgpub_global_charge  a module global of root at dptr, size bytes,
 *       charged once (OOM past the quota); xgpub_globals_uncharge those
 *       of root, at its unload
 */
void xgpub_charge(struct xgpub_worker *w, uint64_t bytes);
void xgpub_uncharge(struct xgpub_worker *w, uint64_t bytes);
uint64_t xgpub_array_charge(const CUDA_ARRAY3D_DESCRIPTOR *d,
			    unsigned int levels);
int xgpub_ctx_charge(struct xgpub_worker *w, CUcontext ctx, bool force);
/* the same, c bytes (a green context's, keyed by its CUgreenCtx) */
int xgpub_ctx_charge_n(struct xgpub_worker *w, CUcontext ctx, uint64_t c,
		       bool force);
void xgpub_ctx_uncharge(struct xgpub_worker *w, CUcontext ctx);
uint64_t xgpub_ctx_limit_cost(struct xgpub_worker *w, unsigned int limit,
			      uint64_t value);
int xgpub_ctx_limit_check_quota(struct xgpub_worker *w, CUcontext ctx,
				unsigned int limit, uint64_t cost);
void xgpub_ctx_limit_set(struct xgpub_worker *w, CUcontext ctx,
			 unsigned int limit, uint64_t cost);
int xgpub_global_charge(struct xgpub_worker *w, xgpuif_handle_t root,
			uint64_t dptr, uint64_t size);
void xgpub_globals_uncharge(struct xgpub_worker *w, xgpuif_handle_t root);
/* module image bytes of the guest's other workers (their status slots) */
uint64_t xgpub_guest_images_others(struct xgpub_worker *w);
/* publish this worker's image bytes if its blobs, modules or libraries
 * changed since the last time (xgpub_op_module.c) */
void xgpub_images_publish(struct xgpub_worker *w);
/* a launch's function and parameters, also for kernel nodes
 * (xgpub_op_launch.c) */
int xgpub_kernel_params(struct xgpub_worker *w,
			const struct xgpuif_launch_args *a,
			const uint8_t *params, void **obj, void ***kp,
			void ***ex);
/*
 * IPC (xgpub_op_ipc.c): give the guest a token for the driver's 64-byte
 * handle `real` of kind; take a guest's token back to the driver's
 * handle, CUDA_ERROR_INVALID_VALUE unless it names one of this guest's
 * IPC domain; and the teardown (this worker's exports go, the mappings it
 * opened are closed).
 */
int xgpub_ipc_give(struct xgpub_worker *w, int kind, const void *real,
		   struct xgpuif_ipc_handle *h);
int xgpub_ipc_take(struct xgpub_worker *w, int kind,
		   const struct xgpuif_ipc_handle *h, void *real);
void xgpub_ipc_teardown(struct xgpub_worker *w);
/*
 * Shareable handles (xgpub_op_share.c): obj (a VMEM's or POOL's driver
 * handle) is let go by the guest, its exported fds stay until the
 * teardown; was obj exported as a physical allocation?; the teardown
 * (registry entries dropped, fds closed).
 */
void xgpub_share_forget(struct xgpub_worker *w, void *obj);
bool xgpub_share_exported(struct xgpub_worker *w, void *obj);
void xgpub_share_teardown(struct xgpub_worker *w);
/* is dptr the start of an allocation of this guest's? (xgpub_account.c) */
bool xgpub_alloc_has(struct xgpub_worker *w, uint64_t dptr);
/* whether one allocation of the guest's holds [d, end) (end > d) */
bool xgpub_alloc_holds(struct xgpub_worker *w, uint64_t d, uint64_t end);

/* unmap and free the guest's reservations (teardown, xgpub_state.c) */
void xgpub_vmm_teardown(struct xgpub_worker *w);
/* release a VMEM handle's references (xgpub_op_vmm.c) */
int xgpub_vmm_release(struct xgpub_worker *w, struct xgpub_hentry *e);

/* a graph's host node or captured host function: the worker's driver
 * host function whose user data is the guest's function number; it runs
 * the guest's function through a graph slot (xgpub_op_hostfn.c) */
void CUDA_CB xgpub_graph_hostfn(void *user);

/* the handle of node n of graph g, one per node (xgpub_graph_handles.c) */
xgpuif_handle_t xgpub_node_handle(struct xgpub_worker *w, CUgraph g,
				  CUgraphNode n);
/* the handle of a graph owned by node `node` of graph `owner` (a child
 * graph, a conditional body), dropped with either, or the capture's
 * (owner NULL) */
xgpuif_handle_t xgpub_graph_handle(struct xgpub_worker *w, CUgraph g,
				   CUgraph owner, CUgraphNode node);

/*
 * A node's parameters from the wire, GRAPH_ADD_NODE's or GRAPH_NODE_SET's
 * body, for the node types both serve alike: a memset, copy, host or
 * batch memop node's, or the event or child graph a node names (obj).
 * 0, XGPUIF_ST_PROTO, the CUresult refusing, or CUDA_ERROR_NOT_SUPPORTED
 * for any other type (xgpub_op_graphnode.c).
 */
union xgpub_node_params {
	CUDA_MEMSET_NODE_PARAMS memset;
	CUDA_MEMCPY3D copy;
	CUDA_HOST_NODE_PARAMS host;
	CUDA_BATCH_MEM_OP_NODE_PARAMS memop;
	void *obj;	/* EVENT_RECORD, WAIT_EVENT: CUevent; GRAPH: CUgraph */
};
int xgpub_node_params(struct xgpub_worker *w, unsigned int type,
		      const uint8_t *p, uint32_t len,
		      union xgpub_node_params *u);
/* add a memory allocation node (its address in *dptr), charged */
int xgpub_node_alloc(struct xgpub_worker *w, CUgraph g, CUgraphNode *node,
		     const CUgraphNode *deps, uint32_t nd, const uint8_t *p,
		     uint32_t len, uint64_t *dptr);
/* a node is going: drop the handles of the graphs it owns (a child
 * graph, a conditional node's bodies) with it (xgpub_graph_handles.c) */
void xgpub_node_forget_children(struct xgpub_worker *w, CUgraphNode n);

/*
 * A user object (xgpub_op_graphmisc.c): the handle's object, freed when
 * the handle goes after the destructor ran (while a graph holds the user
 * object the driver may run it at any time, after the channel too).  The
 * destructor runs the guest's function number fnid, then marks it dead.
 */
struct xgpub_uobj {
	CUuserObject uo;
	uint64_t fnid;
	uint64_t refs;		/* the guest's own references */
	int dead;		/* the driver destroyed it (atomic) */
};
/* release the guest's references to every user object (teardown) */
void xgpub_uobj_teardown(struct xgpub_worker *w);

/* a launch (or kernel node) attribute whose value is numbers or a device
 * address (xgpub_op_launch.c) */
bool xgpub_attr_plain(uint32_t id);

/* what a borrowed GRAPH handle keeps (a child graph): its owner; the
 * guest's own graphs keep nothing */
struct xgpub_graph_extra {
	CUgraph owner;
	CUgraphNode node;
};

/* what a GNODE handle keeps: the graph that owns the node */
struct xgpub_node_extra {
	CUgraph graph;
};

/* what a LINK handle keeps: the linked image, the driver's (xgpub_op_link.c) */
struct xgpub_link {
	void *cubin;
	size_t size;
};

/* a shareable fd this worker exported and registered (xgpub_op_share.c) */
struct xgpub_share {
	void *obj;		/* the driver's VMEM or POOL handle, or NULL */
	int kind;		/* XGPUB_IPC_VMM_FD or XGPUB_IPC_POOL_FD */
	int fd;
	uint8_t token[16];
};

/* what a VMEM handle keeps */
struct xgpub_vmem {
	uint64_t size;
	uint32_t refs;		/* the guest's: create, then each retain */
};
/* a value wait was put on stream s / does stream s carry one? */
void xgpub_note_value_wait(struct xgpub_worker *w, CUstream s);
bool xgpub_waits_on_value(struct xgpub_worker *w, CUstream s);
/* the options with the caps set at run time for a local or network
 * client's key (`xgpu config set local:NAME ...`), asked of the daemon
 * once the guest said its name; opt itself for a domain or none set */
const struct xgpub_options *xgpub_client_caps(struct xgpub_worker *w,
					      const struct xgpub_options *opt);
/* event ev was recorded on stream s / stream s was made to wait for ev */
void xgpub_note_event_record(struct xgpub_worker *w, CUevent ev, CUstream s);
void xgpub_note_event_wait(struct xgpub_worker *w, CUstream s, CUevent ev);
/* run the guest's function number id for an async notification of type
 * and info through a graph slot; returns once the guest ran it, or the
 * channel closes (xgpub_op_hostfn.c) */
void xgpub_hostfn_notify(struct xgpub_worker *w, uint64_t id, uint32_t type,
			 uint64_t info);
/*
 * The count memory operations of a batch, len bytes at p from the guest,
 * into ops (XGPUIF_MAX_MEMOPS of them), their driver-private fields
 * cleared and their addresses checked (device memory of the guest's);
 * *waits: one waits for a value.  0, XGPUIF_ST_PROTO or the CUresult
 * refusing (xgpub_op_stream.c).
 */
int xgpub_memops_in(struct xgpub_worker *w, CUstreamBatchMemOpParams *ops,
		    uint32_t count, const uint8_t *p, uint32_t len, bool *waits);
/* is stream s being captured? (only asked while a capture is open) */
bool xgpub_capturing(struct xgpub_worker *w, CUstream s);
/* cuStreamQuery of each of the guest's streams of context c until one
 * is not done (its answer), else CUDA_SUCCESS (xgpub_op_stream.c) */
int xgpub_ctx_streams_query(struct xgpub_worker *w, CUcontext c);

/*
 * Synchronizes answered by the GPU (xgpub_fence.c): whether an image
 * loaded may print (xgpub_print_scan.c; once one may, no synchronize is
 * answered that way again in this worker); the streams a context's work
 * went to since its last synchronize (after each request that named a
 * stream; a context synchronize forgets them; a stream or context that
 * ends makes them unknown).
 */
bool xgpub_image_may_print(const uint8_t *p, uint64_t size);
void xgpub_fence_note_image(const uint8_t *p, uint64_t size);
void xgpub_fence_note_stream(struct xgpub_worker *w, CUstream s);
void xgpub_fence_ctx_synced(struct xgpub_worker *w);
void xgpub_fence_forget(void);
/* the driver does something at a synchronize it must see (memory pools
 * release what they keep past their threshold): no synchronize is
 * answered by the GPU alone again in this worker */
void xgpub_fence_stop(const char *why);
/*
 * A blocking copy that the guest lets the GPU answer
 * (XGPUIF_CF_FENCE): queued on s with the write of value after it where
 * the GPU may answer (*done true: the copy is the driver's, the reply
 * says XGPUIF_SF_FENCED; xgpub_fence_take_reply says so once), else
 * nothing done (*done false: copy it as a blocking copy).
 */
int xgpub_fence_copy(struct xgpub_worker *w, bool to_device, void *host,
		     uint64_t dptr, size_t len, CUstream s, uint32_t value,
		     bool *done);
bool xgpub_fence_take_reply(void);
/* the device's default pool, which no guest destroys (xgpub_state.c) */
bool xgpub_pool_is_default(struct xgpub_worker *w, void *pool);

/* ---- device output: the worker's stdout (xgpub_output.c) -------------- */

/*
 * A bounded FIFO of bytes: what does not fit is dropped (the newest
 * bytes) and counted.  Its memory comes with the first byte kept.
 */
struct xgpub_outbuf {
	uint8_t *p;
	size_t cap;
	size_t head;		/* the oldest byte */
	size_t len;
	uint64_t dropped;	/* bytes refused since it was last cleared */
};

void xgpub_outbuf_init(struct xgpub_outbuf *b, size_t cap);
void xgpub_outbuf_free(struct xgpub_outbuf *b);
/* append what fits of src[0..n); returns the bytes kept */
size_t xgpub_outbuf_put(struct xgpub_outbuf *b, const void *src, size_t n);
/* move up to max of the oldest bytes to dst; returns how many */
size_t xgpub_outbuf_take(struct xgpub_outbuf *b, void *dst, size_t max);

/* device output a worker keeps for its guest at most */
#define XGPUB_OUTPUT_MAX	(1u << 20)

/*
 * Make stdout a stream, and fd 1 a pipe, whose bytes go into a buffer of
 * cap bytes (the stream's at once, the pipe's through a drain thread);
 * called once, at the worker's start, before the driver is loaded.  0,
 * or -errno (fd 1 is then /dev/null, or its pipe is read only at
 * DEVICE_OUTPUT).
 */
int xgpub_output_start(size_t cap);
/* output (or news of lost output) waits for the guest */
bool xgpub_output_waiting(void);
/* messages of the driver's error log wait for the guest (xgpub_op_logs.c) */
bool xgpub_logs_waiting(void);

/* ---- dispatch: the table is generated from shared-ring/xgpu_calls.def --- */

/* the bytes of a request after its argument struct (ops marked VAR) */
struct xgpub_tail {
	const uint8_t *p;
	uint32_t len;
};

/* room for the bytes of a reply after its reply struct (VAR replies):
 * the handler writes up to cap bytes at p and says how many in len */
struct xgpub_rtail {
	uint8_t *p;
	uint32_t cap;
	uint32_t len;
};

/* the constant of the symbol ops' rows (xgpu_calls.def, BY(...)): where
 * xgpub_h_get_fn and xgpub_h_get_global look (xgpub_op_symbol.c) */
enum xgpub_sym {
	XGPUB_SYM_MODULE,	/* a module's function or global */
	XGPUB_SYM_LIBRARY,	/* a library's kernel or global */
	XGPUB_SYM_MANAGED,	/* a library's __managed__ variable */
};

/* how an op may be sent (xgpuif_request.flags & XGPUIF_RF_POSTED) */
#define XGPUB_OPM_SYNC		0x1u
#define XGPUB_OPM_POSTED	0x2u

struct xgpub_op {
	const char *name;
	/* copy the arguments out of `in`, run the handler, write the reply
	 * (at most cap bytes, checked to hold the reply struct) */
	int (*call)(struct xgpub_worker *w, const uint8_t *in, uint32_t len,
		    uint8_t *out, uint32_t cap, uint32_t *rlen);
	uint32_t args_size;	/* a fixed request's exact size; the least
				 * a VAR one carries */
	uint32_t reply_size;	/* the reply struct */
	uint8_t modes;		/* XGPUB_OPM_* allowed */
	uint8_t var_args;
	uint8_t work;		/* puts GPU work on its stream: gated */
	int32_t stream_off;	/* of the stream handle in the args, or -1 */
};

extern const struct xgpub_op xgpub_ops[XGPUIF_OP_MAX];

/* the device's name (len bytes, NUL-terminated), memory and UUID (zeros
 * where the driver has none, unless need_uuid: then its error) */
int xgpub_device_ident(struct xgpub_worker *w, char *name, size_t len,
		       uint64_t *total, uint8_t uuid[16], bool need_uuid);

/* the worker's next poll before sleeping (us), from the gap (us) the
 * guest left after the last one slept (UINT64_MAX: none came); see
 * xgpub_worker.c */
unsigned int xgpub_spin_adapt(unsigned int cur, uint64_t gap_us,
			      unsigned int max_us);

/* the handlers' prototypes, xgpub_h_<NAME> */
#include "xgpub_calls.h"

#endif /* XGPUB_WORKER_H */
