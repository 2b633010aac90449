// SPDX-License-Identifier: MIT
/* xgpulib_env.c: settings and messages of the guest library. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib_env.h"

/* CUDA_ERROR_NOT_SUPPORTED: this file stays free of cuda.h */
#define NOT_SUPPORTED 801

static int debug_level(void)
{
	static int debug = -1;
	int d = __atomic_load_n(&debug, __ATOMIC_RELAXED);

	if (d < 0) {
		const char *v = getenv("XGPU_DEBUG");

		d = 0;
		if (v && *v && strcmp(v, "0") != 0)
			d = strcmp(v, "3") == 0 ? 3 :
			    strcmp(v, "2") == 0 ? 2 : 1;
		__atomic_store_n(&debug, d, __ATOMIC_RELAXED);
	}
	return d;
}

bool xgpulib_debug_on(void)
{
	return debug_level() > 0;
}

bool xgpulib_trace_on(void)
{
	return debug_level() > 1;
}

bool xgpulib_call_trace_on(void)
{
	return debug_level() > 2;
}

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s\n", prefix, buf);
}

void xgpulib_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("xgpu", fmt, ap);
	va_end(ap);
}

void xgpulib_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!xgpulib_debug_on())
		return;
	va_start(ap, fmt);
	vsay("xgpu[debug]", fmt, ap);
	va_end(ap);
}

unsigned int xgpulib_env_uint(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 0) : def;
}

const char *xgpulib_env_str(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

void xgpulib_proc_name(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/comm", "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

int xgpulib_unsupported(const char *name, int *once)
{
	if (xgpulib_debug_on() && !__atomic_exchange_n(once, 1,
						       __ATOMIC_RELAXED))
		fprintf(stderr, "xgpu: %s is not supported "
			"(CUDA_ERROR_NOT_SUPPORTED)\n", name);
	return NOT_SUPPORTED;
}
