/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_output.h: device output (what kernels printed with printf) on
 * the program's stdout.  The worker keeps what the host driver printed
 * for this process and says so in the reply of a synchronous request
 * (XGPUIF_SF_OUTPUT); a synchronous call that returns after such a
 * reply (its own or another thread's) has the output fetched first, so a
 * kernel's lines come before anything the program prints after the
 * synchronising call, as they do natively.  (Another thread's: where the
 * program is the daemon's worker on a chained backend, its gate thread's
 * event waits get the flag as often as the guest's own synchronize.)
 */
#ifndef XGPULIB_OUTPUT_H
#define XGPULIB_OUTPUT_H

#include "xgpulib_chan.h"

/*
 * Fetch the waiting device output from the worker (DEVICE_OUTPUT, as
 * often as it takes) and write it to stdout through stdio, as the host
 * driver does, after the program's own buffered lines.  Lost output is reported on stderr.  Thread-safe;
 * threads that get such replies at once write in turn.
 */
void xgpulib_output_drain(struct xgpulib_chan *c);

/* xgpulib_output_drain where a reply said output waits since the last
 * drain */
void xgpulib_output_settle(struct xgpulib_chan *c);

#endif /* XGPULIB_OUTPUT_H */
