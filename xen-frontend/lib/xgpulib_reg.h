/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_reg.h: registrations of the program's callbacks that the
 * worker holds (async notifications, xgpulib_api_ext.c; the driver's
 * error log, xgpulib_api_logs.c): a list of the live ones, each a record
 * of ours whose address is the program's handle.  A handle is looked at
 * only once found among the live records, so a stale or forged one is
 * refused without being read; one being unregistered is busy.
 */
#ifndef XGPULIB_REG_H
#define XGPULIB_REG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* the first member of each record, so that its address is the record's */
struct xgpulib_reg {
	bool busy;		/* being unregistered */
	uint64_t remote;	/* the worker's handle of it */
	struct xgpulib_reg *next;
};

struct xgpulib_regs {
	pthread_mutex_t mu;
	struct xgpulib_reg *head;
};

#define XGPULIB_REGS_INIT { PTHREAD_MUTEX_INITIALIZER, NULL }

/* r (its remote set) is live from now on */
void xgpulib_reg_add(struct xgpulib_regs *l, struct xgpulib_reg *r);
/* the live, not busy record whose address is h, made busy; NULL if none */
struct xgpulib_reg *xgpulib_reg_take(struct xgpulib_regs *l, const void *h);
/* after its unregistration: gone, it is unlinked (the caller frees it);
 * else live and not busy again */
void xgpulib_reg_done(struct xgpulib_regs *l, struct xgpulib_reg *r,
		      bool gone);

#endif /* XGPULIB_REG_H */
