/* SPDX-License-Identifier: MIT */
/*
 * xgpub_ctl.h: the daemon's control socket (xgpub_ctl.c), the server side
 * of xen-backend/include/xgpu_ctl.h.
 */
#ifndef XGPUB_CTL_H
#define XGPUB_CTL_H

#include <stddef.h>
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

/*
 * One request (n bytes at buf, not terminated; past XGPU_CTL_REQUEST_MAX
 * cut there) run, its whole reply written to r (initialized): what the
 * socket does after it checked the peer and read the request (fuzzed by
 * tests/fuzz/fuzz_ctl.c).
 */
struct xgpub_reply;
void xgpub_ctl_request(const char *buf, size_t n, struct xgpub_reply *r);

#endif /* XGPUB_CTL_H */
