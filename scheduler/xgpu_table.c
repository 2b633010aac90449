// SPDX-License-Identifier: MIT
/*
 * xgpu_table.c: see xgpu_table.h.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpu_table.h"

const void *xgpu_table_lookup(const void *const *table, size_t n,
			      const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *const *entry_name = table[i];

		if (!strcmp(*entry_name, name))
			return table[i];
	}
	return NULL;
}

void *xgpu_table_grow(void *v, unsigned int *alloc, unsigned int n,
		      size_t size)
{
	unsigned int na = *alloc ? 2 * *alloc : 8;

	if (n < *alloc)
		return v;
	v = realloc(v, na * size);
	if (v)
		*alloc = na;
	return v;
}
