// SPDX-License-Identifier: MIT
/*
 * fuzz_ctl.c: libFuzzer target of the daemon's control requests
 * (xen-backend/daemon/xgpub_ctl.c, protocol xen-backend/include/
 * xgpu_ctl.h): the input is one request as the socket reads it
 * (xgpub_ctl_request: words, the command table, each command's
 * arguments), run in a daemon whose GPU scheduler is on and which has no
 * guests.  The daemon's settings and VCPU coordinator state carry from
 * one input to the next, as from one request to the next.
 *
 * The reply must follow the grammar: text lines, the first "ok" or
 * "error <why>" (then the only line), records "<record> key=value ..."
 * whose values are single words (no blank, '=' or byte outside printable
 * ASCII), shorter than XGPU_CTL_REPLY_MAX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub.h"
#include "xgpub_ctl.h"
#include "xgpub_reply.h"
#include "xgpub_sched_glue.h"
#include "xgpub_vcpu_glue.h"

static struct xgpub_reply r;

static void check(int ok)
{
	if (!ok)
		abort();
}

/* a record's words after the first: key=value, value one clean word */
static void check_record(const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && line[i] != ' ')
		i++;
	while (i < len) {
		size_t w = ++i, eq = 0;

		while (i < len && line[i] != ' ') {
			unsigned char c = (unsigned char)line[i];

			check(c > 0x20 && c < 0x7f);
			if (c == '=') {
				check(!eq);
				eq = i;
			}
			i++;
		}
		check(eq > w);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	xgpub_log_init("fuzz", false, -1);
	xgpub_sched_start("credit");
	xgpub_vcpu_start(false, false, 0, 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p, *nl;
	bool ok;

	xgpub_reply_init(&r);
	xgpub_ctl_request((const char *)data, size, &r);
	check(r.len > 0 && r.len < sizeof(r.buf) && !r.full);
	check(r.buf[r.len - 1] == '\n' && !memchr(r.buf, 0, r.len));
	ok = r.len >= 3 && !memcmp(r.buf, XGPU_CTL_OK "\n", 3);
	if (!ok) {
		check(!memcmp(r.buf, XGPU_CTL_ERROR " ", 6));
		check(memchr(r.buf, '\n', r.len) == r.buf + r.len - 1);
		return 0;
	}
	for (p = r.buf + 3; p < r.buf + r.len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(r.buf + r.len - p));
		check(nl != NULL);
		check_record(p, (size_t)(nl - p));
	}
	return 0;
}
