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
 *
 * BACKEND_DIR is the device's backend directory in xenstore
 * (/local/domain/0/backend/xgpu/<domid>/<devid>); the program reads each
 * channel's error node there with xenstore-read.  Exits 0 when every
 * channel was closed (XGPU_IOC_WAIT failed with EPIPE, or poll() reported
 * POLLHUP) within 5 s and the backend wrote an error; prints a last
 * "hostile-ring: verdict: ..." line.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
		printf("hostile-ring: XGPU_IOC_CONNECT: %s (%s)\n",
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
		printf("hostile-ring: XGPU_IOC_NOTIFY: %s\n", strerror(errno));
		return -1;
	}
	for (;;) {
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

/*
 * One synchronous request on ch and the status of its reply; -1 when the
 * channel closed or nothing came within DEADLINE_MS.
 */
static int call_one(struct chan *ch, struct xgpuif_front_ring *fr,
		    uint16_t op, const void *args, uint32_t len, uint64_t id)
{
	struct xgpuif_request hdr;
	struct xgpuif_iov iov = { args, len };
	long long t0 = now_ms(), left;

	memset(&hdr, 0, sizeof(hdr));
	hdr.id = id;
	hdr.op = op;
	xgpuif_front_put(fr, &hdr, &iov, 1, 1);
	RING_PUSH_REQUESTS(fr);
	if (ioctl(ch->fd, XGPU_IOC_NOTIFY) < 0)
		return -1;
	for (;;) {
		struct xgpu_ioc_wait w;

		if (__atomic_load_n(&fr->sring->rsp_prod, __ATOMIC_ACQUIRE) !=
		    fr->rsp_cons) {
			const struct xgpuif_response *r =
				RING_GET_RESPONSE(fr, fr->rsp_cons);
			int st = r->id == id ? r->status : -1;

			fr->rsp_cons += r->nslots ? r->nslots : 1;
			return st;
		}
		left = DEADLINE_MS - (now_ms() - t0);
		if (left <= 0)
			return -1;
		memset(&w, 0, sizeof(w));
		w.timeout_ms = (uint32_t)left;
		if (ioctl(ch->fd, XGPU_IOC_WAIT, &w) < 0 && errno != EINTR)
			return -1;
	}
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
	if (argc != 3 || strcmp(argv[2], "grants")) {
		fprintf(stderr, "usage: hostile-ring BACKEND_DIR "
			"[handles | grants]\n");
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
