// SPDX-License-Identifier: MIT
/*
 * xgpulib_shadow.c: registered host memory over the network, kept equal
 * to device memory by comparison with a copy (xgpulib_shadow.h).
 *
 * Locking: sh_mu guards the table and each range's copy; it is held across
 * the range's own requests (copies, a synchronize of its stream), which
 * take the channel's locks, never the other way round.  A thread doing a
 * range's work is "inside": its own requests skip the hooks.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_current.h"
#include "xgpulib_entry.h"
#include "xgpulib_shadow.h"
#include "xgpulib_vec.h"

#define BLOCK	(64u << 10)	/* compared and sent in runs of these */
#define WORD	4096u		/* merged back in these */

struct shadow {
	uint8_t *host;		/* the registered bytes */
	uint8_t *copy;		/* what the device memory holds, last known */
	uint8_t *back;		/* the device memory's bytes, brought back */
	size_t size;
	CUdeviceptr dptr;	/* the device memory of host[0] */
	CUdeviceptr base;	/* a reservation of span bytes at base, */
	size_t span;		/* mapped to mem (0: dptr is cuMemAlloc's) */
	CUmemGenericAllocationHandle mem;
	uint32_t region;	/* != 0: pinned memory of the worker's */
	CUcontext ctx;
	CUstream st;
};

static pthread_mutex_t sh_mu = PTHREAD_MUTEX_INITIALIZER;
static struct shadow *sh;
static size_t nsh, cap_sh;
unsigned int xgpulib_shadow_live;
/* requests sent, and how many had been when the device memory came back */
static unsigned long sent, pulled;
static __thread bool inside;

/* ---- device memory --------------------------------------------------- */

/*
 * The range in memory of the worker's own at host's own address (its
 * whole pages), pinned and mapped: the device pointer is then the host
 * pointer and a kernel reaches it over the bus, as natively; where
 * the worker has something else at that address, or is older, false.
 */
static bool host_at_host(struct shadow *s)
{
	uintptr_t lo = (uintptr_t)s->host & ~(uintptr_t)(XGPUIF_PAGE_SIZE - 1);
	uintptr_t hi = ((uintptr_t)s->host + s->size + XGPUIF_PAGE_SIZE - 1) &
		       ~(uintptr_t)(XGPUIF_PAGE_SIZE - 1);
	struct xgpuif_hostmem_args a = {
		.flags = CU_MEMHOSTREGISTER_PORTABLE |
			 CU_MEMHOSTREGISTER_DEVICEMAP,
		.size = hi - lo, .guest_va = lo,
		.dir = { .region = XGPUIF_REGION_ANON },
	};
	struct xgpuif_hostmem_reply r = { 0 };
	uint32_t id = xgpulib_region_reserve();
	CUresult rc;

	if (!id)
		return false;
	a.region = id;
	rc = xgpulib_call_HOST_REGISTER(&a, &r);
	if (rc == CUDA_SUCCESS && (!r.same_va || r.dptr != lo)) {
		struct xgpuif_region_args u = { id, 0 };

		xgpulib_call_HOSTMEM_UNREGISTER(&u);
		rc = CUDA_ERROR_NOT_SUPPORTED;
	}
	if (rc) {
		xgpulib_region_release(id);
		return false;
	}
	s->region = id;
	s->dptr = (uint64_t)(uintptr_t)s->host;
	return true;
}

/* the range's device memory at host's own address, if the worker's
 * driver can reserve it (granularity-aligned span around it) */
static bool dev_at_host(struct shadow *s, CUdevice dev)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemAccessDesc acc = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUdeviceptr want, end, got = 0;
	size_t gran = 0;

	if (cuMemGetAllocationGranularity(&gran, &prop,
					  CU_MEM_ALLOC_GRANULARITY_MINIMUM) ||
	    !gran || (gran & (gran - 1)))
		return false;
	want = (uint64_t)(uintptr_t)s->host & ~(uint64_t)(gran - 1);
	end = ((uint64_t)(uintptr_t)s->host + s->size + gran - 1) &
	      ~(uint64_t)(gran - 1);
	s->span = end - want;
	if (cuMemAddressReserve(&got, s->span, gran, want, 0))
		return false;
	if (got != want) {
		cuMemAddressFree(got, s->span);
		return false;
	}
	if (cuMemCreate(&s->mem, s->span, &prop, 0)) {
		cuMemAddressFree(got, s->span);
		return false;
	}
	if (cuMemMap(want, s->span, 0, s->mem, 0) ||
	    cuMemSetAccess(want, s->span, &acc, 1)) {
		cuMemUnmap(want, s->span);
		cuMemRelease(s->mem);
		cuMemAddressFree(want, s->span);
		return false;
	}
	s->base = want;
	s->dptr = (uint64_t)(uintptr_t)s->host;
	return true;
}

static void dev_free(struct shadow *s)
{
	struct xgpulib_current_saved saved;

	xgpulib_current_enter(s->ctx, &saved);
	if (s->region) {
		struct xgpuif_region_args u = { s->region, 0 };

		xgpulib_call_HOSTMEM_UNREGISTER(&u);
		xgpulib_region_release(s->region);
	} else if (s->base) {
		cuMemUnmap(s->base, s->span);
		cuMemRelease(s->mem);
		cuMemAddressFree(s->base, s->span);
	} else if (s->dptr) {
		cuMemFree(s->dptr);
	}
	if (s->st)
		cuStreamDestroy(s->st);
	xgpulib_current_leave(&saved);
	free(s->copy);
	free(s->back);
}

/* ---- moving bytes ------------------------------------------------------- */

/* the range's changes to the device memory (sh_mu held, inside) */
static void push(struct shadow *s)
{
	struct xgpulib_current_saved saved;
	bool any = false;

	for (size_t off = 0; off < s->size;) {
		size_t end = off, n;

		/* a run of blocks that differ */
		for (;;) {
			n = s->size - end < BLOCK ? s->size - end : BLOCK;
			if (!n || !memcmp(s->host + end, s->copy + end, n))
				break;
			memcpy(s->copy + end, s->host + end, n);
			end += n;
		}
		if (end == off) {
			off += n;
			continue;
		}
		if (!any)
			xgpulib_current_enter(s->ctx, &saved);
		any = true;
		xgpulib_memcpy_htod_async(s->dptr + off, s->copy + off,
					  end - off, s->st, 0);
		off = end;
	}
	if (any) {
		xgpulib_stream_sync(s->st, 0);
		xgpulib_current_leave(&saved);
	}
}

/* the device memory's bytes back into the range (sh_mu held, inside) */
static void pull(struct shadow *s)
{
	struct xgpulib_current_saved saved;
	CUresult rc;

	xgpulib_current_enter(s->ctx, &saved);
	rc = xgpulib_memcpy_dtoh_async(s->back, s->dptr, s->size, s->st, 0);
	if (!rc)
		rc = xgpulib_stream_sync(s->st, 0);
	xgpulib_current_leave(&saved);
	if (rc)
		return;		/* the context is gone: nothing changes */
	for (size_t off = 0; off < s->size; off += WORD) {
		size_t n = s->size - off < WORD ? s->size - off : WORD;
		uint8_t *h = s->host + off, *c = s->copy + off;
		const uint8_t *b = s->back + off;

		if (!memcmp(b, c, n))
			continue;	/* the GPU left these alone */
		/* a byte the program changed since the last push is its */
		for (size_t i = 0; i < n; i++) {
			if (h[i] == c[i])
				h[i] = b[i];
			c[i] = b[i];
		}
	}
}

/* ---- the table ------------------------------------------------------------ */

CUresult xgpulib_shadow_add(void *p, size_t size, uint64_t *dptr)
{
	struct shadow s = { .host = p, .size = size };
	struct shadow *v;
	CUdevice dev;
	CUresult rc;

	s.ctx = xgpulib_current();
	if (!s.ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	s.copy = malloc(size);
	s.back = malloc(size);
	if (!s.copy || !s.back) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	memcpy(s.copy, p, size);
	pthread_mutex_lock(&sh_mu);
	inside = true;
	rc = cuCtxGetDevice(&dev);
	if (!rc)
		rc = cuStreamCreate(&s.st, CU_STREAM_NON_BLOCKING);
	if (!rc && !host_at_host(&s) && !dev_at_host(&s, dev))
		rc = cuMemAlloc(&s.dptr, size);
	if (!rc)
		rc = xgpulib_memcpy_htod_async(s.dptr, s.copy, size, s.st, 0);
	if (!rc)
		rc = xgpulib_stream_sync(s.st, 0);
	v = rc ? NULL : xgpulib_vec_grow(sh, nsh, &cap_sh, sizeof(*v), 8);
	if (v) {
		sh = v;
		sh[nsh++] = s;
		__atomic_store_n(&xgpulib_shadow_live, (unsigned int)nsh,
				 __ATOMIC_RELEASE);
	}
	inside = false;
	pthread_mutex_unlock(&sh_mu);
	if (v) {
		xgpulib_dbg("registered memory at %p (%zu bytes): kept equal "
			    "to %s at %#llx", p, size,
			    s.region ? "pinned memory of the worker's" :
			    s.base ? "device memory" : "device memory (cuMemAlloc)",
			    (unsigned long long)s.dptr);
		*dptr = s.dptr;
		return CUDA_SUCCESS;
	}
	if (!rc)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
fail:
	if (s.ctx && (s.st || s.dptr || s.region)) {
		pthread_mutex_lock(&sh_mu);
		inside = true;
		dev_free(&s);
		inside = false;
		pthread_mutex_unlock(&sh_mu);
	} else {
		free(s.copy);
		free(s.back);
	}
	return rc;
}

bool xgpulib_shadow_dptr(const void *p, uint64_t *dptr)
{
	const uint8_t *b = p;
	bool hit = false;

	if (!__atomic_load_n(&xgpulib_shadow_live, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&sh_mu);
	for (size_t i = 0; i < nsh && !hit; i++) {
		if (b >= sh[i].host && b < sh[i].host + sh[i].size) {
			*dptr = sh[i].dptr + (uint64_t)(b - sh[i].host);
			hit = true;
		}
	}
	pthread_mutex_unlock(&sh_mu);
	return hit;
}

void xgpulib_shadow_del(void *p)
{
	struct shadow s;
	bool hit = false;

	pthread_mutex_lock(&sh_mu);
	inside = true;
	for (size_t i = 0; i < nsh && !hit; i++) {
		if (sh[i].host != p)
			continue;
		s = sh[i];
		sh[i] = sh[--nsh];
		hit = true;
	}
	__atomic_store_n(&xgpulib_shadow_live, (unsigned int)nsh,
			 __ATOMIC_RELEASE);
	if (hit) {
		/* as natively, the bytes keep what the GPU wrote */
		pull(&s);
		dev_free(&s);
	}
	inside = false;
	pthread_mutex_unlock(&sh_mu);
}

/* ---- the hooks ------------------------------------------------------------ */

static bool sync_op(uint16_t op, bool *query)
{
	switch (op) {
	case XGPUIF_OP_CTX_SYNCHRONIZE:
	case XGPUIF_OP_STREAM_SYNCHRONIZE:
	case XGPUIF_OP_EVENT_SYNCHRONIZE:
		*query = false;
		return true;
	case XGPUIF_OP_CTX_QUERY:
	case XGPUIF_OP_STREAM_QUERY:
	case XGPUIF_OP_EVENT_QUERY:
		*query = true;
		return true;
	default:
		return false;
	}
}

/*
 * Work that may read the ranges' device memory: the ranges' changes go
 * first.  Not the copies between host and device memory, which are
 * staged under xgpulib_data_mu, as a push's own copies are (a kernel
 * reads mapped memory; a copy to or from it uses the host pointer).
 */
static bool reads_device(uint16_t op)
{
	return op == XGPUIF_OP_LAUNCH || op == XGPUIF_OP_GRAPH_LAUNCH ||
	       op == XGPUIF_OP_MEMSET || op == XGPUIF_OP_MEMCPY_DTOD;
}

void xgpulib_shadow_before(uint16_t op)
{
	if (inside || !reads_device(op))
		return;
	pthread_mutex_lock(&sh_mu);
	inside = true;
	for (size_t i = 0; i < nsh; i++)
		push(&sh[i]);
	sent++;
	inside = false;
	pthread_mutex_unlock(&sh_mu);
}

static void bring_back(bool query)
{
	pthread_mutex_lock(&sh_mu);
	inside = true;
	/* a query that says done again, with nothing sent since, finds
	 * what the last one brought */
	if (!query || sent != pulled) {
		pulled = sent;
		for (size_t i = 0; i < nsh; i++)
			pull(&sh[i]);
	}
	inside = false;
	pthread_mutex_unlock(&sh_mu);
}

void xgpulib_shadow_after(uint16_t op, CUresult rc)
{
	bool query;

	if (inside || rc != CUDA_SUCCESS || !sync_op(op, &query))
		return;
	bring_back(query);
}

void xgpulib_shadow_synced(void)
{
	if (!inside && __atomic_load_n(&xgpulib_shadow_live, __ATOMIC_ACQUIRE))
		bring_back(false);
}

void xgpulib_shadow_forked(void)
{
	/* one thread: whoever held the lock is not here */
	sh_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	for (size_t i = 0; i < nsh; i++) {
		if (sh[i].region)
			xgpulib_region_release(sh[i].region);
		free(sh[i].copy);
		free(sh[i].back);
	}
	nsh = 0;
	__atomic_store_n(&xgpulib_shadow_live, 0, __ATOMIC_RELEASE);
}
