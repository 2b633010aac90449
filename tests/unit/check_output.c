/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_output.c */
/*
 * The worker's device output (a kernel's printf): the bounded buffer keeps
 * bytes in order, never more than its size, and counts what it dropped;
 * fd 1 of the worker is a pipe into it, and DEVICE_OUTPUT hands it out
 * oldest first with what still waits and what was lost.  The dispatch
 * thread reads the pipe after a request only once an image that may print
 * is loaded: which images may (fatbins, cubins, PTX; compressed members
 * and unknown kinds may), and that output reaches the guest either way.
 */
#include <check.h>
#include <elf.h>
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

/* PTX whose kernel prints, and PTX whose kernel does not */
static const char ptx_quiet[] =
	".version 8.8\n.target sm_90\n.address_size 64\n"
	".visible .entry k() { ret; }\n";
static const char ptx_print[] =
	".version 8.8\n.target sm_90\n.address_size 64\n"
	".extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);\n"
	".visible .entry k() { ret; }\n";

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

/* runs in a child of its own (CK_FORK): it takes over fd 1 */
START_TEST(test_stdout_pipe)
{
	struct xgpuif_output_reply r;
	uint8_t buf[128];
	char big[100];

	ck_assert_int_eq(xgpub_output_start(64), 0);
	ck_assert(!xgpub_output_waiting());
	xgpub_output_note_image((const uint8_t *)ptx_print, sizeof(ptx_print));
	/* what the driver writes to fd 1, or to stdout's buffer (the poll
	 * flushes it) */
	write_1("one\n");
	write_1("two\n");
	printf("three\n");
	xgpub_output_poll();
	ck_assert(xgpub_output_waiting());
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
	ck_assert_int_eq(write(STDOUT_FILENO, big, sizeof(big)),
			 (ssize_t)sizeof(big));
	xgpub_output_poll();
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

/* ---- which images may print --------------------------------------------- */

/* a cubin of n bytes whose body holds word (or nothing) */
static size_t make_cubin(uint8_t *p, size_t n, uint16_t machine,
			 const char *word)
{
	Elf64_Ehdr eh;

	memset(p, 0, n);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_machine = machine;
	memcpy(p, &eh, sizeof(eh));
	memcpy(p + sizeof(eh), ".text._Z1kv\0.nv.info", 21);
	if (word)
		memcpy(p + 100, word, strlen(word));
	return n;
}

/* append a member (kind, 64-byte header, payload) to a fatbin at p */
static size_t add_member(uint8_t *p, size_t at, uint16_t kind,
			 const void *payload, uint64_t len)
{
	uint32_t mh = 64;

	memset(p + at, 0, 64);
	memcpy(p + at, &kind, sizeof(kind));
	memcpy(p + at + 4, &mh, sizeof(mh));
	memcpy(p + at + 8, &len, sizeof(len));
	memcpy(p + at + 64, payload, len);
	return at + 64 + len;
}

/* the fatbin header for members that end at end */
static void fatbin_header(uint8_t *p, size_t end)
{
	uint32_t magic = 0xba55ed50u;
	uint16_t version = 1, hsize = 16;
	uint64_t fsize = end - 16;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &hsize, 2);
	memcpy(p + 8, &fsize, 8);
}

START_TEST(test_may_print)
{
	static uint8_t fb[4096];
	uint8_t cubin[256], cubin_p[256], zstd[64] = { 0x28, 0xb5, 0x2f, 0xfd };
	size_t end;

	/* bare cubins and PTX: by the names their code calls */
	make_cubin(cubin, sizeof(cubin), EM_CUDA, NULL);
	ck_assert(!xgpub_image_may_print(cubin, sizeof(cubin)));
	make_cubin(cubin_p, sizeof(cubin_p), EM_CUDA, "vprintf");
	ck_assert(xgpub_image_may_print(cubin_p, sizeof(cubin_p)));
	make_cubin(cubin_p, sizeof(cubin_p), EM_CUDA, "__assertfail");
	ck_assert(xgpub_image_may_print(cubin_p, sizeof(cubin_p)));
	ck_assert(!xgpub_image_may_print((const uint8_t *)ptx_quiet,
					 sizeof(ptx_quiet)));
	ck_assert(xgpub_image_may_print((const uint8_t *)ptx_print,
					sizeof(ptx_print)));
	/* an ELF for another machine (a host object), or no known kind */
	make_cubin(cubin_p, sizeof(cubin_p), EM_X86_64, NULL);
	ck_assert(xgpub_image_may_print(cubin_p, sizeof(cubin_p)));
	ck_assert(xgpub_image_may_print(zstd, sizeof(zstd)));

	/* fatbins: every member read; PTX and cubin members that do not
	 * print make a fatbin that does not */
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	end = add_member(fb, end, 1, ptx_quiet, sizeof(ptx_quiet));
	fatbin_header(fb, end);
	ck_assert(!xgpub_image_may_print(fb, end));
	/* one member that prints, the last one */
	make_cubin(cubin_p, sizeof(cubin_p), EM_CUDA, "vprintf");
	end = add_member(fb, end, 2, cubin_p, sizeof(cubin_p));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	/* a compressed member cannot be read: it may */
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	end = add_member(fb, end, 2, zstd, sizeof(zstd));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	/* a member of a kind not known */
	end = add_member(fb, 16, 8, cubin, sizeof(cubin));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	/* sizes that do not add up: a member past the end, a fatbin
	 * larger than its image, a short member header */
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	fatbin_header(fb, end - 8);
	ck_assert(xgpub_image_may_print(fb, end));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end - 1));
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	fatbin_header(fb, end + 8);
	ck_assert(xgpub_image_may_print(fb, end + 8));
	/* a fatbin with no members prints nothing */
	fatbin_header(fb, 16);
	ck_assert(!xgpub_image_may_print(fb, 16));
}
END_TEST

/*
 * With no image that may print loaded, the dispatch thread does not read
 * the pipe; what lands there anyway still reaches the guest through the
 * drain thread.  (A child of its own: it takes over fd 1.)
 */
START_TEST(test_quiet_images_drained)
{
	struct xgpuif_output_reply r;
	uint8_t buf[64];
	int i;

	ck_assert_int_eq(xgpub_output_start(64), 0);
	xgpub_output_note_image((const uint8_t *)ptx_quiet, sizeof(ptx_quiet));
	write_1("driver\n");
	xgpub_output_poll();
	for (i = 0; i < 2000 && !xgpub_output_waiting(); i++)
		usleep(1000);
	ck_assert(xgpub_output_waiting());
	ck_assert_uint_eq(device_output(buf, sizeof(buf), &r), 7);
	ck_assert_mem_eq(buf, "driver\n", 7);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");

	tcase_add_test(tc, test_order_and_wrap);
	tcase_add_test(tc, test_bounded_drop_count);
	tcase_add_test(tc, test_zero_cap);
	tcase_add_test(tc, test_stdout_pipe);
	tcase_add_test(tc, test_may_print);
	tcase_add_test(tc, test_quiet_images_drained);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(output_suite(), true);
}
