/* SPDX-License-Identifier: MIT */
/*
 * xgpub_ctl.h: the control socket (xgpub_ctl.c) and the daemon's table of
 * guests with their scheduling settings (xgpub_guests.c).
 */
#ifndef XGPUB_CTL_H
#define XGPUB_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xgpub_out {
	size_t len;
	bool full;
	char buf[128 * 1024];
};

void xgpub_out_init(struct xgpub_out *o);
void xgpub_out(struct xgpub_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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

/* `list`: one "guest ..." line per guest */
/* make s one word of a reply (key=value pairs split on spaces):
 * blanks, '=' and non-ASCII become '_' */
void xgpub_ctl_word(char *s);
void xgpub_guests_list(struct xgpub_out *o);
/* `sched-credit [GUEST WEIGHT CAP]` (WEIGHT or CAP "-": unchanged) */
void xgpub_guests_sched_credit(struct xgpub_out *o, int argc, char **argv);
/* once a second: rates, shares */
void xgpub_guests_tick(uint64_t now_ns);

#endif /* XGPUB_CTL_H */
