/* SPDX-License-Identifier: MIT */
/*
 * xgpunvml.h: the guest's NVML library, libnvidia-ml.so.1.
 *
 * nvidia-smi, PyTorch, pynvml, nvtop and gpustat load it to ask what GPU
 * the machine has.  In a guest it answers with the guest's virtual GPU:
 * the host GPU's name, UUID and PCI address; as memory the guest's quota
 * and what its processes hold; as utilisation the guest's share of the
 * GPU; as processes the guest's own.  It talks to the backend over a
 * channel of its own, on the same transports as the guest's libcuda
 * (xen-frontend/lib's channel and transport objects are linked in; their
 * names stay private), with two ops that need no CUDA context on the host
 * (XGPUIF_OP_NVML_DEVICE, _STATUS).  Everything a virtual GPU does not
 * have (temperature, power, clocks now, ECC...) answers
 * NVML_ERROR_NOT_SUPPORTED: nvidia-smi prints N/A.
 *
 * Files: xgpunvml_init.c (init, shutdown, the channel, errors, system
 * queries), xgpunvml_device.c (device queries), xgpunvml_etbl.c (the
 * private table nvidia-smi 580 asks for), xgpunvml_stubs.def (every other
 * name the tools look up).  The version script exports nvml* only.
 *
 * NVML's header is not part of the CUDA toolkit here: the few types this
 * library fills in are defined below, by their documented layouts.
 */
#ifndef XGPUNVML_H
#define XGPUNVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpuif.h"

/* an entry point of the library (the others are hidden) */
#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_UNKNOWN = 999,
};

/* nvmlInitWithFlags */
#define NVML_INIT_FLAG_NO_GPUS		1u
#define NVML_INIT_FLAG_NO_ATTACH	2u

/* the NVML API this library answers for (nvmlSystemGetNVMLVersion) */
#define XGPUNVML_API_MAJOR	13

/* an nvmlDevice_t points to one of these */
struct nvmlDevice_st {
	uint32_t magic;		/* XGPUNVML_DEV_MAGIC */
	unsigned int index;
};
#define XGPUNVML_DEV_MAGIC	0x4e564d4cu	/* "NVML" */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlPciInfo_t (_v2, _v3): 68 bytes */
typedef struct {
	char busIdLegacy[16];	/* "%04X:%02X:%02X.0" */
	unsigned int domain, bus, device;
	unsigned int pciDeviceId;	/* device << 16 | vendor */
	unsigned int pciSubSystemId;
	char busId[32];		/* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

/* the first nvmlPciInfo_t, of the unversioned nvmlDeviceGetPciInfo */
typedef struct {
	char busId[16];
	unsigned int domain, bus, device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	unsigned int reserved[4];
} nvmlPciInfo_v1_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int version;	/* nvmlMemory_v2 */
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2	((unsigned int)(sizeof(nvmlMemory_v2_t) | 2u << 24))

typedef struct {
	unsigned int gpu, memory;	/* percent */
} nvmlUtilization_t;

/* unsuffixed ...RunningProcesses */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* _v2 and _v3 */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;	/* 0xFFFFFFFF: no MIG */
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t");
_Static_assert(sizeof(nvmlPciInfo_v1_t) == 52, "nvmlPciInfo_v1_t");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t");

#define NVML_NO_MIG_ID		0xFFFFFFFFu
#define NVML_CLOCK_GRAPHICS	0u
#define NVML_CLOCK_SM		1u
#define NVML_CLOCK_MEM		2u

/* ---- the library's state (xgpunvml_init.c) ---------------------------- */

/* what NVML_DEVICE said at nvmlInit; good while initialised */
extern struct xgpuif_nvml_device_reply xgpunvml_dev;
/* the devices (xgpunvml_dev.device_count of them, at most this many) */
#define XGPUNVML_MAX_DEV	1u
extern struct nvmlDevice_st xgpunvml_devs[XGPUNVML_MAX_DEV];

/* nvmlInit has been called more often than nvmlShutdown */
bool xgpunvml_inited(void);
/* NVML_SUCCESS for a device handle of ours, else the error */
nvmlReturn_t xgpunvml_check(nvmlDevice_t dev);
/* the default answer of a name nobody implemented */
nvmlReturn_t xgpunvml_stub(void);

/* the guest's status now: its processes follow, nproc of them */
#define XGPUNVML_MAX_PROCS	256u
struct xgpunvml_status {
	struct xgpuif_nvml_status_reply r;
	struct xgpuif_nvml_proc p[XGPUNVML_MAX_PROCS];
};
/* a fresh one in *out (malloc'd: the caller frees it), or an error and
 * *out NULL */
nvmlReturn_t xgpunvml_status(struct xgpunvml_status **out);

/* the name of process pid as this machine knows it (its command, else
 * fallback); false if neither is there */
bool xgpunvml_proc_name(unsigned int pid, const char *fallback, char *buf,
			size_t len);

/* entry points one file calls in another */
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
					   nvmlDevice_t *device);

/* the process list of nvidia-smi's private table (xgpunvml_device.c) */
nvmlReturn_t xgpunvml_etbl_processes(nvmlDevice_t device, unsigned int *count,
				     uint8_t *arr, size_t stride,
				     size_t name_len);

/* copy s into buf of len bytes: NVML_ERROR_INSUFFICIENT_SIZE if it does
 * not fit */
nvmlReturn_t xgpunvml_str(const char *s, char *buf, unsigned int len);

#endif /* XGPUNVML_H */
