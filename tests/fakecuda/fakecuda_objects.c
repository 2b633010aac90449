// SPDX-License-Identifier: MIT
/*
 * fakecuda_objects.c: the fake driver's state (tests only, see fakecuda.h):
 * the list of live objects and the address ranges the device may touch,
 * and the lookups every entry point uses to refuse a stale or forged
 * handle or a wild pointer instead of following it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fakecuda.h"

bool fc_inited;
__thread struct fctx *fc_cur;	/* per thread, as the driver's */
struct fobj *fc_objs;
struct range *fc_ranges;
size_t fc_nranges;
uint64_t fc_mem_used;

static size_t cap_ranges;

/* ---- address ranges ------------------------------------------------------ */

struct range *fc_range_find(uintptr_t p, size_t n)
{
	if (n == 0)
		n = 1;
	for (size_t i = 0; i < fc_nranges; i++) {
		struct range *r = &fc_ranges[i];

		if (p >= r->base && p - r->base < r->size &&
		    n <= r->size - (p - r->base))
			return r;
	}
	return NULL;
}

bool fc_dev_ok(CUdeviceptr p, size_t n)
{
	return n == 0 || fc_range_find((uintptr_t)p, n) != NULL;
}

bool fc_copy_ok(CUdeviceptr p, size_t n)
{
	static int wild = -1;

	if (wild < 0)
		wild = getenv("XGPU_FAKE_WILD_COPIES") &&
		       atoi(getenv("XGPU_FAKE_WILD_COPIES"));
	return wild || fc_dev_ok(p, n);
}

struct range *fc_range_add(uintptr_t base, size_t size, int kind)
{
	if (fc_nranges == cap_ranges) {
		size_t ncap = cap_ranges ? cap_ranges * 2 : 64;
		struct range *n = realloc(fc_ranges, ncap * sizeof(*n));

		if (!n)
			return NULL;
		fc_ranges = n;
		cap_ranges = ncap;
	}
	fc_ranges[fc_nranges] = (struct range){ .base = base, .size = size,
						.kind = kind };
	return &fc_ranges[fc_nranges++];
}

void fc_range_del(struct range *r)
{
	if (r->pool)
		r->pool->used -= r->size;
	fc_mem_used -= r->charged;
	fc_budget_note();
	if (r->managed && r->kind == R_DEVICE)
		munmap((void *)r->base, r->charged);
	free(r->mem);
	*r = fc_ranges[--fc_nranges];
}

struct range *fc_range_at(uintptr_t base, int kind)
{
	for (size_t i = 0; i < fc_nranges; i++)
		if (fc_ranges[i].base == base && fc_ranges[i].kind == kind)
			return &fc_ranges[i];
	return NULL;
}

/* ---- objects ------------------------------------------------------------- */

/*
 * The list is changed and searched under objs_mu: a worker calls the
 * driver from two threads (its dispatcher, and the GPU scheduler's
 * completion thread, which creates, waits for and destroys events).
 * Walks of the whole list elsewhere run on the dispatcher alone; a node
 * another thread unlinks meanwhile stays readable (streams and events are
 * kept a while, fc_obj_free).
 */
static pthread_mutex_t objs_mu = PTHREAD_MUTEX_INITIALIZER;

void fc_obj_add(struct fobj *o, int type, struct fctx *ctx)
{
	o->type = type;
	o->ctx = ctx;
	pthread_mutex_lock(&objs_mu);
	o->next = fc_objs;
	fc_objs = o;
	pthread_mutex_unlock(&objs_mu);
}

bool fc_ctx_waits(struct fctx *ctx)
{
	bool any = false;

	pthread_mutex_lock(&objs_mu);
	for (struct fobj *o = fc_objs; o && !any; o = o->next)
		if (o->type == O_STREAM && o->ctx == ctx)
			any = fc_fstream_waits((struct fstream *)o);
	pthread_mutex_unlock(&objs_mu);
	return any;
}

void fc_obj_unlink(struct fobj *o)
{
	pthread_mutex_lock(&objs_mu);
	for (struct fobj **pp = &fc_objs; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	}
	pthread_mutex_unlock(&objs_mu);
}

/*
 * Destroyed streams and events are kept a while (the last NDEAD of them)
 * rather than freed: the driver's handle of a destroyed object points to
 * freed memory, and a call with it may crash the caller (a worker that
 * recorded a mark on a stream the guest had destroyed was killed by
 * SIGSEGV on the H200).  The fake stops the process with a message where
 * it would answer INVALID_HANDLE, so a worker that keeps such a handle is
 * found without a GPU.
 */
#define NDEAD 256
static struct fobj *dead[NDEAD];
static unsigned int dead_next;
static pthread_mutex_t dead_mu = PTHREAD_MUTEX_INITIALIZER;

void fc_obj_free(struct fobj *o)
{
	struct fobj *old;

	if (o->type != O_STREAM && o->type != O_EVENT) {
		free(o);
		return;
	}
	pthread_mutex_lock(&dead_mu);
	old = dead[dead_next];
	dead[dead_next] = o;
	dead_next = (dead_next + 1) % NDEAD;
	pthread_mutex_unlock(&dead_mu);
	free(old);
}

static void dead_check(const void *p, int type)
{
	pthread_mutex_lock(&dead_mu);
	for (unsigned int i = 0; i < NDEAD; i++) {
		if (dead[i] == p && dead[i]->type == type) {
			fprintf(stderr, "fakecuda: %s %p used after it was "
				"destroyed (the driver may crash)\n",
				type == O_STREAM ? "stream" : "event", p);
			abort();
		}
	}
	pthread_mutex_unlock(&dead_mu);
}

struct fobj *fc_obj_find(const void *p, int type)
{
	if (!p)
		return NULL;
	pthread_mutex_lock(&objs_mu);
	for (struct fobj *o = fc_objs; o; o = o->next) {
		if (o == p && o->type == type) {
			pthread_mutex_unlock(&objs_mu);
			return o;
		}
	}
	pthread_mutex_unlock(&objs_mu);
	if (type == O_STREAM || type == O_EVENT)
		dead_check(p, type);
	return NULL;
}

struct ffunc *fc_func_find(const void *p)
{
	if (!p)
		return NULL;
	for (struct fobj *o = fc_objs; o; o = o->next) {
		if (o->type == O_MODULE) {
			struct fmodule *m = (struct fmodule *)o;

			for (unsigned int i = 0; i < NKERNELS; i++)
				if (p == &m->funcs[i])
					return &m->funcs[i];
		} else if (o->type == O_LIBRARY) {
			struct flibrary *l = (struct flibrary *)o;

			for (unsigned int i = 0; i < NKERNELS; i++)
				if (p == &l->kern[i])
					return &l->mod->funcs[i];
		}
	}
	return NULL;
}

struct fkernel *fc_kernel_find(const void *p)
{
	if (!p)
		return NULL;
	for (struct fobj *o = fc_objs; o; o = o->next) {
		if (o->type != O_LIBRARY)
			continue;
		for (unsigned int i = 0; i < NKERNELS; i++)
			if (p == &((struct flibrary *)o)->kern[i])
				return &((struct flibrary *)o)->kern[i];
	}
	return NULL;
}

CUresult fc_stream_ok(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_SUCCESS;
	return STREAM(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

bool fc_cache_config_ok(CUfunc_cache c)
{
	return c == CU_FUNC_CACHE_PREFER_NONE ||
	       c == CU_FUNC_CACHE_PREFER_SHARED ||
	       c == CU_FUNC_CACHE_PREFER_L1 || c == CU_FUNC_CACHE_PREFER_EQUAL;
}
