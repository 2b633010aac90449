/* SPDX-License-Identifier: MIT */
/*
 * xgpub_args.h: the daemon's command line (xgpub_args.c; the options are
 * listed by --help and in README.md).
 */
#ifndef XGPUB_ARGS_H
#define XGPUB_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "xgpub.h"
#include "xgpub_cgroup.h"
#include "xgpub_transport.h"
#include "xgpu_tls.h"

struct xgpub_args {
	struct xgpub_options opt;	/* the workers' */
	/* a line for the log: the default worker user fell back to root */
	const char *wuser_warn;
	const char *cgroup_dir;
	struct xgpub_cgroup_limits cglim;
	const char *path;		/* --local, or NULL */
	const char *listen;		/* --listen tcp:ADDR:PORT, or NULL */
	struct xgpu_tls_opts tls;	/* --tls-* */
	unsigned int max_net;
	const char *pidfile;
	const char *config_path;
	const char *ctl_path;
	const char *sched_policy;
	const char *metrics_spec;	/* NULL: none */
	unsigned int max_local_per_user;
	unsigned int max_pending_per_user;
	bool vcpu_on;
	unsigned int boost_pct, boost_ms;
	bool foreground, use_xen, allow_pageable;
	struct xgpub_xen_limits lim;
	mode_t mode;			/* of the local socket */
	int verbose;
};

/*
 * Read the command line into a (the defaults where an option is not
 * given; --gpu-limit-ms sets xgpub_gpu_limit_ns), with every check that
 * needs no more than the options and the user database.  -1: run the
 * daemon; else the exit status (0 after --help; 2 after a line on stderr
 * or the usage text).
 */
int xgpub_args_parse(int argc, char **argv, struct xgpub_args *a);

#endif /* XGPUB_ARGS_H */
