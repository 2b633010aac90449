// SPDX-License-Identifier: MIT
/*
 * xgpub_cgroup.c: a cgroup (v2) of its own for every worker.
 *
 * Layout: <dir>/<worker>, <dir> being --cgroup (default
 * /sys/fs/cgroup/xgpu) and <worker> "dom<D>-ch<C>-<pid>" or
 * "client<N>-<pid>".  The daemon makes <dir> and enables the memory, pids
 * and cpu controllers for its children (<dir> holds no process, as
 * cgroup v2 requires); a forked worker, still root, makes its own folder,
 * writes its limits and moves itself there before it maps anything of
 * its guest's, so all it allocates is charged there.  The folders and
 * their files are root's: a worker cannot raise its limits or leave.
 * The daemon removes a worker's folder once it has reaped it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "xgpub_cgroup.h"
#include "xgpub_daemon.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static char root[PATH_MAX];	/* "": off */
static struct xgpub_cgroup_limits limits;
static bool have_mem, have_pids, have_cpu;

static int write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	e = errno;
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -(n < 0 ? e : EIO);
}

/* is controller ctl listed in dir/file (cgroup.controllers, ...) */
static bool listed(const char *dir, const char *file, const char *ctl)
{
	char path[PATH_MAX + 64], buf[512], *tok, *save = NULL;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, ctl))
			return true;
	return false;
}

/* enable ctl for root's children (asking root's parent first if need be) */
static bool enable(const char *parent, const char *ctl)
{
	char plus[32];

	snprintf(plus, sizeof(plus), "+%s", ctl);
	if (!listed(root, "cgroup.controllers", ctl))
		(void)write_file(parent, "cgroup.subtree_control", plus);
	if (!listed(root, "cgroup.controllers", ctl))
		return false;
	return listed(root, "cgroup.subtree_control", ctl) ||
	       write_file(root, "cgroup.subtree_control", plus) == 0;
}

/* worker cgroups an earlier daemon left (empty ones: rmdir refuses others) */
static void sweep(void)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char path[PATH_MAX + 300];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		(void)rmdir(path);
	}
	closedir(d);
}

void xgpub_cgroup_start(const char *dir,
			const struct xgpub_cgroup_limits *lim)
{
	char parent[PATH_MAX], *slash;
	struct statfs sf;
	const char *why = NULL;
	char missing[64] = "";

	root[0] = 0;
	if (!strcmp(dir, "none"))
		return;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = 0;
	else
		snprintf(parent, sizeof(parent), "/");
	if (statfs(parent, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC)
		why = "not in a cgroup2 mount";
	else if (mkdir(dir, 0755) && errno != EEXIST)
		why = strerror(errno);
	else if (access(dir, W_OK))
		why = "not writable";
	if (why) {
		xgpub_info("cgroups: %s: %s; workers run without cgroup "
			   "limits", dir, why);
		return;
	}
	snprintf(root, sizeof(root), "%s", dir);
	limits = *lim;
	have_mem = lim->mem_bytes && enable(parent, "memory");
	have_pids = lim->pids && enable(parent, "pids");
	have_cpu = lim->cpu_pct && enable(parent, "cpu");
	if (lim->mem_bytes && !have_mem)
		strcat(missing, " memory");
	if (lim->pids && !have_pids)
		strcat(missing, " pids");
	if (lim->cpu_pct && !have_cpu)
		strcat(missing, " cpu");
	sweep();
	xgpub_info("cgroups: a cgroup per worker under %s%s%s", root,
		   missing[0] ? "; no controller for these limits:" : "",
		   missing);
}

static void worker_dir(const struct xgpub_child *c, pid_t pid, char *buf,
		       size_t len)
{
	if (c->kind == XGPUB_CHILD_XEN)
		snprintf(buf, len, "%s/dom%u-ch%u-%d", root, c->domid, c->ch,
			 (int)pid);
	else
		snprintf(buf, len, "%s/client%u-%d", root, c->client_id,
			 (int)pid);
}

void xgpub_cgroup_join(const struct xgpub_child *info)
{
	char dir[PATH_MAX + 64], val[64];
	int rc = 0;

	if (!root[0])
		return;
	worker_dir(info, getpid(), dir, sizeof(dir));
	if (mkdir(dir, 0755) && errno != EEXIST) {
		xgpub_err("cgroups: cannot make %s: %s; the worker runs "
			  "without limits", dir, strerror(errno));
		return;
	}
	if (have_mem) {
		snprintf(val, sizeof(val), "%llu",
			 (unsigned long long)limits.mem_bytes);
		rc = rc ? rc : write_file(dir, "memory.max", val);
	}
	if (have_pids) {
		snprintf(val, sizeof(val), "%u", limits.pids);
		rc = rc ? rc : write_file(dir, "pids.max", val);
	}
	if (have_cpu) {
		/* pct of one CPU per 100 ms period */
		snprintf(val, sizeof(val), "%llu 100000",
			 (unsigned long long)limits.cpu_pct * 1000ull);
		rc = rc ? rc : write_file(dir, "cpu.max", val);
	}
	if (rc)
		xgpub_err("cgroups: a limit of %s: %s", dir, strerror(-rc));
	rc = write_file(dir, "cgroup.procs", "0");
	if (rc)
		xgpub_err("cgroups: cannot join %s: %s", dir, strerror(-rc));
}

void xgpub_cgroup_remove(const struct xgpub_child *c)
{
	char dir[PATH_MAX + 64];

	if (!root[0] || c->pid <= 0)
		return;
	worker_dir(c, c->pid, dir, sizeof(dir));
	if (rmdir(dir) && errno != ENOENT)
		xgpub_dbg("cgroups: cannot remove %s: %s", dir,
			  strerror(errno));
}
