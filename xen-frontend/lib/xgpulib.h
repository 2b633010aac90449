/* SPDX-License-Identifier: MIT */
/*
 * xgpulib.h: internals of the guest library (libcuda.so.1).  Private to
 * xen-frontend/lib; nothing here is exported (-fvisibility=hidden and the
 * version script).
 *
 * Locking: one mutex per channel (chan->mu) protects the ring indices,
 * the list of waiters and the deferred error.  A thread that must block
 * waits either as the single "poller" (which sleeps on the transport) or
 * on chan->cv, which the poller broadcasts after reaping replies.
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

/* ---- logging ----------------------------------------------------------- */

extern int xgpulib_debug;	/* XGPU_DEBUG set */
void xgpulib_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xgpulib_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- transports -------------------------------------------------------- */

struct xgpulib_transport;

struct xgpulib_transport_ops {
	const char *name;
	/* kick the backend: new requests are on the ring */
	int (*notify)(struct xgpulib_transport *t);
	/*
	 * Sleep until the backend kicks us, timeout_ms passes (-1: forever)
	 * or the backend is gone.  0: kicked or timed out; -EPIPE: gone.
	 */
	int (*wait)(struct xgpulib_transport *t, int timeout_ms);
	/*
	 * Memory to share with the worker as host-memory region `region`:
	 * returns its address; the transport hands its pages to the backend
	 * (the caller then sends XGPUIF_OP_HOSTMEM_REGISTER with `dir`).
	 */
	int (*hostmem_alloc)(struct xgpulib_transport *t, uint32_t region,
			     size_t size, void **va, struct xgpuif_memref *dir);
	void (*hostmem_free)(struct xgpulib_transport *t, uint32_t region,
			     void *va, size_t size);
	void (*close)(struct xgpulib_transport *t);
};

struct xgpulib_transport {
	const struct xgpulib_transport_ops *ops;
	struct xgpuif_sring *sring;
	unsigned int ring_order;
	uint8_t *data;		/* data area */
	size_t data_bytes;
	char where[256];	/* what we connected to, for messages */
};

/* local transport: Unix socket at `path`; 0 or -errno, *msg says why */
int xgpulib_local_connect(const char *path, struct xgpulib_transport **out,
			  char *msg, size_t msglen);

/* shared by the transports: a numeric environment setting, and this
 * process's name (/proc/self/comm), for the backend's logs */
unsigned int xgpulib_env_uint(const char *name, unsigned int def);
void xgpulib_proc_name(char *buf, size_t len);

/* Xen transport: the device node of xen-gpufront.ko; 0 or -errno */
int xgpulib_xen_connect(const char *dev, struct xgpulib_transport **out,
			char *msg, size_t msglen);

/* ---- the channel ------------------------------------------------------- */

struct xgpulib_waiter {
	uint64_t id;
	uint16_t nslots;
	bool done;
	int32_t status;
	void *reply;		/* caller's buffer */
	uint32_t reply_cap;
	uint32_t reply_len;
	struct xgpulib_waiter *next;
};

struct xgpulib_chan {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct xgpuif_front_ring ring;
	struct xgpulib_transport *t;
	uint64_t next_id;
	struct xgpulib_waiter *waiters;	/* outstanding SYNC requests */
	bool poller;			/* a thread sleeps on t */
	bool dead;			/* backend gone or protocol broken */
	CUresult deferred;		/* first error of a posted request */
	unsigned int spin_us;		/* spin before sleeping */
};

extern struct xgpulib_chan *xgpulib_ch;	/* set by a successful cuInit */

/*
 * Synchronous call: send op with the gathered payload, wait for the reply.
 * A deferred error of an earlier posted request is returned instead of a
 * success, once.  reply may be NULL when reply_cap is 0.
 */
CUresult xgpulib_call(uint16_t op, const struct xgpuif_iov *iov, int niov,
		      void *reply, uint32_t reply_cap, uint32_t *reply_len);

/* Posted call: returns once the request is on the ring. */
CUresult xgpulib_post(uint16_t op, const struct xgpuif_iov *iov, int niov);

/*
 * Split form for pipelining: submit a SYNC request now, wait for it
 * later.  The waiter must stay valid until xgpulib_wait returns.
 */
CUresult xgpulib_submit(uint16_t op, const struct xgpuif_iov *iov, int niov,
			struct xgpulib_waiter *w, void *reply,
			uint32_t reply_cap);
CUresult xgpulib_wait(struct xgpulib_waiter *w);

/* Return (and clear) the deferred error of posted requests. */
CUresult xgpulib_take_deferred(void);

/* one-struct helpers */
static inline CUresult xgpulib_call1(uint16_t op, const void *args,
				     uint32_t alen, void *reply,
				     uint32_t rcap)
{
	struct xgpuif_iov iov = { args, alen };

	return xgpulib_call(op, &iov, alen ? 1 : 0, reply, rcap, NULL);
}

static inline CUresult xgpulib_post1(uint16_t op, const void *args,
				     uint32_t alen)
{
	struct xgpuif_iov iov = { args, alen };

	return xgpulib_post(op, &iov, 1);
}

/*
 * The data area is one staging buffer per channel: a copy or an image
 * upload holds xgpulib_data_mu while it uses it (whole operation).
 */
extern pthread_mutex_t xgpulib_data_mu;

/* CUDA_ERROR_NOT_INITIALIZED unless cuInit succeeded */
CUresult xgpulib_check_init(void);

/* ---- devices (cached at cuInit) ------------------------------------------ */

struct xgpulib_device {
	struct xgpuif_device_info_reply info;
};

extern int xgpulib_ndev;
extern int xgpulib_driver_version;
extern struct xgpulib_device *xgpulib_devs;

/* CUDA_SUCCESS if dev is a valid ordinal */
CUresult xgpulib_check_dev(CUdevice dev);

/* ---- contexts ---------------------------------------------------------- */

#define XGPULIB_CTX_MAGIC 0x78637478u	/* "xctx" */

struct CUctx_st {
	uint32_t magic;
	int primary;
	CUdevice dev;
	uint64_t remote;	/* backend handle; 0 until retained */
	unsigned int flags;
	int refcount;		/* primary: retains; guarded by ctx_mu */
};

/* the calling thread's current context (NULL if none) */
CUcontext xgpulib_current(void);
/* remote handle of the current context, 0 if none */
uint64_t xgpulib_current_remote(void);
/* primary context of a device (stable storage, not retained) */
struct CUctx_st *xgpulib_primary(CUdevice dev);
/* validate a guest context handle; NULL if it is not one of ours */
struct CUctx_st *xgpulib_ctx_check(CUcontext ctx);

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

/* ---- host memory regions (guest pinned memory) -------------------------- */

struct xgpulib_region {
	uint32_t id;
	unsigned int flags;
	uint8_t *va;
	size_t size;
	uint64_t dptr;		/* device pointer of the worker's mapping */
	bool same_va;
};

/*
 * Find the region holding [p, p + len); NULL when any byte of it lies
 * outside every region.  *off is p's offset in the region.
 */
const struct xgpulib_region *xgpulib_region_find(const void *p, size_t len,
						  uint64_t *off);

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
	CUmodule module;	/* owning module (functions) */
	CUlibrary library;	/* owning library (kernels) */
};

/* NULL if f is not one of ours */
struct xgpulib_func *xgpulib_func_check(const void *f);

#endif /* XGPULIB_H */
