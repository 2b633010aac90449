// SPDX-License-Identifier: MIT
/*
 * cappage: asynchronous copies between pageable host memory and the
 * device on a stream being captured (xgpulib_capcopy.c), on the fake
 * device.  The graph reads and writes the program's memory when it runs,
 * not when it was captured:
 *
 *   htod-dtoh   capture H2D from a pageable buffer, then D2H into another
 *               (cuMemcpyHtoDAsync, cuMemcpyDtoHAsync); instantiate; for
 *               several rounds change the source, launch, synchronize:
 *               the destination holds that round's bytes
 *   unified     the same through cuMemcpyAsync (unified addresses)
 *   recapture   capture, launch and destroy the graph 20 times: later
 *               captures reuse the pinned buffers of destroyed graphs (the
 *               process's pinned mappings do not grow with each capture)
 *   2d          cuMemcpy2DAsync from pageable rows (a pitch and an offset
 *               of their own) to pitched device memory and back into
 *               other pageable rows: each launch moves that round's rows,
 *               and bytes between and around the rows stay untouched
 *   3d          cuMemcpy3DAsync the same way, slices of rows with their own
 *               pitch, height and offsets on each host side
 *   pinned      a copy from pinned memory on a capturing stream is still
 *               one memcpy node (nothing added); with "net" (the network
 *               transport, where pinned memory is the process's own) it
 *               is staged as pageable memory is: two nodes
 *   graph-api   memcpy nodes added with cuGraphAddMemcpyNode (H2D from a
 *               pageable buffer, its pitch left 0, then D2H into another)
 *               and cuGraphAddNode: each launch moves that round's bytes;
 *               each node says CU_GRAPH_NODE_TYPE_MEMCPY and gives back
 *               the program's parameters; changing them is refused with
 *               CUDA_ERROR_NOT_SUPPORTED
 *   graph-rows  the same with rows of their own pitch and offset on the
 *               host side (3 rows of 1000 bytes out of 1500-byte rows)
 *   graph-h2h   a memcpy node between two pageable buffers (2 rows of
 *               1000 bytes, each side its own pitch and offset), then
 *               one from pageable to pinned memory: each launch moves
 *               that round's rows and nothing else; the nodes read as
 *               memcpy nodes with the program's parameters
 *   capture-h2h cuMemcpyAsync between two pageable buffers and a
 *               cuMemcpy3DAsync of rows between them on a capturing
 *               stream: each launch of the graph copies that round's
 *               bytes (the capture does not copy them)
 *   joined      a pageable copy on a stream joined to the capture,
 *               between two copies to the device: one memcpy node
 *               each, edges into and out of it, and it reads the first
 *               copy's bytes
 *
 * Over the network ("cappage net") the staging buffers are parts of the
 * data area kept for good, whose bytes the host nodes carry; too-big-net:
 * a captured copy larger than what the area has left is refused.
 *
 * Prints "PASS step" or "FAIL step: why" per step, then
 * "N passed, M failed"; exits 0 when all passed.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

#define N	3000	/* bytes: not a multiple of anything */

static CUstream s;
static CUdeviceptr d;
static uint8_t *src, *dst;

/* how many of graph g's nodes there are (*n) and are memcpy nodes */
static size_t memcpy_nodes(CUgraph g, size_t *n)
{
	CUgraphNode nodes[16];
	size_t nn = 16, m = 0;
	CUgraphNodeType t;

	*n = 0;
	if (!OK(cuGraphGetNodes(g, nodes, &nn)))
		return 0;
	*n = nn;
	for (size_t i = 0; i < nn && i < 16; i++)
		if (OK(cuGraphNodeGetType(nodes[i], &t)) &&
		    t == CU_GRAPH_NODE_TYPE_MEMCPY)
			m++;
	return m;
}

/*
 * End the capture on s: its graph *g, which must hold one memcpy node
 * for each of the two pageable copies captured, as natively (each
 * stands for the staging host node and copy inside it), and *x, an
 * executable graph of it; false if a call failed.
 */
static bool end_capture(CUgraph *g, CUgraphExec *x)
{
	size_t nn = 0, m;

	if (!OK(cuStreamEndCapture(s, g)))
		return false;
	m = memcpy_nodes(*g, &nn);
	if (!OK(cuGraphInstantiate(x, *g, 0)))
		return false;
	EXPECT(nn == 2 && m == 2, "%zu nodes in the graph, %zu memcpy "
	       "nodes, want 2 and 2", nn, m);
	return true;
}

/* the graph and executable graph a step made, if any */
static void drop_graph(CUgraph g, CUgraphExec x)
{
	if (x)
		cuGraphExecDestroy(x);
	if (g)
		cuGraphDestroy(g);
}

/* capture H2D src -> d and D2H d -> dst on s (unified: cuMemcpyAsync) */
static bool capture_round_trip(CUgraph *g, CUgraphExec *x, bool unified)
{
	if (!OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)))
		return false;
	if (unified) {
		OK(cuMemcpyAsync(d, (CUdeviceptr)(uintptr_t)src, N, s));
		OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, d, N, s));
	} else {
		OK(cuMemcpyHtoDAsync(d, src, N, s));
		OK(cuMemcpyDtoHAsync(dst, d, N, s));
	}
	return end_capture(g, x);
}

/* launch exec ROUNDS times, each with new source bytes */
static void rounds(CUgraphExec x, int nrounds, int salt)
{
	for (int r = 0; r < nrounds; r++) {
		for (int i = 0; i < N; i++)
			src[i] = (uint8_t)(i * 7 + r * 31 + salt);
		memset(dst, 0, N);
		if (!OK(cuGraphLaunch(x, s)) || !OK(cuStreamSynchronize(s)))
			return;
		if (memcmp(src, dst, N)) {
			failf("round %d: the destination does not hold that "
			      "round's bytes (first: %u, want %u)", r, dst[0],
			      src[0]);
			return;
		}
	}
}

static void step_copies(const char *name, bool unified)
{
	CUgraph g = NULL;
	CUgraphExec x = NULL;

	begin(name);
	if (capture_round_trip(&g, &x, unified))
		rounds(x, 5, unified ? 3 : 0);
	drop_graph(g, x);
	end();
}

/* "cappage net": the network transport (pinned memory is staged too) */
static bool net;

/* the guest library's pinned memory mappings in this process */
static int pinned_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "xgpu-hostmem") != NULL;
	fclose(f);
	return n;
}

static void step_recapture(void)
{
	int m2 = -1, m20;

	begin("recapture");
	for (int k = 0; k < 20 && !step_failed; k++) {
		if (k == 2)
			m2 = pinned_maps();
		CUgraph g = NULL;
		CUgraphExec x = NULL;

		if (capture_round_trip(&g, &x, false))
			rounds(x, 1, k);
		drop_graph(g, x);
	}
	m20 = pinned_maps();
	EXPECT(m2 >= 0 && m20 <= m2 + 2, "pinned mappings %d after 2 "
	       "captures, %d after 20: buffers are not reused", m2, m20);
	end();
}

enum { W = 100, H = 20, SP = 128, DP = 150, SX = 4, SY = 2, DX = 10,
       DY = 1 };

static void step_2d(void)
{
	static uint8_t hs[(SY + H) * SP], hd[(DY + H) * DP];
	CUdeviceptr dd = 0;
	size_t dpitch = 0;
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	CUDA_MEMCPY2D in = { 0 }, out = { 0 };

	begin("2d");
	if (!OK(cuMemAllocPitch(&dd, &dpitch, W, H, 4)))
		goto done;
	in.srcMemoryType = CU_MEMORYTYPE_HOST;
	in.srcHost = hs;
	in.srcXInBytes = SX;
	in.srcY = SY;
	in.srcPitch = SP;
	in.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	in.dstDevice = dd;
	in.dstPitch = dpitch;
	in.WidthInBytes = W;
	in.Height = H;
	out.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	out.srcDevice = dd;
	out.srcPitch = dpitch;
	out.dstMemoryType = CU_MEMORYTYPE_HOST;
	out.dstHost = hd;
	out.dstXInBytes = DX;
	out.dstY = DY;
	out.dstPitch = DP;
	out.WidthInBytes = W;
	out.Height = H;
	if (!OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)))
		goto done;
	OK(cuMemcpy2DAsync(&in, s));
	OK(cuMemcpy2DAsync(&out, s));
	if (!end_capture(&g, &x))
		goto done;
	for (int r = 0; r < 4 && !step_failed; r++) {
		for (size_t i = 0; i < sizeof(hs); i++)
			hs[i] = (uint8_t)(i * 5 + r * 17 + 1);
		memset(hd, 0xEE, sizeof(hd));
		if (!OK(cuGraphLaunch(x, s)) || !OK(cuStreamSynchronize(s)))
			break;
		for (int y = 0; y < DY + H && !step_failed; y++)
			for (int c = 0; c < DP; c++) {
				bool in_rows = y >= DY && c >= DX &&
					       c < DX + W;
				uint8_t want = in_rows ?
					hs[(SY + y - DY) * SP + SX + c - DX] :
					0xEE;

				if (hd[y * DP + c] != want) {
					failf("round %d: row %d byte %d is "
					      "%u, want %u", r, y, c,
					      hd[y * DP + c], want);
					break;
				}
			}
	}
done:
	drop_graph(g, x);
	if (dd)
		cuMemFree(dd);
	end();
}

enum { W3 = 40, H3 = 6, D3 = 3, SP3 = 64, SH3 = 8, DP3 = 50, DH3 = 7 };

static void step_3d(void)
{
	static uint8_t hs[(1 + D3) * SH3 * SP3], hd[D3 * DH3 * DP3];
	CUdeviceptr dd = 0;
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	CUDA_MEMCPY3D in = { 0 }, out = { 0 };

	begin("3d");
	if (!OK(cuMemAlloc(&dd, 48 * H3 * D3)))
		goto done;
	in.srcMemoryType = CU_MEMORYTYPE_HOST;
	in.srcHost = hs;
	in.srcXInBytes = 3;
	in.srcY = 1;
	in.srcZ = 1;
	in.srcPitch = SP3;
	in.srcHeight = SH3;
	in.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	in.dstDevice = dd;
	in.dstPitch = 48;
	in.dstHeight = H3;
	in.WidthInBytes = W3;
	in.Height = H3;
	in.Depth = D3;
	out.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	out.srcDevice = dd;
	out.srcPitch = 48;
	out.srcHeight = H3;
	out.dstMemoryType = CU_MEMORYTYPE_HOST;
	out.dstHost = hd;
	out.dstXInBytes = 5;
	out.dstPitch = DP3;
	out.dstHeight = DH3;
	out.WidthInBytes = W3;
	out.Height = H3;
	out.Depth = D3;
	if (!OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)))
		goto done;
	OK(cuMemcpy3DAsync(&in, s));
	OK(cuMemcpy3DAsync(&out, s));
	if (!end_capture(&g, &x))
		goto done;
	for (int r = 0; r < 3 && !step_failed; r++) {
		for (size_t i = 0; i < sizeof(hs); i++)
			hs[i] = (uint8_t)(i * 11 + r * 7 + 2);
		memset(hd, 0xEE, sizeof(hd));
		if (!OK(cuGraphLaunch(x, s)) || !OK(cuStreamSynchronize(s)))
			break;
		for (int z = 0; z < D3 && !step_failed; z++)
			for (int y = 0; y < DH3 && !step_failed; y++)
				for (int c = 0; c < DP3; c++) {
					bool in_box = y < H3 && c >= 5 &&
						      c < 5 + W3;
					uint8_t want = in_box ?
						hs[(1 + z) * SH3 * SP3 +
						   (1 + y) * SP3 + 3 + c - 5] :
						0xEE;
					uint8_t got = hd[(z * DH3 + y) * DP3 + c];

					if (got != want) {
						failf("round %d: slice %d row "
						      "%d byte %d is %u, want "
						      "%u", r, z, y, c, got,
						      want);
						break;
					}
				}
	}
done:
	drop_graph(g, x);
	if (dd)
		cuMemFree(dd);
	end();
}

static void step_pinned(void)
{
	CUgraph g = NULL;
	void *p = NULL;
	size_t nn = 0;

	begin("pinned");
	if (OK(cuMemHostAlloc(&p, N, 0)) &&
	    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
		OK(cuMemcpyHtoDAsync(d, p, N, s));
		/* over the network pinned memory is the process's own,
		 * staged as pageable memory is: still one memcpy node */
		if (OK(cuStreamEndCapture(s, &g))) {
			size_t m = memcpy_nodes(g, &nn);

			EXPECT(nn == 1 && m == 1, "%zu nodes, %zu memcpy "
			       "nodes, want 1 and 1", nn, m);
		}
	}
	if (g)
		cuGraphDestroy(g);
	if (p)
		cuMemFreeHost(p);
	end();
}

/* a memcpy node's parameters: w bytes x rows, host side h (pitch hp,
 * from byte hx of row 0), device side d (pitch w); to_dev: H2D */
static CUDA_MEMCPY3D node_copy(bool to_dev, uint8_t *h, size_t hx, size_t hp,
			       size_t w, size_t rows)
{
	CUDA_MEMCPY3D c;

	memset(&c, 0, sizeof(c));
	c.WidthInBytes = w;
	c.Height = rows;
	c.Depth = 1;
	if (to_dev) {
		c.srcMemoryType = CU_MEMORYTYPE_HOST;
		c.srcHost = h;
		c.srcXInBytes = hx;
		c.srcPitch = hp;
		c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		c.dstDevice = d;
		c.dstPitch = w;
	} else {
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		c.srcDevice = d;
		c.srcPitch = w;
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = h;
		c.dstXInBytes = hx;
		c.dstPitch = hp;
	}
	return c;
}

/* node n is a memcpy node whose parameters are *want, which stay */
static void check_node(CUgraphNode n, const CUDA_MEMCPY3D *want)
{
	CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
	CUDA_MEMCPY3D got;

	memset(&got, 0, sizeof(got));
	if (OK(cuGraphNodeGetType(n, &t)))
		EXPECT(t == CU_GRAPH_NODE_TYPE_MEMCPY, "node type %d, want "
		       "%d (memcpy)", (int)t, (int)CU_GRAPH_NODE_TYPE_MEMCPY);
	if (OK(cuGraphMemcpyNodeGetParams(n, &got)))
		EXPECT(!memcmp(&got, want, sizeof(got)), "the node's "
		       "parameters are not the program's");
	EXPECT(cuGraphMemcpyNodeSetParams(n, want) ==
	       CUDA_ERROR_NOT_SUPPORTED, "changing a staged node's "
	       "parameters was not refused");
}

/*
 * A graph of two memcpy nodes through d: w bytes x rows from src (pitch
 * hp, from byte hx) and back into dst the same way, the second added
 * with cuGraphAddNode; each launch must move that round's rows.
 */
static void step_graph_api(const char *name, size_t hx, size_t hp, size_t w,
			   size_t rows)
{
	CUDA_MEMCPY3D in = node_copy(true, src, hx, hp, w, rows),
		      out = node_copy(false, dst, hx, hp, w, rows);
	CUgraphNodeParams gp;
	CUgraphNode a = NULL, b = NULL;
	CUgraph g = NULL;
	CUgraphExec x = NULL;

	begin(name);
	memset(&gp, 0, sizeof(gp));
	gp.type = CU_GRAPH_NODE_TYPE_MEMCPY;
	gp.memcpy.copyParams = out;
	if (OK(cuGraphCreate(&g, 0)) &&
	    OK(cuGraphAddMemcpyNode(&a, g, NULL, 0, &in, NULL)) &&
	    OK(cuGraphAddNode(&b, g, &a, NULL, 1, &gp)) &&
	    OK(cuGraphInstantiate(&x, g, 0))) {
		check_node(a, &in);
		check_node(b, &out);
		for (int r = 0; r < 4 && !step_failed; r++) {
			for (size_t i = 0; i < N; i++)
				src[i] = (uint8_t)(i * 13 + (size_t)r * 17);
			memset(dst, 0xee, N);
			if (!OK(cuGraphLaunch(x, s)) ||
			    !OK(cuStreamSynchronize(s)))
				break;
			for (size_t i = 0; i < N; i++) {
				size_t pitch = hp ? hp : w;
				size_t row = i / pitch, col = i % pitch;
				bool in_copy = row < rows && col >= hx &&
					       col < hx + w;
				uint8_t want = in_copy ? src[i] : 0xee;

				if (dst[i] != want) {
					failf("round %d: byte %zu is %u, want "
					      "%u", r, i, dst[i], want);
					break;
				}
			}
		}
	}
	drop_graph(g, x);
	end();
}

/* the rows of a host-to-host copy: w bytes x rows from src (pitch sp,
 * byte sx) to h (pitch dp, byte dx), Depth 1 */
static CUDA_MEMCPY3D h2h_copy(uint8_t *h, size_t sx, size_t sp, size_t dx,
			      size_t dp, size_t w, size_t rows)
{
	CUDA_MEMCPY3D c;

	memset(&c, 0, sizeof(c));
	c.WidthInBytes = w;
	c.Height = rows;
	c.Depth = 1;
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = src;
	c.srcXInBytes = sx;
	c.srcPitch = sp;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = h;
	c.dstXInBytes = dx;
	c.dstPitch = dp;
	return c;
}

/* h holds c's rows of src (salted r) where the copy put them, 0xee
 * elsewhere; false (with a failure) if not */
static bool h2h_holds(const uint8_t *h, const CUDA_MEMCPY3D *c, int r)
{
	for (size_t i = 0; i < N; i++) {
		size_t row = i / c->dstPitch, col = i % c->dstPitch;
		bool in_copy = row < c->Height && col >= c->dstXInBytes &&
			       col < c->dstXInBytes + c->WidthInBytes;
		uint8_t want = in_copy ?
			src[row * c->srcPitch + c->srcXInBytes +
			    (col - c->dstXInBytes)] : 0xee;

		if (h[i] != want) {
			failf("round %d: byte %zu is %u, want %u", r, i, h[i],
			      want);
			return false;
		}
	}
	return true;
}

/* new source bytes for round r; the destinations 0xee */
static void h2h_round(int r, uint8_t *pinned)
{
	for (size_t i = 0; i < N; i++)
		src[i] = (uint8_t)(i * 11 + (size_t)r * 29);
	memset(dst, 0xee, N);
	if (pinned)
		memset(pinned, 0xee, N);
}

/*
 * Nodes between two host sides, added with the graph API: pageable to
 * pageable, then pageable to pinned, each rows of their own pitch and
 * offset; each launch must move that round's rows and nothing else.
 */
static void step_graph_h2h(void)
{
	uint8_t *pinned = NULL;
	CUDA_MEMCPY3D a_p, b_p;
	CUgraphNode a = NULL, b = NULL;
	CUgraph g = NULL;
	CUgraphExec x = NULL;

	begin("graph-h2h");
	if (!OK(cuMemAllocHost((void **)&pinned, N))) {
		end();
		return;
	}
	a_p = h2h_copy(dst, 200, 1500, 100, 1200, 1000, 2);
	b_p = h2h_copy(pinned, 10, 1400, 300, 1300, 900, 2);
	if (OK(cuGraphCreate(&g, 0)) &&
	    OK(cuGraphAddMemcpyNode(&a, g, NULL, 0, &a_p, NULL)) &&
	    OK(cuGraphAddMemcpyNode(&b, g, &a, 1, &b_p, NULL)) &&
	    OK(cuGraphInstantiate(&x, g, 0))) {
		check_node(a, &a_p);
		check_node(b, &b_p);
		for (int r = 0; r < 4 && !step_failed; r++) {
			h2h_round(r, pinned);
			if (!OK(cuGraphLaunch(x, s)) ||
			    !OK(cuStreamSynchronize(s)))
				break;
			if (h2h_holds(dst, &a_p, r))
				h2h_holds(pinned, &b_p, r);
		}
	}
	drop_graph(g, x);
	cuMemFreeHost(pinned);
	end();
}

/*
 * Host-to-host copies on a capturing stream (cuMemcpyAsync of all N
 * bytes into the pinned buffer, a cuMemcpy3DAsync of rows into dst): the
 * graph copies at each launch, the capture copies nothing.
 */
static void step_capture_h2h(void)
{
	uint8_t *pinned = NULL;
	CUDA_MEMCPY3D rows = h2h_copy(dst, 200, 1500, 100, 1200, 1000, 2);
	CUgraph g = NULL;
	CUgraphExec x = NULL;

	begin("capture-h2h");
	if (!OK(cuMemAllocHost((void **)&pinned, N))) {
		end();
		return;
	}
	h2h_round(99, pinned);
	if (OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
		OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)pinned,
				 (CUdeviceptr)(uintptr_t)src, N, s));
		OK(cuMemcpy3DAsync(&rows, s));
		if (OK(cuStreamEndCapture(s, &g)) &&
		    OK(cuGraphInstantiate(&x, g, 0))) {
			EXPECT(pinned[0] == 0xee && dst[100] == 0xee,
			       "the capture copied (it must only record)");
			for (int r = 0; r < 4 && !step_failed; r++) {
				h2h_round(r, pinned);
				if (!OK(cuGraphLaunch(x, s)) ||
				    !OK(cuStreamSynchronize(s)))
					break;
				EXPECT(!memcmp(pinned, src, N), "round %d: "
				       "the 1D copy does not hold that "
				       "round's bytes", r);
				h2h_holds(dst, &rows, r);
			}
		}
	}
	drop_graph(g, x);
	cuMemFreeHost(pinned);
	end();
}

/*
 * Over the network a graph's staging buffer is a part of the data area
 * kept for good, and the copy engine keeps 8 MiB at least: a captured
 * copy of more than the area has left is refused with
 * CUDA_ERROR_NOT_SUPPORTED, the capture goes on, and a small one after it
 * still works.
 */
static void step_too_big(void)
{
	const size_t big = 64u << 20;	/* more than the area has */
	CUgraph g = NULL;
	CUdeviceptr db = 0;
	uint8_t *hb = malloc(big);
	CUresult rc;

	begin("too-big-net");
	if (hb && OK(cuMemAlloc(&db, big)) &&
	    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
		rc = cuMemcpyHtoDAsync(db, hb, big, s);
		EXPECT(rc == CUDA_ERROR_NOT_SUPPORTED, "a %zu MiB capture: "
		       "%d, want CUDA_ERROR_NOT_SUPPORTED", big >> 20,
		       (int)rc);
		if (OK(cuStreamEndCapture(s, &g)))
			cuGraphDestroy(g);
	}
	if (db)
		OK(cuMemFree(db));
	free(hb);
	end();
}

/* whether graph g has an edge into node n (in) or out of it */
static bool has_edge(CUgraph g, CUgraphNode n, bool in)
{
	CUgraphNode from[16], to[16];
	size_t ne = 16;

	if (!OK(cuGraphGetEdges(g, from, to, NULL, &ne)))
		return false;
	for (size_t i = 0; i < ne && i < 16; i++)
		if ((in ? to[i] : from[i]) == n)
			return true;
	return false;
}

/* the node of graph g that copies into host memory h, or NULL */
static CUgraphNode copy_to(CUgraph g, const void *h)
{
	CUgraphNode nodes[16];
	size_t nn = 16;
	CUDA_MEMCPY3D p;

	if (!OK(cuGraphGetNodes(g, nodes, &nn)))
		return NULL;
	for (size_t i = 0; i < nn && i < 16; i++)
		if (cuGraphMemcpyNodeGetParams(nodes[i], &p) == CUDA_SUCCESS &&
		    p.dstMemoryType == CU_MEMORYTYPE_HOST && p.dstHost == h)
			return nodes[i];
	return NULL;
}

/*
 * A staged copy on a stream that joined the capture (an event of the
 * capturing stream waited for), between two copies of pinned memory to
 * the device on the capturing stream: three memcpy nodes, the staged one
 * after the first copy and before the second (the capture's current
 * nodes asked for and moved on: edges into it and out of it; three
 * edges in all, the first copy also before the second as the driver
 * records it), and it reads the first copy's bytes, not the second's.
 */
static void step_joined(void)
{
	CUstream b = NULL;
	CUevent e1 = NULL, e2 = NULL;
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	uint8_t *p1 = NULL, *p2 = NULL;
	size_t nn = 0, m;

	begin("joined");
	if (OK(cuMemAllocHost((void **)&p1, N)) &&
	    OK(cuMemAllocHost((void **)&p2, N)) &&
	    OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING)) &&
	    OK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING)) &&
	    OK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING)) &&
	    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
		OK(cuMemcpyHtoDAsync(d, p1, N, s));
		OK(cuEventRecord(e1, s));
		OK(cuStreamWaitEvent(b, e1, 0));
		OK(cuMemcpyDtoHAsync(dst, d, N, b));
		OK(cuEventRecord(e2, b));
		OK(cuStreamWaitEvent(s, e2, 0));
		OK(cuMemcpyHtoDAsync(d, p2, N, s));
		if (OK(cuStreamEndCapture(s, &g))) {
			/* over the network the pinned copies are staged too */
			CUgraphNode mid = copy_to(g, dst);
			size_t ne = 0;

			m = memcpy_nodes(g, &nn);
			EXPECT(nn == 3 && m == 3, "%zu nodes, %zu memcpy nodes, "
			       "want 3 and 3", nn, m);
			EXPECT(mid != NULL, "no node copies to the destination");
			EXPECT(!mid || has_edge(g, mid, true),
			       "the staged copy follows nothing");
			EXPECT(!mid || has_edge(g, mid, false),
			       "nothing follows the staged copy");
			if (OK(cuGraphGetEdges(g, NULL, NULL, NULL, &ne)))
				EXPECT(ne == 3, "%zu edges, want 3", ne);
		}
	}
	if (g && !step_failed && OK(cuGraphInstantiate(&x, g, 0))) {
		memset(p1, 0x5a, N);
		memset(p2, 0x11, N);
		memset(dst, 0, N);
		if (OK(cuGraphLaunch(x, s)) && OK(cuStreamSynchronize(s)))
			EXPECT(dst[0] == 0x5a && dst[N - 1] == 0x5a,
			       "the copy read %#x, want the first copy's "
			       "0x5a", dst[0]);
	}
	drop_graph(g, x);
	if (e1)
		cuEventDestroy(e1);
	if (e2)
		cuEventDestroy(e2);
	if (b)
		cuStreamDestroy(b);
	if (p1)
		cuMemFreeHost(p1);
	if (p2)
		cuMemFreeHost(p2);
	end();
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	net = argc > 1 && !strcmp(argv[1], "net");
	src = malloc(N);
	dst = malloc(N);
	if (!src || !dst || cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAlloc(&d, N)) {
		printf("FAIL setup\n");
		return 1;
	}
	step_copies("htod-dtoh", false);
	step_copies("unified", true);
	step_recapture();
	step_2d();
	step_3d();
	step_pinned();
	/* one row, its pitch left 0 */
	step_graph_api("graph-api", 0, 0, N, 1);
	step_graph_api("graph-rows", 200, 1500, 1000, 2);
	step_graph_h2h();
	step_capture_h2h();
	step_joined();
	if (net)
		step_too_big();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
