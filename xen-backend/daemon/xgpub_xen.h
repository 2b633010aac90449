/* SPDX-License-Identifier: MIT */
/*
 * xgpub_xen.h: the daemon's Xen backend (xgpub_xen.c): it watches the
 * backend's xenstore directory, runs the device handshake and forks a
 * worker for every channel a frontend opens; the worker's transport
 * (transport/xgpub_xen_chan.c) maps the channel's grants and binds its
 * event channel.
 */
#ifndef XGPUB_XEN_H
#define XGPUB_XEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xgpub_transport.h"

struct xgpub_xen;
struct xgpub_options;
/* before the daemon detaches: can it reach xenstore?  0, or -1 with one
 * line on stderr */
int xgpub_xen_check(void);
struct xgpub_xen *xgpub_xen_start(const struct xgpub_xen_limits *lim,
				  const struct xgpub_options *opt);
/* the xenstore watch fd, or -1: then call xgpub_xen_poll every
 * XGPUB_XEN_POLL_MS */
int xgpub_xen_fd(struct xgpub_xen *x);
/* a worker exited, or the rules changed: look again, now */
void xgpub_xen_poll(struct xgpub_xen *x);
/*
 * The xenstore fd is readable: take its events and look again.  An
 * event of a guest's frontend area (a guest writes its own nodes as
 * often as it likes) makes that guest's devices due, each looked at at
 * most XGPUB_XEN_LOOKS_PER_S times a second after a burst of
 * XGPUB_XEN_LOOKS_BURST, by a bucket of its own: a guest's flood delays
 * its own devices only.  Dom0's events (the backend directory, domains
 * coming and going) make a look at every device, with a bucket of the
 * same rate.  An event past its bucket waits for the next look, which
 * sees what it said (the state machine is level-triggered).
 */
#define XGPUB_XEN_LOOKS_PER_S	100u
#define XGPUB_XEN_LOOKS_BURST	16u
void xgpub_xen_events(struct xgpub_xen *x);
/* ns until a look that events asked for may run (0: now; call
 * xgpub_xen_events), UINT64_MAX when none is waiting */
uint64_t xgpub_xen_due_ns(struct xgpub_xen *x);
/* looks so far, at every device (xgpub_xen_poll's and xgpub_xen_events')
 * or at one guest's device (xgpub_xen_events') */
uint64_t xgpub_xen_looks(const struct xgpub_xen *x);
/* a worker of the Xen transport exited (called by the reaper) */
void xgpub_xen_child_exited(struct xgpub_xen *x, pid_t pid);
void xgpub_xen_stop(struct xgpub_xen *x);

/* domain name, for logs and the CLI ("" if unknown) */
void xgpub_xen_domain_name(struct xgpub_xen *x, uint32_t domid, char *buf,
			   size_t len);

/* each device the daemon serves (none without --xen): its domain, the
 * domain's name ("" once the domain is gone), whether it is Connected */
void xgpub_xen_each_device(void (*fn)(uint32_t domid, const char *name,
				      bool connected, void *arg),
			   void *arg);

#endif /* XGPUB_XEN_H */
