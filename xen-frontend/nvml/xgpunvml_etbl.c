// SPDX-License-Identifier: MIT
/*
 * xgpunvml_etbl.c: nvmlInternalGetExportTable, the private table that
 * nvidia-smi 580 asks for before it lists anything.
 *
 * What nvidia-smi needs of it (shared/research/nvml-and-metrics.md, 1.2,
 * from observations of nvidia-smi 580.65.06): table id
 * 6c3efec4-8fc9-4e6c-a327-ee696e12f7c4; slot 0 the table's size in bytes,
 * more than 0x288 or slot 81 is not used; 8-byte slots of functions:
 *   81       the device handle of an index: (index, nvmlDevice_t *, 0x22)
 *   213-215  the process lists of the default table, -q and
 *            --query-compute-apps: (device, unsigned *count (in: room,
 *            out: entries), entries of 4128 bytes); the count must be
 *            written, and an entry without a name is not shown
 *   230      the host's largest PCIe generation: (device, unsigned *)
 *   20, 197  GPU reset and its completion
 * Any other slot is answered as nvidia-smi expects of a device without
 * the feature: NVML_SUCCESS, and for a call on our device with a second
 * argument, an empty count written there (left as it was, nvidia-smi
 * walks an array nobody wrote).  Every slot has a function of its own, so
 * that the dispatcher knows which slot was called.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xgpunvml.h"
#include "xgpulib_env.h"


#define NSLOTS			512u
#define SLOT_GPU_RESET		20u
#define SLOT_HANDLE_BY_INDEX	81u
#define SLOT_RESET_DONE		197u
#define SLOT_PROCS_FIRST	213u
#define SLOT_PROCS_LAST		215u
#define SLOT_HOST_PCIE_GEN	230u
#define PROC_ENTRY_BYTES	4128u
#define PROC_NAME_OFF		32u

static const uint8_t smi_table_id[16] = {
	0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
	0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4,
};

static bool our_device(const void *p)
{
	for (unsigned int i = 0; i < XGPUNVML_MAX_DEV; i++)
		if (p == &xgpunvml_devs[i])
			return xgpunvml_check(&xgpunvml_devs[i]) ==
			       NVML_SUCCESS;
	return false;
}

static nvmlReturn_t slot_call(unsigned int slot, void *a0, void *a1,
			      void *a2, void *a3)
{
	uintptr_t index = (uintptr_t)a0;

	(void)a3;
	if (slot == SLOT_HANDLE_BY_INDEX && (uintptr_t)a2 == 0x22 && a1) {
		if (index > UINT32_MAX)
			return NVML_ERROR_INVALID_ARGUMENT;
		return nvmlDeviceGetHandleByIndex_v2((unsigned int)index,
						     (nvmlDevice_t *)a1);
	}
	/* a guest may not reset the host's GPU */
	if (slot == SLOT_GPU_RESET && our_device(a0))
		return NVML_ERROR_NO_PERMISSION;
	if (slot == SLOT_RESET_DONE)
		return NVML_SUCCESS;
	if (!a1 || !our_device(a0))
		return NVML_SUCCESS;	/* not a call about a device */
	if (slot >= SLOT_PROCS_FIRST && slot <= SLOT_PROCS_LAST && a2) {
		unsigned int *count = a1;

		if (*count > 65536)
			return NVML_ERROR_INVALID_ARGUMENT;
		return xgpunvml_etbl_processes(a0, count, a2,
					       PROC_ENTRY_BYTES,
					       PROC_ENTRY_BYTES -
						       PROC_NAME_OFF);
	}
	/* the host's PCIe link is not the guest's to see */
	if (slot == SLOT_HOST_PCIE_GEN)
		return NVML_ERROR_NOT_SUPPORTED;
	*(unsigned int *)a1 = 0;
	return NVML_SUCCESS;
}

/* slot_call, logged under XGPU_DEBUG (a slot nvidia-smi uses in a way
 * this table does not know shows here first) */
static nvmlReturn_t traced(unsigned int slot, void *a0, void *a1, void *a2,
			   void *a3)
{
	nvmlReturn_t rc = slot_call(slot, a0, a1, a2, a3);

	if (xgpulib_debug_on())
		fprintf(stderr, "xgpu nvml: export slot %u (%p, %p, %p) -> %d\n",
			slot, a0, a1, a2, (int)rc);
	return rc;
}

/* a function per slot: slot a*64 + b*8 + c is slot_abc */
#define SLOT_FN(a, b, c)                                                      \
	static nvmlReturn_t slot_##a##b##c(void *a0, void *a1, void *a2,      \
					   void *a3)                          \
	{                                                                     \
		return traced(a * 64u + b * 8u + c, a0, a1, a2, a3);          \
	}
#define SLOT_ADDR(a, b, c) (uintptr_t)slot_##a##b##c,
#define C8(M, a, b) M(a, b, 0) M(a, b, 1) M(a, b, 2) M(a, b, 3) M(a, b, 4) \
	M(a, b, 5) M(a, b, 6) M(a, b, 7)
#define B8(M, a) C8(M, a, 0) C8(M, a, 1) C8(M, a, 2) C8(M, a, 3)           \
	C8(M, a, 4) C8(M, a, 5) C8(M, a, 6) C8(M, a, 7)
#define ALL(M) B8(M, 0) B8(M, 1) B8(M, 2) B8(M, 3) B8(M, 4) B8(M, 5)      \
	B8(M, 6) B8(M, 7)

ALL(SLOT_FN)

/* in slot order; slot 0 of the table is its size */
static const uintptr_t slot_fns[NSLOTS] = { ALL(SLOT_ADDR) };
static uintptr_t table[NSLOTS];

EXPORT nvmlReturn_t nvmlInternalGetExportTable(const void **table_out,
					       const uint8_t *id)
{
	if (!table_out || !id)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (memcmp(id, smi_table_id, sizeof(smi_table_id)))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!__atomic_load_n(&table[0], __ATOMIC_ACQUIRE)) {
		for (unsigned int i = 1; i < NSLOTS; i++)
			table[i] = slot_fns[i];
		__atomic_store_n(&table[0], (uintptr_t)sizeof(table),
				 __ATOMIC_RELEASE);
	}
	*table_out = table;
	return NVML_SUCCESS;
}
