// SPDX-License-Identifier: MIT
/*
 * xgpub_xen_chans.c: the channels of a device, daemon side (the device's
 * state machine, in xgpub_xen.c, calls in here; nothing here calls back).
 *
 *   ch/<n>: frontend Initialised and no worker -> fork a worker (it maps,
 *           binds and says Connected, or writes the error); the device
 *           not Connected, or max-channels workers already -> refuse it
 *           (error, Closed); frontend node gone and no worker -> remove
 *           our ch/<n>.
 *   a worker stopped by the daemon (frontend closing, domain destroyed,
 *           device removed, daemon shutdown): noted with the reason, so
 *           that its end is logged as information, not as an error.
 *   a worker gone: its pages are unmapped, the channel is Closed.
 *   orphans: channels a previous daemon's workers served are refused
 *           ("the backend restarted"), so that their processes get EPIPE.
 *
 * The daemon itself never maps a guest page: the worker it forks here does
 * (transport/xgpub_xen_chan.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <xen/io/xenbus.h>

#include "xgpub_config.h"
#include "xgpub_daemon.h"
#include "xgpub_worker.h"
#include "xgpub_xen_state.h"

/* ---- workers ------------------------------------------------------------ */

struct chan_arg {
	uint32_t domid, devid, ch;
	struct xgpub_xen_limits lim;
	/* the daemon's, with the quota and GPU of the domain's rule of
	 * xgpu.conf (the child has its own copy of this) */
	struct xgpub_options opt;
};

static int chan_main(void *p)
{
	struct chan_arg *a = p;
	struct xgpub_transport *t;

	/*
	 * Not killed with the daemon (xgpub_spawn's PDEATHSIG): the worker's
	 * watchdog sees the daemon's pipe end, tells the guest (ch/<n>/error,
	 * Closed: its process gets EPIPE instead of waiting for a daemon
	 * that is not there) and the worker ends.
	 */
	if (xgpub_xen_alive_fd >= 0)
		prctl(PR_SET_PDEATHSIG, 0);

	if (xgpub_xen_chan_open(a->domid, a->devid, a->ch, &a->lim, &t))
		return 3;
	return xgpub_worker_run(t, &a->opt);
}

static void spawn_channel(struct xgpub_xen *x, struct xdev *d,
			  struct xch *c)
{
	struct chan_arg a = { d->domid, d->devid, c->n, x->lim, { 0 } };
	struct xgpub_child info;
	char *name = NULL, path[192];
	pid_t pid;

	memset(&info, 0, sizeof(info));
	info.kind = XGPUB_CHILD_XEN;
	info.domid = d->domid;
	info.devid = d->devid;
	info.ch = c->n;
	dom_name(x, d->domid, info.name, sizeof(info.name));
	snprintf(path, sizeof(path), "%s/ch/%u", d->fe, c->n);
	name = xgpub_xs_read_text(x->xs, path, "name");
	if (name) {
		snprintf(info.proc, sizeof(info.proc), "%s", name);
		free(name);
	}
	xgpub_config_device_opts(info.name, &d->caps, x->opt, &a.opt);
	{
		struct xgpu_dom_settings s;

		/* its domain's grant cap: its rule's or caps', or the
		 * daemon's default */
		xgpub_config_device(info.name, &d->caps, &s);
		if (s.grant_pages)
			a.lim.dom_grant_pages = s.grant_pages;
	}
	pid = xgpub_spawn(&info, NULL, 0, chan_main, &a);
	if (pid < 0) {
		char be[160];

		snprintf(be, sizeof(be), "%s/ch/%u", d->be, c->n);
		wr(x, be, "error", "backend cannot fork a worker");
		wr(x, be, "state", "%d", XenbusStateClosed);
		c->done = true;
		return;
	}
	c->pid = pid;
	xgpub_info("dom%u ch%u: worker pid %d", d->domid, c->n, pid);
}

/* the workers this daemon stopped, until they are reaped (enum stop_why) */
static struct {
	pid_t pid;
	uint32_t domid, ch;
	enum stop_why why;
} stopped[256];

static void note_stopped(pid_t pid, uint32_t domid, uint32_t ch,
			 enum stop_why why)
{
	int slot = -1;

	for (int i = 0; i < (int)(sizeof(stopped) / sizeof(stopped[0])); i++) {
		if (stopped[i].pid == pid) {
			slot = i;
			break;
		}
		if (!stopped[i].pid && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return;		/* only the log line is lost */
	/* a later, stronger reason (the domain went) wins */
	if (stopped[slot].pid == pid && why < stopped[slot].why)
		return;
	stopped[slot].pid = pid;
	stopped[slot].domid = domid;
	stopped[slot].ch = ch;
	stopped[slot].why = why;
}

void xgpub_xen_kill_workers(struct xdev *d, int sig, enum stop_why why)
{
	for (int i = 0; i < MAX_CH; i++) {
		if (d->ch[i].used && d->ch[i].pid) {
			note_stopped(d->ch[i].pid, d->domid, d->ch[i].n, why);
			kill(d->ch[i].pid, sig);
		}
	}
}

void xgpub_xen_log_stopped(pid_t pid)
{
	static const char *const what[] = {
		[STOP_FRONTEND] = "the frontend closed the device",
		[STOP_DESTROY] = "domain destroy",
		[STOP_REMOVED] = "the device was removed",
		[STOP_SHUTDOWN] = "daemon shutdown",
	};

	for (int i = 0; i < (int)(sizeof(stopped) / sizeof(stopped[0])); i++) {
		if (stopped[i].pid != pid)
			continue;
		xgpub_info("dom%u ch%u: worker stopped after %s",
			   stopped[i].domid, stopped[i].ch,
			   what[stopped[i].why]);
		stopped[i].pid = 0;
		return;
	}
}

bool xgpub_xen_live_workers(const struct xdev *d)
{
	for (int i = 0; i < MAX_CH; i++)
		if (d->ch[i].used && d->ch[i].pid)
			return true;
	return false;
}

void xgpub_xen_ch_closed(struct xgpub_xen *x, const struct xdev *d,
			 const struct xch *c)
{
	char be[160];

	snprintf(be, sizeof(be), "%s/ch/%u", d->be, c->n);
	if (rd_long(x, be, "state", -1) != XenbusStateClosed)
		wr(x, be, "state", "%d", XenbusStateClosed);
}

/* ---- the channels of a device ------------------------------------------ */

static struct xch *ch_find(struct xdev *d, uint32_t n, bool create)
{
	struct xch *free_c = NULL;

	for (int i = 0; i < MAX_CH; i++) {
		if (d->ch[i].used && d->ch[i].n == n)
			return &d->ch[i];
		if (!d->ch[i].used && !free_c)
			free_c = &d->ch[i];
	}
	if (!create || !free_c)
		return NULL;
	memset(free_c, 0, sizeof(*free_c));
	free_c->used = true;
	free_c->n = n;
	return free_c;
}

static void refuse_channel(struct xgpub_xen *x, struct xdev *d, uint32_t n,
			   const char *why, bool force)
{
	char be[160], *st;

	snprintf(be, sizeof(be), "%s/ch/%u", d->be, n);
	st = rd(x, be, "state");
	if (st && !force) {	/* already answered */
		free(st);
		return;
	}
	free(st);
	xgpub_err("dom%u ch%u: refused: %s", d->domid, n, why);
	wr(x, be, "error", "%s", why);
	wr(x, be, "state", "%d", XenbusStateClosed);
}

/* channel n's frontend node is gone: remove ours; false if it is there */
static bool forget_gone(struct xgpub_xen *x, struct xdev *d, uint32_t n)
{
	char fech[160], *st;

	snprintf(fech, sizeof(fech), "%s/ch/%u", d->fe, n);
	st = rd(x, fech, "state");
	if (st) {
		free(st);
		return false;
	}
	snprintf(fech, sizeof(fech), "ch/%u", n);
	rm(x, d->be, fech);
	return true;
}

/*
 * The channel numbers under dir/ch (a malloc'd array of *count; NULL with
 * 0 when there are none or no memory); names that are not a channel
 * number are left out, not ours to judge.
 */
static uint32_t *ch_numbers(struct xgpub_xen *x, const char *dir,
			    unsigned int *count)
{
	char path[192], **ents;
	unsigned int num = 0;
	uint32_t *ids;

	*count = 0;
	snprintf(path, sizeof(path), "%s/ch", dir);
	ents = xgpub_xs->directory(x->xs, XBT_NULL, path, &num);
	ids = ents && num ? malloc(num * sizeof(*ids)) : NULL;
	for (unsigned int i = 0; ids && i < num; i++) {
		int64_t n = xgpub_xs_dirent(ents[i], INT32_MAX);

		if (n >= 0)
			ids[(*count)++] = (uint32_t)n;
	}
	free(ents);
	return ids;
}

void xgpub_xen_scan_channels(struct xgpub_xen *x, struct xdev *d,
			     bool connected)
{
	unsigned int num;
	uint32_t *ids;
	int live = 0;

	for (int i = 0; i < MAX_CH; i++)
		if (d->ch[i].used && d->ch[i].pid)
			live++;

	/* frontend channels: new ones get a worker */
	ids = ch_numbers(x, d->fe, &num);
	for (unsigned int i = 0; i < num; i++) {
		uint32_t n = ids[i];
		char fech[160];
		struct xch *c;
		long st;

		snprintf(fech, sizeof(fech), "%s/ch/%u", d->fe, n);
		st = rd_long(x, fech, "state", -1);
		c = ch_find(d, n, false);
		if (st != XenbusStateInitialised || (c && (c->pid || c->done)))
			continue;
		if (!connected) {
			refuse_channel(x, d, n, "device is not connected",
				       false);
			continue;
		}
		if (live >= (int)(d->max_channels ? d->max_channels :
				  x->lim.max_channels)) {
			refuse_channel(x, d, n,
				       "too many channels on this device",
				       false);
			continue;
		}
		c = c ? c : ch_find(d, n, true);
		if (!c) {
			refuse_channel(x, d, n,
				       "too many channels on this device",
				       false);
			continue;
		}
		spawn_channel(x, d, c);
		live++;
	}
	free(ids);

	/* channels whose frontend node is gone: forget them */
	for (int i = 0; i < MAX_CH; i++) {
		struct xch *c = &d->ch[i];

		if (c->used && !c->pid && forget_gone(x, d, c->n))
			c->used = false;
	}
	/* our nodes of refused channels whose frontend node went away */
	ids = ch_numbers(x, d->be, &num);
	for (unsigned int i = 0; i < num; i++)
		if (!ch_find(d, ids[i], false))
			forget_gone(x, d, ids[i]);
	free(ids);
}

/*
 * A daemon that restarts finds channels that a previous daemon's workers
 * served: nobody serves them now, so say so, and their processes get
 * EPIPE instead of waiting forever.  A channel still waiting for its
 * first answer (Initialised, no backend state: announced while no daemon
 * ran) is served as usual.
 */
void xgpub_xen_orphans(struct xgpub_xen *x, struct xdev *d)
{
	unsigned int num;
	uint32_t *ids = ch_numbers(x, d->fe, &num);

	for (unsigned int i = 0; i < num; i++) {
		uint32_t n = ids[i];
		char dir[160];
		struct xch *c;

		snprintf(dir, sizeof(dir), "%s/ch/%u", d->be, n);
		if (rd_long(x, dir, "state", -1) < 0) {
			snprintf(dir, sizeof(dir), "%s/ch/%u", d->fe, n);
			if (rd_long(x, dir, "state", -1) ==
			    XenbusStateInitialised)
				continue;
		}
		refuse_channel(x, d, n, "the backend restarted", true);
		c = ch_find(d, n, true);
		if (c)
			c->done = true;
	}
	free(ids);
}
