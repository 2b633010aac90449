/* SPDX-License-Identifier: MIT */
/*
 * xgpub_local_clients.h: local clients (the --local socket) in the
 * daemon (xgpub_local_clients.c).
 *
 * Local clients per user (SO_PEERCRED uid) are bounded twice: a few
 * still shaking hands (their worker is forked, the channel not up) and
 * --max-local-per-user workers in all.  A connection past the first
 * bound waits, without a worker, until one of that user's handshakes
 * ends; one past the second, or past the waiting room, is closed at
 * once (the .c file says how many, and for how long).
 */
#ifndef XGPUB_LOCAL_CLIENTS_H
#define XGPUB_LOCAL_CLIENTS_H

#include <stdint.h>

struct xgpub_options;

/* a connection accepted on the local socket: a worker for it now (it
 * runs with opt), kept waiting, or closed; conn is the callee's */
void xgpub_local_client(int conn, const struct xgpub_options *opt,
			unsigned int max_per_user);
/* serve the waiting connections whose user may have a worker now; how
 * soon to look again (ns), UINT64_MAX with none waiting */
uint64_t xgpub_local_waiting(const struct xgpub_options *opt,
			     unsigned int max_per_user);
/* at exit: close the waiting connections */
void xgpub_local_drop_waiting(void);

#endif /* XGPUB_LOCAL_CLIENTS_H */
