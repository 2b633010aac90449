/* SPDX-License-Identifier: MIT */
/*
 * xgpu_vcpu_priv.h: between the coordinator and its backends.
 */
#ifndef XGPU_VCPU_PRIV_H
#define XGPU_VCPU_PRIV_H

#include <stddef.h>

#include "xgpu_vcpu.h"

_Static_assert(offsetof(struct xgpu_vcpu_backend, name) == 0,
	       "xgpu_table_lookup() finds a backend by its first member");

/* the backend's private state when c runs on backend b, else NULL */
void *xgpu_vcpu_backend_priv(struct xgpu_vcpu *c,
			     const struct xgpu_vcpu_backend *b);

#endif /* XGPU_VCPU_PRIV_H */
