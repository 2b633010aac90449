/* SPDX-License-Identifier: MIT */
/*
 * xs_fake.h: an xenstore in memory, behind the table of xenstore
 * functions the daemon calls (transport/xgpub_xs.h): nodes with values
 * and permissions, parents made on write, rm of a whole subtree,
 * transactions that always commit, no watches (the daemon then looks at
 * every poll).  Install it with xs_fake_install() before the Xen backend
 * starts (xgpub_xs_load then keeps it).  xs_fake_install_watching():
 * watches that always succeed, and events the test posts
 * (xs_fake_event), each at a path it names.
 */
#ifndef XS_FAKE_H
#define XS_FAKE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_xs.h"

#define XS_FAKE_NODES	512

static struct xs_fake_node {
	char *path, *val;
	unsigned int perm_owner, perm_read;	/* ids of the first two */
	int nperms;
} xs_fake[XS_FAKE_NODES];
static int xs_fake_writes;		/* writes, mkdirs and rms */
static bool xs_fake_refuse_mkdir;	/* mkdir fails with EACCES */

static struct xs_fake_node *xs_fake_find(const char *path)
{
	for (int i = 0; i < XS_FAKE_NODES; i++)
		if (xs_fake[i].path && !strcmp(xs_fake[i].path, path))
			return &xs_fake[i];
	return NULL;
}

static struct xs_fake_node *xs_fake_make(const char *path)
{
	struct xs_fake_node *n = xs_fake_find(path);
	char parent[256], *slash;

	if (n)
		return n;
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		xs_fake_make(parent);
	}
	for (int i = 0; i < XS_FAKE_NODES; i++) {
		if (xs_fake[i].path)
			continue;
		xs_fake[i].path = strdup(path);
		xs_fake[i].val = strdup("");
		return &xs_fake[i];
	}
	abort();
}

static struct xs_handle *xs_fake_open(unsigned long flags)
{
	static int h;

	(void)flags;
	return (struct xs_handle *)&h;
}

static void xs_fake_close(struct xs_handle *h)
{
	(void)h;
}

static char **xs_fake_directory(struct xs_handle *h, xs_transaction_t t,
				const char *path, unsigned int *num)
{
	size_t pl = strlen(path);
	char **v = calloc(XS_FAKE_NODES + 1, sizeof(char *));
	unsigned int n = 0;

	(void)h;
	(void)t;
	if (!xs_fake_find(path)) {
		free(v);
		errno = ENOENT;
		return NULL;
	}
	/* one block: the names after the pointers, as libxenstore gives */
	for (int i = 0; i < XS_FAKE_NODES; i++) {
		const char *p = xs_fake[i].path;

		if (p && !strncmp(p, path, pl) && p[pl] == '/' &&
		    !strchr(p + pl + 1, '/'))
			v[n++] = (char *)p + pl + 1;
	}
	{
		size_t sz = (n + 1) * sizeof(char *), off;
		char **out;

		off = sz;
		for (unsigned int i = 0; i < n; i++)
			sz += strlen(v[i]) + 1;
		out = malloc(sz);
		for (unsigned int i = 0; i < n; i++) {
			out[i] = (char *)out + off;
			strcpy(out[i], v[i]);
			off += strlen(v[i]) + 1;
		}
		out[n] = NULL;
		free(v);
		*num = n;
		return out;
	}
}

static void *xs_fake_read(struct xs_handle *h, xs_transaction_t t,
			  const char *path, unsigned int *len)
{
	struct xs_fake_node *n = xs_fake_find(path);

	(void)h;
	(void)t;
	if (!n) {
		errno = ENOENT;
		return NULL;
	}
	*len = (unsigned int)strlen(n->val);
	return strdup(n->val);
}

static bool xs_fake_write(struct xs_handle *h, xs_transaction_t t,
			  const char *path, const void *data, unsigned int len)
{
	struct xs_fake_node *n = xs_fake_make(path);

	(void)h;
	(void)t;
	free(n->val);
	n->val = strndup(data, len);
	xs_fake_writes++;
	return true;
}

static bool xs_fake_rm(struct xs_handle *h, xs_transaction_t t,
		       const char *path)
{
	size_t pl = strlen(path);

	(void)h;
	(void)t;
	xs_fake_writes++;
	for (int i = 0; i < XS_FAKE_NODES; i++) {
		const char *p = xs_fake[i].path;

		if (p && !strncmp(p, path, pl) && (!p[pl] || p[pl] == '/')) {
			free(xs_fake[i].path);
			free(xs_fake[i].val);
			memset(&xs_fake[i], 0, sizeof(xs_fake[i]));
		}
	}
	return true;
}

static bool xs_fake_mkdir(struct xs_handle *h, xs_transaction_t t,
			  const char *path)
{
	(void)h;
	(void)t;
	if (xs_fake_refuse_mkdir) {
		errno = EACCES;
		return false;
	}
	xs_fake_make(path);
	xs_fake_writes++;
	return true;
}

static bool xs_fake_set_permissions(struct xs_handle *h, xs_transaction_t t,
				    const char *path,
				    struct xs_permissions *perms,
				    unsigned int num)
{
	struct xs_fake_node *n = xs_fake_find(path);

	(void)h;
	(void)t;
	if (!n || num < 2) {
		errno = ENOENT;
		return false;
	}
	n->perm_owner = perms[0].id;
	n->perm_read = perms[1].perms == XS_PERM_READ ? perms[1].id : ~0u;
	n->nperms = (int)num;
	return true;
}

static xs_transaction_t xs_fake_tstart(struct xs_handle *h)
{
	(void)h;
	return 1;
}

static bool xs_fake_tend(struct xs_handle *h, xs_transaction_t t,
			 bool abort_it)
{
	(void)h;
	(void)t;
	(void)abort_it;
	return true;
}

static bool xs_fake_watch(struct xs_handle *h, const char *path,
			  const char *token)
{
	(void)h;
	(void)path;
	(void)token;
	errno = ENOSYS;
	return false;
}

static int xs_fake_fileno(struct xs_handle *h)
{
	(void)h;
	return -1;
}

static char **xs_fake_check_watch(struct xs_handle *h)
{
	(void)h;
	return NULL;
}

/* ---- the watching variant ---------------------------------------------- */

static int xs_fake_nevents;		/* posted, not yet taken */
static char xs_fake_event_path[128];

static void xs_fake_event(const char *path)
{
	snprintf(xs_fake_event_path, sizeof(xs_fake_event_path), "%s", path);
	xs_fake_nevents++;
}

static bool xs_fake_watch_ok(struct xs_handle *h, const char *path,
			     const char *token)
{
	(void)h;
	(void)path;
	(void)token;
	return true;
}

static int xs_fake_fileno_w(struct xs_handle *h)
{
	(void)h;
	return 0;	/* never polled by the tests */
}

/* an event as libxenstore gives it: { path, token } in one block */
static char **xs_fake_check_watch_w(struct xs_handle *h)
{
	size_t n = strlen(xs_fake_event_path) + 1;
	char **v;

	(void)h;
	if (!xs_fake_nevents)
		return NULL;
	v = malloc(2 * sizeof(char *) + n + 2);
	if (!v)
		return NULL;
	xs_fake_nevents--;
	v[0] = (char *)(v + 2);
	memcpy(v[0], xs_fake_event_path, n);
	v[1] = v[0] + n;
	strcpy(v[1], "t");
	return v;
}

static const struct xgpub_xs xs_fake_table = {
	.name = "fake xenstore",
	.watches = false,
	.open = xs_fake_open,
	.close = xs_fake_close,
	.directory = xs_fake_directory,
	.read = xs_fake_read,
	.write = xs_fake_write,
	.rm = xs_fake_rm,
	.watch = xs_fake_watch,
	.unwatch = xs_fake_watch,
	.fileno = xs_fake_fileno,
	.check_watch = xs_fake_check_watch,
	.mkdir = xs_fake_mkdir,
	.set_permissions = xs_fake_set_permissions,
	.transaction_start = xs_fake_tstart,
	.transaction_end = xs_fake_tend,
};

static void xs_fake_install(void)
{
	xgpub_xs = &xs_fake_table;
}

static void xs_fake_install_watching(void)
{
	static struct xgpub_xs t;

	t = xs_fake_table;
	t.name = "fake xenstore, watching";
	t.watches = true;
	t.watch = xs_fake_watch_ok;
	t.unwatch = xs_fake_watch_ok;
	t.fileno = xs_fake_fileno_w;
	t.check_watch = xs_fake_check_watch_w;
	xgpub_xs = &t;
	xs_fake_nevents = 0;
}

/* the value at path, or NULL */
static const char *xs_fake_get(const char *path)
{
	struct xs_fake_node *n = xs_fake_find(path);

	return n ? n->val : NULL;
}

static void xs_fake_put(const char *path, const char *val)
{
	xs_fake_write(NULL, 0, path, val, (unsigned int)strlen(val));
}

#endif /* XS_FAKE_H */
