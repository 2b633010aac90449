// SPDX-License-Identifier: MIT
/*
 * xgpulib_net.c: the network transport, guest side.  XGPU_SOCKET=
 * tcp://HOST:PORT names a backend's --listen address; the connection is
 * TLS 1.3, authenticated by a pre-shared key (XGPU_TLS_PSK, a file of
 * "IDENTITY HEXKEY" lines, XGPU_TLS_IDENTITY picking one) or by
 * certificates (XGPU_TLS_CERT, XGPU_TLS_KEY, XGPU_TLS_CA and optionally
 * XGPU_TLS_SERVER_NAME).  The ring and the data area are this process's
 * own memory, kept in step with the worker's copies by a mirror
 * (xgpu_mirror.h).  There is no memory to share on a network: pinned
 * memory is ordinary memory whose copies are staged, managed memory is
 * coherent (xgpulib_mco.h: its blocks travel through a part of the data
 * area), host functions' slots are mirrored, and what needs the worker to
 * reach the program's memory while the GPU runs (registered or pinned
 * memory mapped for kernels, graph copies of host memory) is refused
 * (README).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_transport.h"
#include "xgpu_addr.h"
#include "xgpu_mirror.h"
#include "xgpu_tls.h"

#define CONNECT_MS	5000
/* the data area's part for managed memory's blocks (the largest block) */
#define MCO_PART	(2u << 20)

struct net {
	struct xgpulib_transport t;
	struct xgpu_mirror *m;
	void *map;
	size_t map_bytes;
};

static int net_notify(struct xgpulib_transport *t)
{
	return xgpu_mirror_flush(((struct net *)t)->m);
}

static int net_wait(struct xgpulib_transport *t, int timeout_ms)
{
	return xgpu_mirror_wait(((struct net *)t)->m, timeout_ms);
}

static int net_hostmem_alloc(struct xgpulib_transport *t, uint32_t region,
			     size_t size, void **va, struct xgpuif_memref *dir)
{
	(void)t;
	(void)region;
	(void)size;
	(void)va;
	(void)dir;
	return -EOPNOTSUPP;
}

static void net_hostmem_free(struct xgpulib_transport *t, uint32_t region,
			     void *va, size_t size)
{
	(void)t;
	(void)region;
	(void)va;
	(void)size;
}

static int net_put(struct xgpulib_transport *t, size_t off, const void *src,
		   size_t len)
{
	return xgpu_mirror_put(((struct net *)t)->m, off, src, len);
}

static int net_put_start(struct xgpulib_transport *t, size_t off,
			 const void *src, size_t len, uint64_t *sent)
{
	return xgpu_mirror_put_start(((struct net *)t)->m, off, src, len, sent);
}

static int net_put_wait(struct xgpulib_transport *t, const uint64_t *sent,
			uint64_t total)
{
	return xgpu_mirror_put_wait(((struct net *)t)->m, sent, total);
}

static int net_expect(struct xgpulib_transport *t, size_t off, size_t len,
		      void *dst, uint64_t *ticket)
{
	return xgpu_mirror_expect(((struct net *)t)->m, off, len, dst, ticket);
}

static int net_expect_wait(struct xgpulib_transport *t, uint64_t ticket)
{
	return xgpu_mirror_expect_wait(((struct net *)t)->m, ticket);
}

static int net_hostfn_area(struct xgpulib_transport *t,
			   struct xgpuif_hostfn_slot *s, unsigned int n)
{
	xgpu_mirror_hostfn_area(((struct net *)t)->m, s, n);
	return 0;
}

static int net_hostfn_ship(struct xgpulib_transport *t, unsigned int i,
			   size_t off, size_t len)
{
	return xgpu_mirror_hostfn_ship_data(((struct net *)t)->m, i, off, len);
}

static void net_close(struct xgpulib_transport *t)
{
	struct net *n = (struct net *)t;

	xgpu_mirror_stop(n->m);
	munmap(n->map, n->map_bytes);
	free(n);
}

static const struct xgpulib_transport_ops net_ops = {
	.name = "net", XGPULIB_TRANSPORT_FNS(net),
	.put = net_put, .put_start = net_put_start, .put_wait = net_put_wait,
	.expect = net_expect, .expect_wait = net_expect_wait,
	.hostfn_area = net_hostfn_area, .hostfn_ship = net_hostfn_ship,
};

/* a TCP connection to host:port within CONNECT_MS: the socket or -errno */
static int tcp_connect(const char *host, const char *port, char *msg,
		       size_t msglen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *a;
	int fd = -1, rc, one = 1;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(msg, msglen, "cannot resolve %s: %s", host,
			 gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	rc = -ECONNREFUSED;
	for (a = res; a; a = a->ai_next) {
		struct pollfd p;
		int err = 0;
		socklen_t el = sizeof(err);

		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 &&
		    errno != EINPROGRESS) {
			rc = -errno;
			close(fd);
			fd = -1;
			continue;
		}
		p = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, CONNECT_MS) != 1)
			err = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			err = errno;
		if (!err)
			break;
		rc = -err;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(msg, msglen, "cannot connect to %s port %s: %s", host,
			 port, strerror(-rc));
		return rc;
	}
	/* blocking from here; requests are small: no Nagle delay */
	(void)!fcntl(fd, F_SETFL, 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* one more connection for the channel's large copies: 0 or -errno */
static int open_lane(struct net *n, struct xgpu_tls *tls, const char *host,
		     const char *port, const uint8_t *token, uint32_t index)
{
	struct xgpuif_net_lane_hello h;
	struct xgpu_conn *c;
	char err[200];
	int fd, rc;

	fd = tcp_connect(host, port, err, sizeof(err));
	if (fd < 0) {
		xgpulib_dbg("a lane: %s", err);
		return fd;
	}
	memcpy(h.magic, XGPUIF_NET_LANE_MAGIC, sizeof(h.magic));
	memcpy(h.token, token, sizeof(h.token));
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	c = xgpu_conn_connect(tls, fd, CONNECT_MS, err, sizeof(err));
	if (!c) {
		xgpulib_dbg("a lane: %s", err);
		return -EACCES;
	}
	/* its number first: the backend's count of its bytes is this one */
	rc = xgpu_conn_write(c, &index, sizeof(index));
	if (!rc)
		rc = xgpu_mirror_add_lane(n->m, c, index);
	if (rc)
		xgpu_conn_close(c);
	return rc;
}

static struct xgpu_tls *client_tls(char *msg, size_t msglen)
{
	struct xgpu_tls_opts o = {
		.psk_file = xgpulib_env_str("XGPU_TLS_PSK", NULL),
		.identity = xgpulib_env_str("XGPU_TLS_IDENTITY", NULL),
		.cert = xgpulib_env_str("XGPU_TLS_CERT", NULL),
		.key = xgpulib_env_str("XGPU_TLS_KEY", NULL),
		.ca = xgpulib_env_str("XGPU_TLS_CA", NULL),
		.server_name = xgpulib_env_str("XGPU_TLS_SERVER_NAME", NULL),
	};

	if (!o.psk_file && !(o.cert && o.key && o.ca)) {
		snprintf(msg, msglen, "a network backend needs XGPU_TLS_PSK "
			 "(a key file), or XGPU_TLS_CERT, XGPU_TLS_KEY and "
			 "XGPU_TLS_CA");
		return NULL;
	}
	return xgpu_tls_client(&o, msg, msglen);
}

int xgpulib_net_connect(const char *url, struct xgpulib_transport **out,
			char *msg, size_t msglen)
{
	struct xgpu_addr addr;
	char err[200];
	struct xgpuif_local_welcome wel;
	struct xgpuif_local_connect con;
	struct xgpuif_local_status st;
	struct xgpuif_net_lanes lanes;
	struct xgpu_mirror_cfg cfg;
	unsigned int want;
	struct xgpu_tls *tls;
	struct xgpu_conn *conn;
	struct net *n;
	int fd, rc;

	if (xgpu_addr_parse(url, "tcp://", 0, &addr)) {
		snprintf(msg, msglen, "%s: not tcp://HOST:PORT", url);
		return -EINVAL;
	}
	tls = client_tls(msg, msglen);
	if (!tls)
		return -EACCES;
	fd = tcp_connect(addr.host, addr.port, msg, msglen);
	if (fd < 0) {
		xgpu_tls_free(tls);
		return fd;
	}
	conn = xgpu_conn_connect(tls, fd, CONNECT_MS, err, sizeof(err));
	if (!conn) {
		xgpu_tls_free(tls);
		snprintf(msg, msglen, "%s: %s", url, err);
		return -EACCES;
	}
	if (xgpu_conn_read(conn, &wel, sizeof(wel)) ||
	    wel.magic != XGPUIF_MAGIC || wel.version != XGPUIF_VERSION) {
		snprintf(msg, msglen, "%s: no xgpu backend greeting", url);
		rc = -EPROTO;
		goto out_conn;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		rc = -ENOMEM;
		snprintf(msg, msglen, "out of memory");
		goto out_conn;
	}
	snprintf(n->t.where, sizeof(n->t.where), "%s", url);
	n->map_bytes = xgpulib_hs_geometry(&wel, &n->t);
	n->map = mmap(NULL, n->map_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->map == MAP_FAILED) {
		rc = -ENOMEM;
		snprintf(msg, msglen, "cannot allocate the ring: %s",
			 strerror(errno));
		free(n);
		goto out_conn;
	}
	xgpulib_hs_place(&n->t, n->map, &con);
	rc = xgpu_conn_write(conn, &con, sizeof(con)) ||
	     xgpu_conn_read(conn, &st, sizeof(st)) ? -EPROTO : 0;
	rc = xgpulib_hs_status(rc ? NULL : &st, url, msg, msglen);
	if (rc)
		goto out_map;
	if (xgpu_conn_read(conn, &lanes, sizeof(lanes)) ||
	    lanes.magic != XGPUIF_MAGIC) {
		rc = -EPROTO;
		snprintf(msg, msglen, "%s closed the handshake", url);
		goto out_map;
	}
	cfg = (struct xgpu_mirror_cfg){
		.guest = true, .conn = conn, .sring = n->t.sring,
		.ring_order = n->t.ring_order, .data = n->t.data,
		.data_bytes = n->t.data_bytes,
		.spin_us = xgpulib_env_uint("XGPU_NET_SPIN_US", 200),
	};
	n->m = xgpu_mirror_start(&cfg, err, sizeof(err));
	if (!n->m) {
		rc = -ENOMEM;
		snprintf(msg, msglen, "%s: %s", url, err);
		goto out_map;
	}
	/* the data area's last part carries blocks of coherent managed
	 * memory (xgpulib_mco.h), the rest the copy engine's */
	n->t.mco_bytes = n->t.data_bytes >= 8 * MCO_PART ? MCO_PART :
			 (n->t.data_bytes / 8) & ~(size_t)(XGPUIF_PAGE_SIZE - 1);
	n->t.data_bytes -= n->t.mco_bytes;
	n->t.mco_off = n->t.data_bytes;
	/* the lanes: as many as the backend takes, XGPU_NET_LANES at most */
	want = xgpulib_env_uint("XGPU_NET_LANES", XGPUIF_NET_MAX_LANES);
	if (want > lanes.nlanes)
		want = lanes.nlanes;
	for (unsigned int i = 0; i < want; i++)
		if (open_lane(n, tls, addr.host, addr.port, lanes.token, i))
			break;	/* said with XGPU_DEBUG; fewer lanes */
	xgpu_tls_free(tls);
	n->t.ops = &net_ops;
	*out = &n->t;
	return 0;

out_map:
	munmap(n->map, n->map_bytes);
	free(n);
out_conn:
	xgpu_conn_close(conn);
	xgpu_tls_free(tls);
	return rc;
}
