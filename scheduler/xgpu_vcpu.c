// SPDX-License-Identifier: MIT
/*
 * xgpu_vcpu.c: the VCPU coordinator's policy and bookkeeping (see
 * xgpu_vcpu.h); the backends do the hypercalls.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "xgpu_table.h"
#include "xgpu_vcpu_priv.h"

struct vdom {
	uint32_t domid;
	struct xgpu_vcpu_dom_info info;	/* as xgpu_vcpu_dom_info shows it */
	bool warned;		/* a failed hypercall was logged */
	uint64_t next_boost;	/* no new boost before this */
};

struct xgpu_vcpu {
	const struct xgpu_vcpu_backend *b;
	void *priv;
	bool on;
	struct xgpu_vcpu_params p;
	xgpu_vcpu_log_fn log;
	void *log_arg;
	struct vdom *d;
	unsigned int n;
	unsigned int alloc;
};

static const void *const backends[] = {
	&xgpu_vcpu_xenctrl_backend,
};

const struct xgpu_vcpu_backend *xgpu_vcpu_backend_lookup(const char *name)
{
	return xgpu_table_lookup(backends, XGPU_ARRAY_SIZE(backends), name);
}

static unsigned int clamp_weight(uint64_t w)
{
	if (w < XGPU_VCPU_WEIGHT_MIN)
		return XGPU_VCPU_WEIGHT_MIN;
	if (w > XGPU_VCPU_WEIGHT_MAX)
		return XGPU_VCPU_WEIGHT_MAX;
	return (unsigned int)w;
}

unsigned int xgpu_vcpu_target(unsigned int base, unsigned int gpu_weight)
{
	uint64_t w = (uint64_t)base * gpu_weight;

	return clamp_weight((w + XGPU_VCPU_GPU_WEIGHT_UNIT / 2) /
			    XGPU_VCPU_GPU_WEIGHT_UNIT);
}

unsigned int xgpu_vcpu_boosted(unsigned int target, unsigned int boost_pct)
{
	return clamp_weight(((uint64_t)target * boost_pct + 50) / 100);
}

uint64_t xgpu_vcpu_boost_interval(unsigned int set_cost,
				  unsigned int max_hypercalls_per_sec)
{
	if (!max_hypercalls_per_sec)
		max_hypercalls_per_sec = XGPU_VCPU_RATE_DEFAULT;
	if (!set_cost)
		set_cost = 1;
	/* round up: never more than the rate */
	return (2ull * set_cost * 1000000000ull + max_hypercalls_per_sec - 1) /
	       max_hypercalls_per_sec;
}

static void vlog(struct xgpu_vcpu *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void vlog(struct xgpu_vcpu *c, int level, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!c->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->log(c->log_arg, level, msg);
}

void *xgpu_vcpu_backend_priv(struct xgpu_vcpu *c,
			     const struct xgpu_vcpu_backend *b)
{
	return c && c->b == b && c->on ? c->priv : NULL;
}

struct xgpu_vcpu *xgpu_vcpu_create(const char *backend,
				   const struct xgpu_vcpu_params *p,
				   xgpu_vcpu_log_fn log, void *log_arg)
{
	return xgpu_vcpu_create_on(xgpu_vcpu_backend_lookup(backend), p, log,
				   log_arg);
}

struct xgpu_vcpu *xgpu_vcpu_create_on(const struct xgpu_vcpu_backend *b,
				      const struct xgpu_vcpu_params *p,
				      xgpu_vcpu_log_fn log, void *log_arg)
{
	struct xgpu_vcpu *c;
	char why[200] = "";
	int rc;

	if (!b) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (p)
		c->p = *p;
	if (!c->p.boost_pct)
		c->p.boost_pct = XGPU_VCPU_BOOST_PCT_DEFAULT;
	if (!c->p.boost_ns)
		c->p.boost_ns = XGPU_VCPU_BOOST_NS_DEFAULT;
	if (!c->p.max_hypercalls_per_sec)
		c->p.max_hypercalls_per_sec = XGPU_VCPU_RATE_DEFAULT;
	if (c->p.boost_pct > 10000 || c->p.boost_ns > 1000000000ull) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	c->b = b;
	c->log = log;
	c->log_arg = log_arg;
	rc = b->open(&c->priv, &c->p, why, sizeof(why));
	if (rc) {
		vlog(c, LOG_INFO, "vcpu coordinator off: %s",
		     why[0] ? why : strerror(-rc));
		return c;
	}
	c->on = true;
	vlog(c, LOG_INFO, "vcpu coordinator on: %s, boost %u%% for %llu us",
	     b->describe(c->priv), c->p.boost_pct,
	     (unsigned long long)(c->p.boost_ns / 1000));
	return c;
}

bool xgpu_vcpu_enabled(const struct xgpu_vcpu *c)
{
	return c && c->on;
}

const char *xgpu_vcpu_describe(const struct xgpu_vcpu *c)
{
	return c && c->on ? c->b->describe(c->priv) : "off";
}

void xgpu_vcpu_params_get(const struct xgpu_vcpu *c,
			  struct xgpu_vcpu_params *p)
{
	*p = c->p;
}

static struct vdom *find(const struct xgpu_vcpu *c, uint32_t domid)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (c->d[i].domid == domid)
			return &c->d[i];
	return NULL;
}

/* write w unless it is already there; log a failure once per domain */
static int put(struct xgpu_vcpu *c, struct vdom *d, unsigned int w)
{
	int rc;

	if (w == d->info.current)
		return 0;
	d->info.hypercalls += c->b->set_cost(c->priv);
	rc = c->b->set_weight(c->priv, d->domid, w);
	if (!rc) {
		d->info.current = w;
		return 0;
	}
	if (!d->warned)
		vlog(c, rc == -ESRCH ? LOG_DEBUG : LOG_WARNING,
		     "vcpu weight %u for domain %u: %s", w, d->domid,
		     strerror(-rc));
	d->warned = true;
	return rc;
}

void xgpu_vcpu_destroy(struct xgpu_vcpu *c)
{
	unsigned int i;

	if (!c)
		return;
	if (c->on) {
		for (i = 0; i < c->n; i++)
			put(c, &c->d[i], c->d[i].info.base);
		c->b->close(c->priv);
	}
	free(c->d);
	free(c);
}

static bool gpu_weight_ok(unsigned int w)
{
	return w >= 1 && w <= 65535;
}

int xgpu_vcpu_dom_add(struct xgpu_vcpu *c, uint32_t domid,
		      unsigned int gpu_weight, uint64_t now)
{
	struct vdom nd = { .domid = domid }, *d, *nv;
	int rc;

	(void)now;
	if (!gpu_weight_ok(gpu_weight))
		return -EINVAL;
	if (!c->on)
		return 0;
	if (find(c, domid))
		return -EEXIST;
	nv = xgpu_table_grow(c->d, &c->alloc, c->n, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	c->d = nv;
	nd.info.hypercalls = 1;
	rc = c->b->get_weight(c->priv, domid, &nd.info.base);
	if (rc) {
		vlog(c, LOG_WARNING, "vcpu weight of domain %u: %s", domid,
		     strerror(-rc));
		return rc;
	}
	nd.info.base = clamp_weight(nd.info.base);
	nd.info.current = nd.info.base;
	nd.info.target = xgpu_vcpu_target(nd.info.base, gpu_weight);
	d = &c->d[c->n];
	*d = nd;
	rc = put(c, d, d->info.target);
	if (rc)
		return rc;
	c->n++;
	return 0;
}

int xgpu_vcpu_dom_remove(struct xgpu_vcpu *c, uint32_t domid, uint64_t now)
{
	struct vdom *d;
	int rc;

	(void)now;
	if (!c->on)
		return 0;
	d = find(c, domid);
	if (!d)
		return -ENOENT;
	rc = put(c, d, d->info.base);
	*d = c->d[--c->n];
	/* a domain that is already gone has nothing to restore */
	return rc == -ESRCH ? 0 : rc;
}

int xgpu_vcpu_dom_set(struct xgpu_vcpu *c, uint32_t domid,
		      unsigned int gpu_weight, uint64_t now)
{
	struct vdom *d;
	unsigned int w;

	(void)now;
	if (!gpu_weight_ok(gpu_weight))
		return -EINVAL;
	if (!c->on)
		return 0;
	d = find(c, domid);
	if (!d)
		return -ENOENT;
	d->info.target = xgpu_vcpu_target(d->info.base, gpu_weight);
	w = d->info.target;
	return put(c, d, d->info.boosted ?
		   xgpu_vcpu_boosted(w, c->p.boost_pct) : w);
}

int xgpu_vcpu_completed(struct xgpu_vcpu *c, uint32_t domid,
			bool more_queued, uint64_t now)
{
	struct vdom *d;
	unsigned int w;
	int rc;

	if (!c->on)
		return 0;
	d = find(c, domid);
	if (!d)
		return -ENOENT;
	/* with more queued the GPU is busy for it: nothing waits on a VCPU */
	if (more_queued || d->info.boosted)
		return 0;
	w = xgpu_vcpu_boosted(d->info.target, c->p.boost_pct);
	if (w == d->info.target)
		return 0;	/* at Xen's maximum already */
	if (now < d->next_boost) {
		d->info.skipped++;
		return 0;
	}
	rc = put(c, d, w);
	if (rc)
		return rc;
	d->info.boosted = true;
	d->info.boost_until = now + c->p.boost_ns;
	d->next_boost = now + xgpu_vcpu_boost_interval(c->b->set_cost(c->priv),
					c->p.max_hypercalls_per_sec);
	d->info.boosts++;
	return 0;
}

uint64_t xgpu_vcpu_tick(struct xgpu_vcpu *c, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	if (!c->on)
		return next;
	for (i = 0; i < c->n; i++) {
		struct vdom *d = &c->d[i];

		if (!d->info.boosted)
			continue;
		if (d->info.boost_until <= now) {
			/* a failure is logged; no retry storm either way */
			put(c, d, d->info.target);
			d->info.boosted = false;
		} else if (d->info.boost_until < next) {
			next = d->info.boost_until;
		}
	}
	return next;
}

int xgpu_vcpu_dom_info(const struct xgpu_vcpu *c, uint32_t domid,
		       struct xgpu_vcpu_dom_info *out)
{
	const struct vdom *d;

	if (!c->on)
		return -ENOENT;
	d = find(c, domid);
	if (!d)
		return -ENOENT;
	*out = d->info;
	return 0;
}
