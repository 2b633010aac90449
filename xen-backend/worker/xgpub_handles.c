// SPDX-License-Identifier: MIT
/*
 * xgpub_handles.c: per-guest handle tables (and the growing array the
 * worker's other tables use, xgpub_grow).  A guest names every backend
 * object by (generation << 32 | index + 1); a stale or forged handle finds
 * a freed entry, another generation or another type, and is refused.  The
 * guest never learns a Dom0 pointer.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

#define HS_EMPTY	0u
#define HS_GONE		UINT32_MAX

static uint32_t hash_of(int type, const void *obj, uint32_t mask)
{
	uint64_t k = (uint64_t)(uintptr_t)obj ^ ((uint64_t)type << 56);

	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32) & mask;
}

/* the index is gone (no memory): finds walk the table from now on */
static void index_drop(struct xgpub_handles *t)
{
	free(t->hslot);
	free(t->hobj);
	t->hslot = NULL;
	t->hobj = NULL;
	t->hcap = t->hused = 0;
	t->hbroken = true;
}

static void index_put(struct xgpub_handles *t, uint32_t i)
{
	uint32_t mask = t->hcap - 1;
	uint32_t s = hash_of(t->e[i].type, t->hobj[i], mask);

	while (t->hslot[s] != HS_EMPTY && t->hslot[s] != HS_GONE)
		s = (s + 1) & mask;
	if (t->hslot[s] == HS_EMPTY)
		t->hused++;
	t->hslot[s] = i + 1;
}

/* room for one more: grow (and clear removed slots) past half full */
static bool index_room(struct xgpub_handles *t)
{
	uint64_t live = 0;
	uint32_t ncap;
	uint32_t *ns;

	if (t->hbroken)
		return false;
	if ((uint64_t)(t->hused + 1) * 2 <= t->hcap)
		return true;
	for (int k = XGPUB_H_FREE + 1; k < XGPUB_H_NTYPES; k++)
		live += t->count[k];
	/* as large again as the live entries: removed slots go */
	ncap = 128;
	while ((live + 1) * 4 > ncap)
		ncap *= 2;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns) {
		index_drop(t);
		return false;
	}
	free(t->hslot);
	t->hslot = ns;
	t->hcap = ncap;
	t->hused = 0;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].type != XGPUB_H_FREE)
			index_put(t, i);
	return true;
}

static void index_add(struct xgpub_handles *t, uint32_t i)
{
	if (t->hbroken)
		return;
	if (!t->hobj || i >= t->cap) {
		void **no = realloc(t->hobj, t->cap * sizeof(*no));

		if (!no) {
			index_drop(t);
			return;
		}
		t->hobj = no;
	}
	t->hobj[i] = t->e[i].obj;
	/* entry i is live (its type set) before the index is grown */
	if (index_room(t))
		index_put(t, i);
}

static void index_del(struct xgpub_handles *t, uint32_t i)
{
	uint32_t mask, s;

	if (t->hbroken || !t->hcap)
		return;
	mask = t->hcap - 1;
	s = hash_of(t->e[i].type, t->hobj[i], mask);
	for (uint32_t n = 0; n < t->hcap && t->hslot[s] != HS_EMPTY; n++) {
		if (t->hslot[s] == i + 1) {
			t->hslot[s] = HS_GONE;
			return;
		}
		s = (s + 1) & mask;
	}
}

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
			if (!t->hbroken) {
				void **no = realloc(t->hobj,
						    ncap * sizeof(*no));

				if (no)
					t->hobj = no;
				else
					index_drop(t);
			}
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
	index_add(t, i);
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
	index_del(t, (uint32_t)(e - t->e));
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
	if (!t->hbroken) {
		uint32_t mask = t->hcap - 1, s;

		if (!t->hcap)
			return NULL;
		s = hash_of(type, obj, mask);
		for (uint32_t n = 0; n < t->hcap && t->hslot[s] != HS_EMPTY;
		     n++) {
			uint32_t v = t->hslot[s];

			if (v != HS_GONE && t->e[v - 1].type == type &&
			    t->e[v - 1].obj == obj)
				return &t->e[v - 1];
			s = (s + 1) & mask;
		}
		return NULL;
	}
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].type == type && t->e[i].obj == obj)
			return &t->e[i];
	return NULL;
}

xgpuif_handle_t xgpub_handle_named(struct xgpub_handles *t, int type,
				   const void *obj)
{
	struct xgpub_hentry *e = xgpub_handle_find(t, type, obj);

	return e ? xgpub_handle_of(t, e) : 0;
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
	free(t->hslot);
	free(t->hobj);
	memset(t, 0, sizeof(*t));
}

/* ---- a growing array, for the worker's other tables ---------------------- */

void *xgpub_grow(void *a, uint32_t n, uint32_t *cap, size_t elem,
		 uint32_t first, uint32_t max)
{
	uint32_t ncap;

	if (n < *cap)
		return a;
	ncap = *cap ? *cap * 2 : first;
	if (ncap > max || ncap <= *cap)
		return NULL;
	a = realloc(a, (size_t)ncap * elem);
	if (a)
		*cap = ncap;
	return a;
}

void *xgpub_push(void *ap, uint32_t *n, uint32_t *cap, size_t elem,
		 uint32_t first, uint32_t max)
{
	void **p = ap;
	char *a = xgpub_grow(*p, *n, cap, elem, first, max);

	if (!a)
		return NULL;
	*p = a;
	return a + (size_t)(*n)++ * elem;
}
