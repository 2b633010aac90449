// SPDX-License-Identifier: MIT
/*
 * xgpu_xsdev.c: an xgpu device's xenstore nodes (xgpu_xsdev.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xen/io/xenbus.h>

#include "xgpuif.h"
#include "xgpu_xsdev.h"

void xgpu_xsdev_paths(struct xgpu_xsdev *d, unsigned int domid,
		      unsigned int devid)
{
	d->domid = domid;
	d->devid = devid;
	d->caps = NULL;
	d->ncaps = 0;
	snprintf(d->be, sizeof(d->be), "/local/domain/0/backend/%s/%u/%u",
		 XGPUIF_XEN_DEVTYPE, domid, devid);
	snprintf(d->fe, sizeof(d->fe), "/local/domain/%u/device/%s/%u",
		 domid, XGPUIF_XEN_DEVTYPE, devid);
}

static bool put(const struct xgpub_xs *ops, struct xs_handle *xs,
		xs_transaction_t t, const char *dir, const char *node,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static bool put(const struct xgpub_xs *ops, struct xs_handle *xs,
		xs_transaction_t t, const char *dir, const char *node,
		const char *fmt, ...)
{
	char path[256], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return ops->write(xs, t, path, val, (unsigned int)strlen(val));
}

/* the device's caps: caps/KEY = VALUE for each KEY=VALUE word */
static bool write_caps(const struct xgpub_xs *ops, struct xs_handle *xs,
		       xs_transaction_t t, const struct xgpu_xsdev *d)
{
	char dir[192], key[64];

	snprintf(dir, sizeof(dir), "%s/%s", d->be, XGPU_XSDEV_CAPS);
	for (int i = 0; i < d->ncaps; i++) {
		const char *eq = strchr(d->caps[i], '=');
		size_t n = eq ? (size_t)(eq - d->caps[i]) : 0;

		if (!n || n >= sizeof(key)) {
			errno = EINVAL;
			return false;
		}
		memcpy(key, d->caps[i], n);
		key[n] = 0;
		if (!put(ops, xs, t, dir, key, "%s", eq + 1))
			return false;
	}
	return true;
}

static bool write_dev(const struct xgpub_xs *ops, struct xs_handle *xs,
		      xs_transaction_t t, const struct xgpu_xsdev *d)
{
	/* backend: ours, readable by the guest; frontend: the guest's,
	 * readable by us (as libxl sets them) */
	struct xs_permissions bperm[2] = {
		{ .id = 0, .perms = XS_PERM_NONE },
		{ .id = d->domid, .perms = XS_PERM_READ },
	};
	struct xs_permissions fperm[2] = {
		{ .id = d->domid, .perms = XS_PERM_NONE },
		{ .id = 0, .perms = XS_PERM_READ },
	};

	return ops->mkdir(xs, t, d->be) &&
	       ops->set_permissions(xs, t, d->be, bperm, 2) &&
	       put(ops, xs, t, d->be, "frontend", "%s", d->fe) &&
	       put(ops, xs, t, d->be, "frontend-id", "%u", d->domid) &&
	       put(ops, xs, t, d->be, "online", "1") &&
	       put(ops, xs, t, d->be, "state", "%d",
		   XenbusStateInitialising) &&
	       ops->mkdir(xs, t, d->fe) &&
	       ops->set_permissions(xs, t, d->fe, fperm, 2) &&
	       put(ops, xs, t, d->fe, "backend", "%s", d->be) &&
	       put(ops, xs, t, d->fe, "backend-id", "0") &&
	       put(ops, xs, t, d->fe, "state", "%d", XenbusStateInitialising) &&
	       write_caps(ops, xs, t, d);
}

int xgpu_xsdev_create(const struct xgpub_xs *ops, struct xs_handle *xs,
		      const struct xgpu_xsdev *d)
{
	for (int tries = 0; tries < 10; tries++) {
		xs_transaction_t t = ops->transaction_start(xs);
		unsigned int len;
		void *v;

		if (t == XBT_NULL)
			return errno ? -errno : -EIO;
		v = ops->read(xs, t, d->be, &len);
		if (v) {
			free(v);
			ops->transaction_end(xs, t, true);
			return -EEXIST;
		}
		if (!write_dev(ops, xs, t, d)) {
			int e = errno ? errno : EIO;

			ops->transaction_end(xs, t, true);
			return -e;
		}
		if (ops->transaction_end(xs, t, false))
			return 0;
		if (errno != EAGAIN)
			return errno ? -errno : -EIO;
	}
	return -EAGAIN;
}

void xgpu_xsdev_close(const struct xgpub_xs *ops, struct xs_handle *xs,
		      const struct xgpu_xsdev *d)
{
	put(ops, xs, XBT_NULL, d->be, "online", "0");
	put(ops, xs, XBT_NULL, d->be, "state", "%d", XenbusStateClosing);
}

void xgpu_xsdev_remove(const struct xgpub_xs *ops, struct xs_handle *xs,
		       const struct xgpu_xsdev *d)
{
	ops->rm(xs, XBT_NULL, d->fe);
	ops->rm(xs, XBT_NULL, d->be);
}
