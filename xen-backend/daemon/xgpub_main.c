// SPDX-License-Identifier: MIT
/*
 * xen-gpubackd: the xgpu backend daemon.
 *
 * The daemon accepts guests and forks one worker process per channel; it
 * never loads CUDA itself, so a guest that crashes its worker (or the
 * driver state of its context) takes nothing else down.  Workers are
 * reaped and logged on SIGCHLD; on SIGTERM the daemon stops its workers
 * and removes its socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include "xgpub_args.h"
#include "xgpub_broker.h"
#include "xgpub_cgroup.h"
#include "xgpub_daemon.h"
#include "xgpub_worker.h"
#include "xgpub_xen.h"
#include "xgpub_ctl.h"
#include "xgpub_guest.h"
#include "xgpub_local_clients.h"
#include "xgpub_net_clients.h"
#include "xgpub_metrics.h"
#include "xgpub_sched_glue.h"
#include "xgpub_vcpu_glue.h"
#include "xgpub_config.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t child_exited;
static volatile sig_atomic_t reload_requested;
static struct xgpub_xen *xen;

static const char *const default_drivers[] = {
	"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
	"/usr/lib64/libcuda.so.1",
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/lib/libcuda.so.1",
	NULL,
};

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	else if (sig == SIGHUP)
		reload_requested = 1;
	else
		stop_requested = 1;
}

static void reap_workers(void)
{
	struct rusage ru;
	int status;
	pid_t pid;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		struct xgpub_child *c = xgpub_child_find(pid);
		char who[48] = "?";
		/* the Dom0 CPU it used (serving, spinning for the next
		 * request, the driver's threads) over its life */
		double cpu = (double)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
		double life = c && c->started ?
			(double)(xgpub_now_ns() - c->started) / 1e9 : 0;

		if (c)
			xgpub_child_name(c, who, sizeof(who));
		if (c)
			xgpub_cgroup_remove(c);
		if (WIFEXITED(status))
			xgpub_info("worker of %s (pid %d) exited with status "
				   "%d (CPU %.3f s in %.3f s)", who, pid,
				   WEXITSTATUS(status), cpu, life);
		else if (WIFSIGNALED(status) &&
			 (WTERMSIG(status) == SIGTERM ||
			  WTERMSIG(status) == SIGKILL))
			/* how the daemon stops a worker (guest gone or
			 * closing, or shutdown): not an error; the Xen
			 * transport logs why it stopped one */
			(c && c->kind == XGPUB_CHILD_XEN ? xgpub_dbg :
							   xgpub_info)(
				"worker of %s (pid %d) stopped (signal %d; "
				"CPU %.3f s in %.3f s)", who, pid,
				WTERMSIG(status), cpu, life);
		else if (WIFSIGNALED(status))
			xgpub_err("worker of %s (pid %d) killed by signal %d",
				  who, pid, WTERMSIG(status));
		/* its IPC and shareable-handle exports, if it was killed */
		xgpub_ipc_reg_forget(pid);
		if (c)
			xgpub_sched_kick_drop(c->kick_fd);
		if (c)
			xgpub_child_cell_release(c);
		if (c && c->kind == XGPUB_CHILD_XEN && xen)
			xgpub_xen_child_exited(xen, pid);
		/* what it held is freed with it: no longer its guest's */
		if (c && c->st) {
			__atomic_store_n(&c->st->mem_used, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->st->pinned, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->st->grants, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&xgpub_wctl_of(c->st)->acct, 0,
					 __ATOMIC_RELEASE);
		}
		if (c && c->kind == XGPUB_CHILD_NET) {
			if (c->lane_fd > 2)
				close(c->lane_fd);
			if (c->st)
				__atomic_store_n(&c->st->lane_ready, 0,
						 __ATOMIC_RELEASE);
		}
		if (c)
			memset(c, 0, sizeof(*c));
	}
}

static const char *find_driver(void)
{
	for (int i = 0; default_drivers[i]; i++)
		if (access(default_drivers[i], R_OK) == 0)
			return default_drivers[i];
	return NULL;
}

/*
 * How many GPUs the driver sees, asked by a child process (the daemon
 * itself never initialises CUDA); -1 when it cannot tell.  *pageable
 * tells whether any of them lets kernels reach pageable host memory
 * (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: HMM or ATS).
 */
static int gpu_count(const char *driver_path, bool *pageable)
{
	int st = 0, n = -1;
	pid_t pid = fork();

	*pageable = false;
	if (pid == 0) {
		char msg[256];
		struct xgpub_driver *d = xgpub_driver_open(driver_path, msg,
							   sizeof(msg));
		int any = 0;

		if (!d || d->cuInit(0) || d->cuDeviceGetCount(&n) || n < 0)
			_exit(255);
		for (int i = 0; i < n; i++) {
			int v = 0;
			CUdevice dev;

			if (d->cuDeviceGet(&dev, i) == 0 &&
			    d->cuDeviceGetAttribute(
				    &v, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
				    dev) == 0 && v)
				any = 128;
		}
		_exit((n > 126 ? 126 : n) | any);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 255)
		return -1;
	*pageable = WEXITSTATUS(st) & 128;
	return WEXITSTATUS(st) & 127;
}

/*
 * Can the worker user open the NVIDIA device nodes?  Contexts made after
 * a worker dropped to it (a guest's cuCtxCreate) open them again.  One
 * line per node it cannot read and write.
 */
static void check_device_nodes(const struct xgpub_options *opt)
{
	glob_t g;

	if (!opt->drop_user || glob("/dev/nvidia*", 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;
		mode_t need;
		bool member;

		if (stat(g.gl_pathv[i], &st) || !S_ISCHR(st.st_mode))
			continue;
		member = st.st_gid == opt->worker_gid;
		for (int k = 0; k < opt->worker_ngroups; k++)
			member |= st.st_gid == opt->worker_groups[k];
		need = st.st_uid == opt->worker_uid ? S_IRUSR | S_IWUSR :
		       member			     ? S_IRGRP | S_IWGRP :
							S_IROTH | S_IWOTH;
		if ((st.st_mode & need) != need) {
			struct group *gr = getgrgid(st.st_gid);

			xgpub_err("%s (mode %03o, group %s): user %s cannot "
				  "open it; add it to that group, or contexts "
				  "a guest creates will fail", g.gl_pathv[i],
				  (unsigned int)(st.st_mode & 0777),
				  gr ? gr->gr_name : "?", opt->worker_user);
		}
	}
	globfree(&g);
}

/* fd (if >= 0) is watched for input at pfd[*n]: its index, or -1 */
static int watch_in(struct pollfd *pfd, int *n, int fd)
{
	if (fd < 0)
		return -1;
	pfd[*n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	return (*n)++;
}

int main(int argc, char **argv)
{
	struct xgpub_args a;
	struct xgpub_local_limits local_lim;
	int bfd = -1, mfd = -1, kfd = -1, cfd = -1, lfd = -1, nfd = -1, rc;
	int ngpus = -1;
	uint64_t sched_next = 0;
	uint64_t last_tick = 0;
	struct sigaction sa;
	struct xgpub_driver *probe;
	char msg[256];

	rc = xgpub_args_parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	local_lim.per_user = a.max_local_per_user;
	local_lim.pending = a.max_pending_per_user;
	if (a.use_xen && xgpub_xen_check())
		return 2;
	if (a.metrics_spec) {
		mfd = xgpub_metrics_open(a.metrics_spec);
		if (mfd < 0)
			return 2;
	}
	if (a.listen) {
		nfd = xgpub_net_open(a.listen, &a.tls);
		if (nfd < 0)
			return 2;
	}
	/* on stderr until the daemon detaches: errors before it are seen */
	xgpub_log_init("xen-gpubackd", false, a.verbose);
	if (!a.opt.driver_path)
		a.opt.driver_path = find_driver();
	if (!a.opt.driver_path) {
		xgpub_err("no CUDA driver found in the usual locations; name "
			  "it with --driver PATH");
		return 1;
	}
	/* check it loads now rather than in every worker; the daemon itself
	 * still never initialises CUDA */
	probe = xgpub_driver_open(a.opt.driver_path, msg, sizeof(msg));
	if (!probe) {
		xgpub_err("%s", msg);
		return 1;
	}
	xgpub_driver_close(probe);
	xgpub_info("host driver: %s", a.opt.driver_path);
	/* a context is charged to the quota: one below it leaves nothing */
	if (a.opt.quota && a.opt.quota <= a.opt.ctx_charge)
		xgpub_err("--quota-mb %llu is not above what a context costs "
			  "(%llu MiB, --ctx-charge-kb): each guest's primary "
			  "context takes all of it and no allocation fits",
			  (unsigned long long)(a.opt.quota >> 20),
			  (unsigned long long)(a.opt.ctx_charge >> 20));
	if (a.wuser_warn)
		xgpub_err("%s", a.wuser_warn);
	else if (a.opt.drop_user)
		xgpub_info("workers run as user %s (uid %u)%s",
			   a.opt.worker_user, (unsigned int)a.opt.worker_uid,
			   a.opt.seccomp ? " under a seccomp filter" : "");
	check_device_nodes(&a.opt);
	if (a.opt.remote_driver) {
		xgpub_info("workers keep the daemon's network namespace: their "
			   "driver reaches a backend on the network "
			   "(--remote-driver, %s)",
			   getenv("XGPU_SOCKET") ? getenv("XGPU_SOCKET") :
						   "XGPU_SOCKET not set");
	} else {
		int e = xgpub_children_netns_probe();

		if (e)
			xgpub_err("workers keep the daemon's network namespace "
				  "(unshare: %s): the host's abstract Unix "
				  "sockets stay within their reach",
				  strerror(-e));
		else
			xgpub_info("workers have a network namespace each");
	}
	{
		bool pageable;
		int n = gpu_count(a.opt.driver_path, &pageable);

		if (n >= 0 && a.opt.gpu >= n) {
			xgpub_err("--gpu %d: this host has %d GPU%s (0..%d)",
				  a.opt.gpu, n, n == 1 ? "" : "s", n - 1);
			return 2;
		}
		ngpus = n;
		/* a guest's kernel could dereference any address of its
		 * worker: other guests' data, the worker's own state */
		if (pageable && !a.allow_pageable) {
			xgpub_err("the driver lets kernels reach pageable host "
				  "memory (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_"
				  "ACCESS = 1, HMM or ATS): a guest's kernel "
				  "could read and write its worker's memory; "
				  "not serving (--allow-pageable-access to "
				  "serve anyway)");
			return 2;
		}
		if (pageable)
			xgpub_err("warning: the driver lets kernels reach "
				  "pageable host memory (CU_DEVICE_ATTRIBUTE_"
				  "PAGEABLE_MEMORY_ACCESS = 1) and "
				  "--allow-pageable-access is given: guests' "
				  "kernels can read and write their workers' "
				  "memory");
	}

	if (a.opt.max_data_pages < a.lim.max_data_pages)
		a.lim.max_data_pages = a.opt.max_data_pages;
	if (a.path) {
		lfd = xgpub_listen(a.path, a.mode, 0);
		if (lfd < 0)
			return 1;
	}
	if (!a.foreground)
		xgpub_log_init("xen-gpubackd", true, a.verbose);
	if (!a.foreground && daemon(0, 0) < 0) {
		xgpub_err("cannot daemonize: %s", strerror(errno));
		return 1;
	}
	if (a.pidfile) {
		FILE *f = fopen(a.pidfile, "w");

		if (f) {
			fprintf(f, "%d\n", getpid());
			fclose(f);
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (a.path)
		xgpub_info("listening on %s", a.path);
	if (a.listen)
		xgpub_info("listening on %s (TLS 1.3, %s)", a.listen,
			   a.tls.psk_file ? "pre-shared keys" : "certificates");
	xgpub_cgroup_start(a.cgroup_dir, &a.cglim);
	bfd = xgpub_broker_start();
	kfd = xgpub_sched_start(a.sched_policy);
	if (kfd == -2)
		return 1;
	xgpub_vcpu_start(a.use_xen, a.vcpu_on, a.boost_pct, a.boost_ms);
	/* before the Xen backend's first look: the rules say which domains
	 * get a device (a bad file: no rules, one line in the log) */
	xgpub_config_init(a.config_path, a.opt.gpu, a.opt.quota, ngpus,
			  strcmp(a.sched_policy, "off") != 0);
	xgpub_config_listen(xgpub_guest_rules_changed);
	xgpub_config_reload(msg, sizeof(msg));
	if (a.use_xen) {
		xen = xgpub_xen_start(&a.lim, &a.opt);
		if (!xen) {
			if (a.path)
				unlink(a.path);
			if (a.pidfile)
				unlink(a.pidfile);
			return 1;
		}
	}
	/* last: the hotplug script takes the control socket as "ready" */
	if (strcmp(a.ctl_path, "none")) {
		cfd = xgpub_ctl_open(a.ctl_path);
		if (cfd < 0) {
			if (a.path)
				unlink(a.path);
			xgpub_xen_stop(xen);
			return 1;
		}
	}

	while (!stop_requested) {
		struct pollfd pfd[7 + XGPUB_NET_SNIFF_MAX + XGPUB_LOCAL_HS_MAX];
		int n = 0, ilocal, ixen = -1, ictl, imet, inet, ibrk;
		int isniff = -1, ihs, nhs;
		uint64_t now = xgpub_now_ns(), wait_ns = 1000000000u;
		struct timespec ts;

		if (reload_requested) {
			reload_requested = 0;
			xgpub_config_reload(msg, sizeof(msg));
		}
		if (now - last_tick >= 1000000000u) {
			last_tick = now;
			xgpub_guests_tick(now);
		}
		if (child_exited) {
			child_exited = 0;
			reap_workers();
			if (xen)
				xgpub_xen_poll(xen);
		}
		ilocal = watch_in(pfd, &n, lfd);
		inet = watch_in(pfd, &n, nfd);
		if (xen && xgpub_xen_fd(xen) >= 0) {
			uint64_t due = xgpub_xen_due_ns(xen);

			ixen = watch_in(pfd, &n, xgpub_xen_fd(xen));
			/* events that wait for their look */
			if (due < wait_ns)
				wait_ns = due;
		} else if (xen) {
			static uint64_t last_look;

			if (now - last_look >= XGPUB_XEN_POLL_MS * 1000000ull) {
				last_look = now;
				xgpub_xen_poll(xen);
			}
			if (wait_ns > XGPUB_XEN_POLL_MS * 1000000ull)
				wait_ns = XGPUB_XEN_POLL_MS * 1000000ull;
		}
		ictl = watch_in(pfd, &n, cfd);
		imet = watch_in(pfd, &n, mfd);
		ibrk = watch_in(pfd, &n, bfd);
		if (watch_in(pfd, &n, kfd) >= 0) {
			if (now >= sched_next || child_exited)
				sched_next = xgpub_sched_run();
			now = xgpub_now_ns();
			if (sched_next <= now)
				wait_ns = 0;
			else if (sched_next - now < wait_ns)
				wait_ns = sched_next - now;
		}
		{
			/* local handshakes: those past their time go now */
			uint64_t w = xgpub_local_serve(NULL, 0, &a.opt,
						       &local_lim);

			if (w < wait_ns)
				wait_ns = w;
			ihs = n;
			nhs = xgpub_local_pollfds(pfd + n,
						  XGPUB_LOCAL_HS_MAX);
			n += nhs;
		}
		if (nfd >= 0) {
			/* network connections that have not said what they
			 * are: those past their time go now */
			uint64_t w = xgpub_net_sniff(NULL, 0, &a.opt,
						     a.max_net);

			if (w < wait_ns)
				wait_ns = w;
			isniff = n;
			n += xgpub_net_pollfds(pfd + n, XGPUB_NET_SNIFF_MAX);
		}
		ts.tv_sec = (time_t)(wait_ns / 1000000000u);
		ts.tv_nsec = (long)(wait_ns % 1000000000u);
		if (ppoll(pfd, (nfds_t)n, &ts, NULL) <= 0)
			continue;
		if (kfd >= 0)
			sched_next = 0;	/* a worker kicked: look now */
		if (ibrk >= 0 && (pfd[ibrk].revents & POLLIN))
			xgpub_broker_serve(bfd);
		if (imet >= 0 && (pfd[imet].revents & POLLIN))
			xgpub_metrics_serve(mfd);
		if (ictl >= 0 && pfd[ictl].revents)
			xgpub_ctl_accept();
		if (xen && ((ixen >= 0 && pfd[ixen].revents) ||
			    xgpub_xen_due_ns(xen) == 0))
			xgpub_xen_events(xen);
		if (nhs)
			xgpub_local_serve(pfd + ihs, nhs, &a.opt, &local_lim);
		if (isniff >= 0)
			xgpub_net_sniff(pfd + isniff, n - isniff, &a.opt,
					a.max_net);
		if (inet >= 0 && (pfd[inet].revents & POLLIN))
			xgpub_net_client(nfd);
		if (ilocal >= 0 && (pfd[ilocal].revents & POLLIN)) {
			int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (conn >= 0)
				xgpub_local_client(conn, &a.opt, &local_lim);
		}
	}
	xgpub_local_drop_waiting();
	xgpub_net_drop_waiting();
	xgpub_info("stopping");
	xgpub_sched_stop();
	xgpub_children_kill(SIGTERM);
	/* reap them for a moment: their cgroups go with them */
	for (int i = 0; i < 20 && xgpub_children_count() > 0; i++) {
		usleep(50000);
		reap_workers();
	}
	xgpub_xen_stop(xen);
	xgpub_ctl_close();
	if (a.path)
		unlink(a.path);
	if (a.pidfile)
		unlink(a.pidfile);
	if (lfd >= 0)
		close(lfd);
	return 0;
}
