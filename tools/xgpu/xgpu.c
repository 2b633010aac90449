// SPDX-License-Identifier: MIT
/*
 * xgpu: the administrator's command line, in the style of xl.
 *
 * attach/detach write xenstore as a toolstack would; everything else asks
 * xen-gpubackd over its control socket (root only).  The subcommands are
 * the table below, each in its file (cmd_*.c); the usage text is made
 * from the table.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "subcommands.h"

/* where the help column starts */
#define HELP_COL	30

struct cmd_spec {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;	/* its forms, one a line */
	const char *help;	/* one line, or a few */
};

static int cmd_help(int argc, char **argv);

static const struct cmd_spec cmd_table[] = {
	{ "attach", cmd_attach, "DOM [DEVID] [KEY=VALUE...]",
	  "give domain DOM (name or id) an xgpu device\n"
	  "(caps: quota-mb, pinned-mb, images-mb,\n"
	  "channels, xs-looks, grant-mb; in\n"
	  "xenstore, the device's own)" },
	{ "detach", cmd_detach, "DOM [DEVID]",
	  "remove it (the guest's channels close)" },
	{ "list", cmd_list, "[--json]",
	  "guests: weight, cap, credit, GPU time,\n"
	  "shares, memory, calls/s, queue depth; a\n"
	  "domain with a device but no process yet\n"
	  "shows as idle (or setup: handshake going)" },
	{ "sched-credit", cmd_sched_credit,
	  "[--json]\n"
	  "-d DOM [-w WEIGHT] [-c CAP] [-l MS]",
	  "show every guest's weight, cap and limit\n"
	  "show or set one guest's WEIGHT, CAP and\n"
	  "GPU time limit MS (0: the daemon's)" },
	{ "top", cmd_top, "[-d SECONDS] [-n N]",
	  "refreshing view of `list`" },
	{ "stats", cmd_stats, "[--json]",
	  "the scheduler's counters (wake-ups, steps)" },
	{ "vcpu", cmd_vcpu, "[on [-b PCT[:MS]] | off] [--json]",
	  "VCPU coordination: show it, or switch it\n"
	  "(Xen VCPU weights follow GPU weights; a\n"
	  "domain whose GPU work completed gets PCT%\n"
	  "of its weight for MS ms)" },
	{ "config", cmd_config,
	  "check [FILE]\n"
	  "reload\n"
	  "set DOM KEY=VALUE...\n"
	  "show [--json]",
	  "per-domain rules, xgpu.conf(5): check a\n"
	  "file (default /etc/xen/xgpu.conf; bad:\n"
	  "exit 2), have the daemon read its file\n"
	  "again, give domain DOM (its name; or a\n"
	  "client's key: local:NAME, net:NAME) caps\n"
	  "now: quota-mb, pinned-mb, images-mb,\n"
	  "channels, xs-looks, grant-mb (its next\n"
	  "processes), show the rules and caps it\n"
	  "has in force" },
	{ "help", cmd_help, "", "this text" },
};

#define NCMDS (sizeof(cmd_table) / sizeof(cmd_table[0]))

/* the line at *s (its length); *s moves to the next one */
static int take_line(const char **s, const char **line)
{
	size_t n = strcspn(*s, "\n");

	*line = *s;
	*s += n + ((*s)[n] == '\n');
	return (int)n;
}

/* a form and a line of help a row, the help in its column; a form too
 * long for that has a row of its own */
static void usage_cmd(FILE *f, const struct cmd_spec *c)
{
	const char *forms = c->args, *help = c->help, *l;
	bool first = true;
	int n, col;

	while (first || *forms || *help) {
		col = 0;
		if (first || *forms) {
			n = take_line(&forms, &l);
			col = fprintf(f, "  %s%s%.*s", c->name, n ? " " : "",
				      n, l);
		}
		if (*help) {
			if (col >= HELP_COL) {
				fputc('\n', f);
				col = 0;
			}
			n = take_line(&help, &l);
			fprintf(f, "%*s%.*s", HELP_COL - col, "", n, l);
		}
		fputc('\n', f);
		first = false;
	}
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xgpu [-s SOCKET] COMMAND [ARGS]\n"
		"Manage GPU sharing through xgpu (see xgpu(1)).\n\n"
		"Commands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		usage_cmd(f, &cmd_table[i]);
	fprintf(f, "\n"
		"  -s, --socket PATH           the daemon's control socket\n"
		"                              (default %s, or $%s)\n"
		"  -h, --help\n"
		"DOM for list/sched-credit: a domain name or id, a local "
		"client as cN, or\n"
		"the settings key shown by `xgpu sched-credit`.\n"
		"WEIGHT: %u..%u (default %u), shares follow weights; CAP: "
		"%% of one GPU,\n"
		"%u..%u (%u: none).\n",
		XGPU_CTL_PATH_DEFAULT, XGPU_CTL_PATH_ENV, XGPU_CTL_WEIGHT_MIN,
		XGPU_SCHED_WEIGHT_MAX, XGPU_SCHED_WEIGHT_DEFAULT,
		XGPU_CTL_CAP_NONE, XGPU_SCHED_CAP_MAX, XGPU_CTL_CAP_NONE);
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct cmd_spec *cmd_lookup(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(cmd_table[i].name, name))
			return &cmd_table[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *env = getenv(XGPU_CTL_PATH_ENV);
	const struct cmd_spec *cmd;
	int i = 1, rc;

	if (env && *env)
		ctl_socket = env;
	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cmd_help(0, NULL);
		if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "--socket")) &&
		    i + 1 < argc) {
			ctl_socket = argv[i + 1];
			i += 2;
			continue;
		}
		fprintf(stderr, "xgpu: unknown option: %s\n", argv[i]);
		goto usage;
	}
	if (i >= argc) {
		fprintf(stderr, "xgpu: which command?\n");
		goto usage;
	}
	cmd = cmd_lookup(argv[i]);
	if (!cmd) {
		fprintf(stderr, "xgpu: unknown command: %s\n", argv[i]);
		goto usage;
	}
	rc = cmd->fn(argc - i, argv + i);
	if (rc != XGPU_EXIT_USAGE)
		return rc;
usage:
	usage(stderr);
	return XGPU_EXIT_USAGE;
}
