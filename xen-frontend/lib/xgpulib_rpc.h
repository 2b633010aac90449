/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_rpc.h: calls to the backend as the rest of the library makes
 * them: through the process's one channel (opened by cuInit), in the
 * calling thread's current context.  The typed stubs generated from the
 * protocol's table (xgpulib_calls.h: xgpulib_call_<NAME>, _post_,
 * _submit_) are built on these.
 *
 * Errors of posted requests are deferred: the next synchronous call
 * returns one instead of its own success, once, as CUDA returns
 * asynchronous errors; ops marked EXACT keep their own status and leave
 * the deferred error for the next call.
 *
 * A reply that says device output waits (XGPUIF_SF_OUTPUT) has it
 * fetched and written to stdout before the call returns
 * (xgpulib_output.c).
 */
#ifndef XGPULIB_RPC_H
#define XGPULIB_RPC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "xgpulib_chan.h"
#include "xgpulib_calls.h"

/* the channel of this process (NULL until cuInit succeeded) */
extern struct xgpulib_chan *xgpulib_ch;

/*
 * The data area is one staging buffer per channel: a copy or an image
 * upload holds xgpulib_data_mu while it uses it (whole operation).
 */
extern pthread_mutex_t xgpulib_data_mu;

/* CUDA_ERROR_NOT_INITIALIZED unless cuInit succeeded */
CUresult xgpulib_check_init(void);

/*
 * Called on the thread that got a reply flagged XGPUIF_SF_LOGS, before
 * its call returns: fetch the driver's log messages the worker queued
 * and run the program's callbacks for them.  Set by xgpulib_api_logs.c
 * when the first callback is registered (the worker queues messages for
 * registered callbacks only); a hook, so that this layer does not call
 * up into the API layer that calls it.
 */
extern void (*volatile xgpulib_logs_hook)(void);

/* is managed memory coherent (not zero copy) in this process?  (the
 * transport's default or XGPU_MANAGED) */
bool xgpulib_managed_coherent(void);

/*
 * A synchronous call: its reply struct into r (rsize bytes; a shorter
 * reply is CUDA_ERROR_UNKNOWN), trailing entries into rtail.
 */
CUresult xgpulib_call(uint16_t op, bool exact, const struct xgpuif_iov *iov,
		      int niov, void *r, uint32_t rsize, void *rtail,
		      uint32_t rtail_cap, uint32_t *rtail_len);
/* a posted request: returns once it is on the ring */
CUresult xgpulib_post(uint16_t op, const struct xgpuif_iov *iov, int niov);
/* pipelining: send now, xgpulib_wait later (no reply payload) */
CUresult xgpulib_submit(uint16_t op, const struct xgpuif_iov *iov, int niov,
			struct xgpulib_waiter *w);
CUresult xgpulib_wait(struct xgpulib_waiter *w);
/* return (and clear) the deferred error of posted requests */
CUresult xgpulib_take_deferred(void);

#endif /* XGPULIB_RPC_H */
