// SPDX-License-Identifier: MIT
/*
 * managed: managed memory touched by the CPU and by kernels in turn, in
 * several allocations and from several threads, as a program does it
 * (write, launch, synchronise, read): every byte must be what the last
 * writer wrote.  Run in either mode (README, "Managed memory"); in
 * coherent mode (XGPU_MANAGED=coherent, or the Xen transport) it also
 * checks what that mode adds:
 *   - pages start inaccessible and a touch makes them readable;
 *   - a SIGSEGV outside managed memory still reaches the program's own
 *     handler (installed before cuInit);
 *   - copies and memsets whose host side is managed memory see what the
 *     CPU wrote, and the CPU sees what they wrote;
 *   - a child forked after cuInit does not reach the parent's managed
 *     memory (it dies of SIGSEGV touching it; the parent's bytes stay).
 * Prints "PASS managed ..." lines, the fault cost measured, "FAIL ..." on
 * any difference, and exits 1 then.
 */
#include <cuda.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 4
#define ITERS 12
/* "managed quick" (the nested-Xen test, under emulation): fewer of both */
static int nthreads = NTHREADS, iters = ITERS;
/* words per thread: an odd size, neither a block nor a page multiple */
#define TWORDS (300000 + 17)

static const char image[] = "XGPU-FAKE-MODULE\n";
static CUcontext ctx;
static CUfunction fill, vadd, scale;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static int failed;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_mu);
	if (failed < 10) {
		printf("FAIL managed: ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	failed++;
	pthread_mutex_unlock(&out_mu);
}

static int ok_(CUresult rc, const char *what)
{
	const char *name = NULL;

	if (rc == CUDA_SUCCESS)
		return 1;
	cuGetErrorName(rc, &name);
	fail("%s: %s", what, name ? name : "?");
	return 0;
}

#define OK(call) ok_((call), #call)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the protection of the page holding p, from /proc/self/maps ("rw-s") */
static void prot_of(const void *p, char out[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	strcpy(out, "????");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
		    (uintptr_t)p >= lo && (uintptr_t)p < hi) {
			memcpy(out, perms, 4);
			out[4] = 0;
			break;
		}
	}
	fclose(f);
}

static int launch(CUfunction f, CUstream s, void **params)
{
	return OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
}

/* ---- a host function that reads and writes managed memory ---------------- */

struct hf_arg {
	double *p;
	size_t n;
	double sum;
};

static void CUDA_CB hf_touch(void *user)
{
	struct hf_arg *a = user;

	a->sum = 0;
	for (size_t i = 0; i < a->n; i++) {
		a->sum += a->p[i];
		a->p[i] += 1.0;
	}
}

/*
 * A kernel stores 2s, a host function on the same stream reads them and
 * adds 1 to each while this thread waits in the stream's synchronisation
 * (the worker then waits for the function: in coherent mode the
 * function's blocks go through its slot, not the ring), then a kernel
 * multiplies what the function wrote by 3.
 */
static void hostfn(void)
{
	int32_t n = 150000;	/* more than one block, not a whole one */
	CUdeviceptr d = 0;
	CUstream s = NULL;
	struct hf_arg a = { 0 };
	double two = 2.0, three = 3.0;
	char set = 's', mul = 'm';
	void *p2[] = { &d, &two, &set, &n };
	void *p3[] = { &d, &three, &mul, &n };
	double *p;
	int32_t bad = 0;

	if (!OK(cuMemAllocManaged(&d, (size_t)n * sizeof(double),
				  CU_MEM_ATTACH_GLOBAL)) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)))
		return;
	p = (double *)(uintptr_t)d;
	a.p = p;
	a.n = (size_t)n;
	if (!launch(scale, s, p2) || !OK(cuLaunchHostFunc(s, hf_touch, &a)) ||
	    !launch(scale, s, p3) || !OK(cuStreamSynchronize(s)))
		goto out;
	if (a.sum != 2.0 * n)
		fail("host function read sum %.0f, wanted %.0f", a.sum,
		     2.0 * n);
	for (int32_t i = 0; i < n; i++)
		bad += p[i] != 9.0;
	if (bad)
		fail("after the host function and the kernel: %d of %d "
		     "elements wrong (p[0] %g, wanted 9)", bad, n, p[0]);
	else
		printf("PASS managed host function (read 2s, wrote 3s, the "
		       "kernel made them 9s)\n");
out:
	if (s)
		OK(cuStreamDestroy(s));
	OK(cuMemFree(d));
}

/* ---- several threads, each with its allocations and its stream ----------- */

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	CUdeviceptr a = 0, b = 0, c = 0;
	CUstream s = NULL;
	float *fa, *fb, *fc;
	int n = TWORDS;

	if (!OK(cuCtxSetCurrent(ctx)) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemAllocManaged(&a, n * sizeof(float),
				  CU_MEM_ATTACH_GLOBAL)) ||
	    !OK(cuMemAllocManaged(&b, n * sizeof(float),
				  CU_MEM_ATTACH_GLOBAL)) ||
	    !OK(cuMemAllocManaged(&c, n * sizeof(float),
				  CU_MEM_ATTACH_GLOBAL)))
		goto out;
	fa = (float *)(uintptr_t)a;
	fb = (float *)(uintptr_t)b;
	fc = (float *)(uintptr_t)c;
	for (int it = 0; it < iters && !failed; it++) {
		uint32_t v = 0x1000u * (uint32_t)t + (uint32_t)it;
		int part = n / (it + 2);
		void *pv[] = { &a, &b, &c, &n };
		void *pf[] = { &c, &v, &part };

		/* the CPU writes a and b (every block, every iteration) */
		for (int i = 0; i < n; i++) {
			fa[i] = (float)(i % 1000 + t);
			fb[i] = (float)(it * 3);
		}
		/* the GPU reads them and writes c */
		if (!launch(vadd, s, pv))
			break;
		if (!OK(cuStreamSynchronize(s)))
			break;
		/* the CPU reads c, then changes a few words of it */
		for (int i = 0; i < n; i++) {
			if (fc[i] != (float)(i % 1000 + t + it * 3)) {
				fail("thread %d iteration %d: c[%d] = %g, "
				     "expected %g", t, it, i, fc[i],
				     (double)(i % 1000 + t + it * 3));
				goto out;
			}
		}
		fc[n - 1] = -1.0f;
		fc[n / 2] = -2.0f;
		/* the GPU overwrites the first part of c with a pattern */
		if (!launch(fill, s, pf) || !OK(cuStreamSynchronize(s)))
			break;
		for (int i = 0; i < n; i++) {
			uint32_t w;
			float want = (float)(i % 1000 + t + it * 3);

			memcpy(&w, &fc[i], 4);
			if (i < part ? w != v :
			    i == n - 1 ? fc[i] != -1.0f :
			    i == n / 2 ? fc[i] != -2.0f : fc[i] != want) {
				fail("thread %d iteration %d: after the fill "
				     "c[%d] = %#x", t, it, i, w);
				goto out;
			}
		}
	}
out:
	if (a)
		OK(cuMemFree(a));
	if (b)
		OK(cuMemFree(b));
	if (c)
		OK(cuMemFree(c));
	if (s)
		OK(cuStreamDestroy(s));
	return NULL;
}

/* ---- copies, memsets and attributes ---------------------------------------- */

static void copies(void)
{
	size_t n = 3 << 20;	/* several blocks */
	CUdeviceptr m = 0, m2 = 0, d = 0;
	uint8_t *p, *q, *h = malloc(n);
	unsigned int managed = 0, type = 0;
	CUdeviceptr start = 0;

	if (!h || !OK(cuMemAllocManaged(&m, n, CU_MEM_ATTACH_GLOBAL)) ||
	    !OK(cuMemAllocManaged(&m2, 100, CU_MEM_ATTACH_GLOBAL)) ||
	    !OK(cuMemAlloc(&d, n)))
		goto out;
	p = (uint8_t *)(uintptr_t)m;
	q = (uint8_t *)(uintptr_t)m2;
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7);
	memset(q, 0x5a, 100);
	/* managed as the host side of copies, both ways */
	if (!OK(cuMemcpyHtoD(d, p, n)) ||
	    !OK(cuMemsetD8(m + 4096, 0x33, 8192)) ||
	    !OK(cuMemcpyDtoH(h, d, n)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (h[i] != (uint8_t)(i * 7)) {
			fail("cuMemcpyHtoD from managed memory: byte %zu", i);
			goto out;
		}
	for (size_t i = 0; i < n; i++) {
		uint8_t want = i >= 4096 && i < 4096 + 8192 ? 0x33 :
							    (uint8_t)(i * 7);

		if (p[i] != want) {
			fail("after cuMemsetD8 on managed memory: byte %zu is "
			     "%#x, expected %#x", i, p[i], want);
			goto out;
		}
	}
	/* the device writes, the CPU reads; unified copies */
	if (!OK(cuMemsetD8(d, 0x77, n)) || !OK(cuMemcpyDtoH(p, d, n / 2)) ||
	    !OK(cuMemcpy(m + n / 2, d, n / 2)) ||
	    !OK(cuMemcpy((CUdeviceptr)(uintptr_t)h, m2, 100)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0x77) {
			fail("copy into managed memory: byte %zu is %#x", i,
			     p[i]);
			goto out;
		}
	for (int i = 0; i < 100; i++)
		if (h[i] != 0x5a) {
			fail("cuMemcpy from small managed memory: byte %d", i);
			goto out;
		}
	/* a 2D copy with managed memory as its host side */
	{
		CUDA_MEMCPY2D c2;

		memset(p, 0x11, 4096);
		memset(&c2, 0, sizeof(c2));
		c2.srcMemoryType = CU_MEMORYTYPE_HOST;
		c2.srcHost = p;
		c2.srcPitch = 1024;
		c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		c2.dstDevice = d;
		c2.dstPitch = 1024;
		c2.WidthInBytes = 512;
		c2.Height = 4;
		if (!OK(cuMemcpy2D(&c2)) || !OK(cuMemcpyDtoH(h, d, 4096)))
			goto out;
		for (int i = 0; i < 4096; i++)
			if (h[i] != ((i % 1024) < 512 ? 0x11 : 0x77)) {
				fail("2D copy from managed memory: byte %d",
				     i);
				goto out;
			}
	}
	if (OK(cuPointerGetAttribute(&managed,
				     CU_POINTER_ATTRIBUTE_IS_MANAGED, m + 5)) &&
	    OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     m + 5)) &&
	    OK(cuPointerGetAttribute(&start,
				     CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
				     m + 5)) &&
	    (managed != 1 || type != CU_MEMORYTYPE_DEVICE || start != m))
		fail("attributes: managed %u, type %u, start %#llx (%#llx)",
		     managed, type, (unsigned long long)start,
		     (unsigned long long)m);
	if (!failed)
		printf("PASS managed copies\n");
out:
	if (m)
		OK(cuMemFree(m));
	if (m2)
		OK(cuMemFree(m2));
	if (d)
		OK(cuMemFree(d));
	free(h);
}

/* ---- coherent mode only ------------------------------------------------- */

static sigjmp_buf jb;
static volatile sig_atomic_t own_faults;

static void own_handler(int sig)
{
	(void)sig;
	own_faults++;
	siglongjmp(jb, 1);
}

/* a fault outside managed memory reaches the program's own handler */
static void chained(void)
{
	volatile uint8_t *guard = mmap(NULL, 4096, PROT_NONE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (guard == MAP_FAILED) {
		fail("mmap");
		return;
	}
	if (sigsetjmp(jb, 1) == 0)
		(void)guard[10];
	if (own_faults != 1)
		fail("the program's SIGSEGV handler ran %d times, not once",
		     (int)own_faults);
	else
		printf("PASS managed chained-handler\n");
	munmap((void *)guard, 4096);
}

/* a child forked after cuInit: the parent's managed memory is not its */
static void forked(void)
{
	CUdeviceptr m = 0;
	uint32_t *p;
	pid_t pid;
	int st = 0;

	if (!OK(cuMemAllocManaged(&m, 65536, CU_MEM_ATTACH_GLOBAL)))
		return;
	p = (uint32_t *)(uintptr_t)m;
	p[0] = 0xabcd;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		/* its CUDA calls are refused, as natively */
		if (cuMemFree(m) != CUDA_ERROR_NOT_INITIALIZED)
			_exit(3);
		((volatile uint32_t *)p)[0] = 1;	/* dies here */
		_exit(4);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) ||
	    WTERMSIG(st) != SIGSEGV)
		fail("fork: the child touching managed memory ended with "
		     "status %#x, not SIGSEGV", st);
	else if (p[0] != 0xabcd)
		fail("fork: the parent's managed word is %#x", p[0]);
	else
		printf("PASS managed fork\n");
	OK(cuMemFree(m));
}

/* what a fault costs: the first touch of each block after a launch */
static void cost(void)
{
	size_t n = (size_t)(iters < ITERS ? 4 : 16) << 20;
	CUdeviceptr m = 0;
	uint8_t *p;
	uint64_t t0, t1;
	char prot[5];
	unsigned int v = 7;
	int words = 1;
	void *pf[] = { &m, &v, &words };
	volatile uint8_t sink = 0;

	if (!OK(cuMemAllocManaged(&m, n, CU_MEM_ATTACH_GLOBAL)))
		return;
	p = (uint8_t *)(uintptr_t)m;
	prot_of(p, prot);
	if (prot[0] != '-')
		fail("coherent managed memory starts %s, not inaccessible",
		     prot);
	memset(p, 1, n);
	if (!launch(fill, NULL, pf) || !OK(cuCtxSynchronize()))
		goto out;
	/* every block is fetched once, whatever its size */
	t0 = now_ns();
	for (size_t i = 0; i < n; i += 4096)
		sink += p[i];
	t1 = now_ns();
	prot_of(p, prot);
	if (prot[0] != 'r' || prot[1] != '-')
		fail("a block read is %s, not read-only", prot);
	if (p[0] != 7 || p[4] != 1 || p[n - 1] != 1)
		fail("after the fill: %u %u %u", p[0], p[4], p[n - 1]);
	{
		const char *kb = getenv("XGPU_MANAGED_BLOCK_KB");
		size_t blk = (kb && atoi(kb) > 0 ? (size_t)atoi(kb) : 256)
			     << 10;

		printf("managed: reading %zu MiB after a launch: %.1f ms, "
		       "%.1f us per %zu KiB block fetched\n", n >> 20,
		       (t1 - t0) / 1e6, (t1 - t0) / 1e3 / (double)(n / blk),
		       blk >> 10);
	}
	(void)sink;
out:
	OK(cuMemFree(m));
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	CUmodule mod;
	CUdevice dev;
	CUdeviceptr probe = 0;
	char prot[5];
	bool coherent;

	if (argc > 1 && !strcmp(argv[1], "quick")) {
		nthreads = 2;
		iters = 3;
	}
	/* the program's own handler, installed before the library's */
	signal(SIGSEGV, own_handler);
	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx)) ||
	    !OK(cuModuleLoadData(&mod, image)) ||
	    !OK(cuModuleGetFunction(&fill, mod, "xgpu_fake_fill")) ||
	    !OK(cuModuleGetFunction(&vadd, mod, "xgpu_fake_vadd")) ||
	    !OK(cuModuleGetFunction(&scale, mod, "xgpu_fake_scale")) ||
	    !OK(cuMemAllocManaged(&probe, 4096, CU_MEM_ATTACH_GLOBAL)))
		return 1;
	prot_of((void *)(uintptr_t)probe, prot);
	coherent = prot[0] == '-';
	printf("managed: %s mode\n", coherent ? "coherent" : "zero-copy");
	OK(cuMemFree(probe));
	/* coherent: a CPU touch waits for the GPU's work, so the device
	 * says it has no concurrent managed access (the fake has, as an
	 * H100) */
	{
		int cma = -1;

		if (OK(cuDeviceGetAttribute(&cma,
				CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
				dev)) && cma != !coherent)
			fail("concurrent managed access %d in %s mode", cma,
			     coherent ? "coherent" : "zero-copy");
	}
	if (coherent)
		chained();
	copies();
	hostfn();
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (!failed)
		printf("PASS managed threads (%d threads x 3 allocations x %d "
		       "iterations)\n", nthreads, iters);
	if (coherent && !failed) {
		forked();
		cost();
	}
	OK(cuModuleUnload(mod));
	OK(cuDevicePrimaryCtxRelease(dev));
	if (failed)
		return 1;
	printf("PASS managed\n");
	return 0;
}
