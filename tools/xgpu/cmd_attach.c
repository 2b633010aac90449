// SPDX-License-Identifier: MIT
/*
 * cmd_attach.c: `xgpu attach` and `xgpu detach`, which give a domain an
 * xgpu device or take it away by writing xenstore as a toolstack would;
 * the kernel's xen-backend bus then runs the hotplug script.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>
#include <xen/io/xenbus.h>

#include "xgpuif.h"
#include "ctl.h"
#include "subcommands.h"

static int find_domid(struct xs_handle *xs, const char *dom, unsigned int *out)
{
	char **ents, *end;
	unsigned int n = 0;
	unsigned long v = strtoul(dom, &end, 10);

	if (*dom && !*end) {
		*out = (unsigned int)v;
		return 0;
	}
	ents = xs_directory(xs, XBT_NULL, "/local/domain", &n);
	for (unsigned int i = 0; ents && i < n; i++) {
		char path[64], *name;
		unsigned int len;

		snprintf(path, sizeof(path), "/local/domain/%s/name", ents[i]);
		name = xs_read(xs, XBT_NULL, path, &len);
		if (name && !strcmp(name, dom)) {
			*out = (unsigned int)strtoul(ents[i], NULL, 10);
			free(name);
			free(ents);
			return 0;
		}
		free(name);
	}
	free(ents);
	return -1;
}

static bool xs_put(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		   const char *node, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static bool xs_put(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		   const char *node, const char *fmt, ...)
{
	char path[256], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_write(xs, t, path, val, strlen(val));
}

static struct xs_handle *xs_or_die(void)
{
	struct xs_handle *xs = xs_open(0);

	if (!xs) {
		fprintf(stderr, "xgpu: cannot connect to xenstore: %s (run "
			"this in Dom0 as root)\n", strerror(errno));
		exit(XGPU_EXIT_FAIL);
	}
	return xs;
}

/* an xgpu device: DOM [DEVID] of the command line, and its two
 * xenstore directories */
struct dev {
	struct xs_handle *xs;
	unsigned int domid, devid;
	char be[128], fe[128];
};

/* 0, or the exit status (message printed) */
static int dev_open(struct dev *d, int argc, char **argv)
{
	if (argc < 2 || argc > 3)
		return XGPU_EXIT_USAGE;
	d->devid = 0;
	if (argc == 3) {
		char *end = NULL;
		unsigned long v = strtoul(argv[2], &end, 10);

		if (!*argv[2] || *end || *argv[2] == '-' || v > 255) {
			fprintf(stderr, "xgpu %s: DEVID: '%s' is not a whole "
				"number from 0 to 255\n", argv[0], argv[2]);
			return XGPU_EXIT_USAGE;
		}
		d->devid = (unsigned int)v;
	}
	d->xs = xs_or_die();
	/* Dom0 serves the device: it cannot be its guest */
	if (find_domid(d->xs, argv[1], &d->domid) ||
	    (d->domid == 0 && !strcmp(argv[0], "attach"))) {
		fprintf(stderr, "xgpu: no such domain: %s\n", argv[1]);
		xs_close(d->xs);
		return XGPU_EXIT_FAIL;
	}
	snprintf(d->be, sizeof(d->be), "/local/domain/0/backend/%s/%u/%u",
		 XGPUIF_XEN_DEVTYPE, d->domid, d->devid);
	snprintf(d->fe, sizeof(d->fe), "/local/domain/%u/device/%s/%u",
		 d->domid, XGPUIF_XEN_DEVTYPE, d->devid);
	return 0;
}

static long xs_long(struct xs_handle *xs, const char *dir, const char *node)
{
	char path[256], *v;
	unsigned int len;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	v = xs_read(xs, XBT_NULL, path, &len);
	if (!v)
		return -1;
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

/* both directories in one transaction: true, or false with errno set */
static bool dev_write(const struct dev *d, xs_transaction_t t)
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
	struct xs_handle *xs = d->xs;

	return xs_mkdir(xs, t, d->be) &&
	       xs_set_permissions(xs, t, d->be, bperm, 2) &&
	       xs_put(xs, t, d->be, "frontend", "%s", d->fe) &&
	       xs_put(xs, t, d->be, "frontend-id", "%u", d->domid) &&
	       xs_put(xs, t, d->be, "online", "1") &&
	       xs_put(xs, t, d->be, "state", "%d", XenbusStateInitialising) &&
	       xs_mkdir(xs, t, d->fe) &&
	       xs_set_permissions(xs, t, d->fe, fperm, 2) &&
	       xs_put(xs, t, d->fe, "backend", "%s", d->be) &&
	       xs_put(xs, t, d->fe, "backend-id", "0") &&
	       xs_put(xs, t, d->fe, "state", "%d", XenbusStateInitialising);
}

int cmd_attach(int argc, char **argv)
{
	struct dev d;
	int rc = dev_open(&d, argc, argv);
	unsigned int len;
	char *v;

	if (rc)
		return rc;
	rc = XGPU_EXIT_FAIL;
	v = xs_read(d.xs, XBT_NULL, d.be, &len);
	if (v) {
		free(v);
		fprintf(stderr, "xgpu: domain %u already has xgpu device %u\n",
			d.domid, d.devid);
		goto out;
	}
	for (int tries = 0; tries < 10; tries++) {
		xs_transaction_t t = xs_transaction_start(d.xs);

		if (t == XBT_NULL)
			break;
		if (!dev_write(&d, t)) {
			int e = errno;

			xs_transaction_end(d.xs, t, true);
			fprintf(stderr, "xgpu: cannot write xenstore: %s\n",
				strerror(e));
			goto out;
		}
		if (xs_transaction_end(d.xs, t, false)) {
			printf("domain %u: xgpu device %u attached\n", d.domid,
			       d.devid);
			rc = 0;
			goto out;
		}
		if (errno != EAGAIN)
			break;
	}
	fprintf(stderr, "xgpu: xenstore transaction failed: %s\n",
		strerror(errno));
out:
	xs_close(d.xs);
	return rc;
}

int cmd_detach(int argc, char **argv)
{
	struct dev d;
	int rc = dev_open(&d, argc, argv);
	long st;

	if (rc)
		return rc;
	if (xs_long(d.xs, d.be, "frontend-id") < 0) {
		fprintf(stderr, "xgpu: domain %u has no xgpu device %u\n",
			d.domid, d.devid);
		xs_close(d.xs);
		return XGPU_EXIT_FAIL;
	}
	/* as the toolstack does: ask the frontend to close, give it time */
	xs_put(d.xs, XBT_NULL, d.be, "online", "0");
	xs_put(d.xs, XBT_NULL, d.be, "state", "%d", XenbusStateClosing);
	for (int i = 0; i < 50; i++) {
		st = xs_long(d.xs, d.fe, "state");
		if (st < 0 || st == XenbusStateClosed ||
		    st == XenbusStateInitialising)
			break;
		usleep(100000);
	}
	xs_rm(d.xs, XBT_NULL, d.fe);
	xs_rm(d.xs, XBT_NULL, d.be);
	printf("domain %u: xgpu device %u detached\n", d.domid, d.devid);
	xs_close(d.xs);
	return 0;
}
