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

#include "xgpub_broker.h"
#include "xgpub_cgroup.h"
#include "xgpub_daemon.h"
#include "xgpub_worker.h"
#include "xgpub_xen.h"
#include "xgpub_ctl.h"
#include "xgpub_guest.h"
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

static void usage(FILE *f)
{
	fprintf(f,
"Usage: xen-gpubackd [--xen] [--local PATH] [options]\n"
"Serve CUDA to xgpu guests: Xen domains given an xgpu device (--xen, in\n"
"Dom0) and/or processes and containers on this host (--local).\n"
"\n"
"  -x, --xen              serve the xenbus backend of device type xgpu\n"
"  -l, --local PATH       listen on the Unix socket PATH\n"
"  -s, --sched POLICY     GPU scheduler: credit (default), fifo, off\n"
"      --config FILE      per-domain settings and devices, xgpu.conf(5)\n"
"                         (default " XGPU_CONFIG_DEFAULT "; read again on\n"
"                         SIGHUP or `xgpu config reload`; missing: no rules)\n"
"      --gpu-limit-ms N   end a guest whose GPU work (one kernel) runs\n"
"                         longer than N ms: it gets CUDA_ERROR_LAUNCH_TIMEOUT\n"
"                         (default 0: no limit; needs the scheduler)\n"
"      --metrics IP:PORT  serve per-guest figures in Prometheus' format\n"
"                         on this TCP address (default: off)\n"
"  -c, --control PATH     control socket for the xgpu CLI (root only;\n"
"                         default " XGPU_CTL_PATH_DEFAULT ", \"none\": off)\n"
"      --max-channels N   channels (processes) per Xen device (default 16)\n"
"      --max-local-per-user N  local clients (processes) per user\n"
"                         (default 64, 0: no limit but the table's 1024)\n"
"      --vcpu-coord on|off  keep Xen VCPU weights in step with GPU weights\n"
"                         and boost a domain whose GPU work completed\n"
"                         (default on with --xen and the scheduler on)\n"
"      --vcpu-boost PCT[:MS] boosted VCPU weight, %% of its target, and how\n"
"                         long (default 200:10; 100: no boost)\n"
"  -f, --foreground       stay in the foreground and log to stderr\n"
"  -d, --driver PATH      the host's CUDA driver (absolute path); default:\n"
"                         the first of the usual locations that loads\n"
"  -g, --gpu N            host GPU ordinal to give guests (default 0)\n"
"  -q, --quota-mb N       device memory each guest may allocate (0: no limit)\n"
"      --pinned-mb N      host memory each guest may pin: pinned and\n"
"                         registered memory (default 65536; 0: no limit)\n"
"      --ctx-charge-kb N  device memory a context costs the guest's quota,\n"
"                         besides its limits (default 536576: 524 MiB)\n"
"      --images-mb N      module image bytes each guest may hold, all its\n"
"                         processes together (default 4096)\n"
"      --max-data-mb N    largest data area a guest may ask (default 256)\n"
"      --spin-us N        the longest a worker polls before sleeping, us\n"
"                         (2000; adapted below it to the guest's gaps)\n"
"      --jit-cache DIR    the driver's JIT cache, a folder per guest under\n"
"                         DIR (default /var/cache/xgpu/jit; none: off)\n"
"  -m, --socket-mode MODE permissions of the socket (octal, default 0660)\n"
"\n"
"Workers (one process per guest channel) are sandboxed once set up:\n"
"      --worker-user USER run them as USER (default: xgpu if that user\n"
"                         exists, else root; root: keep root)\n"
"      --no-seccomp       no seccomp filter in the workers\n"
"      --allow-pageable-access  serve a GPU whose driver lets kernels reach\n"
"                         pageable host memory (HMM, ATS: a guest's kernel\n"
"                         could then read and write its worker's memory);\n"
"                         without it the daemon refuses to start there\n"
"      --cgroup DIR       a cgroup (v2) per worker under DIR (default\n"
"                         /sys/fs/cgroup/xgpu; none: off)\n"
"      --worker-mem-mb N  memory.max of a worker (default 16384; 0: none)\n"
"      --worker-pids N    pids.max of a worker (default 512; 0: none)\n"
"      --worker-cpu-pct N cpu.max of a worker, %% of one CPU (default 0:\n"
"                         none)\n"
"  -p, --pidfile PATH     write the daemon's pid there\n"
"  -v, --verbose          log every failed call\n"
"  -h, --help\n");
}

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
		if (c && c->kind == XGPUB_CHILD_XEN && xen)
			xgpub_xen_child_exited(xen, pid);
		/* what it held is freed with it: no longer its guest's */
		if (c && c->st) {
			__atomic_store_n(&c->st->mem_used, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->st->pinned, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&xgpub_wctl_of(c->st)->acct, 0,
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
 * Local clients per user (SO_PEERCRED uid): at most PENDING_PER_USER of
 * them still shaking hands (their worker is forked, the channel not up:
 * idle connections would otherwise fill the table of workers) and at most
 * max_local_per_user workers in all.  A connection past the first bound
 * waits, without a worker, until one of that user's handshakes ends (a
 * burst of processes starting at once, a pool of 64, is served in turn),
 * up to DEFER_PER_USER connections for DEFER_NS each; one past the second
 * bound, or past those, is closed at once, with one log line per second
 * at most.
 */
#define PENDING_PER_USER	8
#define DEFER_PER_USER		128
#define DEFER_MAX		512
#define DEFER_NS		60000000000ull	/* 60 s */

enum admit { ADMIT, ADMIT_LATER, ADMIT_NEVER };

struct user_count {
	uint32_t uid;
	unsigned int pending, all;
};

static void count_user(struct xgpub_child *c, void *arg)
{
	struct user_count *u = arg;

	if (c->kind != XGPUB_CHILD_LOCAL || c->peer_uid != u->uid)
		return;
	u->all++;
	if (!c->st || !__atomic_load_n(&c->st->connected, __ATOMIC_ACQUIRE))
		u->pending++;
}

static void refuse_log(uint32_t uid, unsigned int n, const char *why)
{
	static uint64_t last_log;
	uint64_t now = xgpub_now_ns();

	if (now - last_log >= 1000000000u) {
		xgpub_err("refusing a local connection of uid %u: %u %s", uid,
			  n, why);
		last_log = now;
	}
}

/* may another local client of this uid have a worker now? */
static enum admit local_admit(uint32_t uid, unsigned int max_per_user)
{
	struct user_count u = { uid, 0, 0 };

	xgpub_children_each(count_user, &u);
	if (max_per_user && u.all >= max_per_user) {
		refuse_log(uid, u.all, "clients (--max-local-per-user)");
		return ADMIT_NEVER;
	}
	return u.pending >= PENDING_PER_USER ? ADMIT_LATER : ADMIT;
}

/* connections waiting for a handshake of their user to end, oldest first */
static struct deferred {
	int conn;
	uint32_t uid;
	uint64_t since;
} waitq[DEFER_MAX];
static unsigned int nwait;

/* keep conn for later; false: no room (the caller closes it) */
static bool defer_conn(int conn, uint32_t uid)
{
	unsigned int mine = 0;

	for (unsigned int i = 0; i < nwait; i++)
		mine += waitq[i].uid == uid;
	if (nwait >= DEFER_MAX || mine >= DEFER_PER_USER) {
		refuse_log(uid, mine, "connections waiting for a handshake");
		return false;
	}
	waitq[nwait++] = (struct deferred){ conn, uid, xgpub_now_ns() };
	return true;
}

struct local_arg {
	int conn;
	uint32_t id;
	const struct xgpub_options *opt;
};

static int serve_client(void *p)
{
	struct local_arg *a = p;
	struct xgpub_transport *t;

	if (xgpub_local_accept(a->conn, a->id, a->opt->max_data_pages, &t)) {
		close(a->conn);
		return 3;
	}
	return xgpub_worker_run(t, a->opt);
}

static uint32_t next_id;

/* a worker for the local connection conn of uid (conn is closed here) */
static void spawn_local(int conn, uint32_t uid,
			const struct xgpub_options *opt)
{
	struct xgpub_child info;
	struct local_arg a;
	pid_t pid;

	next_id++;
	memset(&info, 0, sizeof(info));
	info.kind = XGPUB_CHILD_LOCAL;
	info.client_id = next_id;
	info.peer_uid = uid;
	a = (struct local_arg){ conn, next_id, opt };
	pid = xgpub_spawn(&info, conn, serve_client, &a);
	close(conn);
	if (pid > 0)
		xgpub_info("client %u: worker pid %d", next_id, pid);
}

/* has the client of a waiting connection hung up? */
static bool gone(int conn)
{
	struct pollfd p = { .fd = conn, .events = POLLIN };
	char b;

	if (poll(&p, 1, 0) != 1)
		return false;
	return (p.revents & (POLLHUP | POLLERR)) ||
	       recv(conn, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/*
 * Serve the waiting connections whose user may have a worker now, in the
 * order they came; drop those that waited too long.  Returns how soon to
 * look again (ns), or UINT64_MAX with none waiting.
 */
static uint64_t run_waitq(const struct xgpub_options *opt,
			  unsigned int max_per_user)
{
	uint64_t now = xgpub_now_ns();
	unsigned int i = 0, j;

	while (i < nwait) {
		struct deferred d = waitq[i];
		enum admit how = ADMIT_NEVER;

		if (gone(d.conn))
			how = ADMIT_NEVER;	/* it gave up waiting */
		else if (now - d.since < DEFER_NS)
			how = local_admit(d.uid, max_per_user);
		else
			refuse_log(d.uid, 1, "connection waited 60 s for a "
				   "handshake slot");
		if (how == ADMIT_LATER) {
			i++;
			continue;
		}
		for (j = i + 1; j < nwait; j++)
			waitq[j - 1] = waitq[j];
		nwait--;
		if (how == ADMIT)
			spawn_local(d.conn, d.uid, opt);
		else
			close(d.conn);
	}
	return nwait ? 5000000u : UINT64_MAX;	/* handshakes end unseen */
}

static const struct option lopts[] = {
	{ "local", required_argument, NULL, 'l' },
	{ "xen", no_argument, NULL, 'x' },
	{ "control", required_argument, NULL, 'c' },
	{ "sched", required_argument, NULL, 's' },
	{ "gpu-limit-ms", required_argument, NULL, 'L' },
	{ "config", required_argument, NULL, 'F' },
	{ "max-channels", required_argument, NULL, 'C' },
	{ "max-local-per-user", required_argument, NULL, 'U' },
	{ "vcpu-coord", required_argument, NULL, 'V' },
	{ "vcpu-boost", required_argument, NULL, 'B' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "driver", required_argument, NULL, 'd' },
	{ "gpu", required_argument, NULL, 'g' },
	{ "quota-mb", required_argument, NULL, 'q' },
	{ "max-data-mb", required_argument, NULL, 'D' },
	{ "pinned-mb", required_argument, NULL, 'P' },
	{ "ctx-charge-kb", required_argument, NULL, 'X' },
	{ "images-mb", required_argument, NULL, 'Y' },
	{ "spin-us", required_argument, NULL, 'S' },
	{ "jit-cache", required_argument, NULL, 'J' },
	{ "metrics", required_argument, NULL, 'M' },
	{ "socket-mode", required_argument, NULL, 'm' },
	{ "pidfile", required_argument, NULL, 'p' },
	{ "worker-user", required_argument, NULL, 'W' },
	{ "no-seccomp", no_argument, NULL, 'N' },
	{ "allow-pageable-access", no_argument, NULL, 'A' },
	{ "cgroup", required_argument, NULL, 'G' },
	{ "worker-mem-mb", required_argument, NULL, 'K' },
	{ "worker-pids", required_argument, NULL, 'I' },
	{ "worker-cpu-pct", required_argument, NULL, 'R' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * A whole number option in [lo, hi]: 0, or one line naming the option and
 * the accepted range, and -1 (the caller exits 2).
 */
static int num_opt(int c, const char *arg, uint64_t lo, uint64_t hi,
		   uint64_t *out)
{
	const char *name = "?";
	unsigned long long v;
	char *end = NULL;

	for (const struct option *o = lopts; o->name; o++)
		if (o->val == c)
			name = o->name;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *arg == '-' || *arg == '+' || *end || errno ||
	    v < lo || v > hi) {
		fprintf(stderr, "xen-gpubackd: --%s: '%s' is not a whole "
			"number from %llu to %llu\n", name, arg,
			(unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
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
 * The worker user: name, or the default (xgpu if it exists, else root).
 * Fills opt; 0, or -1 after one line on stderr (the caller exits 2).
 * *warn gets a line for the log when the default falls back to root.
 */
static int worker_user(const char *name, struct xgpub_options *opt,
		       const char **warn)
{
	static gid_t groups_buf[256];
	const char *want = name ? name : "xgpu";
	struct passwd *pw = getpwnam(want);
	int n = (int)(sizeof(groups_buf) / sizeof(groups_buf[0]));

	*warn = NULL;
	if (name && !strcmp(name, "root"))
		return 0;
	if (!pw) {
		if (name) {
			fprintf(stderr, "xen-gpubackd: --worker-user: no user "
				"'%s'\n", name);
			return -1;
		}
		*warn = "no user xgpu: workers run as root (create the "
			"user, or say --worker-user root)";
		return 0;
	}
	if (pw->pw_uid == 0)
		return 0;
	if (geteuid() != 0) {
		if (pw->pw_uid == geteuid())
			return 0;
		if (!name)
			return 0;	/* not root: workers run as we do */
		fprintf(stderr, "xen-gpubackd: --worker-user %s: the daemon "
			"must run as root to start workers as another user\n",
			name);
		return -1;
	}
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups_buf, &n) < 0) {
		fprintf(stderr, "xen-gpubackd: --worker-user %s: more than "
			"%d groups\n", want, n);
		return -1;
	}
	opt->drop_user = true;
	opt->worker_uid = pw->pw_uid;
	opt->worker_gid = pw->pw_gid;
	opt->worker_groups = groups_buf;
	opt->worker_ngroups = n;
	opt->worker_user = strdup(pw->pw_name);
	return opt->worker_user ? 0 : -1;
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

int main(int argc, char **argv)
{
	struct xgpub_options opt = {
		.gpu = 0,
		.max_data_pages = 256u * 256u,
		.pin_quota = 64ull << 30,
		.ctx_charge = XGPUB_CTX_CHARGE_DEFAULT,
		.images_max = XGPUB_IMAGES_MAX,
		.spin_us = 2000,
		.jit_cache = "/var/cache/xgpu/jit",
		.seccomp = true,
	};
	const char *wuser = NULL, *wuser_warn = NULL;
	const char *cgroup_dir = "/sys/fs/cgroup/xgpu";
	struct xgpub_cgroup_limits cglim = {
		.mem_bytes = 16384ull << 20,
		.pids = 512,
	};
	int bfd = -1;
	const char *path = NULL, *pidfile = NULL;
	const char *config_path = XGPU_CONFIG_DEFAULT;
	int ngpus = -1;
	const char *ctl_path = XGPU_CTL_PATH_DEFAULT;
	const char *sched_policy = "credit";
	unsigned int max_local_per_user = 64;
	const char *metrics_spec = NULL;
	int mfd = -1;
	int kfd = -1;
	uint64_t sched_next = 0;
	bool vcpu_on = true;
	unsigned int boost_pct = 0, boost_ms = 0;
	int cfd = -1;
	uint64_t last_tick = 0;
	bool foreground = false, use_xen = false;
	struct xgpub_xen_limits lim = {
		.max_ring_order = XGPUIF_MAX_RING_ORDER,
		.max_data_pages = XGPUIF_XEN_MAX_DATA_PAGES,
		.max_channels = 16,
	};
	mode_t mode = 0660;
	int verbose = 0, c, lfd = -1;
	struct sigaction sa;
	struct xgpub_driver *probe;
	bool allow_pageable = false;
	char msg[256];

	while ((c = getopt_long(argc, argv, "xl:c:s:fd:g:q:m:p:vh", lopts,
				NULL)) != -1) {
		char *end = NULL;
		uint64_t v = 0;

		switch (c) {
		case 'l':
			path = optarg;
			break;
		case 'x':
			use_xen = true;
			break;
		case 'c':
			ctl_path = optarg;
			break;
		case 's':
			if (strcmp(optarg, "credit") && strcmp(optarg, "fifo") &&
			    strcmp(optarg, "off")) {
				fprintf(stderr, "xen-gpubackd: --sched: '%s' is "
					"not one of credit, fifo, off\n", optarg);
				return 2;
			}
			sched_policy = optarg;
			break;
		case 'C':
			if (num_opt(c, optarg, 1, XGPUIF_XEN_MAX_CHANNELS, &v))
				return 2;
			lim.max_channels = (uint32_t)v;
			break;
		case 'U':
			if (num_opt(c, optarg, 0, 1024, &v))
				return 2;
			max_local_per_user = (unsigned int)v;
			break;
		case 'V':
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off")) {
				vcpu_on = !strcmp(optarg, "on");
				break;
			}
			fprintf(stderr, "xen-gpubackd: --vcpu-coord on|off\n");
			return 2;
		case 'B':
			if (xgpub_vcpu_parse_boost(optarg, &boost_pct,
						   &boost_ms)) {
				fprintf(stderr, "xen-gpubackd: --vcpu-boost "
					"%s\n", XGPUB_VCPU_BOOST_USAGE);
				return 2;
			}
			break;
		case 'f':
			foreground = true;
			break;
		case 'd':
			opt.driver_path = optarg;
			break;
		case 'g':
			if (num_opt(c, optarg, 0, 63, &v))
				return 2;
			opt.gpu = (int)v;
			break;
		case 'q':
			/* at most 16 TiB, in MiB */
			if (num_opt(c, optarg, 0, 16u << 20, &v))
				return 2;
			opt.quota = v << 20;
			break;
		case 'P':
			if (num_opt(c, optarg, 0, 16u << 20, &v))
				return 2;
			opt.pin_quota = v << 20;
			break;
		case 'X':
			if (num_opt(c, optarg, 0, 64u << 20, &v))
				return 2;
			opt.ctx_charge = v << 10;
			break;
		case 'Y':
			if (num_opt(c, optarg, 1, 1u << 20, &v))
				return 2;
			opt.images_max = v << 20;
			break;
		case 'D':
			if (num_opt(c, optarg, 1,
				    XGPUIF_LOCAL_MAX_DATA_PAGES / 256u, &v))
				return 2;
			opt.max_data_pages = (uint32_t)v * 256u;
			break;
		case 'S':
			if (num_opt(c, optarg, 0, 1000000, &v))
				return 2;
			opt.spin_us = (unsigned int)v;
			break;
		case 'M':
			metrics_spec = optarg;
			break;
		case 'J':
			if (strcmp(optarg, "none") && optarg[0] != '/') {
				fprintf(stderr, "xen-gpubackd: --jit-cache "
					"must be an absolute path or none\n");
				return 2;
			}
			opt.jit_cache = optarg;
			break;
		case 'F':
			/* read again after daemon() went to / */
			if (optarg[0] != '/') {
				static char abs_path[4096];
				char cwd[2048];

				if (!getcwd(cwd, sizeof(cwd)) ||
				    snprintf(abs_path, sizeof(abs_path), "%s/%s",
					     cwd, optarg) >=
				    (int)sizeof(abs_path)) {
					fprintf(stderr, "xen-gpubackd: --config: "
						"cannot make '%s' absolute\n",
						optarg);
					return 2;
				}
				config_path = abs_path;
			} else {
				config_path = optarg;
			}
			break;
		case 'L':
			if (num_opt(c, optarg, 0, 86400000, &v))
				return 2;
			xgpub_gpu_limit_ns = v * 1000000ull;
			break;
		case 'm':
			mode = (mode_t)strtoul(optarg, &end, 8);
			if (!*optarg || *end || mode > 0777) {
				fprintf(stderr, "xen-gpubackd: --socket-mode: "
					"'%s' is not an octal mode from 0 to "
					"0777\n", optarg);
				return 2;
			}
			end = NULL;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'W':
			wuser = optarg;
			break;
		case 'N':
			opt.seccomp = false;
			break;
		case 'A':
			allow_pageable = true;
			break;
		case 'G':
			if (strcmp(optarg, "none") && optarg[0] != '/') {
				fprintf(stderr, "xen-gpubackd: --cgroup must "
					"be an absolute path or none\n");
				return 2;
			}
			cgroup_dir = optarg;
			break;
		case 'K':
			if (num_opt(c, optarg, 0, 16u << 20, &v))
				return 2;
			cglim.mem_bytes = v << 20;
			break;
		case 'I':
			if (num_opt(c, optarg, 0, 4194304, &v))
				return 2;
			cglim.pids = (uint32_t)v;
			break;
		case 'R':
			if (num_opt(c, optarg, 0, 100000, &v))
				return 2;
			cglim.cpu_pct = (uint32_t)v;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}

	}
	if ((!path && !use_xen) || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (xgpub_gpu_limit_ns && !strcmp(sched_policy, "off")) {
		fprintf(stderr, "xen-gpubackd: --gpu-limit-ms needs the GPU "
			"scheduler (it measures the work in flight)\n");
		return 2;
	}
	/* what can be checked before detaching, on stderr with status 2 */
	if (worker_user(wuser, &opt, &wuser_warn))
		return 2;
	if (use_xen && xgpub_xen_check())
		return 2;
	if (metrics_spec) {
		mfd = xgpub_metrics_open(metrics_spec);
		if (mfd < 0)
			return 2;
	}
	/* on stderr until the daemon detaches: errors before it are seen */
	xgpub_log_init("xen-gpubackd", false, verbose);
	if (!opt.driver_path)
		opt.driver_path = find_driver();
	if (!opt.driver_path) {
		xgpub_err("no CUDA driver found in the usual locations; name "
			  "it with --driver PATH");
		return 1;
	}
	/* check it loads now rather than in every worker; the daemon itself
	 * still never initialises CUDA */
	probe = xgpub_driver_open(opt.driver_path, msg, sizeof(msg));
	if (!probe) {
		xgpub_err("%s", msg);
		return 1;
	}
	xgpub_driver_close(probe);
	xgpub_info("host driver: %s", opt.driver_path);
	/* a context is charged to the quota: one below it leaves nothing */
	if (opt.quota && opt.quota <= opt.ctx_charge)
		xgpub_err("--quota-mb %llu is not above what a context costs "
			  "(%llu MiB, --ctx-charge-kb): each guest's primary "
			  "context takes all of it and no allocation fits",
			  (unsigned long long)(opt.quota >> 20),
			  (unsigned long long)(opt.ctx_charge >> 20));
	if (wuser_warn)
		xgpub_err("%s", wuser_warn);
	else if (opt.drop_user)
		xgpub_info("workers run as user %s (uid %u)%s",
			   opt.worker_user, (unsigned int)opt.worker_uid,
			   opt.seccomp ? " under a seccomp filter" : "");
	check_device_nodes(&opt);
	{
		bool pageable;
		int n = gpu_count(opt.driver_path, &pageable);

		if (n >= 0 && opt.gpu >= n) {
			xgpub_err("--gpu %d: this host has %d GPU%s (0..%d)",
				  opt.gpu, n, n == 1 ? "" : "s", n - 1);
			return 2;
		}
		ngpus = n;
		/* a guest's kernel could dereference any address of its
		 * worker: other guests' data, the worker's own state */
		if (pageable && !allow_pageable) {
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

	if (opt.max_data_pages < lim.max_data_pages)
		lim.max_data_pages = opt.max_data_pages;
	if (path) {
		lfd = xgpub_listen(path, mode, 0);
		if (lfd < 0)
			return 1;
	}
	if (!foreground)
		xgpub_log_init("xen-gpubackd", true, verbose);
	if (!foreground && daemon(0, 0) < 0) {
		xgpub_err("cannot daemonize: %s", strerror(errno));
		return 1;
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

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
	if (path)
		xgpub_info("listening on %s", path);
	xgpub_cgroup_start(cgroup_dir, &cglim);
	bfd = xgpub_broker_start();
	kfd = xgpub_sched_start(sched_policy);
	if (kfd == -2)
		return 1;
	xgpub_vcpu_start(use_xen, vcpu_on, boost_pct, boost_ms);
	/* before the Xen backend's first look: the rules say which domains
	 * get a device (a bad file: no rules, one line in the log) */
	xgpub_config_init(config_path, opt.gpu, opt.quota, ngpus,
			  strcmp(sched_policy, "off") != 0);
	xgpub_config_listen(xgpub_guest_rules_changed);
	xgpub_config_reload(msg, sizeof(msg));
	if (use_xen) {
		xen = xgpub_xen_start(&lim, &opt);
		if (!xen) {
			if (path)
				unlink(path);
			if (pidfile)
				unlink(pidfile);
			return 1;
		}
	}
	/* last: the hotplug script takes the control socket as "ready" */
	if (strcmp(ctl_path, "none")) {
		cfd = xgpub_ctl_open(ctl_path);
		if (cfd < 0) {
			if (path)
				unlink(path);
			xgpub_xen_stop(xen);
			return 1;
		}
	}

	while (!stop_requested) {
		struct pollfd pfd[6];
		int n = 0, ilocal = -1, ixen = -1, ictl = -1, imet = -1;
		int ibrk = -1;
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
		if (lfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
			ilocal = n++;
		}
		if (xen && xgpub_xen_fd(xen) >= 0) {
			pfd[n] = (struct pollfd){ .fd = xgpub_xen_fd(xen),
						  .events = POLLIN };
			ixen = n++;
		} else if (xen) {
			static uint64_t last_look;

			if (now - last_look >= XGPUB_XEN_POLL_MS * 1000000ull) {
				last_look = now;
				xgpub_xen_poll(xen);
			}
			if (wait_ns > XGPUB_XEN_POLL_MS * 1000000ull)
				wait_ns = XGPUB_XEN_POLL_MS * 1000000ull;
		}
		if (cfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = cfd, .events = POLLIN };
			ictl = n++;
		}
		if (mfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = mfd, .events = POLLIN };
			imet = n++;
		}
		if (bfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = bfd, .events = POLLIN };
			ibrk = n++;
		}
		if (kfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = kfd, .events = POLLIN };
			n++;
			if (now >= sched_next || child_exited)
				sched_next = xgpub_sched_run();
			now = xgpub_now_ns();
			if (sched_next <= now)
				wait_ns = 0;
			else if (sched_next - now < wait_ns)
				wait_ns = sched_next - now;
		}
		if (nwait) {
			uint64_t w = run_waitq(&opt, max_local_per_user);

			if (w < wait_ns)
				wait_ns = w;
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
		if (ixen >= 0 && pfd[ixen].revents)
			xgpub_xen_poll(xen);
		if (ilocal >= 0 && (pfd[ilocal].revents & POLLIN)) {
			int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			struct ucred cr;
			socklen_t crl = sizeof(cr);

			if (conn < 0)
				continue;
			if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr,
				       &crl) < 0)
				cr.uid = (uid_t)-1;
			switch (local_admit((uint32_t)cr.uid,
					    max_local_per_user)) {
			case ADMIT:
				spawn_local(conn, (uint32_t)cr.uid, &opt);
				break;
			case ADMIT_LATER:
				if (!defer_conn(conn, (uint32_t)cr.uid))
					close(conn);
				break;
			case ADMIT_NEVER:
				close(conn);
				break;
			}
		}
	}
	for (unsigned int i = 0; i < nwait; i++)
		close(waitq[i].conn);
	nwait = 0;
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
	if (path)
		unlink(path);
	if (pidfile)
		unlink(pidfile);
	if (lfd >= 0)
		close(lfd);
	return 0;
}
