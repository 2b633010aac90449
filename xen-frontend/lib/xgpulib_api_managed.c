// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_managed.c: managed memory (cuMemAllocManaged, cuMemFree of
 * it) and __managed__ variables.
 *
 * Two modes (README, "Managed memory"; XGPU_MANAGED picks one):
 *
 * zero copy (the local transport's default): a managed allocation is
 * pinned host memory shared with the worker (a host-memory region, as
 * cuMemHostAlloc makes) that the worker maps at the same address as the
 * guest and registers with the driver, so that the one pointer works in
 * the program and in kernels: the CPU touches it directly, kernels reach
 * it over the bus.  Results are native; a kernel that streams through
 * managed memory runs at bus speed, not at GPU memory speed.
 *
 * coherent (the Xen transport's, where the worker cannot map the guest's
 * pages at the guest's address; the fallback where zero copy cannot map
 * them): the memory is the worker driver's managed memory; the guest
 * maps a host-memory region at the same address and keeps it coherent
 * at GPU-work boundaries (xgpulib_mco.h).  The worker picks the address
 * (its driver's cuMemAllocManaged always succeeds where memory is left);
 * the guest maps there only where nothing of its own is, and asks again
 * (up to MAX_TRIES addresses) when something is.
 *
 * __managed__ variables of modules and libraries are the worker driver's
 * managed memory too: the allocation holding them is mapped coherently
 * in either mode when the program looks one up (below).
 *
 * Prefetches, advice, stream attachment and range attributes:
 * xgpulib_api_advise.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_dev.h"
#include "xgpulib_entry.h"
#include "xgpulib_managed.h"
#include "xgpulib_mco.h"

/* addresses the worker may propose before the guest gives up */
#define MAX_TRIES 8

/*
 * The network, where nothing is shared with the worker: size bytes of
 * this process's own pages at dptr (a memfd mapped there, and a second
 * time at *alias, always writable: xgpulib_mco.h), under a region id the
 * worker never hears of.  EEXIST: something of this process's is mapped
 * there.
 */
static int own_at(uint64_t dptr, size_t size, uint32_t *id, void **alias)
{
	void *va = (void *)(uintptr_t)dptr, *p;
	int fd = memfd_create("xgpu-managed", MFD_CLOEXEC), err;

	if (fd < 0)
		return ENOMEM;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return ENOMEM;
	}
	p = mmap(va, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	err = p == MAP_FAILED && errno != EEXIST ? ENOMEM : EEXIST;
	if (p != va) {
		/* (a kernel before 4.17 takes the address as a hint) */
		if (p != MAP_FAILED)
			munmap(p, size);
		close(fd);
		return err;
	}
	*alias = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	*id = *alias == MAP_FAILED ? 0 : xgpulib_region_reserve();
	if (!*id) {
		if (*alias != MAP_FAILED)
			munmap(*alias, size);
		munmap(va, size);
		return ENOMEM;
	}
	return 0;
}

/*
 * Pages for coherent managed memory at dptr, size bytes: shared with
 * the worker as a region mapped at dptr here (anywhere in the worker),
 * or on the network this process's own (*alias set): the region's id in
 * *id.  EEXIST: something of this process's is mapped there.
 */
static int share_at(uint64_t dptr, size_t size, uint32_t *id, void **alias)
{
	struct xgpuif_hostmem_reply r;
	void *va = (void *)(uintptr_t)dptr;
	int err = 0;

	*alias = NULL;
	if (xgpulib_ch->t->mco_bytes)
		return own_at(dptr, size, id, alias);
	if (xgpulib_hostmem_share(size, 0, &va, id, &r, &err) ==
	    CUDA_SUCCESS)
		return 0;
	return err == -EEXIST ? EEXIST : err == -EOPNOTSUPP ? EOPNOTSUPP :
								ENOMEM;
}

/* the pages of coherent region g (out of the table, or never in it) go */
static void region_unshare(const struct xgpulib_region *g)
{
	struct xgpuif_region_args u = { g->id, 0 };

	if (g->alias) {
		munmap(g->va, g->size);
		munmap(g->alias, g->size);
		return;
	}
	xgpulib_call_HOSTMEM_UNREGISTER(&u);
	xgpulib_ch->t->ops->hostmem_free(xgpulib_ch->t, g->id, g->va, g->size);
}

static CUresult alloc_coherent(CUdeviceptr *dptr, size_t bytesize,
			       unsigned int flags)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (bytesize + page - 1) & ~(page - 1);
	uint64_t tried[MAX_TRIES];
	uint64_t ctx = xgpulib_current_remote();
	int ntried = 0, err = 0;
	uint32_t id = 0;
	void *alias = NULL;
	CUresult rc;

	if (size < bytesize)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (;;) {
		struct xgpuif_managed_alloc_args a = { bytesize, flags, 0 };
		struct xgpuif_dptr_reply r;

		rc = xgpulib_call_MANAGED_ALLOC(&a, &r);
		if (rc)
			break;
		err = share_at(r.dptr, size, &id, &alias);
		if (!err) {
			*dptr = r.dptr;
			break;
		}
		/* kept until the end, so that the worker offers another */
		tried[ntried++] = r.dptr;
		if (err == EOPNOTSUPP) {
			xgpulib_log_once("cuMemAllocManaged: managed memory "
					 "needs pages shared with the worker, "
					 "which the network transport has not");
			rc = CUDA_ERROR_NOT_SUPPORTED;
			break;
		}
		if (err != EEXIST || ntried == MAX_TRIES) {
			xgpulib_dbg("cuMemAllocManaged: %s", err == EEXIST ?
				    "every address the worker offered is "
				    "taken here" : "no shared pages");
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		xgpulib_dbg("cuMemAllocManaged: %#llx is taken here; asking "
			    "for another address",
			    (unsigned long long)r.dptr);
	}
	for (int i = 0; i < ntried; i++) {
		struct xgpuif_dptr_args f = { tried[i] };

		xgpulib_call_MEM_FREE(&f);
	}
	if (rc)
		return rc;
	{
		struct xgpulib_region reg = {
			.id = id, .va = (uint8_t *)(uintptr_t)*dptr,
			.size = size, .dptr = *dptr, .same_va = true,
			.managed = true, .coherent = true, .alias = alias,
		};
		struct xgpuif_dptr_args f = { *dptr };

		if (xgpulib_mco_add(xgpulib_ch, reg.va, size, 0, bytesize, id,
				    ctx, alias, *dptr) == 0) {
			xgpulib_region_publish(&reg);
			xgpulib_mrec_new(&reg);
			return CUDA_SUCCESS;
		}
		region_unshare(&reg);
		xgpulib_region_release(id);
		xgpulib_call_MEM_FREE(&f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
			   unsigned int flags)
{
	const struct xgpulib_region *r;
	void *va = NULL;
	uint64_t off;
	CUresult rc;

	if (!dptr || !bytesize ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (xgpulib_managed_coherent())
		return alloc_coherent(dptr, bytesize, flags);
	rc = xgpulib_pinned_alloc(&va, bytesize, CU_MEMHOSTALLOC_DEVICEMAP);
	if (rc)
		return rc;
	r = xgpulib_region_find(va, 1, &off);
	if (!r || off || !r->same_va || r->dptr != (uint64_t)(uintptr_t)va) {
		xgpulib_dbg("cuMemAllocManaged: the worker cannot map %zu "
			    "bytes at the program's address; coherent mode",
			    bytesize);
		xgpulib_pinned_free(va);
		return alloc_coherent(dptr, bytesize, flags);
	}
	xgpulib_region_set_managed(r->id);
	xgpulib_mrec_new(r);
	*dptr = (CUdeviceptr)(uintptr_t)va;
	return CUDA_SUCCESS;
}

CUresult xgpulib_managed_free(const struct xgpulib_region *r)
{
	struct xgpulib_transport *t;
	struct xgpuif_region_args u = { r->id, 0 };
	struct xgpuif_dptr_args f = { r->dptr };
	struct xgpulib_region gone;
	CUresult rc = CUDA_SUCCESS;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (r->var)	/* a module's variables: not an allocation */
		return CUDA_ERROR_INVALID_VALUE;
	t = xgpulib_ch->t;
	if (!r->coherent)
		return xgpulib_pinned_free(r->va);
	/* what the program wrote since the last request is dropped */
	xgpulib_mco_del(r->va);
	if (!xgpulib_region_take(r->va, &gone))
		return CUDA_ERROR_INVALID_VALUE;	/* freed meanwhile */
	if (gone.alias) {
		region_unshare(&gone);
	} else {
		rc = xgpulib_call_HOSTMEM_UNREGISTER(&u);
		t->ops->hostmem_free(t, gone.id, gone.va, gone.size);
	}
	if (!rc)
		rc = xgpulib_call_MEM_FREE(&f);
	return rc;
}

/* ---- __managed__ variables ----------------------------------------------- */

/*
 * The managed allocation the worker's driver made for __managed__
 * variables of a module or library (its managed segment): mapped here
 * once, whole pages, at its address, coherent in either mode (the driver
 * placed it; zero copy would need the guest's pages there), at the first
 * lookup of one of its variables, until the module or library goes.  A
 * page it shares with something of this process's (another module's
 * variables, a managed allocation the driver packed next to it) cannot
 * be mapped: the lookup fails then.  Bytes of its pages outside the
 * allocation are never copied to or from the worker.
 */
struct mvar {
	const void *root;	/* the module or library */
	uint64_t base, size;	/* the worker's allocation */
	uint8_t *va;		/* its pages here */
	uint32_t region;
	struct mvar *next;
};

static pthread_mutex_t mv_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mvar *mvars;

/* map [base, base + size) in whole pages; mv_mu held */
static CUresult var_map(struct mvar *v)
{
	uint64_t page = xgpulib_page_size(), start = v->base & ~(page - 1);
	uint64_t end = (v->base + v->size + page - 1) & ~(page - 1);
	struct xgpulib_region reg = {
		.va = (uint8_t *)(uintptr_t)start, .size = end - start,
		.dptr = start, .same_va = true, .managed = true,
		.coherent = true, .var = true,
	};
	int err;

	if (end < v->base + v->size || v->base + v->size < v->base)
		return CUDA_ERROR_INVALID_VALUE;
	err = share_at(start, reg.size, &reg.id, &reg.alias);
	if (err) {
		xgpulib_log("__managed__ variables at %#llx (%llu bytes): %s",
			    (unsigned long long)v->base,
			    (unsigned long long)v->size, err == EEXIST ?
			    "their pages are in use in this process; the "
			    "lookup fails" : "no shared pages");
		return err == EEXIST ? CUDA_ERROR_NOT_SUPPORTED :
				       CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (xgpulib_mco_add(xgpulib_ch, reg.va, reg.size, v->base - start,
			    v->base + v->size - start, reg.id,
			    xgpulib_current_remote(), reg.alias, start)) {
		region_unshare(&reg);
		xgpulib_region_release(reg.id);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	xgpulib_region_publish(&reg);
	xgpulib_mrec_new(&reg);
	v->va = reg.va;
	v->region = reg.id;
	return CUDA_SUCCESS;
}

/* is the page at p mapped for a variable already?  mv_mu held */
static bool var_page_mapped(uint64_t p)
{
	for (struct mvar *v = mvars; v; v = v->next)
		if (p >= v->base && p - v->base < v->size)
			return true;
	return false;
}

/*
 * The pages [base, base + size) holding a variable (the worker rounds
 * them out: the driver packs a module's variables into shared pages):
 * each run of them not mapped yet, for this or another variable, is
 * mapped as one piece.
 */
CUresult xgpulib_managed_var_map(const void *root, uint64_t base,
				 uint64_t size)
{
	uint64_t page = xgpulib_page_size(), p, run;
	CUresult rc = CUDA_SUCCESS;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!size || base % page || size % page || base + size < base)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mv_mu);
	for (p = base; p < base + size && !rc;) {
		struct mvar *v;

		if (var_page_mapped(p)) {
			p += page;
			continue;
		}
		for (run = p; run < base + size && !var_page_mapped(run);)
			run += page;
		v = calloc(1, sizeof(*v));
		if (!v) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		*v = (struct mvar){ root, p, run - p, NULL, 0, NULL };
		rc = var_map(v);
		if (rc) {
			free(v);
			break;
		}
		xgpulib_dbg("__managed__ variables at %#llx (%llu bytes): "
			    "coherent", (unsigned long long)p,
			    (unsigned long long)(run - p));
		v->next = mvars;
		mvars = v;
		p = run;
	}
	pthread_mutex_unlock(&mv_mu);
	return rc;
}

void xgpulib_managed_vars_unmap(const void *root)
{
	struct mvar **pp, *v;

	pthread_mutex_lock(&mv_mu);
	for (pp = &mvars; *pp;) {
		struct xgpulib_region gone;

		v = *pp;
		if (v->root != root) {
			pp = &v->next;
			continue;
		}
		*pp = v->next;
		/* what the program wrote since the last request is dropped:
		 * the variables go with their module */
		xgpulib_mco_del(v->va);
		if (xgpulib_region_take(v->va, &gone))
			region_unshare(&gone);
		free(v);
	}
	pthread_mutex_unlock(&mv_mu);
}
