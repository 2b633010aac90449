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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xgpub.h"

#define MAX_WORKERS 1024

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t child_exited;
static pid_t workers[MAX_WORKERS];
static uint32_t worker_ids[MAX_WORKERS];

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
"Usage: xen-gpubackd --local PATH [options]\n"
"Serve CUDA to xgpu guests (the local transport: processes and containers\n"
"on this host).\n"
"\n"
"  -l, --local PATH       listen on the Unix socket PATH\n"
"  -f, --foreground       stay in the foreground and log to stderr\n"
"  -d, --driver PATH      the host's CUDA driver (absolute path); default:\n"
"                         the first of the usual locations that loads\n"
"      --fake             serve the fake device (tests only, no GPU)\n"
"  -g, --gpu N            host GPU ordinal to give guests (default 0)\n"
"  -q, --quota-mb N       device memory each guest may allocate (0: no limit)\n"
"      --max-data-mb N    largest data area a guest may ask (default 256)\n"
"      --spin-us N        how long a worker polls before sleeping (2000)\n"
"  -m, --socket-mode MODE permissions of the socket (octal, default 0660)\n"
"  -p, --pidfile PATH     write the daemon's pid there\n"
"  -v, --verbose          log every failed call\n"
"  -h, --help\n");
}

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	else
		stop_requested = 1;
}

static void reap_workers(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		uint32_t id = 0;

		for (int i = 0; i < MAX_WORKERS; i++) {
			if (workers[i] == pid) {
				id = worker_ids[i];
				workers[i] = 0;
				break;
			}
		}
		if (WIFEXITED(status))
			xgpub_info("worker of client %u (pid %d) exited with "
				   "status %d", id, pid, WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			xgpub_err("worker of client %u (pid %d) killed by "
				  "signal %d", id, pid, WTERMSIG(status));
	}
}

static int add_worker(pid_t pid, uint32_t id)
{
	for (int i = 0; i < MAX_WORKERS; i++) {
		if (!workers[i]) {
			workers[i] = pid;
			worker_ids[i] = id;
			return 0;
		}
	}
	return -1;
}

static int listen_on(const char *path, mode_t mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		xgpub_err("socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	/* a stale socket of a dead daemon may go; a live one may not */
	probe = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa,
				  sizeof(sa)) == 0) {
		xgpub_err("another backend already listens on %s", path);
		close(probe);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, mode) < 0 || listen(fd, 64) < 0) {
		xgpub_err("cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static const char *find_driver(void)
{
	for (int i = 0; default_drivers[i]; i++)
		if (access(default_drivers[i], R_OK) == 0)
			return default_drivers[i];
	return NULL;
}

static void serve_client(int lfd, int conn, uint32_t id,
			 const struct xgpub_options *opt)
{
	struct xgpub_transport *t;
	char prefix[32];
	int code;

	close(lfd);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "xgpu-worker");
	/* a worker must not outlive the daemon that accounts for it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	snprintf(prefix, sizeof(prefix), "worker %u", id);
	xgpub_log_prefix(prefix);
	if (xgpub_local_accept(conn, id, opt->max_data_pages, &t)) {
		close(conn);
		_exit(3);
	}
	code = xgpub_worker_run(t, opt);
	_exit(code);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "driver", required_argument, NULL, 'd' },
		{ "fake", no_argument, NULL, 'F' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "quota-mb", required_argument, NULL, 'q' },
		{ "max-data-mb", required_argument, NULL, 'D' },
		{ "spin-us", required_argument, NULL, 'S' },
		{ "socket-mode", required_argument, NULL, 'm' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct xgpub_options opt = {
		.gpu = 0,
		.max_data_pages = 256u * 256u,
		.spin_us = 2000,
	};
	const char *path = NULL, *pidfile = NULL;
	bool foreground = false, fake = false;
	mode_t mode = 0660;
	int verbose = 0, c, lfd;
	uint32_t next_id = 0;
	struct sigaction sa;

	while ((c = getopt_long(argc, argv, "l:fd:g:q:m:p:vh", lopts,
				NULL)) != -1) {
		char *end = NULL;

		switch (c) {
		case 'l':
			path = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'd':
			opt.driver_path = optarg;
			break;
		case 'F':
			fake = true;
			break;
		case 'g':
			opt.gpu = (int)strtol(optarg, &end, 10);
			break;
		case 'q':
			opt.quota = strtoull(optarg, &end, 10) << 20;
			break;
		case 'D':
			opt.max_data_pages =
				(uint32_t)strtoul(optarg, &end, 10) * 256u;
			if (opt.max_data_pages > XGPUIF_LOCAL_MAX_DATA_PAGES ||
			    opt.max_data_pages < 16) {
				fprintf(stderr, "xen-gpubackd: --max-data-mb "
					"must be 1..1024\n");
				return 2;
			}
			break;
		case 'S':
			opt.spin_us = (unsigned int)strtoul(optarg, &end, 10);
			break;
		case 'm':
			mode = (mode_t)strtoul(optarg, &end, 8);
			break;
		case 'p':
			pidfile = optarg;
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
		if (end && *end) {
			fprintf(stderr, "xen-gpubackd: bad number: %s\n",
				optarg);
			return 2;
		}
	}
	if (!path || optind != argc) {
		usage(stderr);
		return 2;
	}
	xgpub_log_init("xen-gpubackd", !foreground, verbose);
	if (fake) {
		opt.driver_path = NULL;
		xgpub_info("serving the FAKE device (for tests; no GPU is "
			   "used)");
	} else {
		char msg[256];
		struct xgpub_driver *probe;

		if (!opt.driver_path)
			opt.driver_path = find_driver();
		if (!opt.driver_path) {
			xgpub_err("no CUDA driver found; name it with --driver "
				  "PATH (or --fake for tests)");
			return 1;
		}
		/* check it loads now rather than in every worker; the daemon
		 * itself still never initialises CUDA */
		probe = xgpub_driver_open(opt.driver_path, msg, sizeof(msg));
		if (!probe) {
			xgpub_err("%s", msg);
			return 1;
		}
		xgpub_info("host driver: %s", opt.driver_path);
	}

	lfd = listen_on(path, mode);
	if (lfd < 0)
		return 1;
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
	signal(SIGPIPE, SIG_IGN);
	xgpub_info("listening on %s", path);

	while (!stop_requested) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int conn;
		pid_t pid;

		if (child_exited) {
			child_exited = 0;
			reap_workers();
		}
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		next_id++;
		pid = fork();
		if (pid == 0)
			serve_client(lfd, conn, next_id, &opt);
		close(conn);
		if (pid < 0) {
			xgpub_err("cannot fork a worker: %s", strerror(errno));
			continue;
		}
		if (add_worker(pid, next_id))
			xgpub_err("too many workers to track");
		xgpub_info("client %u: worker pid %d", next_id, pid);
	}
	xgpub_info("stopping");
	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i])
			kill(workers[i], SIGTERM);
	unlink(path);
	if (pidfile)
		unlink(pidfile);
	close(lfd);
	return 0;
}
