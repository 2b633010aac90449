// memset_dtod: memsets and device-side copies.
//  - cudaMemset (8-bit) over a whole buffer and over an unaligned range
//  - cudaMemsetAsync on a stream
//  - cudaMallocPitch + cudaMemset2D (must not touch the pitch padding),
//    cudaMemcpy2D H2D, D2D, D2H (whole and a sub-rectangle),
//    cudaMemcpy2DAsync D2D
//  - cudaMemcpy and cudaMemcpyAsync device to device
//  - cudaMemcpy with cudaMemcpyDefault (UVA decides the direction)
//  - 16- and 32-bit memsets through the driver API (cuMemsetD16 and
//    cuMemsetD32, found with cudaGetDriverEntryPointByVersion), checked by
//    a kernel and by a copy back
//
// Output: deterministic result lines, then "PASS memset_dtod" (exit 0) or
// "FAIL ..." (exit 1).
#include <cuda.h>
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

typedef CUresult (*pfn_memsetD32)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*pfn_memsetD16)(CUdeviceptr, unsigned short, size_t);
typedef CUresult (*pfn_getErrorName)(CUresult, const char **);

static pfn_getErrorName drv_error_name;

#define CKDRV(call)                                                     \
	do {                                                            \
		CUresult r_ = (call);                                   \
		if (r_ != CUDA_SUCCESS) {                               \
			const char *n_ = NULL;                          \
			if (drv_error_name == NULL ||                   \
			    drv_error_name(r_, &n_) != CUDA_SUCCESS ||  \
			    n_ == NULL)                                 \
				n_ = "unknown error";                   \
			printf("FAIL %s: %s\n", #call, n_);             \
			exit(1);                                        \
		}                                                       \
	} while (0)

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static uint32_t rng_state = 0x51ED270Bu;

static uint32_t rng_u32()
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

static void fill_random(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)(rng_u32() >> 24);

		p[i] = b ? b : 0x77;
	}
}

static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

__global__ void count_ne_u32(const unsigned int *p, size_t n,
			     unsigned int pattern, unsigned int *bad)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && p[i] != pattern)
		atomicAdd(bad, 1u);
}

__global__ void count_ne_u16(const unsigned short *p, size_t n,
			     unsigned short pattern, unsigned int *bad)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && p[i] != pattern)
		atomicAdd(bad, 1u);
}

static void *driver_entry(const char *sym)
{
	void *fn = NULL;
	cudaDriverEntryPointQueryResult q;

	CK(cudaGetDriverEntryPointByVersion(sym, &fn, 12000, cudaEnableDefault,
					    &q));
	printf("driver entry point %s: %s\n", sym,
	       q == cudaDriverEntryPointSuccess ? "found" : "not found");
	if (q != cudaDriverEntryPointSuccess || fn == NULL) {
		printf("FAIL cudaGetDriverEntryPointByVersion %s: status %d\n",
		       sym, (int)q);
		exit(1);
	}
	return fn;
}

int main()
{
	const size_t NB = (4u << 20) + 37;      // bytes, deliberately odd
	const size_t W = 1000, H = 37;          // 2D region, bytes x rows
	std::vector<unsigned char> h(NB), src(NB), out(NB);
	unsigned char *d1, *d2, *d3, *p1, *p2, *pinned;
	unsigned int *dbad, nbad;
	size_t pitch1, pitch2, bad;
	cudaStream_t st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cudaStreamCreate(&st));
	CK(cudaMalloc(&d1, NB));
	CK(cudaMalloc(&d2, NB));
	CK(cudaMalloc(&d3, NB));
	CK(cudaMalloc(&dbad, sizeof *dbad));
	CK(cudaMallocHost(&pinned, NB));

	// ---- cudaMemset, 8-bit ----
	CK(cudaMemset(d1, 0xA5, NB));
	CK(cudaMemset(d1 + 3, 0x5A, 1001));
	CK(cudaMemcpy(h.data(), d1, NB, cudaMemcpyDeviceToHost));
	bad = 0;
	for (size_t i = 0; i < NB; i++)
		bad += h[i] != (i >= 3 && i < 1004 ? 0x5A : 0xA5);
	printf("cudaMemset whole + unaligned range: %zu wrong bytes\n", bad);
	expect(bad == 0, "cudaMemset");

	// ---- cudaMemsetAsync ----
	CK(cudaMemsetAsync(d1, 0x3C, NB, st));
	CK(cudaMemsetAsync(d1 + 4096, 0xC3, 12345, st));
	CK(cudaMemcpyAsync(h.data(), d1, NB, cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	bad = 0;
	for (size_t i = 0; i < NB; i++)
		bad += h[i] != (i >= 4096 && i < 4096 + 12345 ? 0xC3 : 0x3C);
	printf("cudaMemsetAsync: %zu wrong bytes\n", bad);
	expect(bad == 0, "cudaMemsetAsync");

	// ---- pitched memory ----
	CK(cudaMallocPitch(&p1, &pitch1, W, H));
	CK(cudaMallocPitch(&p2, &pitch2, W, H));
	expect(pitch1 >= W && pitch2 >= W, "pitch >= width");
	CK(cudaMemset(p1, 0x22, pitch1 * H));
	CK(cudaMemset2D(p1, pitch1, 0x11, W - 10, H - 2));
	{
		std::vector<unsigned char> all(pitch1 * H);

		CK(cudaMemcpy(all.data(), p1, pitch1 * H,
			      cudaMemcpyDeviceToHost));
		bad = 0;
		for (size_t r = 0; r < H; r++)
			for (size_t c = 0; c < pitch1; c++)
				bad += all[r * pitch1 + c] !=
				       (r < H - 2 && c < W - 10 ? 0x11 : 0x22);
		printf("cudaMemset2D (padding untouched): %zu wrong bytes\n",
		       bad);
		expect(bad == 0, "cudaMemset2D");
	}
	{
		const size_t hp = W + 13;       // host pitch
		std::vector<unsigned char> hsrc(hp * H), hdst(W * H, 0),
			sub(100 * 10, 0);

		fill_random(hsrc.data(), hsrc.size());
		CK(cudaMemcpy2D(p1, pitch1, hsrc.data(), hp, W, H,
				cudaMemcpyHostToDevice));
		CK(cudaMemcpy2D(p2, pitch2, p1, pitch1, W, H,
				cudaMemcpyDeviceToDevice));
		CK(cudaMemcpy2D(hdst.data(), W, p2, pitch2, W, H,
				cudaMemcpyDeviceToHost));
		bad = 0;
		for (size_t r = 0; r < H; r++)
			bad += memcmp(&hdst[r * W], &hsrc[r * hp], W) != 0;
		// A sub-rectangle: rows 5..14, bytes 7..106.
		CK(cudaMemcpy2D(sub.data(), 100, p2 + 5 * pitch2 + 7, pitch2, 100,
				10, cudaMemcpyDeviceToHost));
		for (size_t r = 0; r < 10; r++)
			bad += memcmp(&sub[r * 100], &hsrc[(r + 5) * hp + 7],
				      100) != 0;
		// cudaMemcpy2DAsync D2D back into p1 after clearing it.
		CK(cudaMemset2DAsync(p1, pitch1, 0, W, H, st));
		CK(cudaMemcpy2DAsync(p1, pitch1, p2, pitch2, W, H,
				     cudaMemcpyDeviceToDevice, st));
		CK(cudaMemcpy2DAsync(hdst.data(), W, p1, pitch1, W, H,
				     cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
		for (size_t r = 0; r < H; r++)
			bad += memcmp(&hdst[r * W], &hsrc[r * hp], W) != 0;
		printf("cudaMemcpy2D H2D/D2D/D2H + sub-rectangle + async: %zu "
		       "wrong rows, hash %016llx\n",
		       bad, (unsigned long long)fnv1a(hdst.data(), hdst.size()));
		expect(bad == 0, "cudaMemcpy2D");
	}

	// ---- device to device ----
	fill_random(src.data(), NB);
	CK(cudaMemcpy(d1, src.data(), NB, cudaMemcpyHostToDevice));
	CK(cudaMemset(d2, 0, NB));
	CK(cudaMemcpy(d2, d1, NB, cudaMemcpyDeviceToDevice));
	CK(cudaMemcpy(out.data(), d2, NB, cudaMemcpyDeviceToHost));
	bad = memcmp(out.data(), src.data(), NB) != 0;
	CK(cudaMemsetAsync(d3, 0, NB, st));
	CK(cudaMemcpyAsync(d3, d2 + 1001, NB - 1001, cudaMemcpyDeviceToDevice,
			   st));
	CK(cudaMemcpyAsync(out.data(), d3, NB, cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	bad += memcmp(out.data(), src.data() + 1001, NB - 1001) != 0;
	for (size_t i = NB - 1001; i < NB; i++)
		bad += out[i] != 0;
	printf("cudaMemcpy D2D + cudaMemcpyAsync D2D (offset): %zu errors, "
	       "hash %016llx\n",
	       bad, (unsigned long long)fnv1a(out.data(), NB));
	expect(bad == 0, "device to device copies");

	// ---- cudaMemcpyDefault: pageable, pinned and device pointers ----
	fill_random(src.data(), NB);
	CK(cudaMemcpy(d1, src.data(), NB, cudaMemcpyDefault));
	CK(cudaMemcpy(d2, d1, NB, cudaMemcpyDefault));
	CK(cudaMemcpy(pinned, d2, NB, cudaMemcpyDefault));
	bad = memcmp(pinned, src.data(), NB) != 0;
	for (size_t i = 0; i < NB; i++)
		pinned[i] ^= 0x5A;
	CK(cudaMemcpy(d3, pinned, NB, cudaMemcpyDefault));
	CK(cudaMemcpy(out.data(), d3, NB, cudaMemcpyDefault));
	bad += memcmp(out.data(), pinned, NB) != 0;
	printf("cudaMemcpyDefault H2D/D2D/D2H, pageable and pinned: %zu "
	       "errors, hash %016llx\n",
	       bad, (unsigned long long)fnv1a(out.data(), NB));
	expect(bad == 0, "cudaMemcpyDefault");

	// ---- 16- and 32-bit memsets through the driver API ----
	{
		pfn_memsetD32 memsetD32 =
			(pfn_memsetD32)driver_entry("cuMemsetD32");
		pfn_memsetD16 memsetD16 =
			(pfn_memsetD16)driver_entry("cuMemsetD16");
		const size_t n32 = NB / 4, n16 = NB / 2;
		const unsigned int pat32 = 0xDEADBEEFu;
		const unsigned short pat16 = 0xB00Bu;

		drv_error_name = (pfn_getErrorName)driver_entry("cuGetErrorName");
		CKDRV(memsetD32((CUdeviceptr)d1, pat32, n32));
		CK(cudaMemset(dbad, 0, sizeof *dbad));
		count_ne_u32<<<(unsigned)((n32 + 255) / 256), 256>>>(
			(const unsigned int *)d1, n32, pat32, dbad);
		CK_LAUNCH("count_ne_u32");
		CK(cudaMemcpy(&nbad, dbad, sizeof nbad, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(out.data(), d1, n32 * 4, cudaMemcpyDeviceToHost));
		bad = 0;
		for (size_t i = 0; i < n32; i++) {
			unsigned int v;

			memcpy(&v, &out[i * 4], 4);
			bad += v != pat32;
		}
		printf("cuMemsetD32 0x%08x: %u wrong on device, %zu on host\n",
		       pat32, nbad, bad);
		expect(nbad == 0 && bad == 0, "cuMemsetD32");

		CKDRV(memsetD16((CUdeviceptr)d2, pat16, n16));
		CK(cudaMemset(dbad, 0, sizeof *dbad));
		count_ne_u16<<<(unsigned)((n16 + 255) / 256), 256>>>(
			(const unsigned short *)d2, n16, pat16, dbad);
		CK_LAUNCH("count_ne_u16");
		CK(cudaMemcpy(&nbad, dbad, sizeof nbad, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(out.data(), d2, n16 * 2, cudaMemcpyDeviceToHost));
		bad = 0;
		for (size_t i = 0; i < n16; i++) {
			unsigned short v;

			memcpy(&v, &out[i * 2], 2);
			bad += v != pat16;
		}
		printf("cuMemsetD16 0x%04x: %u wrong on device, %zu on host\n",
		       pat16, nbad, bad);
		expect(nbad == 0 && bad == 0, "cuMemsetD16");
	}

	CK(cudaStreamDestroy(st));
	CK(cudaFree(d1));
	CK(cudaFree(d2));
	CK(cudaFree(d3));
	CK(cudaFree(p1));
	CK(cudaFree(p2));
	CK(cudaFree(dbad));
	CK(cudaFreeHost(pinned));
	if (failures) {
		printf("FAIL memset_dtod (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS memset_dtod\n");
	return 0;
}
