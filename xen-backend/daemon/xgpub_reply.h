/* SPDX-License-Identifier: MIT */
/*
 * xgpub_reply.h: a control reply being written (xgpub_reply.c), shared by
 * the control commands, the guest table and the scheduler glue.  The
 * grammar is xgpu_ctl.h's.
 */
#ifndef XGPUB_REPLY_H
#define XGPUB_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "xgpu_ctl.h"

struct xgpub_reply {
	size_t len;
	bool full;		/* something did not fit: the reply is lost */
	char buf[XGPU_CTL_REPLY_MAX];
};

void xgpub_reply_init(struct xgpub_reply *r);
/* append; once something does not fit, nothing more is */
void xgpub_reply(struct xgpub_reply *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* make s one word of a reply: blanks, '=' and non-ASCII become '_' */
void xgpub_reply_word(char *s);

#endif /* XGPUB_REPLY_H */
