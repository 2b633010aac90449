/* SPDX-License-Identifier: MIT */
/*
 * xgpub_broker.h: the daemon hands one worker a descriptor of another
 * worker of the same guest (the driver's fd of a shareable handle,
 * xgpub_op_share.c).
 *
 * Workers run under one unprivileged uid, not dumpable, under a seccomp
 * filter that refuses pidfd_getfd: none can take another's descriptors.
 * The daemon, root, can: a worker sends it a request on the broker socket
 * (a datagram socketpair made before the first fork; the daemon's end
 * reads the sender's pid from the kernel, SCM_CREDENTIALS) with one end
 * of a fresh socketpair for the answer.  The daemon checks that both
 * workers are its children and serve the same guest (one Xen domain, or
 * local clients of one user), takes the descriptor with pidfd_getfd and
 * sends it back (SCM_RIGHTS).
 */
#ifndef XGPUB_BROKER_H
#define XGPUB_BROKER_H

#include <stdint.h>
#include <sys/types.h>

#define XGPUB_BROKER_MAGIC	0x78677062u	/* "xgpb" */

struct xgpub_broker_req {
	uint32_t magic;
	int32_t pid;		/* the worker that holds the descriptor */
	int32_t fd;		/* its number there */
};

struct xgpub_broker_rep {
	uint32_t magic;
	int32_t err;		/* 0: the descriptor comes with it, or -errno */
};

/*
 * In a worker: a duplicate of descriptor fd of worker pid (close-on-exec),
 * or -errno (-ENODEV: no broker; -EPERM: not the same guest).
 */
int xgpub_broker_getfd(pid_t pid, int fd);

/* in the daemon: make the broker socketpair (sets xgpub_broker_fd, the
 * workers' end); the daemon's end, or -1 */
int xgpub_broker_start(void);
/* in the daemon: answer every request waiting on its end */
void xgpub_broker_serve(int dfd);

#endif /* XGPUB_BROKER_H */
