// SPDX-License-Identifier: MIT
/*
 * shareable: shareable memory handles (POSIX file descriptors) between two
 * processes of one guest, and not between guests.
 *
 *   shareable            a child of the same user imports the parent's
 *                        physical allocation and pool (fds passed over a
 *                        Unix socket with SCM_RIGHTS), maps and reads the
 *                        parent's data, writes its own, the parent sees it
 *   shareable other UID  the child becomes UID first (needs root): its
 *                        worker is of another IPC domain and is refused
 *
 * The child is forked before any CUDA call, so each process has a channel
 * and a worker of its own.  Also: the exported fd holds a token, not the
 * driver's fd; a forged fd (a memfd of garbage, a memfd with our magic
 * and a made-up token, a pipe) is refused; fabric handles are refused;
 * the parent releases its allocation handle before the child imports (the
 * exported fd keeps it).  Prints "PASS shareable ..." or "FAIL ..." (or
 * "SKIP ..." when the other user cannot reach the daemon) and exits 0/1.
 */
#include <cuda.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N	4096u		/* bytes of the shared pool allocation */

struct msg {
	size_t size;			/* of the physical allocation */
	CUmemPoolPtrExportData ptr;	/* the pool allocation */
};

struct result {
	int init;		/* -1: no daemon for this user */
	int vmm_import;
	int vmm_read;		/* 0: the parent's bytes were seen */
	int pool_import;
	int forged_ptr;
	int ptr_import;
	int ptr_read;
};

static int send_fds(int s, const void *buf, size_t n, const int *fds, int nfd)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { (void *)buf, n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * nfd) };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * nfd);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * nfd);
	return sendmsg(s, &m, 0) == (ssize_t)n ? 0 : -1;
}

static int recv_fds(int s, void *buf, size_t n, int *fds, int nfd)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { buf, n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (recvmsg(s, &m, MSG_WAITALL) != (ssize_t)n)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int) * nfd))
		return -1;
	memcpy(fds, CMSG_DATA(c), sizeof(int) * nfd);
	return 0;
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7u + seed);
}

static int check(const unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(i * 7u + seed))
			return 1;
	return 0;
}

/* map a physical allocation at a new reservation, read-write */
static CUresult map_rw(CUmemGenericAllocationHandle h, size_t size,
		       CUdeviceptr *p)
{
	CUmemAccessDesc acc = { { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
				CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUresult rc = cuMemAddressReserve(p, size, 0, 0, 0);

	if (!rc)
		rc = cuMemMap(*p, size, 0, h, 0);
	if (!rc)
		rc = cuMemSetAccess(*p, size, &acc, 1);
	return rc;
}

static int child(int s, long uid)
{
	struct result res = { 0 };
	CUmemGenericAllocationHandle h = 0;
	CUmemPoolPtrExportData forged;
	CUmemoryPool pool = NULL;
	CUdeviceptr p = 0, q = 0;
	unsigned char *buf;
	struct msg m;
	CUcontext c;
	CUdevice d;
	int fds[2];

	if (recv_fds(s, &m, sizeof(m), fds, 2))
		return 2;
	if (uid >= 0 && (setgroups(0, NULL) || setgid((gid_t)uid) ||
			 setuid((uid_t)uid)))
		return 3;
	buf = malloc(m.size > N ? m.size : N);
	if (!buf)
		return 4;
	if (cuInit(0) || cuDeviceGet(&d, 0) ||
	    cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) {
		res.init = -1;
		goto out;
	}
	res.vmm_read = res.ptr_read = -1;
	res.vmm_import = (int)cuMemImportFromShareableHandle(
		&h, (void *)(uintptr_t)fds[0],
		CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	if (res.vmm_import == CUDA_SUCCESS) {
		res.vmm_read = (int)map_rw(h, m.size, &p);
		if (!res.vmm_read)
			res.vmm_read = (int)cuMemcpyDtoH(buf, p, m.size);
		if (!res.vmm_read)
			res.vmm_read = check(buf, m.size, 1) ? 1000 : 0;
		fill(buf, m.size, 2);
		if (!res.vmm_read)
			res.vmm_read = (int)cuMemcpyHtoD(p, buf, m.size);
		if (!res.vmm_read && (cuMemUnmap(p, m.size) ||
				      cuMemAddressFree(p, m.size) ||
				      cuMemRelease(h)))
			res.vmm_read = 1001;
	}
	res.pool_import = (int)cuMemPoolImportFromShareableHandle(
		&pool, (void *)(uintptr_t)fds[1],
		CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	if (res.pool_import == CUDA_SUCCESS) {
		forged = m.ptr;
		forged.reserved[10] ^= 0x5a;
		res.forged_ptr = (int)cuMemPoolImportPointer(&q, pool,
							      &forged);
		res.ptr_import = (int)cuMemPoolImportPointer(&q, pool, &m.ptr);
		if (res.ptr_import == CUDA_SUCCESS) {
			res.ptr_read = (int)cuMemcpyDtoH(buf, q, N);
			if (!res.ptr_read)
				res.ptr_read = check(buf, N, 3) ? 1000 : 0;
			fill(buf, N, 4);
			if (!res.ptr_read)
				res.ptr_read = (int)cuMemcpyHtoD(q, buf, N);
			if (!res.ptr_read && cuMemFree(q))
				res.ptr_read = 1001;
		}
		if (cuMemPoolDestroy(pool) && !res.ptr_read)
			res.ptr_read = 1002;
	}
out:
	free(buf);
	return write(s, &res, sizeof(res)) == sizeof(res) ? 0 : 5;
}

static int forged_fd(const void *bytes, size_t n)
{
	int fd = memfd_create("forged", 0);

	if (fd >= 0 && write(fd, bytes, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return fd;
}

#define EXPECT(cond, ...)					\
	do {							\
		if (!(cond)) {					\
			printf("FAIL shareable: " __VA_ARGS__);	\
			printf("\n");				\
			bad = 1;				\
		}						\
	} while (0)

int main(int argc, char **argv)
{
	long uid = argc > 2 && !strcmp(argv[1], "other") ? atol(argv[2]) : -1;
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
	};
	CUmemPoolProps pprops = {
		.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
		.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
	};
	CUmemGenericAllocationHandle h, h2;
	struct result res = { 0 };
	CUmemoryPool pool, pool2;
	CUdeviceptr p = 0, q = 0;
	int sv[2], fds[2], pfd[2], fd, st = 0, bad = 0;
	unsigned char *buf, junk[64];
	struct msg m = { 0 };
	size_t gran = 0;
	CUcontext c;
	CUdevice dev;
	CUresult rc;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(child(sv[1], uid));
	}
	close(sv[1]);
	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&c, dev) || cuCtxSetCurrent(c) ||
	    cuMemGetAllocationGranularity(&gran, &prop,
					  CU_MEM_ALLOC_GRANULARITY_MINIMUM)) {
		printf("FAIL shareable: no context\n");
		return 1;
	}
	m.size = gran * 2;
	buf = malloc(m.size > N ? m.size : N);
	if (!buf)
		return 1;

	/* a physical allocation with the parent's bytes, exported */
	fill(buf, m.size, 1);
	if (cuMemCreate(&h, m.size, &prop, 0) || map_rw(h, m.size, &p) ||
	    cuMemcpyHtoD(p, buf, m.size)) {
		printf("FAIL shareable: no allocation to export\n");
		return 1;
	}
	rc = cuMemExportToShareableHandle(&fds[0], h,
					  CU_MEM_HANDLE_TYPE_FABRIC, 0);
	EXPECT(rc == CUDA_ERROR_NOT_SUPPORTED, "a fabric export gave %d",
	       (int)rc);
	rc = cuMemExportToShareableHandle(&fds[0], h,
					  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
					  0);
	if (rc) {
		printf("FAIL shareable: export: %d\n", (int)rc);
		return 1;
	}
	memset(junk, 0, sizeof(junk));
	EXPECT(pread(fds[0], junk, sizeof(junk), 0) == (ssize_t)sizeof(junk) &&
	       !memcmp(junk, "XGPUSHR", 8), "the fd does not hold a token");
	/* the exported fd keeps the allocation: the handle may go now */
	EXPECT(cuMemRelease(h) == CUDA_SUCCESS, "release after export");

	/* forged fds */
	memset(junk, 0xa5, sizeof(junk));
	fd = forged_fd(junk, sizeof(junk));
	rc = cuMemImportFromShareableHandle(&h2, (void *)(uintptr_t)fd,
					    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	EXPECT(rc == CUDA_ERROR_INVALID_VALUE, "a memfd of garbage gave %d",
	       (int)rc);
	close(fd);
	memcpy(junk, "XGPUSHR", 8);
	fd = forged_fd(junk, sizeof(junk));
	rc = cuMemImportFromShareableHandle(&h2, (void *)(uintptr_t)fd,
					    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	EXPECT(rc == CUDA_ERROR_INVALID_VALUE, "a made-up token gave %d",
	       (int)rc);
	rc = cuMemPoolImportFromShareableHandle(&pool2, (void *)(uintptr_t)fd,
					CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
					0);
	EXPECT(rc == CUDA_ERROR_INVALID_VALUE,
	       "a made-up pool token gave %d", (int)rc);
	close(fd);
	if (pipe(pfd) == 0) {
		rc = cuMemImportFromShareableHandle(&h2,
				(void *)(uintptr_t)pfd[0],
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
		EXPECT(rc == CUDA_ERROR_INVALID_VALUE, "a pipe gave %d",
		       (int)rc);
		rc = cuMemPoolImportFromShareableHandle(&pool2,
				(void *)(uintptr_t)pfd[1],
				CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
		EXPECT(rc == CUDA_ERROR_INVALID_VALUE,
		       "a pipe as a pool gave %d", (int)rc);
		close(pfd[0]);
		close(pfd[1]);
	}

	/* a shareable pool, an allocation from it with the parent's bytes */
	pprops.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
	rc = cuMemPoolCreate(&pool, &pprops);
	EXPECT(rc == CUDA_ERROR_NOT_SUPPORTED, "a fabric pool gave %d",
	       (int)rc);
	pprops.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	fill(buf, N, 3);
	if (cuMemPoolCreate(&pool, &pprops) ||
	    cuMemAllocFromPoolAsync(&q, N, pool, NULL) ||
	    cuMemcpyHtoD(q, buf, N) || cuCtxSynchronize() ||
	    cuMemPoolExportToShareableHandle(&fds[1], pool,
					CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
					0) ||
	    cuMemPoolExportPointer(&m.ptr, q)) {
		printf("FAIL shareable: no pool to export\n");
		return 1;
	}
	EXPECT(!memcmp(m.ptr.reserved, "XGPUPTR", 8),
	       "the pointer's export data is not a token");

	if (send_fds(sv[0], &m, sizeof(m), fds, 2) ||
	    read(sv[0], &res, sizeof(res)) != (ssize_t)sizeof(res)) {
		waitpid(pid, &st, 0);
		printf("FAIL shareable: the child said nothing (exit %d)\n",
		       WEXITSTATUS(st));
		return 1;
	}
	waitpid(pid, &st, 0);
	close(fds[0]);
	close(fds[1]);
	if (uid >= 0 && res.init == -1) {
		printf("SKIP shareable other: user %ld cannot reach the "
		       "daemon\n", uid);
		free(buf);
		return bad;
	}
	if (uid < 0) {
		EXPECT(res.vmm_import == CUDA_SUCCESS,
		       "the child could not import the allocation (%d)",
		       res.vmm_import);
		EXPECT(res.vmm_read == 0, "the child's map/read/write: %d",
		       res.vmm_read);
		EXPECT(res.pool_import == CUDA_SUCCESS,
		       "the child could not import the pool (%d)",
		       res.pool_import);
		EXPECT(res.forged_ptr == CUDA_ERROR_INVALID_VALUE,
		       "a forged pointer token gave %d", res.forged_ptr);
		EXPECT(res.ptr_import == CUDA_SUCCESS,
		       "the child could not import the pointer (%d)",
		       res.ptr_import);
		EXPECT(res.ptr_read == 0, "the child's pool read/write: %d",
		       res.ptr_read);
		/* the parent sees the child's bytes */
		EXPECT(!cuMemcpyDtoH(buf, p, m.size) && !check(buf, m.size, 2),
		       "the child's writes to the allocation are not seen");
		EXPECT(!cuMemcpyDtoH(buf, q, N) && !check(buf, N, 4),
		       "the child's writes to the pool are not seen");
	} else {
		EXPECT(res.vmm_import == CUDA_ERROR_INVALID_VALUE,
		       "another user's import gave %d, not "
		       "CUDA_ERROR_INVALID_VALUE", res.vmm_import);
		EXPECT(res.pool_import == CUDA_ERROR_INVALID_VALUE,
		       "another user's pool import gave %d, not "
		       "CUDA_ERROR_INVALID_VALUE", res.pool_import);
	}
	EXPECT(cuMemUnmap(p, m.size) == CUDA_SUCCESS &&
	       cuMemAddressFree(p, m.size) == CUDA_SUCCESS &&
	       cuMemFreeAsync(q, NULL) == CUDA_SUCCESS &&
	       cuCtxSynchronize() == CUDA_SUCCESS &&
	       cuMemPoolDestroy(pool) == CUDA_SUCCESS, "cleanup");
	free(buf);
	if (!bad)
		printf("PASS shareable%s\n", uid < 0 ? "" : " other");
	return bad;
}
