// SPDX-License-Identifier: MIT
/*
 * xgpub_local.c: the local transport, worker side.  Every value the guest
 * sends is range-checked before use, and every memfd must be sealed
 * against shrinking, so that a guest cannot make the worker fault by
 * truncating pages the worker has mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xgpub.h"
#include "xgpub_transport.h"
#include "xgpuif_sock.h"

struct local {
	struct xgpub_transport t;
	int sock;
	int kick_back;		/* the guest writes; we read */
	int kick_guest;		/* we write */
	void *map;
	size_t map_bytes;
};

#define NEEDED_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)

static void local_notify(struct xgpub_transport *t)
{
	struct local *l = (struct local *)t;
	uint64_t one = 1;

	(void)!write(l->kick_guest, &one, sizeof(one));
}

static int local_wait(struct xgpub_transport *t, int timeout_ms)
{
	struct local *l = (struct local *)t;
	struct pollfd pfd[2] = {
		{ .fd = l->kick_back, .events = POLLIN },
		{ .fd = l->sock, .events = 0 },	/* hang-up only: POLLIN
						 * may be a region's fd */
	};
	uint64_t v;
	int n;

	n = poll(pfd, 2, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[1].revents & (POLLHUP | POLLERR))
		return -EPIPE;
	if (pfd[0].revents & POLLIN)
		(void)!read(l->kick_back, &v, sizeof(v));
	return 0;
}

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* a memfd the guest cannot shrink, at least `size` bytes long */
static int check_memfd(int fd, uint64_t size, char *why, size_t whylen)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || (seals & NEEDED_SEALS) != NEEDED_SEALS) {
		snprintf(why, whylen, "shared memory is not sealed against "
			 "resizing");
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < size) {
		snprintf(why, whylen, "shared memory smaller than announced");
		return -EINVAL;
	}
	return 0;
}

static int local_hostmem_map(struct xgpub_transport *t, uint32_t region,
			     uint64_t size, const struct xgpuif_memref *dir,
			     uint64_t guest_va, void **va)
{
	struct local *l = (struct local *)t;
	struct xgpuif_local_hostmem m;
	char why[128];
	int fd, nfds;
	ssize_t n;
	void *p = MAP_FAILED;

	(void)dir;
	n = xgpuif_sock_recv(l->sock, &m, sizeof(m), &fd, 1, &nfds, 1000);
	if (n != (ssize_t)sizeof(m) || nfds != 1 || m.magic != XGPUIF_MAGIC ||
	    m.region != region || m.size != size) {
		if (nfds)
			close(fd);
		xgpub_err("%s: host-memory region %u: no matching descriptor "
			  "from the guest", t->who, region);
		return -EPROTO;
	}
	if (check_memfd(fd, size, why, sizeof(why))) {
		xgpub_err("%s: host-memory region %u: %s", t->who, region, why);
		close(fd);
		return -EPROTO;
	}
	/* the same address as in the guest, when free here, keeps unified
	 * addressing working for programs that hand host pointers to kernels */
	if (guest_va && !(guest_va & (XGPUIF_PAGE_SIZE - 1)))
		p = mmap((void *)(uintptr_t)guest_va, size,
			 PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p != MAP_FAILED && (uint64_t)(uintptr_t)p != guest_va) {
		munmap(p, size);
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	*va = p;
	return 0;
}

static void local_hostmem_unmap(struct xgpub_transport *t, void *va,
				uint64_t size)
{
	(void)t;
	munmap(va, size);
}

static void local_wait_gone(struct xgpub_transport *t)
{
	struct local *l = (struct local *)t;
	struct pollfd pfd = { .fd = l->sock, .events = 0 };

	while (!(pfd.revents & (POLLHUP | POLLERR)))
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return;
}

static void local_close(struct xgpub_transport *t)
{
	struct local *l = (struct local *)t;

	munmap(l->map, l->map_bytes);
	close(l->kick_back);
	close(l->kick_guest);
	close(l->sock);
	free(l);
}

static const struct xgpub_transport_ops local_ops = {
	.name = "local", XGPUB_TRANSPORT_FNS(local),
};

/* is fd an eventfd (the notification path must not block the worker) */
static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strcmp(target, "anon_inode:[eventfd]");
}

static void refuse(int sock, int err, const char *why)
{
	struct xgpuif_local_status st;

	memset(&st, 0, sizeof(st));
	st.magic = XGPUIF_MAGIC;
	st.status = err;
	snprintf(st.msg, sizeof(st.msg), "%.119s", why);
	(void)!send(sock, &st, sizeof(st), MSG_NOSIGNAL);
}

int xgpub_check_connect(struct xgpuif_local_connect *con,
			uint32_t max_data_pages, char *why, size_t whylen)
{
	con->name[sizeof(con->name) - 1] = 0;
	/* the name goes into log lines: printable ASCII only */
	for (char *c = con->name; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	if (con->version != XGPUIF_VERSION) {
		snprintf(why, whylen, "protocol version %u, backend speaks %u",
			 con->version, XGPUIF_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (con->ring_order > XGPUIF_MAX_RING_ORDER || con->data_pages < 1 ||
	    con->data_pages > max_data_pages) {
		snprintf(why, whylen, "ring order %u or data pages %u out of "
			 "range (max %u, %u)", con->ring_order,
			 con->data_pages, XGPUIF_MAX_RING_ORDER, max_data_pages);
		return -ERANGE;
	}
	return 0;
}

int xgpub_local_welcome(int sock, uint32_t client_id,
			uint32_t max_data_pages)
{
	struct xgpuif_local_welcome wel = {
		XGPUIF_MAGIC, XGPUIF_VERSION, XGPUIF_MAX_RING_ORDER,
		max_data_pages, client_id, 0
	};

	/* the first bytes on a fresh socket: they fit its buffer */
	if (send(sock, &wel, sizeof(wel), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    sizeof(wel))
		return -errno;
	return 0;
}

int xgpub_local_hello(int sock, uint32_t client_id, uint32_t max_data_pages,
		      struct xgpub_local_hello *h)
{
	struct xgpuif_local_connect *con = &h->con;
	char why[128];
	int nfds = 0;
	ssize_t n;
	int rc;

	memset(h, 0, sizeof(*h));
	n = xgpuif_sock_recv(sock, con, sizeof(*con), h->fds, 3, &nfds, 0);
	if (n == -EAGAIN || n == -ETIMEDOUT)
		return -EAGAIN;
	if (n == 0) {
		close_fds(h->fds, nfds);
		return -ECONNRESET;	/* it hung up: nothing to say */
	}
	if (n != (ssize_t)sizeof(*con) || nfds != 3 ||
	    con->magic != XGPUIF_MAGIC) {
		close_fds(h->fds, nfds);
		xgpub_err("client %u: malformed handshake", client_id);
		refuse(sock, -EPROTO, "malformed handshake");
		return -EPROTO;
	}
	rc = xgpub_check_connect(con, max_data_pages, why, sizeof(why));
	if (rc)
		goto refused;
	if (!is_eventfd(h->fds[1]) || !is_eventfd(h->fds[2])) {
		snprintf(why, sizeof(why), "the notification descriptors are "
			 "not eventfds");
		rc = -EINVAL;
		goto refused;
	}
	rc = check_memfd(h->fds[0], ((uint64_t)XGPUIF_PAGE_SIZE <<
				     con->ring_order) +
				 (uint64_t)con->data_pages * XGPUIF_PAGE_SIZE,
			 why, sizeof(why));
	if (rc)
		goto refused;
	return 0;

refused:
	xgpub_err("client %u (%s): refused: %s", client_id, con->name, why);
	refuse(sock, rc, why);
	close_fds(h->fds, 3);
	return rc;
}

int xgpub_local_attach(int sock, uint32_t client_id,
		       struct xgpub_local_hello *h,
		       struct xgpub_transport **out)
{
	const struct xgpuif_local_connect *con = &h->con;
	struct xgpuif_local_status ok;
	struct local *l;
	size_t ring_bytes = (size_t)XGPUIF_PAGE_SIZE << con->ring_order;
	int rc;

	l = calloc(1, sizeof(*l));
	if (!l) {
		rc = -ENOMEM;
		refuse(sock, rc, "backend out of memory");
		goto fail;
	}
	l->map_bytes = ring_bytes + (size_t)con->data_pages * XGPUIF_PAGE_SIZE;
	l->map = mmap(NULL, l->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		      h->fds[0], 0);
	if (l->map == MAP_FAILED) {
		free(l);
		rc = -ENOMEM;
		refuse(sock, rc, "cannot map shared memory");
		goto fail;
	}
	close(h->fds[0]);
	l->sock = sock;
	l->kick_back = h->fds[1];
	l->kick_guest = h->fds[2];
	l->t.ops = &local_ops;
	l->t.sring = l->map;
	l->t.ring_order = con->ring_order;
	l->t.data = (uint8_t *)l->map + ring_bytes;
	l->t.data_bytes = (size_t)con->data_pages * XGPUIF_PAGE_SIZE;
	snprintf(l->t.who, sizeof(l->t.who), "client %u (%s, pid %u)",
		 client_id, con->name, con->pid);
	snprintf(l->t.proc, sizeof(l->t.proc), "%s", con->name);
	{
		struct ucred cr;
		socklen_t crl = sizeof(cr);

		/* IPC handles travel between local clients of one user */
		if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0) {
			snprintf(l->t.ipc_domain, sizeof(l->t.ipc_domain),
				 "uid:%u", (unsigned int)cr.uid);
			/* the kernel's word, not the client's (con.pid) */
			l->t.pid = cr.pid > 0 ? (uint32_t)cr.pid : 0;
		} else
			snprintf(l->t.ipc_domain, sizeof(l->t.ipc_domain),
				 "client:%u", client_id);
	}

	memset(&ok, 0, sizeof(ok));
	ok.magic = XGPUIF_MAGIC;
	if (send(sock, &ok, sizeof(ok), MSG_NOSIGNAL) != sizeof(ok)) {
		rc = -errno;
		l->sock = -1;
		local_close(&l->t);
		return rc;
	}
	*out = &l->t;
	return 0;

fail:
	xgpub_err("client %u (%s): refused: %s", client_id, con->name,
		  strerror(-rc));
	close_fds(h->fds, 3);
	return rc;
}
