// SPDX-License-Identifier: GPL-2.0-only
/*
 * xen-gpufront: the xenbus device (handshake, states, /dev/xgpu
 * registration), shared helpers and module entry points.
 * Overview, lifetimes and locking: xgpufront.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xgpufront.h"

unsigned int xgpu_max_hostmem_mb = 1024;
module_param_named(max_hostmem_mb, xgpu_max_hostmem_mb, uint, 0644);
MODULE_PARM_DESC(max_hostmem_mb,
		 "Host memory (HOSTMEM_ALLOC) one open file may hold, MiB (default 1024)");

unsigned int xgpu_connect_timeout_ms = 10000;
module_param_named(connect_timeout_ms, xgpu_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "How long CONNECT waits for the backend, ms (default 10000)");

static DEFINE_IDA(xgpu_ida);

/*
 * End a xenstore transaction: abort it when err says a write failed,
 * commit it otherwise.  Returns err, or the commit's result (-EAGAIN: the
 * caller starts again).
 */
int xgpu_xs_end(struct xenbus_transaction t, int err)
{
	if (err) {
		xenbus_transaction_end(t, 1);
		return err;
	}
	return xenbus_transaction_end(t, 0);
}

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

/* strict unsigned read: -ENOENT (or another read error) or -EINVAL */
int xgpu_read_uint(const char *dir, const char *node, unsigned int *val)
{
	char *s;
	int err;

	s = xenbus_read(XBT_NIL, dir, node, NULL);
	if (IS_ERR(s))
		return PTR_ERR(s);
	err = kstrtouint(s, 10, val);
	kfree(s);
	return err ? -EINVAL : 0;
}

/* printable ASCII only; '/' too unless slash_ok */
void xgpu_sanitise(char *dst, size_t dstsz, const char *src, size_t srclen,
		   bool slash_ok)
{
	size_t i, n = 0;

	for (i = 0; i < srclen && src[i] && n + 1 < dstsz; i++) {
		char ch = src[i];

		if (ch < 0x20 || ch > 0x7e || (ch == '/' && !slash_ok))
			ch = '_';
		dst[n++] = ch;
	}
	dst[n] = '\0';
}

/* xenstore and grant-table errors, as the UAPI names them */
int xgpu_xs_errno(int err)
{
	switch (err) {
	case -ENOMEM:
	case -ENOSPC:
	case -EINTR:
		return err;
	case -EDQUOT:
	case -E2BIG:
		return -ENOSPC;		/* xenstore quota */
	default:
		return -EIO;
	}
}

/* ------------------------------------------------------------------ */
/* xenbus device                                                      */

/* the backend went away: every channel is dead, its directory removed */
static void xgpu_dev_down(struct xgpu_dev *xd)
{
	struct xgpu_chan *c;

	lockdep_assert_held(&xd->lock);
	xd->connected = false;
	list_for_each_entry(c, &xd->channels, node) {
		if (c->detached)
			continue;
		if (c->published)
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
	xd->backend_id = xbdev->otherend_id;
	xd->nodename = kstrdup(xbdev->nodename, GFP_KERNEL);
	xd->otherend = kstrdup(xbdev->otherend, GFP_KERNEL);
	err = -ENOMEM;
	if (!xd->nodename || !xd->otherend)
		goto fail;
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
	dev_info(&xbdev->dev, "probed: /dev/%s once connected, backend %s (dom%u)\n",
		 xd->name, xd->otherend, xd->backend_id);
	return 0;

fail:
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
	.otherend_changed = xgpu_backend_changed,
	/* insmod must not wait for a backend that may not run yet */
	.not_essential = true,
};

static int __init xgpu_init(void)
{
	/* grants and mmap both work in 4 KiB pages */
	BUILD_BUG_ON(PAGE_SIZE != XEN_PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_connect) != 208);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_wait) != 8);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_hostmem) != 32);
	BUILD_BUG_ON(sizeof(struct xgpu_ioc_hostmem_free) != 8);

	if (!xen_domain())
		return -ENODEV;
	return xenbus_register_frontend(&xgpu_driver);
}

static void __exit xgpu_exit(void)
{
	xenbus_unregister_driver(&xgpu_driver);
	ida_destroy(&xgpu_ida);
}

module_init(xgpu_init);
module_exit(xgpu_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xgpu guest frontend: CUDA forwarding channels to a Dom0 backend (/dev/xgpu)");
MODULE_ALIAS("xen:" XGPUIF_XEN_DEVTYPE);
