// SPDX-License-Identifier: MIT
/*
 * xgpu_mirror.c: a channel's ring and data area kept in step over a byte
 * stream (xgpu_mirror.h says what travels).
 *
 * Threads: the receiving thread (rx) is the only reader of the connection;
 * every writer holds send_mu for a whole frame, so frames never
 * interleave.  Each end's producer index and event index follow Xen's
 * ring rules, so the party on each end (the guest library, the worker)
 * sees an ordinary ring: it pushes and notifies as it would with shared
 * memory, and its notify ships the new slots (flush).  mu guards the
 * expects, `gone` and `why`.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "xgpu_mirror.h"
#include "xgpu_tls.h"
#include "xgpuif.h"

struct expect {
	uint64_t mark;		/* backend: the peer's producer index when it
				 * came; guest: its ticket (0: free slot) */
	size_t off, len;
	void *dst;		/* guest: where its bytes land */
	size_t landed;		/* guest: bytes landed so far */
};

/* a share of a DATA frame for a lane to send */
struct piece {
	size_t off, len;
	const uint8_t *src;
	uint64_t *sent;		/* counted (under mu) once on the wire */
};

#define LANE_Q		64

/* an extra connection that carries DATA frames only */
struct lane {
	struct xgpu_mirror *m;
	struct xgpu_conn *c;
	pthread_t rx, tx;
	pthread_cond_t cv;	/* pieces queued, or stop (with m->mu) */
	struct piece q[LANE_Q];
	unsigned int qh, qt;
	/* guest: bytes of puts given to this lane; backend: bytes of puts
	 * landed from it (each lane is in order: a count is a prefix) */
	uint64_t bytes;
};

struct xgpu_mirror {
	struct xgpu_mirror_cfg c;
	uint8_t *slots;		/* the ring's first slot */
	unsigned int nslots;
	pthread_t rx;
	bool rx_started;
	pthread_mutex_t send_mu;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int kick;		/* eventfd: the peer's slots came, or gone */
	RING_IDX shipped;	/* our producer index, as far as shipped */
	RING_IDX recvd;		/* the peer's, as far as received */
	bool gone;
	char why[160];
	/* backend: expects in order; guest: by ticket % N */
	struct expect fifo[XGPUIF_NET_MAX_EXPECT];
	unsigned int head, tail;	/* backend: fifo[head % N .. tail % N) */
	uint64_t next_ticket;		/* guest */
	/* frames gathered for one write (send_mu): a ring's slots and small
	 * data go to the peer in one TLS record where they fit */
	uint8_t *tx;
	size_t tx_used, tx_cap;
	/* lanes (xgpu_mirror_add_lane) by the guest's number, under mu */
	struct lane *lanes[XGPUIF_NET_MAX_LANES];
	unsigned int nlanes, next_lane;
	uint64_t barrier_sent[XGPUIF_NET_MAX_LANES];	/* guest */
};

#define SLOT XGPUIF_SLOT_SIZE

static RING_IDX *own_prod(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->req_prod : &m->c.sring->rsp_prod;
}

static RING_IDX *own_event(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->req_event : &m->c.sring->rsp_event;
}

static RING_IDX *peer_prod(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->rsp_prod : &m->c.sring->req_prod;
}

static RING_IDX *peer_event(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->rsp_event : &m->c.sring->req_event;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void kick(struct xgpu_mirror *m)
{
	uint64_t one = 1;

	(void)!write(m->kick, &one, sizeof(one));
}

/* the connection is gone (why: the first reason given) */
static void set_gone(struct xgpu_mirror *m, const char *why)
{
	pthread_mutex_lock(&m->mu);
	if (!m->gone) {
		m->gone = true;
		snprintf(m->why, sizeof(m->why), "%s", why);
	}
	pthread_cond_broadcast(&m->cv);
	for (unsigned int i = 0; i < XGPUIF_NET_MAX_LANES; i++)
		if (m->lanes[i])
			pthread_cond_broadcast(&m->lanes[i]->cv);
	pthread_mutex_unlock(&m->mu);
	kick(m);
}

static bool is_gone(struct xgpu_mirror *m)
{
	bool g;

	pthread_mutex_lock(&m->mu);
	g = m->gone;
	pthread_mutex_unlock(&m->mu);
	return g;
}

/* ---- sending (send_mu held) ---------------------------------------------- */

/* write what is gathered (send_mu held): 0 or -EPIPE */
static int tx_flush(struct xgpu_mirror *m)
{
	int rc = 0;

	if (m->tx_used)
		rc = xgpu_conn_write(m->c.conn, m->tx, m->tx_used);
	m->tx_used = 0;
	if (rc)
		set_gone(m, "the connection failed while sending");
	return rc;
}

/*
 * A frame whose bytes are b1 then b2, gathered (send_mu held); one too
 * large to gather goes out at once, after what was gathered.
 */
static int send_frame2(struct xgpu_mirror *m, uint32_t type, uint64_t arg,
		       const void *b1, size_t l1, const void *b2, size_t l2)
{
	struct xgpuif_net_frame f = { type, (uint32_t)(l1 + l2), arg };
	size_t need = sizeof(f) + l1 + l2;
	int rc;

	if (m->tx_used + need > m->tx_cap && tx_flush(m))
		return -EPIPE;
	if (need <= m->tx_cap) {
		memcpy(m->tx + m->tx_used, &f, sizeof(f));
		if (l1)
			memcpy(m->tx + m->tx_used + sizeof(f), b1, l1);
		if (l2)
			memcpy(m->tx + m->tx_used + sizeof(f) + l1, b2, l2);
		m->tx_used += need;
		return 0;
	}
	rc = xgpu_conn_write(m->c.conn, &f, sizeof(f));
	if (!rc && l1)
		rc = xgpu_conn_write(m->c.conn, b1, l1);
	if (!rc && l2)
		rc = xgpu_conn_write(m->c.conn, b2, l2);
	if (rc)
		set_gone(m, "the connection failed while sending");
	return rc;
}

static int send_frame(struct xgpu_mirror *m, uint32_t type, uint64_t arg,
		      const void *body, size_t len)
{
	return send_frame2(m, type, arg, body, len, NULL, 0);
}

/*
 * slots [from, from + n) in one frame (0 < n <= nslots), wrapping or not:
 * the peer publishes a frame's slots at once, so a message is never seen
 * in part
 */
static int send_slots(struct xgpu_mirror *m, RING_IDX from, unsigned int n)
{
	unsigned int at = from & (m->nslots - 1);
	unsigned int k = n < m->nslots - at ? n : m->nslots - at;

	return send_frame2(m, XGPUIF_NET_SLOTS, from,
			   m->slots + (size_t)at * SLOT, (size_t)k * SLOT,
			   m->slots, (size_t)(n - k) * SLOT);
}

/* ---- lanes ---------------------------------------------------------------- */

/*
 * Give [off, off + len) of src to the lanes in shares (mu not held);
 * sent, where given, counts the bytes once on the wire.  0, or -EPIPE.
 */
static int to_lanes(struct xgpu_mirror *m, size_t off, const uint8_t *src,
		    size_t len, uint64_t *sent)
{
	size_t share;
	unsigned int n;

	pthread_mutex_lock(&m->mu);
	n = m->nlanes;
	share = (len / n + 4095) & ~(size_t)4095;
	for (size_t done = 0; done < len && !m->gone;) {
		struct lane *l = NULL;
		size_t k = len - done < share ? len - done : share;

		while (!l)	/* (a backend's lanes may have gaps) */
			l = m->lanes[m->next_lane++ % XGPUIF_NET_MAX_LANES];
		while (l->qt - l->qh == LANE_Q && !m->gone)
			pthread_cond_wait(&m->cv, &m->mu);
		if (m->gone)
			break;
		l->q[l->qt++ % LANE_Q] = (struct piece){ off + done, k,
							 src + done, sent };
		if (m->c.guest)
			l->bytes += k;
		pthread_cond_signal(&l->cv);
		done += k;
	}
	pthread_mutex_unlock(&m->mu);
	return is_gone(m) ? -EPIPE : 0;
}

static void *lane_tx_main(void *arg)
{
	struct lane *l = arg;
	struct xgpu_mirror *m = l->m;

	for (;;) {
		struct xgpuif_net_frame f = { XGPUIF_NET_DATA, 0, 0 };
		struct piece p;

		pthread_mutex_lock(&m->mu);
		while (l->qh == l->qt && !m->gone)
			pthread_cond_wait(&l->cv, &m->mu);
		if (m->gone) {
			pthread_mutex_unlock(&m->mu);
			return NULL;
		}
		p = l->q[l->qh % LANE_Q];
		pthread_mutex_unlock(&m->mu);
		f.len = (uint32_t)p.len;
		f.arg = p.off;
		if (xgpu_conn_write(l->c, &f, sizeof(f)) ||
		    xgpu_conn_write(l->c, p.src, p.len)) {
			set_gone(m, "a lane failed while sending");
			return NULL;
		}
		pthread_mutex_lock(&m->mu);
		l->qh++;
		if (p.sent)
			*p.sent += p.len;
		pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
	}
}

static const char *land(struct xgpu_mirror *m, struct xgpu_conn *c,
			const struct xgpuif_net_frame *f, struct lane *lane);

static void *lane_rx_main(void *arg)
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

int xgpu_mirror_add_lane(struct xgpu_mirror *m, struct xgpu_conn *c,
			 unsigned int index)
{
	struct lane *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return -ENOMEM;
	l->m = m;
	l->c = c;
	pthread_cond_init(&l->cv, NULL);
	pthread_mutex_lock(&m->mu);
	if (index >= XGPUIF_NET_MAX_LANES || m->lanes[index] || m->gone) {
		pthread_mutex_unlock(&m->mu);
		free(l);
		return m->gone ? -EPIPE : -EEXIST;
	}
	rc = pthread_create(&l->tx, NULL, lane_tx_main, l);
	if (!rc) {
		rc = pthread_create(&l->rx, NULL, lane_rx_main, l);
		if (rc) {
			m->gone = true;	/* the tx thread ends */
			pthread_cond_broadcast(&l->cv);
			pthread_mutex_unlock(&m->mu);
			pthread_join(l->tx, NULL);
			set_gone(m, "cannot start a lane's thread");
			free(l);
			return -rc;
		}
	}
	if (rc) {
		pthread_mutex_unlock(&m->mu);
		free(l);
		return -rc;
	}
	m->lanes[index] = l;
	m->nlanes++;
	pthread_mutex_unlock(&m->mu);
	return 0;
}

unsigned int xgpu_mirror_lanes(struct xgpu_mirror *m)
{
	unsigned int n;

	pthread_mutex_lock(&m->mu);
	n = m->nlanes;
	pthread_mutex_unlock(&m->mu);
	return n;
}

/* backend: an expect's bytes, on the lanes or this connection */
static int ship_expect(struct xgpu_mirror *m, const struct expect *e)
{
	if (e->len >= XGPUIF_NET_LANE_MIN && xgpu_mirror_lanes(m))
		return to_lanes(m, e->off, m->c.data + e->off, e->len, NULL);
	return send_frame(m, XGPUIF_NET_DATA, e->off, m->c.data + e->off,
			  e->len);
}

/*
 * backend: the oldest expect, if every request before it has its reply
 * (taken off the queue where e is given)
 */
static bool expect_ready(struct xgpu_mirror *m, RING_IDX prod,
			 struct expect *e)
{
	bool ok = false;

	pthread_mutex_lock(&m->mu);
	if (m->head != m->tail) {
		const struct expect *h = &m->fifo[m->head %
						  XGPUIF_NET_MAX_EXPECT];

		if ((int32_t)(prod - (RING_IDX)h->mark) >= 0) {
			ok = true;
			if (e) {
				*e = *h;
				m->head++;
			}
		}
	}
	pthread_mutex_unlock(&m->mu);
	return ok;
}

static int flush_locked(struct xgpu_mirror *m)
{
	for (;;) {
		RING_IDX prod = __atomic_load_n(own_prod(m), __ATOMIC_ACQUIRE);
		struct expect e;

		if (is_gone(m))
			return -EPIPE;
		/* the bytes before the replies that tell the guest they are
		 * there (the backend's data area is the worker's, read only
		 * once the worker has replied) */
		while (!m->c.guest && expect_ready(m, prod, &e))
			if (ship_expect(m, &e))
				return -EPIPE;
		if (m->c.guest) {
			/* what went to the lanes lands before what follows:
			 * each lane's count so far */
			uint64_t put[XGPUIF_NET_MAX_LANES] = { 0 };
			unsigned int n = 0;
			bool news = false;

			pthread_mutex_lock(&m->mu);
			for (unsigned int i = 0; i < XGPUIF_NET_MAX_LANES; i++)
				if (m->lanes[i]) {
					put[i] = m->lanes[i]->bytes;
					news |= put[i] != m->barrier_sent[i];
					n = i + 1;
				}
			pthread_mutex_unlock(&m->mu);
			if (news) {
				if (send_frame(m, XGPUIF_NET_BARRIER, 0, put,
					       n * sizeof(put[0])))
					return -EPIPE;
				memcpy(m->barrier_sent, put, sizeof(put));
			}
		}
		if (m->shipped != prod) {
			RING_IDX from = m->shipped;

			if ((RING_IDX)(prod - from) > m->nslots)
				return -EPIPE;	/* our own side broke it */
			/* counted before they go: the replies may come back
			 * before the write returns */
			__atomic_store_n(&m->shipped, prod, __ATOMIC_RELEASE);
			if (send_slots(m, from, prod - from))
				return -EPIPE;
		}
		if (tx_flush(m))
			return -EPIPE;
		/* ask to be notified of the next slot, then look again: a
		 * push that did not see the new event index is seen here */
		__atomic_store_n(own_event(m), prod + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(own_prod(m), __ATOMIC_ACQUIRE) == prod &&
		    (m->c.guest || !expect_ready(m, prod, NULL)))
			return 0;
	}
}

int xgpu_mirror_flush(struct xgpu_mirror *m)
{
	int rc;

	pthread_mutex_lock(&m->send_mu);
	rc = flush_locked(m);
	pthread_mutex_unlock(&m->send_mu);
	return rc;
}

int xgpu_mirror_put(struct xgpu_mirror *m, size_t off, const void *src,
		    size_t len)
{
	int rc;

	if (off > m->c.data_bytes || len > m->c.data_bytes - off ||
	    len > UINT32_MAX)
		return -EINVAL;
	if (len >= XGPUIF_NET_LANE_MIN && xgpu_mirror_lanes(m)) {
		uint64_t sent = 0;

		rc = to_lanes(m, off, src, len, &sent);
		/* src is the caller's again only once all of it is sent */
		pthread_mutex_lock(&m->mu);
		while (sent < len && !m->gone)
			pthread_cond_wait(&m->cv, &m->mu);
		if (sent < len)
			rc = -EPIPE;
		pthread_mutex_unlock(&m->mu);
		return rc;
	}
	pthread_mutex_lock(&m->send_mu);
	rc = is_gone(m) ? -EPIPE :
	     send_frame(m, XGPUIF_NET_DATA, off, src, len);
	pthread_mutex_unlock(&m->send_mu);
	return rc;
}

int xgpu_mirror_expect(struct xgpu_mirror *m, size_t off, size_t len,
		       void *dst, uint64_t *ticket)
{
	struct xgpuif_net_frame f = { XGPUIF_NET_EXPECT, (uint32_t)len, off };
	int rc;

	if (off > m->c.data_bytes || len > m->c.data_bytes - off ||
	    len > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&m->send_mu);
	/* the request it follows goes first, whoever was to ship it */
	rc = flush_locked(m);
	if (rc)
		goto out;
	pthread_mutex_lock(&m->mu);
	if (m->fifo[(m->next_ticket + 1) % XGPUIF_NET_MAX_EXPECT].mark) {
		/* the oldest ticket in that place was never waited for */
		pthread_mutex_unlock(&m->mu);
		rc = -ENOSPC;
		goto out;
	}
	*ticket = ++m->next_ticket;
	m->fifo[*ticket % XGPUIF_NET_MAX_EXPECT] =
		(struct expect){ *ticket, off, len, dst, 0 };
	pthread_mutex_unlock(&m->mu);
	/* (its len is the range's, with no bytes after it) */
	if (m->tx_used + sizeof(f) > m->tx_cap && tx_flush(m)) {
		rc = -EPIPE;
		goto out;
	}
	memcpy(m->tx + m->tx_used, &f, sizeof(f));
	m->tx_used += sizeof(f);
	rc = tx_flush(m);
out:
	pthread_mutex_unlock(&m->send_mu);
	return rc;
}

int xgpu_mirror_expect_wait(struct xgpu_mirror *m, uint64_t ticket)
{
	int rc;

	struct expect *e = &m->fifo[ticket % XGPUIF_NET_MAX_EXPECT];
	uint64_t t0 = now_us();

	/* the bytes usually come with the reply or just after: look for
	 * them a while before sleeping (a wake-up costs tens of us) */
	while (now_us() - t0 < m->c.spin_us &&
	       __atomic_load_n(&e->landed, __ATOMIC_ACQUIRE) <
	       __atomic_load_n(&e->len, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&m->gone, __ATOMIC_RELAXED))
		;
	pthread_mutex_lock(&m->mu);
	if (e->mark != ticket) {
		pthread_mutex_unlock(&m->mu);
		return -EINVAL;
	}
	while (e->landed < e->len && !m->gone)
		pthread_cond_wait(&m->cv, &m->mu);
	rc = e->landed == e->len ? 0 : -EPIPE;
	e->mark = 0;
	pthread_mutex_unlock(&m->mu);
	return rc;
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

static void *rx_main(void *arg)
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
		if (m->c.spin_us && xgpu_conn_poll(m->c.conn, -1, 0) == 0) {
			/* nothing buffered in TLS: watch the socket itself,
			 * without the connection's lock (its writers need
			 * it) */
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

/* ---- set-up --------------------------------------------------------------- */

struct xgpu_mirror *xgpu_mirror_start(const struct xgpu_mirror_cfg *cfg,
				      char *err, size_t errlen)
{
	struct xgpu_mirror *m = calloc(1, sizeof(*m));
	size_t bytes = (size_t)XGPUIF_PAGE_SIZE << cfg->ring_order;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->c = *cfg;
	if (!m->c.barrier_ms)
		m->c.barrier_ms = 30000;
	m->slots = (uint8_t *)&cfg->sring->ring[0];
	m->nslots = __RING_SIZE(cfg->sring, bytes);
	m->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* a ring's slots, a few frame headers and small data */
	m->tx_cap = 4 * sizeof(struct xgpuif_net_frame) +
		    (size_t)m->nslots * SLOT + (32u << 10);
	m->tx = malloc(m->tx_cap);
	pthread_mutex_init(&m->send_mu, NULL);
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	if (m->kick < 0 || !m->tx) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	m->shipped = *own_prod(m);
	m->recvd = *peer_prod(m);
	errno = pthread_create(&m->rx, NULL, rx_main, m);
	if (errno) {
		snprintf(err, errlen, "cannot start a thread: %s",
			 strerror(errno));
		goto fail;
	}
	m->rx_started = true;
	return m;
fail:
	if (m->kick >= 0)
		close(m->kick);
	free(m->tx);
	free(m);
	return NULL;
}

int xgpu_mirror_wait(struct xgpu_mirror *m, int timeout_ms)
{
	struct pollfd p = { .fd = m->kick, .events = POLLIN };
	uint64_t v;

	if (is_gone(m))
		return -EPIPE;
	if (poll(&p, 1, timeout_ms) > 0)
		(void)!read(m->kick, &v, sizeof(v));
	return is_gone(m) ? -EPIPE : 0;
}

void xgpu_mirror_wait_gone(struct xgpu_mirror *m)
{
	pthread_mutex_lock(&m->mu);
	while (!m->gone)
		pthread_cond_wait(&m->cv, &m->mu);
	pthread_mutex_unlock(&m->mu);
}

const char *xgpu_mirror_why(struct xgpu_mirror *m)
{
	return m->why;
}

void xgpu_mirror_stop(struct xgpu_mirror *m)
{
	if (!m)
		return;
	set_gone(m, "closed");
	xgpu_conn_shutdown(m->c.conn);
	for (unsigned int i = 0; i < XGPUIF_NET_MAX_LANES; i++)
		if (m->lanes[i])
			xgpu_conn_shutdown(m->lanes[i]->c);
	if (m->rx_started)
		pthread_join(m->rx, NULL);
	for (unsigned int i = 0; i < XGPUIF_NET_MAX_LANES; i++) {
		struct lane *l = m->lanes[i];

		if (!l)
			continue;
		pthread_join(l->tx, NULL);
		pthread_join(l->rx, NULL);
		xgpu_conn_close(l->c);
		pthread_cond_destroy(&l->cv);
		free(l);
	}
	xgpu_conn_close(m->c.conn);
	close(m->kick);
	free(m->tx);
	pthread_mutex_destroy(&m->send_mu);
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->cv);
	free(m);
}
