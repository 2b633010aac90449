// texture: texture objects through the runtime API.
//  - a 2D cudaArray (cudaMallocArray, cudaMemcpy2DToArray, read back with
//    cudaMemcpy2DFromArray) sampled with tex2D:
//      point filtering, clamp addressing, unnormalized coordinates
//      (including coordinates outside the array);
//      linear filtering at exact quarter-texel offsets;
//      normalized coordinates with wrap addressing
//  - linear memory (cudaMalloc) read with tex1Dfetch: float elements, and
//    uchar4 elements read as normalized floats
//
// Output: deterministic result lines, then "PASS texture" (exit 0) or
// "FAIL ..." (exit 1).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                        \
	do {                                                            \
		cudaError_t e_ = (call);                                \
		if (e_ != cudaSuccess) {                                \
			printf("FAIL %s: %s\n", #call,                  \
			       cudaGetErrorName(e_));                   \
			exit(1);                                        \
		}                                                       \
	} while (0)

#define CK_LAUNCH(what)                                                 \
	do {                                                            \
		cudaError_t e_ = cudaGetLastError();                    \
		if (e_ != cudaSuccess) {                                \
			printf("FAIL launch %s: %s\n", what,            \
			       cudaGetErrorName(e_));                   \
			exit(1);                                        \
		}                                                       \
	} while (0)

enum { W = 300, H = 200, B = 2, NL = 10000 };

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static uint32_t rng_state = 0xBB67AE85u;

static uint32_t rng_u32()
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

// Uniform in [-1, 1), never exactly zero.
static float rng_float()
{
	float f = (float)(rng_u32() >> 8) * (2.0f / 16777216.0f) - 1.0f;

	return f == 0.0f ? 0.5f : f;
}

static double checksum(const float *v, size_t n)
{
	double s = 0.0;

	for (size_t i = 0; i < n; i++)
		s += (double)v[i] * (double)((i % 7) + 1);
	return s;
}

// Point samples on a (W + 2B) x (H + 2B) grid starting at (-B, -B).
__global__ void sample_point(cudaTextureObject_t t, float *out)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < W + 2 * B && y < H + 2 * B)
		out[y * (W + 2 * B) + x] =
			tex2D<float>(t, (x - B) + 0.5f, (y - B) + 0.5f);
}

// Linear samples a quarter texel right and three quarters down of each
// texel centre.
__global__ void sample_linear(cudaTextureObject_t t, float *out)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < W && y < H)
		out[y * W + x] = tex2D<float>(t, x + 0.75f, y + 1.25f);
}

// Normalized coordinates shifted by whole periods (wrap addressing).
__global__ void sample_wrap(cudaTextureObject_t t, float *out)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < W && y < H)
		out[y * W + x] = tex2D<float>(t, (x + 0.5f) / W + 1.0f,
					      (y + 0.5f) / H - 2.0f);
}

__global__ void fetch_float(cudaTextureObject_t t, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = tex1Dfetch<float>(t, i);
}

__global__ void fetch_unorm4(cudaTextureObject_t t, float4 *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = tex1Dfetch<float4>(t, i);
}

static cudaTextureObject_t make_array_tex(cudaArray_t arr,
					  cudaTextureFilterMode filter,
					  cudaTextureAddressMode addr,
					  int normalized)
{
	cudaResourceDesc rd;
	cudaTextureDesc td;
	cudaTextureObject_t t;

	memset(&rd, 0, sizeof rd);
	rd.resType = cudaResourceTypeArray;
	rd.res.array.array = arr;
	memset(&td, 0, sizeof td);
	td.addressMode[0] = addr;
	td.addressMode[1] = addr;
	td.filterMode = filter;
	td.readMode = cudaReadModeElementType;
	td.normalizedCoords = normalized;
	CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
	return t;
}

int main()
{
	std::vector<float> img((size_t)W * H), back((size_t)W * H);
	std::vector<float> outp((size_t)(W + 2 * B) * (H + 2 * B));
	std::vector<float> outl((size_t)W * H);
	cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
	cudaArray_t arr;
	float *dout;
	dim3 blk(16, 16);
	size_t bad;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (auto &v : img)
		v = rng_float();

	// ---- cudaArray ----
	CK(cudaMallocArray(&arr, &fdesc, W, H));
	CK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float),
			       W * sizeof(float), H, cudaMemcpyHostToDevice));
	CK(cudaMemcpy2DFromArray(back.data(), W * sizeof(float), arr, 0, 0,
				 W * sizeof(float), H, cudaMemcpyDeviceToHost));
	bad = memcmp(back.data(), img.data(), img.size() * sizeof(float)) != 0;
	printf("cudaMemcpy2DToArray / FromArray round trip: %s\n",
	       bad ? "mismatch" : "ok");
	expect(bad == 0, "array round trip");
	CK(cudaMalloc(&dout, outp.size() * sizeof(float)));

	// Point filtering, clamp, unnormalized, including outside the array.
	{
		cudaTextureObject_t t = make_array_tex(arr, cudaFilterModePoint,
						       cudaAddressModeClamp, 0);
		cudaResourceDesc rd;

		CK(cudaGetTextureObjectResourceDesc(&rd, t));
		expect(rd.resType == cudaResourceTypeArray && rd.res.array.array == arr,
		       "cudaGetTextureObjectResourceDesc");
		dim3 grid((W + 2 * B + 15) / 16, (H + 2 * B + 15) / 16);
		sample_point<<<grid, blk>>>(t, dout);
		CK_LAUNCH("sample_point");
		CK(cudaMemcpy(outp.data(), dout, outp.size() * sizeof(float),
			      cudaMemcpyDeviceToHost));
		bad = 0;
		for (int y = 0; y < H + 2 * B; y++)
			for (int x = 0; x < W + 2 * B; x++) {
				int sx = std::min(std::max(x - B, 0), W - 1);
				int sy = std::min(std::max(y - B, 0), H - 1);

				bad += outp[(size_t)y * (W + 2 * B) + x] !=
				       img[(size_t)sy * W + sx];
			}
		printf("array, point, clamp: %zu mismatches, checksum %.6e\n", bad,
		       checksum(outp.data(), outp.size()));
		expect(bad == 0, "point sampling with clamp");
		CK(cudaDestroyTextureObject(t));
	}

	// Linear filtering: weights 0.25 (x) and 0.75 (y) are exact in the
	// texture unit's 8-bit fraction.
	{
		cudaTextureObject_t t = make_array_tex(arr, cudaFilterModeLinear,
						       cudaAddressModeClamp, 0);
		dim3 grid((W + 15) / 16, (H + 15) / 16);
		double maxerr = 0.0;

		sample_linear<<<grid, blk>>>(t, dout);
		CK_LAUNCH("sample_linear");
		CK(cudaMemcpy(outl.data(), dout, outl.size() * sizeof(float),
			      cudaMemcpyDeviceToHost));
		bad = 0;
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				int x1 = std::min(x + 1, W - 1);
				int y1 = std::min(y + 1, H - 1);
				double a = 0.25, b = 0.75;
				double ref =
					(1 - a) * (1 - b) * img[(size_t)y * W + x] +
					a * (1 - b) * img[(size_t)y * W + x1] +
					(1 - a) * b * img[(size_t)y1 * W + x] +
					a * b * img[(size_t)y1 * W + x1];
				double err = fabs(outl[(size_t)y * W + x] - ref);

				if (!(err <= 1e-4))
					bad++;
				if (err > maxerr || err != err)
					maxerr = err;
			}
		printf("array, linear filter: %zu off by more than 1e-4, max err "
		       "%.3e, checksum %.6e\n", bad, maxerr,
		       checksum(outl.data(), outl.size()));
		expect(bad == 0, "linear filtering");
		CK(cudaDestroyTextureObject(t));
	}

	// Normalized coordinates, wrap.
	{
		cudaTextureObject_t t = make_array_tex(arr, cudaFilterModePoint,
						       cudaAddressModeWrap, 1);
		dim3 grid((W + 15) / 16, (H + 15) / 16);

		sample_wrap<<<grid, blk>>>(t, dout);
		CK_LAUNCH("sample_wrap");
		CK(cudaMemcpy(outl.data(), dout, outl.size() * sizeof(float),
			      cudaMemcpyDeviceToHost));
		bad = memcmp(outl.data(), img.data(), img.size() * sizeof(float)) != 0;
		printf("array, normalized coordinates, wrap: %s\n",
		       bad ? "mismatch" : "ok");
		expect(bad == 0, "normalized coordinates with wrap");
		CK(cudaDestroyTextureObject(t));
	}
	CK(cudaFreeArray(arr));

	// ---- linear memory, float ----
	{
		std::vector<float> lin(NL), got(NL);
		float *dlin;
		cudaResourceDesc rd;
		cudaTextureDesc td;
		cudaTextureObject_t t;

		for (auto &v : lin)
			v = rng_float();
		CK(cudaMalloc(&dlin, NL * sizeof(float)));
		CK(cudaMemcpy(dlin, lin.data(), NL * sizeof(float),
			      cudaMemcpyHostToDevice));
		memset(&rd, 0, sizeof rd);
		rd.resType = cudaResourceTypeLinear;
		rd.res.linear.devPtr = dlin;
		rd.res.linear.desc = cudaCreateChannelDesc<float>();
		rd.res.linear.sizeInBytes = NL * sizeof(float);
		memset(&td, 0, sizeof td);
		td.readMode = cudaReadModeElementType;
		CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
		fetch_float<<<(NL + 255) / 256, 256>>>(t, dout, NL);
		CK_LAUNCH("fetch_float");
		CK(cudaMemcpy(got.data(), dout, NL * sizeof(float),
			      cudaMemcpyDeviceToHost));
		bad = memcmp(got.data(), lin.data(), NL * sizeof(float)) != 0;
		printf("linear memory, tex1Dfetch float: %s, checksum %.6e\n",
		       bad ? "mismatch" : "ok", checksum(got.data(), NL));
		expect(bad == 0, "tex1Dfetch over linear float memory");
		CK(cudaDestroyTextureObject(t));
		CK(cudaFree(dlin));
	}

	// ---- linear memory, uchar4 read as normalized float4 ----
	{
		std::vector<uchar4> lin(NL);
		std::vector<float4> got(NL);
		uchar4 *dlin;
		float4 *dout4;
		cudaResourceDesc rd;
		cudaTextureDesc td;
		cudaTextureObject_t t;
		double maxerr = 0.0;

		for (auto &v : lin) {
			uint32_t r = rng_u32();

			v = make_uchar4(r & 0xFF, (r >> 8) & 0xFF, (r >> 16) & 0xFF,
					r >> 24);
		}
		CK(cudaMalloc(&dlin, NL * sizeof(uchar4)));
		CK(cudaMalloc(&dout4, NL * sizeof(float4)));
		CK(cudaMemcpy(dlin, lin.data(), NL * sizeof(uchar4),
			      cudaMemcpyHostToDevice));
		memset(&rd, 0, sizeof rd);
		rd.resType = cudaResourceTypeLinear;
		rd.res.linear.devPtr = dlin;
		rd.res.linear.desc = cudaCreateChannelDesc<uchar4>();
		rd.res.linear.sizeInBytes = NL * sizeof(uchar4);
		memset(&td, 0, sizeof td);
		td.readMode = cudaReadModeNormalizedFloat;
		CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
		fetch_unorm4<<<(NL + 255) / 256, 256>>>(t, dout4, NL);
		CK_LAUNCH("fetch_unorm4");
		CK(cudaMemcpy(got.data(), dout4, NL * sizeof(float4),
			      cudaMemcpyDeviceToHost));
		bad = 0;
		for (int i = 0; i < NL; i++) {
			const float g[4] = { got[i].x, got[i].y, got[i].z, got[i].w };
			const unsigned char c[4] = { lin[i].x, lin[i].y, lin[i].z,
						     lin[i].w };

			for (int k = 0; k < 4; k++) {
				double err = fabs(g[k] - c[k] / 255.0);

				if (!(err <= 1e-6))
					bad++;
				if (err > maxerr || err != err)
					maxerr = err;
			}
		}
		printf("linear memory, uchar4 normalized: %zu off by more than "
		       "1e-6, max err %.3e, checksum %.6e\n", bad, maxerr,
		       checksum((const float *)got.data(), 4 * (size_t)NL));
		expect(bad == 0, "tex1Dfetch uchar4 as normalized float");
		CK(cudaDestroyTextureObject(t));
		CK(cudaFree(dlin));
		CK(cudaFree(dout4));
	}

	CK(cudaFree(dout));
	if (failures) {
		printf("FAIL texture (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS texture\n");
	return 0;
}
