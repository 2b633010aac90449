/* SPDX-License-Identifier: MIT */
/*
 * xgpu_spin.h: the pause in a spinning wait, for the loops that poll a
 * ring, an event or a lock without sleeping at either end (the worker,
 * the guest library, a TLS connection's lock): it tells the core that
 * this is a spin, which frees its sibling hyperthread and eases the way
 * out of the loop once the polled word changes.
 */
#ifndef XGPU_SPIN_H
#define XGPU_SPIN_H

static inline void xgpu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

#endif /* XGPU_SPIN_H */
