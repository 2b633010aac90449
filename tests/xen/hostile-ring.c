// SPDX-License-Identifier: MIT
/*
 * hostile-ring: a DomU process that opens a real xgpu channel through
 * /dev/xgpu and then corrupts the shared ring's indices: it publishes a
 * request producer index far beyond what the ring can hold and kicks the
 * backend.  The backend must refuse the channel (close it, with a reason
 * in its ch/<n>/error node) and nothing else: the daemon and the other
 * guests keep working (the test checks those separately).
 *
 *   hostile-ring BACKEND_DIR
 *
 * BACKEND_DIR is the device's backend directory in xenstore
 * (/local/domain/0/backend/xgpu/<domid>/<devid>); the program reads the
 * channel's error node there with xenstore-read.  Exits 0 when XGPU_IOC_WAIT
 * failed with EPIPE (or poll() reported POLLHUP) within 5 s and the backend
 * wrote an error; prints a last "hostile-ring: verdict: ..." line.
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

int main(int argc, char **argv)
{
	struct xgpu_ioc_connect c;
	struct xgpu_ioc_wait w;
	struct xgpuif_sring *s;
	char path[300], err[256], state[32];
	const char *how = NULL;
	uint32_t size, bogus;
	long long t0, left, dt;
	size_t bytes;
	void *ring;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile-ring BACKEND_DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open(XGPU_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("hostile-ring: open %s: %s\n", XGPU_DEVICE_PATH,
		       strerror(errno));
		return 1;
	}
	memset(&c, 0, sizeof(c));
	c.version = XGPU_UAPI_VERSION;
	c.ring_order = 0;
	c.data_pages = 1;
	snprintf(c.name, sizeof(c.name), "hostile-ring");
	if (ioctl(fd, XGPU_IOC_CONNECT, &c) < 0) {
		printf("hostile-ring: XGPU_IOC_CONNECT: %s (%s)\n",
		       strerror(errno), c.msg);
		return 1;
	}
	printf("hostile-ring: channel %u (backend domain %u, limits: ring "
	       "order %u, %u data pages)\n", c.channel, c.backend_domid,
	       c.max_ring_order, c.max_data_pages);

	bytes = (size_t)XGPUIF_PAGE_SIZE << c.ring_order;
	ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)c.ring_offset);
	if (ring == MAP_FAILED) {
		printf("hostile-ring: mmap ring: %s\n", strerror(errno));
		return 1;
	}
	s = ring;
	size = __RING_SIZE(s, bytes);
	/*
	 * A producer index that claims several rings' worth of requests
	 * the backend has never seen: a consumer that trusted it would read
	 * far past the ring.  req_prod is the first word of the page.
	 */
	bogus = __atomic_load_n(&s->rsp_prod, __ATOMIC_ACQUIRE) + 7 * size + 3;
	__atomic_store_n(&s->req_prod, bogus, __ATOMIC_RELEASE);
	printf("hostile-ring: ring of %u slots, req_prod set to %u\n", size,
	       bogus);
	t0 = now_ms();
	if (ioctl(fd, XGPU_IOC_NOTIFY) < 0) {
		printf("hostile-ring: XGPU_IOC_NOTIFY: %s\n", strerror(errno));
		return 1;
	}

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		left = DEADLINE_MS - (now_ms() - t0);
		if (left <= 0)
			break;
		memset(&w, 0, sizeof(w));
		w.timeout_ms = (uint32_t)left;
		if (ioctl(fd, XGPU_IOC_WAIT, &w) < 0) {
			if (errno == EPIPE) {
				how = "XGPU_IOC_WAIT failed with EPIPE";
				break;
			}
			if (errno == EINTR)
				continue;
			printf("hostile-ring: XGPU_IOC_WAIT: %s (expected "
			       "EPIPE)\n", strerror(errno));
			return 1;
		}
		/* a kick (or the timeout): has the channel been closed? */
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) {
			how = "poll() reported POLLHUP";
			break;
		}
	}
	if (!how) {
		printf("hostile-ring: the channel is still open %d ms after "
		       "the corrupt req_prod\n", DEADLINE_MS);
		return 1;
	}
	dt = now_ms() - t0;
	printf("hostile-ring: %s after %lld ms\n", how, dt);
	if (ioctl(fd, XGPU_IOC_NOTIFY) == 0)
		printf("hostile-ring: note: XGPU_IOC_NOTIFY still succeeds on "
		       "the closed channel (the UAPI says EPIPE)\n");

	/* the backend's reason; it stays until we close the channel */
	snprintf(path, sizeof(path), "%s/ch/%u/error", argv[1], c.channel);
	err[0] = 0;
	for (int i = 0; i < 20 && !err[0]; i++) {
		if (xs_read(path, err, sizeof(err)) < 0)
			err[0] = 0;
		if (!err[0])
			usleep(100000);
	}
	snprintf(path, sizeof(path), "%s/ch/%u/state", argv[1], c.channel);
	if (xs_read(path, state, sizeof(state)) < 0)
		snprintf(state, sizeof(state), "(none)");
	if (!err[0]) {
		printf("hostile-ring: no backend error at %s/ch/%u/error "
		       "(state %s)\n", argv[1], c.channel, state);
		return 1;
	}
	printf("hostile-ring: backend ch/%u/state %s, error: %s\n", c.channel,
	       state, err);
	printf("hostile-ring: verdict: %s after %lld ms; backend error '%s'\n",
	       how, dt, err);
	munmap(ring, bytes);
	close(fd);
	return 0;
}
