// SPDX-License-Identifier: MIT
/*
 * xgpu_mirror_rx.c: the mirror's receiving half: the thread that alone
 * reads the connection (a ring's slots published as the peer's producer
 * index, DATA landing in the data area or where an expect says, the
 * guest's barriers and expects at the backend) and each lane's.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "xgpu_mirror_int.h"

static const char *land(struct xgpu_mirror *m, struct xgpu_conn *c,
			const struct xgpuif_net_frame *f, struct lane *lane);

void *xgpu_mirror_lane_rx_main(void *arg)
{
	struct lane *l = arg;
	struct xgpu_mirror *m = l->m;
	struct xgpuif_net_frame f;
	const char *bad = NULL;

	while (!bad) {
		if (xgpu_conn_read(l->c, &f, sizeof(f)))
			bad = "";
		else if (f.type != XGPUIF_NET_DATA)
			bad = "a lane frame other than data";
		else
			bad = land(m, l->c, &f, l);
	}
	if (*bad) {
		char why[160];

		snprintf(why, sizeof(why), "protocol error from the %s: %s",
			 m->c.guest ? "backend" : "guest", bad);
		set_gone(m, why);
	} else {
		set_gone(m, "a lane ended");
	}
	xgpu_conn_shutdown(m->c.conn);
	return NULL;
}

/* ---- receiving ------------------------------------------------------------ */

/* read n slots from the connection into the ring from index `from` */
static int recv_slots(struct xgpu_mirror *m, RING_IDX from, unsigned int n)
{
	while (n) {
		unsigned int at = from & (m->nslots - 1);
		unsigned int k = n < m->nslots - at ? n : m->nslots - at;

		if (xgpu_conn_read(m->c.conn, m->slots + (size_t)at * SLOT,
				   (size_t)k * SLOT))
			return -EPIPE;
		from += k;
		n -= k;
	}
	return 0;
}

static const char *on_slots(struct xgpu_mirror *m,
			    const struct xgpuif_net_frame *f)
{
	unsigned int n = f->len / SLOT;
	RING_IDX from = (RING_IDX)f->arg, old, to;

	if (f->len % SLOT || !n || n > m->nslots || from != m->recvd ||
	    f->arg > UINT32_MAX)
		return "slots out of turn";
	to = from + n;
	if (m->c.guest) {
		/* replies only to requests we shipped */
		RING_IDX sh = __atomic_load_n(&m->shipped, __ATOMIC_ACQUIRE);

		if ((int32_t)(sh - to) < 0)
			return "replies to requests never sent";
	} else {
		/* no more requests than the ring has free slots: the
		 * worker's unanswered ones are not overwritten */
		RING_IDX rp = __atomic_load_n(&m->c.sring->rsp_prod,
					      __ATOMIC_ACQUIRE);

		if ((RING_IDX)(to - rp) > m->nslots)
			return "more requests than the ring holds";
	}
	if (recv_slots(m, from, n))
		return "";
	old = m->recvd;
	m->recvd = to;
	__atomic_store_n(peer_prod(m), to, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if ((RING_IDX)(to - __atomic_load_n(peer_event(m), __ATOMIC_RELAXED)) <
	    (RING_IDX)(to - old))
		kick(m);
	return NULL;
}

/*
 * A DATA frame's bytes from c (a lane, or the channel's connection): the
 * backend's land in its data area; the guest's where the expect whose
 * range holds them says
 */
static const char *land(struct xgpu_mirror *m, struct xgpu_conn *c,
			const struct xgpuif_net_frame *f, struct lane *lane)
{
	struct expect *e = NULL;
	uint8_t *to;

	if (f->arg > m->c.data_bytes || f->len > m->c.data_bytes - f->arg)
		return "data outside the data area";
	to = m->c.data + f->arg;
	if (m->c.guest) {
		pthread_mutex_lock(&m->mu);
		for (unsigned int i = 0; i < XGPUIF_NET_MAX_EXPECT && !e; i++) {
			struct expect *x = &m->fifo[i];

			if (x->mark && x->landed < x->len &&
			    f->arg >= x->off &&
			    f->arg + f->len <= x->off + x->len)
				e = x;
		}
		pthread_mutex_unlock(&m->mu);
		if (!e)
			return "data nobody asked for";
		if (e->dst)
			to = (uint8_t *)e->dst + (f->arg - e->off);
	}
	if (f->len && xgpu_conn_read(c, to, f->len))
		return "";
	pthread_mutex_lock(&m->mu);
	if (e)
		__atomic_store_n(&e->landed, e->landed + f->len,
				 __ATOMIC_RELEASE);
	else if (lane)
		lane->bytes += f->len;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/* backend: publish nothing more until the lanes brought `arg` bytes */
static const char *on_barrier(struct xgpu_mirror *m,
			      const struct xgpuif_net_frame *f)
{
	uint64_t want[XGPUIF_NET_MAX_LANES];
	unsigned int n = f->len / sizeof(want[0]);

	if (m->c.guest || f->len % sizeof(want[0]) ||
	    n > XGPUIF_NET_MAX_LANES)
		return "a misplaced barrier";
	if (n && xgpu_conn_read(m->c.conn, want, f->len))
		return "";
	/*
	 * A guest counts only bytes it has sent, so they come within the
	 * network's time; one that names bytes never sent (or a lane never
	 * opened) would hold this thread, which alone notices the peer's
	 * end: bounded by barrier_ms.
	 */
	pthread_mutex_lock(&m->mu);
	for (unsigned int i = 0; i < n && !m->gone; i++) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += m->c.barrier_ms / 1000;
		until.tv_nsec += (long)(m->c.barrier_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (want[i] && !m->gone &&
		       (!m->lanes[i] || m->lanes[i]->bytes < want[i]))
			if (pthread_cond_timedwait(&m->cv, &m->mu, &until)) {
				pthread_mutex_unlock(&m->mu);
				return "a barrier its lanes never met";
			}
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/* guest: a host function's fetched block, into the data area */
static const char *on_fill(struct xgpu_mirror *m,
			   const struct xgpuif_net_frame *f)
{
	if (!m->c.guest)
		return "a fill from the guest";
	if (f->arg > m->c.data_bytes || f->len > m->c.data_bytes - f->arg)
		return "a fill outside the data area";
	if (f->len && xgpu_conn_read(m->c.conn, m->c.data + f->arg, f->len))
		return "";
	return NULL;
}

static const char *on_expect(struct xgpu_mirror *m,
			     const struct xgpuif_net_frame *f)
{
	if (m->c.guest)
		return "an expect from the backend";
	if (f->arg > m->c.data_bytes || f->len > m->c.data_bytes - f->arg)
		return "an expect outside the data area";
	pthread_mutex_lock(&m->mu);
	if (m->tail - m->head >= XGPUIF_NET_MAX_EXPECT) {
		pthread_mutex_unlock(&m->mu);
		return "too many expects outstanding";
	}
	m->fifo[m->tail++ % XGPUIF_NET_MAX_EXPECT] =
		(struct expect){ m->recvd, f->arg, f->len, NULL, 0 };
	pthread_mutex_unlock(&m->mu);
	/* its requests may all have their replies already */
	(void)xgpu_mirror_flush(m);
	return NULL;
}

/*
 * A host-function slot from the peer (see xgpu_mirror.h): the guest takes
 * DUE (with the function's fields) and FREE; the backend takes DONE, for
 * a slot it has DUE (a DONE out of turn is dropped: only the guest's own
 * host functions could be hurt by it).
 */
static const char *on_hostfn(struct xgpu_mirror *m,
			     const struct xgpuif_net_frame *f)
{
	struct xgpuif_hostfn_slot s, *d;

	if (f->len != sizeof(s))
		return "a host-function slot of the wrong size";
	if (xgpu_conn_read(m->c.conn, &s, sizeof(s)))
		return "";
	pthread_mutex_lock(&m->mu);
	d = m->hf && f->arg < m->nhf ? &m->hf[f->arg] : NULL;
	pthread_mutex_unlock(&m->mu);
	if (!d)
		return "a host-function slot that does not exist";
	if (!m->c.guest) {
		if (s.state == XGPUIF_HF_FETCH || s.state == XGPUIF_HF_FLUSH) {
			/* a block of managed memory the function touched:
			 * the worker checks the fields before it copies */
			if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) !=
			    XGPUIF_HF_DUE)
				return NULL;	/* out of turn: dropped */
			d->mc_dptr = s.mc_dptr;
			d->mc_off = s.mc_off;
			d->mc_len = s.mc_len;
			d->mc_region = s.mc_region;
			__atomic_store_n(&d->state, s.state, __ATOMIC_RELEASE);
			return NULL;
		}
		uint32_t due = XGPUIF_HF_DUE;

		if (s.state != XGPUIF_HF_DONE)
			return "a host-function slot in a state the guest "
			       "does not set";
		__atomic_compare_exchange_n(&d->state, &due, XGPUIF_HF_DONE,
					    false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		return NULL;
	}
	if (s.state == XGPUIF_HF_DUE) {
		d->status = s.status;
		d->fnid = s.fnid;
		d->nt_type = s.nt_type;
		d->nt_info = s.nt_info;
		d->mc_status = s.mc_status;
	} else if (s.state != XGPUIF_HF_FREE) {
		return "a host-function slot in a state the backend does not "
		       "set";
	}
	__atomic_store_n(&d->state, s.state, __ATOMIC_RELEASE);
	return NULL;
}

void *xgpu_mirror_rx_main(void *arg)
{
	struct xgpu_mirror *m = arg;
	struct xgpuif_net_frame f;
	const char *bad = NULL;

	while (!bad) {
		/*
		 * The next frame often follows at once (a reply to the
		 * request just delivered, the next request of a loop):
		 * look for it for spin_us before sleeping in the read, as
		 * the worker and the guest library poll their rings; a
		 * thread woken from sleep costs tens of microseconds.
		 */
		if (m->c.spin_us && !xgpu_conn_buffered(m->c.conn)) {
			/* nothing buffered in TLS: watch the socket itself,
			 * without the connection's lock (its writers need
			 * it: a writer that meets this thread in the lock
			 * waits) */
			struct pollfd p = { .fd = xgpu_conn_fd(m->c.conn),
					    .events = POLLIN };
			uint64_t t0 = now_us();

			while (poll(&p, 1, 0) == 0 &&
			       now_us() - t0 < m->c.spin_us)
				;
		}
		if (xgpu_conn_read(m->c.conn, &f, sizeof(f))) {
			bad = "";
			break;
		}
		switch (f.type) {
		case XGPUIF_NET_SLOTS:
			bad = on_slots(m, &f);
			break;
		case XGPUIF_NET_DATA:
			bad = land(m, m->c.conn, &f, NULL);
			break;
		case XGPUIF_NET_BARRIER:
			bad = on_barrier(m, &f);
			break;
		case XGPUIF_NET_EXPECT:
			bad = on_expect(m, &f);
			break;
		case XGPUIF_NET_HOSTFN:
			bad = on_hostfn(m, &f);
			break;
		case XGPUIF_NET_FILL:
			bad = on_fill(m, &f);
			break;
		default:
			bad = "an unknown frame";
		}
	}
	if (*bad) {
		char why[160];

		snprintf(why, sizeof(why), "protocol error from the %s: %s",
			 m->c.guest ? "backend" : "guest", bad);
		set_gone(m, why);
		/* nothing more is read: stop the peer's writes too */
		xgpu_conn_shutdown(m->c.conn);
	} else {
		set_gone(m, "the connection ended");
	}
	return NULL;
}
