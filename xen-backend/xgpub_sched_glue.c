// SPDX-License-Identifier: MIT
/*
 * xgpub_sched_glue.c: the GPU scheduler's place in the daemon.  Until the
 * scheduler drives the workers, guests run first come, first served and
 * the view is empty.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "xgpub.h"
#include "xgpub_sched_glue.h"

void xgpub_sched_view(const char *key, struct xgpub_sched_view *v)
{
	(void)key;
	memset(v, 0, sizeof(*v));
	snprintf(v->state, sizeof(v->state), "-");
}

void xgpub_sched_settings_changed(const char *key, uint32_t weight,
				  uint32_t cap)
{
	(void)key;
	(void)weight;
	(void)cap;
}
