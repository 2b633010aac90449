// SPDX-License-Identifier: MIT
/*
 * hostile: a guest that speaks the local transport itself and misbehaves,
 * to check that the backend closes the channel of a guest that breaks the
 * protocol (and only that channel).
 *
 *   hostile MODE [SOCKET]      (SOCKET defaults to $XGPU_SOCKET)
 *
 * Modes:
 *   garbage       random bytes in the ring, the first header with nslots 0
 *   overflow      req_prod far beyond the ring
 *   bigslots      a header claiming more slots than were published
 *   badmemref     MEMCPY_HTOD whose source runs past the data area
 *   badop         op 9999 (answered NOT_IMPL, as xgpuif.md says for an
 *                 op the backend does not know), then a known op with a
 *                 payload shorter than its arguments (closes)
 *   badhandshake  wrong magic, oversize ring order, unsealed memfd, memfd
 *                 smaller than announced, no descriptors, pipes instead
 *                 of eventfds: one connection each, all refused; a
 *                 process name holding a newline and a forged log line
 *                 (accepted, logged with the control characters replaced)
 *   truncate      shrinking and growing the sealed memfd after connecting
 *                 must fail; the worker must still answer; then a malformed
 *                 header (closes)
 *   badhandles    forged, stale and wrong-kind handles and ranges to pools,
 *                 graphs, virtual memory, host functions, capture, context
 *                 events, stream attribute copies, peer access, device
 *                 queries (a count past the bound), array copies, mipmaps
 *                 and texture references, green contexts (forged
 *                 descriptors and green contexts, resources the worker
 *                 never gave, 100000 groups): each an
 *                 error for this guest alone, the channel open; then a
 *                 short STREAM_ATTR (closes)
 *
 * Each connection must be closed by the backend within 5 s.  For every
 * connection it prints "hostile: client N" (the backend's id, for finding
 * its log lines); it ends with "PASS hostile MODE" or "FAIL hostile MODE:
 * why" and exits 0 or 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xgpuif_ring.h"
#include "xgpuif_sock.h"

#define CLOSE_TIMEOUT_MS 5000
#define REPLY_TIMEOUT_MS 5000
#define DATA_PAGES 64u

static const char *mode;
static int failed;

struct conn {
	int sock;
	int memfd;
	int kick_back;
	int kick_guest;
	void *map;
	size_t map_bytes;
	unsigned int order;
	uint32_t client_id;
	struct xgpuif_front_ring ring;
	uint8_t *data;
	size_t data_bytes;
	uint64_t next_id;
};

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL hostile %s: ", mode);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed = 1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* how a handshake is to be spoiled */
enum spoil {
	HS_OK,
	HS_MAGIC,	/* wrong magic in the connect message */
	HS_ORDER,	/* ring order beyond the maximum */
	HS_UNSEALED,	/* memfd without seals */
	HS_SMALL,	/* memfd smaller than ring + data announced */
	HS_NOFDS,	/* no descriptors at all */
	HS_MINSEALS,	/* only the seals the backend insists on */
	HS_PIPES,	/* notification descriptors that are pipes */
	HS_NAME,	/* a process name with a newline and a forged log line */
};

/*
 * Connect and shake hands.  Returns the backend's status (0: connected,
 * < 0 refused), or 1 when no status came (the backend just hung up);
 * -1000 for a local failure.
 */
static int handshake(struct conn *c, const char *path, enum spoil how)
{
	struct xgpuif_local_welcome wel;
	struct xgpuif_local_connect con;
	struct xgpuif_local_status st;
	unsigned int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	size_t real_bytes;
	int fds[3];
	ssize_t n;

	memset(c, 0, sizeof(*c));
	c->memfd = c->kick_back = c->kick_guest = -1;
	c->sock = xgpuif_sock_connect(path);
	if (c->sock < 0) {
		fail("cannot connect to %s: %s", path, strerror(-c->sock));
		return -1000;
	}
	n = recv(c->sock, &wel, sizeof(wel), 0);
	if (n != (ssize_t)sizeof(wel) || wel.magic != XGPUIF_MAGIC) {
		fail("no welcome from the backend");
		return -1000;
	}
	c->client_id = wel.client_id;
	printf("hostile: client %u\n", c->client_id);
	fflush(stdout);

	c->order = how == HS_ORDER ? 20 : XGPUIF_DEFAULT_RING_ORDER;
	if (c->order > wel.max_ring_order && how != HS_ORDER)
		c->order = wel.max_ring_order;
	c->data_bytes = (size_t)DATA_PAGES * XGPUIF_PAGE_SIZE;
	/* an oversize order is announced, not allocated */
	c->map_bytes = ((size_t)XGPUIF_PAGE_SIZE <<
			(how == HS_ORDER ? XGPUIF_DEFAULT_RING_ORDER :
					   c->order)) + c->data_bytes;
	real_bytes = how == HS_SMALL ? c->map_bytes / 2 : c->map_bytes;
	if (how == HS_UNSEALED)
		seals = 0;
	else if (how == HS_MINSEALS)
		seals = F_SEAL_SHRINK | F_SEAL_GROW;

	c->memfd = memfd_create("xgpu-hostile", MFD_CLOEXEC |
				(seals ? MFD_ALLOW_SEALING : 0));
	if (how == HS_PIPES) {
		int p[2];

		/* a pipe's read end: a worker that writes to it or reads
		 * it blocks */
		if (pipe2(p, O_CLOEXEC) == 0) {
			c->kick_back = p[0];
			c->kick_guest = p[1];
		}
	} else {
		c->kick_back = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		c->kick_guest = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	}
	if (c->memfd < 0 || c->kick_back < 0 || c->kick_guest < 0 ||
	    ftruncate(c->memfd, (off_t)real_bytes) < 0 ||
	    (seals && fcntl(c->memfd, F_ADD_SEALS, seals) < 0)) {
		fail("cannot create shared memory: %s", strerror(errno));
		return -1000;
	}
	c->map_bytes = real_bytes;
	c->map = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		      c->memfd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		fail("mmap: %s", strerror(errno));
		return -1000;
	}
	SHARED_RING_INIT((struct xgpuif_sring *)c->map);
	FRONT_RING_INIT(&c->ring, (struct xgpuif_sring *)c->map,
			(size_t)XGPUIF_PAGE_SIZE << (how == HS_ORDER ?
				XGPUIF_DEFAULT_RING_ORDER : c->order));
	if (how != HS_ORDER)
		c->data = (uint8_t *)c->map +
			  ((size_t)XGPUIF_PAGE_SIZE << c->order);

	memset(&con, 0, sizeof(con));
	con.magic = how == HS_MAGIC ? 0xdeadbeefu : XGPUIF_MAGIC;
	con.version = XGPUIF_VERSION;
	con.ring_order = c->order;
	con.data_pages = DATA_PAGES;
	con.pid = (uint32_t)getpid();
	if (how == HS_NAME)
		snprintf(con.name, sizeof(con.name),
			 "x\nxen-gpubackd: FORGED\n");
	else
		snprintf(con.name, sizeof(con.name), "hostile-%s", mode);
	fds[0] = c->memfd;
	fds[1] = c->kick_back;
	fds[2] = c->kick_guest;
	if (xgpuif_sock_send(c->sock, &con, sizeof(con), fds,
		     how == HS_NOFDS ? 0 : 3)) {
		fail("cannot send the handshake: %s", strerror(errno));
		return -1000;
	}
	n = recv(c->sock, &st, sizeof(st), 0);
	if (n == 0)
		return 1;
	if (n != (ssize_t)sizeof(st) || st.magic != XGPUIF_MAGIC) {
		fail("malformed status from the backend (%zd bytes)", n);
		return -1000;
	}
	if (st.status) {
		st.msg[sizeof(st.msg) - 1] = 0;
		printf("hostile: refused (%d): %s\n", st.status, st.msg);
	}
	return st.status;
}

static void conn_close(struct conn *c)
{
	if (c->map)
		munmap(c->map, c->map_bytes);
	if (c->memfd >= 0)
		close(c->memfd);
	if (c->kick_back >= 0)
		close(c->kick_back);
	if (c->kick_guest >= 0)
		close(c->kick_guest);
	if (c->sock >= 0)
		close(c->sock);
	memset(c, 0, sizeof(*c));
}

static void kick(struct conn *c)
{
	uint64_t one = 1;

	(void)!write(c->kick_back, &one, sizeof(one));
}

/* publish the slots written so far and wake the worker */
static void publish(struct conn *c)
{
	RING_PUSH_REQUESTS(&c->ring);
	kick(c);
}

/* did the backend hang up within timeout_ms?  (it never writes after the
 * handshake, so readable means closed) */
static int wait_closed(struct conn *c, int timeout_ms)
{
	struct pollfd pfd = { .fd = c->sock, .events = POLLIN };
	long t0 = now_ms();
	char b;

	for (;;) {
		long left = timeout_ms - (now_ms() - t0);
		int n;

		if (left <= 0)
			return 0;
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (pfd.revents & (POLLHUP | POLLERR))
			return 1;
		if (recv(c->sock, &b, 1, MSG_DONTWAIT) <= 0)
			return 1;
	}
}

static void expect_closed(struct conn *c, const char *what)
{
	long t0 = now_ms();

	if (!wait_closed(c, CLOSE_TIMEOUT_MS))
		fail("%s: the backend did not close the connection within "
		     "%d ms", what, CLOSE_TIMEOUT_MS);
	else
		printf("hostile: %s: closed after %ld ms\n", what,
		       now_ms() - t0);
}

/*
 * One well-formed request; waits for its reply.  0 and *status, or -1 if
 * no reply came (the reply's payload goes to reply, up to rcap bytes).
 */
static int call(struct conn *c, uint16_t op, uint64_t ctx, const void *args,
		uint32_t alen, void *reply, uint32_t rcap, int32_t *status)
{
	struct xgpuif_request hdr;
	struct xgpuif_response rsp;
	struct xgpuif_iov iov = { args, alen };
	uint32_t nslots = xgpuif_slots_for(alen);
	long t0 = now_ms();

	if (xgpuif_slots_for(rcap) > nslots)
		nslots = xgpuif_slots_for(rcap);
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = ++c->next_id;
	hdr.op = op;
	hdr.ctx = ctx;
	xgpuif_front_put(&c->ring, &hdr, &iov, alen ? 1 : 0, nslots);
	publish(c);
	while (__atomic_load_n(&c->ring.sring->rsp_prod, __ATOMIC_ACQUIRE) ==
	       c->ring.rsp_cons) {
		struct pollfd pfd[2] = {
			{ .fd = c->kick_guest, .events = POLLIN },
			{ .fd = c->sock, .events = POLLIN },
		};
		uint64_t v;

		if (now_ms() - t0 > REPLY_TIMEOUT_MS)
			return -1;
		c->ring.sring->rsp_event = c->ring.rsp_cons + 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (c->ring.sring->rsp_prod != c->ring.rsp_cons)
			break;
		if (poll(pfd, 2, 50) > 0) {
			if (pfd[1].revents)
				return -1;	/* hung up */
			(void)!read(c->kick_guest, &v, sizeof(v));
		}
	}
	RING_COPY_RESPONSE(&c->ring, c->ring.rsp_cons, &rsp);
	if (rsp.id != hdr.id || rsp.nslots != nslots) {
		fail("reply %llu/%u does not match request %llu/%u",
		     (unsigned long long)rsp.id, rsp.nslots,
		     (unsigned long long)hdr.id, nslots);
		return -1;
	}
	if (reply && rcap) {
		uint32_t n = rsp.len < rcap ? rsp.len : rcap;

		memset(reply, 0, rcap);
		xgpuif_msg_read(c->ring.sring->ring, RING_SIZE(&c->ring),
				c->ring.rsp_cons, 0, reply, n);
	}
	c->ring.rsp_cons += nslots;
	*status = rsp.status;
	return 0;
}

/* a header the backend must refuse: nslots 0 */
static void send_bad_header(struct conn *c)
{
	struct xgpuif_request *r = RING_GET_REQUEST(&c->ring,
						    c->ring.req_prod_pvt);

	memset(r, 0, sizeof(*r));
	r->id = ++c->next_id;
	r->op = XGPUIF_OP_INIT;
	r->nslots = 0;
	c->ring.req_prod_pvt++;
	publish(c);
}

static uint32_t rnd_state = 0x9e3779b9u;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* ---- modes --------------------------------------------------------------- */

static int connected(struct conn *c, const char *path, enum spoil how)
{
	int st = handshake(c, path, how);

	if (st == 0)
		return 0;
	if (st != -1000)
		fail("the backend refused a well-formed handshake (%d)", st);
	return -1;
}

static void mode_garbage(const char *path)
{
	struct conn c;
	uint8_t *ring;
	size_t n;

	if (connected(&c, path, HS_OK))
		return;
	ring = (uint8_t *)c.ring.sring->ring;
	n = (size_t)RING_SIZE(&c.ring) * XGPUIF_SLOT_SIZE;
	for (size_t i = 0; i < n; i++)
		ring[i] = (uint8_t)rnd();
	/* whatever the random header says, it claims zero slots */
	RING_GET_REQUEST(&c.ring, 0)->nslots = 0;
	c.ring.req_prod_pvt = 8;
	publish(&c);
	expect_closed(&c, "garbage");
	conn_close(&c);
}

static void mode_overflow(const char *path)
{
	struct conn c;

	if (connected(&c, path, HS_OK))
		return;
	__atomic_store_n(&c.ring.sring->req_prod, 0x40000000u,
			 __ATOMIC_RELEASE);
	kick(&c);
	expect_closed(&c, "overflow");
	conn_close(&c);
}

static void mode_bigslots(const char *path)
{
	struct conn c;
	struct xgpuif_request *r;

	if (connected(&c, path, HS_OK))
		return;
	r = RING_GET_REQUEST(&c.ring, 0);
	memset(r, 0, sizeof(*r));
	r->id = 1;
	r->op = XGPUIF_OP_INIT;
	r->nslots = 40;
	r->len = 8;
	c.ring.req_prod_pvt = 3;	/* only 3 of the 40 published */
	publish(&c);
	expect_closed(&c, "bigslots");
	conn_close(&c);
}

static void mode_badmemref(const char *path)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_device_args da = { 0, 0 };
	struct xgpuif_mem_alloc_args ma = { 4096 };
	struct xgpuif_ctx_reply cr = { 0 };
	struct xgpuif_dptr_reply dr = { 0 };
	struct xgpuif_memcpy_htod_args h;
	struct xgpuif_init_reply ir;
	struct xgpuif_request hdr;
	struct xgpuif_iov iov;
	struct conn c;
	int32_t st;

	if (connected(&c, path, HS_OK))
		return;
	/* a real device pointer, so that only the memref is wrong */
	if (call(&c, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), &ir, sizeof(ir),
		 &st) ||
	    call(&c, XGPUIF_OP_PRIMARY_CTX_RETAIN, 0, &da, sizeof(da), &cr,
		 sizeof(cr), &st) ||
	    call(&c, XGPUIF_OP_MEM_ALLOC, cr.ctx, &ma, sizeof(ma), &dr,
		 sizeof(dr), &st)) {
		fail("no reply to a well-formed request");
		conn_close(&c);
		return;
	}
	if (st)
		printf("hostile: MEM_ALLOC answered %d; going on with a NULL "
		       "device pointer\n", st);

	memset(&h, 0, sizeof(h));
	h.dst = dr.dptr;
	h.src.region = XGPUIF_REGION_DATA;
	h.src.off = c.data_bytes - 16;	/* runs 4080 bytes past the end */
	h.src.len = 4096;
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = ++c.next_id;
	hdr.op = XGPUIF_OP_MEMCPY_HTOD;
	hdr.ctx = cr.ctx;
	iov = (struct xgpuif_iov){ &h, sizeof(h) };
	xgpuif_front_put(&c.ring, &hdr, &iov, 1, 1);
	publish(&c);
	expect_closed(&c, "badmemref");
	conn_close(&c);
}

static void mode_badop(const char *path)
{
	uint8_t junk[16] = { 0 };
	struct conn c;
	int32_t st = 0;

	if (connected(&c, path, HS_OK))
		return;
	if (call(&c, 9999, 0, junk, sizeof(junk), NULL, 0, &st)) {
		fail("no reply to op 9999");
		conn_close(&c);
		return;
	}
	if (st != XGPUIF_ST_NOT_IMPL)
		fail("op 9999 answered %d, expected XGPUIF_ST_NOT_IMPL", st);
	/* MEM_ALLOC needs 8 bytes of arguments: send none */
	if (call(&c, XGPUIF_OP_MEM_ALLOC, 0, NULL, 0, NULL, 0, &st) == 0 &&
	    st != XGPUIF_ST_PROTO)
		fail("a short MEM_ALLOC answered %d, expected "
		     "XGPUIF_ST_PROTO", st);
	expect_closed(&c, "badop");
	conn_close(&c);
}

/* one call that must answer `want` (a CUresult) and keep the channel */
static void expect_status(struct conn *c, const char *what, uint16_t op,
			  uint64_t ctx, const void *args, uint32_t alen,
			  uint32_t rcap, int32_t want)
{
	uint8_t reply[256];
	int32_t st = 0;

	if (call(c, op, ctx, args, alen, reply, rcap, &st)) {
		fail("%s: no reply", what);
		return;
	}
	if (st != want)
		fail("%s answered %d, expected %d", what, st, want);
	else
		printf("hostile: %s refused with %d\n", what, st);
}

#define INVALID_VALUE	1	/* CUDA_ERROR_INVALID_VALUE */
#define INVALID_HANDLE	400	/* CUDA_ERROR_INVALID_HANDLE */

static void mode_badhandles(const char *path)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_device_args da = { 0, 0 };
	struct xgpuif_ctx_reply cr = { 0 };
	struct xgpuif_init_reply ir;
	const uint64_t forged = 0xdead00000001ull;
	struct conn c;
	int32_t st;

	if (connected(&c, path, HS_OK))
		return;
	if (call(&c, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), &ir, sizeof(ir),
		 &st) ||
	    call(&c, XGPUIF_OP_PRIMARY_CTX_RETAIN, 0, &da, sizeof(da), &cr,
		 sizeof(cr), &st)) {
		fail("no reply to a well-formed request");
		conn_close(&c);
		return;
	}
	{
		struct xgpuif_handle_args h = { forged };
		struct xgpuif_handle_args wrong = { cr.ctx };

		expect_status(&c, "POOL_DESTROY forged", XGPUIF_OP_POOL_DESTROY,
			      cr.ctx, &h, sizeof(h), 0, INVALID_HANDLE);
		{
			/* a 16-byte attribute into an 8-byte reply */
			struct xgpuif_ptr_attr_args pa = {
				0x1000, 5 /* CU_POINTER_ATTRIBUTE_P2P_TOKENS */, 0
			};

			expect_status(&c, "POINTER_GET_ATTRIBUTE P2P tokens",
				      XGPUIF_OP_POINTER_GET_ATTRIBUTE, cr.ctx,
				      &pa, sizeof(pa), 8,
				      801 /* CUDA_ERROR_NOT_SUPPORTED */);
		}
		expect_status(&c, "POOL_DESTROY of a context",
			      XGPUIF_OP_POOL_DESTROY, cr.ctx, &wrong,
			      sizeof(wrong), 0, INVALID_HANDLE);
		expect_status(&c, "GRAPH_DESTROY forged",
			      XGPUIF_OP_GRAPH_DESTROY, cr.ctx, &h, sizeof(h), 0,
			      INVALID_HANDLE);
		expect_status(&c, "GEXEC_DESTROY forged",
			      XGPUIF_OP_GEXEC_DESTROY, cr.ctx, &h, sizeof(h), 0,
			      INVALID_HANDLE);
		expect_status(&c, "VMM_RELEASE forged", XGPUIF_OP_VMM_RELEASE,
			      cr.ctx, &h, sizeof(h), 0, INVALID_HANDLE);
	}
	{
		struct xgpuif_mem_alloc_async_args a = { 4096, 0, forged };

		expect_status(&c, "MEM_ALLOC_ASYNC from a forged pool",
			      XGPUIF_OP_MEM_ALLOC_ASYNC, cr.ctx, &a, sizeof(a),
			      sizeof(struct xgpuif_dptr_reply), INVALID_HANDLE);
	}
	{
		struct xgpuif_vmm_range_args r = { 0x100000, 4096 };
		struct xgpuif_vmm_map_args m = { 0x100000, 4096, 0, forged, 0 };

		expect_status(&c, "VMM_ADDRESS_FREE of no reservation",
			      XGPUIF_OP_VMM_ADDRESS_FREE, cr.ctx, &r, sizeof(r),
			      0, INVALID_VALUE);
		expect_status(&c, "VMM_UNMAP of no reservation",
			      XGPUIF_OP_VMM_UNMAP, cr.ctx, &r, sizeof(r), 0,
			      INVALID_VALUE);
		expect_status(&c, "VMM_MAP of a forged allocation",
			      XGPUIF_OP_VMM_MAP, cr.ctx, &m, sizeof(m), 0,
			      INVALID_HANDLE);
	}
	{
		struct xgpuif_hostfn_setup_args hs = { 77, 64, 0, 0 };

		expect_status(&c, "HOSTFN_SETUP of no region",
			      XGPUIF_OP_HOSTFN_SETUP, cr.ctx, &hs, sizeof(hs), 0,
			      INVALID_VALUE);
	}
	{
		/* graph node queries, setters and user objects */
		struct xgpuif_handle_args h = { forged };
		struct xgpuif_edges_args ea = { forged, 0, 2, 4 };
		struct xgpuif_edges_args en = { 0, forged, 0, 4 };
		struct xgpuif_enabled_args na = { forged, forged, 0, 0 };
		struct xgpuif_find_clone_args fa = { forged, forged };
		struct xgpuif_dot_args da2 = { forged, 0, 0, 0 };
		struct xgpuif_uobj_ref_args ua = { forged, 0, 0, 1, 0, 0 };
		struct xgpuif_kernel_attr_args ka = { forged, 0, 0, 0, { 0 } };
		struct xgpuif_cond_handle_args ca = { forged, 0, 0 };
		struct {
			struct xgpuif_node_set_args a;
			struct xgpuif_node_host b;
		} ns = { { 0, forged, 2 /* host */, 0 }, { 1 } };

		expect_status(&c, "GRAPH_NODE_GET forged",
			      XGPUIF_OP_GRAPH_NODE_GET, cr.ctx, &h, sizeof(h),
			      64, INVALID_HANDLE);
		expect_status(&c, "GRAPH_NODE_SET forged",
			      XGPUIF_OP_GRAPH_NODE_SET, cr.ctx, &ns,
			      sizeof(ns), 0, INVALID_HANDLE);
		expect_status(&c, "GRAPH_NODE_EDGES of a forged graph",
			      XGPUIF_OP_GRAPH_NODE_EDGES, cr.ctx, &ea,
			      sizeof(ea), 128, INVALID_HANDLE);
		expect_status(&c, "GRAPH_NODE_EDGES of a forged node",
			      XGPUIF_OP_GRAPH_NODE_EDGES, cr.ctx, &en,
			      sizeof(en), 128, INVALID_HANDLE);
		expect_status(&c, "GRAPH_DESTROY_NODE forged",
			      XGPUIF_OP_GRAPH_DESTROY_NODE, cr.ctx, &h,
			      sizeof(h), 0, INVALID_HANDLE);
		expect_status(&c, "GRAPH_NODE_ENABLED forged",
			      XGPUIF_OP_GRAPH_NODE_ENABLED, cr.ctx, &na,
			      sizeof(na), 8, INVALID_HANDLE);
		expect_status(&c, "GRAPH_FIND_IN_CLONE forged",
			      XGPUIF_OP_GRAPH_FIND_IN_CLONE, cr.ctx, &fa,
			      sizeof(fa), 16, INVALID_HANDLE);
		expect_status(&c, "GEXEC_FLAGS forged", XGPUIF_OP_GEXEC_FLAGS,
			      cr.ctx, &h, sizeof(h), 8, INVALID_HANDLE);
		expect_status(&c, "GRAPH_DOT forged", XGPUIF_OP_GRAPH_DOT,
			      cr.ctx, &da2, sizeof(da2), 128, INVALID_HANDLE);
		expect_status(&c, "USEROBJ_REF forged", XGPUIF_OP_USEROBJ_REF,
			      cr.ctx, &ua, sizeof(ua), 0, INVALID_HANDLE);
		expect_status(&c, "GRAPH_KERNEL_ATTR forged",
			      XGPUIF_OP_GRAPH_KERNEL_ATTR, cr.ctx, &ka,
			      sizeof(ka), 64, INVALID_HANDLE);
		expect_status(&c, "GRAPH_COND_HANDLE of a forged graph",
			      XGPUIF_OP_GRAPH_COND_HANDLE, cr.ctx, &ca,
			      sizeof(ca), 8, INVALID_HANDLE);
	}
	{
		struct xgpuif_capture_info_args ci = { forged, 1, 0 };

		expect_status(&c, "STREAM_CAPTURE_INFO of a forged stream",
			      XGPUIF_OP_STREAM_CAPTURE_INFO, cr.ctx, &ci,
			      sizeof(ci), 64, INVALID_HANDLE);
	}
	{
		struct xgpuif_ctx_event_args ce = { cr.ctx, forged, 0, 0 };
		struct xgpuif_ctx_event_args cw = { cr.ctx, cr.ctx, 1, 0 };
		struct xgpuif_stream_pair_args sp = { 0, forged };
		struct xgpuif_device_query_args dq;
		struct xgpuif_peer_access_args pa = { forged, 1, 0 };

		expect_status(&c, "CTX_EVENT of a forged event",
			      XGPUIF_OP_CTX_EVENT, cr.ctx, &ce, sizeof(ce), 0,
			      INVALID_HANDLE);
		expect_status(&c, "CTX_EVENT of a context as the event",
			      XGPUIF_OP_CTX_EVENT, cr.ctx, &cw, sizeof(cw), 0,
			      INVALID_HANDLE);
		expect_status(&c, "STREAM_COPY_ATTRS from a forged stream",
			      XGPUIF_OP_STREAM_COPY_ATTRS, cr.ctx, &sp,
			      sizeof(sp), 0, INVALID_HANDLE);
		memset(&dq, 0, sizeof(dq));
		dq.what = XGPUIF_DQ_HOST_ATOMIC_CAPS;
		dq.count = 100000;
		expect_status(&c, "DEVICE_QUERY of 100000 operations",
			      XGPUIF_OP_DEVICE_QUERY, cr.ctx, &dq, sizeof(dq),
			      sizeof(struct xgpuif_device_query_reply),
			      INVALID_VALUE);
		dq.what = 9999;
		expect_status(&c, "DEVICE_QUERY of an unknown question",
			      XGPUIF_OP_DEVICE_QUERY, cr.ctx, &dq, sizeof(dq),
			      sizeof(struct xgpuif_device_query_reply),
			      INVALID_VALUE);
		expect_status(&c, "PEER_ACCESS to a forged context",
			      XGPUIF_OP_PEER_ACCESS, cr.ctx, &pa, sizeof(pa), 0,
			      201 /* CUDA_ERROR_INVALID_CONTEXT */);
	}
	{
		struct xgpuif_handle_args h = { forged };
		struct xgpuif_subarray_args sa = { cr.ctx, 0, 0 };
		struct xgpuif_memcpy3d_args m;
		struct xgpuif_texref_set_args ts;
		struct xgpuif_texref_get_args tg = { forged,
						     XGPUIF_TR_SURF_ARRAY, 0 };
		struct xgpuif_array_query_args q = { forged, XGPUIF_AQ_MEMREQ,
						     0 };

		expect_status(&c, "MIPMAP_DESTROY forged",
			      XGPUIF_OP_MIPMAP_DESTROY, cr.ctx, &h, sizeof(h),
			      0, INVALID_HANDLE);
		expect_status(&c, "MIPMAP_LEVEL of a context",
			      XGPUIF_OP_MIPMAP_LEVEL, cr.ctx, &sa, sizeof(sa),
			      sizeof(struct xgpuif_subarray_reply),
			      INVALID_HANDLE);
		memset(&m, 0, sizeof(m));
		m.src.type = XGPUIF_MT_DEVICE;
		m.dst.type = XGPUIF_MT_ARRAY;
		m.dst.array = forged;
		m.width_bytes = m.height = m.depth = 1;
		expect_status(&c, "MEMCPY_3D to a forged array",
			      XGPUIF_OP_MEMCPY_3D, cr.ctx, &m, sizeof(m), 0,
			      INVALID_HANDLE);
		m.dst.type = XGPUIF_MT_DEVICE;
		m.flags = XGPUIF_CF_PEER;
		m.src_ctx = forged;
		m.dst_ctx = cr.ctx;
		expect_status(&c, "MEMCPY_3D peer of a forged context",
			      XGPUIF_OP_MEMCPY_3D, cr.ctx, &m, sizeof(m), 0,
			      201 /* CUDA_ERROR_INVALID_CONTEXT */);
		memset(&ts, 0, sizeof(ts));
		ts.ref = forged;
		ts.what = XGPUIF_TR_FILTER;
		expect_status(&c, "TEXREF_SET of a forged reference",
			      XGPUIF_OP_TEXREF_SET, cr.ctx, &ts, sizeof(ts),
			      sizeof(struct xgpuif_u64_reply), INVALID_HANDLE);
		expect_status(&c, "TEXREF_GET of a forged surface reference",
			      XGPUIF_OP_TEXREF_GET, cr.ctx, &tg, sizeof(tg),
			      sizeof(struct xgpuif_texref_get_reply),
			      INVALID_HANDLE);
		expect_status(&c, "ARRAY_QUERY of a forged array",
			      XGPUIF_OP_ARRAY_QUERY, cr.ctx, &q, sizeof(q),
			      sizeof(struct xgpuif_array_query_reply),
			      INVALID_HANDLE);
		q.what = 77;
		expect_status(&c, "ARRAY_QUERY of no such kind",
			      XGPUIF_OP_ARRAY_QUERY, cr.ctx, &q, sizeof(q),
			      sizeof(struct xgpuif_array_query_reply),
			      INVALID_VALUE);
	}
	{
		/* green contexts: forged handles, resources the worker never
		 * gave, counts past the bounds */
		struct xgpuif_devres_args dr = { 0, XGPUIF_DR_DEVICE, 1, 0, 0 };
		/* type 1: CU_DEV_RESOURCE_TYPE_SM */
		struct xgpuif_devres_reply drr;
		struct xgpuif_sm_split_args sp;
		struct xgpuif_green_create_args gc = { forged, 0, 1 };
		struct xgpuif_handle_args h = { forged };
		struct xgpuif_ctx_event_args ge = { cr.ctx, forged, 0, 0 };
		struct xgpuif_green_stream_args gs = { forged, 1, 0 };
		struct {
			struct xgpuif_resdesc_args a;
			struct xgpuif_devres r;
		} rd;

		memset(&sp, 0, sizeof(sp));
		memset(&rd, 0, sizeof(rd));
		dr.of = XGPUIF_DR_GREEN;
		dr.handle = forged;
		expect_status(&c, "DEV_RESOURCE of a forged green context",
			      XGPUIF_OP_DEV_RESOURCE, cr.ctx, &dr, sizeof(dr),
			      sizeof(drr), INVALID_HANDLE);
		dr.of = 9;
		expect_status(&c, "DEV_RESOURCE of no such owner",
			      XGPUIF_OP_DEV_RESOURCE, cr.ctx, &dr, sizeof(dr),
			      sizeof(drr), INVALID_VALUE);
		/* a real resource, then bytes that are not one */
		dr.of = XGPUIF_DR_DEVICE;
		if (call(&c, XGPUIF_OP_DEV_RESOURCE, cr.ctx, &dr, sizeof(dr),
			 &drr, sizeof(drr), &st) || st)
			fail("DEV_RESOURCE of the device answered %d", st);
		sp.input = drr.res;
		sp.input.b[20] ^= 0x5a;
		sp.ngroups = 1;
		sp.min_count = 8;
		expect_status(&c, "SM_SPLIT of a resource never given",
			      XGPUIF_OP_SM_SPLIT, cr.ctx, &sp, sizeof(sp), 256,
			      INVALID_VALUE);
		sp.input = drr.res;
		sp.ngroups = 100000;
		expect_status(&c, "SM_SPLIT into 100000 groups",
			      XGPUIF_OP_SM_SPLIT, cr.ctx, &sp, sizeof(sp), 256,
			      INVALID_VALUE);
		sp.ngroups = 1;
		sp.how = 7;
		expect_status(&c, "SM_SPLIT of a bad query flag",
			      XGPUIF_OP_SM_SPLIT, cr.ctx, &sp, sizeof(sp), 256,
			      INVALID_VALUE);
		rd.a.n = 0;
		expect_status(&c, "RESDESC_CREATE of no resources",
			      XGPUIF_OP_RESDESC_CREATE, cr.ctx, &rd,
			      sizeof(rd.a), sizeof(struct xgpuif_resdesc_reply),
			      INVALID_VALUE);
		rd.a.n = 100000;
		expect_status(&c, "RESDESC_CREATE of 100000 resources",
			      XGPUIF_OP_RESDESC_CREATE, cr.ctx, &rd,
			      sizeof(rd), sizeof(struct xgpuif_resdesc_reply),
			      INVALID_VALUE);
		rd.a.n = 1;
		expect_status(&c, "RESDESC_CREATE of a resource never given",
			      XGPUIF_OP_RESDESC_CREATE, cr.ctx, &rd,
			      sizeof(rd), sizeof(struct xgpuif_resdesc_reply),
			      INVALID_VALUE);
		expect_status(&c, "GREENCTX_CREATE of a forged descriptor",
			      XGPUIF_OP_GREENCTX_CREATE, cr.ctx, &gc,
			      sizeof(gc), sizeof(struct xgpuif_green_reply),
			      INVALID_HANDLE);
		gc.desc = cr.ctx;
		expect_status(&c, "GREENCTX_CREATE of a context as descriptor",
			      XGPUIF_OP_GREENCTX_CREATE, cr.ctx, &gc,
			      sizeof(gc), sizeof(struct xgpuif_green_reply),
			      INVALID_HANDLE);
		expect_status(&c, "GREENCTX_DESTROY forged",
			      XGPUIF_OP_GREENCTX_DESTROY, cr.ctx, &h,
			      sizeof(h), 0, INVALID_HANDLE);
		h.handle = cr.ctx;
		expect_status(&c, "CTX_FROM_GREEN of a context",
			      XGPUIF_OP_CTX_FROM_GREEN, cr.ctx, &h, sizeof(h),
			      sizeof(struct xgpuif_ctx_reply), INVALID_HANDLE);
		expect_status(&c, "GREENCTX_EVENT of a context",
			      XGPUIF_OP_GREENCTX_EVENT, cr.ctx, &ge,
			      sizeof(ge), 0, INVALID_HANDLE);
		expect_status(&c, "GREENCTX_STREAM of a forged green context",
			      XGPUIF_OP_GREENCTX_STREAM, cr.ctx, &gs,
			      sizeof(gs), sizeof(struct xgpuif_stream_reply),
			      INVALID_HANDLE);
	}
	/* STREAM_ATTR is 80 bytes: send 8 */
	if (call(&c, XGPUIF_OP_STREAM_ATTR, cr.ctx, &forged, sizeof(forged),
		 NULL, 0, &st) == 0 && st != XGPUIF_ST_PROTO)
		fail("a short STREAM_ATTR answered %d, expected "
		     "XGPUIF_ST_PROTO", st);
	expect_closed(&c, "badhandles");
	conn_close(&c);
}

static void mode_badhandshake(const char *path)
{
	static const struct {
		enum spoil how;
		const char *what;
	} cases[] = {
		{ HS_MAGIC, "wrong magic" },
		{ HS_ORDER, "ring order 20" },
		{ HS_UNSEALED, "unsealed memfd" },
		{ HS_SMALL, "memfd smaller than announced" },
		{ HS_NOFDS, "no descriptors" },
		{ HS_PIPES, "pipes for notification" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct conn c;
		int st = handshake(&c, path, cases[i].how);

		if (st == -1000) {
			conn_close(&c);
			continue;
		}
		if (st == 0)
			fail("%s: the backend accepted the channel",
			     cases[i].what);
		expect_closed(&c, cases[i].what);
		conn_close(&c);
	}
	/* a name with control characters is accepted, and logged only
	 * with them replaced (run.sh looks for the forged line) */
	{
		uint8_t junk[16] = { 0 };
		struct conn c;
		int32_t rst = 0;
		int st = handshake(&c, path, HS_NAME);

		if (st != -1000 && st != 0)
			fail("a name with a newline: refused (%d)", st);
		/* an unknown op: a log line that carries the name */
		if (st == 0 && call(&c, 9999, 0, junk, sizeof(junk), NULL, 0,
				    &rst))
			fail("a name with a newline: no reply to op 9999");
		conn_close(&c);
	}
}

static void mode_truncate(const char *path)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_init_reply ir;
	struct conn c;
	int32_t st;

	/* the least the backend accepts: no F_SEAL_SEAL */
	if (connected(&c, path, HS_MINSEALS))
		return;
	if (ftruncate(c.memfd, 0) == 0)
		fail("shrinking the channel's memfd succeeded");
	else if (errno != EPERM)
		fail("shrinking the memfd failed with %s, expected EPERM",
		     strerror(errno));
	if (ftruncate(c.memfd, (off_t)c.map_bytes * 2) == 0)
		fail("growing the channel's memfd succeeded");
	if (call(&c, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), &ir, sizeof(ir),
		 &st))
		fail("the worker did not answer after the truncate attempts");
	send_bad_header(&c);
	expect_closed(&c, "truncate");
	conn_close(&c);
}

/*
 * tinyallocs: one-byte allocations until the quota says no, against a
 * daemon started with --quota-mb 1: the driver spends 256 bytes at least
 * on each, so at most 4096 may succeed (before charging by the driver's
 * granularity, 100,000 went through and held 25.6 MB)
 */
static void mode_tinyallocs(const char *path)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_device_args da = { 0, 0 };
	struct xgpuif_ctx_reply cr = { 0 };
	struct xgpuif_init_reply ir;
	struct xgpuif_mem_alloc_args ma = { 1 };
	struct xgpuif_dptr_reply dr;
	unsigned int n = 0;
	struct conn c;
	int32_t st = 0;

	if (connected(&c, path, HS_OK))
		return;
	if (call(&c, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), &ir, sizeof(ir),
		 &st) ||
	    call(&c, XGPUIF_OP_PRIMARY_CTX_RETAIN, 0, &da, sizeof(da), &cr,
		 sizeof(cr), &st)) {
		fail("no reply to a well-formed request");
		conn_close(&c);
		return;
	}
	while (n < 100000) {
		if (call(&c, XGPUIF_OP_MEM_ALLOC, cr.ctx, &ma, sizeof(ma), &dr,
			 sizeof(dr), &st)) {
			fail("no reply to MEM_ALLOC %u", n);
			break;
		}
		if (st)
			break;
		n++;
	}
	printf("hostile: tinyallocs: %u one-byte allocations, then %d\n", n,
	       st);
	if (n > 4096)
		fail("%u one-byte allocations within a 1 MiB quota", n);
	else if (st != 2 /* CUDA_ERROR_OUT_OF_MEMORY */)
		fail("allocation %u answered %d, expected out of memory", n,
		     st);
	conn_close(&c);
}

static long hold_kib = 768;

/*
 * quotahold KIB: one allocation of KIB KiB, its status printed
 * ("hostile: quotahold: N"), then held for 3 s: two of them at once
 * against a daemon with --quota-mb 1 share the guest's quota (the quota
 * is a guest's, not a process's)
 */
static void mode_quotahold(const char *path)
{
	struct xgpuif_init_args ia = { 0, XGPUIF_VERSION };
	struct xgpuif_device_args da = { 0, 0 };
	struct xgpuif_ctx_reply cr = { 0 };
	struct xgpuif_init_reply ir;
	struct xgpuif_mem_alloc_args ma = { (uint64_t)hold_kib << 10 };
	struct xgpuif_dptr_reply dr;
	struct conn c;
	int32_t st = 0;

	if (connected(&c, path, HS_OK))
		return;
	if (call(&c, XGPUIF_OP_INIT, 0, &ia, sizeof(ia), &ir, sizeof(ir),
		 &st) ||
	    call(&c, XGPUIF_OP_PRIMARY_CTX_RETAIN, 0, &da, sizeof(da), &cr,
		 sizeof(cr), &st) ||
	    call(&c, XGPUIF_OP_MEM_ALLOC, cr.ctx, &ma, sizeof(ma), &dr,
		 sizeof(dr), &st)) {
		fail("no reply to a well-formed request");
		conn_close(&c);
		return;
	}
	printf("hostile: quotahold: %d\n", st);
	{
		struct xgpuif_mem_info_reply mi = { 0, 0 };
		int32_t ist = 0;

		if (call(&c, XGPUIF_OP_MEM_GET_INFO, cr.ctx, NULL, 0, &mi,
			 sizeof(mi), &ist) == 0 && ist == 0)
			printf("hostile: quotahold free %llu total %llu\n",
			       (unsigned long long)mi.free,
			       (unsigned long long)mi.total);
	}
	fflush(stdout);
	sleep(3);
	conn_close(&c);
}

/*
 * flood: as the user FLOOD_UID (argv[3] when root; -1: oneself), 200
 * connections that
 * never finish the handshake, held for 3 s.  The daemon welcomes at most
 * 8 of one user at once (--max-pending-per-user), each for 2 s, keeps up
 * to 128 more waiting (unwelcomed) and closes the others at once; none
 * gets a worker (run.sh counts the daemon's children); a second
 * after the last connect, prints "hostile: flood: N welcomed" (N must be
 * <= 8: those waiting have had no welcome), so that a client of another
 * user at the same time is served.
 */
static long flood_uid = -1;
static unsigned int flood_max = 8;	/* argv[4]: --max-pending-per-user */

static void mode_flood(const char *path)
{
	enum { N = 200 };
	static int socks[N];
	unsigned int welcomed = 0;

	if (flood_uid >= 0 && (setgroups(0, NULL) ||
			       setgid((gid_t)flood_uid) ||
			       setuid((uid_t)flood_uid))) {
		fail("cannot become uid %ld: %s", flood_uid, strerror(errno));
		return;
	}
	for (int i = 0; i < N; i++)
		socks[i] = xgpuif_sock_connect(path);
	sleep(1);
	for (int i = 0; i < N; i++) {
		struct xgpuif_local_welcome wel;
		struct pollfd pfd;

		if (socks[i] < 0)
			continue;
		pfd.fd = socks[i];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 1 &&
		    recv(socks[i], &wel, sizeof(wel), MSG_DONTWAIT) ==
			    (ssize_t)sizeof(wel) &&
		    wel.magic == XGPUIF_MAGIC)
			welcomed++;
	}
	printf("hostile: flood: %u welcomed\n", welcomed);
	fflush(stdout);
	if (welcomed > flood_max || !welcomed)
		fail("%u of %d idle connections were welcomed (at most %u, "
		     "at least 1)", welcomed, N, flood_max);
	sleep(3);
	for (int i = 0; i < N; i++)
		if (socks[i] >= 0)
			close(socks[i]);
}

/*
 * burst: 40 well-behaved processes of one user start at once (a pool of
 * workers): each connects, allocates, copies and frees; all must be
 * served (those past 8 pending handshakes wait for their turn).
 */
static void mode_burst(const char *path)
{
	enum { N = 40 };
	pid_t kids[N];
	int bad = 0;

	for (int i = 0; i < N; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			struct conn c;

			_exit(handshake(&c, path, HS_OK) == 0 ? 0 : 1);
		}
	}
	for (int i = 0; i < N; i++) {
		int st = 0;

		if (kids[i] < 0 || waitpid(kids[i], &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	printf("hostile: burst: %d of %d served\n", N - bad, N);
	if (bad)
		fail("%d of %d processes starting at once were not served",
		     bad, N);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(const char *path);
	} modes[] = {
		{ "garbage", mode_garbage },
		{ "overflow", mode_overflow },
		{ "bigslots", mode_bigslots },
		{ "badmemref", mode_badmemref },
		{ "badop", mode_badop },
		{ "badhandshake", mode_badhandshake },
		{ "truncate", mode_truncate },
		{ "badhandles", mode_badhandles },
		{ "flood", mode_flood },
		{ "burst", mode_burst },
		{ "tinyallocs", mode_tinyallocs },
		{ "quotahold", mode_quotahold },
	};
	const char *path = argc > 2 ? argv[2] : getenv("XGPU_SOCKET");

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2 || !path || !*path) {
		fprintf(stderr, "usage: hostile MODE [SOCKET]\nmodes:");
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			fprintf(stderr, " %s", modes[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	mode = argv[1];
	if (argc > 3)
		flood_uid = hold_kib = atol(argv[3]);
	if (argc > 4)
		flood_max = (unsigned int)atol(argv[4]);
	rnd_state ^= (uint32_t)getpid();
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(modes[i].name, mode) == 0) {
			modes[i].fn(path);
			if (!failed)
				printf("PASS hostile %s\n", mode);
			return failed;
		}
	}
	fprintf(stderr, "hostile: unknown mode %s\n", mode);
	return 2;
}
