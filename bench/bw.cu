// bw: cudaMemcpy bandwidth, host to device and device to host, from
// pageable (malloc) and pinned (cudaMallocHost) memory, 4 KiB to 1 GiB.
//
// Each copy is timed on the host clock around the synchronous cudaMemcpy,
// so the figure includes every cost the caller sees (for xgpu: the
// forwarding and any staging). For each size: warm-up copies, then at
// least 5 timed copies and at least 50 ms in all (3 for 1 GiB), and the
// median is reported.
//
// Output, one line per point:
//   BW <h2d|d2h> <pageable|pinned> <bytes> <GB/s>
// On a CUDA error: "FAIL <call>: <error name>", exit 1.
#include <cstring>
#include <vector>

#include "bench.h"

static double copy_once(void *dst, const void *src, size_t bytes,
			cudaMemcpyKind kind)
{
	double t0 = now_s();

	CK(cudaMemcpy(dst, src, bytes, kind));
	return now_s() - t0;
}

int main()
{
	static const size_t sizes[] = {
		4ull << 10, 64ull << 10, 1ull << 20, 4ull << 20, 16ull << 20,
		64ull << 20, 256ull << 20, 1ull << 30,
	};
	const size_t maxb = 1ull << 30;
	unsigned char *pageable, *pinned, *dev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pageable = (unsigned char *)malloc(maxb);
	if (pageable == NULL) {
		printf("FAIL malloc: out of memory\n");
		return 1;
	}
	// Touch every page so that first-touch faults are not timed.
	for (size_t i = 0; i < maxb; i++)
		pageable[i] = (unsigned char)(i * 131 + 7);
	CK(cudaMallocHost(&pinned, maxb));
	memcpy(pinned, pageable, maxb);
	CK(cudaMalloc(&dev, maxb));
	CK(cudaMemset(dev, 0x5A, maxb));
	CK(cudaDeviceSynchronize());

	for (int dir = 0; dir < 2; dir++) {
		for (int pin = 0; pin < 2; pin++) {
			unsigned char *host = pin ? pinned : pageable;
			cudaMemcpyKind kind = dir == 0 ? cudaMemcpyHostToDevice
						       : cudaMemcpyDeviceToHost;

			for (size_t b : sizes) {
				void *dst = dir == 0 ? (void *)dev : (void *)host;
				const void *src = dir == 0 ? (const void *)host
							   : (const void *)dev;
				int warm = b >= (256ull << 20) ? 1 : 3;
				double est = 0.0;
				int reps;

				for (int w = 0; w < warm; w++)
					est = copy_once(dst, src, b, kind);
				if (b >= maxb)
					reps = 3;
				else {
					reps = (int)(0.05 / std::max(est, 1e-7)) + 1;
					reps = std::max(5, std::min(reps, 20000));
				}
				std::vector<double> t(reps);
				for (int r = 0; r < reps; r++)
					t[r] = copy_once(dst, src, b, kind);
				std::sort(t.begin(), t.end());
				double med = reps % 2 ? t[reps / 2]
						      : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);

				printf("BW %s %s %zu %.3f\n", dir == 0 ? "h2d" : "d2h",
				       pin ? "pinned" : "pageable", b,
				       (double)b / med / 1e9);
			}
		}
	}

	CK(cudaFree(dev));
	CK(cudaFreeHost(pinned));
	free(pageable);
	return 0;
}
