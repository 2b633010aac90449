// SPDX-License-Identifier: MIT
/*
 * xgpub_net_clients.c: the daemon's side of the network transport: the
 * --listen socket, the TLS configuration (read once at start, so that a
 * key file with wrong permissions stops the daemon before it serves), and
 * a worker forked for each accepted connection.  The TLS handshake runs
 * in that worker (xgpub_net_accept), bounded in time, so a peer that
 * stalls or sends garbage holds only its own process.  Connections past
 * --max-net at once are closed with a log line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpub_daemon.h"
#include "xgpub_net_clients.h"
#include "xgpub_transport.h"
#include "xgpub_worker.h"
#include "xgpu_tls.h"

static struct xgpu_tls *tls;
static uint32_t next_id = 1u << 20;	/* apart from local clients' ids */

int xgpub_net_open(const char *spec, const struct xgpu_tls_opts *o)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE,
	}, *res;
	char host[256], port[16], err[256];
	const char *h = spec + 4, *colon, *end;
	int fd = -1, one = 1, rc;

	if (strncmp(spec, "tcp:", 4))
		goto bad;
	if (*h == '[') {
		end = strchr(++h, ']');
		if (!end || end[1] != ':')
			goto bad;
		colon = end + 1;
	} else {
		end = colon = strrchr(h, ':');
	}
	if (!colon || (size_t)(end - h) >= sizeof(host) || !colon[1] ||
	    strlen(colon + 1) >= sizeof(port))
		goto bad;
	memcpy(host, h, (size_t)(end - h));
	host[end - h] = 0;
	snprintf(port, sizeof(port), "%s", colon + 1);
	if (!o->psk_file && !(o->cert && o->key && o->ca)) {
		fprintf(stderr, "xen-gpubackd: --listen %s needs --tls-psk FILE "
			"or --tls-cert, --tls-key and --tls-ca: there is no "
			"unauthenticated network listener\n", spec);
		return -EINVAL;
	}
	tls = xgpu_tls_server(o, err, sizeof(err));
	if (!tls) {
		fprintf(stderr, "xen-gpubackd: --listen %s: %s\n", spec, err);
		return -EACCES;
	}
	rc = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (rc) {
		fprintf(stderr, "xen-gpubackd: --listen %s: %s\n", spec,
			gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 ||
		    listen(fd, 64) < 0) {
			rc = errno;
			close(fd);
			fd = -1;
			errno = rc;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "xen-gpubackd: --listen %s: %s\n", spec,
			strerror(errno));
		return -errno;
	}
	return fd;
bad:
	fprintf(stderr, "xen-gpubackd: --listen: '%s' is not tcp:ADDRESS:PORT "
		"(e.g. tcp:0.0.0.0:7400 or tcp:[::1]:7400)\n", spec);
	return -EINVAL;
}

struct net_arg {
	int conn;
	uint32_t id;
	char addr[64];
	const struct xgpub_options *opt;
};

static int serve_client(void *p)
{
	struct net_arg *a = p;
	struct xgpub_transport *t;

	if (xgpub_net_accept(tls, a->conn, a->addr, a->id,
			     a->opt->max_data_pages, &t))
		return 3;
	return xgpub_worker_run(t, a->opt);
}

static void count_net(struct xgpub_child *c, void *arg)
{
	if (c->kind == XGPUB_CHILD_NET)
		(*(unsigned int *)arg)++;
}

static void peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &s->sin_addr, h, sizeof(h));
			port = ntohs(s->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &s->sin6_addr, h, sizeof(h));
			port = ntohs(s->sin6_port);
		}
	}
	snprintf(buf, len, "%s:%u", h, port);
}

void xgpub_net_client(int lfd, const struct xgpub_options *opt,
		      unsigned int max_net)
{
	struct xgpub_child info;
	struct net_arg a;
	unsigned int n = 0;
	int conn, one = 1;
	pid_t pid;

	conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return;
	memset(&a, 0, sizeof(a));
	peer_name(conn, a.addr, sizeof(a.addr));
	xgpub_children_each(count_net, &n);
	if (max_net && n >= max_net) {
		xgpub_err("network client from %s: refused: %u network "
			  "clients already (--max-net)", a.addr, n);
		close(conn);
		return;
	}
	setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(&info, 0, sizeof(info));
	info.kind = XGPUB_CHILD_NET;
	info.client_id = next_id++;
	info.peer_uid = (uint32_t)-1;
	a.conn = conn;
	a.id = info.client_id;
	a.opt = opt;
	pid = xgpub_spawn(&info, conn, serve_client, &a);
	close(conn);
	if (pid > 0)
		xgpub_info("client %u from %s: worker pid %d", a.id, a.addr,
			   pid);
}
