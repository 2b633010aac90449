// drvlogs: the driver's error log (cuLogs*) and core dump settings
// (cuCoredump*), through the driver API; natively and through xgpu the
// lines must be equal:
//  - cuLogsCurrent, with flags 0 and 1
//  - a callback registered with cuLogsRegisterCallback sees the messages
//    of two calls the driver refuses (an allocation of 1 PiB, a function
//    a module lacks) with their levels, before each call returns
//  - cuLogsDumpToMemory from the iterator taken before them: the text,
//    the size written, the iterator's advance; a buffer of 8 bytes
//  - cuLogsDumpToFile over a file holding a line, the file read back
//  - unregistering (not twice: the driver crashes then); registering a
//    NULL callback
//  - cuCoredumpGetAttribute[Global] of every attribute (FILE and PIPE
//    shown with the host name and pid replaced), its size asked with a
//    NULL value; setting FILE, GENERATION_FLAGS and TRIGGER_HOST and
//    reading them back, per context and globally
//  - the checkpoint state of this process (another's: xgpu does not know
//    it, see the README)
//
// Output: deterministic result lines, then "PASS drvlogs" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const char *ename(CUresult rc)
{
	const char *n = NULL;

	cuGetErrorName(rc, &n);
	return n ? n : "?";
}

// a message as its program would print it: the host name and the pid
// replaced, so that the lines of two processes compare
static std::string plain(const char *m, size_t len)
{
	std::string s(m, len), host, pid = std::to_string(getpid());
	char h[256] = "";

	gethostname(h, sizeof(h) - 1);
	host = h;
	for (const std::string *w : { &host, &pid }) {
		size_t at;

		while (!w->empty() && (at = s.find(*w)) != std::string::npos)
			s.replace(at, w->size(), *w == pid ? "PID" : "HOST");
	}
	while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
		s.pop_back();
	// a dumped line begins [HH:MM:SS.mmm][thread id]: each line
	std::string out;

	for (size_t at = 0; at <= s.size();) {
		size_t nl = s.find('\n', at), close;
		std::string line = s.substr(at, nl == std::string::npos ?
						    std::string::npos : nl - at);

		if (line.size() > 1 && line[0] == '[' &&
		    (close = line.find("][")) != std::string::npos &&
		    (close = line.find(']', close + 2)) != std::string::npos)
			line.replace(0, close + 1, "[TIME][THREAD]");
		out += line;
		if (nl == std::string::npos)
			break;
		out += '\n';
		at = nl + 1;
	}
	s = out;
	return s;
}

static int seen;

static void on_log(void *data, CUlogLevel level, char *msg, size_t len)
{
	seen++;
	printf("  callback %d (data %s): level %d: %s\n", seen,
	       data == &seen ? "ours" : "other", (int)level,
	       plain(msg, len).c_str());
}

static void logs(CUmodule mod)
{
	CUlogIterator it0 = 0, it = 0, it2;
	CUlogsCallbackHandle h = NULL;
	CUdeviceptr p;
	CUfunction f;
	CUresult rc;
	char buf[32768];
	size_t size;

	rc = cuLogsCurrent(&it0, 0);
	printf("logs current: %s\n", ename(rc));
	rc = cuLogsCurrent(&it, 1);
	printf("logs current, flags 1: %s\n", ename(rc));
	rc = cuLogsRegisterCallback(NULL, NULL, &h);
	printf("register NULL callback: %s\n", ename(rc));
	rc = cuLogsRegisterCallback(on_log, &seen, &h);
	printf("register callback: %s, handle %s\n", ename(rc),
	       h ? "set" : "NULL");
	it = it0;

	rc = cuMemAlloc(&p, (size_t)1 << 50);
	printf("alloc 1 PiB: %s; callbacks so far %d\n", ename(rc), seen);
	rc = cuModuleGetFunction(&f, mod, "no_such_kernel");
	printf("missing function: %s; callbacks so far %d\n", ename(rc), seen);

	size = sizeof(buf);
	rc = cuLogsDumpToMemory(&it, buf, &size, 0);
	printf("dump to memory: %s, %s, iterator %s\n", ename(rc),
	       size ? "bytes" : "nothing", it != it0 ? "advanced" : "kept");
	if (!rc && size)
		printf("  text: [%s] (size %s the text's, %s terminated)\n",
		       plain(buf, size).c_str(),
		       size == strlen(buf) ? "is" : "is not",
		       buf[size] == '\0' ? "NUL" : "not");
	size = sizeof(buf);
	it2 = it;
	rc = cuLogsDumpToMemory(&it2, buf, &size, 0);
	printf("dump again from there: %s, %zu bytes\n", ename(rc), size);
	size = 8;
	it2 = it0;
	rc = cuLogsDumpToMemory(&it2, buf, &size, 0);
	printf("dump into 8 bytes: %s, size %zu\n", ename(rc), size);
	size = sizeof(buf);
	it2 = it0;
	rc = cuLogsDumpToMemory(&it2, buf, &size, 1);
	printf("dump with flags 1: %s, %s\n", ename(rc),
	       size ? "bytes" : "nothing");

	char path[] = "/tmp/xgpu-drvlogs-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, "a line before\n", 14) != 14) {
		printf("FAIL mkstemp\n");
		exit(1);
	}
	close(fd);
	it2 = it0;
	rc = cuLogsDumpToFile(&it2, path, 0);
	printf("dump to file: %s, iterator %s\n", ename(rc),
	       it2 != it0 ? "advanced" : "kept");
	FILE *fp = fopen(path, "r");
	size = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
	if (fp)
		fclose(fp);
	unlink(path);
	printf("  file: [%s] (%s, %s)\n", plain(buf, size).c_str(),
	       size ? "bytes" : "empty",
	       size && buf[size - 1] == '\n' ? "a newline at its end" :
						"no newline at its end");
	rc = cuLogsDumpToFile(&it2, "/nonexistent-dir/x", 0);
	printf("dump to a path that cannot be made: %s\n", ename(rc));

	rc = cuLogsUnregisterCallback(h);
	printf("unregister: %s\n", ename(rc));
	rc = cuMemAlloc(&p, (size_t)1 << 50);
	printf("alloc 1 PiB unregistered: %s; callbacks %d\n", ename(rc), seen);
}

static const char *const attr_name[] = {
	"?", "ENABLE_ON_EXCEPTION", "TRIGGER_HOST", "LIGHTWEIGHT",
	"ENABLE_USER_TRIGGER", "FILE", "PIPE", "GENERATION_FLAGS",
};

static void show(bool global, int a)
{
	char v[1100];
	size_t size = 0;
	CUresult rc;
	auto get = global ? cuCoredumpGetAttributeGlobal :
			    cuCoredumpGetAttribute;

	rc = get((CUcoredumpSettings)a, NULL, &size);
	printf("  %s %s: size %s %zu", global ? "global" : "context",
	       attr_name[a], ename(rc), size);
	memset(v, 0, sizeof(v));
	if (rc)
		size = sizeof(v);	/* a size the driver did not give */
	rc = get((CUcoredumpSettings)a, v, &size);
	if (a == CU_COREDUMP_FILE || a == CU_COREDUMP_PIPE)
		printf("; %s [%s] size %zu\n", ename(rc),
		       plain(v, strnlen(v, sizeof(v))).c_str(), size);
	else
		printf("; %s %u size %zu\n", ename(rc), *(unsigned *)v, size);
}

static void coredump(void)
{
	for (int g = 0; g < 2; g++)
		for (int a = 1; a < CU_COREDUMP_MAX; a++)
			show(g, a);
	printf("  an unknown attribute: %s\n",
	       ename(cuCoredumpGetAttribute(CU_COREDUMP_MAX, NULL, NULL)));

	char file[] = "/tmp/xgpu-core.%p";
	size_t size = sizeof(file);
	unsigned flags = CU_COREDUMP_SKIP_GLOBAL_MEMORY | CU_COREDUMP_SKIP_ABORT;
	bool off = false;

	for (int g = 0; g < 2; g++) {
		auto set = g ? cuCoredumpSetAttributeGlobal :
			       cuCoredumpSetAttribute;

		size = sizeof(file);
		printf("set %s FILE: %s\n", g ? "global" : "context",
		       ename(set(CU_COREDUMP_FILE, file, &size)));
		size = sizeof(flags);
		printf("set %s GENERATION_FLAGS: %s\n", g ? "global" : "context",
		       ename(set(CU_COREDUMP_GENERATION_FLAGS, &flags, &size)));
		size = sizeof(off);
		printf("set %s TRIGGER_HOST false: %s\n",
		       g ? "global" : "context",
		       ename(set(CU_COREDUMP_TRIGGER_HOST, &off, &size)));
		size = sizeof(off);
		printf("set %s ENABLE_ON_EXCEPTION false: %s\n",
		       g ? "global" : "context",
		       ename(set(CU_COREDUMP_ENABLE_ON_EXCEPTION, &off,
				 &size)));
		show(g, CU_COREDUMP_FILE);
		show(g, CU_COREDUMP_GENERATION_FLAGS);
		show(g, CU_COREDUMP_TRIGGER_HOST);
		show(g, CU_COREDUMP_LIGHTWEIGHT);
	}
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUprocessState st;
	static const char ptx[] =
		".version 8.0\n.target sm_50\n.address_size 64\n"
		".visible .entry k() { ret; }\n";

	setvbuf(stdout, NULL, _IOLBF, 0);
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	CKD(cuModuleLoadData(&mod, ptx));
	logs(mod);
	printf("core dump settings:\n");
	coredump();
	printf("checkpoint state of this process: %s",
	       ename(cuCheckpointProcessGetState(getpid(), &st)));
	printf(" (%d)\n", (int)st);
	CKD(cuModuleUnload(mod));
	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("PASS drvlogs\n");
	return 0;
}
