/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_vec.h: growing arrays, for the library's tables (device
 * allocations, registered host memory, context-local storage).  A leaf:
 * it calls nothing else of the library.  The caller does the locking.
 */
#ifndef XGPULIB_VEC_H
#define XGPULIB_VEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Room for one more element in the array v, which holds n elements of
 * elem bytes and has room for *cap: v itself while n < *cap, else v moved
 * to twice the room (first elements the first time) and *cap updated.
 * NULL when out of memory; v and *cap are then unchanged.
 */
void *xgpulib_vec_grow(void *v, size_t n, size_t *cap, size_t elem,
		       size_t first);

/*
 * Take out of the array v (*n elements of elem bytes, each led by its
 * key) the first element whose first klen bytes are those at key: a copy
 * in *out (unless out is NULL), the last element moved to its place, *n
 * one less.  false (nothing changed) if there is none.
 */
bool xgpulib_vec_take(void *v, size_t *n, size_t elem, const void *key,
		      size_t klen, void *out);

#endif /* XGPULIB_VEC_H */
