// SPDX-License-Identifier: MIT
/*
 * xgpub_local_clients.c: the daemon's side of the local transport: who
 * of the clients that connect to the --local socket gets a worker now,
 * later or never (xgpub_local_clients.h), and the forking of theirs.
 * Only the daemon's event loop calls in; the state below is its own.
 */
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpub_daemon.h"
#include "xgpub_local_clients.h"
#include "xgpub_transport.h"
#include "xgpub_worker.h"

/*
 * Local clients per user (SO_PEERCRED uid): at most PENDING_PER_USER of
 * them still shaking hands (their worker is forked, the channel not up:
 * idle connections would otherwise fill the table of workers) and at most
 * max_local_per_user workers in all.  A connection past the first bound
 * waits, without a worker, until one of that user's handshakes ends (a
 * burst of processes starting at once, a pool of 64, is served in turn),
 * up to DEFER_PER_USER connections for DEFER_NS each; one past the second
 * bound, or past those, is closed at once, with one log line per second
 * at most.
 */
#define PENDING_PER_USER	8
#define DEFER_PER_USER		128
#define DEFER_MAX		512
#define DEFER_NS		60000000000ull	/* 60 s */

enum admit { ADMIT, ADMIT_LATER, ADMIT_NEVER };

struct user_count {
	uint32_t uid;
	unsigned int pending, all;
};

static void count_user(struct xgpub_child *c, void *arg)
{
	struct user_count *u = arg;

	if (c->kind != XGPUB_CHILD_LOCAL || c->peer_uid != u->uid)
		return;
	u->all++;
	if (!c->st || !__atomic_load_n(&c->st->connected, __ATOMIC_ACQUIRE))
		u->pending++;
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

/* may another local client of this uid have a worker now? */
static enum admit local_admit(uint32_t uid, unsigned int max_per_user)
{
	struct user_count u = { uid, 0, 0 };

	xgpub_children_each(count_user, &u);
	if (max_per_user && u.all >= max_per_user) {
		refuse_log(uid, u.all, "clients (--max-local-per-user)");
		return ADMIT_NEVER;
	}
	return u.pending >= PENDING_PER_USER ? ADMIT_LATER : ADMIT;
}

/* connections waiting for a handshake of their user to end, oldest first */
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

struct local_arg {
	int conn;
	uint32_t id;
	const struct xgpub_options *opt;
};

static int serve_client(void *p)
{
	struct local_arg *a = p;
	struct xgpub_transport *t;

	if (xgpub_local_accept(a->conn, a->id, a->opt->max_data_pages, &t)) {
		close(a->conn);
		return 3;
	}
	return xgpub_worker_run(t, a->opt);
}

static uint32_t next_id;

/* a worker for the local connection conn of uid (conn is closed here) */
static void spawn_local(int conn, uint32_t uid,
			const struct xgpub_options *opt)
{
	struct xgpub_child info;
	struct local_arg a;
	pid_t pid;

	next_id++;
	memset(&info, 0, sizeof(info));
	info.kind = XGPUB_CHILD_LOCAL;
	info.client_id = next_id;
	info.peer_uid = uid;
	a = (struct local_arg){ conn, next_id, opt };
	pid = xgpub_spawn(&info, conn, serve_client, &a);
	close(conn);
	if (pid > 0)
		xgpub_info("client %u: worker pid %d", next_id, pid);
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
 * Serve the waiting connections whose user may have a worker now, in the
 * order they came; drop those that waited too long.  Returns how soon to
 * look again (ns), or UINT64_MAX with none waiting.
 */
static uint64_t run_waitq(const struct xgpub_options *opt,
			  unsigned int max_per_user)
{
	uint64_t now = xgpub_now_ns();
	unsigned int i = 0, j;

	while (i < nwait) {
		struct deferred d = waitq[i];
		enum admit how = ADMIT_NEVER;

		if (gone(d.conn))
			how = ADMIT_NEVER;	/* it gave up waiting */
		else if (now - d.since < DEFER_NS)
			how = local_admit(d.uid, max_per_user);
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
			spawn_local(d.conn, d.uid, opt);
		else
			close(d.conn);
	}
	return nwait ? 5000000u : UINT64_MAX;	/* handshakes end unseen */
}

void xgpub_local_client(int conn, const struct xgpub_options *opt,
			unsigned int max_per_user)
{
	struct ucred cr;
	socklen_t crl = sizeof(cr);

	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0)
		cr.uid = (uid_t)-1;
	switch (local_admit((uint32_t)cr.uid, max_per_user)) {
	case ADMIT:
		spawn_local(conn, (uint32_t)cr.uid, opt);
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

uint64_t xgpub_local_waiting(const struct xgpub_options *opt,
			     unsigned int max_per_user)
{
	return nwait ? run_waitq(opt, max_per_user) : UINT64_MAX;
}

void xgpub_local_drop_waiting(void)
{
	for (unsigned int i = 0; i < nwait; i++)
		close(waitq[i].conn);
	nwait = 0;
}
