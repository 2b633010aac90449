// SPDX-License-Identifier: MIT
/*
 * check_gate.c: the worker's half of the GPU scheduler (xgpub_gate.c)
 * against a mock driver whose streams can be held: an event recorded on
 * a held stream completes only once the stream is let go, as work behind
 * a cuStreamWaitValue32 does once the value comes.
 *
 *   - work behind a value wait does not hold the bound on work in
 *     flight: the guest's next op, on another stream, is submitted
 *     (before, the dispatcher waited for the waiting stream's mark, and
 *     the write the stream waited for never came);
 *   - the bound still holds for a stream that waits for no value: a
 *     long-running stream keeps the dispatcher waiting until it is done;
 *   - the waiting work still counts: the worker stays busy, the daemon's
 *     limit sees it in flight (gpu_since), and it is charged as GPU time
 *     when it completes (from its submission: waiting counts);
 *   - the daemon is kicked when the guest comes to want the GPU, when its
 *     work drains and when it goes idle, not when work begins;
 *   - a mark over several streams waits once: its other events are
 *     asked (done by then), not waited for one by one;
 *   - alone on the GPU and under no GPU time limit, a stream's marks
 *     are as long as the estimate allows (not one every 64 ops); under
 *     a limit they stay at 64 ops.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_worker.h"
#include "check_run.h"

/* ---- the mock driver: streams that can be held --------------------------- */

#define SA	((CUstream)(uintptr_t)0x10)
#define SB	((CUstream)(uintptr_t)0x20)

struct mev {
	uintptr_t stream;
	unsigned int epoch;	/* the stream's release count at record */
	bool held;		/* recorded while the stream was held */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct {
	bool held;
	unsigned int epoch;
} streams[2];

static unsigned int sidx(uintptr_t s)
{
	return s == (uintptr_t)SB;
}

static void hold(CUstream s)
{
	pthread_mutex_lock(&mu);
	streams[sidx((uintptr_t)s)].held = true;
	pthread_mutex_unlock(&mu);
}

/* both streams at once: what each held finishes together */
static void let_go_both(void)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 2; i++) {
		streams[i].held = false;
		streams[i].epoch++;
	}
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void let_go(CUstream s)
{
	pthread_mutex_lock(&mu);
	streams[sidx((uintptr_t)s)].held = false;
	streams[sidx((uintptr_t)s)].epoch++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* mu held */
static bool done(const struct mev *e)
{
	return !e->held || streams[sidx(e->stream)].epoch > e->epoch;
}

static CUresult m_event_create(CUevent *ev, unsigned int flags)
{
	(void)flags;
	*ev = calloc(1, sizeof(struct mev));
	return *ev ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* events recorded: a mark's */
static unsigned int n_rec;

static CUresult m_event_record(CUevent ev, CUstream s)
{
	struct mev *e = (struct mev *)ev;

	pthread_mutex_lock(&mu);
	n_rec++;
	e->stream = (uintptr_t)s;
	e->epoch = streams[sidx(e->stream)].epoch;
	e->held = streams[sidx(e->stream)].held;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* blocking waits the gate asked for */
static unsigned int n_sync;

static CUresult m_event_sync(CUevent ev)
{
	pthread_mutex_lock(&mu);
	n_sync++;
	while (!done((struct mev *)ev))
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

static CUresult m_event_query(CUevent ev)
{
	bool d;

	pthread_mutex_lock(&mu);
	d = done((struct mev *)ev);
	pthread_mutex_unlock(&mu);
	return d ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult m_event_destroy(CUevent ev)
{
	free(ev);
	return CUDA_SUCCESS;
}

static CUresult m_ctx_set(CUcontext c)
{
	(void)c;
	return CUDA_SUCCESS;
}

static struct xgpub_driver drv = {
	.cuEventCreate = m_event_create,
	.cuEventRecord = m_event_record,
	.cuEventSynchronize = m_event_sync,
	.cuEventQuery = m_event_query,
	.cuEventDestroy_v2 = m_event_destroy,
	.cuCtxSetCurrent = m_ctx_set,
};

/* ---- a worker with a slot of its own ------------------------------------- */

static struct xgpub_wslot slot;
static struct xgpub_worker wk;
static struct xgpub_transport tr;
static uint64_t sring_page[4096 / 8];

static void setup(void)
{
	memset(&slot, 0, sizeof(slot));
	memset(&wk, 0, sizeof(wk));
	memset(streams, 0, sizeof(streams));
	slot.ctl.sched_on = 1;
	slot.ctl.grant = 1;
	slot.ctl.solo = 1;
	xgpub_self_stat = &slot.st;
	snprintf(tr.who, sizeof(tr.who), "test");
	wk.t = &tr;
	wk.D = &drv;
	wk.ring.sring = (struct xgpuif_sring *)(void *)sring_page;
	wk.cur = (CUcontext)(uintptr_t)0x99;
	xgpub_gate_init(&wk);
	ck_assert(xgpub_gate_on());
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* one gated op on s, as the dispatcher puts it through the gate */
static void submit(CUstream s, bool bound)
{
	uint64_t t0 = xgpub_gate_enter(&wk);

	xgpub_gate_done(&wk, true, s, t0, bound);
}

/* n ops on stream A, bounded, in a thread of their own */
static int n_a;
static volatile int a_done;

static void *submit_a(void *arg)
{
	(void)arg;
	for (int i = 0; i < n_a; i++)
		submit(SA, true);
	a_done = 1;
	return NULL;
}

/* whether the thread t ends within ms */
static bool ends_within(pthread_t t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_timedjoin_np(t, NULL, &ts) == 0;
}

/* wait up to ms for a word of the status slot to read v */
static bool slot_reads(const uint32_t *word, uint32_t v, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == v)
			return true;
		usleep(1000);
	}
	return false;
}

START_TEST(value_wait_does_not_hold_the_bound)
{
	pthread_t t;
	uint64_t t_wait;

	/* B waits for a value that A's later work writes */
	hold(SB);
	xgpub_note_value_wait(&wk, SB);
	t_wait = now_ns();
	submit(SB, false);
	submit(SB, false);
	/* A's ops, many marks' worth: none may wait for B's */
	n_a = 16;
	ck_assert_int_eq(pthread_create(&t, NULL, submit_a, NULL), 0);
	ck_assert_msg(ends_within(t, 3000),
		      "the ops on A waited for B's work, which waits for "
		      "them");
	xgpub_gate_idle(&wk);
	/* B's work is still in flight: busy, and old for the limit */
	usleep(50000);
	ck_assert_uint_eq(slot.st.busy, 1);
	ck_assert_uint_ne(slot.st.gpu_since, 0);
	ck_assert_uint_le(slot.st.gpu_since, t_wait + 50000000ull);
	/* the value comes: B's work is done, charged from its submission */
	let_go(SB);
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000),
		      "B's work done, the worker still busy");
	ck_assert_uint_eq(slot.st.gpu_since, 0);
	ck_assert_uint_ge(slot.st.gpu_ns, 50000000ull);
	ck_assert_uint_ge(slot.st.drained, 1);
	xgpub_gate_stop(&wk);
}
END_TEST

START_TEST(bound_holds_without_value_waits)
{
	pthread_t t;

	/* A runs long (a kernel): the dispatcher may have only SOLO_MARKS
	 * of its marks in flight, and then waits */
	hold(SA);
	n_a = 8;
	a_done = 0;
	ck_assert_int_eq(pthread_create(&t, NULL, submit_a, NULL), 0);
	ck_assert_msg(!ends_within(t, 300),
		      "8 marks of A in flight: the bound did not hold");
	ck_assert_int_eq(a_done, 0);
	let_go(SA);
	ck_assert_msg(ends_within(t, 3000), "A done, the dispatcher waits");
	xgpub_gate_idle(&wk);
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000),
		      "A's work done, the worker still busy");
	ck_assert_uint_ge(slot.st.gpu_ns, 250000000ull);
	xgpub_gate_stop(&wk);
}
END_TEST

START_TEST(drain_drops_waiting_work)
{
	/* a context ends while its stream still waits for a value: the
	 * drain does not wait for it (it never comes) */
	hold(SB);
	xgpub_note_value_wait(&wk, SB);
	submit(SB, false);
	xgpub_gate_idle(&wk);
	usleep(20000);
	ck_assert_uint_eq(slot.st.busy, 1);
	xgpub_gate_drain(&wk);
	ck_assert_uint_eq(slot.st.busy, 0);
	ck_assert_uint_eq(slot.st.gpu_since, 0);
	xgpub_gate_stop(&wk);
}
END_TEST

START_TEST(mark_waits_once_for_its_streams)
{
	unsigned int waits;

	/* one op done first: the gate then knows an op's GPU time and
	 * batches ops (the first op is a mark of its own) */
	submit(SA, true);
	xgpub_gate_idle(&wk);
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000), "not drained");
	/* a batch over both streams, both held: one mark, two events */
	hold(SA);
	hold(SB);
	submit(SA, false);
	submit(SB, false);
	pthread_mutex_lock(&mu);
	n_sync = 0;
	pthread_mutex_unlock(&mu);
	xgpub_gate_idle(&wk);
	/* the completer in its wait for the first event */
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&mu);
		waits = n_sync;
		pthread_mutex_unlock(&mu);
		if (waits)
			break;
		usleep(1000);
	}
	ck_assert_msg(waits == 1, "%u waits begun, want the first", waits);
	let_go_both();
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000),
		      "the mark's work done, the worker still busy");
	pthread_mutex_lock(&mu);
	waits = n_sync;
	pthread_mutex_unlock(&mu);
	/* the wait under way returns; the second event is asked and is
	 * done (a blocking wait for it cost some 35 us on the H200 each) */
	ck_assert_msg(waits == 1, "%u blocking waits for a mark of two "
		      "streams done together, want 1", waits);
	xgpub_gate_stop(&wk);
}
END_TEST

/* marks (records) for n ops on stream A, each done at once */
static unsigned int marks_for(unsigned int n)
{
	unsigned int r;

	/* one op done first: the gate then knows an op's GPU time */
	submit(SA, true);
	xgpub_gate_idle(&wk);
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000), "not drained");
	pthread_mutex_lock(&mu);
	n_rec = 0;
	pthread_mutex_unlock(&mu);
	for (unsigned int i = 0; i < n; i++)
		submit(SA, true);
	xgpub_gate_idle(&wk);
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000), "not drained");
	pthread_mutex_lock(&mu);
	r = n_rec;
	pthread_mutex_unlock(&mu);
	return r;
}

START_TEST(open_marks_alone_without_limit)
{
	unsigned int r;

	slot.ctl.limited = 0;
	r = marks_for(2048);
	/* the estimate (ops done at once) allows 1024 ops a stream */
	ck_assert_msg(r <= 4, "%u marks for 2048 ops alone, want <= 4", r);
	xgpub_gate_stop(&wk);
}
END_TEST

START_TEST(short_marks_under_a_limit)
{
	unsigned int r;

	slot.ctl.limited = 1;
	r = marks_for(2048);
	ck_assert_msg(r >= 32, "%u marks for 2048 ops under a GPU time "
		      "limit, want >= 32 (64 ops each)", r);
	xgpub_gate_stop(&wk);
}
END_TEST

/* the kicks an eventfd counted since the last read (0: none) */
static uint64_t kicks(int fd)
{
	uint64_t n = 0;

	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

START_TEST(kicks_only_when_wanting_or_drained)
{
	int fd = eventfd(0, EFD_NONBLOCK);

	ck_assert_int_ge(fd, 0);
	xgpub_sched_kick_fd = fd;
	/* work begins: one kick, for want; the work's start is none (the
	 * grant was in hand and want told the daemon already) */
	hold(SA);
	submit(SA, false);
	ck_assert_uint_eq(slot.st.want, 1);
	ck_assert_uint_eq(slot.st.busy, 1);
	ck_assert_uint_eq(kicks(fd), 1);
	submit(SA, false);
	ck_assert_uint_eq(kicks(fd), 0);
	/* the work drains: a kick (a revoked guest's drain ends the
	 * daemon's wait; a completion boosts a domain's VCPUs) */
	let_go(SA);
	ck_assert_msg(slot_reads(&slot.st.busy, 0, 2000),
		      "A's work done, the worker still busy");
	ck_assert_uint_ge(kicks(fd), 1);
	/* idle: want goes, with a kick */
	xgpub_gate_idle(&wk);
	ck_assert_uint_eq(slot.st.want, 0);
	ck_assert_uint_ge(kicks(fd), 1);
	xgpub_gate_stop(&wk);
	xgpub_sched_kick_fd = -1;
	close(fd);
}
END_TEST

/*
 * The guest's GPU time cell: the gate enters it with its first op, tells
 * it how far its work ran, and leaves once it drained; alone, the cell
 * counts what the worker counts itself; beside another worker of its
 * guest whose period covers its own, the cell counts the union, not the
 * sum of the two.
 */
static struct xgpub_gcell gcell;

START_TEST(cell_counts_the_union)
{
	uint32_t other = 0;
	uint64_t t0, t1, own, total;

	memset(&gcell, 0, sizeof(gcell));
	xgpub_self_cell = &gcell;
	/* alone: 100 ms of work on A */
	hold(SA);
	submit(SA, true);
	ck_assert_uint_eq(slot.st.in_cell, 1);
	usleep(100000);
	let_go(SA);
	xgpub_gate_idle(&wk);
	ck_assert_msg(slot_reads(&slot.st.in_cell, 0, 2000),
		      "the work done, the worker still in its cell");
	own = slot.st.gpu_ns;
	ck_assert_uint_ge(own, 100000000ull);
	ck_assert_uint_le(xgpub_gcell_time(&gcell), own + 1000000);
	ck_assert_uint_ge(xgpub_gcell_time(&gcell) + 1000000, own);
	/* another worker of the guest, busy around 100 ms of ours */
	total = xgpub_gcell_time(&gcell);
	t0 = now_ns();
	xgpub_gcell_lock(&gcell, 2, 0, 0);
	xgpub_gcell_enter_locked(&gcell, &other, t0);
	xgpub_gcell_unlock(&gcell, 2);
	usleep(20000);
	hold(SA);
	submit(SA, true);
	usleep(100000);
	let_go(SA);
	xgpub_gate_idle(&wk);
	ck_assert(slot_reads(&slot.st.in_cell, 0, 2000));
	usleep(20000);
	t1 = now_ns();
	xgpub_gcell_lock(&gcell, 2, 0, 0);
	xgpub_gcell_leave_locked(&gcell, &other, t1);
	xgpub_gcell_unlock(&gcell, 2);
	/* the union is the other's period: t1 - t0, not that plus ours */
	ck_assert_uint_eq(xgpub_gcell_time(&gcell) - total, t1 - t0);
	ck_assert_uint_ge(slot.st.gpu_ns - own, 100000000ull);
	/*
	 * A synchronize: its work completes while the dispatcher still
	 * waits (the completer, seeing a call, stays inside); the wait's
	 * end leaves, or the time until the guest's next op would count.
	 */
	for (int i = 0; i < 4; i++) {	/* quick ops: a batch of many */
		submit(SB, true);
		xgpub_gate_idle(&wk);
		ck_assert(slot_reads(&slot.st.busy, 0, 2000));
	}
	hold(SA);
	submit(SA, true);
	xgpub_gate_wait(&wk, true);
	xgpub_gate_mark(&wk);
	let_go(SA);
	ck_assert(slot_reads(&slot.st.busy, 0, 2000));
	ck_assert_uint_eq(slot.st.in_cell, 1);
	xgpub_gate_wait(&wk, false);
	ck_assert_uint_eq(slot.st.in_cell, 0);
	ck_assert_uint_eq(gcell.count, 0);
	xgpub_gate_stop(&wk);
	xgpub_self_cell = NULL;
}
END_TEST

/*
 * The completer's wait for a mark of a guest whose turn is over spins
 * for 1 ms at most from its start, then sleeps between questions.
 */
START_TEST(drain_spin_is_bounded)
{
	uint64_t since = 0;

	ck_assert(xgpub_gate_drain_spin(&since, 5000000));
	ck_assert_uint_eq(since, 5000000);
	ck_assert(xgpub_gate_drain_spin(&since, 5999999));
	ck_assert(!xgpub_gate_drain_spin(&since, 6000000));
	ck_assert(!xgpub_gate_drain_spin(&since, 90000000));
	ck_assert_uint_eq(since, 5000000);
}
END_TEST

static Suite *gate_suite(void)
{
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("gate");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, value_wait_does_not_hold_the_bound);
	tcase_add_test(tc, bound_holds_without_value_waits);
	tcase_add_test(tc, drain_drops_waiting_work);
	tcase_add_test(tc, kicks_only_when_wanting_or_drained);
	tcase_add_test(tc, cell_counts_the_union);
	tcase_add_test(tc, drain_spin_is_bounded);
	tcase_add_test(tc, mark_waits_once_for_its_streams);
	tcase_add_test(tc, open_marks_alone_without_limit);
	tcase_add_test(tc, short_marks_under_a_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* the gate is one per process: each case in a child of its own */
	return check_run(gate_suite(), true);
}
