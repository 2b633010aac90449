// SPDX-License-Identifier: MIT
/*
 * xgpulib_mco.c: coherent managed memory (see xgpulib_mco.h): the blocks'
 * states, the SIGSEGV handler that fetches them, and the write-back
 * before each request.
 *
 * Why a SIGSEGV handler and not userfaultfd: the program's pages are a
 * shared mapping of the transport (a memfd, or the guest module's granted
 * pages), where userfaultfd cannot tell reads from writes without
 * write-protect support for shared memory (Linux 5.19 and later), an
 * unprivileged process may not take faults raised in the kernel anyway
 * (vm.unprivileged_userfaultfd is 0 by default since Linux 5.11), and
 * container runtimes often filter the system call.  mprotect works on
 * every such mapping.  The cost is that a system call that writes into an
 * inaccessible block (read(2) into managed memory, say) fails with EFAULT
 * instead of faulting in user space (README).
 *
 * The handler runs on the faulting thread and makes a round trip to the
 * worker.  That is not async-signal-safe in general (it takes mutexes),
 * but a SIGSEGV in managed memory is synchronous: it comes from the
 * program's own access, never in the middle of code of ours that holds
 * one of the locks a fetch takes (xgpulib_mco.h says how that is kept).
 * A fault anywhere else goes to the handler that was installed before
 * ours (or the default action: the process dies of SIGSEGV as before).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "xgpulib_env.h"
#include "xgpulib_mco.h"

#define MAX_MCO 4096u

enum { B_INVALID, B_CLEAN, B_DIRTY };
/*
 * A block a host function fetched: its stream is held, the GPU work after
 * the function has not run.  Only the function's own release, when it
 * returns, writes such a block back and invalidates it; a request of
 * another thread meanwhile leaves it alone (writing it back through the
 * ring, while the function still writes it, raced the function's own
 * write-back and the kernel after it: a block of stale values on Xen).
 */
#define B_HF	0x80u
#define ST(x)	((x) & ~B_HF)

struct mco {
	uint8_t *va;
	size_t size;		/* mapped: whole pages */
	size_t lo, hi;		/* the worker's bytes: [lo, hi) of va */
	uint32_t region;
	uint64_t ctx;
	uint8_t *alias;		/* the network: the pages, always writable */
	uint64_t dptr;		/* the worker's address of va (va itself but
				 * for pinned memory made coherent) */
	size_t nblocks;
	size_t nvalid;		/* blocks not B_INVALID */
	uint8_t *state;		/* per block */
};

static pthread_mutex_t mg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mco *mcos[MAX_MCO];
static unsigned int nmco;
static struct xgpulib_chan *chan;
static size_t blk;		/* block size, a multiple of the page size */
static bool installed;
static struct sigaction prev;	/* the SIGSEGV action before ours */
static bool warned;

unsigned int xgpulib_mco_live;
/* whether this thread runs a host function (its stream waits for it:
 * xgpulib_hostfn_running) */
static bool in_hostfn(void)
{
	return xgpulib_hostfn_running() >= 0;
}
/* blocks not B_INVALID in all allocations (read without the lock) */
static size_t valid_total;

size_t xgpulib_mco_max_block(const struct xgpulib_chan *c)
{
	size_t b = 1;

	if (!c->t->mco_bytes)
		return 0;
	while (b * 2 <= c->t->mco_bytes)
		b *= 2;
	return b;
}

static size_t block_size(const struct xgpulib_chan *c)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t kb = xgpulib_env_uint("XGPU_MANAGED_BLOCK_KB", 256), b = 1;
	size_t most = xgpulib_mco_max_block(c);

	if (kb < 4)
		kb = 4;
	if (kb > 2048)
		kb = 2048;
	while (b * 2 <= kb)	/* a power of two */
		b *= 2;
	b <<= 10;
	if (most && b > most)
		b = most;
	return b < page ? page : b;
}

/* ---- requests ------------------------------------------------------------- */

/* a fetch's flags: pinned memory made coherent (its own address not the
 * worker's) may have a kernel waiting for the CPU: the wait is bounded */
static uint32_t fetch_flags(const struct mco *m, uint16_t op)
{
	return op == XGPUIF_OP_MANAGED_FETCH &&
	       m->dptr != (uint64_t)(uintptr_t)m->va ?
		       XGPUIF_MANAGED_BOUNDED : 0;
}

/*
 * A block for a host function: through its slot, to the worker's thread
 * that holds the stream (the worker's own thread may be waiting for this
 * function to return, in a synchronisation another thread asked for),
 * waited for in both directions.
 */
static CUresult slot_request(const struct xgpuif_managed_block_args *a,
			     uint16_t op)
{
	bool fetch = op == XGPUIF_OP_MANAGED_FETCH;

	/* a block written back goes with its bytes where the slot is
	 * mirrored (the network) */
	return xgpulib_hostfn_ask((unsigned int)xgpulib_hostfn_running(),
				  fetch ? XGPUIF_HF_FETCH :
						    XGPUIF_HF_FLUSH,
				  a->dptr, &a->mem, fetch ? 0 : a->mem.len);
}

/*
 * The network: a piece of at most mco_bytes through the data area's part
 * for blocks, from or into the alias (the program's own pages are not
 * writable while a fetch fills them).  Waited for either way: the next
 * piece uses the same part.
 */
static CUresult net_piece(const struct mco *m, uint16_t op, size_t off,
			  size_t len)
{
	struct xgpulib_transport *t = chan->t;
	uint8_t *bytes = m->alias + off, *part = t->data + t->mco_off;
	bool fetch = op == XGPUIF_OP_MANAGED_FETCH;
	struct xgpuif_managed_block_args a = {
		m->dptr + off,
		{ t->mco_off, len, XGPUIF_REGION_DATA, 0 },
		XGPUIF_STREAM_LEGACY,
		fetch_flags(m, op),
		0,
	};
	struct xgpuif_iov iov = { &a, sizeof(a) };
	struct xgpulib_req rq = {
		.op = op, .ctx = m->ctx, .iov = &iov, .niov = 1,
	};
	struct xgpulib_waiter w;
	uint64_t ticket = 0;
	CUresult rc;

	if (in_hostfn()) {
		/* the bytes go with the slot's frames (FILL back) */
		if (!fetch)
			memcpy(part, bytes, len);
		rc = slot_request(&a, op);
		if (fetch && rc == CUDA_SUCCESS)
			memcpy(bytes, part, len);
		return rc;
	}
	if (!fetch && t->ops->put(t, t->mco_off, bytes, len))
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	memset(&w, 0, sizeof(w));
	/* (a write-back runs inside another request's submit, whose own
	 * expect, made already, is left alone) */
	if (fetch)
		xgpulib_chan_expect_next(op, t->mco_off, len, bytes, &ticket);
	rc = xgpulib_chan_submit(chan, &rq, &w);
	if (fetch)
		xgpulib_chan_expect_clear();
	if (rc == CUDA_SUCCESS)
		rc = xgpulib_chan_wait(chan, &w);
	/* the bytes land in the alias even after an error: wait for them */
	if (ticket && t->ops->expect_wait(t, ticket) && rc == CUDA_SUCCESS)
		rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
	return rc;
}

static CUresult net_request(const struct mco *m, uint16_t op, size_t off,
			    size_t len)
{
	size_t most = chan->t->mco_bytes;
	CUresult rc = CUDA_SUCCESS;

	for (size_t done = 0; done < len && rc == CUDA_SUCCESS;) {
		size_t k = len - done < most ? len - done : most;

		rc = net_piece(m, op, off + done, k);
		done += k;
	}
	return rc;
}

/* MANAGED_FETCH (waited for) or MANAGED_FLUSH (posted) of the allocation's
 * bytes [off, off + len) */
static CUresult request(const struct mco *m, uint16_t op, size_t off,
			size_t len)
{
	struct xgpuif_managed_block_args a = {
		m->dptr + off,
		{ off, len, m->region, 0 },
		XGPUIF_STREAM_LEGACY,
		fetch_flags(m, op),
		0,
	};
	struct xgpuif_iov iov = { &a, sizeof(a) };
	struct xgpulib_req rq = {
		.op = op,
		.posted = op == XGPUIF_OP_MANAGED_FLUSH,
		.ctx = m->ctx,
		.iov = &iov,
		.niov = 1,
	};
	struct xgpulib_waiter w;
	CUresult rc;

	if (m->alias)
		return net_request(m, op, off, len);
	if (in_hostfn())
		return slot_request(&a, op);
	if (rq.posted)
		return xgpulib_chan_submit(chan, &rq, NULL);
	memset(&w, 0, sizeof(w));
	rc = xgpulib_chan_submit(chan, &rq, &w);
	return rc ? rc : xgpulib_chan_wait(chan, &w);
}

/* the bytes of [*off, end) the worker has (the last page's tail past the
 * allocation is not its, nor a variables' allocation's first page's
 * head): their length, *off moved to the first */
static size_t clamp(const struct mco *m, size_t *off, size_t end)
{
	if (*off < m->lo)
		*off = m->lo;
	if (end > m->hi)
		end = m->hi;
	return *off < end ? end - *off : 0;
}

/*
 * A request that failed: the program's next call returns the error (the
 * worker's driver refused, or the channel is gone); the block keeps what
 * its pages hold.  Said once.
 */
static void failed(const struct mco *m, const char *what, CUresult rc)
{
	xgpulib_chan_defer(chan, rc);
	if (!warned) {
		warned = true;
		xgpulib_log("managed memory at %p: %s a block failed (error "
			    "%d); the CPU's view of it may be stale",
			    (void *)m->va, what, rc);
	}
}

/* ---- the fault handler ---------------------------------------------------- */

/* the allocation holding p; mg_mu held */
static struct mco *find(const uint8_t *p)
{
	for (unsigned int i = 0; i < nmco; i++)
		if (p >= mcos[i]->va && p < mcos[i]->va + mcos[i]->size)
			return mcos[i];
	return NULL;
}

/*
 * Whether the fault was a write: 1 yes, 0 no, -1 not known (then a write
 * faults twice: first the block is fetched, readable, then made
 * writable).
 */
static int fault_write(void *uc)
{
#if defined(__x86_64__)
	/* the page fault's error code: bit 1 is set for a write */
	return (((ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
	(void)uc;
	return -1;
#endif
}

/* handle a fault at p: true if p is managed memory of ours */
static bool fault(uint8_t *p, int wr)
{
	struct mco *m;
	size_t b, off, len;
	int saved = errno;

	pthread_mutex_lock(&mg_mu);
	m = find(p);
	if (!m) {
		pthread_mutex_unlock(&mg_mu);
		return false;
	}
	b = (size_t)(p - m->va) / blk;
	off = b * blk;
	len = m->size - off < blk ? m->size - off : blk;
	switch (ST(m->state[b])) {
	case B_INVALID: {
		size_t at = off, n = clamp(m, &at, off + len);
		CUresult rc = n ? request(m, XGPUIF_OP_MANAGED_FETCH, at, n) :
				  CUDA_SUCCESS;

		if (rc)
			failed(m, "fetching", rc);
		m->state[b] = (wr == 1 ? B_DIRTY : B_CLEAN) |
			      (in_hostfn() ? B_HF : 0);
		m->nvalid++;
		__atomic_add_fetch(&valid_total, 1, __ATOMIC_RELEASE);
		break;
	}
	case B_CLEAN:
		if (wr == 0)	/* another thread fetched it meanwhile */
			goto out;
		m->state[b] = B_DIRTY | (m->state[b] & B_HF) |
			      (in_hostfn() ? B_HF : 0);
		break;
	default:		/* made writable meanwhile */
		goto out;
	}
	mprotect(m->va + off, len, ST(m->state[b]) == B_DIRTY ?
				   PROT_READ | PROT_WRITE : PROT_READ);
out:
	pthread_mutex_unlock(&mg_mu);
	errno = saved;
	return true;
}

/* not ours: what would have happened without us */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;

	if (prev.sa_flags & SA_SIGINFO) {
		prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
		prev.sa_handler(sig);
		return;
	}
	/* the default action: back to it, and the access faults again */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	/* a fault of the MMU (not a kill(2) of SIGSEGV) */
	if (si->si_code > 0 && si->si_addr &&
	    fault((uint8_t *)si->si_addr, fault_write(uc)))
		return;
	chain(sig, si, uc);
}

static int install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	/* on the thread's alternate stack if it has one: a program that
	 * catches stack overflows there still does */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &prev))
		return -1;
	installed = true;
	return 0;
}

/* ---- the table ------------------------------------------------------------ */

int xgpulib_mco_add(struct xgpulib_chan *c, void *va, size_t size,
		    size_t lo, size_t hi, uint32_t region, uint64_t ctx,
		    void *alias, uint64_t dptr)
{
	struct mco *m;
	int rc = -1;

	if (lo > hi || hi > size)
		return -1;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	pthread_mutex_lock(&mg_mu);
	if (!blk)
		blk = block_size(c);
	*m = (struct mco){ va, size, lo, hi, region, ctx, alias, dptr,
			   (size + blk - 1) / blk, 0, NULL };
	m->state = calloc(m->nblocks, 1);	/* B_INVALID */
	if (!m->state || nmco == MAX_MCO || (!installed && install()))
		goto out;
	if (mprotect(va, size, PROT_NONE))
		goto out;
	chan = c;
	mcos[nmco++] = m;
	__atomic_store_n(&xgpulib_mco_live, nmco, __ATOMIC_RELEASE);
	xgpulib_dbg("managed memory at %p (%zu bytes): coherent, blocks of "
		    "%zu KiB", (void *)((uint8_t *)va + lo), hi - lo,
		    blk >> 10);
	m = NULL;
	rc = 0;
out:
	pthread_mutex_unlock(&mg_mu);
	if (m)
		free(m->state);
	free(m);
	return rc;
}

void xgpulib_mco_del(void *va)
{
	struct mco *m = NULL;

	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmco; i++) {
		if (mcos[i]->va == va) {
			m = mcos[i];
			mcos[i] = mcos[--nmco];
			break;
		}
	}
	if (m)
		__atomic_sub_fetch(&valid_total, m->nvalid, __ATOMIC_RELEASE);
	__atomic_store_n(&xgpulib_mco_live, nmco, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mg_mu);
	if (m)
		free(m->state);
	free(m);
}

bool xgpulib_mco_touches(const void *p, size_t n)
{
	const uint8_t *b = p;
	bool hit = false;

	if (!__atomic_load_n(&xgpulib_mco_live, __ATOMIC_ACQUIRE) || !n)
		return false;
	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmco && !hit; i++)
		hit = b < mcos[i]->va + mcos[i]->size && mcos[i]->va < b + n;
	pthread_mutex_unlock(&mg_mu);
	return hit;
}

/* ---- write-back and invalidation ------------------------------------------ */

/* blocks [b, e) of m are valid: write back the dirty ones, invalidate
 * them all; mg_mu held */
static void release_run(struct mco *m, size_t b, size_t e)
{
	size_t off = b * blk, end = e * blk < m->size ? e * blk : m->size;

	/* nobody writes them from here on, so the worker reads what was
	 * written last when it runs the write-back */
	mprotect(m->va + off, end - off, PROT_NONE);
	for (size_t k = b; k < e;) {
		size_t j = k, n, at = k * blk;

		if (ST(m->state[k]) != B_DIRTY) {
			k++;
			continue;
		}
		while (j < e && ST(m->state[j]) == B_DIRTY)
			j++;
		n = clamp(m, &at, j * blk < m->size ? j * blk : m->size);
		if (n) {
			CUresult rc = request(m, XGPUIF_OP_MANAGED_FLUSH,
					      at, n);

			if (rc)
				failed(m, "writing back", rc);
		}
		k = j;
	}
	memset(m->state + b, B_INVALID, e - b);
}

void xgpulib_mco_release(void)
{
	if (!__atomic_load_n(&valid_total, __ATOMIC_ACQUIRE))
		return;
	size_t total = 0;
	/* another thread than a host function's: its blocks stay */
	uint8_t keep = in_hostfn() ? 0 : B_HF;

	pthread_mutex_lock(&mg_mu);
	for (unsigned int i = 0; i < nmco; i++) {
		struct mco *m = mcos[i];
		size_t left = 0;

		for (size_t b = 0; m->nvalid && b < m->nblocks;) {
			size_t e = b;

			if (ST(m->state[b]) == B_INVALID) {
				b++;
				continue;
			}
			if (m->state[b] & keep) {
				left++;
				b++;
				continue;
			}
			while (e < m->nblocks &&
			       ST(m->state[e]) != B_INVALID &&
			       !(m->state[e] & keep))
				e++;
			release_run(m, b, e);
			b = e;
		}
		m->nvalid = left;
		total += left;
	}
	__atomic_store_n(&valid_total, total, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mg_mu);
}

void xgpulib_mco_hostfn_end(void)
{
	if (in_hostfn())
		xgpulib_mco_release();
}

/* ---- fork ----------------------------------------------------------------- */

void xgpulib_mco_forked(void)
{
	/* the child has one thread: whoever held the lock is not here */
	mg_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	for (unsigned int i = 0; i < nmco; i++) {
		/* the shared pages stay the parent's: the child gets
		 * inaccessible private memory in their place */
		mmap(mcos[i]->va, mcos[i]->size, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		     -1, 0);
		if (mcos[i]->alias)
			munmap(mcos[i]->alias, mcos[i]->size);
		free(mcos[i]->state);
		free(mcos[i]);
	}
	nmco = 0;
	xgpulib_mco_live = 0;
	valid_total = 0;
}
