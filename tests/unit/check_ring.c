// SPDX-License-Identifier: MIT
/*
 * check_ring: the shared ring's multi-slot messages (xgpuif_ring.h) and
 * the wire layout (xgpuif.h).  Both ends of a ring live in one buffer
 * here, so every test is the exact byte traffic a guest and a worker
 * would exchange, without a transport.
 */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpuif_ring.h"
#include "check_run.h"

struct ring_pair {
	struct xgpuif_sring *s;
	struct xgpuif_front_ring f;
	struct xgpuif_back_ring b;
	size_t bytes;
};

static void pair_init(struct ring_pair *p, unsigned int order)
{
	p->bytes = (size_t)XGPUIF_PAGE_SIZE << order;
	ck_assert_int_eq(posix_memalign((void **)&p->s, XGPUIF_PAGE_SIZE,
					p->bytes), 0);
	memset(p->s, 0xee, p->bytes);	/* stale bytes, as in a reused page */
	SHARED_RING_INIT(p->s);
	FRONT_RING_INIT(&p->f, p->s, p->bytes);
	BACK_RING_INIT(&p->b, p->s, p->bytes);
}

/* move both ends to index `idx`, as if idx slots had gone back and forth */
static void pair_seek(struct ring_pair *p, RING_IDX idx)
{
	p->s->req_prod = p->s->rsp_prod = idx;
	p->s->req_event = p->s->rsp_event = idx + 1;
	p->f.req_prod_pvt = p->f.rsp_cons = idx;
	p->b.rsp_prod_pvt = p->b.req_cons = idx;
}

static void pair_free(struct ring_pair *p)
{
	free(p->s);
}

static void fill_pattern(uint8_t *buf, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
}

/* ---- sizes --------------------------------------------------------------- */

START_TEST(test_slots_for_edges)
{
	ck_assert_uint_eq(xgpuif_slots_for(0), 1);
	ck_assert_uint_eq(xgpuif_slots_for(1), 1);
	ck_assert_uint_eq(xgpuif_slots_for(XGPUIF_SLOT0_PAYLOAD), 1);
	ck_assert_uint_eq(xgpuif_slots_for(XGPUIF_SLOT0_PAYLOAD + 1), 2);
	ck_assert_uint_eq(xgpuif_slots_for(XGPUIF_SLOT0_PAYLOAD +
					   XGPUIF_SLOT_SIZE), 2);
	ck_assert_uint_eq(xgpuif_slots_for(XGPUIF_SLOT0_PAYLOAD +
					   XGPUIF_SLOT_SIZE + 1), 3);
	ck_assert_uint_eq(xgpuif_slots_for(XGPUIF_MAX_PAYLOAD),
			  XGPUIF_MAX_SLOTS);
	ck_assert_uint_eq(xgpuif_slots_for(XGPUIF_MAX_PAYLOAD + 1),
			  XGPUIF_MAX_SLOTS + 1);
}
END_TEST

START_TEST(test_capacity_edges)
{
	ck_assert_uint_eq(xgpuif_capacity(1), XGPUIF_SLOT0_PAYLOAD);
	ck_assert_uint_eq(xgpuif_capacity(2),
			  XGPUIF_SLOT0_PAYLOAD + XGPUIF_SLOT_SIZE);
	ck_assert_uint_eq(xgpuif_capacity(XGPUIF_MAX_SLOTS),
			  XGPUIF_MAX_PAYLOAD);
	/* a full message is exactly its slots minus one header */
	ck_assert_uint_eq(xgpuif_capacity(XGPUIF_MAX_SLOTS) + XGPUIF_HDR_SIZE,
			  XGPUIF_MAX_SLOTS * XGPUIF_SLOT_SIZE);
}
END_TEST

/* slots_for is the least slot count whose capacity holds len */
START_TEST(test_slots_for_is_tight)
{
	for (uint32_t len = 0; len <= XGPUIF_MAX_PAYLOAD + 300; len++) {
		uint32_t n = xgpuif_slots_for(len);

		ck_assert_uint_ge(xgpuif_capacity(n), len);
		if (n > 1)
			ck_assert_uint_lt(xgpuif_capacity(n - 1), len);
	}
}
END_TEST

START_TEST(test_ring_slots)
{
	/* 64 bytes of indices, then slots; rounded down to a power of 2 */
	ck_assert_uint_eq(xgpuif_ring_slots(0), 16);
	ck_assert_uint_eq(xgpuif_ring_slots(1), 32);
	ck_assert_uint_eq(xgpuif_ring_slots(XGPUIF_DEFAULT_RING_ORDER), 256);
	ck_assert_uint_ge(xgpuif_ring_slots(XGPUIF_DEFAULT_RING_ORDER),
			  XGPUIF_MAX_SLOTS);
	ck_assert_uint_eq(xgpuif_ring_slots(XGPUIF_MAX_RING_ORDER), 1024);
}
END_TEST

/* ---- messages ------------------------------------------------------------ */

/*
 * Write a request of `len` bytes (two iov pieces) with the header slot at
 * `start`, read it back on the other end and compare.
 */
static void round_trip(unsigned int order, RING_IDX start, uint32_t len)
{
	static uint8_t src[XGPUIF_MAX_PAYLOAD], got[XGPUIF_MAX_PAYLOAD];
	struct ring_pair p;
	struct xgpuif_request hdr, in;
	struct xgpuif_iov iov[2];
	uint32_t nslots = xgpuif_slots_for(len);
	uint32_t cut = len / 3;

	pair_init(&p, order);
	pair_seek(&p, start);
	fill_pattern(src, len, start ^ len);
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = 0x1122334455667788ull;
	hdr.op = XGPUIF_OP_MEMCPY_HTOD;
	hdr.ctx = 0xabcdef0012345678ull;
	hdr.flags = XGPUIF_RF_POSTED;
	iov[0] = (struct xgpuif_iov){ src, cut };
	iov[1] = (struct xgpuif_iov){ src + cut, len - cut };

	ck_assert_uint_ge(xgpuif_front_free(&p.f), nslots);
	xgpuif_front_put(&p.f, &hdr, iov, 2, nslots);
	ck_assert_uint_eq(p.f.req_prod_pvt - start, nslots);
	RING_PUSH_REQUESTS(&p.f);
	ck_assert_uint_eq(xgpuif_front_free(&p.f), RING_SIZE(&p.f) - nslots);

	memset(got, 0, sizeof(got));
	ck_assert_int_eq(xgpuif_back_get(&p.b, p.s->req_prod, &in, got), 0);
	ck_assert_uint_eq(p.b.req_cons, p.s->req_prod);
	ck_assert(in.id == hdr.id);
	ck_assert_uint_eq(in.op, XGPUIF_OP_MEMCPY_HTOD);
	ck_assert_uint_eq(in.nslots, nslots);
	ck_assert_uint_eq(in.len, len);
	ck_assert(in.ctx == hdr.ctx);
	ck_assert_uint_eq(in.flags, XGPUIF_RF_POSTED);
	for (size_t i = 0; i < sizeof(in._pad); i++)
		ck_assert_uint_eq(in._pad[i], 0);
	ck_assert_mem_eq(got, src, len);
	pair_free(&p);
}

START_TEST(test_put_get_wraps)
{
	uint32_t size = xgpuif_ring_slots(XGPUIF_DEFAULT_RING_ORDER);

	/* header in the last slot, payload continues at slot 0 */
	round_trip(XGPUIF_DEFAULT_RING_ORDER, size - 1, 5 * XGPUIF_SLOT_SIZE);
	/* header and some payload slots before the end */
	round_trip(XGPUIF_DEFAULT_RING_ORDER, size - 3, 7 * XGPUIF_SLOT_SIZE +
							   17);
	/* a whole-ring message starting half way */
	round_trip(XGPUIF_DEFAULT_RING_ORDER, size / 2, XGPUIF_MAX_PAYLOAD);
	/* a 1-slot message in the last slot */
	round_trip(0, xgpuif_ring_slots(0) - 1, XGPUIF_SLOT0_PAYLOAD);
	/* the 32-bit indices themselves wrap inside the message */
	round_trip(XGPUIF_DEFAULT_RING_ORDER, 0xfffffffeu,
		   10 * XGPUIF_SLOT_SIZE);
}
END_TEST

START_TEST(test_put_get_all_lengths)
{
	/* every length around the slot boundaries, at a wrapping start */
	for (uint32_t len = 0; len < 4 * XGPUIF_SLOT_SIZE; len++)
		round_trip(1, xgpuif_ring_slots(1) - 2, len);
}
END_TEST

START_TEST(test_response_round_trip)
{
	static uint8_t src[XGPUIF_MAX_PAYLOAD], got[XGPUIF_MAX_PAYLOAD];
	uint32_t size = xgpuif_ring_slots(XGPUIF_DEFAULT_RING_ORDER);
	struct ring_pair p;
	struct xgpuif_request hdr, in;
	struct xgpuif_response rsp;
	struct xgpuif_iov iov = { src, 10 };
	uint32_t nslots = 9, rlen = xgpuif_capacity(9);
	RING_IDX start = size - 4;

	pair_init(&p, XGPUIF_DEFAULT_RING_ORDER);
	pair_seek(&p, start);
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = 42;
	hdr.op = XGPUIF_OP_DEVICE_INFO;
	/* a short request padded to the slots its long reply needs */
	xgpuif_front_put(&p.f, &hdr, &iov, 1, nslots);
	RING_PUSH_REQUESTS(&p.f);
	ck_assert_int_eq(xgpuif_back_get(&p.b, p.s->req_prod, &in, got), 0);
	ck_assert_uint_eq(in.nslots, nslots);
	ck_assert_uint_eq(in.len, 10);

	fill_pattern(src, rlen, 7);
	xgpuif_back_put(&p.b, &in, -12345, 0, src, rlen);
	ck_assert_uint_eq(p.b.rsp_prod_pvt - start, nslots);
	RING_PUSH_RESPONSES(&p.b);
	ck_assert_uint_eq(p.s->rsp_prod - start, nslots);

	RING_COPY_RESPONSE(&p.f, p.f.rsp_cons, &rsp);
	ck_assert(rsp.id == 42);
	ck_assert_uint_eq(rsp.op, XGPUIF_OP_DEVICE_INFO);
	ck_assert_uint_eq(rsp.nslots, nslots);
	ck_assert_uint_eq(rsp.len, rlen);
	ck_assert_int_eq(rsp.status, -12345);
	ck_assert_uint_eq(rsp.flags, 0);
	for (size_t i = 0; i < 2; i++)
		ck_assert_uint_eq(rsp._pad[i], 0);
	memset(got, 0, sizeof(got));
	xgpuif_msg_read(p.s->ring, RING_SIZE(&p.f), p.f.rsp_cons, 0, got,
			rsp.len);
	ck_assert_mem_eq(got, src, rlen);
	/* a reply at an offset reads the same bytes */
	xgpuif_msg_read(p.s->ring, RING_SIZE(&p.f), p.f.rsp_cons, 200, got,
			rlen - 200);
	ck_assert_mem_eq(got, src + 200, rlen - 200);
	pair_free(&p);
}
END_TEST

START_TEST(test_response_empty)
{
	static uint8_t buf[XGPUIF_MAX_PAYLOAD];
	struct ring_pair p;
	struct xgpuif_request hdr, in;
	struct xgpuif_response rsp;

	pair_init(&p, 0);
	memset(&hdr, 0, sizeof(hdr));
	hdr.id = 7;
	hdr.op = XGPUIF_OP_CTX_SYNCHRONIZE;
	xgpuif_front_put(&p.f, &hdr, NULL, 0, 1);
	RING_PUSH_REQUESTS(&p.f);
	ck_assert_int_eq(xgpuif_back_get(&p.b, p.s->req_prod, &in, buf), 0);
	ck_assert_uint_eq(in.len, 0);
	/* the flags travel with the reply */
	xgpuif_back_put(&p.b, &in, 0, XGPUIF_SF_OUTPUT, NULL, 0);
	RING_PUSH_RESPONSES(&p.b);
	RING_COPY_RESPONSE(&p.f, 0, &rsp);
	ck_assert(rsp.id == 7);
	ck_assert_uint_eq(rsp.len, 0);
	ck_assert_int_eq(rsp.status, 0);
	ck_assert_uint_eq(rsp.flags, XGPUIF_SF_OUTPUT);
	pair_free(&p);
}
END_TEST

/* ---- what the backend refuses -------------------------------------------- */

/*
 * Forge a header at the back end's consumer index, as a hostile guest
 * would, and publish `avail` slots.
 */
static int forge(struct ring_pair *p, uint16_t nslots, uint32_t len,
		 RING_IDX avail)
{
	static uint8_t buf[XGPUIF_MAX_PAYLOAD];
	struct xgpuif_request *slot = RING_GET_REQUEST(&p->f,
						       p->b.req_cons);
	struct xgpuif_request in;
	RING_IDX cons = p->b.req_cons;
	int rc;

	memset(slot, 0, sizeof(*slot));
	slot->id = 1;
	slot->op = XGPUIF_OP_INIT;
	slot->nslots = nslots;
	slot->len = len;
	p->s->req_prod = cons + avail;
	rc = xgpuif_back_get(&p->b, p->s->req_prod, &in, buf);
	if (rc)	/* a refused request consumes nothing */
		ck_assert_uint_eq(p->b.req_cons, cons);
	else
		ck_assert_uint_eq(p->b.req_cons, cons + nslots);
	return rc;
}

START_TEST(test_get_refuses_zero_slots)
{
	struct ring_pair p;

	pair_init(&p, XGPUIF_DEFAULT_RING_ORDER);
	ck_assert_int_eq(forge(&p, 0, 0, 1), -EPROTO);
	pair_free(&p);
}
END_TEST

START_TEST(test_get_refuses_more_than_available)
{
	struct ring_pair p;

	pair_init(&p, XGPUIF_DEFAULT_RING_ORDER);
	pair_seek(&p, 250);
	ck_assert_int_eq(forge(&p, 4, 10, 3), -EPROTO);
	ck_assert_int_eq(forge(&p, 2, XGPUIF_SLOT0_PAYLOAD + 1, 1), -EPROTO);
	ck_assert_int_eq(forge(&p, 3, 10, 3), 0);	/* just fits */
	pair_free(&p);
}
END_TEST

START_TEST(test_get_refuses_too_many_slots)
{
	struct ring_pair p;

	/* 1024 slots: room for more than XGPUIF_MAX_SLOTS */
	pair_init(&p, XGPUIF_MAX_RING_ORDER);
	ck_assert_int_eq(forge(&p, XGPUIF_MAX_SLOTS + 1, 10, 1000), -EPROTO);
	ck_assert_int_eq(forge(&p, 0xffff, 10, 1000), -EPROTO);
	ck_assert_int_eq(forge(&p, XGPUIF_MAX_SLOTS, XGPUIF_MAX_PAYLOAD, 1000),
			 0);
	pair_free(&p);
}
END_TEST

START_TEST(test_get_refuses_len_over_capacity)
{
	struct ring_pair p;

	pair_init(&p, XGPUIF_DEFAULT_RING_ORDER);
	ck_assert_int_eq(forge(&p, 1, XGPUIF_SLOT0_PAYLOAD + 1, 1), -EPROTO);
	ck_assert_int_eq(forge(&p, 3, xgpuif_capacity(3) + 1, 3), -EPROTO);
	ck_assert_int_eq(forge(&p, 1, 0xffffffffu, 1), -EPROTO);
	ck_assert_int_eq(forge(&p, 3, xgpuif_capacity(3), 3), 0);
	pair_free(&p);
}
END_TEST

START_TEST(test_prod_overflow)
{
	struct ring_pair p;
	RING_IDX base = 0xfffffff0u;	/* also across the 32-bit wrap */

	pair_init(&p, XGPUIF_DEFAULT_RING_ORDER);
	pair_seek(&p, base);
	ck_assert(!RING_REQUEST_PROD_OVERFLOW(&p.b, base));
	ck_assert(!RING_REQUEST_PROD_OVERFLOW(&p.b, base + 1));
	ck_assert(!RING_REQUEST_PROD_OVERFLOW(&p.b, base + RING_SIZE(&p.b)));
	ck_assert(RING_REQUEST_PROD_OVERFLOW(&p.b,
					     base + RING_SIZE(&p.b) + 1));
	ck_assert(RING_REQUEST_PROD_OVERFLOW(&p.b, base + 0x40000000u));
	/* behind the consumer is as wrong as far ahead */
	ck_assert(RING_REQUEST_PROD_OVERFLOW(&p.b, base - 1));
	/* the guest's check of the response index, symmetric */
	ck_assert(!RING_RESPONSE_PROD_OVERFLOW(&p.f, base + RING_SIZE(&p.f)));
	ck_assert(RING_RESPONSE_PROD_OVERFLOW(&p.f,
					      base + RING_SIZE(&p.f) + 1));
	pair_free(&p);
}
END_TEST

/* ---- layout -------------------------------------------------------------- */

START_TEST(test_layout)
{
	ck_assert_uint_eq(sizeof(struct xgpuif_request), 128);
	ck_assert_uint_eq(sizeof(struct xgpuif_response), 128);
	ck_assert_uint_eq(sizeof(union xgpuif_sring_entry), 128);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, id), 0);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, op), 8);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, nslots), 10);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, len), 12);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, ctx), 16);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, flags), 24);
	ck_assert_uint_eq(offsetof(struct xgpuif_request, payload),
			  XGPUIF_HDR_SIZE);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, id), 0);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, op), 8);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, nslots), 10);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, len), 12);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, status), 16);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, flags), 20);
	ck_assert_uint_eq(offsetof(struct xgpuif_response, payload),
			  XGPUIF_HDR_SIZE);
	ck_assert_uint_eq(XGPUIF_HDR_SIZE + XGPUIF_SLOT0_PAYLOAD,
			  XGPUIF_SLOT_SIZE);
	/* the shared page: four indices, padding, then the slots */
	ck_assert_uint_eq(offsetof(struct xgpuif_sring, req_prod), 0);
	ck_assert_uint_eq(offsetof(struct xgpuif_sring, req_event), 4);
	ck_assert_uint_eq(offsetof(struct xgpuif_sring, rsp_prod), 8);
	ck_assert_uint_eq(offsetof(struct xgpuif_sring, rsp_event), 12);
	ck_assert_uint_eq(offsetof(struct xgpuif_sring, ring), 64);
	ck_assert_uint_eq(sizeof(struct xgpuif_memref), 24);
	ck_assert_uint_eq(offsetof(struct xgpuif_memref, len), 8);
	ck_assert_uint_eq(offsetof(struct xgpuif_memref, region), 16);
	ck_assert_uint_eq(sizeof(struct xgpuif_local_welcome), 24);
	ck_assert_uint_eq(sizeof(struct xgpuif_local_connect), 56);
	ck_assert_uint_eq(offsetof(struct xgpuif_local_connect, name), 24);
	ck_assert_uint_eq(sizeof(struct xgpuif_local_status), 128);
	ck_assert_uint_eq(sizeof(struct xgpuif_local_hostmem), 16);
	ck_assert_uint_eq(XGPUIF_MAGIC, 0x58475055u);
	/* op numbers are wire values: spot-check a few */
	ck_assert_int_eq(XGPUIF_OP_INIT, 1);
	ck_assert_int_eq(XGPUIF_OP_MEMCPY_HTOD, 37);
	ck_assert_int_eq(XGPUIF_OP_LAUNCH, 80);
	ck_assert_int_eq(XGPUIF_OP_EVENT_ELAPSED_TIME, 105);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *t = tcase_create("sizes");

	tcase_add_test(t, test_slots_for_edges);
	tcase_add_test(t, test_capacity_edges);
	tcase_add_test(t, test_slots_for_is_tight);
	tcase_add_test(t, test_ring_slots);
	suite_add_tcase(s, t);

	t = tcase_create("messages");
	tcase_add_test(t, test_put_get_wraps);
	tcase_add_test(t, test_put_get_all_lengths);
	tcase_add_test(t, test_response_round_trip);
	tcase_add_test(t, test_response_empty);
	suite_add_tcase(s, t);

	t = tcase_create("refusals");
	tcase_add_test(t, test_get_refuses_zero_slots);
	tcase_add_test(t, test_get_refuses_more_than_available);
	tcase_add_test(t, test_get_refuses_too_many_slots);
	tcase_add_test(t, test_get_refuses_len_over_capacity);
	tcase_add_test(t, test_prod_overflow);
	suite_add_tcase(s, t);

	t = tcase_create("layout");
	tcase_add_test(t, test_layout);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run(ring_suite(), false);
}
