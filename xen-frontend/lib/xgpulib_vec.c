// SPDX-License-Identifier: MIT
/*
 * xgpulib_vec.c: growing arrays (xgpulib_vec.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

bool xgpulib_vec_take(void *v, size_t *n, size_t elem, const void *key,
		      size_t klen, void *out)
{
	unsigned char *e = v, *last = e + (*n ? *n - 1 : 0) * elem;

	for (size_t i = 0; i < *n; i++, e += elem) {
		if (memcmp(e, key, klen) != 0)
			continue;
		if (out)
			memcpy(out, e, elem);
		if (e != last)
			memcpy(e, last, elem);
		(*n)--;
		return true;
	}
	return false;
}
