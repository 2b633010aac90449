// SPDX-License-Identifier: MIT
/*
 * fuzz_worker.c: libFuzzer target of the worker: request bytes through
 * the ring, xgpub_worker_serve (the ring read: header checks, the
 * generated table's size and mode checks, context switch, handle
 * resolution) and every handler, against the fake driver
 * (tests/fakecuda, dlopened like the host's driver).
 *
 * An input is a sequence of requests in the format of
 * xen-backend/worker/xgpub_record.h: an op, flags, payload and handle
 * substitutions that name the handles the worker handed out earlier in
 * the same input, so that a mutated sequence gets past the handle checks
 * and reaches the handlers' own.  Each input runs in a fresh worker:
 * set up (primary context, data area registered), its requests served
 * one at a time as a guest sends them, then the worker's teardown, which
 * releases the primary context (the fake then frees what it held).  A
 * protocol error ends the input as it ends a channel.
 *
 * What a guest shares with the worker is played by the harness: the ring
 * and a data area of DATA_BYTES (DATA records fill it), host-memory
 * regions (anonymous memory, zero), and a guest thread that runs the
 * host functions the worker waits for (marks DUE slots DONE), as
 * xgpulib_hostfn.c does.
 *
 * The fake driver: $XGPU_FUZZ_DRIVER, else tests/fakecuda/libcuda.so.1
 * beside the folder of this program (make fuzz builds both).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "xgpub_record.h"

#define RING_ORDER	4		/* 64 KiB: room for the largest request */
#define DATA_BYTES	(1u << 20)
#define MAX_REQS	256		/* per input */
#define MAX_MAPS	64
#define MAP_LIMIT	(64ull << 20)	/* host-memory regions of one input */

static struct xgpub_worker wk;
static struct xgpub_transport tr;
static struct xgpub_options opt;
static struct xgpub_driver *drv;
static struct xgpuif_front_ring front;
static uint8_t payload[XGPUIF_MAX_PAYLOAD];

/* the regions mapped for this input (the guest thread scans them) */
static struct {
	void *va;
	uint64_t size;
} maps[MAX_MAPS];
static uint64_t mapped;
static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;

static void t_notify(struct xgpub_transport *t)
{
	(void)t;
}

static int t_wait(struct xgpub_transport *t, int timeout_ms)
{
	(void)t;
	(void)timeout_ms;
	return -EPIPE;
}

static int t_map(struct xgpub_transport *t, uint32_t region, uint64_t size,
		 const struct xgpuif_memref *dir, uint64_t guest_va, void **va)
{
	void *p;
	int slot = -1;

	(void)t;
	(void)region;
	(void)dir;
	(void)guest_va;
	if (!size || size > MAP_LIMIT - mapped)
		return -ENOMEM;
	pthread_mutex_lock(&maps_mu);
	for (int i = 0; i < MAX_MAPS && slot < 0; i++)
		if (!maps[i].va)
			slot = i;
	pthread_mutex_unlock(&maps_mu);
	if (slot < 0)
		return -ENOMEM;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	pthread_mutex_lock(&maps_mu);
	maps[slot].va = p;
	maps[slot].size = size;
	pthread_mutex_unlock(&maps_mu);
	mapped += size;
	*va = p;
	return 0;
}

static void t_unmap(struct xgpub_transport *t, void *va, uint64_t size)
{
	(void)t;
	pthread_mutex_lock(&maps_mu);
	for (int i = 0; i < MAX_MAPS; i++) {
		if (maps[i].va != va)
			continue;
		if (maps[i].size != size)
			abort();	/* the worker unmaps what it mapped */
		maps[i].va = NULL;
		mapped -= size;
	}
	pthread_mutex_unlock(&maps_mu);
	munmap(va, size);
}

static void t_close(struct xgpub_transport *t)
{
	(void)t;
}

static const struct xgpub_transport_ops fuzz_ops = {
	.name = "fuzz",
	.notify = t_notify,
	.wait = t_wait,
	.hostmem_map = t_map,
	.hostmem_unmap = t_unmap,
	.close = t_close,
};

/*
 * The guest's host-function thread: a slot the worker marked DUE is run
 * (nothing to run here) and marked DONE.  Any region may be a slot
 * region; a DUE word anywhere else only gets DONE written, as a guest
 * might.
 */
static void *guest_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&maps_mu);
		for (int i = 0; i < MAX_MAPS; i++) {
			struct xgpuif_hostfn_slot *s = maps[i].va;
			uint64_t n = maps[i].size / sizeof(*s);

			/* the first slots are the ones used */
			for (uint64_t k = 0; s && k < n && k < 1024; k++)
				if (__atomic_load_n(&s[k].state,
						    __ATOMIC_ACQUIRE) ==
				    XGPUIF_HF_DUE)
					__atomic_store_n(&s[k].state,
							 XGPUIF_HF_DONE,
							 __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&maps_mu);
		usleep(200);
	}
	return NULL;
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz_worker: %s\n", what);
	exit(1);
}

/* XGPU_FUZZ_TRACE=1: each request and its status on stderr */
static bool trace;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char path[PATH_MAX];
	const char *env = getenv("XGPU_FUZZ_DRIVER");
	char msg[256], *slash;
	pthread_t th;

	if (env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		if (!realpath((*argv)[0], path))
			die("cannot resolve argv[0]");
		slash = strrchr(path, '/');
		*slash = 0;
		slash = strrchr(path, '/');
		snprintf(slash, sizeof(path) - (size_t)(slash - path),
			 "/tests/fakecuda/libcuda.so.1");
	}
	(void)argc;
	trace = getenv("XGPU_FUZZ_TRACE") && *getenv("XGPU_FUZZ_TRACE") == '1';
	xgpub_log_init("fuzz", false, -1);
	/* a long xgpu_fake_spin would only look like a hang */
	setenv("XGPU_FAKE_SPIN_MAX_MS", "1", 1);
	opt.driver_path = path;
	opt.jit_cache = "none";
	opt.quota = 256ull << 20;
	opt.pin_quota = MAP_LIMIT;
	opt.max_data_pages = DATA_BYTES / XGPUIF_PAGE_SIZE;
	drv = xgpub_driver_open(path, msg, sizeof(msg));
	if (!drv)
		die(msg);
	tr.ops = &fuzz_ops;
	tr.ring_order = RING_ORDER;
	tr.sring = aligned_alloc(XGPUIF_PAGE_SIZE,
				 XGPUIF_PAGE_SIZE << RING_ORDER);
	tr.data = mmap(NULL, DATA_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!tr.sring || tr.data == MAP_FAILED)
		die("no memory");
	tr.data_bytes = DATA_BYTES;
	snprintf(tr.who, sizeof(tr.who), "fuzz");
	snprintf(tr.ipc_domain, sizeof(tr.ipc_domain), "uid:0");
	if (pthread_create(&th, NULL, guest_thread, NULL))
		die("no guest thread");
	return 0;
}

/*
 * One request to the worker, as a guest sends it, and served; -1: the
 * channel is closed.  RAW: the header's nslots is the record's, whatever
 * the slots written (what a guest that lies about its request does).
 */
static int send_one(const struct xgpub_frec *r, const struct xgpub_fpool *p,
		    uint64_t id)
{
	struct xgpuif_request hdr = { 0 };
	struct xgpuif_iov iov = { payload, r->len };
	uint32_t nslots, put;
	int rc;

	if (r->flags & XGPUB_FREC_RAW) {
		nslots = r->slots;
		put = xgpuif_slots_for(r->len);
	} else {
		nslots = xgpub_record_base_slots(r->op, r->len) + r->slots;
		if (nslots > XGPUIF_MAX_SLOTS)
			nslots = XGPUIF_MAX_SLOTS;
		put = nslots;
	}
	if (put > RING_SIZE(&front) || r->len > xgpuif_capacity(put))
		return 0;	/* a guest cannot write it either */
	hdr.id = id;
	hdr.op = r->op;
	hdr.ctx = r->ctx && p->n ? p->h[(r->ctx - 1u) % p->n] : 0;
	hdr.flags = r->flags & XGPUB_FREC_POSTED ? XGPUIF_RF_POSTED : 0;
	xgpuif_front_put(&front, &hdr, &iov, 1, put);
	if (r->flags & XGPUB_FREC_RAW)
		RING_GET_REQUEST(&front, front.req_prod_pvt - put)->nslots =
			(uint16_t)nslots;
	RING_PUSH_REQUESTS(&front);
	rc = xgpub_worker_serve(&wk);
	/* XGPU_FUZZ_TRACE=1 (reading a crash input): each request and
	 * its status, on stderr */
	if (trace) {
		const struct xgpuif_response *rsp =
			RING_GET_RESPONSE(&front, front.sring->rsp_prod - 1);

		uint64_t a0 = 0, r0 = 0;

		memcpy(&a0, payload, r->len < 8 ? r->len : 8);
		if (front.sring->rsp_prod != front.rsp_cons)
			memcpy(&r0, rsp->payload, rsp->len < 8 ? rsp->len : 8);
		fprintf(stderr, "fuzz_worker: op %u, %u bytes (%#llx), ctx "
			"%#llx: %d (%#llx)\n", r->op, r->len,
			(unsigned long long)a0, (unsigned long long)hdr.ctx,
			front.sring->rsp_prod != front.rsp_cons ?
				rsp->status : -999, (unsigned long long)r0);
	}
	front.rsp_cons = front.sring->rsp_prod;
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xgpub_fpool pool = { .n = 0 };
	size_t pos = 0;
	int reqs = 0;

	memset(&wk, 0, sizeof(wk));
	wk.t = &tr;
	wk.opt = &opt;
	wk.D = drv;
	memset(tr.sring, 0, XGPUIF_PAGE_SIZE << RING_ORDER);
	SHARED_RING_INIT(tr.sring);
	BACK_RING_INIT(&wk.ring, tr.sring, XGPUIF_PAGE_SIZE << RING_ORDER);
	FRONT_RING_INIT(&front, tr.sring, XGPUIF_PAGE_SIZE << RING_ORDER);
	memset(tr.data, 0, DATA_BYTES);
	if (xgpub_worker_setup(&wk))
		die("worker setup failed");
	xgpub_record_pool_update(&pool, &wk);

	while (pos + sizeof(struct xgpub_frec) <= size && reqs < MAX_REQS) {
		struct xgpub_frec r;
		struct xgpub_fsub sub[255];

		memcpy(&r, data + pos, sizeof(r));
		pos += sizeof(r);
		if (r.nsub * sizeof(sub[0]) > size - pos)
			break;
		memcpy(sub, data + pos, r.nsub * sizeof(sub[0]));
		pos += r.nsub * sizeof(sub[0]);
		if (r.len > size - pos)
			r.len = (uint16_t)(size - pos);
		if (r.op == XGPUB_FREC_DATA) {
			uint32_t off;

			if (r.len >= sizeof(off)) {
				memcpy(&off, data + pos, sizeof(off));
				off %= DATA_BYTES;
				if (r.len - sizeof(off) <= DATA_BYTES - off)
					memcpy(tr.data + off,
					       data + pos + sizeof(off),
					       r.len - sizeof(off));
			}
			pos += r.len;
			continue;
		}
		if (r.len > XGPUIF_MAX_PAYLOAD)
			r.len = XGPUIF_MAX_PAYLOAD;
		/* ops past the table: a few unknown numbers, no more */
		if (r.op > XGPUIF_OP_MAX)
			r.op %= XGPUIF_OP_MAX + 1;
		memcpy(payload, data + pos, r.len);
		pos += r.len;
		for (int i = 0; i < r.nsub && pool.n; i++)
			if (sub[i].off + 8u <= r.len)
				memcpy(payload + sub[i].off,
				       &pool.h[sub[i].idx % pool.n], 8);
		reqs++;
		if (send_one(&r, &pool, (uint64_t)reqs))
			break;
		xgpub_record_pool_update(&pool, &wk);
	}
	xgpub_worker_teardown(&wk);
	return 0;
}
