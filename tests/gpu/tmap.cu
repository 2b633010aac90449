// tmap: tensor maps (TMA descriptors) as CUTLASS 3, Triton and
// FlashAttention 3 make them on sm_90: a tiled 2D map of a device buffer
// and a 4D im2col map, each moved to a fixed address with
// cuTensorMapReplaceAddress so that the 128 bytes can be compared with a
// native run (printed as a checksum), and refusals of bad arguments.
//
// Output: deterministic result lines, then "PASS tmap" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "check.h"

static uint64_t sum(const CUtensorMap *m)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 16; i++)
		h = (h ^ m->opaque[i]) * 1099511628211ull;
	return h;
}

int main()
{
	void *buf;
	CUtensorMap m;
	void *fixed = (void *)(uintptr_t)0x700000000000ull;

	if (cudaMalloc(&buf, 64 << 20) != cudaSuccess) {
		printf("FAIL cudaMalloc\n");
		return 1;
	}
	cuuint64_t dim[2] = { 1024, 512 };
	cuuint64_t str[1] = { 1024 * 2 };
	cuuint32_t box[2] = { 64, 64 };
	cuuint32_t es[2] = { 1, 1 };
	CKD(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf,
				   dim, str, box, es,
				   CU_TENSOR_MAP_INTERLEAVE_NONE,
				   CU_TENSOR_MAP_SWIZZLE_128B,
				   CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
				   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	CKD(cuTensorMapReplaceAddress(&m, fixed));
	printf("tiled fp16 2D, swizzle 128B: %016llx\n",
	       (unsigned long long)sum(&m));

	cuuint64_t d4[4] = { 64, 32, 32, 8 };		// C, W, H, N
	cuuint64_t s4[3] = { 64 * 4, 64 * 4 * 32, 64 * 4 * 32 * 32 };
	int lo[2] = { -1, -1 }, hi[2] = { -1, -1 };
	cuuint32_t e4[4] = { 1, 1, 1, 1 };
	CKD(cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, buf,
				    d4, s4, lo, hi, 64, 32, e4,
				    CU_TENSOR_MAP_INTERLEAVE_NONE,
				    CU_TENSOR_MAP_SWIZZLE_NONE,
				    CU_TENSOR_MAP_L2_PROMOTION_NONE,
				    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	CKD(cuTensorMapReplaceAddress(&m, fixed));
	printf("im2col fp32 4D: %016llx\n", (unsigned long long)sum(&m));

	// a misaligned address and a box larger than allowed are refused
	CUresult r1 = cuTensorMapEncodeTiled(
		&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (char *)buf + 2, dim,
		str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
		CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
		CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	cuuint32_t big[2] = { 512, 64 };
	CUresult r2 = cuTensorMapEncodeTiled(
		&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf, dim, str, big, es,
		CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
		CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
		CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	printf("misaligned address: %d, box too large: %d\n", (int)r1,
	       (int)r2);
	cudaFree(buf);
	if (r1 == CUDA_SUCCESS || r2 == CUDA_SUCCESS) {
		printf("FAIL tmap\n");
		return 1;
	}
	printf("PASS tmap\n");
	return 0;
}
