// SPDX-License-Identifier: MIT
/* xgpub_broker.c: the daemon's side of the descriptor broker
 * (xgpub_broker.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xgpub_broker.h"
#include "xgpub_daemon.h"

int xgpub_broker_start(void)
{
	int sv[2], on = 1;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		xgpub_err("no broker socket for the workers: %s",
			  strerror(errno));
		return -1;
	}
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on))) {
		xgpub_err("broker socket: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	xgpub_broker_fd = sv[1];
	return sv[0];
}

/* the duplicate of req's descriptor for worker `pid`, or -errno */
static int take(pid_t pid, const struct xgpub_broker_req *req)
{
	struct xgpub_child *asker = xgpub_child_find(pid);
	struct xgpub_child *holder = xgpub_child_find(req->pid);
	int pidfd, fd;

	if (!asker || !holder || !xgpub_child_same_guest(asker, holder))
		return -EPERM;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	/* a child not yet reaped: its pid is not anyone else's */
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)req->pid, 0);
	if (pidfd < 0)
		return -errno;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, req->fd, 0);
	if (fd < 0)
		fd = -errno;
	close(pidfd);
	return fd;
#else
	(void)pidfd;
	(void)fd;
	return -ENOSYS;
#endif
}

static void answer(int to, int err, int fd)
{
	struct xgpub_broker_rep rep = { XGPUB_BROKER_MAGIC, err };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr m = { 0 };
	struct cmsghdr *c;

	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	/* never blocks the daemon: a full or bogus answer socket fails */
	(void)!sendmsg(to, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void xgpub_broker_serve(int dfd)
{
	for (int i = 0; i < 64; i++) {
		struct xgpub_broker_req req;
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
		    nfds == 1) {
			fd = take(cr.pid, &req);
			if (fd < 0)
				xgpub_dbg("broker: pid %d asked for fd %d of "
					  "pid %d: %s", (int)cr.pid, req.fd,
					  req.pid, strerror(-fd));
			answer(fds[0], fd < 0 ? fd : 0, fd);
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
