// SPDX-License-Identifier: MIT
/*
 * xgpub_ctl.c: the daemon's control socket, used by the `xgpu` CLI.  The
 * protocol (socket, request and reply grammar, commands, records, ranges)
 * is xen-backend/include/xgpu_ctl.h's; this file serves it: it checks the
 * peer, reads one request, runs the command of the table below and sends
 * one reply.  Requests are served one at a time, in the daemon's event
 * loop.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "xgpuif.h"
#include "xgpub_config.h"
#include "xgpub_ctl.h"
#include "xgpub_guest.h"
#include "xgpub_reply.h"
#include "xgpub_sched_glue.h"
#include "xgpub_vcpu_glue.h"
#include "xgpuif_sock.h"

#define MAX_CLIENTS 16			/* served per wake-up */

static int ctl_fd = -1;
static char ctl_path[108];

/* create the folders above a socket path (/run/xgpu after a reboot) */
static void make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *p;

	snprintf(dir, sizeof(dir), "%s", path);
	if (!dir[0])
		return;
	for (p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			xgpub_err("cannot create %s: %s", dir, strerror(errno));
			return;
		}
		*p = '/';
	}
}

int xgpub_listen(const char *path, mode_t mode, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		xgpub_err("socket path too long: %s", path);
		return -1;
	}
	make_parent(path);
	strcpy(sa.sun_path, path);
	/* a stale socket of a dead daemon may go; a live one may not */
	probe = xgpuif_sock_connect(path);
	if (probe >= 0) {
		xgpub_err("another xen-gpubackd already listens on %s", path);
		close(probe);
		return -1;
	}
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

/* ---- the commands ------------------------------------------------------- */

static int cmd_version(struct xgpub_reply *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	xgpub_reply(r, XGPU_CTL_OK "\n" XGPU_CTL_REC_VERSION " protocol=%u\n",
		    XGPUIF_VERSION);
	return 0;
}

static int cmd_list(struct xgpub_reply *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	xgpub_guests_update();
	xgpub_reply(r, XGPU_CTL_OK "\n");
	xgpub_guests_list(r, xgpub_sched_view);
	return 0;
}

/* a setting as it enters: a number in lo..hi, or "-" (unchanged) */
static bool parse_setting(const char *s, uint32_t lo, uint32_t hi,
			  uint32_t *out)
{
	unsigned long v;
	char *end;

	if (!strcmp(s, XGPU_CTL_NONE))
		return true;
	v = strtoul(s, &end, 10);
	if (*s == '-' || *end || end == s || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int cmd_sched_credit(struct xgpub_reply *r, int argc, char **argv)
{
	char key[XGPU_CTL_KEY_LEN];
	uint32_t w, cap, lim;

	if (argc == 2)
		return -EINVAL;
	xgpub_guests_update();
	if (argc == 0) {
		xgpub_reply(r, XGPU_CTL_OK "\n");
		xgpub_guests_list_settings(r);
		return 0;
	}
	xgpub_guest_resolve(argv[0], key, sizeof(key));
	xgpub_guest_settings(key, &w, &cap, &lim);
	if (argc >= 3) {
		/* the one check of a weight and a cap */
		if (!parse_setting(argv[1], XGPU_CTL_WEIGHT_MIN,
				   XGPU_SCHED_WEIGHT_MAX, &w) ||
		    !parse_setting(argv[2], XGPU_CTL_CAP_NONE,
				   XGPU_SCHED_CAP_MAX, &cap)) {
			xgpub_reply(r, XGPU_CTL_ERROR " weight must be %u..%u "
				    "and cap %u..%u (percent of one GPU, %u: "
				    "none)\n", XGPU_CTL_WEIGHT_MIN,
				    XGPU_SCHED_WEIGHT_MAX, XGPU_CTL_CAP_NONE,
				    XGPU_SCHED_CAP_MAX, XGPU_CTL_CAP_NONE);
			return 0;
		}
		if (argc == 4 && !parse_setting(argv[3], 0, XGPU_CTL_LIMIT_MAX,
						&lim)) {
			xgpub_reply(r, XGPU_CTL_ERROR " GPU time limit must be "
				    "0..%u ms (0: the daemon's --gpu-limit-ms)\n",
				    XGPU_CTL_LIMIT_MAX);
			return 0;
		}
		if (lim && !xgpub_sched_enabled) {
			xgpub_reply(r, XGPU_CTL_ERROR " a GPU time limit needs "
				    "the GPU scheduler (--sched off)\n");
			return 0;
		}
		if (xgpub_guest_settings_set(key, w, cap, lim)) {
			xgpub_reply(r, XGPU_CTL_ERROR " too many settings\n");
			return 0;
		}
		xgpub_info("%s: weight %u, cap %u%%, GPU time limit %u ms",
			   key, w, cap, lim);
	}
	xgpub_reply(r, XGPU_CTL_OK "\n" XGPU_CTL_REC_SCHED " key=%s weight=%u "
		    "cap=%u limit_ms=%u\n", key, w, cap, lim);
	return 0;
}

/* the fields of rule u, "-" where it gives none, in the keys' order:
 * weight cap quota_mb limit_ms gpu pinned_mb images_mb channels xs_looks
 * grant_mb */
static void rule_fields(const struct xgpu_rule *u,
			char n[XGPU_RULE_NKEYS][16])
{
	for (unsigned int k = 0; k < XGPU_RULE_NKEYS; k++) {
		uint32_t v;

		if (xgpu_rule_value(u, k, &v))
			snprintf(n[k], sizeof(n[k]), "%u", v);
		else
			snprintf(n[k], sizeof(n[k]), "%s", XGPU_CTL_NONE);
	}
}

/*
 * config [reload | set NAME KEY=VALUE...]: the rules in force, after
 * reading the file again or giving a domain caps at run time
 */
static int cmd_config(struct xgpub_reply *r, int argc, char **argv)
{
	const struct xgpu_rules *rules;
	char err[512], n[XGPU_RULE_NKEYS][16];

	if (argc == 1 && strcmp(argv[0], XGPU_CTL_CONFIG_RELOAD))
		return -EINVAL;
	if (argc >= 2 && (strcmp(argv[0], XGPU_CTL_CONFIG_SET) || argc < 3))
		return -EINVAL;
	if (argc == 1 && xgpub_config_reload(err, sizeof(err))) {
		xgpub_reply(r, XGPU_CTL_ERROR " %s\n", err);
		return 0;
	}
	if (argc >= 3 && xgpub_config_caps_set(argv[1], argc - 2, argv + 2,
					       err, sizeof(err))) {
		xgpub_reply(r, XGPU_CTL_ERROR " %s\n", err);
		return 0;
	}
	/* a client's caps: its workers ask for them from now on */
	if (argc >= 3 && xgpub_config_client_key(argv[1]))
		xgpub_children_client_caps();
	rules = xgpub_config_rules();
	strncpy(err, xgpub_config_path(), sizeof(err) - 1);
	err[sizeof(err) - 1] = 0;
	xgpub_reply_word(err);
	xgpub_reply(r, XGPU_CTL_OK "\n" XGPU_CTL_REC_CONFIG " path=%s "
		    "rules=%d caps=%d\n", err, rules->n,
		    xgpub_config_caps_count());
	for (int i = 0; i < rules->n; i++) {
		const struct xgpu_rule *u = &rules->r[i];

		rule_fields(u, n);
		/* a pattern is printable ASCII without blanks; '=' is
		 * refused by the parser */
		xgpub_reply(r, XGPU_CTL_REC_RULE " line=%u pattern=%s "
			    "attach=%s weight=%s cap=%s quota_mb=%s "
			    "limit_ms=%s gpu=%s pinned_mb=%s images_mb=%s "
			    "channels=%s xs_looks=%s grant_mb=%s\n", u->line,
			    u->pattern, u->attach ? "yes" : "no", n[0], n[1],
			    n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9]);
	}
	for (int i = 0; i < xgpub_config_caps_count(); i++) {
		const struct xgpu_rule *u = xgpub_config_caps_at(i);

		rule_fields(u, n);
		/* a name checked by xgpub_config_caps_set: no blanks */
		xgpub_reply(r, XGPU_CTL_REC_CAPS " domain=%s quota_mb=%s "
			    "pinned_mb=%s images_mb=%s channels=%s "
			    "xs_looks=%s grant_mb=%s\n",
			    u->pattern, n[2], n[5], n[6], n[7], n[8], n[9]);
	}
	return 0;
}

/*
 * A command writes its whole reply, "error" lines included; it returns
 * -EINVAL, having written nothing, when its arguments do not fit `args`.
 */
struct ctl_cmd {
	const char *name;
	int min_args, max_args;
	int (*fn)(struct xgpub_reply *r, int argc, char **argv);
	const char *args;	/* one-line help: its arguments */
};

static const struct ctl_cmd ctl_cmds[] = {
	{ XGPU_CTL_CMD_VERSION, 0, 0, cmd_version, "" },
	{ XGPU_CTL_CMD_LIST, 0, 0, cmd_list, "" },
	{ XGPU_CTL_CMD_SCHED_CREDIT, 0, 4, cmd_sched_credit,
	  "[GUEST WEIGHT CAP [LIMIT_MS]]" },
	{ XGPU_CTL_CMD_STATS, 0, 0, xgpub_sched_stats, "" },
	{ XGPU_CTL_CMD_VCPU, 0, 2, xgpub_vcpu_ctl, "[on [PCT[:MS]] | off]" },
	{ XGPU_CTL_CMD_CONFIG, 0, 8, cmd_config,
	  "[" XGPU_CTL_CONFIG_RELOAD " | " XGPU_CTL_CONFIG_SET
	  " DOMAIN KEY=VALUE...]" },
};

static void dispatch(struct xgpub_reply *r, int argc, char **argv)
{
	const struct ctl_cmd *c = NULL;

	for (size_t i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (!strcmp(argv[0], ctl_cmds[i].name))
			c = &ctl_cmds[i];
	if (!c) {
		xgpub_reply(r, XGPU_CTL_ERROR " unknown command: %.64s\n",
			    argv[0]);
		return;
	}
	argc--;
	argv++;
	if (argc < c->min_args || argc > c->max_args ||
	    c->fn(r, argc, argv) == -EINVAL)
		xgpub_reply(r, XGPU_CTL_ERROR " usage: %s%s%s\n", c->name,
			    c->args[0] ? " " : "", c->args);
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

/*
 * poll() that a signal does not cut short: a worker exiting while the CLI
 * has connected but not yet sent its request must not turn the request
 * into "no request" (SIGCHLD interrupts the daemon's poll).
 */
static int wait_readable(struct pollfd *pfd, int timeout_ms)
{
	uint64_t end = xgpub_now_ns() + (uint64_t)timeout_ms * 1000000u;
	int n;

	for (;;) {
		uint64_t now = xgpub_now_ns();

		n = poll(pfd, 1, now < end ? (int)((end - now) / 1000000u) : 0);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

void xgpub_ctl_request(const char *buf, size_t n, struct xgpub_reply *r)
{
	char req[XGPU_CTL_REQUEST_MAX + 1], *argv[XGPU_CTL_WORDS_MAX];
	int argc;

	if (n > XGPU_CTL_REQUEST_MAX)
		n = XGPU_CTL_REQUEST_MAX;
	memcpy(req, buf, n);
	req[n] = 0;
	argc = split(req, argv, XGPU_CTL_WORDS_MAX);
	if (argc == 0) {
		xgpub_reply(r, XGPU_CTL_ERROR " empty request\n");
		return;
	}
	dispatch(r, argc, argv);
	if (r->full) {
		xgpub_reply_init(r);
		xgpub_reply(r, XGPU_CTL_ERROR " reply too long\n");
	}
}

/* one request from fd, its reply into r */
static void serve(int fd, struct xgpub_reply *r)
{
	char req[XGPU_CTL_REQUEST_MAX];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct ucred cr;
	socklen_t crl = sizeof(cr);
	ssize_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 ||
	    (cr.uid != 0 && cr.uid != geteuid())) {
		xgpub_reply(r, XGPU_CTL_ERROR " permission denied\n");
		return;
	}
	if (wait_readable(&pfd, XGPU_CTL_REQUEST_WAIT_MS) <= 0 ||
	    (n = recv(fd, req, sizeof(req), MSG_DONTWAIT)) <= 0) {
		xgpub_reply(r, XGPU_CTL_ERROR " no request\n");
		return;
	}
	xgpub_ctl_request(req, (size_t)n, r);
}

void xgpub_ctl_accept(void)
{
	/* static: too large for the stack */
	static struct xgpub_reply r;

	for (int i = 0; i < MAX_CLIENTS; i++) {
		int fd = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		xgpub_reply_init(&r);
		serve(fd, &r);
		(void)!send(fd, r.buf, r.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
	}
}
