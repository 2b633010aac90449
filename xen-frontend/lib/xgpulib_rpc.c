// SPDX-License-Identifier: MIT
/* xgpulib_rpc.c: calls on the process's channel, in the current context. */
#include <stdlib.h>
#include <string.h>

#include "xgpulib_current.h"
#include "xgpulib_env.h"
#include "xgpulib_mco.h"
#include "xgpulib_output.h"
#include "xgpulib_rpc.h"
#include "xgpulib_shadow.h"
#include "xgpulib_transport.h"

struct xgpulib_chan *xgpulib_ch;
pthread_mutex_t xgpulib_data_mu = PTHREAD_MUTEX_INITIALIZER;

CUresult xgpulib_check_init(void)
{
	return xgpulib_ch ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

/* XGPU_MANAGED: coherent, or zero copy where the transport can map the
 * guest's pages in the worker at their address */
bool xgpulib_managed_coherent(void)
{
	const char *m = xgpulib_env_str("XGPU_MANAGED", NULL);
	static bool said;

	if (m && !strcmp(m, "coherent"))
		return true;
	if (m && strcmp(m, "zero-copy") && !said) {
		said = true;
		xgpulib_log("XGPU_MANAGED=%s: use \"coherent\" or "
			    "\"zero-copy\"; the transport's default applies", m);
	}
	if (m && !strcmp(m, "zero-copy"))
		return false;
	return xgpulib_ch && !xgpulib_ch->t->ops->hostmem_share;
}

/*
 * Coherent managed memory (xgpulib_mco.h) before a request: a payload
 * that lies in it is copied out first (touching it may fault, and the
 * fault's fetch needs the channel's lock, which the copy into the ring
 * holds), then what the program wrote goes back to the worker and every
 * block it fetched is dropped: any request may let the GPU read or write
 * the memory.  *bounce: what to free once the request is on the ring.
 */
static CUresult managed_before(const struct xgpuif_iov **iov, int *niov,
			       struct xgpuif_iov *one, void **bounce)
{
	bool touched = false;
	uint32_t len = 0;
	uint8_t *b;

	*bounce = NULL;
	for (int i = 0; i < *niov; i++) {
		touched |= xgpulib_mco_touches((*iov)[i].base, (*iov)[i].len);
		len += (*iov)[i].len;
	}
	if (touched) {
		b = malloc(len ? len : 1);
		if (!b)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*one = (struct xgpuif_iov){ b, len };
		for (int i = 0; i < *niov; i++) {
			memcpy(b, (*iov)[i].base, (*iov)[i].len);
			b += (*iov)[i].len;
		}
		*bounce = (void *)one->base;
		*iov = one;
		*niov = 1;
	}
	xgpulib_mco_release();
	return CUDA_SUCCESS;
}

static CUresult send(uint16_t op, bool posted, const struct xgpuif_iov *iov,
		     int niov, struct xgpulib_waiter *w)
{
	struct xgpulib_req rq = {
		.op = op,
		.posted = posted,
		.ctx = xgpulib_current_remote(),
	};
	struct xgpuif_iov one;
	void *bounce = NULL;
	CUresult rc;

	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (__atomic_load_n(&xgpulib_mco_live, __ATOMIC_ACQUIRE)) {
		rc = managed_before(&iov, &niov, &one, &bounce);
		if (rc)
			return rc;
	}
	if (__atomic_load_n(&xgpulib_shadow_live, __ATOMIC_ACQUIRE))
		xgpulib_shadow_before(op);
	rq.iov = iov;
	rq.niov = niov;
	rc = xgpulib_chan_submit(xgpulib_ch, &rq, w);
	free(bounce);
	return rc;
}

void (*volatile xgpulib_logs_hook)(void);

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
	xgpulib_output_settle(xgpulib_ch);
	if (__atomic_load_n(&xgpulib_shadow_live, __ATOMIC_ACQUIRE))
		xgpulib_shadow_after(op, rc);
	if ((w.flags & XGPUIF_SF_LOGS) && xgpulib_logs_hook)
		xgpulib_logs_hook();
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

	xgpulib_output_settle(xgpulib_ch);
	if ((w->flags & XGPUIF_SF_LOGS) && xgpulib_logs_hook)
		xgpulib_logs_hook();
	return rc;
}

CUresult xgpulib_take_deferred(void)
{
	return xgpulib_ch ? xgpulib_chan_take_deferred(xgpulib_ch) :
			    CUDA_SUCCESS;
}
