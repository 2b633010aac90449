// SPDX-License-Identifier: MIT
/*
 * xgpub_op_device.c: INIT, DEVICE_INFO and EXPORT_TABLE_SIZE.
 *
 * A worker exposes exactly one GPU, the host device w->dev, which the
 * guest sees as its device 0.  DEVICE_INFO hands over everything
 * immutable about it at once: the guest answers every device query from
 * that copy.
 */
#include <string.h>

#include "xgpub_worker.h"

XGPUB_HANDLER(INIT)
{
	int version = 0;
	int rc;

	if (a->guest_version != XGPUIF_VERSION) {
		xgpub_err("%s: guest library speaks protocol %u, this backend "
			  "%u", w->t->who, a->guest_version, XGPUIF_VERSION);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	/* cuInit accepts no flags today */
	if (a->flags)
		return CUDA_ERROR_INVALID_VALUE;
	rc = w->D->cuDriverGetVersion(&version);
	if (rc)
		return rc;
	r->driver_version = version;
	r->device_count = 1;
	return 0;
}

int xgpub_device_ident(struct xgpub_worker *w, char *name, size_t len,
		       uint64_t *total, uint8_t uuid[16], bool need_uuid)
{
	struct xgpub_driver *D = w->D;
	size_t bytes = 0;
	CUuuid u;
	int rc;

	rc = D->cuDeviceGetName(name, (int)len, w->dev);
	if (rc)
		return rc;
	name[len - 1] = 0;
	rc = D->cuDeviceTotalMem_v2(&bytes, w->dev);
	if (rc)
		return rc;
	*total = bytes;
	memset(&u, 0, sizeof(u));
	rc = D->cuDeviceGetUuid_v2(&u, w->dev);
	if (rc && need_uuid)
		return rc;
	memcpy(uuid, u.bytes, sizeof(u.bytes));
	return 0;
}

XGPUB_HANDLER(DEVICE_INFO)
{
	struct xgpub_driver *D = w->D;
	int rc;

	if (a->ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	rc = xgpub_device_ident(w, r->name, sizeof(r->name), &r->total_mem,
				r->uuid, false);
	if (rc)
		return rc;
	/* with a quota, the guest's device is only as large as its share */
	if (w->opt->quota && w->opt->quota < r->total_mem)
		r->total_mem = w->opt->quota;
	if (D->cuDeviceGetAttribute(&r->pci_domain,
				    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, w->dev))
		r->pci_domain = 0;
	if (D->cuDeviceGetAttribute(&r->pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
				    w->dev))
		r->pci_bus = 0;
	if (D->cuDeviceGetAttribute(&r->pci_device,
				    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, w->dev))
		r->pci_device = 0;
	r->nattrs = XGPUIF_NUM_DEV_ATTRS;
	for (uint32_t i = 0; i < XGPUIF_NUM_DEV_ATTRS; i++) {
		int v = 0;

		if (D->cuDeviceGetAttribute(&v, (CUdevice_attribute)i,
					    w->dev) == CUDA_SUCCESS) {
			r->attrs[i] = v;
			r->attr_valid[i] = 1;
		}
	}
	return 0;
}

/*
 * The host driver's answer for an export table the guest library does not
 * know: its size in bytes (slot 0), or the driver's error.  Only the size
 * crosses: the table's functions are the host's and stay here.  A slot 0
 * that is no plausible size (a table without one) answers 0.
 */
XGPUB_HANDLER(EXPORT_TABLE_SIZE)
{
	const void *tbl = NULL;
	CUuuid id;
	uintptr_t size;
	int rc;

	memcpy(id.bytes, a->uuid, sizeof(id.bytes));
	rc = w->D->cuGetExportTable(&tbl, &id);
	if (rc)
		return rc;
	if (!tbl)
		return CUDA_ERROR_NOT_FOUND;
	size = *(const uintptr_t *)tbl;
	r->value = size % sizeof(void *) || size > XGPUIF_MAX_ETBL_BYTES ?
		   0 : size;
	return CUDA_SUCCESS;
}
