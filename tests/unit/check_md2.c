/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_md2.c */
/*
 * MD2 against RFC 1319's test suite; HMAC-MD2 against known answers
 * computed by an independent Python MD2 driven through Python's standard
 * hmac module, and against the RFC 2104 construction spelled out by hand.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib_md2.h"
#include "check_run.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void check_md2_hex(const char *msg, const char *want)
{
	uint8_t d[XGPULIB_MD2_DIGEST_BYTES];
	char got[2 * XGPULIB_MD2_DIGEST_BYTES + 1];

	xgpulib_md2(msg, strlen(msg), d);
	hex(d, sizeof(d), got);
	ck_assert_msg(!strcmp(got, want), "MD2(\"%s\") = %s, want %s", msg,
		      got, want);
}

/* ---- MD2 ---------------------------------------------------------------- */

static const struct {
	const char *msg;
	const char *digest;
} rfc1319[] = {
	{ "", "8350e5a3e24c153df2275c9f80692773" },
	{ "a", "32ec01ec4a6dac72c0ab96fb34c0b5d1" },
	{ "abc", "da853b0d3f88d99b30283a69e6ded6bb" },
	{ "message digest", "ab4f496bfb2a530b219ff33031fe06b0" },
	{ "abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b" },
	{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	  "da33def2a42df13975352846c30338cd" },
	{ "1234567890123456789012345678901234567890"
	  "1234567890123456789012345678901234567890",
	  "d5976f79d83d3a0dc9806c3c66f3efd8" },
};

START_TEST(test_md2_rfc1319)
{
	check_md2_hex(rfc1319[_i].msg, rfc1319[_i].digest);
}
END_TEST

/* Feeding the input in any pieces must not change the digest. */
START_TEST(test_md2_split)
{
	const char *msg = rfc1319[6].msg;	/* 80 bytes, 5 blocks */
	size_t len = strlen(msg), step = (size_t)_i + 1, off;
	uint8_t whole[16], parts[16];
	struct xgpulib_md2 md;

	xgpulib_md2(msg, len, whole);
	xgpulib_md2_init(&md);
	for (off = 0; off < len; off += step)
		xgpulib_md2_update(&md, msg + off,
				   len - off < step ? len - off : step);
	xgpulib_md2_final(&md, parts);
	ck_assert_mem_eq(whole, parts, 16);
}
END_TEST

/* Lengths around 16 and 32 straddle the always-present padding block. */
START_TEST(test_md2_block_edges)
{
	uint8_t a[16], b[16];
	char buf[48];
	size_t n;

	memset(buf, 'x', sizeof(buf));
	for (n = 14; n <= 33; n++) {
		struct xgpulib_md2 md;

		xgpulib_md2(buf, n, a);
		xgpulib_md2_init(&md);
		xgpulib_md2_update(&md, buf, 1);
		xgpulib_md2_update(&md, buf + 1, n - 1);
		xgpulib_md2_final(&md, b);
		ck_assert_mem_eq(a, b, 16);
		/* a different length must give a different digest */
		xgpulib_md2(buf, n + 1, b);
		ck_assert(memcmp(a, b, 16) != 0);
	}
}
END_TEST

/* ---- HMAC-MD2 ----------------------------------------------------------- */

static const struct {
	const uint8_t *key;
	size_t keylen;
	const char *msg;
	size_t msglen;
	const char *mac;
} hmac_kat[] = {
	{ (const uint8_t *)"key", 3,
	  "The quick brown fox jumps over the lazy dog", 43,
	  "13758b9534bfb38d850457814613b0c1" },
	{ (const uint8_t *)"\x00\x01\x02\x03\x04\x05\x06\x07"
	  "\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 16, "", 0,
	  "d39ad9dde006587a8be949b11b9288f8" },
	/* key longer than a block: hashed first */
	{ (const uint8_t *)"\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa"
	  "\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa"
	  "\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa",
	  40,
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 100,
	  "b9ae680647225403beaad055baf14ddd" },
	{ (const uint8_t *)"", 0, "abc", 3,
	  "17b0f48a8ee89e4c7748890ea9d31b90" },
};

START_TEST(test_hmac_md2_kat)
{
	uint8_t d[16];
	char got[33];

	xgpulib_hmac_md2(hmac_kat[_i].key, hmac_kat[_i].keylen,
			 hmac_kat[_i].msg, hmac_kat[_i].msglen, d);
	hex(d, sizeof(d), got);
	ck_assert_str_eq(got, hmac_kat[_i].mac);
}
END_TEST

/* H((K ^ opad) || H((K ^ ipad) || m)) built from plain MD2 calls */
START_TEST(test_hmac_md2_structure)
{
	static const uint8_t key[16] = {
		0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
		0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
	};
	uint8_t msg[200], inner_in[16 + sizeof(msg)], outer_in[32];
	uint8_t want[16], got[16];
	struct xgpulib_hmac_md2 h;
	size_t len, i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (len = 0; len <= sizeof(msg); len += 13) {
		for (i = 0; i < 16; i++) {
			inner_in[i] = key[i] ^ 0x36;
			outer_in[i] = key[i] ^ 0x5c;
		}
		memcpy(inner_in + 16, msg, len);
		xgpulib_md2(inner_in, 16 + len, outer_in + 16);
		xgpulib_md2(outer_in, sizeof(outer_in), want);

		xgpulib_hmac_md2(key, sizeof(key), msg, len, got);
		ck_assert_mem_eq(got, want, 16);

		/* and through the streaming interface, in two pieces */
		xgpulib_hmac_md2_init(&h, key, sizeof(key));
		xgpulib_hmac_md2_update(&h, msg, len / 2);
		xgpulib_hmac_md2_update(&h, msg + len / 2, len - len / 2);
		xgpulib_hmac_md2_final(&h, got);
		ck_assert_mem_eq(got, want, 16);
	}
}
END_TEST

/* A key shorter than the block is zero-padded: same MAC as padded by hand */
START_TEST(test_hmac_md2_short_key)
{
	static const uint8_t padded[16] = { 'k', 'e', 'y' };
	uint8_t a[16], b[16];

	xgpulib_hmac_md2("key", 3, "data", 4, a);
	xgpulib_hmac_md2(padded, sizeof(padded), "data", 4, b);
	ck_assert_mem_eq(a, b, 16);
}
END_TEST

static Suite *md2_suite(void)
{
	Suite *s = suite_create("md2");
	TCase *tc;

	tc = tcase_create("md2");
	tcase_add_loop_test(tc, test_md2_rfc1319, 0,
			    sizeof(rfc1319) / sizeof(rfc1319[0]));
	tcase_add_loop_test(tc, test_md2_split, 0, 20);
	tcase_add_test(tc, test_md2_block_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("hmac");
	tcase_add_loop_test(tc, test_hmac_md2_kat, 0,
			    sizeof(hmac_kat) / sizeof(hmac_kat[0]));
	tcase_add_test(tc, test_hmac_md2_structure);
	tcase_add_test(tc, test_hmac_md2_short_key);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(md2_suite(), true);
}
