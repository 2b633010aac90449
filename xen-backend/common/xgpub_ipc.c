// SPDX-License-Identifier: MIT
/*
 * xgpub_ipc.c: the registry of exported IPC handles (xgpub_ipc.h): the
 * table, and a worker's way to it (the daemon's broker, or its own table
 * when run inline).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "xgpub.h"
#include "xgpub_broker.h"
#include "xgpub_ipc.h"

struct entry {
	uint32_t kind;		/* 0: free */
	pid_t owner;
	uint8_t token[16];
	char domain[XGPUB_IPC_DOMAIN_LEN];
	uint8_t real[64];
};

/* in the daemon only its event loop calls in; an inline worker's threads
 * may race */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct entry *reg;		/* XGPUB_IPC_ENTRIES, private */
static const size_t reg_bytes = sizeof(struct entry) * XGPUB_IPC_ENTRIES;

static int reg_map(void)
{
	void *p;

	if (reg)
		return 0;
	p = mmap(NULL, reg_bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
#ifdef MADV_WIPEONFORK
	/* a child (a worker) sees zeroes, never the entries */
	(void)madvise(p, reg_bytes, MADV_WIPEONFORK);
#endif
	reg = p;
	return 0;
}

void xgpub_ipc_reg_after_fork(void)
{
	/* zeroed already where the kernel wipes on fork; gone either way
	 * (the daemon's pages stay the daemon's) */
	if (reg)
		munmap(reg, reg_bytes);
	reg = NULL;
	pthread_mutex_init(&mu, NULL);
}

static bool same_domain(const struct entry *e, const char *domain)
{
	return !strncmp(e->domain, domain, sizeof(e->domain));
}

int xgpub_ipc_reg_export(pid_t owner, int kind, const char *domain,
			 const uint8_t real[64], uint8_t token[16])
{
	struct entry *free_e = NULL;
	int rc = -ENOSPC, in_domain = 0;

	if (!xgpub_ipc_kind_ok(kind) || owner <= 0)
		return -EINVAL;
	pthread_mutex_lock(&mu);
	if (reg_map()) {
		pthread_mutex_unlock(&mu);
		return -ENOMEM;
	}
	for (int i = 0; i < XGPUB_IPC_ENTRIES; i++) {
		struct entry *e = &reg[i];

		if (!e->kind) {
			if (!free_e)
				free_e = e;
			continue;
		}
		if (!same_domain(e, domain))
			continue;
		in_domain++;
		if (e->kind == (uint32_t)kind && e->owner == owner &&
		    !memcmp(e->real, real, 64)) {
			memcpy(token, e->token, 16);
			pthread_mutex_unlock(&mu);
			return 0;
		}
	}
	if (free_e && in_domain < XGPUB_IPC_PER_DOMAIN &&
	    getrandom(free_e->token, 16, 0) == 16) {
		free_e->kind = (uint32_t)kind;
		free_e->owner = owner;
		strncpy(free_e->domain, domain, sizeof(free_e->domain) - 1);
		free_e->domain[sizeof(free_e->domain) - 1] = 0;
		memcpy(free_e->real, real, 64);
		memcpy(token, free_e->token, 16);
		rc = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

int xgpub_ipc_reg_lookup(int kind, const char *domain,
			 const uint8_t token[16], uint8_t real[64],
			 pid_t *owner)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&mu);
	for (int i = 0; reg && i < XGPUB_IPC_ENTRIES; i++) {
		struct entry *e = &reg[i];

		if (e->kind && e->kind == (uint32_t)kind &&
		    !memcmp(e->token, token, 16) && same_domain(e, domain)) {
			memcpy(real, e->real, 64);
			if (owner)
				*owner = e->owner;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void xgpub_ipc_reg_forget(pid_t owner)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; reg && i < XGPUB_IPC_ENTRIES; i++)
		if (reg[i].kind && reg[i].owner == owner)
			memset(&reg[i], 0, sizeof(reg[i]));
	pthread_mutex_unlock(&mu);
}

/* ---- a worker's side ---------------------------------------------------- */

/* this worker registered something since its last forget */
static bool exported;

static int ask(uint32_t op, int kind, const uint8_t token[16],
	       const uint8_t real[64], struct xgpub_broker_rep *rep, int *fd)
{
	struct xgpub_broker_req req;

	memset(&req, 0, sizeof(req));
	req.magic = XGPUB_BROKER_MAGIC;
	req.op = op;
	req.kind = (uint32_t)kind;
	if (token)
		memcpy(req.token, token, 16);
	if (real)
		memcpy(req.real, real, 64);
	return xgpub_broker_call(&req, rep, fd);
}

void xgpub_peer_domain(const uint8_t hash[32], char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char name[4 + 24 + 1] = "net:";

	for (int i = 0; i < 12; i++) {
		name[4 + 2 * i] = hex[hash[i] >> 4];
		name[5 + 2 * i] = hex[hash[i] & 15];
	}
	name[28] = 0;
	snprintf(buf, len, "%s", name);
}

int xgpub_ipc_export(int kind, const char *domain, const uint8_t real[64],
		     uint8_t token[16])
{
	struct xgpub_broker_rep rep;
	int rc;

	if (xgpub_broker_fd < 0)
		return xgpub_ipc_reg_export(getpid(), kind, domain, real,
					    token);
	/* set first: a lost answer may still have registered it */
	exported = true;
	rc = ask(XGPUB_BROKER_IPC_EXPORT, kind, NULL, real, &rep, NULL);
	if (rc == 0)
		memcpy(token, rep.token, 16);
	return rc;
}

int xgpub_ipc_lookup(int kind, const char *domain, const uint8_t token[16],
		     uint8_t real[64])
{
	struct xgpub_broker_rep rep;
	int rc;

	if (xgpub_ipc_kind_fd(kind))
		return -EINVAL;
	if (xgpub_broker_fd < 0)
		return xgpub_ipc_reg_lookup(kind, domain, token, real, NULL);
	rc = ask(XGPUB_BROKER_IPC_LOOKUP, kind, token, NULL, &rep, NULL);
	if (rc == 0)
		memcpy(real, rep.real, 64);
	return rc;
}

int xgpub_ipc_take_fd(int kind, const char *domain, const uint8_t token[16])
{
	struct xgpub_broker_rep rep;
	struct xgpub_ipc_fd f;
	uint8_t real[64];
	pid_t owner;
	int fd = -1, rc;

	if (!xgpub_ipc_kind_fd(kind))
		return -EINVAL;
	if (xgpub_broker_fd >= 0) {
		rc = ask(XGPUB_BROKER_IPC_TAKE_FD, kind, token, NULL, &rep,
			 &fd);
		return rc ? rc : fd < 0 ? -EPROTO : fd;
	}
	/* inline: this process's own exports only */
	if (xgpub_ipc_reg_lookup(kind, domain, token, real, &owner) ||
	    owner != getpid())
		return -ENOENT;
	memcpy(&f, real, sizeof(f));
	fd = fcntl(f.fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -ENOENT : fd;
}

int xgpub_ipc_forget_mine(void)
{
	struct xgpub_broker_rep rep;

	int rc;

	if (xgpub_broker_fd < 0) {
		xgpub_ipc_reg_forget(getpid());
		return 0;
	}
	if (!exported)
		return 0;
	rc = ask(XGPUB_BROKER_IPC_FORGET, 0, NULL, NULL, &rep, NULL);
	if (rc == 0)
		exported = false;
	return rc;
}
