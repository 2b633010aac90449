/* SPDX-License-Identifier: MIT */
/*
 * xgpub_xen.h: the Xen transport of xen-gpubackd (xenstore, grants,
 * event channels).  The daemon side (xgpub_xen.c) watches the backend's
 * xenstore directory and runs the device handshake; every channel a
 * frontend opens gets a worker process whose transport (xgpub_xen_chan.c)
 * maps the channel's grants and binds its event channel.
 */
#ifndef XGPUB_XEN_H
#define XGPUB_XEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct xgpub_transport;

/* what the backend publishes, and checks every channel against */
struct xgpub_xen_limits {
	uint32_t max_ring_order;
	uint32_t max_data_pages;
	uint32_t max_channels;
};

/* a host-memory region of one guest: at most 1 GiB */
#define XGPUB_XEN_MAX_REGION_PAGES	(1u << 18)

/* worker side: map channel ch of domid's device devid; 0 or -errno (the
 * reason is then in the backend's ch/<n>/error) */
int xgpub_xen_chan_open(uint32_t domid, uint32_t devid, uint32_t ch,
			const struct xgpub_xen_limits *lim,
			struct xgpub_transport **out);

/* the read end of a pipe whose write end only the daemon holds: EOF
 * there tells a worker that the daemon died; -1 if none */
extern int xgpub_xen_alive_fd;

/* daemon side */
struct xgpub_xen;
struct xgpub_options;
struct xgpub_xen *xgpub_xen_start(const struct xgpub_xen_limits *lim,
				  const struct xgpub_options *opt);
/* the xenstore watch fd, or -1: then call xgpub_xen_poll every
 * XGPUB_XEN_POLL_MS */
int xgpub_xen_fd(struct xgpub_xen *x);
#define XGPUB_XEN_POLL_MS 100
/* the xenstore fd is readable, or a worker exited: look again */
void xgpub_xen_poll(struct xgpub_xen *x);
/* a worker of the Xen transport exited (called by the reaper) */
void xgpub_xen_child_exited(struct xgpub_xen *x, pid_t pid);
void xgpub_xen_stop(struct xgpub_xen *x);

struct xs_handle;
bool xgpub_xen_dom_alive(struct xs_handle *xs, unsigned int domid);

/* domain name, for logs and the CLI ("" if unknown) */
void xgpub_xen_domain_name(struct xgpub_xen *x, uint32_t domid, char *buf,
			   size_t len);

/* each device the daemon serves (none without --xen): its domain, the
 * domain's name ("" once the domain is gone), whether it is Connected */
void xgpub_xen_each_device(void (*fn)(uint32_t domid, const char *name,
				      bool connected, void *arg),
			   void *arg);

#endif /* XGPUB_XEN_H */
