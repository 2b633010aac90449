// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_link.c: JIT linking (cuLinkCreate, cuLinkAddData,
 * cuLinkAddFile, cuLinkComplete, cuLinkDestroy), as Numba and programs
 * that link PTX at run time use it.
 *
 * Each input is uploaded as a blob (a file is read here first) and the
 * worker's driver links; cuLinkComplete fetches the linked image into the
 * guest, where it stays until cuLinkDestroy, and the program loads it
 * like any image.  Numeric JIT options travel; log buffers are the
 * guest's and get an empty log (the linker's log stays in the worker).
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_module.h"

#define XGPULIB_LINK_MAGIC 0x786c6e6bu	/* "xlnk" */

struct CUlinkState_st {
	uint32_t magic;
	uint64_t remote;
	uint8_t *image;		/* after cuLinkComplete */
	size_t size;
};

static struct CUlinkState_st *link_check(CUlinkState l)
{
	return l && l->magic == XGPULIB_LINK_MAGIC ? l : NULL;
}

/* the numeric options travel; log buffers get an empty log */
static CUresult link_opts(unsigned int n, CUjit_option *opt, void **val,
			  struct xgpuif_load_opt *out, uint32_t *nout)
{
	*nout = 0;
	if (n && (!opt || !val))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		if (opt[i] < 0 || opt[i] >= CU_JIT_NUM_OPTIONS)
			return CUDA_ERROR_INVALID_VALUE;
		if (xgpuif_jit_option_numeric(opt[i])) {
			if (*nout == XGPUIF_MAX_LOAD_OPTS)
				return CUDA_ERROR_INVALID_VALUE;
			out[(*nout)++] = (struct xgpuif_load_opt){
				(uint32_t)opt[i], 0,
				(uint64_t)(uintptr_t)val[i] };
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		if ((opt[i] == CU_JIT_INFO_LOG_BUFFER ||
		     opt[i] == CU_JIT_ERROR_LOG_BUFFER) && val[i])
			*(char *)val[i] = 0;
		else if (opt[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
			 opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES ||
			 opt[i] == CU_JIT_WALL_TIME)
			val[i] = NULL;
	}
	return CUDA_SUCCESS;
}

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
			 void **optionValues, CUlinkState *stateOut)
{
	struct xgpuif_load_opt o[XGPUIF_MAX_LOAD_OPTS];
	struct xgpuif_link_create_args a = { 0, 0 };
	struct xgpuif_link_reply r = { 0 };
	struct CUlinkState_st *l;
	struct xgpuif_iov tail;
	CUresult rc;

	rc = xgpulib_query_arg(stateOut);
	if (rc)
		return rc;
	rc = link_opts(numOptions, options, optionValues, o, &a.njit);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	tail = (struct xgpuif_iov){ o, a.njit * (uint32_t)sizeof(o[0]) };
	rc = xgpulib_call_LINK_CREATE(&a, &tail, 1, &r);
	if (rc) {
		free(l);
		return rc;
	}
	l->magic = XGPULIB_LINK_MAGIC;
	l->remote = r.link;
	*stateOut = l;
	return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
			  size_t size, const char *name,
			  unsigned int numOptions, CUjit_option *options,
			  void **optionValues)
{
	struct xgpuif_load_opt o[XGPUIF_MAX_LOAD_OPTS];
	struct CUlinkState_st *l = link_check(state);
	struct xgpuif_link_add_args a = { 0 };
	struct xgpuif_iov tail;
	uint32_t nopt;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!data || !size || l->image)
		return CUDA_ERROR_INVALID_VALUE;
	/* per-input options would change only this input: not forwarded */
	rc = link_opts(numOptions, options, optionValues, o, &nopt);
	if (rc)
		return rc;
	if (nopt)
		xgpulib_dbg("cuLinkAddData: %u per-input JIT options not "
			    "forwarded", nopt);
	if (!name)
		name = "";
	a.link = l->remote;
	a.type = (uint32_t)type;
	a.namelen = (uint32_t)strnlen(name, XGPUIF_MAX_LINK_NAME);
	rc = xgpulib_image_upload(data, size, &a.blob);
	if (rc)
		return rc;
	tail = (struct xgpuif_iov){ name, a.namelen };
	return xgpulib_call_LINK_ADD(&a, &tail, 1);
}

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type,
			  const char *path, unsigned int numOptions,
			  CUjit_option *options, void **optionValues)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!link_check(state))
		return CUDA_ERROR_INVALID_HANDLE;
	rc = xgpulib_read_file(path, &buf, &size);
	if (rc)
		return rc;
	/* PTX is text and takes its NUL; binary inputs do not */
	if (type != CU_JIT_INPUT_PTX && size)
		size--;
	rc = cuLinkAddData_v2(state, type, buf, size, path, numOptions,
			      options, optionValues);
	free(buf);
	return rc;
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
	struct CUlinkState_st *l = link_check(state);
	struct xgpuif_handle_args a = { 0 };
	struct xgpuif_link_complete_reply r = { 0 };
	struct xgpuif_link_read_args ra;
	struct xgpuif_link_read_reply rr;
	uint8_t *img;
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!cubinOut || !sizeOut)
		return CUDA_ERROR_INVALID_VALUE;
	a.handle = l->remote;
	rc = xgpulib_call_LINK_COMPLETE(&a, &r);
	if (rc)
		return rc;
	img = malloc(r.size ? r.size : 1);
	if (!img)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ra.link = l->remote;
	for (ra.off = 0; ra.off < r.size;) {
		uint32_t got = 0;
		uint64_t want = r.size - ra.off;

		if (want > 16384)
			want = 16384;
		rc = xgpulib_call_LINK_READ(&ra, &rr, img + ra.off,
					    (uint32_t)want, &got);
		if (rc == CUDA_SUCCESS && (!got || rr.len != got))
			rc = CUDA_ERROR_UNKNOWN;
		if (rc) {
			free(img);
			return rc;
		}
		ra.off += got;
	}
	free(l->image);
	l->image = img;
	l->size = r.size;
	*cubinOut = img;
	*sizeOut = r.size;
	return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state)
{
	struct CUlinkState_st *l = link_check(state);
	struct xgpuif_handle_args a = { 0 };
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	a.handle = l->remote;
	rc = xgpulib_call_LINK_DESTROY(&a);
	free(l->image);
	l->magic = 0;
	free(l);
	return rc;
}
