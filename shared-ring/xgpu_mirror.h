/* SPDX-License-Identifier: MIT */
/*
 * xgpu_mirror.h: a channel over a byte stream (the network transport).
 *
 * There is no shared memory between the guest and the worker on the
 * network: each end keeps its own copy of the ring and of the data area,
 * and a mirror at each end keeps the two in step over one authenticated
 * connection (xgpu_tls.h).  The guest's mirror ships the request slots
 * its side produced and receives the reply slots; the backend's mirror
 * does the reverse.  Neither looks into a message: the ring's indices say
 * which slots are new, so the mirror serves every op the same way.
 *
 * The data area is not copied whole: the guest says which bytes move.
 * put: bytes the worker is to read at off (sent before the request that
 * names them, on the same stream, so they are there first); expect: bytes
 * the worker writes at off, to come back once every request the guest
 * sent before the expect has its reply (replies come in ring order, so
 * the backend's mirror knows when that is without knowing the op).
 *
 * Frames (struct xgpuif_net_frame, then `len` bytes):
 *   SLOTS   arg = ring index of the first slot; len = n * XGPUIF_SLOT_SIZE,
 *           the slots, in ring order (wrapping where the range does).
 *           The receiver writes them, then moves the peer's producer
 *           index to arg + n: a message is never seen in part.  Guest
 *           to backend: requests; backend to guest: replies.
 *   DATA    arg = offset in the data area; the bytes.  Guest to backend:
 *           a put; backend to guest: the bytes of the oldest expect not
 *           yet answered, which must name the same range.
 *   EXPECT  guest to backend, arg = offset, len = length, no bytes.
 *   HOSTFN  arg = the index of a host-function slot (struct
 *           xgpuif_hostfn_slot, xgpuif-ops.h), len = its size, the slot
 *           as its sender has it.  Each end keeps a copy of the slots
 *           (xgpu_mirror_hostfn_area) and ships a slot when it moves it
 *           to a state the other end acts on: backend to guest DUE (the
 *           function to run, with its fields) or FREE (the guest may
 *           take it again); guest to backend DONE, which the backend
 *           takes only for a slot that is DUE.  The receiver writes the
 *           state last.  A host function that touches coherent managed
 *           memory (xgpulib_mco.h) moves its DUE slot to FETCH or FLUSH
 *           (guest to backend, with the block's mc_* fields; a FLUSH
 *           after the DATA frame of the block's bytes, on the same
 *           connection), and the backend answers DUE with mc_status
 *           (after the FILL frame of a fetched block's bytes).
 *   FILL    backend to guest, arg = offset in the data area; the bytes,
 *           which land there (a host function's fetched block; the
 *           HOSTFN frame that names them follows).
 * A frame that breaks these rules (an index out of turn, more slots than
 * the ring has room for, a range outside the data area, an unknown type,
 * more than XGPUIF_NET_MAX_EXPECT expects outstanding) ends the
 * connection; the other end's channels are untouched.
 */
#ifndef XGPU_MIRROR_H
#define XGPU_MIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpuif_ring.h"

enum {
	XGPUIF_NET_SLOTS = 1,
	XGPUIF_NET_DATA = 2,
	XGPUIF_NET_EXPECT = 3,
	XGPUIF_NET_BARRIER = 4,
	XGPUIF_NET_HOSTFN = 5,
	XGPUIF_NET_FILL = 6,
};

struct xgpuif_net_frame {
	uint32_t type;
	uint32_t len;
	uint64_t arg;
};

#define XGPUIF_NET_MAX_EXPECT	256u

/*
 * Lanes.  One TLS stream is one CPU's worth of encryption (about 1.4 GB/s
 * on the GPU machine), so a channel may have up to XGPUIF_NET_MAX_LANES
 * more connections that carry DATA frames only: a put or an expect of at
 * least XGPUIF_NET_LANE_MIN bytes is cut in shares, one per lane, sent
 * in parallel.  A share lands where its offset says (guest: inside the
 * expect whose range holds it).  Puts through lanes are counted per lane
 * (a lane is in order, so its count is a prefix): before slots that may
 * name them the guest sends BARRIER, whose bytes are each lane's count so
 * far (uint64_t, by the guest's lane number), on the channel's own
 * connection, and the backend publishes nothing after it until each lane
 * has brought that many.
 *
 * After the channel's handshake (struct xgpuif_local_status) the backend
 * sends struct xgpuif_net_lanes: how many lanes it takes and their token.
 * A lane is a new TCP connection to the same address that sends struct
 * xgpuif_net_lane_hello in the clear, then does its TLS handshake, which
 * must authenticate the same peer as the channel's; the token only says
 * which channel it joins.
 */
#define XGPUIF_NET_MAX_LANES	16u
#define XGPUIF_NET_LANE_MIN	(256u << 10)
#define XGPUIF_NET_LANE_MAGIC	"XGPULANE"

struct xgpuif_net_lanes {
	uint32_t magic;		/* XGPUIF_MAGIC */
	uint32_t nlanes;	/* 0: none */
	uint8_t token[32];
};

struct xgpuif_net_lane_hello {
	char magic[8];		/* XGPUIF_NET_LANE_MAGIC, no NUL */
	uint8_t token[32];
};

struct xgpu_conn;
struct xgpu_mirror;
struct xgpuif_hostfn_slot;

struct xgpu_mirror_cfg {
	bool guest;			/* the guest's end, else the backend's */
	struct xgpu_conn *conn;		/* the mirror owns it from now on */
	struct xgpuif_sring *sring;	/* this end's copy, initialised */
	unsigned int ring_order;
	uint8_t *data;			/* this end's data area */
	size_t data_bytes;
	/* how long the receiving thread polls for the next frame before
	 * it sleeps in a read (us; 0: never) */
	unsigned int spin_us;
	/* backend: the longest a barrier may wait for its lanes' bytes
	 * before it counts as the guest's protocol error (ms; 0: 30 s) */
	unsigned int barrier_ms;
	/* host-function slots known from the start (nhostfn of them), as
	 * xgpu_mirror_hostfn_area would set them; NULL: none yet */
	struct xgpuif_hostfn_slot *hostfn;
	unsigned int nhostfn;
};

/* start the receiving thread: the mirror, or NULL (errno; err says why) */
struct xgpu_mirror *xgpu_mirror_start(const struct xgpu_mirror_cfg *cfg,
				      char *err, size_t errlen);
/* ship what this end produced on the ring (its notify): 0 or -EPIPE */
int xgpu_mirror_flush(struct xgpu_mirror *m);
/*
 * Sleep until the peer's slots arrive, timeout_ms passes (-1: forever)
 * or the connection is gone: 0, or -EPIPE when gone.
 */
int xgpu_mirror_wait(struct xgpu_mirror *m, int timeout_ms);
/* block until the connection is gone */
void xgpu_mirror_wait_gone(struct xgpu_mirror *m);
/* why it went (a protocol error of the peer's, or the connection's end) */
const char *xgpu_mirror_why(struct xgpu_mirror *m);

/*
 * This end's copy of the channel's n host-function slots (set once,
 * before the first is shipped; it must outlive the mirror); a HOSTFN
 * frame before it, or for a slot past n, is the peer's protocol error.
 */
void xgpu_mirror_hostfn_area(struct xgpu_mirror *m,
			     struct xgpuif_hostfn_slot *slots, unsigned int n);
/* ship slot i of that area as it is now: 0, -EINVAL or -EPIPE */
int xgpu_mirror_hostfn_ship(struct xgpu_mirror *m, unsigned int i);
/*
 * The same, after the bytes [off, off + len) of this end's data area in
 * the same write (len 0: none): the guest's as DATA (a host function's
 * block written back), the backend's as FILL (a block it fetched).
 */
int xgpu_mirror_hostfn_ship_data(struct xgpu_mirror *m, unsigned int i,
				 size_t off, size_t len);

/* guest: the worker will read [off, off + len) of the data area: src */
int xgpu_mirror_put(struct xgpu_mirror *m, size_t off, const void *src,
		    size_t len);
/*
 * The same without waiting for the lanes: src must stay as it is until
 * xgpu_mirror_put_wait says *sent reached the bytes of every put started
 * with it (*sent counts them as they go; its owner zeroes it first), so
 * that a copy's chunks follow each other on the lanes without a pause at
 * each.  put_wait: 0, or -EPIPE when the connection went first (no lane
 * reads a source any more then).
 */
int xgpu_mirror_put_start(struct xgpu_mirror *m, size_t off, const void *src,
			  size_t len, uint64_t *sent);
int xgpu_mirror_put_wait(struct xgpu_mirror *m, const uint64_t *sent,
			 uint64_t total);
/*
 * guest: the worker writes [off, off + len) for a request already
 * submitted; its bytes are to land at dst (NULL: the data area at off).
 * *ticket is for xgpu_mirror_expect_wait.  0 or -errno.
 */
int xgpu_mirror_expect(struct xgpu_mirror *m, size_t off, size_t len,
		       void *dst, uint64_t *ticket);
/* guest: wait until the bytes of the expect `ticket` have landed:
 * 0, or -EPIPE when the connection went first (they never will) */
int xgpu_mirror_expect_wait(struct xgpu_mirror *m, uint64_t ticket);

/*
 * a lane (its TLS handshake done) as the guest numbers it (0 ..
 * XGPUIF_NET_MAX_LANES - 1; the guest sends the number, a uint32_t, as
 * the lane's first bytes inside TLS): its threads start; 0 or -errno
 */
int xgpu_mirror_add_lane(struct xgpu_mirror *m, struct xgpu_conn *c,
			 unsigned int index);
/* lanes so far */
unsigned int xgpu_mirror_lanes(struct xgpu_mirror *m);

/* end the connection, join the thread, free (the connection too) */
void xgpu_mirror_stop(struct xgpu_mirror *m);

#endif /* XGPU_MIRROR_H */
