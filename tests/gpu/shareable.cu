// SPDX-License-Identifier: MIT
// shareable: memory shared between two processes by POSIX file
// descriptors, as NVIDIA's memMapIPCDrv sample and stream-ordered IPC do.
// The process forks first (CUDA is not usable in a child forked after
// cuInit), then each initialises CUDA.  The parent creates a physical
// allocation (cuMemCreate, POSIX fd handle type), maps and fills it, and a
// shareable pool with a filled allocation; it exports both
// (cuMemExportToShareableHandle, cuMemPoolExportToShareableHandle,
// cuMemPoolExportPointer) and sends the fds to the child over a Unix
// socket (SCM_RIGHTS).  The child imports, maps, sums what the parent
// wrote, adds 1 to every element with a kernel, frees what it imported and
// answers; the parent sums again.  Only the parent prints.
//
// Output: deterministic result lines, then "PASS shareable" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "check.h"

#define POOL_N	(1 << 20)	/* ints in the pool allocation */

__global__ void fill(int *p, size_t n, int base)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = base + (int)(i % 1000);
}

__global__ void add1(int *p, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += 1;
}

static long long sum(CUdeviceptr d, size_t n)
{
	std::vector<int> h(n);
	long long s = 0;

	CKD(cuMemcpyDtoH(h.data(), d, n * sizeof(int)));
	for (int v : h)
		s += v;
	return s;
}

static unsigned int blocks(size_t n)
{
	return (unsigned int)((n + 255) / 256);
}

struct msg {
	size_t size;			// bytes of the physical allocation
	CUmemPoolPtrExportData ptr;	// the pool allocation
};

struct answer {
	int rc;				// 0, or the line of the failure
	long long alloc_sum, pool_sum;	// what the child read
};

static int send_fds(int s, const void *buf, size_t n, const int *fds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { (void *)buf, n };
	struct msghdr m = {};
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * 2);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * 2);
	return sendmsg(s, &m, 0) == (ssize_t)n ? 0 : -1;
}

static int recv_fds(int s, void *buf, size_t n, int *fds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { buf, n };
	struct msghdr m = {};
	struct cmsghdr *c;

	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(s, &m, MSG_WAITALL) != (ssize_t)n)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int) * 2))
		return -1;
	memcpy(fds, CMSG_DATA(c), sizeof(int) * 2);
	return 0;
}

// the child's checks: the line of the first failure, 0 when all went well
#define CC(call)						\
	do {							\
		if ((int)(call) != 0)				\
			return __LINE__;			\
	} while (0)

static int child_work(const struct msg &m, const int *fds, struct answer *a)
{
	CUmemGenericAllocationHandle h;
	CUmemAccessDesc acc = {};
	CUmemoryPool pool;
	CUdeviceptr va, q;
	size_t n = m.size / sizeof(int);

	CC(cudaFree(0));
	CC(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fds[0],
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	close(fds[0]);
	CC(cuMemAddressReserve(&va, m.size, 0, 0, 0));
	CC(cuMemMap(va, m.size, 0, h, 0));
	CC(cuMemRelease(h));		// the mapping keeps it
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = 0;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CC(cuMemSetAccess(va, m.size, &acc, 1));
	a->alloc_sum = sum(va, n);
	add1<<<blocks(n), 256>>>((int *)va, n);
	CC(cudaGetLastError());
	CC(cudaDeviceSynchronize());
	CC(cuMemUnmap(va, m.size));
	CC(cuMemAddressFree(va, m.size));

	CC(cuMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fds[1],
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	close(fds[1]);
	CC(cuMemPoolImportPointer(&q, pool, (CUmemPoolPtrExportData *)&m.ptr));
	a->pool_sum = sum(q, POOL_N);
	add1<<<blocks(POOL_N), 256>>>((int *)q, POOL_N);
	CC(cudaGetLastError());
	CC(cudaDeviceSynchronize());
	// freed here before the exporter frees it (the driver's rule)
	CC(cuMemFree(q));
	return 0;
}

static int child(int s)
{
	struct answer a = {};
	struct msg m;
	int fds[2];

	if (recv_fds(s, &m, sizeof(m), fds))
		a.rc = -1;
	else
		a.rc = child_work(m, fds, &a);
	return write(s, &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 1;
}

int main()
{
	CUmemAllocationProp prop = {};
	CUmemPoolProps pprops = {};
	CUmemAccessDesc acc = {};
	CUmemGenericAllocationHandle h;
	CUmemoryPool pool;
	CUdeviceptr va, q;
	CUstream s;
	struct answer a = {};
	struct msg m = {};
	size_t g = 0, n;
	int sv[2], fds[2], st = 0;
	pid_t pid;

	// fork before any CUDA call: each process initialises its own
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		printf("FAIL socketpair\n");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("FAIL fork\n");
		return 1;
	}
	if (pid == 0) {
		close(sv[0]);
		_exit(child(sv[1]));
	}
	close(sv[1]);

	CK(cudaFree(0));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CKD(cuMemGetAllocationGranularity(&g, &prop,
					  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	m.size = 4 * g;
	n = m.size / sizeof(int);
	CKD(cuMemCreate(&h, m.size, &prop, 0));
	CKD(cuMemAddressReserve(&va, m.size, 0, 0, 0));
	CKD(cuMemMap(va, m.size, 0, h, 0));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CKD(cuMemSetAccess(va, m.size, &acc, 1));
	fill<<<blocks(n), 256>>>((int *)va, n, 7);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CKD(cuMemExportToShareableHandle(&fds[0], h,
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	printf("exported fd valid: %d\n", fds[0] >= 0);
	// the fd keeps the allocation; the mapping keeps it here
	CKD(cuMemRelease(h));
	printf("allocation: %zu granules, parent sum %lld\n", m.size / g,
	       sum(va, n));

	pprops.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	pprops.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	pprops.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	pprops.location.id = 0;
	CKD(cuMemPoolCreate(&pool, &pprops));
	CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CKD(cuMemAllocFromPoolAsync(&q, POOL_N * sizeof(int), pool, s));
	fill<<<blocks(POOL_N), 256, 0, (cudaStream_t)s>>>((int *)q, POOL_N, 3);
	CK(cudaGetLastError());
	// the allocation completes before the other process touches it
	CKD(cuStreamSynchronize(s));
	CKD(cuMemPoolExportToShareableHandle(&fds[1], pool,
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	CKD(cuMemPoolExportPointer(&m.ptr, q));
	printf("pool: parent sum %lld\n", sum(q, POOL_N));

	if (send_fds(sv[0], &m, sizeof(m), fds) ||
	    read(sv[0], &a, sizeof(a)) != (ssize_t)sizeof(a)) {
		waitpid(pid, &st, 0);
		printf("FAIL the child did not answer\n");
		return 1;
	}
	waitpid(pid, &st, 0);
	close(fds[0]);
	close(fds[1]);
	if (a.rc) {
		printf("FAIL child: a call at line %d of shareable.cu failed\n",
		       a.rc);
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("FAIL child exit status %d\n", st);
		return 1;
	}
	printf("child read: allocation sum %lld, pool sum %lld\n",
	       a.alloc_sum, a.pool_sum);
	long long as = sum(va, n), ps = sum(q, POOL_N);

	printf("after the child's kernels: allocation sum %lld, pool sum "
	       "%lld\n", as, ps);
	bool ok = a.alloc_sum + (long long)n == as &&
		  a.pool_sum + POOL_N == ps;

	CKD(cuMemUnmap(va, m.size));
	CKD(cuMemAddressFree(va, m.size));
	CKD(cuMemFreeAsync(q, s));
	CKD(cuStreamSynchronize(s));
	CKD(cuStreamDestroy(s));
	CKD(cuMemPoolDestroy(pool));
	if (!ok) {
		printf("FAIL the child's writes were not seen\n");
		return 1;
	}
	printf("PASS shareable\n");
	return 0;
}
