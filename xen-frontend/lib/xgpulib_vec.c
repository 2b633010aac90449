// SPDX-License-Identifier: MIT
/*
 * xgpulib_vec.c: growing arrays (xgpulib_vec.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "xgpulib_vec.h"

void *xgpulib_vec_grow(void *v, size_t n, size_t *cap, size_t elem,
		       size_t first)
{
	size_t nc;

	if (n < *cap)
		return v;
	nc = *cap ? *cap * 2 : first;
	if (nc <= *cap || nc > SIZE_MAX / elem)
		return NULL;
	v = realloc(v, nc * elem);
	if (v)
		*cap = nc;
	return v;
}
