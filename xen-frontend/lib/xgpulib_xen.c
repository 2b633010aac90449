// SPDX-License-Identifier: MIT
/*
 * xgpulib_xen.c: the Xen transport, guest side.  The kernel module
 * xen-gpufront.ko owns the granted pages and the event channel; this
 * process gets them through /dev/xgpu (xen-frontend/include/xgpu_uapi.h):
 * CONNECT opens a channel, mmap shows the ring and the data area, NOTIFY
 * and WAIT kick and sleep, HOSTMEM_ALLOC gives pinned memory whose grant
 * references travel to the worker in the data area.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xgpulib_env.h"
#include "xgpulib_transport.h"
#include "xgpu_uapi.h"

struct xen {
	struct xgpulib_transport t;
	int fd;
	void *ring;
	size_t ring_bytes;
	void *data;
	size_t data_bytes;
	/* region id -> the module's id, for HOSTMEM_FREE */
	uint32_t kid[4096];
};

static int xen_notify(struct xgpulib_transport *t)
{
	struct xen *x = (struct xen *)t;

	return ioctl(x->fd, XGPU_IOC_NOTIFY) ? -errno : 0;
}

static int xen_wait(struct xgpulib_transport *t, int timeout_ms)
{
	struct xen *x = (struct xen *)t;
	struct xgpu_ioc_wait w = {
		timeout_ms < 0 ? XGPU_WAIT_FOREVER : (uint32_t)timeout_ms, 0
	};

	if (ioctl(x->fd, XGPU_IOC_WAIT, &w) == 0)
		return 0;
	if (errno == EINTR || errno == ETIMEDOUT)
		return 0;
	return errno == EPIPE || errno == ENODEV ? -EPIPE : -errno;
}

/*
 * The region's grant references go to the worker in the data area, at
 * its start; the caller holds the data area's lock until the worker has
 * answered HOSTMEM_REGISTER.
 */
static int xen_hostmem_alloc(struct xgpulib_transport *t, uint32_t region,
			     size_t size, void **va,
			     struct xgpuif_memref *dir)
{
	struct xen *x = (struct xen *)t;
	size_t npages = size / XGPUIF_PAGE_SIZE;
	struct xgpu_ioc_hostmem h;
	struct xgpu_ioc_hostmem_free f;
	void *p;

	if (region >= sizeof(x->kid) / sizeof(x->kid[0]) || !npages ||
	    size % XGPUIF_PAGE_SIZE ||
	    npages * sizeof(uint32_t) > x->data_bytes)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.size = size;
	h.refs = (uint64_t)(uintptr_t)x->data;
	h.refs_cap = (uint32_t)npages;
	if (ioctl(x->fd, XGPU_IOC_HOSTMEM_ALLOC, &h))
		return -errno;
	if (*va) {	/* exactly there (MAP_FIXED_NOREPLACE, checked) */
		p = mmap(*va, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, x->fd,
			 (off_t)h.offset);
		if (p != MAP_FAILED && p != *va) {
			munmap(p, size);
			p = MAP_FAILED;
			errno = EEXIST;
		}
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, x->fd,
			 (off_t)h.offset);
	}
	if (p == MAP_FAILED) {
		int rc = -errno;

		f = (struct xgpu_ioc_hostmem_free){ h.id, 0 };
		ioctl(x->fd, XGPU_IOC_HOSTMEM_FREE, &f);
		return rc;
	}
	x->kid[region] = h.id;
	memset(dir, 0, sizeof(*dir));
	dir->region = XGPUIF_REGION_DATA;
	dir->off = 0;
	dir->len = npages * sizeof(uint32_t);
	*va = p;
	return 0;
}

static void xen_hostmem_free(struct xgpulib_transport *t, uint32_t region,
			     void *va, size_t size)
{
	struct xen *x = (struct xen *)t;
	struct xgpu_ioc_hostmem_free f = { 0, 0 };

	munmap(va, size);
	if (region < sizeof(x->kid) / sizeof(x->kid[0])) {
		f.id = x->kid[region];
		x->kid[region] = 0;
		ioctl(x->fd, XGPU_IOC_HOSTMEM_FREE, &f);
	}
}

static void xen_close(struct xgpulib_transport *t)
{
	struct xen *x = (struct xen *)t;

	if (x->data)
		munmap(x->data, x->data_bytes);
	if (x->ring)
		munmap(x->ring, x->ring_bytes);
	close(x->fd);	/* the module closes the channel with the backend */
	free(x);
}

static const struct xgpulib_transport_ops xen_ops = {
	.name = "xen", XGPULIB_TRANSPORT_FNS(xen),
};

int xgpulib_xen_connect(const char *dev, struct xgpulib_transport **out,
			char *msg, size_t msglen)
{
	struct xgpu_ioc_connect c;
	struct xen *x = calloc(1, sizeof(*x));
	int rc;

	if (!x)
		return -ENOMEM;
	x->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (x->fd < 0) {
		rc = -errno;
		snprintf(msg, msglen, "cannot open %s: %s", dev,
			 strerror(errno));
		free(x);
		return rc;
	}
	memset(&c, 0, sizeof(c));
	c.version = XGPU_UAPI_VERSION;
	c.ring_order = xgpulib_env_uint("XGPU_RING_ORDER", XGPUIF_DEFAULT_RING_ORDER);
	c.data_pages = xgpulib_env_uint("XGPU_DATA_MB",
				XGPUIF_XEN_DEFAULT_DATA_PAGES / 256) * 256;
	if (c.data_pages < 16)
		c.data_pages = 16;
	xgpulib_proc_name(c.name, sizeof(c.name));
	rc = ioctl(x->fd, XGPU_IOC_CONNECT, &c) ? -errno : 0;
	if (rc == -EINVAL && c.max_data_pages &&
	    (c.ring_order > c.max_ring_order ||
	     c.data_pages > c.max_data_pages)) {
		/* ask again within the backend's limits */
		if (c.ring_order > c.max_ring_order)
			c.ring_order = c.max_ring_order;
		if (c.data_pages > c.max_data_pages)
			c.data_pages = c.max_data_pages;
		memset(c.msg, 0, sizeof(c.msg));
		rc = ioctl(x->fd, XGPU_IOC_CONNECT, &c) ? -errno : 0;
	}
	if (rc) {
		c.msg[sizeof(c.msg) - 1] = 0;
		snprintf(msg, msglen, "%s: the backend did not open a channel: "
			 "%s%s%s", dev, strerror(-rc), c.msg[0] ? ": " : "",
			 c.msg);
		close(x->fd);
		free(x);
		return rc;
	}
	x->ring_bytes = (size_t)XGPUIF_PAGE_SIZE << c.ring_order;
	x->data_bytes = (size_t)c.data_pages * XGPUIF_PAGE_SIZE;
	x->ring = mmap(NULL, x->ring_bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED, x->fd, (off_t)c.ring_offset);
	x->data = mmap(NULL, x->data_bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED, x->fd, (off_t)c.data_offset);
	if (x->ring == MAP_FAILED || x->data == MAP_FAILED) {
		rc = -errno;
		snprintf(msg, msglen, "%s: cannot map the channel: %s", dev,
			 strerror(errno));
		if (x->ring != MAP_FAILED)
			munmap(x->ring, x->ring_bytes);
		if (x->data != MAP_FAILED)
			munmap(x->data, x->data_bytes);
		close(x->fd);
		free(x);
		return rc;
	}
	x->t.ops = &xen_ops;
	x->t.sring = x->ring;	/* the module initialised it */
	x->t.ring_order = c.ring_order;
	x->t.data = x->data;
	x->t.data_bytes = x->data_bytes;
	snprintf(x->t.where, sizeof(x->t.where), "xen:%s (backend dom%u, "
		 "channel %u)", dev, c.backend_domid, c.channel);
	*out = &x->t;
	return 0;
}
