// SPDX-License-Identifier: MIT
/*
 * xgpub_ipc.c: the registry of exported IPC handles (xgpub_ipc.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "xgpub_ipc.h"

struct entry {
	uint32_t kind;		/* 0: free */
	pid_t owner;
	uint8_t token[16];
	char domain[XGPUB_IPC_DOMAIN_LEN];
	uint8_t real[64];
};

struct registry {
	int lock;
	struct entry e[XGPUB_IPC_ENTRIES];
};

static struct registry *reg;

int xgpub_ipc_init(void)
{
	void *p;

	if (reg)
		return 0;
	p = mmap(NULL, sizeof(*reg), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	reg = p;
	return 0;
}

static void lock(void)
{
	while (__atomic_exchange_n(&reg->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&reg->lock, __ATOMIC_RELAXED))
			;
}

static void unlock(void)
{
	__atomic_store_n(&reg->lock, 0, __ATOMIC_RELEASE);
}

int xgpub_ipc_export(int kind, const char *domain, const uint8_t real[64],
		     uint8_t token[16])
{
	struct entry *free_e = NULL;
	int rc = -ENOSPC;

	if (!reg)
		return -ENODEV;
	lock();
	for (int i = 0; i < XGPUB_IPC_ENTRIES; i++) {
		struct entry *e = &reg->e[i];

		if (!e->kind) {
			if (!free_e)
				free_e = e;
			continue;
		}
		if (e->kind == (uint32_t)kind && e->owner == getpid() &&
		    !memcmp(e->real, real, 64) &&
		    !strncmp(e->domain, domain, sizeof(e->domain))) {
			memcpy(token, e->token, 16);
			unlock();
			return 0;
		}
	}
	if (free_e && getrandom(free_e->token, 16, 0) == 16) {
		free_e->kind = (uint32_t)kind;
		free_e->owner = getpid();
		strncpy(free_e->domain, domain, sizeof(free_e->domain) - 1);
		free_e->domain[sizeof(free_e->domain) - 1] = 0;
		memcpy(free_e->real, real, 64);
		memcpy(token, free_e->token, 16);
		rc = 0;
	}
	unlock();
	return rc;
}

int xgpub_ipc_lookup(int kind, const char *domain, const uint8_t token[16],
		     uint8_t real[64])
{
	int rc = -ENOENT;

	if (!reg)
		return -ENOENT;
	lock();
	for (int i = 0; i < XGPUB_IPC_ENTRIES; i++) {
		struct entry *e = &reg->e[i];

		if (e->kind == (uint32_t)kind && !memcmp(e->token, token, 16) &&
		    !strncmp(e->domain, domain, sizeof(e->domain))) {
			memcpy(real, e->real, 64);
			rc = 0;
			break;
		}
	}
	unlock();
	return rc;
}

void xgpub_ipc_drop(const uint8_t token[16])
{
	if (!reg)
		return;
	lock();
	for (int i = 0; i < XGPUB_IPC_ENTRIES; i++)
		if (reg->e[i].kind && reg->e[i].owner == getpid() &&
		    !memcmp(reg->e[i].token, token, 16))
			memset(&reg->e[i], 0, sizeof(reg->e[i]));
	unlock();
}

void xgpub_ipc_forget_mine(void)
{
	if (!reg)
		return;
	lock();
	for (int i = 0; i < XGPUB_IPC_ENTRIES; i++)
		if (reg->e[i].kind && reg->e[i].owner == getpid())
			memset(&reg->e[i], 0, sizeof(reg->e[i]));
	unlock();
}

void xgpub_ipc_forget_pid(pid_t pid)
{
	long spins = 0;

	if (!reg)
		return;
	while (__atomic_exchange_n(&reg->lock, 1, __ATOMIC_ACQUIRE))
		if (++spins > 100000000L)
			return;
	for (int i = 0; i < XGPUB_IPC_ENTRIES; i++)
		if (reg->e[i].kind && reg->e[i].owner == pid)
			memset(&reg->e[i], 0, sizeof(reg->e[i]));
	unlock();
}
