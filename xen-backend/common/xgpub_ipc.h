/* SPDX-License-Identifier: MIT */
/*
 * xgpub_ipc.h: the registry of exported IPC handles (cuIpcGetMemHandle,
 * cuIpcGetEventHandle, shareable handles, pool pointers).
 *
 * A guest never sees the driver's handle.  Exporting gives it a token (a
 * random 16-byte name in the CUipc*Handle bytes); the registry maps the
 * token to the driver's handle, the IPC domain of the exporter and the
 * exporting worker.  Another worker opens a token only for a guest of the
 * same domain: processes of one Xen domain ("dom:N"), or local clients of
 * one Unix user ("uid:N"; "client:N" where the user could not be read).
 *
 * The registry lives in the daemon's memory only (a private mapping that
 * a forked worker gets zeroed, and unmaps): no worker can read another
 * guest's handles or tokens, or rewrite an entry.  A worker exports,
 * looks up and forgets through the daemon's broker (xgpub_broker.h): the
 * daemon takes the asking worker's pid from the kernel and its domain
 * from its own table of children, never from the worker, and forgets a
 * worker's entries when it reaps it.  A worker run inline by a test (no
 * broker) keeps a registry of its own, in the same code.
 */
#ifndef XGPUB_IPC_H
#define XGPUB_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* entries in all, and per IPC domain (one guest cannot take them all) */
#define XGPUB_IPC_ENTRIES	16384
#define XGPUB_IPC_PER_DOMAIN	4096
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

/* kinds whose "real" bytes name a descriptor of the exporter's */
static inline bool xgpub_ipc_kind_fd(int kind)
{
	return kind == XGPUB_IPC_VMM_FD || kind == XGPUB_IPC_POOL_FD;
}

static inline bool xgpub_ipc_kind_ok(int kind)
{
	return kind >= XGPUB_IPC_MEM && kind <= XGPUB_IPC_POOL_PTR;
}

/*
 * The "real" bytes of an XGPUB_IPC_*_FD entry: the driver's shareable fd,
 * open in the exporting worker (pid) while the entry lives.  An importing
 * worker of the same domain gets a duplicate from the daemon.
 */
struct xgpub_ipc_fd {
	int32_t pid;
	int32_t fd;
};

/*
 * The IPC domain of a network peer, from the SHA-256 of its authenticated
 * name: "net:" and the first 12 bytes in hex (the daemon's and the
 * worker's names are the same)
 */
void xgpub_peer_domain(const uint8_t hash[32], char *buf, size_t len);

/* ---- in a worker ------------------------------------------------------ */

/*
 * Register the driver's handle `real` (64 bytes) of kind, exported by
 * this worker (of IPC domain `domain`: used only without a broker; the
 * daemon knows the worker's); *token gets its name (an existing entry of
 * the same handle keeps its name).  0, or -ENOSPC, -ENOMEM, -errno of
 * the broker.
 */
int xgpub_ipc_export(int kind, const char *domain, const uint8_t real[64],
		     uint8_t token[16]);

/*
 * The driver's handle of token, if it is of kind (not an fd kind) and of
 * this worker's domain: 0, or -ENOENT (no such token, or another
 * domain's: the same answer), or -errno of the broker.
 */
int xgpub_ipc_lookup(int kind, const char *domain, const uint8_t token[16],
		     uint8_t real[64]);

/*
 * A duplicate (close-on-exec) of the descriptor behind token, of fd kind
 * and of this worker's domain, or -errno: -ENOENT (no such token, another
 * domain's, its exporter gone), -ENOSYS (the kernel cannot take another
 * process's descriptor), -ENODEV, -ETIMEDOUT (no daemon's answer).
 */
int xgpub_ipc_take_fd(int kind, const char *domain, const uint8_t token[16]);

/* drop every entry this worker exported (its worker is ending: before it
 * closes the descriptors the entries name); 0, or -errno: the daemon did
 * not answer (it forgets them when it reaps this worker) */
int xgpub_ipc_forget_mine(void);

/* ---- the registry itself (the daemon's; an inline worker's) ----------- */

/* as xgpub_ipc_export, for exporter `owner` of `domain` */
int xgpub_ipc_reg_export(pid_t owner, int kind, const char *domain,
			 const uint8_t real[64], uint8_t token[16]);
/* as xgpub_ipc_lookup (any kind); *owner: the exporter */
int xgpub_ipc_reg_lookup(int kind, const char *domain,
			 const uint8_t token[16], uint8_t real[64],
			 pid_t *owner);
/* drop every entry of owner (a worker ending, or reaped) */
void xgpub_ipc_reg_forget(pid_t owner);
/* in a freshly forked worker: unmap the daemon's registry (it is zeroed
 * in the child already, MADV_WIPEONFORK, where the kernel has it) */
void xgpub_ipc_reg_after_fork(void);

#endif /* XGPUB_IPC_H */
