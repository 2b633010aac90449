// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_legacy.c: the launch API before CUDA 4 (deprecated), done in
 * the guest on top of the launches of today.
 *
 * The real driver keeps, per function, a block shape, a dynamic shared
 * memory size and a parameter buffer, set by cuFuncSetBlockShape,
 * cuFuncSetSharedSize and cuParamSet*, and used by cuLaunch,
 * cuLaunchGrid and cuLaunchGridAsync.  Here that state lives in a table
 * keyed by the function's address (an entry is dropped when its function
 * is freed, xgpulib_legacy_drop), and a launch becomes a normal launch
 * (xgpulib_launch_config) with the buffer as
 * CU_LAUNCH_PARAM_BUFFER_POINTER / CU_LAUNCH_PARAM_BUFFER_SIZE.  Keeping
 * the state outside the function means that a handle of an unloaded
 * module is never dereferenced for it.  A launch of CUDA 4 and later
 * (cuLaunchKernel and the others) drops f's entry: the driver says such a
 * launch invalidates this state.
 *
 * Locking: leg_mu guards the table and every entry; a launch copies what
 * it needs under it and sends unlocked.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"

/* the driver's limit on a cuParamSetSize (and the launch's buffer) */
#define LEGACY_MAX_PARAMS 4096u
#define LEG_BUCKETS 64u

struct legacy {
	const struct xgpulib_func *f;
	struct legacy *next;
	unsigned int block[3];
	unsigned int shmem;
	uint32_t size;			/* cuParamSetSize: bytes sent */
	uint8_t buf[LEGACY_MAX_PARAMS];
};

static pthread_mutex_t leg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct legacy *leg_tab[LEG_BUCKETS];
/* entries in the table: a launch of today skips the lock while 0 */
static unsigned int leg_count;

static unsigned int leg_bucket(const void *f)
{
	return (unsigned int)(((uintptr_t)f * 0x9e3779b97f4a7c15ull) >> 58) %
	       LEG_BUCKETS;
}

/* f's entry, made if new (NULL when out of memory); leg_mu held */
static struct legacy *leg_get(const struct xgpulib_func *f, bool make)
{
	unsigned int b = leg_bucket(f);
	struct legacy *l;

	for (l = leg_tab[b]; l; l = l->next)
		if (l->f == f)
			return l;
	if (!make)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->f = f;
	l->next = leg_tab[b];
	leg_tab[b] = l;
	__atomic_add_fetch(&leg_count, 1, __ATOMIC_RELEASE);
	return l;
}

void xgpulib_legacy_drop(const struct xgpulib_func *f)
{
	struct legacy **pp, *l;

	if (!__atomic_load_n(&leg_count, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&leg_mu);
	for (pp = &leg_tab[leg_bucket(f)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->f == f) {
			l = *pp;
			*pp = l->next;
			free(l);
			__atomic_sub_fetch(&leg_count, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&leg_mu);
}

/* the first checks of every call: cuInit ran, f is a function of ours */
static CUresult legacy_arg(CUfunction hfunc, const struct xgpulib_func **f)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	*f = xgpulib_func_check(hfunc);
	return *f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- the state ------------------------------------------------------------ */

enum leg_field { LEG_BLOCK, LEG_SHMEM, LEG_SIZE };

/* a field of f's state set to v (three values for the block), when valid */
static CUresult leg_set(CUfunction hfunc, bool valid, enum leg_field what,
			const unsigned int *v)
{
	const struct xgpulib_func *f;
	struct legacy *l;
	CUresult rc = legacy_arg(hfunc, &f);

	if (rc)
		return rc;
	if (!valid)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&leg_mu);
	l = leg_get(f, true);
	if (l && what == LEG_BLOCK)
		memcpy(l->block, v, sizeof(l->block));
	else if (l && what == LEG_SHMEM)
		l->shmem = v[0];
	else if (l)
		l->size = v[0];
	pthread_mutex_unlock(&leg_mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
	const unsigned int v[3] = { (unsigned int)x, (unsigned int)y,
				    (unsigned int)z };

	return leg_set(hfunc, x > 0 && y > 0 && z > 0, LEG_BLOCK, v);
}

CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes)
{
	return leg_set(hfunc, true, LEG_SHMEM, &bytes);
}

CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes)
{
	return leg_set(hfunc, numbytes <= LEGACY_MAX_PARAMS, LEG_SIZE,
		       &numbytes);
}

/*
 * n bytes at offset into f's buffer.  The programs of CUDA 3 set the
 * values first and the size last (cuParamSetSize(f, offset) after the
 * last cuParamSet*), so a value is checked against the driver's 4 KiB of
 * parameters, not against the size; a launch sends the first `size`
 * bytes.  Bytes never set are zeros.
 */
static CUresult param_set(CUfunction hfunc, int offset, const void *p,
			  unsigned int n)
{
	const struct xgpulib_func *f;
	struct legacy *l;
	CUresult rc = legacy_arg(hfunc, &f);

	if (rc)
		return rc;
	if (offset < 0 || (n && !p) || n > LEGACY_MAX_PARAMS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&leg_mu);
	l = leg_get(f, true);
	if (!l)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	else if ((uint64_t)(unsigned int)offset + n > LEGACY_MAX_PARAMS)
		rc = CUDA_ERROR_INVALID_VALUE;
	else if (n)
		memcpy(l->buf + offset, p, n);
	pthread_mutex_unlock(&leg_mu);
	return rc;
}

CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value)
{
	return param_set(hfunc, offset, &value, sizeof(value));
}

CUresult cuParamSetf(CUfunction hfunc, int offset, float value)
{
	return param_set(hfunc, offset, &value, sizeof(value));
}

CUresult cuParamSetv(CUfunction hfunc, int offset, void *ptr,
		     unsigned int numbytes)
{
	return param_set(hfunc, offset, ptr, numbytes);
}

/* ---- launches ------------------------------------------------------------- */

/*
 * A grid of w x h blocks of f's shape on stream s, with f's parameters as
 * an `extra` buffer.  A function whose shape was never set has no block:
 * the launch refuses it (CUDA_ERROR_INVALID_VALUE), as the driver does.
 */
static CUresult legacy_launch(CUfunction hfunc, int w, int h, CUstream s)
{
	const struct xgpulib_func *f;
	struct legacy *l;
	CUlaunchConfig c;
	uint8_t *buf;
	size_t size = 0;
	void *extra[5];
	CUresult rc = legacy_arg(hfunc, &f);

	if (rc)
		return rc;
	if (w <= 0 || h <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	buf = malloc(LEGACY_MAX_PARAMS);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&c, 0, sizeof(c));
	c.gridDimX = (unsigned int)w;
	c.gridDimY = (unsigned int)h;
	c.gridDimZ = 1;
	c.hStream = s;
	pthread_mutex_lock(&leg_mu);
	l = leg_get(f, false);
	if (l) {
		c.blockDimX = l->block[0];
		c.blockDimY = l->block[1];
		c.blockDimZ = l->block[2];
		c.sharedMemBytes = l->shmem;
		size = l->size;
		memcpy(buf, l->buf, size);
	}
	pthread_mutex_unlock(&leg_mu);
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = buf;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &size;
	extra[4] = CU_LAUNCH_PARAM_END;
	rc = xgpulib_launch_config(&c, hfunc, NULL, extra, 0);
	free(buf);
	return rc;
}

CUresult cuLaunch(CUfunction f)
{
	return legacy_launch(f, 1, 1, NULL);
}

CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
	return legacy_launch(f, grid_width, grid_height, NULL);
}

CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height,
			   CUstream hStream)
{
	return legacy_launch(f, grid_width, grid_height, hStream);
}
