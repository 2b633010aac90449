// SPDX-License-Identifier: GPL-2.0-only
/*
 * xen-gpufront: the xenbus device (handshake, states, /dev/xgpu
 * registration) and module entry points.
 * Overview, lifetimes and locking: xgpufront.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xgpufront.h"

unsigned int xgpu_max_hostmem_mb = 1024;
module_param_named(max_hostmem_mb, xgpu_max_hostmem_mb, uint, 0644);
MODULE_PARM_DESC(max_hostmem_mb,
		 "Host memory (HOSTMEM_ALLOC) one open file may hold, MiB (default 1024)");

static DEFINE_IDA(xgpu_ida);

/* save/restore (top of xgpufront.h) */
atomic_t xgpu_epoch = ATOMIC_INIT(0);
static LIST_HEAD(xgpu_devs);		/* bound devices */
static DEFINE_MUTEX(xgpu_devs_lock);
static struct workqueue_struct *xgpu_wq;
static struct xenbus_driver xgpu_driver;

/* ------------------------------------------------------------------ */
/* helpers                                                            */

void xgpu_dev_release(struct kref *ref)
{
	struct xgpu_dev *xd = container_of(ref, struct xgpu_dev, ref);

	WARN_ON(!list_empty(&xd->channels));
	put_device(&xd->xbdev->dev);
	mutex_destroy(&xd->lock);
	kfree(xd->nodename);
	kfree(xd->otherend);
	kfree(xd);
}

/* ------------------------------------------------------------------ */
/* xenbus device                                                      */

/*
 * The backend went away: every channel is dead, its directory removed
 * (not a stale channel's: that path is the old domain's).
 */
static void xgpu_dev_down(struct xgpu_dev *xd)
{
	struct xgpu_chan *c;

	lockdep_assert_held(&xd->lock);
	xd->connected = false;
	list_for_each_entry(c, &xd->channels, node) {
		if (c->detached)
			continue;
		if (c->published && !xgpu_chan_stale(c))
			xenbus_rm(XBT_NIL, c->fe_path, "");
		c->published = false;
		WRITE_ONCE(c->detached, true);
		wake_up_all(&c->wq);
	}
}

static u32 xgpu_read_limit(struct xgpu_dev *xd, const char *node, u32 def,
			   u32 max)
{
	unsigned int v;
	int err;

	err = xgpu_read_uint(xd->otherend, node, &v);
	if (err == -EINVAL) {
		dev_warn(&xd->xbdev->dev, "backend %s malformed, using %u\n",
			 node, def);
		return def;
	}
	if (err)
		return def;
	if (v > max) {
		dev_warn(&xd->xbdev->dev, "backend %s %u clamped to %u\n",
			 node, v, max);
		return max;
	}
	return v;
}

/* backend InitWait (or later): read its limits, answer Initialised */
static int xgpu_handshake(struct xgpu_dev *xd)
{
	struct xenbus_device *xbdev = xd->xbdev;
	struct xenbus_transaction t;
	int err;

	lockdep_assert_held(&xd->lock);
	xd->max_ring_order = xgpu_read_limit(xd, "max-ring-page-order",
					     XGPUIF_DEFAULT_RING_ORDER,
					     XGPUIF_MAX_RING_ORDER);
	xd->max_data_pages = xgpu_read_limit(xd, "max-data-pages",
					     XGPUIF_XEN_DEFAULT_DATA_PAGES,
					     XGPUIF_XEN_MAX_DATA_PAGES);
	xd->max_channels = xgpu_read_limit(xd, "max-channels",
					   XGPUIF_XEN_MAX_CHANNELS,
					   XGPUIF_XEN_MAX_CHANNELS);
again:
	err = xenbus_transaction_start(&t);
	if (err)
		goto fatal;
	/* no channel directory is live now: drop leftovers of a past life */
	xenbus_rm(t, xd->nodename, "ch");
	err = xenbus_printf(t, xd->nodename, "protocol-version", "%u",
			    XGPUIF_VERSION);
	err = xgpu_xs_end(t, err);
	if (err == -EAGAIN)
		goto again;
	if (err)
		goto fatal;
	dev_info(&xbdev->dev,
		 "backend limits: ring order %u, %u data pages, %u channels\n",
		 xd->max_ring_order, xd->max_data_pages, xd->max_channels);
	return xenbus_switch_state(xbdev, XenbusStateInitialised);

fatal:
	xenbus_dev_fatal(xbdev, err, "writing protocol-version");
	return err;
}

static void xgpu_misc_register(struct xgpu_dev *xd)
{
	int err;

	if (xd->misc_registered)
		return;
	memset(&xd->misc, 0, sizeof(xd->misc));
	xd->misc.minor = MISC_DYNAMIC_MINOR;
	xd->misc.name = xd->name;
	xd->misc.fops = &xgpu_fops;
	xd->misc.parent = &xd->xbdev->dev;
	xd->misc.mode = 0666;
	err = misc_register(&xd->misc);
	if (err) {
		dev_err(&xd->xbdev->dev, "cannot register /dev/%s: %d\n",
			xd->name, err);
		return;
	}
	xd->misc_registered = true;
	dev_info(&xd->xbdev->dev, "/dev/%s ready\n", xd->name);
}

/* the backend is gone or going: drop the channels, answer Closed */
static void xgpu_dev_close(struct xgpu_dev *xd)
{
	xgpu_dev_down(xd);
	if (xd->xbdev->state != XenbusStateClosed)
		xenbus_frontend_closed(xd->xbdev);
}

/* xenwatch thread; the state is read fresh, so states may be skipped */
static void xgpu_backend_changed(struct xenbus_device *xbdev,
				 enum xenbus_state bstate)
{
	struct xgpu_dev *xd = dev_get_drvdata(&xbdev->dev);
	enum xenbus_state fstate;
	bool connected;

	mutex_lock(&xd->lock);
	if (xd->epoch != xgpu_epoch_now()) {
		/* the old domain's backend, seen again as xenstore comes
		 * back after a restore: xgpu_resume() is still to come */
		mutex_unlock(&xd->lock);
		dev_dbg(&xbdev->dev, "restored: ignoring backend %s\n",
			xenbus_strstate(bstate));
		return;
	}
	fstate = xbdev->state;
	dev_info(&xbdev->dev, "backend %s, frontend %s\n",
		 xenbus_strstate(bstate), xenbus_strstate(fstate));
	switch (bstate) {
	case XenbusStateInitWait:
	case XenbusStateInitialised:
		if (fstate == XenbusStateConnected)
			xgpu_dev_down(xd);	/* backend restarted */
		else if (fstate != XenbusStateInitialising &&
			 fstate != XenbusStateClosed)
			break;			/* answered already */
		xgpu_handshake(xd);
		break;
	case XenbusStateConnected:
		if (fstate == XenbusStateInitialising ||
		    fstate == XenbusStateClosed) {
			/* InitWait skipped */
			if (xgpu_handshake(xd))
				break;
			fstate = xbdev->state;
		}
		if (fstate == XenbusStateInitialised &&
		    !xenbus_switch_state(xbdev, XenbusStateConnected))
			xd->connected = true;
		break;
	case XenbusStateClosing:
	case XenbusStateClosed:
		xgpu_dev_close(xd);
		break;
	case XenbusStateUnknown:	/* backend directory gone */
	case XenbusStateInitialising:	/* backend reset */
		if (fstate != XenbusStateInitialising &&
		    fstate != XenbusStateClosed)
			xgpu_dev_close(xd);
		break;
	default:
		break;
	}
	connected = xd->connected;
	mutex_unlock(&xd->lock);

	/* outside xd->lock; serialised against remove() by the core */
	if (connected)
		xgpu_misc_register(xd);
}

/* ------------------------------------------------------------------ */
/* save/restore (top of xgpufront.h)                                  */

/*
 * The canary: an event channel bound to an irq of ours that nobody ever
 * signals.  xen_irq_resume() (a restore into a new domain) drops its port
 * -> irq binding with every other; a cancelled suspend keeps it.
 */
static evtchn_port_t xgpu_canary_port;
static int xgpu_canary_irq = -1;

static irqreturn_t xgpu_canary_fn(int irq, void *data)
{
	return IRQ_HANDLED;
}

static int xgpu_canary_bind(void)
{
	evtchn_port_t port;
	int err, irq;

	err = xgpu_evtchn_alloc(DOMID_SELF, &port);
	if (err)
		return err;
	irq = bind_evtchn_to_irqhandler(port, xgpu_canary_fn, 0,
					"xgpu-restore", &xgpu_canary_port);
	if (irq < 0) {
		xgpu_evtchn_close(port);
		return irq;
	}
	WRITE_ONCE(xgpu_canary_port, port);
	WRITE_ONCE(xgpu_canary_irq, irq);
	return 0;
}

/* after a restore its irq has no port: unbinding closes none */
static void xgpu_canary_free(void)
{
	int irq = xgpu_canary_irq;

	WRITE_ONCE(xgpu_canary_irq, -1);
	if (irq >= 0)
		unbind_from_irqhandler(irq, &xgpu_canary_port);
}

/*
 * After a restore (xgpu_epoch moved on): the channels of the old domain
 * are dead (their waiters wake up to EPIPE), their irqs and grants go;
 * a device not resumed yet is not connected.
 */
static void xgpu_restored_fn(struct work_struct *work)
{
	u32 epoch = xgpu_epoch_now();
	struct xgpu_chan *c;
	struct xgpu_dev *xd;
	unsigned int n;
	int err;

	xgpu_canary_free();
	err = xgpu_canary_bind();
	if (err)
		pr_warn("no event channel to tell a restore from a cancelled suspend (%d): the next suspend counts as a restore\n",
			err);

	mutex_lock(&xgpu_devs_lock);
	list_for_each_entry(xd, &xgpu_devs, node) {
		n = 0;
		mutex_lock(&xd->lock);
		list_for_each_entry(c, &xd->channels, node) {
			if (c->epoch == epoch)
				continue;
			if (!c->detached) {
				n++;
				c->published = false;
				WRITE_ONCE(c->detached, true);
			}
			wake_up_all(&c->wq);
			xgpu_chan_forget(c);
		}
		if (xd->epoch != epoch)
			xd->connected = false;
		mutex_unlock(&xd->lock);
		dev_info(&xd->xbdev->dev,
			 "domain restored: %u open channel(s) lost with the old domain\n",
			 n);
	}
	mutex_unlock(&xgpu_devs_lock);
}

static DECLARE_WORK(xgpu_restored, xgpu_restored_fn);

/*
 * Xen resume notifier: right after the domain came back from a suspend,
 * before the devices and xenstore are back (it runs in the xenwatch
 * thread, in do_suspend()).  No locks here: the work does the rest,
 * once processes are thawed (xgpu_wq is freezable); meanwhile the epoch
 * alone makes every ioctl on an old channel fail.
 */
static int xgpu_resume_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	int irq = READ_ONCE(xgpu_canary_irq);

	/* a cancelled suspend: same domain, same backend, nothing lost */
	if (irq >= 0 && irq_from_evtchn(READ_ONCE(xgpu_canary_port)) ==
			(unsigned int)irq)
		return NOTIFY_DONE;
	atomic_inc(&xgpu_epoch);
	queue_work(xgpu_wq, &xgpu_restored);
	return NOTIFY_DONE;
}

static struct notifier_block xgpu_resume_nb = {
	.notifier_call = xgpu_resume_notify,
};

/*
 * xenbus .resume: the core found the frontend nodes again (maybe with
 * another backend path: the new domain's).  Drop every channel and
 * start the handshake over; the otherend watch, registered right after,
 * brings xgpu_backend_changed() the backend's state.
 */
static int xgpu_resume(struct xenbus_device *xbdev)
{
	struct xgpu_dev *xd = dev_get_drvdata(&xbdev->dev);
	char *otherend;

	if (xbdev->otherend_id < 0 ||
	    xbdev->otherend_id >= DOMID_FIRST_RESERVED) {
		dev_err(&xbdev->dev, "bad backend-id %d\n", xbdev->otherend_id);
		return -EINVAL;
	}
	otherend = kstrdup(xbdev->otherend, GFP_KERNEL);
	if (!otherend)
		return -ENOMEM;
	mutex_lock(&xd->lock);
	xgpu_dev_down(xd);
	kfree(xd->otherend);
	xd->otherend = otherend;
	xd->backend_id = xbdev->otherend_id;
	WRITE_ONCE(xd->epoch, xgpu_epoch_now());
	mutex_unlock(&xd->lock);
	dev_info(&xbdev->dev, "resumed: backend %s (dom%u), connecting again\n",
		 xd->otherend, xd->backend_id);
	return 0;
}

/*
 * The nodes a toolstack writes for a new device are there: backend-id,
 * backend (a directory that exists) and state Initialising.  A probe
 * without them fails and leaves the device without a driver for good.
 */
static bool xgpu_nodes_back(struct xgpu_dev *xd)
{
	unsigned int st;
	bool ok;
	char *be;

	if (xgpu_read_uint(xd->nodename, "state", &st) ||
	    st != XenbusStateInitialising ||
	    !xenbus_exists(XBT_NIL, xd->nodename, "backend-id"))
		return false;
	be = xenbus_read(XBT_NIL, xd->nodename, "backend", NULL);
	if (IS_ERR(be))
		return false;
	ok = be[0] && xenbus_exists(XBT_NIL, be, "");
	kfree(be);
	return ok;
}

/*
 * After a restore the xenbus core gives up on a device whose nodes the
 * toolstack had not recreated yet: it reads them once, at resume, and
 * leaves xbdev->otherend NULL and no otherend watch.  Our watch on
 * <nodename>/state fires when they are written; once they are all there
 * the device is probed afresh, as if it had just been plugged in
 * (remove, then probe: files still open keep the old xd, whose channels
 * are dead).
 */
static void xgpu_recover_work(struct work_struct *work)
{
	struct xgpu_dev *xd = container_of(work, struct xgpu_dev, recover);
	struct device *dev = &xd->xbdev->dev;
	bool given_up;
	int err;

	if (!xgpu_nodes_back(xd)) {
		kref_put(&xd->ref, xgpu_dev_release);	/* the next event */
		return;
	}
	device_lock(dev);	/* as the core's resume and remove run */
	given_up = dev->driver == &xgpu_driver.driver &&
		   dev_get_drvdata(dev) == xd && !xd->xbdev->otherend &&
		   READ_ONCE(xd->epoch) != xgpu_epoch_now();
	device_unlock(dev);
	if (given_up) {
		dev_info(dev, "device nodes back after the restore: probing it again\n");
		err = device_reprobe(dev);
		if (err)
			dev_warn(dev, "probing again failed: %d\n", err);
	}
	kref_put(&xd->ref, xgpu_dev_release);
}

/* xenwatch thread: <nodename>/state written or removed */
static void xgpu_fe_changed(struct xenbus_watch *w, const char *path,
			    const char *token)
{
	struct xgpu_dev *xd = container_of(w, struct xgpu_dev, fe_watch);

	if (READ_ONCE(xd->epoch) == xgpu_epoch_now())
		return;
	kref_get(&xd->ref);
	if (!queue_work(xgpu_wq, &xd->recover))
		kref_put(&xd->ref, xgpu_dev_release);	/* not the last */
}

/* ------------------------------------------------------------------ */
/* probe and remove                                                   */

static int xgpu_probe(struct xenbus_device *xbdev,
		      const struct xenbus_device_id *id)
{
	struct xgpu_dev *xd;
	int err;

	if (xbdev->otherend_id < 0 ||
	    xbdev->otherend_id >= DOMID_FIRST_RESERVED) {
		dev_err(&xbdev->dev, "bad backend-id %d\n", xbdev->otherend_id);
		return -EINVAL;
	}
	xd = kzalloc(sizeof(*xd), GFP_KERNEL);
	if (!xd)
		return -ENOMEM;
	kref_init(&xd->ref);
	mutex_init(&xd->lock);
	INIT_LIST_HEAD(&xd->channels);
	INIT_LIST_HEAD(&xd->node);
	INIT_WORK(&xd->recover, xgpu_recover_work);
	xd->epoch = xgpu_epoch_now();
	xd->backend_id = xbdev->otherend_id;
	xd->nodename = kstrdup(xbdev->nodename, GFP_KERNEL);
	xd->otherend = kstrdup(xbdev->otherend, GFP_KERNEL);
	err = -ENOMEM;
	if (!xd->nodename || !xd->otherend)
		goto fail;
	xd->fe_watch.node = kasprintf(GFP_KERNEL, "%s/state", xbdev->nodename);
	if (!xd->fe_watch.node)
		goto fail;
	xd->fe_watch.callback = xgpu_fe_changed;
	xd->index = ida_alloc(&xgpu_ida, GFP_KERNEL);
	if (xd->index < 0) {
		err = xd->index;
		goto fail;
	}
	if (xd->index)
		snprintf(xd->name, sizeof(xd->name), "xgpu%d", xd->index);
	else
		strscpy(xd->name, "xgpu", sizeof(xd->name));

	get_device(&xbdev->dev);
	xd->xbdev = xbdev;
	dev_set_drvdata(&xbdev->dev, xd);
	/* xd is complete: the watch fires once at once (and finds the
	 * epoch current) */
	err = register_xenbus_watch(&xd->fe_watch);
	if (err) {
		dev_set_drvdata(&xbdev->dev, NULL);
		put_device(&xbdev->dev);
		ida_free(&xgpu_ida, xd->index);
		goto fail;
	}
	xd->fe_watching = true;
	mutex_lock(&xgpu_devs_lock);
	list_add_tail(&xd->node, &xgpu_devs);
	mutex_unlock(&xgpu_devs_lock);
	dev_info(&xbdev->dev, "probed: /dev/%s once connected, backend %s (dom%u)\n",
		 xd->name, xd->otherend, xd->backend_id);
	return 0;

fail:
	kfree(xd->fe_watch.node);
	kfree(xd->nodename);
	kfree(xd->otherend);
	mutex_destroy(&xd->lock);
	kfree(xd);
	return err;
}

/* unbind or rmmod; open files keep xd alive and see their channel dead */
static void xgpu_remove(struct xenbus_device *xbdev)
{
	struct xgpu_dev *xd = dev_get_drvdata(&xbdev->dev);

	/* no lock held (see Locking); a queued recover finds us unbound */
	if (xd->fe_watching) {
		unregister_xenbus_watch(&xd->fe_watch);
		xd->fe_watching = false;
	}
	kfree(xd->fe_watch.node);
	xd->fe_watch.node = NULL;
	mutex_lock(&xgpu_devs_lock);
	list_del_init(&xd->node);
	mutex_unlock(&xgpu_devs_lock);

	mutex_lock(&xd->lock);
	xd->removed = true;
	xgpu_dev_down(xd);
	mutex_unlock(&xd->lock);

	if (xd->misc_registered) {
		misc_deregister(&xd->misc);
		xd->misc_registered = false;
	}
	ida_free(&xgpu_ida, xd->index);
	xd->index = -1;
	xenbus_switch_state(xbdev, XenbusStateClosed);
	dev_info(&xbdev->dev, "removed\n");
	dev_set_drvdata(&xbdev->dev, NULL);
	kref_put(&xd->ref, xgpu_dev_release);
}

static const struct xenbus_device_id xgpu_ids[] = {
	{ XGPUIF_XEN_DEVTYPE },
	{ "" }
};

static struct xenbus_driver xgpu_driver = {
	.ids = xgpu_ids,
	.probe = xgpu_probe,
	.remove = xgpu_remove,
	.resume = xgpu_resume,
	.otherend_changed = xgpu_backend_changed,
	/* insmod must not wait for a backend that may not run yet */
	.not_essential = true,
};

static int __init xgpu_init(void)
{
	int err;

	/* grants and mmap both work in 4 KiB pages */
	BUILD_BUG_ON(PAGE_SIZE != XEN_PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_connect) != 208);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_wait) != 8);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_hostmem) != 32);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_hostmem_free) != 8);

	if (!xen_domain())
		return -ENODEV;
	/*
	 * Freezable: what a restore queues runs once the system is resumed
	 * and thawed, not beside the PM core still resuming irqs and
	 * devices (it unbinds and binds irqs, and probes).
	 */
	xgpu_wq = alloc_workqueue("xgpufront", WQ_FREEZABLE, 0);
	if (!xgpu_wq)
		return -ENOMEM;
	err = xgpu_canary_bind();
	if (err)
		pr_warn("no event channel to tell a restore from a cancelled suspend (%d): every suspend counts as a restore\n",
			err);
	xen_resume_notifier_register(&xgpu_resume_nb);
	err = xenbus_register_frontend(&xgpu_driver);
	if (err) {
		xen_resume_notifier_unregister(&xgpu_resume_nb);
		destroy_workqueue(xgpu_wq);
		xgpu_canary_free();
	}
	return err;
}

static void __exit xgpu_exit(void)
{
	xenbus_unregister_driver(&xgpu_driver);
	xen_resume_notifier_unregister(&xgpu_resume_nb);
	destroy_workqueue(xgpu_wq);	/* runs what is queued first */
	xgpu_canary_free();
	ida_destroy(&xgpu_ida);
}

module_init(xgpu_init);
module_exit(xgpu_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xgpu guest frontend: CUDA forwarding channels to a Dom0 backend (/dev/xgpu)");
MODULE_ALIAS("xen:" XGPUIF_XEN_DEVTYPE);
