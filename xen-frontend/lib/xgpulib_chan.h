/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_chan.h: the guest end of a channel: requests onto the shared
 * ring, replies off it, waiting, and the deferred errors of posted
 * requests.  It knows the wire and the transport, nothing of CUDA's
 * objects: the caller says which context a request runs in.
 *
 * Locking: one mutex per channel (c->mu) protects the ring indices, the
 * FIFO of outstanding requests and the deferred error.  A thread that
 * must block waits either as the single "poller" (which sleeps on the
 * transport) or on c->cv, which the poller broadcasts after reaping.
 */
#ifndef XGPULIB_CHAN_H
#define XGPULIB_CHAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "xgpuif_ring.h"
#include "xgpulib_transport.h"

/*
 * A synchronous request in flight.  The reply's payload is written into
 * reply (up to reply_cap bytes), then what is left into reply2 (a VAR
 * reply's trailing entries); reply_len says how much arrived in all.
 */
struct xgpulib_waiter {
	uint64_t id;
	uint16_t nslots;
	bool done;
	int32_t status;
	uint32_t flags;		/* the reply's XGPUIF_SF_* */
	void *reply;
	uint32_t reply_cap;
	void *reply2;
	uint32_t reply2_cap;
	uint32_t reply_len;
};

/* one request: op, the guest handle of its context, the payload pieces */
struct xgpulib_req {
	uint16_t op;
	bool posted;		/* XGPUIF_RF_POSTED: no waiter */
	uint64_t ctx;
	const struct xgpuif_iov *iov;
	int niov;
};

struct xgpulib_chan {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct xgpuif_front_ring ring;
	struct xgpulib_transport *t;
	uint64_t next_id;
	bool poller;			/* a thread sleeps on t */
	bool dead;			/* backend gone or protocol broken */
	CUresult dead_rc;		/* every call's answer once dead */
	CUresult deferred;		/* first error of a posted request */
	unsigned int spin_us;		/* spin before sleeping */
	/* replies that said device output waits (XGPUIF_SF_OUTPUT), any
	 * thread's: a call returns only once output that was waiting when
	 * its reply came is on stdout (xgpulib_output.c) */
	uint64_t output_seq;
	/* output_seq when the last finished drain began: the output of
	 * every reply counted up to it is on stdout */
	uint64_t output_drained;
};

/* a channel over transport t (which set up the shared ring) */
struct xgpulib_chan *xgpulib_chan_open(struct xgpulib_transport *t,
				       unsigned int spin_us);

/* the local transport's socket when XGPU_SOCKET does not name one */
#define XGPULIB_DEFAULT_SOCKET "/run/xgpu/xgpu.sock"

/*
 * The channel to the backend the environment names: XGPU_TRANSPORT
 * ("xen" or "local"; default xen where the guest module's device
 * XGPU_DEVICE is there), XGPU_SOCKET, XGPU_SPIN_US (default spin_us).
 * NULL when there is none, said on stderr after "who: "; *nomem then
 * tells a failed allocation from a missing backend.
 */
struct xgpulib_chan *xgpulib_chan_connect(const char *who,
					  unsigned int spin_us, bool *nomem);

/*
 * Put a request on the ring.  A synchronous one (w != NULL, reply
 * buffers set in *w) is then waited for with xgpulib_chan_wait; a posted
 * one (w == NULL) only has its error kept for xgpulib_chan_take_deferred.
 */
CUresult xgpulib_chan_submit(struct xgpulib_chan *c,
			     const struct xgpulib_req *rq,
			     struct xgpulib_waiter *w);
/*
 * A transport without shared memory (its ops->expect): the bytes the
 * worker writes at [off, off + len) of the data area for the next request
 * of op `op` this thread submits are to come back to dst.  The expect is
 * made in the submit itself, so that it goes out in one write with the
 * request (made after the submit, it is a write of its own, and the
 * reply may leave before it arrives: the bytes then follow it a network
 * round trip later).  *ticket: the expect's, or 0 if none was made (the
 * submit failed, or the transport shares memory).  Whatever the submit
 * did, xgpulib_chan_expect_clear afterwards.
 */
void xgpulib_chan_expect_next(uint16_t op, size_t off, size_t len, void *dst,
			      uint64_t *ticket);
void xgpulib_chan_expect_clear(void);
/* the reply's status (once the backend is gone: CUDA_ERROR_LAUNCH_TIMEOUT
 * when it ended the channel because the program's GPU work ran past the
 * host's limit, else CUDA_ERROR_DEVICE_UNAVAILABLE) */
CUresult xgpulib_chan_wait(struct xgpulib_chan *c, struct xgpulib_waiter *w);
/* the first error of a posted request since the last call, cleared */
CUresult xgpulib_chan_take_deferred(struct xgpulib_chan *c);
/* keep rc (an error) for the next call, as a posted request's error,
 * unless one is kept already */
void xgpulib_chan_defer(struct xgpulib_chan *c, CUresult rc);

/* the largest reply a request may ask for on this ring */
uint32_t xgpulib_chan_reply_max(struct xgpulib_chan *c);

#endif /* XGPULIB_CHAN_H */
