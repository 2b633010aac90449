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
		{ "XS-looks", "xs_looks", 9 },
		{ "Grant-MB", "grant_mb", 9 },
	};
	char line[CTL_LINE_MAX], b[2][CTL_LINE_MAX];
	const char *c = data;

	if (ctl_record(&c, XGPU_CTL_REC_CONFIG, line, sizeof(line)))
		printf("%s: %s rule(s) in force\n",
		       ctl_val(line, "path", b[0], sizeof(b[0])),
		       ctl_val(line, "rules", b[1], sizeof(b[1])));
	static const struct ctl_col caps_cols[] = {
		{ "Domain", "domain", -24 }, { "Quota-MB", "quota_mb", 9 },
		{ "Pinned-MB", "pinned_mb", 10 },
		{ "Images-MB", "images_mb", 10 },
		{ "Channels", "channels", 9 },
		{ "XS-looks", "xs_looks", 9 },
		{ "Grant-MB", "grant_mb", 9 },
	};
	ctl_print_table(data, XGPU_CTL_REC_RULE, cols,
			sizeof(cols) / sizeof(cols[0]));
	if (strstr(data, "\n" XGPU_CTL_REC_CAPS " ")) {
		printf("caps set at run time (ahead of the rules):\n");
		ctl_print_table(data, XGPU_CTL_REC_CAPS, caps_cols,
				sizeof(caps_cols) / sizeof(caps_cols[0]));
	}
}

/* config show [--json]: the rules, then the caps set at run time (JSON:
 * {"rules": [...], "caps": [...]}) */
static int config_show(int argc, char **argv)
{
	bool json = argc == 3 && ctl_json_opt(argv[2]);
	const char *data;

	if (argc > 3 || (argc == 3 && !json))
		return ctl_usage_err("config show", "only --json");
	data = ctl_ask(XGPU_CTL_CMD_CONFIG);
	if (!data)
		return XGPU_EXIT_FAIL;
	if (!json) {
		print_rules(data);
		return 0;
	}
	printf("{\n\"rules\": ");
	ctl_print_json(data, XGPU_CTL_REC_RULE);
	printf(",\n\"caps\": ");
	ctl_print_json(data, XGPU_CTL_REC_CAPS);
	printf("}\n");
	return 0;
}

/* config set DOM KEY=VALUE...: caps of a domain, at run time */
static int config_set(int argc, char **argv)
{
	char req[XGPU_CTL_REQUEST_MAX + 1];
	const char *data;
	size_t off;
	int n;

	if (argc < 4)
		return ctl_usage_err("config set", "DOM|local:NAME|net:NAME "
				     "KEY=VALUE... (quota-mb, pinned-mb, "
				     "images-mb; channels, xs-looks, "
				     "grant-mb: a domain's)");
	if (argc > 9)
		return ctl_usage_err("config set", "at most 6 KEY=VALUE words");
	n = snprintf(req, sizeof(req), "%s %s", XGPU_CTL_CMD_CONFIG,
		     XGPU_CTL_CONFIG_SET);
	off = n > 0 ? (size_t)n : 0;
	for (int i = 2; i < argc; i++) {
		if (!*argv[i] || strpbrk(argv[i], " \t\n"))
			return ctl_usage_err("config set", "'%s': a word "
					     "without blanks", argv[i]);
		n = snprintf(req + off, sizeof(req) - off, " %s", argv[i]);
		if (n < 0 || (size_t)n >= sizeof(req) - off)
			return ctl_usage_err("config set", "too long");
		off += (size_t)n;
	}
	data = ctl_ask(req);
	if (!data)
		return XGPU_EXIT_FAIL;
	print_rules(data);
	return 0;
}

int cmd_config(int argc, char **argv)
{
	const char *data;

	if (argc < 2)
		return ctl_usage_err(argv[0], "check, reload, set or show?");
	if (!strcmp(argv[1], "set"))
		return config_set(argc, argv);
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
		return config_show(argc, argv);
	return ctl_usage_err(argv[0], "unknown: %s (check, reload, set or "
			     "show)", argv[1]);
}
