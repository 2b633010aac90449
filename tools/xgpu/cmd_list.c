// SPDX-License-Identifier: MIT
/*
 * cmd_list.c: `xgpu list` and `xgpu top`, the guests as a table (or
 * JSON), once or refreshing.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "subcommands.h"

static void print_list(const char *data)
{
	char l[CTL_LINE_MAX], b[13][96], idb[100];
	int n = 0;

	printf("%-5s %-16s %3s %6s %4s %9s %-6s %10s %6s %6s %11s %8s %5s\n",
	       "ID", "Name", "Ch", "Weight", "Cap", "Credit", "State",
	       "GPU(s)", "Per%", "Min%", "Mem(MiB)", "Calls/s", "Queue");
	while (ctl_record(&data, XGPU_CTL_REC_GUEST, l, sizeof(l))) {
		n++;
		ctl_val(l, "kind", b[0], 96);
		ctl_val(l, "id", b[1], 96);
		snprintf(idb, sizeof(idb), "%s%s",
			 strcmp(b[0], "xen") ? "c" : "", b[1]);
		printf("%-5s %-16.16s %3s %6s %4s %9s %-6s %10.3f %6s %6s "
		       "%5s/%-5s %8s %5s\n", idb,
		       ctl_val(l, "name", b[2], 96),
		       ctl_val(l, "channels", b[3], 96),
		       ctl_val(l, "weight", b[4], 96),
		       ctl_val(l, "cap", b[5], 96),
		       ctl_val(l, "credit_us", b[6], 96),
		       ctl_val(l, "state", b[7], 96),
		       atof(ctl_val(l, "gpu_ms", b[8], 96)) / 1000.0,
		       ctl_val(l, "share_period", b[9], 96),
		       ctl_val(l, "share_minute", b[10], 96),
		       ctl_val(l, "mem_mib", b[11], 96),
		       ctl_val(l, "quota_mib", b[12], 96),
		       ctl_val(l, "calls_per_s", b[0], 96),
		       ctl_val(l, "qdepth", b[1], 96));
	}
	if (!n)
		printf("(no guests)\n");
}

int cmd_list(int argc, char **argv)
{
	return ctl_show_cmd(argc, argv, XGPU_CTL_CMD_LIST, XGPU_CTL_REC_GUEST,
			    print_list);
}

int cmd_top(int argc, char **argv)
{
	double delay = 1.0;
	long iters = -1;
	char *end = NULL;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		switch (c) {
		case 'd':
			delay = strtod(optarg, &end);
			if (!*optarg || *end || !(delay >= 0.1 &&
						  delay <= 3600)) {
				fprintf(stderr, "xgpu top: -d: '%s' is not a "
					"number of seconds from 0.1 to 3600\n",
					optarg);
				return XGPU_EXIT_USAGE;
			}
			break;
		case 'n':
			iters = strtol(optarg, &end, 10);
			if (!*optarg || *end || iters < 1) {
				fprintf(stderr, "xgpu top: -n: '%s' is not a "
					"whole number from 1\n", optarg);
				return XGPU_EXIT_USAGE;
			}
			break;
		default:
			return XGPU_EXIT_USAGE;
		}
	}
	for (long i = 0; iters < 0 || i < iters; i++) {
		const char *data = ctl_ask(XGPU_CTL_CMD_LIST);
		time_t now = time(NULL);
		char ts[32];

		if (!data)
			return XGPU_EXIT_FAIL;
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
