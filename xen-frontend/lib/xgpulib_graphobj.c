// SPDX-License-Identifier: MIT
/*
 * xgpulib_graphobj.c: the guest's graph objects (CUgraph, CUgraphExec,
 * CUgraphNode, user objects around the worker's handles: one object per
 * handle, so a capture's graph and its nodes come back the same each
 * time they are asked for; memory pools are kept the same way), and the
 * events of this process by their wire handle, for graph queries.  Below the graph entry points
 * (xgpulib_api_graph*.c), it calls none of them.
 */
#include <stddef.h>
#include <stdlib.h>

#include "xgpulib.h"
#include "xgpulib_graph.h"
#include "xgpulib_vec.h"

#define ROBJ_MAGIC 0x78677270u	/* "xgrp" */

/* an object of enum robj_kind: CUgraph, CUgraphExec, CUgraphNode... */
struct robj {
	uint32_t magic;
	uint32_t kind;
	uint64_t remote;
	struct robj *graph;	/* RK_NODE: its graph */
	struct robj *next;	/* chain by remote */
	struct robj *pnext;	/* chain by address */
	void *cache;		/* RK_NODE: parameters handed out, freed with
				 * it (robj_cache) */
	void *staged;		/* RK_NODE: the CUDA_MEMCPY3D of the memcpy
				 * node it stands for (robj_stage) */
};

#define NBUCKETS 256
static pthread_mutex_t robj_mu = PTHREAD_MUTEX_INITIALIZER;
static struct robj *buckets[NBUCKETS];	/* by (kind, remote) */
static struct robj *pbuckets[NBUCKETS];	/* by address: an argument is
						 * looked up before it is read */

static unsigned int bucket(uint64_t remote)
{
	return (unsigned int)((remote * 0x9e3779b97f4a7c15ull) >> 56);
}

static unsigned int pbucket(const void *p)
{
	return bucket((uint64_t)(uintptr_t)p);
}

/* p if it is a live object of ours of kind (robj_mu held), else NULL */
static struct robj *live(const void *p, int kind)
{
	for (struct robj *o = pbuckets[pbucket(p)]; o; o = o->pnext)
		if (o == p)
			return o->kind == (uint32_t)kind ? o : NULL;
	return NULL;
}

static void punlink(struct robj *dead)
{
	for (struct robj **pp = &pbuckets[pbucket(dead)]; *pp;
	     pp = &(*pp)->pnext) {
		if (*pp == dead) {
			*pp = dead->pnext;
			return;
		}
	}
}

/* the object of (kind, remote), made on first sight; NULL: no memory */
struct robj *robj_for(int kind, uint64_t remote, struct robj *graph)
{
	struct robj *o;
	unsigned int b = bucket(remote);

	pthread_mutex_lock(&robj_mu);
	for (o = buckets[b]; o; o = o->next)
		if (o->remote == remote && o->kind == (uint32_t)kind)
			break;
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (o) {
			o->magic = ROBJ_MAGIC;
			o->kind = (uint32_t)kind;
			o->remote = remote;
			o->graph = graph;
			o->next = buckets[b];
			buckets[b] = o;
			o->pnext = pbuckets[pbucket(o)];
			pbuckets[pbucket(o)] = o;
		}
	}
	pthread_mutex_unlock(&robj_mu);
	return o;
}

/* a copy of p's fields if p is a live object of ours of kind */
static bool peek(const void *p, int kind, struct robj *copy)
{
	const struct robj *o;

	if (!p)
		return false;
	pthread_mutex_lock(&robj_mu);
	o = live(p, kind);
	if (o)
		*copy = *o;
	pthread_mutex_unlock(&robj_mu);
	return o != NULL;
}

/* the worker handle of an object argument of kind; 0 if it is not one */
uint64_t robj_remote(const void *p, int kind)
{
	struct robj o;

	return peek(p, kind, &o) ? o.remote : 0;
}

/* p (malloc'd) in the field at offset off of node object `node`, what
 * was there freed; false (p freed) if node is not a node of ours */
static bool node_keep(void *node, size_t off, void *p)
{
	struct robj *x;
	bool ok = false;

	pthread_mutex_lock(&robj_mu);
	x = live(node, RK_NODE);
	if (x) {
		void **slot = (void **)((char *)x + off);

		free(*slot);
		*slot = p;
		ok = true;
	}
	pthread_mutex_unlock(&robj_mu);
	if (!ok)
		free(p);
	return ok;
}

/* keep p (malloc'd) with node object o, freeing what it kept before;
 * false (p freed) if o is not a node of ours */
bool robj_cache(void *node, void *p)
{
	return node_keep(node, offsetof(struct robj, cache), p);
}

bool robj_stage(void *node, const CUDA_MEMCPY3D *p)
{
	CUDA_MEMCPY3D *c = malloc(sizeof(*c));

	if (!c)
		return false;
	*c = *p;
	return node_keep(node, offsetof(struct robj, staged), c);
}

size_t robj_staged_of(const void *graph, struct robj_staged_node **out)
{
	struct robj_staged_node *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	pthread_mutex_lock(&robj_mu);
	if (!live(graph, RK_GRAPH))
		goto done;
	for (unsigned int b = 0; b < NBUCKETS; b++) {
		for (struct robj *o = buckets[b]; o; o = o->next) {
			if (o->kind != RK_NODE || o->graph != graph ||
			    !o->staged)
				continue;
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 8;
				struct robj_staged_node *nv =
					realloc(v, nc * sizeof(*v));

				if (!nv)
					goto done;
				v = nv;
				cap = nc;
			}
			v[n].node = (CUgraphNode)o;
			v[n].p = *(const CUDA_MEMCPY3D *)o->staged;
			n++;
		}
	}
done:
	pthread_mutex_unlock(&robj_mu);
	*out = v;
	return n;
}

bool robj_staged(const void *node, CUDA_MEMCPY3D *p)
{
	struct robj *x;
	bool ok = false;

	if (!node)
		return false;
	pthread_mutex_lock(&robj_mu);
	x = live(node, RK_NODE);
	if (x && x->staged) {
		if (p)
			*p = *(const CUDA_MEMCPY3D *)x->staged;
		ok = true;
	}
	pthread_mutex_unlock(&robj_mu);
	return ok;
}

/* the graph object of a node object of ours, NULL if it is not one */
struct robj *robj_graph_of(const void *node)
{
	struct robj o;

	return peek(node, RK_NODE, &o) ? o.graph : NULL;
}

/* forget o, and with a graph all its nodes */
void robj_forget(struct robj *dead)
{
	pthread_mutex_lock(&robj_mu);
	for (unsigned int b = 0; b < NBUCKETS; b++) {
		struct robj **pp = &buckets[b];

		while (*pp) {
			struct robj *o = *pp;

			if (o == dead || (dead->kind == RK_GRAPH &&
					  o->graph == dead)) {
				*pp = o->next;
				if (o != dead) {
					punlink(o);
					o->magic = 0;
					free(o->cache);
					free(o->staged);
					free(o);
				}
			} else {
				pp = &o->next;
			}
		}
	}
	punlink(dead);
	dead->magic = 0;
	free(dead->cache);
	free(dead->staged);
	free(dead);
	pthread_mutex_unlock(&robj_mu);
}

/* ---- what the worker is asked of an object ------------------------------- */

CUresult robj_destroy(void *o, int kind,
			     CUresult (*call)(const struct xgpuif_handle_args *))
{
	struct xgpuif_handle_args a = { robj_remote(o, kind) };
	CUresult rc;

	if (!a.handle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = call(&a);
	if (rc == CUDA_SUCCESS)
		robj_forget((struct robj *)o);
	return rc;
}

CUresult robj_ask(const void *o, int kind,
		  CUresult (*call)(const struct xgpuif_handle_args *,
				   struct xgpuif_u64_reply *),
		  uint64_t *out)
{
	struct xgpuif_handle_args a = { robj_remote(o, kind) };
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	if (!a.handle || !out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = call(&a, &r);
	if (rc == CUDA_SUCCESS)
		*out = r.value;
	return rc;
}

/* ---- events by wire handle ----------------------------------------------- */

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static CUevent *evs;
static size_t nev, capev;

void xgpulib_event_note(CUevent e, bool live)
{
	pthread_mutex_lock(&ev_mu);
	if (live) {
		CUevent *n = xgpulib_vec_grow(evs, nev, &capev, sizeof(*n), 64);

		if (n) {
			evs = n;
			evs[nev++] = e;
		}
	} else {
		xgpulib_vec_take(evs, &nev, sizeof(*evs), &e, sizeof(e), NULL);
	}
	pthread_mutex_unlock(&ev_mu);
}

uint64_t xgpulib_event_remote(CUevent e)
{
	return e && e->magic == XGPULIB_EVENT_MAGIC ? e->remote : 0;
}

CUevent xgpulib_event_by_remote(uint64_t remote)
{
	CUevent e = NULL;

	pthread_mutex_lock(&ev_mu);
	for (size_t i = 0; i < nev && !e; i++)
		if (evs[i]->remote == remote)
			e = evs[i];
	pthread_mutex_unlock(&ev_mu);
	return e;
}
