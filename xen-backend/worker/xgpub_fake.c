// SPDX-License-Identifier: MIT
/*
 * xgpub_fake.c: a fake CUDA device for TESTS ONLY (xen-gpubackd --fake).
 *
 * It is not a GPU emulator.  It exists so that the transport, the wire
 * protocol, the worker's dispatch and handle tables, scheduling of posted
 * and synchronous calls, and fault handling (hostile guests, guests killed
 * mid-call) can be tested in CI on machines without a GPU.  "Device
 * memory" is host memory from malloc, device pointers are its addresses,
 * and the only kernels are a handful of test functions written in C
 * (xgpu_fake_vadd, _fill, _scale, _spin) that run synchronously on the
 * worker's thread when launched.  Every module image must be the text
 * "XGPU-FAKE-MODULE\n..."; real cubins, fatbins and PTX are refused.
 *
 * The entry points have the exact prototypes of the driver's (the table's
 * members are typed from cuda.h, so a mismatch does not compile).  Every
 * access through a device pointer is checked against the live ranges
 * (allocations, registered host memory, module globals) first, so a guest
 * that hands the worker a wild pointer gets an error, never a crash of
 * the worker: that is the property the fault tests rely on.
 *
 * Differences from the real driver that tests must not depend on: errors
 * are never sticky (an illegal address in a kernel does not poison the
 * context), everything asynchronous completes at once, and there is one
 * device.  The worker is single-threaded, so nothing here takes a lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xgpub_worker.h"

#define FAKE_TOTAL_MEM		(1ull << 30)	/* also the allocation limit */
#define FAKE_ALIGN		256u
#define FAKE_PITCH_ALIGN	512u
#define FAKE_DRIVER_VERSION	13000
#define FAKE_MODULE_MAGIC	"XGPU-FAKE-MODULE\n"
#define FAKE_GLOBAL_NAME	"xgpu_fake_global"
#define FAKE_GLOBAL_SIZE	256u
#define FAKE_DEFAULT_DYN_SMEM	49152
#define FAKE_MAX_DYN_SMEM	232448	/* opt-in maximum per block */
#define FAKE_SMEM_PER_SM	233472
#define FAKE_SMEM_RESERVED	1024
#define FAKE_SMS		132
#define FAKE_MAX_EXTRA		64	/* entries of a launch's `extra` */

static bool inited;

/* ---- the device's attributes (H100-like) --------------------------------- */

/*
 * Values of an H100 SXM where the fake has nothing to say otherwise;
 * features the fake does not emulate (managed memory, memory pools,
 * virtual memory management, IPC, RDMA, sparse arrays) read 0 so that a
 * program does not try them.
 */
static const int dev_attr[CU_DEVICE_ATTRIBUTE_MAX] = {
	[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] = 1024,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] = 1024,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] = 64,
	[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] = 2147483647,
	[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] = 65535,
	[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] = 65535,
	[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK] = 49152,
	[CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY] = 65536,
	[CU_DEVICE_ATTRIBUTE_WARP_SIZE] = 32,
	[CU_DEVICE_ATTRIBUTE_MAX_PITCH] = 2147483647,
	[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK] = 65536,
	[CU_DEVICE_ATTRIBUTE_CLOCK_RATE] = 1980000,
	[CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT] = 512,
	[CU_DEVICE_ATTRIBUTE_GPU_OVERLAP] = 1,
	[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = FAKE_SMS,
	[CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT] = 0,
	[CU_DEVICE_ATTRIBUTE_INTEGRATED] = 0,
	[CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] = 1,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_MODE] = CU_COMPUTEMODE_DEFAULT,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT] = 65536,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT] = 512,
	[CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] = 1,
	[CU_DEVICE_ATTRIBUTE_ECC_ENABLED] = 1,
	[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = 0xfe,	/* not a real slot */
	[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID] = 0,
	[CU_DEVICE_ATTRIBUTE_TCC_DRIVER] = 0,
	[CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE] = 2619000,
	[CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH] = 5120,
	[CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE] = 52428800,
	[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] = 2048,
	[CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT] = 3,
	[CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING] = 1,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER] = 1,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE] = 8192,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE] = 8192,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE] = 32768,
	[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID] = 0,
	[CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT] = 32,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS] = 2046,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT] = 65536,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH] = 16384,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS] = 2048,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS] = 2046,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH] = 268435456,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH] = 131072,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT] = 65000,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH] = 2097120,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT] = 32768,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 9,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = 0,
	[CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH] = 32768,
	[CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] =
		FAKE_SMEM_PER_SM,
	[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR] = 65536,
	[CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY] = 0,
	[CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD] = 0,
	[CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO] = 2,
	[CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS] = 0,
	[CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS] = 0,
	[CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM] = 1,
	[CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH] = 1,
	[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] =
		FAKE_MAX_DYN_SMEM,
	[CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = 32,
	[CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE] = 32768000,
	[CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE] = 134217728,
	[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK] =
		FAKE_SMEM_RESERVED,
	[CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED] = 1,
	[CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH] = 1,
	[CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS] = 1,
	[CU_DEVICE_ATTRIBUTE_NUMA_ID] = -1,
	[CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID] = -1,
	[CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT] = 4,
	[CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID] = 0x233010de,
	[CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID] = 0x16c110de,
};

/* ---- objects ------------------------------------------------------------- */

enum fobj_type { O_CTX = 1, O_STREAM, O_EVENT, O_MODULE, O_LIBRARY };

/*
 * Every object the fake hands out is on one list; a handle from the
 * caller is valid only if it is found there with the right type, so a
 * stale or forged handle is an error, not a use after free.
 */
struct fobj {
	struct fobj *next;
	int type;
	struct fctx *ctx;	/* owner, freed with it; NULL: none */
};

struct fctx {
	struct fobj o;
	unsigned int flags;
	size_t limits[CU_LIMIT_MAX];
	CUfunc_cache cache;
};

struct fstream {
	struct fobj o;
	unsigned int flags;
	int priority;
};

struct fevent {
	struct fobj o;
	unsigned int flags;
	bool recorded;
	struct timespec when;
};

/* ---- the test kernels ---------------------------------------------------- */

#define MAX_KPARAMS 4

struct fake_kernel_def {
	const char *name;
	unsigned int nparams;
	struct {
		uint16_t off, size;
	} p[MAX_KPARAMS];
	uint32_t param_bytes;
	/* runs the kernel on the parameter buffer laid out as p[] says */
	CUresult (*run)(const uint8_t *params);
};

struct ffunc {
	uint32_t magic;
	struct fmodule *mod;
	const struct fake_kernel_def *def;
	int max_dyn_smem;
	int carveout;
	int non_portable_cluster;
	int sched_policy;
	int req_cluster[3];
	CUfunc_cache cache;
};

struct fkernel {
	uint32_t magic;
	struct flibrary *lib;
	unsigned int index;
};

#define FUNC_MAGIC	0x66756e63u	/* "func" */
#define KERNEL_MAGIC	0x6b65726eu	/* "kern" */

enum range_kind { R_DEVICE = 1, R_HOST, R_GLOBAL };

struct range {
	uintptr_t base;
	size_t size;
	size_t charged;		/* counted against the device memory */
	int kind;
	unsigned int flags;	/* R_HOST: cuMemHostRegister flags */
	struct fctx *ctx;	/* R_DEVICE: owner */
	void *mem;		/* R_DEVICE: to free */
};

static struct range *ranges;
static size_t nranges, cap_ranges;
static uint64_t mem_used;

/* the range holding [p, p + n), or NULL (n 0 counts as 1 byte) */
static struct range *range_find(uintptr_t p, size_t n)
{
	if (n == 0)
		n = 1;
	for (size_t i = 0; i < nranges; i++) {
		struct range *r = &ranges[i];

		if (p >= r->base && p - r->base < r->size &&
		    n <= r->size - (p - r->base))
			return r;
	}
	return NULL;
}

/* may the device touch [p, p + n)? */
static bool dev_ok(CUdeviceptr p, size_t n)
{
	return n == 0 || range_find((uintptr_t)p, n) != NULL;
}

static struct range *range_add(uintptr_t base, size_t size, int kind)
{
	if (nranges == cap_ranges) {
		size_t ncap = cap_ranges ? cap_ranges * 2 : 64;
		struct range *n = realloc(ranges, ncap * sizeof(*n));

		if (!n)
			return NULL;
		ranges = n;
		cap_ranges = ncap;
	}
	ranges[nranges] = (struct range){ .base = base, .size = size,
					  .kind = kind };
	return &ranges[nranges++];
}

static void range_del(struct range *r)
{
	mem_used -= r->charged;
	free(r->mem);
	*r = ranges[--nranges];
}

/* the range starting exactly at base, of kind */
static struct range *range_at(uintptr_t base, int kind)
{
	for (size_t i = 0; i < nranges; i++)
		if (ranges[i].base == base && ranges[i].kind == kind)
			return &ranges[i];
	return NULL;
}

/* ---- modules and libraries ----------------------------------------------- */

static CUresult k_vadd(const uint8_t *p);
static CUresult k_fill(const uint8_t *p);
static CUresult k_scale(const uint8_t *p);
static CUresult k_spin(const uint8_t *p);

/* parameter offsets as nvcc lays them out (natural alignment) */
static const struct fake_kernel_def kernels[] = {
	{ "xgpu_fake_vadd", 4, { { 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 } },
	  28, k_vadd },
	{ "xgpu_fake_fill", 3, { { 0, 8 }, { 8, 4 }, { 12, 4 } }, 16, k_fill },
	{ "xgpu_fake_scale", 4, { { 0, 8 }, { 8, 8 }, { 16, 1 }, { 20, 4 } },
	  24, k_scale },
	{ "xgpu_fake_spin", 1, { { 0, 4 } }, 4, k_spin },
};

#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

struct fmodule {
	struct fobj o;
	struct flibrary *lib;	/* the library owning it, if any */
	uint8_t *global;	/* xgpu_fake_global */
	struct ffunc funcs[NKERNELS];
};

struct flibrary {
	struct fobj o;
	struct fmodule *mod;
	struct fkernel kern[NKERNELS];
};

static struct fobj *objs;
static struct fctx *cur;		/* the current context */
static struct fctx primary;
static int primary_refs;
static unsigned int primary_flags;

static void obj_add(struct fobj *o, int type, struct fctx *ctx)
{
	o->type = type;
	o->ctx = ctx;
	o->next = objs;
	objs = o;
}

static void obj_unlink(struct fobj *o)
{
	for (struct fobj **pp = &objs; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			return;
		}
	}
}

static struct fobj *obj_find(const void *p, int type)
{
	if (!p)
		return NULL;
	for (struct fobj *o = objs; o; o = o->next)
		if (o == p && o->type == type)
			return o;
	return NULL;
}

#define CTX(p)	   ((struct fctx *)obj_find((p), O_CTX))
#define STREAM(p)  ((struct fstream *)obj_find((p), O_STREAM))
#define EVENT(p)   ((struct fevent *)obj_find((p), O_EVENT))
#define MODULE(p)  ((struct fmodule *)obj_find((p), O_MODULE))
#define LIBRARY(p) ((struct flibrary *)obj_find((p), O_LIBRARY))

/* a CUfunction of a live module, or the function of a CUkernel passed as
 * one (cudart does that) */
static struct ffunc *func_find(const void *p)
{
	if (!p)
		return NULL;
	for (struct fobj *o = objs; o; o = o->next) {
		if (o->type == O_MODULE) {
			struct fmodule *m = (struct fmodule *)o;

			for (unsigned int i = 0; i < NKERNELS; i++)
				if (p == &m->funcs[i])
					return &m->funcs[i];
		} else if (o->type == O_LIBRARY) {
			struct flibrary *l = (struct flibrary *)o;

			for (unsigned int i = 0; i < NKERNELS; i++)
				if (p == &l->kern[i])
					return &l->mod->funcs[i];
		}
	}
	return NULL;
}

static struct fkernel *kernel_find(const void *p)
{
	if (!p)
		return NULL;
	for (struct fobj *o = objs; o; o = o->next) {
		if (o->type != O_LIBRARY)
			continue;
		for (unsigned int i = 0; i < NKERNELS; i++)
			if (p == &((struct flibrary *)o)->kern[i])
				return &((struct flibrary *)o)->kern[i];
	}
	return NULL;
}

static const struct fake_kernel_def *kernel_def(const char *name)
{
	if (!name)
		return NULL;
	for (unsigned int i = 0; i < NKERNELS; i++)
		if (strcmp(kernels[i].name, name) == 0)
			return &kernels[i];
	return NULL;
}

static bool image_ok(const void *image)
{
	/* strncmp stops at the first difference, so a short image is not
	 * read past its terminating byte */
	return image && strncmp(image, FAKE_MODULE_MAGIC,
				strlen(FAKE_MODULE_MAGIC)) == 0;
}

static struct fmodule *module_new(struct fctx *ctx, struct flibrary *lib)
{
	struct fmodule *m = calloc(1, sizeof(*m));
	struct range *r;

	if (!m)
		return NULL;
	if (posix_memalign((void **)&m->global, FAKE_ALIGN,
			   FAKE_GLOBAL_SIZE)) {
		free(m);
		return NULL;
	}
	memset(m->global, 0, FAKE_GLOBAL_SIZE);
	r = range_add((uintptr_t)m->global, FAKE_GLOBAL_SIZE, R_GLOBAL);
	if (!r) {
		free(m->global);
		free(m);
		return NULL;
	}
	m->lib = lib;
	for (unsigned int i = 0; i < NKERNELS; i++) {
		struct ffunc *f = &m->funcs[i];

		f->magic = FUNC_MAGIC;
		f->mod = m;
		f->def = &kernels[i];
		f->max_dyn_smem = FAKE_DEFAULT_DYN_SMEM;
		f->carveout = -1;
	}
	obj_add(&m->o, O_MODULE, ctx);
	return m;
}

static void module_free(struct fmodule *m)
{
	struct range *r = range_at((uintptr_t)m->global, R_GLOBAL);

	if (r)
		range_del(r);
	obj_unlink(&m->o);
	free(m->global);
	free(m);
}

/* ---- contexts ------------------------------------------------------------ */

static const size_t default_limits[CU_LIMIT_MAX] = {
	[CU_LIMIT_STACK_SIZE] = 1024,
	[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20,
	[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20,
	[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
	[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
	[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 32,
	[CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0,
	[CU_LIMIT_SHMEM_SIZE] = FAKE_MAX_DYN_SMEM,
	[CU_LIMIT_CIG_ENABLED] = 0,
	[CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 0,
};

static void ctx_init(struct fctx *c, unsigned int flags)
{
	c->flags = flags;
	memcpy(c->limits, default_limits, sizeof(c->limits));
	c->cache = CU_FUNC_CACHE_PREFER_NONE;
}

/* free what a context owns: modules, streams, events, allocations */
static void ctx_free_resources(struct fctx *c)
{
	struct fobj **pp = &objs;

	while (*pp) {
		struct fobj *o = *pp;

		if (o->ctx != c || o == &c->o) {
			pp = &o->next;
			continue;
		}
		if (o->type == O_MODULE) {
			module_free((struct fmodule *)o);
			pp = &objs;	/* the list changed under us */
			continue;
		}
		*pp = o->next;
		free(o);
	}
	for (size_t i = 0; i < nranges;) {
		if (ranges[i].kind == R_DEVICE && ranges[i].ctx == c)
			range_del(&ranges[i]);
		else
			i++;
	}
}

#define NEED_INIT()                                                          \
	do {                                                                 \
		if (!inited)                                                 \
			return CUDA_ERROR_NOT_INITIALIZED;                   \
	} while (0)

#define NEED_CTX()                                                           \
	do {                                                                 \
		if (!inited)                                                 \
			return CUDA_ERROR_NOT_INITIALIZED;                   \
		if (!cur)                                                    \
			return CUDA_ERROR_INVALID_CONTEXT;                   \
	} while (0)

#define CHECK_DEV(dev)                                                       \
	do {                                                                 \
		if (!inited)                                                 \
			return CUDA_ERROR_NOT_INITIALIZED;                   \
		if ((dev) != 0)                                              \
			return CUDA_ERROR_INVALID_DEVICE;                    \
	} while (0)

static CUresult stream_ok(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_SUCCESS;
	return STREAM(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- init and device ----------------------------------------------------- */

static CUresult fake_cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	inited = true;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = FAKE_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetCount(int *n)
{
	NEED_INIT();
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGet(CUdevice *d, int ordinal)
{
	NEED_INIT();
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "xgpu fake device (testing only)");
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = FAKE_TOTAL_MEM;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetAttribute(int *pi, CUdevice_attribute a,
					  CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pi || (int)a <= 0 || (int)a >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = dev_attr[a];
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	static const char id[16] = { 'X', 'G', 'P', 'U', '-', 'F', 'A', 'K',
				     'E', '-', 'D', 'E', 'V', 'I', 'C', 'E' };

	CHECK_DEV(dev);
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, id, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

/* ---- primary context ----------------------------------------------------- */

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (primary_refs == 0) {
		ctx_init(&primary, primary_flags);
		obj_add(&primary.o, O_CTX, NULL);
	}
	primary_refs++;
	*pctx = (CUcontext)&primary;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxRelease(CUdevice dev)
{
	CHECK_DEV(dev);
	if (primary_refs == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--primary_refs == 0) {
		ctx_free_resources(&primary);
		obj_unlink(&primary.o);
		if (cur == &primary)
			cur = NULL;
	}
	return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxReset(CUdevice dev)
{
	CHECK_DEV(dev);
	if (primary_refs)
		ctx_free_resources(&primary);
	primary_flags = 0;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxSetFlags(CUdevice dev,
						unsigned int flags)
{
	CHECK_DEV(dev);
	if (flags & ~(unsigned int)CU_CTX_FLAGS_MASK)
		return CUDA_ERROR_INVALID_VALUE;
	primary_flags = flags;
	if (primary_refs)
		primary.flags = flags;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxGetState(CUdevice dev,
						unsigned int *flags,
						int *active)
{
	CHECK_DEV(dev);
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = primary_flags;
	*active = primary_refs > 0;
	return CUDA_SUCCESS;
}

/* ---- contexts ------------------------------------------------------------ */

static CUresult fake_cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params,
				 unsigned int flags, CUdevice dev)
{
	struct fctx *c;

	CHECK_DEV(dev);
	if (!pctx || (flags & ~(unsigned int)CU_CTX_FLAGS_MASK))
		return CUDA_ERROR_INVALID_VALUE;
	if (params && (params->execAffinityParams || params->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_init(c, flags);
	obj_add(&c->o, O_CTX, NULL);
	cur = c;		/* a new context is made current */
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxDestroy(CUcontext ctx)
{
	struct fctx *c;

	NEED_INIT();
	c = CTX(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (c == &primary)	/* only released, never destroyed */
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_free_resources(c);
	obj_unlink(&c->o);
	if (cur == c)
		cur = NULL;
	free(c);
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxSetCurrent(CUcontext ctx)
{
	NEED_INIT();
	if (ctx && !CTX(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	cur = (struct fctx *)ctx;
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetCurrent(CUcontext *pctx)
{
	NEED_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)cur;
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxSynchronize(void)
{
	NEED_CTX();
	return CUDA_SUCCESS;	/* everything completed when issued */
}

static CUresult fake_cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	NEED_CTX();
	if (!pvalue)
		return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned int)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	*pvalue = cur->limits[limit];
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxSetLimit(CUlimit limit, size_t value)
{
	NEED_CTX();
	if ((unsigned int)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	switch (limit) {
	case CU_LIMIT_SHMEM_SIZE:
	case CU_LIMIT_CIG_ENABLED:
		return CUDA_ERROR_INVALID_VALUE;	/* query only */
	case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
		if (value > 128)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
		if (value > (size_t)dev_attr[
			    CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE])
			return CUDA_ERROR_INVALID_VALUE;
		break;
	default:
		break;
	}
	cur->limits[limit] = value;
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	NEED_CTX();
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetFlags(unsigned int *flags)
{
	NEED_CTX();
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = cur->flags;
	return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
	NEED_CTX();
	if (!pconfig)
		return CUDA_ERROR_INVALID_VALUE;
	*pconfig = cur->cache;
	return CUDA_SUCCESS;
}

static bool cache_config_ok(CUfunc_cache c)
{
	return c == CU_FUNC_CACHE_PREFER_NONE ||
	       c == CU_FUNC_CACHE_PREFER_SHARED ||
	       c == CU_FUNC_CACHE_PREFER_L1 || c == CU_FUNC_CACHE_PREFER_EQUAL;
}

static CUresult fake_cuCtxSetCacheConfig(CUfunc_cache config)
{
	NEED_CTX();
	if (!cache_config_ok(config))
		return CUDA_ERROR_INVALID_VALUE;
	cur->cache = config;
	return CUDA_SUCCESS;
}

/* ---- memory -------------------------------------------------------------- */

static CUresult fake_cuMemGetInfo(size_t *free_b, size_t *total)
{
	NEED_CTX();
	if (!free_b || !total)
		return CUDA_ERROR_INVALID_VALUE;
	*total = FAKE_TOTAL_MEM;
	*free_b = FAKE_TOTAL_MEM - mem_used;
	return CUDA_SUCCESS;
}

static CUresult dev_alloc(CUdeviceptr *dptr, size_t size)
{
	size_t charged;
	struct range *r;
	void *p;

	if (size == 0 || size > FAKE_TOTAL_MEM)
		return size ? CUDA_ERROR_OUT_OF_MEMORY :
			      CUDA_ERROR_INVALID_VALUE;
	charged = (size + FAKE_ALIGN - 1) & ~(size_t)(FAKE_ALIGN - 1);
	if (charged > FAKE_TOTAL_MEM - mem_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (posix_memalign(&p, FAKE_ALIGN, charged))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = range_add((uintptr_t)p, size, R_DEVICE);
	if (!r) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->charged = charged;
	r->ctx = cur;
	r->mem = p;
	mem_used += charged;
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemAlloc(CUdeviceptr *dptr, size_t size)
{
	NEED_CTX();
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	return dev_alloc(dptr, size);
}

static CUresult fake_cuMemAllocPitch(CUdeviceptr *dptr, size_t *pitch,
				     size_t width, size_t height,
				     unsigned int elem)
{
	size_t p, total;
	CUresult rc;

	NEED_CTX();
	if (!dptr || !pitch || !width || !height ||
	    (elem != 4 && elem != 8 && elem != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (width > FAKE_TOTAL_MEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = (width + FAKE_PITCH_ALIGN - 1) & ~(size_t)(FAKE_PITCH_ALIGN - 1);
	if (__builtin_mul_overflow(p, height, &total))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = dev_alloc(dptr, total);
	if (rc == CUDA_SUCCESS)
		*pitch = p;
	return rc;
}

static CUresult fake_cuMemFree(CUdeviceptr dptr)
{
	struct range *r;

	NEED_CTX();
	if (!dptr)
		return CUDA_SUCCESS;
	r = range_at((uintptr_t)dptr, R_DEVICE);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	range_del(r);
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize,
					  CUdeviceptr dptr)
{
	struct range *r;

	NEED_CTX();
	r = range_find((uintptr_t)dptr, 1);
	if (!r || r->kind == R_HOST)
		return CUDA_ERROR_NOT_FOUND;
	if (pbase)
		*pbase = (CUdeviceptr)r->base;
	if (psize)
		*psize = r->size;
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemHostRegister(void *p, size_t size,
				       unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTREGISTER_PORTABLE |
				   CU_MEMHOSTREGISTER_DEVICEMAP |
				   CU_MEMHOSTREGISTER_IOMEMORY |
				   CU_MEMHOSTREGISTER_READ_ONLY;
	uintptr_t a = (uintptr_t)p;
	struct range *r;

	NEED_CTX();
	if (!p || !size || (flags & ~known) || a + size < a)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < nranges; i++) {
		r = &ranges[i];
		if (r->kind == R_HOST && a < r->base + r->size &&
		    r->base < a + size)
			return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	}
	r = range_add(a, size, R_HOST);
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->flags = flags;
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemHostUnregister(void *p)
{
	struct range *r;

	NEED_CTX();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	r = range_at((uintptr_t)p, R_HOST);
	if (!r)
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	range_del(r);
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p,
					       unsigned int flags)
{
	struct range *r;

	NEED_CTX();
	if (!pdptr || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = range_find((uintptr_t)p, 1);
	if (!r || r->kind != R_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr)(uintptr_t)p;	/* unified addressing */
	return CUDA_SUCCESS;
}

/* ---- copies -------------------------------------------------------------- */

static CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
	NEED_CTX();
	if (!n)
		return CUDA_SUCCESS;
	if (!src || !dev_ok(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	if (!n)
		return CUDA_SUCCESS;
	if (!dst || !dev_ok(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove(dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	NEED_CTX();
	if (!n)
		return CUDA_SUCCESS;
	if (!dev_ok(dst, n) || !dev_ok(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

/* the asynchronous forms check their stream and complete at once */
static CUresult fake_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
				       size_t n, CUstream s)
{
	CUresult rc = stream_ok(s);

	return rc ? rc : fake_cuMemcpyHtoD(dst, src, n);
}

static CUresult fake_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n,
				       CUstream s)
{
	CUresult rc = stream_ok(s);

	return rc ? rc : fake_cuMemcpyDtoH(dst, src, n);
}

static CUresult fake_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src,
				       size_t n, CUstream s)
{
	CUresult rc = stream_ok(s);

	return rc ? rc : fake_cuMemcpyDtoD(dst, src, n);
}

/*
 * One side of a 2D copy: the address of its first byte, after checking
 * that every row lies inside a device range (device sides only: host
 * sides are the worker's own memory).
 */
static CUresult side_2d(CUmemorytype type, const void *host, CUdeviceptr dev,
			size_t x, size_t y, size_t pitch, size_t w, size_t h,
			uint8_t **out)
{
	size_t start, extent;

	if (h > 1 && pitch < w)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow(y, pitch, &start) ||
	    __builtin_add_overflow(start, x, &start) ||
	    __builtin_mul_overflow(h - 1, pitch, &extent) ||
	    __builtin_add_overflow(extent, w, &extent))
		return CUDA_ERROR_INVALID_VALUE;
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)(uintptr_t)host + start;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		if (dev + start < dev || !dev_ok(dev + start, extent))
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)(uintptr_t)(dev + start);
		return CUDA_SUCCESS;
	default:	/* arrays are not emulated */
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult fake_cuMemcpy2D(const CUDA_MEMCPY2D *c)
{
	uint8_t *s, *d;
	CUresult rc;

	NEED_CTX();
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c->WidthInBytes || !c->Height)
		return CUDA_SUCCESS;
	rc = side_2d(c->srcMemoryType, c->srcHost, c->srcDevice,
		     c->srcXInBytes, c->srcY, c->srcPitch, c->WidthInBytes,
		     c->Height, &s);
	if (!rc)
		rc = side_2d(c->dstMemoryType, c->dstHost, c->dstDevice,
			     c->dstXInBytes, c->dstY, c->dstPitch,
			     c->WidthInBytes, c->Height, &d);
	if (rc)
		return rc;
	for (size_t row = 0; row < c->Height; row++)
		memmove(d + row * c->dstPitch, s + row * c->srcPitch,
			c->WidthInBytes);
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpy2DAsync(const CUDA_MEMCPY2D *c, CUstream s)
{
	CUresult rc = stream_ok(s);

	return rc ? rc : fake_cuMemcpy2D(c);
}

/* ---- memsets ------------------------------------------------------------- */

static CUresult do_memset(CUdeviceptr dst, size_t pitch, uint32_t value,
			  unsigned int esize, size_t width, size_t height,
			  CUstream s)
{
	size_t row_bytes, extent;
	CUresult rc;

	NEED_CTX();
	rc = stream_ok(s);
	if (rc)
		return rc;
	if (!width || !height)
		return CUDA_SUCCESS;
	if (dst % esize)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow(width, esize, &row_bytes))
		return CUDA_ERROR_INVALID_VALUE;
	if (height == 1)
		pitch = row_bytes;
	if (pitch < row_bytes ||
	    __builtin_mul_overflow(height - 1, pitch, &extent) ||
	    __builtin_add_overflow(extent, row_bytes, &extent) ||
	    !dev_ok(dst, extent))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t y = 0; y < height; y++) {
		uint8_t *row = (uint8_t *)(uintptr_t)dst + y * pitch;

		if (esize == 1) {
			memset(row, (int)(value & 0xff), width);
		} else if (esize == 2) {
			uint16_t v = (uint16_t)value;

			for (size_t i = 0; i < width; i++)
				memcpy(row + 2 * i, &v, 2);
		} else {
			for (size_t i = 0; i < width; i++)
				memcpy(row + 4 * i, &value, 4);
		}
	}
	return CUDA_SUCCESS;
}

static CUresult fake_cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n)
{
	return do_memset(d, 0, v, 1, n, 1, NULL);
}

static CUresult fake_cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n)
{
	return do_memset(d, 0, v, 2, n, 1, NULL);
}

static CUresult fake_cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n)
{
	return do_memset(d, 0, v, 4, n, 1, NULL);
}

static CUresult fake_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n,
				     CUstream s)
{
	return do_memset(d, 0, v, 1, n, 1, s);
}

static CUresult fake_cuMemsetD16Async(CUdeviceptr d, unsigned short v,
				      size_t n, CUstream s)
{
	return do_memset(d, 0, v, 2, n, 1, s);
}

static CUresult fake_cuMemsetD32Async(CUdeviceptr d, unsigned int v,
				      size_t n, CUstream s)
{
	return do_memset(d, 0, v, 4, n, 1, s);
}

static CUresult fake_cuMemsetD2D8(CUdeviceptr d, size_t pitch,
				  unsigned char v, size_t w, size_t h)
{
	return do_memset(d, pitch, v, 1, w, h, NULL);
}

static CUresult fake_cuMemsetD2D16(CUdeviceptr d, size_t pitch,
				   unsigned short v, size_t w, size_t h)
{
	return do_memset(d, pitch, v, 2, w, h, NULL);
}

static CUresult fake_cuMemsetD2D32(CUdeviceptr d, size_t pitch,
				   unsigned int v, size_t w, size_t h)
{
	return do_memset(d, pitch, v, 4, w, h, NULL);
}

static CUresult fake_cuMemsetD2D8Async(CUdeviceptr d, size_t pitch,
				       unsigned char v, size_t w, size_t h,
				       CUstream s)
{
	return do_memset(d, pitch, v, 1, w, h, s);
}

static CUresult fake_cuMemsetD2D16Async(CUdeviceptr d, size_t pitch,
					unsigned short v, size_t w, size_t h,
					CUstream s)
{
	return do_memset(d, pitch, v, 2, w, h, s);
}

static CUresult fake_cuMemsetD2D32Async(CUdeviceptr d, size_t pitch,
					unsigned int v, size_t w, size_t h,
					CUstream s)
{
	return do_memset(d, pitch, v, 4, w, h, s);
}

static CUresult fake_cuPointerGetAttribute(void *data, CUpointer_attribute a,
					   CUdeviceptr ptr)
{
	struct range *r;

	NEED_INIT();
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	r = range_find((uintptr_t)ptr, 1);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT: {
		CUcontext c = (CUcontext)(r->ctx ? r->ctx : cur);

		memcpy(data, &c, sizeof(c));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: {
		unsigned int t = r->kind == R_HOST ? CU_MEMORYTYPE_HOST :
						     CU_MEMORYTYPE_DEVICE;

		memcpy(data, &t, sizeof(t));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		memcpy(data, &ptr, sizeof(ptr));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER: {
		void *p = (void *)(uintptr_t)ptr;

		if (r->kind != R_HOST)
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(data, &p, sizeof(p));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
		int zero = 0;

		memcpy(data, &zero, sizeof(zero));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: {
		CUdeviceptr b = (CUdeviceptr)r->base;

		memcpy(data, &b, sizeof(b));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		memcpy(data, &r->size, sizeof(r->size));
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* ---- modules and libraries ----------------------------------------------- */

static CUresult fake_cuModuleLoadDataEx(CUmodule *module, const void *image,
					unsigned int nopt, CUjit_option *opts,
					void **vals)
{
	struct fmodule *m;

	NEED_CTX();
	if (!module || (nopt && (!opts || !vals)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!image_ok(image))
		return CUDA_ERROR_INVALID_IMAGE;
	m = module_new(cur, NULL);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*module = (CUmodule)m;
	return CUDA_SUCCESS;
}

static CUresult fake_cuModuleUnload(CUmodule hmod)
{
	struct fmodule *m;

	NEED_INIT();
	m = MODULE(hmod);
	if (!m || m->lib)	/* a library's module goes with it */
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(m);
	return CUDA_SUCCESS;
}

static CUresult fake_cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
					 const char *name)
{
	const struct fake_kernel_def *k;
	struct fmodule *m;

	NEED_INIT();
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	m = MODULE(hmod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	k = kernel_def(name);
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	*hfunc = (CUfunction)&m->funcs[k - kernels];
	return CUDA_SUCCESS;
}

static CUresult module_global(struct fmodule *m, CUdeviceptr *dptr,
			      size_t *bytes, const char *name)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (strcmp(name, FAKE_GLOBAL_NAME) != 0)
		return CUDA_ERROR_NOT_FOUND;
	if (dptr)
		*dptr = (CUdeviceptr)(uintptr_t)m->global;
	if (bytes)
		*bytes = FAKE_GLOBAL_SIZE;
	return CUDA_SUCCESS;
}

static CUresult fake_cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes,
				       CUmodule hmod, const char *name)
{
	struct fmodule *m;

	NEED_INIT();
	m = MODULE(hmod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	return module_global(m, dptr, bytes, name);
}

static CUresult fake_cuLibraryLoadData(CUlibrary *library, const void *code,
				       CUjit_option *jo, void **jv,
				       unsigned int njit,
				       CUlibraryOption *lo, void **lv,
				       unsigned int nlib)
{
	struct flibrary *l;

	NEED_INIT();
	if (!library || (njit && (!jo || !jv)) || (nlib && (!lo || !lv)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!image_ok(code))
		return CUDA_ERROR_INVALID_IMAGE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* libraries are context-independent: no owner context */
	l->mod = module_new(NULL, l);
	if (!l->mod) {
		free(l);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (unsigned int i = 0; i < NKERNELS; i++) {
		l->kern[i].magic = KERNEL_MAGIC;
		l->kern[i].lib = l;
		l->kern[i].index = i;
	}
	obj_add(&l->o, O_LIBRARY, NULL);
	*library = (CUlibrary)l;
	return CUDA_SUCCESS;
}

static CUresult fake_cuLibraryUnload(CUlibrary library)
{
	struct flibrary *l;

	NEED_INIT();
	l = LIBRARY(library);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(l->mod);
	obj_unlink(&l->o);
	free(l);
	return CUDA_SUCCESS;
}

static CUresult fake_cuLibraryGetKernel(CUkernel *pk, CUlibrary library,
					const char *name)
{
	const struct fake_kernel_def *k;
	struct flibrary *l;

	NEED_INIT();
	if (!pk || !name)
		return CUDA_ERROR_INVALID_VALUE;
	l = LIBRARY(library);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	k = kernel_def(name);
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	*pk = (CUkernel)&l->kern[k - kernels];
	return CUDA_SUCCESS;
}

static CUresult fake_cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes,
					CUlibrary library, const char *name)
{
	struct flibrary *l;

	NEED_INIT();
	l = LIBRARY(library);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	return module_global(l->mod, dptr, bytes, name);
}

static CUresult fake_cuLibraryGetModule(CUmodule *pmod, CUlibrary library)
{
	struct flibrary *l;

	NEED_INIT();
	if (!pmod)
		return CUDA_ERROR_INVALID_VALUE;
	l = LIBRARY(library);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	*pmod = (CUmodule)l->mod;
	return CUDA_SUCCESS;
}

static CUresult fake_cuKernelGetFunction(CUfunction *pfunc, CUkernel kernel)
{
	struct fkernel *k;

	NEED_CTX();
	if (!pfunc)
		return CUDA_ERROR_INVALID_VALUE;
	k = kernel_find(kernel);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	*pfunc = (CUfunction)&k->lib->mod->funcs[k->index];
	return CUDA_SUCCESS;
}

static CUresult param_info(const struct ffunc *f, size_t index, size_t *off,
			   size_t *size)
{
	if (index >= f->def->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = f->def->p[index].off;
	if (size)
		*size = f->def->p[index].size;
	return CUDA_SUCCESS;
}

static CUresult fake_cuFuncGetParamInfo(CUfunction func, size_t index,
					size_t *off, size_t *size)
{
	struct ffunc *f;

	NEED_INIT();
	f = func_find(func);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return param_info(f, index, off, size);
}

static CUresult fake_cuKernelGetParamInfo(CUkernel kernel, size_t index,
					  size_t *off, size_t *size)
{
	struct fkernel *k;

	NEED_INIT();
	k = kernel_find(kernel);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	return param_info(&k->lib->mod->funcs[k->index], index, off, size);
}

/* ---- function attributes ------------------------------------------------- */

static CUresult func_get_attr(const struct ffunc *f, CUfunction_attribute a,
			      int *pi)
{
	int v;

	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		v = 1024;
		break;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
		v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		v = 16;
		break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		v = 90;
		break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		v = f->max_dyn_smem;
		break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		v = f->carveout;
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
		v = f->req_cluster[0];
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
		v = f->req_cluster[1];
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		v = f->req_cluster[2];
		break;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		v = f->non_portable_cluster;
		break;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		v = f->sched_policy;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pi = v;
	return CUDA_SUCCESS;
}

static CUresult func_set_attr(struct ffunc *f, CUfunction_attribute a,
			      int v)
{
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		if (v < 0 || v > FAKE_MAX_DYN_SMEM)
			return CUDA_ERROR_INVALID_VALUE;
		f->max_dyn_smem = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		if (v < -1 || v > 100)
			return CUDA_ERROR_INVALID_VALUE;
		f->carveout = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		if (v != 0 && v != 1)
			return CUDA_ERROR_INVALID_VALUE;
		f->non_portable_cluster = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		if (v < 0 || v > 2)
			return CUDA_ERROR_INVALID_VALUE;
		f->sched_policy = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		if (v < 0 || v > 16)
			return CUDA_ERROR_INVALID_VALUE;
		f->req_cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] =
			v;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult fake_cuFuncGetAttribute(int *pi, CUfunction_attribute a,
					CUfunction hfunc)
{
	struct ffunc *f;

	NEED_INIT();
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	f = func_find(hfunc);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_get_attr(f, a, pi);
}

static CUresult fake_cuFuncSetAttribute(CUfunction hfunc,
					CUfunction_attribute a, int v)
{
	struct ffunc *f;

	NEED_INIT();
	f = func_find(hfunc);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_set_attr(f, a, v);
}

static CUresult fake_cuFuncSetCacheConfig(CUfunction hfunc,
					  CUfunc_cache config)
{
	struct ffunc *f;

	NEED_INIT();
	f = func_find(hfunc);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!cache_config_ok(config))
		return CUDA_ERROR_INVALID_VALUE;
	f->cache = config;
	return CUDA_SUCCESS;
}

static CUresult fake_cuKernelGetAttribute(int *pi, CUfunction_attribute a,
					  CUkernel kernel, CUdevice dev)
{
	struct fkernel *k;

	CHECK_DEV(dev);
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	k = kernel_find(kernel);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_get_attr(&k->lib->mod->funcs[k->index], a, pi);
}

static CUresult fake_cuKernelSetAttribute(CUfunction_attribute a, int v,
					  CUkernel kernel, CUdevice dev)
{
	struct fkernel *k;

	CHECK_DEV(dev);
	k = kernel_find(kernel);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	return func_set_attr(&k->lib->mod->funcs[k->index], a, v);
}

static CUresult fake_cuKernelSetCacheConfig(CUkernel kernel,
					    CUfunc_cache config, CUdevice dev)
{
	struct fkernel *k;

	CHECK_DEV(dev);
	k = kernel_find(kernel);
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!cache_config_ok(config))
		return CUDA_ERROR_INVALID_VALUE;
	k->lib->mod->funcs[k->index].cache = config;
	return CUDA_SUCCESS;
}

/* ---- the kernels --------------------------------------------------------- */

/* [p, p + n * esize) is device memory, aligned for the element type */
static CUresult kernel_span(uint64_t p, int32_t n, size_t esize)
{
	if (n <= 0)
		return CUDA_SUCCESS;
	if (p % esize)
		return CUDA_ERROR_MISALIGNED_ADDRESS;
	if (!dev_ok((CUdeviceptr)p, (size_t)n * esize))
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
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return CUDA_SUCCESS;
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

static CUresult launch(CUfunction fn, const unsigned int grid[3],
		       const unsigned int block[3], unsigned int shmem,
		       CUstream s, void **kp, void **extra)
{
	uint8_t buf[64];
	struct ffunc *f;
	CUresult rc;

	NEED_CTX();
	f = func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (f->mod->o.ctx && f->mod->o.ctx != cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	rc = stream_ok(s);
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
	return f->def->run(buf);
}

static CUresult fake_cuLaunchKernel(CUfunction f, unsigned int gx,
				    unsigned int gy, unsigned int gz,
				    unsigned int bx, unsigned int by,
				    unsigned int bz, unsigned int shmem,
				    CUstream s, void **kp, void **extra)
{
	const unsigned int grid[3] = { gx, gy, gz };
	const unsigned int block[3] = { bx, by, bz };

	return launch(f, grid, block, shmem, s, kp, extra);
}

static CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f,
				      void **kp, void **extra)
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

static CUresult fake_cuOccupancyMaxActiveBlocks(int *nblocks, CUfunction fn,
						int block, size_t dyn,
						unsigned int flags)
{
	struct ffunc *f;

	NEED_CTX();
	if (!nblocks || block <= 0 || flags > 1)
		return CUDA_ERROR_INVALID_VALUE;
	f = func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*nblocks = blocks_per_sm(f, block, dyn);
	return CUDA_SUCCESS;
}

static CUresult fake_cuOccupancyAvailableDynamicSMemPerBlock(size_t *out,
							     CUfunction fn,
							     int nblocks,
							     int block)
{
	struct ffunc *f;
	size_t avail;

	NEED_CTX();
	if (!out || nblocks <= 0 || block <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	f = func_find(fn);
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

static CUresult fake_cuOccupancyMaxActiveClusters(int *n, CUfunction fn,
						  const CUlaunchConfig *c)
{
	unsigned int cs, threads;
	struct ffunc *f;

	NEED_CTX();
	if (!n || !c || (c->numAttrs && !c->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	f = func_find(fn);
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

static CUresult fake_cuOccupancyMaxPotentialClusterSize(int *size,
							CUfunction fn,
							const CUlaunchConfig *c)
{
	struct ffunc *f;

	NEED_CTX();
	if (!size || !c)
		return CUDA_ERROR_INVALID_VALUE;
	f = func_find(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*size = f->non_portable_cluster ? 16 : 8;
	return CUDA_SUCCESS;
}

/* ---- streams ------------------------------------------------------------- */

static CUresult fake_cuStreamCreateWithPriority(CUstream *ph,
						unsigned int flags,
						int priority)
{
	struct fstream *s;

	NEED_CTX();
	if (!ph || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* clamped to the range, as the driver does */
	s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
	s->flags = flags;
	obj_add(&s->o, O_STREAM, cur);
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

static CUresult fake_cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return fake_cuStreamCreateWithPriority(ph, flags, 0);
}

static CUresult fake_cuStreamDestroy(CUstream hs)
{
	struct fstream *s;

	NEED_INIT();
	s = STREAM(hs);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	obj_unlink(&s->o);
	free(s);
	return CUDA_SUCCESS;
}

static CUresult fake_cuStreamSynchronize(CUstream s)
{
	NEED_CTX();
	return stream_ok(s);
}

static CUresult fake_cuStreamQuery(CUstream s)
{
	NEED_CTX();
	return stream_ok(s);
}

static CUresult fake_cuStreamWaitEvent(CUstream s, CUevent ev,
				       unsigned int flags)
{
	CUresult rc;

	NEED_CTX();
	rc = stream_ok(s);
	if (rc)
		return rc;
	if (!EVENT(ev))
		return CUDA_ERROR_INVALID_HANDLE;
	return flags > 1 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* ---- events -------------------------------------------------------------- */

static CUresult fake_cuEventCreate(CUevent *ph, unsigned int flags)
{
	const unsigned int known = CU_EVENT_BLOCKING_SYNC |
				   CU_EVENT_DISABLE_TIMING |
				   CU_EVENT_INTERPROCESS;
	struct fevent *e;

	NEED_CTX();
	if (!ph || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->flags = flags;
	obj_add(&e->o, O_EVENT, cur);
	*ph = (CUevent)e;
	return CUDA_SUCCESS;
}

static CUresult fake_cuEventRecordWithFlags(CUevent ev, CUstream s,
					    unsigned int flags)
{
	struct fevent *e;
	CUresult rc;

	NEED_CTX();
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	rc = stream_ok(s);
	if (rc)
		return rc;
	if (flags & ~(unsigned int)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	clock_gettime(CLOCK_MONOTONIC, &e->when);
	e->recorded = true;
	return CUDA_SUCCESS;
}

static CUresult fake_cuEventRecord(CUevent ev, CUstream s)
{
	return fake_cuEventRecordWithFlags(ev, s, 0);
}

static CUresult fake_cuEventQuery(CUevent ev)
{
	NEED_INIT();
	return EVENT(ev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fake_cuEventSynchronize(CUevent ev)
{
	NEED_INIT();
	return EVENT(ev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fake_cuEventDestroy(CUevent ev)
{
	struct fevent *e;

	NEED_INIT();
	e = EVENT(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	obj_unlink(&e->o);
	free(e);
	return CUDA_SUCCESS;
}

static CUresult fake_cuEventElapsedTime(float *ms, CUevent hs, CUevent he)
{
	struct fevent *s, *e;
	double d;

	NEED_INIT();
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	s = EVENT(hs);
	e = EVENT(he);
	if (!s || !e || !s->recorded || !e->recorded ||
	    (s->flags & CU_EVENT_DISABLE_TIMING) ||
	    (e->flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	d = (double)(e->when.tv_sec - s->when.tv_sec) * 1e3 +
	    (double)(e->when.tv_nsec - s->when.tv_nsec) / 1e6;
	*ms = (float)d;
	return CUDA_SUCCESS;
}

/* ---- errors -------------------------------------------------------------- */

static CUresult fake_cuGetErrorName(CUresult error, const char **pstr)
{
	static const struct {
		CUresult rc;
		const char *name;
	} names[] = {
#define N(x) { x, #x }
		N(CUDA_SUCCESS),
		N(CUDA_ERROR_INVALID_VALUE),
		N(CUDA_ERROR_OUT_OF_MEMORY),
		N(CUDA_ERROR_NOT_INITIALIZED),
		N(CUDA_ERROR_INVALID_DEVICE),
		N(CUDA_ERROR_INVALID_IMAGE),
		N(CUDA_ERROR_INVALID_CONTEXT),
		N(CUDA_ERROR_UNSUPPORTED_LIMIT),
		N(CUDA_ERROR_INVALID_HANDLE),
		N(CUDA_ERROR_NOT_FOUND),
		N(CUDA_ERROR_ILLEGAL_ADDRESS),
		N(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
		N(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
		N(CUDA_ERROR_MISALIGNED_ADDRESS),
		N(CUDA_ERROR_INVALID_CLUSTER_SIZE),
		N(CUDA_ERROR_NOT_SUPPORTED),
		N(CUDA_ERROR_UNKNOWN),
#undef N
	};

	if (!pstr)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].rc == error) {
			*pstr = names[i].name;
			return CUDA_SUCCESS;
		}
	}
	*pstr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

/* ---- the table ----------------------------------------------------------- */

struct xgpub_driver *xgpub_fake_open(void)
{
	static struct xgpub_driver d;

	memset(&d, 0, sizeof(d));
	d.name = "fake (tests only)";
	d.cuInit = fake_cuInit;
	d.cuDriverGetVersion = fake_cuDriverGetVersion;
	d.cuDeviceGet = fake_cuDeviceGet;
	d.cuDeviceGetCount = fake_cuDeviceGetCount;
	d.cuDeviceGetName = fake_cuDeviceGetName;
	d.cuDeviceTotalMem_v2 = fake_cuDeviceTotalMem;
	d.cuDeviceGetAttribute = fake_cuDeviceGetAttribute;
	d.cuDeviceGetUuid_v2 = fake_cuDeviceGetUuid;
	d.cuDevicePrimaryCtxRetain = fake_cuDevicePrimaryCtxRetain;
	d.cuDevicePrimaryCtxRelease_v2 = fake_cuDevicePrimaryCtxRelease;
	d.cuDevicePrimaryCtxReset_v2 = fake_cuDevicePrimaryCtxReset;
	d.cuDevicePrimaryCtxSetFlags_v2 = fake_cuDevicePrimaryCtxSetFlags;
	d.cuDevicePrimaryCtxGetState = fake_cuDevicePrimaryCtxGetState;
	d.cuCtxCreate_v4 = fake_cuCtxCreate;
	d.cuCtxDestroy_v2 = fake_cuCtxDestroy;
	d.cuCtxSetCurrent = fake_cuCtxSetCurrent;
	d.cuCtxGetCurrent = fake_cuCtxGetCurrent;
	d.cuCtxSynchronize = fake_cuCtxSynchronize;
	d.cuCtxGetLimit = fake_cuCtxGetLimit;
	d.cuCtxSetLimit = fake_cuCtxSetLimit;
	d.cuCtxGetStreamPriorityRange = fake_cuCtxGetStreamPriorityRange;
	d.cuCtxGetFlags = fake_cuCtxGetFlags;
	d.cuCtxGetCacheConfig = fake_cuCtxGetCacheConfig;
	d.cuCtxSetCacheConfig = fake_cuCtxSetCacheConfig;
	d.cuMemGetInfo_v2 = fake_cuMemGetInfo;
	d.cuMemAlloc_v2 = fake_cuMemAlloc;
	d.cuMemAllocPitch_v2 = fake_cuMemAllocPitch;
	d.cuMemFree_v2 = fake_cuMemFree;
	d.cuMemGetAddressRange_v2 = fake_cuMemGetAddressRange;
	d.cuMemHostRegister_v2 = fake_cuMemHostRegister;
	d.cuMemHostUnregister = fake_cuMemHostUnregister;
	d.cuMemHostGetDevicePointer_v2 = fake_cuMemHostGetDevicePointer;
	d.cuMemcpyHtoD_v2 = fake_cuMemcpyHtoD;
	d.cuMemcpyDtoH_v2 = fake_cuMemcpyDtoH;
	d.cuMemcpyDtoD_v2 = fake_cuMemcpyDtoD;
	d.cuMemcpyHtoDAsync_v2 = fake_cuMemcpyHtoDAsync;
	d.cuMemcpyDtoHAsync_v2 = fake_cuMemcpyDtoHAsync;
	d.cuMemcpyDtoDAsync_v2 = fake_cuMemcpyDtoDAsync;
	d.cuMemcpy2D_v2 = fake_cuMemcpy2D;
	d.cuMemcpy2DAsync_v2 = fake_cuMemcpy2DAsync;
	d.cuMemsetD8_v2 = fake_cuMemsetD8;
	d.cuMemsetD16_v2 = fake_cuMemsetD16;
	d.cuMemsetD32_v2 = fake_cuMemsetD32;
	d.cuMemsetD8Async = fake_cuMemsetD8Async;
	d.cuMemsetD16Async = fake_cuMemsetD16Async;
	d.cuMemsetD32Async = fake_cuMemsetD32Async;
	d.cuMemsetD2D8_v2 = fake_cuMemsetD2D8;
	d.cuMemsetD2D16_v2 = fake_cuMemsetD2D16;
	d.cuMemsetD2D32_v2 = fake_cuMemsetD2D32;
	d.cuMemsetD2D8Async = fake_cuMemsetD2D8Async;
	d.cuMemsetD2D16Async = fake_cuMemsetD2D16Async;
	d.cuMemsetD2D32Async = fake_cuMemsetD2D32Async;
	d.cuPointerGetAttribute = fake_cuPointerGetAttribute;
	/* arrays and texture objects are not emulated: left NULL */
	d.cuModuleLoadDataEx = fake_cuModuleLoadDataEx;
	d.cuModuleUnload = fake_cuModuleUnload;
	d.cuModuleGetFunction = fake_cuModuleGetFunction;
	d.cuModuleGetGlobal_v2 = fake_cuModuleGetGlobal;
	d.cuLibraryLoadData = fake_cuLibraryLoadData;
	d.cuLibraryUnload = fake_cuLibraryUnload;
	d.cuLibraryGetKernel = fake_cuLibraryGetKernel;
	d.cuLibraryGetGlobal = fake_cuLibraryGetGlobal;
	d.cuLibraryGetModule = fake_cuLibraryGetModule;
	d.cuKernelGetFunction = fake_cuKernelGetFunction;
	d.cuKernelGetAttribute = fake_cuKernelGetAttribute;
	d.cuKernelSetAttribute = fake_cuKernelSetAttribute;
	d.cuKernelSetCacheConfig = fake_cuKernelSetCacheConfig;
	d.cuKernelGetParamInfo = fake_cuKernelGetParamInfo;
	d.cuFuncGetParamInfo = fake_cuFuncGetParamInfo;
	d.cuFuncGetAttribute = fake_cuFuncGetAttribute;
	d.cuFuncSetAttribute = fake_cuFuncSetAttribute;
	d.cuFuncSetCacheConfig = fake_cuFuncSetCacheConfig;
	d.cuLaunchKernel = fake_cuLaunchKernel;
	d.cuLaunchKernelEx = fake_cuLaunchKernelEx;
	d.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags =
		fake_cuOccupancyMaxActiveBlocks;
	d.cuOccupancyAvailableDynamicSMemPerBlock =
		fake_cuOccupancyAvailableDynamicSMemPerBlock;
	d.cuOccupancyMaxActiveClusters = fake_cuOccupancyMaxActiveClusters;
	d.cuOccupancyMaxPotentialClusterSize =
		fake_cuOccupancyMaxPotentialClusterSize;
	d.cuStreamCreate = fake_cuStreamCreate;
	d.cuStreamCreateWithPriority = fake_cuStreamCreateWithPriority;
	d.cuStreamDestroy_v2 = fake_cuStreamDestroy;
	d.cuStreamSynchronize = fake_cuStreamSynchronize;
	d.cuStreamQuery = fake_cuStreamQuery;
	d.cuStreamWaitEvent = fake_cuStreamWaitEvent;
	d.cuEventCreate = fake_cuEventCreate;
	d.cuEventRecord = fake_cuEventRecord;
	d.cuEventRecordWithFlags = fake_cuEventRecordWithFlags;
	d.cuEventQuery = fake_cuEventQuery;
	d.cuEventSynchronize = fake_cuEventSynchronize;
	d.cuEventDestroy_v2 = fake_cuEventDestroy;
	d.cuEventElapsedTime_v2 = fake_cuEventElapsedTime;
	d.cuGetErrorName = fake_cuGetErrorName;
	return &d;
}
