// SPDX-License-Identifier: MIT
/*
 * xgpulib_reg.c: the live registrations of the program's callbacks
 * (xgpulib_reg.h).
 */
#include "xgpulib_reg.h"

void xgpulib_reg_add(struct xgpulib_regs *l, struct xgpulib_reg *r)
{
	pthread_mutex_lock(&l->mu);
	r->busy = false;
	r->next = l->head;
	l->head = r;
	pthread_mutex_unlock(&l->mu);
}

struct xgpulib_reg *xgpulib_reg_take(struct xgpulib_regs *l, const void *h)
{
	struct xgpulib_reg *r;

	pthread_mutex_lock(&l->mu);
	for (r = l->head; r && (const void *)r != h; r = r->next)
		;
	if (r && r->busy)
		r = NULL;
	if (r)
		r->busy = true;
	pthread_mutex_unlock(&l->mu);
	return r;
}

void xgpulib_reg_done(struct xgpulib_regs *l, struct xgpulib_reg *r,
		      bool gone)
{
	pthread_mutex_lock(&l->mu);
	if (!gone) {
		r->busy = false;
	} else {
		for (struct xgpulib_reg **pp = &l->head; *pp;
		     pp = &(*pp)->next) {
			if (*pp == r) {
				*pp = r->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&l->mu);
}
