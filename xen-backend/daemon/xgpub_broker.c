// SPDX-License-Identifier: MIT
/* xgpub_broker.c: the daemon's side of the broker (xgpub_broker.h): the
 * registry of IPC handles, kept here, and the descriptors of shareable
 * handles. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xgpub_broker.h"
#include "xgpub_config.h"
#include "xgpub_daemon.h"
#include "xgpub_guest.h"
#include "xgpub_ipc.h"

int xgpub_broker_start(void)
{
	int sv[2], on = 1;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		xgpub_err("no broker socket for the workers: %s (IPC and "
			  "shareable handles will not pass between "
			  "processes)", strerror(errno));
		return -1;
	}
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on))) {
		xgpub_err("broker socket: %s (IPC and shareable handles will "
			  "not pass between processes)", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	xgpub_broker_fd = sv[1];
	return sv[0];
}

void xgpub_child_ipc_domain(const struct xgpub_child *c, char *buf,
			    size_t len)
{
	/* the same names as the transports' (t->ipc_domain), and the same
	 * guests as xgpub_child_same_guest */
	if (c->kind == XGPUB_CHILD_XEN)
		snprintf(buf, len, "dom:%u", c->domid);
	else if (c->kind == XGPUB_CHILD_NET && c->peer_set)
		xgpub_peer_domain(c->peer_hash, buf, len);
	else if (c->kind == XGPUB_CHILD_NET)
		snprintf(buf, len, "client:%u", c->client_id);
	else if (c->peer_uid != (uint32_t)-1)
		snprintf(buf, len, "uid:%u", c->peer_uid);
	else
		snprintf(buf, len, "client:%u", c->client_id);
}

/* a duplicate of descriptor fd of worker pid, or -errno */
static int take_fd(pid_t pid, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	int pidfd, got;

	/* a child not yet reaped: its pid is not anyone else's */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return errno == ENOSYS ? -ENOSYS : -ENOENT;
	got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (got < 0)
		got = errno == ENOSYS ? -ENOSYS : -ENOENT;
	close(pidfd);
	return got;
#else
	(void)pid;
	(void)fd;
	return -ENOSYS;
#endif
}

/* req from worker `pid`: the answer in rep, a descriptor in *fd */
static void serve_one(pid_t pid, const struct xgpub_broker_req *req,
		      struct xgpub_broker_rep *rep, int *fd)
{
	struct xgpub_child *asker = xgpub_child_find(pid);
	struct xgpub_child *holder;
	struct xgpub_ipc_fd f;
	char dom[XGPUB_IPC_DOMAIN_LEN];
	uint8_t real[64];
	pid_t owner;
	int kind = (int)req->kind;

	*fd = -1;
	if (!asker) {
		rep->err = -EPERM;
		return;
	}
	xgpub_child_ipc_domain(asker, dom, sizeof(dom));
	switch (req->op) {
	case XGPUB_BROKER_IPC_EXPORT:
		memcpy(real, req->real, 64);
		if (xgpub_ipc_kind_fd(kind)) {
			/* only its own descriptor: the pid is the kernel's */
			memcpy(&f, real, sizeof(f));
			if (f.fd < 0) {
				rep->err = -EINVAL;
				return;
			}
			f.pid = (int32_t)pid;
			memset(real, 0, sizeof(real));
			memcpy(real, &f, sizeof(f));
		}
		rep->err = xgpub_ipc_reg_export(pid, kind, dom, real,
						rep->token);
		return;
	case XGPUB_BROKER_IPC_LOOKUP:
		if (!xgpub_ipc_kind_ok(kind) || xgpub_ipc_kind_fd(kind)) {
			rep->err = -EINVAL;
			return;
		}
		rep->err = xgpub_ipc_reg_lookup(kind, dom, req->token,
						rep->real, NULL);
		return;
	case XGPUB_BROKER_IPC_TAKE_FD:
		if (!xgpub_ipc_kind_fd(kind)) {
			rep->err = -EINVAL;
			return;
		}
		rep->err = xgpub_ipc_reg_lookup(kind, dom, req->token, real,
						&owner);
		if (rep->err)
			return;
		memcpy(&f, real, sizeof(f));
		holder = xgpub_child_find(owner);
		/* the entries of a reaped worker are gone already */
		if (!holder || f.pid != owner ||
		    !xgpub_child_same_guest(asker, holder)) {
			rep->err = -ENOENT;
			return;
		}
		*fd = take_fd(owner, f.fd);
		rep->err = *fd < 0 ? *fd : 0;
		return;
	case XGPUB_BROKER_IPC_FORGET:
		xgpub_ipc_reg_forget(pid);
		rep->err = 0;
		return;
	case XGPUB_BROKER_PEER:
		rep->err = xgpub_child_set_peer(asker, req->real);
		if (rep->err == -EALREADY)
			xgpub_err("worker %d said who its peer is again: "
				  "refused", (int)pid);
		return;
	case XGPUB_BROKER_CAPS: {
		/* a domain's caps are in its worker's options already */
		struct xgpub_caps caps;
		char key[XGPU_CTL_KEY_LEN];

		if (asker->kind == XGPUB_CHILD_XEN) {
			rep->err = -EINVAL;
			return;
		}
		xgpub_child_key(asker, key, sizeof(key));
		xgpub_config_client_caps(key, &caps);
		memcpy(rep->real, &caps, sizeof(caps));
		rep->err = 0;
		return;
	}
	default:
		rep->err = -EINVAL;
		return;
	}
}

void xgpub_broker_serve(int dfd)
{
	for (int i = 0; i < 64; i++) {
		struct xgpub_broker_req req;
		struct xgpub_broker_rep rep;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct ucred)) +
				 CMSG_SPACE(4 * sizeof(int))];
		} ctl;
		struct iovec iov = { &req, sizeof(req) };
		struct msghdr m = { 0 };
		struct cmsghdr *c;
		struct ucred cr = { 0, (uid_t)-1, (gid_t)-1 };
		int fds[4], nfds = 0, fd;
		bool have_cred = false;
		ssize_t n;

		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(dfd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			return;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != SOL_SOCKET)
				continue;
			if (c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len == CMSG_LEN(sizeof(cr))) {
				memcpy(&cr, CMSG_DATA(c), sizeof(cr));
				have_cred = true;
			} else if (c->cmsg_type == SCM_RIGHTS) {
				size_t k = (c->cmsg_len - CMSG_LEN(0)) /
					   sizeof(int);

				for (size_t j = 0; j < k && nfds < 4; j++)
					memcpy(&fds[nfds++],
					       CMSG_DATA(c) + j * sizeof(int),
					       sizeof(int));
			}
		}
		if (n == (ssize_t)sizeof(req) && !(m.msg_flags & MSG_CTRUNC) &&
		    req.magic == XGPUB_BROKER_MAGIC && have_cred &&
		    cr.pid > 0 && nfds == 1) {
			memset(&rep, 0, sizeof(rep));
			rep.magic = XGPUB_BROKER_MAGIC;
			serve_one(cr.pid, &req, &rep, &fd);
			if (rep.err)
				xgpub_dbg("broker: pid %d, request %u of kind "
					  "%u: %s", (int)cr.pid, req.op,
					  req.kind, strerror(-rep.err));
			/* never blocks the daemon: a full or bogus answer
			 * socket fails */
			(void)!xgpub_broker_send(fds[0], &rep, sizeof(rep), fd);
			if (fd >= 0)
				close(fd);
		} else {
			/* a worker's doing: not worth a line each */
			xgpub_dbg("broker: a malformed request (pid %d)",
				  (int)cr.pid);
		}
		for (int j = 0; j < nfds; j++)
			close(fds[j]);
	}
}
