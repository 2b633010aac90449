// SPDX-License-Identifier: MIT
/*
 * xgpulib_api_memop.c: stream memory operations (cuStreamWaitValue*,
 * cuStreamWriteValue*, cuStreamBatchMemOp) and stream attributes
 * (cuStreamGetAttribute, cuStreamSetAttribute, cuStreamCopyAttributes).
 *
 * Memory operations travel as a batch of the CUDA ABI's parameter unions
 * (posted, in stream order; a long batch goes in pieces, one after the
 * other on the same stream).  Their addresses are device addresses (or
 * mapped host memory), which travel unchanged like every device pointer.
 * Attribute values travel as the 64-byte union they are.
 */
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_entry.h"

void xgpulib_note_memops(const CUstreamBatchMemOpParams *ops,
			 unsigned int count)
{
	for (unsigned int i = 0; i < count; i++)
		if (ops[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
		    ops[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_64)
			xgpulib_note_value_wait();
}

CUresult xgpulib_batch_memop(CUstream s, unsigned int count,
			     CUstreamBatchMemOpParams *ops, unsigned int flags,
			     int ptds)
{
	struct xgpuif_memop_args a = { 0, 0, flags };
	struct xgpuif_iov tail;
	CUresult rc = xgpulib_stream_arg(s, ptds, &a.stream);

	if (rc)
		return rc;
	if (!count || !ops)
		return CUDA_ERROR_INVALID_VALUE;
	xgpulib_note_memops(ops, count);
	while (count) {
		a.count = count < XGPUIF_MAX_MEMOPS ? count :
						       XGPUIF_MAX_MEMOPS;
		tail = (struct xgpuif_iov){ ops,
					    a.count * XGPUIF_MEMOP_SIZE };
		rc = xgpulib_post_STREAM_MEMOP(&a, &tail, 1);
		if (rc)
			return rc;
		ops += a.count;
		count -= a.count;
	}
	return CUDA_SUCCESS;
}

static CUresult one_op(CUstream s, CUstreamBatchMemOpType type,
		       CUdeviceptr addr, uint64_t value, unsigned int flags,
		       int ptds)
{
	CUstreamBatchMemOpParams op;

	memset(&op, 0, sizeof(op));
	op.operation = type;
	if (type == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
	    type == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
		op.waitValue.address = addr;
		op.waitValue.value64 = value;
		op.waitValue.flags = flags;
	} else {
		op.writeValue.address = addr;
		op.writeValue.value64 = value;
		op.writeValue.flags = flags;
	}
	return xgpulib_batch_memop(s, 1, &op, 0, ptds);
}

CUresult xgpulib_wait_value32(CUstream s, CUdeviceptr addr, cuuint32_t value,
			      unsigned int flags, int ptds)
{
	return one_op(s, CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, value, flags,
		      ptds);
}

CUresult xgpulib_wait_value64(CUstream s, CUdeviceptr addr, cuuint64_t value,
			      unsigned int flags, int ptds)
{
	return one_op(s, CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, value, flags,
		      ptds);
}

CUresult xgpulib_write_value32(CUstream s, CUdeviceptr addr,
			       cuuint32_t value, unsigned int flags, int ptds)
{
	return one_op(s, CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, value, flags,
		      ptds);
}

CUresult xgpulib_write_value64(CUstream s, CUdeviceptr addr,
			       cuuint64_t value, unsigned int flags, int ptds)
{
	return one_op(s, CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, value, flags,
		      ptds);
}

static CUresult stream_attr(CUstream s, CUstreamAttrID attr, void *value,
			    bool set, int ptds)
{
	struct xgpuif_stream_attr_args a;
	struct xgpuif_stream_attr_reply r;
	CUresult rc;

	memset(&a, 0, sizeof(a));
	rc = xgpulib_stream_arg(s, ptds, &a.stream);
	if (rc)
		return rc;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	a.attr = (uint32_t)attr;
	a.set = set;
	if (set)
		memcpy(a.value, value, sizeof(a.value));
	rc = xgpulib_call_STREAM_ATTR(&a, &r);
	if (rc == CUDA_SUCCESS && !set)
		memcpy(value, r.value, sizeof(r.value));
	return rc;
}

/* (their _ptsz typedefs name the arguments differently: written out) */
#undef cuStreamGetAttribute
#undef cuStreamSetAttribute
XGPULIB_EXPORT CUresult cuStreamGetAttribute_ptsz(CUstream s,
						  CUstreamAttrID attr,
						  CUstreamAttrValue *value);
XGPULIB_EXPORT CUresult cuStreamSetAttribute_ptsz(
	CUstream s, CUstreamAttrID attr, const CUstreamAttrValue *value);

CUresult cuStreamGetAttribute(CUstream s, CUstreamAttrID attr,
			      CUstreamAttrValue *value)
{
	return stream_attr(s, attr, value, false, 0);
}

CUresult cuStreamGetAttribute_ptsz(CUstream s, CUstreamAttrID attr,
				   CUstreamAttrValue *value)
{
	return stream_attr(s, attr, value, false, 1);
}

CUresult cuStreamSetAttribute(CUstream s, CUstreamAttrID attr,
			      const CUstreamAttrValue *value)
{
	return stream_attr(s, attr, (void *)value, true, 0);
}

CUresult cuStreamSetAttribute_ptsz(CUstream s, CUstreamAttrID attr,
				   const CUstreamAttrValue *value)
{
	return stream_attr(s, attr, (void *)value, true, 1);
}

/* cuStreamCopyAttributes: the worker copies them between the two streams */
static CUresult stream_copy_attrs(CUstream dst, CUstream src, int ptds)
{
	struct xgpuif_stream_pair_args a;
	CUresult rc = xgpulib_stream_arg(dst, ptds, &a.dst);

	if (!rc)
		rc = xgpulib_stream_arg(src, ptds, &a.src);
	return rc ? rc : xgpulib_call_STREAM_COPY_ATTRS(&a);
}

/* (its _ptsz typedef names the arguments differently: written out) */
#undef cuStreamCopyAttributes
XGPULIB_EXPORT CUresult cuStreamCopyAttributes_ptsz(CUstream dst,
						    CUstream src);

CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
	return stream_copy_attrs(dst, src, 0);
}

CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
	return stream_copy_attrs(dst, src, 1);
}
