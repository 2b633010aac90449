// SPDX-License-Identifier: MIT
/*
 * xgpub_children.c: the daemon's table of worker processes, and the one
 * place that forks them (both transports).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_cgroup.h"
#include "xgpub_daemon.h"
#include "xgpub_ipc.h"
#include "xgpub_transport.h"

#define MAX_WORKERS 1024
#define SHARED_BYTES	(MAX_WORKERS * (sizeof(struct xgpub_wslot) + \
					sizeof(struct xgpub_gcell_page)))

static struct xgpub_child children[MAX_WORKERS];
static struct xgpub_wslot *stats;	/* MAX_WORKERS slots, shared */
/*
 * The guests' GPU time cells (xgpub_gcell.h), after the slots in the same
 * shared region: one per guest with a worker, shared by its workers
 * (each maps its own guest's read-write) and counted by the daemon.
 */
static struct xgpub_gcell_page *cells;
static struct {
	int kind;
	uint32_t id;		/* as the guest table knows a guest */
	int refs;		/* workers in the table that use it */
} cell_key[MAX_WORKERS];
static uint32_t client_caps;	/* the workers' ctl.client_caps */

bool xgpub_sched_enabled;
static int (*sched_kick_new)(void);
static void (*sched_kick_drop)(int fd);

void xgpub_children_sched(int (*kick_new)(void), void (*kick_drop)(int fd))
{
	sched_kick_new = kick_new;
	sched_kick_drop = kick_drop;
	xgpub_sched_enabled = true;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* workers get a network namespace (xgpub_children_netns_probe) */
static bool netns_ok;

int xgpub_children_netns_probe(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) ? (errno & 0xff) : 0);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st))
		return -ECHILD;
	if (WEXITSTATUS(st))
		return -WEXITSTATUS(st);
	netns_ok = true;
	return 0;
}

/*
 * In a forked worker: close every descriptor but stdin, stdout, stderr
 * and those a worker needs (mine: its guest's connection and what came
 * with it, if any; its own kick of the scheduler, the daemon's pipe for Xen workers, the broker).
 * The daemon's sockets (control, metrics, local listener), its xenstore
 * and Xen handles, the scheduler's epoll set, the other workers' kicks
 * and connections all go.
 */
static void close_inherited(const int *mine, int nmine)
{
	int keep[XGPUB_SPAWN_KEEP_MAX + 4] = { 2, xgpub_sched_kick_fd,
					       xgpub_xen_alive_fd,
					       xgpub_broker_fd };
	int n = 4;
	unsigned int from = 3;
	struct rlimit rl;

	for (int i = 0; i < nmine && i < XGPUB_SPAWN_KEEP_MAX; i++)
		keep[n++] = mine[i];
	qsort(keep, (size_t)n, sizeof(keep[0]), cmp_int);
	for (int i = 0; i <= n; i++) {
		unsigned int to = i < n ? (unsigned int)keep[i] : ~0u;

		if (i < n && (keep[i] < 0 || (unsigned int)keep[i] < from))
			continue;
		if (to > from) {
#ifdef SYS_close_range
			if (syscall(SYS_close_range, from, to - 1, 0) == 0)
				goto next;
#endif
			if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
			    rl.rlim_cur < to)
				to = (unsigned int)rl.rlim_cur;
			for (unsigned int fd = from; fd < to; fd++)
				close((int)fd);
		}
#ifdef SYS_close_range
next:
#endif
		if (i < n)
			from = (unsigned int)keep[i] + 1;
	}
}

void xgpub_child_name(const struct xgpub_child *c, char *buf, size_t len)
{
	if (c->kind == XGPUB_CHILD_XEN)
		snprintf(buf, len, "dom%u ch%u", c->domid, c->ch);
	else
		snprintf(buf, len, "client %u", c->client_id);
	/* (network clients' ids start at 2^20, apart from local ones) */
}

int xgpub_child_set_peer(struct xgpub_child *c, const uint8_t hash[32])
{
	if (c->kind != XGPUB_CHILD_NET)
		return -EPERM;
	if (c->peer_set)
		return -EALREADY;	/* the first word stands */
	memcpy(c->peer_hash, hash, sizeof(c->peer_hash));
	c->peer_set = true;
	return 0;
}

bool xgpub_child_same_guest(const struct xgpub_child *a,
			    const struct xgpub_child *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == XGPUB_CHILD_XEN)
		return a->domid == b->domid;
	/* network clients: the connections of one authenticated peer */
	if (a->kind == XGPUB_CHILD_NET)
		return a->peer_set && b->peer_set ?
		       !memcmp(a->peer_hash, b->peer_hash,
			       sizeof(a->peer_hash)) :
		       a->client_id == b->client_id;
	/* a client whose uid could not be read is a guest of its own */
	if (a->peer_uid == (uint32_t)-1 || b->peer_uid == (uint32_t)-1)
		return a->client_id == b->client_id;
	return a->peer_uid == b->peer_uid;
}

struct xgpub_child *xgpub_child_find(pid_t pid)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (children[i].pid == pid && pid > 0)
			return &children[i];
	return NULL;
}

void xgpub_children_each(void (*fn)(struct xgpub_child *c, void *arg),
			 void *arg)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (children[i].pid > 0)
			fn(&children[i], arg);
}

int xgpub_children_count(void)
{
	int n = 0;

	for (int i = 0; i < MAX_WORKERS; i++)
		n += children[i].pid > 0;
	return n;
}

void xgpub_children_kill(int sig)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (children[i].pid > 0)
			kill(children[i].pid, sig);
}

/* its guest's GPU time cell, or a fresh one (not taken until the fork) */
static int cell_get(const struct xgpub_child *info)
{
	uint32_t id = info->kind == XGPUB_CHILD_XEN ? info->domid :
						      info->client_id;
	int free_at = -1;

	for (int i = 0; i < MAX_WORKERS; i++) {
		if (!cell_key[i].refs) {
			if (free_at < 0)
				free_at = i;
			continue;
		}
		if (cell_key[i].kind == info->kind && cell_key[i].id == id)
			return i;
	}
	/* as many cells as slots, one free slot: one free cell at least */
	memset(&cells[free_at], 0, sizeof(cells[free_at]));
	cell_key[free_at].kind = info->kind;
	cell_key[free_at].id = id;
	return free_at;
}

pid_t xgpub_spawn(const struct xgpub_child *info, const int *keep,
		  int nkeep, int (*fn)(void *), void *arg)
{
	struct xgpub_child *slot = NULL;
	char prefix[48];
	pid_t pid;
	int kick, cell;

	if (!stats) {
		void *p = mmap(NULL, SHARED_BYTES, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			xgpub_err("no memory for worker statistics");
			return -ENOMEM;
		}
		stats = p;
		cells = (void *)(stats + MAX_WORKERS);
	}
	for (int i = 0; i < MAX_WORKERS && !slot; i++)
		if (!children[i].pid)
			slot = &children[i];
	if (!slot) {
		xgpub_err("too many workers (%d)", MAX_WORKERS);
		return -EAGAIN;
	}
	cell = cell_get(info);
	/* its own kick of the scheduler: no other worker can read it (and
	 * swallow the kicks) or write it; without one (logged) the
	 * scheduler sees its work on its timers only */
	kick = sched_kick_new ? sched_kick_new() : -1;
	if (kick < 0)
		kick = -1;
	memset(&stats[slot - children].st, 0, sizeof(stats->st));
	memset(&stats[slot - children].ctl, 0, sizeof(stats->ctl));
	stats[slot - children].ctl.sched_on = xgpub_sched_enabled;
	stats[slot - children].ctl.client_caps = client_caps;
	stats[slot - children].ctl.acct =
		info->kind == XGPUB_CHILD_XEN ? XGPUB_ACCT_XEN(info->domid) :
						XGPUB_ACCT_UID(info->peer_uid);
	/* a worker's stdout is its guest's (xgpub_output.c): it must not
	 * inherit bytes the daemon buffered */
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		xgpub_err("cannot fork a worker: %s", strerror(e));
		if (sched_kick_drop)
			sched_kick_drop(kick);
		return -e;
	}
	if (pid == 0) {
		/* first: all it allocates is charged to its cgroup */
		xgpub_cgroup_join(info);
		/* a session of its own: its kill(0) reaches no other worker */
		setsid();
		/* a network of its own, while it has one thread (the probe
		 * said it works; a worker that cannot have one does not run) */
		if (netns_ok && unshare(CLONE_NEWNET)) {
			xgpub_err("no network namespace for a worker: %s",
				  strerror(errno));
			_exit(1);
		}
		/* no setuid program raises it, no other process reads it
		 * (the sandbox confirms both once set up) */
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		xgpub_log_forked();
		/* the daemon's registry of IPC handles: not the worker's */
		xgpub_ipc_reg_after_fork();
		xgpub_sched_kick_fd = kick;
		close_inherited(keep, nkeep);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		xgpub_self_stat = &stats[slot - children].st;
		/* all but its own status page and its guest's cell:
		 * read-only here */
		if (mprotect(stats, SHARED_BYTES, PROT_READ) ||
		    mprotect(&stats[slot - children].st, 4096,
			     PROT_READ | PROT_WRITE) ||
		    mprotect(&cells[cell], 4096, PROT_READ | PROT_WRITE))
			_exit(1);
		xgpub_all_stats = stats;
		xgpub_nstats = MAX_WORKERS;
		xgpub_shared_bytes = SHARED_BYTES;
		xgpub_self_cell = &cells[cell].c;
		prctl(PR_SET_NAME, "xgpu-worker");
		/* a worker must not outlive the daemon that accounts for it */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (info->kind == XGPUB_CHILD_XEN)
			snprintf(prefix, sizeof(prefix), "worker dom%u/ch%u",
				 info->domid, info->ch);
		else
			snprintf(prefix, sizeof(prefix), "worker %u",
				 info->client_id);
		xgpub_log_prefix(prefix);
		_exit(fn(arg));
	}
	*slot = *info;
	slot->pid = pid;
	slot->st = &stats[slot - children].st;
	slot->started = xgpub_now_ns();
	slot->kick_fd = kick;
	slot->cell = cell + 1;
	cell_key[cell].refs++;
	return pid;
}

struct xgpub_gcell *xgpub_child_cell(const struct xgpub_child *c)
{
	return c->cell && cells ? &cells[c->cell - 1].c : NULL;
}

uint64_t xgpub_child_cell_time(const struct xgpub_child *c)
{
	const struct xgpub_gcell *cell = xgpub_child_cell(c);

	return cell ? xgpub_gcell_time(cell) : 0;
}

void xgpub_child_cell_release(struct xgpub_child *c)
{
	struct xgpub_gcell *cell = xgpub_child_cell(c);
	uint32_t me = (uint32_t)getpid();

	if (!cell)
		return;
	/*
	 * It died with work in flight: it leaves now (the driver ended its
	 * work with it).  Its lock, if it held it, is taken over; a live
	 * holder has a few stores to make, and is waited for 1000 yields
	 * at most (a stuck one can only spoil its own guest's count).
	 */
	if (c->st && __atomic_load_n(&c->st->in_cell, __ATOMIC_ACQUIRE)) {
		xgpub_gcell_lock(cell, me, (uint32_t)c->pid, 1000);
		xgpub_gcell_leave_locked(cell, &c->st->in_cell,
					 xgpub_now_ns());
		xgpub_gcell_unlock(cell, me);
	}
	if (cell_key[c->cell - 1].refs > 0)
		cell_key[c->cell - 1].refs--;
	c->cell = 0;
}

void xgpub_children_client_caps(void)
{
	client_caps = 1;
	for (int i = 0; stats && i < MAX_WORKERS; i++)
		__atomic_store_n(&stats[i].ctl.client_caps, 1,
				 __ATOMIC_RELEASE);
}
