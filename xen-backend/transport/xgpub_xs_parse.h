/* SPDX-License-Identifier: MIT */
/*
 * xgpub_xs_parse.h: the values a Xen frontend writes in xenstore, parsed
 * and checked, with no xenstore I/O (xgpub_xs_parse.c): the daemon and
 * the Xen transport read the nodes, these functions judge what they
 * read.  Every value comes from the guest; tests/fuzz/fuzz_xs.c fuzzes
 * them.
 */
#ifndef XGPUB_XS_PARSE_H
#define XGPUB_XS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpub_transport.h"

/* v as a decimal number in [0, max], digits only: 0; -1 if v is NULL
 * (absent), -2 if it is no such number (empty, blanks, a sign, trailing
 * bytes, too large) */
int xgpub_xs_uint(const char *v, uint64_t max, uint64_t *out);

/* v as a decimal long (a xenbus state); def if NULL or not a number */
long xgpub_xs_long(const char *v, long def);

/* a directory entry's name as a number in [0, max], digits only (a
 * domid, a device or channel number); -1 if it is not one */
int64_t xgpub_xs_dirent(const char *name, uint64_t max);

/* bytes outside printable ASCII become '?' (names for the log) */
void xgpub_xs_printable(char *v);

/* a channel as its frontend's ch/<n> directory describes it */
struct xgpub_xen_chan_desc {
	uint32_t ring_pages;	/* 1 << ring-page-order */
	uint32_t data_pages;
	uint32_t ndir;		/* pages of the data area's directory */
	uint32_t evtchn;
	uint32_t *ring_refs;	/* ring_pages grant refs */
	uint32_t *dir_refs;	/* ndir grant refs */
};

/* a node's value of a channel's directory, malloc'd, or NULL */
typedef char *(*xgpub_xs_get_fn)(void *arg, const char *node);

/*
 * The channel's nodes (ring-page-order, data-pages, event-channel,
 * ring-ref<i>, data-dir-ref<i>) through get, checked against lim: 0, or
 * -1 and why (d then holds nothing).  xgpub_xen_chan_desc_free frees d.
 */
int xgpub_xen_chan_parse(xgpub_xs_get_fn get, void *arg,
			 const struct xgpub_xen_limits *lim,
			 struct xgpub_xen_chan_desc *d, char *why,
			 size_t whylen);
void xgpub_xen_chan_desc_free(struct xgpub_xen_chan_desc *d);

/*
 * A host-memory region of size bytes whose grant refs the guest put at
 * dir in the data area (data_bytes at data), the channel having
 * used_pages granted pages mapped already: 0 and the refs (copied once,
 * malloc'd) in *refs, their count in *npages; -EPROTO with why (a bad
 * directory, a ref named twice), -ENOSPC past XGPUB_XEN_REGION_GRANTS,
 * -ENOMEM.
 */
int xgpub_xen_region_refs(uint64_t size, const struct xgpuif_memref *dir,
			  const uint8_t *data, size_t data_bytes,
			  uint64_t used_pages, uint32_t **refs,
			  uint64_t *npages, char *why, size_t whylen);

/*
 * The host's grant budget of budget pages (0: none), used pages of it
 * mapped by every Xen channel: may a channel map more?  true, or false
 * with why.
 */
bool xgpub_xen_grants_fit(uint64_t used, uint64_t more, uint64_t budget,
			  char *why, size_t whylen);
/* the same for one domain's cap of cap pages (0: none), used pages of
 * it mapped by the domain's channels */
bool xgpub_xen_dom_grants_fit(uint64_t used, uint64_t more, uint64_t cap,
			      char *why, size_t whylen);

#endif /* XGPUB_XS_PARSE_H */
