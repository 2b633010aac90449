// SPDX-License-Identifier: MIT
/*
 * xgpub_op_ipc.c: IPC memory handles between processes of one guest
 * (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle), as
 * PyTorch's multiprocessing shares tensors.
 *
 * The guest gets a token, never the driver's handle (xgpub_ipc.h): another
 * worker opens it only for a guest of the same IPC domain, so memory
 * never passes between guests.  Opened mappings are this worker's to
 * close, at the guest's call or at teardown; they are not charged to the
 * quota (the exporter's allocation is).
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

int xgpub_ipc_give(struct xgpub_worker *w, int kind, const void *real,
		   struct xgpuif_ipc_handle *h)
{
	uint8_t token[16];

	if (xgpub_ipc_export(kind, w->t->ipc_domain, real, token))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(h, 0, sizeof(*h));
	memcpy(h->bytes, XGPUIF_IPC_MAGIC, 8);
	memcpy(h->bytes + 8, token, 16);
	return 0;
}

int xgpub_ipc_take(struct xgpub_worker *w, int kind,
		   const struct xgpuif_ipc_handle *h, void *real)
{
	/* a token of another domain reads as no token at all */
	if (memcmp(h->bytes, XGPUIF_IPC_MAGIC, 8) ||
	    xgpub_ipc_lookup(kind, w->t->ipc_domain, h->bytes + 8, real))
		return CUDA_ERROR_INVALID_VALUE;
	return 0;
}

XGPUB_HANDLER(IPC_GET_MEM)
{
	CUipcMemHandle real;
	int rc;

	/* only the start of an allocation of this guest's */
	if (!xgpub_alloc_has(w, a->dptr))
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuIpcGetMemHandle(&real, a->dptr);
	return rc ? rc : xgpub_ipc_give(w, XGPUB_IPC_MEM, real.reserved, r);
}

XGPUB_HANDLER(IPC_OPEN_MEM)
{
	struct xgpuif_ipc_handle h;
	CUipcMemHandle real;
	CUdeviceptr p = 0;
	uint64_t *n;
	int rc;

	memcpy(h.bytes, a->bytes, sizeof(h.bytes));
	rc = xgpub_ipc_take(w, XGPUB_IPC_MEM, &h, real.reserved);
	if (rc)
		return rc;
	n = xgpub_grow(w->ipc_opened, w->nipc, &w->cap_ipc, sizeof(*n), 16,
		       65536);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	w->ipc_opened = n;
	rc = w->D->cuIpcOpenMemHandle_v2(&p, real, a->flags);
	if (rc)
		return rc;
	w->ipc_opened[w->nipc++] = p;
	r->dptr = p;
	return 0;
}

XGPUB_HANDLER(IPC_CLOSE_MEM)
{
	for (uint32_t i = 0; i < w->nipc; i++) {
		if (w->ipc_opened[i] == a->dptr) {
			int rc = w->D->cuIpcCloseMemHandle(a->dptr);

			if (rc == 0)
				w->ipc_opened[i] = w->ipc_opened[--w->nipc];
			return rc;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

void xgpub_ipc_teardown(struct xgpub_worker *w)
{
	/* forgets this worker's entries in the registry, then closes the
	 * shared fds */
	xgpub_share_teardown(w);
	(void)xgpub_ipc_forget_mine();
	for (uint32_t i = 0; i < w->nipc; i++)
		w->D->cuIpcCloseMemHandle(w->ipc_opened[i]);
	free(w->ipc_opened);
	w->ipc_opened = NULL;
	w->nipc = w->cap_ipc = 0;
}
