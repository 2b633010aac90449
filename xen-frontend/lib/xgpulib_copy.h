/* SPDX-License-Identifier: MIT */
/*
 * xgpulib_copy.h: the guest's copy engine and the host-memory regions it
 * copies through (xgpulib_copy.c).
 */
#ifndef XGPULIB_COPY_H
#define XGPULIB_COPY_H

#include "xgpulib.h"

/* memcpy that splits large copies over a few threads */
void xgpulib_memcpy(void *dst, const void *src, size_t len);
/*
 * The data area's bytes [off, off + len) and the worker, whatever the
 * transport (xgpulib_transport.h: put, expect).  stage_put: the worker
 * will read src's bytes there.  stage_sent: the guest wrote them in the
 * data area itself.  0 or -errno (the connection is gone: the next call
 * says so).  Bytes the worker writes come back by an expect made with the
 * request (xgpulib_chan_expect_next).
 */
struct xgpulib_transport;
int xgpulib_stage_put(struct xgpulib_transport *t, size_t off,
		      const void *src, size_t len);
int xgpulib_stage_sent(struct xgpulib_transport *t, size_t off, size_t len);

/*
 * Copies between guest memory and the device.  stream is the wire handle
 * (xgpulib_stream_remote); async: stream ordered (cu*Async), whose
 * errors may come back later.  Pinned host memory is copied in place;
 * pageable memory is staged through the data area in pipelined chunks.
 */
CUresult xgpulib_copy_htod(uint64_t dst, const void *src, size_t n,
			   uint64_t stream, int async);
CUresult xgpulib_copy_dtoh(void *dst, uint64_t src, size_t n, uint64_t stream,
			   int async);
CUresult xgpulib_copy_dtod(uint64_t dst, uint64_t src, size_t n,
			   uint64_t stream, int async);
/* a copy between unified addresses (host or device on either side; host
 * to host in stream order) */
CUresult xgpulib_copy_unified(uint64_t dst, uint64_t src, size_t n,
			      uint64_t stream, int async);

/*
 * A 3D copy *p (or a 2D or 1D array one made into one) on remote stream
 * stream, async or not; and the 3D copy of one slice a 2D copy *p stands
 * for, in *q (xgpulib_api_copy3d.c).
 */
CUresult xgpulib_copy_3d(const CUDA_MEMCPY3D *p, uint64_t stream, int async);
void xgpulib_copy2d_as_3d(CUDA_MEMCPY3D *q, const CUDA_MEMCPY2D *p);
/* a copy of one row (one slice) may leave its pitches 0: they are its
 * width then */
void xgpulib_copy_one_row_pitches(CUDA_MEMCPY3D *q);

/* ---- host-memory regions ------------------------------------------------- */

/* a free region id, reserved (0 when none is left) */
uint32_t xgpulib_region_reserve(void);
/* the worker maps region r->id: record it (copies now find it) */
void xgpulib_region_publish(const struct xgpulib_region *r);
/* remove the region starting at va, copied to *r; false if none */
bool xgpulib_region_take(const void *va, struct xgpulib_region *r);
/* give back a reserved id that was never published */
void xgpulib_region_release(uint32_t id);

/*
 * Regions made and given back (xgpulib_hostmem.c).  Share size bytes of
 * new pages with the worker as a new region (*id, its reply in *r): at
 * *va when it is set (the worker keeps its own memory there: it does not
 * map them), else anywhere (*va set; the worker maps them at the same
 * address where it can).  A CUresult; *err: the transport's error
 * (-EEXIST: something of this process's is at *va), 0 if it had none.
 */
struct xgpuif_hostmem_reply;
CUresult xgpulib_hostmem_share(size_t size, unsigned int flags, void **va,
			       uint32_t *id, struct xgpuif_hostmem_reply *r,
			       int *err);
/*
 * Where no memory is shared with the worker (the network): size bytes
 * (whole pages) at the top of the data area, taken from the copy
 * engine's part for good, as a new published region the worker knows as
 * the same bytes of its own data area (*va, *id).  For a graph's staging
 * buffers (xgpulib_capcopy.c), whose bytes move with host functions'
 * slots (xgpulib_hostfn_push, _pull).  CUDA_ERROR_NOT_SUPPORTED where
 * memory is shared, or when the copy engine would keep less than
 * XGPULIB_KEPT_FLOOR.
 */
#define XGPULIB_KEPT_FLOOR	(8u << 20)
CUresult xgpulib_hostmem_kept(size_t size, void **va, uint32_t *id);
/*
 * Inside a host function, where the slots are mirrored (the network): the
 * data area's bytes [off, off + len) go to the worker with the function's
 * DONE (push: false if not there), or come from the worker's data area now
 * (pull: a round trip through the function's slot).
 */
bool xgpulib_hostfn_push(size_t off, size_t len);
CUresult xgpulib_hostfn_pull(size_t off, size_t len);
/* the network: does [p, p + n) lie in one live allocation of pinned
 * memory (this process's own pages there)? */
bool xgpulib_plain_holds(const void *p, size_t n);
/* the same: the allocation holding p (*va, *size), if any */
bool xgpulib_plain_find(const void *p, void **va, size_t *size);
/* the network: the device pointer of pinned memory p, its buffer made
 * coherent (xgpulib_hostmem.c); CUDA_ERROR_INVALID_VALUE: not such */
CUresult xgpulib_plain_device_pointer(void *p, CUdeviceptr *out);
/* cuMemHostAlloc and cuMemFreeHost: pinned memory, a published region */
CUresult xgpulib_pinned_alloc(void **pp, size_t bytesize,
			      unsigned int flags);
CUresult xgpulib_pinned_free(void *p);
/* does any region share a byte with [p, p + len)? */
bool xgpulib_region_overlaps(const void *p, size_t len);

/*
 * An asynchronous copy of n bytes between pageable host memory and the
 * device on stream s, while s is being captured: wanted says whether
 * host is such memory and s captures; capcopy captures the copy as a host
 * function and a copy through a pinned buffer (xgpulib_capcopy.c).
 */
bool xgpulib_capcopy_wanted(const void *host, size_t n, CUstream s, int ptds);
CUresult xgpulib_capcopy(bool to_dev, CUdeviceptr dev, void *host, size_t n,
			 CUstream s, int ptds);
/* the same for a 3D copy with one pageable side (a 2D one is made one):
 * *done says whether it was this (the result is then the copy's), else
 * copy it as usual */
CUresult xgpulib_capcopy_3d(const CUDA_MEMCPY3D *p, CUstream s, int ptds,
			    bool *done);
/* 2D and 3D copies between two host sides, and h2h, a 1D one, on a
 * stream being captured: a host node that copies when the graph runs
 * (*done; else the copy is not this) */
CUresult xgpulib_capcopy_h2h(void *dst, const void *src, size_t n,
			     CUstream s, int ptds, bool *done);
/*
 * cuGraphAddMemcpyNode's copy *p with one side in pageable memory, or
 * both sides host memory (*done):
 * a child graph node of graph g, after deps, that reads or writes that
 * memory when the graph runs (xgpulib_capcopy.c)
 */
CUresult xgpulib_capcopy_node(CUgraphNode *out, CUgraph g,
			      const CUgraphNode *deps, size_t nd,
			      const CUDA_MEMCPY3D *p, bool *done);

#endif /* XGPULIB_COPY_H */
