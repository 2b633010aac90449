// SPDX-License-Identifier: MIT
/*
 * fakecuda_sandbox.c: the fake driver tries what a worker's sandbox must
 * refuse (tests only, see fakecuda.h).
 *
 * With XGPU_FAKE_SANDBOX_PROBE=1 in the daemon's environment, the first
 * cuMemAlloc a guest makes (so after the worker's set-up, under its
 * seccomp filter and user) runs each system call below and prints one
 * line on the worker's stderr (the daemon's log in the foreground):
 *   xgpu_fake_sandbox: uid=U ptrace=EPERM ... socket_unix=ok ...
 * with the errno name of each refused call, "ok" for those that
 * succeeded.  The integration test `sandbox` reads that line.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "fakecuda.h"

static const char *errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ESRCH: return "ESRCH";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	default: return "other";
	}
}

/* -1/errno style: "ok" or the errno's name */
static const char *res(long rc)
{
	return errname(rc < 0 ? errno : 0);
}

/*
 * Make the first read-only shared mapping of /dev/zero (the workers'
 * status slots, xgpub.h) writable: "ok" would let the worker write
 * another worker's status or its own grant word.  "none" if there is no
 * such mapping.
 */
static const char *slots_rw(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8], path[256];
	unsigned long a, b;
	const char *r = "none";

	if (!f)
		return "nomaps";
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &a, &b, perms,
			   path) < 3)
			continue;
		if (strcmp(perms, "r--s") || strncmp(path, "/dev/zero", 9))
			continue;
		r = res(mprotect((void *)a, 4096, PROT_READ | PROT_WRITE));
		if (!strcmp(r, "ok"))	/* put it back */
			mprotect((void *)a, 4096, PROT_READ);
		break;
	}
	fclose(f);
	return r;
}

static void *thread_fn(void *arg)
{
	return arg;
}

static const char *sock(int family, int type, int proto)
{
	int fd = socket(family, type, proto);
	const char *r = res(fd);

	if (fd >= 0)
		close(fd);
	return r;
}

void fc_sandbox_probe(void)
{
	static int done;
	/* each call is made so that, allowed, it would fail harmlessly
	 * (ENOENT, ESRCH, EINVAL: "other"), never change the worker */
	char *const argv[] = { "/nonexistent-xgpu-probe", NULL };
	char buf[8], line[768];
	struct iovec l = { buf, sizeof(buf) }, r = { buf, sizeof(buf) };
	const char *ptr, *pvm, *exe, *uns, *mnt, *inet, *suid, *kill1, *unix_,
		   *nl, *thr, *self, *slots;
	pthread_t t;
	int e;

	if (done || !getenv("XGPU_FAKE_SANDBOX_PROBE"))
		return;
	done = 1;
	ptr = res(ptrace(PTRACE_PEEKDATA, getppid(), NULL, NULL));
	pvm = res(process_vm_readv(getpid(), &l, 1, &r, 1, 0));
	exe = res(execve(argv[0], argv, NULL));
	uns = res(unshare(0x1));	/* no such flag */
	mnt = res(mount("none", "/nonexistent-xgpu-probe", "tmpfs", 0, NULL));
	inet = sock(AF_INET, SOCK_STREAM, 0);
	suid = res(setuid(0));
	/* another process (the daemon, which is root: EPERM without the
	 * filter too, unless the worker is root) */
	kill1 = res(kill(getppid(), 0));
	/* what a driver needs still works */
	unix_ = sock(AF_UNIX, SOCK_STREAM, 0);
	nl = sock(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	e = pthread_create(&t, NULL, thread_fn, NULL);
	if (!e)
		pthread_join(t, NULL);
	thr = errname(e);
	self = res(kill(getpid(), 0));
	slots = slots_rw();
	snprintf(line, sizeof(line),
		 "xgpu_fake_sandbox: uid=%u ptrace=%s process_vm_readv=%s "
		 "execve=%s unshare=%s mount=%s socket_inet=%s setuid=%s "
		 "kill_daemon=%s socket_unix=%s socket_netlink=%s thread=%s "
		 "kill_self=%s slots_rw=%s\n", (unsigned int)getuid(), ptr,
		 pvm, exe, uns, mnt, inet, suid, kill1, unix_, nl, thr, self,
		 slots);
	(void)!write(2, line, strlen(line));
}
