// SPDX-License-Identifier: MIT
/*
 * xgpu_mirror.c: a channel's ring and data area kept in step over a byte
 * stream (xgpu_mirror.h says what travels): a mirror's set-up, its lanes
 * and its end.  The sending half is xgpu_mirror_tx.c, the receiving half
 * xgpu_mirror_rx.c; xgpu_mirror_int.h says what they share.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "xgpu_mirror_int.h"

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
	rc = pthread_create(&l->tx, NULL, xgpu_mirror_lane_tx_main, l);
	if (!rc) {
		rc = pthread_create(&l->rx, NULL, xgpu_mirror_lane_rx_main, l);
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
	m->hf = cfg->hostfn;
	m->nhf = cfg->hostfn ? cfg->nhostfn : 0;
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
	errno = pthread_create(&m->rx, NULL, xgpu_mirror_rx_main, m);
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
