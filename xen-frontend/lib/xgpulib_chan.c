// SPDX-License-Identifier: MIT
/*
 * xgpulib_chan.c: the guest end of a channel: requests onto the ring,
 * replies off it, waiting that spins briefly and then sleeps on the
 * transport, and the deferred errors of posted requests.
 *
 * Locking: see xgpulib_chan.h.  Replies come back in request order (the worker
 * serves one ring in order), so the outstanding requests are a FIFO
 * (pend[]); a reply whose id is not the FIFO's head is a protocol error
 * and ends the channel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xgpulib_chan.h"
#include "xgpulib_env.h"
#include "xgpu_prof.h"
#include "xgpu_spin.h"
#include "xgpu_uapi.h"

struct pend {
	uint64_t id;
	uint16_t nslots;
	struct xgpulib_waiter *w;	/* NULL for posted requests */
};

/* the benchmarks' record of where requests' time goes (xgpu_prof.h) */
static struct xgpu_prof prof;

static void prof_stop(void)
{
	xgpu_prof_stop(&prof);
}

/* FIFO of requests on the ring; its size is the ring's slot count */
static struct pend *pend;
static uint32_t pend_head, pend_tail, pend_size;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void chan_break(struct xgpulib_chan *c, const char *why)
{
	uint8_t fault = __atomic_load_n(&c->ring.sring->pvt.pvt_pad[0],
					__ATOMIC_ACQUIRE);

	if (!c->dead) {
		c->dead_rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
		if (fault == XGPUIF_FAULT_TIMEOUT) {
			c->dead_rc = CUDA_ERROR_LAUNCH_TIMEOUT;
			why = "the host stopped this program: its GPU work ran "
			      "past the host's time limit";
		}
		xgpulib_log("channel to the backend (%s) lost: %s", c->t->where,
			    why);
	}
	c->dead = true;
	/* wake every waiter: none of their replies will come */
	for (uint32_t i = pend_head; i != pend_tail; i++) {
		struct xgpulib_waiter *w = pend[i % pend_size].w;

		if (w && !w->done) {
			w->done = true;
			w->status = c->dead_rc;
		}
	}
	pend_head = pend_tail;
	pthread_cond_broadcast(&c->cv);
}

static inline RING_IDX load_rsp_prod(struct xgpulib_chan *c)
{
	RING_IDX rp = __atomic_load_n(&c->ring.sring->rsp_prod,
				      __ATOMIC_RELAXED);

	xen_rmb();	/* read replies only after the index; pairs with the
			 * worker's xen_wmb in RING_PUSH_RESPONSES */
	return rp;
}

static void note_deferred(struct xgpulib_chan *c, int32_t status, uint16_t op)
{
	if (status == 0 || c->deferred != CUDA_SUCCESS)
		return;
	c->deferred = status > 0 ? (CUresult)status : CUDA_ERROR_UNKNOWN;
	xgpulib_dbg("posted op %u failed with %d; reported at the next call",
		    op, status);
}

/* Take every reply that has arrived.  Called with c->mu held. */
static void reap_locked(struct xgpulib_chan *c)
{
	RING_IDX rp = load_rsp_prod(c);

	if (RING_RESPONSE_PROD_OVERFLOW(&c->ring, rp)) {
		chan_break(c, "response producer index out of range");
		return;
	}
	while (c->ring.rsp_cons != rp && !c->dead) {
		struct xgpuif_response hdr;
		struct pend *p;

		if (pend_head == pend_tail) {
			chan_break(c, "reply with no request outstanding");
			return;
		}
		p = &pend[pend_head % pend_size];
		RING_COPY_RESPONSE(&c->ring, c->ring.rsp_cons, &hdr);
		xgpu_prof_mark(&prof, hdr.id, hdr.op, XGPU_PROF_T1);
		if (hdr.id != p->id || hdr.nslots != p->nslots ||
		    (RING_IDX)(rp - c->ring.rsp_cons) < p->nslots ||
		    hdr.len > xgpuif_capacity(p->nslots)) {
			chan_break(c, "malformed reply");
			return;
		}
		if (p->w) {
			struct xgpulib_waiter *w = p->w;
			uint32_t n = hdr.len < w->reply_cap ? hdr.len :
							      w->reply_cap;
			uint32_t n2 = hdr.len - n < w->reply2_cap ?
					      hdr.len - n : w->reply2_cap;

			if (n)
				xgpuif_msg_read(c->ring.sring->ring,
						RING_SIZE(&c->ring),
						c->ring.rsp_cons, 0, w->reply,
						n);
			if (n2)
				xgpuif_msg_read(c->ring.sring->ring,
						RING_SIZE(&c->ring),
						c->ring.rsp_cons, n,
						w->reply2, n2);
			w->reply_len = n + n2;
			w->status = hdr.status;
			w->flags = hdr.flags;
			/* counted before the waiter can see its reply; (a
			 * fetch's own reply says whether more waits: the
			 * fetching thread reads that itself) */
			if ((hdr.flags & XGPUIF_SF_OUTPUT) &&
			    hdr.op != XGPUIF_OP_DEVICE_OUTPUT)
				__atomic_add_fetch(&c->output_seq, 1,
						   __ATOMIC_RELEASE);
			w->done = true;
		} else {
			note_deferred(c, hdr.status, hdr.op);
		}
		if (hdr.status == XGPUIF_ST_PROTO) {
			c->ring.rsp_cons += p->nslots;
			pend_head++;
			chan_break(c, "the backend rejected a request as "
				      "malformed");
			return;
		}
		c->ring.rsp_cons += p->nslots;
		pend_head++;
	}
}

/*
 * Wait for the backend to make progress: one thread (the poller) spins
 * for spin_us, then arms rsp_event and sleeps on the transport; the others
 * sleep on c->cv until the poller has reaped.  Called with c->mu held;
 * returns with it held.
 */
static void progress_locked(struct xgpulib_chan *c)
{
	uint64_t t0;
	int pending;

	if (c->poller) {
		pthread_cond_wait(&c->cv, &c->mu);
		return;
	}
	c->poller = true;
	/*
	 * Another thread (one posting, say) may reap while we are unlocked,
	 * our own reply included: any reaping counts as progress.
	 */
	RING_IDX seen = c->ring.rsp_cons;

	pthread_mutex_unlock(&c->mu);
	t0 = now_us();
	for (;;) {
		RING_IDX cons = __atomic_load_n(&c->ring.rsp_cons,
						__ATOMIC_RELAXED);

		if (cons != seen ||
		    __atomic_load_n(&c->ring.sring->rsp_prod,
				    __ATOMIC_RELAXED) != cons)
			break;
		if (now_us() - t0 < c->spin_us) {
			xgpu_cpu_relax();
			continue;
		}
		pthread_mutex_lock(&c->mu);
		RING_FINAL_CHECK_FOR_RESPONSES(&c->ring, pending);
		pthread_mutex_unlock(&c->mu);
		if (pending)
			break;
		if (c->t->ops->wait(c->t, 1000) == -EPIPE) {
			pthread_mutex_lock(&c->mu);
			reap_locked(c);
			chan_break(c, "the backend closed the connection");
			pthread_mutex_unlock(&c->mu);
			break;
		}
	}
	pthread_mutex_lock(&c->mu);
	c->poller = false;
	pthread_cond_broadcast(&c->cv);
}

/* the expect the next submit of this thread makes (op 0: none) */
static __thread struct {
	uint16_t op;
	size_t off, len;
	void *dst;
	uint64_t *ticket;
} next_expect;

void xgpulib_chan_expect_next(uint16_t op, size_t off, size_t len, void *dst,
			      uint64_t *ticket)
{
	*ticket = 0;
	next_expect.op = op;
	next_expect.off = off;
	next_expect.len = len;
	next_expect.dst = dst;
	next_expect.ticket = ticket;
}

void xgpulib_chan_expect_clear(void)
{
	next_expect.op = 0;
}

static CUresult submit_locked(struct xgpulib_chan *c,
			      const struct xgpulib_req *rq,
			      struct xgpulib_waiter *w)
{
	uint32_t len = xgpuif_iov_len(rq->iov, rq->niov);
	uint32_t nslots = xgpuif_slots_for(len);
	uint32_t reply_cap = w ? w->reply_cap + w->reply2_cap : 0;
	struct xgpuif_request hdr;
	int notify;

	/* the reply is written in the request's slots */
	if (xgpuif_slots_for(reply_cap) > nslots)
		nslots = xgpuif_slots_for(reply_cap);
	if (nslots > XGPUIF_MAX_SLOTS || nslots > RING_SIZE(&c->ring))
		return CUDA_ERROR_INVALID_VALUE;
	while (!c->dead && xgpuif_front_free(&c->ring) < nslots) {
		reap_locked(c);
		if (xgpuif_front_free(&c->ring) >= nslots)
			break;
		progress_locked(c);
	}
	if (c->dead)
		return c->dead_rc;

	memset(&hdr, 0, sizeof(hdr));
	hdr.id = ++c->next_id;
	hdr.op = rq->op;
	hdr.ctx = rq->ctx;
	hdr.flags = rq->posted ? XGPUIF_RF_POSTED : 0;
	xgpuif_front_put(&c->ring, &hdr, rq->iov, rq->niov, nslots);
	pend[pend_tail % pend_size] = (struct pend){ hdr.id, (uint16_t)nslots,
						     w };
	pend_tail++;
	if (w) {
		w->id = hdr.id;
		w->nslots = (uint16_t)nslots;
		w->done = false;
	}
	xgpu_prof_mark(&prof, hdr.id, hdr.op, XGPU_PROF_T0);
	RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&c->ring, notify);
	if (next_expect.op == rq->op && c->t->ops->expect) {
		/* ships the request too, in the same write */
		next_expect.op = 0;
		if (c->t->ops->expect(c->t, next_expect.off, next_expect.len,
				      next_expect.dst, next_expect.ticket))
			*next_expect.ticket = 0;	/* gone: the wait says so */
		return CUDA_SUCCESS;
	}
	if (notify)
		c->t->ops->notify(c->t);
	return CUDA_SUCCESS;
}

CUresult xgpulib_chan_submit(struct xgpulib_chan *c,
			     const struct xgpulib_req *rq,
			     struct xgpulib_waiter *w)
{
	CUresult rc;

	if (w) {
		w->reply_len = 0;
		w->status = 0;
		w->flags = 0;
	}
	pthread_mutex_lock(&c->mu);
	rc = submit_locked(c, rq, w);
	if (rc == CUDA_SUCCESS && !w)
		reap_locked(c);	/* cheap; keeps the ring drained */
	pthread_mutex_unlock(&c->mu);
	return rc;
}

static CUresult status_to_cu(int32_t st)
{
	if (st >= 0)
		return (CUresult)st;
	if (st == XGPUIF_ST_NOT_IMPL)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_ERROR_UNKNOWN;
}

CUresult xgpulib_chan_wait(struct xgpulib_chan *c, struct xgpulib_waiter *w)
{
	pthread_mutex_lock(&c->mu);
	while (!w->done) {
		reap_locked(c);
		if (w->done || c->dead)
			break;
		progress_locked(c);
	}
	if (!w->done) {
		w->done = true;
		w->status = c->dead ? c->dead_rc :
				      CUDA_ERROR_DEVICE_UNAVAILABLE;
	}
	pthread_mutex_unlock(&c->mu);
	return status_to_cu(w->status);
}

CUresult xgpulib_chan_take_deferred(struct xgpulib_chan *c)
{
	CUresult rc;

	pthread_mutex_lock(&c->mu);
	reap_locked(c);
	rc = c->deferred;
	c->deferred = CUDA_SUCCESS;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void xgpulib_chan_defer(struct xgpulib_chan *c, CUresult rc)
{
	pthread_mutex_lock(&c->mu);
	if (rc != CUDA_SUCCESS && c->deferred == CUDA_SUCCESS)
		c->deferred = rc;
	pthread_mutex_unlock(&c->mu);
}

uint32_t xgpulib_chan_reply_max(struct xgpulib_chan *c)
{
	uint32_t slots = RING_SIZE(&c->ring);

	if (slots > XGPUIF_MAX_SLOTS)
		slots = XGPUIF_MAX_SLOTS;
	return xgpuif_capacity(slots);
}

/* ---- set-up ---------------------------------------------------------------- */

struct xgpulib_chan *xgpulib_chan_open(struct xgpulib_transport *t,
				       unsigned int spin_us)
{
	struct xgpulib_chan *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->t = t;
	/* the transport initialised the shared ring before handing it over */
	FRONT_RING_INIT(&c->ring, t->sring, XGPUIF_PAGE_SIZE << t->ring_order);
	pend_size = RING_SIZE(&c->ring);
	pend = calloc(pend_size, sizeof(*pend));
	if (!pend) {
		free(c);
		return NULL;
	}
	if (!prof.r) {
		xgpu_prof_start(&prof, "guest");
		if (prof.r)
			atexit(prof_stop);
	}
	c->spin_us = spin_us;
	return c;
}

struct xgpulib_chan *xgpulib_chan_connect(const char *who,
					  unsigned int spin_us, bool *nomem)
{
	const char *tr = xgpulib_env_str("XGPU_TRANSPORT", NULL);
	const char *path = xgpulib_env_str("XGPU_SOCKET",
					   XGPULIB_DEFAULT_SOCKET);
	const char *dev = xgpulib_env_str("XGPU_DEVICE", XGPU_DEVICE_PATH);
	struct xgpulib_transport *t = NULL;
	struct xgpulib_chan *c;
	char msg[400];
	bool use_xen;

	*nomem = false;
	if (tr && strcmp(tr, "local") && strcmp(tr, "xen")) {
		xgpulib_log("%s: XGPU_TRANSPORT=%s: use \"xen\" or \"local\"",
			    who, tr);
		return NULL;
	}
	use_xen = tr ? !strcmp(tr, "xen") : access(dev, F_OK) == 0;
	msg[0] = 0;
	if (!tr && !strncmp(path, "tcp://", 6)) {
		/* a backend on the network: asked for by name */
		if (xgpulib_net_connect(path, &t, msg, sizeof(msg))) {
			xgpulib_log("%s: no GPU backend: %s", who, msg);
			return NULL;
		}
	} else if (use_xen ? xgpulib_xen_connect(dev, &t, msg, sizeof(msg)) :
		   xgpulib_local_connect(path, &t, msg, sizeof(msg))) {
		xgpulib_log("%s: no GPU backend: %s%s", who, msg, use_xen ? "" :
			    " (set XGPU_SOCKET to the backend's socket, or "
			    "load xen-gpufront.ko in a Xen guest)");
		return NULL;
	}
	c = xgpulib_chan_open(t, xgpulib_env_uint("XGPU_SPIN_US", spin_us));
	if (!c) {
		t->ops->close(t);
		*nomem = true;
	}
	return c;
}
