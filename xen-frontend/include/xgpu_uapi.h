/* SPDX-License-Identifier: MIT */
/*
 * xgpu_uapi.h: the boundary between the guest kernel module
 * xen-gpufront.ko (/dev/xgpu) and the guest library libcuda.so.1.
 *
 * One open file of /dev/xgpu is one channel to the Dom0 backend (one
 * worker process there).  The library:
 *   1. open("/dev/xgpu", O_RDWR | O_CLOEXEC);
 *   2. XGPU_IOC_CONNECT: the module allocates and grants the ring and the
 *      data area, allocates an event channel, publishes them under
 *      device/xgpu/<devid>/ch/<n>/ and waits until the backend has mapped
 *      them (or refused: the backend's reason comes back in `msg`);
 *   3. mmap(ring_offset, ring bytes) and mmap(data_offset, data bytes),
 *      MAP_SHARED, PROT_READ | PROT_WRITE;
 *   4. puts requests on the ring, XGPU_IOC_NOTIFY; sleeps in
 *      XGPU_IOC_WAIT (or poll()) for the backend's replies;
 *   5. XGPU_IOC_HOSTMEM_ALLOC for pinned host memory shared with the
 *      worker (cuMemHostAlloc): the module allocates and grants the pages,
 *      returns their grant refs and an mmap offset;
 *   6. close(): the module closes the channel (Closing, waits for the
 *      backend's Closed, bounded), then ends every grant; a page Dom0
 *      still maps is only freed once Dom0 unmaps it.
 *
 * All fields are fixed width with explicit padding, which must be zero.
 * IN: set by the caller; OUT: set by the module.  Errors are returned as
 * -1 with errno:
 *   ENODEV     the device is not (or no longer) connected to a backend
 *   EINVAL     a field out of range, non-zero padding, or a region id that
 *              is not this file's
 *   EBUSY      CONNECT on a file that is already connected, or on a
 *              device whose max-channels channels are all open (`msg`
 *              says so)
 *   ENOTCONN   NOTIFY/WAIT/HOSTMEM_* before CONNECT
 *   ECONNREFUSED  the backend refused the channel (`msg` says why)
 *   ETIMEDOUT  the backend did not answer CONNECT in time
 *   ENOSPC     no grant references left (see xl's max_grant_frames)
 *   ENOMEM     out of memory, or over the module's max_hostmem_mb
 *   EPIPE      the backend closed the channel (WAIT, NOTIFY)
 *   EINTR      a signal arrived while waiting (WAIT, CONNECT)
 */
#ifndef XGPU_UAPI_H
#define XGPU_UAPI_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <stdint.h>
#include <sys/ioctl.h>
typedef uint32_t __u32;
typedef uint64_t __u64;
#endif

#define XGPU_DEVICE_PATH	"/dev/xgpu"
#define XGPU_UAPI_VERSION	1u

struct xgpu_ioc_connect {
	__u32 version;		/* IN: XGPU_UAPI_VERSION */
	__u32 ring_order;	/* IN: 2^ring_order ring pages, <= backend's
				 * max-ring-page-order */
	__u32 data_pages;	/* IN: 1..backend's max-data-pages */
	__u32 _pad0;
	char name[32];		/* IN: process name, informative, NUL padded */
	__u32 max_ring_order;	/* OUT: the backend's limits (also filled
				 * when EINVAL says a request exceeds them) */
	__u32 max_data_pages;	/* OUT */
	__u32 channel;		/* OUT: n of device/xgpu/<devid>/ch/<n> */
	__u32 backend_domid;	/* OUT */
	__u64 ring_offset;	/* OUT: mmap offset of the ring (0) */
	__u64 data_offset;	/* OUT: mmap offset of the data area */
	char msg[128];		/* OUT: the backend's reason on ECONNREFUSED,
				 * the cap's on EBUSY */
};

#define XGPU_WAIT_FOREVER	0xffffffffu

struct xgpu_ioc_wait {
	__u32 timeout_ms;	/* IN: XGPU_WAIT_FOREVER or milliseconds */
	__u32 _pad0;
};

struct xgpu_ioc_hostmem {
	__u64 size;		/* IN: bytes, a multiple of 4096, > 0 */
	__u64 refs;		/* IN: user address of a __u32 array that
				 * receives the grant ref of every page */
	__u32 refs_cap;		/* IN: entries in that array (>= pages) */
	__u32 id;		/* OUT: region id for HOSTMEM_FREE */
	__u64 offset;		/* OUT: mmap offset of the region */
};

struct xgpu_ioc_hostmem_free {
	__u32 id;		/* IN: from HOSTMEM_ALLOC; munmap first */
	__u32 _pad0;
};

#define XGPU_IOC_MAGIC		'X'
/* open the channel; blocks until the backend answers */
#define XGPU_IOC_CONNECT	_IOWR(XGPU_IOC_MAGIC, 0x01, struct xgpu_ioc_connect)
/* kick the backend (event channel) */
#define XGPU_IOC_NOTIFY		_IO(XGPU_IOC_MAGIC, 0x02)
/*
 * Sleep until the backend has kicked since the previous WAIT returned, or
 * timeout_ms passes.  Returns 0 in both cases (the caller looks at the
 * ring); a kick that arrived before the call makes it return at once, so
 * no wake-up is lost between looking at the ring and sleeping.
 */
#define XGPU_IOC_WAIT		_IOW(XGPU_IOC_MAGIC, 0x03, struct xgpu_ioc_wait)
#define XGPU_IOC_HOSTMEM_ALLOC	_IOWR(XGPU_IOC_MAGIC, 0x04, struct xgpu_ioc_hostmem)
#define XGPU_IOC_HOSTMEM_FREE	_IOW(XGPU_IOC_MAGIC, 0x05, struct xgpu_ioc_hostmem_free)

/*
 * poll(): POLLIN | POLLRDNORM when a kick is pending (as WAIT would return
 * at once); POLLHUP | POLLERR once the backend has closed the channel.
 * mmap offsets: ring at 0, data area at ring bytes, host-memory regions at
 * the offsets HOSTMEM_ALLOC returns; each mapping must cover exactly one
 * of these objects, MAP_SHARED.
 */

#ifndef __KERNEL__
_Static_assert(sizeof(struct xgpu_ioc_connect) == 208, "connect layout");
_Static_assert(sizeof(struct xgpu_ioc_wait) == 8, "wait layout");
_Static_assert(sizeof(struct xgpu_ioc_hostmem) == 32, "hostmem layout");
_Static_assert(sizeof(struct xgpu_ioc_hostmem_free) == 8, "free layout");
#endif

#endif /* XGPU_UAPI_H */
