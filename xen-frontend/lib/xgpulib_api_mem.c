// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_mem.c: device memory, guest pinned memory and pointer
 * attributes.
 *
 * The guest keeps a table of its device allocations (tab_mu), to tell
 * device from host pointers in unified copies without a round trip
 * (xgpulib_is_device).  Pinned memory (cuMemHostAlloc) is a host-memory
 * region shared with the worker (xgpulib_hostmem.c makes and frees them,
 * xgpulib_copy.c keeps their table).
 *
 * cuMemHostRegister on ordinary guest memory makes its pages such a
 * region in place where the transport can (local: the pages move into a
 * shared memfd at the same address, which the worker maps at that address
 * and registers), so the device pointer is the host pointer and its copies
 * are zero copy; elsewhere (Xen) it is recorded and its copies are staged
 * (correct, not zero copy), and cuMemHostGetDevicePointer on it answers
 * CUDA_ERROR_NOT_SUPPORTED.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_shadow.h"
#include "xgpulib_vec.h"

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;

struct dalloc {
	uint64_t dptr, size;
};
static struct dalloc *dallocs;
static size_t ndallocs, cap_dallocs;

/* cuMemHostRegister's ranges; reg_mu orders registrations (tab_mu is
 * only held to read or change the table) */
struct hostreg {
	uint8_t *p;		/* the range the program registered */
	size_t size;
	unsigned int flags;
	uint32_t region;	/* its pages' region (zero copy); 0: staged */
	uint8_t *pg;		/* the whole pages covering it */
	size_t pgsize;
	/* zero copy: mapped for kernels (the device pointer is the host
	 * pointer); false until asked for where the worker maps it only
	 * then (its driver xgpu's own library on the network: a chain) */
	bool mapped;
};
static struct hostreg *hostregs;
static size_t nhostregs, cap_hostregs;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the table of device allocations ------------------------------------ */

void xgpulib_dalloc_add(uint64_t dptr, uint64_t size)
{
	struct dalloc *v;

	pthread_mutex_lock(&tab_mu);
	v = xgpulib_vec_grow(dallocs, ndallocs, &cap_dallocs, sizeof(*v), 64);
	if (v) {
		dallocs = v;
		dallocs[ndallocs++] = (struct dalloc){ dptr, size };
	}
	pthread_mutex_unlock(&tab_mu);
}

CUresult xgpulib_dalloc_out(CUresult rc, uint64_t dptr, uint64_t size,
			    CUdeviceptr *out)
{
	if (rc == CUDA_SUCCESS) {
		*out = dptr;
		xgpulib_dalloc_add(dptr, size);
	}
	return rc;
}

void xgpulib_dalloc_del(uint64_t dptr)
{
	pthread_mutex_lock(&tab_mu);
	xgpulib_vec_take(dallocs, &ndallocs, sizeof(*dallocs), &dptr,
			 sizeof(dptr), NULL);
	pthread_mutex_unlock(&tab_mu);
}

static bool dalloc_has(uint64_t p)
{
	bool hit = false;

	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < ndallocs; i++) {
		if (p >= dallocs[i].dptr &&
		    p - dallocs[i].dptr < dallocs[i].size) {
			hit = true;
			break;
		}
	}
	pthread_mutex_unlock(&tab_mu);
	return hit;
}


/* Is p device memory?  Known allocations first, then ask the worker. */
bool xgpulib_is_device(uint64_t p)
{
	struct xgpuif_ptr_attr_args a = { p, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					  0 };
	struct xgpuif_u64_reply rep;
	const struct xgpulib_region *r;
	uint64_t off;

	if (dalloc_has(p))
		return true;
	/* managed memory: device memory where it is coherent, else the
	 * program's host memory the worker maps (zero copy) */
	r = xgpulib_region_find_any((void *)(uintptr_t)p, 1, &off);
	if (r)
		return r->coherent;
	if (xgpulib_call_POINTER_GET_ATTRIBUTE(&a, &rep) != CUDA_SUCCESS)
		return false;
	return rep.value == CU_MEMORYTYPE_DEVICE;
}

/* ---- device memory ------------------------------------------------------ */

CUresult cuMemGetInfo(size_t *free, size_t *total)
{
	struct xgpuif_mem_info_reply r;
	CUresult rc;

	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_MEM_GET_INFO(&r);
	if (rc == CUDA_SUCCESS) {
		*free = r.free;
		*total = r.total;
	}
	return rc;
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	struct xgpuif_mem_alloc_args a = { bytesize };
	struct xgpuif_dptr_reply r = { 0 };
	CUresult rc;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_MEM_ALLOC(&a, &r);
	return xgpulib_dalloc_out(rc, r.dptr, bytesize, dptr);
}

CUresult cuMemAllocPitch(CUdeviceptr *dptr, size_t *pitch, size_t width,
			 size_t height, unsigned int elem)
{
	struct xgpuif_mem_alloc_pitch_args a = { width, height, elem, 0 };
	struct xgpuif_mem_alloc_pitch_reply r = { 0 };
	CUresult rc;

	if (!dptr || !pitch)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_call_MEM_ALLOC_PITCH(&a, &r);
	if (rc == CUDA_SUCCESS)
		*pitch = r.pitch;
	return xgpulib_dalloc_out(rc, r.dptr, r.pitch * height, dptr);
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	const struct xgpulib_region *r;
	uint64_t off;
	CUresult rc;

	if (!dptr)
		return CUDA_SUCCESS;
	/* managed memory (xgpulib_api_managed.c) is a region of ours */
	r = xgpulib_region_find_any((void *)(uintptr_t)dptr, 1, &off);
	if (r && r->managed)
		return off ? CUDA_ERROR_INVALID_VALUE :
			     xgpulib_managed_free(r);
	rc = xgpulib_call_MEM_FREE(&a);
	if (rc == CUDA_SUCCESS)
		xgpulib_dalloc_del(dptr);
	return rc;
}

CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size,
			      CUdeviceptr dptr)
{
	struct xgpuif_dptr_args a = { dptr };
	struct xgpuif_range_reply r;
	CUresult rc;

	rc = xgpulib_call_MEM_GET_ADDRESS_RANGE(&a, &r);
	if (rc == CUDA_SUCCESS) {
		if (base)
			*base = r.base;
		if (size)
			*size = r.size;
	}
	return rc;
}

/* ---- guest pinned memory ------------------------------------------------ */

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	return xgpulib_pinned_alloc(pp, bytesize, flags);
}

CUresult cuMemAllocHost(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

#undef cuMemAllocHost
CUresult cuMemAllocHost(void **pp, unsigned int bytesize);
CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemFreeHost(void *p)
{
	return xgpulib_pinned_free(p);
}

/* ---- registered host memory --------------------------------------------- */

#define HOSTREG_FLAGS (CU_MEMHOSTREGISTER_PORTABLE | \
		       CU_MEMHOSTREGISTER_DEVICEMAP | \
		       CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)

/* the whole pages covering [p, p + size); false if that wraps */
static bool page_span(const void *p, size_t size, uint8_t **pg, size_t *len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p, lo = a & ~(page - 1), hi;

	if (a + size < a || a + size > UINTPTR_MAX - page)
		return false;
	hi = (a + size + page - 1) & ~(page - 1);
	*pg = (uint8_t *)lo;
	*len = hi - lo;
	return true;
}

/* the registration holding p (its bytes, not its pages) */
static bool hostreg_find(const void *p, struct hostreg *out)
{
	const uint8_t *b = p;
	bool hit = false;

	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < nhostregs && !hit; i++) {
		if (b >= hostregs[i].p &&
		    b < hostregs[i].p + hostregs[i].size) {
			*out = hostregs[i];
			hit = true;
		}
	}
	pthread_mutex_unlock(&tab_mu);
	return hit;
}

/* the network: the GPU cannot reach this host's pages (xgpulib_shadow.h) */
static bool remote(void)
{
	return xgpulib_ch && xgpulib_ch->t->ops->put;
}

/*
 * The device pointer of p in registered range h, which is staged: over
 * the network the range gets device memory kept equal to it
 * (xgpulib_shadow.h), made at the first question; elsewhere none.
 */
static CUresult hostreg_shadow_dptr(const struct hostreg *h, const void *p,
				    uint64_t *dptr)
{
	uint64_t d;
	CUresult rc;

	if (!remote())
		return CUDA_ERROR_NOT_SUPPORTED;
	if (xgpulib_shadow_dptr(p, dptr))
		return CUDA_SUCCESS;
	pthread_mutex_lock(&reg_mu);
	rc = CUDA_SUCCESS;
	/* made meanwhile, or unregistered meanwhile? */
	if (!xgpulib_shadow_dptr(p, dptr)) {
		struct hostreg now;

		if (!hostreg_find(p, &now) || now.p != h->p)
			rc = CUDA_ERROR_INVALID_VALUE;
		else
			rc = xgpulib_shadow_add(h->p, h->size, &d);
		if (!rc)
			*dptr = d + (uint64_t)((const uint8_t *)p - h->p);
	}
	pthread_mutex_unlock(&reg_mu);
	if (rc && rc != CUDA_ERROR_INVALID_VALUE)
		xgpulib_log_once("a device pointer for registered memory over "
				 "the network: no device memory for it (error "
				 "%d)", rc);
	return rc;
}

/*
 * The device pointer of p in zero-copy registration h: the host pointer.
 * A chain's worker maps it for kernels only when asked (HOSTMEM_DPTR:
 * its driver, xgpu's library on the network, then keeps memory of the
 * GPU host's equal to it); an older worker or one whose driver could not
 * map it answers CUDA_ERROR_NOT_SUPPORTED.
 */
static CUresult hostreg_dptr(const struct hostreg *h, const void *p,
			     uint64_t *dptr)
{
	struct xgpuif_region_args a = { h->region, 0 };
	struct xgpuif_dptr_reply rep = { 0 };
	CUresult rc;

	if (!h->region)
		return hostreg_shadow_dptr(h, p, dptr);
	if (h->mapped) {
		*dptr = (uint64_t)(uintptr_t)p;
		return CUDA_SUCCESS;
	}
	rc = xgpulib_call_HOSTMEM_DPTR(&a, &rep);
	if (rc == CUDA_ERROR_INVALID_VALUE)	/* an older worker's word */
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (!rc && rep.dptr != (uint64_t)(uintptr_t)h->pg) {
		/* the GPU host's memory is elsewhere: a kernel given the
		 * host pointer would miss it; refuse rather than mislead */
		xgpulib_log_once("registered memory through a chain: the GPU "
				 "host could not map it at its own address; "
				 "no device pointer");
		rc = CUDA_ERROR_NOT_SUPPORTED;
	}
	if (rc)
		return rc;
	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < nhostregs; i++) {
		if (hostregs[i].region == h->region)
			hostregs[i].mapped = true;
	}
	pthread_mutex_unlock(&tab_mu);
	*dptr = (uint64_t)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/*
 * Is every page of [lo, hi) plain private anonymous memory, writable
 * (malloc's heap and mmaps, not a file, not shared, not a stack)?  Only
 * such pages can move into shared memory without the program noticing.
 */
static bool plain_anon(uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t covered = lo;
	char line[512];
	bool ok = true;

	if (!f)
		return false;
	while (ok && covered < hi && fgets(line, sizeof(line), f)) {
		unsigned long start, end, ino;
		char perms[8], path[64] = "";
		int n;

		if (!strchr(line, '\n')) {	/* a long path: skip the rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		n = sscanf(line, "%lx-%lx %7s %*s %*s %lu %63s", &start, &end,
			   perms, &ino, path);
		if (n < 4 || end <= covered)
			continue;
		if (start > covered)
			break;		/* a hole: not mapped */
		ok = !strcmp(perms, "rw-p") && ino == 0 &&
		     (!path[0] || !strcmp(path, "[heap]") ||
		      !strncmp(path, "[anon:", 6));
		covered = end;
	}
	fclose(f);
	return ok && covered >= hi;
}

/*
 * Move the pages of registration h into shared memory and have the
 * worker map and register them at the same address (zero copy): the
 * region's id, or 0 when its copies must be staged (*why says why).
 */
static uint32_t hostreg_share(struct hostreg *h, const char **why)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct xgpuif_hostmem_args a;
	struct xgpuif_hostmem_reply r;
	uintptr_t lo = (uintptr_t)h->pg, hi = lo + h->pgsize;
	uintptr_t sp = (uintptr_t)&a;
	uint32_t id;
	CUresult rc;

	if (!t->ops->hostmem_share || !t->ops->hostmem_unshare) {
		*why = "not on this transport";
		return 0;
	}
	if (h->flags & CU_MEMHOSTREGISTER_IOMEMORY) {
		*why = "I/O memory";
		return 0;
	}
	/* our own frames must not be on the pages being moved */
	if (sp + 65536 > lo && sp < hi + 65536) {
		*why = "memory on this thread's stack";
		return 0;
	}
	if (!plain_anon(lo, hi)) {
		*why = "not private anonymous memory";
		return 0;
	}
	id = xgpulib_region_reserve();
	if (!id) {
		*why = "no host-memory region left";
		return 0;
	}
	memset(&a, 0, sizeof(a));
	/* the fd travels on the socket just before the request: keep the
	 * two in order against other threads' regions */
	pthread_mutex_lock(&xgpulib_data_mu);
	if (t->ops->hostmem_share(t, id, h->pg, h->pgsize, &a.dir)) {
		pthread_mutex_unlock(&xgpulib_data_mu);
		xgpulib_region_release(id);
		*why = "its pages cannot be shared";
		return 0;
	}
	a.region = id;
	a.flags = h->flags;
	a.size = h->pgsize;
	a.guest_va = lo;
	rc = xgpulib_call_HOST_REGISTER(&a, &r);
	pthread_mutex_unlock(&xgpulib_data_mu);
	/* the device pointer is the host pointer, or none yet (a chain's
	 * worker maps it when asked, hostreg_dptr) */
	if (rc == CUDA_SUCCESS && (!r.same_va || (r.dptr && r.dptr != lo))) {
		struct xgpuif_region_args u = { id, 0 };

		xgpulib_call_HOSTMEM_UNREGISTER(&u);
		rc = CUDA_ERROR_NOT_SUPPORTED;
	}
	if (rc) {
		/* unwind: the pages become private again, contents kept */
		t->ops->hostmem_unshare(t, h->pg, h->pgsize);
		xgpulib_region_release(id);
		*why = rc == CUDA_ERROR_NOT_SUPPORTED ?
			"the worker cannot map it at the same address" :
			"the worker refused to pin it";
		return 0;
	}
	xgpulib_region_publish(&(struct xgpulib_region){
		.id = id, .flags = h->flags, .va = h->pg, .size = h->pgsize,
		.dptr = r.dptr, .same_va = true, .hostreg = true });
	h->mapped = r.dptr != 0;
	return id;
}

/*
 * Undo hostreg_share: the worker drains, unregisters and unmaps the pages;
 * then they become private memory again with their contents (if that
 * fails they stay shared memory that only this process maps: the program
 * keeps its data either way).
 */
static void hostreg_drop(const struct hostreg *h)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct xgpuif_region_args a = { h->region, 0 };
	struct xgpulib_region gone;

	xgpulib_call_HOSTMEM_UNREGISTER(&a);
	if (!xgpulib_region_take(h->pg, &gone))
		return;
	if (t->ops->hostmem_unshare(t, h->pg, h->pgsize))
		xgpulib_dbg("cuMemHostUnregister(%p): its pages stay shared "
			    "memory", (void *)h->p);
}

/*
 * cuMemHostRegister.  On the local transport the pages covering the range
 * become shared memory at the same address (hostreg_share), mapped by the
 * worker at that address and registered with the driver: the device
 * pointer is the host pointer, kernels use it in place and copies from or
 * to it are single requests (the region table).  Where that cannot be
 * done (the Xen transport, file-backed or shared memory, a stack, I/O
 * memory, or the worker cannot map or pin it) the range is only recorded
 * and its copies are staged: correct, not zero copy, and it has no device
 * pointer.  Like the driver, registrations are page granular: a range on
 * a page already registered is refused.
 */
CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int flags)
{
	struct hostreg h = { p, bytesize, flags, 0, NULL, 0, false };
	struct hostreg *v;
	const char *why = "";
	CUresult rc = CUDA_SUCCESS;

	if (!p || !bytesize || (flags & ~HOSTREG_FLAGS) ||
	    !page_span(p, bytesize, &h.pg, &h.pgsize))
		return CUDA_ERROR_INVALID_VALUE;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&reg_mu);
	pthread_mutex_lock(&tab_mu);
	for (size_t i = 0; i < nhostregs; i++) {
		if (h.pg < hostregs[i].pg + hostregs[i].pgsize &&
		    hostregs[i].pg < h.pg + h.pgsize)
			rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	}
	pthread_mutex_unlock(&tab_mu);
	/* pinned or managed memory of ours is registered already */
	if (!rc && xgpulib_region_overlaps(p, bytesize))
		rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	if (rc)
		goto out;
	h.region = hostreg_share(&h, &why);
	if (h.region)
		xgpulib_dbg("cuMemHostRegister(%p, %zu): shared with the "
			    "worker, zero copy", p, bytesize);
	else
		xgpulib_dbg("cuMemHostRegister(%p, %zu): %s; copies from it "
			    "are staged", p, bytesize, why);
	/* the network, asked to map it: kernels reach it through device
	 * memory kept equal to it (else made at the first device pointer) */
	if (!h.region && remote() && (flags & CU_MEMHOSTREGISTER_DEVICEMAP)) {
		uint64_t d;

		if (xgpulib_shadow_add(h.p, h.size, &d))
			xgpulib_log_once("cuMemHostRegister with DEVICEMAP over "
					 "the network: no device memory for "
					 "it; copies from it are staged");
	}
	pthread_mutex_lock(&tab_mu);
	v = xgpulib_vec_grow(hostregs, nhostregs, &cap_hostregs, sizeof(*v),
			     16);
	if (v) {
		hostregs = v;
		hostregs[nhostregs++] = h;
	}
	pthread_mutex_unlock(&tab_mu);
	if (!v) {
		if (h.region)
			hostreg_drop(&h);
		else
			xgpulib_shadow_del(h.p);
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
out:
	pthread_mutex_unlock(&reg_mu);
	return rc;
}

/*
 * fork(): a registered range is shared memory, which a child would share
 * with its parent, where natively it gets a copy (private memory).  The
 * child takes a private copy of every such range at once, before it runs
 * on: its writes (malloc's, to the neighbours on those pages, too) must
 * not reach the parent.  The child has one thread; whoever held the locks
 * is not here.
 */
void xgpulib_hostreg_forked(void)
{
	struct xgpulib_transport *t = xgpulib_ch ? xgpulib_ch->t : NULL;

	tab_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	reg_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	for (size_t i = 0; i < nhostregs; i++) {
		if (t && hostregs[i].region && t->ops->hostmem_unshare)
			t->ops->hostmem_unshare(t, hostregs[i].pg,
						hostregs[i].pgsize);
	}
	nhostregs = 0;
}

CUresult cuMemHostUnregister(void *p)
{
	struct hostreg h;
	const struct xgpulib_region *r;
	uint64_t off;
	bool hit;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&reg_mu);
	pthread_mutex_lock(&tab_mu);
	hit = xgpulib_vec_take(hostregs, &nhostregs, sizeof(*hostregs), &p,
			       sizeof(p), &h);
	pthread_mutex_unlock(&tab_mu);
	if (hit && h.region)
		hostreg_drop(&h);
	else if (hit)
		xgpulib_shadow_del(h.p);	/* if it has device memory */
	pthread_mutex_unlock(&reg_mu);
	if (hit)
		return CUDA_SUCCESS;
	/* as the driver: pinned memory of ours is not a registration */
	r = xgpulib_region_find(p, 1, &off);
	return r && !r->hostreg ? CUDA_ERROR_INVALID_VALUE :
				  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/*
 * Pinned memory with no device pointer yet: a worker whose driver is
 * xgpu's own library on the network (a chain) maps it only when asked
 * (HOSTMEM_DPTR); one that could not pin it, or one from before that
 * request, answers CUDA_ERROR_NOT_SUPPORTED.  The region is published
 * again with it (a copy meanwhile finds none and is staged: the same
 * bytes).
 */
static CUresult pinned_dptr_asked(const struct xgpulib_region *r,
				  uint64_t off, CUdeviceptr *pdptr)
{
	struct xgpuif_region_args a = { r->id, 0 };
	struct xgpuif_dptr_reply rep = { 0 };
	struct xgpulib_region now;
	void *va = r->va;
	CUresult rc;

	rc = xgpulib_call_HOSTMEM_DPTR(&a, &rep);
	if (rc == CUDA_ERROR_INVALID_VALUE)	/* an older worker's word */
		rc = CUDA_ERROR_NOT_SUPPORTED;
	if (rc)
		return rc;
	if (!rep.dptr)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&reg_mu);
	if (xgpulib_region_take(va, &now)) {
		now.dptr = rep.dptr;
		xgpulib_region_publish(&now);
	}
	pthread_mutex_unlock(&reg_mu);
	*pdptr = rep.dptr + off;
	return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p,
				   unsigned int flags)
{
	const struct xgpulib_region *r;
	struct hostreg h;
	uint64_t off;
	CUresult rc = xgpulib_query_arg(pdptr && p && !flags);

	if (rc)
		return rc;
	/* the network: pinned memory is the process's own; asked for a
	 * device pointer, its buffer becomes coherent */
	if (remote() && xgpulib_plain_holds(p, 1))
		return xgpulib_plain_device_pointer(p, pdptr);
	/* zero copy: the host pointer; staged: over the network, memory
	 * of the GPU host's kept equal */
	if (hostreg_find(p, &h))
		return hostreg_dptr(&h, p, (uint64_t *)pdptr);
	r = xgpulib_region_find(p, 1, &off);
	if (!r || r->hostreg)
		return CUDA_ERROR_INVALID_VALUE;
	if (!r->dptr)	/* not pinned, or mapped only when asked */
		return pinned_dptr_asked(r, off, pdptr);
	*pdptr = r->dptr + off;
	return CUDA_SUCCESS;
}

/*
 * Under unified addressing every page-locked range is mapped: the driver
 * reports DEVICEMAP whether it was asked for or not.
 */
CUresult cuMemHostGetFlags(unsigned int *pflags, void *p)
{
	const struct xgpulib_region *r;
	struct hostreg h;
	uint64_t off;

	if (!pflags || !p)
		return CUDA_ERROR_INVALID_VALUE;
	if (hostreg_find(p, &h)) {
		uint64_t d;

		*pflags = h.flags | (h.region || xgpulib_shadow_dptr(p, &d) ?
					     CU_MEMHOSTREGISTER_DEVICEMAP : 0);
		return CUDA_SUCCESS;
	}
	r = xgpulib_region_find(p, 1, &off);
	if (!r || r->hostreg)
		return CUDA_ERROR_INVALID_VALUE;
	*pflags = r->flags | (r->dptr ? CU_MEMHOSTALLOC_DEVICEMAP : 0);
	return CUDA_SUCCESS;
}

/* ---- pointer attributes ------------------------------------------------- */

static CUresult host_attr(const struct xgpulib_region *r, uint64_t off,
			  CUpointer_attribute attr, void *data)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = xgpulib_current();
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		/* managed memory reads as device memory, as natively */
		*(unsigned int *)data = r->managed ? CU_MEMORYTYPE_DEVICE :
						     CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		if (!r->dptr)	/* not mapped for the device */
			return CUDA_ERROR_INVALID_VALUE;
		*(CUdeviceptr *)data = r->dptr + off;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = r->va + off;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = r->managed;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = r->dptr != 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(void **)data = r->va;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = r->size;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* bytes each attribute writes */
static size_t attr_size(CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		return 4;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		return 8;
	default:
		return 0;
	}
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr,
			       CUdeviceptr ptr)
{
	struct xgpuif_ptr_attr_args a = { ptr, (uint32_t)attr, 0 };
	const struct xgpulib_region *r;
	struct xgpuif_u64_reply rep;
	struct hostreg h;
	uint64_t off;
	size_t sz;
	CUresult rc;

	rc = xgpulib_query_arg(data);
	if (rc)
		return rc;
	/* registered memory: the range the program gave, its device pointer
	 * the host pointer where it is zero copy, none where it is staged */
	if (hostreg_find((void *)(uintptr_t)ptr, &h)) {
		struct xgpulib_region v = {
			.flags = h.flags, .va = h.p, .size = h.size,
			.dptr = h.region ? (uint64_t)(uintptr_t)h.p : 0,
		};

		/* made when asked: through a chain, over the network */
		if (attr == CU_POINTER_ATTRIBUTE_DEVICE_POINTER &&
		    (h.region || remote()))
			return hostreg_dptr(&h, (void *)(uintptr_t)ptr,
					    (uint64_t *)data);
		if (!h.region && remote())
			xgpulib_shadow_dptr(h.p, &v.dptr);
		return host_attr(&v, ptr - (uint64_t)(uintptr_t)h.p, attr,
				 data);
	}
	/* __managed__ variables: the worker's driver knows their
	 * allocation (the region is its whole pages) */
	r = xgpulib_region_find_any((void *)(uintptr_t)ptr, 1, &off);
	if (r && !r->var)
		return host_attr(r, off, attr, data);
	/* a variable's kind and addresses are the guest's (mapped at the
	 * same address); its range and ids, the worker's allocation's */
	if (r) {
		switch (attr) {
		case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		case CU_POINTER_ATTRIBUTE_HOST_POINTER:
			*(void **)data = (void *)(uintptr_t)ptr;
			return CUDA_SUCCESS;
		case CU_POINTER_ATTRIBUTE_CONTEXT:
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		case CU_POINTER_ATTRIBUTE_MAPPED:
			return host_attr(r, off, attr, data);
		default:
			break;
		}
	}
	/* the network: pinned memory is the process's own; its device
	 * pointer is made when asked for (xgpulib_plain_device_pointer) */
	if (!r && remote()) {
		struct xgpulib_region v = { 0 };
		void *va;
		size_t size;

		if (xgpulib_plain_find((void *)(uintptr_t)ptr, &va, &size)) {
			if (attr == CU_POINTER_ATTRIBUTE_DEVICE_POINTER)
				return xgpulib_plain_device_pointer(
					(void *)(uintptr_t)ptr,
					(CUdeviceptr *)data);
			if (attr == CU_POINTER_ATTRIBUTE_MAPPED) {
				*(unsigned int *)data = 1;
				return CUDA_SUCCESS;
			}
			v.va = va;
			v.size = size;
			return host_attr(&v, ptr - (uint64_t)(uintptr_t)va,
					 attr, data);
		}
	}
	/* device memory has no host pointer */
	if (attr == CU_POINTER_ATTRIBUTE_HOST_POINTER)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr == CU_POINTER_ATTRIBUTE_CONTEXT) {
		rc = xgpulib_call_POINTER_GET_ATTRIBUTE(&a, &rep);
		if (rc == CUDA_SUCCESS)
			*(CUcontext *)data = xgpulib_current() ?
				xgpulib_current() : (CUcontext)xgpulib_primary(0);
		return rc;
	}
	sz = attr_size(attr);
	if (!sz)
		return CUDA_ERROR_NOT_SUPPORTED;
	rc = xgpulib_call_POINTER_GET_ATTRIBUTE(&a, &rep);
	if (rc == CUDA_SUCCESS)
		memcpy(data, &rep.value, sz);
	return rc;
}

CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs,
				void **data, CUdeviceptr ptr)
{
	if (!attrs || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		CUresult rc = cuPointerGetAttribute(data[i], attrs[i], ptr);

		/* like the driver: unknown memory reads as zeros */
		if (rc == CUDA_ERROR_INVALID_VALUE && attr_size(attrs[i]))
			memset(data[i], 0, attr_size(attrs[i]));
		else if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attr,
			       CUdeviceptr ptr)
{
	(void)value;
	(void)ptr;
	/* every worker copy is already synchronous where CUDA's would be */
	return attr == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ?
		       CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}
