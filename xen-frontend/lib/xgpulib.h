/* SPDX-License-Identifier: MIT */
/*
 * xgpulib.h: the guest library's (libcuda.so.1) objects as the CUDA API
 * sees them: devices, contexts, streams, events, functions, host-memory
 * regions.  Private to xen-frontend/lib; the library exports only the
 * names of its version script (libcuda.map).
 *
 * Layers, each calling only those below it:
 *   the API entry points (xgpulib_api_*.c, xgpulib_dev.c, xgpulib_init.c);
 *     among them an entry point may call another file's entry points or
 *     helpers, never in a circle
 *   the objects the entry points share, calling no entry point:
 *     xgpulib_func.c        functions and kernels, their caches
 *     xgpulib_launch.c      every launch, its parameters flattened
 *     xgpulib_graphobj.c    objects around worker handles, events by handle
 *     xgpulib_graphwire.c   graph nodes' parameters on the wire
 *     xgpulib_array.c       arrays and mipmapped arrays
 *     xgpulib_managed_rec.c managed memory's advice and prefetches
 *     xgpulib_hostmem.c     host-memory regions made and given back
 *   xgpulib_copy.c          staged and zero-copy transfers, host regions
 *   xgpulib_calls.c         typed stubs, generated from xgpu_calls.def
 *   xgpulib_rpc.c           the process's channel, the current context
 *   xgpulib_mco.c           coherent managed memory: faults, write-back
 *   xgpulib_output.c        device printf output to stdout
 *   xgpulib_current.c       the per-thread context stack
 *   xgpulib_chan.c          the ring: requests, replies, waiting
 *   xgpulib_local.c/_xen.c  transports
 *   xgpulib_env.c           settings and messages
 *   xgpulib_vec.c           growing arrays (a leaf: calls nothing here)
 *
 * Guest-side objects (contexts, functions, streams...) are immutable after
 * creation except where their struct says which lock protects a field.
 */
#ifndef XGPULIB_H
#define XGPULIB_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the cu* entry points we define are the library's exports (the rest of
 * the library is built -fvisibility=hidden) */
#pragma GCC visibility push(default)
#include <cuda.h>
#pragma GCC visibility pop

#include "xgpuif_ring.h"

#define XGPULIB_HIDDEN __attribute__((visibility("hidden")))

#include "xgpulib_env.h"
#include "xgpulib_rpc.h"

#include "xgpulib_dev.h"
#include "xgpulib_current.h"

/*
 * The checks most entry points make first, in the driver's order: cuInit
 * ran (CUDA_ERROR_NOT_INITIALIZED), the pointers the call needs are given
 * (CUDA_ERROR_INVALID_VALUE), its handle is one of ours
 * (CUDA_ERROR_INVALID_HANDLE).  Returns the error from the caller.
 */
#define XGPULIB_CHECK_ARGS(args_ok, handle_ok)				\
	do {								\
		if (xgpulib_check_init())				\
			return CUDA_ERROR_NOT_INITIALIZED;		\
		if (!(args_ok))						\
			return CUDA_ERROR_INVALID_VALUE;		\
		if (!(handle_ok))					\
			return CUDA_ERROR_INVALID_HANDLE;		\
	} while (0)

/*
 * The end of a call that made a worker object (wire handle remote): obj
 * is the guest object made for it, NULL when there was no memory; then
 * the worker's object is destroyed again and the call fails with
 * CUDA_ERROR_OUT_OF_MEMORY.  The callers store obj in the program's
 * output first (NULL, then, on that failure).
 */
static inline CUresult xgpulib_kept(const void *obj, uint64_t remote,
				    CUresult (*destroy)(
					    const struct xgpuif_handle_args *))
{
	struct xgpuif_handle_args h = { remote };

	if (obj)
		return CUDA_SUCCESS;
	destroy(&h);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* the first checks of a query: its output given, then cuInit ran */
static inline CUresult xgpulib_query_arg(bool out_ok)
{
	if (!out_ok)
		return CUDA_ERROR_INVALID_VALUE;
	return xgpulib_check_init();
}

/* ---- contexts ---------------------------------------------------------- */

#define XGPULIB_CTX_MAGIC 0x78637478u	/* "xctx" */

struct CUctx_st {
	uint32_t magic;
	int primary;
	CUdevice dev;
	uint64_t remote;	/* backend handle; 0 until retained */
	unsigned int flags;
	int refcount;		/* primary: retains; guarded by ctx_mu */
	CUgreenCtx green;	/* the green context this one is of
				 * (cuCtxFromGreenCtx), or NULL */
};

/* primary context of a device (stable storage, not retained) */
struct CUctx_st *xgpulib_primary(CUdevice dev);
/* validate a guest context handle; NULL if it is not one of ours */
struct CUctx_st *xgpulib_ctx_check(CUcontext ctx);
/*
 * The calling thread's current context (*out, once cuInit ran), validated:
 * INVALID_CONTEXT when there is none, CONTEXT_IS_DESTROYED when it was
 * destroyed (it stays current to other threads, as in CUDA).
 */
CUresult xgpulib_ctx_current(struct CUctx_st **out);
/*
 * The wire handle of a context argument (*remote; NULL: the current
 * context), the context itself in *out if out is not NULL;
 * INVALID_CONTEXT for a primary context nobody retained.
 */
CUresult xgpulib_ctx_remote_of(CUcontext ctx, struct CUctx_st **out,
			       uint64_t *remote);

/*
 * Green contexts (xgpulib_api_green.c): the context of green context g,
 * wire handle remote, on device dev (xgpulib_api_ctx.c makes it; it
 * lives until g is destroyed, then is forgotten as a destroyed context
 * is); NULL when out of memory.
 */
struct CUctx_st *xgpulib_ctx_green_new(CUdevice dev, uint64_t remote,
				       CUgreenCtx g);
void xgpulib_ctx_green_gone(struct CUctx_st *c);
/* green context g's context, made on first use (CUresult) */
CUresult xgpulib_green_ctx(CUgreenCtx g, CUcontext *ctx);
/* the wire handle of green context g (checked by xgpulib_green_ctx) */
uint64_t xgpulib_green_remote(CUgreenCtx g);

/* ---- streams and events --------------------------------------------------- */

#define XGPULIB_STREAM_MAGIC 0x78737472u	/* "xstr" */
#define XGPULIB_EVENT_MAGIC  0x78657674u	/* "xevt" */

struct CUstream_st {
	uint32_t magic;
	unsigned int flags;
	int priority;
	CUcontext ctx;
	uint64_t remote;
};

struct CUevent_st {
	uint32_t magic;
	unsigned int flags;
	CUcontext ctx;
	uint64_t remote;
};

/*
 * Wire handle of a stream argument.  NULL means the legacy stream, or the
 * per-thread stream in the _ptds/_ptsz entry points (ptds != 0).
 */
uint64_t xgpulib_stream_remote(CUstream s, int ptds);
/* check a stream argument (cuInit ran, a stream of ours or a special one)
 * and give its wire handle; CUresult */
CUresult xgpulib_stream_arg(CUstream s, int ptds, uint64_t *remote);
/*
 * Wait for the work of the stream with remote handle h.  Once this
 * process has sent a value wait (cuStreamWaitValue*, a batch with one),
 * by asking (STREAM_QUERY) with a growing sleep instead of one
 * synchronous request: the channel serves one request at a time, and the
 * waited-for work may need another thread's later call (the write) to
 * finish.
 */
CUresult xgpulib_sync_remote_stream(uint64_t h);
/* the same, never answered by the GPU alone (xgpulib_fence.c) */
CUresult xgpulib_sync_remote_stream_plain(uint64_t h);
/*
 * A synchronize answered by the GPU where the backend can
 * (xgpulib_fence.c): of the current context (ctx_wide) or the stream with
 * remote handle `stream`.  *answered false: ask the plain op.
 * xgpulib_fence_setup: at connect, keeps the data area's last page for it.
 */
struct xgpulib_transport;
CUresult xgpulib_fence_sync(bool ctx_wide, uint64_t stream, bool *answered);
/*
 * The same for a request of another op that carries the value
 * (XGPUIF_CF_FENCE): begin takes the word (false: not to be had now) and
 * gives the value; after the reply, wait if it says XGPUIF_SF_FENCED
 * (false: the value did not come, ask a plain synchronize), else end
 * (by_worker: the worker did the work as the plain op).
 */
bool xgpulib_fence_begin(uint32_t *value);
bool xgpulib_fence_wait(uint32_t value);
void xgpulib_fence_end(bool by_worker);
void xgpulib_fence_setup(struct xgpulib_transport *t);
/* cuCtxSynchronize of the current context (answered by the GPU where it
 * can be) */
CUresult xgpulib_sync_ctx(void);
/* a value wait was sent: synchronize by asking from now on */
void xgpulib_note_value_wait(void);
/* xgpulib_note_value_wait if a memory operation of ops waits (streams,
 * graph nodes) */
void xgpulib_note_memops(const CUstreamBatchMemOpParams *ops,
			 unsigned int count);
/* the same for a call whose outputs' places are checked first (out_ok:
 * all given, else CUDA_ERROR_INVALID_VALUE), as the driver does */
CUresult xgpulib_stream_out_arg(CUstream s, int ptds, bool out_ok,
				uint64_t *remote);

/* the guest's table of its device allocations (xgpulib_api_mem.c) */
void xgpulib_dalloc_add(uint64_t dptr, uint64_t size);
void xgpulib_dalloc_del(uint64_t dptr);
/* the end of a call that allocated size bytes of device memory at dptr:
 * when rc is CUDA_SUCCESS, the program's (*out) and in the table; rc */
CUresult xgpulib_dalloc_out(CUresult rc, uint64_t dptr, uint64_t size,
			    CUdeviceptr *out);
/*
 * Shareable handles (xgpulib_api_vmm.c): the program's handle is a POSIX
 * fd for the worker's 64 bytes (a sealed memfd holding them).  A
 * shareable handle type other than a POSIX fd is CUDA_ERROR_NOT_SUPPORTED
 * (xgpulib_share_type, for call).  xgpulib_share_export: after cuInit's
 * and args_ok's checks and the type's, export op of the worker's handle
 * (with flags), the fd in *(int *)out (CUDA_ERROR_OUT_OF_MEMORY when none
 * could be made).  xgpulib_share_import: the same checks, then the 64
 * bytes back from fd *(int *)os_handle: CUDA_ERROR_INVALID_VALUE for an
 * fd that is not one of ours.
 */
typedef CUresult (*xgpulib_export_fn)(
	const struct xgpuif_share_export_args *a, struct xgpuif_ipc_handle *r);
CUresult xgpulib_share_export(const char *call, xgpulib_export_fn op,
			      uint64_t handle, unsigned long long flags,
			      CUmemAllocationHandleType t, bool args_ok,
			      void *out);
CUresult xgpulib_share_import(const char *call, bool args_ok,
			      CUmemAllocationHandleType t, void *os_handle,
			      struct xgpuif_ipc_handle *h);
CUresult xgpulib_share_type(const char *call, CUmemAllocationHandleType t);
/* in a forked child: registered memory becomes the child's own again */
void xgpulib_hostreg_forked(void);

/* ---- host memory regions (guest pinned memory) -------------------------- */

struct xgpulib_region {
	uint32_t id;
	unsigned int flags;
	uint8_t *va;
	size_t size;
	uint64_t dptr;		/* device pointer of the worker's mapping */
	bool same_va;
	bool managed;		/* cuMemAllocManaged's (xgpulib_api_managed.c) */
	bool coherent;		/* managed, in coherent mode (xgpulib_mco.h):
				 * device memory to copies, never host memory;
				 * va == dptr */
	bool hostreg;		/* the program's own pages, cuMemHostRegister */
	bool var;		/* coherent: the pages of a module's or
				 * library's __managed__ variables (not
				 * the program's to free) */
	void *alias;		/* coherent on the network: the pages are
				 * this process's alone (the worker never
				 * heard of the region), mapped a second
				 * time here (xgpulib_mco.h) */
};

/* is p device memory? (known allocations first, then the worker) */
bool xgpulib_is_device(uint64_t p);

/*
 * Find the region holding [p, p + len); NULL when any byte of it lies
 * outside every region.  *off is p's offset in the region.  Coherent
 * managed memory is not host memory to copies: only _any finds it.
 */
const struct xgpulib_region *xgpulib_region_find(const void *p, size_t len,
						  uint64_t *off);
const struct xgpulib_region *xgpulib_region_find_any(const void *p,
						      size_t len,
						      uint64_t *off);
/* does [p, p + len) lie in coherent managed memory (one allocation)? */
bool xgpulib_region_coherent(const void *p, size_t len);
/* the same, with the worker's address of p in *dptr (NULL: not wanted) */
bool xgpulib_region_coherent_at(const void *p, size_t len, uint64_t *dptr);

/* the address of region id in this process, NULL if it is gone */
uint8_t *xgpulib_region_va(uint32_t id);

/* mark region id as managed memory */
void xgpulib_region_set_managed(uint32_t id);
/* cuMemFree of managed memory r (xgpulib_api_managed.c) */
CUresult xgpulib_managed_free(const struct xgpulib_region *r);
/*
 * __managed__ variables (xgpulib_api_managed.c): map the worker's managed
 * allocation [base, base + size) holding variables of root (a module or
 * library) coherently at the same address, once per allocation (0, or
 * the CUresult refusing the lookup); unmap all of root's when it goes.
 */
CUresult xgpulib_managed_var_map(const void *root, uint64_t base,
				 uint64_t size);
void xgpulib_managed_vars_unmap(const void *root);

/* ---- arrays (xgpulib_array.c) ------------------------------------------ */

/* the wire handle of an array of ours, 0 if a is not one */
uint64_t xgpulib_array_remote(CUarray a);
/* the descriptor of an array of ours, NULL if a is not one */
const CUDA_ARRAY3D_DESCRIPTOR *xgpulib_array_desc(CUarray a);
/* the live array of wire handle remote, or NULL */
CUarray xgpulib_array_by_remote(uint64_t remote);
/* bytes per element of an array of ours (channels included); 0 if a is
 * not one, or of a packed, compressed or planar format */
size_t xgpulib_array_elem_bytes(CUarray a);
/* a new guest array for wire handle remote; owner (a mipmap or an array)
 * frees it, or NULL for one of the program's own; NULL when out of
 * memory */
CUarray xgpulib_array_wrap(uint64_t remote, const CUDA_ARRAY3D_DESCRIPTOR *d,
			   const void *owner);
/* the wire handle of a mipmapped array of ours, 0 if m is not one */
uint64_t xgpulib_mipmap_remote(CUmipmappedArray m);
/* the live mipmapped array of wire handle remote, or NULL */
CUmipmappedArray xgpulib_mipmap_by_remote(uint64_t remote);
/* a new guest mipmapped array for wire handle remote; NULL when out of
 * memory */
CUmipmappedArray xgpulib_mipmap_wrap(uint64_t remote);
/* forget obj, an array or mipmapped array of ours (destroyed), and the
 * arrays it owns */
void xgpulib_arrays_forget(const void *obj);

/* ---- functions and kernels ------------------------------------------------ */

#define XGPULIB_FUNC_MAGIC 0x7866756eu	/* "xfun" */

/*
 * CUfunction and CUkernel both point at one of these (cudart passes a
 * CUkernel where a CUfunction is expected, so the two share a layout).
 */
struct xgpulib_func {
	uint32_t magic;
	uint32_t kind;		/* XGPUIF_FN_* */
	uint64_t remote;
	char *name;
	uint32_t nparams;	/* XGPUIF_PARAMS_UNKNOWN if unknown */
	uint32_t param_bytes;
	struct xgpuif_param *params;
	/* attribute cache, per device for kernels; guarded by attr_mu */
	pthread_mutex_t attr_mu;
	bool attrs_valid;
	struct xgpuif_func_attrs_reply attrs;
	/* occupancy answers (cuOccupancyMaxActiveBlocksPerMultiprocessor*,
	 * asked before many launches), valid while their generation is
	 * xgpulib_occ_gen; guarded by attr_mu */
	struct {
		uint64_t gen;
		uint64_t dyn_smem;
		uint32_t block_size, flags;
		int32_t value;
	} occ[4];
	unsigned int occ_next;
	CUmodule module;	/* owning module (functions) */
	CUlibrary library;	/* owning library (kernels) */
};

/* the primary contexts' state (flags) must be asked again */
void xgpulib_prim_state_forget(void);

/* the function objects (xgpulib_func.c) */

/* NULL if f is not one of ours */
struct xgpulib_func *xgpulib_func_check(const void *f);

/* functions and kernels by wire handle: note one made (live) or freed;
 * the one of (remote, kind), NULL if none */
void xgpulib_func_note(struct xgpulib_func *f, bool live);
struct xgpulib_func *xgpulib_func_by_remote(uint64_t remote, uint32_t kind);

/* attribute `attr` (CUfunction_attribute) of a function or kernel, from
 * its cache (filled by one FUNC_GET_ATTRIBUTES round trip) */
CUresult xgpulib_func_attr(struct xgpulib_func *f, int attr, int *value);

/* occupancy answers of every function are stale (a function's or the
 * context's cache configuration or shared memory limit changed) */
void xgpulib_occupancy_forget(void);
/* the generation of the occupancy answers now; f's answer for (bs, smem,
 * flags) of this generation in *out (true), and one to keep, asked in
 * generation gen */
uint64_t xgpulib_occ_gen(void);
bool xgpulib_occ_cached(struct xgpulib_func *f, uint32_t bs, uint64_t smem,
			uint32_t flags, int *out);
void xgpulib_occ_keep(struct xgpulib_func *f, uint64_t gen, uint32_t bs,
		      uint64_t smem, uint32_t flags, int32_t value);
/* forget the launch state of before CUDA 4 of f (it is being freed;
 * xgpulib_api_legacy.c) */
void xgpulib_legacy_drop(const struct xgpulib_func *f);
/* a launch (xgpulib_api_launch.c), leaving that state as it is */
CUresult xgpulib_launch_config(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra, int ptsz);

#endif /* XGPULIB_H */
