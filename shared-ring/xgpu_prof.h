/* SPDX-License-Identifier: MIT */
/*
 * xgpu_prof.h: where a request's time goes, for the benchmarks (off
 * unless the environment's XGPU_PROF names a folder).
 *
 * Each side keeps CLOCK_MONOTONIC times per request of one channel,
 * indexed by the request's id (ids count from 1 in a channel; the first
 * XGPU_PROF_MAX are kept):
 *   guest library  posted (its request on the ring), seen (its reply taken
 *                  off the ring), 0, 0, 0
 *   worker         taken (read off the ring), done (dispatched), published
 *                  (the reply's index pushed to the guest), and the
 *                  handler's call (its start, its return) inside done
 * and writes them when the channel ends to DIR/guest.PID.txt or
 * DIR/worker.PID.txt, one line per request: "id op t0 t1 t2 t3 t4".  Both sides
 * run on one host (the local transport), so their clocks are one:
 * bench/prof-join.py joins the files by id and prints, per op, the
 * request's way to the worker, the handler, the reply's publishing and its
 * way back.  One channel per process is recorded (the first).
 *
 * Header-only: one translation unit of each side includes it.
 */
#ifndef XGPU_PROF_H
#define XGPU_PROF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define XGPU_PROF_MAX	(1u << 20)

/* the times' places: posted or taken, seen or done, and the worker's */
enum { XGPU_PROF_T0, XGPU_PROF_T1, XGPU_PROF_PUB, XGPU_PROF_CALL,
       XGPU_PROF_RET, XGPU_PROF_NT };

struct xgpu_prof_rec {
	uint16_t op;
	uint64_t t[XGPU_PROF_NT];
};

struct xgpu_prof {
	struct xgpu_prof_rec *r;	/* NULL: off */
	FILE *out;
	uint64_t last_pub;		/* worker: ids published up to */
};

static inline uint64_t xgpu_prof_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* on when XGPU_PROF names a folder: its file opened now (a worker opens
 * it before its sandbox) */
static inline void xgpu_prof_start(struct xgpu_prof *p, const char *side)
{
	const char *dir = getenv("XGPU_PROF");
	char path[512];

	if (!dir || !*dir || p->r)
		return;
	snprintf(path, sizeof(path), "%s/%s.%d.txt", dir, side, (int)getpid());
	p->out = fopen(path, "w");
	if (!p->out)
		return;
	p->r = calloc(XGPU_PROF_MAX, sizeof(*p->r));
	if (!p->r) {
		fclose(p->out);
		p->out = NULL;
	}
}

/* time k of request id (op) is now */
static inline void xgpu_prof_mark(struct xgpu_prof *p, uint64_t id,
				  uint16_t op, int k)
{
	if (!p->r || id >= XGPU_PROF_MAX)
		return;
	p->r[id].op = op;
	p->r[id].t[k] = xgpu_prof_ns();
}

/* worker: every reply up to id was published now */
static inline void xgpu_prof_published(struct xgpu_prof *p, uint64_t id)
{
	uint64_t now;

	if (!p->r)
		return;
	now = xgpu_prof_ns();
	for (uint64_t i = p->last_pub + 1; i <= id && i < XGPU_PROF_MAX; i++)
		p->r[i].t[XGPU_PROF_PUB] = now;
	if (id > p->last_pub)
		p->last_pub = id;
}

static inline void xgpu_prof_stop(struct xgpu_prof *p)
{
	if (!p->r)
		return;
	for (uint64_t i = 1; i < XGPU_PROF_MAX; i++)
		if (p->r[i].t[0])
			fprintf(p->out, "%llu %u %llu %llu %llu %llu %llu\n",
				(unsigned long long)i, p->r[i].op,
				(unsigned long long)p->r[i].t[0],
				(unsigned long long)p->r[i].t[1],
				(unsigned long long)p->r[i].t[2],
				(unsigned long long)p->r[i].t[3],
				(unsigned long long)p->r[i].t[4]);
	fclose(p->out);
	free(p->r);
	p->r = NULL;
	p->out = NULL;
}

#endif /* XGPU_PROF_H */
