/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_shadow.h: registered host memory over the network, for kernels.
 *
 * Over the network (and so through a chain, where a Dom0 worker's driver
 * is this library) the GPU cannot reach this host's pages.  A registered
 * range the program asks a device pointer for (cuMemHostGetDevicePointer,
 * or cuMemHostRegister with DEVICEMAP) gets memory the GPU reaches: pinned
 * memory of the GPU host's worker at the range's own pages' address
 * (HOST_REGISTER of XGPUIF_REGION_ANON: the device pointer is the host
 * pointer and kernels reach it over the bus, as natively), else device
 * memory at that address where the worker's driver reserves it there,
 * else device memory anywhere.  The library cannot watch the pages
 * (through a chain another process or domain writes them), so it keeps a
 * copy of what that memory holds as last known, and compares:
 *
 *   - before every request of GPU work that may read it (a launch, a
 *     graph's launch, a memset, a copy between device memory:
 *     xgpulib_rpc.c), the range's bytes that differ from the copy go to the device memory (runs of 64 KiB
 *     blocks), on a stream of the range's own, waited for;
 *   - after a synchronize answers success (context, stream, event, or a
 *     query that says done, once per such request sent since), the device
 *     memory comes back and each byte the program has not changed since
 *     takes the device's value (a byte both changed keeps the
 *     program's: the program's write is the later one).
 *
 * Release consistency at the boundaries of GPU work, as with coherent
 * managed memory (xgpulib_mco.h), at the cost of a comparison of every
 * such range per launch and a copy back per synchronize: meant for the
 * small mapped buffers programs hand kernels, not for staging buffers.
 * A kernel and the CPU that hand values back and forth while the kernel
 * runs cannot work (as with coherent memory).
 */
#ifndef XGPULIB_SHADOW_H
#define XGPULIB_SHADOW_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ranges live (read without a lock: a hint that skips the work) */
extern unsigned int xgpulib_shadow_live;

/*
 * Memory the GPU reaches for the registered bytes [p, p + size), in the
 * current context; the device address of p in *dptr (p itself where the
 * worker mapped the pages or reserved the granules around it there).  Only
 * those bytes are compared and copied, not the rest of their pages
 * (another object's, which the program may not have written: an
 * address sanitizer says so).  A CUresult.
 */
CUresult xgpulib_shadow_add(void *p, size_t size, uint64_t *dptr);
/* the device address of p in a range, false if p is in none */
bool xgpulib_shadow_dptr(const void *p, uint64_t *dptr);
/* the range at p is unregistered: its last values come back, then its
 * device memory goes */
void xgpulib_shadow_del(void *p);
/* before request op: what the program changed goes to the device */
void xgpulib_shadow_before(uint16_t op);
/* after request op answered rc: a synchronize brings the device's back */
void xgpulib_shadow_after(uint16_t op, CUresult rc);
/* a synchronize answered without a reply (xgpulib_fence.c) */
void xgpulib_shadow_synced(void);
/* in a forked child: the parent's ranges and device memory are not its
 * own (its registrations are gone too: xgpulib_hostreg_forked) */
void xgpulib_shadow_forked(void);

#endif /* XGPULIB_SHADOW_H */
