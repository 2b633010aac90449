/* SPDX-License-Identifier: MIT */
/*
 * vcpu_fake.h: a VCPU scheduler backend that only remembers: domains and
 * their weights, how often each was written.  The VCPU coordinator's tests
 * run it through xgpu_vcpu_create_on(); the daemon does not ship it.
 */
#ifndef VCPU_FAKE_H
#define VCPU_FAKE_H

#include <errno.h>
#include <stdlib.h>

#include "xgpu_table.h"
#include "xgpu_vcpu_priv.h"

struct fake_dom {
	uint32_t domid;
	unsigned int weight;
	unsigned long sets;
};

struct fake {
	struct fake_dom *d;
	unsigned int n;
	unsigned int alloc;
	int fail;		/* every call fails with this, when not 0 */
	unsigned int cost;
};

static int fake_open(void **priv, const struct xgpu_vcpu_params *p,
		     char *why, size_t whylen)
{
	struct fake *f = calloc(1, sizeof(*f));

	(void)p;
	(void)why;
	(void)whylen;
	if (!f)
		return -ENOMEM;
	f->cost = 1;
	*priv = f;
	return 0;
}

static void fake_close(void *priv)
{
	struct fake *f = priv;

	free(f->d);
	free(f);
}

static const char *fake_describe(void *priv)
{
	(void)priv;
	return "fake VCPU scheduler";
}

static unsigned int fake_set_cost(void *priv)
{
	return ((struct fake *)priv)->cost;
}

static struct fake_dom *fake_find(struct fake *f, uint32_t domid)
{
	unsigned int i;

	for (i = 0; i < f->n; i++)
		if (f->d[i].domid == domid)
			return &f->d[i];
	return NULL;
}

/*
 * The domain a hypercall is about, as Xen would answer: the failure the
 * test asked for, else -ESRCH for a domain that does not exist.
 */
static int fake_dom(void *priv, uint32_t domid, struct fake_dom **d)
{
	struct fake *f = priv;

	if (f->fail)
		return f->fail;
	*d = fake_find(f, domid);
	return *d ? 0 : -ESRCH;
}

static int fake_get(void *priv, uint32_t domid, unsigned int *weight)
{
	struct fake_dom *d;
	int rc = fake_dom(priv, domid, &d);

	if (!rc)
		*weight = d->weight;
	return rc;
}

static int fake_set(void *priv, uint32_t domid, unsigned int weight)
{
	struct fake_dom *d;
	int rc = fake_dom(priv, domid, &d);

	if (rc)
		return rc;
	/* Xen's range; anything else is a bug in the coordinator */
	if (weight < XGPU_VCPU_WEIGHT_MIN || weight > XGPU_VCPU_WEIGHT_MAX)
		return -EINVAL;
	d->weight = weight;
	d->sets++;
	return 0;
}

static const struct xgpu_vcpu_backend xgpu_vcpu_fake_backend = {
	.name = "fake",
	.open = fake_open,
	.close = fake_close,
	.describe = fake_describe,
	.set_cost = fake_set_cost,
	.get_weight = fake_get,
	.set_weight = fake_set,
};

static struct fake *fake_of(struct xgpu_vcpu *c)
{
	return xgpu_vcpu_backend_priv(c, &xgpu_vcpu_fake_backend);
}

/* the side door */
static int xgpu_vcpu_fake_preset(struct xgpu_vcpu *c, uint32_t domid,
			  unsigned int weight)
{
	struct fake *f = fake_of(c);
	struct fake_dom *d;

	if (!f)
		return -EINVAL;
	d = fake_find(f, domid);
	if (!d) {
		struct fake_dom *nd = xgpu_table_grow(f->d, &f->alloc, f->n,
						      sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		f->d = nd;
		d = &f->d[f->n++];
		d->domid = domid;
		d->sets = 0;
	}
	d->weight = weight;
	return 0;
}

static int xgpu_vcpu_fake_weight(struct xgpu_vcpu *c, uint32_t domid,
			  unsigned int *weight)
{
	struct fake *f = fake_of(c);
	struct fake_dom *d;

	if (!f)
		return -EINVAL;
	d = fake_find(f, domid);
	if (!d)
		return -ESRCH;
	*weight = d->weight;
	return 0;
}

static unsigned long xgpu_vcpu_fake_sets(struct xgpu_vcpu *c, uint32_t domid)
{
	struct fake *f = fake_of(c);
	struct fake_dom *d = f ? fake_find(f, domid) : NULL;

	return d ? d->sets : 0;
}

static int xgpu_vcpu_fake_fail(struct xgpu_vcpu *c, int err)
{
	struct fake *f = fake_of(c);

	if (!f)
		return -EINVAL;
	f->fail = err;
	return 0;
}

static int xgpu_vcpu_fake_set_cost(struct xgpu_vcpu *c, unsigned int cost)
{
	struct fake *f = fake_of(c);

	if (!f || !cost)
		return -EINVAL;
	f->cost = cost;
	return 0;
}

#endif /* VCPU_FAKE_H */
