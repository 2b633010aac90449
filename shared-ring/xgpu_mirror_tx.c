// SPDX-License-Identifier: MIT
/*
 * xgpu_mirror_tx.c: the mirror's sending half: frames gathered and
 * written under send_mu, DATA frames shared out to the lanes, and the
 * flush that ships a ring's new slots (and, at the backend, the bytes
 * the guest expects before the replies that say they are there); the
 * guest's puts and expects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xgpu_mirror_int.h"

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

void *xgpu_mirror_lane_tx_main(void *arg)
{
	struct lane *l = arg;
	struct xgpu_mirror *m = l->m;

	for (;;) {
		struct xgpuif_net_frame f = { XGPUIF_NET_DATA, 0, 0 };
		struct piece p;
		bool failed;

		pthread_mutex_lock(&m->mu);
		while (l->qh == l->qt && !m->gone)
			pthread_cond_wait(&l->cv, &m->mu);
		if (m->gone) {
			pthread_mutex_unlock(&m->mu);
			return NULL;
		}
		p = l->q[l->qh % LANE_Q];
		l->busy = true;
		pthread_mutex_unlock(&m->mu);
		f.len = (uint32_t)p.len;
		f.arg = p.off;
		failed = xgpu_conn_write(l->c, &f, sizeof(f)) ||
			 xgpu_conn_write(l->c, p.src, p.len);
		if (failed)
			set_gone(m, "a lane failed while sending");
		pthread_mutex_lock(&m->mu);
		l->busy = false;
		if (!failed) {
			l->qh++;
			if (p.sent)
				*p.sent += p.len;
		}
		pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
		if (failed)
			return NULL;
	}
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

/*
 * Gather what this end produced and the peer has not had (send_mu held):
 * at the backend the bytes of the expects whose replies are there, at the
 * guest a barrier for the lanes; then the new slots.  Written by the next
 * tx_flush.  0 or -EPIPE.
 */
static int gather_locked(struct xgpu_mirror *m, RING_IDX prod)
{
	struct expect e;

	if (is_gone(m))
		return -EPIPE;
	/* the bytes before the replies that tell the guest they are there
	 * (the backend's data area is the worker's, read only once the
	 * worker has replied) */
	while (!m->c.guest && expect_ready(m, prod, &e))
		if (ship_expect(m, &e))
			return -EPIPE;
	if (m->c.guest) {
		/* what went to the lanes lands before what follows: each
		 * lane's count so far */
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
		/* counted before they go: the replies may come back before
		 * the write returns */
		__atomic_store_n(&m->shipped, prod, __ATOMIC_RELEASE);
		if (send_slots(m, from, prod - from))
			return -EPIPE;
	}
	return 0;
}

static int flush_locked(struct xgpu_mirror *m)
{
	for (;;) {
		RING_IDX prod = __atomic_load_n(own_prod(m), __ATOMIC_ACQUIRE);

		if (gather_locked(m, prod) || tx_flush(m))
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

/* no lane reads a piece's source (mu held) */
static bool lanes_idle(struct xgpu_mirror *m)
{
	for (unsigned int i = 0; i < XGPUIF_NET_MAX_LANES; i++)
		if (m->lanes[i] && m->lanes[i]->busy)
			return false;
	return true;
}

int xgpu_mirror_put_start(struct xgpu_mirror *m, size_t off, const void *src,
			  size_t len, uint64_t *sent)
{
	int rc;

	if (off > m->c.data_bytes || len > m->c.data_bytes - off ||
	    len > UINT32_MAX)
		return -EINVAL;
	if (len >= XGPUIF_NET_LANE_MIN && xgpu_mirror_lanes(m))
		return to_lanes(m, off, src, len, sent);
	/* gathered: src is the caller's again at once */
	pthread_mutex_lock(&m->send_mu);
	rc = is_gone(m) ? -EPIPE :
	     send_frame(m, XGPUIF_NET_DATA, off, src, len);
	pthread_mutex_unlock(&m->send_mu);
	if (!rc) {
		pthread_mutex_lock(&m->mu);
		*sent += len;
		pthread_mutex_unlock(&m->mu);
	}
	return rc;
}

int xgpu_mirror_put_wait(struct xgpu_mirror *m, const uint64_t *sent,
			 uint64_t total)
{
	int rc;

	pthread_mutex_lock(&m->mu);
	/* gone: what was queued is never sent, but a lane may be reading
	 * a source still */
	while (*sent < total && !(m->gone && lanes_idle(m)))
		pthread_cond_wait(&m->cv, &m->mu);
	rc = *sent < total ? -EPIPE : 0;
	pthread_mutex_unlock(&m->mu);
	return rc;
}

int xgpu_mirror_put(struct xgpu_mirror *m, size_t off, const void *src,
		    size_t len)
{
	uint64_t sent = 0;
	int rc = xgpu_mirror_put_start(m, off, src, len, &sent);

	/* src is the caller's again only once all of it is sent (or no
	 * lane reads it any more) */
	if (rc != -EINVAL) {
		int w = xgpu_mirror_put_wait(m, &sent, len);

		rc = rc ? rc : w;
	}
	return rc;
}

void xgpu_mirror_hostfn_area(struct xgpu_mirror *m,
			     struct xgpuif_hostfn_slot *slots, unsigned int n)
{
	pthread_mutex_lock(&m->mu);
	m->hf = slots;
	m->nhf = n;
	pthread_mutex_unlock(&m->mu);
}

int xgpu_mirror_hostfn_ship_data(struct xgpu_mirror *m, unsigned int i,
				 size_t off, size_t len)
{
	struct xgpuif_hostfn_slot s;
	int rc;

	if (off > m->c.data_bytes || len > m->c.data_bytes - off ||
	    len > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&m->mu);
	if (!m->hf || i >= m->nhf) {
		pthread_mutex_unlock(&m->mu);
		return -EINVAL;
	}
	s = m->hf[i];
	s.state = __atomic_load_n(&m->hf[i].state, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&m->mu);
	pthread_mutex_lock(&m->send_mu);
	rc = is_gone(m) ? -EPIPE : 0;
	/* the bytes first, on this connection: the peer has them when it
	 * reads the slot that names them */
	if (!rc && len)
		rc = send_frame(m, m->c.guest ? XGPUIF_NET_DATA :
						XGPUIF_NET_FILL, off,
				m->c.data + off, len);
	if (!rc)
		rc = send_frame(m, XGPUIF_NET_HOSTFN, i, &s, sizeof(s));
	if (!rc)
		rc = tx_flush(m);
	pthread_mutex_unlock(&m->send_mu);
	return rc;
}

int xgpu_mirror_hostfn_ship(struct xgpu_mirror *m, unsigned int i)
{
	return xgpu_mirror_hostfn_ship_data(m, i, 0, 0);
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
	/* the request it follows goes first, whoever was to ship it, in
	 * the same write as the expect when it has not gone yet */
	rc = gather_locked(m, __atomic_load_n(own_prod(m), __ATOMIC_ACQUIRE));
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
	rc = flush_locked(m);
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
