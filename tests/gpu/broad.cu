// SPDX-License-Identifier: MIT
// broad: runtime features a CUDA program may use that the other tests do
// not, each a step that prints what it computed (the same lines natively
// and through xgpu), then PASS or FAIL:
//   coop      cooperative launch with a grid-wide sync (cooperative_groups)
//   cluster   a thread-block cluster (Hopper) reading a peer block's shared
//             memory (distributed shared memory), launched with
//             cudaLaunchKernelEx and a cluster-dimension attribute
//   bigsmem   a kernel with more than 48 KiB of dynamic shared memory
//             (cudaFuncSetAttribute MaxDynamicSharedMemorySize)
//   prio      streams of the greatest and least priority; a kernel on each
//   timing    cudaEventElapsedTime between two events around a kernel (a
//             sane positive number; not printed: it differs run to run)
//   mapped    zero-copy: a kernel and the host hand a counter back and
//             forth through mapped pinned memory (cudaHostAlloc Mapped),
//             the kernel spinning on the host's writes while it runs
//   pitched   cudaMallocPitch, cudaMemcpy2D in and out, cudaMemset2D
//   copy3d    cudaMalloc3D, cudaMemcpy3D to and from a host buffer
//   peer      cudaMemcpyPeer on the one device, cudaDeviceCanAccessPeer
//   occ       cudaOccupancyMaxActiveBlocksPerMultiprocessor,
//             cudaOccupancyMaxPotentialBlockSize
//   attrs     cudaFuncGetAttributes (registers vary by compiler: only
//             sanity), cudaDeviceGetAttribute of a few fixed properties
// Last line "PASS broad" or "FAIL broad"; exit status 0 when every step
// passed.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <time.h>

#include "steps.h"

namespace cg = cooperative_groups;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

// ---- coop ------------------------------------------------------------------
__global__ void coop_sum(const int *in, int *partial, int *out, int n)
{
	cg::grid_group grid = cg::this_grid();
	int s = 0;

	for (int i = grid.thread_rank(); i < n; i += grid.size())
		s += in[i];
	atomicAdd(&partial[blockIdx.x], s);
	grid.sync();
	if (grid.thread_rank() == 0) {
		int t = 0;
		for (unsigned int b = 0; b < gridDim.x; b++)
			t += partial[b];
		*out = t;
	}
}

static void step_coop(void)
{
	const int n = 1 << 20;
	int *in, *partial, *out, host = 0, blocks = 0, sms = 0, dev = 0;
	int *h = (int *)malloc(n * sizeof(int));
	long long want = 0;

	for (int i = 0; i < n; i++) {
		h[i] = (i * 7) % 13;
		want += h[i];
	}
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, coop_sum,
							  256, 0));
	blocks = blocks * sms < 64 ? blocks * sms : 64;
	CK(cudaMalloc(&in, n * sizeof(int)));
	CK(cudaMalloc(&partial, blocks * sizeof(int)));
	CK(cudaMalloc(&out, sizeof(int)));
	CK(cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemset(partial, 0, blocks * sizeof(int)));
	int nn = n;
	void *args[] = { &in, &partial, &out, &nn };
	CK(cudaLaunchCooperativeKernel((void *)coop_sum, blocks, 256, args, 0,
				       0));
	CK(cudaMemcpy(&host, out, sizeof(int), cudaMemcpyDeviceToHost));
	printf("coop: sum %d (blocks %d)\n", host, blocks);
	verdict("coop", host == want);
	cudaFree(in);
	cudaFree(partial);
	cudaFree(out);
	free(h);
}

// ---- cluster ---------------------------------------------------------------
/* each block reads the value its cluster peer put in its shared memory */
__device__ void swap_body(int *out)
{
	__shared__ int mine;
	cg::cluster_group cl = cg::this_cluster();
	unsigned int rank = cl.block_rank();

	if (threadIdx.x == 0)
		mine = 100 + (int)blockIdx.x;
	cl.sync();
	if (threadIdx.x == 0) {
		int *peer = cl.map_shared_rank(&mine, rank ^ 1);
		out[blockIdx.x] = *peer;
	}
	cl.sync();
}

/* clusters of two by the kernel's own declaration */
__global__ void __cluster_dims__(2, 1, 1) cluster_swap(int *out)
{
	swap_body(out);
}

/* clusters of the size the launch asks for */
__global__ void cluster_swap_any(int *out)
{
	swap_body(out);
}

static void step_cluster(void)
{
	int *out, h[8];
	bool ok = true;

	CK(cudaMalloc(&out, sizeof(h)));
	cluster_swap<<<8, 32>>>(out);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
	printf("cluster:");
	for (int i = 0; i < 8; i++) {
		printf(" %d", h[i]);
		ok &= h[i] == 100 + (i ^ 1);
	}
	printf("\n");
	/* the same through cudaLaunchKernelEx and an attribute */
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute at[1];
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = 2;
	at[0].val.clusterDim.y = 1;
	at[0].val.clusterDim.z = 1;
	cfg.gridDim = dim3(4);
	cfg.blockDim = dim3(32);
	cfg.attrs = at;
	cfg.numAttrs = 1;
	CK(cudaMemset(out, 0, sizeof(h)));
	CK(cudaLaunchKernelEx(&cfg, cluster_swap_any, out));
	CK(cudaMemcpy(h, out, 4 * sizeof(int), cudaMemcpyDeviceToHost));
	printf("cluster ex:");
	for (int i = 0; i < 4; i++) {
		printf(" %d", h[i]);
		ok &= h[i] == 100 + (i ^ 1);
	}
	printf("\n");
	verdict("cluster", ok);
	cudaFree(out);
}

// ---- bigsmem ---------------------------------------------------------------
__global__ void big_smem(int *out, int n)
{
	extern __shared__ int buf[];

	for (int i = threadIdx.x; i < n; i += blockDim.x)
		buf[i] = i * 3;
	__syncthreads();
	if (threadIdx.x == 0) {
		long long s = 0;
		for (int i = 0; i < n; i++)
			s += buf[i];
		*out = (int)(s % 1000003);
	}
}

static void step_bigsmem(void)
{
	const int bytes = 100 * 1024, n = bytes / 4;
	int *out, h = 0;
	long long want = 0;

	for (int i = 0; i < n; i++)
		want += i * 3;
	CK(cudaFuncSetAttribute(big_smem,
				cudaFuncAttributeMaxDynamicSharedMemorySize,
				bytes));
	CK(cudaMalloc(&out, sizeof(int)));
	big_smem<<<1, 256, bytes>>>(out, n);
	CK(cudaGetLastError());
	CK(cudaMemcpy(&h, out, sizeof(int), cudaMemcpyDeviceToHost));
	printf("bigsmem: %d\n", h);
	verdict("bigsmem", h == (int)(want % 1000003));
	cudaFree(out);
}

// ---- prio and timing -------------------------------------------------------
__global__ void fill(int *p, int v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v + i;
}

static void step_prio(void)
{
	int lo = 0, hi = 0, *a, *b, ha = 0, hb = 0, pa = 0, pb = 0;
	cudaStream_t sa, sb;

	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CK(cudaStreamCreateWithPriority(&sa, cudaStreamNonBlocking, hi));
	CK(cudaStreamCreateWithPriority(&sb, cudaStreamNonBlocking, lo));
	CK(cudaStreamGetPriority(sa, &pa));
	CK(cudaStreamGetPriority(sb, &pb));
	CK(cudaMalloc(&a, 1024 * sizeof(int)));
	CK(cudaMalloc(&b, 1024 * sizeof(int)));
	fill<<<4, 256, 0, sa>>>(a, 7, 1024);
	fill<<<4, 256, 0, sb>>>(b, 9, 1024);
	CK(cudaStreamSynchronize(sa));
	CK(cudaStreamSynchronize(sb));
	CK(cudaMemcpy(&ha, a + 1000, sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&hb, b + 1000, sizeof(int), cudaMemcpyDeviceToHost));
	printf("prio: range %d..%d, streams %d %d, values %d %d\n", lo, hi, pa,
	       pb, ha, hb);
	verdict("prio", pa == hi && pb == lo && ha == 1007 && hb == 1009);
	cudaStreamDestroy(sa);
	cudaStreamDestroy(sb);
	cudaFree(a);
	cudaFree(b);
}

__global__ void busy(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}

static void step_timing(void)
{
	cudaEvent_t e0, e1;
	float ms = 0;

	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventRecord(e0));
	busy<<<1, 1>>>(2000000ull);	/* 2 ms */
	CK(cudaEventRecord(e1));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	printf("timing: a 2 ms kernel measured %s\n",
	       ms >= 1.9f && ms < 50.0f ? "between 1.9 and 50 ms" : "wrong");
	verdict("timing", ms >= 1.9f && ms < 50.0f);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
}

// ---- mapped ----------------------------------------------------------------
/* the kernel writes odd values, the host answers with the next even one */
__global__ void pingpong(volatile int *flag, int rounds, int *done)
{
	for (int r = 0; r < rounds; r++) {
		int want = 2 * r;
		unsigned long long t0, t;

		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
		while (*flag != want) {
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
			if (t - t0 > 5000000000ull) {	/* 5 s: give up */
				*done = -r - 1;
				return;
			}
		}
		__threadfence_system();
		*flag = want + 1;
		__threadfence_system();
	}
	*done = rounds;
}

static void step_mapped(void)
{
	volatile int *flag;
	int *dflag, *done, hdone = 0, rounds = 50, r;
	cudaStream_t s;

	CK(cudaHostAlloc((void **)&flag, sizeof(int), cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&dflag, (void *)flag, 0));
	CK(cudaMalloc(&done, sizeof(int)));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	*flag = 0;
	pingpong<<<1, 1, 0, s>>>(dflag, rounds, done);
	CK(cudaGetLastError());
	for (r = 0; r < rounds; r++) {
		double t0 = now_s();

		/* wait for the kernel's odd answer (5 s at most: the first
		 * launch loads the module), then give the next even one */
		while (*flag != 2 * r + 1 && now_s() - t0 < 5.0)
			;
		if (*flag != 2 * r + 1)
			break;
		*flag = 2 * r + 2;
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(&hdone, done, sizeof(int), cudaMemcpyDeviceToHost));
	printf("mapped: %d rounds by the host, kernel says %d\n", r, hdone);
	verdict("mapped", r == rounds && hdone == rounds);
	cudaStreamDestroy(s);
	cudaFree(done);
	cudaFreeHost((void *)flag);
}

// ---- pitched, copy3d, peer -------------------------------------------------
static void step_pitched(void)
{
	const int w = 100, hgt = 37;
	size_t pitch = 0;
	unsigned char *d, *in = (unsigned char *)malloc(w * hgt),
			  *out = (unsigned char *)malloc(w * hgt);
	bool ok = true;
	unsigned sum = 0;

	for (int i = 0; i < w * hgt; i++)
		in[i] = (unsigned char)(i * 31 + 5);
	CK(cudaMallocPitch((void **)&d, &pitch, w, hgt));
	CK(cudaMemset2D(d, pitch, 0xEE, pitch, hgt));
	CK(cudaMemcpy2D(d, pitch, in, w, w - 10, hgt, cudaMemcpyHostToDevice));
	CK(cudaMemset2D(d + 20, pitch, 0x11, 5, hgt - 3));
	CK(cudaMemcpy2D(out, w, d, pitch, w, hgt, cudaMemcpyDeviceToHost));
	for (int y = 0; y < hgt; y++)
		for (int x = 0; x < w; x++) {
			unsigned char want = x >= 20 && x < 25 && y < hgt - 3 ?
						     0x11 :
					     x < w - 10 ? in[y * w + x] : 0xEE;
			ok &= out[y * w + x] == want;
			sum = sum * 31 + out[y * w + x];
		}
	printf("pitched: checksum %08x, pitch %s\n", sum,
	       pitch >= (size_t)w ? "at least the width" : "too small");
	verdict("pitched", ok && pitch >= (size_t)w);
	cudaFree(d);
	free(in);
	free(out);
}

static void step_copy3d(void)
{
	const size_t w = 24, h = 9, dep = 5;	/* bytes, rows, slices */
	cudaExtent ext = make_cudaExtent(w, h, dep);
	cudaPitchedPtr dp;
	unsigned char in[24 * 9 * 5], out[24 * 9 * 5];
	cudaMemcpy3DParms p = {};
	bool ok = true;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 13 + 1);
	memset(out, 0, sizeof(out));
	CK(cudaMalloc3D(&dp, ext));
	p.srcPtr = make_cudaPitchedPtr(in, w, w, h);
	p.dstPtr = dp;
	p.extent = ext;
	p.kind = cudaMemcpyHostToDevice;
	CK(cudaMemcpy3D(&p));
	memset(&p, 0, sizeof(p));
	p.srcPtr = dp;
	p.dstPtr = make_cudaPitchedPtr(out, w, w, h);
	p.extent = make_cudaExtent(w, h, dep - 1);
	p.kind = cudaMemcpyDeviceToHost;
	CK(cudaMemcpy3D(&p));
	for (size_t i = 0; i < sizeof(in); i++)
		ok &= out[i] == (i < w * h * (dep - 1) ? in[i] : 0);
	printf("copy3d: %s\n", ok ? "4 of 5 slices back, the last untouched" :
				    "mismatch");
	verdict("copy3d", ok);
	cudaFree(dp.ptr);
}

static void step_peer(void)
{
	int can = -1, *a, *b, h[256];
	bool ok = true;

	CK(cudaDeviceCanAccessPeer(&can, 0, 0));
	CK(cudaMalloc(&a, sizeof(h)));
	CK(cudaMalloc(&b, sizeof(h)));
	fill<<<1, 256>>>(a, 40, 256);
	CK(cudaMemcpyPeer(b, 0, a, 0, sizeof(h)));
	CK(cudaMemcpy(h, b, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 256; i++)
		ok &= h[i] == 40 + i;
	printf("peer: can access itself %d, copy %s\n", can,
	       ok ? "equal" : "differs");
	verdict("peer", ok);
	cudaFree(a);
	cudaFree(b);
}

// ---- occ, attrs ------------------------------------------------------------
static void step_occ(void)
{
	int blocks = 0, grid = 0, block = 0;

	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fill, 256,
							  0));
	CK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, fill, 0, 0));
	printf("occ: %d blocks of 256 per SM; potential block %d, grid %d\n",
	       blocks, block, grid);
	verdict("occ", blocks > 0 && block > 0 && grid > 0);
}

static void step_attrs(void)
{
	cudaFuncAttributes fa;
	int cc = 0, warp = 0, smem = 0;

	CK(cudaFuncGetAttributes(&fa, big_smem));
	CK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0));
	CK(cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0));
	CK(cudaDeviceGetAttribute(&smem,
				  cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
	printf("attrs: cc %d, warp %d, opt-in shared %d, max threads %d, "
	       "dynamic shared set %d\n",
	       cc, warp, smem, fa.maxThreadsPerBlock,
	       fa.maxDynamicSharedSizeBytes);
	verdict("attrs", cc >= 9 && warp == 32 && fa.numRegs > 0 &&
				 fa.maxDynamicSharedSizeBytes == 100 * 1024);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	step_coop();
	step_cluster();
	step_bigsmem();
	step_prio();
	step_timing();
	step_mapped();
	step_pitched();
	step_copy3d();
	step_peer();
	step_occ();
	step_attrs();
	printf("%s broad\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
