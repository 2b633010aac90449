// SPDX-License-Identifier: MIT
/*
 * fakecuda_launch.c: the fake driver's kernels, launches and occupancy
 * (tests only, see fakecuda.h).  The kernels are C functions that run on
 * the calling thread, after checking that every span they touch is device
 * memory; occupancy follows a simple model of an H100 SM.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda.h"

/* ---- the kernels --------------------------------------------------------- */

static CUresult k_vadd(const uint8_t *p);
static CUresult k_fill(const uint8_t *p);
static CUresult k_scale(const uint8_t *p);
static CUresult k_spin(const uint8_t *p);
static CUresult k_printf(const uint8_t *p);

/* parameter offsets as nvcc lays them out (natural alignment) */
const struct fake_kernel_def fc_kernels[] = {
	{ "xgpu_fake_vadd", 4, { { 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 } },
	  28, k_vadd },
	{ "xgpu_fake_fill", 3, { { 0, 8 }, { 8, 4 }, { 12, 4 } }, 16, k_fill },
	{ "xgpu_fake_scale", 4, { { 0, 8 }, { 8, 8 }, { 16, 1 }, { 20, 4 } },
	  24, k_scale },
	{ "xgpu_fake_spin", 1, { { 0, 4 } }, 4, k_spin },
	{ "xgpu_fake_printf", 2, { { 0, 4 }, { 4, 4 } }, 8, k_printf },
};

/* modules hold an array of NKERNELS functions, one per entry */
_Static_assert(sizeof(fc_kernels) / sizeof(fc_kernels[0]) == NKERNELS,
	       "NKERNELS (fakecuda.h) must count the kernels");

/* [p, p + n * esize) is device memory, aligned for the element type */
static CUresult kernel_span(uint64_t p, int32_t n, size_t esize)
{
	if (n <= 0)
		return CUDA_SUCCESS;
	if (p % esize)
		return CUDA_ERROR_MISALIGNED_ADDRESS;
	if (!fc_dev_ok((CUdeviceptr)p, (size_t)n * esize))
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	return CUDA_SUCCESS;
}

/* xgpu_fake_vadd(const float *a, const float *b, float *c, int n) */
static CUresult k_vadd(const uint8_t *p)
{
	uint64_t a, b, c;
	int32_t n;
	CUresult rc;

	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	memcpy(&c, p + 16, 8);
	memcpy(&n, p + 24, 4);
	if ((rc = kernel_span(a, n, 4)) || (rc = kernel_span(b, n, 4)) ||
	    (rc = kernel_span(c, n, 4)))
		return rc;
	for (int32_t i = 0; i < n; i++) {
		const float *fa = (const float *)(uintptr_t)a;
		const float *fb = (const float *)(uintptr_t)b;
		float *fc = (float *)(uintptr_t)c;

		fc[i] = fa[i] + fb[i];
	}
	return CUDA_SUCCESS;
}

/* xgpu_fake_fill(uint32_t *p, uint32_t value, int n) */
static CUresult k_fill(const uint8_t *p)
{
	uint64_t dst;
	uint32_t v;
	int32_t n;
	CUresult rc;

	memcpy(&dst, p, 8);
	memcpy(&v, p + 8, 4);
	memcpy(&n, p + 12, 4);
	rc = kernel_span(dst, n, 4);
	if (rc)
		return rc;
	for (int32_t i = 0; i < n; i++)
		((uint32_t *)(uintptr_t)dst)[i] = v;
	return CUDA_SUCCESS;
}

/*
 * xgpu_fake_scale(double *p, double s, char mode, int n): mode 'm'
 * multiplies by s, 'a' adds s, anything else stores s.
 */
static CUresult k_scale(const uint8_t *p)
{
	uint64_t dst;
	double s;
	char mode;
	int32_t n;
	CUresult rc;

	memcpy(&dst, p, 8);
	memcpy(&s, p + 8, 8);
	memcpy(&mode, p + 16, 1);
	memcpy(&n, p + 20, 4);
	rc = kernel_span(dst, n, 8);
	if (rc)
		return rc;
	for (int32_t i = 0; i < n; i++) {
		double *d = (double *)(uintptr_t)dst;

		if (mode == 'm')
			d[i] *= s;
		else if (mode == 'a')
			d[i] += s;
		else
			d[i] = s;
	}
	return CUDA_SUCCESS;
}

/* xgpu_fake_spin(int ms): keeps the worker busy (guest-killed tests) */
static CUresult k_spin(const uint8_t *p)
{
	struct timespec ts;
	int32_t ms;

	memcpy(&ms, p, 4);
	if (ms <= 0)
		return CUDA_SUCCESS;
	/* the fuzz target caps it: a long spin would look like a hang */
	if (getenv("XGPU_FAKE_SPIN_MAX_MS") &&
	    ms > atoi(getenv("XGPU_FAKE_SPIN_MAX_MS")))
		ms = atoi(getenv("XGPU_FAKE_SPIN_MAX_MS"));
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return CUDA_SUCCESS;
}

/*
 * xgpu_fake_printf(int value, int n): "prints" n lines, as a kernel's
 * printf does: the lines wait in the fake's printf buffer until the next
 * synchronising call writes them to fd 1 (fc_printf_flush), as the real
 * driver writes its device printf buffer.  The buffer holds
 * FAKE_PRINTF_MAX bytes; lines beyond are lost, like those that overflow
 * the device's FIFO.  Unlike the rest of the fake it takes a lock: the
 * worker's gate completion thread synchronises events too, and so
 * flushes.
 */
static pthread_mutex_t printf_mu = PTHREAD_MUTEX_INITIALIZER;
static char *printf_buf;	/* guarded by printf_mu */
static size_t printf_len;

static CUresult k_printf(const uint8_t *p)
{
	int32_t value, n;

	memcpy(&value, p, 4);
	memcpy(&n, p + 4, 4);
	pthread_mutex_lock(&printf_mu);
	if (!printf_buf) {
		printf_buf = malloc(FAKE_PRINTF_MAX);
		if (!printf_buf) {
			pthread_mutex_unlock(&printf_mu);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	for (int32_t i = 0; i < n; i++) {
		int k = snprintf(printf_buf + printf_len,
				 FAKE_PRINTF_MAX - printf_len,
				 "xgpu_fake_printf %d: line %d of %d\n", value,
				 i + 1, n);

		if (k < 0 || (size_t)k >= FAKE_PRINTF_MAX - printf_len)
			break;	/* full: the partial line is not kept */
		printf_len += (size_t)k;
	}
	pthread_mutex_unlock(&printf_mu);
	return CUDA_SUCCESS;
}

void fc_printf_flush(void)
{
	pthread_mutex_lock(&printf_mu);
	if (printf_len) {
		fwrite(printf_buf, 1, printf_len, stdout);
		fflush(stdout);
	}
	printf_len = 0;
	pthread_mutex_unlock(&printf_mu);
}

/* ---- launches ------------------------------------------------------------ */

/* gather the parameters into buf, laid out as the kernel's layout says */
static CUresult gather_params(const struct fake_kernel_def *k, void **kp,
			      void **extra, uint8_t *buf)
{
	const void *ebuf = NULL;
	const size_t *esize = NULL;

	if (kp && extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (kp) {
		for (unsigned int i = 0; i < k->nparams; i++) {
			if (!kp[i])
				return CUDA_ERROR_INVALID_VALUE;
			memcpy(buf + k->p[i].off, kp[i], k->p[i].size);
		}
		return CUDA_SUCCESS;
	}
	if (!extra)
		return k->nparams ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	for (int i = 0; i < FAKE_MAX_EXTRA; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_END)
			break;
		if (i + 1 >= FAKE_MAX_EXTRA)
			return CUDA_ERROR_INVALID_VALUE;
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			ebuf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			esize = extra[i + 1];
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (!ebuf || !esize || *esize < k->param_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(buf, ebuf, k->param_bytes);
	return CUDA_SUCCESS;
}

/*
 * XGPU_FAKE_LAUNCH_NS=N: each launch takes N ns of the caller's CPU, as
 * the real driver's launch does (a few microseconds), so that the
 * worker's own cost per launch can be measured against it (bench)
 */
static void launch_cost(void)
{
	static long ns = -1;
	struct timespec t0, t;

	if (ns < 0) {
		const char *v = getenv("XGPU_FAKE_LAUNCH_NS");

		ns = v ? atol(v) : 0;
		if (ns < 0 || ns > 1000000)
			ns = 0;
	}
	if (!ns)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
	       ns);
}

static CUresult launch(CUfunction fn, const unsigned int grid[3],
		       const unsigned int block[3], unsigned int shmem,
		       CUstream s, void **kp, void **extra)
{
	uint8_t buf[64];
	struct ffunc *f;
	bool captured;
	CUresult rc;

	NEED_CTX();
	f = fc_func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (f->mod->o.ctx && f->mod->o.ctx != fc_owner())
		return CUDA_ERROR_INVALID_CONTEXT;
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] ||
	    !block[2] || grid[1] > 65535 || grid[2] > 65535 ||
	    grid[0] > 2147483647u || block[0] > 1024 || block[1] > 1024 ||
	    block[2] > 64 ||
	    (uint64_t)block[0] * block[1] * block[2] > 1024 ||
	    shmem > (unsigned int)f->max_dyn_smem)
		return CUDA_ERROR_INVALID_VALUE;
	memset(buf, 0, sizeof(buf));
	rc = gather_params(f->def, kp, extra, buf);
	if (rc)
		return rc;
	/* on a stream being captured: a node, run when its graph is */
	rc = fc_stream_work(s, &captured);
	if (rc || captured)
		return rc;
	launch_cost();
	return f->def->run(buf);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
			unsigned int gz, unsigned int bx, unsigned int by,
			unsigned int bz, unsigned int shmem, CUstream s,
			void **kp, void **extra)
{
	const unsigned int grid[3] = { gx, gy, gz };
	const unsigned int block[3] = { bx, by, bz };

	return launch(f, grid, block, shmem, s, kp, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **kp,
			  void **extra)
{
	unsigned int grid[3], block[3];

	if (!c || (c->numAttrs && !c->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	grid[0] = c->gridDimX;
	grid[1] = c->gridDimY;
	grid[2] = c->gridDimZ;
	block[0] = c->blockDimX;
	block[1] = c->blockDimY;
	block[2] = c->blockDimZ;
	return launch(f, grid, block, c->sharedMemBytes, c->hStream, kp,
		      extra);
}

/* ---- occupancy: a simple model of an SM ---------------------------------- */

static int blocks_per_sm(const struct ffunc *f, int block, size_t dyn)
{
	int warps, n;
	size_t smem;

	if (block > 1024 || dyn > (size_t)f->max_dyn_smem)
		return 0;
	warps = (block + 31) / 32;
	n = 2048 / (warps * 32);			/* threads */
	if (128 / warps < n)				/* 16 regs/thread */
		n = 128 / warps;
	smem = dyn + FAKE_SMEM_RESERVED;
	if ((size_t)FAKE_SMEM_PER_SM / smem < (size_t)n)
		n = (int)(FAKE_SMEM_PER_SM / smem);
	return n < 32 ? n : 32;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
	int *nblocks, CUfunction fn, int block, size_t dyn, unsigned int flags)
{
	struct ffunc *f;

	NEED_CTX();
	if (!nblocks || block <= 0 || flags > 1)
		return CUDA_ERROR_INVALID_VALUE;
	f = fc_func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*nblocks = blocks_per_sm(f, block, dyn);
	return CUDA_SUCCESS;
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(
	size_t *out, CUfunction fn, int nblocks, int block)
{
	struct ffunc *f;
	size_t avail;

	NEED_CTX();
	if (!out || nblocks <= 0 || block <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	f = fc_func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (blocks_per_sm(f, block, 0) < nblocks) {
		*out = 0;
		return CUDA_SUCCESS;
	}
	avail = FAKE_SMEM_PER_SM / (size_t)nblocks;
	avail = avail > FAKE_SMEM_RESERVED ? avail - FAKE_SMEM_RESERVED : 0;
	*out = avail < FAKE_MAX_DYN_SMEM ? avail : FAKE_MAX_DYN_SMEM;
	return CUDA_SUCCESS;
}

static unsigned int cluster_size(const CUlaunchConfig *c)
{
	for (unsigned int i = 0; i < c->numAttrs; i++) {
		const CUlaunchAttribute *a = &c->attrs[i];

		if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			return a->value.clusterDim.x * a->value.clusterDim.y *
			       a->value.clusterDim.z;
	}
	return 1;
}

CUresult cuOccupancyMaxActiveClusters(int *n, CUfunction fn,
				      const CUlaunchConfig *c)
{
	unsigned int cs, threads;
	struct ffunc *f;

	NEED_CTX();
	if (!n || !c || (c->numAttrs && !c->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	f = fc_func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	cs = cluster_size(c);
	threads = c->blockDimX * c->blockDimY * c->blockDimZ;
	if (!cs || cs > 16 || !threads || threads > 1024)
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	*n = FAKE_SMS * blocks_per_sm(f, (int)threads, c->sharedMemBytes) /
	     (int)cs;
	return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialClusterSize(int *size, CUfunction fn,
					    const CUlaunchConfig *c)
{
	struct ffunc *f;

	NEED_CTX();
	if (!size || !c)
		return CUDA_ERROR_INVALID_VALUE;
	f = fc_func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*size = f->non_portable_cluster ? 16 : 8;
	return CUDA_SUCCESS;
}

/* ---- tensor maps: the fake has no TMA ----------------------------------- */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
CUresult cuTensorMapEncodeTiled(CUtensorMap *m, CUtensorMapDataType t,
				cuuint32_t rank, void *addr,
				const cuuint64_t *dim, const cuuint64_t *str,
				const cuuint32_t *box, const cuuint32_t *es,
				CUtensorMapInterleave il, CUtensorMapSwizzle sw,
				CUtensorMapL2promotion l2,
				CUtensorMapFloatOOBfill oob)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *m, CUtensorMapDataType t,
				 cuuint32_t rank, void *addr,
				 const cuuint64_t *dim, const cuuint64_t *str,
				 const int *lo, const int *hi, cuuint32_t cpp,
				 cuuint32_t ppc, const cuuint32_t *es,
				 CUtensorMapInterleave il,
				 CUtensorMapSwizzle sw,
				 CUtensorMapL2promotion l2,
				 CUtensorMapFloatOOBfill oob)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *m, CUtensorMapDataType t,
				     cuuint32_t rank, void *addr,
				     const cuuint64_t *dim,
				     const cuuint64_t *str, int lo, int hi,
				     cuuint32_t cpp, cuuint32_t ppc,
				     const cuuint32_t *es,
				     CUtensorMapInterleave il,
				     CUtensorMapIm2ColWideMode mode,
				     CUtensorMapSwizzle sw,
				     CUtensorMapL2promotion l2,
				     CUtensorMapFloatOOBfill oob)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *m, void *addr)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}
#pragma GCC diagnostic pop
