// SPDX-License-Identifier: MIT
/*
 * xgpub_args.c: the daemon's command line (xgpub_args.h): the usage text,
 * the options and their checks, and the worker user they name.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpuif.h"
#include "xgpu_ctl.h"
#include "xgpub_args.h"
#include "xgpub_config.h"
#include "xgpub_local_clients.h"
#include "xgpub_sched_glue.h"
#include "xgpub_vcpu_glue.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: xen-gpubackd [--xen] [--local PATH] [--listen tcp:ADDR:PORT] [options]\n"
"Serve CUDA to xgpu guests: Xen domains given an xgpu device (--xen, in\n"
"Dom0), processes and containers on this host (--local) and/or programs\n"
"on other hosts (--listen).\n"
"\n"
"  -x, --xen              serve the xenbus backend of device type xgpu\n"
"  -l, --local PATH       listen on the Unix socket PATH\n"
"      --listen tcp:ADDR:PORT  serve guests over the network, TLS 1.3 only\n"
"                         (e.g. tcp:0.0.0.0:7400; needs --tls-psk or the\n"
"                         three --tls-cert, --tls-key, --tls-ca)\n"
"      --tls-psk FILE     pre-shared keys, \"IDENTITY HEXKEY\" per line (mode\n"
"                         0600 or stricter); the identity is the guest's key\n"
"      --tls-cert FILE, --tls-key FILE, --tls-ca FILE  certificates: ours,\n"
"                         our key (0600), the CA of the clients' (their\n"
"                         subject CN is the guest's key)\n"
"      --max-net N        network clients at once (default 64, 0: no limit)\n"
"      --net-lanes N      more TLS connections a network client may open\n"
"                         for its large copies, in parallel (default 4,\n"
"                         at most 16; 0: one connection per channel)\n"
"      --remote-driver    the --driver is xgpu's own libcuda.so.1, reaching\n"
"                         a GPU host's daemon on the network (XGPU_SOCKET=\n"
"                         tcp://HOST:PORT and XGPU_TLS_* in this daemon's\n"
"                         environment): workers keep the network namespace\n"
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
"      --grant-mb N       granted pages all Xen channels may keep mapped\n"
"                         at once, in MiB (default 256, half of a PV\n"
"                         Dom0's default maptrack; 0: no limit)\n"
"      --domain-grant-mb N  granted pages one domain's channels may keep\n"
"                         mapped (default 128; grant-mb=N in its rule or\n"
"                         caps; 0: only --grant-mb)\n"
"      --max-local-per-user N  local clients (processes) per user\n"
"                         (default 64, 0: no limit but the table's 1024)\n"
"      --max-pending-per-user N  local clients of one user shaking hands\n"
"                         at once (the daemon's, 2 s each; default 8, at\n"
"                         most 256); more wait their turn\n"
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

static const struct option lopts[] = {
	{ "local", required_argument, NULL, 'l' },
	{ "listen", required_argument, NULL, 'T' },
	{ "tls-psk", required_argument, NULL, 'k' },
	{ "tls-cert", required_argument, NULL, 'e' },
	{ "tls-key", required_argument, NULL, 'y' },
	{ "tls-ca", required_argument, NULL, 'a' },
	{ "max-net", required_argument, NULL, 'n' },
	{ "remote-driver", no_argument, NULL, 'O' },
	{ "net-lanes", required_argument, NULL, 'H' },
	{ "xen", no_argument, NULL, 'x' },
	{ "control", required_argument, NULL, 'c' },
	{ "sched", required_argument, NULL, 's' },
	{ "gpu-limit-ms", required_argument, NULL, 'L' },
	{ "config", required_argument, NULL, 'F' },
	{ "max-channels", required_argument, NULL, 'C' },
	{ "grant-mb", required_argument, NULL, 'Z' },
	{ "max-local-per-user", required_argument, NULL, 'U' },
	{ "max-pending-per-user", required_argument, NULL, 'Q' },
	{ "domain-grant-mb", required_argument, NULL, 'E' },
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

/* the long name of option c */
static const char *opt_name(int c)
{
	for (const struct option *o = lopts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/*
 * A whole number option in [lo, hi]: 0, or one line naming the option and
 * the accepted range, and -1 (the caller exits 2).
 */
static int num_opt(int c, const char *arg, uint64_t lo, uint64_t hi,
		   uint64_t *out)
{
	const char *name = opt_name(c);
	unsigned long long v;
	char *end = NULL;

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

/* a folder option: an absolute path or "none"; 0, or -1 after one line
 * on stderr */
static int dir_opt(const char *name, const char *arg)
{
	if (!strcmp(arg, "none") || arg[0] == '/')
		return 0;
	fprintf(stderr, "xen-gpubackd: --%s must be an absolute path or none\n",
		name);
	return -1;
}

/*
 * A whole-number option: its value in [lo, hi], times mul, stored in dst
 * (a field of size bytes, 4 or 8).
 */
struct num_option {
	int c;
	uint64_t lo, hi, mul;
	void *dst;
	size_t size;
};
#define NUM(c, lo, hi, mul, field) { c, lo, hi, mul, &(field), sizeof(field) }

static const struct num_option *num_find(const struct num_option *t, int c)
{
	for (; t->c; t++)
		if (t->c == c)
			return t;
	return NULL;
}

/* 0, or -1 after one line on stderr (num_opt) */
static int num_store(const struct num_option *no, const char *arg)
{
	uint64_t v;

	if (num_opt(no->c, arg, no->lo, no->hi, &v))
		return -1;
	v *= no->mul;
	if (no->size == sizeof(uint32_t))
		*(uint32_t *)no->dst = (uint32_t)v;
	else
		*(uint64_t *)no->dst = v;
	return 0;
}

/*
 * An option that stores its argument in *str (a folder one, dir: an
 * absolute path or "none", dir_opt), or one without an argument that sets
 * *flag to on.
 */
struct plain_option {
	int c;
	const char **str;
	bool dir;
	bool *flag;
	bool on;
};

/* 1: c is not one of t, 0: stored, -1 after one line on stderr */
static int plain_store(const struct plain_option *t, int c, const char *arg)
{
	for (; t->c; t++) {
		if (t->c != c)
			continue;
		if (!t->str) {
			*t->flag = t->on;
			return 0;
		}
		if (t->dir && dir_opt(opt_name(c), arg))
			return -1;
		*t->str = arg;
		return 0;
	}
	return 1;
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
	static char name_buf[256];	/* lives as long as the daemon */
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
	if (strlen(pw->pw_name) >= sizeof(name_buf)) {
		fprintf(stderr, "xen-gpubackd: --worker-user: user name "
			"longer than %zu bytes\n", sizeof(name_buf) - 1);
		return -1;
	}
	strcpy(name_buf, pw->pw_name);
	opt->worker_user = name_buf;
	return 0;
}

int xgpub_args_parse(int argc, char **argv, struct xgpub_args *a)
{
	const char *wuser = NULL;
	int c;

	*a = (struct xgpub_args){
		.opt = {
			.gpu = 0,
			.max_data_pages = 256u * 256u,
			.pin_quota = 64ull << 30,
			.ctx_charge = XGPUB_CTX_CHARGE_DEFAULT,
			.images_max = XGPUB_IMAGES_MAX,
			.spin_us = 2000,
			.jit_cache = "/var/cache/xgpu/jit",
			.seccomp = true,
			.net_lanes = 4,
		},
		.cgroup_dir = "/sys/fs/cgroup/xgpu",
		.cglim = {
			.mem_bytes = 16384ull << 20,
			.pids = 512,
		},
		.config_path = XGPU_CONFIG_DEFAULT,
		.ctl_path = XGPU_CTL_PATH_DEFAULT,
		.sched_policy = "credit",
		.max_local_per_user = 64,
		.max_pending_per_user = 8,
		.max_net = 64,
		.vcpu_on = true,
		.lim = {
			.max_ring_order = XGPUIF_MAX_RING_ORDER,
			.max_data_pages = XGPUIF_XEN_MAX_DATA_PAGES,
			.max_channels = 16,
			.grant_pages = XGPUB_XEN_GRANT_MB_DEFAULT * 256u,
			.dom_grant_pages = XGPUB_XEN_DOM_GRANT_MB_DEFAULT *
					   256u,
		},
		.mode = 0660,
	};
	/* sizes in MiB (the quotas at most 16 TiB), KiB or 256 pages */
	const struct num_option nums[] = {
		NUM('C', 1, XGPUIF_XEN_MAX_CHANNELS, 1, a->lim.max_channels),
		NUM('Z', 0, 1u << 20, 256u, a->lim.grant_pages),
		NUM('E', 0, 1u << 20, 256u, a->lim.dom_grant_pages),
		NUM('U', 0, 1024, 1, a->max_local_per_user),
		NUM('Q', 1, XGPUB_LOCAL_HS_MAX, 1, a->max_pending_per_user),
		NUM('n', 0, 1024, 1, a->max_net),
		NUM('H', 0, 16, 1, a->opt.net_lanes),
		NUM('g', 0, 63, 1, a->opt.gpu),
		NUM('q', 0, 16u << 20, 1u << 20, a->opt.quota),
		NUM('P', 0, 16u << 20, 1u << 20, a->opt.pin_quota),
		NUM('X', 0, 64u << 20, 1u << 10, a->opt.ctx_charge),
		NUM('Y', 1, 1u << 20, 1u << 20, a->opt.images_max),
		NUM('D', 1, XGPUIF_LOCAL_MAX_DATA_PAGES / 256u, 256u,
		    a->opt.max_data_pages),
		NUM('S', 0, 1000000, 1, a->opt.spin_us),
		NUM('L', 0, 86400000, 1000000, xgpub_gpu_limit_ns),
		NUM('K', 0, 16u << 20, 1u << 20, a->cglim.mem_bytes),
		NUM('I', 0, 4194304, 1, a->cglim.pids),
		NUM('R', 0, 100000, 1, a->cglim.cpu_pct),
		{ 0 },
	};
	const struct plain_option plains[] = {
		{ 'l', .str = &a->path },
		{ 'T', .str = &a->listen },
		{ 'k', .str = &a->tls.psk_file },
		{ 'e', .str = &a->tls.cert },
		{ 'y', .str = &a->tls.key },
		{ 'a', .str = &a->tls.ca },
		{ 'c', .str = &a->ctl_path },
		{ 'd', .str = &a->opt.driver_path },
		{ 'M', .str = &a->metrics_spec },
		{ 'p', .str = &a->pidfile },
		{ 'W', .str = &wuser },
		{ 'J', .str = &a->opt.jit_cache, .dir = true },
		{ 'G', .str = &a->cgroup_dir, .dir = true },
		{ 'x', .flag = &a->use_xen, .on = true },
		{ 'f', .flag = &a->foreground, .on = true },
		{ 'A', .flag = &a->allow_pageable, .on = true },
		{ 'N', .flag = &a->opt.seccomp, .on = false },
		{ 'O', .flag = &a->opt.remote_driver, .on = true },
		{ 0 },
	};

	while ((c = getopt_long(argc, argv, "xl:c:s:fd:g:q:m:p:vh", lopts,
				NULL)) != -1) {
		const struct num_option *no = num_find(nums, c);
		char *end = NULL;
		int plain;

		if (no) {
			if (num_store(no, optarg))
				return 2;
			continue;
		}
		plain = plain_store(plains, c, optarg);
		if (plain < 0)
			return 2;
		if (plain == 0)
			continue;
		switch (c) {
		case 's':
			if (strcmp(optarg, "credit") && strcmp(optarg, "fifo") &&
			    strcmp(optarg, "off")) {
				fprintf(stderr, "xen-gpubackd: --sched: '%s' is "
					"not one of credit, fifo, off\n", optarg);
				return 2;
			}
			a->sched_policy = optarg;
			break;
		case 'V':
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off")) {
				a->vcpu_on = !strcmp(optarg, "on");
				break;
			}
			fprintf(stderr, "xen-gpubackd: --vcpu-coord on|off\n");
			return 2;
		case 'B':
			if (xgpub_vcpu_parse_boost(optarg, &a->boost_pct,
						   &a->boost_ms)) {
				fprintf(stderr, "xen-gpubackd: --vcpu-boost "
					"%s\n", XGPUB_VCPU_BOOST_USAGE);
				return 2;
			}
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
				a->config_path = abs_path;
			} else {
				a->config_path = optarg;
			}
			break;
		case 'm':
			a->mode = (mode_t)strtoul(optarg, &end, 8);
			if (!*optarg || *end || a->mode > 0777) {
				fprintf(stderr, "xen-gpubackd: --socket-mode: "
					"'%s' is not an octal mode from 0 to "
					"0777\n", optarg);
				return 2;
			}
			end = NULL;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((!a->path && !a->use_xen && !a->listen) || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (xgpub_gpu_limit_ns && !strcmp(a->sched_policy, "off")) {
		fprintf(stderr, "xen-gpubackd: --gpu-limit-ms needs the GPU "
			"scheduler (it measures the work in flight)\n");
		return 2;
	}
	/* what can be checked before detaching, on stderr with status 2 */
	if (worker_user(wuser, &a->opt, &a->wuser_warn))
		return 2;
	return -1;
}
