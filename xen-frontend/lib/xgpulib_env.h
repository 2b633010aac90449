/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_env.h: the guest library's settings (its environment) and its
 * messages.  Every XGPU_* variable is read through here; the README lists
 * them.  Messages go to stderr with an "xgpu:" prefix: always for errors
 * the program should know about, and with XGPU_DEBUG set (not "0") for
 * what helps to find out why a program fails (unsupported calls, export
 * table slots, deferred errors).
 */
#ifndef XGPULIB_ENV_H
#define XGPULIB_ENV_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Marks a CUDA entry point the library defines.  The version script
 * (libcuda.map) decides what is exported; this only says it in the code.
 */
#define XGPULIB_EXPORT __attribute__((visibility("default")))

/* XGPU_DEBUG is set; read once, safe to call from any thread at any time
 * (cudart may look up entry points before our constructors ran) */
bool xgpulib_debug_on(void);
/* XGPU_DEBUG=2: also every entry point cuGetProcAddress hands out */
bool xgpulib_trace_on(void);
/* XGPU_DEBUG=3: also every call made through those entry points */
bool xgpulib_call_trace_on(void);

void xgpulib_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* xgpulib_log, the first time this line is reached only */
#define xgpulib_log_once(...)						\
	do {								\
		static int said_;					\
		if (!__atomic_exchange_n(&said_, 1, __ATOMIC_RELAXED))	\
			xgpulib_log(__VA_ARGS__);			\
	} while (0)
void xgpulib_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* a numeric setting (decimal, or 0x hex), def when unset or empty */
unsigned int xgpulib_env_uint(const char *name, unsigned int def);
/* a string setting, def when unset or empty */
const char *xgpulib_env_str(const char *name, const char *def);

/* this process's name (/proc/self/comm), for the backend's logs */
void xgpulib_proc_name(char *buf, size_t len);

/*
 * The default body of a driver entry point nobody implemented (the
 * generated xgpulib_stubs.c): CUDA_ERROR_NOT_SUPPORTED, said once per
 * name under XGPU_DEBUG, since it is the usual reason a program fails.
 */
int xgpulib_unsupported(const char *name, int *once);

#endif /* XGPULIB_ENV_H */
