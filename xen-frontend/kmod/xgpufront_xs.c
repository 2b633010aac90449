// SPDX-License-Identifier: GPL-2.0-only
/*
 * xen-gpufront: the xenstore helpers that the device (xgpufront_bus.c) and
 * its channels (xgpufront_chan.c) share, and how long a channel waits for
 * the backend.  Overview, lifetimes and locking: xgpufront.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xgpufront.h"

unsigned int xgpu_connect_timeout_ms = 10000;
module_param_named(connect_timeout_ms, xgpu_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "How long CONNECT waits for the backend, ms (default 10000)");

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
