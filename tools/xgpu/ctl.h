/* SPDX-License-Identifier: MIT */
/*
 * ctl.h: the CLI's side of the control socket (ctl.c): one request to
 * xen-gpubackd, one reply, and the reply's records read back.  The
 * protocol is xen-backend/include/xgpu_ctl.h's.
 *
 * Exit statuses of the CLI: 0; XGPU_EXIT_FAIL when the daemon (or
 * xenstore) refused or could not be reached; XGPU_EXIT_USAGE on a usage
 * error, after which main prints the usage.
 */
#ifndef XGPU_CLI_CTL_H
#define XGPU_CLI_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "xgpu_ctl.h"

#define XGPU_EXIT_FAIL	1
#define XGPU_EXIT_USAGE	2

/* longer than any record */
#define CTL_LINE_MAX	2048

/* the daemon's control socket (-s, $XGPU_CTL_PATH_ENV or the default) */
extern const char *ctl_socket;

/* "--json" or "-j" */
bool ctl_json_opt(const char *arg);
/* a usage error of command cmd: "xgpu CMD: WHY" on stderr; returns
 * XGPU_EXIT_USAGE */
int ctl_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* whether s is a whole number from lo to hi (else says so, as option opt
 * of cmd) */
bool ctl_uint_ok(const char *cmd, const char *opt, const char *s,
		 unsigned long lo, unsigned long hi);
/* send one request; the reply's records (after "ok"), or NULL once the
 * daemon's error is printed.  Exits (XGPU_EXIT_FAIL) when the daemon
 * cannot be reached. */
const char *ctl_ask(const char *req);
/* the next record of type rec after *cursor, copied into line (cut at
 * len - 1); false at the end */
bool ctl_record(const char **cursor, const char *rec, char *line,
		size_t len);
/* the value of key in a record ("-" if absent); buf holds it */
const char *ctl_val(const char *line, const char *key, char *buf,
		    size_t len);
/* a column of a table of records: its heading, its record's key, its
 * width (negative: left-aligned) */
struct ctl_col {
	const char *head;
	const char *key;
	int width;
};
/* the records of type rec as a table of those columns, headings first */
void ctl_print_table(const char *data, const char *rec,
		     const struct ctl_col *cols, size_t ncols);
/* the records of type rec as a JSON array of objects */
void ctl_print_json(const char *data, const char *rec);
/* ask req and print the reply's records: as JSON those of type rec, or
 * with print; the exit status */
int ctl_show(const char *req, bool json, const char *rec,
	     void (*print)(const char *data));
/* ctl_show for a command whose only option is --json (argv[0]: its
 * name) */
int ctl_show_cmd(int argc, char **argv, const char *req, const char *rec,
		 void (*print)(const char *data));

#endif /* XGPU_CLI_CTL_H */
