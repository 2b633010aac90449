/* SPDX-License-Identifier: MIT */
/*
 * xgpub_record.h: the input format of the worker's fuzz target
 * (tests/fuzz/fuzz_worker.c), and the recorder that writes real requests
 * in it (off unless XGPU_FUZZ_RECORD names a folder).
 *
 * An input is a sequence of records, each a header, nsub substitutions
 * and len payload bytes (little endian, packed):
 *
 *   op       the request's op (XGPUB_FREC_DATA: the payload is a u32
 *            offset and bytes written there in the data area, as a
 *            guest fills it before a request that reads it)
 *   flags    XGPUB_FREC_POSTED: sent posted; XGPUB_FREC_RAW: the
 *            header's nslots is `slots` as given, not computed
 *   nsub     substitutions: payload[off, off + 8) becomes the handle
 *            number idx (modulo their count) of those the worker handed
 *            out so far in this input, in the order they appeared
 *   len      payload bytes
 *   slots    slots beyond those the payload and the op's reply struct
 *            need (RAW: the header's nslots)
 *   ctx      the request's context: 0 none, k the handle number k - 1
 *
 * Handles are numbered as the worker's table holds them after each
 * request (xgpub_record_pool_update): every live handle not seen before
 * gets the next number, up to XGPUB_FREC_POOL.
 */
#ifndef XGPUB_RECORD_H
#define XGPUB_RECORD_H

#include <stdint.h>

#include "xgpuif.h"

struct xgpub_frec {
	uint16_t op;
	uint8_t flags;
	uint8_t nsub;
	uint16_t len;
	uint8_t slots;
	uint8_t ctx;
} __attribute__((packed));

struct xgpub_fsub {
	uint16_t off;
	uint16_t idx;
} __attribute__((packed));

#define XGPUB_FREC_DATA		0xffffu
#define XGPUB_FREC_POSTED	0x01u
#define XGPUB_FREC_RAW		0x02u
#define XGPUB_FREC_POOL		256u

struct xgpub_worker;

/* the handles handed out so far, numbered in order of appearance */
struct xgpub_fpool {
	xgpuif_handle_t h[XGPUB_FREC_POOL];
	uint32_t n;
};

/* the slots a request of op with len payload bytes gets before `slots`
 * (enough for its payload and its reply struct) */
uint32_t xgpub_record_base_slots(uint32_t op, uint32_t len);

/* number the live handles of w's table not yet in p */
void xgpub_record_pool_update(struct xgpub_fpool *p,
			      const struct xgpub_worker *w);

/*
 * The recorder: XGPU_FUZZ_RECORD=DIR makes each worker write the
 * requests of its channel to DIR/<pid>-<k>.req, 256 requests or 56 KiB a
 * file, 16 files at most.  Each file is an input of its own: its handles
 * are numbered as a fresh worker would number them, and those it uses
 * that an earlier file made are left as they are (stale in the fuzz
 * target: the requests near them still count).
 */
void xgpub_record_start(const struct xgpub_worker *w);
void xgpub_record_request(struct xgpub_worker *w,
			  const struct xgpuif_request *req,
			  const uint8_t *payload);
void xgpub_record_done(const struct xgpub_worker *w);
void xgpub_record_stop(void);

#endif /* XGPUB_RECORD_H */
