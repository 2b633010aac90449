// SPDX-License-Identifier: MIT
/*
 * tlsbw: the throughput of one TLS 1.3 stream of shared-ring/xgpu_tls.c
 * over loopback TCP, against plain TCP: one connection, one thread
 * writing (1 GiB in 4 MiB writes by default) and one thread reading it.
 * A pre-shared key made up for the run authenticates the two ends.
 *
 *   tlsbw [-s MiB] [-w MiB] [-n runs] [-j streams] [-p rounds]
 *
 * Prints GB/s (10^9 bytes a second) of each run and the best, plain TCP
 * first.  Not a test: nothing is checked but that the bytes all arrive.
 *
 * -j: that many connections at once (default 1), each with its own
 * writing and reading thread and -s MiB to move; GB/s of them all, from
 * the first write to the last byte read (what lanes of the network
 * transport could carry together on this machine, with nothing else
 * in the way).
 *
 * -p: round trips instead (the floor under the network transport's
 * synchronous calls): one thread writes 64 bytes, the other reads them
 * and writes them back, `rounds` times; each reader either sleeps in its
 * read or first polls the socket without sleeping (as the mirror's
 * receiving thread does).  Then "split": as the network transport is
 * built, a thread of its own at each end reads (polling) and hands each
 * message to the thread that writes through a flag that thread polls.
 * Prints p50 and p90 in microseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

#define MAX_J 32

/* one run of n connections at once: GB/s of them all, from the first
 * write to the last byte read */
static double run(struct end *w, struct end *r, int n)
{
	pthread_t tw[MAX_J], tr[MAX_J];
	double t0, last = 0;

	for (int i = 0; i < n; i++) {
		w[i].rc = r[i].rc = 0;
		w[i].wr = true;
		r[i].wr = false;
	}
	t0 = now_s();
	for (int i = 0; i < n; i++)
		if (pthread_create(&tr[i], NULL, mover, &r[i]) ||
		    pthread_create(&tw[i], NULL, mover, &w[i]))
			die("pthread_create", "failed");
	for (int i = 0; i < n; i++) {
		pthread_join(tw[i], NULL);
		pthread_join(tr[i], NULL);
		if (w[i].rc || r[i].rc)
			die("transfer", strerror(-(w[i].rc ? w[i].rc :
							     r[i].rc)));
		if (r[i].done > last)
			last = r[i].done;
	}
	return (double)total * n / (last - t0) / 1e9;
}

/* ---- round trips (-p) ----------------------------------------------------- */

#define PP_BYTES 64

static int pp_io(struct end *e, char *p, size_t n, bool wr, bool spin)
{
	if (!wr && spin) {
		/* what TLS has buffered needs no poll of the socket */
		if (!e->c || !xgpu_conn_buffered(e->c)) {
			struct pollfd pf = { .fd = e->fd, .events = POLLIN };

			while (poll(&pf, 1, 0) == 0)
				;
		}
	}
	if (!e->c)
		return plain_io(e->fd, p, n, wr);
	return wr ? xgpu_conn_write(e->c, p, n) : xgpu_conn_read(e->c, p, n);
}

struct pp {
	struct end *e;
	int rounds;
	bool spin;
	bool echo;		/* the end that answers */
	double *rtt;		/* the asking end's round trips, us */
	/* split: the messages this end's reading thread took */
	bool split;
	long got;
	int rc;
};

/* split: an end's reading thread, polling */
static void *pp_reader(void *arg)
{
	struct pp *a = arg;
	char buf[PP_BYTES];

	for (int i = 0; i < a->rounds && !a->rc; i++) {
		a->rc = pp_io(a->e, buf, sizeof(buf), false, true);
		__atomic_store_n(&a->got, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void pp_await(struct pp *a, long n)
{
	while (__atomic_load_n(&a->got, __ATOMIC_ACQUIRE) < n &&
	       !__atomic_load_n(&a->rc, __ATOMIC_RELAXED))
		;
}


static double now_us(void)
{
	return now_s() * 1e6;
}

static void *pp_main(void *arg)
{
	struct pp *a = arg;
	char buf[PP_BYTES];
	pthread_t rd;

	memset(buf, 0x3c, sizeof(buf));
	if (a->split) {
		a->got = 0;
		a->rc = 0;
		if (pthread_create(&rd, NULL, pp_reader, a))
			die("pthread_create", "failed");
		for (int i = 0; i < a->rounds && !a->e->rc; i++) {
			double t0 = now_us();

			if (a->echo)
				pp_await(a, i + 1);
			a->e->rc = pp_io(a->e, buf, sizeof(buf), true, false);
			if (!a->echo) {
				pp_await(a, i + 1);
				a->rtt[i] = now_us() - t0;
			}
		}
		pthread_join(rd, NULL);
		if (!a->e->rc)
			a->e->rc = a->rc;
		return NULL;
	}
	for (int i = 0; i < a->rounds && !a->e->rc; i++) {
		if (a->echo) {
			a->e->rc = pp_io(a->e, buf, sizeof(buf), false,
					 a->spin);
			if (!a->e->rc)
				a->e->rc = pp_io(a->e, buf, sizeof(buf), true,
						 false);
		} else {
			double t0 = now_us();

			a->e->rc = pp_io(a->e, buf, sizeof(buf), true, false);
			if (!a->e->rc)
				a->e->rc = pp_io(a->e, buf, sizeof(buf), false,
						 a->spin);
			a->rtt[i] = now_us() - t0;
		}
	}
	return NULL;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void pingpong(const char *what, struct end *ask, struct end *ans,
		     int rounds)
{
	double *rtt = calloc((size_t)rounds, sizeof(*rtt));

	if (!rtt)
		die("calloc", "out of memory");
	for (int spin = 0; spin < 3; spin++) {
		struct pp a = { ask, rounds, spin, false, rtt, spin == 2, 0, 0 };
		struct pp b = { ans, rounds, spin, true, NULL, spin == 2, 0, 0 };
		pthread_t ta, tb;

		ask->rc = ans->rc = 0;
		if (pthread_create(&tb, NULL, pp_main, &b) ||
		    pthread_create(&ta, NULL, pp_main, &a))
			die("pthread_create", "failed");
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		if (ask->rc || ans->rc)
			die("round trips", strerror(-(ask->rc ? ask->rc :
						       ans->rc)));
		qsort(rtt, (size_t)rounds, sizeof(*rtt), cmp_double);
		printf("%-40s %-8s p50 %7.2f us  p90 %7.2f us\n", what,
		       spin == 2 ? "split" : spin ? "polling" : "sleeping",
		       rtt[rounds / 2],
		       rtt[rounds * 9 / 10]);
	}
	free(rtt);
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
	static struct end w[MAX_J], r[MAX_J];
	double gbs[16];
	int runs = 3, rounds = 0, nj = 1, opt, fd, s, c, n;
	pthread_t th;

	while ((opt = getopt(argc, argv, "s:w:n:p:j:")) != -1) {
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
		case 'p':
			rounds = atoi(optarg);
			break;
		case 'j':
			nj = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: tlsbw [-s MiB] [-w MiB] "
				"[-n runs] [-j streams] [-p rounds]\n");
			return 2;
		}
	}
	if (!chunk || total < chunk || total % chunk || runs < 1 ||
	    runs > 16 || rounds < 0 || rounds > 10000000 || nj < 1 ||
	    nj > MAX_J || (rounds && nj > 1))
		die("arguments", "-s a multiple of -w, -n 1 to 16, -j 1 to "
		    "32 (not with -p), -p at most 10000000");

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

	for (int i = 0; i < nj; i++) {
		w[i].buf = malloc(chunk);
		r[i].buf = malloc(chunk);
		if (!w[i].buf || !r[i].buf)
			die("malloc", "out of memory");
		memset(w[i].buf, 0x5a, chunk);
		memset(r[i].buf, 0, chunk);
	}
	if (rounds)
		printf("tlsbw: round trips of %d bytes over loopback TCP, "
		       "%d of them\n", PP_BYTES, rounds);
	else
		printf("tlsbw: %zu MiB in %zu MiB writes over loopback TCP, "
		       "%d connection(s), a writer and a reader thread each; "
		       "GB/s of %d runs\n", total >> 20, chunk >> 20, nj,
		       runs);

	for (int i = 0; i < nj; i++) {
		tcp_pair(&s, &c);
		w[i].fd = c;
		r[i].fd = s;
	}
	if (rounds) {
		int one = 1;

		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pingpong("plain TCP", &w[0], &r[0], rounds);
	} else {
		for (int i = 0; i < runs; i++)
			gbs[i] = run(w, r, nj);
		report("plain TCP", gbs, runs);
	}
	for (int i = 0; i < nj; i++) {
		close(w[i].fd);
		close(r[i].fd);
	}

	for (int i = 0; i < nj; i++) {
		tcp_pair(&s, &c);
		w[i].fd = c;
		r[i].fd = s;
		a.t = st;
		a.fd = s;
		a.c = NULL;
		if (pthread_create(&th, NULL, acceptor, &a))
			die("pthread_create", "failed");
		w[i].c = xgpu_conn_connect(ct, c, 5000, err, sizeof(err));
		pthread_join(th, NULL);
		if (!w[i].c)
			die("connect", err);
		if (!a.c)
			die("accept", a.err);
		r[i].c = a.c;
	}
	snprintf(line, sizeof(line), "%s %s", xgpu_conn_protocol(w[0].c),
		 xgpu_conn_cipher(w[0].c));
	if (rounds) {
		pingpong(line, &w[0], &r[0], rounds);
	} else {
		for (int i = 0; i < runs; i++)
			gbs[i] = run(w, r, nj);
		report(line, gbs, runs);
	}
	for (int i = 0; i < nj; i++) {
		xgpu_conn_close(w[i].c);
		xgpu_conn_close(r[i].c);
		free(w[i].buf);
		free(r[i].buf);
	}
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
	return 0;
}
