// SPDX-License-Identifier: MIT
/*
 * xgpulib_local.c: the local transport, guest side.  The guest owns the
 * shared memory (as a Xen frontend owns and grants its pages): a sealed
 * memfd holding the ring and the data area, and two eventfds, all passed
 * to the backend over a SOCK_SEQPACKET Unix socket.  The socket stays open
 * for the life of the channel: its hang-up is how each side learns that
 * the other is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "xgpulib_env.h"
#include "xgpulib_transport.h"
#include "xgpuif_sock.h"

struct local {
	struct xgpulib_transport t;
	int sock;
	int kick_back;		/* we write: requests are waiting */
	int kick_guest;		/* we read: replies are waiting */
	int memfd;
	size_t map_bytes;
	void *map;
};

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static int local_notify(struct xgpulib_transport *t)
{
	struct local *l = (struct local *)t;
	uint64_t one = 1;

	return write(l->kick_back, &one, sizeof(one)) == sizeof(one) ? 0 :
								      -errno;
}

static int local_wait(struct xgpulib_transport *t, int timeout_ms)
{
	struct local *l = (struct local *)t;
	struct pollfd pfd[2] = {
		{ .fd = l->kick_guest, .events = POLLIN },
		{ .fd = l->sock, .events = POLLIN },
	};
	uint64_t v;
	int n;

	n = poll(pfd, 2, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[1].revents & (POLLHUP | POLLERR | POLLIN))
		return -EPIPE;	/* the worker never writes after the
				 * handshake; readable means closed */
	if (pfd[0].revents & POLLIN)
		(void)!read(l->kick_guest, &v, sizeof(v));
	return 0;
}

static int sealed_memfd(const char *name, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, SEALS) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/*
 * Map fd's first size bytes shared at want exactly (MAP_FIXED_NOREPLACE;
 * a kernel older than 4.17 takes it as a hint, so the address is
 * checked): the address, or MAP_FAILED with errno EEXIST when something
 * is mapped there.
 */
static void *map_at(void *want, size_t size, int fd)
{
	void *p = mmap(want, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);

	if (p != MAP_FAILED && p != want) {
		munmap(p, size);
		errno = EEXIST;
		return MAP_FAILED;
	}
	return p;
}

/* a sealed memfd of size bytes (its fd, or -errno), mapped shared at *p
 * (at the address *p holds unless NULL) */
static int mapped_memfd(const char *name, size_t size, void **p)
{
	int fd, rc;

	fd = sealed_memfd(name, size);
	if (fd < 0)
		return fd;
	if (*p)
		*p = map_at(*p, size, fd);
	else
		*p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			  0);
	if (*p == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

/* memfd fd, the pages of region, handed to the worker (and closed here) */
static int send_memfd(struct local *l, uint32_t region, size_t size, int fd)
{
	struct xgpuif_local_hostmem m = { XGPUIF_MAGIC, region, size };
	int rc = xgpuif_sock_send(l->sock, &m, sizeof(m), &fd, 1);

	close(fd);
	return rc;
}

static int local_hostmem_alloc(struct xgpulib_transport *t, uint32_t region,
			       size_t size, void **va,
			       struct xgpuif_memref *dir)
{
	struct local *l = (struct local *)t;
	void *p = *va;
	int fd, rc;

	fd = mapped_memfd("xgpu-hostmem", size, &p);
	if (fd < 0)
		return fd;
	rc = send_memfd(l, region, size, fd);
	if (rc) {
		munmap(p, size);
		return rc;
	}
	memset(dir, 0, sizeof(*dir));
	*va = p;
	return 0;
}

static void local_hostmem_free(struct xgpulib_transport *t, uint32_t region,
			       void *va, size_t size)
{
	(void)t;
	(void)region;
	munmap(va, size);
}

/*
 * Copy whole pages of the program's memory through the kernel
 * (process_vm_readv on ourselves) where it can: a sanitizer's memcpy
 * would take the bytes around the program's range on these pages
 * (malloc's red zones) for an overflow.  memcpy where the kernel refuses.
 */
static void copy_pages(void *dst, const void *src, size_t size)
{
	size_t done = 0;

	while (done < size) {
		struct iovec l = { (uint8_t *)dst + done, size - done };
		struct iovec r = { (uint8_t *)src + done, size - done };
		ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done < size)
		memcpy((uint8_t *)dst + done, (const uint8_t *)src + done,
		       size - done);
}

/*
 * Copy the pages [src, src + size) to dst for a switch of mapping at src:
 * the first and last pages may hold other bytes of the program (the
 * neighbours of an unaligned range, malloc's headers), which another
 * thread may write at any time, so they are copied last, right before the
 * switch, to keep the moment where such a write could be lost as short as
 * can be (microseconds).
 */
static void copy_for_switch(uint8_t *dst, const uint8_t *src, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (size <= 2 * pg) {
		copy_pages(dst, src, size);
		return;
	}
	copy_pages(dst + pg, src + pg, size - 2 * pg);
	copy_pages(dst, src, pg);
	copy_pages(dst + size - pg, src + size - pg, pg);
}

/*
 * cuMemHostRegister's pages become shared memory in place: their contents
 * are copied into a new sealed memfd, which is then mapped over them with
 * MAP_FIXED, so that the program's pointer keeps its bytes and the worker
 * can map the same pages at the same address.  The bytes that share these
 * pages with the range (the neighbours of an unaligned range) move too,
 * contents kept.  A write by another thread to these pages between the
 * copy and the remapping would be lost: the program is registering them,
 * so it is not expected to be writing them meanwhile, and their
 * neighbours' pages are copied last (copy_for_switch).
 */
static int local_hostmem_share(struct xgpulib_transport *t, uint32_t region,
			       void *va, size_t size,
			       struct xgpuif_memref *dir)
{
	struct local *l = (struct local *)t;
	void *tmp = NULL, *p;
	int fd, rc;

	fd = mapped_memfd("xgpu-hostreg", size, &tmp);
	if (fd < 0)
		return fd;
	copy_for_switch(tmp, va, size);
	p = mmap(va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0);
	munmap(tmp, size);
	if (p == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = send_memfd(l, region, size, fd);
	if (rc) {
		t->ops->hostmem_unshare(t, va, size);
		return rc;
	}
	memset(dir, 0, sizeof(*dir));
	return 0;
}

/*
 * Unregistering copies the pages back into private anonymous memory and
 * moves that over the shared mapping (mremap replaces it in one step), so
 * that the program's memory is again what it was before cuMemHostRegister
 * (private across fork, registrable again) and the memfd goes away.
 */
static int local_hostmem_unshare(struct xgpulib_transport *t, void *va,
				 size_t size)
{
	void *tmp;
	int rc;

	(void)t;
	tmp = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	copy_for_switch(tmp, va, size);
	if (mremap(tmp, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, va) ==
	    MAP_FAILED) {
		rc = -errno;
		munmap(tmp, size);
		return rc;
	}
	return 0;
}

static void local_close(struct xgpulib_transport *t)
{
	struct local *l = (struct local *)t;

	close(l->sock);
	close(l->kick_back);
	close(l->kick_guest);
	munmap(l->map, l->map_bytes);
	free(l);
}

static const struct xgpulib_transport_ops local_ops = {
	.name = "local", XGPULIB_TRANSPORT_FNS(local),
	.hostmem_share = local_hostmem_share,
	.hostmem_unshare = local_hostmem_unshare,
};

/* ---- the handshake that the local and network transports share --------- */

size_t xgpulib_hs_geometry(const struct xgpuif_local_welcome *wel,
			   struct xgpulib_transport *t)
{
	unsigned int order, pages;

	order = xgpulib_env_uint("XGPU_RING_ORDER", XGPUIF_DEFAULT_RING_ORDER);
	if (order > wel->max_ring_order)
		order = wel->max_ring_order;
	pages = xgpulib_env_uint("XGPU_DATA_MB", 64) * 256;
	if (pages > wel->max_data_pages)
		pages = wel->max_data_pages;
	if (pages < 16)
		pages = 16;
	t->ring_order = order;
	t->data_bytes = (size_t)pages * XGPUIF_PAGE_SIZE;
	return ((size_t)XGPUIF_PAGE_SIZE << order) + t->data_bytes;
}

void xgpulib_hs_place(struct xgpulib_transport *t, void *map,
		      struct xgpuif_local_connect *con)
{
	t->sring = map;
	t->data = (uint8_t *)map + ((size_t)XGPUIF_PAGE_SIZE << t->ring_order);
	/* the guest initialises the shared ring, as a Xen frontend does */
	SHARED_RING_INIT(t->sring);
	memset(con, 0, sizeof(*con));
	con->magic = XGPUIF_MAGIC;
	con->version = XGPUIF_VERSION;
	con->ring_order = t->ring_order;
	con->data_pages = (uint32_t)(t->data_bytes / XGPUIF_PAGE_SIZE);
	con->pid = (uint32_t)getpid();
	xgpulib_proc_name(con->name, sizeof(con->name));
}

int xgpulib_hs_status(struct xgpuif_local_status *st, const char *where,
		      char *msg, size_t msglen)
{
	if (!st || st->magic != XGPUIF_MAGIC) {
		snprintf(msg, msglen, "%s closed the handshake", where);
		return -EPROTO;
	}
	if (!st->status)
		return 0;
	st->msg[sizeof(st->msg) - 1] = 0;
	snprintf(msg, msglen, "%s refused the channel: %s", where, st->msg);
	return st->status < 0 ? st->status : -EPROTO;
}

int xgpulib_local_connect(const char *path, struct xgpulib_transport **out,
			  char *msg, size_t msglen)
{
	struct xgpuif_local_welcome wel;
	struct xgpuif_local_connect con;
	struct xgpuif_local_status st;
	struct local *l;
	int fds[3], rc;
	ssize_t n;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->kick_back = l->kick_guest = l->memfd = -1;
	snprintf(l->t.where, sizeof(l->t.where), "local:%s", path);
	l->sock = xgpuif_sock_connect(path);
	if (l->sock < 0) {
		rc = l->sock;
		snprintf(msg, msglen, "cannot connect to %s: %s", path,
			 strerror(-rc));
		goto out_sock;
	}
	n = recv(l->sock, &wel, sizeof(wel), 0);
	if (n != (ssize_t)sizeof(wel) || wel.magic != XGPUIF_MAGIC ||
	    wel.version != XGPUIF_VERSION) {
		rc = -EPROTO;
		snprintf(msg, msglen, "%s: no xgpu backend greeting (%s)",
			 path, n < 0 ? strerror(errno) : "bad message");
		goto out_sock;
	}

	l->map_bytes = xgpulib_hs_geometry(&wel, &l->t);

	l->memfd = sealed_memfd("xgpu-channel", l->map_bytes);
	l->kick_back = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->kick_guest = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->memfd < 0 || l->kick_back < 0 || l->kick_guest < 0) {
		rc = -ENOMEM;
		snprintf(msg, msglen, "cannot create shared memory: %s",
			 strerror(errno));
		goto out_fds;
	}
	l->map = mmap(NULL, l->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		      l->memfd, 0);
	if (l->map == MAP_FAILED) {
		rc = -errno;
		snprintf(msg, msglen, "cannot map shared memory: %s",
			 strerror(errno));
		goto out_fds;
	}
	xgpulib_hs_place(&l->t, l->map, &con);
	fds[0] = l->memfd;
	fds[1] = l->kick_back;
	fds[2] = l->kick_guest;
	rc = xgpuif_sock_send(l->sock, &con, sizeof(con), fds, 3);
	if (rc) {
		snprintf(msg, msglen, "handshake with %s failed: %s", path,
			 strerror(-rc));
		goto out_map;
	}
	n = recv(l->sock, &st, sizeof(st), 0);
	rc = xgpulib_hs_status(n == (ssize_t)sizeof(st) ? &st : NULL, path,
			       msg, msglen);
	if (rc)
		goto out_map;
	close(l->memfd);
	l->memfd = -1;
	l->t.ops = &local_ops;
	*out = &l->t;
	return 0;

out_map:
	munmap(l->map, l->map_bytes);
out_fds:
	if (l->memfd >= 0)
		close(l->memfd);
	if (l->kick_back >= 0)
		close(l->kick_back);
	if (l->kick_guest >= 0)
		close(l->kick_guest);
out_sock:
	if (l->sock >= 0)
		close(l->sock);
	free(l);
	return rc;
}
