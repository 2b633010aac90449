// SPDX-License-Identifier: MIT
/*
 * xgpub_xs_parse.c: the values a Xen frontend writes, parsed and checked
 * (xgpub_xs_parse.h).  No xenstore I/O here: the callers read, these
 * functions judge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpuif.h"
#include "xgpub_xs_parse.h"

int xgpub_xs_uint(const char *v, uint64_t max, uint64_t *out)
{
	unsigned long long n;
	char *end;

	if (!v)
		return -1;
	/* digits only: strtoull would also take blanks, a sign, "-0" */
	if (v[0] < '0' || v[0] > '9')
		return -2;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end || errno || n > max)
		return -2;
	*out = n;
	return 0;
}

long xgpub_xs_long(const char *v, long def)
{
	char *end;
	long n;

	if (!v)
		return def;
	n = strtol(v, &end, 10);
	if (end == v || *end)
		n = def;
	return n;
}

int64_t xgpub_xs_dirent(const char *name, uint64_t max)
{
	uint64_t n;

	return xgpub_xs_uint(name, max, &n) ? -1 : (int64_t)n;
}

void xgpub_xs_printable(char *v)
{
	for (char *c = v; c && *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
}

/* get(node) as a number in [0, max]: 0, -1 absent, -2 bad */
static int get_uint(xgpub_xs_get_fn get, void *arg, const char *node,
		    uint64_t max, uint64_t *out)
{
	char *v = get(arg, node);
	int rc = xgpub_xs_uint(v, max, out);

	free(v);
	return rc;
}

/* the refs named <prefix><i>, i < n, each a grant ref */
static int get_refs(xgpub_xs_get_fn get, void *arg, const char *prefix,
		    uint32_t n, uint32_t *refs, char *why, size_t whylen)
{
	for (uint32_t i = 0; i < n; i++) {
		char node[48];
		uint64_t v;

		snprintf(node, sizeof(node), "%s%u", prefix, i);
		if (get_uint(get, arg, node, UINT32_MAX, &v)) {
			snprintf(why, whylen, "%s missing or not a number",
				 node);
			return -1;
		}
		refs[i] = (uint32_t)v;
	}
	return 0;
}

int xgpub_xen_chan_parse(xgpub_xs_get_fn get, void *arg,
			 const struct xgpub_xen_limits *lim,
			 struct xgpub_xen_chan_desc *d, char *why,
			 size_t whylen)
{
	uint64_t order, pages, evt;

	memset(d, 0, sizeof(*d));
	/* a ring of 2^order pages: order past 31 has no such ring */
	if (get_uint(get, arg, "ring-page-order",
		     lim->max_ring_order < 31 ? lim->max_ring_order : 31,
		     &order)) {
		snprintf(why, whylen, "ring-page-order missing or above %u",
			 lim->max_ring_order);
		return -1;
	}
	if (get_uint(get, arg, "data-pages", lim->max_data_pages, &pages) ||
	    pages == 0) {
		snprintf(why, whylen, "data-pages missing or not in 1..%u",
			 lim->max_data_pages);
		return -1;
	}
	if (get_uint(get, arg, "event-channel", UINT32_MAX, &evt)) {
		snprintf(why, whylen, "event-channel missing or not a number");
		return -1;
	}
	d->ring_pages = 1u << order;
	d->data_pages = (uint32_t)pages;
	d->ndir = (d->data_pages + XGPUIF_XEN_REFS_PER_DIR - 1) /
		  XGPUIF_XEN_REFS_PER_DIR;
	d->evtchn = (uint32_t)evt;
	d->ring_refs = calloc(d->ring_pages, sizeof(*d->ring_refs));
	d->dir_refs = calloc(d->ndir, sizeof(*d->dir_refs));
	if (!d->ring_refs || !d->dir_refs) {
		snprintf(why, whylen, "backend out of memory");
		goto fail;
	}
	if (get_refs(get, arg, "ring-ref", d->ring_pages, d->ring_refs, why,
		     whylen) ||
	    get_refs(get, arg, "data-dir-ref", d->ndir, d->dir_refs, why,
		     whylen))
		goto fail;
	return 0;
fail:
	xgpub_xen_chan_desc_free(d);
	return -1;
}

void xgpub_xen_chan_desc_free(struct xgpub_xen_chan_desc *d)
{
	free(d->ring_refs);
	free(d->dir_refs);
	d->ring_refs = d->dir_refs = NULL;
}

static int cmp_ref(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* does refs (n of them) name a grant twice?  (sorts a copy) */
static bool refs_repeat(const uint32_t *refs, uint64_t n)
{
	uint32_t *s = malloc(n * sizeof(*s));
	bool rep = false;

	if (!s)
		return true;	/* refuse what cannot be checked */
	memcpy(s, refs, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_ref);
	for (uint64_t i = 1; i < n && !rep; i++)
		rep = s[i] == s[i - 1];
	free(s);
	return rep;
}

int xgpub_xen_region_refs(uint64_t size, const struct xgpuif_memref *dir,
			  const uint8_t *data, size_t data_bytes,
			  uint64_t used_pages, uint32_t **refs,
			  uint64_t *npages, char *why, size_t whylen)
{
	uint64_t n = size / XGPUIF_PAGE_SIZE;
	uint32_t *r;

	if (!n || size % XGPUIF_PAGE_SIZE ||
	    n > XGPUB_XEN_MAX_REGION_PAGES ||
	    dir->region != XGPUIF_REGION_DATA ||
	    dir->len != n * sizeof(uint32_t) ||
	    dir->off > data_bytes || dir->len > data_bytes - dir->off ||
	    dir->off % sizeof(uint32_t)) {
		snprintf(why, whylen, "bad grant directory");
		return -EPROTO;
	}
	if (used_pages + n > XGPUB_XEN_REGION_GRANTS) {
		snprintf(why, whylen, "%llu more granted pages would pass the "
			 "channel's %u", (unsigned long long)n,
			 XGPUB_XEN_REGION_GRANTS);
		return -ENOSPC;
	}
	/* copy the refs out once: the guest may change the data area */
	r = malloc(dir->len);
	if (!r)
		return -ENOMEM;
	memcpy(r, data + dir->off, dir->len);
	/* one page granted twice would be mapped (and pinned) twice */
	if (refs_repeat(r, n)) {
		free(r);
		snprintf(why, whylen, "a grant reference appears twice");
		return -EPROTO;
	}
	*refs = r;
	*npages = n;
	return 0;
}

/* may used pages of a bound of limit (0: none) grow by more?  why names
 * the bound (what), its option and whose pages are counted */
static bool pages_fit(uint64_t used, uint64_t more, uint64_t limit,
		      const char *what, const char *opt, const char *whose,
		      char *why, size_t whylen)
{
	if (!limit || (used <= limit && more <= limit - used))
		return true;
	snprintf(why, whylen, "%llu more granted pages would pass %s, %llu MiB "
		 "(%s), with %llu MiB mapped%s", (unsigned long long)more, what,
		 (unsigned long long)(limit >> 8), opt,
		 (unsigned long long)(used >> 8), whose);
	return false;
}

bool xgpub_xen_grants_fit(uint64_t used, uint64_t more, uint64_t budget,
			  char *why, size_t whylen)
{
	return pages_fit(used, more, budget, "the host's grant budget",
			 "--grant-mb", "", why, whylen);
}

bool xgpub_xen_dom_grants_fit(uint64_t used, uint64_t more, uint64_t cap,
			      char *why, size_t whylen)
{
	return pages_fit(used, more, cap, "the domain's grant cap",
			 "grant-mb, --domain-grant-mb", " by its channels", why,
			 whylen);
}
