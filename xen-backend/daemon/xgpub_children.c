// SPDX-License-Identifier: MIT
/*
 * xgpub_children.c: the daemon's table of worker processes, and the one
 * place that forks them (both transports).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "xgpub_daemon.h"
#include "xgpub_ipc.h"

#define MAX_WORKERS 1024

static struct xgpub_child children[MAX_WORKERS];
static struct xgpub_wslot *stats;	/* MAX_WORKERS slots, shared */
/* descriptors of the daemon that a worker must not keep */
static int daemon_fds[16];
static int ndaemon_fds;

void xgpub_daemon_fd(int fd)
{
	if (ndaemon_fds < (int)(sizeof(daemon_fds) / sizeof(daemon_fds[0])))
		daemon_fds[ndaemon_fds++] = fd;
}

void xgpub_child_name(const struct xgpub_child *c, char *buf, size_t len)
{
	if (c->kind == XGPUB_CHILD_XEN)
		snprintf(buf, len, "dom%u ch%u", c->domid, c->ch);
	else
		snprintf(buf, len, "client %u", c->client_id);
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

void xgpub_children_kill(int sig)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (children[i].pid > 0)
			kill(children[i].pid, sig);
}

pid_t xgpub_spawn(const struct xgpub_child *info, int (*fn)(void *),
		  void *arg)
{
	struct xgpub_child *slot = NULL;
	char prefix[48];
	pid_t pid;

	if (!stats) {
		void *p = mmap(NULL, sizeof(*stats) * MAX_WORKERS,
			       PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			xgpub_err("no memory for worker statistics");
			return -ENOMEM;
		}
		stats = p;
	}
	/* the workers' shared registry of IPC handles, before any fork */
	if (xgpub_ipc_init())
		xgpub_err("no memory for the IPC registry: IPC handles will "
			  "not open");
	for (int i = 0; i < MAX_WORKERS && !slot; i++)
		if (!children[i].pid)
			slot = &children[i];
	if (!slot) {
		xgpub_err("too many workers (%d)", MAX_WORKERS);
		return -EAGAIN;
	}
	memset(&stats[slot - children].st, 0, sizeof(stats->st));
	memset(&stats[slot - children].ctl, 0, sizeof(stats->ctl));
	stats[slot - children].ctl.sched_on = xgpub_sched_enabled;
	stats[slot - children].ctl.acct =
		info->kind == XGPUB_CHILD_XEN ? XGPUB_ACCT_XEN(info->domid) :
						XGPUB_ACCT_UID(info->peer_uid);
	/* a worker's stdout is its guest's (xgpub_output.c): it must not
	 * inherit bytes the daemon buffered */
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		xgpub_err("cannot fork a worker: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		for (int i = 0; i < ndaemon_fds; i++)
			close(daemon_fds[i]);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		xgpub_self_stat = &stats[slot - children].st;
		/* all but its own status page: read-only here */
		if (mprotect(stats, sizeof(*stats) * MAX_WORKERS, PROT_READ) ||
		    mprotect(&stats[slot - children].st, 4096,
			     PROT_READ | PROT_WRITE))
			_exit(1);
		xgpub_all_stats = stats;
		xgpub_nstats = MAX_WORKERS;
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
	return pid;
}
