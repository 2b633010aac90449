// SPDX-License-Identifier: MIT
/*
 * drvlogs: the driver's error log (cuLogs*) on the fake device, whose
 * log is shaped as the real driver's (tests/fakecuda/fakecuda_logs.c):
 *   - callback: a registered callback gets the message of each error the
 *     worker's driver returns (an allocation past the device, a function
 *     the module lacks) with its userData, before the call returns;
 *   - dump: cuLogsDumpToMemory from an iterator of cuLogsCurrent taken
 *     before: both lines, the iterator advanced, nothing more from there,
 *     a buffer too small refused with size 0 (and that refusal logged),
 *     NULL arguments refused;
 *   - file: cuLogsDumpToFile over a file holding a line: the file holds
 *     the log's lines; a path that cannot be opened refused, its messages
 *     handed to the callback;
 *   - unregister: no call after it; a stale, a forged and a NULL handle
 *     refused; registering no callback refused; two callbacks both
 *     called;
 *   - coredump: the settings read and set (per context, per process),
 *     sizes checked by the driver, the paths kept in the guest (a
 *     process-wide one with %p made the pid), turning dumps on refused
 *     with CUDA_ERROR_NOT_PERMITTED;
 *   - checkpoint-state: this process is running; another's state and
 *     checkpoints refused.
 * After each bad input the channel must still serve the guest.
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "steps.h"

static const char image[] = "XGPU-FAKE-MODULE\n";

static struct seen {
	int calls;
	bool in_call;		/* set around the failing calls */
	bool outside;		/* a call came while in_call was false */
	void *data;
	int level;
	char last[512];
} a, b;

static void cb(void *data, CUlogLevel level, char *msg, size_t len)
{
	struct seen *s = data;

	s->calls++;
	if (!s->in_call)
		s->outside = true;
	s->data = data;
	s->level = (int)level;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)len, msg);
}

static bool serves(void)
{
	CUdeviceptr p;

	if (cuMemAlloc(&p, 4096) != CUDA_SUCCESS)
		return false;
	return cuMemFree(p) == CUDA_SUCCESS;
}

int main(void)
{
	CUcontext ctx;
	CUdevice dev;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr p;
	CUlogsCallbackHandle h = NULL, h2 = NULL;
	CUlogIterator it0 = 0, it;
	char buf[8192];
	size_t size;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuModuleLoadData(&mod, image)) {
		printf("FAIL setup\n");
		return 1;
	}

	begin("callback");
	OK(cuLogsCurrent(&it0, 0));
	OK(cuLogsRegisterCallback(cb, &a, &h));
	EXPECT(h != NULL, "no handle");
	a.in_call = true;
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)1 << 50));
	a.in_call = false;
	EXPECT(a.calls == 1 && a.data == &a && a.level == CU_LOG_LEVEL_ERROR &&
	       !strcmp(a.last, "Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from "
			       "cuMemAlloc_v2"),
	       "after the allocation: %d call(s), last [%s]", a.calls, a.last);
	a.in_call = true;
	WANT(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, mod, "no_such"));
	a.in_call = false;
	EXPECT(a.calls == 2 && !strcmp(a.last, "Returning 500 "
				       "(CUDA_ERROR_NOT_FOUND) from "
				       "cuModuleGetFunction"),
	       "after the function: %d call(s), last [%s]", a.calls, a.last);
	EXPECT(serves(), "the channel no longer serves");
	EXPECT(!a.outside && a.calls == 2, "callback called outside the "
	       "failing calls (%d calls)", a.calls);
	end();

	begin("dump");
	it = it0;
	size = sizeof(buf);
	OK(cuLogsDumpToMemory(&it, buf, &size, 0));
	EXPECT(size == strlen(buf) &&
	       !strcmp(buf, "[00:00:00.000][1][CUDA][E] Returning 2 "
			    "(CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc_v2\n"
			    "[00:00:00.000][1][CUDA][E] Returning 500 "
			    "(CUDA_ERROR_NOT_FOUND) from cuModuleGetFunction"),
	       "text [%s], size %zu", buf, size);
	EXPECT(it == it0 + 2, "iterator %u, want %u", it, it0 + 2);
	size = sizeof(buf);
	OK(cuLogsDumpToMemory(&it, buf, &size, 0));
	EXPECT(size == 0 && buf[0] == '\0', "again: %zu bytes", size);
	it = it0;
	size = 8;
	a.in_call = true;
	WANT(CUDA_ERROR_INVALID_VALUE, cuLogsDumpToMemory(&it, buf, &size, 0));
	a.in_call = false;
	EXPECT(size == 0, "8 bytes: size %zu", size);
	EXPECT(a.calls == 4 && strstr(a.last, "from cuLogsDumpToMemory"),
	       "8 bytes: %d calls, last [%s]", a.calls, a.last);
	WANT(CUDA_ERROR_INVALID_VALUE, cuLogsDumpToMemory(&it, NULL, &size, 0));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLogsDumpToMemory(&it, buf, NULL, 0));
	size = sizeof(buf);
	OK(cuLogsDumpToMemory(NULL, buf, &size, 0));
	EXPECT(strstr(buf, "from cuModuleGetFunction") != NULL,
	       "all: [%s]", buf);
	EXPECT(serves(), "the channel no longer serves");
	end();

	begin("file");
	{
		char path[] = "/tmp/xgpu-drvlogs-XXXXXX";
		int fd = mkstemp(path);
		FILE *fp;

		if (fd < 0 || write(fd, "a line before\n", 14) != 14)
			failf("mkstemp");
		if (fd >= 0)
			close(fd);
		it = it0;
		OK(cuLogsDumpToFile(&it, path, 0));
		fp = fopen(path, "r");
		size = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
		buf[size] = '\0';
		if (fp)
			fclose(fp);
		unlink(path);
		EXPECT(!strncmp(buf, "[00:00:00.000][1][CUDA][E] Returning 2 ",
				39) &&
		       size && buf[size - 1] == '\n' &&
		       !strstr(buf, "a line before"),
		       "file [%s]", buf);
		EXPECT(it > it0, "iterator not advanced");
		a.in_call = true;
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuLogsDumpToFile(&it, "/nonexistent-dir/x", 0));
		a.in_call = false;
		EXPECT(a.calls == 6 && !strcmp(a.last, "Returning 1 "
					       "(CUDA_ERROR_INVALID_VALUE) "
					       "from cuLogsDumpToFile"),
		       "bad path: %d calls, last [%s]", a.calls, a.last);
		WANT(CUDA_ERROR_INVALID_VALUE, cuLogsDumpToFile(&it, NULL, 0));
	}
	end();

	begin("unregister");
	a.in_call = true;
	OK(cuLogsRegisterCallback(cb, &b, &h2));
	b.in_call = true;
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)1 << 50));
	EXPECT(a.calls == 7 && b.calls == 1, "two callbacks: %d and %d calls",
	       a.calls, b.calls);
	OK(cuLogsUnregisterCallback(h));
	OK(cuLogsUnregisterCallback(h2));
	WANT(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)1 << 50));
	EXPECT(a.calls == 7 && b.calls == 1, "called after unregistering: "
	       "%d and %d calls", a.calls, b.calls);
	WANT(CUDA_ERROR_INVALID_VALUE, cuLogsUnregisterCallback(h));
	WANT(CUDA_ERROR_INVALID_VALUE,
	     cuLogsUnregisterCallback((CUlogsCallbackHandle)buf));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLogsUnregisterCallback(NULL));
	WANT(CUDA_ERROR_INVALID_VALUE, cuLogsRegisterCallback(NULL, NULL, &h));
	size = sizeof(buf);
	it = it0;
	OK(cuLogsDumpToMemory(NULL, buf, &size, 0));
	EXPECT(strstr(buf, "callbackFunc cannot be NULL") != NULL,
	       "the refusal is not in the log: [%s]", buf);
	EXPECT(serves(), "the channel no longer serves");
	end();

	begin("coredump");
	{
		unsigned char on = 1, off = 0, v = 9;
		unsigned int flags = CU_COREDUMP_SKIP_ABORT, fv = 0;
		char path[1024], want[64];

		size = 0;
		OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION,
						NULL, &size));
		EXPECT(size == 1, "bool size %zu", size);
		OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION,
						&v, &size));
		EXPECT(v == 0, "dumps on by default");
		size = 1;
		WANT(CUDA_ERROR_NOT_PERMITTED,
		     cuCoredumpSetAttributeGlobal(
			     CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size));
		WANT(CUDA_ERROR_NOT_PERMITTED,
		     cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION,
					    &on, &size));
		WANT(CUDA_ERROR_NOT_PERMITTED,
		     cuCoredumpSetAttributeGlobal(
			     CU_COREDUMP_ENABLE_USER_TRIGGER, &on, &size));
		OK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION,
						&off, &size));
		OK(cuCoredumpGetAttribute(CU_COREDUMP_TRIGGER_HOST, &v, &size));
		EXPECT(v == 1, "TRIGGER_HOST default %u", v);
		OK(cuCoredumpSetAttribute(CU_COREDUMP_TRIGGER_HOST, &off,
					  &size));
		OK(cuCoredumpGetAttribute(CU_COREDUMP_TRIGGER_HOST, &v, &size));
		EXPECT(v == 0, "TRIGGER_HOST set to %u", v);
		size = 4;
		OK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS,
						&flags, &size));
		OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS,
						&fv, &size));
		EXPECT(fv == flags, "flags read %#x", fv);
		size = 8;
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS,
						  &fv, &size));
		size = 5000;
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuCoredumpGetAttribute(CU_COREDUMP_TRIGGER_HOST, buf,
					    &size));
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuCoredumpGetAttribute(CU_COREDUMP_MAX, NULL, &size));
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuCoredumpGetAttribute(CU_COREDUMP_PIPE, NULL, &size));
		size = sizeof(path);
		memset(path, 'x', sizeof(path));
		OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, path, &size));
		EXPECT(path[0] == '\0', "FILE default [%.20s]", path);
		snprintf(path, sizeof(path), "/tmp/core.%%p");
		size = sizeof(path);
		OK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, path, &size));
		OK(cuCoredumpSetAttribute(CU_COREDUMP_FILE, path, &size));
		memset(path, 0, sizeof(path));
		OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, path, &size));
		snprintf(want, sizeof(want), "/tmp/core.%ld", (long)getpid());
		EXPECT(!strcmp(path, want), "global FILE [%s], want [%s]",
		       path, want);
		OK(cuCoredumpGetAttribute(CU_COREDUMP_FILE, path, &size));
		EXPECT(!strcmp(path, "/tmp/core.%p"), "context FILE [%s]",
		       path);
		size = 4;
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuCoredumpGetAttribute(CU_COREDUMP_FILE, path, &size));
		EXPECT(serves(), "the channel no longer serves");
	}
	end();

	begin("checkpoint-state");
	{
		CUprocessState st = CU_PROCESS_STATE_FAILED;

		OK(cuCheckpointProcessGetState((int)getpid(), &st));
		EXPECT(st == CU_PROCESS_STATE_RUNNING, "state %d", (int)st);
		WANT(CUDA_ERROR_NOT_SUPPORTED,
		     cuCheckpointProcessGetState(1, &st));
		WANT(CUDA_ERROR_INVALID_VALUE,
		     cuCheckpointProcessGetState((int)getpid(), NULL));
		WANT(CUDA_ERROR_NOT_SUPPORTED,
		     cuCheckpointProcessLock((int)getpid(), NULL));
	}
	end();

	cuModuleUnload(mod);
	cuDevicePrimaryCtxRelease(dev);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
