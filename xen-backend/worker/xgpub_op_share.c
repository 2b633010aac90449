// SPDX-License-Identifier: MIT
/*
 * xgpub_op_share.c: shareable memory handles between processes of one
 * guest: cuMemExportToShareableHandle / cuMemImportFromShareableHandle of
 * physical allocations, cuMemPoolExportToShareableHandle /
 * cuMemPoolImportFromShareableHandle of pools, cuMemPoolExportPointer /
 * cuMemPoolImportPointer of pool allocations (NVIDIA's memMapIPCDrv and
 * stream-ordered IPC).
 *
 * The guest never gets the worker's file descriptor.  Export: the driver
 * exports a POSIX fd (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, the only
 * type served), this worker keeps it open and registers it in the IPC
 * registry (xgpub_ipc.h) under a random token, as XGPUB_IPC_VMM_FD or
 * XGPUB_IPC_POOL_FD with this worker's pid and the fd's number; the guest
 * gets XGPUIF_SHARE_MAGIC and the token, which its library wraps in a
 * memfd of its own (the program's "shareable handle", passed over
 * SCM_RIGHTS like any fd).  Import: the guest sends the token back; a
 * worker of the same IPC domain (processes of one Xen domain, or local
 * clients of one user) asks the daemon, which holds the registry, finds
 * the entry for the asking worker's guest, takes a duplicate of the
 * exporter's fd with pidfd_getfd and hands it over (xgpub_broker.h:
 * sandboxed workers cannot take one another's; a worker run inline by a
 * test dups its own; where the kernel lacks pidfd_getfd,
 * CUDA_ERROR_NOT_SUPPORTED); the worker imports it
 * into the driver and closes the duplicate.  The allocation or pool is
 * then an ordinary handle of the importing guest.  A token of another
 * domain, a forged one, or one whose exporter is gone is
 * CUDA_ERROR_INVALID_VALUE, as for IPC tokens.
 *
 * Lifetime: an exported fd keeps its allocation alive in the driver (a
 * program may release its handle before the other process imports), so
 * the worker keeps it until the worker ends: its registry entries go and
 * its fds are closed at teardown.  Exporting the same allocation or pool
 * again gives the same token; a physical allocation whose last handle the
 * guest released while exported stays charged to the guest's quota (the
 * fd still holds it) until the worker ends.  An import is not charged
 * (the exporter's allocation is).
 *
 * cuMemPoolExportPointer's 64-byte CUmemPoolPtrExportData is the
 * driver's opaque data: it too stays in Dom0 behind a token
 * (XGPUIF_PTR_MAGIC, registry kind XGPUB_IPC_POOL_PTR).  An imported
 * pointer is the guest's to free (cuMemFree / cuMemFreeAsync), or freed
 * at teardown, uncharged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "xgpub_broker.h"
#include "xgpub_worker.h"

#define XGPUB_MAX_SHARES	4096u

/* a registered fd of this worker's for obj (NULL once the guest let obj
 * go: the fd stays, no new export finds it) */
static struct xgpub_share *share_find(struct xgpub_worker *w, int kind,
				      void *obj)
{
	for (uint32_t i = 0; i < w->nshares; i++)
		if (w->shares[i].obj == obj && w->shares[i].kind == kind)
			return &w->shares[i];
	return NULL;
}

static void give_token(const char *magic, const uint8_t token[16],
		       struct xgpuif_ipc_handle *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->bytes, magic, 8);
	memcpy(h->bytes + 8, token, 16);
}

/*
 * Register fd (the driver's export of obj, now this worker's) under a
 * new token; the guest's handle in h.  The fd is closed on failure.
 */
static int share_add(struct xgpub_worker *w, int kind, void *obj, int fd,
		     struct xgpuif_ipc_handle *h)
{
	struct xgpub_ipc_fd real = { (int32_t)getpid(), fd };
	uint8_t bytes[64] = { 0 };
	struct xgpub_share *s;

	s = xgpub_grow(w->shares, w->nshares, &w->cap_shares, sizeof(*s), 16,
		       XGPUB_MAX_SHARES);
	if (!s) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	w->shares = s;
	/*
	 * The daemon takes our fds for an importer (pidfd_getfd): as root
	 * it may anyway; a daemon without CAP_SYS_PTRACE under Yama's
	 * ptrace_scope 1 may as our declared ptracer.  Without Yama this
	 * fails and changes nothing.
	 */
	if (!w->nshares)
		prctl(PR_SET_PTRACER, (unsigned long)getppid(), 0, 0, 0);
	s = &w->shares[w->nshares];
	memcpy(bytes, &real, sizeof(real));
	if (xgpub_ipc_export(kind, w->t->ipc_domain, bytes, s->token)) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	s->obj = obj;
	s->kind = kind;
	s->fd = fd;
	w->nshares++;
	give_token(XGPUIF_SHARE_MAGIC, s->token, h);
	return 0;
}

void xgpub_share_forget(struct xgpub_worker *w, void *obj)
{
	for (uint32_t i = 0; i < w->nshares; i++)
		if (w->shares[i].obj == obj)
			w->shares[i].obj = NULL;
}

bool xgpub_share_exported(struct xgpub_worker *w, void *obj)
{
	return share_find(w, XGPUB_IPC_VMM_FD, obj) != NULL;
}

void xgpub_share_teardown(struct xgpub_worker *w)
{
	/*
	 * The registry entries first: no importer gets a closed fd, or the
	 * number reused.  If the daemon did not answer, the fds stay open
	 * until the worker ends (the daemon forgets its entries once it
	 * reaped it).
	 */
	if (w->nshares && xgpub_ipc_forget_mine())
		w->nshares = 0;
	for (uint32_t i = 0; i < w->nshares; i++)
		close(w->shares[i].fd);
	free(w->shares);
	w->shares = NULL;
	w->nshares = w->cap_shares = 0;
}

/* a duplicate of the fd behind a guest's token of kind, in *fd */
static int take_fd(struct xgpub_worker *w, int kind,
		   const struct xgpuif_ipc_handle *h, int *fd)
{
	int got;

	if (memcmp(h->bytes, XGPUIF_SHARE_MAGIC, 8))
		return CUDA_ERROR_INVALID_VALUE;
	/* the daemon looks the token up for this worker's guest and takes
	 * the exporter's descriptor (xgpub_broker.h) */
	got = xgpub_ipc_take_fd(kind, w->t->ipc_domain, h->bytes + 8);
	if (got == -ENOSYS) {
		xgpub_err("shareable handle: the daemon cannot take the "
			  "exporting worker's descriptor (pidfd_getfd: "
			  "Linux 5.6 or later is needed)");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (got == -ETIMEDOUT || got == -EPROTO) {
		xgpub_err("shareable handle: no answer from the daemon (%s)",
			  strerror(-got));
		return CUDA_ERROR_UNKNOWN;
	}
	if (got < 0)
		return CUDA_ERROR_INVALID_VALUE;
	*fd = got;
	return 0;
}

/*
 * VMM_EXPORT and POOL_EXPORT: the guest's token for an fd exported of the
 * handle's object (which XGPUB_IPC_VMM_FD: a physical allocation;
 * XGPUB_IPC_POOL_FD: a pool): the one it got before, or the driver's new
 * export registered.
 */
int xgpub_h_share_export(struct xgpub_worker *w,
			 const struct xgpuif_share_export_args *a,
			 struct xgpub_hentry *handle,
			 struct xgpuif_ipc_handle *r, int which)
{
	const CUmemAllocationHandleType type =
		CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	void *obj = handle->obj;
	struct xgpub_share *s = share_find(w, which, obj);
	int fd = -1, rc;

	if (s) {
		give_token(XGPUIF_SHARE_MAGIC, s->token, r);
		return 0;
	}
	if (which == XGPUB_IPC_VMM_FD)
		rc = w->D->cuMemExportToShareableHandle(
			&fd, (CUmemGenericAllocationHandle)(uintptr_t)obj,
			type, a->flags);
	else
		rc = w->D->cuMemPoolExportToShareableHandle(&fd, obj, type,
							     a->flags);
	if (rc)
		return rc;
	if (fd < 0)
		return CUDA_ERROR_UNKNOWN;
	return share_add(w, which, obj, fd, r);
}

/*
 * The driver's import (into *out: a CUmemGenericAllocationHandle for
 * XGPUB_IPC_VMM_FD, a CUmemoryPool for XGPUB_IPC_POOL_FD) of the fd
 * behind the guest's token h; the duplicate fd is closed.
 */
static int share_import(struct xgpub_worker *w, int kind,
			const struct xgpuif_ipc_handle *h, void *out)
{
	const CUmemAllocationHandleType type =
		CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	void *fdv;
	int fd, rc = take_fd(w, kind, h, &fd);

	if (rc)
		return rc;
	fdv = (void *)(uintptr_t)fd;
	if (kind == XGPUB_IPC_VMM_FD)
		rc = w->D->cuMemImportFromShareableHandle(out, fdv, type);
	else
		rc = w->D->cuMemPoolImportFromShareableHandle(out, fdv, type,
							       0);
	close(fd);
	return rc;
}

/* ---- physical allocations -------------------------------------------- */

XGPUB_HANDLER(VMM_IMPORT)
{
	CUmemGenericAllocationHandle h;
	int rc = share_import(w, XGPUB_IPC_VMM_FD, a, &h);

	if (rc)
		return rc;
	/* the driver may give a handle the guest already holds: one more
	 * reference, released by one more cuMemRelease */
	if (xgpub_vmem_ref(w, h, &r->handle))
		return 0;
	/* the exporter is charged */
	return xgpub_vmem_keep(w, h, 0, &r->handle);
}

/* ---- pools ------------------------------------------------------------ */

XGPUB_HANDLER(POOL_IMPORT)
{
	CUmemoryPool p;
	int rc = share_import(w, XGPUB_IPC_POOL_FD, a, &p);

	return rc ? rc : xgpub_keep_named(w, XGPUB_H_POOL, p, NULL, &r->pool);
}

XGPUB_HANDLER(POOL_EXPORT_PTR)
{
	CUmemPoolPtrExportData d;
	uint8_t token[16];
	int rc;

	/* only the start of an allocation of this guest's */
	if (!xgpub_alloc_has(w, a->dptr))
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d, 0, sizeof(d));
	rc = w->D->cuMemPoolExportPointer(&d, a->dptr);
	if (rc)
		return rc;
	if (xgpub_ipc_export(XGPUB_IPC_POOL_PTR, w->t->ipc_domain,
			     d.reserved, token))
		return CUDA_ERROR_OUT_OF_MEMORY;
	give_token(XGPUIF_PTR_MAGIC, token, r);
	return 0;
}

XGPUB_HANDLER(POOL_IMPORT_PTR)
{
	CUmemPoolPtrExportData d;
	CUdeviceptr p = 0, base = 0;
	size_t size = 0;
	int rc;

	if (memcmp(a->bytes, XGPUIF_PTR_MAGIC, 8) ||
	    xgpub_ipc_lookup(XGPUB_IPC_POOL_PTR, w->t->ipc_domain,
			     a->bytes + 8, d.reserved))
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuMemPoolImportPointer(&p, pool->obj, &d);
	if (rc)
		return rc;
	/* the guest frees it like its own allocations; not charged */
	if (xgpub_alloc_add(w, p, 0)) {
		w->D->cuMemFree_v2(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	w->mem_used -= w->allocs[w->nallocs - 1].size;
	w->allocs[w->nallocs - 1].size = 0;
	if (w->D->cuMemGetAddressRange_v2(&base, &size, p) || base != p)
		size = 0;
	r->dptr = p;
	r->size = size;
	return 0;
}
