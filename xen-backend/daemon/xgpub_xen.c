// SPDX-License-Identifier: MIT
/*
 * xgpub_xen.c: the Xen transport, daemon side.
 *
 * The toolstack (`xgpu attach`, or this daemon for a new domain that a
 * rule of xgpu.conf gives a device: autoattach() below) creates
 * backend/xgpu/<domid>/<devid> and the frontend's device/xgpu/<devid>;
 * the kernel's xen-backend bus runs the hotplug script, which starts
 * this daemon if needed and writes hotplug-status.  The daemon watches
 * its backend directory, each device's frontend directory,
 * @introduceDomain and @releaseDomain, and on every event looks at the
 * whole picture again (a level-triggered state machine: a lost or
 * coalesced watch event cannot leave a device stuck):
 *
 *   device: hotplug-status connected -> publish limits, InitWait;
 *           frontend Initialised + protocol-version 1 -> Connected;
 *           frontend Closing/Closed -> stop its workers, Closed;
 *           frontend Initialising again after Closed -> InitWait again.
 *   channel ch/<n>: frontend Initialised and no worker -> fork a worker
 *           (it maps, binds and says Connected, or writes the error);
 *           frontend node gone and no worker -> remove our ch/<n>.
 *   domain released -> kill its workers (their exit unmaps its grants,
 *           so Xen can finish destroying it) and drop its backend nodes.
 *   daemon stopped: SIGTERM -> workers stopped, each channel Closed once
 *           its worker is gone (pages unmapped), devices Closing (the
 *           frontends close and wait); SIGKILL -> each worker sees the
 *           daemon's pipe end and closes its channel itself.  The next
 *           daemon answers the frontends afresh and refuses channels that
 *           the old one served ("the backend restarted").
 *
 * Watches need the threaded libxenstore.so.4 (xgpub_xs.h); without it the
 * daemon looks every XGPUB_XEN_POLL_MS instead.
 *
 * The channels of a device (their workers, refusals, stopped workers and
 * the orphans of an earlier daemon) are xgpub_xen_chans.c; what both files
 * share is xgpub_xen_state.h.
 *
 * The daemon itself never maps a guest page: a guest's bad values can
 * only hurt the one worker that serves them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xen/io/xenbus.h>

#include "xgpub_config.h"
#include "xgpub_daemon.h"
#include "xgpub_xen.h"
#include "xgpub_xen_state.h"
#include "xgpu_xsdev.h"

static struct xgpub_xen *the_xen;

void xgpub_xen_domain_name(struct xgpub_xen *x, uint32_t domid, char *buf,
			   size_t len)
{
	buf[0] = 0;
	if (!x)
		x = the_xen;
	if (!x)
		return;
	dom_name(x, domid, buf, len);
}

/* ---- the state machine -------------------------------------------------- */

static struct xdev *dev_find(struct xgpub_xen *x, uint32_t domid,
			     uint32_t devid, bool create)
{
	struct xdev *free_d = NULL;

	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (d->used && d->domid == domid && d->devid == devid)
			return d;
		if (!d->used && !free_d)
			free_d = d;
	}
	if (!create || !free_d)
		return NULL;
	memset(free_d, 0, sizeof(*free_d));
	free_d->used = true;
	free_d->domid = domid;
	free_d->devid = devid;
	snprintf(free_d->be, sizeof(free_d->be), BE_ROOT "/%u/%u", domid,
		 devid);
	xgpub_bucket_init(&free_d->looks, XGPUB_XEN_LOOKS_PER_S,
			  XGPUB_XEN_LOOKS_BURST);
	return free_d;
}

static void dev_forget(struct xgpub_xen *x, struct xdev *d,
		       enum stop_why why)
{
	if (d->watching)
		xgpub_xs->unwatch(x->xs, d->fe, "fe");
	xgpub_xen_kill_workers(d, SIGKILL, why);
	d->used = false;
}

/*
 * The device's own caps: its backend's caps/KEY nodes (`xgpu attach DOM
 * quota-mb=N`, or an administrator's xenstore-write; Dom0's nodes, which
 * the domain cannot write), checked as xgpu.conf's words; one that does
 * not parse is left out, said in the log.
 */
static void read_caps(struct xgpub_xen *x, struct xdev *d)
{
	char dir[160], word[96], why[256];
	const char *key;
	unsigned int bit;

	memset(&d->caps, 0, sizeof(d->caps));
	snprintf(dir, sizeof(dir), "%s/%s", d->be, XGPU_XSDEV_CAPS);
	/* the keys that are caps, as the file names them */
	for (unsigned int i = 0; (key = xgpu_rule_key(i, &bit)); i++) {
		char *v;

		if (!(bit & XGPU_RULE_CAPS))
			continue;
		v = xgpub_xs_read_text(x->xs, dir, key);
		if (!v)
			continue;
		snprintf(word, sizeof(word), "%s=%.64s", key, v);
		free(v);
		if (xgpu_rules_setting(&d->caps, word, why, sizeof(why)))
			xgpub_err("dom%u dev%u: %s/%s left out: %s", d->domid,
				  d->devid, XGPU_XSDEV_CAPS, key,
				  why + strspn(why, "0: "));
	}
	if (d->caps.has)
		xgpub_info("dom%u dev%u: the device's caps from xenstore: "
			   "quota-mb %u, pinned-mb %u, images-mb %u, "
			   "channels %u, xs-looks %u, grant-mb %u (0: not "
			   "given)", d->domid, d->devid, d->caps.quota_mb,
			   d->caps.pinned_mb, d->caps.images_mb,
			   d->caps.channels, d->caps.xs_looks,
			   d->caps.grant_mb);
}

/* what its domain's rule, its device's caps (as last read) and the caps
 * set at run time give device d */
static void dev_settings(struct xgpub_xen *x, struct xdev *d,
			 struct xgpu_dom_settings *s)
{
	char name[64];

	dom_name(x, d->domid, name, sizeof(name));
	xgpub_config_device(name, &d->caps, s);
}

/* its looks after its xenstore writes: s's rate or the default, from a
 * full bucket */
static void set_look_rate(struct xdev *d, const struct xgpu_dom_settings *s)
{
	xgpub_bucket_init(&d->looks, s->xs_looks ? s->xs_looks :
			  XGPUB_XEN_LOOKS_PER_S, XGPUB_XEN_LOOKS_BURST);
	d->rate_set = true;
}

static void publish_limits(struct xgpub_xen *x, struct xdev *d)
{
	struct xgpu_dom_settings s;

	/* the domain's rule of xgpu.conf, its device's caps or its caps
	 * set at run time (with or without a rule) may give it fewer or
	 * more channels than the daemon's --max-channels */
	read_caps(x, d);
	dev_settings(x, d, &s);
	d->max_channels = s.channels ? s.channels : x->lim.max_channels;
	set_look_rate(d, &s);
	/* channel numbers start afresh with every handshake */
	rm(x, d->be, "ch");
	wr(x, d->be, "max-ring-page-order", "%u", x->lim.max_ring_order);
	wr(x, d->be, "max-data-pages", "%u", x->lim.max_data_pages);
	wr(x, d->be, "max-channels", "%u", d->max_channels);
	wr(x, d->be, "features", "%s", "");
	wr(x, d->be, "state", "%d", XenbusStateInitWait);
	xgpub_info("dom%u dev%u: limits published, waiting for the frontend",
		   d->domid, d->devid);
}

static void step_device(struct xgpub_xen *x, struct xdev *d)
{
	long be_st = rd_long(x, d->be, "state", XenbusStateUnknown);
	long fe_st;
	char *hp, *fe;

	if (!d->rate_set) {
		struct xgpu_dom_settings s;

		dev_settings(x, d, &s);
		set_look_rate(d, &s);
	}
	if (!d->fe[0]) {
		fe = rd(x, d->be, "frontend");
		if (!fe)
			return;	/* toolstack still writing */
		snprintf(d->fe, sizeof(d->fe), "%s", fe);
		free(fe);
		/* the frontend path must be the domain's own device dir */
		{
			char want[128];

			snprintf(want, sizeof(want), "/local/domain/%u/device/"
				 XGPUIF_XEN_DEVTYPE "/%u", d->domid, d->devid);
			if (strcmp(want, d->fe)) {
				xgpub_err("dom%u dev%u: frontend path %s is "
					  "not %s; ignoring the device",
					  d->domid, d->devid, d->fe, want);
				wr(x, d->be, "error", "bad frontend path");
				d->fe[0] = 0;
				return;
			}
		}
	}
	if (!d->watching && !x->polling) {
		if (xgpub_xs->watch(x->xs, d->fe, "fe"))
			d->watching = true;
	}
	fe_st = rd_long(x, d->fe, "state", XenbusStateUnknown);
	if (!d->seen) {
		d->seen = true;
		if (be_st >= XenbusStateInitWait)
			xgpub_xen_orphans(x, d);
	}

	switch (be_st) {
	case XenbusStateUnknown:
	case XenbusStateInitialising:
		hp = rd(x, d->be, "hotplug-status");
		if (!hp || strcmp(hp, "connected")) {
			if (!d->waiting_logged)
				xgpub_info("dom%u dev%u: waiting for the "
					   "hotplug script (hotplug-status)",
					   d->domid, d->devid);
			d->waiting_logged = true;
			free(hp);
			return;
		}
		free(hp);
		publish_limits(x, d);
		be_st = XenbusStateInitWait;
		/* fall through: the frontend may be ahead of us */
		/* FALLTHROUGH */
	case XenbusStateInitWait:
		if (fe_st == XenbusStateInitialised ||
		    fe_st == XenbusStateConnected) {
			long v = rd_long(x, d->fe, "protocol-version", -1);

			if (v != XGPUIF_VERSION) {
				xgpub_err("dom%u dev%u: protocol-version %ld, "
					  "backend speaks %u", d->domid,
					  d->devid, v, XGPUIF_VERSION);
				wr(x, d->be, "error", "protocol-version %ld "
				   "unsupported (backend speaks %u)", v,
				   XGPUIF_VERSION);
				wr(x, d->be, "state", "%d",
				   XenbusStateClosing);
				return;
			}
			rm(x, d->be, "error");
			wr(x, d->be, "state", "%d", XenbusStateConnected);
			xgpub_info("dom%u dev%u: connected", d->domid,
				   d->devid);
			be_st = XenbusStateConnected;
		}
		break;
	case XenbusStateConnected:
		if (fe_st == XenbusStateClosing || fe_st == XenbusStateClosed ||
		    fe_st == XenbusStateUnknown) {
			/* xl destroy removes the frontend's nodes first */
			bool gone = fe_st == XenbusStateUnknown &&
				    !xgpub_xen_dom_alive(x->xs, d->domid);

			xgpub_info("dom%u dev%u: %s", d->domid, d->devid,
				   gone ? "domain going away" :
					  "frontend closing");
			xgpub_xen_kill_workers(d, SIGTERM,
				     gone ? STOP_DESTROY : STOP_FRONTEND);
			wr(x, d->be, "state", "%d", XenbusStateClosed);
			be_st = XenbusStateClosed;
		}
		break;
	case XenbusStateClosing:
	case XenbusStateClosed:
		/* a frontend starting over (module reloaded), or this daemon
		 * restarted after closing the device */
		if ((fe_st == XenbusStateInitialising ||
		     fe_st == XenbusStateClosed) &&
		    !xgpub_xen_live_workers(d)) {
			rm(x, d->be, "ch");
			memset(d->ch, 0, sizeof(d->ch));
			rm(x, d->be, "error");
			publish_limits(x, d);
		}
		break;
	default:
		break;
	}
	xgpub_xen_scan_channels(x, d, be_st == XenbusStateConnected);
}

/* ---- the rules of xgpu.conf: a device for a new domain ----------------- */

/*
 * Domains that appeared since the last look, and whose rule says attach,
 * get device 0 as `xgpu attach` gives it (common/xgpu_xsdev.c); the
 * hotplug script and the state machine then run as for any device.  Each
 * domain is looked at once (until it goes, or the rules are read again):
 * a device the administrator detached stays detached.  A domain without
 * its name yet is looked at again with the next event.  xl migrate's
 * receiving end is named NAME--incoming until it starts as NAME: it is
 * judged as NAME (xgpub_config_domain), so that the guest finds its
 * device when it resumes.
 */
static void autoattach(struct xgpub_xen *x)
{
	static uint8_t present[AUTO_DOMIDS];
	char **doms;
	unsigned int n = 0;

	doms = xgpub_xs->directory(x->xs, XBT_NULL, "/local/domain", &n);
	if (!doms)
		return;
	memset(present, 0, sizeof(present));
	for (unsigned int i = 0; i < n; i++) {
		int64_t domid = xgpub_xs_dirent(doms[i], AUTO_DOMIDS - 1);
		struct xgpu_dom_settings s;
		const struct xgpu_rule *r;
		struct xgpu_xsdev dev;
		char name[64];
		int rc;

		if (domid <= 0)
			continue;
		present[domid] = 1;
		if (x->autoattach[domid] != AUTO_UNSEEN)
			continue;
		dom_name(x, (uint32_t)domid, name, sizeof(name));
		if (!name[0])
			continue;	/* the toolstack is still writing it */
		r = xgpub_config_domain(name, &s);
		if (!r || !s.attach) {
			x->autoattach[domid] = AUTO_NONE;
			continue;
		}
		xgpu_xsdev_paths(&dev, (unsigned int)domid, 0);
		rc = xgpu_xsdev_create(xgpub_xs, x->xs, &dev);
		if (rc == -EEXIST) {
			x->autoattach[domid] = AUTO_DONE;	/* has one */
			continue;
		}
		if (rc) {
			xgpub_err("dom%u (%s): cannot attach an xgpu device "
				  "(%s line %u): %s", (unsigned int)domid,
				  name, xgpub_config_path(), r->line,
				  strerror(-rc));
			x->autoattach[domid] = AUTO_FAILED;
			continue;
		}
		x->autoattach[domid] = AUTO_DONE;
		xgpub_info("dom%u (%s): xgpu device 0 attached (%s line %u: "
			   "%s)", (unsigned int)domid, name,
			   xgpub_config_path(), r->line, r->pattern);
	}
	free(doms);
	for (unsigned int d = 1; d < AUTO_DOMIDS; d++)
		if (!present[d])
			x->autoattach[d] = AUTO_UNSEEN;
}

/* xgpub_config.h's listener: the rules in force changed */
static void rules_changed(void)
{
	struct xgpub_xen *x = the_xen;

	if (!x)
		return;
	/* domains that had no rule, or whose attach failed, are looked at
	 * again under the new rules */
	for (unsigned int d = 0; d < AUTO_DOMIDS; d++)
		if (x->autoattach[d] != AUTO_DONE)
			x->autoattach[d] = AUTO_UNSEEN;
	/* and each device's look rate is its new rule's */
	for (int i = 0; i < MAX_DEVS; i++)
		x->dev[i].rate_set = false;
	xgpub_xen_poll(x);
}

static void scan(struct xgpub_xen *x)
{
	char **doms, path[128];
	unsigned int ndom = 0;

	x->nlooks++;
	/* every device is looked at: none waits for a look of its own */
	for (int i = 0; i < MAX_DEVS; i++) {
		x->dev[i].look_due = false;
		x->dev[i].deferred = 0;
	}
	/* released domains first: their workers must go */
	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (d->used && !xgpub_xen_dom_alive(x->xs, d->domid)) {
			xgpub_info("dom%u: domain gone; stopping its workers",
				   d->domid);
			snprintf(path, sizeof(path), BE_ROOT "/%u", d->domid);
			dev_forget(x, d, STOP_DESTROY);
			xgpub_xs->rm(x->xs, XBT_NULL, path);
		}
	}
	autoattach(x);
	doms = xgpub_xs->directory(x->xs, XBT_NULL, BE_ROOT, &ndom);
	for (unsigned int i = 0; doms && i < ndom; i++) {
		char **devs;
		unsigned int ndev = 0;
		int64_t domid = xgpub_xs_dirent(doms[i], 0x7fef);

		if (domid <= 0)
			continue;
		snprintf(path, sizeof(path), BE_ROOT "/%u",
			 (unsigned int)domid);
		if (!xgpub_xen_dom_alive(x->xs, (unsigned int)domid)) {
			/* left by a domain that went before we served it
			 * (its id may come back with another domain) */
			xgpub_info("dom%u: domain gone; removing its backend "
				   "nodes", (unsigned int)domid);
			xgpub_xs->rm(x->xs, XBT_NULL, path);
			continue;
		}
		devs = xgpub_xs->directory(x->xs, XBT_NULL, path, &ndev);
		for (unsigned int j = 0; devs && j < ndev; j++) {
			int64_t devid = xgpub_xs_dirent(devs[j], 255);
			struct xdev *d;

			if (devid < 0)
				continue;
			d = dev_find(x, (uint32_t)domid, (uint32_t)devid,
				     true);
			if (!d) {
				xgpub_err("too many xgpu devices");
				continue;
			}
			step_device(x, d);
		}
		free(devs);
	}
	free(doms);
	/* devices whose backend directory went away (xgpu detach) */
	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];
		char *st;

		if (!d->used)
			continue;
		st = rd(x, d->be, "frontend");
		if (st) {
			free(st);
			continue;
		}
		xgpub_info("dom%u dev%u: device removed", d->domid, d->devid);
		dev_forget(x, d, STOP_REMOVED);
	}
}

void xgpub_xen_each_device(void (*fn)(uint32_t domid, const char *name,
				      bool connected, void *arg),
			   void *arg)
{
	struct xgpub_xen *x = the_xen;

	for (int i = 0; x && i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];
		char name[64];

		if (!d->used)
			continue;
		xgpub_xen_domain_name(x, d->domid, name, sizeof(name));
		fn(d->domid, name,
		   rd_long(x, d->be, "state", -1) == XenbusStateConnected,
		   arg);
	}
}

int xgpub_xen_check(void)
{
	char why[256];
	void *xs;

	xgpub_xs_load(why, sizeof(why));
	xs = xgpub_xs->open(0);
	if (!xs) {
		fprintf(stderr, "xen-gpubackd: --xen: cannot connect to "
			"xenstore: %s (is this Dom0 with xenstored running?)\n",
			strerror(errno));
		return -1;
	}
	xgpub_xs->close(xs);
	return 0;
}

struct xgpub_xen *xgpub_xen_start(const struct xgpub_xen_limits *lim,
				  const struct xgpub_options *opt)
{
	struct xgpub_xen *x = calloc(1, sizeof(*x));
	char why[256];
	int alive[2];

	if (!x)
		return NULL;
	x->lim = *lim;
	x->fd = -1;
	xgpub_bucket_init(&x->looks, XGPUB_XEN_LOOKS_PER_S,
			  XGPUB_XEN_LOOKS_BURST);
	x->alive_w = -1;
	x->opt = opt;
	xgpub_xs_load(why, sizeof(why));
	x->xs = xgpub_xs->open(0);
	if (!x->xs) {
		xgpub_err("--xen: cannot connect to xenstore: %s (is this "
			  "Dom0 with xenstored running?)", strerror(errno));
		free(x);
		return NULL;
	}
	/*
	 * Watches need libxenstore's reader thread, which Debian's static
	 * libxenstore.a lacks: there the first watch event is taken for the
	 * reply to the next request, which fails (EINVAL), and the handle is
	 * out of step from then on.  So watches only with libxenstore.so.4;
	 * without it (or if its watches fail), the state machine being
	 * level-triggered, looking every XGPUB_XEN_POLL_MS on a handle that
	 * never watches serves as well, at the cost of waking up.
	 */
	if (xgpub_xs->watches &&
	    (!xgpub_xs->watch(x->xs, BE_ROOT, "be") ||
	     !xgpub_xs->watch(x->xs, "@releaseDomain", "rel") ||
	     !xgpub_xs->watch(x->xs, "@introduceDomain", "intro") ||
	     (x->fd = xgpub_xs->fileno(x->xs)) < 0)) {
		snprintf(why, sizeof(why), "%s: %s", xgpub_xs->name,
			 strerror(errno));
		xgpub_xs->close(x->xs);
		x->xs = xgpub_xs->open(0);
		if (!x->xs) {
			xgpub_err("--xen: cannot reconnect to xenstore: %s",
				  strerror(errno));
			free(x);
			return NULL;
		}
		x->fd = -1;
	}
	if (x->fd < 0) {
		xgpub_info("--xen: xenstore watches unavailable (%s); looking "
			   "every %d ms instead", why, XGPUB_XEN_POLL_MS);
		x->polling = true;
	} else {
		xgpub_info("--xen: xenstore watches via %s", xgpub_xs->name);
	}
	/*
	 * Workers learn that this daemon died (SIGKILL included) from the
	 * end of this pipe: they keep the read end, only the daemon holds the
	 * write end.
	 */
	if (pipe2(alive, O_CLOEXEC) == 0) {
		xgpub_xen_alive_fd = alive[0];
		x->alive_w = alive[1];
	} else {
		xgpub_err("--xen: no pipe for the workers: %s",
			  strerror(errno));
	}
	the_xen = x;
	xgpub_config_listen(rules_changed);
	xgpub_info("serving Xen guests under %s", BE_ROOT);
	scan(x);
	return x;
}

int xgpub_xen_fd(struct xgpub_xen *x)
{
	return x->polling ? -1 : x->fd;
}

void xgpub_xen_poll(struct xgpub_xen *x)
{
	char **vec;

	/* level-triggered: the events only say "look again" */
	while (!x->polling && (vec = xgpub_xs->check_watch(x->xs)) != NULL)
		free(vec);
	x->look_due = false;
	scan(x);
}

/*
 * The guest whose frontend area a watched path lies in, or -1: a path
 * under /local/domain/<domid>/ of another domain than Dom0 (the guest
 * writes there), not Dom0's backend directory.
 */
static long path_domid(const char *p)
{
	static const char fe[] = "/local/domain/";
	char *end;
	long d;

	if (strncmp(p, fe, sizeof(fe) - 1))
		return -1;
	p += sizeof(fe) - 1;
	if (*p < '1' || *p > '9')
		return -1;
	d = strtol(p, &end, 10);
	return *end == '/' || !*end ? d : -1;
}

/* said once a minute at most: events wait for bucket b */
static void say_deferred(uint64_t now, const struct xgpub_bucket *b,
			 uint64_t *said, uint64_t *deferred, long dom,
			 const char *what)
{
	unsigned int per_s = (unsigned int)(1000000000ull / b->cost_ns);

	if (*said && now - *said < 60000000000ull)
		return;
	xgpub_info("xenstore events come faster than %u a second (%s "
		   "dom%ld): the backend looks at %s at most %u times a "
		   "second (%llu event(s) waited for a look since the last "
		   "such line)", per_s,
		   dom >= 0 ? "from" : "the last from", dom, what,
		   per_s, (unsigned long long)*deferred);
	*said = now;
	*deferred = 0;
}

/* its domain's devices are due for a look; false: it has none */
static bool mark_domain(struct xgpub_xen *x, long dom)
{
	bool any = false;

	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (d->used && d->domid == (uint32_t)dom) {
			d->look_due = true;
			d->deferred++;
			any = true;
		}
	}
	return any;
}

void xgpub_xen_events(struct xgpub_xen *x)
{
	uint64_t now = xgpub_now_ns(), n = 0;
	long last = -1;
	char **vec;

	/* a guest's writes make its devices due, Dom0's a look at every
	 * device; each waits for its own bucket (xgpub_xen.h) */
	while (!x->polling && (vec = xgpub_xs->check_watch(x->xs)) != NULL) {
		long dom = path_domid(vec[XS_WATCH_PATH]);

		if (dom < 0 || !mark_domain(x, dom)) {
			x->look_due = true;
			n++;
		}
		if (dom >= 0)
			last = dom;
		free(vec);
	}
	if (x->look_due) {
		if (xgpub_bucket_take(&x->looks, now)) {
			x->look_due = false;
			scan(x);	/* every device: none is due after */
			return;
		}
		x->deferred += n;
		if (n)
			say_deferred(now, &x->looks, &x->said_ns,
				     &x->deferred, last, "every device");
	}
	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (!d->used || !d->look_due)
			continue;
		if (xgpub_bucket_take(&d->looks, now)) {
			d->look_due = false;
			d->deferred = 0;
			x->nlooks++;
			step_device(x, d);
		} else {
			char what[48];

			snprintf(what, sizeof(what), "its device %u", d->devid);
			say_deferred(now, &d->looks, &d->said_ns,
				     &d->deferred, d->domid, what);
		}
	}
}

uint64_t xgpub_xen_looks(const struct xgpub_xen *x)
{
	return x->nlooks;
}

uint64_t xgpub_xen_due_ns(struct xgpub_xen *x)
{
	uint64_t now = xgpub_now_ns(), due = UINT64_MAX, w;

	if (x->look_due)
		due = xgpub_bucket_wait_ns(&x->looks, now);
	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (!d->used || !d->look_due)
			continue;
		w = xgpub_bucket_wait_ns(&d->looks, now);
		if (w < due)
			due = w;
	}
	return due;
}

void xgpub_xen_child_exited(struct xgpub_xen *x, pid_t pid)
{
	xgpub_xen_log_stopped(pid);
	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (!d->used)
			continue;
		for (int j = 0; j < MAX_CH; j++) {
			struct xch *c = &d->ch[j];

			if (!c->used || c->pid != pid)
				continue;
			c->pid = 0;
			c->done = true;
			/* a worker that died without a word still closes */
			xgpub_xen_ch_closed(x, d, c);
			return;
		}
	}
}

void xgpub_xen_stop(struct xgpub_xen *x)
{
	if (!x)
		return;
	for (int i = 0; i < MAX_DEVS; i++)
		if (x->dev[i].used)
			xgpub_xen_kill_workers(&x->dev[i], SIGTERM,
					       STOP_SHUTDOWN);
	/*
	 * A channel is said Closed once its worker is gone, i.e. its pages
	 * unmapped: then the frontend can give them back at once, rather
	 * than deferred, a few a second.
	 */
	for (int tries = 0; tries < 300; tries++) {
		bool left = false;

		for (int i = 0; i < MAX_DEVS; i++) {
			struct xdev *d = &x->dev[i];

			for (int j = 0; d->used && j < MAX_CH; j++) {
				struct xch *c = &d->ch[j];
				pid_t r;

				if (!c->used || !c->pid)
					continue;
				/* 2 s: no more waiting */
				if (tries == 200)
					kill(c->pid, SIGKILL);
				r = waitpid(c->pid, NULL, WNOHANG);
				if (r == 0) {
					left = true;
					continue;
				}
				c->pid = 0;
				xgpub_xen_ch_closed(x, d, c);
			}
		}
		if (!left)
			break;
		usleep(10000);
	}
	for (int i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &x->dev[i];

		if (!d->used)
			continue;
		/* the frontends drop their channels and wait for the next
		 * daemon's InitWait */
		wr(x, d->be, "state", "%d", XenbusStateClosing);
	}
	if (x->alive_w >= 0)
		close(x->alive_w);
	xgpub_xs->close(x->xs);
	the_xen = NULL;
	free(x);
}