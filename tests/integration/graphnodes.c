// SPDX-License-Identifier: MIT
/*
 * graphnodes: graphs built node by node against the fake driver, which
 * keeps them and runs their host, memset, memcpy and event nodes at each
 * launch: host nodes call back into this process in order, memcpy nodes
 * copy into pinned memory, parameters are read back and changed (in the
 * graph and in the executable graph), nodes are disabled, found in clones,
 * removed; memory nodes, the dot file, graph memory attributes; and
 * objects that are not (or no longer) of this process are refused.
 * Prints "PASS step" or "FAIL step: why" per step and exits 0 or 1.
 */
#include <cuda.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failed, step_bad;
static const char *step;

#define EXPECT(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s: ", step);			\
			printf(__VA_ARGS__);				\
			printf(" (line %d)\n", __LINE__);		\
			step_bad = 1;					\
		}							\
	} while (0)

#define OK(call) ok_((call), #call, __LINE__)

static int ok_(CUresult rc, const char *what, int line)
{
	if (rc != CUDA_SUCCESS) {
		printf("FAIL %s: %s = %d (line %d)\n", step, what, (int)rc,
		       line);
		step_bad = 1;
	}
	return rc == CUDA_SUCCESS;
}

static void begin(const char *name)
{
	step = name;
	step_bad = 0;
}

static void end(void)
{
	if (!step_bad)
		printf("PASS %s\n", step);
	failed |= step_bad;
}

/* what host nodes did, in order */
static int order[16], norder;
static uint32_t *pinned;
static uint32_t seen;

static void CUDA_CB note(void *user)
{
	if (norder < 16)
		order[norder++] = (int)(intptr_t)user;
}

/* runs after the copy: what the copy brought */
static void CUDA_CB look(void *user)
{
	seen = pinned[0];
	note(user);
}

struct tl_arg {
	CUcontext ctx;
	CUevent e;
	CUresult rc;
};

static void *tl_query(void *p)
{
	struct tl_arg *a = p;

	if (cuCtxSetCurrent(a->ctx) == CUDA_SUCCESS)
		a->rc = cuEventQuery(a->e);
	return NULL;
}

int main(void)
{
	CUgraphNode a, ms, cp, b, n2, nodes[8], deps[4], from[8], to[8];
	CUDA_MEMSET_NODE_PARAMS mp;
	CUDA_HOST_NODE_PARAMS hp;
	CUDA_MEMCPY3D c;
	CUgraph g = NULL, clone = NULL, g2 = NULL;
	CUgraphExec x = NULL;
	CUgraphNodeType t;
	CUdeviceptr d = 0;
	CUcontext ctx;
	CUstream s = NULL;
	CUdevice dev;
	uint64_t junk[8] = { 0 };
	size_t n;

	begin("graphnodes-setup");
	if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) ||
	    !OK(cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    !OK(cuCtxSetCurrent(ctx)) ||
	    !OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !OK(cuMemAlloc(&d, 4096)) ||
	    !OK(cuMemHostAlloc((void **)&pinned, 4096, 0)) ||
	    !OK(cuGraphCreate(&g, 0))) {
		end();
		return 1;
	}
	end();

	/* host A -> memset -> copy to pinned -> host B */
	begin("graphnodes-build");
	hp = (CUDA_HOST_NODE_PARAMS){ note, (void *)(intptr_t)1 };
	OK(cuGraphAddHostNode(&a, g, NULL, 0, &hp));
	mp = (CUDA_MEMSET_NODE_PARAMS){ .dst = d, .value = 0x11,
					.elementSize = 4, .width = 1024,
					.height = 1 };
	OK(cuGraphAddMemsetNode(&ms, g, &a, 1, &mp, ctx));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = pinned;
	c.WidthInBytes = 4096;
	c.Height = 1;
	c.Depth = 1;
	OK(cuGraphAddMemcpyNode(&cp, g, &ms, 1, &c, ctx));
	hp = (CUDA_HOST_NODE_PARAMS){ look, (void *)(intptr_t)2 };
	OK(cuGraphAddHostNode(&b, g, &cp, 1, &hp));
	end();

	begin("graphnodes-launch");
	if (OK(cuGraphInstantiateWithFlags(&x, g, 0)) &&
	    OK(cuGraphLaunch(x, s)) && OK(cuStreamSynchronize(s))) {
		EXPECT(norder == 2 && order[0] == 1 && order[1] == 2,
		       "host nodes ran %d times (%d, %d)", norder, order[0],
		       order[1]);
		EXPECT(seen == 0x11 && pinned[1023] == 0x11,
		       "the copy brought %#x", seen);
	}
	end();

	begin("graphnodes-queries");
	n = 0;
	OK(cuGraphGetNodes(g, NULL, &n));
	EXPECT(n == 4, "%zu nodes", n);
	if (OK(cuGraphNodeGetType(b, &t)))
		EXPECT(t == CU_GRAPH_NODE_TYPE_HOST, "type %d", (int)t);
	n = 4;
	if (OK(cuGraphNodeGetDependencies(b, deps, NULL, &n)))
		EXPECT(n == 1 && deps[0] == cp, "%zu dependencies", n);
	n = 4;
	if (OK(cuGraphNodeGetDependentNodes(a, deps, NULL, &n)))
		EXPECT(n == 1 && deps[0] == ms, "%zu dependents", n);
	n = 0;
	if (OK(cuGraphGetEdges(g, NULL, NULL, NULL, &n)))
		EXPECT(n == 3, "%zu edges", n);
	n = 8;
	if (OK(cuGraphGetEdges(g, from, to, NULL, &n)))
		EXPECT(n == 3, "%zu edges listed", n);
	memset(&hp, 0, sizeof(hp));
	if (OK(cuGraphHostNodeGetParams(a, &hp)))
		EXPECT(hp.fn == note && hp.userData == (void *)(intptr_t)1,
		       "host node parameters read back wrong");
	memset(&mp, 0, sizeof(mp));
	if (OK(cuGraphMemsetNodeGetParams(ms, &mp)))
		EXPECT(mp.dst == d && mp.value == 0x11 && mp.width == 1024,
		       "memset parameters read back wrong");
	memset(&c, 0, sizeof(c));
	if (OK(cuGraphMemcpyNodeGetParams(cp, &c)))
		EXPECT(c.dstMemoryType == CU_MEMORYTYPE_HOST &&
		       c.dstHost == pinned && c.srcDevice == d &&
		       c.WidthInBytes == 4096,
		       "memcpy parameters read back wrong");
	EXPECT(cuGraphMemsetNodeGetParams(a, &mp) == CUDA_ERROR_INVALID_VALUE,
	       "memset parameters of a host node");
	end();

	begin("graphnodes-setters");
	mp.value = 0x22;
	OK(cuGraphExecMemsetNodeSetParams(x, ms, &mp, ctx));
	hp = (CUDA_HOST_NODE_PARAMS){ look, (void *)(intptr_t)3 };
	OK(cuGraphExecHostNodeSetParams(x, b, &hp));
	norder = 0;
	if (OK(cuGraphLaunch(x, s)) && OK(cuStreamSynchronize(s)))
		EXPECT(norder == 2 && order[1] == 3 && seen == 0x22,
		       "after the setters: %d calls, last %d, copy %#x",
		       norder, order[1], seen);
	/* the graph itself is unchanged */
	if (OK(cuGraphMemsetNodeGetParams(ms, &mp)))
		EXPECT(mp.value == 0x11, "the graph's memset changed");
	mp.value = 0x33;
	OK(cuGraphMemsetNodeSetParams(ms, &mp));
	if (OK(cuGraphMemsetNodeGetParams(ms, &mp)))
		EXPECT(mp.value == 0x33, "the graph's memset unchanged");
	end();

	begin("graphnodes-enable");
	{
		unsigned int on = 9;

		OK(cuGraphNodeSetEnabled(x, a, 0));
		if (OK(cuGraphNodeGetEnabled(x, a, &on)))
			EXPECT(on == 0, "enabled %u", on);
		norder = 0;
		if (OK(cuGraphLaunch(x, s)) && OK(cuStreamSynchronize(s)))
			EXPECT(norder == 1 && order[0] == 3,
			       "with A disabled: %d calls", norder);
		OK(cuGraphNodeSetEnabled(x, a, 1));
	}
	end();

	begin("graphnodes-clone");
	{
		cuuint64_t flags = 7;
		CUgraphNode found = NULL;

		if (OK(cuGraphClone(&clone, g)) &&
		    OK(cuGraphNodeFindInClone(&found, a, clone)) &&
		    OK(cuGraphNodeGetType(found, &t)))
			EXPECT(t == CU_GRAPH_NODE_TYPE_HOST && found != a,
			       "the clone's node");
		if (OK(cuGraphExecGetFlags(x, &flags)))
			EXPECT(flags == 0, "flags %llu",
			       (unsigned long long)flags);
	}
	end();

	begin("graphnodes-refused");
	{
		void *page = malloc(4096);

		memset(&c, 0, sizeof(c));
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		c.srcDevice = d;
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = page;
		c.WidthInBytes = 64;
		c.Height = 1;
		c.Depth = 1;
		/* pageable memory is staged (integration cappage): the
		 * node is a memcpy node */
		if (OK(cuGraphAddMemcpyNode(&n2, g, NULL, 0, &c, ctx)) &&
		    OK(cuGraphNodeGetType(n2, &t)))
			EXPECT(t == CU_GRAPH_NODE_TYPE_MEMCPY, "a pageable "
			       "memcpy node's type %d", (int)t);
		/* and so is its copy in a clone, found or listed */
		{
			CUgraph cl;
			CUgraphNode cn, list[64];
			CUDA_MEMCPY3D cp;
			size_t nn = 64, memcpys = 0;

			if (OK(cuGraphClone(&cl, g)) &&
			    OK(cuGraphNodeFindInClone(&cn, n2, cl)) &&
			    OK(cuGraphNodeGetType(cn, &t)) &&
			    OK(cuGraphMemcpyNodeGetParams(cn, &cp))) {
				EXPECT(t == CU_GRAPH_NODE_TYPE_MEMCPY,
				       "a cloned pageable memcpy node's type "
				       "%d", (int)t);
				EXPECT(cp.dstHost == page &&
				       cp.WidthInBytes == 64,
				       "a cloned memcpy node's parameters");
			}
			if (OK(cuGraphGetNodes(cl, list, &nn)))
				for (size_t i = 0; i < nn && i < 64; i++)
					if (OK(cuGraphNodeGetType(list[i],
								  &t)) &&
					    t == CU_GRAPH_NODE_TYPE_MEMCPY)
						memcpys++;
			EXPECT(memcpys >= 1, "no memcpy node in the clone's "
			       "list of %zu", nn);
			OK(cuGraphDestroy(cl));
		}
		OK(cuGraphDestroyNode(n2));
		/* both sides pageable: a host node that copies (integration
		 * cappage graph-h2h), still a memcpy node */
		c.srcMemoryType = CU_MEMORYTYPE_HOST;
		c.srcHost = (char *)page + 1024;
		if (OK(cuGraphAddMemcpyNode(&n2, g, NULL, 0, &c, ctx)) &&
		    OK(cuGraphNodeGetType(n2, &t)))
			EXPECT(t == CU_GRAPH_NODE_TYPE_MEMCPY, "a host-to-host "
			       "memcpy node's type %d", (int)t);
		OK(cuGraphDestroyNode(n2));
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		/* past the end of the pinned buffer */
		c.dstHost = pinned;
		c.WidthInBytes = 8192;
		EXPECT(cuGraphAddMemcpyNode(&n2, g, NULL, 0, &c, ctx) ==
		       CUDA_ERROR_NOT_SUPPORTED,
		       "a memcpy node past its pinned buffer");
		free(page);
		EXPECT(cuGraphNodeGetType((CUgraphNode)junk, &t) ==
		       CUDA_ERROR_INVALID_VALUE, "a forged node");
		EXPECT(cuGraphHostNodeGetParams((CUgraphNode)junk, &hp) ==
		       CUDA_ERROR_INVALID_VALUE, "a forged host node");
		EXPECT(cuGraphNodeSetEnabled((CUgraphExec)junk, a, 0) ==
		       CUDA_ERROR_INVALID_VALUE, "a forged executable graph");
		EXPECT(cuGraphAddHostNode(&n2, g, NULL, 0, NULL) ==
		       CUDA_ERROR_INVALID_VALUE, "a host node without params");
		/* a node of a destroyed graph is stale */
		if (OK(cuGraphCreate(&g2, 0)) &&
		    OK(cuGraphAddEmptyNode(&n2, g2, NULL, 0)) &&
		    OK(cuGraphDestroy(g2)))
			EXPECT(cuGraphNodeGetType(n2, &t) ==
			       CUDA_ERROR_INVALID_VALUE,
			       "a node of a destroyed graph");
	}
	end();

	begin("graphnodes-memory");
	{
		CUDA_MEM_ALLOC_NODE_PARAMS ap;
		CUgraphNode an, fn;
		CUdeviceptr got = 0;
		cuuint64_t v = 1;

		memset(&ap, 0, sizeof(ap));
		ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		ap.poolProps.location.id = 0;
		ap.bytesize = 1 << 20;
		if (OK(cuGraphAddMemAllocNode(&an, clone, NULL, 0, &ap))) {
			EXPECT(ap.dptr != 0, "no address");
			if (OK(cuGraphAddMemFreeNode(&fn, clone, &an, 1,
						     ap.dptr)) &&
			    OK(cuGraphMemFreeNodeGetParams(fn, &got)))
				EXPECT(got == ap.dptr, "the free's address");
			memset(&ap, 0, sizeof(ap));
			if (OK(cuGraphMemAllocNodeGetParams(an, &ap)))
				EXPECT(ap.bytesize == 1 << 20 && ap.dptr,
				       "allocation read back wrong");
		}
		if (OK(cuDeviceGetGraphMemAttribute(
			    dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v)))
			EXPECT(v == 0, "graph memory in use %llu",
			       (unsigned long long)v);
		v = 0;
		OK(cuDeviceSetGraphMemAttribute(
			dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &v));
		OK(cuDeviceGraphMemTrim(dev));
		EXPECT(cuDeviceGetGraphMemAttribute(
			       dev, (CUgraphMem_attribute)99, &v) ==
			       CUDA_ERROR_INVALID_VALUE, "attribute 99");
	}
	end();

	begin("graphnodes-dot");
	{
		char path[] = "/tmp/xgpu-graphnodes-XXXXXX";
		struct stat st;
		int fd = mkstemp(path);

		if (fd >= 0)
			close(fd);
		if (fd >= 0 && OK(cuGraphDebugDotPrint(g, path, 0))) {
			EXPECT(stat(path, &st) == 0 && st.st_size > 10,
			       "the dot file");
		}
		if (fd >= 0)
			unlink(path);
	}
	end();

	begin("graphnodes-remove");
	n = 1;
	OK(cuGraphRemoveDependencies(g, &cp, &b, NULL, 1));
	if (OK(cuGraphNodeGetDependencies(b, deps, NULL, &n)))
		EXPECT(n == 0, "%zu dependencies left", n);
	OK(cuGraphDestroyNode(ms));
	n = 8;
	if (OK(cuGraphGetNodes(g, nodes, &n)))
		EXPECT(n == 3, "%zu nodes after a destroy", n);
	EXPECT(cuGraphNodeGetType(ms, &t) == CUDA_ERROR_INVALID_VALUE,
	       "a destroyed node");
	n = 0;
	if (OK(cuGraphNodeGetDependencies(cp, NULL, NULL, &n)))
		EXPECT(n == 0, "the destroyed node is still a dependency");
	end();

	begin("graphnodes-userobj");
	{
		CUuserObject uo = NULL, junk_uo = (CUuserObject)junk;
		CUgraph g3 = NULL;

		norder = 0;
		if (OK(cuUserObjectCreate(&uo, (void *)(intptr_t)42, note, 1,
					  0)) &&
		    OK(cuGraphCreate(&g3, 0))) {
			EXPECT(cuUserObjectRelease(uo, 2) ==
			       CUDA_ERROR_INVALID_VALUE,
			       "more references released than held");
			OK(cuUserObjectRetain(uo, 1));
			OK(cuGraphRetainUserObject(g3, uo, 2,
						   CU_GRAPH_USER_OBJECT_MOVE));
			EXPECT(norder == 0, "destroyed too early");
			OK(cuGraphReleaseUserObject(g3, uo, 2));
			EXPECT(norder == 1 && order[0] == 42,
			       "the destructor ran %d times", norder);
			EXPECT(cuUserObjectRetain(uo, 1) ==
			       CUDA_ERROR_INVALID_HANDLE,
			       "a destroyed user object");
			OK(cuGraphDestroy(g3));
		}
		EXPECT(cuUserObjectRetain(junk_uo, 1) ==
		       CUDA_ERROR_INVALID_VALUE, "a forged user object");
	}
	end();

	begin("graphnodes-capture");
	{
		CUgraphNode dn = NULL;
		CUgraph g4 = NULL;

		if (OK(cuGraphCreate(&g4, 0)) &&
		    OK(cuGraphAddEmptyNode(&dn, g4, NULL, 0))) {
			CUgraph got = NULL;

			/* a capture into g4 after its node, ended: g4 */
			if (OK(cuStreamBeginCaptureToGraph(
				    s, g4, &dn, NULL, 1,
				    CU_STREAM_CAPTURE_MODE_GLOBAL))) {
				OK(cuStreamUpdateCaptureDependencies(
					s, &dn, NULL, 1,
					CU_STREAM_SET_CAPTURE_DEPENDENCIES));
				if (OK(cuStreamEndCapture(s, &got)))
					EXPECT(got == g4,
					       "the capture ended in %p, not "
					       "its graph %p", (void *)got,
					       (void *)g4);
			}
			EXPECT(cuStreamBeginCaptureToGraph(
				       s, g4, &a, NULL, 1,
				       CU_STREAM_CAPTURE_MODE_GLOBAL) ==
				       CUDA_ERROR_INVALID_VALUE,
			       "a dependency of another graph");
			EXPECT(cuStreamUpdateCaptureDependencies(
				       s, &dn, NULL, 1,
				       CU_STREAM_SET_CAPTURE_DEPENDENCIES) ==
				       CUDA_ERROR_ILLEGAL_STATE,
			       "dependencies of no capture");
			/* a host function when nothing is captured: at once */
			norder = 0;
			OK(cuLaunchHostFunc(s, note, (void *)(intptr_t)5));
			OK(cuStreamSynchronize(s));
			EXPECT(norder == 1 && order[0] == 5,
			       "host function after a capture ended");
		}
		if (g4)
			OK(cuGraphDestroy(g4));
	}
	end();

	begin("graphnodes-kernel");
	{
		static const char image[] = "XGPU-FAKE-MODULE\n"
					    "# kernels: xgpu_fake_fill\n";
		CUDA_KERNEL_NODE_PARAMS kp;
		CUkernelNodeAttrValue v;
		CUgraphNode k1 = NULL, k2 = NULL;
		CUfunction fill = NULL;
		CUmodule mod = NULL;
		CUgraph g5 = NULL;
		uint32_t val = 7;
		int cnt = 16;
		void *args[] = { &d, &val, &cnt };

		if (OK(cuModuleLoadData(&mod, image)) &&
		    OK(cuModuleGetFunction(&fill, mod, "xgpu_fake_fill")) &&
		    OK(cuGraphCreate(&g5, 0))) {
			memset(&kp, 0, sizeof(kp));
			kp.func = fill;
			kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
			kp.blockDimX = 16;
			kp.blockDimY = kp.blockDimZ = 1;
			kp.kernelParams = args;
			OK(cuGraphAddKernelNode(&k1, g5, NULL, 0, &kp));
			OK(cuGraphAddKernelNode(&k2, g5, NULL, 0, &kp));
			memset(&v, 0, sizeof(v));
			v.priority = 3;
			OK(cuGraphKernelNodeSetAttribute(
				k1, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
			OK(cuGraphKernelNodeCopyAttributes(k2, k1));
			memset(&v, 0, sizeof(v));
			if (OK(cuGraphKernelNodeGetAttribute(
				    k2, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v)))
				EXPECT(v.priority == 3, "priority %d",
				       v.priority);
			EXPECT(cuGraphKernelNodeGetAttribute(
				       k2,
				       CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT,
				       &v) == CUDA_ERROR_NOT_SUPPORTED,
			       "an attribute holding a driver object");
			EXPECT(cuGraphKernelNodeCopyAttributes(k2, a) ==
			       CUDA_ERROR_INVALID_VALUE,
			       "attributes of a host node");
			memset(&kp, 0, sizeof(kp));
			if (OK(cuGraphKernelNodeGetParams(k2, &kp)))
				EXPECT(kp.func == fill && kp.blockDimX == 16 &&
				       kp.kernelParams &&
				       *(CUdeviceptr *)kp.kernelParams[0] ==
					       d &&
				       *(uint32_t *)kp.kernelParams[1] == 7 &&
				       *(int *)kp.kernelParams[2] == 16,
				       "kernel parameters read back wrong");
		}
		if (g5)
			OK(cuGraphDestroy(g5));
		if (mod)
			OK(cuModuleUnload(mod));
	}
	end();

	begin("graphnodes-conditional");
	{
		CUgraphConditionalHandle ch = 0;
		CUgraphNodeParams np;
		CUgraphNode cn = NULL, en = NULL;
		CUgraph g6 = NULL, body;

		if (OK(cuGraphCreate(&g6, 0)) &&
		    OK(cuGraphConditionalHandleCreate(
			    &ch, g6, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT))) {
			memset(&np, 0, sizeof(np));
			np.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
			np.conditional.handle = ch;
			np.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
			np.conditional.size = 1;
			np.conditional.ctx = ctx;
			if (OK(cuGraphAddNode(&cn, g6, NULL, NULL, 0, &np)))
				EXPECT(np.conditional.phGraph_out != NULL,
				       "no body graph");
			if (cn && np.conditional.phGraph_out) {
				body = np.conditional.phGraph_out[0];
				OK(cuGraphAddEmptyNode(&en, body, NULL, 0));
				n = 0;
				if (OK(cuGraphGetNodes(body, NULL, &n)))
					EXPECT(n == 1, "%zu body nodes", n);
				/* the body goes with its node */
				OK(cuGraphDestroyNode(cn));
				n = 0;
				EXPECT(cuGraphGetNodes(body, NULL, &n) ==
				       CUDA_ERROR_INVALID_HANDLE,
				       "the body of a destroyed node");
				OK(cuGraphDestroy(g6));
				g6 = NULL;
			}
		}
		if (g6)
			OK(cuGraphDestroy(g6));
	}
	end();

	begin("graphnodes-memop");
	{
		CUDA_BATCH_MEM_OP_NODE_PARAMS bp;
		CUstreamBatchMemOpParams op;
		CUgraphNode mn = NULL;
		CUgraphExec x7 = NULL;
		CUgraph g7 = NULL;
		uint32_t got = 0;

		memset(&op, 0, sizeof(op));
		op.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
		op.writeValue.address = d;
		op.writeValue.value = 0x1234;
		memset(&bp, 0, sizeof(bp));
		bp.ctx = ctx;
		bp.count = 1;
		bp.paramArray = &op;
		if (OK(cuGraphCreate(&g7, 0)) &&
		    OK(cuGraphAddBatchMemOpNode(&mn, g7, NULL, 0, &bp)) &&
		    OK(cuGraphInstantiateWithFlags(&x7, g7, 0)) &&
		    OK(cuGraphLaunch(x7, s)) && OK(cuStreamSynchronize(s)) &&
		    OK(cuMemcpyDtoH(&got, d, 4)))
			EXPECT(got == 0x1234, "the write brought %#x", got);
		memset(&bp, 0, sizeof(bp));
		if (mn && OK(cuGraphBatchMemOpNodeGetParams(mn, &bp)))
			EXPECT(bp.count == 1 && bp.paramArray &&
			       bp.paramArray[0].writeValue.value == 0x1234,
			       "operations read back wrong");
		op.writeValue.value = 0x5678;
		bp.paramArray = &op;
		if (x7 && OK(cuGraphExecBatchMemOpNodeSetParams(x7, mn, &bp)) &&
		    OK(cuGraphLaunch(x7, s)) && OK(cuStreamSynchronize(s)) &&
		    OK(cuMemcpyDtoH(&got, d, 4)))
			EXPECT(got == 0x5678, "after the setter %#x", got);
		if (x7)
			OK(cuGraphExecDestroy(x7));
		if (g7)
			OK(cuGraphDestroy(g7));
	}
	end();

	begin("graphnodes-pinned-free");
	{
		CUgraphNode pn = NULL;
		CUgraphExec x8 = NULL;
		CUgraph g8 = NULL;
		void *p2 = NULL;

		/* a graph's pinned buffer freed while the graph lives: the
		 * worker keeps it mapped, the graph's copy stays harmless */
		if (OK(cuMemHostAlloc(&p2, 8192, 0)) &&
		    OK(cuGraphCreate(&g8, 0))) {
			memset(&c, 0, sizeof(c));
			c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
			c.srcDevice = d;
			c.dstMemoryType = CU_MEMORYTYPE_HOST;
			c.dstHost = p2;
			c.WidthInBytes = 4096;
			c.Height = 1;
			c.Depth = 1;
			if (OK(cuGraphAddMemcpyNode(&pn, g8, NULL, 0, &c, ctx)) &&
			    OK(cuGraphInstantiateWithFlags(&x8, g8, 0))) {
				OK(cuMemFreeHost(p2));
				p2 = NULL;
				OK(cuGraphLaunch(x8, s));
				OK(cuStreamSynchronize(s));
				OK(cuGraphExecDestroy(x8));
			}
			OK(cuGraphDestroy(g8));
		}
		if (p2)
			OK(cuMemFreeHost(p2));
	}
	end();

	/* host -> array -> device, as memcpy nodes; the array side back */
	begin("graphnodes-array");
	{
		CUDA_ARRAY_DESCRIPTOR ad = { 64, 4, CU_AD_FORMAT_UNSIGNED_INT32,
					     1 };
		uint32_t h[256];
		CUDA_MEMCPY3D c, q;
		CUgraphNode n1, n2;
		CUgraphExec x9;
		CUgraph g9;
		CUarray arr;

		if (OK(cuArrayCreate(&arr, &ad)) && OK(cuGraphCreate(&g9, 0))) {
			for (int i = 0; i < 256; i++)
				pinned[i] = 1000u + (uint32_t)i;
			memset(&c, 0, sizeof(c));
			c.srcMemoryType = CU_MEMORYTYPE_HOST;
			c.srcHost = pinned;
			c.srcPitch = 256;
			c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
			c.dstArray = arr;
			c.WidthInBytes = 256;
			c.Height = 4;
			c.Depth = 1;
			OK(cuGraphAddMemcpyNode(&n1, g9, NULL, 0, &c, ctx));
			memset(&c, 0, sizeof(c));
			c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
			c.srcArray = arr;
			c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
			c.dstDevice = d;
			c.dstPitch = 256;
			c.WidthInBytes = 256;
			c.Height = 4;
			c.Depth = 1;
			OK(cuGraphAddMemcpyNode(&n2, g9, &n1, 1, &c, ctx));
			OK(cuMemsetD32(d, 0, 256));
			if (OK(cuGraphInstantiateWithFlags(&x9, g9, 0))) {
				if (OK(cuGraphLaunch(x9, s)) &&
				    OK(cuStreamSynchronize(s)) &&
				    OK(cuMemcpyDtoH(h, d, sizeof(h))))
					EXPECT(h[0] == 1000 && h[255] == 1255,
					       "through the array: %u .. %u",
					       h[0], h[255]);
				OK(cuGraphExecDestroy(x9));
			}
			memset(&q, 0, sizeof(q));
			if (OK(cuGraphMemcpyNodeGetParams(n2, &q)))
				EXPECT(q.srcMemoryType == CU_MEMORYTYPE_ARRAY &&
				       q.srcArray == arr && q.dstDevice == d,
				       "array side read back: type %d",
				       (int)q.srcMemoryType);
			OK(cuGraphDestroy(g9));
			OK(cuArrayDestroy(arr));
			/* a destroyed array is no array */
			c.srcArray = arr;
			EXPECT(cuGraphCreate(&g9, 0) == CUDA_SUCCESS &&
			       cuGraphAddMemcpyNode(&n2, g9, NULL, 0, &c,
						    ctx) != CUDA_SUCCESS,
			       "a memcpy node from a destroyed array");
			OK(cuGraphDestroy(g9));
		}
	}
	end();

	/*
	 * A capture takes a memset at an address that is no device memory
	 * (a placeholder, as XLA's autotuner captures one at 0x80): the
	 * capture goes on and ends, as natively; the graph cannot be
	 * instantiated (the worker walks it: a driver that lets the GPU
	 * reach pageable memory would not refuse), nor a graph holding it
	 * as a child; with the node set to device memory it runs.
	 */
	begin("graphnodes-captured-placeholder");
	{
		CUgraph gc = NULL, gp = NULL;
		CUgraphExec xc = NULL;
		CUgraphNode cn[4], child;
		CUDA_MEMSET_NODE_PARAMS q;
		size_t nn = 4;
		uint32_t back[4] = { 0 };

		if (OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))) {
			OK(cuMemsetD8Async(0x80, 0, 16, s));
			OK(cuMemsetD32Async(d + 64, 0x5a5a5a5au, 4, s));
			OK(cuStreamEndCapture(s, &gc));
		}
		if (gc) {
			EXPECT(cuGraphInstantiateWithFlags(&xc, gc, 0) ==
				       CUDA_ERROR_INVALID_VALUE,
			       "a graph with a memset at 0x80 instantiated");
			if (OK(cuGraphCreate(&gp, 0)) &&
			    OK(cuGraphAddChildGraphNode(&child, gp, NULL, 0,
							gc))) {
				CUgraphExec xp = NULL;

				EXPECT(cuGraphInstantiateWithFlags(&xp, gp,
								   0) ==
					       CUDA_ERROR_INVALID_VALUE,
				       "its parent graph instantiated");
			}
			if (gp)
				OK(cuGraphDestroy(gp));
			/* the placeholder set to device memory: it runs */
			if (OK(cuGraphGetNodes(gc, cn, &nn)))
				EXPECT(nn == 2, "%zu nodes captured", nn);
			for (size_t i = 0; i < nn && i < 4; i++) {
				if (!OK(cuGraphMemsetNodeGetParams(cn[i], &q)) ||
				    q.dst != 0x80)
					continue;
				q.dst = d + 256;
				OK(cuGraphMemsetNodeSetParams(cn[i], &q));
			}
			OK(cuMemsetD32(d + 64, 0, 4));
			OK(cuMemsetD32(d + 256, 0x01010101u, 4));
			if (OK(cuGraphInstantiateWithFlags(&xc, gc, 0)) &&
			    OK(cuGraphLaunch(xc, s)) &&
			    OK(cuStreamSynchronize(s))) {
				OK(cuMemcpyDtoH(back, d + 64, 4));
				EXPECT(back[0] == 0x5a5a5a5au, "captured "
				       "memset: %#x", back[0]);
				OK(cuMemcpyDtoH(back, d + 256, 16));
				EXPECT(back[0] == 0 && back[3] == 0,
				       "the placeholder's memset: %#x %#x",
				       back[0], back[3]);
			}
			if (xc)
				OK(cuGraphExecDestroy(xc));
			OK(cuGraphDestroy(gc));
		}
	}
	end();

	/*
	 * Another thread queries an event while this one captures
	 * thread-locally: natively allowed (only the capturing thread is
	 * held to the capture's rules); the worker serves both threads on
	 * one, and the driver must not see the capture as that thread's
	 * thread-local one (XLA's autotuner does this).
	 */
	begin("graphnodes-threadlocal");
	{
		struct tl_arg ta = { ctx, NULL, CUDA_ERROR_UNKNOWN };
		CUstream s2 = NULL;
		CUgraph gt = NULL;
		pthread_t thr;

		if (OK(cuEventCreate(&ta.e, 0)) &&
		    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING)) &&
		    OK(cuEventRecord(ta.e, s2)) && OK(cuStreamSynchronize(s2)) &&
		    OK(cuStreamBeginCapture(s,
					    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))) {
			OK(cuMemsetD32Async(d, 1, 4, s));
			if (pthread_create(&thr, NULL, tl_query, &ta) == 0)
				pthread_join(thr, NULL);
			EXPECT(ta.rc == CUDA_SUCCESS, "another thread's event "
			       "query during a thread-local capture: %d",
			       (int)ta.rc);
			if (OK(cuStreamEndCapture(s, &gt)))
				OK(cuGraphDestroy(gt));
		}
		if (ta.e)
			OK(cuEventDestroy(ta.e));
		if (s2)
			OK(cuStreamDestroy(s2));
	}
	end();

	begin("graphnodes-teardown");
	OK(cuGraphExecDestroy(x));
	OK(cuGraphDestroy(clone));
	OK(cuGraphDestroy(g));
	EXPECT(cuGraphNodeGetType(a, &t) == CUDA_ERROR_INVALID_VALUE,
	       "a node of a destroyed graph");
	OK(cuMemFreeHost(pinned));
	OK(cuMemFree(d));
	OK(cuStreamDestroy(s));
	end();
	return failed;
}
