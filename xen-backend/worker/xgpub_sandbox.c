// SPDX-License-Identifier: MIT
/*
 * xgpub_sandbox.c: what a worker gives up once its channel is mapped and
 * its GPU context made, before it takes the guest's first request.
 *
 * 1. Its user: the daemon forks workers as root, because a channel's
 *    pages (a local client's memfds and eventfds, or a Xen guest's grants
 *    through /dev/xen/gntdev, its event channel, its xenstore connection)
 *    and the driver's device nodes (/dev/nvidiactl, /dev/nvidia<N>,
 *    /dev/nvidia-uvm, opened by cuInit and the first context) want
 *    privilege to open.  Once they are open the worker becomes the
 *    unprivileged worker user (--worker-user): supplementary groups,
 *    then gid, then uid, real, effective and saved, the capability
 *    bounding set emptied first; then it checks that it cannot become
 *    root again and holds no capability.
 * 2. No new privileges (no setuid program can raise it again) and not
 *    dumpable: another worker, which runs under the same uid, can neither
 *    ptrace it nor open its /proc/<pid>/mem or fds, and it leaves no core
 *    with its guest's data.
 * 3. A seccomp filter (below): system calls a CUDA driver never needs are
 *    refused with EPERM, the few that only a kernel exploit wants end the
 *    process.
 *
 * Everything here fails closed: a worker that cannot drop what it was
 * asked to drop does not serve its guest.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "xgpub_worker.h"

/* ---- the seccomp filter ----------------------------------------------------- */

/*
 * A denylist, not an allowlist.  The driver that runs in a worker is
 * NVIDIA's closed libcuda.so: which system calls it makes (ioctls on its
 * device nodes, mmap/mremap/mprotect/madvise, futexes, eventfds, clone
 * for its threads, sched_*, memfd_create, /proc and /sys reads, Unix and
 * netlink sockets...) is its business, changes from one release to the
 * next and is not ours to enumerate: an allowlist that missed one call
 * would fail a guest's program at random on a driver upgrade.  What it
 * does not need is easier to say: nothing that debugs or reads another
 * process, loads kernel code, changes the mounts, namespaces, time,
 * keyrings or users, runs a program, or talks to the network.  Those are
 * refused; the kernel's own checks (an unprivileged uid, no capability)
 * remain behind them.
 *
 * Besides the plain list:
 * - clone() with a namespace flag is refused (a user namespace would
 *   hand the worker capabilities over new namespaces), and clone3(),
 *   whose flags the filter cannot read, says ENOSYS: the C library then
 *   makes its threads with clone();
 * - socket() only for AF_UNIX and AF_NETLINK;
 * - signals only to the worker itself (kill, tgkill and sigqueue with its
 *   own pid; kill(0) reaches its own process group, the worker being a
 *   session of its own): every worker runs under the same uid, and may
 *   not stop another guest's worker;
 * - prctl(PR_SET_DUMPABLE) is refused (it stays not dumpable), and
 *   personality() may only be read;
 * - mprotect, pkey_mprotect and mremap of a range that meets the workers'
 *   status slots are refused: the slots are a shared mapping that the
 *   daemon made writable, so the kernel would let a worker make its
 *   read-only view (the others' status, the daemon's grant words)
 *   writable again (remap_file_pages, which could too, is refused);
 * - a system call of another ABI (a 32-bit or x32 call made from this
 *   64-bit process) ends it.
 */
#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#define RET_EPERM (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define RET_ENOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))
#define RET_KILL SECCOMP_RET_KILL_PROCESS
#define RET_ALLOW SECCOMP_RET_ALLOW

#ifdef SANDBOX_ARCH
static const struct {
	int nr;
	uint32_t ret;
} denied[] = {
	/* another process: debugging, reading, stealing its descriptors */
	{ __NR_ptrace, RET_EPERM },
	{ __NR_process_vm_readv, RET_EPERM },
	{ __NR_process_vm_writev, RET_EPERM },
#ifdef __NR_pidfd_getfd
	{ __NR_pidfd_getfd, RET_EPERM },
#endif
#ifdef __NR_pidfd_send_signal
	{ __NR_pidfd_send_signal, RET_EPERM },
#endif
#ifdef __NR_process_madvise
	{ __NR_process_madvise, RET_EPERM },
#endif
	{ __NR_kcmp, RET_EPERM },
	{ __NR_tkill, RET_EPERM },	/* a thread id of any process */
	/* running a program (the driver's helpers ran before the filter) */
	{ __NR_execve, RET_EPERM },
	{ __NR_execveat, RET_EPERM },
	/* kernel code and the machine: end the worker */
	{ __NR_kexec_load, RET_KILL },
#ifdef __NR_kexec_file_load
	{ __NR_kexec_file_load, RET_KILL },
#endif
	{ __NR_init_module, RET_KILL },
	{ __NR_finit_module, RET_KILL },
	{ __NR_delete_module, RET_KILL },
	{ __NR_reboot, RET_KILL },
	/* mounts, roots, namespaces */
	{ __NR_mount, RET_EPERM },
	{ __NR_umount2, RET_EPERM },
	{ __NR_pivot_root, RET_EPERM },
	{ __NR_chroot, RET_EPERM },
	{ __NR_setns, RET_EPERM },
	{ __NR_unshare, RET_EPERM },
#ifdef __NR_open_tree
	{ __NR_open_tree, RET_EPERM },
	{ __NR_move_mount, RET_EPERM },
	{ __NR_fsopen, RET_EPERM },
	{ __NR_fsconfig, RET_EPERM },
	{ __NR_fsmount, RET_EPERM },
	{ __NR_fspick, RET_EPERM },
#endif
#ifdef __NR_mount_setattr
	{ __NR_mount_setattr, RET_EPERM },
#endif
	{ __NR_open_by_handle_at, RET_EPERM },
	{ __NR_name_to_handle_at, RET_EPERM },
	/* kernel interfaces with a long record of exploits */
	{ __NR_bpf, RET_EPERM },
	{ __NR_perf_event_open, RET_EPERM },
	{ __NR_userfaultfd, RET_EPERM },
#ifdef __NR_io_uring_setup
	{ __NR_io_uring_setup, RET_EPERM },
	{ __NR_io_uring_enter, RET_EPERM },
	{ __NR_io_uring_register, RET_EPERM },
#endif
	{ __NR_keyctl, RET_EPERM },
	{ __NR_add_key, RET_EPERM },
	{ __NR_request_key, RET_EPERM },
	{ __NR_fanotify_init, RET_EPERM },
	{ __NR_lookup_dcookie, RET_EPERM },
#ifdef __NR_modify_ldt
	{ __NR_modify_ldt, RET_EPERM },
#endif
#ifdef __NR_iopl
	{ __NR_iopl, RET_EPERM },
	{ __NR_ioperm, RET_EPERM },
#endif
#ifdef __NR_uselib
	{ __NR_uselib, RET_EPERM },
#endif
	/* the system's state */
	{ __NR_swapon, RET_EPERM },
	{ __NR_swapoff, RET_EPERM },
	{ __NR_acct, RET_EPERM },
	{ __NR_quotactl, RET_EPERM },
	{ __NR_settimeofday, RET_EPERM },
	{ __NR_clock_settime, RET_EPERM },
	{ __NR_clock_adjtime, RET_EPERM },
	{ __NR_adjtimex, RET_EPERM },
	{ __NR_sethostname, RET_EPERM },
	{ __NR_setdomainname, RET_EPERM },
	{ __NR_syslog, RET_EPERM },	/* the kernel's log, not syslog(3) */
	{ __NR_vhangup, RET_EPERM },
	/* users: the worker has become the one it stays */
	{ __NR_setuid, RET_EPERM },
	{ __NR_setgid, RET_EPERM },
	{ __NR_setreuid, RET_EPERM },
	{ __NR_setregid, RET_EPERM },
	{ __NR_setresuid, RET_EPERM },
	{ __NR_setresgid, RET_EPERM },
	{ __NR_setfsuid, RET_EPERM },
	{ __NR_setfsgid, RET_EPERM },
	{ __NR_setgroups, RET_EPERM },
	{ __NR_capset, RET_EPERM },
	/* flags the filter cannot see */
	{ __NR_clone3, RET_ENOSYS },
#ifdef __NR_remap_file_pages
	{ __NR_remap_file_pages, RET_EPERM },
#endif
};
#endif

#define ARG_LO(i) (offsetof(struct seccomp_data, args[i]))	/* little end */
#define ARG_HI(i) (offsetof(struct seccomp_data, args[i]) + 4)

struct prog {
	struct sock_filter f[512];
	unsigned int n;
	bool overflow;
};

static void emit(struct prog *p, struct sock_filter ins)
{
	if (p->n < sizeof(p->f) / sizeof(p->f[0]))
		p->f[p->n++] = ins;
	else
		p->overflow = true;
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))

/*
 * System call nr (the accumulator holds it): if its argument arg (low 32
 * bits: every argument checked here is an int to the kernel) is one of
 * vals[], return `in`, else `out`.  Other calls go on to the next block.
 */
static void arg_block(struct prog *p, int nr, int arg, const uint32_t *vals,
		      unsigned int n, uint32_t in, uint32_t out)
{
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0,
		     (uint8_t)(n + 3)));
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(arg)));
	for (unsigned int i = 0; i < n; i++)
		/* a match jumps to RET in, at n + 3 from the block's start */
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, vals[i],
			     (uint8_t)(n - i), 0));
	emit(p, STMT(BPF_RET | BPF_K, out));
	emit(p, STMT(BPF_RET | BPF_K, in));
}

/*
 * System call nr (in the accumulator) on the range [arg0, arg0 + arg1):
 * EPERM if it meets [start, end), else allowed.  64-bit arithmetic in
 * 32-bit halves: meets iff addr < end && (addr >= start ||
 * len > start - addr).
 */
static void range_block(struct prog *p, int nr, uint64_t start, uint64_t end)
{
	const uint32_t sh = (uint32_t)(start >> 32), sl = (uint32_t)start;
	const uint32_t eh = (uint32_t)(end >> 32), el = (uint32_t)end;
	const unsigned int b = p->n;
	/* offsets from the block's start: allowed, refused, the next block */
	enum { ALLOW = 34, DENY = 35, NEXT = 36 };
#define J(code, k, t, f)						\
	emit(p, JUMP(BPF_JMP | (code), (k),				\
		     (uint8_t)((t) - (p->n - b) - 1),			\
		     (uint8_t)((f) - (p->n - b) - 1)))
	J(BPF_JEQ | BPF_K, (uint32_t)nr, 1, NEXT);			/* 0 */
	/* addr >= end: allowed */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_HI(0)));	/* 1 */
	J(BPF_JGT | BPF_K, eh, ALLOW, 3);				/* 2 */
	J(BPF_JEQ | BPF_K, eh, 4, 6);					/* 3 */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(0)));	/* 4 */
	J(BPF_JGE | BPF_K, el, ALLOW, 6);				/* 5 */
	/* start <= addr < end: refused */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_HI(0)));	/* 6 */
	J(BPF_JGT | BPF_K, sh, DENY, 8);				/* 7 */
	J(BPF_JEQ | BPF_K, sh, 9, 11);					/* 8 */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(0)));	/* 9 */
	J(BPF_JGE | BPF_K, sl, DENY, 11);				/* 10 */
	/* addr < start: d = start - addr, low half to M[0] */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(0)));	/* 11 */
	emit(p, STMT(BPF_MISC | BPF_TAX, 0));				/* 12 */
	emit(p, STMT(BPF_LD | BPF_IMM, sl));				/* 13 */
	emit(p, STMT(BPF_ALU | BPF_SUB | BPF_X, 0));			/* 14 */
	emit(p, STMT(BPF_ST, 0));					/* 15 */
	/* the borrow: addr's low half above start's */
	emit(p, STMT(BPF_LD | BPF_IMM, sl));				/* 16 */
	J(BPF_JGE | BPF_X, 0, 18, 20);					/* 17 */
	emit(p, STMT(BPF_LD | BPF_IMM, 0));				/* 18 */
	emit(p, STMT(BPF_JMP | BPF_JA, 1));				/* 19 */
	emit(p, STMT(BPF_LD | BPF_IMM, 1));				/* 20 */
	/* d's high half: start_hi - (addr_hi + borrow) */
	emit(p, STMT(BPF_MISC | BPF_TAX, 0));				/* 21 */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_HI(0)));	/* 22 */
	emit(p, STMT(BPF_ALU | BPF_ADD | BPF_X, 0));			/* 23 */
	emit(p, STMT(BPF_MISC | BPF_TAX, 0));				/* 24 */
	emit(p, STMT(BPF_LD | BPF_IMM, sh));				/* 25 */
	emit(p, STMT(BPF_ALU | BPF_SUB | BPF_X, 0));			/* 26 */
	emit(p, STMT(BPF_MISC | BPF_TAX, 0));				/* 27 */
	/* len > d: refused */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_HI(1)));	/* 28 */
	J(BPF_JGT | BPF_X, 0, DENY, 30);				/* 29 */
	J(BPF_JEQ | BPF_X, 0, 31, ALLOW);				/* 30 */
	emit(p, STMT(BPF_LDX | BPF_MEM, 0));				/* 31 */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(1)));	/* 32 */
	J(BPF_JGT | BPF_X, 0, DENY, ALLOW);				/* 33 */
	emit(p, STMT(BPF_RET | BPF_K, RET_ALLOW));			/* 34 */
	emit(p, STMT(BPF_RET | BPF_K, RET_EPERM));			/* 35 */
#undef J
	if (!p->overflow && p->n - b != NEXT)
		p->overflow = true;	/* the offsets above are wrong */
}

#ifdef SANDBOX_ARCH
/* the calls a driver makes most, let through before the lists */
static const int hot[] = {
	__NR_ioctl, __NR_futex, __NR_read, __NR_write, __NR_ppoll,
	__NR_sched_yield, __NR_clock_nanosleep, __NR_madvise, __NR_munmap,
	__NR_mmap, __NR_getpid, __NR_gettid, __NR_recvmsg, __NR_sendmsg,
#ifdef __NR_poll
	__NR_poll,
#endif
};

static int build_filter(struct prog *p)
{
	uint32_t self = (uint32_t)getpid();
	const uint32_t self_kill[] = { self, 0, (uint32_t)-(int32_t)self };
	const uint32_t families[] = { AF_UNIX, AF_NETLINK };
	const uint32_t dumpable[] = { PR_SET_DUMPABLE };
	const uint32_t persona_read[] = { 0xffffffffu };
	const uint32_t ns_flags = CLONE_NEWNS | CLONE_NEWCGROUP |
				  CLONE_NEWUTS | CLONE_NEWIPC |
				  CLONE_NEWUSER | CLONE_NEWPID |
				  CLONE_NEWNET;

	p->n = 0;
	p->overflow = false;
	/* another ABI: the numbers below would not mean the same calls */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS,
		     (uint32_t)offsetof(struct seccomp_data, arch)));
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0));
	emit(p, STMT(BPF_RET | BPF_K, RET_KILL));
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS,
		     (uint32_t)offsetof(struct seccomp_data, nr)));
#ifdef __x86_64__
	/* x32 calls: the same arch, numbers from 0x40000000 */
	emit(p, JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
	emit(p, STMT(BPF_RET | BPF_K, RET_KILL));
#endif
	for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)hot[i], 0,
			     1));
		emit(p, STMT(BPF_RET | BPF_K, RET_ALLOW));
	}
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)denied[i].nr,
			     0, 1));
		emit(p, STMT(BPF_RET | BPF_K, denied[i].ret));
	}
	/* clone: no new namespace */
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)__NR_clone, 0, 4));
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(0)));
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, ns_flags, 0, 1));
	emit(p, STMT(BPF_RET | BPF_K, RET_EPERM));
	emit(p, STMT(BPF_RET | BPF_K, RET_ALLOW));
	/* each of these blocks returns once its call matched */
	arg_block(p, __NR_socket, 0, families, 2, RET_ALLOW, RET_EPERM);
	arg_block(p, __NR_kill, 0, self_kill, 3, RET_ALLOW, RET_EPERM);
	arg_block(p, __NR_tgkill, 0, &self, 1, RET_ALLOW, RET_EPERM);
	arg_block(p, __NR_rt_sigqueueinfo, 0, &self, 1, RET_ALLOW, RET_EPERM);
	arg_block(p, __NR_rt_tgsigqueueinfo, 0, &self, 1, RET_ALLOW,
		  RET_EPERM);
	arg_block(p, __NR_prctl, 0, dumpable, 1, RET_EPERM, RET_ALLOW);
	arg_block(p, __NR_personality, 0, persona_read, 1, RET_ALLOW,
		  RET_EPERM);
	if (xgpub_all_stats) {
		uint64_t start = (uint64_t)(uintptr_t)xgpub_all_stats;
		uint64_t end = start + (xgpub_shared_bytes ?
				(uint64_t)xgpub_shared_bytes :
				(uint64_t)xgpub_nstats *
					sizeof(*xgpub_all_stats));

		range_block(p, __NR_mprotect, start, end);
		range_block(p, __NR_mremap, start, end);
#ifdef __NR_pkey_mprotect
		range_block(p, __NR_pkey_mprotect, start, end);
#endif
	}
	emit(p, STMT(BPF_RET | BPF_K, RET_ALLOW));
	return p->overflow ? -1 : 0;
}
#endif

/* install the filter in every thread of the worker; 0 or -errno */
static int install_filter(const char *who)
{
#ifdef SANDBOX_ARCH
	static struct prog p;
	struct sock_fprog fp;
	long rc;

	if (build_filter(&p)) {
		xgpub_err("%s: the seccomp filter does not fit", who);
		return -E2BIG;
	}
	fp.len = (unsigned short)p.n;
	fp.filter = p.f;
	/* TSYNC: the threads made so far (output, watchdog, gate) too */
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_TSYNC, &fp);
	if (rc == 0)
		return 0;
	if (rc > 0) {
		xgpub_err("%s: seccomp: thread %ld could not take the filter",
			  who, rc);
		return -EBUSY;
	}
	return -errno;
#else
	(void)who;
	return -ENOSYS;
#endif
}

/* ---- the user --------------------------------------------------------------- */

/* the capability sets of this thread are empty */
static bool no_caps(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return !d[0].effective && !d[0].permitted && !d[0].inheritable &&
	       !d[1].effective && !d[1].permitted && !d[1].inheritable;
}

static int drop_user(const struct xgpub_options *opt, const char *who)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	/* the bounding set: no program (none can run anyway) and no
	 * later transition gets a capability back */
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno == EINVAL)
			break;
	if (setgroups((size_t)opt->worker_ngroups, opt->worker_groups) ||
	    setresgid(opt->worker_gid, opt->worker_gid, opt->worker_gid) ||
	    setresuid(opt->worker_uid, opt->worker_uid, opt->worker_uid)) {
		xgpub_err("%s: cannot become user %s (uid %u gid %u): %s", who,
			  opt->worker_user, (unsigned int)opt->worker_uid,
			  (unsigned int)opt->worker_gid, strerror(errno));
		return -1;
	}
	/* and it cannot come back */
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg) ||
	    ru != opt->worker_uid || eu != ru || su != ru ||
	    rg != opt->worker_gid || eg != rg || sg != rg) {
		xgpub_err("%s: the uids or gids are not all %s's", who,
			  opt->worker_user);
		return -1;
	}
	if (setresuid(0, 0, 0) == 0 || setresgid(0, 0, 0) == 0 ||
	    setuid(0) == 0 || !no_caps()) {
		xgpub_err("%s: user %s could become root again", who,
			  opt->worker_user);
		return -1;
	}
	return 0;
}

int xgpub_sandbox_enter(const struct xgpub_options *opt, const char *who)
{
	pid_t parent = getppid();
	int pdeath = 0, rc;

	/* a worker run inline by a test; the daemon's set both (or the
	 * fork made it no_new_privs and not dumpable already) */
	if (!opt->drop_user && !opt->seccomp)
		return 0;
	/* a change of credentials clears the parent-death signal */
	prctl(PR_GET_PDEATHSIG, &pdeath);
	if (opt->drop_user && drop_user(opt, who))
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		xgpub_err("%s: no_new_privs/dumpable: %s", who,
			  strerror(errno));
		return -1;
	}
	if (pdeath) {
		prctl(PR_SET_PDEATHSIG, pdeath);
		/* the daemon went while the signal was off */
		if (getppid() != parent)
			return -1;
	}
	if (!opt->seccomp)
		return 0;
	rc = install_filter(who);
	if (rc == -EINVAL || rc == -ENOSYS) {
		/* a kernel without seccomp filters (or another arch) */
		static bool said;

		if (!said)
			xgpub_err("%s: no seccomp filter on this kernel or "
				  "architecture (%s): the worker runs without "
				  "one", who, strerror(-rc));
		said = true;
		return 0;
	}
	if (rc) {
		xgpub_err("%s: cannot install the seccomp filter: %s", who,
			  strerror(-rc));
		return -1;
	}
	return 0;
}
