/* SPDX-License-Identifier: MIT */
/*
 * xgpub.h: what every part of xen-gpubackd shares: the clock, logging,
 * the worker options the daemon hands down, and the status slot through
 * which a worker reports to the daemon.
 *
 * The backend is three folders over this one:
 *   daemon/     accepts guests (local socket, xenbus), forks one worker
 *               per channel, runs the GPU scheduler and the control socket
 *   worker/     serves one channel: dispatch, handle tables, the handlers,
 *               the gate that obeys the scheduler, the driver table
 *   transport/  the channel's pages and notifications, worker side (local
 *               memfds and eventfds; Xen grants and event channels)
 * The daemon never touches CUDA; only workers load the driver.
 */
#ifndef XGPUB_H
#define XGPUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "xgpub_gcell.h"

/* CLOCK_MONOTONIC in ns: the one clock of the daemon, its workers and the
 * scheduler */
static inline uint64_t xgpub_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- logging (syslog when daemonized, stderr in the foreground) -------- */

/* verbose: 0 errors and news, 1 also debug lines, -1 nothing */
void xgpub_log_init(const char *ident, bool use_syslog, int verbose);
void xgpub_log_prefix(const char *prefix);
/* in a forked child, before it closes the descriptors it inherited: let
 * go of the parent's syslog connection */
void xgpub_log_forked(void);
void xgpub_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xgpub_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xgpub_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* are debug lines logged (-v)? */
bool xgpub_debugging(void);

/* ---- what the daemon tells every worker ---------------------------------- */

struct xgpub_options {
	const char *driver_path;	/* the CUDA driver, absolute path */
	int gpu;			/* host device ordinal to expose */
	uint64_t quota;			/* device memory bytes, 0: none */
	/* host memory bytes a guest may pin (cuMemHostAlloc, managed
	 * memory, cuMemHostRegister), 0: none */
	uint64_t pin_quota;
	/* device memory a context is charged, besides the limits the guest
	 * sets (CU_LIMIT_STACK_SIZE, PRINTF_FIFO_SIZE, MALLOC_HEAP_SIZE) */
	uint64_t ctx_charge;
	/* module image bytes all the guest's workers may hold together
	 * (blobs, modules, libraries), 0: XGPUB_IMAGES_MAX */
	uint64_t images_max;
	uint32_t max_data_pages;
	unsigned int spin_us;
	/* the driver's JIT cache: a folder per guest under it ("none": off) */
	const char *jit_cache;
	/*
	 * The worker's sandbox (worker/xgpub_sandbox.c), entered once the
	 * channel is mapped and the driver's context made: become
	 * worker_uid/worker_gid with worker_groups (drop_user), and install
	 * the seccomp filter (seccomp).  All zero: the worker stays as it
	 * was forked (tests that run a worker inline).
	 */
	bool drop_user;
	uid_t worker_uid;
	gid_t worker_gid;
	int worker_ngroups;
	const gid_t *worker_groups;
	const char *worker_user;	/* its name, for log lines */
	bool seccomp;
	/* the driver is xgpu's own guest library, chained to a backend on
	 * the network: workers keep the daemon's network namespace */
	bool remote_driver;
	/* lanes a network client may open beside its channel */
	uint32_t net_lanes;
};

/*
 * What a worker tells the daemon, in memory shared between them (one
 * slot per worker, written by the worker only, with relaxed atomics; the
 * daemon reads it for `xgpu list` and the scheduler).
 */
struct xgpub_wstat {
	uint64_t calls;		/* requests served */
	uint64_t mem_used;	/* device memory bytes charged: allocations,
				 * arrays, contexts, limits, globals */
	uint64_t quota;		/* its limit, 0: none */
	uint64_t gpu_ns;	/* GPU time its work took */
	uint32_t qdepth;	/* requests waiting on the ring */
	uint32_t connected;	/* 1 once the channel is up */
	char proc[32];		/* the guest process's name, once connected */
	/* GPU scheduler (worker/xgpub_gate.c, daemon/xgpub_sched_glue.c);
	 * what the daemon writes is in struct xgpub_wctl */
	uint32_t want;		/* worker: has requests to serve */
	uint32_t busy;		/* worker: GPU work in flight */
	uint32_t submitting;	/* worker: a GPU op is being submitted */
	uint32_t drained;	/* worker: count of busy 1 -> 0 */
	uint64_t gpu_since;	/* worker: when the oldest GPU work in flight
				 * began running (CLOCK_MONOTONIC ns), 0: none */
	uint64_t call_since;	/* worker: when the GPU op being submitted
				 * got the GPU (ns), 0: none */
	uint64_t pinned;	/* worker: host memory bytes it shares and
				 * pins (its guest's regions) */
	/* the guest process's pid as the guest sees it (local: the
	 * client's, SO_PEERCRED; Xen: the frontend's), 0: unknown */
	uint32_t pid;
	uint32_t has_ctx;	/* worker: it made its CUDA context (a
				 * channel of NVML ops alone makes none) */
	uint64_t images;	/* worker: module image bytes it holds */
	/* worker of a Xen channel: the granted pages it has mapped (ring,
	 * data area, host-memory regions), for the host's grant budget */
	uint64_t grants;
	/* worker of a network client: the token its lanes bring
	 * (xgpu_mirror.h), valid once lane_ready is 1 */
	uint8_t lane_token[32];
	uint32_t lane_ready;
	/* worker: it is inside its guest's GPU time cell (work in flight,
	 * xgpub_gcell.h); the daemon leaves for it if it dies inside */
	uint32_t in_cell;
};

/* what the daemon tells a worker: read-only in every worker */
struct xgpub_wctl {
	uint32_t sched_on;	/* this worker is scheduled */
	uint32_t grant;		/* may submit GPU work (futex) */
	uint32_t solo;		/* the guest is alone on the GPU: the worker
				 * may queue more work ahead */
	uint32_t limited;	/* a GPU time limit applies to the guest
				 * (--gpu-limit-ms or its own): its marks
				 * stay short, even alone */
	uint64_t acct;		/* the guest it serves, for the quota
				 * (XGPUB_ACCT_*), 0: none */
	/* permille of the last second's wall time during which this
	 * worker's GPU work ran (its gpu_ns and the work in flight),
	 * written once a second (daemon/xgpub_guest.c); NVML's GPU
	 * utilisation in the guest sums its guest's workers */
	uint32_t util_pm;
	/* caps are set at run time for some local or network client's
	 * key: a client's worker asks for its own (XGPUB_BROKER_CAPS) */
	uint32_t client_caps;
};

/*
 * What a context costs by default (--ctx-charge-kb): a context created on
 * an H200 (driver 580.159.04, CUDA 13.0) took 523.6 MiB of cuMemGetInfo's
 * free memory, the same for each of three in a row; module images all the
 * guest's workers may hold (--images-mb).
 */
#define XGPUB_CTX_CHARGE_DEFAULT	(524ull << 20)
/* a green context: three made on that H200 took 6.0, 4.0 and 6.0 MiB */
#define XGPUB_GREEN_CHARGE		(6ull << 20)
#define XGPUB_IMAGES_MAX		(4ull << 30)

/* a quota account: a Xen domain, or a local user (SO_PEERCRED) */
#define XGPUB_ACCT_XEN(domid)	((1ull << 32) | (uint32_t)(domid))
#define XGPUB_ACCT_UID(uid)	((2ull << 32) | (uint32_t)(uid))

/*
 * One worker's slot: a page of status it writes, a page of what the
 * daemon tells it.  A worker maps its own status page read-write and
 * everything else read-only, so that neither it nor a guest kernel
 * reaching its memory can write another worker's status, or any grant.
 */
struct xgpub_wslot {
	struct xgpub_wstat st;
	uint8_t _page[4096 - sizeof(struct xgpub_wstat)];
	struct xgpub_wctl ctl;		/* a page the worker only reads */
	uint8_t _page2[4096 - sizeof(struct xgpub_wctl)];
} __attribute__((aligned(4096)));

/* the daemon's words to the worker whose slot st is */
static inline struct xgpub_wctl *xgpub_wctl_of(struct xgpub_wstat *st)
{
	return &((struct xgpub_wslot *)(void *)st)->ctl;
}

/*
 * In a worker: every worker's slot (n of them), read to sum what the
 * other workers of its guest hold (NULL in tests that run a worker
 * inline).
 */
extern struct xgpub_wslot *xgpub_all_stats;
extern int xgpub_nstats;
/*
 * The whole shared region from xgpub_all_stats: the slots, then the
 * guests' GPU time cells (xgpub_gcell.h); 0: the slots alone.  The
 * sandbox keeps a worker from changing its view of any of it.
 */
extern size_t xgpub_shared_bytes;
/* in a worker: its guest's GPU time cell (NULL: none, or a test) */
extern struct xgpub_gcell *xgpub_self_cell;

/* in a worker: its own slot (NULL in tests that run a worker inline) */
extern struct xgpub_wstat *xgpub_self_stat;

/*
 * In a worker: the sum of the uint64_t at offset off of the other
 * workers' slots: of those serving guest acct (their ctl.acct), or of
 * all of them for acct 0.  Read without a lock: two workers adding at
 * the same moment may each miss the other's last addition.
 */
static inline uint64_t xgpub_others_sum(size_t off, uint64_t acct)
{
	uint64_t sum = 0;

	if (!xgpub_all_stats)
		return 0;
	for (int i = 0; i < xgpub_nstats; i++) {
		struct xgpub_wstat *st = &xgpub_all_stats[i].st;

		if (st == xgpub_self_stat ||
		    (acct && __atomic_load_n(&xgpub_all_stats[i].ctl.acct,
					     __ATOMIC_ACQUIRE) != acct))
			continue;
		sum += __atomic_load_n((uint64_t *)((uint8_t *)st + off),
				       __ATOMIC_RELAXED);
	}
	return sum;
}
/* in a worker: the eventfd that kicks the daemon's scheduler (-1: none) */
extern int xgpub_sched_kick_fd;
/* in a worker: its end of the daemon's descriptor broker (xgpub_broker.h),
 * -1: none */
extern int xgpub_broker_fd;

#endif /* XGPUB_H */
