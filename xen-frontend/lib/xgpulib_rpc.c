// SPDX-License-Identifier: MIT
/* xgpulib_rpc.c: calls on the process's channel, in the current context. */
#include <string.h>

#include "xgpulib_current.h"
#include "xgpulib_env.h"
#include "xgpulib_output.h"
#include "xgpulib_rpc.h"

struct xgpulib_chan *xgpulib_ch;
pthread_mutex_t xgpulib_data_mu = PTHREAD_MUTEX_INITIALIZER;

CUresult xgpulib_check_init(void)
{
	return xgpulib_ch ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult send(uint16_t op, bool posted, const struct xgpuif_iov *iov,
		     int niov, struct xgpulib_waiter *w)
{
	struct xgpulib_req rq = {
		.op = op,
		.posted = posted,
		.ctx = xgpulib_current_remote(),
		.iov = iov,
		.niov = niov,
	};

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	return xgpulib_chan_submit(xgpulib_ch, &rq, w);
}

CUresult xgpulib_call(uint16_t op, bool exact, const struct xgpuif_iov *iov,
		      int niov, void *r, uint32_t rsize, void *rtail,
		      uint32_t rtail_cap, uint32_t *rtail_len)
{
	struct xgpulib_waiter w;
	CUresult rc, deferred;

	memset(&w, 0, sizeof(w));
	w.reply = r;
	w.reply_cap = rsize;
	w.reply2 = rtail;
	w.reply2_cap = rtail ? rtail_cap : 0;
	rc = send(op, false, iov, niov, &w);
	if (rc)
		return rc;
	rc = xgpulib_chan_wait(xgpulib_ch, &w);
	if (w.flags & XGPUIF_SF_OUTPUT)
		xgpulib_output_drain(xgpulib_ch);
	if (rc == CUDA_SUCCESS && w.reply_len < rsize)
		rc = CUDA_ERROR_UNKNOWN;	/* a backend bug */
	if (rtail_len)
		*rtail_len = w.reply_len > rsize ? w.reply_len - rsize : 0;
	if (rc)
		xgpulib_dbg("op %u answered error %d", op, rc);
	if (exact)
		return rc;
	deferred = xgpulib_chan_take_deferred(xgpulib_ch);
	return rc == CUDA_SUCCESS && deferred ? deferred : rc;
}

CUresult xgpulib_post(uint16_t op, const struct xgpuif_iov *iov, int niov)
{
	return send(op, true, iov, niov, NULL);
}

CUresult xgpulib_submit(uint16_t op, const struct xgpuif_iov *iov, int niov,
			struct xgpulib_waiter *w)
{
	memset(w, 0, sizeof(*w));
	return send(op, false, iov, niov, w);
}

CUresult xgpulib_wait(struct xgpulib_waiter *w)
{
	CUresult rc = xgpulib_chan_wait(xgpulib_ch, w);

	if (w->flags & XGPUIF_SF_OUTPUT)
		xgpulib_output_drain(xgpulib_ch);
	return rc;
}

CUresult xgpulib_take_deferred(void)
{
	return xgpulib_ch ? xgpulib_chan_take_deferred(xgpulib_ch) :
			    CUDA_SUCCESS;
}
