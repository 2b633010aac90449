// SPDX-License-Identifier: MIT
/*
 * xgpub_output.c: device output (a kernel's printf) on its way to the
 * guest.
 *
 * The driver writes what kernels printed to the stdout of the process
 * that runs them, when it flushes the device's printf buffer (at
 * synchronising calls, blocking copies, launches, module loads and
 * unloads, context destruction).  It writes through stdio: with stdout
 * replaced by a stream of its own, the H200's driver (580.159) handed
 * every byte to that stream and none to fd 1.  So a worker's stdout is a
 * stream whose bytes go straight into a bounded buffer, in the thread
 * that flushes (the dispatch thread inside a synchronising call, or the
 * gate's completion thread): what the driver printed during a request
 * is in the buffer when the request returns, with no system call.  A
 * reply tells the guest that output is waiting (XGPUIF_SF_OUTPUT); the
 * guest fetches it with DEVICE_OUTPUT.
 *
 * fd 1 would otherwise be the daemon's log, so at the worker's start it
 * becomes a pipe for the worker's whole life (the worker logs on stderr
 * or syslog only): what reaches fd 1 without stdio (a library's write(1))
 * goes into the same buffer through a drain thread that waits on the
 * pipe, a request or two later.  (Reading the pipe after each synchronous
 * request instead cost 0.42 us of every such round trip on the H200: a
 * kernel-then-synchronize turn of 20 us paid it at each turn.)
 *
 * The buffer is bounded (XGPUB_OUTPUT_MAX): a guest whose kernels print
 * more than it fetches loses what does not fit, and is told how much,
 * but cannot grow Dom0's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpub_worker.h"

/* ---- the buffer ---------------------------------------------------------- */

void xgpub_outbuf_init(struct xgpub_outbuf *b, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap;
}

void xgpub_outbuf_free(struct xgpub_outbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->head = 0;
	b->len = 0;
}

size_t xgpub_outbuf_put(struct xgpub_outbuf *b, const void *src, size_t n)
{
	const uint8_t *s = src;
	size_t keep, tail, first;

	if (!b->p && n && b->cap) {
		/* most workers never print: the memory comes with the
		 * first byte */
		b->p = malloc(b->cap);
		if (!b->p) {
			b->dropped += n;
			return 0;
		}
	}
	keep = b->p ? b->cap - b->len : 0;
	if (keep > n)
		keep = n;
	b->dropped += n - keep;
	if (!keep)
		return 0;
	tail = (b->head + b->len) % b->cap;
	first = b->cap - tail < keep ? b->cap - tail : keep;
	memcpy(b->p + tail, s, first);
	memcpy(b->p, s + first, keep - first);
	b->len += keep;
	return keep;
}

size_t xgpub_outbuf_take(struct xgpub_outbuf *b, void *dst, size_t max)
{
	uint8_t *d = dst;
	size_t n = b->len < max ? b->len : max, first;

	if (!n)
		return 0;
	first = b->cap - b->head < n ? b->cap - b->head : n;
	memcpy(d, b->p + b->head, first);
	memcpy(d + first, b->p, n - first);
	b->head = (b->head + n) % b->cap;
	b->len -= n;
	if (!b->len)
		b->head = 0;
	return n;
}

/* ---- the worker's stdout ------------------------------------------------ */

static struct {
	pthread_mutex_t mu;
	struct xgpub_outbuf b;	/* guarded by mu */
	bool waiting;		/* bytes or a drop to report; read
				 * without mu */
	int rfd;		/* the pipe's read end (non-blocking), -1 */
} out = { .mu = PTHREAD_MUTEX_INITIALIZER, .rfd = -1 };

/* n bytes into the buffer.  Called with out.mu held. */
static void put_locked(const void *p, size_t n)
{
	xgpub_outbuf_put(&out.b, p, n);
	__atomic_store_n(&out.waiting, out.b.len || out.b.dropped,
			 __ATOMIC_RELAXED);
}

/* the worker's stdout: what the driver writes through stdio */
static ssize_t stdio_write(void *cookie, const char *p, size_t n)
{
	(void)cookie;
	pthread_mutex_lock(&out.mu);
	put_locked(p, n);
	pthread_mutex_unlock(&out.mu);
	return (ssize_t)n;	/* what does not fit is counted as lost */
}

/* stdout becomes a stream into the buffer, unbuffered: each write the
 * driver makes is there when it returns */
static void stdout_to_buffer(void)
{
	cookie_io_functions_t io = { .write = stdio_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return;	/* fd 1's pipe then takes it, at the next flush */
	setvbuf(f, NULL, _IONBF, 0);
	stdout = f;
}

/* move what the pipe holds into the buffer.  Called with out.mu held. */
static void read_locked(void)
{
	static uint8_t chunk[16384];

	for (;;) {
		ssize_t n = read(out.rfd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		put_locked(chunk, (size_t)n);
	}
}

static void *drain(void *arg)
{
	struct pollfd p = { .fd = out.rfd, .events = POLLIN };

	(void)arg;
	for (;;) {
		int n = poll(&p, 1, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p.revents & (POLLERR | POLLNVAL)))
			break;
		pthread_mutex_lock(&out.mu);
		read_locked();
		pthread_mutex_unlock(&out.mu);
		if ((p.revents & POLLHUP) && !(p.revents & POLLIN))
			break;	/* no writer left: nothing more comes */
	}
	return NULL;
}

/* fd 1 refers to nothing the daemon reads: /dev/null */
static void stdout_to_null(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	} else {
		close(STDOUT_FILENO);
	}
}

int xgpub_output_start(size_t cap)
{
	pthread_attr_t at;
	pthread_t th;
	int fds[2], rc;

	xgpub_outbuf_init(&out.b, cap);
	fflush(stdout);
	stdout_to_buffer();
	if (pipe2(fds, O_CLOEXEC)) {
		rc = -errno;
		stdout_to_null();
		return rc;
	}
	/* room for a burst while the drain thread is not scheduled */
	fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) ||
	    dup2(fds[1], STDOUT_FILENO) < 0) {
		rc = -errno;
		close(fds[0]);
		close(fds[1]);
		stdout_to_null();
		return rc;
	}
	close(fds[1]);
	out.rfd = fds[0];
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = -pthread_create(&th, &at, drain, NULL);
	pthread_attr_destroy(&at);
	/* without the thread the dispatch thread's reads still drain it;
	 * only a burst larger than the pipe between two requests blocks */
	return rc;
}

/* what reached fd 1 so far, into the buffer */
static void poll_pipe(void)
{
	if (out.rfd < 0)
		return;
	pthread_mutex_lock(&out.mu);
	read_locked();
	pthread_mutex_unlock(&out.mu);
}

bool xgpub_output_waiting(void)
{
	return __atomic_load_n(&out.waiting, __ATOMIC_RELAXED);
}

XGPUB_HANDLER(DEVICE_OUTPUT)
{
	(void)w;
	poll_pipe();
	pthread_mutex_lock(&out.mu);
	rt->len = (uint32_t)xgpub_outbuf_take(&out.b, rt->p, rt->cap);
	r->bytes = rt->len;
	r->waiting = out.b.len;
	r->dropped = out.b.dropped;
	out.b.dropped = 0;
	__atomic_store_n(&out.waiting, out.b.len != 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&out.mu);
	return CUDA_SUCCESS;
}
