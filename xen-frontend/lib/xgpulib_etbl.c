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
 * Locking: cls_mu protects the context-local-storage array (cls_v, cls_n,
 * cls_cap).  Destructors run without it.  etbl_ops is written once by
 * xgpulib_etbl_init and read with atomic loads.
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
#include "xgpulib_vec.h"


XGPULIB_EXPORT CUresult cuGetExportTable(const void **ppExportTable,
					 const CUuuid *pExportTableId);

static const struct xgpulib_identity_ops *etbl_ops;

void xgpulib_etbl_init(const struct xgpulib_identity_ops *ops)
{
	__atomic_store_n(&etbl_ops, ops, __ATOMIC_RELEASE);
}

static const struct xgpulib_identity_ops *etbl_get_ops(void)
{
	return __atomic_load_n(&etbl_ops, __ATOMIC_ACQUIRE);
}

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
ETBL_REFUSE(TOOLS_MODULE, 90) ETBL_REFUSE(TOOLS_MODULE, 91)
ETBL_REFUSE(TOOLS_MODULE, 92) ETBL_REFUSE(TOOLS_MODULE, 93)
ETBL_REFUSE(TOOLS_MODULE, 94) ETBL_REFUSE(TOOLS_MODULE, 95)
ETBL_REFUSE(TOOLS_MODULE, 96) ETBL_REFUSE(TOOLS_MODULE, 97)
ETBL_REFUSE(TOOLS_MODULE, 98)
ETBL_EACH_1_19(ETBL_REFUSE, 69A28E9F)
ETBL_EACH_X0_X9(ETBL_REFUSE, 69A28E9F, 2)
ETBL_REFUSE(69A28E9F, 30) ETBL_REFUSE(69A28E9F, 31)
ETBL_REFUSE(69A28E9F, 32) ETBL_REFUSE(69A28E9F, 33)

/* ---- CUDART_INTERFACE --------------------------------------------------- */

/*
 * Slot 2: the primary context of dev, which must be the very handle that
 * cuDevicePrimaryCtxRetain returns later.
 */
static CUresult cudart_primary_ctx(CUcontext *pctx, CUdevice dev)
{
	const struct xgpulib_identity_ops *ops = etbl_get_ops();

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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();

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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = ops && ops->current_ctx ? ops->current_ctx() : NULL;
	return CUDA_SUCCESS;
}

/* ---- 21318c60: tools' view of contexts ---------------------------------- */

/* Slot 3: the ordinal of ctx's device */
static CUresult tools_ctx_device(CUcontext ctx, uint32_t *index)
{
	const struct xgpulib_identity_ops *ops = etbl_get_ops();
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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();
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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();
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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();

	if (!ops || !ops->func_param_count)
		return CUDA_ERROR_NOT_INITIALIZED;
	return ops->func_param_count(f, count);
}

/* ---- CONTEXT_LOCAL_STORAGE ---------------------------------------------- */

/*
 * cudart keeps its per-context state here, keyed by a pointer of its own,
 * and reads it back on nearly every runtime call.  The destructor runs when
 * the context goes away (xgpulib_cls_release_ctx), not on delete: whoever
 * deletes a key owns its value.
 */
typedef void (*cls_dtor_fn)(CUcontext ctx, void *key, void *value);

struct cls_entry {
	CUcontext ctx;
	void *key;
	void *value;
	cls_dtor_fn dtor;
};

static pthread_mutex_t cls_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cls_entry *cls_v;	/* in insertion order */
static size_t cls_n, cls_cap;

/* cls_mu held */
static struct cls_entry *cls_find(CUcontext ctx, void *key)
{
	size_t i;

	for (i = 0; i < cls_n; i++)
		if (cls_v[i].ctx == ctx && cls_v[i].key == key)
			return &cls_v[i];
	return NULL;
}

/*
 * Resolve *ctx (NULL: the calling thread's current context), then take
 * cls_mu and find key's entry there (*e, NULL if none).  cls_mu is held
 * on success only.
 */
static CUresult cls_lock_find(CUcontext *ctx, void *key, struct cls_entry **e)
{
	const struct xgpulib_identity_ops *ops;

	if (!*ctx) {
		ops = etbl_get_ops();
		if (ops && ops->current_ctx)
			*ctx = ops->current_ctx();
	}
	if (!*ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&cls_mu);
	*e = cls_find(*ctx, key);
	return CUDA_SUCCESS;
}

/* cls_mu held */
static void cls_remove(struct cls_entry *e)
{
	size_t i = (size_t)(e - cls_v);

	memmove(e, e + 1, (cls_n - i - 1) * sizeof(*e));
	cls_n--;
}

/* Slot 0: set (or replace) the value and destructor of key in ctx */
static CUresult cls_put(CUcontext ctx, void *key, void *value,
			cls_dtor_fn dtor)
{
	struct cls_entry *e;
	CUresult rc = cls_lock_find(&ctx, key, &e);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!e) {
		e = xgpulib_vec_grow(cls_v, cls_n, &cls_cap, sizeof(*e), 16);
		if (!e) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		cls_v = e;
		e = &cls_v[cls_n++];
		e->ctx = ctx;
		e->key = key;
	}
	e->value = value;
	e->dtor = dtor;
out:
	pthread_mutex_unlock(&cls_mu);
	return rc;
}

/* Slot 1: forget key in ctx; a key that is not there is already gone */
static CUresult cls_delete(CUcontext ctx, void *key)
{
	struct cls_entry *e;
	CUresult rc = cls_lock_find(&ctx, key, &e);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (e)
		cls_remove(e);
	pthread_mutex_unlock(&cls_mu);
	return CUDA_SUCCESS;
}

/*
 * Slot 2: the value of key in ctx.  cudart probes with it before it has a
 * context (expects CUDA_ERROR_INVALID_CONTEXT) and before it has stored
 * anything (expects CUDA_ERROR_INVALID_HANDLE), as the real driver answers.
 */
static CUresult cls_get(void **value, CUcontext ctx, void *key)
{
	struct cls_entry *e;
	CUresult rc;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cls_lock_find(&ctx, key, &e);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (e)
		*value = e->value;
	else
		rc = CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&cls_mu);
	return rc;
}

/*
 * Newest first, one at a time and unlocked around each destructor, which
 * may well call back into the runtime (and into this storage).
 */
void xgpulib_cls_release_ctx(CUcontext ctx)
{
	struct cls_entry e;
	size_t i;
	int found;

	if (!ctx)
		return;
	for (;;) {
		found = 0;
		pthread_mutex_lock(&cls_mu);
		for (i = cls_n; i-- > 0;) {
			if (cls_v[i].ctx == ctx) {
				e = cls_v[i];
				cls_remove(&cls_v[i]);
				found = 1;
				break;
			}
		}
		pthread_mutex_unlock(&cls_mu);
		if (!found)
			break;
		if (e.dtor)
			e.dtor(ctx, e.key, e.value);
	}
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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();
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
	ETBL_SLOT(CUDART_INTERFACE, 3), ETBL_SLOT(CUDART_INTERFACE, 4),
	ETBL_SLOT(CUDART_INTERFACE, 5), ETBL_SLOT(CUDART_INTERFACE, 6),
	ETBL_SLOT(CUDART_INTERFACE, 7), ETBL_SLOT(CUDART_INTERFACE, 8),
	ETBL_SLOT(CUDART_INTERFACE, 9), ETBL_SLOT(CUDART_INTERFACE, 10),
	ETBL_SLOT(CUDART_INTERFACE, 11), ETBL_SLOT(CUDART_INTERFACE, 12),
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
	ETBL_FN(cls_put), ETBL_FN(cls_delete), ETBL_FN(cls_get),
	ETBL_SLOT(CONTEXT_LOCAL_STORAGE, 3),
};

static const void *const ctx_checks_tbl[15] = {
	ETBL_SIZE(15),
	ETBL_SLOT(CONTEXT_CHECKS, 1),
	ETBL_FN(ctx_checks_2),
	ETBL_FN(ctx_checks_3),
	ETBL_SLOT(CONTEXT_CHECKS, 4), ETBL_SLOT(CONTEXT_CHECKS, 5),
	ETBL_SLOT(CONTEXT_CHECKS, 6), ETBL_SLOT(CONTEXT_CHECKS, 7),
	ETBL_SLOT(CONTEXT_CHECKS, 8), ETBL_SLOT(CONTEXT_CHECKS, 9),
	ETBL_SLOT(CONTEXT_CHECKS, 10), ETBL_SLOT(CONTEXT_CHECKS, 11),
	ETBL_SLOT(CONTEXT_CHECKS, 12), ETBL_SLOT(CONTEXT_CHECKS, 13),
	ETBL_SLOT(CONTEXT_CHECKS, 14),
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
	ETBL_SLOT(21318C60, 5), ETBL_SLOT(21318C60, 6),
	ETBL_SLOT(21318C60, 7), ETBL_SLOT(21318C60, 8),
	ETBL_SLOT(21318C60, 9),
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 1)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 2)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 3)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 4)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 5)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 6)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 7)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, 21318C60, 8)
	ETBL_SLOT(21318C60, 90), ETBL_SLOT(21318C60, 91),
	ETBL_SLOT(21318C60, 92),
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
	ETBL_SLOT(TOOLS_MODULE, 8), ETBL_SLOT(TOOLS_MODULE, 9),
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 1)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 2)
	ETBL_SLOT(TOOLS_MODULE, 30), ETBL_SLOT(TOOLS_MODULE, 31),
	ETBL_SLOT(TOOLS_MODULE, 32), ETBL_FN(tools_fn_param_count),
	ETBL_SLOT(TOOLS_MODULE, 34), ETBL_SLOT(TOOLS_MODULE, 35),
	ETBL_SLOT(TOOLS_MODULE, 36), ETBL_SLOT(TOOLS_MODULE, 37),
	ETBL_SLOT(TOOLS_MODULE, 38), ETBL_SLOT(TOOLS_MODULE, 39),
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 4)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 5)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 6)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 7)
	ETBL_EACH_X0_X9(ETBL_SLOT_ENTRY, TOOLS_MODULE, 8)
	ETBL_SLOT(TOOLS_MODULE, 90), ETBL_SLOT(TOOLS_MODULE, 91),
	ETBL_SLOT(TOOLS_MODULE, 92), ETBL_SLOT(TOOLS_MODULE, 93),
	ETBL_SLOT(TOOLS_MODULE, 94), ETBL_SLOT(TOOLS_MODULE, 95),
	ETBL_SLOT(TOOLS_MODULE, 96), ETBL_SLOT(TOOLS_MODULE, 97),
	ETBL_SLOT(TOOLS_MODULE, 98),
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
	ETBL_SLOT(69A28E9F, 30), ETBL_SLOT(69A28E9F, 31),
	ETBL_SLOT(69A28E9F, 32), ETBL_SLOT(69A28E9F, 33),
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
	const struct xgpulib_identity_ops *ops = etbl_get_ops();
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
	uint8_t id[16];		/* CUuuid bytes in memory order */
	const void *const *tbl;
};

static const struct etbl etbls[] = {
	{ { 0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e,
	    0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9 }, f8cff951_tbl },
	{ { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
	    0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 }, cudart_tbl },
	{ { 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
	    0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 }, hooks_tbl },
	{ { 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
	    0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc }, tools_tls_tbl },
	{ { 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
	    0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 }, cls_tbl },
	{ { 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
	    0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e }, ctx_checks_tbl },
	{ { 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
	    0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 }, integrity_tbl },
	{ { 0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
	    0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2 }, t21318c60_tbl },
	{ { 0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
	    0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e }, tools_module_tbl },
	{ { 0x69, 0xa2, 0x8e, 0x9f, 0x24, 0x49, 0x8b, 0x47,
	    0xb0, 0x30, 0xc5, 0xda, 0x33, 0x0e, 0xa4, 0xe9 }, nvml_tbl },
};

/* a table of the host driver's that this library does not know: what
 * it was given (rc 0: a table of refusing slots) */
static void etbl_log_unknown(const CUuuid *id, CUresult rc)
{
	const uint8_t *b = (const uint8_t *)id->bytes;

	if (!xgpulib_debug_on())
		return;
	fprintf(stderr, "xgpu: cuGetExportTable: unknown table "
		"{%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x}: %s\n",
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		b[10], b[11], b[12], b[13], b[14], b[15],
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
	CUresult rc;
	size_t i;

	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(etbls) / sizeof(etbls[0]); i++) {
		if (!memcmp(etbls[i].id, pExportTableId->bytes, 16)) {
			*ppExportTable = etbls[i].tbl;
			return CUDA_SUCCESS;
		}
	}
	*ppExportTable = NULL;
	rc = dyn_table(pExportTableId, ppExportTable);
	etbl_log_unknown(pExportTableId, rc);
	/* before cuInit nobody can say: as a driver without it */
	return rc == CUDA_ERROR_NOT_INITIALIZED ? CUDA_ERROR_NOT_FOUND : rc;
}
