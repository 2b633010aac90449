/* SPDX-License-Identifier: MIT */
/*
 * xgpub_ctl.h: the daemon's control socket (xgpub_ctl.c), the server side
 * of xen-backend/include/xgpu_ctl.h.
 */
#ifndef XGPUB_CTL_H
#define XGPUB_CTL_H

#include <sys/types.h>

/*
 * A listening SOCK_SEQPACKET Unix socket at path with permissions mode
 * (flags: more SOCK_* type flags); a stale socket is replaced, a live
 * daemon's is not.  The fd, or -1 (logged).
 */
int xgpub_listen(const char *path, mode_t mode, int flags);
/* the listening socket (root only); its fd or -1 */
int xgpub_ctl_open(const char *path);
/* the listening socket is readable */
void xgpub_ctl_accept(void);
void xgpub_ctl_close(void);

#endif /* XGPUB_CTL_H */
