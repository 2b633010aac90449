// SPDX-License-Identifier: MIT
/*
 * xgpub_op_nvml.c: NVML_DEVICE and NVML_STATUS, what the guest's NVML
 * library (xen-frontend/nvml) shows of the guest's GPU: its identity from
 * the driver, its memory, GPU share and processes from the status slots.
 *
 * Neither needs a CUDA context, and the dispatcher makes none for them
 * (xgpub_worker.c): a channel that sends only these (nvidia-smi, pynvml)
 * costs the GPU nothing.
 *
 * What "the guest" is: the quota's account (struct xgpub_wctl.acct), a
 * Xen domain or a local user.  Its memory is what its workers hold
 * (xgpub_guest_mem_used), its size the quota where there is one.  Its GPU
 * share is the sum of its workers' util_pm, which the daemon works out
 * once a second from the GPU time each worker measures (xgpub_gate.c) and
 * the work it has in flight: the same GPU time the scheduler charges.
 * Its processes are its workers that made a context, with the pid the
 * transport learnt (SO_PEERCRED, or the Xen frontend's node).
 */
#include <stdio.h>
#include <string.h>

#include "xgpub_worker.h"

/* the host driver's version from the kernel module's banner, "" if none:
 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  <date>" */
static void host_driver_version(char *out, size_t len)
{
	char line[256], *p, *e;
	FILE *f = fopen("/proc/driver/nvidia/version", "re");

	out[0] = 0;
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (p = strstr(line, "Module"))) {
		p += strlen("Module");
		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; (*e >= '0' && *e <= '9') || *e == '.'; e++)
			;
		if (e > p && (size_t)(e - p) < len) {
			memcpy(out, p, (size_t)(e - p));
			out[e - p] = 0;
		}
	}
	fclose(f);
}

static uint32_t attr(struct xgpub_worker *w, CUdevice_attribute a)
{
	int v = 0;

	if (w->D->cuDeviceGetAttribute(&v, a, w->dev) || v < 0)
		return 0;
	return (uint32_t)v;
}

XGPUB_HANDLER(NVML_DEVICE)
{
	struct xgpub_driver *D = w->D;
	int rc, v = 0;

	rc = xgpub_device_ident(w, r->name, sizeof(r->name), &r->total_mem,
				r->uuid, true);
	if (rc)
		return rc;
	r->quota = w->opt->quota;
	if (D->cuDeviceGetPCIBusId(r->bus_id, (int)sizeof(r->bus_id), w->dev))
		r->bus_id[0] = 0;
	r->bus_id[sizeof(r->bus_id) - 1] = 0;
	host_driver_version(r->driver_version, sizeof(r->driver_version));
	rc = D->cuDriverGetVersion(&v);
	if (rc)
		return rc;
	r->cuda_version = v;
	r->device_count = 1;
	r->pci_domain = attr(w, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
	r->pci_bus = attr(w, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
	r->pci_device = attr(w, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
	r->pci_device_id = attr(w, CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID);
	r->pci_subsystem_id = attr(w, CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID);
	r->cc_major = attr(w, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	r->cc_minor = attr(w, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	r->sm_count = attr(w, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	r->mem_bus_width = attr(w, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	r->clock_khz = attr(w, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
	r->mem_clock_khz = attr(w, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
	return 0;
}

XGPUB_HANDLER(NVML_STATUS)
{
	struct xgpub_driver *D = w->D;
	uint32_t cap = rt->cap / sizeof(struct xgpuif_nvml_proc);
	uint64_t acct = 0, util = 0;
	size_t total = 0;
	int rc;

	rc = D->cuDeviceTotalMem_v2(&total, w->dev);
	if (rc)
		return rc;
	r->total = w->opt->quota ? w->opt->quota : total;
	r->used = xgpub_guest_mem_used(w);
	if (!xgpub_all_stats || !xgpub_self_stat) {
		/* a worker run inline (tests): itself alone */
		rt->len = 0;
		return 0;
	}
	r->util_valid = __atomic_load_n(&xgpub_wctl_of(xgpub_self_stat)->
					sched_on, __ATOMIC_RELAXED) != 0;
	acct = __atomic_load_n(&xgpub_wctl_of(xgpub_self_stat)->acct,
			       __ATOMIC_ACQUIRE);
	for (int i = 0; acct && i < xgpub_nstats; i++) {
		const struct xgpub_wslot *s = &xgpub_all_stats[i];
		struct xgpuif_nvml_proc p;

		if (__atomic_load_n(&s->ctl.acct, __ATOMIC_ACQUIRE) != acct)
			continue;
		util += __atomic_load_n(&s->ctl.util_pm, __ATOMIC_RELAXED);
		if (!__atomic_load_n(&s->st.connected, __ATOMIC_ACQUIRE) ||
		    !__atomic_load_n(&s->st.has_ctx, __ATOMIC_ACQUIRE))
			continue;
		r->nproc_all++;
		if (r->nproc >= cap)
			continue;
		memset(&p, 0, sizeof(p));
		p.pid = __atomic_load_n(&s->st.pid, __ATOMIC_RELAXED);
		p.mem_used = __atomic_load_n(&s->st.mem_used,
					     __ATOMIC_RELAXED);
		memcpy(p.name, s->st.proc, sizeof(p.name));
		p.name[sizeof(p.name) - 1] = 0;
		memcpy(rt->p + r->nproc * sizeof(p), &p, sizeof(p));
		r->nproc++;
	}
	r->util_pm = util > 1000 ? 1000 : (uint32_t)util;
	rt->len = r->nproc * (uint32_t)sizeof(struct xgpuif_nvml_proc);
	return 0;
}
