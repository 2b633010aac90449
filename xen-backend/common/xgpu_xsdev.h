/* SPDX-License-Identifier: MIT */
/*
 * xgpu_xsdev.h: an xgpu device's xenstore nodes, written as a toolstack
 * writes them: by `xgpu attach`/`xgpu detach` and by xen-gpubackd when a
 * rule of xgpu.conf gives a new domain a device (xgpu_xsdev.c, linked by
 * both).  The calls go through a table of the xenstore library's
 * functions (xgpub_xs.h): the daemon's may be the shared library's.
 *
 *   backend  /local/domain/0/backend/xgpu/<domid>/<devid>:
 *            frontend, frontend-id, online=1, state=Initialising;
 *            owned by Dom0, readable by the domain
 *   frontend /local/domain/<domid>/device/xgpu/<devid>:
 *            backend, backend-id=0, state=Initialising;
 *            owned by the domain, readable by Dom0
 *   caps     the backend's caps/<KEY> = VALUE (quota-mb, pinned-mb,
 *            images-mb, channels, xs-looks, grant-mb), the device's own caps (`xgpu attach
 *            DOM quota-mb=N`, or an administrator's xenstore-write):
 *            Dom0's, which the domain can read and not write
 */
#ifndef XGPU_XSDEV_H
#define XGPU_XSDEV_H

#include "xgpub_xs.h"

#define XGPU_XSDEV_CAPS	"caps"	/* the backend's folder of caps */

struct xgpu_xsdev {
	unsigned int domid, devid;
	char be[128], fe[128];
	/* KEY=VALUE words (checked by the caller) written under caps/ in
	 * the same transaction, or none */
	char *const *caps;
	int ncaps;
};

/* d's paths for device devid of domain domid, no caps */
void xgpu_xsdev_paths(struct xgpu_xsdev *d, unsigned int domid,
		      unsigned int devid);
/*
 * Both directories in one transaction (retried while xenstore says
 * EAGAIN).  0; -EEXIST when the backend directory is there already;
 * -errno when xenstore refused.
 */
int xgpu_xsdev_create(const struct xgpub_xs *ops, struct xs_handle *xs,
		      const struct xgpu_xsdev *d);
/* ask the frontend to close: online=0, state=Closing */
void xgpu_xsdev_close(const struct xgpub_xs *ops, struct xs_handle *xs,
		      const struct xgpu_xsdev *d);
/* remove both directories */
void xgpu_xsdev_remove(const struct xgpub_xs *ops, struct xs_handle *xs,
		       const struct xgpu_xsdev *d);

#endif /* XGPU_XSDEV_H */
