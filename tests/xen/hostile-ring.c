// SPDX-License-Identifier: MIT
/*
 * hostile-ring: a DomU process that opens real xgpu channels through
 * /dev/xgpu and abuses them, as a hostile guest would.  The backend must
 * refuse each channel (close it, with a reason in its ch/<n>/error node)
 * and nothing else: the daemon and the other guests keep working (the
 * test checks those separately).
 *
 *   hostile-ring BACKEND_DIR            corrupt the ring's indices: a
 *                                       request producer index far beyond
 *                                       what the ring can hold
 *   hostile-ring BACKEND_DIR handles    forged handles and addresses on
 *                                       a real channel: each request gets
 *                                       an error, the channel stays open
 *                                       and INIT still answers
 *   hostile-ring BACKEND_DIR grants     grant abuse: a host-memory
 *                                       registration whose grant directory
 *                                       names one grant twice, one that
 *                                       names grants never given, and one
 *                                       longer than a region may be; one
 *                                       channel each
 *   hostile-ring BACKEND_DIR geometry   2D and 3D copies whose geometry
 *                                       overflows or reaches past the
 *                                       allocation (errors, the channel
 *                                       open, good copies exact after
 *                                       them), host sides past shared
 *                                       memory (closed)
 *   hostile-ring BACKEND_DIR blobs [CAP_MB]  blobs past 1 GiB, 2^64 - 1
 *                                       and the image cap, images larger
 *                                       by their own headers than their
 *                                       blob (errors, the channel open),
 *                                       a BLOB_WRITE past the end (closed)
 *   hostile-ring BACKEND_DIR flood      channels up to max-channels and
 *                                       two more (refused, EBUSY and a
 *                                       reason), one forged in xenstore
 *                                       (the backend refuses it); the
 *                                       open ones still answer
 *   hostile-ring BACKEND_DIR xsflood [N]  N (2000) xenstore writes to
 *                                       the frontend's nodes, one at a
 *                                       time through /dev/xen/xenbus:
 *                                       the backend must keep answering
 *
 * BACKEND_DIR is the device's backend directory in xenstore
 * (/local/domain/0/backend/xgpu/<domid>/<devid>); the program reads each
 * channel's error node there with xenstore-read.  Exits 0 when every
 * channel was closed (XGPU_IOC_WAIT failed with EPIPE, or poll() reported
 * POLLHUP) within 5 s and the backend wrote an error; prints a last
 * "hostile-ring: verdict: ..." line.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "xgpuif.h"
#include "xgpuif_ring.h"
#include "xgpu_uapi.h"

#define DEADLINE_MS 5000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* read one xenstore node through xenstore-read (the DomU image has it) */
static int xs_read(const char *path, char *buf, size_t len)
{
	char cmd[512];
	FILE *p;
	size_t n;
	int rc;

	snprintf(cmd, sizeof(cmd), "xenstore-read '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	rc = pclose(p);
	return rc == 0 ? 0 : -1;
}

struct chan {
	int fd;
	unsigned int channel;
	struct xgpuif_sring *s;
	size_t bytes;
	uint8_t *data;
	size_t data_bytes;
	int err;		/* XGPU_IOC_CONNECT's errno, 0 if it worked */
	char msg[128];		/* and its message */
};

static int chan_open(struct chan *ch, const char *name, uint32_t data_pages)
{
	struct xgpu_ioc_connect c;

	memset(ch, 0, sizeof(*ch));
	ch->fd = open(XGPU_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (ch->fd < 0) {
		printf("hostile-ring: open %s: %s\n", XGPU_DEVICE_PATH,
		       strerror(errno));
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.version = XGPU_UAPI_VERSION;
	c.ring_order = 0;
	c.data_pages = data_pages;
	snprintf(c.name, sizeof(c.name), "%s", name);
	if (ioctl(ch->fd, XGPU_IOC_CONNECT, &c) < 0) {
		ch->err = errno;
		c.msg[sizeof(c.msg) - 1] = 0;
		snprintf(ch->msg, sizeof(ch->msg), "%s", c.msg);
		printf("hostile-ring: %s: XGPU_IOC_CONNECT: %s (%s)\n", name,
		       strerror(errno), c.msg);
		return -1;
	}
	printf("hostile-ring: %s: channel %u (backend domain %u, limits: "
	       "ring order %u, %u data pages)\n", name, c.channel,
	       c.backend_domid, c.max_ring_order, c.max_data_pages);
	ch->channel = c.channel;
	ch->bytes = (size_t)XGPUIF_PAGE_SIZE << c.ring_order;
	ch->s = mmap(NULL, ch->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		     ch->fd, (off_t)c.ring_offset);
	if (ch->s == MAP_FAILED) {
		printf("hostile-ring: mmap ring: %s\n", strerror(errno));
		return -1;
	}
	ch->data_bytes = (size_t)data_pages * XGPUIF_PAGE_SIZE;
	ch->data = mmap(NULL, ch->data_bytes, PROT_READ | PROT_WRITE,
			MAP_SHARED, ch->fd, (off_t)c.data_offset);
	if (ch->data == MAP_FAILED) {
		printf("hostile-ring: mmap data: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Kick the backend and wait (DEADLINE_MS) until it closes the channel;
 * then its reason.  0 and *how set, or -1 (said why).
 */
static int chan_refused(struct chan *ch, const char *dir, const char **how,
			long long *dt, char *err, size_t errlen)
{
	struct xgpu_ioc_wait w;
	char path[300], state[32];
	long long t0 = now_ms(), left;

	*how = NULL;
	if (ioctl(ch->fd, XGPU_IOC_NOTIFY) < 0) {
		if (errno == EPIPE) {
			/* closed already (after a reply that said why) */
			*how = "XGPU_IOC_NOTIFY failed with EPIPE";
		} else {
			printf("hostile-ring: XGPU_IOC_NOTIFY: %s\n",
			       strerror(errno));
			return -1;
		}
	}
	while (!*how) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };

		left = DEADLINE_MS - (now_ms() - t0);
		if (left <= 0)
			break;
		memset(&w, 0, sizeof(w));
		w.timeout_ms = (uint32_t)left;
		if (ioctl(ch->fd, XGPU_IOC_WAIT, &w) < 0) {
			if (errno == EPIPE) {
				*how = "XGPU_IOC_WAIT failed with EPIPE";
				break;
			}
			if (errno == EINTR)
				continue;
			printf("hostile-ring: XGPU_IOC_WAIT: %s (expected "
			       "EPIPE)\n", strerror(errno));
			return -1;
		}
		/* a kick (or the timeout): has the channel been closed? */
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) {
			*how = "poll() reported POLLHUP";
			break;
		}
	}
	if (!*how) {
		printf("hostile-ring: channel %u is still open %d ms after the "
		       "abuse\n", ch->channel, DEADLINE_MS);
		return -1;
	}
	*dt = now_ms() - t0;
	printf("hostile-ring: channel %u: %s after %lld ms\n", ch->channel,
	       *how, *dt);
	if (ioctl(ch->fd, XGPU_IOC_NOTIFY) == 0)
		printf("hostile-ring: note: XGPU_IOC_NOTIFY still succeeds on "
		       "the closed channel (the UAPI says EPIPE)\n");

	/* the backend's reason; it stays until we close the channel */
	snprintf(path, sizeof(path), "%s/ch/%u/error", dir, ch->channel);
	err[0] = 0;
	for (int i = 0; i < 20 && !err[0]; i++) {
		if (xs_read(path, err, errlen) < 0)
			err[0] = 0;
		if (!err[0])
			usleep(100000);
	}
	snprintf(path, sizeof(path), "%s/ch/%u/state", dir, ch->channel);
	if (xs_read(path, state, sizeof(state)) < 0)
		snprintf(state, sizeof(state), "(none)");
	if (!err[0]) {
		printf("hostile-ring: no backend error at %s/ch/%u/error "
		       "(state %s)\n", dir, ch->channel, state);
		return -1;
	}
	printf("hostile-ring: backend ch/%u/state %s, error: %s\n",
	       ch->channel, state, err);
	return 0;
}

static void chan_close(struct chan *ch)
{
	if (ch->data && ch->data != MAP_FAILED)
		munmap(ch->data, ch->data_bytes);
	if (ch->s && ch->s != MAP_FAILED)
		munmap(ch->s, ch->bytes);
	if (ch->fd >= 0)
		close(ch->fd);
}

/* corrupt the ring: 0 when the backend refused the channel */
static int ring_case(const char *dir)
{
	const char *how;
	char err[256];
	long long dt;
	struct chan ch;
	uint32_t size, bogus;
	int rc = -1;

	if (chan_open(&ch, "hostile-ring", 1))
		goto out;
	size = __RING_SIZE(ch.s, ch.bytes);
	/*
	 * A producer index that claims several rings' worth of requests
	 * the backend has never seen: a consumer that trusted it would read
	 * far past the ring.  req_prod is the first word of the page.
	 */
	bogus = __atomic_load_n(&ch.s->rsp_prod, __ATOMIC_ACQUIRE) +
		7 * size + 3;
	__atomic_store_n(&ch.s->req_prod, bogus, __ATOMIC_RELEASE);
	printf("hostile-ring: ring of %u slots, req_prod set to %u\n", size,
	       bogus);
	if (chan_refused(&ch, dir, &how, &dt, err, sizeof(err)))
		goto out;
	printf("hostile-ring: verdict: %s after %lld ms; backend error "
	       "'%s'\n", how, dt, err);
	rc = 0;
out:
	chan_close(&ch);
	return rc;
}

/*
 * One host-memory registration with a grant directory of n references
 * (refs, or only its length when refs is NULL) in the data area; the
 * backend must close the channel.  0, and its reason appended to verdict.
 */
static int grant_case(const char *dir, const char *name, const uint32_t *refs,
		      uint64_t n, char *verdict, size_t vlen)
{
	struct xgpuif_front_ring fr;
	struct xgpuif_hostmem_args a;
	struct xgpuif_request hdr;
	struct xgpuif_iov iov = { &a, sizeof(a) };
	const char *how;
	char err[256];
	long long dt;
	struct chan ch;
	int rc = -1;

	if (chan_open(&ch, name, 1))
		goto out;
	if (refs)
		memcpy(ch.data, refs, n * sizeof(*refs));
	memset(&a, 0, sizeof(a));
	a.region = 1;
	a.size = n * XGPUIF_PAGE_SIZE;
	a.dir.region = XGPUIF_REGION_DATA;
	a.dir.off = 0;
	a.dir.len = n * sizeof(uint32_t);
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = 1;
	hdr.op = XGPUIF_OP_HOSTMEM_REGISTER;
	FRONT_RING_INIT(&fr, ch.s, ch.bytes);
	xgpuif_front_put(&fr, &hdr, &iov, 1, 1);
	RING_PUSH_REQUESTS(&fr);
	printf("hostile-ring: %s: HOSTMEM_REGISTER of %llu pages, directory "
	       "of %llu bytes\n", name, (unsigned long long)n,
	       (unsigned long long)a.dir.len);
	if (chan_refused(&ch, dir, &how, &dt, err, sizeof(err)))
		goto out;
	snprintf(verdict + strlen(verdict), vlen - strlen(verdict),
		 "%s%s: closed after %lld ms, '%s'", *verdict ? "; " : "",
		 name, dt, err);
	rc = 0;
out:
	chan_close(&ch);
	return rc;
}

#define NO_REPLY (-1000000)	/* call(): the channel closed, or silence */

/*
 * One synchronous request on ch (header ctx, args, a reply of up to rcap
 * bytes into reply) and the status of its reply; NO_REPLY when the
 * channel closed or nothing came within DEADLINE_MS.
 */
static int call(struct chan *ch, struct xgpuif_front_ring *fr, uint16_t op,
		uint64_t ctx, const void *args, uint32_t len, void *reply,
		uint32_t rcap, uint64_t id)
{
	struct xgpuif_request hdr;
	struct xgpuif_iov iov = { args, len };
	uint32_t nslots = xgpuif_slots_for(len);
	long long t0 = now_ms(), left;

	if (xgpuif_slots_for(rcap) > nslots)
		nslots = xgpuif_slots_for(rcap);
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = id;
	hdr.op = op;
	hdr.ctx = ctx;
	xgpuif_front_put(fr, &hdr, &iov, len ? 1 : 0, nslots);
	RING_PUSH_REQUESTS(fr);
	if (ioctl(ch->fd, XGPU_IOC_NOTIFY) < 0)
		return NO_REPLY;
	for (;;) {
		struct xgpu_ioc_wait w;

		if (__atomic_load_n(&fr->sring->rsp_prod, __ATOMIC_ACQUIRE) !=
		    fr->rsp_cons) {
			struct xgpuif_response r;
			int st;

			RING_COPY_RESPONSE(fr, fr->rsp_cons, &r);
			st = r.id == id ? r.status : NO_REPLY;
			if (st != NO_REPLY && reply && rcap) {
				uint32_t n = r.len < rcap ? r.len : rcap;

				memset(reply, 0, rcap);
				xgpuif_msg_read(fr->sring->ring, RING_SIZE(fr),
						fr->rsp_cons, 0, reply, n);
			}
			fr->rsp_cons += r.nslots ? r.nslots : 1;
			return st;
		}
		/* ask for a kick at the next response (the backend only
		 * sends one when rsp_event says so), then look once more */
		fr->sring->rsp_event = fr->rsp_cons + 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&fr->sring->rsp_prod, __ATOMIC_ACQUIRE) !=
		    fr->rsp_cons)
			continue;
		left = DEADLINE_MS - (now_ms() - t0);
		if (left <= 0)
			return NO_REPLY;
		memset(&w, 0, sizeof(w));
		w.timeout_ms = (uint32_t)left;
		if (ioctl(ch->fd, XGPU_IOC_WAIT, &w) < 0 && errno != EINTR)
			return NO_REPLY;
	}
}

static int call_one(struct chan *ch, struct xgpuif_front_ring *fr,
		    uint16_t op, const void *args, uint32_t len, uint64_t id)
{
	int st = call(ch, fr, op, 0, args, len, NULL, 0, id);

	return st == NO_REPLY ? -1 : st;
}

/*
 * Handles and addresses the guest was never given: a stream, an event, a
 * context, a free of device memory it does not own.  Each must get an
 * error status and leave the channel open: INIT still answers.
 */
static int handles_case(void)
{
	static const struct {
		const char *what;
		uint16_t op;
		uint64_t arg;
	} forged[] = {
		{ "stream sync", XGPUIF_OP_STREAM_SYNCHRONIZE, 0x0000beef00000042ull },
		{ "event query", XGPUIF_OP_EVENT_QUERY, 0x0000000700000003ull },
		{ "context destroy", XGPUIF_OP_CTX_DESTROY, 0x0000000100000001ull },
		{ "free", XGPUIF_OP_MEM_FREE, 0x00007f0000001000ull },
	};
	/* (a reply that fits the request's one slot, as the ring asks) */
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_front_ring fr;
	char verdict[512] = "";
	struct chan ch;
	int rc = -1, st;
	uint64_t id = 1;

	if (chan_open(&ch, "hostile-handles", 1))
		goto out;
	FRONT_RING_INIT(&fr, ch.s, ch.bytes);
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		st = call_one(&ch, &fr, forged[i].op, &forged[i].arg,
			      sizeof(forged[i].arg), id++);
		printf("hostile-ring: forged %s: status %d\n", forged[i].what,
		       st);
		if (st <= 0) {
			printf("hostile-ring: forged %s: %s\n", forged[i].what,
			       st < 0 ? "no reply (channel closed?)" :
					"accepted");
			goto out;
		}
		snprintf(verdict + strlen(verdict),
			 sizeof(verdict) - strlen(verdict), "%s%s %d",
			 *verdict ? ", " : "", forged[i].what, st);
	}
	st = call_one(&ch, &fr, XGPUIF_OP_INIT, &ia, sizeof(ia), id++);
	if (st != 0) {
		printf("hostile-ring: INIT after them: status %d\n", st);
		goto out;
	}
	printf("hostile-ring: verdict: refused %s; the channel still "
	       "answers\n", verdict);
	rc = 0;
out:
	chan_close(&ch);
	return rc;
}

/* ---- geometry, blobs: requests a worker must refuse ---------------------- */

/* append to a verdict */
static void note(char *v, size_t vlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(char *v, size_t vlen, const char *fmt, ...)
{
	size_t n = strlen(v);
	va_list ap;

	if (n + 2 >= vlen)
		return;
	if (n) {
		v[n++] = ',';
		v[n++] = ' ';
		v[n] = 0;
	}
	va_start(ap, fmt);
	vsnprintf(v + n, vlen - n, fmt, ap);
	va_end(ap);
}

/*
 * A channel of `pages` data pages, INIT, the primary context of device 0
 * and (alloc > 0) that many bytes of device memory: 0, or -1 (said why).
 */
static int open_ready(struct chan *ch, struct xgpuif_front_ring *fr,
		      const char *name, uint32_t pages, uint64_t *id,
		      uint64_t *ctx, uint64_t alloc, uint64_t *dptr)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_init_reply ir;
	struct xgpuif_device_args da = { 0, 0 };
	struct xgpuif_ctx_reply cr = { 0 };
	struct xgpuif_mem_alloc_args ma = { alloc };
	struct xgpuif_dptr_reply dr = { 0 };
	int st;

	if (chan_open(ch, name, pages))
		return -1;
	FRONT_RING_INIT(fr, ch->s, ch->bytes);
	st = call(ch, fr, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), &ir, sizeof(ir),
		  (*id)++);
	if (st == 0)
		st = call(ch, fr, XGPUIF_OP_PRIMARY_CTX_RETAIN, 0, &da,
			  sizeof(da), &cr, sizeof(cr), (*id)++);
	if (st == 0 && alloc)
		st = call(ch, fr, XGPUIF_OP_MEM_ALLOC, cr.ctx, &ma, sizeof(ma),
			  &dr, sizeof(dr), (*id)++);
	if (st != 0 || !cr.ctx || (alloc && !dr.dptr)) {
		printf("hostile-ring: %s: INIT, context or allocation failed "
		       "(status %d)\n", name, st);
		return -1;
	}
	*ctx = cr.ctx;
	if (dptr)
		*dptr = dr.dptr;
	return 0;
}

/*
 * A request the worker must refuse with an error status and the channel
 * still open: 0 when it did (its status noted in the verdict).
 */
static int expect_error(struct chan *ch, struct xgpuif_front_ring *fr,
			const char *what, uint16_t op, uint64_t ctx,
			const void *args, uint32_t len, uint64_t *id,
			int want, char *v, size_t vlen)
{
	int st = call(ch, fr, op, ctx, args, len, NULL, 0, (*id)++);

	printf("hostile-ring: %s: status %d\n", what, st);
	if (st == NO_REPLY) {
		printf("hostile-ring: %s: no reply (channel closed?)\n", what);
		return -1;
	}
	if (st <= 0 || (want && st != want)) {
		printf("hostile-ring: %s: status %d, expected %s %d\n", what,
		       st, want ? "the CUDA error" : "a CUDA error (> 0), not",
		       want);
		return -1;
	}
	note(v, vlen, "%s %d", what, st);
	return 0;
}

/*
 * A request no guest library sends (its own bytes say it reaches past
 * shared memory): the worker must answer XGPUIF_ST_PROTO and close the
 * channel, with a reason in the backend's ch/<n>/error.
 */
static int expect_closed(struct chan *ch, struct xgpuif_front_ring *fr,
			 const char *dir, const char *what, uint16_t op,
			 uint64_t ctx, const void *args, uint32_t len,
			 uint64_t *id, char *v, size_t vlen)
{
	int st = call(ch, fr, op, ctx, args, len, NULL, 0, (*id)++);
	const char *how;
	char err[256];
	long long dt;

	printf("hostile-ring: %s: status %d\n", what, st);
	if (st != XGPUIF_ST_PROTO && st != NO_REPLY) {
		printf("hostile-ring: %s: status %d, expected %d (malformed; "
		       "the channel closes)\n", what, st, XGPUIF_ST_PROTO);
		return -1;
	}
	if (chan_refused(ch, dir, &how, &dt, err, sizeof(err)))
		return -1;
	note(v, vlen, "%s closed ('%s')", what, err);
	return 0;
}

static void side3d_dev(struct xgpuif_copy_side3d *s, uint64_t dptr,
		       uint64_t pitch, uint64_t height)
{
	memset(s, 0, sizeof(*s));
	s->type = XGPUIF_MT_DEVICE;
	s->dptr = dptr;
	s->pitch = pitch;
	s->height = height;
}

static void side3d_host(struct xgpuif_copy_side3d *s, uint64_t off,
			uint64_t len, uint64_t pitch, uint64_t height)
{
	memset(s, 0, sizeof(*s));
	s->type = XGPUIF_MT_HOST;
	s->mem.region = XGPUIF_REGION_DATA;
	s->mem.off = off;
	s->mem.len = len;
	s->pitch = pitch;
	s->height = height;
}

#define ALLOC_BYTES	65536u		/* the device memory of the cases */
#define GEO_PAGES	4u

/*
 * 2D (one slice) and 3D copies whose geometry overflows or reaches past the guest's
 * allocation (device sides: a CUDA error, the channel stays), then good
 * copies through the same channel that must come back byte-exact, and
 * INIT; then, one channel each, host sides that reach past shared memory
 * (malformed: the channel closes).
 */
static int geometry_case(const char *dir)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_memcpy3d_args m3;
	struct xgpuif_front_ring fr;
	char v[1024] = "", vc[512] = "";
	uint64_t id = 1, ctx, a;
	struct chan ch;
	int rc = -1, st;

	if (open_ready(&ch, &fr, "hostile-geometry", GEO_PAGES, &id, &ctx,
		       ALLOC_BYTES, &a))
		goto out;
	/* one slice (a 2D copy): (height - 1) * pitch overflows 64 bits */
	memset(&m3, 0, sizeof(m3));
	side3d_dev(&m3.src, a, 1ull << 40, 1ull << 30);
	side3d_dev(&m3.dst, a + ALLOC_BYTES / 2, 1ull << 40, 1ull << 30);
	m3.width_bytes = 16;
	m3.height = 1ull << 30;
	m3.depth = 1;
	if (expect_error(&ch, &fr, "2D pitch*height overflow",
			 XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, 0, v,
			 sizeof(v)))
		goto out;
	/* one slice: 128 rows of 1 KiB from a 64 KiB allocation */
	side3d_dev(&m3.src, a, 1024, 128);
	side3d_dev(&m3.dst, a, 1024, 128);
	m3.width_bytes = 1024;
	m3.height = 128;
	if (expect_error(&ch, &fr, "2D rows past the allocation",
			 XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, 0, v,
			 sizeof(v)))
		goto out;
	/* one slice: a first row y * pitch past 2^64 */
	side3d_dev(&m3.src, a, 8, 1);
	m3.src.y = 1ull << 62;
	side3d_dev(&m3.dst, a, 8, 1);
	m3.width_bytes = 8;
	m3.height = 1;
	if (expect_error(&ch, &fr, "2D y*pitch overflow", XGPUIF_OP_MEMCPY_3D,
			 ctx, &m3, sizeof(m3), &id, 0, v, sizeof(v)))
		goto out;
	/* one slice: an x offset that wraps the address space */
	side3d_dev(&m3.src, a, 16, 1);
	side3d_dev(&m3.dst, a, 16, 1);
	m3.dst.x_bytes = UINT64_MAX - 4;
	m3.width_bytes = 16;
	m3.height = 1;
	if (expect_error(&ch, &fr, "2D x offset wraps", XGPUIF_OP_MEMCPY_3D,
			 ctx, &m3, sizeof(m3), &id, 0, v, sizeof(v)))
		goto out;
	/* 3D: (depth - 1) * slice height overflows */
	memset(&m3, 0, sizeof(m3));
	side3d_dev(&m3.src, a, 1u << 20, 1ull << 33);
	side3d_dev(&m3.dst, a, 1u << 20, 1ull << 33);
	m3.width_bytes = 16;
	m3.height = 1;
	m3.depth = 1ull << 33;
	if (expect_error(&ch, &fr, "3D depth*height overflow",
			 XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, 0, v,
			 sizeof(v)))
		goto out;
	/* 3D: 128 slices of 16 rows of 64 bytes: 128 KiB from 64 KiB */
	side3d_dev(&m3.src, a, 64, 16);
	side3d_dev(&m3.dst, a, 64, 16);
	m3.width_bytes = 64;
	m3.height = 16;
	m3.depth = 128;
	if (expect_error(&ch, &fr, "3D slices past the allocation",
			 XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, 0, v,
			 sizeof(v)))
		goto out;
	/* 3D: a first slice z * height past 2^64 */
	side3d_dev(&m3.src, a, 64, 16);
	m3.src.z = 1ull << 63;
	side3d_dev(&m3.dst, a, 64, 16);
	m3.depth = 1;
	if (expect_error(&ch, &fr, "3D z*height overflow",
			 XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, 0, v,
			 sizeof(v)))
		goto out;

	/*
	 * The channel still works, with correct results: 16 rows of 256
	 * bytes from shared memory into the allocation (pitch 512), a 3D
	 * copy of two such slices to its second half, back into shared
	 * memory; the bytes must match.
	 */
	for (size_t i = 0; i < 4096; i++)
		ch.data[i] = (uint8_t)(i * 7 + 3);
	memset(ch.data + 8192, 0, 4096);
	memset(&m3, 0, sizeof(m3));
	side3d_host(&m3.src, 0, 4096, 256, 16);
	side3d_dev(&m3.dst, a, 512, 16);
	m3.width_bytes = 256;
	m3.height = 16;
	m3.depth = 1;
	st = call(&ch, &fr, XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), NULL, 0,
		  id++);
	if (st == 0) {
		memset(&m3, 0, sizeof(m3));
		side3d_dev(&m3.src, a, 512, 16);
		side3d_dev(&m3.dst, a + ALLOC_BYTES / 2, 512, 16);
		m3.width_bytes = 256;
		m3.height = 16;
		m3.depth = 2;
		st = call(&ch, &fr, XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3),
			  NULL, 0, id++);
	}
	if (st == 0) {
		memset(&m3, 0, sizeof(m3));
		side3d_dev(&m3.src, a + ALLOC_BYTES / 2, 512, 16);
		side3d_host(&m3.dst, 8192, 4096, 256, 16);
		m3.width_bytes = 256;
		m3.height = 16;
		m3.depth = 1;
		st = call(&ch, &fr, XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3),
			  NULL, 0, id++);
	}
	if (st != 0) {
		printf("hostile-ring: good copies after the refused ones: "
		       "status %d\n", st);
		goto out;
	}
	if (memcmp(ch.data, ch.data + 8192, 4096)) {
		printf("hostile-ring: good copies after the refused ones: the "
		       "bytes came back wrong\n");
		goto out;
	}
	st = call(&ch, &fr, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), NULL, 0, id++);
	if (st != 0) {
		printf("hostile-ring: INIT after them: status %d\n", st);
		goto out;
	}
	chan_close(&ch);

	/* host sides past shared memory: malformed, one channel each */
	if (open_ready(&ch, &fr, "geometry-host-2d", GEO_PAGES, &id, &ctx,
		       ALLOC_BYTES, &a))
		goto out;
	memset(&m3, 0, sizeof(m3));
	side3d_host(&m3.src, 0, 4096, 1ull << 40, 1ull << 30);
	side3d_dev(&m3.dst, a, 16, 1ull << 30);
	m3.width_bytes = 16;
	m3.height = 1ull << 30;
	m3.depth = 1;
	if (expect_closed(&ch, &fr, dir, "2D host pitch*height overflow",
			  XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, vc,
			  sizeof(vc)))
		goto out;
	chan_close(&ch);
	if (open_ready(&ch, &fr, "geometry-host-3d", GEO_PAGES, &id, &ctx,
		       ALLOC_BYTES, &a))
		goto out;
	memset(&m3, 0, sizeof(m3));
	side3d_host(&m3.src, 0, 4096, 256, 16);
	side3d_dev(&m3.dst, a, 256, 16);
	m3.width_bytes = 256;
	m3.height = 16;
	m3.depth = 4;	/* 16 KiB of slices from a 4 KiB memref */
	if (expect_closed(&ch, &fr, dir, "3D host slices past shared memory",
			  XGPUIF_OP_MEMCPY_3D, ctx, &m3, sizeof(m3), &id, vc,
			  sizeof(vc)))
		goto out;
	printf("hostile-ring: verdict: refused %s; then one-slice and 3D copies came "
	       "back exact and INIT answered; %s\n", v, vc);
	rc = 0;
out:
	chan_close(&ch);
	return rc;
}

/* a blob of size bytes holding img (len bytes): its handle, or 0 */
static uint64_t blob_with(struct chan *ch, struct xgpuif_front_ring *fr,
			  uint64_t ctx, uint64_t *id, uint64_t size,
			  const void *img, uint64_t len)
{
	struct xgpuif_blob_create_args bc = { size };
	struct xgpuif_blob_reply br = { 0 };
	struct xgpuif_blob_write_args bw;
	int st;

	st = call(ch, fr, XGPUIF_OP_BLOB_CREATE, ctx, &bc, sizeof(bc), &br,
		  sizeof(br), (*id)++);
	if (st != 0 || !br.blob) {
		printf("hostile-ring: BLOB_CREATE of %llu bytes: status %d\n",
		       (unsigned long long)size, st);
		return 0;
	}
	if (!len)
		return br.blob;
	memcpy(ch->data, img, len);
	memset(&bw, 0, sizeof(bw));
	bw.blob = br.blob;
	bw.src.region = XGPUIF_REGION_DATA;
	bw.src.len = len;
	st = call(ch, fr, XGPUIF_OP_BLOB_WRITE, ctx, &bw, sizeof(bw), NULL, 0,
		  (*id)++);
	if (st != 0) {
		printf("hostile-ring: BLOB_WRITE of %llu bytes: status %d\n",
		       (unsigned long long)len, st);
		return 0;
	}
	return br.blob;
}

#define CUDA_ERROR_OUT_OF_MEMORY_	2
#define CUDA_ERROR_INVALID_IMAGE_	200

/*
 * Blobs and module images past their limits: a blob past the 1 GiB an
 * image may have, one of 2^64 - 1 bytes, one past the guest's image cap
 * (cap_mb, the daemon's --images-mb; 0: not known, not tried), images
 * whose own headers claim more bytes than their blob holds (a fatbin, an
 * ELF, a PTX text without its end): errors, the channel open, a small
 * blob and INIT still work.  Then a BLOB_WRITE past its blob's end
 * (malformed: the channel closes).
 */
static int blobs_case(const char *dir, unsigned long cap_mb)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_blob_create_args bc;
	struct xgpuif_blob_write_args bw;
	struct xgpuif_load_args la;
	struct xgpuif_front_ring fr;
	uint8_t fat[64], ptx[48];
	Elf64_Ehdr eh;
	char v[1024] = "", vc[256] = "";
	uint64_t id = 1, ctx, b;
	struct chan ch;
	uint16_t hsize = 16;
	uint64_t fsize = 1u << 20;
	int rc = -1, st;

	if (open_ready(&ch, &fr, "hostile-blobs", 4, &id, &ctx, 0, NULL))
		goto out;
	bc.size = (1ull << 30) + 1;
	if (expect_error(&ch, &fr, "blob of 1 GiB + 1", XGPUIF_OP_BLOB_CREATE,
			 ctx, &bc, sizeof(bc), &id, CUDA_ERROR_OUT_OF_MEMORY_,
			 v, sizeof(v)))
		goto out;
	bc.size = UINT64_MAX;
	if (expect_error(&ch, &fr, "blob of 2^64-1", XGPUIF_OP_BLOB_CREATE,
			 ctx, &bc, sizeof(bc), &id, CUDA_ERROR_OUT_OF_MEMORY_,
			 v, sizeof(v)))
		goto out;
	if (cap_mb && cap_mb <= 256) {
		/* three quarters of the cap are fine, twice that is not */
		bc.size = (uint64_t)cap_mb * 3 / 4 << 20;
		if (!blob_with(&ch, &fr, ctx, &id, bc.size, NULL, 0))
			goto out;
		if (expect_error(&ch, &fr, "second blob past the image cap",
				 XGPUIF_OP_BLOB_CREATE, ctx, &bc, sizeof(bc),
				 &id, CUDA_ERROR_OUT_OF_MEMORY_, v, sizeof(v)))
			goto out;
	} else {
		note(v, sizeof(v), "(image cap not known: not tried)");
	}
	/* a fatbin header whose file is 1 MiB long, in a blob of 64 bytes */
	memset(fat, 0, sizeof(fat));
	memcpy(fat, "\x50\xed\x55\xba\x01\x00", 6);
	memcpy(fat + 6, &hsize, sizeof(hsize));
	memcpy(fat + 8, &fsize, sizeof(fsize));
	memset(&la, 0, sizeof(la));
	la.blob = blob_with(&ch, &fr, ctx, &id, sizeof(fat), fat, sizeof(fat));
	if (!la.blob || expect_error(&ch, &fr, "load of a 1 MiB fatbin in 64 "
				     "bytes", XGPUIF_OP_MODULE_LOAD, ctx, &la,
				     sizeof(la), &id,
				     CUDA_ERROR_INVALID_IMAGE_, v, sizeof(v)))
		goto out;
	/* an ELF whose section headers lie 1 MiB into a 64-byte blob */
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = 190;	/* EM_CUDA */
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = 1u << 20;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 8;
	la.blob = blob_with(&ch, &fr, ctx, &id, sizeof(eh), &eh, sizeof(eh));
	if (!la.blob || expect_error(&ch, &fr, "load of an ELF with sections "
				     "past its blob", XGPUIF_OP_MODULE_LOAD,
				     ctx, &la, sizeof(la), &id,
				     CUDA_ERROR_INVALID_IMAGE_, v, sizeof(v)))
		goto out;
	/* a PTX text that does not end inside its blob */
	memset(ptx, 'A', sizeof(ptx));
	memcpy(ptx, ".version 7.0\n", 13);
	la.blob = blob_with(&ch, &fr, ctx, &id, sizeof(ptx), ptx, sizeof(ptx));
	if (!la.blob || expect_error(&ch, &fr, "load of a PTX without its end",
				     XGPUIF_OP_MODULE_LOAD, ctx, &la,
				     sizeof(la), &id,
				     CUDA_ERROR_INVALID_IMAGE_, v, sizeof(v)))
		goto out;
	/* still open: a small blob and INIT */
	if (!blob_with(&ch, &fr, ctx, &id, 4096, ptx, 16))
		goto out;
	st = call(&ch, &fr, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), NULL, 0, id++);
	if (st != 0) {
		printf("hostile-ring: INIT after them: status %d\n", st);
		goto out;
	}
	chan_close(&ch);

	/* a write past the blob's end: malformed, the channel closes */
	if (open_ready(&ch, &fr, "blob-write-past-end", 1, &id, &ctx, 0, NULL))
		goto out;
	b = blob_with(&ch, &fr, ctx, &id, 256, NULL, 0);
	if (!b)
		goto out;
	memset(&bw, 0, sizeof(bw));
	bw.blob = b;
	bw.off = 200;
	bw.src.region = XGPUIF_REGION_DATA;
	bw.src.len = 100;
	if (expect_closed(&ch, &fr, dir, "BLOB_WRITE of 100 bytes at 200 of "
			  "256", XGPUIF_OP_BLOB_WRITE, ctx, &bw, sizeof(bw),
			  &id, vc, sizeof(vc)))
		goto out;
	printf("hostile-ring: verdict: refused %s; a blob and INIT still "
	       "worked; %s\n", v, vc);
	rc = 0;
out:
	chan_close(&ch);
	return rc;
}

/* ---- xsflood: xenstore writes as fast as the guest can make them --------- */

/* the xenstore wire protocol (xen/io/xs_wire.h): a header, then the
 * payload; a write's payload is "PATH\0VALUE" */
struct xs_hdr {
	uint32_t type, req_id, tx_id, len;
};
#define XS_WRITE_OP	11u
#define XS_ERROR_OP	16u
#define XS_WINDOW	32u

/* send write i: node n<i % 64> of a made-up channel under fe, "v<i>" */
static int xs_send_write(int fd, const char *fe, unsigned long i)
{
	char path[320], val[32], msg[sizeof(struct xs_hdr) + 360];
	int plen = snprintf(path, sizeof(path), "%s/ch/1004/n%lu", fe, i % 64);
	int vlen = snprintf(val, sizeof(val), "v%lu", i);
	struct xs_hdr h = { XS_WRITE_OP, (uint32_t)i, 0,
			    (uint32_t)(plen + 1 + vlen) };

	if (plen < 0 || plen >= (int)sizeof(path))
		return -1;
	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), path, (size_t)plen + 1);
	memcpy(msg + sizeof(h) + plen + 1, val, (size_t)vlen);
	return write(fd, msg, sizeof(h) + h.len) ==
	       (ssize_t)(sizeof(h) + h.len) ? 0 : -1;
}

/*
 * n writes, up to XS_WINDOW at a time, to nodes of a made-up channel
 * under this device's frontend directory, through /dev/xen/xenbus (the
 * xenstore-write command costs a process each): each write is a watch
 * event for the backend.  All must be answered; the backend must stay up
 * and go on serving (the steps after this one); prints the rate reached.
 */
static int xsflood_case(const char *dir, unsigned long n)
{
	char fe[256], path[400], buf[512];
	struct xs_hdr h;
	long long t0, dt;
	int fd;

	snprintf(path, sizeof(path), "%s/frontend", dir);
	if (xs_read(path, fe, sizeof(fe)) < 0 || !fe[0]) {
		printf("hostile-ring: no %s\n", path);
		return -1;
	}
	fd = open("/dev/xen/xenbus", O_RDWR);
	if (fd < 0) {
		printf("hostile-ring: /dev/xen/xenbus: %s\n", strerror(errno));
		return -1;
	}
	t0 = now_ms();
	/* up to XS_WINDOW writes in flight: xenstored's rate, not the
	 * round trip's, sets the pace */
	for (unsigned long sent = 0, got = 0; got < n;) {
		if (sent < n && sent - got < XS_WINDOW) {
			if (xs_send_write(fd, fe, sent)) {
				printf("hostile-ring: xenstore write %lu of %lu "
				       "could not be sent\n", sent + 1, n);
				close(fd);
				return -1;
			}
			sent++;
			continue;
		}
		if (read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
		    h.len > sizeof(buf) ||
		    read(fd, buf, h.len) != (ssize_t)h.len ||
		    h.type == XS_ERROR_OP) {
			printf("hostile-ring: xenstore write %lu of %lu "
			       "failed\n", got + 1, n);
			close(fd);
			return -1;
		}
		got++;
	}
	dt = now_ms() - t0;
	close(fd);
	snprintf(path, sizeof(path), "xenstore-rm '%s/ch/1004' 2>/dev/null",
		 fe);
	if (system(path) != 0)
		printf("hostile-ring: could not remove %s/ch/1004\n", fe);
	printf("hostile-ring: verdict: %lu xenstore writes in %lld ms "
	       "(%lld a second)\n", n, dt, dt > 0 ? (long long)n * 1000 / dt :
	       (long long)n * 1000);
	return 0;
}

/* ---- flood: more channels than the device allows --------------------------- */

/* xenstore-write PATH VALUE */
static int xs_write(const char *path, const char *val)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "xenstore-write '%s' '%s' >/dev/null 2>&1",
		 path, val);
	return system(cmd) == 0 ? 0 : -1;
}

#define FLOOD_MAX	64u
#define FORGED_CH	1010u

/*
 * Open channels (1 data page each, as separate /dev/xgpu files) up to the
 * device's max-channels: all must connect; the next two must be refused
 * with EBUSY and a message that says why.  A channel written straight
 * into xenstore past the cap (a guest that bypasses its module) must get
 * the backend's "too many channels" refusal.  Every open channel must
 * still answer INIT; once they are closed, a new channel connects.
 */
static int flood_case(const char *dir)
{
	static struct chan chs[FLOOD_MAX + 2];
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	char buf[256], fe[256], path[400], err[256] = "", verdict[768];
	struct xgpuif_front_ring fr;
	unsigned long cap;
	unsigned int n = 0, i;
	long long t0, dt;
	int rc = -1, st;

	snprintf(path, sizeof(path), "%s/max-channels", dir);
	if (xs_read(path, buf, sizeof(buf)) < 0 || !(cap = strtoul(buf, NULL,
								   10)) ||
	    cap > FLOOD_MAX) {
		printf("hostile-ring: cannot read a cap from %s ('%s')\n", path,
		       buf);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/frontend", dir);
	if (xs_read(path, fe, sizeof(fe)) < 0 || !fe[0]) {
		printf("hostile-ring: no %s\n", path);
		return -1;
	}
	for (i = 0; i < FLOOD_MAX + 2; i++)
		chs[i].fd = -1;
	t0 = now_ms();
	for (i = 0; i < cap + 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "flood-%u", i + 1);
		if (chan_open(&chs[i], name, 1) == 0) {
			n++;
			continue;
		}
		if (i < cap) {
			printf("hostile-ring: channel %u of %lu refused below "
			       "the cap\n", i + 1, cap);
			goto out;
		}
		if (chs[i].err != EBUSY || !chs[i].msg[0]) {
			printf("hostile-ring: channel %u past the cap: %s (%s); "
			       "expected EBUSY and a reason\n", i + 1,
			       strerror(chs[i].err), chs[i].msg);
			goto out;
		}
	}
	dt = now_ms() - t0;
	if (n != cap) {
		printf("hostile-ring: %u channels connected, the cap is %lu\n",
		       n, cap);
		goto out;
	}
	/* past the cap behind the module's back: the backend refuses it */
	snprintf(path, sizeof(path), "%s/ch/%u", fe, FORGED_CH);
	{
		static const char *const nodes[][2] = {
			{ "ring-page-order", "0" }, { "ring-ref0", "999999" },
			{ "data-pages", "1" }, { "data-dir-ref0", "999998" },
			{ "event-channel", "9" }, { "name", "flood-forged" },
			{ "pid", "1" }, { "state", "3" },
		};
		char node[460];

		for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
			snprintf(node, sizeof(node), "%s/%s", path, nodes[i][0]);
			if (xs_write(node, nodes[i][1])) {
				printf("hostile-ring: xenstore-write %s failed\n",
				       node);
				goto out;
			}
		}
	}
	snprintf(path, sizeof(path), "%s/ch/%u/error", dir, FORGED_CH);
	for (i = 0; i < 50 && !strstr(err, "too many channels"); i++) {
		if (xs_read(path, err, sizeof(err)) < 0)
			err[0] = 0;
		if (!strstr(err, "too many channels"))
			usleep(200000);
	}
	snprintf(path, sizeof(path), "xenstore-rm '%s/ch/%u' >/dev/null 2>&1",
		 fe, FORGED_CH);
	(void)!system(path);
	if (!strstr(err, "too many channels")) {
		printf("hostile-ring: forged channel %u past the cap: backend "
		       "error '%s', expected 'too many channels'\n", FORGED_CH,
		       err);
		goto out;
	}
	printf("hostile-ring: forged channel %u: backend error '%s'\n",
	       FORGED_CH, err);
	/* the channels that got in still answer */
	for (i = 0; i < n; i++) {
		FRONT_RING_INIT(&fr, chs[i].s, chs[i].bytes);
		st = call(&chs[i], &fr, XGPUIF_OP_INIT, 0, &ia, sizeof(ia),
			  NULL, 0, 1);
		if (st != 0) {
			printf("hostile-ring: INIT on flood channel %u: status "
			       "%d\n", i + 1, st);
			goto out;
		}
	}
	snprintf(verdict, sizeof(verdict), "%lu channels connected in %lld ms "
		 "and answer INIT; channel %lu refused: %s (%s); forged "
		 "xenstore channel refused by the backend: '%s'", cap, dt,
		 cap + 1, strerror(chs[cap].err), chs[cap].msg, err);
	for (i = 0; i < cap + 2; i++)
		chan_close(&chs[i]);
	/* the slots come back */
	{
		struct chan again;

		if (chan_open(&again, "flood-after", 1)) {
			chan_close(&again);
			printf("hostile-ring: no channel after the flood ended\n");
			return -1;
		}
		FRONT_RING_INIT(&fr, again.s, again.bytes);
		st = call(&again, &fr, XGPUIF_OP_INIT, 0, &ia, sizeof(ia),
			  NULL, 0, 1);
		chan_close(&again);
		if (st != 0) {
			printf("hostile-ring: INIT after the flood: status %d\n",
			       st);
			return -1;
		}
	}
	printf("hostile-ring: verdict: %s; a new channel connects once they "
	       "close\n", verdict);
	return 0;
out:
	for (i = 0; i < cap + 2 && i < FLOOD_MAX + 2; i++)
		chan_close(&chs[i]);
	return rc;
}

int main(int argc, char **argv)
{
	/* grants this domain never gave (the backend's map must fail) */
	static const uint32_t dup[2] = { 8, 8 }, unknown[2] = { 0x7ffff0,
								 0x7ffff1 };
	char verdict[1024] = "";

	if (argc == 2) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		return ring_case(argv[1]) ? 1 : 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[2], "handles"))
		return handles_case() ? 1 : 0;
	if (argc == 3 && !strcmp(argv[2], "geometry"))
		return geometry_case(argv[1]) ? 1 : 0;
	if ((argc == 3 || argc == 4) && !strcmp(argv[2], "blobs"))
		return blobs_case(argv[1], argc == 4 ?
				  strtoul(argv[3], NULL, 10) : 0) ? 1 : 0;
	if (argc == 3 && !strcmp(argv[2], "flood"))
		return flood_case(argv[1]) ? 1 : 0;
	if ((argc == 3 || argc == 4) && !strcmp(argv[2], "xsflood"))
		return xsflood_case(argv[1], argc == 4 ?
				    strtoul(argv[3], NULL, 10) : 2000) ? 1 : 0;
	if (argc != 3 || strcmp(argv[2], "grants")) {
		fprintf(stderr, "usage: hostile-ring BACKEND_DIR "
			"[handles | grants | geometry | blobs [CAP_MB] | "
			"flood | xsflood [N]]\n");
		return 2;
	}
	if (grant_case(argv[1], "grant-twice", dup, 2, verdict,
		       sizeof(verdict)) ||
	    grant_case(argv[1], "grant-unknown", unknown, 2, verdict,
		       sizeof(verdict)) ||
	    /* one page more than a region may map (the directory itself is
	     * longer than the data area: refused as it stands) */
	    grant_case(argv[1], "grant-oversize", NULL, (1u << 18) + 1,
		       verdict, sizeof(verdict)))
		return 1;
	printf("hostile-ring: verdict: %s\n", verdict);
	return 0;
}
