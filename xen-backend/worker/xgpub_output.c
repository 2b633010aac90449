// SPDX-License-Identifier: MIT
/*
 * xgpub_output.c: device output (a kernel's printf) on its way to the
 * guest.
 *
 * The driver writes what kernels printed to fd 1 of the process that runs
 * them, when it flushes the device's printf buffer (at synchronising
 * calls, blocking copies, launches, module loads and unloads, context
 * destruction).  A worker's fd 1 would otherwise be the daemon's log, so
 * at its start fd 1 becomes a pipe for the worker's whole life (the
 * worker logs on stderr or syslog only).  The bytes go into a bounded
 * buffer: by a drain thread that waits on the pipe, so that the driver
 * never blocks on a full pipe, and by the dispatch thread, which reads
 * the pipe (without blocking) after every synchronous request, so that
 * what the driver wrote during that request is in the buffer before the
 * reply goes out.  Both read under one mutex, which keeps the bytes in
 * order.  A reply tells the guest that output is waiting
 * (XGPUIF_SF_OUTPUT); the guest fetches it with DEVICE_OUTPUT.
 *
 * That read is a system call on every synchronous request (about 0.4 us
 * of a 2 us round trip, measured on an H200), so the dispatch thread
 * reads only once the guest has loaded an image whose kernels may print:
 * one that names vprintf or __assertfail (assert's message goes the same
 * way), or one it cannot read without unpacking (a compressed fatbin
 * member), or of a kind it does not know.  Until then, anything on the
 * pipe (a driver's own line) still reaches the guest through the drain
 * thread, a request or two later (a line the driver left in stdio's
 * buffer, at the next DEVICE_OUTPUT).
 *
 * The buffer is bounded (XGPUB_OUTPUT_MAX): a guest whose kernels print
 * more than it fetches loses what does not fit, and is told how much,
 * but cannot grow Dom0's memory.
 */
#include <elf.h>
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
	bool may_print;		/* an image loaded may print (dispatch
				 * thread only) */
} out = { .mu = PTHREAD_MUTEX_INITIALIZER, .rfd = -1 };

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
		xgpub_outbuf_put(&out.b, chunk, (size_t)n);
	}
	__atomic_store_n(&out.waiting, out.b.len || out.b.dropped,
			 __ATOMIC_RELAXED);
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

/* what the driver wrote so far, into the buffer */
static void poll_pipe(void)
{
	if (out.rfd < 0)
		return;
	/* a driver that writes through stdio leaves it in stdout's buffer */
	fflush(stdout);
	pthread_mutex_lock(&out.mu);
	read_locked();
	pthread_mutex_unlock(&out.mu);
}

void xgpub_output_poll(void)
{
	if (out.may_print)
		poll_pipe();
}

/* ---- which images may print ---------------------------------------------- */

#define FATBIN_MAGIC	0xba55ed50u
#define FATBIN_PTX	1	/* a fatbin member's kind */
#define FATBIN_ELF	2

/* code that prints calls one of these by name */
static bool names_print(const uint8_t *p, uint64_t n)
{
	return memmem(p, n, "vprintf", 7) || memmem(p, n, "__assertfail", 12);
}

/* PTX: text from its first byte (a compressed member is not) */
static bool is_text(const uint8_t *p, uint64_t n)
{
	uint64_t k = n < 64 ? n : 64;

	if (!n || !p[0])
		return false;
	for (uint64_t i = 0; i < k && p[i]; i++)
		if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\t' &&
		    p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

static bool is_cubin(const uint8_t *p, uint64_t n)
{
	Elf64_Ehdr eh;

	if (n < sizeof(eh) || memcmp(p, ELFMAG, SELFMAG))
		return false;
	memcpy(&eh, p, sizeof(eh));
	return eh.e_machine == EM_CUDA;
}

/*
 * A fatbin: a 16-byte header (magic, version, header size, size of what
 * follows), then its members one after the other, each a header (kind,
 * version, the header's size, the payload's size) and the payload.  A
 * compressed payload (ZSTD) is neither an ELF nor text.
 */
static bool fatbin_may_print(const uint8_t *p, uint64_t size)
{
	uint16_t hsize;
	uint64_t fsize, off, end;

	memcpy(&hsize, p + 6, sizeof(hsize));
	memcpy(&fsize, p + 8, sizeof(fsize));
	if (hsize < 16 || fsize > size || hsize > size - fsize)
		return true;
	end = hsize + fsize;
	for (off = hsize; off < end;) {
		uint16_t kind;
		uint32_t mhsize;
		uint64_t len;
		const uint8_t *m;

		if (end - off < 16)
			return true;
		memcpy(&kind, p + off, sizeof(kind));
		memcpy(&mhsize, p + off + 4, sizeof(mhsize));
		memcpy(&len, p + off + 8, sizeof(len));
		if (mhsize < 16 || mhsize > end - off ||
		    len > end - off - mhsize)
			return true;
		m = p + off + mhsize;
		if (kind == FATBIN_ELF ? !is_cubin(m, len) :
		    kind == FATBIN_PTX ? !is_text(m, len) : true)
			return true;
		if (names_print(m, len))
			return true;
		off += mhsize + len;
	}
	return false;
}

bool xgpub_image_may_print(const uint8_t *p, uint64_t size)
{
	uint32_t magic = 0;

	if (size >= 16)
		memcpy(&magic, p, sizeof(magic));
	if (magic == FATBIN_MAGIC)
		return fatbin_may_print(p, size);
	if (is_cubin(p, size) || is_text(p, size))
		return names_print(p, size);
	return true;
}

void xgpub_output_note_image(const uint8_t *p, uint64_t size)
{
	if (!out.may_print && xgpub_image_may_print(p, size)) {
		out.may_print = true;
		xgpub_dbg("device output: an image that may print is loaded; "
			  "the output pipe is read after every synchronous "
			  "request from now on");
	}
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
