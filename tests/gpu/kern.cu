// Kernels for the driver API test (drvapi.c). Built twice: as a fatbin
// (SASS sm_90 + PTX compute_90) and as PTX text; both are embedded into
// drvapi and loaded with cuModuleLoadData / cuModuleLoadDataEx /
// cuLibraryLoadData. Names are extern "C" so drvapi can look them up.

// A __device__ global read by addbias and found with cuModuleGetGlobal.
__device__ float gbias;
// Counts the threads of addbias that ran, read back with cuMemcpyDtoH.
__device__ unsigned int gcount;

// Mixed parameter sizes (8, 8, 8, 4, 8, 1 bytes at offsets 0, 8, 16, 24,
// 32, 40): exercises cuFuncGetParamInfo and the packing of both launch
// forms (kernelParams and CU_LAUNCH_PARAM_BUFFER_POINTER).
// The double arithmetic uses explicit round-to-nearest operations so that
// nvcc cannot contract it into an FMA and the CPU reference stays exact.
extern "C" __global__ void vadd(const float *a, const float *b, float *c,
                                int n, double scale, char tag)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		double s = (double)(a[i] + b[i]);
		c[i] = (float)__dadd_rn(__dmul_rn(s, scale), (double)tag);
	}
}

extern "C" __global__ void addbias(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		x[i] += gbias;
		atomicAdd(&gcount, 1u);
	}
}

// Writes through a pointer from cuMemHostGetDevicePointer (zero-copy).
extern "C" __global__ void fill_u32(unsigned int *p, int n, unsigned int base)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = base ^ (unsigned int)i * 2654435761u;
}

// Counts the words of p that differ from pattern (checks cuMemsetD32 on
// the device side as well as through a copy back).
extern "C" __global__ void count_ne_u32(const unsigned int *p, int n,
                                        unsigned int pattern,
                                        unsigned int *bad)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && p[i] != pattern)
		atomicAdd(bad, 1u);
}

// out[i] = tex1Dfetch(tex, i) over a linear float resource.
extern "C" __global__ void tex_linear(unsigned long long tex, float *out,
                                      int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = tex1Dfetch<float>((cudaTextureObject_t)tex, i);
}

// out[y * w + x] = tex2D(tex, x + 0.5, y + 0.5) over a pitch2D float
// resource with point filtering and unnormalized coordinates.
extern "C" __global__ void tex_pitch2d(unsigned long long tex, float *out,
                                       int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < w && y < h)
		out[y * w + x] = tex2D<float>((cudaTextureObject_t)tex,
		                              x + 0.5f, y + 0.5f);
}
