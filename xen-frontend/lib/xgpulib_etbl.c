/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_etbl.c: cuGetExportTable and the tables it serves.
 *
 * cudart asks for seven tables by UUID right after cuInit and refuses to
 * start, or crashes, without them (research/cuda13-traces/
 * etbl_refusal_matrix.txt).  A table is an array of function pointers
 * whose slot 0 holds the table's size in bytes, except for the
 * context-local-storage one.  Only the slots known to be called do real
 * work; every other slot is a function that says which table and slot it
 * is under XGPU_DEBUG and returns CUDA_SUCCESS, so that a newly used slot
 * shows up in a log instead of as a jump to NULL.
 *
 * The tables live in static storage: the integrity check hashes their
 * addresses, which must not change while the process lives.
 *
 * The context-local-storage table's slots are xgpulib_etbl_cls.c's; the
 * core's identity callbacks both ask are kept by xgpulib_etbl_ops.c.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "xgpulib_env.h"

#include "xgpulib_etbl.h"
#include "xgpulib_md2.h"


XGPULIB_EXPORT CUresult cuGetExportTable(const void **ppExportTable,
					 const CUuuid *pExportTableId);

/* ---- slots nobody has needed yet ---------------------------------------- */

static void etbl_log_slot(const char *table, int slot)
{
	if (xgpulib_debug_on())
		fprintf(stderr,
			"xgpu: export table %s slot %d called, answering 0\n",
			table, slot);
}

static void etbl_log_refused(const char *table, int slot)
{
	if (xgpulib_debug_on())
		fprintf(stderr,
			"xgpu: export table %s slot %d called, refused "
			"(CUDA_ERROR_NOT_SUPPORTED)\n", table, slot);
}

/*
 * One function per (table, slot), so the log can tell them apart.  The
 * callers pass arguments these ignore, which the x86-64 calling convention
 * allows.
 */
#define ETBL_NAME(t, n) etbl_##t##_##n
#define ETBL_STUB(t, n)							\
	__attribute__((unused)) static CUresult ETBL_NAME(t, n)(void)	\
	{								\
		etbl_log_slot(#t, n);					\
		return CUDA_SUCCESS;					\
	}
/* a slot of a table the library knows only in part: refused, like a
 * driver without the feature */
#define ETBL_REFUSE(t, n)						\
	__attribute__((unused)) static CUresult ETBL_NAME(t, n)(void)	\
	{								\
		etbl_log_refused(#t, n);				\
		return CUDA_ERROR_NOT_SUPPORTED;			\
	}
#define ETBL_FN(f) ((const void *)(f))
#define ETBL_SLOT(t, n) ETBL_FN(ETBL_NAME(t, n))
#define ETBL_SIZE(nslots) ((const void *)(uintptr_t)((nslots) * sizeof(void *)))

/* m(t, n) for each slot n of a range: 1-9, x0-x9 (tens digit x), 1-19, 1-89 */
#define ETBL_EACH_1_9(m, t)						\
	m(t, 1) m(t, 2) m(t, 3) m(t, 4) m(t, 5) m(t, 6) m(t, 7) m(t, 8)	\
	m(t, 9)
#define ETBL_EACH_X0_X9(m, t, x)					\
	m(t, x##0) m(t, x##1) m(t, x##2) m(t, x##3) m(t, x##4)		\
	m(t, x##5) m(t, x##6) m(t, x##7) m(t, x##8) m(t, x##9)
#define ETBL_EACH_1_19(m, t)						\
	ETBL_EACH_1_9(m, t) ETBL_EACH_X0_X9(m, t, 1)
#define ETBL_EACH_1_89(m, t)						\
	ETBL_EACH_1_19(m, t)						\
	ETBL_EACH_X0_X9(m, t, 2) ETBL_EACH_X0_X9(m, t, 3)		\
	ETBL_EACH_X0_X9(m, t, 4) ETBL_EACH_X0_X9(m, t, 5)		\
	ETBL_EACH_X0_X9(m, t, 6) ETBL_EACH_X0_X9(m, t, 7)		\
	ETBL_EACH_X0_X9(m, t, 8)
/* m(t, n) for the slots of tens digit x (none: 1-9) from digit d to 9 */
#define ETBL_FROM_9(m, t, x) m(t, x##9)
#define ETBL_FROM_8(m, t, x) m(t, x##8) ETBL_FROM_9(m, t, x)
#define ETBL_FROM_7(m, t, x) m(t, x##7) ETBL_FROM_8(m, t, x)
#define ETBL_FROM_6(m, t, x) m(t, x##6) ETBL_FROM_7(m, t, x)
#define ETBL_FROM_5(m, t, x) m(t, x##5) ETBL_FROM_6(m, t, x)
#define ETBL_FROM_4(m, t, x) m(t, x##4) ETBL_FROM_5(m, t, x)
#define ETBL_FROM_3(m, t, x) m(t, x##3) ETBL_FROM_4(m, t, x)
/* ... and from digit 0 to d */
#define ETBL_UPTO_0(m, t, x) m(t, x##0)
#define ETBL_UPTO_1(m, t, x) ETBL_UPTO_0(m, t, x) m(t, x##1)
#define ETBL_UPTO_2(m, t, x) ETBL_UPTO_1(m, t, x) m(t, x##2)
#define ETBL_UPTO_3(m, t, x) ETBL_UPTO_2(m, t, x) m(t, x##3)
#define ETBL_UPTO_4(m, t, x) ETBL_UPTO_3(m, t, x) m(t, x##4)
#define ETBL_UPTO_8(m, t, x)						\
	ETBL_UPTO_4(m, t, x) m(t, x##5) m(t, x##6) m(t, x##7) m(t, x##8)
/* a stub slot as a table entry, comma included */
#define ETBL_SLOT_ENTRY(t, n) ETBL_SLOT(t, n),

ETBL_EACH_1_9(ETBL_STUB, F8CFF951)
ETBL_EACH_1_19(ETBL_STUB, CUDART_INTERFACE)
ETBL_EACH_1_9(ETBL_STUB, TOOLS_RUNTIME_CALLBACK_HOOKS)
ETBL_EACH_1_9(ETBL_STUB, TOOLS_TLS)
ETBL_EACH_1_9(ETBL_STUB, CONTEXT_LOCAL_STORAGE)
ETBL_EACH_1_19(ETBL_STUB, CONTEXT_CHECKS)
ETBL_EACH_1_9(ETBL_STUB, INTEGRITY_CHECK)
ETBL_EACH_1_89(ETBL_STUB, 21318C60)
ETBL_EACH_X0_X9(ETBL_STUB, 21318C60, 9)
ETBL_EACH_1_89(ETBL_REFUSE, TOOLS_MODULE)
ETBL_UPTO_8(ETBL_REFUSE, TOOLS_MODULE, 9)
ETBL_EACH_1_19(ETBL_REFUSE, 69A28E9F)
ETBL_EACH_X0_X9(ETBL_REFUSE, 69A28E9F, 2)
ETBL_UPTO_3(ETBL_REFUSE, 69A28E9F, 3)

/* ---- CUDART_INTERFACE --------------------------------------------------- */

/*
 * Slot 2: the primary context of dev, which must be the very handle that
 * cuDevicePrimaryCtxRetain returns later.
 */
static CUresult cudart_primary_ctx(CUcontext *pctx, CUdevice dev)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ops || !ops->primary_ctx)
		return CUDA_ERROR_NOT_INITIALIZED;
	return ops->primary_ctx(dev, pctx);
}

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS --------------------------------------- */

/*
 * Slots 2 and 6 hand cudart two buffers it keeps callback state in.  Their
 * layout is unknown; zeroed ones of these sizes (counted in u32) work.
 */
#define HOOKS_BUF1_WORDS 1024
#define HOOKS_BUF2_WORDS 14
static uint32_t hooks_buf1[HOOKS_BUF1_WORDS];
static uint32_t hooks_buf2[HOOKS_BUF2_WORDS];

static void hooks_get_buf1(void **ptr, size_t *size)
{
	if (ptr)
		*ptr = hooks_buf1;
	if (size)
		*size = HOOKS_BUF1_WORDS;
}

static void hooks_get_buf2(void **ptr, size_t *size)
{
	if (ptr)
		*ptr = hooks_buf2;
	if (size)
		*size = HOOKS_BUF2_WORDS;
}

/* ---- TOOLS_TLS ----------------------------------------------------------- */

/* Slot 1: the equivalent of cuCtxSetCurrent */
static CUresult tls_set_current(CUcontext ctx)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();

	if (!ops || !ops->set_current)
		return CUDA_ERROR_NOT_INITIALIZED;
	return ops->set_current(ctx);
}

/*
 * Slot 2: the equivalent of cuCtxGetCurrent, which always writes: NULL on
 * a thread with no context.  cuBLASLt hands what it reads to 21318c60
 * slot 4 without looking.
 */
static CUresult tls_get_current(CUcontext *pctx)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = ops && ops->current_ctx ? ops->current_ctx() : NULL;
	return CUDA_SUCCESS;
}

/* ---- 21318c60: tools' view of contexts ---------------------------------- */

/* Slot 3: the ordinal of ctx's device */
static CUresult tools_ctx_device(CUcontext ctx, uint32_t *index)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();
	CUdevice dev = 0;
	CUresult rc;

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!index)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ops || !ops->ctx_device)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = ops->ctx_device(&dev, ctx);
	if (rc == CUDA_SUCCESS)
		*index = (uint32_t)dev;
	return rc;
}

/*
 * Slot 4: cuCtxGetId of ctx; unlike cuCtxGetId, NULL is no context (id 0)
 * rather than the current one, and a NULL out-pointer is 999.
 */
static CUresult tools_ctx_id(CUcontext ctx, uint64_t *id)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();
	unsigned long long v = 0;
	CUresult rc;

	if (!id)
		return CUDA_ERROR_UNKNOWN;
	if (!ctx) {
		*id = 0;
		return CUDA_SUCCESS;
	}
	if (!ops || !ops->ctx_id)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = ops->ctx_id(ctx, &v);
	if (rc == CUDA_SUCCESS)
		*id = v;
	return rc;
}

/* ---- 6e163fbe: tools' view of modules ----------------------------------- */

typedef void (*tools_fn_cb)(void *user, CUfunction f, const char *name);

struct tools_visit {
	tools_fn_cb cb;
	void *user;
	int n;
};

static void tools_visit_fn(void *arg, CUfunction f, const char *name)
{
	struct tools_visit *v = arg;

	v->cb(v->user, f, name);
	v->n++;
}

/*
 * Slot 7: cb(user, f, name) once per function of mod, in the order of
 * cuModuleEnumerateFunctions, f being the handle cuModuleGetFunction
 * gives; returns how many (cuFFT finds its kernels so).  ctx (NULL: the
 * current one) is the module's; the guest knows it already.
 */
static int tools_module_functions(CUcontext ctx, CUmodule mod, tools_fn_cb cb,
				  void *user)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();
	struct tools_visit v = { cb, user, 0 };
	CUresult rc;

	(void)ctx;
	if (!mod || !cb || !ops || !ops->module_each)
		return 0;
	rc = ops->module_each(mod, tools_visit_fn, &v, NULL);
	if (rc)
		xgpulib_dbg("export table 6e163fbe slot 7: module functions: "
			    "error %d after %d", rc, v.n);
	return v.n;
}

/* Slot 33: how many parameters f takes */
static CUresult tools_fn_param_count(CUfunction f, size_t *count)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();

	if (!ops || !ops->func_param_count)
		return CUDA_ERROR_NOT_INITIALIZED;
	return ops->func_param_count(f, count);
}

/* ---- CONTEXT_CHECKS ----------------------------------------------------- */

/* Slot 2: cudart asks about a context before using it; 0 means fine. */
static CUresult ctx_checks_2(CUcontext ctx, uint32_t *result, void **extra)
{
	(void)ctx;
	(void)extra;
	if (result)
		*result = 0;
	return CUDA_SUCCESS;
}

/* Slot 3: called once at start, with no arguments it would read */
static CUresult ctx_checks_3(void)
{
	return CUDA_SUCCESS;
}

/* ---- INTEGRITY_CHECK ---------------------------------------------------- */

/*
 * cudart has the driver prove it is the real one, three times at start
 * (versions 13000, 13001, 13002), and compares with what it computes
 * itself.  Algorithm and constants: research/cuda-interception.md.
 */
static const uint8_t integrity_key[XGPULIB_MD2_BLOCK_BYTES] = {
	0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
	0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
};

static const uint64_t integrity_v0[2] = {
	0x3341181c03cb675cULL, 0x8ed383aa1f4cd1e8ULL,
};

static const uint64_t integrity_v1[2] = {
	0x1841181c03cb675cULL, 0x8ed383aa1f4cd1e8ULL,
};

struct integrity_msg {
	uint32_t driver_version;
	uint32_t version;
	uint32_t pid;
	uint32_t tid;
	const void *cudart_tbl;
	const void *integrity_tbl;
	const void *slot1_fn;
	uint64_t secs;
};

_Static_assert(sizeof(struct integrity_msg) == 48,
	       "the integrity check hashes a 48-byte struct");
_Static_assert(sizeof(struct xgpulib_integrity_dev) == 28,
	       "the integrity check hashes 28 bytes per device");

void xgpulib_integrity_hash(uint32_t driver_version, uint32_t version,
			    uint32_t pid, uint32_t tid, const void *cudart_tbl,
			    const void *integrity_tbl, const void *slot1_fn,
			    uint64_t secs, int ndev,
			    const struct xgpulib_integrity_dev *devs,
			    uint64_t out[2])
{
	/* no padding (48 bytes, asserted above): all of it is these */
	const struct integrity_msg m = {
		driver_version, version, pid, tid,
		cudart_tbl, integrity_tbl, slot1_fn, secs,
	};
	struct xgpulib_hmac_md2 h;
	uint8_t digest[XGPULIB_MD2_DIGEST_BYTES];

	xgpulib_hmac_md2_init(&h, integrity_key, sizeof(integrity_key));
	xgpulib_hmac_md2_update(&h, &m, sizeof(m));
	if (ndev > 0 && devs)
		xgpulib_hmac_md2_update(&h, devs, (size_t)ndev * sizeof(*devs));
	xgpulib_hmac_md2_final(&h, digest);
	memcpy(out, digest, sizeof(digest));
}

static const void *const cudart_tbl[13];
static const void *const integrity_tbl[3];

/* Slot 1 */
static CUresult integrity_check(uint32_t version, uint64_t secs,
				uint64_t result[2])
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();
	struct xgpulib_integrity_dev *devs = NULL;
	uint32_t drv = CUDA_VERSION;
	int ndev, i;

	if (!result)
		return CUDA_ERROR_INVALID_VALUE;
	switch (version % 10) {
	case 0:
		memcpy(result, integrity_v0, sizeof(integrity_v0));
		return CUDA_SUCCESS;
	case 1:
		memcpy(result, integrity_v1, sizeof(integrity_v1));
		return CUDA_SUCCESS;
	}

	if (!ops || !ops->device_count || !ops->device_identity)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ops->driver_version)
		drv = (uint32_t)ops->driver_version();
	ndev = ops->device_count();
	if (ndev < 0)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ndev) {
		devs = calloc((size_t)ndev, sizeof(*devs));
		if (!devs)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (i = 0; i < ndev; i++) {
		int dom, bus, dev;

		if (ops->device_identity(i, &devs[i].uuid, &dom, &bus, &dev)) {
			free(devs);
			return CUDA_ERROR_INVALID_DEVICE;
		}
		devs[i].pci_domain = dom;
		devs[i].pci_bus = bus;
		devs[i].pci_device = dev;
	}
	xgpulib_integrity_hash(drv, version, (uint32_t)getpid(),
			       (uint32_t)pthread_self(), cudart_tbl,
			       integrity_tbl, integrity_tbl[1], secs, ndev,
			       devs, result);
	free(devs);
	return CUDA_SUCCESS;
}

/* ---- the tables --------------------------------------------------------- */

static const void *const f8cff951_tbl[3] = {
	ETBL_SIZE(3),
	ETBL_SLOT(F8CFF951, 1), ETBL_SLOT(F8CFF951, 2),
};

static const void *const cudart_tbl[13] = {
	ETBL_SIZE(13),
	ETBL_SLOT(CUDART_INTERFACE, 1),
	ETBL_FN(cudart_primary_ctx),
	ETBL_FROM_3(ETBL_SLOT_ENTRY, CUDART_INTERFACE, )
	ETBL_UPTO_2(ETBL_SLOT_ENTRY, CUDART_INTERFACE, 1)
};

static const void *const hooks_tbl[7] = {
	ETBL_SIZE(7),
	ETBL_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 1),
	ETBL_FN(hooks_get_buf1),
	ETBL_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 3),
	ETBL_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 4),
	ETBL_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 5),
	ETBL_FN(hooks_get_buf2),
};

/* cuBLASLt reads the current context through slot 2 around its first
 * GEMM */
static const void *const tools_tls_tbl[3] = {
	ETBL_SIZE(3),
	ETBL_FN(tls_set_current), ETBL_FN(tls_get_current),
};

/* no size slot: the real driver's slot 0 is put as well */
static const void *const cls_tbl[4] = {
	ETBL_FN(xgpulib_cls_put), ETBL_FN(xgpulib_cls_delete),
	ETBL_FN(xgpulib_cls_get),
	ETBL_SLOT(CONTEXT_LOCAL_STORAGE, 3),
};

static const void *const ctx_checks_tbl[15] = {
	ETBL_SIZE(15),
	ETBL_SLOT(CONTEXT_CHECKS, 1),
	ETBL_FN(ctx_checks_2),
	ETBL_FN(ctx_checks_3),
	ETBL_FROM_4(ETBL_SLOT_ENTRY, CONTEXT_CHECKS, )
	ETBL_UPTO_4(ETBL_SLOT_ENTRY, CONTEXT_CHECKS, 1)
};

static const void *const integrity_tbl[3] = {
	ETBL_SIZE(3),
	ETBL_FN(integrity_check),
	ETBL_SLOT(INTEGRITY_CHECK, 2),
};

/*
 * cuBLASLt calls slot 4 twice around loading its first raw-ELF kernel,
 * cuFFT once per plan; the other slots have not been seen called.
 */
static const void *const t21318c60_tbl[93] = {
	ETBL_SIZE(93),
	ETBL_SLOT(21318C60, 1), ETBL_SLOT(21318C60, 2),
	ETBL_FN(tools_ctx_device), ETBL_FN(tools_ctx_id),
	ETBL_FROM_5(ETBL_SLOT_ENTRY, 21318C60, )
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 1)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 2)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 3)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 4)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 5)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 6)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 7)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 8)
	ETBL_UPTO_2(ETBL_SLOT_ENTRY, 21318C60, 9)
};

/*
 * ToolsModule: cuFFT enumerates each module's functions through slot 7;
 * slot 33 counts a function's parameters; the others are refused.
 */
static const void *const tools_module_tbl[99] = {
	ETBL_SIZE(99),
	ETBL_SLOT(TOOLS_MODULE, 1), ETBL_SLOT(TOOLS_MODULE, 2),
	ETBL_SLOT(TOOLS_MODULE, 3), ETBL_SLOT(TOOLS_MODULE, 4),
	ETBL_SLOT(TOOLS_MODULE, 5), ETBL_SLOT(TOOLS_MODULE, 6),
	ETBL_FN(tools_module_functions),
	ETBL_FROM_8(ETBL_SLOT_ENTRY, TOOLS_MODULE, )
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 1)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 2)
	ETBL_UPTO_2(ETBL_SLOT_ENTRY, TOOLS_MODULE, 3)
	ETBL_FN(tools_fn_param_count),
	ETBL_FROM_4(ETBL_SLOT_ENTRY, TOOLS_MODULE, 3)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 4)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 5)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 6)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 7)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 8)
	ETBL_UPTO_8(ETBL_SLOT_ENTRY, TOOLS_MODULE, 9)
};

/*
 * NVML's own table (libnvidia-ml calls it from nvmlInit): its slots are
 * not known; refused, as with a driver that lacks them, NVML still
 * answers device counts and PyTorch runs.
 */
static const void *const nvml_tbl[34] = {
	ETBL_SIZE(34),
	ETBL_EACH_1_19(ETBL_SLOT_ENTRY, 69A28E9F)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 69A28E9F, 2)
	ETBL_UPTO_3(ETBL_SLOT_ENTRY, 69A28E9F, 3)
};

_Static_assert(sizeof(tools_module_tbl) == 99 * sizeof(void *),
	       "table 6e163fbe has 99 slots");
_Static_assert(sizeof(nvml_tbl) == 34 * sizeof(void *),
	       "table 69a28e9f has 34 slots");
_Static_assert(sizeof(t21318c60_tbl) == 93 * sizeof(void *),
	       "table 21318c60 has 93 slots");

/* ---- tables of the host driver this library does not know -------------- */

/*
 * The real driver has more tables than the ones above.  Asked for one of
 * them, the library hands out a table of the size the host driver's has,
 * every slot refused: a library that only checks a table is there goes
 * on, one that calls a slot gets an error, not a jump to nowhere.  Each
 * id's table is made once and kept (callers keep the pointer).
 */
#define DYN_SLOTS_NO_SIZE 64	/* a table whose size slot is not one */

struct dyn_etbl {
	uint8_t id[16];
	const void **tbl;
	struct dyn_etbl *next;
};

static pthread_mutex_t dyn_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dyn_etbl *dyn_list;

static CUresult dyn_slot(void)
{
	if (xgpulib_debug_on())
		fprintf(stderr, "xgpu: a slot of a host driver's export "
			"table this library does not know was called, refused "
			"(CUDA_ERROR_NOT_SUPPORTED)\n");
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* the table for id, made from the host driver's size; 0 or its error */
static CUresult dyn_table(const CUuuid *id, const void **out)
{
	const struct xgpulib_identity_ops *ops = xgpulib_etbl_ops();
	struct dyn_etbl *d;
	uint64_t bytes = 0;
	size_t n, i;
	CUresult rc = CUDA_SUCCESS;

	if (!ops || !ops->table_size)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&dyn_mu);
	for (d = dyn_list; d; d = d->next)
		if (!memcmp(d->id, id->bytes, 16))
			break;
	if (!d) {
		rc = ops->table_size(id, &bytes);
		n = bytes ? bytes / sizeof(void *) : DYN_SLOTS_NO_SIZE;
		d = rc ? NULL : calloc(1, sizeof(*d));
		if (d)
			d->tbl = calloc(n ? n : 1, sizeof(void *));
		if (!rc && (!d || !d->tbl)) {
			free(d);
			d = NULL;
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
		if (d) {
			for (i = 0; i < n; i++)
				d->tbl[i] = ETBL_FN(dyn_slot);
			if (bytes)
				d->tbl[0] = (const void *)(uintptr_t)bytes;
			memcpy(d->id, id->bytes, 16);
			d->next = dyn_list;
			dyn_list = d;
		}
	}
	pthread_mutex_unlock(&dyn_mu);
	if (d)
		*out = d->tbl;
	return rc;
}

/* ---- cuGetExportTable --------------------------------------------------- */

struct etbl {
	const char *id;		/* as uuid_text writes it */
	const void *const *tbl;
};

static const struct etbl etbls[] = {
	{ "f8cff951-2146-8b4e-b9e2-fb469e7c0dd9", f8cff951_tbl },
	{ "6bd5fb6c-5bf4-e74a-8987-d93912fd9df9", cudart_tbl },
	{ "a094798c-2e74-2e74-93f2-0800200c0a66", hooks_tbl },
	{ "42d85a81-23f6-cb47-8298-f6e78a3aecdc", tools_tls_tbl },
	{ "c693336e-1121-df11-a8c3-68f355d89593", cls_tbl },
	{ "263e8860-7cd2-6143-92f6-bbd5006dfa7e", ctx_checks_tbl },
	{ "d4082055-bde6-704b-8d34-ba123c66e1f2", integrity_tbl },
	{ "21318c60-9714-3248-8ca6-41ff7324c8f2", t21318c60_tbl },
	{ "6e163fbe-b958-444d-835c-e182aff1991e", tools_module_tbl },
	{ "69a28e9f-2449-8b47-b030-c5da330ea4e9", nvml_tbl },
};

/* a table's id, its bytes in memory order, as the traces write it */
static void uuid_text(const CUuuid *id, char out[37])
{
	const uint8_t *b = (const uint8_t *)id->bytes;

	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

/* a table of the host driver's that this library does not know: what
 * it was given (rc 0: a table of refusing slots) */
static void etbl_log_unknown(const char *id, CUresult rc)
{
	if (!xgpulib_debug_on())
		return;
	fprintf(stderr, "xgpu: cuGetExportTable: unknown table {%s}: %s\n",
		id,
		rc == CUDA_SUCCESS ? "the host driver has it, its slots refused" :
		rc == CUDA_ERROR_NOT_INITIALIZED ? "not found (before cuInit)" :
		"not found");
}

/*
 * Answers before cuInit too: cudart fetches the first table before it
 * calls cuInit.
 */
XGPULIB_EXPORT CUresult cuGetExportTable(const void **ppExportTable,
					 const CUuuid *pExportTableId)
{
	char id[37];
	CUresult rc;
	size_t i;

	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	uuid_text(pExportTableId, id);
	for (i = 0; i < sizeof(etbls) / sizeof(etbls[0]); i++) {
		if (!strcmp(etbls[i].id, id)) {
			*ppExportTable = etbls[i].tbl;
			return CUDA_SUCCESS;
		}
	}
	*ppExportTable = NULL;
	rc = dyn_table(pExportTableId, ppExportTable);
	etbl_log_unknown(id, rc);
	/* before cuInit nobody can say: as a driver without it */
	return rc == CUDA_ERROR_NOT_INITIALIZED ? CUDA_ERROR_NOT_FOUND : rc;
}
