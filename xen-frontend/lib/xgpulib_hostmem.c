// SPDX-License-Identifier: MIT
/*
 * xgpulib_hostmem.c: host-memory regions made and given back: new pages
 * shared with the worker (pinned memory, managed memory's pages) through
 * the transport, and registered with the worker.  Below the entry points
 * that allocate (xgpulib_api_mem.c, _managed.c, _hostfn.c); the table of
 * regions is xgpulib_copy.c's.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_mco.h"
#include "xgpulib_transport.h"

CUresult xgpulib_hostmem_share(size_t size, unsigned int flags, void **va,
			       uint32_t *id, struct xgpuif_hostmem_reply *r,
			       int *err)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct xgpuif_hostmem_args a;
	bool at = *va != NULL;
	CUresult rc;

	*err = 0;
	*id = xgpulib_region_reserve();
	if (!*id)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&a, 0, sizeof(a));
	/* the fd travels on the socket just before the request: keep the
	 * two in order against other threads' regions */
	pthread_mutex_lock(&xgpulib_data_mu);
	*err = t->ops->hostmem_alloc(t, *id, size, va, &a.dir);
	if (*err) {
		pthread_mutex_unlock(&xgpulib_data_mu);
		xgpulib_region_release(*id);
		/* no memory to share on this transport (the network) */
		return *err == -EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED :
					     CUDA_ERROR_OUT_OF_MEMORY;
	}
	a.region = *id;
	a.flags = flags;
	a.size = size;
	/* at *va: the worker has its managed memory there */
	a.guest_va = at ? 0 : (uint64_t)(uintptr_t)*va;
	rc = xgpulib_call_HOSTMEM_REGISTER(&a, r);
	pthread_mutex_unlock(&xgpulib_data_mu);
	if (rc) {
		t->ops->hostmem_free(t, *id, *va, size);
		xgpulib_region_release(*id);
	}
	return rc;
}

CUresult xgpulib_hostmem_kept(size_t size, void **va, uint32_t *id)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct xgpuif_hostmem_args a;
	struct xgpuif_hostmem_reply r;
	CUresult rc;

	size = (size + page - 1) & ~(page - 1);
	if (!t->ops->put || !size)
		return CUDA_ERROR_NOT_SUPPORTED;
	*id = xgpulib_region_reserve();
	if (!*id)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* no staged copy runs while the copy engine's part shrinks */
	pthread_mutex_lock(&xgpulib_data_mu);
	if (t->data_bytes < XGPULIB_KEPT_FLOOR ||
	    size > t->data_bytes - XGPULIB_KEPT_FLOOR) {
		pthread_mutex_unlock(&xgpulib_data_mu);
		xgpulib_region_release(*id);
		xgpulib_log("%zu bytes of host memory for a graph: the data "
			    "area has %zu MiB left for them (XGPU_DATA_MB "
			    "makes it larger)", size,
			    t->data_bytes > XGPULIB_KEPT_FLOOR ?
				    (t->data_bytes - XGPULIB_KEPT_FLOOR) >> 20 :
				    0);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	memset(&a, 0, sizeof(a));
	a.region = *id;
	a.size = size;
	a.dir = (struct xgpuif_memref){ t->data_bytes - size, size,
					XGPUIF_REGION_DATA, 0 };
	rc = xgpulib_call_HOSTMEM_REGISTER(&a, &r);
	if (rc == CUDA_SUCCESS) {
		t->data_bytes -= size;
		*va = t->data + t->data_bytes;
	}
	pthread_mutex_unlock(&xgpulib_data_mu);
	if (rc) {
		xgpulib_region_release(*id);
		return rc;
	}
	xgpulib_region_publish(&(struct xgpulib_region){
		.id = *id, .va = *va, .size = size, .dptr = r.dptr });
	return CUDA_SUCCESS;
}

/*
 * Pinned memory where the transport shares none (the network): ordinary
 * pages of this process, whose copies are staged like pageable memory's.
 * Kept here so that cuMemFreeHost knows them.  One the program asks a
 * device pointer for becomes coherent (xgpulib_plain_device_pointer):
 * dptr and alias say so.
 */
#define MAX_PLAIN 4096
static pthread_mutex_t plain_mu = PTHREAD_MUTEX_INITIALIZER;
static struct plain {
	void *va;
	size_t size;
	uint64_t dptr;		/* coherent: the worker's managed memory */
	void *alias;		/* its pages mapped a second time here */
} plain[MAX_PLAIN];
/* one buffer made coherent at a time */
static pthread_mutex_t conv_mu = PTHREAD_MUTEX_INITIALIZER;

static CUresult plain_alloc(void **pp, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&plain_mu);
	for (i = 0; i < MAX_PLAIN && plain[i].va; i++)
		;
	if (i < MAX_PLAIN)
		plain[i] = (struct plain){ p, size, 0, NULL };
	pthread_mutex_unlock(&plain_mu);
	if (i == MAX_PLAIN) {
		munmap(p, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

/* the allocation holding [p, p + n) whole (n >= 1), a copy in *e:
 * its index, or -1 */
static int plain_at(const void *p, size_t n, struct plain *e)
{
	const uint8_t *b = p;
	int at = -1;

	pthread_mutex_lock(&plain_mu);
	for (int i = 0; i < MAX_PLAIN && at < 0; i++)
		if (plain[i].va && b >= (uint8_t *)plain[i].va &&
		    n <= plain[i].size &&
		    (size_t)(b - (uint8_t *)plain[i].va) <= plain[i].size - n)
			at = i;
	if (at >= 0)
		*e = plain[at];
	pthread_mutex_unlock(&plain_mu);
	return at;
}

bool xgpulib_plain_find(const void *p, void **va, size_t *size)
{
	struct plain e;

	if (plain_at(p, 1, &e) < 0)
		return false;
	*va = e.va;
	*size = e.size;
	return true;
}

bool xgpulib_plain_holds(const void *p, size_t n)
{
	struct plain e;

	return plain_at(p, n ? n : 1, &e) >= 0;
}

/*
 * The network: the pinned buffer holding p becomes coherent memory
 * (xgpulib_mco.h) whose bytes, for kernels, are managed memory of the
 * worker's of the buffer's size: its contents go there, the program's
 * pages move in place to shared pages mapped a second time (a write to
 * the buffer by another thread during this call may be lost, as with
 * cuMemHostRegister elsewhere), and from then on they are kept coherent
 * at GPU-work boundaries.  The device pointer of p in *out.  A CUresult;
 * CUDA_ERROR_INVALID_VALUE when p is no such buffer.
 */
CUresult xgpulib_plain_device_pointer(void *p, CUdeviceptr *out)
{
	struct xgpuif_managed_alloc_args a = { 0, CU_MEM_ATTACH_GLOBAL, 0 };
	struct xgpuif_dptr_reply r = { 0 };
	struct plain e = { 0 };
	uint8_t *b = p;
	void *shared = MAP_FAILED, *alias = MAP_FAILED;
	uint32_t id = 0;
	CUresult rc;
	int i;

	pthread_mutex_lock(&conv_mu);
	i = plain_at(p, 1, &e);
	if (i < 0 || e.dptr) {
		pthread_mutex_unlock(&conv_mu);
		if (e.va)
			*out = e.dptr + (uint64_t)(b - (uint8_t *)e.va);
		return e.va ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	}
	a.bytesize = e.size;
	rc = xgpulib_call_MANAGED_ALLOC(&a, &r);
	if (rc)
		goto out;
	rc = CUDA_ERROR_OUT_OF_MEMORY;
	shared = mmap(NULL, e.size, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		goto fail;
	memcpy(shared, e.va, e.size);
	/* the shared pages take the buffer's place, then a second mapping
	 * of them (mremap of a shareable mapping with no old size) */
	if (mremap(shared, e.size, e.size, MREMAP_MAYMOVE | MREMAP_FIXED,
		   e.va) != e.va)
		goto fail;
	shared = MAP_FAILED;
	alias = mremap(e.va, 0, e.size, MREMAP_MAYMOVE);
	if (alias == MAP_FAILED)
		goto fail;
	rc = xgpulib_copy_htod(r.dptr, alias, e.size, XGPUIF_STREAM_LEGACY, 0);
	if (rc)
		goto fail;
	rc = CUDA_ERROR_OUT_OF_MEMORY;
	id = xgpulib_region_reserve();
	if (!id || xgpulib_mco_add(xgpulib_ch, e.va, e.size, 0, e.size, id,
				   xgpulib_current_remote(), alias, r.dptr))
		goto fail;
	xgpulib_region_publish(&(struct xgpulib_region){
		.id = id, .va = e.va, .size = e.size, .dptr = r.dptr,
		.coherent = true, .alias = alias });
	pthread_mutex_lock(&plain_mu);
	plain[i].dptr = r.dptr;
	plain[i].alias = alias;
	pthread_mutex_unlock(&plain_mu);
	pthread_mutex_unlock(&conv_mu);
	xgpulib_dbg("pinned memory at %p (%zu bytes): coherent, for kernels "
		    "at %#llx", e.va, e.size, (unsigned long long)r.dptr);
	*out = r.dptr + (uint64_t)(b - (uint8_t *)e.va);
	return CUDA_SUCCESS;
fail:
	if (id)
		xgpulib_region_release(id);
	if (shared != MAP_FAILED)
		munmap(shared, e.size);
	if (alias != MAP_FAILED)
		munmap(alias, e.size);
	xgpulib_call_MEM_FREE(&(struct xgpuif_dptr_args){ r.dptr });
out:
	pthread_mutex_unlock(&conv_mu);
	xgpulib_log_once("a device pointer for pinned memory over the "
			 "network: the buffer could not be made coherent "
			 "(error %d)", rc);
	return rc;
}

/* p was such memory: now freed */
static bool plain_free(void *p)
{
	struct plain e = { 0 };
	struct xgpulib_region gone;

	pthread_mutex_lock(&plain_mu);
	for (int i = 0; i < MAX_PLAIN; i++)
		if (plain[i].va == p) {
			e = plain[i];
			plain[i].va = NULL;
			break;
		}
	pthread_mutex_unlock(&plain_mu);
	if (e.va && e.dptr) {
		/* what the program wrote since the last request is dropped */
		xgpulib_mco_del(e.va);
		xgpulib_region_take(e.va, &gone);
		munmap(e.alias, e.size);
		xgpulib_call_MEM_FREE(&(struct xgpuif_dptr_args){ e.dptr });
	}
	if (e.va)
		munmap(e.va, e.size);
	return e.va != NULL;
}

CUresult xgpulib_pinned_alloc(void **pp, size_t bytesize,
			      unsigned int flags)
{
	struct xgpuif_hostmem_reply r;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size;
	uint32_t id;
	void *va = NULL;
	int err;
	CUresult rc;

	rc = xgpulib_query_arg(pp && bytesize);
	if (rc)
		return rc;
	size = (bytesize + page - 1) & ~(page - 1);
	rc = xgpulib_hostmem_share(size, flags, &va, &id, &r, &err);
	if (rc == CUDA_ERROR_NOT_SUPPORTED && err == -EOPNOTSUPP)
		return plain_alloc(pp, size);
	if (rc)
		return rc;
	xgpulib_region_publish(&(struct xgpulib_region){
		.id = id, .flags = flags, .va = va, .size = size,
		.dptr = r.dptr, .same_va = r.same_va });
	*pp = va;
	return CUDA_SUCCESS;
}

CUresult xgpulib_pinned_free(void *p)
{
	struct xgpulib_transport *t;
	struct xgpuif_region_args a = { 0, 0 };
	const struct xgpulib_region *r;
	struct xgpulib_region gone;
	uint64_t off;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	t = xgpulib_ch->t;
	if (plain_free(p))
		return CUDA_SUCCESS;
	r = xgpulib_region_find(p, 1, &off);
	if (!r || off || r->hostreg)
		return CUDA_ERROR_INVALID_VALUE;
	a.region = r->id;
	rc = xgpulib_call_HOSTMEM_UNREGISTER(&a);
	if (xgpulib_region_take(p, &gone))
		t->ops->hostmem_free(t, gone.id, gone.va, gone.size);
	return rc;
}
