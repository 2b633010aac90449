/* SPDX-License-Identifier: MIT */
/*
 * xgpub.h: internals of xen-gpubackd and its per-guest workers.
 *
 * The daemon never touches CUDA: it accepts guests and forks one worker
 * process per guest channel.  A worker serves exactly one ring with one
 * dispatch thread, so nothing in struct xgpub_worker needs a lock.
 */
#ifndef XGPUB_H
#define XGPUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <cuda.h>

#include "xgpuif_ring.h"

/* CLOCK_MONOTONIC in ns: the one clock of the daemon, its workers and the
 * scheduler */
static inline uint64_t xgpub_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- logging (syslog when daemonized, stderr in the foreground) -------- */

void xgpub_log_init(const char *ident, bool use_syslog, int verbose);
void xgpub_log_prefix(const char *prefix);
void xgpub_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xgpub_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xgpub_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the executor: a table of driver entry points ----------------------- */

struct xgpub_driver {
	const char *name;	/* "cuda:<path>" or "fake" */
#define XGPUB_DRV(fn) __typeof__(&fn) fn;
#include "xgpub_driver.def"
#undef XGPUB_DRV
};

/* the host's driver, opened by absolute path; NULL and *msg on failure */
struct xgpub_driver *xgpub_driver_open(const char *path, char *msg,
				       size_t msglen);
/* the fake device (tests only: host memory, registered test kernels) */
struct xgpub_driver *xgpub_fake_open(void);

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
/* call fn on every live handle of `type` */
void xgpub_handle_each(struct xgpub_handles *t, int type,
		       void (*fn)(struct xgpub_hentry *e, void *arg),
		       void *arg);
void xgpub_handles_destroy(struct xgpub_handles *t);

/* ---- transports (worker side) ---------------------------------------------- */

struct xgpub_transport;

struct xgpub_transport_ops {
	const char *name;
	/* tell the guest that replies are on the ring */
	void (*notify)(struct xgpub_transport *t);
	/*
	 * Sleep until the guest kicks, timeout_ms passes or the guest is gone.
	 * 0: kicked or timed out; -EPIPE: the guest is gone.
	 */
	int (*wait)(struct xgpub_transport *t, int timeout_ms);
	/*
	 * Map the pages of host-memory region `region` (size bytes, described
	 * by `dir` for transports that need it), at guest_va if possible.
	 * 0 or -errno.
	 */
	int (*hostmem_map)(struct xgpub_transport *t, uint32_t region,
			   uint64_t size, const struct xgpuif_memref *dir,
			   uint64_t guest_va, void **va);
	void (*hostmem_unmap)(struct xgpub_transport *t, void *va,
			      uint64_t size);
	/*
	 * Block until the guest is gone (another thread may be serving the
	 * ring meanwhile); used by the worker's watchdog.
	 */
	void (*wait_gone)(struct xgpub_transport *t);
	/*
	 * The worker closes the channel because the guest broke the protocol:
	 * tell the guest's side why where the transport can (Xen: the
	 * channel's error node).  May be NULL.
	 */
	void (*fail)(struct xgpub_transport *t, const char *why);
	void (*close)(struct xgpub_transport *t);
};

struct xgpub_transport {
	const struct xgpub_transport_ops *ops;
	struct xgpuif_sring *sring;
	unsigned int ring_order;
	uint8_t *data;
	size_t data_bytes;
	char who[96];		/* the guest, for log lines */
	char proc[32];		/* the guest process's name (informative) */
};

/*
 * Local transport: handshake on an accepted SOCK_SEQPACKET socket.
 * 0 or -errno (the guest was told why).
 */
int xgpub_local_accept(int sock, uint32_t client_id, uint32_t max_data_pages,
		       struct xgpub_transport **out);

/* ---- the daemon's children (xgpub_main.c) ----------------------------------- */

enum { XGPUB_CHILD_LOCAL = 1, XGPUB_CHILD_XEN = 2 };

/*
 * What a worker tells the daemon, in memory shared between them (one
 * slot per worker, written by the worker only, with relaxed atomics; the
 * daemon reads it for `xgpu list` and the scheduler).
 */
struct xgpub_wstat {
	uint64_t calls;		/* requests served */
	uint64_t mem_used;	/* device memory bytes allocated */
	uint64_t quota;		/* its limit, 0: none */
	uint64_t gpu_ns;	/* GPU time its work took */
	uint32_t qdepth;	/* requests waiting on the ring */
	uint32_t connected;	/* 1 once the channel is up */
	char proc[32];		/* the guest process's name, once connected */
	/* GPU scheduler (xgpub_gate.c / xgpub_sched_glue.c) */
	uint32_t sched_on;	/* daemon: this worker is scheduled */
	uint32_t grant;		/* daemon: may submit GPU work (futex) */
	uint32_t want;		/* worker: has requests to serve */
	uint32_t busy;		/* worker: GPU work in flight */
	uint32_t submitting;	/* worker: a GPU op is being submitted */
	uint32_t drained;	/* worker: count of busy 1 -> 0 */
	uint64_t _rsvd[4];
};

struct xgpub_child {
	pid_t pid;
	int kind;			/* XGPUB_CHILD_* */
	uint32_t client_id;		/* local: the backend's number */
	uint32_t domid, devid, ch;	/* xen */
	char name[64];			/* xen: domain name */
	char proc[32];			/* the guest process's name */
	uint64_t started;		/* CLOCK_MONOTONIC ns */
	struct xgpub_wstat *st;		/* shared with the worker */
	/* calls per second, sampled by the daemon */
	uint64_t rate_t, rate_calls;
	double rate;
};

/* in a worker: its own slot (NULL in tests that run a worker inline) */
extern struct xgpub_wstat *xgpub_self_stat;

/*
 * Fork a worker.  In the child, after the common set-up (signals, name,
 * log prefix, the daemon's descriptors closed), fn(arg) runs and its
 * return value is the exit code.  In the parent: the pid (recorded in the
 * table of children) or -errno.
 */
pid_t xgpub_spawn(const struct xgpub_child *info, int (*fn)(void *),
		  void *arg);
/* the child with this pid (cleared by the caller once reaped), or NULL */
struct xgpub_child *xgpub_child_find(pid_t pid);
void xgpub_child_name(const struct xgpub_child *c, char *buf, size_t len);
void xgpub_children_each(void (*fn)(struct xgpub_child *c, void *arg),
			 void *arg);
void xgpub_children_kill(int sig);
/* a descriptor of the daemon that workers close after fork */
void xgpub_daemon_fd(int fd);

/* dispatch control in the worker (xgpub_gate.c) */
extern int xgpub_sched_kick_fd;	/* workers kick the daemon's scheduler */
extern bool xgpub_sched_enabled;	/* daemon: workers are scheduled */
struct xgpub_worker;
void xgpub_gate_init(struct xgpub_worker *w);
bool xgpub_gate_op(uint16_t op);
void xgpub_gate_enter(struct xgpub_worker *w);
void xgpub_gate_done(struct xgpub_worker *w, uint16_t op,
		     const void *payload, uint64_t t0, int rc);
void xgpub_gate_idle(struct xgpub_worker *w);
void xgpub_gate_stop(struct xgpub_worker *w);

/* ---- the worker ------------------------------------------------------------ */

struct xgpub_region {
	uint32_t id;
	uint8_t *va;
	uint64_t size;
	bool registered;	/* with cuMemHostRegister */
};

#define XGPUB_MAX_REGIONS 4096u

struct xgpub_alloc {
	uint64_t dptr;
	uint64_t size;
};

struct xgpub_options {
	const char *driver_path;	/* NULL: fake device */
	int gpu;			/* host device ordinal to expose */
	uint64_t quota;			/* device memory bytes, 0: none */
	uint32_t max_data_pages;
	unsigned int spin_us;
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
	bool data_registered;
	/* device memory accounting for the quota */
	struct xgpub_alloc *allocs;
	uint32_t nallocs, cap_allocs;
	uint64_t mem_used;
	/* statistics */
	uint64_t calls;
	/* why the channel was closed on a protocol error */
	char why[160];
};

/* serve one guest until it goes away; returns the process exit code */
int xgpub_worker_run(struct xgpub_transport *t,
		     const struct xgpub_options *opt);

/*
 * Resolve a shared-memory reference from the guest: the address of
 * [ref->off, ref->off + ref->len) in the worker, or NULL if it is not
 * inside the named region (a protocol error).
 */
uint8_t *xgpub_memref(struct xgpub_worker *w, const struct xgpuif_memref *ref);
/* the region with this id, or NULL */
struct xgpub_region *xgpub_region_get(struct xgpub_worker *w, uint32_t id);

/* stream argument: 0/1/2 pass through, others through the table */
int xgpub_stream(struct xgpub_worker *w, xgpuif_handle_t h, CUstream *out);
/*
 * Destroy the streams and events created in context c and drop their
 * handles (c is being destroyed; xgpub_op_stream.c).  c must be current.
 */
void xgpub_ctx_drop_streams(struct xgpub_worker *w, CUcontext c);

/* device memory accounting */
int xgpub_alloc_add(struct xgpub_worker *w, uint64_t dptr, uint64_t size);
int xgpub_alloc_del(struct xgpub_worker *w, uint64_t dptr);
bool xgpub_quota_allows(struct xgpub_worker *w, uint64_t size);

/*
 * Operation handlers, one per line of xgpu_calls.def: args/len is the
 * request payload (len >= the args struct, checked), reply has *rlen bytes
 * of room and *rlen is set to the reply's length.  They return a CUresult
 * value or XGPUIF_ST_PROTO for a request no well-behaved guest sends.
 */
#define XGPU_CALL(num, name, mode, args, reply)                              \
	int xgpub_op_##name(struct xgpub_worker *w,                          \
			    const struct xgpuif_request *req,               \
			    const void *payload, uint32_t len, void *out,   \
			    uint32_t *rlen);
#include "xgpu_calls.def"
#undef XGPU_CALL

#define XGPUB_NOT_SUPPORTED_IF_NULL(w, fn)                                   \
	do {                                                                 \
		if (!(w)->D->fn)                                             \
			return CUDA_ERROR_NOT_SUPPORTED;                     \
	} while (0)

#endif /* XGPUB_H */
