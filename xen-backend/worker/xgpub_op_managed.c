// SPDX-License-Identifier: MIT
/*
 * xgpub_op_managed.c: managed memory in coherent mode (README, "Managed
 * memory").  The memory is the driver's managed memory, allocated here;
 * the guest maps host-memory region pages (shared with this worker) at
 * the same address and keeps them coherent at GPU-work boundaries: it
 * fetches a block (MANAGED_FETCH) when the program first touches it after
 * GPU work, and flushes the blocks the program wrote (MANAGED_FLUSH)
 * before its next request.  Both copy between the allocation and the
 * region's pages, bounded by xgpub_memref and by the allocation.
 *
 * __managed__ variables of modules and libraries live in managed memory
 * the driver allocated when it loaded them; the guest maps the
 * allocation holding a variable the same way when it looks the variable
 * up (xgpub_op_symbol.c notes it here), and its blocks are served until
 * the module or library goes.
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "xgpub_worker.h"

#include <pthread.h>

#define MANAGED_CHUNK	(2u << 20)
#define MAX_MANAGED	4096u

/*
 * The guest's coherent managed allocations, for the threads that hold a
 * stream for a host function (xgpub_op_hostfn.c): they copy blocks for
 * the function while the worker's own thread may be busy, so they look
 * here, under a lock, rather than at the worker's allocation table.
 */
static pthread_mutex_t mg_mu = PTHREAD_MUTEX_INITIALIZER;
/* owner: 0 for an allocation, the module's or library's handle for the
 * managed allocation holding its variables */
static struct { uint64_t dptr, size; xgpuif_handle_t owner; } mg[MAX_MANAGED];
static unsigned int nmg;

static void managed_note(uint64_t dptr, uint64_t size)
{
	pthread_mutex_lock(&mg_mu);
	if (nmg < MAX_MANAGED) {
		mg[nmg].dptr = dptr;
		mg[nmg].size = size;
		mg[nmg].owner = 0;
		nmg++;
	}
	pthread_mutex_unlock(&mg_mu);
}

void xgpub_managed_forget(uint64_t dptr)
{
	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmg; i++) {
		if (mg[i].dptr == dptr && !mg[i].owner) {
			mg[i] = mg[--nmg];
			break;
		}
	}
	pthread_mutex_unlock(&mg_mu);
}

int xgpub_managed_var_note(xgpuif_handle_t root, uint64_t base,
			   uint64_t size)
{
	int rc = 0;

	if (!root || !size || base + size < base)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmg; i++)
		if (mg[i].owner == root && mg[i].dptr == base &&
		    mg[i].size == size)
			goto out;	/* another variable of the same */
	if (nmg == MAX_MANAGED) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	mg[nmg].dptr = base;
	mg[nmg].size = size;
	mg[nmg].owner = root;
	nmg++;
out:
	pthread_mutex_unlock(&mg_mu);
	return rc;
}

void xgpub_managed_vars_forget(xgpuif_handle_t root)
{
	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmg;) {
		if (root && mg[i].owner == root)
			mg[i] = mg[--nmg];
		else
			i++;
	}
	pthread_mutex_unlock(&mg_mu);
}

/* does [dptr, dptr + len) lie in one variables' allocation? */
static bool var_range(uint64_t dptr, uint64_t len)
{
	bool ok = false;

	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmg && !ok; i++)
		ok = mg[i].owner && dptr >= mg[i].dptr &&
		     dptr - mg[i].dptr < mg[i].size &&
		     len <= mg[i].size - (dptr - mg[i].dptr);
	pthread_mutex_unlock(&mg_mu);
	return ok;
}

/*
 * A host function's block (XGPUIF_HF_FETCH or _FLUSH in slot s): copied
 * by this thread with the CPU (managed memory is the worker's to touch;
 * the work before the function on its stream is done), after checking
 * that it lies in one managed allocation of this guest's and in the
 * region (or the data area, where the guest's copy of it is its own: the
 * network).  No CUDA call: this thread runs inside the driver's callback.
 * The answer is in mc_status; the caller marks the slot DUE.  Whether it
 * was copied.
 */
bool xgpub_managed_hostfn(struct xgpub_worker *w,
			  struct xgpuif_hostfn_slot *s, uint32_t state)
{
	uint64_t dptr = s->mc_dptr, len = s->mc_len;
	struct xgpuif_memref ref = { s->mc_off, len, s->mc_region, 0 };
	uint8_t *host = xgpub_memref(w, &ref);
	int rc = CUDA_ERROR_INVALID_VALUE;
	bool ok = false;

	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmg && len && dptr + len > dptr; i++)
		if (dptr >= mg[i].dptr && dptr - mg[i].dptr < mg[i].size &&
		    len <= mg[i].size - (dptr - mg[i].dptr))
			ok = true;
	if (ok && host) {
		if (state == XGPUIF_HF_FETCH)
			memcpy(host, (void *)(uintptr_t)dptr, len);
		else
			memcpy((void *)(uintptr_t)dptr, host, len);
		rc = 0;
	}
	pthread_mutex_unlock(&mg_mu);
	s->mc_status = rc;
	return rc == 0;
}

XGPUB_HANDLER(MANAGED_ALLOC)
{
	CUdeviceptr p;
	int rc;

	if (!a->bytesize || (a->flags != CU_MEM_ATTACH_GLOBAL &&
			     a->flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpub_quota_allows(w, a->bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = w->D->cuMemAllocManaged(&p, a->bytesize, a->flags);
	if (rc)
		return rc;
	/*
	 * The guest maps its pages at p: it must be page aligned.  The
	 * driver packs small allocations (a 4 KiB one came back 512-byte
	 * aligned on the H200); one of whole 2 MiB chunks starts on a
	 * chunk.  The range is larger than asked then; the quota is charged
	 * what was asked.
	 */
	if (p % XGPUIF_PAGE_SIZE) {
		uint64_t big = (a->bytesize + MANAGED_CHUNK - 1) &
			       ~(uint64_t)(MANAGED_CHUNK - 1);

		w->D->cuMemFree(p);
		if (big < a->bytesize)
			return CUDA_ERROR_INVALID_VALUE;
		rc = w->D->cuMemAllocManaged(&p, big, a->flags);
		if (rc)
			return rc;
	}
	if (p % XGPUIF_PAGE_SIZE) {
		w->D->cuMemFree(p);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (xgpub_alloc_add(w, p, a->bytesize)) {
		w->D->cuMemFree(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	managed_note(p, a->bytesize);
	r->dptr = p;
	return 0;
}

/*
 * The block's two sides: its bytes in the region (NULL: a protocol
 * error) after checking that [dptr, dptr + len) lies in one of the
 * guest's allocations or variables' allocations
 * (CUDA_ERROR_INVALID_VALUE otherwise).
 */
static int block_(struct xgpub_worker *w,
		  const struct xgpuif_managed_block_args *a, uint8_t **host,
		  bool *var)
{
	/* the data area: where the guest's copy is its own (the network) */
	*host = xgpub_memref(w, &a->mem);
	if (!*host || !a->mem.len)
		return XGPUIF_ST_PROTO;
	if (a->dptr + a->mem.len < a->dptr)
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < w->nallocs; i++) {
		const struct xgpub_alloc *al = &w->allocs[i];

		if (a->dptr >= al->dptr && a->dptr - al->dptr < al->size &&
		    a->mem.len <= al->size - (a->dptr - al->dptr))
			return 0;
	}
	*var = true;
	return var_range(a->dptr, a->mem.len) ? 0 : CUDA_ERROR_INVALID_VALUE;
}

#define block(w, a, host) block_((w), (a), (host), &var)

/*
 * Natively the program synchronises before the CPU touches managed
 * memory the GPU may use; the guest fetches only at such a touch, so
 * waiting for the context's work first is what the program waited for.
 * An error of that work is answered (the guest reports it at the next
 * call) after the copy was still tried.  A host function's touch does
 * not come here: its stream is held, so it goes through its slot to the
 * thread that holds the stream (xgpub_managed_hostfn).
 */
/*
 * A request made on a thread of the program with no current context (a
 * __managed__ variable cudart resolved lazily, touched before any other
 * call): the copy borrows the primary context, as the lookup did.
 */
static bool borrow(struct xgpub_worker *w)
{
	return !w->cur && w->primary &&
	       w->D->cuCtxSetCurrent(w->primary) == CUDA_SUCCESS;
}

static void unborrow(struct xgpub_worker *w, bool borrowed)
{
	if (borrowed)
		w->D->cuCtxSetCurrent(NULL);
}

/*
 * A bounded fetch's wait (XGPUIF_MANAGED_BOUNDED): past the limit the
 * worker ends as when GPU work runs past the host's limit (the guest is
 * told in the ring header; the driver tears the context and its endless
 * kernel down).
 */
static uint8_t *wait_fault_byte;

static void wait_too_long(int sig)
{
	static const char msg[] = "xen-gpubackd worker: a fetch of pinned "
				  "memory waited too long for the GPU (a "
				  "kernel waiting for the CPU?); channel "
				  "ended\n";

	(void)sig;
	if (wait_fault_byte)
		__atomic_store_n(wait_fault_byte,
				 (uint8_t)XGPUIF_FAULT_TIMEOUT, __ATOMIC_SEQ_CST);
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(XGPUB_EXIT_LIMIT);
}

static void wait_limit(struct xgpub_worker *w, bool on)
{
	struct itimerval it = { { 0, 0 }, { on ? XGPUIF_MANAGED_WAIT_S : 0,
					    0 } };
	static bool armed_once;

	if (on && !armed_once) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = wait_too_long;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		wait_fault_byte = &w->ring.sring->pvt.pvt_pad[0];
		armed_once = true;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

XGPUB_HANDLER(MANAGED_FETCH)
{
	uint8_t *host;
	bool var = false, b, bounded = a->flags & XGPUIF_MANAGED_BOUNDED;
	int rc = block(w, a, &host), rs;

	(void)stream;
	if (rc)
		return rc;
	if (a->flags & ~XGPUIF_MANAGED_BOUNDED)
		return CUDA_ERROR_INVALID_VALUE;
	b = borrow(w);
	if (bounded)
		wait_limit(w, true);
	rs = w->D->cuCtxSynchronize();
	if (bounded)
		wait_limit(w, false);
	/* variables' pages span several of the driver's allocations, which
	 * its copies refuse: the CPU copies them */
	if (var)
		memcpy(host, (void *)(uintptr_t)a->dptr, a->mem.len);
	else
		rc = w->D->cuMemcpyDtoH(host, a->dptr, a->mem.len);
	unborrow(w, b);
	return rc ? rc : rs;
}

/*
 * A synchronous copy from registered (pinned) memory has completed when
 * the driver returns, so every later request (a kernel on any stream)
 * sees it; from memory the driver could not pin, the copy may still be in
 * flight on return: wait for it.
 */
XGPUB_HANDLER(MANAGED_FLUSH)
{
	const struct xgpub_region *reg;
	uint8_t *host;
	bool var = false;
	int rc = block(w, a, &host);

	(void)stream;
	if (rc)
		return rc;
	bool b;

	if (a->flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (var) {
		memcpy((void *)(uintptr_t)a->dptr, host, a->mem.len);
		return 0;
	}
	b = borrow(w);
	rc = w->D->cuMemcpyHtoD(a->dptr, host, a->mem.len);
	reg = xgpub_region_get(w, a->mem.region);
	if (!rc && (a->mem.region == XGPUIF_REGION_DATA ?
		    !w->data_registered : reg && !reg->registered))
		rc = w->D->cuCtxSynchronize();
	unborrow(w, b);
	return rc;
}
