// SPDX-License-Identifier: MIT
/*
 * ctl.c: the CLI's side of the control socket (xgpu_ctl.h): one request,
 * one reply, and the reply's records read back, as tables or as JSON.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl.h"
#include "xgpuif_sock.h"

const char *ctl_socket = XGPU_CTL_PATH_DEFAULT;

/* one message, and room for its ending NUL */
static char reply[XGPU_CTL_REPLY_MAX + 1];

int ctl_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xgpu %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return XGPU_EXIT_USAGE;
}

bool ctl_uint_ok(const char *cmd, const char *opt, const char *s,
		 unsigned long lo, unsigned long hi)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s && *s != '-' && *s != '+' && !*end && !errno && v >= lo &&
	    v <= hi)
		return true;
	ctl_usage_err(cmd, "%s: '%s' is not a whole number from %lu to %lu",
		      opt, s, lo, hi);
	return false;
}

bool ctl_json_opt(const char *arg)
{
	return !strcmp(arg, "--json") || !strcmp(arg, "-j");
}

static bool json_args(int argc, char **argv, bool *json)
{
	*json = false;
	for (int i = 1; i < argc; i++) {
		if (!ctl_json_opt(argv[i])) {
			ctl_usage_err(argv[0], "unexpected argument '%s' "
				      "(only --json)", argv[i]);
			return false;
		}
		*json = true;
	}
	return true;
}

static void unreachable(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void unreachable(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xgpu: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(XGPU_EXIT_FAIL);
}

const char *ctl_ask(const char *req)
{
	struct pollfd pfd;
	ssize_t n;
	int fd;

	fd = xgpuif_sock_connect(ctl_socket);
	if (fd < 0)
		unreachable("cannot reach xen-gpubackd at %s: %s", ctl_socket,
			    strerror(-fd));
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		unreachable("%s: %s", ctl_socket, strerror(errno));
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, XGPU_CTL_REPLY_WAIT_MS) <= 0)
		unreachable("no answer from xen-gpubackd");
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	close(fd);
	if (n <= 0)
		unreachable("no answer from xen-gpubackd");
	reply[n] = 0;
	if (!strncmp(reply, XGPU_CTL_ERROR " ", strlen(XGPU_CTL_ERROR) + 1)) {
		fprintf(stderr, "xgpu: %s", reply + strlen(XGPU_CTL_ERROR) + 1);
		return NULL;
	}
	if (strncmp(reply, XGPU_CTL_OK "\n", strlen(XGPU_CTL_OK) + 1)) {
		fprintf(stderr, "xgpu: unexpected answer from xen-gpubackd\n");
		return NULL;
	}
	return reply + strlen(XGPU_CTL_OK) + 1;
}

bool ctl_record(const char **cursor, const char *rec, char *line,
		size_t len)
{
	size_t rl = strlen(rec);

	while (**cursor) {
		const char *l = *cursor;
		size_t ll = strcspn(l, "\n");

		*cursor = l + ll + (l[ll] == '\n');
		if (ll <= rl || strncmp(l, rec, rl) || l[rl] != ' ')
			continue;
		if (ll >= len)
			ll = len - 1;
		memcpy(line, l, ll);
		line[ll] = 0;
		return true;
	}
	return false;
}

const char *ctl_val(const char *line, const char *key, char *buf,
		    size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");

			if (n >= len)
				n = len - 1;
			memcpy(buf, p + kl + 1, n);
			buf[n] = 0;
			return buf;
		}
		p += kl;
	}
	snprintf(buf, len, "%s", XGPU_CTL_NONE);
	return buf;
}

void ctl_print_table(const char *data, const char *rec,
		     const struct ctl_col *cols, size_t ncols)
{
	char line[CTL_LINE_MAX], v[96];
	size_t i;

	for (i = 0; i < ncols; i++)
		printf("%s%*s", i ? " " : "", cols[i].width, cols[i].head);
	putchar('\n');
	while (ctl_record(&data, rec, line, sizeof(line))) {
		for (i = 0; i < ncols; i++)
			printf("%s%*s", i ? " " : "", cols[i].width,
			       ctl_val(line, cols[i].key, v, sizeof(v)));
		putchar('\n');
	}
}

static bool is_number(const char *s)
{
	char *end;

	if (!*s)
		return false;
	strtod(s, &end);
	return !*end;
}

/* the key=value pairs of one record as a JSON object */
static void print_json_object(const char *p)
{
	const char *eq;
	bool first = true;

	printf("{");
	while ((eq = strchr(p, '=')) != NULL) {
		size_t vl = strcspn(eq + 1, " ");
		char v[256];

		snprintf(v, sizeof(v), "%.*s", (int)vl, eq + 1);
		printf("%s\"%.*s\": ", first ? "" : ", ", (int)(eq - p), p);
		/* values are sanitised by the daemon: no quotes in them */
		if (is_number(v))
			printf("%s", v);
		else
			printf("\"%s\"", v);
		first = false;
		p = eq + 1 + vl;
		if (*p++ != ' ')
			break;
	}
	printf("}");
}

void ctl_print_json(const char *data, const char *rec)
{
	char line[CTL_LINE_MAX];
	bool first = true;

	printf("[");
	while (ctl_record(&data, rec, line, sizeof(line))) {
		printf("%s\n  ", first ? "" : ",");
		print_json_object(line + strlen(rec) + 1);
		first = false;
	}
	printf("%s]\n", first ? "" : "\n");
}

int ctl_show(const char *req, bool json, const char *rec,
	     void (*print)(const char *data))
{
	const char *data = ctl_ask(req);

	if (!data)
		return XGPU_EXIT_FAIL;
	if (json)
		ctl_print_json(data, rec);
	else
		print(data);
	return 0;
}

int ctl_show_cmd(int argc, char **argv, const char *req, const char *rec,
		 void (*print)(const char *data))
{
	bool json;

	if (!json_args(argc, argv, &json))
		return XGPU_EXIT_USAGE;
	return ctl_show(req, json, rec, print);
}
