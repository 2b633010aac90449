// SPDX-License-Identifier: MIT
/*
 * xgpulib_capcopy.c: an asynchronous copy between pageable host memory and
 * the device on a stream being captured.
 *
 * The driver records such a copy as a memcpy node that reads (or writes)
 * the host memory each time the graph runs.  The worker cannot reach a
 * guest's pageable memory when the graph runs; it refuses to capture a
 * copy staged through the channel (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
 * the graph would copy from the staging area at every launch).  So the
 * library captures the copy as the program's process would do it: a
 * pinned staging buffer of its own (shared with the worker) and two
 * nodes, a host function that moves the bytes between the program's
 * memory and the buffer, run by the library in the program's process
 * when the graph gets there, and a memcpy node between the buffer and
 * the device.  Host to device: host node, then copy; device to host:
 * copy, then host node.  The bytes are read and written when the graph
 * runs, as natively.  A graph's node list shows the two nodes where a
 * native capture shows one memcpy node.
 *
 * The buffer lives as long as the graph does (and the executable graphs
 * made from it): a user object that owns it is moved to the graph; its
 * destructor, which may not call the driver API, leaves the buffer on a
 * list that the next such capture frees.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_copy.h"
#include "xgpulib_entry.h"
#include "xgpulib_graph.h"

struct pcopy {
	void *staging;		/* pinned, the worker's too */
	uint8_t *host;		/* the program's pageable memory */
	size_t n;
	struct pcopy *next;	/* on the list of buffers to free */
};

static pthread_mutex_t dead_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pcopy *dead;

static void CUDA_CB copy_in(void *p)
{
	struct pcopy *c = p;

	memcpy(c->staging, c->host, c->n);
}

static void CUDA_CB copy_out(void *p)
{
	struct pcopy *c = p;

	memcpy(c->host, c->staging, c->n);
}

/* the user object's destructor: no driver call here */
static void CUDA_CB drop(void *p)
{
	struct pcopy *c = p;

	pthread_mutex_lock(&dead_mu);
	c->next = dead;
	dead = c;
	pthread_mutex_unlock(&dead_mu);
}

static void free_dead(void)
{
	struct pcopy *c;

	pthread_mutex_lock(&dead_mu);
	c = dead;
	dead = NULL;
	pthread_mutex_unlock(&dead_mu);
	while (c) {
		struct pcopy *next = c->next;

		xgpulib_pinned_free(c->staging);
		free(c);
		c = next;
	}
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

CUresult xgpulib_capcopy(bool to_dev, CUdeviceptr dev, void *host, size_t n,
			 CUstream s, int ptds)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph g = NULL;
	CUuserObject uo;
	struct pcopy *c;
	CUresult rc;

	free_dead();
	rc = xgpulib_capture_info_v3(s, &st, NULL, &g, NULL, NULL, NULL, ptds);
	if (rc)
		return rc;
	if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || !g)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->host = host;
	c->n = n;
	rc = xgpulib_pinned_alloc(&c->staging, n, 0);
	if (rc) {
		free(c);
		return rc;
	}
	rc = cuUserObjectCreate(&uo, c, drop, 1,
				CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
	if (rc) {
		xgpulib_pinned_free(c->staging);
		free(c);
		return rc;
	}
	rc = cuGraphRetainUserObject(g, uo, 1, CU_GRAPH_USER_OBJECT_MOVE);
	if (rc) {
		cuUserObjectRelease(uo, 1);	/* its destructor runs */
		return rc;
	}
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
