// SPDX-License-Identifier: MIT
/*
 * cmd_stats.c: `xgpu stats` (the GPU scheduler's counters) and `xgpu
 * vcpu` (the VCPU coordinator: shown, switched off or on).
 */
#include <string.h>

#include "ctl.h"
#include "subcommands.h"

/* the counters as they come, without the record's name */
static void print_stats(const char *data)
{
	char line[CTL_LINE_MAX];

	while (ctl_record(&data, XGPU_CTL_REC_STATS, line, sizeof(line)))
		printf("%s\n", line + strlen(XGPU_CTL_REC_STATS) + 1);
}

int cmd_stats(int argc, char **argv)
{
	return ctl_show_cmd(argc, argv, XGPU_CTL_CMD_STATS,
			    XGPU_CTL_REC_STATS, print_stats);
}

static void print_coordinator(const char *line)
{
	char b[5][96];

	if (strcmp(ctl_val(line, "state", b[0], 96), "on")) {
		printf("VCPU coordination: off\n");
		return;
	}
	/* the daemon sends it as one word */
	ctl_val(line, "backend", b[1], 96);
	for (char *q = b[1]; *q; q++)
		if (*q == '_')
			*q = ' ';
	printf("VCPU coordination: on (%s); boost %s%% of the weight for %s "
	       "ms, at most %s weight hypercalls/s per domain\n", b[1],
	       ctl_val(line, "boost_pct", b[2], 96),
	       ctl_val(line, "boost_ms", b[3], 96),
	       ctl_val(line, "rate", b[4], 96));
	printf("%-6s %-20s %6s %6s %6s %6s %7s %8s %8s\n", "Dom", "Key",
	       "GPU-W", "Base", "Target", "Now", "Boosted", "Boosts",
	       "Skipped");
}

static void print_dom(const char *line)
{
	char b[9][96];

	printf("%-6s %-20.20s %6s %6s %6s %6s %7s %8s %8s\n",
	       ctl_val(line, "id", b[0], 96), ctl_val(line, "key", b[1], 96),
	       ctl_val(line, "gpu_weight", b[2], 96),
	       ctl_val(line, "base", b[3], 96),
	       ctl_val(line, "target", b[4], 96),
	       ctl_val(line, "current", b[5], 96),
	       strcmp(ctl_val(line, "boosted", b[6], 96), "0") ? "yes" : "no",
	       ctl_val(line, "boosts", b[7], 96),
	       ctl_val(line, "skipped", b[8], 96));
}

int cmd_vcpu(int argc, char **argv)
{
	const char *mode = NULL, *boost = NULL, *data, *cursor;
	char req[XGPU_CTL_REQUEST_MAX + 1], line[CTL_LINE_MAX];
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (ctl_json_opt(argv[i]))
			json = true;
		else if ((!strcmp(argv[i], "-b") ||
			  !strcmp(argv[i], "--boost")) && i + 1 < argc)
			boost = argv[++i];
		else if (!mode && (!strcmp(argv[i], "on") ||
				   !strcmp(argv[i], "off")))
			mode = argv[i];
		else
			return ctl_usage_err(argv[0], "unexpected argument "
					     "'%s'", argv[i]);
	}
	if (boost && (!mode || strcmp(mode, "on")))
		return ctl_usage_err(argv[0], "-b goes with 'on'");
	if (boost && (!*boost ||
		      strspn(boost, "0123456789:") != strlen(boost)))
		return ctl_usage_err(argv[0], "-b: '%s' is not PCT[:MS]",
				     boost);
	snprintf(req, sizeof(req), "%s%s%s%s%s", XGPU_CTL_CMD_VCPU,
		 mode ? " " : "", mode ? mode : "", boost ? " " : "",
		 boost ? boost : "");
	data = ctl_ask(req);
	if (!data)
		return XGPU_EXIT_FAIL;
	if (json) {
		printf("{\"coordinator\": ");
		ctl_print_json(data, XGPU_CTL_REC_VCPU);
		printf(", \"domains\": ");
		ctl_print_json(data, XGPU_CTL_REC_DOM);
		printf("}\n");
		return 0;
	}
	/* the coordinator's record comes first, then one per domain */
	for (cursor = data; ctl_record(&cursor, XGPU_CTL_REC_VCPU, line,
				       sizeof(line));)
		print_coordinator(line);
	for (cursor = data; ctl_record(&cursor, XGPU_CTL_REC_DOM, line,
				       sizeof(line));)
		print_dom(line);
	return 0;
}
