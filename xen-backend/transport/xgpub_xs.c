// SPDX-License-Identifier: MIT
/*
 * xgpub_xs.c: which xenstore client library the Xen transport calls
 * (xgpub_xs.h explains why there are two).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_transport.h"
#include "xgpub_xs.h"
#include "xgpub_xs_parse.h"

#define XS_SONAME "libxenstore.so.4"

/* the library's functions we call: field f of struct xgpub_xs is xs_<f> */
#define XS_FUNCTIONS(X)							\
	X(open) X(close) X(directory) X(read) X(write) X(rm) X(watch)	\
	X(unwatch) X(fileno) X(check_watch) X(mkdir) X(set_permissions)	\
	X(transaction_start) X(transaction_end)

#define XS_STATIC(f) .f = xs_##f,
#define XS_SYMBOL(f) { "xs_" #f, offsetof(struct xgpub_xs, f) },

static const struct xgpub_xs xs_static = {
	.name = "static libxenstore",
	.watches = false,
	XS_FUNCTIONS(XS_STATIC)
};

/* where dlsym's answer for each of them goes in xs_shared */
static const struct {
	const char *sym;
	size_t off;
} xs_symbols[] = { XS_FUNCTIONS(XS_SYMBOL) };

static struct xgpub_xs xs_shared;

const struct xgpub_xs *xgpub_xs = &xs_static;

const struct xgpub_xs *xgpub_xs_load(char *why, size_t whylen)
{
	const char *env = getenv("XGPUB_XENSTORE");
	void *h;

	why[0] = 0;
	if (xgpub_xs != &xs_static)
		return xgpub_xs;
	if (env && !strcmp(env, "static")) {
		snprintf(why, whylen, "XGPUB_XENSTORE=static");
		return xgpub_xs;
	}
	/* RTLD_LOCAL: its symbols stay out of the global scope */
	h = dlopen(XS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		snprintf(why, whylen, "%s", e ? e : "cannot load " XS_SONAME);
		return xgpub_xs;
	}
	for (size_t i = 0; i < sizeof(xs_symbols) / sizeof(xs_symbols[0]);
	     i++) {
		void *p = dlsym(h, xs_symbols[i].sym);

		if (!p) {
			snprintf(why, whylen, "%s has no %s", XS_SONAME,
				 xs_symbols[i].sym);
			goto fail;
		}
		/* a function pointer from dlsym (POSIX allows it) */
		memcpy((char *)&xs_shared + xs_symbols[i].off, &p, sizeof(p));
	}
	/*
	 * Our executable exports no xs_*: were that to change, the library's
	 * own calls (xs_read from xs_directory, ...) would land in the static
	 * copy, whose handles are laid out differently.
	 */
	if (dlsym(RTLD_DEFAULT, "xs_open")) {
		snprintf(why, whylen, "xs_open is exported by the executable");
		goto fail;
	}
	xs_shared.name = XS_SONAME;
	xs_shared.watches = true;
	xgpub_xs = &xs_shared;
	return xgpub_xs;
fail:
	dlclose(h);
	return xgpub_xs;
}

/*
 * Is the domain still there?  Its /local/domain/<id> directory, which the
 * toolstack removes when it destroys the domain.  (XS_IS_DOMAIN_INTRODUCED
 * does not answer through every xenstore transport: the nested test's
 * Dom0 refused it, as it refused watches.)
 */
bool xgpub_xen_dom_alive(struct xs_handle *xs, unsigned int domid)
{
	char path[48], **e;
	unsigned int n = 0;

	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	e = xgpub_xs->directory(xs, XBT_NULL, path, &n);
	if (!e)
		return false;
	free(e);
	return true;
}

char *xgpub_xs_read_node(struct xs_handle *xs, const char *dir,
			 const char *node)
{
	char path[256];
	unsigned int len;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xgpub_xs->read(xs, XBT_NULL, path, &len);
}

char *xgpub_xs_read_text(struct xs_handle *xs, const char *dir,
			 const char *node)
{
	char *v = xgpub_xs_read_node(xs, dir, node);

	xgpub_xs_printable(v);
	return v;
}

bool xgpub_xs_vprintf(struct xs_handle *xs, const char *dir,
		      const char *node, const char *fmt, va_list ap)
{
	char path[256], val[160];

	vsnprintf(val, sizeof(val), fmt, ap);
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xgpub_xs->write(xs, XBT_NULL, path, val, strlen(val));
}
