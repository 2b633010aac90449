// SPDX-License-Identifier: MIT
/*
 * xgpub_ctl.c: the daemon's control socket, used by the `xgpu` CLI.
 *
 * A SOCK_SEQPACKET Unix socket, mode 0600 (root only: whoever talks to it
 * can change every guest's share).  The peer's credentials are checked
 * too (SO_PEERCRED uid 0 or the daemon's own uid).  One request is one
 * message: a command line of words separated by single spaces.  The reply
 * is one message of text lines:
 *   ok                          first line on success, then data lines
 *   error <why>                 the only line on failure
 * Data lines are "<record> key=value key=value ...", values without spaces
 * (names are sanitised).  Commands: `version`, `list`, `sched-credit`
 * (with or without `<guest> <weight> <cap>`, see xgpub_guests.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "xgpuif.h"
#include "xgpub_daemon.h"
#include "xgpub_ctl.h"
#include "xgpub_sched_glue.h"

#define MAX_REPLY (256u * 1024u)
#define MAX_CLIENTS 16

static int ctl_fd = -1;
static char ctl_path[108];

int xgpub_listen(const char *path, mode_t mode, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		xgpub_err("socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	/* a stale socket of a dead daemon may go; a live one may not */
	probe = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa,
				  sizeof(sa)) == 0) {
		xgpub_err("another xen-gpubackd already listens on %s", path);
		close(probe);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | flags, 0);
	/* no window in which the socket has looser permissions than mode */
	old = umask(0177);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, mode) < 0 || listen(fd, 64) < 0) {
		umask(old);
		xgpub_err("cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

int xgpub_ctl_open(const char *path)
{
	int fd = xgpub_listen(path, 0600, SOCK_NONBLOCK);

	if (fd < 0)
		return -1;
	snprintf(ctl_path, sizeof(ctl_path), "%s", path);
	ctl_fd = fd;
	return fd;
}

void xgpub_ctl_close(void)
{
	if (ctl_fd < 0)
		return;
	close(ctl_fd);
	unlink(ctl_path);
	ctl_fd = -1;
}

void xgpub_out_init(struct xgpub_out *o)
{
	o->len = 0;
	o->full = false;
	o->buf[0] = 0;
}

void xgpub_out(struct xgpub_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(o->buf) - o->len) {
		o->full = true;
		o->buf[o->len] = 0;
		return;
	}
	o->len += (size_t)n;
}

void xgpub_ctl_word(char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '=')
			*s = '_';
}

/* split `line` in place into at most max words */
static int split(char *line, char **argv, int max)
{
	int n = 0;

	for (char *p = strtok(line, " \t\n"); p && n < max;
	     p = strtok(NULL, " \t\n"))
		argv[n++] = p;
	return n;
}

static void handle(int fd)
{
	static struct xgpub_out o;
	char req[512], *argv[16];
	struct ucred cr;
	socklen_t crl = sizeof(cr);
	ssize_t n;
	int argc;

	xgpub_out_init(&o);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 ||
	    (cr.uid != 0 && cr.uid != geteuid())) {
		xgpub_out(&o, "error permission denied\n");
		goto reply;
	}
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 1000) <= 0) {
			xgpub_out(&o, "error no request\n");
			goto reply;
		}
	}
	n = recv(fd, req, sizeof(req) - 1, MSG_DONTWAIT);
	if (n <= 0) {
		xgpub_out(&o, "error no request\n");
		goto reply;
	}
	req[n] = 0;
	argc = split(req, argv, 16);
	if (argc == 0) {
		xgpub_out(&o, "error empty request\n");
	} else if (!strcmp(argv[0], "version") && argc == 1) {
		xgpub_out(&o, "ok\nversion protocol=%u\n", XGPUIF_VERSION);
	} else if (!strcmp(argv[0], "list") && argc == 1) {
		xgpub_out(&o, "ok\n");
		xgpub_guests_list(&o);
	} else if (!strcmp(argv[0], "sched-credit")) {
		xgpub_guests_sched_credit(&o, argc - 1, argv + 1);
	} else if (!strcmp(argv[0], "stats") && argc == 1) {
		xgpub_sched_stats(&o);
	} else if (!strcmp(argv[0], "vcpu")) {
		xgpub_vcpu_ctl(&o, argc - 1, argv + 1);
	} else {
		xgpub_out(&o, "error unknown command: %.64s\n", argv[0]);
	}
	if (o.full) {
		xgpub_out_init(&o);
		xgpub_out(&o, "error reply too long\n");
	}
reply:
	(void)!send(fd, o.buf, o.len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void xgpub_ctl_accept(void)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		int fd = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		handle(fd);
		close(fd);
	}
}
