/* SPDX-License-Identifier: MIT */
/*
 * xgpub_metrics.h: per-guest figures in Prometheus' text format
 * (xgpub_metrics.c), served on an address given with --metrics.
 */
#ifndef XGPUB_METRICS_H
#define XGPUB_METRICS_H

/* listen on "IPV4:PORT" (or localhost:PORT): the socket, or -errno with a
 * line on stderr */
int xgpub_metrics_open(const char *spec);
/* take one scrape on the listening socket (bounded in time) */
void xgpub_metrics_serve(int lfd);

#endif /* XGPUB_METRICS_H */
