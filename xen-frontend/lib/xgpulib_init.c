// SPDX-License-Identifier: MIT
/*
 * xgpulib_init.c: cuInit, the transport choice, and the device queries,
 * which are all answered from the cache filled at cuInit (device
 * attributes are immutable).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpu_uapi.h"
#include "xgpulib_etbl.h"

#define DEFAULT_SOCKET "/run/xgpu/xgpu.sock"

int xgpulib_ndev;
int xgpulib_driver_version = CUDA_VERSION;
struct xgpulib_device *xgpulib_devs;

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static int init_done;
static CUresult init_rc;

struct xgpulib_chan *xgpulib_chan_open(struct xgpulib_transport *t);

__attribute__((constructor)) static void xgpulib_load(void)
{
	const char *d = getenv("XGPU_DEBUG");

	xgpulib_debug = d && *d && strcmp(d, "0") != 0;
}

/* ---- identity for the export tables ------------------------------------ */

static int id_device_count(void)
{
	return xgpulib_ndev;
}

static int id_device_identity(int ordinal, CUuuid *uuid, int *dom, int *bus,
			      int *dev)
{
	const struct xgpuif_device_info_reply *i;

	if (ordinal < 0 || ordinal >= xgpulib_ndev)
		return -1;
	i = &xgpulib_devs[ordinal].info;
	memcpy(uuid->bytes, i->uuid, sizeof(uuid->bytes));
	*dom = i->pci_domain;
	*bus = i->pci_bus;
	*dev = i->pci_device;
	return 0;
}

static CUresult id_primary_ctx(CUdevice dev, CUcontext *pctx)
{
	struct CUctx_st *c = xgpulib_primary(dev);

	if (!c)
		return CUDA_ERROR_INVALID_DEVICE;
	*pctx = c;
	return CUDA_SUCCESS;
}

static int id_driver_version(void)
{
	return xgpulib_driver_version;
}

static const struct xgpulib_identity_ops identity_ops = {
	.device_count = id_device_count,
	.device_identity = id_device_identity,
	.primary_ctx = id_primary_ctx,
	.current_ctx = xgpulib_current,
	.driver_version = id_driver_version,
};

/* ---- cuInit -------------------------------------------------------------- */

static CUresult connect_backend(void)
{
	const char *tr = getenv("XGPU_TRANSPORT");
	const char *path = getenv("XGPU_SOCKET");
	struct xgpulib_transport *t = NULL;
	struct xgpulib_chan *c;
	char msg[400];
	int rc;

	const char *dev = getenv("XGPU_DEVICE");
	bool use_xen;

	if (!path || !*path)
		path = DEFAULT_SOCKET;
	if (!dev || !*dev)
		dev = XGPU_DEVICE_PATH;
	/* the Xen transport when the guest module is there, unless told */
	if (tr && *tr && strcmp(tr, "local") && strcmp(tr, "xen")) {
		xgpulib_log("cuInit: XGPU_TRANSPORT=%s: use \"xen\" or "
			    "\"local\"", tr);
		return CUDA_ERROR_NO_DEVICE;
	}
	use_xen = tr && *tr ? !strcmp(tr, "xen") : access(dev, F_OK) == 0;
	msg[0] = 0;
	if (use_xen) {
		rc = xgpulib_xen_connect(dev, &t, msg, sizeof(msg));
		if (rc) {
			xgpulib_log("cuInit: no GPU backend: %s", msg);
			return CUDA_ERROR_NO_DEVICE;
		}
	} else {
		rc = xgpulib_local_connect(path, &t, msg, sizeof(msg));
		if (rc) {
			xgpulib_log("cuInit: no GPU backend: %s (set "
				    "XGPU_SOCKET to the backend's socket, or "
				    "load xen-gpufront.ko in a Xen guest)",
				    msg);
			return CUDA_ERROR_NO_DEVICE;
		}
	}
	c = xgpulib_chan_open(t);
	if (!c) {
		t->ops->close(t);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	xgpulib_ch = c;
	xgpulib_dbg("connected to %s (ring order %u, data area %zu MiB)",
		    t->where, t->ring_order, t->data_bytes >> 20);
	return CUDA_SUCCESS;
}

static CUresult init_once(unsigned int flags)
{
	struct xgpuif_init_args a = { flags, XGPUIF_VERSION };
	struct xgpuif_init_reply r;
	CUresult rc;

	rc = connect_backend();
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	rc = xgpulib_call1(XGPUIF_OP_INIT, &a, sizeof(a), &r, sizeof(r));
	if (rc)
		goto fail;
	if (r.device_count > 64) {
		rc = CUDA_ERROR_UNKNOWN;
		goto fail;
	}
	xgpulib_devs = calloc(r.device_count ? r.device_count : 1,
			      sizeof(*xgpulib_devs));
	if (!xgpulib_devs) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	for (uint32_t i = 0; i < r.device_count; i++) {
		struct xgpuif_device_args da = { (int32_t)i, 0 };

		rc = xgpulib_call1(XGPUIF_OP_DEVICE_INFO, &da, sizeof(da),
				   &xgpulib_devs[i].info,
				   sizeof(xgpulib_devs[i].info));
		if (rc)
			goto fail;
		xgpulib_devs[i].info.name[XGPUIF_DEV_NAME_LEN - 1] = 0;
	}
	xgpulib_driver_version = r.driver_version;
	xgpulib_ndev = (int)r.device_count;
	xgpulib_etbl_init(&identity_ops);
	return CUDA_SUCCESS;
fail:
	xgpulib_log("cuInit: the backend refused initialisation (error %d)",
		    rc);
	return rc;
}

CUresult cuInit(unsigned int flags)
{
	pthread_mutex_lock(&init_mu);
	if (!init_done) {
		init_rc = init_once(flags);
		init_done = 1;
	}
	pthread_mutex_unlock(&init_mu);
	return init_rc;
}

CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = xgpulib_driver_version;
	return CUDA_SUCCESS;
}

/* ---- devices ------------------------------------------------------------- */

CUresult xgpulib_check_dev(CUdevice dev)
{
	if (!xgpulib_ch)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= xgpulib_ndev)
		return CUDA_ERROR_INVALID_DEVICE;
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
	CUresult rc;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	rc = xgpulib_check_dev(ordinal);
	if (rc)
		return rc;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", xgpulib_devs[dev].info.name);
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = xgpulib_devs[dev].info.total_mem;
	return CUDA_SUCCESS;
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
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	i = &xgpulib_devs[dev].info;
	if ((unsigned int)attrib >= XGPUIF_NUM_DEV_ATTRS ||
	    !i->attr_valid[attrib])
		return CUDA_ERROR_INVALID_VALUE;
	*pi = i->attrs[attrib];
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, xgpulib_devs[dev].info.uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

#undef cuDeviceGetUuid
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	const struct xgpuif_device_info_reply *i;
	CUresult rc = xgpulib_check_dev(dev);

	if (rc)
		return rc;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	i = &xgpulib_devs[dev].info;
	snprintf(pciBusId, (size_t)len, "%08X:%02X:%02X.0", i->pci_domain,
		 i->pci_bus, i->pci_device);
	return CUDA_SUCCESS;
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
	int v[14];
	CUresult rc;

	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < 14; i++) {
		rc = cuDeviceGetAttribute(&v[i], a[i], dev);
		if (rc)
			return rc;
	}
	prop->maxThreadsPerBlock = v[0];
	for (int i = 0; i < 3; i++) {
		prop->maxThreadsDim[i] = v[1 + i];
		prop->maxGridSize[i] = v[4 + i];
	}
	prop->sharedMemPerBlock = v[7];
	prop->totalConstantMemory = v[8];
	prop->SIMDWidth = v[9];
	prop->memPitch = v[10];
	prop->regsPerBlock = v[11];
	prop->clockRate = v[12];
	prop->textureAlign = v[13];
	return CUDA_SUCCESS;
}
