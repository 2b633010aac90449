// SPDX-License-Identifier: MIT
/*
 * tlsbw: the throughput of one TLS 1.3 stream of shared-ring/xgpu_tls.c
 * over loopback TCP, against plain TCP: one connection, one thread
 * writing (1 GiB in 4 MiB writes by default) and one thread reading it.
 * A pre-shared key made up for the run authenticates the two ends.
 *
 *   tlsbw [-s MiB] [-w MiB] [-n runs]
 *
 * Prints GB/s (10^9 bytes a second) of each run and the best, plain TCP
 * first.  Not a test: nothing is checked but that the bytes all arrive.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xgpu_tls.h"

static size_t total = 1024u << 20, chunk = 4u << 20;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "tlsbw: %s: %s\n", what, why);
	exit(1);
}

static void tcp_pair(int *srv, int *cli)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int l;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&sa, &sl))
		die("listen", strerror(errno));
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli < 0 || connect(*cli, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect", strerror(errno));
	*srv = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (*srv < 0)
		die("accept", strerror(errno));
	close(l);
}

struct end {
	struct xgpu_conn *c;	/* NULL: plain TCP on fd */
	int fd;
	char *buf;
	int rc;
	bool wr;		/* this end writes */
	double done;		/* when the last byte went or came */
};

static int plain_io(int fd, char *p, size_t n, bool wr)
{
	ssize_t k;

	while (n) {
		k = wr ? write(fd, p, n) : read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k ? -errno : -EPIPE;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* one end's thread: writes (e->wr) or reads `total` bytes, a chunk at a
 * time */
static void *mover(void *arg)
{
	struct end *e = arg;

	for (size_t off = 0; !e->rc && off < total; off += chunk)
		e->rc = !e->c ? plain_io(e->fd, e->buf, chunk, e->wr) :
			e->wr ? xgpu_conn_write(e->c, e->buf, chunk) :
				xgpu_conn_read(e->c, e->buf, chunk);
	e->done = now_s();
	return NULL;
}

/* one run: GB/s from the first write to the last byte read */
static double run(struct end *w, struct end *r)
{
	pthread_t tw, tr;
	double t0;

	w->rc = r->rc = 0;
	w->wr = true;
	r->wr = false;
	t0 = now_s();
	if (pthread_create(&tr, NULL, mover, r))
		die("pthread_create", "failed");
	if (pthread_create(&tw, NULL, mover, w))
		die("pthread_create", "failed");
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	if (w->rc || r->rc)
		die("transfer", strerror(-(w->rc ? w->rc : r->rc)));
	return (double)total / (r->done - t0) / 1e9;
}

struct accept_arg {
	struct xgpu_tls *t;
	int fd;
	struct xgpu_conn *c;
	char err[256];
};

static void *acceptor(void *p)
{
	struct accept_arg *a = p;

	a->c = xgpu_conn_accept(a->t, a->fd, 5000, a->err, sizeof(a->err));
	return NULL;
}

static void report(const char *what, const double *gbs, int runs)
{
	double best = 0;

	printf("%-40s", what);
	for (int i = 0; i < runs; i++) {
		printf(" %6.2f", gbs[i]);
		if (gbs[i] > best)
			best = gbs[i];
	}
	printf("   best %.2f GB/s\n", best);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/tlsbw.XXXXXX", path[64], line[256], err[256];
	unsigned char key[32];
	struct xgpu_tls_opts o = { 0 };
	struct xgpu_tls *st, *ct;
	struct accept_arg a = { 0 };
	struct end w = { 0 }, r = { 0 };
	double gbs[16];
	int runs = 3, opt, fd, s, c, n;
	pthread_t th;

	while ((opt = getopt(argc, argv, "s:w:n:")) != -1) {
		switch (opt) {
		case 's':
			total = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'w':
			chunk = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'n':
			runs = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: tlsbw [-s MiB] [-w MiB] "
				"[-n runs]\n");
			return 2;
		}
	}
	if (!chunk || total < chunk || total % chunk || runs < 1 || runs > 16)
		die("arguments", "-s a multiple of -w, -n 1 to 16");

	/* a key for this run only, in a file only we can read */
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		die("getrandom", strerror(errno));
	if (!mkdtemp(dir))
		die("mkdtemp", strerror(errno));
	snprintf(path, sizeof(path), "%s/bench.psk", dir);
	n = snprintf(line, sizeof(line), "tlsbw ");
	for (size_t i = 0; i < sizeof(key); i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%02x",
			      key[i]);
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		die(path, strerror(errno));
	close(fd);
	o.psk_file = path;
	st = xgpu_tls_server(&o, err, sizeof(err));
	if (!st)
		die("server", err);
	ct = xgpu_tls_client(&o, err, sizeof(err));
	if (!ct)
		die("client", err);
	unlink(path);
	rmdir(dir);

	w.buf = malloc(chunk);
	r.buf = malloc(chunk);
	if (!w.buf || !r.buf)
		die("malloc", "out of memory");
	memset(w.buf, 0x5a, chunk);
	memset(r.buf, 0, chunk);
	printf("tlsbw: %zu MiB in %zu MiB writes over loopback TCP, one "
	       "writer and one reader thread; GB/s of %d runs\n",
	       total >> 20, chunk >> 20, runs);

	tcp_pair(&s, &c);
	w.fd = c;
	r.fd = s;
	for (int i = 0; i < runs; i++)
		gbs[i] = run(&w, &r);
	report("plain TCP", gbs, runs);
	close(s);
	close(c);

	tcp_pair(&s, &c);
	a.t = st;
	a.fd = s;
	if (pthread_create(&th, NULL, acceptor, &a))
		die("pthread_create", "failed");
	w.c = xgpu_conn_connect(ct, c, 5000, err, sizeof(err));
	pthread_join(th, NULL);
	if (!w.c)
		die("connect", err);
	if (!a.c)
		die("accept", a.err);
	r.c = a.c;
	for (int i = 0; i < runs; i++)
		gbs[i] = run(&w, &r);
	snprintf(line, sizeof(line), "%s %s", xgpu_conn_protocol(w.c),
		 xgpu_conn_cipher(w.c));
	report(line, gbs, runs);
	xgpu_conn_close(w.c);
	xgpu_conn_close(r.c);
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
	free(w.buf);
	free(r.buf);
	return 0;
}
