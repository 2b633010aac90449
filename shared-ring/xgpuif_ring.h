/* SPDX-License-Identifier: MIT */
/*
 * xgpuif_ring.h: multi-slot messages on the xgpuif shared ring, for both
 * ends (user space).  The guest produces requests and consumes responses;
 * the backend does the opposite.  Neither trusts the other: every index
 * and count read from shared memory is copied once, then checked.
 * Barriers: see xgpuif.h.
 */
#ifndef XGPUIF_RING_H
#define XGPUIF_RING_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "xgpuif.h"

/* a piece of a message payload, for gathering */
struct xgpuif_iov {
	const void *base;
	uint32_t len;
};

static inline uint8_t *xgpuif_slot_bytes(union xgpuif_sring_entry *ring,
					 uint32_t size, RING_IDX idx)
{
	return (uint8_t *)&ring[idx & (size - 1)];
}

/*
 * Where payload byte `pos` of a message lies: slot 0 carries
 * XGPUIF_SLOT0_PAYLOAD bytes after the header, later slots XGPUIF_SLOT_SIZE
 * each; slots wrap with the ring.  Returns the slot's bytes at that place
 * and, in *room, how many payload bytes follow in the same slot.
 */
static inline uint8_t *xgpuif_msg_at(union xgpuif_sring_entry *ring,
				     uint32_t size, RING_IDX idx, uint32_t pos,
				     uint32_t *room)
{
	uint32_t slot, off;

	if (pos < XGPUIF_SLOT0_PAYLOAD) {
		slot = 0;
		off = XGPUIF_HDR_SIZE + pos;
	} else {
		slot = 1 + (pos - XGPUIF_SLOT0_PAYLOAD) / XGPUIF_SLOT_SIZE;
		off = (pos - XGPUIF_SLOT0_PAYLOAD) % XGPUIF_SLOT_SIZE;
	}
	*room = XGPUIF_SLOT_SIZE - off;
	return xgpuif_slot_bytes(ring, size, idx + slot) + off;
}

/*
 * Copy `len` bytes between buf and the message whose header slot is `idx`,
 * from payload byte `pos` on: into the message when to_ring, out of it
 * otherwise.  Reading from memory the peer may change is a plain memcpy:
 * the copy is taken once and only the copy is used afterwards.
 */
static inline void xgpuif_msg_copy(union xgpuif_sring_entry *ring,
				   uint32_t size, RING_IDX idx, uint32_t pos,
				   void *buf, uint32_t len, int to_ring)
{
	uint8_t *b = buf;

	while (len) {
		uint32_t n;
		uint8_t *p = xgpuif_msg_at(ring, size, idx, pos, &n);

		if (n > len)
			n = len;
		if (to_ring)
			memcpy(p, b, n);
		else
			memcpy(b, p, n);
		b += n;
		pos += n;
		len -= n;
	}
}

static inline void xgpuif_msg_write(union xgpuif_sring_entry *ring,
				    uint32_t size, RING_IDX idx, uint32_t pos,
				    const void *src, uint32_t len)
{
	xgpuif_msg_copy(ring, size, idx, pos, (void *)src, len, 1);
}

static inline void xgpuif_msg_read(const union xgpuif_sring_entry *ring,
				   uint32_t size, RING_IDX idx, uint32_t pos,
				   void *dst, uint32_t len)
{
	xgpuif_msg_copy((union xgpuif_sring_entry *)ring, size, idx, pos, dst,
			len, 0);
}

static inline uint32_t xgpuif_iov_len(const struct xgpuif_iov *iov, int n)
{
	uint32_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].len;
	return len;
}

/* ---- guest (front) side ----------------------------------------------- */

static inline uint32_t xgpuif_front_free(const struct xgpuif_front_ring *r)
{
	return RING_SIZE(r) - (r->req_prod_pvt - r->rsp_cons);
}

/*
 * Write one request of `nslots` slots at req_prod_pvt; the caller checked
 * there is room.  The header's id, op, ctx and flags come from `hdr`.
 */
static inline void xgpuif_front_put(struct xgpuif_front_ring *r,
				    const struct xgpuif_request *hdr,
				    const struct xgpuif_iov *iov, int niov,
				    uint32_t nslots)
{
	struct xgpuif_request *slot = RING_GET_REQUEST(r, r->req_prod_pvt);
	uint32_t pos = 0;

	slot->id = hdr->id;
	slot->op = hdr->op;
	slot->nslots = (uint16_t)nslots;
	slot->len = xgpuif_iov_len(iov, niov);
	slot->ctx = hdr->ctx;
	slot->flags = hdr->flags;
	memset(slot->_pad, 0, sizeof(slot->_pad));
	for (int i = 0; i < niov; i++) {
		xgpuif_msg_write(r->sring->ring, RING_SIZE(r), r->req_prod_pvt,
				 pos, iov[i].base, iov[i].len);
		pos += iov[i].len;
	}
	r->req_prod_pvt += nslots;
}

/* ---- backend side -------------------------------------------------------- */

/*
 * Copy the request at req_cons out of the ring into `hdr` and `payload`
 * (XGPUIF_MAX_PAYLOAD bytes) and consume its slots.  `prod` is the
 * producer index the caller read (followed by xen_rmb).  Returns 0, or
 * -EPROTO for a request no well-behaved guest writes.
 */
static inline int xgpuif_back_get(struct xgpuif_back_ring *r, RING_IDX prod,
				  struct xgpuif_request *hdr, void *payload)
{
	uint32_t avail = prod - r->req_cons;

	RING_COPY_REQUEST(r, r->req_cons, hdr);
	if (hdr->nslots < 1 || hdr->nslots > XGPUIF_MAX_SLOTS ||
	    hdr->nslots > avail || hdr->nslots > RING_SIZE(r) ||
	    hdr->len > xgpuif_capacity(hdr->nslots))
		return -EPROTO;
	xgpuif_msg_read(r->sring->ring, RING_SIZE(r), r->req_cons, 0, payload,
			hdr->len);
	r->req_cons += hdr->nslots;
	return 0;
}

/*
 * Write the reply to `req` at rsp_prod_pvt, in the slots the request
 * occupied; `len` must fit xgpuif_capacity(req->nslots).
 */
static inline void xgpuif_back_put(struct xgpuif_back_ring *r,
				   const struct xgpuif_request *req,
				   int32_t status, uint32_t flags,
				   const void *payload, uint32_t len)
{
	struct xgpuif_response *slot = RING_GET_RESPONSE(r, r->rsp_prod_pvt);

	slot->id = req->id;
	slot->op = req->op;
	slot->nslots = req->nslots;
	slot->len = len;
	slot->status = status;
	slot->flags = flags;
	memset(slot->_pad, 0, sizeof(slot->_pad));
	if (len)
		xgpuif_msg_write(r->sring->ring, RING_SIZE(r), r->rsp_prod_pvt,
				 0, payload, len);
	r->rsp_prod_pvt += req->nslots;
}

#endif /* XGPUIF_RING_H */
