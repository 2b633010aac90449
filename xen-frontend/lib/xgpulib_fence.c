// SPDX-License-Identifier: MIT
/*
 * xgpulib_fence.c: synchronizes answered by the GPU (SYNC_FENCE; the
 * worker's side and when it can is xen-backend/worker/xgpub_fence.c).
 *
 * The last page of the data area is kept out of the copy engine's use on
 * transports that share it (local, Xen); its first word is where the GPU
 * writes.  cuCtxSynchronize and cuStreamSynchronize send SYNC_FENCE with
 * a new value: the worker either synchronized as it would for the plain
 * op (fenced 0: its answer is the call's) or queued the write after the
 * work and replied at once (fenced 1); then this thread watches the word
 * until it holds the value, for as long as a plain call spins on the
 * ring, and past that asks the plain synchronize (a long kernel, or work
 * that failed: the GPU never writes after an error, and the plain call
 * returns it).  One such wait at a time: a thread that finds another
 * waiting asks plainly.  A blocking copy to the host into pinned memory
 * is answered the same way (XGPUIF_CF_FENCE, xgpulib_copy.c): its bytes
 * are in place once the value is.  XGPU_FENCE=0: never.
 */
#include <time.h>

#include "xgpulib.h"
#include "xgpulib_chan.h"
#include "xgpulib_transport.h"
#include "xgpu_spin.h"

#define FENCE_PAGE	XGPUIF_PAGE_SIZE

static uint32_t *word;		/* NULL: no synchronize is answered so */
static uint64_t word_off;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t last;		/* the last value asked for (under mu) */
static bool gone;		/* a backend that does not know the op */
/* how synchronizes and fenced copies ended (under mu): the GPU's
 * value, the worker's answer, the value late so asked plainly */
static unsigned long n_gpu, n_worker, n_late;

static void report(void)
{
	if (n_gpu || n_worker || n_late)
		xgpulib_dbg("synchronizes: %lu answered by the GPU, %lu by "
			    "the worker, %lu asked again after %u us",
			    n_gpu, n_worker, n_late,
			    xgpulib_ch ? xgpulib_ch->spin_us : 0);
}

void xgpulib_fence_setup(struct xgpulib_transport *t)
{
	if (!xgpulib_env_uint("XGPU_FENCE", 1) || t->ops->put ||
	    t->data_bytes < 4 * FENCE_PAGE)
		return;
	t->data_bytes -= FENCE_PAGE;
	word_off = t->data_bytes;
	word = (uint32_t *)(void *)(t->data + word_off);
	__atomic_store_n(word, 0, __ATOMIC_RELEASE);
	atexit(report);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool xgpulib_fence_begin(uint32_t *value)
{
	if (!word || __atomic_load_n(&gone, __ATOMIC_RELAXED) ||
	    pthread_mutex_trylock(&mu))
		return false;
	if (++last == 0)
		last = 1;
	*value = last;
	return true;
}

void xgpulib_fence_end(bool by_worker)
{
	if (by_worker)
		n_worker++;
	pthread_mutex_unlock(&mu);
}

bool xgpulib_fence_wait(uint32_t value)
{
	uint64_t t0 = now_us();

	for (unsigned int i = 1;
	     __atomic_load_n(word, __ATOMIC_ACQUIRE) != value; i++) {
		if (!(i & 63) && now_us() - t0 >= xgpulib_ch->spin_us) {
			n_late++;
			pthread_mutex_unlock(&mu);
			return false;
		}
		xgpu_cpu_relax();
	}
	n_gpu++;
	pthread_mutex_unlock(&mu);
	return true;
}

CUresult xgpulib_fence_sync(bool ctx_wide, uint64_t stream, bool *answered)
{
	struct xgpuif_fence_args a = {
		.stream = ctx_wide ? 0 : stream,
		.flags = ctx_wide ? XGPUIF_FENCE_CTX : 0,
		.off = word_off,
	};
	struct xgpuif_fence_reply r = { 0 };
	CUresult rc;

	*answered = false;
	if (!xgpulib_fence_begin(&a.value))
		return CUDA_SUCCESS;
	rc = xgpulib_call_SYNC_FENCE(&a, &r);
	if (rc == CUDA_ERROR_NOT_SUPPORTED) {
		/* an older backend: the op is unknown there */
		__atomic_store_n(&gone, true, __ATOMIC_RELAXED);
		xgpulib_fence_end(false);
		xgpulib_dbg("the backend does not answer synchronizes with "
			    "the GPU's value; asking plainly");
		return CUDA_SUCCESS;
	}
	if (rc || !r.fenced) {
		xgpulib_fence_end(true);
		*answered = true;
		return rc;
	}
	*answered = xgpulib_fence_wait(a.value);
	return CUDA_SUCCESS;
}
