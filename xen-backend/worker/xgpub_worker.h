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
#include "xgpub_transport.h"

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

/* ---- dispatch control: the worker's half of the GPU scheduler ------------ */

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

#endif /* XGPUB_WORKER_H */
