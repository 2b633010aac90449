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
 *  - xgpu_devs_lock (the list of bound devices) before xd->lock.
 *
 * Save/restore and migration (xl save/restore/migrate):
 *  - The domain comes back as a new domain: a new domid, a new backend
 *    device (or none yet), an empty grant table and no event channel of
 *    ours.  What a channel's worker held in Dom0 (the GPU state of its
 *    program) went with the old domain.  So every channel open across a
 *    restore is dead for good; new opens connect to the new backend.
 *  - xgpu_epoch counts restores into a new domain.  The Xen resume
 *    notifier tells a restore from a cancelled suspend (xl save -c, a
 *    failed save) by a canary event channel: xen_irq_resume() drops
 *    every port -> irq binding of a restored domain, a cancelled suspend
 *    keeps them.  A channel (and a device's backend connection) belongs
 *    to the epoch it was opened in; an older one is "stale": NOTIFY,
 *    WAIT and HOSTMEM_ALLOC on it fail at once (EPIPE), poll says
 *    POLLHUP, its port and its xenstore directory belong to the old
 *    domain and are never touched again.
 *    The notifier itself takes no lock (it runs in do_suspend() before
 *    xenstore and the devices are back); it queues xgpu_restored_fn() on
 *    a freezable workqueue, so that it runs once the PM core has resumed
 *    every irq and device and thawed the processes: it wakes every
 *    waiter, unbinds the stale channels' irqs and ends their grants (the
 *    new grant table has no entry for them, so they end at once; the
 *    pages stay until the file is closed, since the process may still
 *    map them).
 *  - The xenbus core calls .resume (xgpu_resume) once it found the
 *    frontend nodes again; then the usual handshake runs with the new
 *    backend.  If the toolstack had not recreated the nodes yet, the
 *    core gives up on the device (xbdev->otherend NULL, no otherend
 *    watch); our own watch on <nodename>/state (written last by a
 *    toolstack) sees the nodes appear and xgpu_recover_work probes the
 *    device afresh (device_reprobe(): remove, then probe).
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
#include <linux/workqueue.h>
#include <linux/atomic.h>

#include <xen/xen.h>
#include <xen/xenbus.h>
#include <xen/events.h>
#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/interface/event_channel.h>
#include <xen/xen-ops.h>
#include <asm/xen/hypercall.h>

#include "xgpu_uapi.h"

/*
 * Copied from shared-ring/xgpuif.h, which cannot be included here (it
 * pulls user-space headers).  Keep in sync.
 */
#define XGPUIF_VERSION			2u
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

/* module parameters (xgpufront_bus.c, xgpufront_xs.c) */
extern unsigned int xgpu_max_hostmem_mb;
extern unsigned int xgpu_connect_timeout_ms;

/* restores into a new domain so far (xgpufront_bus.c; see the top) */
extern atomic_t xgpu_epoch;

static inline u32 xgpu_epoch_now(void)
{
	return (u32)atomic_read(&xgpu_epoch);
}

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
	u32 epoch;			/* xgpu_epoch of the backend connection:
					 * set at probe and resume */

	/* save/restore (see the top); node under xgpu_devs_lock */
	struct list_head node;		/* on xgpu_devs, probe to remove */
	struct xenbus_watch fe_watch;	/* our own <nodename>/state */
	bool fe_watching;
	struct work_struct recover;	/* xgpu_recover_work, holds a ref */
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

	u32 epoch;			/* xgpu_epoch when opened */

	/* under xd->lock (detached also read with READ_ONCE) */
	bool published;			/* our ch/<n> may exist in xenstore */
	bool detached;			/* device went down: channel dead and
					 * its xenstore directory is gone */
	bool owned;			/* CONNECT succeeded: its file owns it */
	bool dying;			/* xgpu_chan_destroy() runs: only it
					 * touches the irq and grants now */

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

/* opened before the domain was restored (see the top) */
static inline bool xgpu_chan_stale(const struct xgpu_chan *c)
{
	return c->epoch != xgpu_epoch_now();
}

static inline bool xgpu_chan_dead(const struct xgpu_chan *c)
{
	return READ_ONCE(c->detached) || xgpu_chan_stale(c) ||
	       xgpu_be_closed(READ_ONCE(c->be_state));
}

static inline struct xgpu_chan *xgpu_file_chan(struct xgpu_file *f)
{
	return smp_load_acquire(&f->chan);
}

/* xgpufront_bus.c */
void xgpu_dev_release(struct kref *ref);

/* xgpufront_xs.c */
int xgpu_read_uint(const char *dir, const char *node, unsigned int *val);
void xgpu_sanitise(char *dst, size_t dstsz, const char *src, size_t srclen,
		   bool slash_ok);
int xgpu_xs_errno(int err);
int xgpu_xs_end(struct xenbus_transaction t, int err);

/* xgpufront_chan.c */
int xgpu_pageset_alloc(struct xgpu_pageset *ps, unsigned int nr);
int xgpu_pageset_grant(struct xgpu_pageset *ps, domid_t domid, bool readonly);
void xgpu_pageset_free(struct xgpu_pageset *ps);
int xgpu_evtchn_alloc(domid_t remote, evtchn_port_t *port);
void xgpu_evtchn_close(evtchn_port_t port);
int xgpu_chan_open(struct xgpu_file *f, struct xgpu_ioc_connect *a,
		   struct xgpu_chan **out);
void xgpu_chan_destroy(struct xgpu_chan *c, bool graceful);
void xgpu_chan_forget(struct xgpu_chan *c);

/* xgpufront_fops.c */
extern const struct file_operations xgpu_fops;

#endif /* XGPUFRONT_H */
