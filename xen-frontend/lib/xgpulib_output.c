// SPDX-License-Identifier: MIT
/*
 * xgpulib_output.c: device output (a kernel's printf) to the program's
 * stdout.  See xgpulib_output.h.
 *
 * The fetch goes to the channel directly, not through xgpulib_rpc.c, so
 * that it cannot recurse (its own reply may say again that output waits),
 * takes none of the deferred errors of posted requests (those belong to
 * the program's next call), and runs in no context (the worker needs
 * none for it, and the calling thread's may be gone).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "xgpulib_env.h"
#include "xgpulib_output.h"

/* one fetch holds at most this many ring slots (about 16 KiB); its
 * reply fills them whole */
#define FETCH_SLOTS	128u
#define FETCH_MAX	(XGPUIF_SLOT0_PAYLOAD + \
			 (FETCH_SLOTS - 1) * XGPUIF_SLOT_SIZE)
/* a worker keeps 1 MiB at most: more rounds than that means it is fed
 * as fast as we fetch; the rest comes with a later reply */
#define MAX_ROUNDS	128

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t out_buf[FETCH_MAX];	/* guarded by out_mu */

/* one DEVICE_OUTPUT request in no context; its status */
static CUresult fetch(struct xgpulib_chan *c, struct xgpuif_output_reply *r,
		      uint32_t cap, uint32_t *len)
{
	struct xgpulib_req rq = {
		.op = XGPUIF_OP_DEVICE_OUTPUT,
		.posted = false,
		.ctx = 0,
		.iov = NULL,
		.niov = 0,
	};
	struct xgpulib_waiter w;
	CUresult rc;

	memset(&w, 0, sizeof(w));
	memset(r, 0, sizeof(*r));
	w.reply = r;
	w.reply_cap = sizeof(*r);
	w.reply2 = out_buf;
	w.reply2_cap = cap;
	rc = xgpulib_chan_submit(c, &rq, &w);
	if (!rc)
		rc = xgpulib_chan_wait(c, &w);
	if (!rc && (w.reply_len < sizeof(*r) ||
		    r->bytes != w.reply_len - sizeof(*r)))
		rc = CUDA_ERROR_UNKNOWN;	/* a backend bug */
	*len = rc ? 0 : r->bytes;
	return rc;
}

void xgpulib_output_drain(struct xgpulib_chan *c)
{
	uint32_t slots = xgpuif_slots_for(xgpulib_chan_reply_max(c));
	unsigned long long dropped = 0;
	uint64_t seq;
	uint32_t cap;

	/* the worker fills the slots the request holds: ask for all of
	 * their room, or a reply would not fit */
	if (slots > FETCH_SLOTS)
		slots = FETCH_SLOTS;
	cap = xgpuif_capacity(slots) -
	      (uint32_t)sizeof(struct xgpuif_output_reply);
	pthread_mutex_lock(&out_mu);
	/* the replies counted so far are answered by this drain, unless
	 * one that ended while we waited for the lock answered them */
	seq = __atomic_load_n(&c->output_seq, __ATOMIC_ACQUIRE);
	if (seq == c->output_drained) {
		pthread_mutex_unlock(&out_mu);
		return;
	}
	/* the program's own lines, printed before the call, come first */
	fflush(stdout);
	for (int i = 0; i < MAX_ROUNDS; i++) {
		struct xgpuif_output_reply r;
		uint32_t len;
		CUresult rc = fetch(c, &r, cap, &len);

		if (rc) {
			xgpulib_dbg("fetching device output failed: %d", rc);
			break;
		}
		dropped += r.dropped;
		/* through stdio, as the host driver writes it: a program (or
		 * a worker whose driver this library is) may have made stdout
		 * a stream of its own */
		fwrite(out_buf, 1, len, stdout);
		if (!r.waiting || !len)
			break;
	}
	fflush(stdout);
	__atomic_store_n(&c->output_drained, seq, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&out_mu);
	if (dropped)
		xgpulib_log("%llu bytes of device printf output were lost "
			    "(buffer full)", dropped);
}

void xgpulib_output_settle(struct xgpulib_chan *c)
{
	if (__atomic_load_n(&c->output_seq, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&c->output_drained, __ATOMIC_ACQUIRE))
		return;
	/* a drain under way (another thread's) ends before ours begins;
	 * ours then finds that it answered our reply, or fetches */
	xgpulib_output_drain(c);
}
