/* SPDX-License-Identifier: MIT */
/*
 * xgpub_cgroup.h: a cgroup (v2) of its own for every worker, under the
 * daemon's folder (--cgroup, default /sys/fs/cgroup/xgpu), with the
 * limits of --worker-mem-mb, --worker-pids and --worker-cpu-pct.
 */
#ifndef XGPUB_CGROUP_H
#define XGPUB_CGROUP_H

#include <stdint.h>

struct xgpub_child;

struct xgpub_cgroup_limits {
	uint64_t mem_bytes;	/* memory.max, 0: none */
	uint32_t pids;		/* pids.max, 0: none */
	uint32_t cpu_pct;	/* cpu.max, % of one CPU, 0: none */
};

/*
 * Make the daemon's folder dir ("none": off) and enable the controllers
 * the limits need.  Where dir is not in a writable cgroup2 mount, one
 * log line and workers run without cgroups.  Stale worker cgroups of an
 * earlier run are removed.
 */
void xgpub_cgroup_start(const char *dir,
			const struct xgpub_cgroup_limits *lim);
/* in a forked worker, first: its own cgroup, with the limits */
void xgpub_cgroup_join(const struct xgpub_child *info);
/* in the daemon, once the worker c is reaped: remove its cgroup */
void xgpub_cgroup_remove(const struct xgpub_child *c);

#endif /* XGPUB_CGROUP_H */
