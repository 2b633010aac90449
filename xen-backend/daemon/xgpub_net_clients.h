/* SPDX-License-Identifier: MIT */
/*
 * xgpub_net_clients.h: network clients (the --listen socket) in the
 * daemon (xgpub_net_clients.c).
 */
#ifndef XGPUB_NET_CLIENTS_H
#define XGPUB_NET_CLIENTS_H

struct xgpub_options;
struct xgpu_tls_opts;

/*
 * The listening socket for spec (tcp:ADDRESS:PORT) with TLS o: the
 * socket, or -errno after a line on stderr (no TLS configuration, a key
 * file with wrong permissions, an address in use).
 */
int xgpub_net_open(const char *spec, const struct xgpu_tls_opts *o);
/* accept one connection on lfd: a worker for it (runs with opt), or
 * closed past max_net network clients at once (0: no limit) */
void xgpub_net_client(int lfd, const struct xgpub_options *opt,
		      unsigned int max_net);

#endif /* XGPUB_NET_CLIENTS_H */
