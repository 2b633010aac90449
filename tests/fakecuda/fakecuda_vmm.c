// SPDX-License-Identifier: MIT
/*
 * fakecuda_vmm.c: the fake driver's virtual memory management (tests
 * only, see fakecuda.h).  A physical allocation is a memfd of its size; a
 * reservation is inaccessible address space of the process; a map puts
 * the memfd's pages there (MAP_FIXED) and makes the range device memory
 * for the fake's checks; an unmap makes it inaccessible again.  The
 * granularity is the page size.  A physical allocation created with
 * CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR exports a duplicate of its
 * memfd; importing such an fd (another process's) makes an allocation of
 * the same pages.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakecuda.h"

#define GRAN 4096u
#define MAX_PHYS 1024

struct phys {
	int fd;
	size_t size;
	unsigned int refs;
	CUmemAllocationProp prop;
};

static struct phys phys[MAX_PHYS];	/* handle = index + 1 */

static struct phys *phys_of(CUmemGenericAllocationHandle h)
{
	if (!h || h > MAX_PHYS || !phys[h - 1].refs)
		return NULL;
	return &phys[h - 1];
}

bool fc_phys_ok(CUmemGenericAllocationHandle h, unsigned long long off)
{
	const struct phys *p = phys_of(h);

	return p && off < p->size;
}

CUresult cuMemGetAllocationGranularity(size_t *g,
				       const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	NEED_INIT();
	(void)option;
	if (!g || !prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	*g = GRAN;
	return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	NEED_CTX();
	if (!h || !prop || flags || !size || size % GRAN ||
	    prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    prop->location.id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (size > FAKE_TOTAL_MEM - fc_mem_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < MAX_PHYS; i++) {
		if (phys[i].refs)
			continue;
		phys[i].fd = memfd_create("fake-vmm", MFD_CLOEXEC);
		if (phys[i].fd < 0 || ftruncate(phys[i].fd, (off_t)size)) {
			if (phys[i].fd >= 0)
				close(phys[i].fd);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		phys[i].size = size;
		phys[i].refs = 1;
		phys[i].prop = *prop;
		fc_mem_used += size;
		*h = (CUmemGenericAllocationHandle)(i + 1);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	struct phys *p = phys_of(h);

	NEED_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (--p->refs == 0) {
		/* pages still mapped stay until unmapped (the fd's mappings) */
		close(p->fd);
		fc_mem_used -= p->size;
	}
	return CUDA_SUCCESS;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h,
				     void *addr)
{
	struct range *r;

	NEED_INIT();
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	r = fc_range_find((uintptr_t)addr, 1);
	if (!r || r->kind != R_DEVICE || !r->vmm || !phys_of(r->vmm))
		return CUDA_ERROR_INVALID_VALUE;
	phys[r->vmm - 1].refs++;
	*h = r->vmm;
	return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
						CUmemGenericAllocationHandle h)
{
	struct phys *p = phys_of(h);

	NEED_INIT();
	if (!prop || !p)
		return CUDA_ERROR_INVALID_VALUE;
	*prop = p->prop;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align,
			     CUdeviceptr addr, unsigned long long flags)
{
	void *p;

	NEED_INIT();
	(void)align;
	if (!ptr || !size || size % GRAN || flags)
		return CUDA_ERROR_INVALID_VALUE;
	/* addr is a wish, as the driver's: taken where it is free here */
	p = MAP_FAILED;
	if (addr && addr % GRAN == 0)
		p = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				 MAP_FIXED_NOREPLACE, -1, 0);
	if (p != MAP_FAILED && p != (void *)(uintptr_t)addr) {
		munmap(p, size);	/* a kernel without NOREPLACE */
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	NEED_INIT();
	if (!ptr || !size || fc_range_find((uintptr_t)ptr, size))
		return CUDA_ERROR_INVALID_VALUE;	/* still mapped */
	munmap((void *)(uintptr_t)ptr, size);
	return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle h, unsigned long long flags)
{
	struct phys *p = phys_of(h);
	struct range *r;
	void *m;

	NEED_CTX();
	if (!p || flags || !size || size % GRAN || offset % GRAN ||
	    offset > p->size || size > p->size - offset ||
	    fc_range_find((uintptr_t)ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	m = mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, p->fd, (off_t)offset);
	if (m == MAP_FAILED)
		return CUDA_ERROR_INVALID_VALUE;
	r = fc_range_add((uintptr_t)ptr, size, R_DEVICE);
	if (!r) {
		mmap(m, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED | MAP_NORESERVE, -1, 0);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->ctx = fc_owner();
	r->vmm = h;
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct range *r;

	NEED_INIT();
	r = fc_range_at((uintptr_t)ptr, R_DEVICE);
	if (!r || !r->vmm || r->size != size)
		return CUDA_ERROR_INVALID_VALUE;
	mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE |
	     MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	fc_range_del(r);
	return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			const CUmemAccessDesc *desc, size_t count)
{
	NEED_INIT();
	if (!desc || !count || !fc_range_find((uintptr_t)ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    desc[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *loc,
			CUdeviceptr ptr)
{
	NEED_INIT();
	if (!flags || !loc || !fc_range_find((uintptr_t)ptr, 1))
		return CUDA_ERROR_INVALID_VALUE;
	*flags = loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id == 0 ?
			 CU_MEM_ACCESS_FLAGS_PROT_READWRITE : 0;
	return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
				      CUmemAllocationHandleType type,
				      unsigned long long flags)
{
	struct phys *p = phys_of(h);
	int fd;

	NEED_INIT();
	if (!out || !p || flags ||
	    type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
	    !(p->prop.requestedHandleTypes &
	      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return CUDA_ERROR_INVALID_VALUE;
	fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)out = fd;
	return CUDA_SUCCESS;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h,
					void *os, CUmemAllocationHandleType type)
{
	int fd = (int)(uintptr_t)os;
	struct stat st;

	NEED_INIT();
	if (!h || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size % GRAN)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < MAX_PHYS; i++) {
		if (phys[i].refs)
			continue;
		phys[i].fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (phys[i].fd < 0)
			return CUDA_ERROR_OUT_OF_MEMORY;
		phys[i].size = (size_t)st.st_size;
		phys[i].refs = 1;
		phys[i].prop = (CUmemAllocationProp){
			.type = CU_MEM_ALLOCATION_TYPE_PINNED,
			.requestedHandleTypes =
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
			.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
		};
		fc_mem_used += phys[i].size;
		*h = (CUmemGenericAllocationHandle)(i + 1);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_OUT_OF_MEMORY;
}
