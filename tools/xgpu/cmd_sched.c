// SPDX-License-Identifier: MIT
/*
 * cmd_sched.c: `xgpu sched-credit`, the guests' weights and caps, as
 * xl sched-credit shows and sets a domain's, and their GPU time limits.
 * The daemon checks the values (xgpu_ctl.h); "-" leaves one as it is.
 */
#include <getopt.h>
#include <string.h>

#include "ctl.h"
#include "subcommands.h"

static void print_settings(const char *data)
{
	static const struct ctl_col cols[] = {
		{ "Key", "key", -24 }, { "Name", "name", -16 },
		{ "ID", "id", 6 }, { "Weight", "weight", 6 },
		{ "Cap", "cap", 4 }, { "Limit(ms)", "limit_ms", 9 },
	};

	ctl_print_table(data, XGPU_CTL_REC_SCHED, cols,
			sizeof(cols) / sizeof(cols[0]));
}

int cmd_sched_credit(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "domain", required_argument, NULL, 'd' },
		{ "weight", required_argument, NULL, 'w' },
		{ "cap", required_argument, NULL, 'c' },
		{ "limit", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dom = NULL, *w = NULL, *cap = NULL, *lim = NULL;
	char req[XGPU_CTL_REQUEST_MAX + 1];
	bool json = false;
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:w:c:l:j", lo, NULL)) != -1) {
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
		case 'l':
			lim = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:	/* (getopt said which) */
			return XGPU_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return ctl_usage_err(argv[0], "unexpected argument '%s' (the "
				     "guest is given with -d DOM)",
				     argv[optind]);
	if ((w || cap || lim) && !dom)
		return ctl_usage_err(argv[0], "-w, -c and -l need -d DOM");
	if (dom && (!*dom || strpbrk(dom, " \t\n")))
		return ctl_usage_err(argv[0], "-d: '%s' is not a domain name, "
				     "id or key", dom);
	/* checked here as the daemon would ("-": leave it as it is) */
	if ((w && strcmp(w, XGPU_CTL_NONE) &&
	     !ctl_uint_ok(argv[0], "-w", w, XGPU_CTL_WEIGHT_MIN,
			  XGPU_SCHED_WEIGHT_MAX)) ||
	    (cap && strcmp(cap, XGPU_CTL_NONE) &&
	     !ctl_uint_ok(argv[0], "-c", cap, 0, XGPU_SCHED_CAP_MAX)) ||
	    (lim && !ctl_uint_ok(argv[0], "-l", lim, 0, XGPU_CTL_LIMIT_MAX)))
		return XGPU_EXIT_USAGE;
	if (dom && lim)
		n = snprintf(req, sizeof(req), "%s %s %s %s %s",
			     XGPU_CTL_CMD_SCHED_CREDIT, dom,
			     w ? w : XGPU_CTL_NONE,
			     cap ? cap : XGPU_CTL_NONE, lim);
	else if (dom && (w || cap))
		n = snprintf(req, sizeof(req), "%s %s %s %s",
			     XGPU_CTL_CMD_SCHED_CREDIT, dom,
			     w ? w : XGPU_CTL_NONE,
			     cap ? cap : XGPU_CTL_NONE);
	else if (dom)
		n = snprintf(req, sizeof(req), "%s %s",
			     XGPU_CTL_CMD_SCHED_CREDIT, dom);
	else
		n = snprintf(req, sizeof(req), "%s",
			     XGPU_CTL_CMD_SCHED_CREDIT);
	if (n < 0 || (size_t)n >= sizeof(req))
		return XGPU_EXIT_USAGE;
	return ctl_show(req, json, XGPU_CTL_REC_SCHED, print_settings);
}
