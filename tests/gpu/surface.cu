// surface: surface objects as the samples (simpleSurfaceWrite) use them: a
// 2D array made for load/store, a surface object on it, a kernel that
// reads a texture object of one array and writes the surface of another
// (surf2Dwrite), the result copied back with cudaMemcpy2DFromArray, and
// cudaGetSurfaceObjectResourceDesc.
//
// Output: deterministic result lines, then "PASS surface" (exit 0) or
// "FAIL ..." (exit 1).
#include <cstdio>
#include <vector>

#include "check.h"

__global__ void invert(cudaTextureObject_t in, cudaSurfaceObject_t out,
		       int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < w && y < h) {
		float v = tex2D<float>(in, x + 0.5f, y + 0.5f);

		surf2Dwrite(1.0f - v, out, x * (int)sizeof(float), y);
	}
}

int main()
{
	const int w = 256, h = 128;
	std::vector<float> src(w * h), dst(w * h);
	cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
	cudaArray_t a_in, a_out;

	for (int i = 0; i < w * h; i++)
		src[i] = (float)(i % 97) / 97.0f;
	CK(cudaMallocArray(&a_in, &fmt, w, h));
	CK(cudaMallocArray(&a_out, &fmt, w, h, cudaArraySurfaceLoadStore));
	CK(cudaMemcpy2DToArray(a_in, 0, 0, src.data(), w * sizeof(float),
			       w * sizeof(float), h, cudaMemcpyHostToDevice));

	cudaResourceDesc rd = {};
	rd.resType = cudaResourceTypeArray;
	rd.res.array.array = a_in;
	cudaTextureDesc td = {};
	td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
	td.filterMode = cudaFilterModePoint;
	td.readMode = cudaReadModeElementType;
	cudaTextureObject_t tex;
	CK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
	rd.res.array.array = a_out;
	cudaSurfaceObject_t surf;
	CK(cudaCreateSurfaceObject(&surf, &rd));

	dim3 block(16, 16), grid(w / 16, h / 16);
	invert<<<grid, block>>>(tex, surf, w, h);
	CK(cudaGetLastError());
	CK(cudaMemcpy2DFromArray(dst.data(), w * sizeof(float), a_out, 0, 0,
				 w * sizeof(float), h,
				 cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < w * h; i++)
		bad += dst[i] != 1.0f - src[i];
	printf("surface write: %d wrong of %d\n", bad, w * h);

	cudaResourceDesc back = {};
	CK(cudaGetSurfaceObjectResourceDesc(&back, surf));
	printf("resource desc names the array: %d\n",
	       back.resType == cudaResourceTypeArray &&
	       back.res.array.array == a_out);

	CK(cudaDestroySurfaceObject(surf));
	CK(cudaDestroyTextureObject(tex));
	CK(cudaFreeArray(a_in));
	CK(cudaFreeArray(a_out));
	if (bad) {
		printf("FAIL surface\n");
		return 1;
	}
	printf("PASS surface\n");
	return 0;
}
