// SPDX-License-Identifier: MIT
/* xgpub_log.c: log lines to syslog (daemon) or stderr (foreground). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "xgpub.h"

static bool to_syslog;
static const char *log_ident;
static int verbosity;
static char prefix[96];

void xgpub_log_init(const char *ident, bool use_syslog, int verbose)
{
	to_syslog = use_syslog;
	log_ident = ident;
	verbosity = verbose;
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

void xgpub_log_forked(void)
{
	/* the C library's connection to syslog goes; the next line makes
	 * a new one */
	if (to_syslog) {
		closelog();
		openlog(log_ident, LOG_PID, LOG_DAEMON);
	}
}

void xgpub_log_prefix(const char *p)
{
	snprintf(prefix, sizeof(prefix), "%s", p ? p : "");
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	char buf[768];

	if (verbosity < 0)
		return;		/* quiet (the fuzz targets) */
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (to_syslog)
		syslog(prio, "%s%s%s", prefix, *prefix ? ": " : "", buf);
	else
		fprintf(stderr, "xen-gpubackd%s%s: %s\n", *prefix ? " " : "",
			prefix, buf);
}

void xgpub_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void xgpub_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

bool xgpub_debugging(void)
{
	return verbosity >= 1;
}

void xgpub_dbg(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}
