// SPDX-License-Identifier: MIT
/*
 * cmd_config.c: `xgpu config`: the per-domain rules of xgpu.conf(5).
 *   check [FILE]   parse the file here (no daemon needed): 0 when good,
 *                  2 with the bad line's number and what is accepted
 *   reload         the daemon reads its file again (as on SIGHUP)
 *   show [--json]  the rules the daemon has in force
 */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "subcommands.h"
#include "xgpu_rules.h"

static int config_check(int argc, char **argv)
{
	static struct xgpu_rules rules;
	const char *path = argc > 2 ? argv[2] : XGPU_CONFIG_DEFAULT;
	char err[1536];
	int rc;

	if (argc > 3)
		return ctl_usage_err("config check", "one FILE at most");
	rc = xgpu_rules_load(path, &rules, err, sizeof(err));
	if (rc == 1 && argc > 2) {
		fprintf(stderr, "xgpu: %s: no such file\n", path);
		return XGPU_EXIT_FAIL;
	}
	if (rc == 1) {
		printf("%s: no such file: no rules\n", path);
		return 0;
	}
	if (rc == -2) {
		fprintf(stderr, "xgpu: %s\n", err);
		return XGPU_EXIT_FAIL;
	}
	if (rc < 0) {
		/* refused as a whole; not a usage error of xgpu itself */
		fprintf(stderr, "xgpu: %s\n", err);
		exit(XGPU_EXIT_USAGE);
	}
	printf("%s: %d rule%s, good\n", path, rules.n,
	       rules.n == 1 ? "" : "s");
	return 0;
}

static void print_rules(const char *data)
{
	static const struct ctl_col cols[] = {
		{ "Line", "line", 5 }, { "Pattern", "pattern", -24 },
		{ "Attach", "attach", 6 }, { "Weight", "weight", 6 },
		{ "Cap", "cap", 4 }, { "Quota-MB", "quota_mb", 9 },
		{ "Limit-ms", "limit_ms", 9 }, { "GPU", "gpu", 4 },
		{ "Pinned-MB", "pinned_mb", 10 },
		{ "Images-MB", "images_mb", 10 },
		{ "Channels", "channels", 9 },
	};
	char line[CTL_LINE_MAX], b[2][CTL_LINE_MAX];
	const char *c = data;

	if (ctl_record(&c, XGPU_CTL_REC_CONFIG, line, sizeof(line)))
		printf("%s: %s rule(s) in force\n",
		       ctl_val(line, "path", b[0], sizeof(b[0])),
		       ctl_val(line, "rules", b[1], sizeof(b[1])));
	ctl_print_table(data, XGPU_CTL_REC_RULE, cols,
			sizeof(cols) / sizeof(cols[0]));
}

int cmd_config(int argc, char **argv)
{
	const char *data;

	if (argc < 2)
		return ctl_usage_err(argv[0], "check, reload or show?");
	if (!strcmp(argv[1], "check"))
		return config_check(argc, argv);
	if (!strcmp(argv[1], "reload")) {
		if (argc != 2)
			return ctl_usage_err("config reload", "no arguments");
		data = ctl_ask(XGPU_CTL_CMD_CONFIG " " XGPU_CTL_CONFIG_RELOAD);
		if (!data)
			return XGPU_EXIT_FAIL;
		print_rules(data);
		return 0;
	}
	if (!strcmp(argv[1], "show"))
		return ctl_show_cmd(argc - 1, argv + 1, XGPU_CTL_CMD_CONFIG,
				    XGPU_CTL_REC_RULE, print_rules);
	return ctl_usage_err(argv[0], "unknown: %s (check, reload or show)",
			     argv[1]);
}
