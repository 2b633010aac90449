/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_md2.h: MD2 (RFC 1319) and HMAC-MD2 (RFC 2104 with MD2's 16-byte
 * block).  Only the driver's integrity check needs them: cudart checks an
 * HMAC-MD2 of the driver's state.  MD2 is long broken as a hash; nothing
 * here relies on it for security.
 */
#ifndef XGPULIB_MD2_H
#define XGPULIB_MD2_H

#include <stddef.h>
#include <stdint.h>

#define XGPULIB_MD2_BLOCK_BYTES 16
#define XGPULIB_MD2_DIGEST_BYTES 16

struct xgpulib_md2 {
	uint8_t state[48];	/* X of RFC 1319 3.4; digest in [0, 16) */
	uint8_t cksum[16];	/* C of RFC 1319 3.2 */
	uint8_t buf[XGPULIB_MD2_BLOCK_BYTES];
	size_t nbuf;		/* bytes waiting in buf */
};

void xgpulib_md2_init(struct xgpulib_md2 *md);
void xgpulib_md2_update(struct xgpulib_md2 *md, const void *data, size_t len);
/* pads, mixes in the checksum and writes the digest; md is spent */
void xgpulib_md2_final(struct xgpulib_md2 *md,
		       uint8_t out[XGPULIB_MD2_DIGEST_BYTES]);
void xgpulib_md2(const void *data, size_t len,
		 uint8_t out[XGPULIB_MD2_DIGEST_BYTES]);

struct xgpulib_hmac_md2 {
	struct xgpulib_md2 inner;
	uint8_t okey[XGPULIB_MD2_BLOCK_BYTES];	/* key ^ opad */
};

/* a key longer than a block is replaced by its MD2, as RFC 2104 says */
void xgpulib_hmac_md2_init(struct xgpulib_hmac_md2 *h, const void *key,
			   size_t keylen);
void xgpulib_hmac_md2_update(struct xgpulib_hmac_md2 *h, const void *data,
			     size_t len);
void xgpulib_hmac_md2_final(struct xgpulib_hmac_md2 *h,
			    uint8_t out[XGPULIB_MD2_DIGEST_BYTES]);
void xgpulib_hmac_md2(const void *key, size_t keylen, const void *data,
		      size_t len, uint8_t out[XGPULIB_MD2_DIGEST_BYTES]);

#endif /* XGPULIB_MD2_H */
