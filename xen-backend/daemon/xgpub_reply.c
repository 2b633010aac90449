// SPDX-License-Identifier: MIT
/*
 * xgpub_reply.c: a control reply being written.  Records are key=value
 * pairs split on spaces, so every value is made one word first.
 */
#include <stdarg.h>
#include <stdio.h>

#include "xgpub_reply.h"

void xgpub_reply_init(struct xgpub_reply *r)
{
	r->len = 0;
	r->full = false;
	r->buf[0] = 0;
}

void xgpub_reply(struct xgpub_reply *r, const char *fmt, ...)
{
	size_t room = sizeof(r->buf) - r->len;
	va_list ap;
	int n;

	if (r->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->len, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		r->full = true;
		r->buf[r->len] = 0;
		return;
	}
	r->len += (size_t)n;
}

void xgpub_reply_word(char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '=')
			*s = '_';
}
