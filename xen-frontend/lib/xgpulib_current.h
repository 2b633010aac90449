/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_current.h: the calling thread's context stack (CUDA's "current
 * context").  Thread-local, so no lock.  Every request carries the wire
 * handle of the context on top (xgpulib_current_remote).
 */
#ifndef XGPULIB_CURRENT_H
#define XGPULIB_CURRENT_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

/* the calling thread's current context (NULL if none) */
CUcontext xgpulib_current(void);
/* the wire handle of the current context, 0 if none */
uint64_t xgpulib_current_remote(void);

/* push c (CUDA_ERROR_OUT_OF_MEMORY when the stack is full) */
CUresult xgpulib_current_push(CUcontext c);
/* pop the top into *c; false when the stack is empty */
bool xgpulib_current_pop(CUcontext *c);
/* replace the top with c (push onto an empty stack) */
void xgpulib_current_set(CUcontext c);
bool xgpulib_current_full(void);

/*
 * Make c the top for the duration of one call, for a request about a
 * context that is not the caller's current one; leave puts back what was
 * there.
 */
struct xgpulib_current_saved {
	int depth;
	CUcontext top;
};
void xgpulib_current_enter(CUcontext c, struct xgpulib_current_saved *s);
void xgpulib_current_leave(const struct xgpulib_current_saved *s);

#endif /* XGPULIB_CURRENT_H */
