/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_output.c */
/*
 * The worker's device output (a kernel's printf): the bounded buffer keeps
 * bytes in order, never more than its size, and counts what it dropped;
 * the worker's stdout is a stream into it (what the driver writes through
 * stdio is there when the write returns) and fd 1 a pipe into it (through
 * a drain thread), and DEVICE_OUTPUT hands it out oldest first with what
 * still waits and what was lost.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "check_run.h"

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

START_TEST(test_order_and_wrap)
{
	struct xgpub_outbuf b;
	uint8_t src[64], got[64];
	size_t in = 0, out = 0;

	xgpub_outbuf_init(&b, 10);
	ck_assert_ptr_null(b.p);	/* no memory before the first byte */
	/* chunks of 1..7 in, 1..6 out: the FIFO wraps many times */
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)round % 7, k;

		for (size_t i = 0; i < n; i++)
			src[i] = pat(in + i);
		k = xgpub_outbuf_put(&b, src, n);
		ck_assert_uint_le(b.len, 10);
		in += k;
		/* full: the newest bytes are refused, and counted */
		ck_assert_uint_eq(b.dropped, n - k);
		if (k < n)
			ck_assert_uint_eq(b.len, 10);
		b.dropped = 0;
		k = xgpub_outbuf_take(&b, got, 1 + (size_t)round % 6);
		for (size_t i = 0; i < k; i++)
			ck_assert_uint_eq(got[i], pat(out + i));
		out += k;
	}
	out += xgpub_outbuf_take(&b, got, sizeof(got));
	ck_assert_uint_eq(out, in);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(xgpub_outbuf_take(&b, got, sizeof(got)), 0);
	xgpub_outbuf_free(&b);
}
END_TEST

START_TEST(test_bounded_drop_count)
{
	struct xgpub_outbuf b;
	uint8_t src[40], got[40];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = pat(i);
	xgpub_outbuf_init(&b, 16);
	ck_assert_uint_eq(xgpub_outbuf_put(&b, src, 10), 10);
	/* 6 of these fit, 24 are dropped: the buffer never grows */
	ck_assert_uint_eq(xgpub_outbuf_put(&b, src + 10, 30), 6);
	ck_assert_uint_eq(b.len, 16);
	ck_assert_uint_eq(b.dropped, 24);
	ck_assert_uint_eq(xgpub_outbuf_put(&b, src, 5), 0);
	ck_assert_uint_eq(b.dropped, 29);
	/* the oldest bytes are the ones kept */
	ck_assert_uint_eq(xgpub_outbuf_take(&b, got, sizeof(got)), 16);
	ck_assert_mem_eq(got, src, 16);
	/* room again once taken */
	ck_assert_uint_eq(xgpub_outbuf_put(&b, src + 20, 16), 16);
	ck_assert_uint_eq(xgpub_outbuf_take(&b, got, 3), 3);
	ck_assert_mem_eq(got, src + 20, 3);
	ck_assert_uint_eq(xgpub_outbuf_put(&b, src, 3), 3);
	ck_assert_uint_eq(xgpub_outbuf_take(&b, got, sizeof(got)), 16);
	ck_assert_mem_eq(got, src + 23, 13);
	ck_assert_mem_eq(got + 13, src, 3);
	xgpub_outbuf_free(&b);
}
END_TEST

START_TEST(test_zero_cap)
{
	struct xgpub_outbuf b;
	uint8_t c = 1;

	xgpub_outbuf_init(&b, 0);
	ck_assert_uint_eq(xgpub_outbuf_put(&b, &c, 1), 0);
	ck_assert_uint_eq(b.dropped, 1);
	ck_assert_uint_eq(xgpub_outbuf_take(&b, &c, 1), 0);
	xgpub_outbuf_free(&b);
}
END_TEST

/* DEVICE_OUTPUT's handler with room for cap bytes */
static uint32_t device_output(uint8_t *buf, uint32_t cap,
			      struct xgpuif_output_reply *r)
{
	struct xgpub_rtail rt = { buf, cap, 0 };

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(xgpub_h_DEVICE_OUTPUT(NULL, r, &rt), 0);
	ck_assert_uint_eq(r->bytes, rt.len);
	return rt.len;
}

static void write_1(const char *s)
{
	size_t n = strlen(s);

	ck_assert_int_eq(write(STDOUT_FILENO, s, n), (ssize_t)n);
}

/*
 * What the driver writes through stdio is in the buffer when the write
 * returns: no poll, no thread.  (A child of its own, CK_FORK: it takes
 * over stdout and fd 1.)
 */
START_TEST(test_stdio_at_once)
{
	struct xgpuif_output_reply r;
	uint8_t buf[128];
	char big[100];

	ck_assert_int_eq(xgpub_output_start(64), 0);
	ck_assert(!xgpub_output_waiting());
	printf("one\n");
	ck_assert(xgpub_output_waiting());
	fwrite("two\n", 1, 4, stdout);
	fputs("three\n", stdout);
	ck_assert_uint_eq(device_output(buf, 5, &r), 5);
	ck_assert_mem_eq(buf, "one\nt", 5);
	ck_assert_uint_eq(r.waiting, 9);
	ck_assert_uint_eq(r.dropped, 0);
	ck_assert_uint_eq(device_output(buf, sizeof(buf), &r), 9);
	ck_assert_mem_eq(buf, "wo\nthree\n", 9);
	ck_assert_uint_eq(r.waiting, 0);
	ck_assert(!xgpub_output_waiting());

	/* more than the buffer holds: the first 64 bytes, 36 lost */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	ck_assert_uint_eq(fwrite(big, 1, sizeof(big), stdout), sizeof(big));
	ck_assert(xgpub_output_waiting());
	ck_assert_uint_eq(device_output(buf, sizeof(buf), &r), 64);
	ck_assert_mem_eq(buf, big, 64);
	ck_assert_uint_eq(r.dropped, 36);
	ck_assert_uint_eq(r.waiting, 0);
	/* a loss is reported once */
	ck_assert_uint_eq(device_output(buf, sizeof(buf), &r), 0);
	ck_assert_uint_eq(r.dropped, 0);
	ck_assert(!xgpub_output_waiting());
}
END_TEST

/*
 * What reaches fd 1 without stdio still reaches the guest: through the
 * drain thread, or at the latest when the guest fetches.  (A child of its
 * own: it takes over fd 1.)
 */
START_TEST(test_fd1_drained)
{
	struct xgpuif_output_reply r;
	uint8_t buf[64];
	int i;

	ck_assert_int_eq(xgpub_output_start(64), 0);
	write_1("driver\n");
	for (i = 0; i < 2000 && !xgpub_output_waiting(); i++)
		usleep(1000);
	ck_assert(xgpub_output_waiting());
	ck_assert_uint_eq(device_output(buf, sizeof(buf), &r), 7);
	ck_assert_mem_eq(buf, "driver\n", 7);
	/* a fetch reads the pipe itself */
	write_1("late\n");
	ck_assert_uint_eq(device_output(buf, sizeof(buf), &r), 5);
	ck_assert_mem_eq(buf, "late\n", 5);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");

	tcase_add_test(tc, test_order_and_wrap);
	tcase_add_test(tc, test_bounded_drop_count);
	tcase_add_test(tc, test_zero_cap);
	tcase_add_test(tc, test_stdio_at_once);
	tcase_add_test(tc, test_fd1_drained);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(output_suite(), true);
}
