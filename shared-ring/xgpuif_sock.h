/* SPDX-License-Identifier: MIT */
/*
 * xgpuif_sock.h: messages on the SOCK_SEQPACKET Unix sockets of the local
 * transport's handshake (xgpuif.h, "Local transport") and of the daemon's
 * control socket: connect, and one message with or without descriptors
 * (SCM_RIGHTS) each way.  Header-only, for the guest library, the daemon,
 * the CLI and the tests alike.
 */
#ifndef XGPUIF_SOCK_H
#define XGPUIF_SOCK_H

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

/* most descriptors one message carries */
#define XGPUIF_SOCK_MAX_FDS 8

/* a connected socket, or -errno */
static inline int xgpuif_sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = -errno;
		close(s);
		return e;
	}
	return s;
}

/* send one message of `len` bytes with `nfds` descriptors: 0 or -errno */
static inline int xgpuif_sock_send(int sock, const void *msg, size_t len,
				   const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * XGPUIF_SOCK_MAX_FDS)];
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (nfds < 0 || nfds > XGPUIF_SOCK_MAX_FDS)
		return -EINVAL;
	memset(cbuf, 0, sizeof(cbuf));
	if (nfds) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/*
 * Receive one message of at most `len` bytes and up to `maxfds`
 * descriptors (close-on-exec; any beyond are closed), waiting up to
 * timeout_ms.  Returns its length, -ETIMEDOUT, -EMSGSIZE for a message or
 * descriptor list that did not fit, or -errno.
 */
static inline ssize_t xgpuif_sock_recv(int sock, void *buf, size_t len,
				       int *fds, int maxfds, int *nfds,
				       int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(int) * XGPUIF_SOCK_MAX_FDS)];
	struct iovec iov = { buf, len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct cmsghdr *cm;
	ssize_t n;

	*nfds = 0;
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int k, *p;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		p = (int *)CMSG_DATA(cm);
		for (int i = 0; i < k; i++) {
			if (*nfds < maxfds)
				fds[(*nfds)++] = p[i];
			else
				close(p[i]);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return n;
}

#endif /* XGPUIF_SOCK_H */
