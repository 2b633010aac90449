// SPDX-License-Identifier: GPL-2.0-only
/*
 * xen-gpufront: one channel (ring, data area, event channel),
 * its xenstore announcement and its teardown.
 * Overview, lifetimes and locking: xgpufront.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xgpufront.h"

/* ------------------------------------------------------------------ */
/* granted pages and event channels                                   */

int xgpu_pageset_alloc(struct xgpu_pageset *ps, unsigned int nr)
{
	unsigned int i;

	ps->nr = nr;
	ps->pages = kvcalloc(nr, sizeof(*ps->pages), GFP_KERNEL);
	ps->refs = kvmalloc_array(nr, sizeof(*ps->refs), GFP_KERNEL);
	if (!ps->pages || !ps->refs)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		ps->refs[i] = INVALID_GRANT_REF;
	for (i = 0; i < nr; i++) {
		/* thousands of pages: let a killed process go */
		if (fatal_signal_pending(current))
			return -EINTR;
		ps->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!ps->pages[i])
			return -ENOMEM;
		cond_resched();
	}
	return 0;
}

int xgpu_pageset_grant(struct xgpu_pageset *ps, domid_t domid,
		       bool readonly)
{
	unsigned int i;
	int ref;

	for (i = 0; i < ps->nr; i++) {
		ref = gnttab_grant_foreign_access(domid,
						  xen_page_to_gfn(ps->pages[i]),
						  readonly);
		if (ref < 0)
			return ref;	/* -ENOSPC: out of grant refs */
		ps->refs[i] = ref;
	}
	return 0;
}

/*
 * Give every page back.  A granted page goes through
 * gnttab_end_foreign_access(), which puts our reference only once Dom0
 * no longer maps it; only never-granted pages are freed here.
 */
void xgpu_pageset_free(struct xgpu_pageset *ps)
{
	unsigned int i;

	if (ps->pages) {
		for (i = 0; i < ps->nr; i++) {
			if (!ps->pages[i])
				continue;
			if (ps->refs && ps->refs[i] != INVALID_GRANT_REF)
				gnttab_end_foreign_access(ps->refs[i],
							  ps->pages[i]);
			else
				__free_page(ps->pages[i]);
			if (!(i & 255))
				cond_resched();
		}
	}
	kvfree(ps->pages);
	kvfree(ps->refs);
	ps->pages = NULL;
	ps->refs = NULL;
	ps->nr = 0;
}

/*
 * A restored domain's grant table has no entry for what a past domain
 * granted (see the top of xgpufront.h): end each such grant now and give
 * its reference back.  The pages stay (the process may still map them)
 * and are freed as never granted.  A grant that somehow is still in use
 * is left for xgpu_pageset_free().
 */
static void xgpu_pageset_revoke(struct xgpu_pageset *ps)
{
	unsigned int i;

	for (i = 0; ps->refs && i < ps->nr; i++) {
		if (ps->refs[i] == INVALID_GRANT_REF)
			continue;
		if (gnttab_try_end_foreign_access(ps->refs[i]))
			ps->refs[i] = INVALID_GRANT_REF;
		if (!(i & 255))
			cond_resched();
	}
}

int xgpu_evtchn_alloc(domid_t remote, evtchn_port_t *port)
{
	struct evtchn_alloc_unbound op = {
		.dom = DOMID_SELF,
		.remote_dom = remote,
	};
	int err;

	err = HYPERVISOR_event_channel_op(EVTCHNOP_alloc_unbound, &op);
	if (!err)
		*port = op.port;
	return err;
}

void xgpu_evtchn_close(evtchn_port_t port)
{
	struct evtchn_close op = { .port = port };

	if (HYPERVISOR_event_channel_op(EVTCHNOP_close, &op))
		pr_warn("closing event channel %u failed\n", port);
}

/* ------------------------------------------------------------------ */
/* channel                                                            */

static irqreturn_t xgpu_chan_irq(int irq, void *data)
{
	struct xgpu_chan *c = data;

	atomic_inc(&c->kicks);
	wake_up_all(&c->wq);
	return IRQ_HANDLED;
}

/* xenwatch thread: the backend's ch/<n>/state changed */
static void xgpu_chan_watch(struct xenbus_watch *w, const char *path,
			    const char *token)
{
	struct xgpu_chan *c = container_of(w, struct xgpu_chan, watch);
	int old = READ_ONCE(c->be_state);
	unsigned int st;
	int new, err;

	err = xgpu_read_uint(c->be_path, "state", &st);
	if (err == -EINVAL || (!err && st > XenbusStateClosed)) {
		dev_warn_ratelimited(&c->xd->xbdev->dev,
				     "ch%u: ignoring bad backend state\n",
				     c->num);
		return;
	}
	if (err)
		new = old == XGPU_BE_ABSENT ? XGPU_BE_ABSENT : XGPU_BE_GONE;
	else
		new = st;

	/* a closed channel never comes back; only Closing -> Closed/gone */
	if (old == XGPU_BE_GONE || new == old)
		return;
	if (old == XenbusStateClosed && new != XGPU_BE_GONE)
		return;
	if (old == XenbusStateClosing && !xgpu_be_closed(new))
		return;

	WRITE_ONCE(c->be_state, new);
	wake_up_all(&c->wq);
}

static int xgpu_chan_publish(struct xgpu_chan *c, const char *name)
{
	struct xenbus_transaction t;
	char node[32];
	unsigned int i;
	int err;

again:
	err = xenbus_transaction_start(&t);
	if (err)
		return err;
	err = xenbus_printf(t, c->fe_path, "ring-page-order", "%u",
			    c->ring_order);
	for (i = 0; !err && i < c->ring.nr; i++) {
		snprintf(node, sizeof(node), "ring-ref%u", i);
		err = xenbus_printf(t, c->fe_path, node, "%u", c->ring.refs[i]);
	}
	if (!err)
		err = xenbus_printf(t, c->fe_path, "data-pages", "%u",
				    c->data.nr);
	for (i = 0; !err && i < c->dir.nr; i++) {
		snprintf(node, sizeof(node), "data-dir-ref%u", i);
		err = xenbus_printf(t, c->fe_path, node, "%u", c->dir.refs[i]);
	}
	if (!err)
		err = xenbus_printf(t, c->fe_path, "event-channel", "%u",
				    c->port);
	if (!err)
		err = xenbus_printf(t, c->fe_path, "name", "%s", name);
	if (!err)
		err = xenbus_printf(t, c->fe_path, "pid", "%d",
				    task_tgid_nr(current));
	if (!err)
		err = xenbus_printf(t, c->fe_path, "state", "%d",
				    XenbusStateInitialised);
	err = xgpu_xs_end(t, err);
	if (err == -EAGAIN)
		goto again;
	return err;
}

static bool xgpu_be_done(int st)
{
	return st == XenbusStateClosed || st == XGPU_BE_GONE;
}

/*
 * Tear a channel down.  graceful: the backend mapped it and may still
 * use it, so tell it (ch state Closing) and wait, bounded, for Closed,
 * which the backend says once it no longer maps our pages.  A detached
 * channel (device unbound, backend device closing) waits too: its
 * directory is gone, which the backend's worker takes as the end, and
 * the backend still says Closed once it let go.  Grants are ended
 * either way; a page Dom0 still maps then is freed later by the grant
 * table's deferred list, which gives back only a few pages a second:
 * hence the wait.
 */
void xgpu_chan_destroy(struct xgpu_chan *c, bool graceful)
{
	struct xgpu_dev *xd = c->xd;
	bool wait = false, stale;
	int st;

	/*
	 * A stale channel (opened before a restore) belongs to a domain
	 * that is gone: no backend to tell or wait for, and its port
	 * number and xenstore paths may mean something else now.
	 */
	mutex_lock(&xd->lock);
	c->dying = true;	/* xgpu_chan_forget() keeps off from now on */
	stale = xgpu_chan_stale(c);
	st = READ_ONCE(c->be_state);
	if (!graceful || stale) {
		/* nothing to tell the backend */
	} else if (c->published && !c->detached) {
		if (xenbus_printf(XBT_NIL, c->fe_path, "state", "%d",
				  XenbusStateClosing))
			dev_warn(&xd->xbdev->dev,
				 "ch%u: cannot write Closing\n", c->num);
		else
			wait = true;
	} else if (c->watching && st != XGPU_BE_ABSENT && !xgpu_be_done(st)) {
		wait = true;	/* detached, the backend had it */
	}
	mutex_unlock(&xd->lock);
	if (wait && !wait_event_timeout(c->wq,
			xgpu_be_done(READ_ONCE(c->be_state)),
			XGPU_CLOSE_TIMEOUT))
		dev_warn(&xd->xbdev->dev,
			 "ch%u: backend did not close in time\n", c->num);

	if (c->watching)
		unregister_xenbus_watch(&c->watch);	/* no lock held */
	kfree(c->watch.node);
	/* a restored domain's irq has no port: unbinding closes none */
	if (c->irq >= 0)
		unbind_from_irqhandler(c->irq, c);	/* closes the port */
	else if (c->port_alloc && !stale)
		xgpu_evtchn_close(c->port);

	xgpu_pageset_free(&c->data);
	xgpu_pageset_free(&c->dir);
	xgpu_pageset_free(&c->ring);

	mutex_lock(&xd->lock);
	if (c->published && !c->detached && !stale)
		xenbus_rm(XBT_NIL, c->fe_path, "");
	c->published = false;
	list_del(&c->node);
	mutex_unlock(&xd->lock);

	kfree(c->fe_path);
	kfree(c->be_path);
	kfree(c);
}

/*
 * The domain was restored (xgpufront.h): this channel's event channel
 * and grants were the old domain's.  Unbind its irq (the new domain has
 * no port behind it, so nothing is closed) and end its grants now rather
 * than when the file is closed.  Only channels a file owns and that are
 * not being destroyed: chan_open() and xgpu_chan_destroy() use these
 * fields without xd->lock.
 */
void xgpu_chan_forget(struct xgpu_chan *c)
{
	lockdep_assert_held(&c->xd->lock);
	if (!c->owned || c->dying || !xgpu_chan_stale(c))
		return;
	if (c->irq >= 0) {
		unbind_from_irqhandler(c->irq, c);
		WRITE_ONCE(c->irq, -1);
	}
	c->port_alloc = false;
	xgpu_pageset_revoke(&c->ring);
	xgpu_pageset_revoke(&c->data);
	xgpu_pageset_revoke(&c->dir);
}

static void xgpu_read_refusal(struct xgpu_chan *c, char *msg, size_t msgsz)
{
	char *s;

	s = xenbus_read(XBT_NIL, c->be_path, "error", NULL);
	if (IS_ERR(s)) {
		strscpy(msg, "refused by the backend (no reason given)", msgsz);
		return;
	}
	xgpu_sanitise(msg, msgsz, s, strlen(s), true);
	kfree(s);
}

static unsigned int xgpu_live_channels(struct xgpu_dev *xd)
{
	struct xgpu_chan *c;
	unsigned int n = 0;

	list_for_each_entry(c, &xd->channels, node)
		if (!c->detached)
			n++;
	return n;
}

/* allocate, grant and announce a channel, wait for the backend */
int xgpu_chan_open(struct xgpu_file *f, struct xgpu_ioc_connect *a,
		   struct xgpu_chan **out)
{
	struct xgpu_dev *xd = f->xd;
	char name[sizeof(a->name) + 1];
	unsigned int i, j, ndir, timeout;
	struct xgpu_chan *c;
	long left;
	int st, err;

	xgpu_sanitise(name, sizeof(name), a->name, sizeof(a->name), false);

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->xd = xd;
	c->irq = -1;
	c->be_state = XGPU_BE_ABSENT;
	atomic_set(&c->kicks, 0);
	init_waitqueue_head(&c->wq);
	INIT_LIST_HEAD(&c->node);

	mutex_lock(&xd->lock);
	a->max_ring_order = xd->max_ring_order;
	a->max_data_pages = xd->max_data_pages;
	if (!xd->connected || xd->removed || xd->epoch != xgpu_epoch_now()) {
		err = -ENODEV;	/* (not yet) connected to a backend */
	} else if (a->ring_order > xd->max_ring_order ||
		   a->data_pages < 1 || a->data_pages > xd->max_data_pages) {
		err = -EINVAL;
	} else if (xgpu_live_channels(xd) >= xd->max_channels) {
		snprintf(a->msg, sizeof(a->msg), "all %u channels of this "
			 "device are open (the backend's max-channels)",
			 xd->max_channels);
		err = -EBUSY;
	} else {
		err = 0;
		c->num = xd->next_channel++;
		c->domid = xd->backend_id;
		c->epoch = xd->epoch;
		/* xd->otherend changes on resume, under xd->lock */
		c->fe_path = kasprintf(GFP_KERNEL, "%s/ch/%u", xd->nodename,
				       c->num);
		c->be_path = kasprintf(GFP_KERNEL, "%s/ch/%u", xd->otherend,
				       c->num);
		list_add_tail(&c->node, &xd->channels);
	}
	mutex_unlock(&xd->lock);
	if (err) {
		kfree(c);
		return err;
	}
	c->ring_order = a->ring_order;

	err = -ENOMEM;
	snprintf(c->irqname, sizeof(c->irqname), "%s-ch%u", xd->name, c->num);
	if (!c->fe_path || !c->be_path)
		goto fail;

	/* ring: SHARED_RING_INIT on page 0 (req_event = rsp_event = 1) */
	err = xgpu_pageset_alloc(&c->ring, 1u << c->ring_order);
	if (err)
		goto fail;
	{
		u32 *idx = kmap_local_page(c->ring.pages[0]);

		idx[0] = 0;	/* req_prod */
		idx[1] = 1;	/* req_event */
		idx[2] = 0;	/* rsp_prod */
		idx[3] = 1;	/* rsp_event */
		kunmap_local(idx);
	}
	err = xgpu_pageset_alloc(&c->data, a->data_pages);
	if (err)
		goto fail;
	ndir = DIV_ROUND_UP(a->data_pages, XGPUIF_XEN_REFS_PER_DIR);
	err = xgpu_pageset_alloc(&c->dir, ndir);
	if (err)
		goto fail;

	err = xgpu_pageset_grant(&c->ring, c->domid, false);
	if (!err)
		err = xgpu_pageset_grant(&c->data, c->domid, false);
	if (err)
		goto fail;
	for (j = 0; j < ndir; j++) {
		__le32 *d = kmap_local_page(c->dir.pages[j]);

		for (i = 0; i < XGPUIF_XEN_REFS_PER_DIR; i++) {
			unsigned int k = j * XGPUIF_XEN_REFS_PER_DIR + i;

			if (k >= c->data.nr)
				break;
			d[i] = cpu_to_le32(c->data.refs[k]);
		}
		kunmap_local(d);
	}
	err = xgpu_pageset_grant(&c->dir, c->domid, true);
	if (err)
		goto fail;

	err = xgpu_evtchn_alloc(c->domid, &c->port);
	if (err)
		goto fail;
	c->port_alloc = true;
	err = bind_evtchn_to_irqhandler(c->port, xgpu_chan_irq, 0, c->irqname,
					c);
	if (err < 0)
		goto fail;
	c->irq = err;
	c->port_alloc = false;	/* owned by the irq binding now */

	/* watch before announcing, so that no backend answer is missed */
	err = -ENOMEM;
	c->watch.node = kasprintf(GFP_KERNEL, "%s/state", c->be_path);
	if (!c->watch.node)
		goto fail;
	c->watch.callback = xgpu_chan_watch;
	err = register_xenbus_watch(&c->watch);
	if (err)
		goto fail_xs;
	c->watching = true;

	mutex_lock(&xd->lock);
	if (c->detached || xgpu_chan_stale(c)) {
		err = -ENODEV;
	} else {
		c->published = true;	/* a failed commit leaves nothing */
		err = xgpu_chan_publish(c, name);
	}
	mutex_unlock(&xd->lock);
	if (err)
		goto fail_xs;

	timeout = max(1u, READ_ONCE(xgpu_connect_timeout_ms));
	left = wait_event_interruptible_timeout(c->wq,
			READ_ONCE(c->detached) || xgpu_chan_stale(c) ||
			READ_ONCE(c->be_state) == XenbusStateConnected ||
			xgpu_be_closed(READ_ONCE(c->be_state)),
			msecs_to_jiffies(timeout));
	st = READ_ONCE(c->be_state);
	if (READ_ONCE(c->detached) || xgpu_chan_stale(c)) {
		err = -ENODEV;
	} else if (xgpu_be_closed(st)) {
		xgpu_read_refusal(c, a->msg, sizeof(a->msg));
		dev_info(&xd->xbdev->dev, "ch%u: refused: %s\n", c->num,
			 a->msg);
		err = -ECONNREFUSED;
	} else if (st == XenbusStateConnected) {
		err = 0;
	} else if (left < 0) {
		err = -EINTR;
	} else {
		dev_info(&xd->xbdev->dev, "ch%u: backend did not answer\n",
			 c->num);
		err = -ETIMEDOUT;
	}
	if (err)
		goto fail;

	mutex_lock(&xd->lock);
	if (c->detached || xgpu_chan_stale(c))
		err = -ENODEV;
	else
		err = xenbus_printf(XBT_NIL, c->fe_path, "state", "%d",
				    XenbusStateConnected);
	c->owned = !err;
	mutex_unlock(&xd->lock);
	if (err) {
		if (err != -ENODEV)
			err = xgpu_xs_errno(err);
		xgpu_chan_destroy(c, true);	/* the backend maps it */
		return err;
	}

	a->channel = c->num;
	a->backend_domid = c->domid;
	a->ring_offset = 0;
	a->data_offset = (u64)c->ring.nr << PAGE_SHIFT;
	dev_info(&xd->xbdev->dev,
		 "ch%u: connected (pid %d '%s', ring order %u, %u data pages)\n",
		 c->num, task_tgid_nr(current), name, c->ring_order,
		 c->data.nr);
	*out = c;
	return 0;

fail_xs:
	if (err != -ENODEV)
		err = xgpu_xs_errno(err);
fail:
	xgpu_chan_destroy(c, false);
	return err;
}
