// SPDX-License-Identifier: MIT
/*
 * xgpulib_dev.c: the device queries, all answered from the copy read at
 * cuInit (device attributes are immutable).  The guest's devices are the
 * ones the backend gives it (one per worker today), numbered from 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"

int xgpulib_ndev;
int xgpulib_driver_version = CUDA_VERSION;
struct xgpulib_device *xgpulib_devs;

/* more than one backend could give a guest */
#define MAX_DEVICES 64

CUresult xgpulib_dev_load(uint32_t count, int driver_version)
{
	struct xgpulib_device *devs;
	CUresult rc;

	if (count > MAX_DEVICES)
		return CUDA_ERROR_UNKNOWN;
	devs = calloc(count ? count : 1, sizeof(*devs));
	if (!devs)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < count; i++) {
		struct xgpuif_device_args da = { (int32_t)i, 0 };

		rc = xgpulib_call_DEVICE_INFO(&da, &devs[i].info);
		if (rc) {
			free(devs);
			return rc;
		}
		devs[i].info.name[XGPUIF_DEV_NAME_LEN - 1] = 0;
	}
	xgpulib_devs = devs;
	xgpulib_driver_version = driver_version;
	xgpulib_ndev = (int)count;
	return CUDA_SUCCESS;
}

CUresult xgpulib_check_dev(CUdevice dev)
{
	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= xgpulib_ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult xgpulib_dev_arg(bool out_ok, CUdevice dev)
{
	if (!out_ok)
		return CUDA_ERROR_INVALID_VALUE;
	return xgpulib_check_dev(dev);
}

CUresult xgpulib_check_dev_loc(const CUmemLocation *loc, const char *call)
{
	if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE) {
		xgpulib_dbg("%s: location type %d not supported (device "
			    "memory only)", call, (int)loc->type);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (xgpulib_check_dev(loc->id))
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult xgpulib_mem_kind(CUmemAllocationType type,
			  CUmemAllocationHandleType handle_types,
			  const CUmemLocation *loc, const char *call,
			  struct xgpuif_mem_kind *k)
{
	CUresult rc = xgpulib_check_dev_loc(loc, call);

	if (rc)
		return rc;
	*k = (struct xgpuif_mem_kind){
		.type = (uint32_t)type,
		.handle_types = (uint32_t)handle_types,
		.loc_type = (uint32_t)loc->type,
		.loc_id = loc->id,
	};
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = xgpulib_ndev;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult rc = xgpulib_dev_arg(device != NULL, ordinal);

	if (rc)
		return rc;
	*device = ordinal;
	return CUDA_SUCCESS;
}

/*
 * What a query about one device checks, in the driver's order: cuInit ran,
 * dev is valid, then the output arguments (out_ok).  *pi is its info.
 */
static CUresult dev_info(CUdevice dev, bool out_ok,
			 const struct xgpuif_device_info_reply **pi)
{
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!out_ok)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = &xgpulib_devs[dev].info;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const struct xgpuif_device_info_reply *i;
	CUresult rc = dev_info(dev, name && len > 0, &i);

	if (!rc)
		snprintf(name, (size_t)len, "%s", i->name);
	return rc;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	const struct xgpuif_device_info_reply *i;
	CUresult rc = dev_info(dev, bytes, &i);

	if (!rc)
		*bytes = i->total_mem;
	return rc;
}

/* the 32-bit ABI of CUDA 2.0 */
#undef cuDeviceTotalMem
CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev);
CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	size_t b;
	CUresult rc = cuDeviceTotalMem_v2(&b, dev);

	if (rc == CUDA_SUCCESS && bytes)
		*bytes = b > 0xffffffffu ? 0xffffffffu : (unsigned int)b;
	return bytes ? rc : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
			      CUdevice dev)
{
	const struct xgpuif_device_info_reply *i;
	CUresult rc = dev_info(dev, pi, &i);

	if (rc)
		return rc;
	if ((unsigned int)attrib >= XGPUIF_NUM_DEV_ATTRS ||
	    !i->attr_valid[attrib])
		return CUDA_ERROR_INVALID_VALUE;
	*pi = i->attrs[attrib];
	/* coherent managed memory: a CPU touch waits for the context's GPU
	 * work, as on a device without concurrent managed access */
	if (attrib == CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS &&
	    xgpulib_managed_coherent())
		*pi = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	const struct xgpuif_device_info_reply *i;
	CUresult rc = dev_info(dev, uuid, &i);

	if (!rc)
		memcpy(uuid->bytes, i->uuid, sizeof(uuid->bytes));
	return rc;
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	const struct xgpuif_device_info_reply *i;
	CUresult rc = dev_info(dev, pciBusId && len > 0, &i);

	if (!rc)
		snprintf(pciBusId, (size_t)len, "%08X:%02X:%02X.0",
			 i->pci_domain, i->pci_bus, i->pci_device);
	return rc;
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
	unsigned int dom = 0, bus, slot;

	if (!dev || !pciBusId)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (sscanf(pciBusId, "%x:%x:%x", &dom, &bus, &slot) != 3) {
		dom = 0;
		if (sscanf(pciBusId, "%x:%x", &bus, &slot) != 2)
			return CUDA_ERROR_INVALID_VALUE;
	}
	for (int d = 0; d < xgpulib_ndev; d++) {
		const struct xgpuif_device_info_reply *i =
			&xgpulib_devs[d].info;

		if ((unsigned int)i->pci_domain == dom &&
		    (unsigned int)i->pci_bus == bus &&
		    (unsigned int)i->pci_device == slot) {
			*dev = d;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	CUresult rc;

	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuDeviceGetAttribute(
		major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	if (rc)
		return rc;
	return cuDeviceGetAttribute(
		minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

CUresult cuDeviceGetProperties(CUdevprop *prop, CUdevice dev)
{
	/* CUdevprop (a frozen ABI) is these 14 ints, in this order */
	static const CUdevice_attribute a[] = {
		CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
		CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
		CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
		CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
		CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY,
		CU_DEVICE_ATTRIBUTE_WARP_SIZE,
		CU_DEVICE_ATTRIBUTE_MAX_PITCH,
		CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
		CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
		CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT,
	};
	int v[sizeof(a) / sizeof(a[0])];
	CUresult rc;

	_Static_assert(sizeof(CUdevprop) == sizeof(v),
		       "CUdevprop is one int per attribute of a[]");
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		rc = cuDeviceGetAttribute(&v[i], a[i], dev);
		if (rc)
			return rc;
	}
	memcpy(prop, v, sizeof(v));
	return CUDA_SUCCESS;
}
