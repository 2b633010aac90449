/* SPDX-License-Identifier: MIT */
/*
 * xgpuif.h: the xgpu wire protocol between a guest (frontend) and the
 * Dom0 backend (xen-gpubackd and its per-guest workers).
 *
 * This header is the whole binary contract; shared-ring/xgpuif.md is the
 * prose specification beside it and is authoritative where they differ.
 *
 * Transport-independent parts:
 *   - one command ring per channel, built with Xen's DEFINE_RING_TYPES,
 *     whose slots are XGPUIF_SLOT_SIZE bytes;
 *   - a data area of shared pages for bulk data (copies, module images);
 *   - host-memory regions (guest pinned memory) shared with the worker.
 *
 * Every field is fixed width, every struct has explicit padding that must
 * be zero, and every struct's size is asserted at compile time (the
 * per-op ones at the end of xgpuif-ops.h, the others below).  Opcodes
 * are numbered explicitly in xgpu_calls.def, one row and one line of
 * description per op, and a retired number is never reused.
 *
 * Xenstore nodes (Xen transport; xgpuif.md "Xen transport" is the prose):
 *
 *  Backend  /local/domain/0/backend/xgpu/<domid>/<devid>/
 *   frontend, frontend-id, state        written by the toolstack (xgpu attach)
 *   hotplug-status                      "connected" from the hotplug script
 *   max-ring-page-order   uint  largest ring order the backend accepts
 *   max-data-pages        uint  largest data area of one channel, in pages
 *   max-channels          uint  channels (processes) one device may open
 *   ch/<n>/state          uint  backend state of channel n
 *   ch/<n>/error          str   why channel n was refused or closed
 *  Frontend /local/domain/<domid>/device/xgpu/<devid>/
 *   backend, backend-id, state          written by the toolstack
 *   protocol-version      uint  XGPUIF_VERSION (before Initialised)
 *   ch/<n>/ring-page-order uint log2 of the ring pages (0..max)
 *   ch/<n>/ring-ref<i>    uint  grant ref of ring page i, i < 2^order
 *   ch/<n>/data-pages     uint  data area pages (1..max)
 *   ch/<n>/data-dir-ref<j> uint grant ref of directory page j: each
 *                               holds 1024 little-endian uint32 grant refs
 *                               of data pages, j < ceil(data-pages / 1024)
 *   ch/<n>/event-channel  uint  unbound port for the backend
 *   ch/<n>/name, ch/<n>/pid     informative: the process
 *   ch/<n>/state          uint  frontend state of channel n
 *
 * Device state (standard xenbus, as blkif/pvcalls):
 *   front Initialising -> back InitWait (limits published, after
 *   hotplug-status) -> front Initialised (protocol-version written) ->
 *   back Connected -> front Connected.  Either end Closing -> Closed.
 * Channel state (under ch/<n>; the frontend numbers its channels 0, 1, 2...
 * and never reuses a number while the device lives; the backend serves at
 * most max-channels at once and refuses the rest with ch/<n>/error):
 *   front Initialised (refs written in one transaction) -> back maps,
 *   binds, Connected (or writes ch/<n>/error and Closed) -> front
 *   Connected.  Front Closing -> back unmaps, Closed -> front ends its
 *   grants and removes ch/<n>; back then removes its ch/<n>.
 */
#ifndef XGPUIF_H
#define XGPUIF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Xen's ring macros take their barriers from the includer (the kernel has
 * its own).  Between two processes or domains C11 fences give exactly the
 * ordering the macros document; xen_rmb after reading a producer index
 * pairs with the other side's xen_wmb before publishing it.  A modern
 * interface version keeps ring.h from mapping them to mb()/rmb()/wmb().
 */
#ifndef __XEN_INTERFACE_VERSION__
#define __XEN_INTERFACE_VERSION__ 0x00040e00
#endif
#ifndef xen_mb
#define xen_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define xen_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define xen_wmb()	__atomic_thread_fence(__ATOMIC_RELEASE)
#endif
#include <xen/io/ring.h>

#define XGPUIF_VERSION		2u

#define XGPUIF_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), #type " must be " #size " bytes")
#define XGPUIF_MAGIC		0x58475055u	/* "XGPU" */

/* One ring slot.  Messages occupy one or more consecutive slots. */
#define XGPUIF_SLOT_SIZE	128u
#define XGPUIF_HDR_SIZE		32u
#define XGPUIF_SLOT0_PAYLOAD	(XGPUIF_SLOT_SIZE - XGPUIF_HDR_SIZE)

/* Largest message: 256 slots, about 32 KiB (kernel parameters may be). */
#define XGPUIF_MAX_SLOTS	256u
#define XGPUIF_MAX_PAYLOAD \
	(XGPUIF_SLOT0_PAYLOAD + (XGPUIF_MAX_SLOTS - 1) * XGPUIF_SLOT_SIZE)

/* Ring sizes: 2^order pages of 4 KiB; 256 slots fit in order 4. */
#define XGPUIF_PAGE_SIZE	4096u
#define XGPUIF_MAX_RING_ORDER	6u
#define XGPUIF_DEFAULT_RING_ORDER 4u

/*
 * The backend's last word on a channel it ends on purpose: written into
 * the ring header's private byte (sring->pvt.pvt_pad[0]) just before the
 * worker exits, read by the guest when it finds the channel gone.
 */
#define XGPUIF_FAULT_NONE	0u
#define XGPUIF_FAULT_TIMEOUT	1u	/* GPU work ran past the host's limit */

/* request flags */
#define XGPUIF_RF_POSTED	0x01u	/* fire and forget: the guest does not
					 * wait; errors surface at the next
					 * synchronising call */

/*
 * reply flags: what the backend tells the guest beside the reply (set on
 * replies to synchronous requests only)
 */
#define XGPUIF_SF_OUTPUT	0x1u	/* device output (a kernel's printf) is
					 * waiting in the worker: fetch it with
					 * XGPUIF_OP_DEVICE_OUTPUT */
#define XGPUIF_SF_LOGS		0x2u	/* messages of the driver's error log
					 * for the guest's callbacks are
					 * waiting: fetch them with
					 * XGPUIF_OP_LOGS_TAKE */
#define XGPUIF_SF_FENCED	0x4u	/* the work is queued with a write of
					 * the request's fence value after it
					 * (XGPUIF_CF_FENCE): done once the
					 * guest sees the value */

/*
 * The first slot of a request.  `nslots` slots are consumed: the header,
 * then (nslots - 1) slots of raw payload bytes.  The payload is `len`
 * bytes, header slot first.  A guest that expects a reply longer than its
 * request pads the request to as many slots as the reply needs: a reply
 * always occupies exactly the slots of its request, which keeps Xen's
 * one-response-per-request accounting of the shared ring.
 */
struct xgpuif_request {
	uint64_t id;		/* chosen by the guest, echoed in the reply */
	uint16_t op;		/* XGPUIF_OP_* */
	uint16_t nslots;	/* 1..XGPUIF_MAX_SLOTS */
	uint32_t len;		/* payload bytes, <= nslots payload capacity */
	uint64_t ctx;		/* guest handle of the caller's current
				 * context, 0 for none */
	uint8_t flags;		/* XGPUIF_RF_* */
	uint8_t _pad[7];
	uint8_t payload[XGPUIF_SLOT0_PAYLOAD];
};

struct xgpuif_response {
	uint64_t id;		/* the request's id */
	uint16_t op;		/* the request's op */
	uint16_t nslots;	/* the request's nslots */
	uint32_t len;		/* payload bytes */
	int32_t status;		/* XGPUIF_ST_* or a CUresult value */
	uint32_t flags;		/* XGPUIF_SF_* */
	uint32_t _pad[2];
	uint8_t payload[XGPUIF_SLOT0_PAYLOAD];
};

DEFINE_RING_TYPES(xgpuif, struct xgpuif_request, struct xgpuif_response);

/*
 * Status.  Non-negative values are CUresult numbers of the CUDA Driver
 * API (a public, stable ABI: 0 success, 1 invalid value, 2 out of
 * memory, ...).  Negative values are xgpu's own.
 */
#define XGPUIF_ST_OK		0
#define XGPUIF_ST_PROTO		(-1)	/* malformed request; the channel is
					 * closed after this reply */
#define XGPUIF_ST_NOT_IMPL	(-2)	/* unknown op */

/*
 * References to shared memory inside requests.  Region 0 is the channel's
 * data area; other region ids name host-memory regions that the guest
 * registered with XGPUIF_OP_HOSTMEM_REGISTER.  The backend checks
 * off + len against the region's size before touching it.
 */
#define XGPUIF_REGION_DATA	0u
/*
 * HOST_REGISTER over the network alone: no pages travel; the worker maps
 * fresh memory of its own at guest_va (refused where that address is
 * taken there) and pins it, so that the device pointer is guest_va; the
 * guest moves the bytes with copies (xgpulib_shadow.h).
 */
#define XGPUIF_REGION_ANON	0xffffffffu

struct xgpuif_memref {
	uint64_t off;
	uint64_t len;
	uint32_t region;
	uint32_t _pad;
};

/*
 * Handles.  Every object the backend creates for a guest (contexts,
 * modules, libraries, kernels, functions, streams, events, blobs,
 * texture objects kept for bookkeeping) is named on the wire by a
 * 64-bit handle from a per-guest table: (generation << 32) | (index + 1),
 * generations starting at 1.
 * 0 is the null handle.  Stream handles 1 and 2 are CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD; table handles never take those values.  Device
 * pointers are the guest's own GPU virtual addresses in its own context
 * and travel unchanged (kernels carry them in their parameters).
 */
typedef uint64_t xgpuif_handle_t;

#define XGPUIF_STREAM_LEGACY	1u
#define XGPUIF_STREAM_PER_THREAD 2u

/*
 * Local transport (processes and containers on the GPU host).  A
 * SOCK_SEQPACKET Unix socket carries the handshake; shared memory is a
 * sealed memfd (ring pages, then the data area) and notifications are two
 * eventfds.  Order of messages:
 *   backend -> guest  struct xgpuif_local_welcome (limits)
 *   guest -> backend  struct xgpuif_local_connect + SCM_RIGHTS
 *                     [memfd, kick-backend eventfd, kick-guest eventfd]
 *   backend -> guest  struct xgpuif_local_status (0: connected)
 * then, for every host-memory region, before its HOSTMEM_REGISTER request:
 *   guest -> backend  struct xgpuif_local_hostmem + SCM_RIGHTS [memfd]
 * The memfds must carry F_SEAL_SHRINK and F_SEAL_GROW (the backend refuses
 * one without them) so that the guest cannot pull pages from under the
 * worker; the guest library also adds F_SEAL_SEAL.
 */
#define XGPUIF_LOCAL_MAX_DATA_PAGES	(1u << 18)	/* 1 GiB */

/* Xen transport constants (see the xenstore nodes above) */
#define XGPUIF_XEN_DEVTYPE		"xgpu"
#define XGPUIF_XEN_REFS_PER_DIR		1024u	/* uint32 refs per dir page */
#define XGPUIF_XEN_MAX_DATA_PAGES	(1u << 16)	/* 256 MiB */
#define XGPUIF_XEN_DEFAULT_DATA_PAGES	(1u << 12)	/* 16 MiB */
#define XGPUIF_XEN_MAX_CHANNELS		64u

struct xgpuif_local_welcome {
	uint32_t magic;		/* XGPUIF_MAGIC */
	uint32_t version;	/* XGPUIF_VERSION */
	uint32_t max_ring_order;
	uint32_t max_data_pages;
	uint32_t client_id;	/* the backend's name for this guest */
	uint32_t _pad;
};

struct xgpuif_local_connect {
	uint32_t magic;
	uint32_t version;
	uint32_t ring_order;
	uint32_t data_pages;
	uint32_t pid;		/* informative only */
	uint32_t _pad;
	char name[32];		/* informative: the process name */
};

struct xgpuif_local_status {
	uint32_t magic;
	int32_t status;		/* 0, or a negative errno */
	char msg[120];		/* why, for the guest's error message */
};

struct xgpuif_local_hostmem {
	uint32_t magic;
	uint32_t region;
	uint64_t size;
};

/* the per-operation argument and reply layouts */
#include "xgpuif-ops.h"

/* opcodes, from the one table of forwarded calls */
enum xgpuif_op {
#define XGPU_CALL(num, name, ...) XGPUIF_OP_##name = num,
#include "xgpu_calls.def"
#undef XGPU_CALL
	XGPUIF_OP_MAX
};

/* ---- layout checks: every struct of the wire, in bytes ------------------ */

XGPUIF_ASSERT_SIZE(struct xgpuif_request, XGPUIF_SLOT_SIZE);
XGPUIF_ASSERT_SIZE(struct xgpuif_response, XGPUIF_SLOT_SIZE);
XGPUIF_ASSERT_SIZE(union xgpuif_sring_entry, XGPUIF_SLOT_SIZE);
XGPUIF_ASSERT_SIZE(struct xgpuif_memref, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_local_welcome, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_local_connect, 56);
XGPUIF_ASSERT_SIZE(struct xgpuif_local_status, 128);
XGPUIF_ASSERT_SIZE(struct xgpuif_local_hostmem, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_handle_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_init_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_init_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_uuid_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_device_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_device_info_reply, 1096);
XGPUIF_ASSERT_SIZE(struct xgpuif_dev_flags_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_ctx_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_ctx_state_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_limit_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_u64_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_u32_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_priority_range_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_info_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_alloc_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_dptr_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_alloc_pitch_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_alloc_pitch_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_dptr_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_range_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_hostmem_args, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_hostmem_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_region_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_memcpy_htod_args, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_memcpy_dtoh_args, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_memcpy_dtod_args, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_memset_args, 56);
XGPUIF_ASSERT_SIZE(struct xgpuif_ptr_attr_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_array_args, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_array_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_tex_mem, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_tex_desc, 56);
XGPUIF_ASSERT_SIZE(struct xgpuif_tex_view, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_texobj_args, 168);
XGPUIF_ASSERT_SIZE(struct xgpuif_texobj_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_blob_create_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_blob_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_blob_write_args, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_load_opt, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_load_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_load_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_symbol_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_global_reply, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_param, 4);
XGPUIF_ASSERT_SIZE(struct xgpuif_func_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_names_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_names_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_func_attr_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_func_attrs_reply, 80);
XGPUIF_ASSERT_SIZE(struct xgpuif_launch_attr, 72);
XGPUIF_ASSERT_SIZE(struct xgpuif_launch_args, 56);
XGPUIF_ASSERT_SIZE(struct xgpuif_occupancy_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_occ_cluster_args, 56);
XGPUIF_ASSERT_SIZE(struct xgpuif_i32_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_create_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_wait_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_event_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_event_record_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_elapsed_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_elapsed_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_alloc_async_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_free_async_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_mem_kind, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_create_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_attr_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_trim_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_device_pool_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_access_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_begin_capture_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_graph_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_capture_info_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_capture_info_reply, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_i32_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_instantiate_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_instantiate_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_graph_launch_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_add_node_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_memset, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_side, 56);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_copy, 136);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_host, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_memop, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_handle, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_exec_update_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_exec_update_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_graph_nodes_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_graph_nodes_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_hostfn_slot, 64);
XGPUIF_ASSERT_SIZE(struct xgpuif_hostfn_setup_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_hostfn_capture_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_hostfn_launch_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_prop, 24);
_Static_assert(offsetof(struct xgpuif_vmm_prop, compression) == 16 &&
	       offsetof(struct xgpuif_pool_create_args, max_size) == 16,
	       "what follows struct xgpuif_mem_kind starts at byte 16");
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_create_args, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_handle_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_reserve_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_range_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_map_args, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_access_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_granularity_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_vmm_props_reply, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_memop_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_attr_args, 80);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_attr_reply, 64);
XGPUIF_ASSERT_SIZE(struct xgpuif_tmap_args, 320);
XGPUIF_ASSERT_SIZE(struct xgpuif_tmap_reply, 128);
XGPUIF_ASSERT_SIZE(struct xgpuif_link_create_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_link_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_link_add_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_link_complete_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_link_read_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_link_read_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_ipc_handle, 64);
XGPUIF_ASSERT_SIZE(struct xgpuif_kernel_params_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_graph_deps_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_get_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_set_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_edges_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_edges_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_edge, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_enabled_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_find_clone_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_dot_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_dot_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_node_mem, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_graph_mem_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_uobj_create_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_uobj_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_uobj_ref_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_capture_graph_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_capture_deps_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_kernel_attr_args, 88);
XGPUIF_ASSERT_SIZE(struct xgpuif_kernel_attr_reply, 64);
XGPUIF_ASSERT_SIZE(struct xgpuif_cond_handle_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_add_cond_args, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_ipc_open_args, 72);
XGPUIF_ASSERT_SIZE(struct xgpuif_share_export_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_import_ptr_args, 72);
XGPUIF_ASSERT_SIZE(struct xgpuif_pool_ptr_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_output_reply, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_ctx_event_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_stream_pair_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_device_query_args, 144);
XGPUIF_ASSERT_SIZE(struct xgpuif_device_query_reply, 144);
XGPUIF_ASSERT_SIZE(struct xgpuif_peer_access_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_copy_side3d, 88);
XGPUIF_ASSERT_SIZE(struct xgpuif_memcpy3d_args, 232);
XGPUIF_ASSERT_SIZE(struct xgpuif_mipmap_args, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_subarray_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_subarray_reply, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_array_query_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_array_query_reply, 64);
XGPUIF_ASSERT_SIZE(struct xgpuif_ref_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_texref_set_args, 96);
XGPUIF_ASSERT_SIZE(struct xgpuif_texref_get_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_param_texref_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_texref_get_reply, 40);
XGPUIF_ASSERT_SIZE(struct xgpuif_devres, 144);
XGPUIF_ASSERT_SIZE(struct xgpuif_devres_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_devres_reply, 144);
XGPUIF_ASSERT_SIZE(struct xgpuif_sm_split_args, 160);
XGPUIF_ASSERT_SIZE(struct xgpuif_sm_split_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_resdesc_args, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_resdesc_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_green_create_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_green_reply, 8);
XGPUIF_ASSERT_SIZE(struct xgpuif_green_stream_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_nvml_device_reply, 296);
XGPUIF_ASSERT_SIZE(struct xgpuif_nvml_status_reply, 32);
XGPUIF_ASSERT_SIZE(struct xgpuif_nvml_proc, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_managed_alloc_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_managed_block_args, 48);
XGPUIF_ASSERT_SIZE(struct xgpuif_notify_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_decompress_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_decompress, XGPUIF_DECOMPRESS_SIZE);
XGPUIF_ASSERT_SIZE(struct xgpuif_decompress_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_map_array_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_array_map, 88);
_Static_assert(__builtin_offsetof(struct xgpuif_request, payload) ==
	       XGPUIF_HDR_SIZE, "request header is 32 bytes");
_Static_assert(__builtin_offsetof(struct xgpuif_response, payload) ==
	       XGPUIF_HDR_SIZE, "response header is 32 bytes");

/* the driver's error log (its messages' entries and dumps) */
XGPUIF_ASSERT_SIZE(struct xgpuif_log_entry, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_logs_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_logs_take_reply, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_logs_dump_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_logs_dump_reply, 16);

/* core dump settings */
XGPUIF_ASSERT_SIZE(struct xgpuif_coredump_args, 16);
XGPUIF_ASSERT_SIZE(struct xgpuif_coredump_reply, 8);

/* synchronize answered by the GPU */
XGPUIF_ASSERT_SIZE(struct xgpuif_fence_args, 24);
XGPUIF_ASSERT_SIZE(struct xgpuif_fence_reply, 8);

/*
 * The wire structs that carry a CUDA descriptor in the CUDA ABI's layout
 * (arrays and texture objects): field wf of w lies as member cf of c does
 * from c's member at on.  Checked where cuda.h comes first: in the guest
 * library and in the worker.
 */
#ifdef __cuda_cuda_h__
_Static_assert(sizeof(CUdevResource) == XGPUIF_DEVRES_BYTES,
	       "a CUdevResource travels as XGPUIF_DEVRES_BYTES bytes");
#define XGPUIF_ASSERT_ABI(w, wf, c, at, cf)				\
	_Static_assert(offsetof(w, wf) ==				\
		       offsetof(c, cf) - offsetof(c, at) &&		\
		       sizeof(((w *)0)->wf) == sizeof(((c *)0)->cf),	\
		       #w "." #wf " lies as " #c "." #cf)
#define XGPUIF_ABI_ARRAY(wf, cf)					\
	XGPUIF_ASSERT_ABI(struct xgpuif_array_args, wf,			\
			  CUDA_ARRAY3D_DESCRIPTOR, Width, cf)
#define XGPUIF_ABI_PITCH2D(wf, cf)					\
	XGPUIF_ASSERT_ABI(struct xgpuif_tex_mem, wf,			\
			  CUDA_RESOURCE_DESC, res.pitch2D, res.pitch2D.cf)
#define XGPUIF_ABI_LINEAR(wf, cf)					\
	XGPUIF_ASSERT_ABI(struct xgpuif_tex_mem, wf,			\
			  CUDA_RESOURCE_DESC, res.linear, res.linear.cf)
#define XGPUIF_ABI_TEX(wf, cf)						\
	XGPUIF_ASSERT_ABI(struct xgpuif_tex_desc, wf,			\
			  CUDA_TEXTURE_DESC, addressMode, cf)
#define XGPUIF_ABI_VIEW(wf, cf)						\
	XGPUIF_ASSERT_ABI(struct xgpuif_tex_view, wf,			\
			  CUDA_RESOURCE_VIEW_DESC, format, cf)
XGPUIF_ABI_ARRAY(width, Width);
XGPUIF_ABI_ARRAY(height, Height);
XGPUIF_ABI_ARRAY(depth, Depth);
XGPUIF_ABI_ARRAY(format, Format);
XGPUIF_ABI_ARRAY(channels, NumChannels);
XGPUIF_ABI_ARRAY(flags, Flags);
XGPUIF_ABI_PITCH2D(dptr, devPtr);
XGPUIF_ABI_PITCH2D(format, format);
XGPUIF_ABI_PITCH2D(channels, numChannels);
XGPUIF_ABI_PITCH2D(width, width);
XGPUIF_ABI_PITCH2D(height, height);
XGPUIF_ABI_PITCH2D(pitch, pitchInBytes);
XGPUIF_ABI_LINEAR(dptr, devPtr);
XGPUIF_ABI_LINEAR(format, format);
XGPUIF_ABI_LINEAR(channels, numChannels);
XGPUIF_ABI_LINEAR(width, sizeInBytes);
XGPUIF_ABI_TEX(address_mode, addressMode);
XGPUIF_ABI_TEX(filter_mode, filterMode);
XGPUIF_ABI_TEX(flags, flags);
XGPUIF_ABI_TEX(max_anisotropy, maxAnisotropy);
XGPUIF_ABI_TEX(mipmap_filter_mode, mipmapFilterMode);
XGPUIF_ABI_TEX(mipmap_level_bias, mipmapLevelBias);
XGPUIF_ABI_TEX(min_mipmap_level_clamp, minMipmapLevelClamp);
XGPUIF_ABI_TEX(max_mipmap_level_clamp, maxMipmapLevelClamp);
XGPUIF_ABI_TEX(border_color, borderColor);
XGPUIF_ABI_VIEW(format, format);
XGPUIF_ABI_VIEW(width, width);
XGPUIF_ABI_VIEW(height, height);
XGPUIF_ABI_VIEW(depth, depth);
XGPUIF_ABI_VIEW(first_mip, firstMipmapLevel);
XGPUIF_ABI_VIEW(last_mip, lastMipmapLevel);
XGPUIF_ABI_VIEW(first_layer, firstLayer);
XGPUIF_ABI_VIEW(last_layer, lastLayer);
/* and no more than the wire carries: whole, or up to reserved[] */
_Static_assert(sizeof(struct xgpuif_array_args) ==
	       sizeof(CUDA_ARRAY3D_DESCRIPTOR), "array descriptor size");
_Static_assert(sizeof(struct xgpuif_tex_mem) ==
	       sizeof(((CUDA_RESOURCE_DESC *)0)->res.pitch2D) &&
	       offsetof(struct xgpuif_tex_mem, height) ==
	       sizeof(((CUDA_RESOURCE_DESC *)0)->res.linear),
	       "pitch2D and linear resource sizes");
_Static_assert(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES == 1 &&
	       CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC == 2 &&
	       CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES == 3 &&
	       CU_MEMPOOL_ATTR_RELEASE_THRESHOLD == 4,
	       "the int pool attributes of xgpuif_pool_attr_is_int");
_Static_assert(sizeof(CUtensorMap) ==
	       sizeof(((struct xgpuif_tmap_reply *)0)->map), "tensor map size");
_Static_assert(sizeof(CUstreamBatchMemOpParams) == XGPUIF_MEMOP_SIZE,
	       "stream memory operation size");
_Static_assert(sizeof(CUstreamAttrValue) ==
	       sizeof(((struct xgpuif_stream_attr_args *)0)->value),
	       "stream attribute value size");
_Static_assert(sizeof(CUDA_ARRAY_MEMORY_REQUIREMENTS) <=
	       sizeof(struct xgpuif_array_query_reply) &&
	       sizeof(CUDA_ARRAY_SPARSE_PROPERTIES) <=
	       sizeof(struct xgpuif_array_query_reply),
	       "array query replies");
_Static_assert(sizeof(struct xgpuif_tex_desc) ==
	       offsetof(CUDA_TEXTURE_DESC, reserved), "texture desc size");
_Static_assert(sizeof(struct xgpuif_tex_view) ==
	       offsetof(CUDA_RESOURCE_VIEW_DESC, reserved), "view desc size");
#undef XGPUIF_ABI_VIEW
#undef XGPUIF_ABI_TEX
#undef XGPUIF_ABI_LINEAR
#undef XGPUIF_ABI_PITCH2D
#undef XGPUIF_ABI_ARRAY
#undef XGPUIF_ASSERT_ABI
#endif

/* slots needed for a message carrying `len` payload bytes */
static inline uint32_t xgpuif_slots_for(uint32_t len)
{
	if (len <= XGPUIF_SLOT0_PAYLOAD)
		return 1;
	return 1 + (len - XGPUIF_SLOT0_PAYLOAD + XGPUIF_SLOT_SIZE - 1) /
		   XGPUIF_SLOT_SIZE;
}

/* payload bytes that `nslots` slots can carry */
static inline uint32_t xgpuif_capacity(uint32_t nslots)
{
	return XGPUIF_SLOT0_PAYLOAD + (nslots - 1) * XGPUIF_SLOT_SIZE;
}

/* number of ring slots in a ring of 2^order pages */
static inline uint32_t xgpuif_ring_slots(unsigned int order)
{
	return __CONST_RING_SIZE(xgpuif, XGPUIF_PAGE_SIZE << order);
}

#endif /* XGPUIF_H */
