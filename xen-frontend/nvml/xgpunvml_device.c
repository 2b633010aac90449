// SPDX-License-Identifier: MIT
/*
 * xgpunvml_device.c: the device queries that have an answer in a guest.
 *
 * Identity (name, UUID, PCI, compute capability) is what NVML_DEVICE said
 * at nvmlInit; memory, utilisation and processes are asked for at each
 * call (NVML_STATUS): the guest's quota (else the GPU's size) and what
 * the guest's processes hold, the guest's share of the GPU over the last
 * second, the guest's processes with their pids as the guest knows them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpunvml.h"


#define CHECK(dev)                                                           \
	do {                                                                 \
		nvmlReturn_t rc_ = xgpunvml_check(dev);                      \
		if (rc_)                                                     \
			return rc_;                                          \
	} while (0)

/* ---- count and handles --------------------------------------------------- */

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = xgpunvml_dev.device_count;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
	return nvmlDeviceGetCount_v2(count);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
						  nvmlDevice_t *device)
{
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= xgpunvml_dev.device_count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &xgpunvml_devs[index];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
					       nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of the CUDA UUID's bytes */
static void uuid_text(char out[48])
{
	const uint8_t *u = xgpunvml_dev.uuid;

	snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid,
					      nvmlDevice_t *device)
{
	char mine[48];

	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	uuid_text(mine);
	if (xgpunvml_dev.device_count && !strcasecmp(uuid, mine)) {
		*device = &xgpunvml_devs[0];
		return NVML_SUCCESS;
	}
	return NVML_ERROR_NOT_FOUND;
}

/* "domain:bus:device.function" (domain of up to 8 digits) or
 * "bus:device.function", hexadecimal */
static bool parse_bus_id(const char *s, unsigned int *dom, unsigned int *bus,
			 unsigned int *dev)
{
	unsigned int a, b, c, f;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &a, &b, &c, &f, &n) == 4 && !s[n]) {
		*dom = a;
		*bus = b;
		*dev = c;
		return true;
	}
	n = 0;
	if (sscanf(s, "%x:%x.%x%n", &b, &c, &f, &n) == 3 && !s[n]) {
		*dom = 0;
		*bus = b;
		*dev = c;
		return true;
	}
	return false;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *id,
						     nvmlDevice_t *device)
{
	unsigned int dom, bus, dev;

	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!id || !device || !parse_bus_id(id, &dom, &bus, &dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (xgpunvml_dev.device_count && dom == xgpunvml_dev.pci_domain &&
	    bus == xgpunvml_dev.pci_bus && dev == xgpunvml_dev.pci_device) {
		*device = &xgpunvml_devs[0];
		return NVML_SUCCESS;
	}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *id,
						  nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByPciBusId_v2(id, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device,
				       unsigned int *index)
{
	CHECK(device);
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = device->index;
	return NVML_SUCCESS;
}

/* ---- identity ------------------------------------------------------------ */

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
				      unsigned int length)
{
	CHECK(device);
	return xgpunvml_str(xgpunvml_dev.name, name, length);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
				      unsigned int length)
{
	char s[48];

	CHECK(device);
	uuid_text(s);
	return xgpunvml_str(s, uuid, length);
}

static void pci_fill(nvmlPciInfo_t *p)
{
	memset(p, 0, sizeof(*p));
	p->domain = xgpunvml_dev.pci_domain;
	p->bus = xgpunvml_dev.pci_bus;
	p->device = xgpunvml_dev.pci_device;
	p->pciDeviceId = xgpunvml_dev.pci_device_id;
	p->pciSubSystemId = xgpunvml_dev.pci_subsystem_id;
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.0",
		 p->domain & 0xffffu, p->bus & 0xffu, p->device & 0xffu);
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.0", p->domain,
		 p->bus & 0xffu, p->device & 0xffu);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
					    nvmlPciInfo_t *pci)
{
	CHECK(device);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	pci_fill(pci);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device,
					    nvmlPciInfo_t *pci)
{
	return nvmlDeviceGetPciInfo_v3(device, pci);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device,
					 nvmlPciInfo_v1_t *pci)
{
	nvmlPciInfo_t p;

	CHECK(device);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	pci_fill(&p);
	memset(pci, 0, sizeof(*pci));
	memcpy(pci->busId, p.busIdLegacy, sizeof(pci->busId));
	pci->domain = p.domain;
	pci->bus = p.bus;
	pci->device = p.device;
	pci->pciDeviceId = p.pciDeviceId;
	pci->pciSubSystemId = p.pciSubSystemId;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
						       int *major, int *minor)
{
	CHECK(device);
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = (int)xgpunvml_dev.cc_major;
	*minor = (int)xgpunvml_dev.cc_minor;
	return NVML_SUCCESS;
}

/* nvmlDeviceArchitecture_t of the compute capability */
EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
					      unsigned int *arch)
{
	unsigned int cc;

	CHECK(device);
	if (!arch)
		return NVML_ERROR_INVALID_ARGUMENT;
	cc = xgpunvml_dev.cc_major * 10 + xgpunvml_dev.cc_minor;
	if (cc >= 100)
		*arch = 10;	/* Blackwell */
	else if (cc >= 90)
		*arch = 9;	/* Hopper */
	else if (cc == 89)
		*arch = 8;	/* Ada */
	else if (cc >= 80)
		*arch = 7;	/* Ampere */
	else if (cc == 75)
		*arch = 6;	/* Turing */
	else if (cc >= 70)
		*arch = 5;	/* Volta */
	else if (cc >= 60)
		*arch = 4;	/* Pascal */
	else if (cc >= 50)
		*arch = 3;	/* Maxwell */
	else
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device,
						unsigned int *bits)
{
	CHECK(device);
	if (!bits)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!xgpunvml_dev.mem_bus_width)
		return NVML_ERROR_NOT_SUPPORTED;
	*bits = xgpunvml_dev.mem_bus_width;
	return NVML_SUCCESS;
}

/* the clocks the GPU runs at most (the driver's attributes); what they
 * are now is not the guest's to see */
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device,
					      unsigned int type,
					      unsigned int *mhz)
{
	uint32_t khz;

	CHECK(device);
	if (!mhz)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (type == NVML_CLOCK_GRAPHICS || type == NVML_CLOCK_SM)
		khz = xgpunvml_dev.clock_khz;
	else if (type == NVML_CLOCK_MEM)
		khz = xgpunvml_dev.mem_clock_khz;
	else
		khz = 0;
	if (!khz)
		return NVML_ERROR_NOT_SUPPORTED;
	*mhz = khz / 1000;
	return NVML_SUCCESS;
}

/* ---- modes a guest's GPU has ------------------------------------------------ */

static nvmlReturn_t zero(nvmlDevice_t device, unsigned int *out)
{
	CHECK(device);
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	*out = 0;
	return NVML_SUCCESS;
}

/* no display: NVML_FEATURE_DISABLED */
EXPORT nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t d, unsigned int *m)
{
	return zero(d, m);
}

EXPORT nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t d,
					       unsigned int *m)
{
	return zero(d, m);
}

/* NVML_COMPUTEMODE_DEFAULT: every process of the guest may use it */
EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, unsigned int *m)
{
	return zero(d, m);
}

/* not a MIG device, and none to enumerate */
EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d,
						unsigned int *is_mig)
{
	return zero(d, is_mig);
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d,
						   unsigned int *count)
{
	return zero(d, count);
}

/* NVML_GPU_VIRTUALIZATION_MODE_NONE: no NVIDIA virtualization (the
 * sharing is xgpu's, below NVML); nvidia-smi then takes its bare-metal
 * path and asks for no vGPU licence or host data */
EXPORT nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t d,
						    unsigned int *mode)
{
	return zero(d, mode);
}

/*
 * Every field answers NOT_SUPPORTED in its own nvmlReturn (entries of 40
 * bytes: fieldId, scopeId, timestamp, latencyUsec, valueType, nvmlReturn
 * at 28, value), the call itself succeeds, as NVML's does for fields a
 * device does not have.
 */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int n,
					     void *values)
{
	nvmlReturn_t ns = NVML_ERROR_NOT_SUPPORTED;

	CHECK(device);
	if (n < 0 || (n && !values))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < n; i++)
		memcpy((uint8_t *)values + (size_t)i * 40 + 28, &ns,
		       sizeof(ns));
	return NVML_SUCCESS;
}

/* ---- memory ----------------------------------------------------------------- */

static nvmlReturn_t memory(nvmlDevice_t device, unsigned long long *total,
			   unsigned long long *used)
{
	struct xgpunvml_status *s;
	nvmlReturn_t rc;

	CHECK(device);
	rc = xgpunvml_status(&s);
	if (rc)
		return rc;
	*total = s->r.total;
	*used = s->r.used;
	free(s);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
					    nvmlMemory_t *m)
{
	unsigned long long total = 0, used = 0;
	nvmlReturn_t rc;

	CHECK(device);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = memory(device, &total, &used);
	if (rc)
		return rc;
	m->total = total;
	m->used = used;
	m->free = total > used ? total - used : 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
					       nvmlMemory_v2_t *m)
{
	nvmlMemory_t v1;
	nvmlReturn_t rc;

	CHECK(device);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	rc = nvmlDeviceGetMemoryInfo(device, &v1);
	if (rc)
		return rc;
	m->total = v1.total;
	m->reserved = 0;
	m->used = v1.used;
	m->free = v1.free;
	return NVML_SUCCESS;
}

/* ---- utilisation -------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
						  nvmlUtilization_t *u)
{
	struct xgpunvml_status *s;
	nvmlReturn_t rc;

	CHECK(device);
	if (!u)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = xgpunvml_status(&s);
	if (rc)
		return rc;
	rc = s->r.util_valid ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
	if (!rc) {
		u->gpu = (s->r.util_pm + 5) / 10;
		if (u->gpu > 100)
			u->gpu = 100;
		/* how busy memory was is not measured */
		u->memory = 0;
	}
	free(s);
	return rc;
}

/* ---- processes ------------------------------------------------------------------ */

/*
 * The guest's processes with a CUDA context, one entry per pid (a pid
 * with several channels sums them), into procs; NVML's protocol: with too
 * small an array (NULL and 0 to ask), NVML_ERROR_INSUFFICIENT_SIZE and the
 * count.  stride: the caller's entry size; v1: the 16-byte entries.
 */
static nvmlReturn_t processes(nvmlDevice_t device, unsigned int *count,
			      void *procs, size_t stride, bool v1)
{
	struct xgpunvml_status *s;
	unsigned int n = 0;
	nvmlReturn_t rc;

	CHECK(device);
	if (!count || (!procs && *count))
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = xgpunvml_status(&s);
	if (rc)
		return rc;
	/* fold entries of one pid into its first */
	for (uint32_t i = 0; i < s->r.nproc; i++) {
		uint32_t j;

		for (j = 0; j < n; j++)
			if (s->p[j].pid == s->p[i].pid)
				break;
		if (j < n) {
			s->p[j].mem_used += s->p[i].mem_used;
			continue;
		}
		s->p[n++] = s->p[i];
	}
	if (*count < n) {
		*count = n;
		free(s);
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *e = (uint8_t *)procs + i * stride;

		if (v1) {
			nvmlProcessInfo_v1_t p = { s->p[i].pid,
						   s->p[i].mem_used };

			memcpy(e, &p, sizeof(p));
		} else {
			nvmlProcessInfo_t p = { s->p[i].pid, s->p[i].mem_used,
						NVML_NO_MIG_ID,
						NVML_NO_MIG_ID };

			memcpy(e, &p, sizeof(p));
		}
	}
	*count = n;
	free(s);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
	nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_t *procs)
{
	return processes(device, count, procs, sizeof(*procs), false);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(
	nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_t *procs)
{
	return processes(device, count, procs, sizeof(*procs), false);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(
	nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v1_t *procs)
{
	return processes(device, count, procs, sizeof(*procs), true);
}

/* a guest runs no graphics and no MPS on its GPU: none */
static nvmlReturn_t no_processes(nvmlDevice_t device, unsigned int *count)
{
	CHECK(device);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

/* the graphics and MPS lists, each in its three ABIs */
#define NO_PROCESSES(name, info)					\
	EXPORT nvmlReturn_t name(nvmlDevice_t device, unsigned int *count, \
				 info *procs)				\
	{								\
		(void)procs;						\
		return no_processes(device, count);			\
	}

NO_PROCESSES(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t)
NO_PROCESSES(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlProcessInfo_t)
NO_PROCESSES(nvmlDeviceGetGraphicsRunningProcesses, nvmlProcessInfo_v1_t)
NO_PROCESSES(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlProcessInfo_t)
NO_PROCESSES(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlProcessInfo_t)
NO_PROCESSES(nvmlDeviceGetMPSComputeRunningProcesses, nvmlProcessInfo_v1_t)

/*
 * The process list of nvidia-smi 580's private table (xgpunvml_etbl.c):
 * entries of `stride` bytes, pid at 0, memory at 8, MIG ids at 16 and 20,
 * protected memory at 24, the name from 32 (NUL-terminated, name_len
 * bytes).  *count: the room in, the entries out.
 */
nvmlReturn_t xgpunvml_etbl_processes(nvmlDevice_t device, unsigned int *count,
				     uint8_t *arr, size_t stride,
				     size_t name_len)
{
	struct xgpunvml_status *s;
	unsigned int n = 0;
	nvmlReturn_t rc;

	CHECK(device);
	rc = xgpunvml_status(&s);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < s->r.nproc && n < *count; i++) {
		uint8_t *e = arr + (size_t)n * stride;
		uint32_t mig = NVML_NO_MIG_ID;
		uint64_t zero64 = 0;

		memset(e, 0, stride);
		memcpy(e, &s->p[i].pid, 4);
		memcpy(e + 8, &s->p[i].mem_used, 8);
		memcpy(e + 16, &mig, 4);
		memcpy(e + 20, &mig, 4);
		memcpy(e + 24, &zero64, 8);
		/* an entry without a name is not shown */
		if (!xgpunvml_proc_name(s->p[i].pid, s->p[i].name,
					(char *)e + 32, name_len))
			snprintf((char *)e + 32, name_len, "?");
		n++;
	}
	*count = n;
	free(s);
	return NVML_SUCCESS;
}
