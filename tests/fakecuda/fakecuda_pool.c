// SPDX-License-Identifier: MIT
/*
 * fakecuda_pool.c: the fake driver's stream-ordered allocation and memory
 * pools (tests only, see fakecuda.h).  Everything completes at once, so
 * an asynchronous allocation is an ordinary one that remembers its pool;
 * a pool keeps its attributes and counts what is allocated from it.
 * A pool made shareable (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) takes
 * its allocations from a memfd arena (never reused); exporting the pool
 * gives a duplicate of the memfd, importing maps it; an exported pointer
 * is the arena's id and the allocation's offset and size.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakecuda.h"

#define ARENA_SIZE	(64u << 20)
#define ARENA_HEAD	4096u	/* the arena's id (8 bytes), then nothing */
#define PTR_MAGIC	"FAKEPTR"

static struct fpool default_pool;
static struct fpool *current_pool;

static struct fpool *pool_of(CUmemoryPool p)
{
	if (p == (CUmemoryPool)&default_pool)
		return &default_pool;
	return (struct fpool *)fc_obj_find(p, O_POOL);
}

static CUresult pool_alloc(CUdeviceptr *dptr, size_t size,
			   struct fpool *pool, CUstream s)
{
	struct range *r;
	CUresult rc;

	NEED_CTX();
	if (!dptr || !pool)
		return CUDA_ERROR_INVALID_VALUE;
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	if (pool->shared) {
		size_t n = (size + 255) & ~(size_t)255;

		if (!size || n > ARENA_SIZE - pool->next)
			return CUDA_ERROR_OUT_OF_MEMORY;
		r = fc_range_add((uintptr_t)(pool->base + pool->next), size,
				 R_DEVICE);
		if (!r)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*dptr = (CUdeviceptr)(uintptr_t)(pool->base + pool->next);
		pool->next += n;
		r->ctx = fc_cur;
		r->charged = size;
		fc_mem_used += size;
	} else {
		rc = fc_dev_alloc(dptr, size);
		if (rc)
			return rc;
		r = fc_range_at((uintptr_t)*dptr, R_DEVICE);
	}
	r->pool = pool;
	pool->used += size;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
	return pool_alloc(dptr, size,
			  current_pool ? current_pool : &default_pool, s);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size,
				 CUmemoryPool pool, CUstream s)
{
	return pool_alloc(dptr, size, pool_of(pool), s);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	struct range *r;
	CUresult rc;

	NEED_CTX();
	rc = fc_stream_ok(s);
	if (rc)
		return rc;
	r = fc_range_at((uintptr_t)dptr, R_DEVICE);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	fc_range_del(r);
	return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	struct fpool *p;

	NEED_INIT();
	if (!pool || !props ||
	    props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    props->location.id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE &&
	    props->handleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	p = calloc(1, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p->fd = -1;
	if (props->handleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		uint64_t id = 0;
		void *m;

		p->fd = memfd_create("fake-pool", MFD_CLOEXEC);
		if (p->fd < 0 || ftruncate(p->fd, ARENA_SIZE) ||
		    getrandom(&id, sizeof(id), 0) != sizeof(id) ||
		    (m = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
			      MAP_SHARED, p->fd, 0)) == MAP_FAILED) {
			if (p->fd >= 0)
				close(p->fd);
			free(p);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		p->shared = true;
		p->base = m;
		p->next = ARENA_HEAD;
		memcpy(p->base, &id, sizeof(id));
	}
	fc_obj_add(&p->o, O_POOL, NULL);
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolExportToShareableHandle(void *out, CUmemoryPool pool,
					  CUmemAllocationHandleType type,
					  unsigned long long flags)
{
	struct fpool *p = pool_of(pool);
	int fd;

	NEED_INIT();
	if (!out || !p || flags ||
	    type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !p->shared)
		return CUDA_ERROR_INVALID_VALUE;
	fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)out = fd;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool, void *os,
					    CUmemAllocationHandleType type,
					    unsigned long long flags)
{
	int fd = (int)(uintptr_t)os;
	struct fpool *p;
	struct stat st;
	void *m;

	NEED_INIT();
	if (!pool || flags || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size != (off_t)ARENA_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		free(p);
		return CUDA_ERROR_INVALID_VALUE;
	}
	p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	p->shared = true;
	p->base = m;
	p->next = ARENA_SIZE;	/* an importer allocates nothing from it */
	fc_obj_add(&p->o, O_POOL, NULL);
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *out, CUdeviceptr ptr)
{
	struct range *r;
	uint64_t off, size;

	NEED_INIT();
	r = fc_range_at((uintptr_t)ptr, R_DEVICE);
	if (!out || !r || !r->pool || !r->pool->shared)
		return CUDA_ERROR_INVALID_VALUE;
	off = (uint64_t)((uint8_t *)(uintptr_t)ptr - r->pool->base);
	size = r->size;
	memset(out, 0, sizeof(*out));
	memcpy(out->reserved, PTR_MAGIC, 8);
	memcpy(out->reserved + 8, r->pool->base, 8);	/* the arena's id */
	memcpy(out->reserved + 16, &off, 8);
	memcpy(out->reserved + 24, &size, 8);
	return CUDA_SUCCESS;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr, CUmemoryPool pool,
				CUmemPoolPtrExportData *d)
{
	struct fpool *p = pool_of(pool);
	uint64_t off, size;
	struct range *r;

	NEED_CTX();
	if (!ptr || !p || !d || !p->shared ||
	    memcmp(d->reserved, PTR_MAGIC, 8) ||
	    memcmp(d->reserved + 8, p->base, 8))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&off, d->reserved + 16, 8);
	memcpy(&size, d->reserved + 24, 8);
	if (off < ARENA_HEAD || off > ARENA_SIZE || !size ||
	    size > ARENA_SIZE - off)
		return CUDA_ERROR_INVALID_VALUE;
	if (fc_range_find((uintptr_t)(p->base + off), size))
		return CUDA_ERROR_ALREADY_MAPPED;
	r = fc_range_add((uintptr_t)(p->base + off), size, R_DEVICE);
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->ctx = fc_cur;
	*ptr = (CUdeviceptr)(uintptr_t)(p->base + off);
	return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	struct fpool *p = (struct fpool *)fc_obj_find(pool, O_POOL);

	NEED_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	/* allocations outlive the pool (the real driver's rule) */
	for (size_t i = 0; i < fc_nranges; i++)
		if (fc_ranges[i].pool == p)
			fc_ranges[i].pool = NULL;
	if (current_pool == p)
		current_pool = NULL;
	/* a shareable pool's arena stays mapped for its allocations */
	if (p->shared)
		close(p->fd);
	fc_obj_unlink(&p->o);
	free(p);
	return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
			       void *value)
{
	struct fpool *p = pool_of(pool);

	NEED_INIT();
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] =
			*(int *)value;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->threshold = *(cuuint64_t *)value;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(cuuint64_t *)value)
			return CUDA_ERROR_INVALID_VALUE;
		p->used_high = p->used;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
			       void *value)
{
	struct fpool *p = pool_of(pool);

	NEED_INIT();
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value =
			p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = p->threshold;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = p->used;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = p->used_high;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
	(void)keep;
	NEED_INIT();
	return pool_of(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
			    size_t count)
{
	NEED_INIT();
	if (!pool_of(pool) || (count && !map))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    map[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool,
			    CUmemLocation *loc)
{
	NEED_INIT();
	if (!flags || !pool_of(pool) || !loc)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id == 0 ?
			 CU_MEM_ACCESS_FLAGS_PROT_READWRITE :
			 CU_MEM_ACCESS_FLAGS_PROT_NONE;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)&default_pool;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CHECK_DEV(dev);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)(current_pool ? current_pool : &default_pool);
	return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	struct fpool *p = pool_of(pool);

	CHECK_DEV(dev);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	current_pool = p == &default_pool ? NULL : p;
	return CUDA_SUCCESS;
}
