// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_funcattr.c: what is asked and set of a function or kernel
 * once found (xgpulib_api_func.c): attributes and the cache
 * configuration, names, parameter info, loading state.  The objects and
 * their attribute cache: xgpulib_func.c.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_module.h"

/*
 * The checks of the calls on a function or kernel, in the driver's
 * order: cuInit ran (and for a kernel's attributes, dev is a device), the
 * output is given, h is one of ours.
 */
static CUresult func_args(const void *h, bool kernel, CUdevice dev,
			  bool out_ok, struct xgpulib_func **f)
{
	CUresult rc = kernel ? xgpulib_check_dev(dev) : xgpulib_check_init();

	if (rc)
		return rc;
	if (!out_ok)
		return CUDA_ERROR_INVALID_VALUE;
	*f = xgpulib_func_check(h);
	return *f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* cuFuncGetAttribute, cuKernelGetAttribute */
static CUresult get_attr(const void *h, bool kernel, CUdevice dev, int attr,
			 int *value)
{
	struct xgpulib_func *f;
	CUresult rc = func_args(h, kernel, dev, value != NULL, &f);

	/* one device per guest: the cache needs no device key */
	return rc ? rc : xgpulib_func_attr(f, attr, value);
}

/* FUNC_SET_ATTRIBUTE or FUNC_SET_CACHE_CONFIG; dev 0 for a function */
static CUresult func_set(CUresult (*set)(const struct xgpuif_func_attr_args *),
			 const void *h, bool kernel, CUdevice dev,
			 uint32_t attr, int32_t value)
{
	struct xgpuif_func_attr_args a;
	struct xgpulib_func *f;
	CUresult rc = func_args(h, kernel, dev, true, &f);

	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.handle = f->remote;
	a.kind = f->kind;
	a.dev = dev;
	a.attr = attr;
	a.value = value;
	rc = set(&a);
	/* a setting may move other attributes (the carveout, the dynamic
	 * shared memory limit): fetch them all again next time */
	pthread_mutex_lock(&f->attr_mu);
	f->attrs_valid = false;
	pthread_mutex_unlock(&f->attr_mu);
	xgpulib_occupancy_forget();
	return rc;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
			    CUfunction hfunc)
{
	return get_attr(hfunc, false, 0, (int)attrib, pi);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
			    int value)
{
	return func_set(xgpulib_call_FUNC_SET_ATTRIBUTE, hfunc, false, 0,
			(uint32_t)attrib, value);
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	return func_set(xgpulib_call_FUNC_SET_CACHE_CONFIG, hfunc, false, 0,
			(uint32_t)config, 0);
}

/* bank size configuration is gone from the GPUs CUDA 13 supports */
CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
	XGPULIB_CHECK_ARGS(true, xgpulib_func_check(hfunc));
	if ((unsigned int)config >
	    CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
			      CUkernel kernel, CUdevice dev)
{
	return get_attr(kernel, true, dev, (int)attrib, pi);
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
			      CUkernel kernel, CUdevice dev)
{
	return func_set(xgpulib_call_FUNC_SET_ATTRIBUTE, kernel, true, dev,
			(uint32_t)attrib, val);
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
				CUdevice dev)
{
	return func_set(xgpulib_call_FUNC_SET_CACHE_CONFIG, kernel, true, dev,
			(uint32_t)config, 0);
}

static CUresult get_name(const char **name, const void *h)
{
	struct xgpulib_func *f = xgpulib_func_check(h);

	XGPULIB_CHECK_ARGS(name, f);
	*name = f->name;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	return get_name(name, hfunc);
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	return get_name(name, hfunc);
}

static CUresult param_info(const void *h, size_t index, size_t *offset,
			   size_t *size)
{
	struct xgpulib_func *f = xgpulib_func_check(h);

	XGPULIB_CHECK_ARGS(offset, f);
	if (f->nparams == XGPUIF_PARAMS_UNKNOWN)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (index >= f->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*offset = f->params[index].offset;
	if (size)
		*size = f->params[index].size;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
			    size_t *paramOffset, size_t *paramSize)
{
	return param_info(func, paramIndex, paramOffset, paramSize);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
			      size_t *paramOffset, size_t *paramSize)
{
	return param_info(kernel, paramIndex, paramOffset, paramSize);
}

/* the worker's driver loads lazily on its own; to the guest every
 * function is ready */
CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
	XGPULIB_CHECK_ARGS(state, xgpulib_func_check(function));
	*state = CU_FUNCTION_LOADING_STATE_LOADED;
	return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction function)
{
	XGPULIB_CHECK_ARGS(true, xgpulib_func_check(function));
	return CUDA_SUCCESS;
}
