/* SPDX-License-Identifier: MIT */
/*
 * xgpub_xs.h: the xenstore client library the Xen transport calls.
 *
 * The daemon links Debian's static libxenstore.a so that it also runs on
 * hosts without Xen's libraries (--local only).  That build has no reader
 * thread: a watch event that arrives before a reply is taken for the
 * reply, so watches cannot be mixed with requests on one handle.  Where
 * Xen's tools are installed, the shared, threaded libxenstore.so.4 is
 * there too: xgpub_xs_load() dlopens it and, from then on, every call
 * goes through its functions.  Handles must only be used with the table
 * that opened them; the table is chosen once, before any handle exists.
 *
 * The two copies never meet: the executable exports no xs_* symbol (the
 * linker only exports what a shared library linked at build time needs,
 * and XEN_LIBS excludes the static archives from export), so the shared
 * library's internal calls bind to itself.
 */
#ifndef XGPUB_XS_H
#define XGPUB_XS_H

#include <stdarg.h>
#include <stdbool.h>
#include <xenstore.h>

struct xgpub_xs {
	const char *name;	/* for logs */
	bool watches;		/* a reader thread: watches work */
	struct xs_handle *(*open)(unsigned long flags);
	void (*close)(struct xs_handle *h);
	char **(*directory)(struct xs_handle *h, xs_transaction_t t,
			    const char *path, unsigned int *num);
	void *(*read)(struct xs_handle *h, xs_transaction_t t,
		      const char *path, unsigned int *len);
	bool (*write)(struct xs_handle *h, xs_transaction_t t,
		      const char *path, const void *data, unsigned int len);
	bool (*rm)(struct xs_handle *h, xs_transaction_t t, const char *path);
	bool (*watch)(struct xs_handle *h, const char *path,
		      const char *token);
	bool (*unwatch)(struct xs_handle *h, const char *path,
			const char *token);
	int (*fileno)(struct xs_handle *h);
	char **(*check_watch)(struct xs_handle *h);
	/* what a device's creation needs (common/xgpu_xsdev.c) */
	bool (*mkdir)(struct xs_handle *h, xs_transaction_t t,
		      const char *path);
	bool (*set_permissions)(struct xs_handle *h, xs_transaction_t t,
				const char *path, struct xs_permissions *perms,
				unsigned int num_perms);
	xs_transaction_t (*transaction_start)(struct xs_handle *h);
	bool (*transaction_end)(struct xs_handle *h, xs_transaction_t t,
				bool abort);
};

/* the library in use: the static one until xgpub_xs_load() found more */
extern const struct xgpub_xs *xgpub_xs;

/*
 * Use libxenstore.so.4 if it loads (and XGPUB_XENSTORE is not "static");
 * once, from the daemon's main thread, before the first handle is opened
 * and before workers are forked (they inherit the choice).  Returns the
 * table; *why says why the shared library is not used (else "").
 */
const struct xgpub_xs *xgpub_xs_load(char *why, size_t whylen);

/* dir/node (NUL-terminated), or NULL if absent; the caller frees it */
char *xgpub_xs_read_node(struct xs_handle *xs, const char *dir,
			 const char *node);
/*
 * The same for a string a guest wrote, to be logged or listed: every byte
 * outside printable ASCII becomes '?'.
 */
char *xgpub_xs_read_text(struct xs_handle *xs, const char *dir,
			 const char *node);
/* write fmt's text to dir/node, outside a transaction; false (errno set)
 * when xenstore refuses */
bool xgpub_xs_vprintf(struct xs_handle *xs, const char *dir,
		      const char *node, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif /* XGPUB_XS_H */
