/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xen-gpufront: the guest side of xgpu's Xen transport.
 *
 * A xenbus frontend for device type "xgpu".  Once the device is Connected
 * it offers a misc device (/dev/xgpu, /dev/xgpu1, ...); every open file is
 * one channel to the Dom0 backend: ring pages, a data area and host-memory
 * regions, all granted to the backend, and an event channel.  The UAPI is
 * xen-frontend/include/xgpu_uapi.h, the xenstore nodes and the state
 * machines are described at the top of shared-ring/xgpuif.h.
 *
 * Lifetimes:
 *  - struct xgpu_dev is kref'd: the xenbus device holds one reference from
 *    probe to remove, every open file one more, so files may outlive the
 *    device (unbind, backend gone).  It also pins the xenbus_device with
 *    get_device() so that dev_*() logging stays valid.
 *  - struct xgpu_chan belongs to its file; it sits on the device's channel
 *    list (under xd->lock) so that the device can mark it dead, and its
 *    xenstore watch is unregistered before it is freed.
 *  - Every granted page is given back with gnttab_end_foreign_access(ref,
 *    page), which frees it only once Dom0 has unmapped it.  A page is freed
 *    directly only if it was never granted.  Closing a channel first
 *    waits (bounded) for the backend's Closed, which it says once it no
 *    longer maps the pages: pages still mapped go to the grant table's
 *    deferred list, which frees only a few a second.
 *
 * Locking:
 *  - xd->lock: device state, limits, channel list, every channel's
 *    published/detached flags and every write to or removal of a channel's
 *    xenstore directory (so that a dying device and a closing file never
 *    race on it).  xenstore I/O under it is fine (replies come from the
 *    xenbus thread, not from xenwatch).
 *  - Never hold xd->lock across unregister_xenbus_watch(): that waits for
 *    the xenwatch thread, which may be blocked on xd->lock in
 *    xgpu_backend_changed().
 *  - f->lock: a file's regions, its hostmem accounting and the CONNECT
 *    in-progress flag.  mmap takes it under mmap_lock, so nothing may touch
 *    user memory while holding it.
 *  - The watch callback and the irq handler take no locks; they publish
 *    with WRITE_ONCE/atomics and wake the channel's waitqueue.
 *  - Misc (de)registration happens only in xgpu_backend_changed() and
 *    xgpu_remove(), which the xenbus core serialises (remove first
 *    unregisters the otherend watch, waiting for a running callback).
 */
#ifndef XGPUFRONT_H
#define XGPUFRONT_H

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/wait.h>
#include <linux/mutex.h>
#include <linux/kref.h>
#include <linux/idr.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>

#include <xen/xen.h>
#include <xen/xenbus.h>
#include <xen/events.h>
#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/interface/event_channel.h>
#include <asm/xen/hypercall.h>

#include "xgpu_uapi.h"

/*
 * Copied from shared-ring/xgpuif.h, which cannot be included here (it
 * pulls user-space headers).  Keep in sync.
 */
#define XGPUIF_VERSION			1u
#define XGPUIF_MAX_RING_ORDER		6u
#define XGPUIF_DEFAULT_RING_ORDER	4u
#define XGPUIF_XEN_DEVTYPE		"xgpu"
#define XGPUIF_XEN_REFS_PER_DIR		1024u
#define XGPUIF_XEN_MAX_DATA_PAGES	(1u << 16)
#define XGPUIF_XEN_DEFAULT_DATA_PAGES	(1u << 12)
#define XGPUIF_XEN_MAX_CHANNELS		64u

/* bounded wait of release() for the backend's channel Closed */
#define XGPU_CLOSE_TIMEOUT		(5 * HZ)
/* host-memory region id -> mmap offset (id << 32), far above ring+data */
#define XGPU_REGION_SHIFT		32
#define XGPU_REGION_MAX_ID		0x7fffffff

/* be_state values besides the XenbusState numbers 0..6 */
#define XGPU_BE_ABSENT			(-1)	/* ch/<n>/state not seen yet */
#define XGPU_BE_GONE			(-2)	/* it existed and was removed */

/* module parameters (xgpufront_bus.c) */
extern unsigned int xgpu_max_hostmem_mb;
extern unsigned int xgpu_connect_timeout_ms;

/* pages granted (or about to be) to the backend */
struct xgpu_pageset {
	unsigned int nr;
	struct page **pages;
	grant_ref_t *refs;	/* INVALID_GRANT_REF: not granted */
};

struct xgpu_dev {
	struct kref ref;
	struct xenbus_device *xbdev;	/* pinned by get_device() */
	char *nodename;			/* frontend path, own copy */
	char *otherend;			/* backend path, own copy (the core
					 * frees its copy at remove) */
	domid_t backend_id;
	int index;			/* ida; -1 once given back */
	char name[16];			/* misc device name */
	struct miscdevice misc;
	bool misc_registered;		/* see "Misc" in the top comment */

	struct mutex lock;
	bool removed;			/* remove() has run */
	bool connected;			/* device handshake complete */
	u32 max_ring_order;
	u32 max_data_pages;
	u32 max_channels;
	u32 next_channel;		/* never reused while the device lives */
	struct list_head channels;
};

struct xgpu_chan {
	struct xgpu_dev *xd;
	struct list_head node;		/* on xd->channels, under xd->lock */
	u32 num;
	domid_t domid;
	unsigned int ring_order;
	struct xgpu_pageset ring, data, dir;
	evtchn_port_t port;
	bool port_alloc;		/* port allocated, not yet bound */
	int irq;			/* < 0: not bound */
	char irqname[32];		/* request_irq keeps the pointer */
	char *fe_path;			/* <nodename>/ch/<n> */
	char *be_path;			/* <otherend>/ch/<n> */
	struct xenbus_watch watch;	/* on be_path/state */
	bool watching;

	/* under xd->lock (detached also read with READ_ONCE) */
	bool published;			/* our ch/<n> may exist in xenstore */
	bool detached;			/* device went down: channel dead and
					 * its xenstore directory is gone */

	int be_state;			/* written by the watch callback only */
	atomic_t kicks;			/* backend notifications received */
	wait_queue_head_t wq;
};

struct xgpu_region {
	u32 id;
	struct xgpu_pageset ps;
};

struct xgpu_file {
	struct xgpu_dev *xd;
	struct xgpu_chan *chan;		/* set once, smp_store_release */
	u32 seen;			/* kick count WAIT last returned on */

	struct mutex lock;
	bool connecting;
	struct idr regions;
	u64 hostmem_pages;
};

static inline bool xgpu_be_closed(int st)
{
	return st == XenbusStateClosing || st == XenbusStateClosed ||
	       st == XGPU_BE_GONE;
}

static inline bool xgpu_chan_dead(const struct xgpu_chan *c)
{
	return READ_ONCE(c->detached) || xgpu_be_closed(READ_ONCE(c->be_state));
}

static inline struct xgpu_chan *xgpu_file_chan(struct xgpu_file *f)
{
	return smp_load_acquire(&f->chan);
}

/* xgpufront_bus.c */
void xgpu_dev_release(struct kref *ref);
int xgpu_read_uint(const char *dir, const char *node, unsigned int *val);
void xgpu_sanitise(char *dst, size_t dstsz, const char *src, size_t srclen,
		   bool slash_ok);
int xgpu_xs_errno(int err);
int xgpu_xs_end(struct xenbus_transaction t, int err);

/* xgpufront_chan.c */
int xgpu_pageset_alloc(struct xgpu_pageset *ps, unsigned int nr);
int xgpu_pageset_grant(struct xgpu_pageset *ps, domid_t domid, bool readonly);
void xgpu_pageset_free(struct xgpu_pageset *ps);
int xgpu_chan_open(struct xgpu_file *f, struct xgpu_ioc_connect *a,
		   struct xgpu_chan **out);
void xgpu_chan_destroy(struct xgpu_chan *c, bool graceful);

/* xgpufront_fops.c */
extern const struct file_operations xgpu_fops;

#endif /* XGPUFRONT_H */
