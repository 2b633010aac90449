/* SPDX-License-Identifier: MIT */
/*
 * steps.h: the step reports that several integration programs share.  A
 * program groups its checks in steps: begin("name"), the checks, end().
 * A step prints "PASS name", or "FAIL name: why" for its first failed
 * check only; passed and failed count the steps (main reports them and
 * exits 1 if any failed).  Each program is one file: everything here is
 * static.
 */
#ifndef XGPU_TEST_STEPS_H
#define XGPU_TEST_STEPS_H

#include <cuda.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static const char *step;
static int step_failed, passed, failed;

static inline void begin(const char *name)
{
	step = name;
	step_failed = 0;
}

static inline void failf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* fail the step; only its first failure is printed */
static inline void failf(const char *fmt, ...)
{
	va_list ap;

	if (step_failed++)
		return;
	printf("FAIL %s: ", step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void end(void)
{
	if (step_failed) {
		failed++;
	} else {
		passed++;
		printf("PASS %s\n", step);
	}
	fflush(stdout);
}

/* rc's name, "(unknown error)" where the driver has none */
static inline const char *ename(CUresult rc)
{
	const char *s = NULL;

	if (cuGetErrorName(rc, &s) != CUDA_SUCCESS || !s)
		return "(unknown error)";
	return s;
}

/* call must succeed; false (and the step failed) if not */
#define OK(call) ok_((call), #call)

static inline bool ok_(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return true;
	failf("%s: %s (%d)", what, ename(rc), (int)rc);
	return false;
}

/* cond must hold; else the step fails with the message */
#define EXPECT(cond, ...)                                                    \
	do {                                                                 \
		if (!(cond))                                                 \
			failf(__VA_ARGS__);                                  \
	} while (0)

/* call must return want */
#define WANT(want, call)                                                     \
	do {                                                                 \
		CUresult rc_ = (call);                                       \
		if (rc_ != (want))                                           \
			failf("%s: %s, want %s (line %d)", #call,            \
			      ename(rc_), ename(want), __LINE__);            \
	} while (0)

#endif /* XGPU_TEST_STEPS_H */
