// SPDX-License-Identifier: MIT
/*
 * xgpub_net_clients.c: the daemon's side of the network transport: the
 * --listen socket, the TLS configuration (read once at start, so that a
 * key file with wrong permissions stops the daemon before it serves), and
 * a worker forked for each accepted connection.  The TLS handshake runs
 * in that worker (xgpub_net_accept), bounded in time, so a peer that
 * stalls or sends garbage holds only its own process.  Connections past
 * --max-net at once are closed with a log line.  A connection that opens
 * with a lane's hello (xgpu_mirror.h) is handed to the worker whose
 * channel its token names, which then authenticates it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "xgpu_addr.h"
#include "xgpu_mirror.h"
#include "xgpu_tls.h"
#include "xgpuif_sock.h"

static struct xgpu_tls *tls;
static uint32_t next_id = 1u << 20;	/* apart from local clients' ids */

int xgpub_net_open(const char *spec, const struct xgpu_tls_opts *o)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE,
	}, *res;
	struct xgpu_addr a;
	char err[256];
	int fd = -1, one = 1, rc;

	if (xgpu_addr_parse(spec, "tcp:", XGPU_ADDR_ANY_HOST, &a)) {
		fprintf(stderr, "xen-gpubackd: --listen: '%s' is not "
			"tcp:ADDRESS:PORT (e.g. tcp:0.0.0.0:7400 or "
			"tcp:[::1]:7400)\n", spec);
		return -EINVAL;
	}
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
	rc = getaddrinfo(*a.host ? a.host : NULL, a.port, &hints, &res);
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
}

struct net_arg {
	int conn, lanes;
	uint32_t id;
	char addr[64];
	const struct xgpub_options *opt;
};

static int serve_client(void *p)
{
	struct net_arg *a = p;
	struct xgpub_transport *t;

	if (xgpub_net_accept(tls, a->conn, a->lanes, a->addr, a->id,
			     a->opt, &t))
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

/* a worker for a new network client on conn (closed here) */
static void spawn_net(int conn, const char *addr,
		      const struct xgpub_options *opt, unsigned int max_net)
{
	struct xgpub_child info;
	struct net_arg a;
	unsigned int n = 0;
	int sp[2] = { -1, -1 };
	pid_t pid;

	xgpub_children_each(count_net, &n);
	if (max_net && n >= max_net) {
		xgpub_err("network client from %s: refused: %u network "
			  "clients already (--max-net)", addr, n);
		close(conn);
		return;
	}
	memset(&a, 0, sizeof(a));
	snprintf(a.addr, sizeof(a.addr), "%s", addr);
	memset(&info, 0, sizeof(info));
	info.kind = XGPUB_CHILD_NET;
	info.client_id = next_id++;
	info.peer_uid = (uint32_t)-1;
	info.lane_fd = info.lane_child_fd = -1;
	/* the socket that hands the worker its lanes' connections */
	if (opt->net_lanes &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0) {
		info.lane_fd = sp[0];
		info.lane_child_fd = sp[1];
	}
	a.conn = conn;
	a.lanes = sp[1];
	a.id = info.client_id;
	a.opt = opt;
	{
		int keep[2] = { conn, info.lane_child_fd };

		pid = xgpub_spawn(&info, keep, 2, serve_client, &a);
	}
	close(conn);
	if (sp[1] >= 0)
		close(sp[1]);
	if (pid > 0) {
		xgpub_info("client %u from %s: worker pid %d", a.id, a.addr,
			   pid);
	} else if (sp[0] >= 0) {
		close(sp[0]);
	}
}

/*
 * Connections not yet known for a client or a lane: each says which with
 * its first bytes (a TLS handshake, or a lane's hello in the clear), and
 * waits here, without a worker, until it does, SNIFF_NS at most.  One
 * host (address without port) holds at most SNIFF_PER_HOST of the places,
 * so a peer that opens connections and says nothing cannot keep the
 * others out (a client and its 16 lanes say what they are at once).
 */
#define SNIFF_MAX	XGPUB_NET_SNIFF_MAX
#define SNIFF_PER_HOST	XGPUB_NET_SNIFF_PER_HOST
#define SNIFF_NS	5000000000ull

static struct {
	int fd;
	uint64_t since;
	char addr[64];
} sniff[SNIFF_MAX];
static unsigned int nsniff;

/* the length of addr's host part ("HOST:PORT": all but ":PORT") */
static size_t host_len(const char *addr)
{
	const char *c = strrchr(addr, ':');

	return c ? (size_t)(c - addr) : strlen(addr);
}

static unsigned int waiting_from(const char *addr)
{
	size_t n = host_len(addr);
	unsigned int k = 0;

	for (unsigned int i = 0; i < nsniff; i++)
		if (host_len(sniff[i].addr) == n &&
		    !memcmp(sniff[i].addr, addr, n))
			k++;
	return k;
}

/*
 * A refused connection, said in one line; while refusals go on (a peer
 * that floods), one line a second at most, with how many were not said.
 */
static void refuse(int conn, const char *addr, const char *why,
		   unsigned int n)
{
	static uint64_t last_ns;
	static unsigned long unsaid;
	uint64_t now = xgpub_now_ns();

	close(conn);
	if (last_ns && now - last_ns < 1000000000ull) {
		unsaid++;
		return;
	}
	last_ns = now;
	if (unsaid)
		xgpub_err("network client from %s: refused: %u connections "
			  "%s (and %lu more refused in the last second)",
			  addr, n, why, unsaid);
	else
		xgpub_err("network client from %s: refused: %u connections "
			  "%s", addr, n, why);
	unsaid = 0;
}

void xgpub_net_client(int lfd)
{
	char addr[64];
	int conn, one = 1;
	unsigned int mine;

	conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (conn < 0)
		return;
	peer_name(conn, addr, sizeof(addr));
	if (nsniff == SNIFF_MAX) {
		refuse(conn, addr, "have not said what they are yet", nsniff);
		return;
	}
	mine = waiting_from(addr);
	if (mine >= SNIFF_PER_HOST) {
		refuse(conn, addr, "of this host have not said what they "
		       "are yet", mine);
		return;
	}
	setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sniff[nsniff].fd = conn;
	sniff[nsniff].since = xgpub_now_ns();
	snprintf(sniff[nsniff].addr, sizeof(sniff[nsniff].addr), "%s", addr);
	nsniff++;
}

int xgpub_net_pollfds(struct pollfd *p, int max)
{
	int n = 0;

	for (unsigned int i = 0; i < nsniff && n < max; i++)
		p[n++] = (struct pollfd){ .fd = sniff[i].fd, .events = POLLIN };
	return n;
}

/* the worker whose lanes carry this token */
struct lane_find {
	const uint8_t *token;
	struct xgpub_child *found;
};

static void find_lane_owner(struct xgpub_child *c, void *arg)
{
	struct lane_find *f = arg;

	if (c->kind == XGPUB_CHILD_NET && c->st && c->lane_fd > 2 &&
	    __atomic_load_n(&c->st->lane_ready, __ATOMIC_ACQUIRE) &&
	    !memcmp((const void *)c->st->lane_token, f->token, 32))
		f->found = c;
}

static void route_lane(int fd, const char *addr,
		       const struct xgpuif_net_lane_hello *h)
{
	struct lane_find f = { h->token, NULL };

	xgpub_children_each(find_lane_owner, &f);
	if (!f.found) {
		xgpub_err("lane from %s: refused: no channel has its token",
			  addr);
		return;
	}
	/* blocking again for the worker's TLS handshake */
	(void)!fcntl(fd, F_SETFL, 0);
	if (xgpuif_sock_send(f.found->lane_fd, addr, strlen(addr) + 1, &fd,
			     1))
		xgpub_err("lane from %s: its worker (pid %d) takes no more",
			  addr, (int)f.found->pid);
}

/* what sniff[i] is, if it said: 1 done with it (closed or handed on),
 * 0 not yet */
static int classify(unsigned int i, const struct xgpub_options *opt,
		    unsigned int max_net)
{
	struct xgpuif_net_lane_hello h;
	size_t ml = sizeof(h.magic);
	ssize_t n;

	n = recv(sniff[i].fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 :
		       (close(sniff[i].fd), 1);
	if (n == 0) {
		close(sniff[i].fd);	/* it went without a word */
		return 1;
	}
	if (memcmp(h.magic, XGPUIF_NET_LANE_MAGIC,
		   (size_t)n < ml ? (size_t)n : ml)) {
		/* a client's TLS handshake (or garbage: its worker says) */
		(void)!fcntl(sniff[i].fd, F_SETFL, 0);
		spawn_net(sniff[i].fd, sniff[i].addr, opt, max_net);
		return 1;
	}
	if ((size_t)n < sizeof(h))
		return 0;
	if (recv(sniff[i].fd, &h, sizeof(h), MSG_DONTWAIT) == (ssize_t)sizeof(h))
		route_lane(sniff[i].fd, sniff[i].addr, &h);
	close(sniff[i].fd);
	return 1;
}

uint64_t xgpub_net_sniff(const struct pollfd *p, int np,
			 const struct xgpub_options *opt,
			 unsigned int max_net)
{
	uint64_t now = xgpub_now_ns(), next = UINT64_MAX;

	for (unsigned int i = 0; i < nsniff;) {
		short rev = 0;
		int done = 0;

		for (int k = 0; k < np; k++)
			if (p[k].fd == sniff[i].fd)
				rev = p[k].revents;
		if (rev)
			done = classify(i, opt, max_net);
		if (!done && now - sniff[i].since >= SNIFF_NS) {
			xgpub_err("network client from %s: refused: nothing "
				  "said within %llu s", sniff[i].addr,
				  SNIFF_NS / 1000000000ull);
			close(sniff[i].fd);
			done = 1;
		}
		if (done) {
			sniff[i] = sniff[--nsniff];
			continue;
		}
		if (SNIFF_NS - (now - sniff[i].since) < next)
			next = SNIFF_NS - (now - sniff[i].since);
		i++;
	}
	return next;
}

void xgpub_net_drop_waiting(void)
{
	for (unsigned int i = 0; i < nsniff; i++)
		close(sniff[i].fd);
	nsniff = 0;
}
