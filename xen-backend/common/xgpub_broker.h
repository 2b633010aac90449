/* SPDX-License-Identifier: MIT */
/*
 * xgpub_broker.h: a worker's requests to the daemon about what crosses
 * between workers of one guest: the registry of IPC handles
 * (xgpub_ipc.h), which lives in the daemon's memory only, and the
 * descriptors of shareable handles (xgpub_op_share.c).
 *
 * Workers run under one unprivileged uid, not dumpable, under a seccomp
 * filter that refuses pidfd_getfd: none can take another's descriptors,
 * and none maps another's registry entries.  The daemon, root, holds the
 * registry and can take descriptors: a worker sends it a request on the
 * broker socket (a datagram socketpair made before the first fork; the
 * daemon's end reads the sender's pid from the kernel, SCM_CREDENTIALS)
 * with one end of a fresh socketpair for the answer.  The daemon finds
 * the sender in its table of children (a request from anyone else is
 * refused), takes the IPC domain from that table (one Xen domain, or
 * local clients of one user), and answers: an export is registered under
 * the sender's pid and domain (an fd kind names the sender's own
 * descriptor), a lookup or a descriptor is given only for a token of the
 * sender's domain (a descriptor: taken from the exporter with
 * pidfd_getfd and sent back, SCM_RIGHTS), a forget drops the sender's
 * entries.  A local or network client's worker also asks, once its
 * guest has said its name, for the caps given at run time for its key
 * (`xgpu config set local:NAME quota-mb=N`): its key is the daemon's to
 * make, from its table of children.
 *
 * A network client's worker says, once, right after TLS authenticated
 * its peer and before it reads a byte of the peer's own, who the peer is
 * (XGPUB_BROKER_PEER: a SHA-256 of the authenticated name): the
 * connections of one peer are then one IPC domain, as the processes of
 * one Xen domain are.  The daemon takes the first such word of a worker
 * and refuses any later one; a worker whose word was not taken ends its
 * connection, so none serves a peer without it (a worker that a peer
 * took over later could only repeat it, refused).
 */
#ifndef XGPUB_BROKER_H
#define XGPUB_BROKER_H

#include <stdint.h>
#include <sys/types.h>

#define XGPUB_BROKER_MAGIC	0x78677063u	/* "xgpc" */

enum {
	XGPUB_BROKER_IPC_EXPORT = 1,	/* kind, real -> token */
	XGPUB_BROKER_IPC_LOOKUP = 2,	/* kind (no fd kind), token -> real */
	XGPUB_BROKER_IPC_TAKE_FD = 3,	/* fd kind, token -> a descriptor */
	XGPUB_BROKER_IPC_FORGET = 4,	/* drop all the sender's entries */
	XGPUB_BROKER_CAPS = 5,		/* -> struct xgpub_caps in real */
	XGPUB_BROKER_PEER = 6,		/* real[0..31]: the peer's hash */
};

/* XGPUB_BROKER_CAPS's answer: caps set for the asking client's key, in
 * bytes */
struct xgpub_caps {
	uint32_t has;	/* the ones given: XGPU_RULE_QUOTA, _PINNED, _IMAGES */
	uint32_t _pad;
	uint64_t quota, pin_quota, images_max;
};

struct xgpub_broker_req {
	uint32_t magic;
	uint32_t op;		/* XGPUB_BROKER_* */
	uint32_t kind;		/* XGPUB_IPC_* */
	uint8_t token[16];
	/* an export's handle; of an fd kind, a struct xgpub_ipc_fd whose
	 * pid the daemon sets to the sender's */
	uint8_t real[64];
};

struct xgpub_broker_rep {
	uint32_t magic;
	int32_t err;		/* 0, or -errno */
	uint8_t token[16];
	uint8_t real[64];
};

/*
 * In a worker: send req, wait for the answer (rep); *fd (if fd) gets the
 * descriptor that came with it, close-on-exec, or -1.  rep->err, or
 * -errno (-ENODEV: no broker; -ETIMEDOUT: no answer in 5 s; -EPROTO).
 */
int xgpub_broker_call(const struct xgpub_broker_req *req,
		      struct xgpub_broker_rep *rep, int *fd);

/* in a worker: the caps set for its client's key (out->has 0: none), or
 * -errno as xgpub_broker_call */
int xgpub_broker_caps(struct xgpub_caps *out);

/* in a network client's worker, once, before any byte of its peer's:
 * the SHA-256 of the peer's authenticated name; 0 or -errno as
 * xgpub_broker_call (-EALREADY: said before) */
int xgpub_broker_peer(const uint8_t hash[32]);

/* send len bytes of buf on sock with fd (if >= 0) attached
 * (SCM_RIGHTS), never blocking; sendmsg's result */
ssize_t xgpub_broker_send(int sock, const void *buf, size_t len, int fd);

/* in the daemon: make the broker socketpair (sets xgpub_broker_fd, the
 * workers' end); the daemon's end, or -1 */
int xgpub_broker_start(void);
/* in the daemon: answer every request waiting on its end */
void xgpub_broker_serve(int dfd);

#endif /* XGPUB_BROKER_H */
