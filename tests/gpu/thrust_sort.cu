// thrust_sort: Thrust (CUB underneath: many kernels, temporary
// allocations, cudaMemcpyAsync on its own streams) on 4M random uint32 keys.
//  - thrust::sort, compared with std::sort (hash of the whole result)
//  - thrust::sort_by_key with the original index as value: keys sorted,
//    values a permutation that maps back to the keys
//  - thrust::reduce into 64-bit, compared with the CPU sum
//
// Output: deterministic result lines, TIME lines (timing), then
// "PASS thrust_sort" (exit 0) or "FAIL ..." (exit 1).
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/system_error.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static uint32_t rng_state = 0x7F4A7C15u;

static uint32_t rng_u32()
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

static uint64_t fnv1a_u32(const std::vector<uint32_t> &v)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t x : v)
		for (int b = 0; b < 4; b++)
			h = (h ^ ((x >> (8 * b)) & 0xFF)) * 0x100000001b3ull;
	return h;
}

struct widen {
	__host__ __device__ unsigned long long operator()(uint32_t x) const
	{
		return x;
	}
};

static double ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(
		std::chrono::steady_clock::now() - t0).count();
}

static int run()
{
	const size_t n = 4u << 20;
	std::vector<uint32_t> keys(n), sorted(n), got(n), vals(n);
	unsigned long long cpu_sum = 0;

	for (size_t i = 0; i < n; i++) {
		// Keys with many duplicates in the low range and the full
		// range elsewhere.
		uint32_t r = rng_u32();

		keys[i] = (i % 4 == 0) ? (r % 1000u) + 1 : r;
		cpu_sum += keys[i];
	}
	sorted = keys;
	std::sort(sorted.begin(), sorted.end());
	uint64_t cpu_hash = fnv1a_u32(sorted);

	// thrust::sort
	auto t0 = std::chrono::steady_clock::now();
	thrust::device_vector<uint32_t> d(keys.begin(), keys.end());
	thrust::sort(d.begin(), d.end());
	thrust::copy(d.begin(), d.end(), got.begin());
	printf("TIME thrust::sort of %zu keys incl. copies: %.3f ms\n", n,
	       ms_since(t0));
	bool is_sorted = std::is_sorted(got.begin(), got.end());
	uint64_t gpu_hash = fnv1a_u32(got);
	printf("thrust::sort: sorted %s, hash %016llx, std::sort hash %016llx\n",
	       is_sorted ? "yes" : "no", (unsigned long long)gpu_hash,
	       (unsigned long long)cpu_hash);
	expect(is_sorted && gpu_hash == cpu_hash, "thrust::sort == std::sort");

	// thrust::sort_by_key with indices as values
	t0 = std::chrono::steady_clock::now();
	thrust::device_vector<uint32_t> dk(keys.begin(), keys.end());
	thrust::device_vector<uint32_t> dv(n);
	thrust::sequence(dv.begin(), dv.end());
	thrust::sort_by_key(dk.begin(), dk.end(), dv.begin());
	thrust::copy(dk.begin(), dk.end(), got.begin());
	thrust::copy(dv.begin(), dv.end(), vals.begin());
	printf("TIME thrust::sort_by_key incl. copies: %.3f ms\n", ms_since(t0));
	{
		size_t bad = 0;
		std::vector<unsigned char> seen(n, 0);

		for (size_t i = 0; i < n; i++) {
			if (vals[i] >= n || seen[vals[i]] ||
			    keys[vals[i]] != got[i]) {
				bad++;
				continue;
			}
			seen[vals[i]] = 1;
		}
		bool keys_ok = fnv1a_u32(got) == cpu_hash;

		printf("thrust::sort_by_key: keys %s, %zu bad values, value hash "
		       "%016llx\n", keys_ok ? "match std::sort" : "differ", bad,
		       (unsigned long long)fnv1a_u32(vals));
		expect(keys_ok && bad == 0, "thrust::sort_by_key");
	}

	// thrust::reduce into 64 bits (from the unsorted keys)
	thrust::device_vector<uint32_t> dr(keys.begin(), keys.end());
	unsigned long long gpu_sum = thrust::transform_reduce(
		dr.begin(), dr.end(), widen(), 0ull,
		thrust::plus<unsigned long long>());
	thrust::device_vector<unsigned long long> dw(n);
	thrust::transform(dr.begin(), dr.end(), dw.begin(), widen());
	unsigned long long gpu_sum2 = thrust::reduce(dw.begin(), dw.end(), 0ull);
	uint32_t gpu_max = thrust::reduce(dr.begin(), dr.end(), 0u,
					  thrust::maximum<uint32_t>());
	printf("thrust::reduce: sum %llu (transform_reduce %llu), CPU sum %llu, "
	       "max %u\n", gpu_sum2, gpu_sum, cpu_sum, gpu_max);
	expect(gpu_sum == cpu_sum && gpu_sum2 == cpu_sum, "thrust::reduce sum");
	expect(gpu_max == sorted.back(), "thrust::reduce max");

	CK(cudaDeviceSynchronize());
	return 0;
}

int main()
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	try {
		run();
	} catch (const thrust::system_error &e) {
		printf("FAIL thrust (%s): %s\n", e.what(),
		       cudaGetErrorName((cudaError_t)e.code().value()));
		return 1;
	} catch (const std::exception &e) {
		printf("FAIL exception: %s\n", e.what());
		return 1;
	}
	if (failures) {
		printf("FAIL thrust_sort (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS thrust_sort\n");
	return 0;
}
