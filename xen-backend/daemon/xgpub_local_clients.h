/* SPDX-License-Identifier: MIT */
/*
 * xgpub_local_clients.h: local clients (the --local socket) in the
 * daemon (xgpub_local_clients.c).
 *
 * A local client's handshake runs in the daemon, bounded in time, and a
 * worker is forked only for one that ended well.  Clients of one user
 * (SO_PEERCRED uid) are bounded twice: lim->pending handshakes at once
 * and lim->per_user workers and handshakes in all.  A connection past the
 * first bound waits, unwelcomed, until one of that user's handshakes
 * ends; one past the second, or past the waiting room, is closed at once
 * (the .c file says how many, and for how long).
 */
#ifndef XGPUB_LOCAL_CLIENTS_H
#define XGPUB_LOCAL_CLIENTS_H

#include <stdint.h>

struct xgpub_options;
struct pollfd;

struct xgpub_local_limits {
	unsigned int per_user;	/* --max-local-per-user (0: no limit) */
	unsigned int pending;	/* --max-pending-per-user (>= 1) */
};

/* handshakes under way at once, of every user */
#define XGPUB_LOCAL_HS_MAX	256

/* a connection accepted on the local socket: its handshake begins now,
 * it is kept waiting, or closed; conn is the callee's */
void xgpub_local_client(int conn, const struct xgpub_options *opt,
			const struct xgpub_local_limits *lim);
/* the handshakes under way, to poll for input: how many put in p */
int xgpub_local_pollfds(struct pollfd *p, int max);
/*
 * After the poll: take the connect messages that came (a worker for each
 * that is right, which runs with opt), close those past their time, and
 * welcome the waiting connections that may shake hands now; how soon to
 * look again (ns, UINT64_MAX: nothing waits)
 */
uint64_t xgpub_local_serve(const struct pollfd *p, int np,
			   const struct xgpub_options *opt,
			   const struct xgpub_local_limits *lim);
/* at exit: close the waiting connections and the handshakes */
void xgpub_local_drop_waiting(void);

#endif /* XGPUB_LOCAL_CLIENTS_H */
