/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_mco.h: coherent managed memory, the mode of cuMemAllocManaged
 * where the worker cannot map the program's pages at the program's
 * address (the Xen transport; XGPU_MANAGED=coherent elsewhere).
 *
 * The memory is the worker driver's managed memory at address A; the
 * program's pages at A are a host-memory region shared with the worker
 * (not at A there), which this layer keeps coherent with release
 * consistency at the boundaries of GPU work:
 *
 *   - a block (XGPU_MANAGED_BLOCK_KB, default 256 KiB) starts
 *     inaccessible; the program's first touch faults (SIGSEGV) and the
 *     handler fetches the block (MANAGED_FETCH: the worker waits for the
 *     context's work, then copies the block into the shared pages) and
 *     makes it readable; a write faults once more and marks it dirty
 *     (readable and writable);
 *   - before every request to the worker (xgpulib_rpc.c: anything may
 *     let the GPU read or write the memory), the dirty blocks are
 *     written back (MANAGED_FLUSH, posted: done before the request runs)
 *     and every fetched block is made inaccessible again.
 *
 * Locking: one mutex (mg_mu) guards the table and the blocks' states; the
 * signal handler takes it too, which is safe because nothing that holds it
 * (or the channel's lock, which a fetch takes) touches managed memory:
 * request payloads in managed memory are copied out first
 * (xgpulib_mco_touches), and the library's copy threads stay away from
 * it (xgpulib_copy.c).
 *
 * The network (no pages shared with the worker): the program's pages are
 * this process's own, mapped twice; a fetch is answered with the block's
 * bytes in the data area's part kept for blocks, which land in the second
 * mapping, and a write-back puts them there before its request (waited
 * for: the next block uses the same part).  A host function's blocks go
 * through its slot as elsewhere, the bytes with the slot's frames
 * (xgpu_mirror.h, FILL).
 *
 * Layer: below xgpulib_rpc.c, above xgpulib_chan.c (its own requests go
 * straight onto the channel, in the allocation's context).
 */
#ifndef XGPULIB_MCO_H
#define XGPULIB_MCO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpulib_chan.h"
#include "xgpuif.h"

/* allocations live (read without a lock: a hint that skips the work) */
extern unsigned int xgpulib_mco_live;

/*
 * Track [va, va + size) (whole pages, the shared pages of region, at the
 * address of the worker's managed memory, which holds the bytes
 * [va + lo, va + hi) of them, made in context ctx) on channel c: its
 * pages become inaccessible until touched; bytes outside [lo, hi) are
 * never copied (an allocation's last page, a variables' allocation that
 * starts inside a page).  The first call installs the SIGSEGV handler.
 * alias: where the transport shares no memory (the network), the same
 * pages mapped a second time, always writable (region is then this
 * process's alone): the blocks travel through the data area's part the
 * transport keeps for them (mco_off) from and into it.  dptr: the
 * worker's address of va (va itself, but for pinned memory the network
 * made coherent: xgpulib_hostmem.c).  0, or -1 (nothing changed) when it
 * cannot.
 */
int xgpulib_mco_add(struct xgpulib_chan *c, void *va, size_t size,
		    size_t lo, size_t hi, uint32_t region, uint64_t ctx,
		    void *alias, uint64_t dptr);
/* the largest block the channel can carry (0: any) */
size_t xgpulib_mco_max_block(const struct xgpulib_chan *c);
/* forget the allocation at va (it is being freed: nothing written back) */
void xgpulib_mco_del(void *va);
/* does [p, p + n) touch coherent managed memory? */
bool xgpulib_mco_touches(const void *p, size_t n);
/* write back what the program wrote, make every block inaccessible */
void xgpulib_mco_release(void);
/*
 * A host function's thread asks the worker through its slot i (the slots
 * of xgpulib_api_hostfn.c): state FETCH or FLUSH with the block's fields,
 * after the data area's bytes [mem->off, mem->off + ship) where the
 * slots are mirrored; waits for DUE: the worker's answer (mc_status).
 */
CUresult xgpulib_hostfn_ask(unsigned int i, uint32_t state, uint64_t dptr,
			    const struct xgpuif_memref *mem, size_t ship);
/*
 * The slot whose host function the calling thread runs, -1 if none
 * (xgpulib_api_hostfn.c): its fetches cannot wait for the GPU's work,
 * which waits for it, and go through that slot.
 */
int xgpulib_hostfn_running(void);
/* the calling thread's host function returned: what it wrote goes back
 * (through its slot still), before its stream goes on */
void xgpulib_mco_hostfn_end(void);
/* in a forked child: the parent's managed memory becomes inaccessible
 * memory of the child's own (as natively, it is not the child's) */
void xgpulib_mco_forked(void);

#endif /* XGPULIB_MCO_H */
