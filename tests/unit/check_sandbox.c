/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_sandbox.c */
/*
 * The worker's sandbox (xgpub_sandbox.c), entered in the test's own
 * process (each case runs in a child of its own): the seccomp filter
 * refuses what it lists, lets through what a driver needs, ends the
 * process for the worst calls and for another ABI; the user drop leaves
 * no way back to root.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "xgpub_worker.h"
#include "check_run.h"

/*
 * Under the sanitizers: LeakSanitizer's check at exit ptraces the process,
 * which the filter refuses (a worker ends with _exit, never reaching it).
 */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "detect_leaks=0";
}

/* errno of a call that returned -1, 0 if it succeeded */
#define ERR(call) ((call) < 0 ? errno : 0)

static void enter_seccomp(void)
{
	struct xgpub_options opt;

	memset(&opt, 0, sizeof(opt));
	opt.seccomp = true;
	ck_assert_int_eq(xgpub_sandbox_enter(&opt, "test"), 0);
}

static int sock_err(int family, int type, int proto)
{
	int fd = socket(family, type, proto);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void *nothing(void *arg)
{
	return arg;
}

START_TEST(test_refused)
{
	char *const argv[] = { "/nonexistent-xgpu-test", NULL };

	enter_seccomp();
	ck_assert_int_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 1);
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	/* each would fail otherwise with another errno, or do nothing */
	ck_assert_int_eq(ERR(ptrace(PTRACE_PEEKDATA, getppid(), NULL, NULL)),
			 EPERM);
	ck_assert_int_eq(ERR(execve(argv[0], argv, NULL)), EPERM);
	ck_assert_int_eq(ERR(unshare(0x1)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0,
				     NULL, NULL, 0)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_clone3, NULL, 0)), ENOSYS);
	ck_assert_int_eq(sock_err(AF_INET, SOCK_STREAM, 0), EPERM);
	ck_assert_int_eq(sock_err(AF_INET6, SOCK_DGRAM, 0), EPERM);
	ck_assert_int_eq(sock_err(AF_PACKET, SOCK_RAW, 0), EPERM);
	ck_assert_int_eq(ERR(kill(getppid(), 0)), EPERM);
	ck_assert_int_eq(ERR(kill(1, 0)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_tgkill, getppid(), getppid(), 0)),
			 EPERM);
	ck_assert_int_eq(ERR(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)), EPERM);
	ck_assert_int_eq(ERR(personality(PER_LINUX32)), EPERM);
	ck_assert_int_eq(ERR(setuid(0)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_bpf, 0, NULL, 0)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_perf_event_open, NULL, 0, -1, -1,
				     0)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_process_vm_readv, getpid(), NULL, 0,
				     NULL, 0, 0)), EPERM);
}
END_TEST

START_TEST(test_allowed)
{
	static int token;
	pthread_t t;
	void *r = NULL;
	char name[16];

	enter_seccomp();
	ck_assert_int_eq(sock_err(AF_UNIX, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(sock_err(AF_UNIX, SOCK_SEQPACKET, 0), 0);
	ck_assert_int_eq(sock_err(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), 0);
	/* threads: clone3 says ENOSYS, the C library falls back to clone */
	ck_assert_int_eq(pthread_create(&t, NULL, nothing, &token), 0);
	ck_assert_int_eq(pthread_join(t, &r), 0);
	ck_assert_ptr_eq(r, &token);
	ck_assert_int_eq(ERR(kill(getpid(), 0)), 0);
	ck_assert_int_eq(ERR(syscall(SYS_tgkill, getpid(), gettid(), 0)), 0);
	ck_assert_int_eq(ERR(prctl(PR_SET_NAME, "sandboxed", 0, 0, 0)), 0);
	ck_assert_int_eq(ERR(prctl(PR_GET_NAME, name, 0, 0, 0)), 0);
	ck_assert_int_ne(personality(0xffffffff), -1);
	ck_assert_int_eq(ERR(sched_yield()), 0);
}
END_TEST

/* how a child that ran fn ended: its signal, or 0 if it exited */
static int child_signal(void (*fn)(void))
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		fn();
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void do_reboot(void)
{
	/* bad magic: EINVAL (even for root) but for the filter */
	syscall(SYS_reboot, 0, 0, 0, NULL);
}

static void do_init_module(void)
{
	syscall(SYS_init_module, NULL, 0, "");
}

#ifdef __x86_64__
static void do_x32(void)
{
	syscall(0x40000000 | SYS_getpid);
}

static void do_int80(void)
{
	long ret;

	/* i386 getpid (20) through the 32-bit entry */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	(void)ret;
}
#endif

START_TEST(test_killed)
{
	enter_seccomp();
	ck_assert_int_eq(child_signal(do_reboot), SIGSYS);
	ck_assert_int_eq(child_signal(do_init_module), SIGSYS);
#ifdef __x86_64__
	ck_assert_int_eq(child_signal(do_x32), SIGSYS);
	ck_assert_int_eq(child_signal(do_int80), SIGSYS);
#endif
}
END_TEST

START_TEST(test_drop_user)
{
	struct passwd *pw = getpwnam("nobody");
	struct xgpub_options opt;
	uid_t r, e, s;

	if (geteuid() != 0 || !pw || pw->pw_uid == 0) {
		fprintf(stderr, "SKIP drop_user: not root, or no user nobody\n");
		return;
	}
	memset(&opt, 0, sizeof(opt));
	opt.drop_user = true;
	opt.worker_uid = pw->pw_uid;
	opt.worker_gid = pw->pw_gid;
	opt.worker_user = "nobody";
	opt.seccomp = true;
	ck_assert_int_eq(xgpub_sandbox_enter(&opt, "test"), 0);
	ck_assert_int_eq(getresuid(&r, &e, &s), 0);
	ck_assert_uint_eq(r, pw->pw_uid);
	ck_assert_uint_eq(e, pw->pw_uid);
	ck_assert_uint_eq(s, pw->pw_uid);
	ck_assert_uint_eq(getgid(), pw->pw_gid);
	ck_assert_int_eq(getgroups(0, NULL), 0);
	ck_assert_int_eq(ERR(setresuid(0, 0, 0)), EPERM);
	ck_assert_int_eq(prctl(PR_CAPBSET_READ, 0 /* CAP_CHOWN */, 0, 0, 0),
			 0);
}
END_TEST

/* mprotect's errno: EPERM from the filter, else the kernel's answer */
static int prot_err(uintptr_t addr, uint64_t len, int prot)
{
	return ERR(syscall(SYS_mprotect, addr, len, prot));
}

START_TEST(test_slots_stay_read_only)
{
	/* a page, 4 slots (the status region), a page */
	const size_t slots = 4 * sizeof(struct xgpub_wslot);
	uint8_t *m = mmap(NULL, slots + 8192, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uintptr_t r, e;
	const uint64_t g4 = 1ull << 32;

	ck_assert_ptr_ne(m, MAP_FAILED);
	r = (uintptr_t)m + 4096;
	e = r + slots;
	ck_assert_int_eq(mprotect((void *)r, slots, PROT_READ), 0);
	xgpub_all_stats = (struct xgpub_wslot *)r;
	xgpub_nstats = 4;
	enter_seccomp();
	/* inside, or reaching in from below */
	ck_assert_int_eq(prot_err(r, 4096, PROT_READ | PROT_WRITE), EPERM);
	ck_assert_int_eq(prot_err(e - 4096, 4096, PROT_READ | PROT_WRITE),
			 EPERM);
	ck_assert_int_eq(prot_err(r - 4096, 8192, PROT_READ | PROT_WRITE),
			 EPERM);
	ck_assert_int_eq(prot_err(r - 4096, 4097, PROT_READ), EPERM);
	ck_assert_int_eq(prot_err(r - g4, g4 + 4096, PROT_READ), EPERM);
	/* below with a borrow from the high half: reaching start + 1 */
	ck_assert_int_eq(prot_err(r - g4 + 8192, g4 - 8192 + 1, PROT_READ),
			 EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_mremap, r, 4096, 8192,
				     MREMAP_MAYMOVE, 0)), EPERM);
	ck_assert_int_eq(ERR(syscall(SYS_pkey_mprotect, r + 8192, 4096,
				     PROT_READ | PROT_WRITE, -1)), EPERM);
	/* up to the region, after it, or far away: the kernel's to answer */
	ck_assert_int_eq(prot_err(r - 4096, 4096, PROT_READ), 0);
	ck_assert_int_eq(prot_err(e, 4096, PROT_READ), 0);
	ck_assert_int_ne(prot_err(r - g4 + 8192, g4 - 8192, PROT_READ),
			 EPERM);
	ck_assert_int_ne(prot_err(r - g4, g4, PROT_READ), EPERM);
	ck_assert_int_ne(prot_err(e + g4, 4096, PROT_READ), EPERM);
	ck_assert_int_ne(prot_err(4096, 4096, PROT_READ), EPERM);
	/* the region is still read-only: a write would fault (not tried) */
	xgpub_all_stats = NULL;
	xgpub_nstats = 0;
}
END_TEST

static Suite *sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("sandbox");

	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_allowed);
	tcase_add_test(tc, test_killed);
	tcase_add_test(tc, test_slots_stay_read_only);
	tcase_add_test(tc, test_drop_user);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* each case leaves its process sandboxed */
	return check_run(sandbox_suite(), true);
}
