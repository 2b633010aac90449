/* SPDX-License-Identifier: MIT */
/*
 * xgpub_net_clients.h: network clients (the --listen socket) in the
 * daemon (xgpub_net_clients.c).
 */
#ifndef XGPUB_NET_CLIENTS_H
#define XGPUB_NET_CLIENTS_H

#include <stdint.h>

struct xgpub_options;
struct xgpu_tls_opts;

/*
 * The listening socket for spec (tcp:ADDRESS:PORT) with TLS o: the
 * socket, or -errno after a line on stderr (no TLS configuration, a key
 * file with wrong permissions, an address in use).
 */
int xgpub_net_open(const char *spec, const struct xgpu_tls_opts *o);
/*
 * Accept one connection on lfd; it waits (xgpub_net_sniff) until its
 * first bytes say whether it is a client (a worker for it) or a lane
 * (handed to its channel's worker).
 */
void xgpub_net_client(int lfd);
/* the most connections that wait to say what they are; of one host */
#define XGPUB_NET_SNIFF_MAX	64
#define XGPUB_NET_SNIFF_PER_HOST	24
/* the waiting connections, to poll for input: how many put in p */
struct pollfd;
int xgpub_net_pollfds(struct pollfd *p, int max);
/* after the poll: serve those that said (a client's worker runs with
 * opt; past max_net network clients at once, 0: no limit, it is closed);
 * how soon to look again (ns, UINT64_MAX: none waiting) */
uint64_t xgpub_net_sniff(const struct pollfd *p, int np,
			 const struct xgpub_options *opt,
			 unsigned int max_net);
/* at exit: close the waiting connections */
void xgpub_net_drop_waiting(void);

#endif /* XGPUB_NET_CLIENTS_H */
