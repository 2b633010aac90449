/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_md2.c: MD2 as RFC 1319 describes it, and HMAC over it.
 *
 * One deviation from the RFC's text, per its published erratum: the
 * checksum step is C[j] ^= S[c ^ L], not C[j] = S[c ^ L]; the RFC's own
 * test vectors need the XOR.
 */
#include <string.h>

#include "xgpulib_md2.h"

/* RFC 1319's permutation of 0..255, built from the digits of pi */
static const uint8_t md2_s[256] = {
	41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6,
	19, 98, 167, 5, 243, 192, 199, 115, 140, 152, 147, 43, 217, 188,
	76, 130, 202, 30, 155, 87, 60, 253, 212, 224, 22, 103, 66, 111, 24,
	138, 23, 229, 18, 190, 78, 196, 214, 218, 158, 222, 73, 160, 251,
	245, 142, 187, 47, 238, 122, 169, 104, 121, 145, 21, 178, 7, 63,
	148, 194, 16, 137, 11, 34, 95, 33, 128, 127, 93, 154, 90, 144, 50,
	39, 53, 62, 204, 231, 191, 247, 151, 3, 255, 25, 48, 179, 72, 165,
	181, 209, 215, 94, 146, 42, 172, 86, 170, 198, 79, 184, 56, 210,
	150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4, 241, 69, 157,
	112, 89, 100, 113, 135, 32, 134, 91, 207, 101, 230, 45, 168, 2, 27,
	96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52, 64, 126, 15,
	85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197,
	234, 38, 44, 83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65,
	129, 77, 82, 106, 220, 55, 200, 108, 193, 171, 250, 36, 225, 123,
	8, 12, 189, 177, 74, 120, 136, 149, 139, 227, 99, 232, 109, 233,
	203, 213, 254, 59, 0, 29, 57, 242, 239, 183, 14, 102, 88, 208, 228,
	166, 119, 114, 248, 235, 117, 75, 10, 49, 68, 80, 180, 143, 237,
	31, 26, 219, 153, 141, 51, 159, 17, 131, 20,
};

#define MD2_ROUNDS 18

/* Mix one block into the state (RFC 1319 3.4) */
static void md2_mix(uint8_t x[48], const uint8_t m[16])
{
	unsigned int t = 0;
	int j, k;

	for (j = 0; j < 16; j++) {
		x[16 + j] = m[j];
		x[32 + j] = m[j] ^ x[j];
	}
	for (j = 0; j < MD2_ROUNDS; j++) {
		for (k = 0; k < 48; k++)
			t = x[k] ^= md2_s[t];
		t = (t + j) & 0xff;
	}
}

/*
 * Process one block: fold it into the running checksum (RFC 1319 3.2) and
 * the state.  L of the RFC carries over between blocks and always equals
 * the checksum's last byte (0 before the first block).
 */
static void md2_block(struct xgpulib_md2 *md, const uint8_t m[16])
{
	uint8_t l = md->cksum[15];
	int j;

	for (j = 0; j < 16; j++)
		l = md->cksum[j] ^= md2_s[m[j] ^ l];
	md2_mix(md->state, m);
}

void xgpulib_md2_init(struct xgpulib_md2 *md)
{
	memset(md, 0, sizeof(*md));
}

void xgpulib_md2_update(struct xgpulib_md2 *md, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (md->nbuf) {
		size_t n = XGPULIB_MD2_BLOCK_BYTES - md->nbuf;

		if (n > len)
			n = len;
		memcpy(md->buf + md->nbuf, p, n);
		md->nbuf += n;
		p += n;
		len -= n;
		if (md->nbuf < XGPULIB_MD2_BLOCK_BYTES)
			return;
		md2_block(md, md->buf);
		md->nbuf = 0;
	}
	for (; len >= XGPULIB_MD2_BLOCK_BYTES; len -= XGPULIB_MD2_BLOCK_BYTES) {
		md2_block(md, p);
		p += XGPULIB_MD2_BLOCK_BYTES;
	}
	memcpy(md->buf, p, len);
	md->nbuf = len;
}

void xgpulib_md2_final(struct xgpulib_md2 *md,
		       uint8_t out[XGPULIB_MD2_DIGEST_BYTES])
{
	/* 1 to 16 bytes, each holding the pad length (RFC 1319 3.1) */
	uint8_t pad = (uint8_t)(XGPULIB_MD2_BLOCK_BYTES - md->nbuf);
	uint8_t cksum[16];

	memset(md->buf + md->nbuf, pad, pad);
	md2_block(md, md->buf);
	/* the checksum goes through the state only (RFC 1319 3.3) */
	memcpy(cksum, md->cksum, sizeof(cksum));
	md2_mix(md->state, cksum);
	memcpy(out, md->state, XGPULIB_MD2_DIGEST_BYTES);
	memset(md, 0, sizeof(*md));
}

void xgpulib_md2(const void *data, size_t len,
		 uint8_t out[XGPULIB_MD2_DIGEST_BYTES])
{
	struct xgpulib_md2 md;

	xgpulib_md2_init(&md);
	xgpulib_md2_update(&md, data, len);
	xgpulib_md2_final(&md, out);
}

#define HMAC_IPAD 0x36
#define HMAC_OPAD 0x5c

void xgpulib_hmac_md2_init(struct xgpulib_hmac_md2 *h, const void *key,
			   size_t keylen)
{
	uint8_t k[XGPULIB_MD2_BLOCK_BYTES] = { 0 };
	uint8_t ikey[XGPULIB_MD2_BLOCK_BYTES];
	int i;

	if (keylen > XGPULIB_MD2_BLOCK_BYTES)
		xgpulib_md2(key, keylen, k);
	else if (keylen)
		memcpy(k, key, keylen);
	for (i = 0; i < XGPULIB_MD2_BLOCK_BYTES; i++) {
		ikey[i] = k[i] ^ HMAC_IPAD;
		h->okey[i] = k[i] ^ HMAC_OPAD;
	}
	xgpulib_md2_init(&h->inner);
	xgpulib_md2_update(&h->inner, ikey, sizeof(ikey));
}

void xgpulib_hmac_md2_update(struct xgpulib_hmac_md2 *h, const void *data,
			     size_t len)
{
	xgpulib_md2_update(&h->inner, data, len);
}

void xgpulib_hmac_md2_final(struct xgpulib_hmac_md2 *h,
			    uint8_t out[XGPULIB_MD2_DIGEST_BYTES])
{
	uint8_t ihash[XGPULIB_MD2_DIGEST_BYTES];
	struct xgpulib_md2 outer;

	xgpulib_md2_final(&h->inner, ihash);
	xgpulib_md2_init(&outer);
	xgpulib_md2_update(&outer, h->okey, sizeof(h->okey));
	xgpulib_md2_update(&outer, ihash, sizeof(ihash));
	xgpulib_md2_final(&outer, out);
	memset(h, 0, sizeof(*h));
}

void xgpulib_hmac_md2(const void *key, size_t keylen, const void *data,
		      size_t len, uint8_t out[XGPULIB_MD2_DIGEST_BYTES])
{
	struct xgpulib_hmac_md2 h;

	xgpulib_hmac_md2_init(&h, key, keylen);
	xgpulib_hmac_md2_update(&h, data, len);
	xgpulib_hmac_md2_final(&h, out);
}
