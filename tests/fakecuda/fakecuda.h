/* SPDX-License-Identifier: MIT */
/*
 * fakecuda.h: a fake CUDA driver for TESTS ONLY.
 *
 * It is built as $(O)/tests/fakecuda/libcuda.so.1 and the backend's worker
 * loads it exactly like the host's driver (xen-gpubackd --driver
 * /abs/path/libcuda.so.1): the integration tests and the nested-Xen test
 * use it, the shipped daemon carries none of it.
 *
 * It is not a GPU emulator.  It exists so that the transport, the wire
 * protocol, the worker's dispatch and handle tables, scheduling of posted
 * and synchronous calls, and fault handling (hostile guests, guests killed
 * mid-call) can be tested in CI on machines without a GPU.  "Device
 * memory" is host memory from malloc, device pointers are its addresses,
 * and the only kernels are a handful of test functions written in C
 * (xgpu_fake_vadd, _fill, _scale, _spin, _printf) that run synchronously
 * on the calling thread when launched.  Every module image must be the text
 * "XGPU-FAKE-MODULE\n..."; real cubins, fatbins and PTX are refused.
 * Arrays are host memory too (rows packed, fakecuda_array.c), with their
 * copies, mipmapped arrays and a module's texture and surface references
 * (any name starting with "tex" or "surf"), which no kernel reads.
 *
 * The entry points are the driver's exported (versioned) names with their
 * cuda.h prototypes, so a mismatch does not compile; fakecuda.map exports
 * them and nothing else.  What the fake does not emulate (arrays, texture
 * objects, kernel and function counts) it does not define: the worker's
 * dlsym finds nothing and the worker answers CUDA_ERROR_NOT_SUPPORTED.
 * Every access through a device pointer is checked against the live
 * ranges (allocations, registered host memory, module globals) first, so
 * a guest that hands the worker a wild pointer gets an error, never a
 * crash of the worker: that is the property the fault tests rely on.
 *
 * Differences from the real driver that tests must not depend on: errors
 * are never sticky (an illegal address in a kernel does not poison the
 * context), everything asynchronous completes at once, there is one
 * device, and the current context is one per process, not per thread.
 * Nothing but the printf buffer takes a lock: the fake expects one call
 * at a time, as the worker's dispatch thread makes them (the worker's
 * gate completion thread also sets the context, waits for events and
 * destroys them; the fake guards only the printf buffer, which an event
 * synchronize flushes, against that overlap).
 *
 * This header is private to tests/fakecuda: the state shared by its files
 * and the helpers on objects and address ranges (fakecuda_objects.c).
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cuda.h>

#define FAKE_TOTAL_MEM		(1ull << 30)	/* also the allocation limit */
#define FAKE_ALIGN		256u
#define FAKE_PITCH_ALIGN	512u
#define FAKE_DRIVER_VERSION	13000
#define FAKE_MODULE_MAGIC	"XGPU-FAKE-MODULE\n"
#define FAKE_GLOBAL_NAME	"xgpu_fake_global"
#define FAKE_GLOBAL_SIZE	256u
/*
 * Every module's __managed__ variables, in a managed allocation of their
 * own (FAKE_MSEG_SIZE bytes) that starts FAKE_MSEG_OFF bytes into a page
 * and ends inside the next, as the real driver packs them:
 * xgpu_fake_managed, a uint32_t that starts as FAKE_MANAGED_INIT, and 16
 * bytes on xgpu_fake_managed_arr, FAKE_MANAGED_N floats that start as
 * their index.
 */
#define FAKE_MANAGED_NAME	"xgpu_fake_managed"
#define FAKE_MANAGED_ARR_NAME	"xgpu_fake_managed_arr"
#define FAKE_MANAGED_INIT	7u
#define FAKE_MANAGED_N		1000u
#define FAKE_MSEG_OFF		256u
#define FAKE_MSEG_SIZE		(16u + 4u * FAKE_MANAGED_N)
/* the one export table the fake driver has: 16 bytes of 0x5a, 5 slots */
#define FAKE_ETBL_BYTE		0x5a
#define FAKE_ETBL_SLOTS		5
#define FAKE_DEFAULT_DYN_SMEM	49152
#define FAKE_MAX_DYN_SMEM	232448	/* opt-in maximum per block */
#define FAKE_SMEM_PER_SM	233472
#define FAKE_SMEM_RESERVED	1024
#define FAKE_SMS		132
#define FAKE_MAX_EXTRA		64	/* entries of a launch's `extra` */

/* ---- objects ------------------------------------------------------------- */

enum fobj_type { O_CTX = 1, O_STREAM, O_EVENT, O_MODULE, O_LIBRARY, O_POOL,
		O_RESDESC, O_GREEN };

/*
 * Every object the fake hands out is on one list; a handle from the
 * caller is valid only if it is found there with the right type, so a
 * stale or forged handle is an error, not a use after free (but a handle
 * of a stream or event destroyed lately stops the process: see
 * fc_obj_free).
 */
struct fobj {
	struct fobj *next;
	int type;
	struct fctx *ctx;	/* owner, freed with it; NULL: none */
};

struct fctx {
	struct fobj o;
	/* a green context's context (fakecuda_green.c): the primary, which
	 * owns its memory and modules, and its SMs; NULL, 0 for others */
	struct fctx *base;
	unsigned int sms;
	unsigned int flags;
	size_t limits[CU_LIMIT_MAX];
	CUfunc_cache cache;
};

/* the capture nodes a stream's next captured work depends on */
#define FC_CAP_DEPS 16

struct fstream {
	struct fobj o;
	unsigned int flags;
	int priority;
	uint64_t cap;		/* the capture it is in (its id), 0: none */
	CUgraphNode cdeps[FC_CAP_DEPS];	/* while in it */
	size_t ncdeps;
	/*
	 * XGPU_FAKE_VALUE_WAITS=1: a value wait that does not hold yet
	 * holds the stream (its queries say not ready, its synchronizes
	 * wait) until a write makes it hold; wait_gen counts such waits.
	 * Work behind it still runs at once: only the waiting is modelled.
	 */
	bool waiting;		/* (atomic) */
	bool wait64;
	uint32_t wait_flags;
	uint64_t wait_addr, wait_value;
	uint32_t wait_gen;
};

struct fevent {
	struct fobj o;
	unsigned int flags;
	bool recorded;
	struct timespec when;
	uint64_t cap;		/* last recorded in that capture, 0: none */
	CUgraphNode cdeps[FC_CAP_DEPS];	/* the nodes it stands for there */
	size_t ncdeps;
	/* recorded behind a value wait of that stream (its wait_gen) */
	CUstream behind;
	uint32_t behind_gen;
};

/* ---- the test kernels (fakecuda_launch.c) -------------------------------- */

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

#define NKERNELS 5

/* every module and library has one function of each, in this order */
extern const struct fake_kernel_def fc_kernels[];

/* what xgpu_fake_printf "printed" waits for a synchronising call */
#define FAKE_PRINTF_MAX		(4u << 20)
/* write it to fd 1, as the driver writes the device's printf buffer */
void fc_printf_flush(void);
/* with XGPU_FAKE_SANDBOX_PROBE: try what the worker's sandbox refuses,
 * once, and say how it went on stderr (fakecuda_sandbox.c) */
void fc_sandbox_probe(void);
/* rc, logged as the driver logs an error it returns from fn (fakecuda_logs.c) */
CUresult fc_log_return(const char *fn, CUresult rc);

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

struct fmodule {
	struct fobj o;
	struct flibrary *lib;	/* the library owning it, if any */
	uint8_t *global;	/* xgpu_fake_global */
	uint8_t *mmap;		/* two pages: the managed variables' */
	uint8_t *mseg;		/* mmap + FAKE_MSEG_OFF */
	struct ffunc funcs[NKERNELS];
};

struct flibrary {
	struct fobj o;
	struct fmodule *mod;
	struct fkernel kern[NKERNELS];
};

/* ---- address ranges ------------------------------------------------------ */

enum range_kind { R_DEVICE = 1, R_HOST, R_GLOBAL };

struct range {
	uintptr_t base;
	size_t size;
	size_t charged;		/* counted against the device memory */
	int kind;
	unsigned int flags;	/* R_HOST: cuMemHostRegister flags */
	struct fctx *ctx;	/* R_DEVICE: owner */
	void *mem;		/* R_DEVICE: to free */
	bool managed;		/* R_DEVICE: cuMemAllocManaged's, mapped
				 * (charged bytes at base), not malloc's;
				 * R_GLOBAL: a module's managed variables */
	struct fpool *pool;	/* R_DEVICE: the pool it came from */
	CUmemGenericAllocationHandle vmm;	/* R_DEVICE: cuMemMap'ed */
};

/* a memory pool (fakecuda_pool.c): counters and attributes, no caching */
struct fpool {
	struct fobj o;
	uint64_t threshold;
	int reuse[3];
	uint64_t used, used_high;
	/* shareable (POSIX fd): allocations come from a memfd arena mapped
	 * at base, next is the first free byte; imported pools map another
	 * process's arena */
	bool shared;
	int fd;
	uint8_t *base;
	size_t next;
};

/* ---- the shared state (fakecuda_objects.c) ------------------------------- */

extern bool fc_inited;		/* cuInit was called */
extern __thread struct fctx *fc_cur;	/* the calling thread's current context */
extern struct fobj *fc_objs;	/* every live object */
/* whether stream s still waits for a value (XGPU_FAKE_VALUE_WAITS) */
bool fc_stream_waits(CUstream s);
bool fc_fstream_waits(struct fstream *fs);
/* whether any stream of ctx still waits for a value */
bool fc_ctx_waits(struct fctx *ctx);
extern struct range *fc_ranges;
extern size_t fc_nranges;
extern uint64_t fc_mem_used;	/* device memory charged */

/* the range holding [p, p + n), or NULL (n 0 counts as 1 byte) */
struct range *fc_range_find(uintptr_t p, size_t n);
/* may the device touch [p, p + n)? */
bool fc_dev_ok(CUdeviceptr p, size_t n);
/*
 * may a copy or memset touch [p, p + n)?  fc_dev_ok, unless
 * XGPU_FAKE_WILD_COPIES=1: then any address, as a driver whose GPU
 * reaches all of the process's memory (HMM, ATS) would; for tests that
 * the worker checks device addresses before the driver sees them
 */
bool fc_copy_ok(CUdeviceptr p, size_t n);
/* a new range (its other fields zero), or NULL when out of memory */
struct range *fc_range_add(uintptr_t base, size_t size, int kind);
/* drop r: its charge is returned and its memory freed */
void fc_range_del(struct range *r);
/* the range starting exactly at base, of kind */
struct range *fc_range_at(uintptr_t base, int kind);

void fc_obj_add(struct fobj *o, int type, struct fctx *ctx);
void fc_obj_unlink(struct fobj *o);
/* o if p is a live object of type, else NULL */
struct fobj *fc_obj_find(const void *p, int type);
/* free an object unlinked from the list (streams and events are kept a
 * while, and a later use of their handle stops the process) */
void fc_obj_free(struct fobj *o);

#define CTX(p)	   ((struct fctx *)fc_obj_find((p), O_CTX))
#define STREAM(p)  ((struct fstream *)fc_obj_find((p), O_STREAM))
#define EVENT(p)   ((struct fevent *)fc_obj_find((p), O_EVENT))
#define MODULE(p)  ((struct fmodule *)fc_obj_find((p), O_MODULE))
#define LIBRARY(p) ((struct flibrary *)fc_obj_find((p), O_LIBRARY))

/* the context owning memory, modules and events made in the current
 * one: the primary for a green context's context */
static inline struct fctx *fc_owner(void)
{
	return fc_cur && fc_cur->base ? fc_cur->base : fc_cur;
}

/* the primary context, and freeing what a context owns
 * (fakecuda_device.c) */
struct fctx *fc_primary(void);
void fc_ctx_free_resources(struct fctx *c);
/* a copy of the primary's state for a green context's context */
void fc_ctx_init_green(struct fctx *c);

/* a CUfunction of a live module, or the function of a CUkernel passed as
 * one (cudart does that) */
struct ffunc *fc_func_find(const void *p);
/* a CUkernel of a live library */
struct fkernel *fc_kernel_find(const void *p);

/* 0, or CUDA_ERROR_INVALID_HANDLE unless s is a stream the caller may use */
CUresult fc_stream_ok(CUstream s);

/*
 * Stream capture (fakecuda_graph.c).  Work for stream s: fc_stream_ok's
 * answer, or an error of capture (legacy-stream work while a blocking
 * stream of the context is captured: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
 * the capture invalidated; work on an invalidated capture); when 0,
 * *captured says whether it was captured (a node of the capture's graph)
 * instead of run.
 */
CUresult fc_stream_work(CUstream s, bool *captured);
/* the same, a captured op becoming a node of the type and parameters in
 * *as (a host function, a copy) instead of an empty one */
struct fc_capnode {
	CUgraphNodeType type;	/* HOST, MEMCPY or MEMSET */
	CUDA_HOST_NODE_PARAMS host;
	CUDA_MEMCPY3D cp;
	CUDA_MEMSET_NODE_PARAMS ms;
};
CUresult fc_stream_work_as(CUstream s, bool *captured,
			   const struct fc_capnode *as);
/* as: captured work that adds no node (an event record) */
extern const struct fc_capnode fc_no_node;
/* an event recorded on s (after fc_stream_work): captured or not */
void fc_event_recorded(struct fevent *e, CUstream s, bool captured);
/* a stream waits for an event: a captured event's capture joins s */
CUresult fc_stream_wait(CUstream s, struct fevent *e);
/* the host waits for or queries an event or a stream: 0, or
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED when it is in a capture or the
 * thread may not wait during a capture (that capture is invalidated) */
CUresult fc_host_wait(struct fevent *e, CUstream s);
bool fc_cache_config_ok(CUfunc_cache c);

/* a device allocation of `size` bytes (fakecuda_memory.c) */
CUresult fc_dev_alloc(CUdeviceptr *dptr, size_t size);
/* an allocation changed fc_mem_used: over the budget, notify
 * (fakecuda_ext.c) */
void fc_budget_note(void);
/* is h a live physical allocation of at least off + 1 bytes?
 * (fakecuda_vmm.c) */
bool fc_phys_ok(CUmemGenericAllocationHandle h, unsigned long long off);

/* ---- arrays (fakecuda_array.c) ------------------------------------------- */

/* a 3D copy between host, device and array memory (2D copies with an
 * array side come here too) */
CUresult fc_copy_3d(const CUDA_MEMCPY3D *c);

/* ---- modules (fakecuda_module.c) ----------------------------------------- */

/* free a module, its functions and its global (contexts going away) */
void fc_module_free(struct fmodule *m);

/* ---- what every entry point checks first --------------------------------- */

#define NEED_INIT()                                                          \
	do {                                                                 \
		if (!fc_inited)                                              \
			return CUDA_ERROR_NOT_INITIALIZED;                   \
	} while (0)

#define NEED_CTX()                                                           \
	do {                                                                 \
		if (!fc_inited)                                              \
			return CUDA_ERROR_NOT_INITIALIZED;                   \
		if (!fc_cur)                                                 \
			return CUDA_ERROR_INVALID_CONTEXT;                   \
	} while (0)

#define CHECK_DEV(dev)                                                       \
	do {                                                                 \
		if (!fc_inited)                                              \
			return CUDA_ERROR_NOT_INITIALIZED;                   \
		if ((dev) != 0)                                              \
			return CUDA_ERROR_INVALID_DEVICE;                    \
	} while (0)

#endif /* FAKECUDA_H */
