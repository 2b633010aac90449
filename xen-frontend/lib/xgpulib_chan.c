// SPDX-License-Identifier: MIT
/*
 * xgpulib_chan.c: the guest end of a channel: requests onto the ring,
 * replies off it, waiting that spins briefly and then sleeps on the
 * transport, and the deferred errors of posted requests.
 *
 * Locking: see xgpulib.h.  Replies come back in request order (the worker
 * serves one ring in order), so the outstanding requests are a FIFO
 * (pend[]); a reply whose id is not the FIFO's head is a protocol error
 * and ends the channel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xgpulib.h"

struct pend {
	uint64_t id;
	uint16_t nslots;
	struct xgpulib_waiter *w;	/* NULL for posted requests */
};

/* FIFO of requests on the ring; its size is the ring's slot count */
static struct pend *pend;
static uint32_t pend_head, pend_tail, pend_size;

int xgpulib_debug;
struct xgpulib_chan *xgpulib_ch;
pthread_mutex_t xgpulib_data_mu = PTHREAD_MUTEX_INITIALIZER;

void xgpulib_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "xgpu: %s\n", buf);
}

void xgpulib_dbg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!xgpulib_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "xgpu[debug]: %s\n", buf);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void chan_break(struct xgpulib_chan *c, const char *why)
{
	if (!c->dead)
		xgpulib_log("channel to the backend (%s) lost: %s", c->t->where,
			    why);
	c->dead = true;
	/* wake every waiter: none of their replies will come */
	for (uint32_t i = pend_head; i != pend_tail; i++) {
		struct xgpulib_waiter *w = pend[i % pend_size].w;

		if (w && !w->done) {
			w->done = true;
			w->status = CUDA_ERROR_DEVICE_UNAVAILABLE;
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

			if (n)
				xgpuif_msg_read(c->ring.sring->ring,
						RING_SIZE(&c->ring),
						c->ring.rsp_cons, 0, w->reply,
						n);
			w->reply_len = n;
			w->status = hdr.status;
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
			cpu_relax();
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

static CUresult submit_locked(struct xgpulib_chan *c, uint16_t op,
			      const struct xgpuif_iov *iov, int niov,
			      uint8_t flags, struct xgpulib_waiter *w,
			      uint32_t reply_cap)
{
	uint32_t len = xgpuif_iov_len(iov, niov);
	uint32_t nslots = xgpuif_slots_for(len);
	struct xgpuif_request hdr;
	int notify;

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
		return CUDA_ERROR_DEVICE_UNAVAILABLE;

	memset(&hdr, 0, sizeof(hdr));
	hdr.id = ++c->next_id;
	hdr.op = op;
	hdr.ctx = xgpulib_current_remote();
	hdr.flags = flags;
	xgpuif_front_put(&c->ring, &hdr, iov, niov, nslots);
	pend[pend_tail % pend_size] = (struct pend){ hdr.id, (uint16_t)nslots,
						     w };
	pend_tail++;
	if (w) {
		w->id = hdr.id;
		w->nslots = (uint16_t)nslots;
		w->done = false;
	}
	RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&c->ring, notify);
	if (notify)
		c->t->ops->notify(c->t);
	return CUDA_SUCCESS;
}

CUresult xgpulib_check_init(void)
{
	return xgpulib_ch ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult xgpulib_submit(uint16_t op, const struct xgpuif_iov *iov, int niov,
			struct xgpulib_waiter *w, void *reply,
			uint32_t reply_cap)
{
	struct xgpulib_chan *c = xgpulib_ch;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_NOT_INITIALIZED;
	w->reply = reply;
	w->reply_cap = reply_cap;
	w->reply_len = 0;
	w->status = 0;
	pthread_mutex_lock(&c->mu);
	rc = submit_locked(c, op, iov, niov, 0, w, reply_cap);
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

CUresult xgpulib_wait(struct xgpulib_waiter *w)
{
	struct xgpulib_chan *c = xgpulib_ch;

	pthread_mutex_lock(&c->mu);
	while (!w->done) {
		reap_locked(c);
		if (w->done || c->dead)
			break;
		progress_locked(c);
	}
	if (!w->done) {
		w->done = true;
		w->status = CUDA_ERROR_DEVICE_UNAVAILABLE;
	}
	pthread_mutex_unlock(&c->mu);
	return status_to_cu(w->status);
}

CUresult xgpulib_take_deferred(void)
{
	struct xgpulib_chan *c = xgpulib_ch;
	CUresult rc;

	if (!c)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&c->mu);
	reap_locked(c);
	rc = c->deferred;
	c->deferred = CUDA_SUCCESS;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

CUresult xgpulib_call(uint16_t op, const struct xgpuif_iov *iov, int niov,
		      void *reply, uint32_t reply_cap, uint32_t *reply_len)
{
	struct xgpulib_waiter w;
	CUresult rc, deferred;

	rc = xgpulib_submit(op, iov, niov, &w, reply, reply_cap);
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = xgpulib_wait(&w);
	if (reply_len)
		*reply_len = w.reply_len;
	deferred = xgpulib_take_deferred();
	if (rc == CUDA_SUCCESS && deferred != CUDA_SUCCESS)
		return deferred;
	return rc;
}

CUresult xgpulib_post(uint16_t op, const struct xgpuif_iov *iov, int niov)
{
	struct xgpulib_chan *c = xgpulib_ch;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&c->mu);
	rc = submit_locked(c, op, iov, niov, XGPUIF_RF_POSTED, NULL, 0);
	if (rc == CUDA_SUCCESS)
		reap_locked(c);	/* cheap; keeps the ring drained */
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* ---- set-up ---------------------------------------------------------------- */

struct xgpulib_chan *xgpulib_chan_open(struct xgpulib_transport *t);

struct xgpulib_chan *xgpulib_chan_open(struct xgpulib_transport *t)
{
	struct xgpulib_chan *c = calloc(1, sizeof(*c));
	const char *spin = getenv("XGPU_SPIN_US");

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
	c->spin_us = spin ? (unsigned int)strtoul(spin, NULL, 10) : 2000;
	return c;
}
