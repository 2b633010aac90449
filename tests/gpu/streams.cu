// streams: four streams of H2D copy -> kernel -> D2H copy on pinned buffers
// (cudaMallocHost and cudaHostAlloc with several flags), ordered across
// streams with events (cudaStreamWaitEvent), timed with cudaEventElapsedTime,
// polled with cudaStreamQuery / cudaEventQuery; plus one round of
// cudaMemcpyAsync from and to pageable (malloc) memory. Every result is
// checked bit for bit against a CPU reference.
//
// Stream 0 starts with a kernel that spins for 20 ms, so the cross-stream
// kernels (which read stream 0's output after waiting on its event) would
// read stale data if the wait were not honoured.
//
// Output: deterministic result lines, TIME lines (timing), then
// "PASS streams" (exit 0) or "FAIL ..." (exit 1).
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

enum { NS = 4, CH = 1 << 20, ITERS = 16 };

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAIL check: %s\n", what);
		failures++;
	}
}

static uint32_t rng_state = 0xC0FFEE11u;

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

__device__ __forceinline__ unsigned long long globaltimer_ns()
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void spin(unsigned long long ns)
{
	unsigned long long t0 = globaltimer_ns();

	while (globaltimer_ns() - t0 < ns)
		;
}

// Explicit round-to-nearest ops: no FMA contraction, so the CPU matches.
__global__ void work(const float *in, float *out, int n, float k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		float x = in[i];

		for (int j = 0; j < ITERS; j++)
			x = __fadd_rn(__fmul_rn(x, k), 0.125f);
		out[i] = x;
	}
}

__global__ void mix(const float *x, const float *y, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = __fsub_rn(x[i], __fmul_rn(y[i], 0.5f));
}

static float work_ref(float x, float k)
{
	for (int j = 0; j < ITERS; j++) {
		volatile float p = x * k;

		x = p + 0.125f;
	}
	return x;
}

static int count_bad(const float *got, const float *want, int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++)
		bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
	return bad;
}

static double checksum(const float *v, int n)
{
	double s = 0.0;

	for (int i = 0; i < n; i++)
		s += (double)v[i] * (double)((i % 7) + 1);
	return s;
}

int main()
{
	const size_t bytes = (size_t)CH * sizeof(float);
	const float kf[NS] = { 0.75f, -0.5f, 1.125f, 0.875f };
	const int grid = (CH + 255) / 256;
	cudaStream_t s[NS];
	cudaEvent_t start, stop, ework[NS], ejoin[NS];
	float *hin[NS], *hout[NS], *din[NS], *dout[NS];
	float *hmix01, *hmix23, *dmix01, *dmix23;
	int least, greatest;
	char what[128];
	float ms;

	setvbuf(stdout, NULL, _IOLBF, 0);

	// Pinned host buffers, allocated four different ways.
	CK(cudaMallocHost(&hin[0], bytes));
	CK(cudaMallocHost(&hout[0], bytes));
	CK(cudaMallocHost(&hin[1], bytes));
	CK(cudaMallocHost(&hout[1], bytes));
	CK(cudaHostAlloc(&hin[2], bytes, cudaHostAllocDefault));
	CK(cudaHostAlloc(&hout[2], bytes, cudaHostAllocDefault));
	CK(cudaHostAlloc(&hin[3], bytes,
			 cudaHostAllocWriteCombined | cudaHostAllocPortable));
	CK(cudaHostAlloc(&hout[3], bytes, cudaHostAllocPortable));
	CK(cudaMallocHost(&hmix01, bytes));
	CK(cudaHostAlloc(&hmix23, bytes, cudaHostAllocDefault));

	// Host inputs; outputs poisoned so that a copy that never happened
	// shows.
	std::vector<float> ref[NS];
	for (int i = 0; i < NS; i++) {
		ref[i].resize(CH);
		for (int j = 0; j < CH; j++) {
			float v = rng_float();

			// hin[3] is write-combined: written, never read back.
			hin[i][j] = v;
			ref[i][j] = work_ref(v, kf[i]);
		}
		memset(hout[i], 0xFF, bytes);
	}
	memset(hmix01, 0xFF, bytes);
	memset(hmix23, 0xFF, bytes);
	std::vector<float> refmix01(CH), refmix23(CH);
	for (int j = 0; j < CH; j++) {
		refmix01[j] = ref[0][j] - ref[1][j] * 0.5f;
		refmix23[j] = ref[2][j] - ref[3][j] * 0.5f;
	}

	for (int i = 0; i < NS; i++) {
		CK(cudaMalloc(&din[i], bytes));
		CK(cudaMalloc(&dout[i], bytes));
		CK(cudaMemset(dout[i], 0, bytes));
	}
	CK(cudaMalloc(&dmix01, bytes));
	CK(cudaMalloc(&dmix23, bytes));

	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CK(cudaStreamCreate(&s[0]));
	CK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
	CK(cudaStreamCreateWithPriority(&s[2], cudaStreamNonBlocking, greatest));
	CK(cudaStreamCreate(&s[3]));
	CK(cudaEventCreate(&start));
	CK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
	for (int i = 0; i < NS; i++) {
		CK(cudaEventCreateWithFlags(&ework[i], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&ejoin[i], cudaEventDisableTiming));
	}
	CK(cudaDeviceSynchronize());

	CK(cudaEventRecord(start, s[0]));
	for (int i = 0; i < NS; i++) {
		CK(cudaMemcpyAsync(din[i], hin[i], bytes, cudaMemcpyHostToDevice,
				   s[i]));
		if (i == 0) {
			spin<<<1, 1, 0, s[0]>>>(20ull * 1000 * 1000);
			CK_LAUNCH("spin");
		}
		work<<<grid, 256, 0, s[i]>>>(din[i], dout[i], CH, kf[i]);
		CK_LAUNCH("work");
		CK(cudaEventRecord(ework[i], s[i]));
		CK(cudaMemcpyAsync(hout[i], dout[i], bytes,
				   cudaMemcpyDeviceToHost, s[i]));
	}
	// Cross-stream: stream 1 needs stream 0's result, stream 3 stream 2's.
	CK(cudaStreamWaitEvent(s[1], ework[0], 0));
	mix<<<grid, 256, 0, s[1]>>>(dout[0], dout[1], dmix01, CH);
	CK_LAUNCH("mix01");
	CK(cudaMemcpyAsync(hmix01, dmix01, bytes, cudaMemcpyDeviceToHost, s[1]));
	CK(cudaStreamWaitEvent(s[3], ework[2], 0));
	mix<<<grid, 256, 0, s[3]>>>(dout[2], dout[3], dmix23, CH);
	CK_LAUNCH("mix23");
	CK(cudaMemcpyAsync(hmix23, dmix23, bytes, cudaMemcpyDeviceToHost, s[3]));
	// Join everything into stream 0, then time the whole graph.
	for (int i = 1; i < NS; i++) {
		CK(cudaEventRecord(ejoin[i], s[i]));
		CK(cudaStreamWaitEvent(s[0], ejoin[i], 0));
	}
	CK(cudaEventRecord(stop, s[0]));
	CK(cudaEventSynchronize(stop));
	CK(cudaEventElapsedTime(&ms, start, stop));
	printf("TIME 4 streams, spin 20 ms + copies + kernels: %.3f ms\n", ms);
	expect(ms >= 19.0f, "elapsed time covers the 20 ms spin");
	CK(cudaEventQuery(stop));
	for (int i = 0; i < NS; i++) {
		CK(cudaStreamQuery(s[i]));
		CK(cudaEventQuery(ework[i]));
	}
	for (int i = 1; i < NS; i++)
		CK(cudaEventQuery(ejoin[i]));

	for (int i = 0; i < NS; i++) {
		int bad = count_bad(hout[i], ref[i].data(), CH);

		printf("stream %d: %d mismatches, checksum %.6e\n", i, bad,
		       checksum(hout[i], CH));
		snprintf(what, sizeof what, "stream %d result", i);
		expect(bad == 0, what);
	}
	{
		int bad01 = count_bad(hmix01, refmix01.data(), CH);
		int bad23 = count_bad(hmix23, refmix23.data(), CH);

		printf("cross-stream 0->1: %d mismatches, checksum %.6e\n", bad01,
		       checksum(hmix01, CH));
		printf("cross-stream 2->3: %d mismatches, checksum %.6e\n", bad23,
		       checksum(hmix23, CH));
		expect(bad01 == 0, "cudaStreamWaitEvent 0 -> 1");
		expect(bad23 == 0, "cudaStreamWaitEvent 2 -> 3");
	}

	// cudaStreamQuery / cudaEventQuery on work that is still running.
	{
		cudaEvent_t ebusy;
		cudaError_t q, qe;

		CK(cudaEventCreateWithFlags(&ebusy, cudaEventDisableTiming));
		spin<<<1, 1, 0, s[2]>>>(50ull * 1000 * 1000);
		CK_LAUNCH("spin");
		CK(cudaEventRecord(ebusy, s[2]));
		q = cudaStreamQuery(s[2]);
		qe = cudaEventQuery(ebusy);
		printf("TIME query of a busy stream: %s, of its event: %s\n",
		       cudaGetErrorName(q), cudaGetErrorName(qe));
		expect(q == cudaErrorNotReady || q == cudaSuccess,
		       "cudaStreamQuery on a busy stream");
		expect(qe == cudaErrorNotReady || qe == cudaSuccess,
		       "cudaEventQuery on a pending event");
		// cudaErrorNotReady is not an error of the context.
		q = cudaGetLastError();
		expect(q == cudaSuccess || q == cudaErrorNotReady,
		       "no error left behind by the queries");
		CK(cudaStreamSynchronize(s[2]));
		CK(cudaStreamQuery(s[2]));
		CK(cudaEventQuery(ebusy));
		CK(cudaEventDestroy(ebusy));
		printf("queries of busy and idle streams: ok\n");
	}

	// cudaMemcpyAsync from and to pageable memory.
	{
		std::vector<float> pin(CH), pout(CH, -1.0f), pref(CH);

		for (int j = 0; j < CH; j++) {
			pin[j] = rng_float();
			pref[j] = work_ref(pin[j], 0.625f);
		}
		CK(cudaMemcpyAsync(din[3], pin.data(), bytes,
				   cudaMemcpyHostToDevice, s[3]));
		work<<<grid, 256, 0, s[3]>>>(din[3], dout[3], CH, 0.625f);
		CK_LAUNCH("work pageable");
		CK(cudaMemcpyAsync(pout.data(), dout[3], bytes,
				   cudaMemcpyDeviceToHost, s[3]));
		CK(cudaStreamSynchronize(s[3]));
		int bad = count_bad(pout.data(), pref.data(), CH);

		printf("pageable async round: %d mismatches, checksum %.6e\n", bad,
		       checksum(pout.data(), CH));
		expect(bad == 0, "cudaMemcpyAsync with pageable memory");
	}

	CK(cudaDeviceSynchronize());
	for (int i = 0; i < NS; i++) {
		CK(cudaStreamDestroy(s[i]));
		CK(cudaEventDestroy(ework[i]));
		CK(cudaEventDestroy(ejoin[i]));
		CK(cudaFree(din[i]));
		CK(cudaFree(dout[i]));
		CK(cudaFreeHost(hin[i]));
		CK(cudaFreeHost(hout[i]));
	}
	CK(cudaEventDestroy(start));
	CK(cudaEventDestroy(stop));
	CK(cudaFree(dmix01));
	CK(cudaFree(dmix23));
	CK(cudaFreeHost(hmix01));
	CK(cudaFreeHost(hmix23));

	if (failures) {
		printf("FAIL streams (%d checks failed)\n", failures);
		return 1;
	}
	printf("PASS streams\n");
	return 0;
}
