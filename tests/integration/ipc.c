// SPDX-License-Identifier: MIT
/*
 * ipc: IPC memory handles between two processes of one guest, and not
 * between guests.
 *
 *   ipc            a child of the same user opens the parent's handle
 *   ipc other UID  the child becomes UID first (needs root): its worker
 *                  is of another IPC domain and must be refused
 *   ipc env NAME VALUE
 *                  the child sets NAME=VALUE first (over the network:
 *                  another key, XGPU_TLS_PSK, so another peer): refused
 *
 * The child is forked before any CUDA call (a child of an initialised
 * process gets no driver), so each process has a channel and a worker of
 * its own.  Also: the handle holds a token, not the driver's handle; a
 * forged token is refused; the exporter cannot open its own handle.
 * Prints "PASS ipc ..." or "FAIL ..." (or "SKIP ..." when the other user
 * cannot reach the daemon) and exits 0 or 1.
 */
#include <cuda.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child(int rfd, int wfd, long uid, const char *name,
		 const char *value)
{
	CUipcMemHandle h;
	CUdeviceptr p = 0;
	CUcontext c;
	CUdevice d;
	int rc;

	if (read(rfd, &h, sizeof(h)) != (ssize_t)sizeof(h))
		return 2;
	if (uid >= 0 && (setgroups(0, NULL) || setgid((gid_t)uid) ||
			 setuid((uid_t)uid)))
		return 3;
	if (name && setenv(name, value, 1))
		return 3;
	if (cuInit(0) || cuDeviceGet(&d, 0) ||
	    cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) {
		rc = -1;	/* no daemon for this user */
	} else {
		rc = (int)cuIpcOpenMemHandle(&p, h,
					     CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
		if (rc == CUDA_SUCCESS)
			rc = (int)cuIpcCloseMemHandle(p) ? 9999 : 0;
	}
	return write(wfd, &rc, sizeof(rc)) == sizeof(rc) ? 0 : 4;
}

int main(int argc, char **argv)
{
	long uid = argc > 2 && !strcmp(argv[1], "other") ? atol(argv[2]) : -1;
	bool env = argc > 3 && !strcmp(argv[1], "env");
	const char *name = env ? argv[2] : NULL, *value = env ? argv[3] : NULL;
	/* the child is of another IPC domain: must be refused */
	bool apart = uid >= 0 || env;
	int to_child[2], to_parent[2], rc = -2, st = 0, bad = 0;
	CUipcMemHandle h, forged;
	CUdeviceptr d = 0, p = 0;
	CUcontext c;
	CUdevice dev;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		return 1;
	pid = fork();
	if (pid == 0)
		_exit(child(to_child[0], to_parent[1], uid, name, value));
	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&c, dev) || cuCtxSetCurrent(c) ||
	    cuMemAlloc(&d, 1 << 16) || cuIpcGetMemHandle(&h, d)) {
		printf("FAIL ipc: no handle to export\n");
		return 1;
	}
	if (memcmp(h.reserved, "XGPUIPC", 8)) {
		printf("FAIL ipc: the handle is not a token\n");
		bad = 1;
	}
	/* a forged token, and the exporter's own handle */
	memcpy(&forged, &h, sizeof(h));
	forged.reserved[12] ^= 0x55;
	if (cuIpcOpenMemHandle(&p, forged, 1) != CUDA_ERROR_INVALID_VALUE) {
		printf("FAIL ipc: a forged token opened\n");
		bad = 1;
	}
	if (cuIpcOpenMemHandle(&p, h, 1) == CUDA_SUCCESS) {
		printf("FAIL ipc: the exporter opened its own handle\n");
		bad = 1;
	}
	if (write(to_child[1], &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    read(to_parent[0], &rc, sizeof(rc)) != (ssize_t)sizeof(rc)) {
		waitpid(pid, &st, 0);
		printf("FAIL ipc: the child said nothing (exit %d)\n",
		       WEXITSTATUS(st));
		return 1;
	}
	waitpid(pid, &st, 0);
	cuMemFree(d);
	if (!apart && rc != CUDA_SUCCESS) {
		printf("FAIL ipc: the same guest's process could not open the "
		       "handle (%d)\n", rc);
		bad = 1;
	} else if (uid >= 0 && rc == -1) {
		printf("SKIP ipc other: user %ld cannot reach the daemon\n",
		       uid);
		return bad;
	} else if (apart && rc != CUDA_ERROR_INVALID_VALUE) {
		printf("FAIL ipc: another guest's process got %d, not "
		       "CUDA_ERROR_INVALID_VALUE\n", rc);
		bad = 1;
	}
	if (!bad)
		printf("PASS ipc%s\n", uid >= 0 ? " other" : env ? " env" : "");
	return bad;
}
