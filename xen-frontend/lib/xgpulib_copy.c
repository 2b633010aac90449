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
#include "xgpulib_mco.h"

#define MAX_REGIONS	4096u
#define MAX_CHUNKS	64
#define MAX_THREADS	16
#define SPLIT_MIN	(512u * 1024u)	/* below this one thread copies */

/* ---- host-memory regions ------------------------------------------------- */

static pthread_mutex_t region_mu = PTHREAD_MUTEX_INITIALIZER;
static struct xgpulib_region regions[MAX_REGIONS];	/* index = id */
static uint32_t next_region = 1;

static const struct xgpulib_region *find(const void *p, size_t len,
					 uint64_t *off, bool coherent)
{
	const uint8_t *b = p;
	const struct xgpulib_region *found = NULL;

	pthread_mutex_lock(&region_mu);
	for (uint32_t i = 1; i < next_region; i++) {
		const struct xgpulib_region *r = &regions[i];

		if (r->va && b >= r->va && b < r->va + r->size &&
		    len <= (size_t)(r->va + r->size - b) &&
		    (coherent || !r->coherent)) {
			*off = (uint64_t)(b - r->va);
			found = r;
			break;
		}
	}
	pthread_mutex_unlock(&region_mu);
	return found;
}

const struct xgpulib_region *xgpulib_region_find(const void *p, size_t len,
						  uint64_t *off)
{
	return find(p, len, off, false);
}

const struct xgpulib_region *xgpulib_region_find_any(const void *p,
						      size_t len,
						      uint64_t *off)
{
	return find(p, len, off, true);
}

bool xgpulib_region_coherent_at(const void *p, size_t len, uint64_t *dptr)
{
	const struct xgpulib_region *r;
	uint64_t off;

	if (!__atomic_load_n(&xgpulib_mco_live, __ATOMIC_ACQUIRE))
		return false;
	r = find(p, len ? len : 1, &off, true);
	if (!r || !r->coherent)
		return false;
	if (dptr)
		*dptr = r->dptr + off;
	return true;
}

bool xgpulib_region_coherent(const void *p, size_t len)
{
	return xgpulib_region_coherent_at(p, len, NULL);
}

uint8_t *xgpulib_region_va(uint32_t id)
{
	uint8_t *va = NULL;

	pthread_mutex_lock(&region_mu);
	if (id && id < next_region)
		va = regions[id].va;
	pthread_mutex_unlock(&region_mu);
	return va;
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

void xgpulib_region_set_managed(uint32_t id)
{
	pthread_mutex_lock(&region_mu);
	regions[id].managed = true;
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

bool xgpulib_region_overlaps(const void *p, size_t len)
{
	const uint8_t *b = p;
	bool hit = false;

	pthread_mutex_lock(&region_mu);
	for (uint32_t i = 1; i < next_region && !hit; i++) {
		const struct xgpulib_region *r = &regions[i];

		hit = r->va && b < r->va + r->size && r->va < b + len;
	}
	pthread_mutex_unlock(&region_mu);
	return hit;
}

void xgpulib_region_release(uint32_t id)
{
	pthread_mutex_lock(&region_mu);
	memset(&regions[id], 0, sizeof(regions[id]));
	pthread_mutex_unlock(&region_mu);
}

/* ---- a small pool of memcpy threads -------------------------------------- */

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

	/* the helpers take no signals: a fault in coherent managed memory
	 * must happen on the caller's thread (xgpulib_mco.h) */
	if (len < SPLIT_MIN || xgpulib_mco_touches(dst, len) ||
	    xgpulib_mco_touches(src, len)) {
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

/* ---- staging geometry ---------------------------------------------------- */

static size_t chunk_size(size_t area)
{
	static size_t chunk;

	if (!chunk) {
		size_t kb = xgpulib_env_uint("XGPU_CHUNK_KB", 4096);

		chunk = (kb < 64 ? 64 : kb) << 10;
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

/* ---- host <-> device ----------------------------------------------------- */

/* a copy between guest memory and the device, in either direction */
struct hcopy {
	bool to_dev;		/* host to device; else device to host */
	const uint8_t *src;	/* host to device: the guest's bytes */
	uint8_t *dst;		/* device to host: where they go */
	uint64_t dev;		/* the device side */
	size_t n;
	uint64_t stream;
	int async;
};

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

/*
 * One MEMCPY_HTOD or MEMCPY_DTOH request for the bytes at off in the
 * copy, their host side at ref.  With w it is submitted, to be waited
 * for; without, posted (async) or called.  fence: the value the GPU may
 * answer a blocking copy with (XGPUIF_CF_FENCE, xgpulib_fence.c), 0: none.
 */
static CUresult request(const struct hcopy *h, size_t off,
			struct xgpuif_memref ref, struct xgpulib_waiter *w,
			uint32_t fence)
{
	uint32_t flags = (h->async ? XGPUIF_CF_ASYNC : 0) |
			 (fence ? XGPUIF_CF_FENCE : 0);

	if (h->to_dev) {
		struct xgpuif_memcpy_htod_args a = {
			h->dev + off, ref, h->stream, flags, fence
		};

		if (w)
			return xgpulib_submit_MEMCPY_HTOD(&a, w);
		return h->async ? xgpulib_post_MEMCPY_HTOD(&a) :
				  xgpulib_call_MEMCPY_HTOD(&a);
	}

	struct xgpuif_memcpy_dtoh_args a = {
		ref, h->dev + off, h->stream, flags, fence
	};

	if (w)
		return xgpulib_submit_MEMCPY_DTOH(&a, w);
	return h->async ? xgpulib_post_MEMCPY_DTOH(&a) :
			  xgpulib_call_MEMCPY_DTOH(&a);
}

int xgpulib_stage_put(struct xgpulib_transport *t, size_t off,
		      const void *src, size_t len)
{
	if (t->ops->put)
		return t->ops->put(t, off, src, len);
	xgpulib_memcpy(t->data + off, src, len);
	return 0;
}

int xgpulib_stage_sent(struct xgpulib_transport *t, size_t off, size_t len)
{
	return t->ops->put ? t->ops->put(t, off, t->data + off, len) : 0;
}

/* a staged copy in flight: its slots and the waiters of their chunks */
struct pipe {
	const struct hcopy *h;
	struct xgpulib_transport *t;
	uint8_t *area;
	size_t chunk, nch;
	size_t sent, waited;	/* chunks submitted, chunks waited for */
	struct xgpulib_waiter w[MAX_CHUNKS];
	/* device to host without shared memory: each chunk's bytes land
	 * in the program's buffer (0: no ticket) */
	uint64_t ticket[MAX_CHUNKS];
	/* host to device without shared memory: bytes whose sending was
	 * started (put_start) and of those, sent; the program's buffer is
	 * its own again once they are equal */
	uint64_t put_total, put_sent;
	int put_rc;
};

static size_t chunk_len(const struct pipe *p, size_t j)
{
	size_t left = p->h->n - j * p->chunk;

	return left < p->chunk ? left : p->chunk;
}

/* fill (host to device) and submit the next chunk */
static CUresult send_next(struct pipe *p)
{
	size_t j = p->sent, k = j % p->nch, len = chunk_len(p, j);
	struct xgpuif_memref ref = { k * p->chunk, len, XGPUIF_REGION_DATA,
				     0 };
	CUresult rc;

	p->ticket[k] = 0;
	if (p->h->to_dev && p->t->ops->put_start) {
		/* the next chunk follows on the lanes at once */
		if (!p->put_rc) {
			p->put_rc = p->t->ops->put_start(p->t, ref.off,
							 p->h->src +
							 j * p->chunk, len,
							 &p->put_sent);
			/* a put that failed may have given the lanes
			 * part of it: waited for as a whole (put_wait
			 * returns once no lane reads it) */
			if (p->put_rc != -EINVAL)
				p->put_total += len;
		}
	} else if (p->h->to_dev)
		xgpulib_stage_put(p->t, ref.off, p->h->src + j * p->chunk,
				  len);
	else if (p->t->ops->expect)
		/* the bytes come straight into the program's buffer */
		xgpulib_chan_expect_next(XGPUIF_OP_MEMCPY_DTOH, ref.off, len,
					 p->h->dst + j * p->chunk,
					 &p->ticket[k]);
	rc = request(p->h, j * p->chunk, ref, &p->w[k], 0);
	xgpulib_chan_expect_clear();
	if (rc == CUDA_SUCCESS)
		p->sent++;
	return rc;
}

/* wait for the oldest chunk in flight; device to host, copy it out
 * unless an error came first (rc, kept) */
static CUresult wait_oldest(struct pipe *p, CUresult rc)
{
	size_t j = p->waited++, k = j % p->nch;

	rc = first_error(rc, xgpulib_wait(&p->w[k]));
	if (p->ticket[k]) {
		/* its bytes come straight into the program's buffer: wait
		 * for them even after an error, before the buffer is the
		 * program's again */
		if (p->t->ops->expect_wait(p->t, p->ticket[k]) &&
		    rc == CUDA_SUCCESS)
			rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
		return rc;
	}
	if (rc == CUDA_SUCCESS && !p->h->to_dev)
		xgpulib_memcpy(p->h->dst + j * p->chunk,
			       p->area + k * p->chunk, chunk_len(p, j));
	return rc;
}

/*
 * A staged copy: chunk j goes through slot j % nch of the data area,
 * once chunk j - nch is done with it.  Host to device, the guest fills a
 * slot and the worker reads it; device to host, the worker fills a slot
 * and the guest copies it out while the worker fills the next ones.  The
 * worker answers each chunk once its slot is free again.
 */
static CUresult staged(const struct hcopy *h)
{
	struct xgpulib_transport *t = xgpulib_ch->t;
	struct pipe p;
	size_t nchunks;
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&xgpulib_data_mu);
	p.h = h;
	p.t = t;
	p.area = t->data;
	/* device to host keeps full chunks */
	p.chunk = h->to_dev ? chunk_for(t->data_bytes, h->n) :
			      chunk_size(t->data_bytes);
	p.nch = t->data_bytes / p.chunk;
	if (p.nch > MAX_CHUNKS)
		p.nch = MAX_CHUNKS;
	p.sent = 0;
	p.waited = 0;
	p.put_total = p.put_sent = 0;
	p.put_rc = 0;
	nchunks = (h->n + p.chunk - 1) / p.chunk;
	while (p.sent < nchunks && rc == CUDA_SUCCESS) {
		if (p.sent - p.waited == p.nch)	/* every slot in use */
			rc = wait_oldest(&p, rc);
		if (rc == CUDA_SUCCESS)
			rc = send_next(&p);
	}
	/* the rest, in order; after an error only waited for */
	while (p.waited < p.sent)
		rc = wait_oldest(&p, rc);
	/* the program's buffer is its own again (the replies came, so
	 * the bytes were there: this only waits on a broken connection) */
	if (p.put_total &&
	    p.t->ops->put_wait(p.t, &p.put_sent, p.put_total) &&
	    rc == CUDA_SUCCESS)
		rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
	pthread_mutex_unlock(&xgpulib_data_mu);
	return first_error(rc, xgpulib_take_deferred());
}

/*
 * A blocking copy between pinned host memory and the device that the GPU
 * may answer (xgpulib_fence.c): the worker queues it with a write of our
 * value after it and says so (XGPUIF_SF_FENCED), and the copy is over
 * once the value is there; if it does not come soon, the copy's stream is
 * synchronized plainly (it returns the copy's error, if any).
 */
static CUresult copy_fenced(const struct hcopy *h, struct xgpuif_memref ref)
{
	struct xgpulib_waiter w;
	uint32_t value;
	CUresult rc;

	if (!xgpulib_fence_begin(&value))
		return request(h, 0, ref, NULL, 0);
	rc = request(h, 0, ref, &w, value);
	if (rc == CUDA_SUCCESS)
		rc = xgpulib_wait(&w);
	if (rc == CUDA_SUCCESS && (w.flags & XGPUIF_SF_FENCED)) {
		if (!xgpulib_fence_wait(value))
			rc = xgpulib_sync_remote_stream_plain(h->stream);
	} else {
		xgpulib_fence_end(true);
	}
	return first_error(rc, xgpulib_take_deferred());
}

/* pinned host memory in one request, pageable memory staged */
static CUresult copy_host(const struct hcopy *h)
{
	const void *host = h->to_dev ? (const void *)h->src : h->dst;
	struct xgpuif_memref ref;
	uint64_t at;
	CUresult rc = copy_args(host, h->dev, h->n);

	if (rc || !h->n)
		return rc;
	/* coherent managed memory is the worker's device memory (at the
	 * same address, but for pinned memory the network made coherent) */
	if (xgpulib_region_coherent_at(host, h->n, &at))
		return xgpulib_copy_dtod(h->to_dev ? h->dev : at,
					 h->to_dev ? at : h->dev, h->n,
					 h->stream, h->async);
	if (pinned(host, h->n, &ref))	/* zero copy */
		return h->async ? request(h, 0, ref, NULL, 0) :
				  copy_fenced(h, ref);
	return staged(h);
}

CUresult xgpulib_copy_htod(uint64_t dst, const void *src, size_t n,
			   uint64_t stream, int async)
{
	const struct hcopy h = {
		.to_dev = true, .src = src, .dev = dst, .n = n,
		.stream = stream, .async = async,
	};

	return copy_host(&h);
}

CUresult xgpulib_copy_dtoh(void *dst, uint64_t src, size_t n, uint64_t stream,
			   int async)
{
	const struct hcopy h = {
		.to_dev = false, .dst = dst, .dev = src, .n = n,
		.stream = stream, .async = async,
	};

	return copy_host(&h);
}

/* ---- device to device ---------------------------------------------------- */

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
