// SPDX-License-Identifier: MIT
/*
 * fuzz_mirror.c: libFuzzer target of what one end of the network
 * transport makes of the frames its peer sends (shared-ring/
 * xgpu_mirror.c): slots out of turn or beyond the ring, data outside the
 * data area or nobody asked for, expects, barriers, host-function slots
 * (of a state, size or index the receiving end does not take), unknown
 * frames.  The connection is a stand-in that reads the input and drops
 * what is written (TLS is check_tls's); no lanes.
 *
 * The first byte picks the end:
 *   even  the backend's: this thread plays the worker, answering every
 *         request the mirror publishes and flushing, so that expects
 *         become due and their bytes are shipped
 *   odd   the guest's: 8 requests are shipped first (so replies to them
 *         are in turn) and two expects wait, one into the data area, one
 *         into a buffer of the program's
 * The rest is the byte stream from the peer.  Whatever it holds, the
 * mirror ends (the input's end reads as the peer's) without touching
 * memory outside the ring, the data area and the expects' buffers
 * (ASan), and the next frame after a bad one is never read.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xgpu_mirror.h"
#include "xgpu_tls.h"
#include "xgpuif.h"

/* ---- the stand-in connection ---------------------------------------------- */

struct xgpu_conn {
	const uint8_t *p;
	size_t n, at;
	pthread_mutex_t mu;
	int shut;
};

int xgpu_conn_read(struct xgpu_conn *c, void *buf, size_t len)
{
	int rc = -EPIPE;

	pthread_mutex_lock(&c->mu);
	if (!c->shut && c->n - c->at >= len) {
		memcpy(buf, c->p + c->at, len);
		c->at += len;
		rc = 0;
	} else {
		c->at = c->n;
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int xgpu_conn_write(struct xgpu_conn *c, const void *buf, size_t len)
{
	volatile uint8_t sink = 0;

	/* read what is sent: a stale or wild pointer shows in ASan */
	for (size_t i = 0; i < len; i += 512)
		sink ^= ((const uint8_t *)buf)[i];
	if (len)
		sink ^= ((const uint8_t *)buf)[len - 1];
	(void)sink;
	return c->shut ? -EPIPE : 0;
}

int xgpu_conn_poll(struct xgpu_conn *c, int wake_fd, int timeout_ms)
{
	(void)c;
	(void)wake_fd;
	(void)timeout_ms;
	return 1;
}

bool xgpu_conn_buffered(const struct xgpu_conn *c)
{
	(void)c;
	return true;	/* the input is all there: no polling */
}

int xgpu_conn_fd(const struct xgpu_conn *c)
{
	(void)c;
	return -1;
}

void xgpu_conn_shutdown(struct xgpu_conn *c)
{
	pthread_mutex_lock(&c->mu);
	c->shut = 1;
	pthread_mutex_unlock(&c->mu);
}

void xgpu_conn_close(struct xgpu_conn *c)
{
	(void)c;	/* the caller's, on its stack */
}

/* ---- the target ------------------------------------------------------------- */

#define ORDER		0u
#define DATA_BYTES	(64u << 10)
#define NHF		8u

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
	size_t ring_bytes = (size_t)XGPUIF_PAGE_SIZE << ORDER;
	static uint8_t mem[(XGPUIF_PAGE_SIZE << ORDER) + DATA_BYTES]
		__attribute__((aligned(4096)));
	static struct xgpuif_hostfn_slot hf[NHF];
	uint8_t *buf;
	struct xgpu_conn c = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct xgpu_mirror_cfg cfg;
	struct xgpu_mirror *m;
	struct xgpuif_sring *s = (struct xgpuif_sring *)mem;
	char err[160];
	bool guest;
	uint64_t t1 = 0, t2 = 0;

	if (n < 1)
		return 0;
	guest = in[0] & 1;
	c.p = in + 1;
	c.n = n - 1;
	memset(mem, 0, sizeof(mem));
	SHARED_RING_INIT(s);
	buf = malloc(8192);
	if (!buf)
		return 0;
	/* host-function slots: the backend has the first half DUE (a DONE
	 * for them is taken), the guest all FREE */
	memset(hf, 0, sizeof(hf));
	for (unsigned int i = 0; !guest && i < NHF / 2; i++)
		hf[i].state = XGPUIF_HF_DUE;
	cfg = (struct xgpu_mirror_cfg){
		.guest = guest, .conn = &c, .sring = s, .ring_order = ORDER,
		.data = mem + ring_bytes, .data_bytes = DATA_BYTES,
		.spin_us = 0, .barrier_ms = 1, .hostfn = hf, .nhostfn = NHF,
	};
	if (guest) {
		/* 8 one-slot requests, as the library would push them */
		for (unsigned int i = 0; i < 8; i++) {
			struct xgpuif_request *r = &s->ring[i].req;

			r->id = i + 1;
			r->op = 1;
			r->nslots = 1;
		}
		s->req_prod = 8;
	}
	m = xgpu_mirror_start(&cfg, err, sizeof(err));
	if (!m) {
		free(buf);
		return 0;
	}
	if (guest) {
		xgpu_mirror_flush(m);
		xgpu_mirror_expect(m, 0, 100, NULL, &t1);
		xgpu_mirror_expect(m, 4096, 8192, buf, &t2);
		while (xgpu_mirror_wait(m, 1) != -EPIPE)
			;
		if (t1)
			xgpu_mirror_expect_wait(m, t1);
		if (t2)
			xgpu_mirror_expect_wait(m, t2);
	} else {
		/* the worker: a host function due, then answer what is
		 * published, flush, until the peer is gone */
		xgpu_mirror_hostfn_ship(m, 0);
		for (;;) {
			RING_IDX p = __atomic_load_n(&s->req_prod,
						     __ATOMIC_ACQUIRE);

			__atomic_store_n(&s->rsp_prod, p, __ATOMIC_RELEASE);
			xgpu_mirror_flush(m);
			if (xgpu_mirror_wait(m, 1) == -EPIPE)
				break;
		}
	}
	xgpu_mirror_stop(m);
	free(buf);
	return 0;
}
