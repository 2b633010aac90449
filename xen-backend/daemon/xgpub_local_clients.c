// SPDX-License-Identifier: MIT
/*
 * xgpub_local_clients.c: the daemon's side of the local transport: who
 * of the clients that connect to the --local socket shakes hands now,
 * later or never (xgpub_local_clients.h), the handshakes themselves, and
 * the forking of a worker for each that ended well.  Only the daemon's
 * event loop calls in; the state below is its own.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpub_daemon.h"
#include "xgpub_local_clients.h"
#include "xgpub_transport.h"
#include "xgpub_worker.h"

/*
 * A connection's handshake runs here, in the daemon: the welcome goes
 * out at once, the client's connect message (with its memory and
 * notification descriptors) must come within HS_NS, and it is checked
 * before a worker is forked for it.  A client that connects and says
 * nothing holds a socket and a slot below, never a process.  At most
 * lim->pending handshakes of one user (SO_PEERCRED uid) run at once, and
 * XGPUB_LOCAL_HS_MAX of all users; one past those waits, unwelcomed,
 * until a slot frees (a burst of processes starting at once, a pool of
 * 64, is served in turn), up to DEFER_PER_USER connections for DEFER_NS
 * each.  Past lim->per_user workers and handshakes of one user, or past
 * the waiting room, a connection is closed at once, with one log line per
 * second at most.
 */
#define HS_NS			2000000000ull	/* 2 s */
#define DEFER_PER_USER		128
#define DEFER_MAX		512
#define DEFER_NS		60000000000ull	/* 60 s */

enum admit { ADMIT, ADMIT_LATER, ADMIT_NEVER };

/* handshakes under way, in the order they began */
static struct shaking {
	int conn;
	uint32_t uid, id;
	uint64_t since;
} hs[XGPUB_LOCAL_HS_MAX];
static unsigned int nhs;

struct user_count {
	uint32_t uid;
	unsigned int all;
};

static void count_user(struct xgpub_child *c, void *arg)
{
	struct user_count *u = arg;

	if (c->kind == XGPUB_CHILD_LOCAL && c->peer_uid == u->uid)
		u->all++;
}

static void refuse_log(uint32_t uid, unsigned int n, const char *why)
{
	static uint64_t last_log;
	uint64_t now = xgpub_now_ns();

	if (now - last_log >= 1000000000u) {
		xgpub_err("refusing a local connection of uid %u: %u %s", uid,
			  n, why);
		last_log = now;
	}
}

/* may another local client of this uid shake hands now? */
static enum admit local_admit(uint32_t uid,
			      const struct xgpub_local_limits *lim)
{
	struct user_count u = { uid, 0 };
	unsigned int pending = 0;

	for (unsigned int i = 0; i < nhs; i++)
		pending += hs[i].uid == uid;
	xgpub_children_each(count_user, &u);
	if (lim->per_user && u.all + pending >= lim->per_user) {
		refuse_log(uid, u.all + pending,
			   "clients (--max-local-per-user)");
		return ADMIT_NEVER;
	}
	return pending >= lim->pending || nhs >= XGPUB_LOCAL_HS_MAX ?
		       ADMIT_LATER : ADMIT;
}

/* connections waiting for a handshake slot of their user, oldest first */
static struct deferred {
	int conn;
	uint32_t uid;
	uint64_t since;
} waitq[DEFER_MAX];
static unsigned int nwait;

/* keep conn for later; false: no room (the caller closes it) */
static bool defer_conn(int conn, uint32_t uid)
{
	unsigned int mine = 0;

	for (unsigned int i = 0; i < nwait; i++)
		mine += waitq[i].uid == uid;
	if (nwait >= DEFER_MAX || mine >= DEFER_PER_USER) {
		refuse_log(uid, mine, "connections waiting for a handshake");
		return false;
	}
	waitq[nwait++] = (struct deferred){ conn, uid, xgpub_now_ns() };
	return true;
}

static uint32_t next_id;

/* welcome conn of uid; its handshake goes on in the event loop (conn is
 * closed here if it cannot) */
static void begin_handshake(int conn, uint32_t uid,
			    const struct xgpub_options *opt)
{
	uint32_t id = ++next_id;

	if (xgpub_local_welcome(conn, id, opt->max_data_pages)) {
		close(conn);
		return;
	}
	hs[nhs++] = (struct shaking){ conn, uid, id, xgpub_now_ns() };
}

struct local_arg {
	int conn;
	uint32_t id;
	struct xgpub_local_hello *hello;
	const struct xgpub_options *opt;
};

static int serve_client(void *p)
{
	struct local_arg *a = p;
	struct xgpub_transport *t;

	if (xgpub_local_attach(a->conn, a->id, a->hello, &t)) {
		close(a->conn);
		return 3;
	}
	return xgpub_worker_run(t, a->opt);
}

/* a worker for the handshake s that ended well (its descriptors, and the
 * hello's, are closed here) */
static void spawn_local(const struct shaking *s, struct xgpub_local_hello *h,
			const struct xgpub_options *opt)
{
	struct xgpub_child info;
	struct local_arg a = { s->conn, s->id, h, opt };
	int keep[4] = { s->conn, h->fds[0], h->fds[1], h->fds[2] };
	pid_t pid;

	memset(&info, 0, sizeof(info));
	info.kind = XGPUB_CHILD_LOCAL;
	info.client_id = s->id;
	info.peer_uid = s->uid;
	pid = xgpub_spawn(&info, keep, 4, serve_client, &a);
	for (int i = 0; i < 4; i++)
		close(keep[i]);
	if (pid > 0)
		xgpub_info("client %u: worker pid %d", s->id, pid);
}

/* has the client of a waiting connection hung up? */
static bool gone(int conn)
{
	struct pollfd p = { .fd = conn, .events = POLLIN };
	char b;

	if (poll(&p, 1, 0) != 1)
		return false;
	return (p.revents & (POLLHUP | POLLERR)) ||
	       recv(conn, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/*
 * Welcome the waiting connections whose user may shake hands now, in the
 * order they came; drop those that waited too long or hung up.
 */
static void run_waitq(const struct xgpub_options *opt,
		      const struct xgpub_local_limits *lim)
{
	uint64_t now = xgpub_now_ns();
	unsigned int i = 0, j;

	while (i < nwait) {
		struct deferred d = waitq[i];
		enum admit how = ADMIT_NEVER;

		if (gone(d.conn))
			how = ADMIT_NEVER;	/* it gave up waiting */
		else if (now - d.since < DEFER_NS)
			how = local_admit(d.uid, lim);
		else
			refuse_log(d.uid, 1, "connection waited 60 s for a "
				   "handshake slot");
		if (how == ADMIT_LATER) {
			i++;
			continue;
		}
		for (j = i + 1; j < nwait; j++)
			waitq[j - 1] = waitq[j];
		nwait--;
		if (how == ADMIT)
			begin_handshake(d.conn, d.uid, opt);
		else
			close(d.conn);
	}
}

void xgpub_local_client(int conn, const struct xgpub_options *opt,
			const struct xgpub_local_limits *lim)
{
	struct ucred cr;
	socklen_t crl = sizeof(cr);

	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0)
		cr.uid = (uid_t)-1;
	/* those that came first go first */
	switch (nwait ? ADMIT_LATER : local_admit((uint32_t)cr.uid, lim)) {
	case ADMIT:
		begin_handshake(conn, (uint32_t)cr.uid, opt);
		break;
	case ADMIT_LATER:
		if (!defer_conn(conn, (uint32_t)cr.uid))
			close(conn);
		break;
	case ADMIT_NEVER:
		close(conn);
		break;
	}
}

int xgpub_local_pollfds(struct pollfd *p, int max)
{
	int n = 0;

	for (unsigned int i = 0; i < nhs && n < max; i++)
		p[n++] = (struct pollfd){ .fd = hs[i].conn, .events = POLLIN };
	return n;
}

uint64_t xgpub_local_serve(const struct pollfd *p, int np,
			   const struct xgpub_options *opt,
			   const struct xgpub_local_limits *lim)
{
	uint64_t now = xgpub_now_ns(), next = UINT64_MAX;
	unsigned int i = 0;

	while (i < nhs) {
		struct shaking s = hs[i];
		struct xgpub_local_hello h;
		short rev = 0;
		int rc = -EAGAIN;

		for (int k = 0; k < np; k++)
			if (p[k].fd == s.conn)
				rev = p[k].revents;
		if (rev)
			rc = xgpub_local_hello(s.conn, s.id,
					       opt->max_data_pages, &h);
		if (rc == -EAGAIN && now - s.since < HS_NS) {
			if (HS_NS - (now - s.since) < next)
				next = HS_NS - (now - s.since);
			i++;
			continue;
		}
		/* done, one way or the other: its slot frees */
		memmove(&hs[i], &hs[i + 1], (nhs - i - 1) * sizeof(hs[0]));
		nhs--;
		if (rc == 0) {
			spawn_local(&s, &h, opt);
			continue;
		}
		if (rc == -EAGAIN) {
			/* one line a second at most: a flood of them is
			 * one user's, already told in refuse_log's */
			static uint64_t last_log;

			if (now - last_log >= 1000000000u) {
				xgpub_err("client %u (uid %u): no handshake "
					  "within %llu s: closed", s.id, s.uid,
					  HS_NS / 1000000000ull);
				last_log = now;
			}
		}
		close(s.conn);
	}
	if (nwait) {
		run_waitq(opt, lim);
		/* those waiting on a user's workers, not its handshakes,
		 * see that change unseen: look again soon */
		if (nwait && next > 5000000u)
			next = 5000000u;
	}
	return next;
}

void xgpub_local_drop_waiting(void)
{
	for (unsigned int i = 0; i < nwait; i++)
		close(waitq[i].conn);
	nwait = 0;
	for (unsigned int i = 0; i < nhs; i++)
		close(hs[i].conn);
	nhs = 0;
}
