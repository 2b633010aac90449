// SPDX-License-Identifier: MIT
/*
 * xgpub_xen_chan.c: the Xen transport, worker side.  A worker serves one
 * channel ch/<n> of one xgpu device of one domain: it reads the
 * channel's nodes from the frontend's xenstore directory, checks every
 * value against the limits the backend published, maps the ring and the
 * data area with libxengnttab, binds the event channel with libxenevtchn
 * and says Connected in its own ch/<n>.  A value out of range, a grant the
 * domain does not own or an event channel it did not allocate ends in
 * ch/<n>/error and ch/<n>/state = Closed, and the worker exits.
 *
 * The guest is gone when its ch/<n>/state leaves Connected, when the node
 * disappears (xl destroy removes the domain's tree) or when the domain is
 * released; a watchdog thread watches for that on its own xenstore
 * connection and wakes the dispatch thread through an eventfd.  It also
 * watches the daemon's pipe (xgpub_xen_alive_fd): a worker whose daemon
 * died closes its channel itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xenstore.h>
#include <xengnttab.h>
#include <xenevtchn.h>
#include <xen/io/xenbus.h>

#include "xgpub.h"
#include "xgpub_transport.h"
#include "xgpub_xs.h"
#include "xgpub_xs_parse.h"

/* set by the daemon before it forks the worker (daemon/xgpub_xen.c) */
int xgpub_xen_alive_fd = -1;

struct xchan {
	struct xgpub_transport t;
	uint32_t domid, devid, ch;
	char fe[128];			/* frontend ch/<n> path */
	char be[128];			/* backend ch/<n> path */
	struct xs_handle *xs;		/* dispatch thread's */
	/* the watchdog's, opened with the channel (while the worker may
	 * still connect to xenstore; see xgpub_sandbox.c): one to watch,
	 * one that never watches should watches fail */
	struct xs_handle *wxs, *wxs_plain;
	xengnttab_handle *gt;
	xenevtchn_handle *ev;
	evtchn_port_t port;		/* local */
	int gone_fd;			/* eventfd: the watchdog saw the end */
	void *ring;
	uint32_t ring_pages;
	void *data;
	uint32_t data_pages;
	uint64_t region_pages;		/* granted pages of mapped regions */
	uint64_t grant_budget;		/* the host's, in pages (0: none) */
	uint64_t dom_grant_cap;		/* its domain's, in pages (0: none) */
	bool failed;			/* error already written */
};

static void be_write(struct xchan *x, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void be_write(struct xchan *x, const char *node, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = xgpub_xs_vprintf(x->xs, x->be, node, fmt, ap);
	va_end(ap);
	if (!ok)
		xgpub_dbg("%s: cannot write %s/%s: %s", x->t.who, x->be, node,
			  strerror(errno));
}

/* read fe/node as an unsigned number in [0, max]; -1 if absent, -2 bad */
static int fe_uint(struct xchan *x, const char *node, uint64_t max,
		   uint64_t *out)
{
	char *v = xgpub_xs_read_node(x->xs, x->fe, node);
	int rc = xgpub_xs_uint(v, max, out);

	free(v);
	return rc;
}

/* a node of the frontend's channel directory (xgpub_xen_chan_parse) */
static char *fe_get(void *arg, const char *node)
{
	struct xchan *x = arg;

	return xgpub_xs_read_node(x->xs, x->fe, node);
}

/*
 * The reason now; Closed only once the pages are unmapped (xchan_close):
 * the frontend gives its pages back when it sees Closed, and a page it
 * gives back while we still map it only returns to its kernel slowly
 * (deferred, a few pages a second).
 */
static void xchan_fail(struct xgpub_transport *t, const char *why)
{
	struct xchan *x = (struct xchan *)t;

	if (x->failed)
		return;
	x->failed = true;
	xgpub_err("%s: %s", t->who, why);
	be_write(x, "error", "%s", why);
}

static void xchan_notify(struct xgpub_transport *t)
{
	struct xchan *x = (struct xchan *)t;

	xenevtchn_notify(x->ev, x->port);
}

static int xchan_wait(struct xgpub_transport *t, int timeout_ms)
{
	struct xchan *x = (struct xchan *)t;
	struct pollfd pfd[2] = {
		{ .fd = xenevtchn_fd(x->ev), .events = POLLIN },
		{ .fd = x->gone_fd, .events = POLLIN },
	};
	int n = poll(pfd, 2, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[1].revents)
		return -EPIPE;
	if (pfd[0].revents & POLLIN) {
		xenevtchn_port_or_error_t p = xenevtchn_pending(x->ev);

		if (p >= 0)
			xenevtchn_unmask(x->ev, (evtchn_port_t)p);
	}
	return 0;
}

/* is the channel over?  (own xenstore handle: runs in the watchdog) */
static bool chan_over(struct xs_handle *xs, struct xchan *x)
{
	char *v;
	long st;

	if (!xgpub_xen_dom_alive(xs, x->domid))
		return true;
	v = xgpub_xs_read_node(xs, x->fe, "state");
	if (!v)
		return true;
	st = strtol(v, NULL, 10);
	free(v);
	return st != XenbusStateInitialised && st != XenbusStateConnected;
}

/* set by xchan_close once the channel is unmapped and said Closed */
static volatile int chan_closed;

/*
 * The daemon died: nobody will close this channel for us.  Say why, wake
 * the dispatch thread, which unmaps and says Closed (xchan_close), and
 * wait for that a little; a dispatch thread blocked in a long call gets
 * Closed written for it (the process ends soon after, see the worker's
 * watchdog: the frontend's pages still mapped then come back deferred).
 * x may be freed once the dispatch thread runs: only copies are used.
 */
static void orphaned(struct xs_handle *xs, struct xchan *x)
{
	static const char why[] = "the backend daemon stopped";
	char epath[192], spath[192], st[8];
	uint64_t one = 1;

	xgpub_info("%s: %s; closing the channel", x->t.who, why);
	snprintf(epath, sizeof(epath), "%s/error", x->be);
	snprintf(spath, sizeof(spath), "%s/state", x->be);
	xgpub_xs->write(xs, XBT_NULL, epath, why, sizeof(why) - 1);
	(void)!write(x->gone_fd, &one, sizeof(one));
	for (int i = 0; i < 80 && !chan_closed; i++)
		usleep(10000);
	if (chan_closed)
		return;
	snprintf(st, sizeof(st), "%d", XenbusStateClosed);
	xgpub_xs->write(xs, XBT_NULL, spath, st, (unsigned int)strlen(st));
}

/* the watchdog's handles, taken once (by the watchdog, or to close) */
static struct xs_handle *take_wxs(struct xchan *x, bool plain)
{
	return __atomic_exchange_n(plain ? &x->wxs_plain : &x->wxs, NULL,
				   __ATOMIC_ACQ_REL);
}

static void close_wxs(struct xchan *x)
{
	struct xs_handle *h;

	if ((h = take_wxs(x, false)) != NULL)
		xgpub_xs->close(h);
	if ((h = take_wxs(x, true)) != NULL)
		xgpub_xs->close(h);
}

static void xchan_wait_gone(struct xgpub_transport *t)
{
	struct xchan *x = (struct xchan *)t;
	struct xs_handle *xs = take_wxs(x, false);
	struct xs_handle *plain = take_wxs(x, true);
	char path[192], **vec;
	uint64_t one = 1;
	bool orphan = false;
	int wfd = -1;

	if (!xs) {
		xgpub_err("%s: watchdog: no xenstore connection", t->who);
		if (plain)
			xgpub_xs->close(plain);
		return;
	}
	snprintf(path, sizeof(path), "%s/state", x->fe);
	/* watches only where they work (see xgpub_xen.c); else a handle
	 * that never watches, looked at every XGPUB_XEN_POLL_MS */
	if (xgpub_xs->watches &&
	    (!xgpub_xs->watch(xs, path, "gone") ||
	     !xgpub_xs->watch(xs, "@releaseDomain", "gone") ||
	     (wfd = xgpub_xs->fileno(xs)) < 0)) {
		xgpub_xs->close(xs);
		xs = plain;
		plain = NULL;
		wfd = -1;
		if (!xs) {
			xgpub_err("%s: watchdog: no xenstore connection",
				  t->who);
			return;
		}
	}
	if (plain)
		xgpub_xs->close(plain);
	while (!chan_over(xs, x)) {
		struct pollfd pfd[2] = {
			{ .fd = xgpub_xen_alive_fd, .events = POLLIN },
			{ .fd = wfd, .events = POLLIN },
		};

		if (poll(pfd, 2, wfd < 0 ? XGPUB_XEN_POLL_MS : -1) < 0 &&
		    errno != EINTR)
			break;
		if (pfd[0].revents) {
			orphan = true;
			orphaned(xs, x);	/* x may be gone now */
			break;
		}
		if (pfd[1].revents)
			while ((vec = xgpub_xs->check_watch(xs)) != NULL)
				free(vec);
	}
	if (!orphan) {
		xgpub_info("%s: the guest closed the channel or went away",
			   t->who);
		(void)!write(x->gone_fd, &one, sizeof(one));
	}
	xgpub_xs->close(xs);
}

/* the granted pages this channel has mapped */
static uint64_t grants_mapped(const struct xchan *x)
{
	return (x->ring ? x->ring_pages : 0) + (x->data ? x->data_pages : 0) +
	       x->region_pages;
}

/*
 * May this channel map more granted pages under its domain's cap and the
 * host's grant budget?  What every other Xen worker has mapped is in its
 * status slot, with the guest it serves.
 */
static bool grants_fit(const struct xchan *x, uint64_t more, char *why,
		       size_t whylen)
{
	const size_t off = offsetof(struct xgpub_wstat, grants);
	uint64_t mine = grants_mapped(x);

	if (x->dom_grant_cap &&
	    !xgpub_xen_dom_grants_fit(mine + xgpub_others_sum(off,
						XGPUB_ACCT_XEN(x->domid)),
				      more, x->dom_grant_cap, why, whylen))
		return false;
	return xgpub_xen_grants_fit(mine + xgpub_others_sum(off, 0), more,
				    x->grant_budget, why, whylen);
}

/* tell the daemon and the other workers what this channel has mapped */
static void grants_publish(const struct xchan *x)
{
	if (xgpub_self_stat)
		__atomic_store_n(&xgpub_self_stat->grants, grants_mapped(x),
				 __ATOMIC_RELEASE);
}

static int xchan_hostmem_map(struct xgpub_transport *t, uint32_t region,
			     uint64_t size, const struct xgpuif_memref *dir,
			     uint64_t guest_va, void **va)
{
	struct xchan *x = (struct xchan *)t;
	uint64_t npages;
	uint32_t *refs;
	char why[128];
	void *p;
	int rc;

	(void)guest_va;		/* grant mappings land where gntdev puts them */
	rc = xgpub_xen_region_refs(size, dir, t->data, t->data_bytes,
				   x->region_pages, &refs, &npages, why,
				   sizeof(why));
	if (!rc && !grants_fit(x, npages, why, sizeof(why))) {
		free(refs);
		rc = -ENOSPC;
	}
	if (rc) {
		xgpub_err("%s: region %u: %s", t->who, region,
			  rc == -ENOMEM ? "out of memory" : why);
		return rc;
	}
	p = xengnttab_map_domain_grant_refs(x->gt, (uint32_t)npages, x->domid,
					    refs, PROT_READ | PROT_WRITE);
	free(refs);
	if (!p) {
		xgpub_err("%s: region %u: cannot map %" PRIu64 " granted "
			  "pages: %s", t->who, region, npages,
			  strerror(errno));
		return -EPROTO;
	}
	x->region_pages += npages;
	grants_publish(x);
	*va = p;
	return 0;
}

static void xchan_hostmem_unmap(struct xgpub_transport *t, void *va,
				uint64_t size)
{
	struct xchan *x = (struct xchan *)t;

	xengnttab_unmap(x->gt, va, (uint32_t)(size / XGPUIF_PAGE_SIZE));
	x->region_pages -= size / XGPUIF_PAGE_SIZE;
	grants_publish(x);
}

static void xchan_release(struct xchan *x)
{
	if (x->data)
		xengnttab_unmap(x->gt, x->data, x->data_pages);
	if (x->ring)
		xengnttab_unmap(x->gt, x->ring, x->ring_pages);
	if (x->ev) {
		if (x->port)
			xenevtchn_unbind(x->ev, x->port);
		xenevtchn_close(x->ev);
	}
	if (x->gt)
		xengnttab_close(x->gt);
	if (x->gone_fd >= 0)
		close(x->gone_fd);
}

static void xchan_close(struct xgpub_transport *t)
{
	struct xchan *x = (struct xchan *)t;

	/* unmap first: the frontend frees its pages once we say Closed */
	xchan_release(x);
	x->data = x->ring = NULL;
	x->ev = NULL;
	x->gt = NULL;
	/* closing gntdev unmapped the regions too */
	x->region_pages = 0;
	grants_publish(x);
	x->gone_fd = -1;
	be_write(x, "state", "%d", XenbusStateClosed);
	chan_closed = 1;
	xgpub_xs->close(x->xs);
	close_wxs(x);
	free(x);
}

static const struct xgpub_transport_ops xchan_ops = {
	.name = "xen", XGPUB_TRANSPORT_FNS(xchan), .fail = xchan_fail,
};

/* map n pages the guest granted; NULL, and why, on failure */
static void *map_grants(struct xchan *x, uint32_t n, uint32_t *refs, int prot,
			const char *what, char *why, size_t whylen)
{
	void *p = xengnttab_map_domain_grant_refs(x->gt, n, x->domid, refs,
						  prot);

	if (!p)
		snprintf(why, whylen, "cannot map the %u %s: %s", n, what,
			 strerror(errno));
	return p;
}

static int map_channel(struct xchan *x, const struct xgpub_xen_limits *lim,
		       char *why, size_t whylen)
{
	struct xgpub_xen_chan_desc d;
	uint32_t *refs = NULL;
	void *dir;
	int rc = -1;

	if (xgpub_xen_chan_parse(fe_get, x, lim, &d, why, whylen))
		return -1;
	x->ring_pages = d.ring_pages;
	x->data_pages = d.data_pages;
	/* the directory's pages are mapped while it is read */
	if (!grants_fit(x, (uint64_t)d.ring_pages + d.ndir + d.data_pages, why,
			whylen))
		goto out;
	refs = calloc(x->data_pages, sizeof(*refs));
	if (!refs) {
		snprintf(why, whylen, "backend out of memory");
		goto out;
	}
	x->ring = map_grants(x, x->ring_pages, d.ring_refs,
			     PROT_READ | PROT_WRITE, "granted ring pages", why,
			     whylen);
	if (!x->ring)
		goto out;
	dir = map_grants(x, d.ndir, d.dir_refs, PROT_READ,
			 "data directory pages", why, whylen);
	if (!dir)
		goto out;
	/* copied once, then the guest's copy no longer matters */
	memcpy(refs, dir, (size_t)x->data_pages * sizeof(uint32_t));
	xengnttab_unmap(x->gt, dir, d.ndir);
	x->data = map_grants(x, x->data_pages, refs, PROT_READ | PROT_WRITE,
			     "granted data pages", why, whylen);
	if (!x->data)
		goto out;
	{
		xenevtchn_port_or_error_t p =
			xenevtchn_bind_interdomain(x->ev, x->domid,
						   (evtchn_port_t)d.evtchn);

		if (p < 0) {
			snprintf(why, whylen, "cannot bind event channel "
				 "%" PRIu32 ": %s", d.evtchn, strerror(errno));
			goto out;
		}
		x->port = (evtchn_port_t)p;
	}
	rc = 0;
out:
	grants_publish(x);
	free(refs);
	xgpub_xen_chan_desc_free(&d);
	return rc;
}

int xgpub_xen_chan_open(uint32_t domid, uint32_t devid, uint32_t ch,
			const struct xgpub_xen_limits *lim,
			struct xgpub_transport **out)
{
	struct xchan *x = calloc(1, sizeof(*x));
	char why[160], *name;
	uint64_t pid = 0;

	if (!x)
		return -ENOMEM;
	x->domid = domid;
	x->devid = devid;
	x->ch = ch;
	x->gone_fd = -1;
	x->grant_budget = lim->grant_pages;
	x->dom_grant_cap = lim->dom_grant_pages;
	snprintf(x->fe, sizeof(x->fe),
		 "/local/domain/%u/device/" XGPUIF_XEN_DEVTYPE "/%u/ch/%u",
		 domid, devid, ch);
	snprintf(x->be, sizeof(x->be),
		 "/local/domain/0/backend/" XGPUIF_XEN_DEVTYPE "/%u/%u/ch/%u",
		 domid, devid, ch);
	snprintf(x->t.who, sizeof(x->t.who), "dom%u ch%u", domid, ch);
	snprintf(x->t.ipc_domain, sizeof(x->t.ipc_domain), "dom:%u", domid);
	x->xs = xgpub_xs->open(0);
	if (!x->xs) {
		xgpub_err("%s: no xenstore connection: %s", x->t.who,
			  strerror(errno));
		free(x);
		return -ENOENT;
	}
	x->wxs = xgpub_xs->open(0);
	if (xgpub_xs->watches)
		x->wxs_plain = xgpub_xs->open(0);
	name = xgpub_xs_read_text(x->xs, x->fe, "name");
	fe_uint(x, "pid", UINT32_MAX, &pid);
	x->t.pid = (uint32_t)pid;
	if (name) {
		snprintf(x->t.who, sizeof(x->t.who), "dom%u ch%u (%.32s, "
			 "pid %" PRIu64 ")", domid, ch, name, pid);
		snprintf(x->t.proc, sizeof(x->t.proc), "%.31s", name);
		free(name);
	}

	x->gt = xengnttab_open(NULL, 0);
	x->ev = xenevtchn_open(NULL, 0);
	x->gone_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!x->gt || !x->ev || x->gone_fd < 0) {
		snprintf(why, sizeof(why), "backend cannot open gntdev/evtchn");
		goto fail;
	}
	xengnttab_set_max_grants(x->gt, XGPUIF_XEN_MAX_DATA_PAGES +
				 XGPUB_XEN_REGION_GRANTS + 1024u);
	if (map_channel(x, lim, why, sizeof(why)))
		goto fail;
	x->t.ops = &xchan_ops;
	x->t.sring = x->ring;
	x->t.ring_order = 0;
	while ((1u << x->t.ring_order) < x->ring_pages)
		x->t.ring_order++;
	x->t.data = x->data;
	x->t.data_bytes = (size_t)x->data_pages * XGPUIF_PAGE_SIZE;
	be_write(x, "state", "%d", XenbusStateConnected);
	*out = &x->t;
	return 0;
fail:
	x->t.ops = &xchan_ops;
	xchan_fail(&x->t, why);
	xchan_release(x);
	be_write(x, "state", "%d", XenbusStateClosed);
	xgpub_xs->close(x->xs);
	close_wxs(x);
	free(x);
	return -EPROTO;
}
