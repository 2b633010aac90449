// SPDX-License-Identifier: MIT
/*
 * xgpub_xs.c: which xenstore client library the Xen transport calls
 * (xgpub_xs.h explains why there are two).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_transport.h"
#include "xgpub_xs.h"

#define XS_SONAME "libxenstore.so.4"

static const struct xgpub_xs xs_static = {
	.name = "static libxenstore",
	.watches = false,
	.open = xs_open,
	.close = xs_close,
	.directory = xs_directory,
	.read = xs_read,
	.write = xs_write,
	.rm = xs_rm,
	.watch = xs_watch,
	.unwatch = xs_unwatch,
	.fileno = xs_fileno,
	.check_watch = xs_check_watch,
};

static struct xgpub_xs xs_shared;

const struct xgpub_xs *xgpub_xs = &xs_static;

/* dlsym into a function pointer (POSIX allows the conversion) */
#define SYM(field, sym)							\
	do {								\
		void *p_ = dlsym(h, #sym);				\
		if (!p_) {						\
			snprintf(why, whylen, "%s has no %s", XS_SONAME,	\
				 #sym);					\
			goto fail;					\
		}							\
		memcpy(&xs_shared.field, &p_, sizeof(p_));		\
	} while (0)

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
	SYM(open, xs_open);
	SYM(close, xs_close);
	SYM(directory, xs_directory);
	SYM(read, xs_read);
	SYM(write, xs_write);
	SYM(rm, xs_rm);
	SYM(watch, xs_watch);
	SYM(unwatch, xs_unwatch);
	SYM(fileno, xs_fileno);
	SYM(check_watch, xs_check_watch);
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
