// SPDX-License-Identifier: GPL-2.0-only
/*
 * xen-gpufront: the file operations of /dev/xgpu (the UAPI of
 * xgpu_uapi.h): CONNECT, NOTIFY, WAIT, poll, HOSTMEM, mmap.
 * Overview, lifetimes and locking: xgpufront.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xgpufront.h"

/* ------------------------------------------------------------------ */
/* file operations                                                    */

static int xgpu_open(struct inode *inode, struct file *filp)
{
	/* misc_open() holds misc_mtx: remove() cannot drop its ref yet */
	struct miscdevice *m = filp->private_data;
	struct xgpu_dev *xd = container_of(m, struct xgpu_dev, misc);
	struct xgpu_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	idr_init_base(&f->regions, 1);
	kref_get(&xd->ref);
	f->xd = xd;
	filp->private_data = f;
	return nonseekable_open(inode, filp);
}

static void xgpu_region_free(struct xgpu_region *r)
{
	xgpu_pageset_free(&r->ps);
	kfree(r);
}

static int xgpu_release(struct inode *inode, struct file *filp)
{
	struct xgpu_file *f = filp->private_data;
	struct xgpu_chan *c = f->chan;	/* no ioctl can run any more */
	struct xgpu_region *r;
	int id;

	/* close the channel first: the backend unmaps the regions too */
	if (c) {
		u32 num = c->num;

		xgpu_chan_destroy(c, true);
		dev_info(&f->xd->xbdev->dev, "ch%u: closed\n", num);
	}
	idr_for_each_entry(&f->regions, r, id)
		xgpu_region_free(r);
	idr_destroy(&f->regions);
	mutex_destroy(&f->lock);
	kref_put(&f->xd->ref, xgpu_dev_release);
	kfree(f);
	return 0;
}

static long xgpu_ioc_connect(struct xgpu_file *f, void __user *uarg)
{
	struct xgpu_ioc_connect a;
	struct xgpu_chan *c = NULL;
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	a.channel = 0;
	a.backend_domid = 0;
	a.ring_offset = 0;
	a.data_offset = 0;
	memset(a.msg, 0, sizeof(a.msg));

	mutex_lock(&f->xd->lock);
	a.max_ring_order = f->xd->max_ring_order;
	a.max_data_pages = f->xd->max_data_pages;
	mutex_unlock(&f->xd->lock);

	if (a.version != XGPU_UAPI_VERSION || a._pad0) {
		ret = -EINVAL;
		goto out;
	}

	mutex_lock(&f->lock);
	if (f->chan || f->connecting) {
		mutex_unlock(&f->lock);
		ret = -EBUSY;
		goto out;
	}
	f->connecting = true;
	mutex_unlock(&f->lock);

	ret = xgpu_chan_open(f, &a, &c);

	mutex_lock(&f->lock);
	f->connecting = false;
	if (!ret)
		smp_store_release(&f->chan, c);
	mutex_unlock(&f->lock);
out:
	/* OUT fields (limits at least) go back on errors too */
	if (copy_to_user(uarg, &a, sizeof(a)) && !ret)
		ret = -EFAULT;	/* the channel stays; close() ends it */
	return ret;
}

static long xgpu_ioc_notify(struct xgpu_file *f)
{
	struct xgpu_chan *c = xgpu_file_chan(f);
	int irq;

	if (!c)
		return -ENOTCONN;
	/* (a stale channel's irq goes once the domain is restored) */
	irq = READ_ONCE(c->irq);
	if (xgpu_chan_dead(c) || irq < 0)
		return -EPIPE;
	notify_remote_via_irq(irq);
	return 0;
}

static long xgpu_ioc_wait(struct xgpu_file *f, void __user *uarg)
{
	struct xgpu_chan *c = xgpu_file_chan(f);
	struct xgpu_ioc_wait w;
	u32 seen, now;
	long left;

	if (!c)
		return -ENOTCONN;
	if (copy_from_user(&w, uarg, sizeof(w)))
		return -EFAULT;
	if (w._pad0)
		return -EINVAL;

	seen = READ_ONCE(f->seen);
	now = atomic_read(&c->kicks);
	if (now == seen) {
		if (xgpu_chan_dead(c))
			return -EPIPE;
		if (w.timeout_ms == XGPU_WAIT_FOREVER) {
			if (wait_event_interruptible(c->wq,
					(u32)atomic_read(&c->kicks) != seen ||
					xgpu_chan_dead(c)))
				return -EINTR;
		} else {
			left = wait_event_interruptible_timeout(c->wq,
					(u32)atomic_read(&c->kicks) != seen ||
					xgpu_chan_dead(c),
					msecs_to_jiffies(w.timeout_ms));
			if (left < 0)
				return -EINTR;
		}
		now = atomic_read(&c->kicks);
		if (now == seen)
			return xgpu_chan_dead(c) ? -EPIPE : 0;
	}
	WRITE_ONCE(f->seen, now);
	return 0;
}

static long xgpu_ioc_hostmem_alloc(struct xgpu_file *f, void __user *uarg)
{
	struct xgpu_chan *c = xgpu_file_chan(f);
	struct xgpu_ioc_hostmem h;
	struct xgpu_region *r;
	u64 limit, npages;
	int id, err;

	if (!c)
		return -ENOTCONN;
	if (copy_from_user(&h, uarg, sizeof(h)))
		return -EFAULT;
	if (!h.size || (h.size & (XEN_PAGE_SIZE - 1)))
		return -EINVAL;
	npages = h.size >> PAGE_SHIFT;
	limit = (u64)READ_ONCE(xgpu_max_hostmem_mb) << (20 - PAGE_SHIFT);
	if (npages > limit)
		return -ENOMEM;
	if (h.refs_cap < npages)	/* also bounds npages to a u32 */
		return -EINVAL;
	if (xgpu_chan_dead(c))
		return -EPIPE;

	mutex_lock(&f->lock);
	if (f->hostmem_pages + npages > limit) {
		mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	f->hostmem_pages += npages;
	mutex_unlock(&f->lock);

	err = -ENOMEM;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto unreserve;
	err = xgpu_pageset_alloc(&r->ps, npages);
	if (!err)
		err = xgpu_pageset_grant(&r->ps, c->domid, false);
	if (err)
		goto free;
	/* user memory is touched with no lock held (see Locking) */
	if (copy_to_user(u64_to_user_ptr(h.refs), r->ps.refs,
			 npages * sizeof(u32))) {
		err = -EFAULT;
		goto free;
	}

	mutex_lock(&f->lock);
	id = idr_alloc_cyclic(&f->regions, r, 1, XGPU_REGION_MAX_ID,
			      GFP_KERNEL);
	mutex_unlock(&f->lock);
	if (id < 0) {
		err = id == -ENOSPC ? -ENOMEM : id;
		goto free;
	}
	r->id = id;
	h.id = id;
	h.offset = (u64)id << XGPU_REGION_SHIFT;
	if (copy_to_user(uarg, &h, sizeof(h))) {
		mutex_lock(&f->lock);
		idr_remove(&f->regions, id);
		mutex_unlock(&f->lock);
		err = -EFAULT;
		goto free;
	}
	return 0;

free:
	xgpu_region_free(r);
unreserve:
	mutex_lock(&f->lock);
	f->hostmem_pages -= npages;
	mutex_unlock(&f->lock);
	return err;
}

static long xgpu_ioc_hostmem_free(struct xgpu_file *f, void __user *uarg)
{
	struct xgpu_ioc_hostmem_free fr;
	struct xgpu_region *r;

	if (!xgpu_file_chan(f))
		return -ENOTCONN;
	if (copy_from_user(&fr, uarg, sizeof(fr)))
		return -EFAULT;
	if (fr._pad0 || !fr.id || fr.id > XGPU_REGION_MAX_ID)
		return -EINVAL;

	mutex_lock(&f->lock);
	r = idr_remove(&f->regions, fr.id);
	if (r)
		f->hostmem_pages -= r->ps.nr;
	mutex_unlock(&f->lock);
	if (!r)
		return -EINVAL;
	/* pages still in a user mapping live on until munmap */
	xgpu_region_free(r);
	return 0;
}

static long xgpu_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct xgpu_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case XGPU_IOC_CONNECT:
		return xgpu_ioc_connect(f, uarg);
	case XGPU_IOC_NOTIFY:
		return xgpu_ioc_notify(f);
	case XGPU_IOC_WAIT:
		return xgpu_ioc_wait(f, uarg);
	case XGPU_IOC_HOSTMEM_ALLOC:
		return xgpu_ioc_hostmem_alloc(f, uarg);
	case XGPU_IOC_HOSTMEM_FREE:
		return xgpu_ioc_hostmem_free(f, uarg);
	default:
		return -ENOTTY;
	}
}

static __poll_t xgpu_poll(struct file *filp, poll_table *pt)
{
	struct xgpu_file *f = filp->private_data;
	struct xgpu_chan *c = xgpu_file_chan(f);
	__poll_t mask = 0;

	if (!c)
		return EPOLLERR;
	poll_wait(filp, &c->wq, pt);
	if ((u32)atomic_read(&c->kicks) != READ_ONCE(f->seen))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (xgpu_chan_dead(c))
		mask |= EPOLLHUP | EPOLLERR;
	return mask;
}

static int xgpu_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct xgpu_file *f = filp->private_data;
	struct xgpu_chan *c = xgpu_file_chan(f);
	unsigned long npages = vma_pages(vma);
	unsigned long pgoff = vma->vm_pgoff;
	unsigned long num;
	struct xgpu_region *r;
	int err;

	if (!c)
		return -EINVAL;
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;		/* MAP_SHARED only */
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;

	if (pgoff == 0 && npages == c->ring.nr) {
		num = npages;
		return vm_insert_pages(vma, vma->vm_start, c->ring.pages, &num);
	}
	if (pgoff == c->ring.nr && npages == c->data.nr) {
		num = npages;
		return vm_insert_pages(vma, vma->vm_start, c->data.pages, &num);
	}
	if (!pgoff || (pgoff & ((1UL << (XGPU_REGION_SHIFT - PAGE_SHIFT)) - 1)))
		return -EINVAL;
	pgoff >>= XGPU_REGION_SHIFT - PAGE_SHIFT;
	if (pgoff > XGPU_REGION_MAX_ID)
		return -EINVAL;

	/* under f->lock so that HOSTMEM_FREE cannot pull the pages */
	mutex_lock(&f->lock);
	r = idr_find(&f->regions, pgoff);
	if (!r || npages != r->ps.nr) {
		err = -EINVAL;
	} else {
		num = npages;
		err = vm_insert_pages(vma, vma->vm_start, r->ps.pages, &num);
	}
	mutex_unlock(&f->lock);
	return err;
}

const struct file_operations xgpu_fops = {
	.owner = THIS_MODULE,
	.open = xgpu_open,
	.release = xgpu_release,
	.unlocked_ioctl = xgpu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = xgpu_poll,
	.mmap = xgpu_mmap,
	.llseek = no_llseek,
};
