// SPDX-License-Identifier: MIT
/* xgpub_broker_client.c: a worker's side of the daemon's broker
 * (xgpub_broker.h). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpub.h"
#include "xgpub_broker.h"

int xgpub_broker_fd = -1;

#define BROKER_WAIT_MS 5000

ssize_t xgpub_broker_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, len };
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
	return sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int xgpub_broker_call(const struct xgpub_broker_req *req,
		      struct xgpub_broker_rep *rep, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr m = { 0 };
	struct cmsghdr *c;
	struct pollfd pfd;
	int sv[2], got = -1, rc;
	ssize_t n;

	if (fd)
		*fd = -1;
	if (xgpub_broker_fd < 0)
		return -ENODEV;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	n = xgpub_broker_send(xgpub_broker_fd, req, sizeof(*req), sv[1]);
	rc = n == (ssize_t)sizeof(*req) ? 0 : -(n < 0 ? errno : EIO);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		return rc;
	}
	pfd = (struct pollfd){ .fd = sv[0], .events = POLLIN };
	do
		rc = poll(&pfd, 1, BROKER_WAIT_MS);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0) {
		close(sv[0]);
		return rc == 0 ? -ETIMEDOUT : -errno;
	}
	memset(&ctl, 0, sizeof(ctl));
	memset(rep, 0, sizeof(*rep));
	iov = (struct iovec){ rep, sizeof(*rep) };
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof(ctl.buf);
	n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	close(sv[0]);
	for (c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && got < 0)
			memcpy(&got, CMSG_DATA(c), sizeof(int));
	if (n != (ssize_t)sizeof(*rep) || rep->magic != XGPUB_BROKER_MAGIC ||
	    rep->err > 0 || (rep->err == 0 && !fd && got >= 0)) {
		if (got >= 0)
			close(got);
		return -EPROTO;
	}
	if (rep->err) {
		if (got >= 0)
			close(got);
		return rep->err;
	}
	if (fd)
		*fd = got;
	return 0;
}

int xgpub_broker_peer(const uint8_t hash[32])
{
	struct xgpub_broker_req req;
	struct xgpub_broker_rep rep;

	memset(&req, 0, sizeof(req));
	req.magic = XGPUB_BROKER_MAGIC;
	req.op = XGPUB_BROKER_PEER;
	memcpy(req.real, hash, 32);
	return xgpub_broker_call(&req, &rep, NULL);
}

int xgpub_broker_caps(struct xgpub_caps *out)
{
	struct xgpub_broker_req req;
	struct xgpub_broker_rep rep;
	int rc;

	_Static_assert(sizeof(*out) <= sizeof(rep.real), "caps fit");
	memset(&req, 0, sizeof(req));
	memset(out, 0, sizeof(*out));
	req.magic = XGPUB_BROKER_MAGIC;
	req.op = XGPUB_BROKER_CAPS;
	rc = xgpub_broker_call(&req, &rep, NULL);
	if (rc == 0)
		memcpy(out, rep.real, sizeof(*out));
	return rc;
}
