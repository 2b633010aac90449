// SPDX-License-Identifier: MIT
/*
 * xgpub_net.c: the network transport, worker side.  The worker forked for
 * an accepted TCP connection authenticates the peer (TLS 1.3, xgpu_tls.h:
 * no request is read before that), runs the local transport's handshake
 * messages over the connection, and serves a ring and a data area of its
 * own memory that a mirror (xgpu_mirror.h) keeps in step with the
 * guest's, and so the host-function slots.  Host-memory regions cannot
 * be shared over a network: their requests are refused (the guest
 * library does not send them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpub.h"
#include "xgpub_broker.h"
#include "xgpub_ipc.h"
#include "xgpub_transport.h"
#include "xgpu_mirror.h"
#include "xgpu_tls.h"
#include "xgpuif_sock.h"

#define HANDSHAKE_MS 5000

struct net {
	struct xgpub_transport t;
	struct xgpu_mirror *m;
	void *map;
	size_t map_bytes;
	/* lanes: the daemon hands their connections on lane_fd; a thread
	 * authenticates each (the same peer as the channel's) */
	struct xgpu_tls *tls;
	int lane_fd;
	unsigned int lanes_max;
	pthread_t lane_thread;
	bool lane_started;
	char peer[160];
};

static void net_notify(struct xgpub_transport *t)
{
	(void)xgpu_mirror_flush(((struct net *)t)->m);
}

static int net_wait(struct xgpub_transport *t, int timeout_ms)
{
	return xgpu_mirror_wait(((struct net *)t)->m, timeout_ms);
}

/*
 * No memory is shared on a network, but the guest may keep part of the
 * data area for good (a graph's staging buffers: the bytes move with its
 * host functions' slots, xgpu_mirror.h): that part of this end's copy is
 * the region.  Or, for a registration the guest keeps equal by copies
 * (XGPUIF_REGION_ANON), fresh memory of this process at the guest's
 * address, where nothing of this process is: kernels given the guest's
 * host pointer then reach it, as natively.
 */
static int net_hostmem_map(struct xgpub_transport *t, uint32_t region,
			   uint64_t size, const struct xgpuif_memref *dir,
			   uint64_t guest_va, void **va)
{
	void *p;

	(void)region;
	if (dir->region == XGPUIF_REGION_ANON) {
		if (!guest_va || guest_va % XGPUIF_PAGE_SIZE ||
		    size % XGPUIF_PAGE_SIZE || guest_va + size < guest_va ||
		    guest_va > (uint64_t)UINTPTR_MAX - size)
			return -EINVAL;
		p = mmap((void *)(uintptr_t)guest_va, size,
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (p == MAP_FAILED)
			return -EEXIST;
		if (p != (void *)(uintptr_t)guest_va) {	/* an old kernel */
			munmap(p, size);
			return -EEXIST;
		}
		*va = p;
		return 0;
	}
	if (dir->region != XGPUIF_REGION_DATA || dir->len != size ||
	    dir->off % XGPUIF_PAGE_SIZE || dir->off > t->data_bytes ||
	    size > t->data_bytes - dir->off)
		return -EOPNOTSUPP;
	*va = t->data + dir->off;
	return 0;
}

static void net_hostmem_unmap(struct xgpub_transport *t, void *va,
			      uint64_t size)
{
	uint8_t *b = va;

	/* the data area's parts stay; memory of the guest's address goes */
	if (b < t->data || b >= t->data + t->data_bytes)
		munmap(va, size);
}

static void net_wait_gone(struct xgpub_transport *t)
{
	xgpu_mirror_wait_gone(((struct net *)t)->m);
}

static void net_close(struct xgpub_transport *t)
{
	struct net *n = (struct net *)t;
	const char *why = xgpu_mirror_why(n->m);

	if (!strncmp(why, "protocol", 8))
		xgpub_err("%s: %s", t->who, why);
	if (n->lane_fd >= 0)
		shutdown(n->lane_fd, SHUT_RDWR);
	if (n->lane_started)
		pthread_join(n->lane_thread, NULL);
	if (n->lane_fd >= 0)
		close(n->lane_fd);
	xgpu_mirror_stop(n->m);
	munmap(n->map, n->map_bytes);
	free(n);
}

static int net_hostfn_area(struct xgpub_transport *t,
			   struct xgpuif_hostfn_slot *s, unsigned int n)
{
	xgpu_mirror_hostfn_area(((struct net *)t)->m, s, n);
	return 0;
}

static int net_hostfn_ship(struct xgpub_transport *t, unsigned int i,
			   size_t off, size_t len)
{
	return xgpu_mirror_hostfn_ship_data(((struct net *)t)->m, i, off, len);
}

static const struct xgpub_transport_ops net_ops = {
	.name = "net", XGPUB_TRANSPORT_FNS(net),
	.hostfn_area = net_hostfn_area, .hostfn_ship = net_hostfn_ship,
};

/* the lanes' connections, as the daemon hands them over */
static void *lanes_main(void *arg)
{
	struct net *n = arg;
	unsigned int got = 0;

	while (got < n->lanes_max) {
		char addr[64], err[200];
		struct xgpu_conn *c;
		uint32_t index;
		int fd = -1, nfds = 0;
		ssize_t len;

		len = xgpuif_sock_recv(n->lane_fd, addr, sizeof(addr), &fd, 1,
				       &nfds, -1);
		if (len <= 0 || nfds != 1) {
			if (nfds)
				close(fd);
			if (len == -ETIMEDOUT || len == -EINTR)
				continue;
			break;	/* the daemon or the channel went */
		}
		addr[sizeof(addr) - 1] = 0;
		c = xgpu_conn_accept(n->tls, fd, HANDSHAKE_MS, err, sizeof(err));
		if (!c) {
			xgpub_err("%s: a lane from %s: refused: %s", n->t.who,
				  addr, err);
			continue;
		}
		if (strcmp(xgpu_conn_peer(c), n->peer)) {
			xgpub_err("%s: a lane from %s: refused: it is %s, the "
				  "channel's peer is %s", n->t.who, addr,
				  xgpu_conn_peer(c), n->peer);
			xgpu_conn_close(c);
			continue;
		}
		if (xgpu_conn_read(c, &index, sizeof(index)) ||
		    index >= n->lanes_max ||
		    xgpu_mirror_add_lane(n->m, c, index)) {
			xgpub_err("%s: a lane from %s: refused: no lane number "
				  "or a bad one", n->t.who, addr);
			xgpu_conn_close(c);
			continue;
		}
		got++;
	}
	return NULL;
}

static void refuse(struct xgpu_conn *c, int err, const char *why)
{
	struct xgpuif_local_status st;

	memset(&st, 0, sizeof(st));
	st.magic = XGPUIF_MAGIC;
	st.status = err;
	snprintf(st.msg, sizeof(st.msg), "%.119s", why);
	(void)xgpu_conn_write(c, &st, sizeof(st));
}

int xgpub_net_accept(struct xgpu_tls *tls, int fd, int lane_fd,
		     const char *addr, uint32_t client_id,
		     const struct xgpub_options *opt,
		     struct xgpub_transport **out)
{
	uint32_t max_data_pages = opt->max_data_pages;
	struct xgpuif_net_lanes lanes = { XGPUIF_MAGIC, 0, { 0 } };
	struct xgpuif_local_welcome wel = {
		XGPUIF_MAGIC, XGPUIF_VERSION, XGPUIF_MAX_RING_ORDER,
		max_data_pages, client_id, 0
	};
	struct xgpuif_local_connect con;
	struct xgpuif_local_status ok;
	struct xgpu_mirror_cfg cfg;
	struct xgpu_conn *c;
	struct net *n;
	char err[200], why[128], domain[XGPUB_IPC_DOMAIN_LEN];
	size_t ring_bytes;
	int rc;

	c = xgpu_conn_accept(tls, fd, HANDSHAKE_MS, err, sizeof(err));
	if (!c) {
		/* the one line an administrator looks for */
		xgpub_err("client %u from %s: refused: %s", client_id, addr,
			  err);
		return -EACCES;
	}
	/*
	 * Who the peer is, to the daemon, before a byte of the peer's own
	 * is read: the connections of one peer are one IPC domain
	 * (xgpub_broker.h).  A worker whose word the daemon did not take
	 * serves nobody.
	 */
	snprintf(domain, sizeof(domain), "client:%u", client_id);
	if (xgpub_broker_fd >= 0) {
		uint8_t hash[32];

		rc = xgpu_conn_peer_hash(c, hash);
		if (!rc)
			rc = xgpub_broker_peer(hash);
		if (rc) {
			xgpub_err("client %u from %s (%s): refused: the daemon "
				  "did not take its name (%s)", client_id, addr,
				  xgpu_conn_peer(c), strerror(-rc));
			xgpu_conn_close(c);
			return rc;
		}
		xgpub_peer_domain(hash, domain, sizeof(domain));
	}
	if (xgpu_conn_write(c, &wel, sizeof(wel)) ||
	    xgpu_conn_read(c, &con, sizeof(con)) ||
	    con.magic != XGPUIF_MAGIC) {
		xgpub_err("client %u from %s (%s): malformed handshake",
			  client_id, addr, xgpu_conn_peer(c));
		xgpu_conn_close(c);
		return -EPROTO;
	}
	rc = xgpub_check_connect(&con, max_data_pages, why, sizeof(why));
	if (rc)
		goto refused;
	n = calloc(1, sizeof(*n));
	if (!n) {
		snprintf(why, sizeof(why), "backend out of memory");
		rc = -ENOMEM;
		goto refused;
	}
	ring_bytes = (size_t)XGPUIF_PAGE_SIZE << con.ring_order;
	n->map_bytes = ring_bytes + (size_t)con.data_pages * XGPUIF_PAGE_SIZE;
	n->map = mmap(NULL, n->map_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->map == MAP_FAILED) {
		free(n);
		snprintf(why, sizeof(why), "backend out of memory");
		rc = -ENOMEM;
		goto refused;
	}
	n->t.ops = &net_ops;
	n->t.sring = n->map;
	SHARED_RING_INIT(n->t.sring);
	n->t.ring_order = con.ring_order;
	n->t.data = (uint8_t *)n->map + ring_bytes;
	n->t.data_bytes = (size_t)con.data_pages * XGPUIF_PAGE_SIZE;
	/* the peer's authenticated name: its key for weights, caps and
	 * quotas (the process name it sends is only informative) */
	snprintf(n->t.proc, sizeof(n->t.proc), "%s", xgpu_conn_peer(c));
	snprintf(n->t.who, sizeof(n->t.who), "client %u (%.24s at %.46s)",
		 client_id, n->t.proc, addr);
	snprintf(n->t.ipc_domain, sizeof(n->t.ipc_domain), "%s", domain);
	n->lane_fd = lane_fd;
	n->tls = tls;
	snprintf(n->peer, sizeof(n->peer), "%s", xgpu_conn_peer(c));
	/* the lanes' token: where the daemon sees it, then to the guest */
	if (lane_fd >= 0 && opt->net_lanes && xgpub_self_stat &&
	    getrandom(lanes.token, sizeof(lanes.token), 0) ==
	    (ssize_t)sizeof(lanes.token)) {
		lanes.nlanes = opt->net_lanes;
		memcpy((void *)xgpub_self_stat->lane_token, lanes.token,
		       sizeof(lanes.token));
		__atomic_store_n(&xgpub_self_stat->lane_ready, 1,
				 __ATOMIC_RELEASE);
	}
	n->lanes_max = lanes.nlanes;
	memset(&ok, 0, sizeof(ok));
	ok.magic = XGPUIF_MAGIC;
	if (xgpu_conn_write(c, &ok, sizeof(ok)) ||
	    xgpu_conn_write(c, &lanes, sizeof(lanes))) {
		munmap(n->map, n->map_bytes);
		free(n);
		xgpu_conn_close(c);
		return -EPIPE;
	}
	cfg = (struct xgpu_mirror_cfg){
		.guest = false, .conn = c, .sring = n->t.sring,
		.ring_order = con.ring_order, .data = n->t.data,
		.data_bytes = n->t.data_bytes,
		/* as long as the worker polls its ring, at most 200 us */
		.spin_us = opt->spin_us < 200 ? opt->spin_us : 200,
	};
	n->m = xgpu_mirror_start(&cfg, err, sizeof(err));
	if (!n->m) {
		xgpub_err("client %u: %s", client_id, err);
		munmap(n->map, n->map_bytes);
		free(n);
		xgpu_conn_close(c);
		return -ENOMEM;
	}
	if (n->lanes_max &&
	    pthread_create(&n->lane_thread, NULL, lanes_main, n) == 0)
		n->lane_started = true;
	*out = &n->t;
	return 0;

refused:
	xgpub_err("client %u (%s from %s): refused: %s", client_id,
		  xgpu_conn_peer(c), addr, why);
	refuse(c, rc, why);
	xgpu_conn_close(c);
	return rc;
}
