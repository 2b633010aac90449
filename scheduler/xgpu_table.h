/* SPDX-License-Identifier: MIT */
/*
 * xgpu_table.h: the two small table chores that the GPU scheduler and the
 * VCPU coordinator (and the tests' fake VCPU backend) share: finding a
 * policy or a backend by name, and growing an array of guests or domains.
 */
#ifndef XGPU_TABLE_H
#define XGPU_TABLE_H

#include <stddef.h>

#define XGPU_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The entry called `name` of a table of n pointers to structures whose
 * FIRST member is their name (const char *name), or NULL (also for a NULL
 * name).  A pointer to a structure is a pointer to its first member (C11
 * 6.7.2.1), so one function serves every such table; each user asserts
 * that its name comes first.
 */
const void *xgpu_table_lookup(const void *const *table, size_t n,
			      const char *name);

/*
 * Room for one more element in the array v of *alloc elements of `size`
 * bytes, n of them in use: v itself while there is room, else v grown to
 * twice the size (8 elements at first) and *alloc updated.  NULL when out
 * of memory; v is then untouched and still the caller's.
 */
void *xgpu_table_grow(void *v, unsigned int *alloc, unsigned int n,
		      size_t size);

#endif /* XGPU_TABLE_H */
