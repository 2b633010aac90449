// SPDX-License-Identifier: MIT
/*
 * xgpub_handles.c: per-guest handle tables.  A guest names every backend
 * object by (generation << 32 | index + 1); a stale or forged handle finds
 * a freed entry, another generation or another type, and is refused.  The
 * guest never learns a Dom0 pointer.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

xgpuif_handle_t xgpub_handle_new(struct xgpub_handles *t, int type,
				 void *obj, void *extra)
{
	struct xgpub_hentry *e;
	uint32_t i;

	if (t->free_head) {
		i = t->free_head - 1;
		e = &t->e[i];
		t->free_head = (uint32_t)(uintptr_t)e->obj;
	} else {
		if (t->n == t->cap) {
			uint32_t ncap = t->cap ? t->cap * 2 : 64;
			struct xgpub_hentry *ne;

			if (ncap > XGPUB_MAX_HANDLES)
				return 0;
			ne = realloc(t->e, ncap * sizeof(*ne));
			if (!ne)
				return 0;
			t->e = ne;
			t->cap = ncap;
		}
		i = t->n++;
		e = &t->e[i];
		e->gen = 0;
	}
	/* generations start at 1, so handles are >= 1 << 32 and never
	 * collide with the stream constants 1 and 2 */
	e->gen++;
	if (e->gen == 0)
		e->gen = 1;
	e->type = (uint16_t)type;
	e->obj = obj;
	e->extra = extra;
	t->count[type]++;
	return ((xgpuif_handle_t)e->gen << 32) | (i + 1);
}

struct xgpub_hentry *xgpub_handle_get(struct xgpub_handles *t,
				      xgpuif_handle_t h, int type)
{
	uint32_t idx = (uint32_t)h, gen = (uint32_t)(h >> 32);
	struct xgpub_hentry *e;

	if (idx == 0 || idx > t->n)
		return NULL;
	e = &t->e[idx - 1];
	if (e->type != type || e->type == XGPUB_H_FREE || e->gen != gen)
		return NULL;
	return e;
}

int xgpub_handle_free(struct xgpub_handles *t, xgpuif_handle_t h, int type)
{
	struct xgpub_hentry *e = xgpub_handle_get(t, h, type);

	if (!e)
		return -1;
	free(e->extra);
	e->extra = NULL;
	t->count[e->type]--;
	e->type = XGPUB_H_FREE;
	e->obj = (void *)(uintptr_t)t->free_head;
	t->free_head = (uint32_t)h;
	return 0;
}

xgpuif_handle_t xgpub_handle_of(const struct xgpub_handles *t,
				const struct xgpub_hentry *e)
{
	return ((xgpuif_handle_t)e->gen << 32) | (uint32_t)(e - t->e + 1);
}

struct xgpub_hentry *xgpub_handle_find(struct xgpub_handles *t, int type,
				       const void *obj)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].type == type && t->e[i].obj == obj)
			return &t->e[i];
	return NULL;
}

void xgpub_handle_drop(struct xgpub_handles *t, struct xgpub_hentry *e)
{
	xgpub_handle_free(t, xgpub_handle_of(t, e), e->type);
}

void xgpub_handle_each(struct xgpub_handles *t, int type,
		       void (*fn)(struct xgpub_hentry *e, void *arg),
		       void *arg)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].type == type)
			fn(&t->e[i], arg);
}

void xgpub_handles_destroy(struct xgpub_handles *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].type != XGPUB_H_FREE)
			free(t->e[i].extra);
	free(t->e);
	memset(t, 0, sizeof(*t));
}
