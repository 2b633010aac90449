/* SPDX-License-Identifier: MIT */
/*
 * xgpu_mirror_int.h: what the three files of the mirror share (the
 * mirror itself, its sending half xgpu_mirror_tx.c and its receiving half
 * xgpu_mirror_rx.c): the structs and the small helpers both halves use.
 * Not part of the mirror's interface (xgpu_mirror.h).
 *
 * Threads: the receiving thread (rx) is the only reader of the connection;
 * every writer holds send_mu for a whole frame, so frames never
 * interleave.  Each end's producer index and event index follow Xen's
 * ring rules, so the party on each end (the guest library, the worker)
 * sees an ordinary ring: it pushes and notifies as it would with shared
 * memory, and its notify ships the new slots (flush).  mu guards the
 * expects, `gone` and `why`.
 */
#ifndef XGPU_MIRROR_INT_H
#define XGPU_MIRROR_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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
	/* sending a piece (its source is read until it is cleared) */
	bool busy;
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
	/* the host-function slots (xgpu_mirror_hostfn_area), under mu */
	struct xgpuif_hostfn_slot *hf;
	unsigned int nhf;
};

#define SLOT XGPUIF_SLOT_SIZE

static inline RING_IDX *own_prod(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->req_prod : &m->c.sring->rsp_prod;
}

static inline RING_IDX *own_event(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->req_event : &m->c.sring->rsp_event;
}

static inline RING_IDX *peer_prod(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->rsp_prod : &m->c.sring->req_prod;
}

static inline RING_IDX *peer_event(struct xgpu_mirror *m)
{
	return m->c.guest ? &m->c.sring->rsp_event : &m->c.sring->req_event;
}

static inline uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline void kick(struct xgpu_mirror *m)
{
	uint64_t one = 1;

	(void)!write(m->kick, &one, sizeof(one));
}

/* the connection is gone (why: the first reason given) */
static inline void set_gone(struct xgpu_mirror *m, const char *why)
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

static inline bool is_gone(struct xgpu_mirror *m)
{
	bool g;

	pthread_mutex_lock(&m->mu);
	g = m->gone;
	pthread_mutex_unlock(&m->mu);
	return g;
}

/* the sending half (xgpu_mirror_tx.c): a lane's sending thread */
void *xgpu_mirror_lane_tx_main(void *arg);
/* the receiving half (xgpu_mirror_rx.c): the connection's and a lane's
 * receiving threads */
void *xgpu_mirror_rx_main(void *arg);
void *xgpu_mirror_lane_rx_main(void *arg);

#endif /* XGPU_MIRROR_INT_H */
