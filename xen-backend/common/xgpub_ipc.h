/* SPDX-License-Identifier: MIT */
/*
 * xgpub_ipc.h: the registry of exported IPC handles (cuIpcGetMemHandle,
 * cuIpcGetEventHandle), shared by the daemon's workers.
 *
 * A guest never sees the driver's handle.  Exporting gives it a token (a
 * random 16-byte name in the CUipc*Handle bytes); the registry maps the
 * token to the driver's handle, the IPC domain of the exporter and the
 * exporting worker.  Another worker opens a token only for a guest of the
 * same domain: processes of one Xen domain ("dom:N"), or local clients of
 * one Unix user ("uid:N").  The daemon maps the table before it forks a
 * worker (xgpub_ipc_init); the workers are its code and share it under a
 * spin lock; a worker's entries go when it does.
 */
#ifndef XGPUB_IPC_H
#define XGPUB_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define XGPUB_IPC_ENTRIES	4096
#define XGPUB_IPC_DOMAIN_LEN	32

enum {
	XGPUB_IPC_MEM = 1,
	XGPUB_IPC_EVENT = 2,
	/* a shareable handle (POSIX fd) of a physical allocation or a pool:
	 * real is a struct xgpub_ipc_fd */
	XGPUB_IPC_VMM_FD = 3,
	XGPUB_IPC_POOL_FD = 4,
	/* a pool allocation's CUmemPoolPtrExportData */
	XGPUB_IPC_POOL_PTR = 5,
};

/*
 * The "real" bytes of an XGPUB_IPC_*_FD entry: the driver's shareable fd,
 * open in the exporting worker (pid) while the entry lives.  An importing
 * worker of the same domain takes a duplicate with pidfd_getfd(2).
 */
struct xgpub_ipc_fd {
	int32_t pid;
	int32_t fd;
};

/* the registry's mapping, before the first worker is forked; 0 or -errno */
int xgpub_ipc_init(void);

/*
 * Register the driver's handle `real` (64 bytes) of kind, exported by
 * this process for domain; *token gets its name (an existing entry of the
 * same handle keeps its name).  0, or -ENOSPC, -ENODEV (no registry).
 */
int xgpub_ipc_export(int kind, const char *domain, const uint8_t real[64],
		     uint8_t token[16]);

/*
 * The driver's handle of token, if it is of kind and of domain: 0, or
 * -ENOENT (no such token, or another domain's: the same answer).
 */
int xgpub_ipc_lookup(int kind, const char *domain, const uint8_t token[16],
		     uint8_t real[64]);

/* drop the entry token if this process exported it */
void xgpub_ipc_drop(const uint8_t token[16]);

/* drop every entry this process exported (its worker is ending) */
void xgpub_ipc_forget_mine(void);

/*
 * The daemon, having reaped worker pid: drop what it left (a worker that
 * was killed never ran its teardown), so that no importer takes an fd
 * number from a later process of the same pid.  Gives up rather than
 * wait long for the lock (a worker killed holding it).
 */
void xgpub_ipc_forget_pid(pid_t pid);

#endif /* XGPUB_IPC_H */
