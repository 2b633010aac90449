// SPDX-License-Identifier: MIT
/*
 * xgpub_ops_default.c: every op of xgpu_calls.def gets a weak default
 * handler answering XGPUIF_ST_NOT_IMPL, so that the table always links; the
 * real handlers (xgpub_op_*.c) override them.
 */
#include "xgpub_worker.h"

#define XGPU_CALL(num, name, mode, args, reply)                             \
	__attribute__((weak)) int xgpub_op_##name(                          \
		struct xgpub_worker *w, const struct xgpuif_request *req,   \
		const void *payload, uint32_t len, void *out,               \
		uint32_t *rlen)                                             \
	{                                                                   \
		(void)w;                                                    \
		(void)req;                                                  \
		(void)payload;                                              \
		(void)len;                                                  \
		(void)out;                                                  \
		*rlen = 0;                                                  \
		return XGPUIF_ST_NOT_IMPL;                                  \
	}
#include "xgpu_calls.def"
#undef XGPU_CALL
