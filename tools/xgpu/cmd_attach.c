// SPDX-License-Identifier: MIT
/*
 * cmd_attach.c: `xgpu attach` and `xgpu detach`, which give a domain an
 * xgpu device or take it away by writing xenstore as a toolstack would
 * (the nodes: xen-backend/common/xgpu_xsdev.c, which the daemon also
 * writes for the rules of xgpu.conf, both through xgpub_xs: the static
 * libxenstore's table, xen-backend/transport/xgpub_xs.c); the kernel's
 * xen-backend bus then runs the hotplug script.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>
#include <xen/io/xenbus.h>

#include "xgpuif.h"
#include "xgpu_rules.h"
#include "xgpu_xsdev.h"
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
	struct xgpu_xsdev dev;
};

/* 0, or the exit status (message printed) */
static int dev_open(struct dev *d, int argc, char **argv)
{
	unsigned int domid, devid = 0;

	if (argc < 2 || argc > 3)
		return ctl_usage_err(argv[0], "needs DOM and at most a DEVID");
	if (argc == 3) {
		char *end = NULL;
		unsigned long v = strtoul(argv[2], &end, 10);

		if (!*argv[2] || *end || *argv[2] == '-' || v > 255) {
			fprintf(stderr, "xgpu %s: DEVID: '%s' is not a whole "
				"number from 0 to 255\n", argv[0], argv[2]);
			return XGPU_EXIT_USAGE;
		}
		devid = (unsigned int)v;
	}
	d->xs = xs_or_die();
	/* Dom0 serves the device: it cannot be its guest */
	if (find_domid(d->xs, argv[1], &domid) ||
	    (domid == 0 && !strcmp(argv[0], "attach"))) {
		fprintf(stderr, "xgpu: no such domain: %s\n", argv[1]);
		xs_close(d->xs);
		return XGPU_EXIT_FAIL;
	}
	xgpu_xsdev_paths(&d->dev, domid, devid);
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

/*
 * The KEY=VALUE words at the end of attach's arguments: the device's caps
 * (quota-mb, pinned-mb, images-mb, channels, xs-looks, grant-mb, checked by xgpu.conf's own
 * parser), written under its backend's caps/.  The number of words
 * before them, or -1 (message printed).
 */
static int caps_words(int argc, char **argv)
{
	struct xgpu_rule got;
	char why[256];
	int n = argc;

	while (n > 1 && strchr(argv[n - 1], '='))
		n--;
	memset(&got, 0, sizeof(got));
	for (int i = n; i < argc; i++) {
		if (xgpu_rules_setting(&got, argv[i], why, sizeof(why))) {
			fprintf(stderr, "xgpu attach: %s\n",
				why + strspn(why, "0: "));
			return -1;
		}
	}
	if (got.has & ~(unsigned int)XGPU_RULE_CAPS) {
		fprintf(stderr, "xgpu attach: a device's caps are quota-mb, "
			"pinned-mb, images-mb, channels, xs-looks and "
			"grant-mb (the others: xgpu.conf, xgpu "
			"sched-credit)\n");
		return -1;
	}
	return n;
}

int cmd_attach(int argc, char **argv)
{
	struct dev d;
	int n = caps_words(argc, argv), rc;

	if (n < 0)
		return XGPU_EXIT_USAGE;
	rc = dev_open(&d, n, argv);
	if (rc)
		return rc;
	d.dev.caps = argv + n;
	d.dev.ncaps = argc - n;
	rc = xgpu_xsdev_create(xgpub_xs, d.xs, &d.dev);
	if (rc == -EEXIST) {
		fprintf(stderr, "xgpu: domain %u already has xgpu device %u\n",
			d.dev.domid, d.dev.devid);
		rc = XGPU_EXIT_FAIL;
	} else if (rc) {
		fprintf(stderr, "xgpu: cannot write xenstore: %s\n",
			strerror(-rc));
		rc = XGPU_EXIT_FAIL;
	} else {
		printf("domain %u: xgpu device %u attached%s\n", d.dev.domid,
		       d.dev.devid, d.dev.ncaps ? " with its caps" : "");
	}
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
	if (xs_long(d.xs, d.dev.be, "frontend-id") < 0) {
		fprintf(stderr, "xgpu: domain %u has no xgpu device %u\n",
			d.dev.domid, d.dev.devid);
		xs_close(d.xs);
		return XGPU_EXIT_FAIL;
	}
	/* as the toolstack does: ask the frontend to close, give it time */
	xgpu_xsdev_close(xgpub_xs, d.xs, &d.dev);
	for (int i = 0; i < 50; i++) {
		st = xs_long(d.xs, d.dev.fe, "state");
		if (st < 0 || st == XenbusStateClosed ||
		    st == XenbusStateInitialising)
			break;
		usleep(100000);
	}
	xgpu_xsdev_remove(xgpub_xs, d.xs, &d.dev);
	printf("domain %u: xgpu device %u detached\n", d.dev.domid,
	       d.dev.devid);
	xs_close(d.xs);
	return 0;
}
