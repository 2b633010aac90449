// SPDX-License-Identifier: MIT
/*
 * xgpulib_launch.c: every kernel launch goes out here
 * (xgpulib_launch_config), and the flattening of its parameters, also
 * used by kernel nodes of graphs.  The entry points that launch
 * (xgpulib_api_launch.c, and before CUDA 4 xgpulib_api_legacy.c) call
 * it; it calls none of them.
 *
 * A launch is one POSTED request: struct xgpuif_launch_args, the launch
 * attributes, then the parameters flattened at the offsets of the
 * function's layout (the worker rebuilds kernelParams from them).  Its
 * error, if any, comes back at the next synchronous call, as an
 * asynchronous launch failure does with the real driver; what can be
 * checked here (handles, dimensions, the argument form) is checked before
 * anything is sent.
 */
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_image.h"

_Static_assert(sizeof(CUlaunchAttributeValue) == 64,
	       "launch attribute values are 64 bytes");
_Static_assert(sizeof(CUlaunchAttribute) == sizeof(struct xgpuif_launch_attr),
	       "launch attributes travel as the CUDA ABI lays them out");

/* ---- parameters ---------------------------------------------------------- */

/* CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE of an `extra` array */
static int parse_extra(void **extra, const void **buf, size_t *size)
{
	bool have_size = false;

	*buf = NULL;
	*size = 0;
	for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
			*buf = extra[i + 1];
		} else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
			if (!extra[i + 1])
				return CUDA_ERROR_INVALID_VALUE;
			*size = *(const size_t *)extra[i + 1];
			have_size = true;
		} else {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	if (!have_size || (*size && !*buf))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

int xgpulib_params_len(const struct xgpulib_func *f, void **kernelParams,
		       void **extra, uint32_t *len)
{
	bool known = f->nparams != XGPUIF_PARAMS_UNKNOWN;

	if (kernelParams && extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (extra) {
		const void *buf;
		size_t size;
		int rc = parse_extra(extra, &buf, &size);

		if (rc)
			return rc;
		if (known) {
			/* the driver reads the layout's bytes; a shorter
			 * buffer would leave parameters unset */
			if (size < f->param_bytes)
				return CUDA_ERROR_INVALID_VALUE;
			*len = f->param_bytes;
			return CUDA_SUCCESS;
		}
		if (size > XGPUIF_MAX_PAYLOAD)
			return CUDA_ERROR_INVALID_VALUE;
		*len = (uint32_t)size;
		return CUDA_SUCCESS;
	}
	if (!known) {
		xgpulib_dbg("launch of %s: its parameter layout is unknown, so "
			    "kernelParams cannot be flattened (use extra)",
			    f->name ? f->name : "?");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (f->nparams && !kernelParams)
		return CUDA_ERROR_INVALID_VALUE;
	*len = f->param_bytes;
	return CUDA_SUCCESS;
}

int xgpulib_pack_params(const struct xgpulib_func *f, void **kernelParams,
			void **extra, void *buf, uint32_t cap, uint32_t *len)
{
	uint8_t *out = buf;
	uint32_t n;
	int rc = xgpulib_params_len(f, kernelParams, extra, &n);

	if (rc)
		return rc;
	if (n > cap)
		return CUDA_ERROR_INVALID_VALUE;
	if (extra) {
		const void *src;
		size_t size;

		parse_extra(extra, &src, &size);
		if (n)
			memcpy(out, src, n);
		*len = n;
		return CUDA_SUCCESS;
	}
	/* padding between parameters goes out as zeros, not stack bytes */
	if (n)
		memset(out, 0, n);
	for (uint32_t i = 0; i < f->nparams; i++) {
		const struct xgpuif_param *p = &f->params[i];

		if (!p->size)
			continue;
		if (!kernelParams[i])
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(out + p->offset, kernelParams[i], p->size);
	}
	*len = n;
	return CUDA_SUCCESS;
}

/* ---- attributes and streams ---------------------------------------------- */

static CUresult event_remote(CUevent ev, uint64_t *out)
{
	*out = 0;
	if (!ev)
		return CUDA_SUCCESS;	/* the driver judges a NULL event */
	if (ev->magic != XGPULIB_EVENT_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = ev->remote;
	return CUDA_SUCCESS;
}

/*
 * CUlaunchAttribute -> wire.  The value bytes travel as they are except
 * for event handles, which become the events' wire handles.
 */
CUresult xgpulib_launch_attrs(const CUlaunchAttribute *in, unsigned int n,
			      struct xgpuif_launch_attr *out, uint32_t *nout)
{
	uint32_t k = 0;

	if (n && !in)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		struct xgpuif_launch_attr *a;

		if (in[i].id == CU_LAUNCH_ATTRIBUTE_IGNORE)
			continue;
		/* graphs only; stream capture is not forwarded */
		if (in[i].id ==
		    CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
			return CUDA_ERROR_NOT_SUPPORTED;
		if (k == XGPUIF_MAX_LAUNCH_ATTRS) {
			xgpulib_dbg("launch with more than %u attributes",
				    XGPUIF_MAX_LAUNCH_ATTRS);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		a = &out[k++];
		memset(a, 0, sizeof(*a));
		a->id = (uint32_t)in[i].id;
		memcpy(a->value, &in[i].value, sizeof(a->value));
		if (in[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    in[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT) {
			uint64_t r;
			/* both put the CUevent first */
			CUresult rc = event_remote(
				in[i].value.launchCompletionEvent.event, &r);

			if (rc)
				return rc;
			memcpy(a->value, &r, sizeof(r));
		}
	}
	*nout = k;
	return CUDA_SUCCESS;
}

CUresult xgpulib_launch_stream(CUstream s, int ptsz, uint64_t *out)
{
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD &&
	    s->magic != XGPULIB_STREAM_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = xgpulib_stream_remote(s, ptsz);
	return CUDA_SUCCESS;
}

/* the grid and block of a launch configuration, as the wire has them */
void xgpulib_launch_dims(const CUlaunchConfig *c, uint32_t grid[3],
			 uint32_t block[3])
{
	grid[0] = c->gridDimX;
	grid[1] = c->gridDimY;
	grid[2] = c->gridDimZ;
	block[0] = c->blockDimX;
	block[1] = c->blockDimY;
	block[2] = c->blockDimZ;
}

/* ---- launches ------------------------------------------------------------ */

/* every launch comes here: cuLaunchKernel and the others build a config */
CUresult xgpulib_launch_config(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra, int ptsz)
{
	struct xgpulib_func *fn = xgpulib_func_check(f);
	struct xgpuif_launch_attr attrs[XGPUIF_MAX_LAUNCH_ATTRS];
	struct xgpuif_launch_args a;
	struct xgpuif_iov tail[2];
	uint8_t small[1024];	/* most kernels take a few pointers */
	uint8_t *buf = small;
	uint32_t len = 0, fixed;
	CUresult rc;

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	rc = xgpulib_launch_attrs(config->attrs, config->numAttrs, attrs,
				  &a.nattrs);
	if (rc)
		return rc;
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!fn)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!xgpulib_current_remote())
		return CUDA_ERROR_INVALID_CONTEXT;
	xgpulib_launch_dims(config, a.grid, a.block);
	for (int i = 0; i < 3; i++)
		if (!a.grid[i] || !a.block[i])
			return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_launch_stream(config->hStream, ptsz, &a.stream);
	if (rc)
		return rc;
	rc = xgpulib_params_len(fn, kernelParams, extra, &len);
	if (rc)
		return rc;
	fixed = sizeof(a) + a.nattrs * sizeof(struct xgpuif_launch_attr);
	if (len > XGPUIF_MAX_PAYLOAD - fixed) {
		xgpulib_dbg("launch of %s: %u parameter bytes do not fit one "
			    "message", fn->name, len);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (len > sizeof(small)) {
		buf = malloc(len);
		if (!buf)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rc = xgpulib_pack_params(fn, kernelParams, extra, buf, len, &len);
	if (rc == CUDA_SUCCESS) {
		a.func = fn->remote;
		a.kind = fn->kind;
		a.shmem = config->sharedMemBytes;
		a.param_bytes = len;
		tail[0] = (struct xgpuif_iov){
			attrs, a.nattrs * (uint32_t)sizeof(attrs[0]) };
		tail[1] = (struct xgpuif_iov){ buf, len };
		rc = xgpulib_post_LAUNCH(&a, tail, 2);
	}
	if (buf != small)
		free(buf);
	return rc;
}
