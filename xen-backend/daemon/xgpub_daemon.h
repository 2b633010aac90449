/* SPDX-License-Identifier: MIT */
/*
 * xgpub_daemon.h: the daemon's table of worker processes (one per guest
 * channel, both transports) and the one place that forks them.
 */
#ifndef XGPUB_DAEMON_H
#define XGPUB_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xgpub.h"

enum { XGPUB_CHILD_LOCAL = 1, XGPUB_CHILD_XEN = 2, XGPUB_CHILD_NET = 3 };

struct xgpub_child {
	pid_t pid;
	int kind;			/* XGPUB_CHILD_* */
	uint32_t client_id;		/* local: the backend's number */
	uint32_t peer_uid;		/* local: the client's uid (SO_PEERCRED) */
	uint32_t domid, devid, ch;	/* xen */
	char name[64];			/* xen: domain name */
	char proc[32];			/* the guest process's name */
	uint64_t started;		/* CLOCK_MONOTONIC ns */
	struct xgpub_wstat *st;		/* shared with the worker */
	uint64_t limit_sent;		/* when it was told it ran past the GPU
					 * time limit (SIGUSR2), 0: not */
	/* calls per second, sampled by the daemon */
	uint64_t rate_t, rate_calls;
	double rate;
	/* its GPU time (with the work in flight) at the last sample, for
	 * the share it is told in its slot (struct xgpub_wctl.util_pm) */
	uint64_t util_busy;
	/* its own eventfd that kicks the GPU scheduler (-1: none) */
	int kick_fd;
	/* network: the daemon's end of the socket that hands the worker
	 * its lanes' connections, and (until the fork) the worker's */
	int lane_fd, lane_child_fd;
	/* its guest's GPU time cell: index + 1 (0: none) */
	int cell;
	/* network: the SHA-256 of the peer's authenticated name, as its
	 * worker said it first (XGPUB_BROKER_PEER); peer_set false: none */
	bool peer_set;
	uint8_t peer_hash[32];
};

/*
 * Fork a worker.  In the child, after the common set-up (its cgroup, a
 * session of its own, signals, name, log prefix, every descriptor closed
 * but stdio, the nkeep of keep (at most XGPUB_SPAWN_KEEP_MAX; -1s are
 * skipped) and the few every worker needs),
 * fn(arg) runs and its return value is the exit code.  In the parent:
 * the pid (recorded in the table of children) or -errno.
 */
#define XGPUB_SPAWN_KEEP_MAX	4
pid_t xgpub_spawn(const struct xgpub_child *info, const int *keep,
		  int nkeep, int (*fn)(void *), void *arg);
/* the GPU time of c's guest so far: the union of its workers' busy
 * periods (xgpub_gcell.h), 0: none */
uint64_t xgpub_child_cell_time(const struct xgpub_child *c);
/* c's guest's cell itself (NULL: none) */
struct xgpub_gcell *xgpub_child_cell(const struct xgpub_child *c);
/* c is reaped: it leaves its guest's cell (if it died inside) and lets
 * go of it */
void xgpub_child_cell_release(struct xgpub_child *c);
/* the child with this pid (cleared by the caller once reaped), or NULL */
struct xgpub_child *xgpub_child_find(pid_t pid);
void xgpub_child_name(const struct xgpub_child *c, char *buf, size_t len);
void xgpub_children_each(void (*fn)(struct xgpub_child *c, void *arg),
			 void *arg);
void xgpub_children_kill(int sig);
/* caps are set for some local or network client's key: every worker,
 * and every one forked from now on, asks for its own once connected */
void xgpub_children_client_caps(void);
int xgpub_children_count(void);
/*
 * A network client's worker says who its peer is (XGPUB_BROKER_PEER):
 * 0, -EPERM (not a network client's), -EALREADY (said before: the first
 * word stands)
 */
int xgpub_child_set_peer(struct xgpub_child *c, const uint8_t hash[32]);
/*
 * Do workers a and b serve the same guest (one Xen domain, local clients
 * of one user, or network clients of one authenticated peer): may one
 * take the other's shareable handles?
 */
bool xgpub_child_same_guest(const struct xgpub_child *a,
			    const struct xgpub_child *b);
/*
 * c's IPC domain, as the registry names it (xgpub_ipc.h): "dom:N",
 * "uid:N", "net:HASH" (xgpub_peer_domain) or "client:N", the same guests
 * as xgpub_child_same_guest
 * (xgpub_broker.c)
 */
void xgpub_child_ipc_domain(const struct xgpub_child *c, char *buf,
			    size_t len);

/*
 * The GPU scheduler is on (xgpub_sched_glue.c calls this as it starts):
 * each worker forked from now on is scheduled, with its own kick eventfd
 * from kick_new() (-1: none, the worker then has none), given back by
 * kick_drop() if the fork fails (the reaper gives back the others').
 */
void xgpub_children_sched(int (*kick_new)(void), void (*kick_drop)(int fd));
/* it is on */
extern bool xgpub_sched_enabled;

/*
 * Workers get a network namespace of their own (xgpub_children.c): none
 * of the host's network, nor its abstract Unix sockets, which have no
 * permissions to keep a worker out.  xgpub_children_netns_probe() tries
 * it once at the start (0, or -errno: in a container without the
 * privilege, workers keep the daemon's, said in one log line).
 */
int xgpub_children_netns_probe(void);

#endif /* XGPUB_DAEMON_H */
