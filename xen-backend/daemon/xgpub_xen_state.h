/* SPDX-License-Identifier: MIT */
/*
 * xgpub_xen_state.h: the inside of the daemon's Xen backend, shared by its
 * two files and nobody else (the daemon goes through xgpub_xen.h): the
 * backend's state (its devices and their channels) and the xenstore
 * helpers.
 *
 *   xgpub_xen.c        start, stop, poll, the scan of the backend
 *                      directory and each device's state machine;
 *   xgpub_xen_chans.c  a device's channels: spawning their workers,
 *                      refusing channels, stopping workers (and why),
 *                      orphans of an earlier daemon.
 *
 * xgpub_xen.c calls into xgpub_xen_chans.c, never the other way: what
 * both need is here, in a header that belongs to neither file, so that
 * the dependency runs one way only.
 */
#ifndef XGPUB_XEN_STATE_H
#define XGPUB_XEN_STATE_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <xenstore.h>

#include "xgpub.h"
#include "xgpu_rules.h"
#include "xgpub_bucket.h"
#include "xgpub_transport.h"
#include "xgpub_xs.h"
#include "xgpub_xs_parse.h"

#define BE_ROOT	"/local/domain/0/backend/" XGPUIF_XEN_DEVTYPE
#define MAX_DEVS 256
#define MAX_CH ((int)XGPUIF_XEN_MAX_CHANNELS)

struct xch {
	bool used;
	uint32_t n;
	pid_t pid;		/* 0: no worker */
	bool done;		/* its worker ran and exited */
};

struct xdev {
	bool used;
	uint32_t domid, devid;
	char be[96], fe[128];
	bool watching;
	bool waiting_logged;
	bool seen;		/* looked at once by this daemon */
	/* channels at once: its domain's rule, else --max-channels
	 * (set when the limits are published) */
	uint32_t max_channels;
	/* its own caps, its backend's caps/ nodes (read when the limits
	 * are published; has 0: none) */
	struct xgpu_rule caps;
	/* looks after its frontend's watch events (xgpub_xen_events):
	 * its domain's writes wait for its own bucket, not the others' */
	struct xgpub_bucket looks;
	bool look_due;
	bool rate_set;		/* from its rule (and caps, once read) */
	uint64_t deferred, said_ns;	/* as struct xgpub_xen's */
	struct xch ch[MAX_CH];
};

/* what a domain's rule of xgpu.conf did (xgpub_xen.c, auto-attach) */
enum { AUTO_UNSEEN, AUTO_NONE, AUTO_DONE, AUTO_FAILED };
#define AUTO_DOMIDS 0x7ff0u	/* domids below DOMID_FIRST_RESERVED */

struct xgpub_xen {
	struct xs_handle *xs;
	bool polling;		/* no watches: look every POLL_MS */
	int fd;			/* watch events wake the daemon here */
	int alive_w;		/* workers see its end: the daemon died */
	struct xgpub_xen_limits lim;
	const struct xgpub_options *opt;	/* what workers run with */
	struct xdev dev[MAX_DEVS];
	/* per domid: AUTO_*, reset when the domain is gone */
	uint8_t autoattach[AUTO_DOMIDS];
	/* looks at every device after watch events of Dom0's (the
	 * backend directory, domains coming and going; xgpub_xen_events) */
	struct xgpub_bucket looks;
	bool look_due;		/* events wait for the next look */
	uint64_t nlooks;	/* scans, all told */
	uint64_t deferred;	/* events that waited, since the last line */
	uint64_t said_ns;	/* when the last such line was logged */
};

/*
 * Workers this daemon stopped, and why: their end is then no error, and
 * the line that says so can name the reason (the device may be forgotten
 * by the time the worker is reaped).  Ordered: a later, stronger reason
 * wins.
 */
enum stop_why { STOP_NONE, STOP_FRONTEND, STOP_DESTROY, STOP_REMOVED,
		STOP_SHUTDOWN };

/* ---- xenstore helpers --------------------------------------------------- */

/* dir/node, or NULL; the caller frees it */
static inline char *rd(struct xgpub_xen *x, const char *dir, const char *node)
{
	return xgpub_xs_read_node(x->xs, dir, node);
}

/* dir/node as a number; def if missing or not a number */
static inline long rd_long(struct xgpub_xen *x, const char *dir,
			   const char *node, long def)
{
	char *v = rd(x, dir, node);
	long n = xgpub_xs_long(v, def);

	free(v);
	return n;
}

static inline void wr(struct xgpub_xen *x, const char *dir, const char *node,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline void wr(struct xgpub_xen *x, const char *dir, const char *node,
		      const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = xgpub_xs_vprintf(x->xs, dir, node, fmt, ap);
	va_end(ap);
	if (!ok)
		xgpub_err("xenstore: cannot write %s/%s: %s", dir, node,
			  strerror(errno));
}

/* dir/node, or dir itself when node is NULL */
static inline void rm(struct xgpub_xen *x, const char *dir, const char *node)
{
	char path[256];

	snprintf(path, sizeof(path), "%s%s%s", dir, node ? "/" : "",
		 node ? node : "");
	xgpub_xs->rm(x->xs, XBT_NULL, path);
}

/* the domain's name ("" if unknown) */
static inline void dom_name(struct xgpub_xen *x, uint32_t domid, char *buf,
			    size_t len)
{
	char path[64], *v;
	unsigned int n;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	v = xgpub_xs->read(x->xs, XBT_NULL, path, &n);
	if (v) {
		snprintf(buf, len, "%s", v);
		free(v);
	}
}

/* ---- a device's channels (xgpub_xen_chans.c) --------------------------- */

/* frontend channels: new ones get a worker (or are refused: not
 * connected, too many), gone ones are forgotten */
void xgpub_xen_scan_channels(struct xgpub_xen *x, struct xdev *d,
			     bool connected);
/* the first look at a device: refuse what an earlier daemon served */
void xgpub_xen_orphans(struct xgpub_xen *x, struct xdev *d);
/* does any channel of the device still have a worker? */
bool xgpub_xen_live_workers(const struct xdev *d);
void xgpub_xen_kill_workers(struct xdev *d, int sig, enum stop_why why);
/* a worker was reaped: if this daemon stopped it, say why, as information */
void xgpub_xen_log_stopped(pid_t pid);
/* its worker is gone, its pages unmapped: the channel is Closed */
void xgpub_xen_ch_closed(struct xgpub_xen *x, const struct xdev *d,
			 const struct xch *c);

#endif /* XGPUB_XEN_STATE_H */
