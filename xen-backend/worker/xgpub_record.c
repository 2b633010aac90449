// SPDX-License-Identifier: MIT
/*
 * xgpub_record.c: the recorder of the worker's fuzz corpus
 * (xgpub_record.h).  Off unless the environment has XGPU_FUZZ_RECORD
 * (tests/fuzz/record.sh sets it for the daemon it starts): then a worker
 * writes the first requests of its channel to a file of that folder, in
 * the fuzz target's input format, handle fields turned into handle
 * numbers so that a mutated sequence still names live handles.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "xgpub_record.h"

/* a file: at most this many requests and bytes (the fuzz target serves
 * 256 requests of an input, of at most 64 KiB); then the next file */
#define REC_MAX_REQS	256u
#define REC_MAX_BYTES	(56u << 10)
#define REC_MAX_FILES	16u
/* the bytes of an image written to a blob, kept with the request */
#define REC_MAX_DATA	(16u << 10)

static struct {
	int fd;
	uint32_t reqs, bytes, files;
	char dir[PATH_MAX - 32];
	struct xgpub_fpool pool;
	/* the handles live when the file began, but the primary context's:
	 * a fresh worker has none of them, so they get no number */
	xgpuif_handle_t *old;
	uint32_t nold;
} rec = { .fd = -1 };

static bool is_old(xgpuif_handle_t h)
{
	for (uint32_t i = 0; i < rec.nold; i++)
		if (rec.old[i] == h)
			return true;
	return false;
}

uint32_t xgpub_record_base_slots(uint32_t op, uint32_t len)
{
	uint32_t n = xgpuif_slots_for(len), r;

	if (op < XGPUIF_OP_MAX && xgpub_ops[op].call) {
		r = xgpuif_slots_for(xgpub_ops[op].reply_size);
		if (r > n)
			n = r;
	}
	return n;
}

static void pool_update(struct xgpub_fpool *p, const struct xgpub_worker *w,
			bool skip_old)
{
	for (uint32_t i = 0; i < w->h.n && p->n < XGPUB_FREC_POOL; i++) {
		const struct xgpub_hentry *e = &w->h.e[i];
		xgpuif_handle_t h;
		uint32_t k;

		if (e->type == XGPUB_H_FREE)
			continue;
		h = xgpub_handle_of(&w->h, e);
		if (skip_old && is_old(h))
			continue;
		for (k = 0; k < p->n && p->h[k] != h; k++)
			;
		if (k == p->n)
			p->h[p->n++] = h;
	}
}

void xgpub_record_pool_update(struct xgpub_fpool *p,
			      const struct xgpub_worker *w)
{
	pool_update(p, w, false);
}

/* the next file of this channel, numbered as a fresh worker's */
static void next_file(const struct xgpub_worker *w)
{
	char path[PATH_MAX];

	if (rec.fd >= 0)
		close(rec.fd);
	rec.fd = -1;
	if (rec.files >= REC_MAX_FILES)
		return;
	snprintf(path, sizeof(path), "%s/%ld-%u.req", rec.dir,
		 (long)getpid(), rec.files++);
	rec.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (rec.fd < 0) {
		xgpub_err("fuzz recorder: %s: %s", path, strerror(errno));
		return;
	}
	rec.reqs = rec.bytes = 0;
	memset(&rec.pool, 0, sizeof(rec.pool));
	free(rec.old);
	rec.old = malloc((w->h.n ? w->h.n : 1) * sizeof(*rec.old));
	rec.nold = 0;
	for (uint32_t i = 0; rec.old && i < w->h.n; i++) {
		const struct xgpub_hentry *e = &w->h.e[i];
		xgpuif_handle_t h;

		if (e->type == XGPUB_H_FREE)
			continue;
		h = xgpub_handle_of(&w->h, e);
		if (h != w->primary_h)
			rec.old[rec.nold++] = h;
	}
	pool_update(&rec.pool, w, true);
}

void xgpub_record_start(const struct xgpub_worker *w)
{
	const char *dir = getenv("XGPU_FUZZ_RECORD");

	if (!dir || !dir[0] || strlen(dir) >= sizeof(rec.dir))
		return;
	snprintf(rec.dir, sizeof(rec.dir), "%s", dir);
	rec.files = 0;
	next_file(w);
}

static void put(const void *p, size_t n)
{
	if (rec.fd < 0)
		return;
	if (write(rec.fd, p, n) != (ssize_t)n) {
		close(rec.fd);
		rec.fd = -1;
	}
	rec.bytes += (uint32_t)n;
}

static int pool_index(xgpuif_handle_t h)
{
	for (uint32_t k = 0; h && k < rec.pool.n; k++)
		if (rec.pool.h[k] == h)
			return (int)k;
	return -1;
}

/* a blob write's bytes, as a DATA record before it */
static void record_data(struct xgpub_worker *w, const uint8_t *payload,
			uint32_t len)
{
	struct xgpuif_blob_write_args a;
	struct xgpub_frec r = { .op = XGPUB_FREC_DATA };
	const uint8_t *src;
	uint32_t off, n;

	if (len != sizeof(a))
		return;
	memcpy(&a, payload, sizeof(a));
	if (a.src.region != XGPUIF_REGION_DATA ||
	    !(src = xgpub_memref(w, &a.src)))
		return;
	n = a.src.len < REC_MAX_DATA ? (uint32_t)a.src.len : REC_MAX_DATA;
	off = (uint32_t)a.src.off;
	r.len = (uint16_t)(sizeof(off) + n);
	put(&r, sizeof(r));
	put(&off, sizeof(off));
	put(src, n);
}

void xgpub_record_request(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const uint8_t *payload)
{
	struct xgpub_frec r = { .op = req->op };
	struct xgpub_fsub sub[255];
	uint32_t base, nsub = 0;
	uint64_t v;
	int k;

	if (rec.fd < 0 || req->len > UINT16_MAX)
		return;
	if (rec.reqs >= REC_MAX_REQS ||
	    rec.bytes + req->len + REC_MAX_DATA >= REC_MAX_BYTES)
		next_file(w);
	if (rec.fd < 0)
		return;
	rec.reqs++;
	if (req->op == XGPUIF_OP_BLOB_WRITE)
		record_data(w, payload, req->len);
	r.flags = req->flags & XGPUIF_RF_POSTED ? XGPUB_FREC_POSTED : 0;
	r.len = (uint16_t)req->len;
	base = xgpub_record_base_slots(req->op, req->len);
	r.slots = req->nslots > base ? (uint8_t)(req->nslots - base) : 0;
	k = pool_index(req->ctx);
	r.ctx = k >= 0 && k < 255 ? (uint8_t)(k + 1) : 0;
	for (uint32_t off = 0; off + 8 <= req->len && nsub < 255; off += 8) {
		memcpy(&v, payload + off, sizeof(v));
		k = pool_index(v);
		if (k >= 0)
			sub[nsub++] = (struct xgpub_fsub){ (uint16_t)off,
							   (uint16_t)k };
	}
	r.nsub = (uint8_t)nsub;
	put(&r, sizeof(r));
	put(sub, nsub * sizeof(sub[0]));
	put(payload, req->len);
}

void xgpub_record_done(const struct xgpub_worker *w)
{
	if (rec.fd >= 0)
		pool_update(&rec.pool, w, true);
}

void xgpub_record_stop(void)
{
	if (rec.fd >= 0)
		close(rec.fd);
	rec.fd = -1;
	free(rec.old);
	rec.old = NULL;
	rec.nold = 0;
}
