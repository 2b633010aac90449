/* SPDX-License-Identifier: MIT */
/*
 * xgpuif-ops-nvml.h: argument and reply layouts of the NVML operations
 * (the conventions of xgpuif-ops.h, which includes this).
 */
#ifndef XGPUIF_OPS_NVML_H
#define XGPUIF_OPS_NVML_H

/* ---- NVML: what the guest's NVML library shows (320-321) ------------------
 * Answered by the worker without a CUDA context: a channel whose requests
 * are all NVML ops never creates one (xgpub_op_nvml.c). */

#define XGPUIF_NVML_NAME_LEN	96u	/* NVML's device name buffer */
#define XGPUIF_NVML_VERSION_LEN	80u	/* NVML's driver version buffer */

/* NVML_DEVICE: what does not change while the guest runs */
struct xgpuif_nvml_device_reply {
	char name[XGPUIF_NVML_NAME_LEN];	/* cuDeviceGetName */
	char bus_id[32];		/* cuDeviceGetPCIBusId, "" if none */
	/* the host driver's version ("580.65.06", from
	 * /proc/driver/nvidia/version), "" where the worker cannot tell */
	char driver_version[XGPUIF_NVML_VERSION_LEN];
	uint8_t uuid[16];		/* cuDeviceGetUuid_v2 */
	uint64_t total_mem;		/* cuDeviceTotalMem: the physical size */
	uint64_t quota;			/* the guest's device memory, 0: none */
	int32_t cuda_version;		/* cuDriverGetVersion */
	uint32_t device_count;		/* devices the guest has (1) */
	uint32_t pci_domain, pci_bus, pci_device;
	uint32_t pci_device_id;		/* device << 16 | vendor */
	uint32_t pci_subsystem_id;
	uint32_t cc_major, cc_minor;	/* compute capability */
	uint32_t sm_count;
	uint32_t mem_bus_width;		/* bits */
	uint32_t clock_khz;		/* CU_DEVICE_ATTRIBUTE_CLOCK_RATE */
	uint32_t mem_clock_khz;		/* ..._MEMORY_CLOCK_RATE */
	uint32_t _pad;
};

/*
 * NVML_STATUS: the guest's share of the GPU now, followed by nproc
 * struct xgpuif_nvml_proc (as many as the reply has room for).  The guest
 * is a Xen domain, or a local user: all its channels count.
 */
struct xgpuif_nvml_status_reply {
	uint64_t total;		/* the guest's quota, else the physical size */
	uint64_t used;		/* device memory its processes hold */
	/* permille of the last second's wall time during which its work
	 * had the GPU (the GPU time the scheduler charges it), all its
	 * channels summed, at most 1000 */
	uint32_t util_pm;
	uint32_t util_valid;	/* 0: not measured (the scheduler is off) */
	uint32_t nproc;		/* entries that follow */
	uint32_t nproc_all;	/* processes it has (more did not fit) */
};

/* one process of the guest's with a CUDA context */
struct xgpuif_nvml_proc {
	uint32_t pid;		/* as the guest sees it (local: SO_PEERCRED;
				 * Xen: the frontend's), 0: unknown */
	uint32_t _pad;
	uint64_t mem_used;	/* device memory it holds */
	char name[32];		/* its name, as it gave it */
};

#endif /* XGPUIF_OPS_NVML_H */
