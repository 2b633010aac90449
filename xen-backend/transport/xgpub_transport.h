/* SPDX-License-Identifier: MIT */
/*
 * xgpub_transport.h: a channel's shared memory and notifications, as the
 * worker that serves it sees them.  Two transports implement it: local
 * (a Unix socket handshake, sealed memfds, eventfds) and Xen (grants and
 * an event channel, described in xenstore).  Everything above this
 * interface is shared by both.
 */
#ifndef XGPUB_TRANSPORT_H
#define XGPUB_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpuif_ring.h"

struct xgpub_transport;

struct xgpub_transport_ops {
	const char *name;
	/* tell the guest that replies are on the ring */
	void (*notify)(struct xgpub_transport *t);
	/*
	 * Sleep until the guest kicks, timeout_ms passes or the guest is gone.
	 * 0: kicked or timed out; -EPIPE: the guest is gone.
	 */
	int (*wait)(struct xgpub_transport *t, int timeout_ms);
	/*
	 * Map the pages of host-memory region `region` (size bytes, described
	 * by `dir` for transports that need it), at guest_va if possible.
	 * 0 or -errno.
	 */
	int (*hostmem_map)(struct xgpub_transport *t, uint32_t region,
			   uint64_t size, const struct xgpuif_memref *dir,
			   uint64_t guest_va, void **va);
	void (*hostmem_unmap)(struct xgpub_transport *t, void *va,
			      uint64_t size);
	/*
	 * Block until the guest is gone (another thread may be serving the
	 * ring meanwhile); used by the worker's watchdog.
	 */
	void (*wait_gone)(struct xgpub_transport *t);
	/*
	 * The worker closes the channel because the guest broke the protocol:
	 * tell the guest's side why where the transport can (Xen: the
	 * channel's error node).  May be NULL.
	 */
	void (*fail)(struct xgpub_transport *t, const char *why);
	/*
	 * Transports without shared memory (the network): the guest's
	 * host-function slots are the worker's own n slots at s, kept in
	 * step with the guest's copy (xgpu_mirror.h): hostfn_area once,
	 * hostfn_ship after the worker set slot i's state (DUE, FREE),
	 * after the data area's bytes [off, off + len) (len 0: none; a
	 * block of managed memory fetched for a host function).  NULL
	 * elsewhere.  0 or -errno.
	 */
	int (*hostfn_area)(struct xgpub_transport *t,
			   struct xgpuif_hostfn_slot *s, unsigned int n);
	int (*hostfn_ship)(struct xgpub_transport *t, unsigned int i,
			   size_t off, size_t len);
	void (*close)(struct xgpub_transport *t);
};

/*
 * The members of a transport's ops table whose functions are named
 * PREFIX_notify, PREFIX_wait, PREFIX_hostmem_map, PREFIX_hostmem_unmap,
 * PREFIX_wait_gone and PREFIX_close (each transport has all six):
 *   static const struct xgpub_transport_ops x_ops = {
 *	.name = "x", XGPUB_TRANSPORT_FNS(x), .fail = x_fail,
 *   };
 */
#define XGPUB_TRANSPORT_FNS(prefix)					\
	.notify = prefix##_notify, .wait = prefix##_wait,		\
	.hostmem_map = prefix##_hostmem_map,				\
	.hostmem_unmap = prefix##_hostmem_unmap,			\
	.wait_gone = prefix##_wait_gone, .close = prefix##_close

struct xgpub_transport {
	const struct xgpub_transport_ops *ops;
	struct xgpuif_sring *sring;
	unsigned int ring_order;
	uint8_t *data;
	size_t data_bytes;
	char who[96];		/* the guest, for log lines */
	char proc[32];		/* the guest process's name (informative) */
	/* the guest process's pid as the guest sees it (local: the
	 * client's, from SO_PEERCRED; Xen: the frontend's pid node),
	 * 0: unknown */
	uint32_t pid;
	/* who may open this guest's IPC handles (xgpub_ipc.h): "dom:N" for
	 * a Xen domain's channels, "uid:N" for a local client's user */
	char ipc_domain[32];
};

/*
 * Local transport: the handshake on an accepted SOCK_SEQPACKET socket, in
 * three steps.  The daemon sends the welcome (xgpub_local_welcome), waits
 * in its event loop, bounded in time, for the client's connect message
 * and checks it with its descriptors (xgpub_local_hello): no process of
 * the client's exists until it has.  The worker forked then maps the
 * memory and answers (xgpub_local_attach).  Each returns 0 or -errno;
 * refusals are logged and the guest told why; hello's -EAGAIN: no message
 * yet.  A failed hello or attach has closed the descriptors.
 */
struct xgpub_local_hello {
	struct xgpuif_local_connect con;
	int fds[3];		/* memory (memfd), kick_back, kick_guest */
};
int xgpub_local_welcome(int sock, uint32_t client_id,
			uint32_t max_data_pages);
int xgpub_local_hello(int sock, uint32_t client_id, uint32_t max_data_pages,
		      struct xgpub_local_hello *h);
int xgpub_local_attach(int sock, uint32_t client_id,
		       struct xgpub_local_hello *h,
		       struct xgpub_transport **out);

/*
 * The channel's geometry and version from a guest's connect message
 * (local and network transports): 0, or -errno with *why; its process
 * name made printable
 */
int xgpub_check_connect(struct xgpuif_local_connect *con,
			uint32_t max_data_pages, char *why, size_t whylen);

/*
 * Network transport: TLS handshake (tls, the daemon's; the peer's name
 * becomes t->proc) and the channel handshake on an accepted TCP socket
 * fd from addr (for log lines).  0 or -errno (logged, the peer told why
 * where it got that far).
 */
struct xgpu_tls;
struct xgpub_options;
/* (lane_fd: the socket the daemon hands this channel's lanes' connections
 * on, -1: none; opt->net_lanes of them at most) */
int xgpub_net_accept(struct xgpu_tls *tls, int fd, int lane_fd,
		     const char *addr, uint32_t client_id,
		     const struct xgpub_options *opt,
		     struct xgpub_transport **out);

/* ---- Xen ------------------------------------------------------------------ */

/* what the backend publishes, and checks every channel against */
struct xgpub_xen_limits {
	uint32_t max_ring_order;
	uint32_t max_data_pages;
	uint32_t max_channels;
	/*
	 * The host's grant budget (--grant-mb): granted pages that all Xen
	 * channels of all domains may keep mapped at once (rings, data
	 * areas, regions), 0: none.  Dom0's maptrack table, which
	 * blkback and netback of every domain need too, holds 262144
	 * mappings by default and a PV Dom0 takes two a page.
	 */
	uint64_t grant_pages;
	/*
	 * One domain's share of it (--domain-grant-mb, or grant-mb= in its
	 * rule or caps), summed over all the domain's channels, 0: none: so
	 * that one domain cannot take the whole budget from the others
	 */
	uint64_t dom_grant_pages;
};
#define XGPUB_XEN_GRANT_MB_DEFAULT	256u
#define XGPUB_XEN_DOM_GRANT_MB_DEFAULT	128u

/* a host-memory region of one guest: at most 1 GiB */
#define XGPUB_XEN_MAX_REGION_PAGES	(1u << 18)
/*
 * All host-memory regions of one Xen channel, in granted pages (1 GiB):
 * Dom0's grant maptrack table is shared by every backend of every domain
 * (blkback, netback), so a channel may not fill it.  Past this a region
 * is refused with -ENOSPC (the guest gets CUDA_ERROR_OUT_OF_MEMORY).
 */
#define XGPUB_XEN_REGION_GRANTS		(1u << 18)
/* where xenstore watches are unavailable, look this often */
#define XGPUB_XEN_POLL_MS		100

/* map channel ch of domid's device devid; 0 or -errno (the reason is
 * then in the backend's ch/<n>/error) */
int xgpub_xen_chan_open(uint32_t domid, uint32_t devid, uint32_t ch,
			const struct xgpub_xen_limits *lim,
			struct xgpub_transport **out);

/* the read end of a pipe whose write end only the daemon holds: EOF
 * there tells a worker that the daemon died; -1 if none */
extern int xgpub_xen_alive_fd;

/*
 * Is the domain still there?  Its /local/domain/<id> directory, which the
 * toolstack removes when it destroys the domain.
 */
struct xs_handle;
bool xgpub_xen_dom_alive(struct xs_handle *xs, unsigned int domid);

#endif /* XGPUB_TRANSPORT_H */
