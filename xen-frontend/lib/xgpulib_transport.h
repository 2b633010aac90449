/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_transport.h: how a channel's shared memory and notifications
 * reach the backend.  Three transports: local (a Unix socket, memfds and
 * eventfds: xgpulib_local.c), Xen (the guest module's /dev/xgpu:
 * xgpulib_xen.c) and the network (TLS over TCP, no shared memory:
 * xgpulib_net.c).  Everything above them is shared.
 */
#ifndef XGPULIB_TRANSPORT_H
#define XGPULIB_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "xgpuif_ring.h"

struct xgpulib_transport;

struct xgpulib_transport_ops {
	const char *name;
	/* kick the backend: new requests are on the ring */
	int (*notify)(struct xgpulib_transport *t);
	/*
	 * Sleep until the backend kicks us, timeout_ms passes (-1: forever)
	 * or the backend is gone.  0: kicked or timed out; -EPIPE: gone.
	 */
	int (*wait)(struct xgpulib_transport *t, int timeout_ms);
	/*
	 * Memory to share with the worker as host-memory region `region`:
	 * returns its address; the transport hands its pages to the backend
	 * (the caller then sends XGPUIF_OP_HOSTMEM_REGISTER with `dir`).
	 * *va NULL: anywhere; else exactly there, where nothing is mapped
	 * (-EEXIST if anything is: nothing was handed over then).
	 */
	int (*hostmem_alloc)(struct xgpulib_transport *t, uint32_t region,
			     size_t size, void **va, struct xgpuif_memref *dir);
	void (*hostmem_free)(struct xgpulib_transport *t, uint32_t region,
			     void *va, size_t size);
	/*
	 * The program's own memory [va, va + size) (whole pages, private
	 * anonymous) to share with the worker as region `region`, at the
	 * same address and with the same contents (the caller then sends
	 * XGPUIF_OP_HOST_REGISTER).  NULL where the transport cannot
	 * (cuMemHostRegister then stages its copies).
	 */
	int (*hostmem_share)(struct xgpulib_transport *t, uint32_t region,
			     void *va, size_t size, struct xgpuif_memref *dir);
	/* after the worker let go of it: make [va, va + size) private
	 * memory again, contents kept; 0 or -errno (still shared then) */
	int (*hostmem_unshare)(struct xgpulib_transport *t, void *va,
			       size_t size);
	/*
	 * Transports without shared memory (the network): the data area
	 * is this end's own, and these move its bytes.  put: the worker
	 * will read [off, off + len) of the data area, which is to hold
	 * src (called before the request that names it).  expect: the
	 * worker writes [off, off + len) for a request already submitted;
	 * its bytes are to land at dst (NULL: the data area), and
	 * expect_wait(ticket), after the request's reply, waits for them.
	 * NULL where the data area is shared.  0 or -errno.
	 */
	int (*put)(struct xgpulib_transport *t, size_t off, const void *src,
		   size_t len);
	/* a put that does not wait: src stays as it is until put_wait
	 * says *sent reached total, the bytes of every put_start made with
	 * it (NULL: put alone) */
	int (*put_start)(struct xgpulib_transport *t, size_t off,
			 const void *src, size_t len, uint64_t *sent);
	int (*put_wait)(struct xgpulib_transport *t, const uint64_t *sent,
			uint64_t total);
	int (*expect)(struct xgpulib_transport *t, size_t off, size_t len,
		      void *dst, uint64_t *ticket);
	int (*expect_wait)(struct xgpulib_transport *t, uint64_t ticket);
	/*
	 * Transports without shared memory: the host-function slots are
	 * this end's own (n of them at s, for the process's life), kept
	 * in step with the worker's copy: hostfn_area once, before
	 * HOSTFN_SETUP names them (XGPUIF_HOSTFN_MIRRORED); hostfn_ship
	 * after the guest set a slot's state (DONE; FETCH or FLUSH of a
	 * block of managed memory), after the data area's bytes [off, off
	 * + len) (len 0: none; a block written back).  NULL where the
	 * slots are shared memory.  0 or -errno.
	 */
	int (*hostfn_area)(struct xgpulib_transport *t,
			   struct xgpuif_hostfn_slot *s, unsigned int n);
	int (*hostfn_ship)(struct xgpulib_transport *t, unsigned int i,
			   size_t off, size_t len);
	void (*close)(struct xgpulib_transport *t);
};

/*
 * The members of a transport's ops table whose functions are named
 * PREFIX_notify, PREFIX_wait, PREFIX_hostmem_alloc, PREFIX_hostmem_free
 * and PREFIX_close (each transport has all five); the others follow:
 *   static const struct xgpulib_transport_ops x_ops = {
 *	.name = "x", XGPULIB_TRANSPORT_FNS(x), .put = x_put,
 *   };
 */
#define XGPULIB_TRANSPORT_FNS(prefix)					\
	.notify = prefix##_notify, .wait = prefix##_wait,		\
	.hostmem_alloc = prefix##_hostmem_alloc,			\
	.hostmem_free = prefix##_hostmem_free, .close = prefix##_close

struct xgpulib_transport {
	const struct xgpulib_transport_ops *ops;
	struct xgpuif_sring *sring;
	unsigned int ring_order;
	uint8_t *data;		/* data area */
	size_t data_bytes;	/* what the copy engine may use of it */
	/*
	 * Transports without shared memory: [mco_off, mco_off + mco_bytes)
	 * of the data area, after data_bytes, carries the blocks of
	 * coherent managed memory (xgpulib_mco.c) to and from the worker
	 * (0 bytes: none)
	 */
	size_t mco_off, mco_bytes;
	char where[256];	/* what we connected to, for messages */
};

/* local transport: Unix socket at `path`; 0 or -errno, *msg says why */
int xgpulib_local_connect(const char *path, struct xgpulib_transport **out,
			  char *msg, size_t msglen);

/* Xen transport: the device node of xen-gpufront.ko; 0 or -errno */
int xgpulib_xen_connect(const char *dev, struct xgpulib_transport **out,
			char *msg, size_t msglen);

/*
 * The handshake that the local and network transports share
 * (xgpulib_local.c): the geometry within the backend's limits
 * (XGPU_RING_ORDER, XGPU_DATA_MB) into t, the bytes of ring and data
 * area; the ring and data area placed at map (the ring initialised) and
 * the connect message; the backend's status (NULL: none came): 0, or
 * -errno with *msg saying why.
 */
struct xgpuif_local_welcome;
struct xgpuif_local_connect;
struct xgpuif_local_status;
size_t xgpulib_hs_geometry(const struct xgpuif_local_welcome *wel,
			   struct xgpulib_transport *t);
void xgpulib_hs_place(struct xgpulib_transport *t, void *map,
		      struct xgpuif_local_connect *con);
int xgpulib_hs_status(struct xgpuif_local_status *st, const char *where,
		      char *msg, size_t msglen);

/* network transport: url is tcp://HOST:PORT; 0 or -errno, *msg says why */
int xgpulib_net_connect(const char *url, struct xgpulib_transport **out,
			char *msg, size_t msglen);

#endif /* XGPULIB_TRANSPORT_H */
