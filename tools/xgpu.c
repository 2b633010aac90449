// SPDX-License-Identifier: MIT
/*
 * xgpu: the administrator's command line, in the style of xl.
 *
 *   xgpu attach DOM [DEVID]      give a domain an xgpu device (xenstore)
 *   xgpu detach DOM [DEVID]      take it away
 *   xgpu list [--json]           guests, their shares and their use
 *   xgpu sched-credit [-d DOM [-w WEIGHT] [-c CAP]] [--json]
 *   xgpu top [-d SECONDS] [-n ITERATIONS]
 *
 * attach/detach write xenstore as a toolstack would; everything else asks
 * xen-gpubackd over its control socket (root only).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>
#include <xen/io/xenbus.h>

#include "xgpuif.h"

static const char *ctl_path = "/run/xgpu/control.sock";
static bool json;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: xgpu [-s SOCKET] COMMAND [ARGS]\n"
"Manage GPU sharing through xgpu (see xgpu(1)).\n"
"\n"
"Commands:\n"
"  attach DOM [DEVID]          give domain DOM (name or id) an xgpu device\n"
"  detach DOM [DEVID]          remove it (the guest's channels close)\n"
"  list [--json]               guests: weight, cap, credit, GPU time,\n"
"                              shares, memory, calls/s, queue depth; a\n"
"                              domain with a device but no process yet\n"
"                              shows as idle (or setup: handshake going)\n"
"  sched-credit [--json]       show every guest's weight and cap\n"
"  sched-credit -d DOM [-w WEIGHT] [-c CAP]\n"
"                              show or set one guest's weight (1..65535,\n"
"                              default 256) and cap (%% of one GPU, 0: none)\n"
"  top [-d SECONDS] [-n N]     refreshing view of `list`\n"
"  stats [--json]              the scheduler's counters (wake-ups, steps)\n"
"  vcpu [on [-b PCT[:MS]] | off] [--json]\n"
"                              VCPU coordination: show it, or switch it\n"
"                              (Xen VCPU weights follow GPU weights; a\n"
"                              domain whose GPU work completed gets PCT%%\n"
"                              of its weight for MS ms)\n"
"\n"
"  -s, --socket PATH           the daemon's control socket\n"
"                              (default /run/xgpu/control.sock, or $XGPU_CONTROL)\n"
"  -h, --help\n"
"DOM for list/sched-credit: a domain name or id, a local client as cN, or\n"
"the settings key shown by `xgpu sched-credit`.\n");
}

/* ---- xenstore: attach / detach ----------------------------------------- */

static int find_domid(struct xs_handle *xs, const char *dom, unsigned int *out)
{
	char **ents, *end;
	unsigned int n = 0;
	unsigned long v = strtoul(dom, &end, 10);

	if (*dom && !*end) {
		*out = (unsigned int)v;
		return 0;
	}
	ents = xs_directory(xs, XBT_NULL, "/local/domain", &n);
	for (unsigned int i = 0; ents && i < n; i++) {
		char path[64], *name;
		unsigned int len;

		snprintf(path, sizeof(path), "/local/domain/%s/name", ents[i]);
		name = xs_read(xs, XBT_NULL, path, &len);
		if (name && !strcmp(name, dom)) {
			*out = (unsigned int)strtoul(ents[i], NULL, 10);
			free(name);
			free(ents);
			return 0;
		}
		free(name);
	}
	free(ents);
	return -1;
}

static bool xs_put(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		   const char *node, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static bool xs_put(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		   const char *node, const char *fmt, ...)
{
	char path[256], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_write(xs, t, path, val, strlen(val));
}

static struct xs_handle *xs_or_die(void)
{
	struct xs_handle *xs = xs_open(0);

	if (!xs) {
		fprintf(stderr, "xgpu: cannot connect to xenstore: %s (run this "
			"in Dom0 as root)\n", strerror(errno));
		exit(1);
	}
	return xs;
}

static int cmd_attach(int argc, char **argv)
{
	struct xs_handle *xs;
	unsigned int domid, devid = 0;
	char be[128], fe[128], *v;
	unsigned int len;

	if (argc < 2 || argc > 3) {
		usage(stderr);
		return 2;
	}
	if (argc == 3)
		devid = (unsigned int)strtoul(argv[2], NULL, 10);
	xs = xs_or_die();
	if (find_domid(xs, argv[1], &domid) || domid == 0) {
		fprintf(stderr, "xgpu: no such domain: %s\n", argv[1]);
		return 1;
	}
	snprintf(be, sizeof(be), "/local/domain/0/backend/%s/%u/%u",
		 XGPUIF_XEN_DEVTYPE, domid, devid);
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/%s/%u", domid,
		 XGPUIF_XEN_DEVTYPE, devid);
	v = xs_read(xs, XBT_NULL, be, &len);
	if (v) {
		free(v);
		fprintf(stderr, "xgpu: domain %u already has xgpu device %u\n",
			domid, devid);
		return 1;
	}
	for (int tries = 0; tries < 10; tries++) {
		/* backend: ours, readable by the guest; frontend: the
		 * guest's, readable by us (as libxl sets them) */
		struct xs_permissions bperm[2] = {
			{ .id = 0, .perms = XS_PERM_NONE },
			{ .id = domid, .perms = XS_PERM_READ },
		};
		struct xs_permissions fperm[2] = {
			{ .id = domid, .perms = XS_PERM_NONE },
			{ .id = 0, .perms = XS_PERM_READ },
		};
		xs_transaction_t t = xs_transaction_start(xs);
		bool ok;

		if (t == XBT_NULL)
			break;
		ok = xs_mkdir(xs, t, be) &&
		     xs_set_permissions(xs, t, be, bperm, 2) &&
		     xs_put(xs, t, be, "frontend", "%s", fe) &&
		     xs_put(xs, t, be, "frontend-id", "%u", domid) &&
		     xs_put(xs, t, be, "online", "1") &&
		     xs_put(xs, t, be, "state", "%d",
			    XenbusStateInitialising) &&
		     xs_mkdir(xs, t, fe) &&
		     xs_set_permissions(xs, t, fe, fperm, 2) &&
		     xs_put(xs, t, fe, "backend", "%s", be) &&
		     xs_put(xs, t, fe, "backend-id", "0") &&
		     xs_put(xs, t, fe, "state", "%d", XenbusStateInitialising);
		if (!ok) {
			int e = errno;

			xs_transaction_end(xs, t, true);
			fprintf(stderr, "xgpu: cannot write xenstore: %s\n",
				strerror(e));
			return 1;
		}
		if (xs_transaction_end(xs, t, false)) {
			printf("domain %u: xgpu device %u attached\n", domid,
			       devid);
			xs_close(xs);
			return 0;
		}
		if (errno != EAGAIN)
			break;
	}
	fprintf(stderr, "xgpu: xenstore transaction failed: %s\n",
		strerror(errno));
	return 1;
}

static long xs_long(struct xs_handle *xs, const char *dir, const char *node)
{
	char path[256], *v;
	unsigned int len;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	v = xs_read(xs, XBT_NULL, path, &len);
	if (!v)
		return -1;
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

static int cmd_detach(int argc, char **argv)
{
	struct xs_handle *xs;
	unsigned int domid, devid = 0;
	char be[128], fe[128];
	long st;

	if (argc < 2 || argc > 3) {
		usage(stderr);
		return 2;
	}
	if (argc == 3)
		devid = (unsigned int)strtoul(argv[2], NULL, 10);
	xs = xs_or_die();
	if (find_domid(xs, argv[1], &domid)) {
		fprintf(stderr, "xgpu: no such domain: %s\n", argv[1]);
		return 1;
	}
	snprintf(be, sizeof(be), "/local/domain/0/backend/%s/%u/%u",
		 XGPUIF_XEN_DEVTYPE, domid, devid);
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/%s/%u", domid,
		 XGPUIF_XEN_DEVTYPE, devid);
	if (xs_long(xs, be, "frontend-id") < 0) {
		fprintf(stderr, "xgpu: domain %u has no xgpu device %u\n",
			domid, devid);
		return 1;
	}
	/* as the toolstack does: ask the frontend to close, give it time */
	xs_put(xs, XBT_NULL, be, "online", "0");
	xs_put(xs, XBT_NULL, be, "state", "%d", XenbusStateClosing);
	for (int i = 0; i < 50; i++) {
		st = xs_long(xs, fe, "state");
		if (st < 0 || st == XenbusStateClosed ||
		    st == XenbusStateInitialising)
			break;
		usleep(100000);
	}
	xs_rm(xs, XBT_NULL, fe);
	xs_rm(xs, XBT_NULL, be);
	printf("domain %u: xgpu device %u detached\n", domid, devid);
	xs_close(xs);
	return 0;
}

/* ---- the control socket ------------------------------------------------ */

static char reply[128 * 1024 + 1];

/* send one request; the reply's data lines (after "ok") or NULL */
static char *ask(const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd;
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ctl_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "xgpu: cannot reach xen-gpubackd at %s: %s\n",
			ctl_path, strerror(errno));
		exit(1);
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		fprintf(stderr, "xgpu: %s: %s\n", ctl_path, strerror(errno));
		exit(1);
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, 5000) <= 0) {
		fprintf(stderr, "xgpu: no answer from xen-gpubackd\n");
		exit(1);
	}
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "xgpu: no answer from xen-gpubackd\n");
		exit(1);
	}
	reply[n] = 0;
	if (!strncmp(reply, "error ", 6)) {
		fprintf(stderr, "xgpu: %s", reply + 6);
		return NULL;
	}
	if (strncmp(reply, "ok\n", 3)) {
		fprintf(stderr, "xgpu: unexpected answer from xen-gpubackd\n");
		return NULL;
	}
	return reply + 3;
}

/* value of key in a data line ("-" if absent); buf is the result */
static const char *val(const char *line, const char *key, char *buf,
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
	snprintf(buf, len, "-");
	return buf;
}

static bool is_number(const char *s)
{
	char *end;

	if (!*s)
		return false;
	strtod(s, &end);
	return !*end;
}

/* data lines of one record type as a JSON array of objects */
static void print_json(const char *data, const char *rec)
{
	const char *line = data;
	bool first = true;
	size_t rl = strlen(rec);

	printf("[");
	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t ll = eol ? (size_t)(eol - line) : strlen(line);

		if (ll > rl && !strncmp(line, rec, rl) && line[rl] == ' ') {
			const char *p = line + rl + 1;
			bool f2 = true;

			printf("%s\n  {", first ? "" : ",");
			first = false;
			while (p < line + ll) {
				const char *eq = memchr(p, '=', (size_t)(line + ll - p));
				const char *sp;
				char v[256];
				size_t vl;

				if (!eq)
					break;
				sp = memchr(eq, ' ', (size_t)(line + ll - eq));
				if (!sp)
					sp = line + ll;
				vl = (size_t)(sp - eq - 1);
				if (vl >= sizeof(v))
					vl = sizeof(v) - 1;
				memcpy(v, eq + 1, vl);
				v[vl] = 0;
				printf("%s\"%.*s\": ", f2 ? "" : ", ",
				       (int)(eq - p), p);
				if (is_number(v))
					printf("%s", v);
				else
					printf("\"%s\"", v);	/* sanitised */
				f2 = false;
				p = sp + 1;
			}
			printf("}");
		}
		line += ll + (eol ? 1 : 0);
	}
	printf("%s]\n", first ? "" : "\n");
}

static void print_list(const char *data)
{
	const char *line = data;
	int n = 0;

	printf("%-5s %-16s %3s %6s %4s %9s %-6s %10s %6s %6s %11s %8s %5s\n",
	       "ID", "Name", "Ch", "Weight", "Cap", "Credit", "State",
	       "GPU(s)", "Per%", "Min%", "Mem(MiB)", "Calls/s", "Queue");
	while (*line) {
		const char *eol = strchr(line, '\n');
		char l[1024], b[13][96], idb[100];
		size_t ll = eol ? (size_t)(eol - line) : strlen(line);

		if (ll >= sizeof(l))
			ll = sizeof(l) - 1;
		memcpy(l, line, ll);
		l[ll] = 0;
		line += ll + (eol ? 1 : 0);
		if (strncmp(l, "guest ", 6))
			continue;
		n++;
		val(l, "kind", b[0], 96);
		val(l, "id", b[1], 96);
		snprintf(idb, sizeof(idb), "%s%s",
			 strcmp(b[0], "local") ? "" : "c", b[1]);
		printf("%-5s %-16.16s %3s %6s %4s %9s %-6s %10.3f %6s %6s "
		       "%5s/%-5s %8s %5s\n", idb,
		       val(l, "name", b[2], 96), val(l, "channels", b[3], 96),
		       val(l, "weight", b[4], 96), val(l, "cap", b[5], 96),
		       val(l, "credit_us", b[6], 96), val(l, "state", b[7], 96),
		       atof(val(l, "gpu_ms", b[8], 96)) / 1000.0,
		       val(l, "share_period", b[9], 96),
		       val(l, "share_minute", b[10], 96),
		       val(l, "mem_mib", b[11], 96),
		       val(l, "quota_mib", b[12], 96),
		       val(l, "calls_per_s", b[0], 96),
		       val(l, "qdepth", b[1], 96));
	}
	if (!n)
		printf("(no guests)\n");
}

static int cmd_list(int argc, char **argv)
{
	char *data;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = true;
		else {
			usage(stderr);
			return 2;
		}
	}
	data = ask("list");
	if (!data)
		return 1;
	if (json)
		print_json(data, "guest");
	else
		print_list(data);
	return 0;
}

static int cmd_sched(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "domain", required_argument, NULL, 'd' },
		{ "weight", required_argument, NULL, 'w' },
		{ "cap", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dom = NULL, *w = NULL, *cap = NULL;
	char req[256], *data, *line;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:w:c:j", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			dom = optarg;
			break;
		case 'w':
			w = optarg;
			break;
		case 'c':
			cap = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || ((w || cap) && !dom) ||
	    (dom && strpbrk(dom, " \t\n"))) {
		usage(stderr);
		return 2;
	}
	if (dom && (w || cap))
		snprintf(req, sizeof(req), "sched-credit %s %s %s", dom,
			 w ? w : "-", cap ? cap : "-");
	else if (dom)
		snprintf(req, sizeof(req), "sched-credit %s", dom);
	else
		snprintf(req, sizeof(req), "sched-credit");
	data = ask(req);
	if (!data)
		return 1;
	if (json) {
		print_json(data, "sched");
		return 0;
	}
	printf("%-24s %-16s %6s %6s %4s\n", "Key", "Name", "ID", "Weight",
	       "Cap");
	for (line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
		char b[5][96];

		if (strncmp(line, "sched ", 6))
			continue;
		printf("%-24s %-16s %6s %6s %4s\n", val(line, "key", b[0], 96),
		       val(line, "name", b[1], 96), val(line, "id", b[2], 96),
		       val(line, "weight", b[3], 96), val(line, "cap", b[4], 96));
	}
	return 0;
}

static int cmd_top(int argc, char **argv)
{
	double delay = 1.0;
	long iters = -1;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		switch (c) {
		case 'd':
			delay = atof(optarg);
			break;
		case 'n':
			iters = atol(optarg);
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (delay < 0.1)
		delay = 0.1;
	for (long i = 0; iters < 0 || i < iters; i++) {
		char *data = ask("list");
		time_t now = time(NULL);
		char ts[32];

		if (!data)
			return 1;
		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
		if (isatty(1))
			printf("\033[H\033[2J");
		printf("xgpu top - %s (every %.1f s; Per%%: share of the last "
		       "accounting period, Min%%: of the last minute)\n\n", ts,
		       delay);
		print_list(data);
		fflush(stdout);
		if (iters < 0 || i + 1 < iters)
			usleep((useconds_t)(delay * 1e6));
	}
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	char *data, *line;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") && strcmp(argv[i], "-j")) {
			usage(stderr);
			return 2;
		}
		json = true;
	}
	data = ask("stats");
	if (!data)
		return 1;
	if (json) {
		print_json(data, "stats");
		return 0;
	}
	for (line = strtok(data, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "stats ", 6))
			printf("%s\n", line + 6);
	return 0;
}

static int cmd_vcpu(int argc, char **argv)
{
	const char *mode = NULL, *boost = NULL;
	char req[128], *data, *line;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = true;
		else if ((!strcmp(argv[i], "-b") ||
			  !strcmp(argv[i], "--boost")) && i + 1 < argc)
			boost = argv[++i];
		else if (!mode && (!strcmp(argv[i], "on") ||
				   !strcmp(argv[i], "off")))
			mode = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (boost && (!mode || strcmp(mode, "on") ||
		      strspn(boost, "0123456789:") != strlen(boost))) {
		usage(stderr);
		return 2;
	}
	snprintf(req, sizeof(req), "vcpu%s%s%s%s", mode ? " " : "",
		 mode ? mode : "", boost ? " " : "", boost ? boost : "");
	data = ask(req);
	if (!data)
		return 1;
	if (json) {
		printf("{\"coordinator\": ");
		print_json(data, "vcpu");
		printf(", \"domains\": ");
		print_json(data, "dom");
		printf("}\n");
		return 0;
	}
	for (line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
		char b[9][96];

		if (!strncmp(line, "vcpu ", 5)) {
			if (strcmp(val(line, "state", b[0], 96), "on")) {
				printf("VCPU coordination: off\n");
				continue;
			}
			/* the daemon sends it as one word */
			val(line, "backend", b[1], 96);
			for (char *q = b[1]; *q; q++)
				if (*q == '_')
					*q = ' ';
			printf("VCPU coordination: on (%s); boost %s%% of the "
			       "weight for %s ms, at most %s weight "
			       "hypercalls/s per domain\n", b[1],
			       val(line, "boost_pct", b[2], 96),
			       val(line, "boost_ms", b[3], 96),
			       val(line, "rate", b[4], 96));
			printf("%-6s %-20s %6s %6s %6s %6s %7s %8s %8s\n",
			       "Dom", "Key", "GPU-W", "Base", "Target", "Now",
			       "Boosted", "Boosts", "Skipped");
			continue;
		}
		if (strncmp(line, "dom ", 4))
			continue;
		printf("%-6s %-20.20s %6s %6s %6s %6s %7s %8s %8s\n",
		       val(line, "id", b[0], 96), val(line, "key", b[1], 96),
		       val(line, "gpu_weight", b[2], 96),
		       val(line, "base", b[3], 96),
		       val(line, "target", b[4], 96),
		       val(line, "current", b[5], 96),
		       strcmp(val(line, "boosted", b[6], 96), "0") ? "yes" :
								     "no",
		       val(line, "boosts", b[7], 96),
		       val(line, "skipped", b[8], 96));
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("XGPU_CONTROL");
	int i = 1;

	if (env && *env)
		ctl_path = env;
	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "--socket")) &&
		    i + 1 < argc) {
			ctl_path = argv[i + 1];
			i += 2;
			continue;
		}
		usage(stderr);
		return 2;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	argc -= i;
	argv += i;
	if (!strcmp(argv[0], "attach"))
		return cmd_attach(argc, argv);
	if (!strcmp(argv[0], "detach"))
		return cmd_detach(argc, argv);
	if (!strcmp(argv[0], "list"))
		return cmd_list(argc, argv);
	if (!strcmp(argv[0], "sched-credit"))
		return cmd_sched(argc, argv);
	if (!strcmp(argv[0], "top"))
		return cmd_top(argc, argv);
	if (!strcmp(argv[0], "vcpu"))
		return cmd_vcpu(argc, argv);
	if (!strcmp(argv[0], "stats"))
		return cmd_stats(argc, argv);
	if (!strcmp(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "xgpu: unknown command: %s\n", argv[0]);
	usage(stderr);
	return 2;
}
