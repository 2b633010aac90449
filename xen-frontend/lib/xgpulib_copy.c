// SPDX-License-Identifier: MIT
/*
 * xgpulib_copy.c: copies between guest memory and the device, and the
 * table of host-memory regions they go through.
 *
 * Guest pinned memory (cuMemHostAlloc) is shared with the worker, which
 * registered it with the driver: such copies are one request and the DMA
 * reads or writes the guest's pages directly (zero copy).  The regions
 * are numbered by the guest (ids 1..MAX_REGIONS-1); region_mu guards the
 * table.
 *
 * Pageable memory goes through the channel's data area, cut into chunks
 * of XGPU_CHUNK_KB (default 4 MiB) and pipelined: while the worker DMAs
 * chunk i out of the data area, the guest fills chunk i + 1 (host to
 * device), or copies chunk i out while the worker fills chunk i + 1
 * (device to host).  Large chunks are filled by several threads, since one
 * thread's memcpy (~10 GB/s) is slower than the DMA (~50 GB/s).
 *
 * Locking: xgpulib_data_mu is held for a whole staged copy; the copy pool
 * has its own mutex (pool.mu) for its job slots.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"

#define MAX_REGIONS	4096u
#define MAX_CHUNKS	64
#define MAX_THREADS	16
#define SPLIT_MIN	(512u * 1024u)	/* below this one thread copies */

/* ---- host-memory regions ------------------------------------------------- */

static pthread_mutex_t region_mu = PTHREAD_MUTEX_INITIALIZER;
static struct xgpulib_region regions[MAX_REGIONS];	/* index = id */
static uint32_t next_region = 1;

const struct xgpulib_region *xgpulib_region_find(const void *p, size_t len,
						  uint64_t *off)
{
	const uint8_t *b = p;
	const struct xgpulib_region *found = NULL;

	pthread_mutex_lock(&region_mu);
	for (uint32_t i = 1; i < next_region; i++) {
		const struct xgpulib_region *r = &regions[i];

		if (r->va && b >= r->va && b < r->va + r->size &&
		    len <= (size_t)(r->va + r->size - b)) {
			*off = (uint64_t)(b - r->va);
			found = r;
			break;
		}
	}
	pthread_mutex_unlock(&region_mu);
	return found;
}

uint32_t xgpulib_region_reserve(void)
{
	uint32_t id = 0;

	pthread_mutex_lock(&region_mu);
	for (uint32_t i = 1; i < MAX_REGIONS; i++) {
		if (!regions[i].va && !regions[i].id) {
			id = i;
			regions[i].id = i;	/* reserved */
			if (i >= next_region)
				next_region = i + 1;
			break;
		}
	}
	pthread_mutex_unlock(&region_mu);
	return id;
}

void xgpulib_region_publish(const struct xgpulib_region *r)
{
	pthread_mutex_lock(&region_mu);
	regions[r->id] = *r;
	pthread_mutex_unlock(&region_mu);
}

bool xgpulib_region_take(const void *va, struct xgpulib_region *r)
{
	bool found = false;

	pthread_mutex_lock(&region_mu);
	for (uint32_t i = 1; i < next_region; i++) {
		if (regions[i].va && regions[i].va == va) {
			*r = regions[i];
			memset(&regions[i], 0, sizeof(regions[i]));
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&region_mu);
	return found;
}

void xgpulib_region_release(uint32_t id)
{
	pthread_mutex_lock(&region_mu);
	memset(&regions[id], 0, sizeof(regions[id]));
	pthread_mutex_unlock(&region_mu);
}

/* ---- a small pool of memcpy threads ------------------------------------ */

struct piece {
	void *dst;
	const void *src;
	size_t len;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	pthread_once_t once;
	int nthreads;		/* helpers, excluding the caller */
	unsigned int gen;	/* bumped per job */
	int pending;		/* pieces not finished */
	struct piece piece[MAX_THREADS];
} pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.go = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
};

static void *pool_thread(void *arg)
{
	int idx = (int)(intptr_t)arg;
	unsigned int seen = 0;

	for (;;) {
		struct piece p;

		pthread_mutex_lock(&pool.mu);
		while (pool.gen == seen)
			pthread_cond_wait(&pool.go, &pool.mu);
		seen = pool.gen;
		p = pool.piece[idx];
		pthread_mutex_unlock(&pool.mu);
		if (p.len)
			memcpy(p.dst, p.src, p.len);
		pthread_mutex_lock(&pool.mu);
		if (--pool.pending == 0)
			pthread_cond_signal(&pool.done);
		pthread_mutex_unlock(&pool.mu);
	}
	return NULL;
}

static void pool_start(void)
{
	int n = (int)xgpulib_env_uint("XGPU_COPY_THREADS", 4);
	pthread_attr_t at;
	sigset_t all, old;

	if (n < 1)
		n = 1;
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	/* helpers must never take the application's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &at, pool_thread, (void *)(intptr_t)i))
			break;
		pool.nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
}

/* memcpy, split over the pool for large copies; one job at a time (the
 * callers hold xgpulib_data_mu) */
void xgpulib_memcpy(void *dst, const void *src, size_t len)
{
	size_t part;
	int n;

	if (len < SPLIT_MIN) {
		memcpy(dst, src, len);
		return;
	}
	pthread_once(&pool.once, pool_start);
	n = pool.nthreads + 1;
	if (n == 1) {
		memcpy(dst, src, len);
		return;
	}
	part = (len / (size_t)n + 63) & ~(size_t)63;
	pthread_mutex_lock(&pool.mu);
	pool.pending = n - 1;
	for (int i = 1; i < n; i++) {
		size_t off = part * (size_t)i;
		/* the last piece takes the remainder of the rounding */
		size_t l = off >= len ? 0 :
			   (i == n - 1 || len - off < part ? len - off : part);

		pool.piece[i] = (struct piece){ (uint8_t *)dst + off,
						(const uint8_t *)src + off, l };
	}
	pool.gen++;
	pthread_cond_broadcast(&pool.go);
	pthread_mutex_unlock(&pool.mu);
	memcpy(dst, src, part < len ? part : len);
	pthread_mutex_lock(&pool.mu);
	while (pool.pending)
		pthread_cond_wait(&pool.done, &pool.mu);
	pthread_mutex_unlock(&pool.mu);
}

/* ---- staging geometry -------------------------------------------------------- */

static size_t chunk_size(size_t area)
{
	static size_t chunk;

	if (!chunk) {
		size_t c = (size_t)xgpulib_env_uint("XGPU_CHUNK_KB", 4096) << 10;

		if (c < 64u << 10)
			c = 64u << 10;
		chunk = c;
	}
	/* at least two chunks in flight, at most MAX_CHUNKS */
	if (chunk > area / 2)
		return area / 2;
	if (area / chunk > MAX_CHUNKS)
		return area / MAX_CHUNKS;
	return chunk;
}

/*
 * A copy of a few chunks' size would not overlap at all (one chunk: the
 * guest's copy, then the DMA): cut it into at least four pieces of at
 * least 512 KiB so that the two sides overlap.
 */
static size_t chunk_for(size_t area, size_t n)
{
	size_t chunk = chunk_size(area), quarter = (n / 4) & ~(size_t)0xffff;

	if (quarter < (512u << 10))
		quarter = 512u << 10;
	return quarter < chunk ? quarter : chunk;
}

static CUresult first_error(CUresult a, CUresult b)
{
	return a != CUDA_SUCCESS ? a : b;
}

/* ---- host to device -------------------------------------------------------------- */

/* the arguments of a copy between host memory and the device */
static CUresult copy_args(const void *host, uint64_t dptr, size_t n)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (n && (!host || !dptr))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* [host, host + n) in shared pinned memory, as a wire reference */
static bool pinned(const void *host, size_t n, struct xgpuif_memref *ref)
{
	uint64_t off;
	const struct xgpulib_region *r = xgpulib_region_find(host, n, &off);

	if (r)
		*ref = (struct xgpuif_memref){ off, n, r->id, 0 };
	return r != NULL;
}

CUresult xgpulib_copy_htod(uint64_t dst, const void *src, size_t n,
			   uint64_t stream, int async)
{
	struct xgpulib_chan *c = xgpulib_ch;
	struct xgpuif_memcpy_htod_args a;
	CUresult rc = copy_args(src, dst, n);

	if (rc || !n)
		return rc;
	memset(&a, 0, sizeof(a));
	a.stream = stream;
	a.flags = async ? XGPUIF_CF_ASYNC : 0;
	a.dst = dst;
	if (pinned(src, n, &a.src))	/* zero copy */
		return async ? xgpulib_post_MEMCPY_HTOD(&a) :
			       xgpulib_call_MEMCPY_HTOD(&a);

	/* staged; the worker answers each chunk once its pages are free */
	struct xgpulib_waiter w[MAX_CHUNKS];
	bool busy[MAX_CHUNKS] = { false };
	size_t chunk, nch, done = 0;
	unsigned int i = 0;

	pthread_mutex_lock(&xgpulib_data_mu);
	chunk = chunk_for(c->t->data_bytes, n);
	nch = c->t->data_bytes / chunk;
	if (nch > MAX_CHUNKS)
		nch = MAX_CHUNKS;
	while (done < n) {
		unsigned int k = i % nch;
		size_t len = n - done < chunk ? n - done : chunk;
		CUresult s;

		if (busy[k]) {
			rc = first_error(rc, xgpulib_wait(&w[k]));
			busy[k] = false;
		}
		if (rc)
			break;
		xgpulib_memcpy(c->t->data + k * chunk,
			       (const uint8_t *)src + done, len);
		a.dst = dst + done;
		a.src = (struct xgpuif_memref){ k * chunk, len,
						XGPUIF_REGION_DATA, 0 };
		s = xgpulib_submit_MEMCPY_HTOD(&a, &w[k]);
		if (s) {
			rc = s;
			break;
		}
		busy[k] = true;
		done += len;
		i++;
	}
	for (unsigned int k = 0; k < nch; k++)
		if (busy[k])
			rc = first_error(rc, xgpulib_wait(&w[k]));
	pthread_mutex_unlock(&xgpulib_data_mu);
	return first_error(rc, xgpulib_take_deferred());
}

/* ---- device to host ---------------------------------------------------------------- */

CUresult xgpulib_copy_dtoh(void *dst, uint64_t src, size_t n, uint64_t stream,
			   int async)
{
	struct xgpulib_chan *c = xgpulib_ch;
	struct xgpuif_memcpy_dtoh_args a;
	CUresult rc = copy_args(dst, src, n);

	if (rc || !n)
		return rc;
	memset(&a, 0, sizeof(a));
	a.stream = stream;
	a.flags = async ? XGPUIF_CF_ASYNC : 0;
	a.src = src;
	if (pinned(dst, n, &a.dst))	/* zero copy */
		return async ? xgpulib_post_MEMCPY_DTOH(&a) :
			       xgpulib_call_MEMCPY_DTOH(&a);

	struct xgpulib_waiter w[MAX_CHUNKS];
	size_t chunk, nch, nchunks, issued = 0;
	CUresult s;

	pthread_mutex_lock(&xgpulib_data_mu);
	chunk = chunk_size(c->t->data_bytes);
	nch = c->t->data_bytes / chunk;
	if (nch > MAX_CHUNKS)
		nch = MAX_CHUNKS;
	nchunks = (n + chunk - 1) / chunk;

	/* keep up to nch chunks requested ahead of the one being copied out */
	for (size_t i = 0; i < nchunks; i++) {
		size_t k = i % nch;
		size_t len = i + 1 == nchunks ? n - i * chunk : chunk;

		while (issued < nchunks && issued < i + nch && rc == 0) {
			size_t j = issued, kj = j % nch;
			size_t lj = j + 1 == nchunks ? n - j * chunk : chunk;

			a.src = src + j * chunk;
			a.dst = (struct xgpuif_memref){ kj * chunk, lj,
							XGPUIF_REGION_DATA, 0 };
			s = xgpulib_submit_MEMCPY_DTOH(&a, &w[kj]);
			if (s) {
				rc = s;
				break;
			}
			issued++;
		}
		if (i >= issued)
			break;
		s = xgpulib_wait(&w[k]);
		rc = first_error(rc, s);
		if (rc == CUDA_SUCCESS)
			xgpulib_memcpy((uint8_t *)dst + i * chunk,
				       c->t->data + k * chunk, len);
	}
	/* drain what was issued but not waited for (after an error) */
	for (size_t j = 0; j < issued; j++) {
		size_t kj = j % nch;

		if (!w[kj].done)
			(void)xgpulib_wait(&w[kj]);
	}
	pthread_mutex_unlock(&xgpulib_data_mu);
	return first_error(rc, xgpulib_take_deferred());
}

/* ---- device to device ------------------------------------------------------ */

CUresult xgpulib_copy_dtod(uint64_t dst, uint64_t src, size_t n,
			   uint64_t stream, int async)
{
	struct xgpuif_memcpy_dtod_args a = {
		dst, src, n, stream, async ? XGPUIF_CF_ASYNC : 0, 0
	};

	if (!n)
		return CUDA_SUCCESS;
	if (async)
		return xgpulib_post_MEMCPY_DTOD(&a);
	return xgpulib_call_MEMCPY_DTOD(&a);
}
