// SPDX-License-Identifier: MIT
/*
 * xgpulib_capcopy.c: an asynchronous copy between pageable host memory and
 * the device on a stream being captured (1D, and 2D: rows).
 *
 * The driver records such a copy as a memcpy node that reads (or writes)
 * the host memory each time the graph runs.  The worker cannot reach a
 * guest's pageable memory when the graph runs; it refuses to capture a
 * copy staged through the channel (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
 * the graph would copy from the staging area at every launch).  So the
 * library captures the copy as the program's process would do it: a
 * pinned staging buffer of its own (shared with the worker) and two
 * nodes, a host function that moves the bytes between the program's
 * memory and the buffer (a 2D copy's rows packed in it), run by the
 * library in the program's process when the graph gets there, and a
 * memcpy node between the buffer and the device (or array).  Host to device: host node, then copy; device to host:
 * copy, then host node.  The bytes are read and written when the graph
 * runs, as natively.  A graph's node list shows the two nodes where a
 * native capture shows one memcpy node.
 *
 * The buffer lives as long as the graph does (and the executable graphs
 * made from it): a user object that owns it is moved to the graph; its
 * destructor, which may not call the driver API, leaves the buffer on a
 * list of spare ones that later captures take from.  A buffer is never
 * freed: unregistering pinned memory while a stream is captured is a call
 * the driver refuses there (and it invalidates the capture), so the
 * process keeps as many buffers as it had graphs alive at once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

struct pcopy {
	uint8_t *staging;	/* pinned, the worker's too: rows of width
				 * bytes, one after the other */
	uint8_t *host;		/* the program's pageable memory: its first
				 * row */
	size_t cap;		/* the buffer's bytes */
	size_t width, rows, pitch;	/* the host side's rows */
	struct pcopy *next;	/* on the list of spare buffers */
};

static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pcopy *spare;

static void CUDA_CB copy_in(void *p)
{
	struct pcopy *c = p;

	for (size_t r = 0; r < c->rows; r++)
		memcpy(c->staging + r * c->width, c->host + r * c->pitch,
		       c->width);
}

static void CUDA_CB copy_out(void *p)
{
	struct pcopy *c = p;

	for (size_t r = 0; r < c->rows; r++)
		memcpy(c->host + r * c->pitch, c->staging + r * c->width,
		       c->width);
}

/* the user object's destructor: no driver call here */
static void CUDA_CB drop(void *p)
{
	struct pcopy *c = p;

	pthread_mutex_lock(&spare_mu);
	c->next = spare;
	spare = c;
	pthread_mutex_unlock(&spare_mu);
}

/* a spare buffer of at least bytes, taken off the list, or NULL */
static struct pcopy *take_spare(size_t bytes)
{
	struct pcopy **pp, *c = NULL;

	pthread_mutex_lock(&spare_mu);
	for (pp = &spare; *pp; pp = &(*pp)->next) {
		if ((*pp)->cap >= bytes) {
			c = *pp;
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&spare_mu);
	return c;
}

bool xgpulib_capcopy_wanted(const void *host, size_t n, CUstream s, int ptds)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	uint64_t off;

	if (!n || !host || !xgpulib_captures_begun() ||
	    xgpulib_region_find(host, n, &off) ||
	    xgpulib_region_coherent(host, n))
		return false;
	return xgpulib_capture_info(s, &st, NULL, ptds) == CUDA_SUCCESS &&
	       st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/*
 * A pinned buffer for rows x width bytes of host memory at host (pitch
 * apart), owned by a user object moved to the graph stream s captures
 * into: *out, or an error.
 */
static CUresult staging_for(CUstream s, int ptds, uint8_t *host,
			    size_t width, size_t rows, size_t pitch,
			    struct pcopy **out)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph g = NULL;
	CUuserObject uo;
	struct pcopy *c;
	void *buf = NULL;
	CUresult rc;

	rc = xgpulib_capture_info_v3(s, &st, NULL, &g, NULL, NULL, NULL, ptds);
	if (rc)
		return rc;
	if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || !g)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	c = take_spare(width * rows);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return CUDA_ERROR_OUT_OF_MEMORY;
		rc = xgpulib_pinned_alloc(&buf, width * rows, 0);
		if (rc) {
			free(c);
			return rc;
		}
		c->staging = buf;
		c->cap = width * rows;
	}
	c->host = host;
	c->width = width;
	c->rows = rows;
	c->pitch = pitch;
	rc = cuUserObjectCreate(&uo, c, drop, 1,
				CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
	if (rc) {
		drop(c);	/* a spare buffer now */
		return rc;
	}
	rc = cuGraphRetainUserObject(g, uo, 1, CU_GRAPH_USER_OBJECT_MOVE);
	if (rc) {
		cuUserObjectRelease(uo, 1);	/* its destructor runs */
		return rc;
	}
	*out = c;
	return CUDA_SUCCESS;
}

CUresult xgpulib_capcopy(bool to_dev, CUdeviceptr dev, void *host, size_t n,
			 CUstream s, int ptds)
{
	struct pcopy *c;
	CUresult rc = staging_for(s, ptds, host, n, 1, n, &c);

	if (rc)
		return rc;
	if (to_dev) {
		rc = xgpulib_launch_host_func(s, copy_in, c, ptds);
		if (rc == CUDA_SUCCESS)
			rc = xgpulib_memcpy_htod_async(dev, c->staging, n, s,
						       ptds);
	} else {
		rc = xgpulib_memcpy_dtoh_async(c->staging, dev, n, s, ptds);
		if (rc == CUDA_SUCCESS)
			rc = xgpulib_launch_host_func(s, copy_out, c, ptds);
	}
	return rc;
}

/* a 2D copy's side in pageable host memory: its first byte, or NULL */
static uint8_t *pageable_side(CUmemorytype t, const void *host,
			      CUdeviceptr dptr, size_t x, size_t y,
			      size_t pitch, size_t width, size_t height)
{
	size_t span = (y + height - 1) * pitch + x + width;
	uint64_t off;

	if (t == CU_MEMORYTYPE_UNIFIED && !xgpulib_is_device(dptr))
		host = (const void *)(uintptr_t)dptr;
	else if (t != CU_MEMORYTYPE_HOST)
		return NULL;
	if (!host || xgpulib_region_find(host, span, &off) ||
	    xgpulib_region_coherent(host, span))
		return NULL;
	return (uint8_t *)(uintptr_t)host + y * pitch + x;
}

CUresult xgpulib_capcopy_2d(const CUDA_MEMCPY2D *p, CUstream s, int ptds,
			    bool *done)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	uint8_t *src, *dst;
	CUDA_MEMCPY2D q;
	struct pcopy *c;
	CUresult rc;

	*done = false;
	if (!p || !p->WidthInBytes || !p->Height || !xgpulib_captures_begun())
		return CUDA_SUCCESS;
	src = pageable_side(p->srcMemoryType, p->srcHost, p->srcDevice,
			    p->srcXInBytes, p->srcY, p->srcPitch,
			    p->WidthInBytes, p->Height);
	dst = pageable_side(p->dstMemoryType, p->dstHost, p->dstDevice,
			    p->dstXInBytes, p->dstY, p->dstPitch,
			    p->WidthInBytes, p->Height);
	if (!src == !dst ||
	    xgpulib_capture_info(s, &st, NULL, ptds) != CUDA_SUCCESS ||
	    st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return CUDA_SUCCESS;	/* not this file's */
	*done = true;
	rc = staging_for(s, ptds, src ? src : dst, p->WidthInBytes, p->Height,
			 src ? p->srcPitch : p->dstPitch, &c);
	if (rc)
		return rc;
	/* the host side becomes the buffer, its rows packed */
	q = *p;
	if (src) {
		q.srcMemoryType = CU_MEMORYTYPE_HOST;
		q.srcHost = c->staging;
		q.srcXInBytes = 0;
		q.srcY = 0;
		q.srcPitch = p->WidthInBytes;
		rc = xgpulib_launch_host_func(s, copy_in, c, ptds);
		if (rc == CUDA_SUCCESS)
			rc = xgpulib_memcpy_2d_async(&q, s, ptds);
	} else {
		q.dstMemoryType = CU_MEMORYTYPE_HOST;
		q.dstHost = c->staging;
		q.dstXInBytes = 0;
		q.dstY = 0;
		q.dstPitch = p->WidthInBytes;
		rc = xgpulib_memcpy_2d_async(&q, s, ptds);
		if (rc == CUDA_SUCCESS)
			rc = xgpulib_launch_host_func(s, copy_out, c, ptds);
	}
	return rc;
}
