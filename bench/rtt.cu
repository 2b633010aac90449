// rtt: latency of synchronous calls that each need the GPU (or, through
// xgpu, a round trip to the backend):
//   h2d_64B   64-byte cudaMemcpy host to device from pageable memory
//   sync_idle cudaDeviceSynchronize on an idle context
//   d2h_64B   64-byte cudaMemcpy device to host into pageable memory
// 1000 warm-up calls, then 20000 timed ones each.
//
// Output, one line per call:
//   RTT <name> p50_us <x> p99_us <y>
// On a CUDA error: "FAIL <call>: <error name>", exit 1.
#include <vector>

#include "bench.h"

enum { WARM = 1000, ITERS = 20000 };

static void report(const char *name, std::vector<double> &t)
{
	std::sort(t.begin(), t.end());
	printf("RTT %s p50_us %.3f p99_us %.3f\n", name,
	       t[t.size() / 2] * 1e6, t[(t.size() * 99) / 100] * 1e6);
}

template <typename F> static void measure(const char *name, F call)
{
	std::vector<double> t(ITERS);

	for (int i = 0; i < WARM; i++)
		call();
	for (int i = 0; i < ITERS; i++) {
		auto t0 = std::chrono::steady_clock::now();

		call();
		t[i] = std::chrono::duration<double>(
			std::chrono::steady_clock::now() - t0).count();
	}
	report(name, t);
}

int main()
{
	unsigned char host[64];
	unsigned char *dev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < 64; i++)
		host[i] = (unsigned char)(i * 7 + 1);
	CK(cudaMalloc(&dev, 64));
	CK(cudaDeviceSynchronize());

	measure("h2d_64B", [&] {
		CK(cudaMemcpy(dev, host, 64, cudaMemcpyHostToDevice));
	});
	measure("sync_idle", [&] { CK(cudaDeviceSynchronize()); });
	measure("d2h_64B", [&] {
		CK(cudaMemcpy(host, dev, 64, cudaMemcpyDeviceToHost));
	});

	CK(cudaFree(dev));
	return 0;
}
