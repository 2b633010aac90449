// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_memset.c: cuMemsetD8/16/32 and their 2D, Async and
 * per-thread default stream forms: one MEMSET request each, posted for
 * the asynchronous forms.
 */
#include "xgpulib.h"

static CUresult memset2d(uint64_t dst, size_t pitch, uint32_t value,
			 uint32_t esize, size_t width, size_t height,
			 uint64_t stream, int async)
{
	struct xgpuif_memset_args a = {
		.dst = dst, .pitch = pitch, .width = width, .height = height,
		.stream = stream, .value = value, .elem_size = esize,
		.flags = async ? XGPUIF_CF_ASYNC : 0,
	};

	if (!width || !height)
		return CUDA_SUCCESS;
	if (async)
		return xgpulib_post_MEMSET(&a);
	return xgpulib_call_MEMSET(&a);
}

#define MEMSET_1D(name, T, esize, async, pt)                                   \
	CUresult name(CUdeviceptr d, T v, size_t n);                           \
	CUresult name(CUdeviceptr d, T v, size_t n)                            \
	{                                                                      \
		return memset2d(d, 0, v, esize, n, 1,                          \
				pt ? XGPUIF_STREAM_PER_THREAD : 0, async);     \
	}
#define MEMSET_1D_ASYNC(name, T, esize, pt)                                    \
	CUresult name(CUdeviceptr d, T v, size_t n, CUstream s);               \
	CUresult name(CUdeviceptr d, T v, size_t n, CUstream s)                \
	{                                                                      \
		return memset2d(d, 0, v, esize, n, 1,                          \
				xgpulib_stream_remote(s, pt), 1);              \
	}
#define MEMSET_2D(name, T, esize, pt)                                          \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h);       \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h)        \
	{                                                                      \
		return memset2d(d, p, v, esize, w, h,                          \
				pt ? XGPUIF_STREAM_PER_THREAD : 0, 0);         \
	}
#define MEMSET_2D_ASYNC(name, T, esize, pt)                                    \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h,        \
		      CUstream s);                                             \
	CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h,        \
		      CUstream s)                                              \
	{                                                                      \
		return memset2d(d, p, v, esize, w, h,                          \
				xgpulib_stream_remote(s, pt), 1);              \
	}

#undef cuMemsetD8Async
#undef cuMemsetD16Async
#undef cuMemsetD32Async
#undef cuMemsetD2D8Async
#undef cuMemsetD2D16Async
#undef cuMemsetD2D32Async
MEMSET_1D(cuMemsetD8_v2, unsigned char, 1, 0, 0)
MEMSET_1D(cuMemsetD16_v2, unsigned short, 2, 0, 0)
MEMSET_1D(cuMemsetD32_v2, unsigned int, 4, 0, 0)
MEMSET_1D(cuMemsetD8_v2_ptds, unsigned char, 1, 0, 1)
MEMSET_1D(cuMemsetD16_v2_ptds, unsigned short, 2, 0, 1)
MEMSET_1D(cuMemsetD32_v2_ptds, unsigned int, 4, 0, 1)
MEMSET_1D_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
MEMSET_1D_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
MEMSET_1D_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
MEMSET_1D_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
MEMSET_1D_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
MEMSET_1D_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
MEMSET_2D(cuMemsetD2D8_v2, unsigned char, 1, 0)
MEMSET_2D(cuMemsetD2D16_v2, unsigned short, 2, 0)
MEMSET_2D(cuMemsetD2D32_v2, unsigned int, 4, 0)
MEMSET_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, 1)
MEMSET_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, 1)
MEMSET_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, 1)
MEMSET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, 0)
MEMSET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2, 0)
MEMSET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, 0)
MEMSET_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
MEMSET_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2, 1)
MEMSET_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)
