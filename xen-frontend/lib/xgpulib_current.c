// SPDX-License-Identifier: MIT
/*
 * xgpulib_current.c: the per-thread context stack.  CUDA documents no
 * depth limit; 32 nested pushes is far more than any library stack does.
 */
#include "xgpulib.h"
#include "xgpulib_current.h"

#define STACK_DEPTH	32

static __thread CUcontext tls_stack[STACK_DEPTH];
static __thread int tls_depth;

CUcontext xgpulib_current(void)
{
	return tls_depth ? tls_stack[tls_depth - 1] : NULL;
}

uint64_t xgpulib_current_remote(void)
{
	CUcontext c = xgpulib_current();

	/* written atomically by the context code: read without a lock */
	return c ? __atomic_load_n(&c->remote, __ATOMIC_ACQUIRE) : 0;
}

CUresult xgpulib_current_push(CUcontext c)
{
	if (tls_depth == STACK_DEPTH)
		return CUDA_ERROR_OUT_OF_MEMORY;
	tls_stack[tls_depth++] = c;
	return CUDA_SUCCESS;
}

bool xgpulib_current_pop(CUcontext *c)
{
	if (!tls_depth)
		return false;
	tls_depth--;
	if (c)
		*c = tls_stack[tls_depth];
	return true;
}

void xgpulib_current_set(CUcontext c)
{
	if (!tls_depth)
		tls_depth = 1;
	tls_stack[tls_depth - 1] = c;
}

bool xgpulib_current_full(void)
{
	return tls_depth == STACK_DEPTH;
}

void xgpulib_current_enter(CUcontext c, struct xgpulib_current_saved *s)
{
	s->depth = tls_depth;
	s->top = xgpulib_current();
	xgpulib_current_set(c);
}

void xgpulib_current_leave(const struct xgpulib_current_saved *s)
{
	if (s->depth)
		tls_stack[s->depth - 1] = s->top;
	tls_depth = s->depth;
}
