// SPDX-License-Identifier: MIT
/*
 * check_xs_parse.c: what the Xen transport takes from a guest before it
 * maps anything (xen-backend/transport/xgpub_xs_parse.c): a channel's
 * xenstore description against the published limits, and a host-memory
 * region's grant directory against the channel's ceiling of granted
 * pages (XGPUB_XEN_REGION_GRANTS, 1 GiB) and the host's grant budget of
 * all channels (--grant-mb): Dom0's maptrack table is shared by every
 * backend of every domain.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub.h"
#include "xgpub_xs_parse.h"
#include "check_run.h"

/* ---- a channel's nodes --------------------------------------------------- */

/* node values of a made-up frontend: "name=value" pairs, NULL-ended */
static char *get_node(void *arg, const char *node)
{
	const char *const *kv = arg;
	size_t n = strlen(node);

	for (; *kv; kv++)
		if (!strncmp(*kv, node, n) && (*kv)[n] == '=')
			return strdup(*kv + n + 1);
	return NULL;
}

static const struct xgpub_xen_limits lim = {
	.max_ring_order = 2, .max_data_pages = 2048, .max_channels = 16,
};

START_TEST(test_chan_good)
{
	const char *nodes[] = { "ring-page-order=1", "data-pages=1025",
				"event-channel=7", "ring-ref0=100",
				"ring-ref1=101", "data-dir-ref0=200",
				"data-dir-ref1=201", NULL };
	struct xgpub_xen_chan_desc d;
	char why[128] = "";

	ck_assert_int_eq(xgpub_xen_chan_parse(get_node, nodes, &lim, &d, why,
					      sizeof(why)), 0);
	ck_assert_uint_eq(d.ring_pages, 2);
	ck_assert_uint_eq(d.data_pages, 1025);
	/* 1025 pages need two directory pages of 1024 refs */
	ck_assert_uint_eq(d.ndir, 2);
	ck_assert_uint_eq(d.evtchn, 7);
	ck_assert_uint_eq(d.ring_refs[1], 101);
	ck_assert_uint_eq(d.dir_refs[1], 201);
	xgpub_xen_chan_desc_free(&d);
}
END_TEST

/* each refused description: -1, nothing held, the reason names it */
static void refused(const char *const *nodes, const char *reason)
{
	struct xgpub_xen_chan_desc d;
	char why[128] = "";

	ck_assert_int_eq(xgpub_xen_chan_parse(get_node, (void *)nodes, &lim,
					      &d, why, sizeof(why)), -1);
	ck_assert_ptr_null(d.ring_refs);
	ck_assert_ptr_null(d.dir_refs);
	ck_assert_msg(strstr(why, reason), "'%s' does not say '%s'", why,
		      reason);
}

START_TEST(test_chan_refused)
{
	const char *big_order[] = { "ring-page-order=3", "data-pages=1",
				    "event-channel=7", NULL };
	const char *huge_order[] = { "ring-page-order=40", "data-pages=1",
				     "event-channel=7", NULL };
	const char *no_data[] = { "ring-page-order=0", "data-pages=0",
				  "event-channel=7", NULL };
	const char *big_data[] = { "ring-page-order=0", "data-pages=2049",
				   "event-channel=7", NULL };
	const char *signed_data[] = { "ring-page-order=0", "data-pages=-1",
				      "event-channel=7", NULL };
	const char *no_evt[] = { "ring-page-order=0", "data-pages=1", NULL };
	const char *short_ring[] = { "ring-page-order=1", "data-pages=1",
				     "event-channel=7", "ring-ref0=1",
				     "data-dir-ref0=2", NULL };
	const char *bad_ref[] = { "ring-page-order=0", "data-pages=1",
				  "event-channel=7", "ring-ref0=1",
				  "data-dir-ref0=4294967296", NULL };

	refused(big_order, "ring-page-order");
	refused(huge_order, "ring-page-order");
	refused(no_data, "data-pages");
	refused(big_data, "data-pages");
	refused(signed_data, "data-pages");
	refused(no_evt, "event-channel");
	refused(short_ring, "ring-ref1");
	refused(bad_ref, "data-dir-ref0");
}
END_TEST

/* ---- a region's grant directory ------------------------------------------ */

#define DATA_BYTES	(64u * 1024)

static uint8_t data[DATA_BYTES];

/* n distinct refs at offset off of the data area, and the memref naming
 * them */
static struct xgpuif_memref dir_of(uint64_t off, uint64_t n)
{
	uint32_t *r = (uint32_t *)(data + off);

	for (uint64_t i = 0; i < n; i++)
		r[i] = (uint32_t)(1000 + i);
	return (struct xgpuif_memref){ off, n * sizeof(uint32_t),
				       XGPUIF_REGION_DATA, 0 };
}

static int region(uint64_t size, const struct xgpuif_memref *dir,
		  uint64_t used, uint32_t **refs, uint64_t *n, char *why)
{
	*refs = NULL;
	*n = 0;
	return xgpub_xen_region_refs(size, dir, data, sizeof(data), used,
				     refs, n, why, 128);
}

START_TEST(test_region_good)
{
	struct xgpuif_memref dir = dir_of(4096, 16);
	uint32_t *refs;
	uint64_t n;
	char why[128] = "";

	ck_assert_int_eq(region(16 * XGPUIF_PAGE_SIZE, &dir, 0, &refs, &n,
				why), 0);
	ck_assert_uint_eq(n, 16);
	/* the refs were copied once: the guest changing its data area
	 * afterwards changes nothing */
	memset(data + 4096, 0xff, 64);
	ck_assert_uint_eq(refs[0], 1000);
	ck_assert_uint_eq(refs[15], 1015);
	free(refs);
}
END_TEST

START_TEST(test_region_bad_directory)
{
	struct xgpuif_memref dir = dir_of(0, 4);
	struct xgpuif_memref d;
	uint32_t *refs;
	uint64_t n;
	char why[128] = "";

	/* not whole pages; no pages */
	ck_assert_int_eq(region(4 * XGPUIF_PAGE_SIZE - 1, &dir, 0, &refs, &n,
				why), -EPROTO);
	ck_assert_int_eq(region(0, &dir, 0, &refs, &n, why), -EPROTO);
	/* the directory is not one ref a page */
	ck_assert_int_eq(region(5 * XGPUIF_PAGE_SIZE, &dir, 0, &refs, &n,
				why), -EPROTO);
	/* not in the data area, past it, wrapping, misaligned */
	d = dir;
	d.region = 1;
	ck_assert_int_eq(region(4 * XGPUIF_PAGE_SIZE, &d, 0, &refs, &n, why),
			 -EPROTO);
	d = dir;
	d.off = DATA_BYTES - 8;
	ck_assert_int_eq(region(4 * XGPUIF_PAGE_SIZE, &d, 0, &refs, &n, why),
			 -EPROTO);
	d = dir;
	d.off = UINT64_MAX - 4;
	ck_assert_int_eq(region(4 * XGPUIF_PAGE_SIZE, &d, 0, &refs, &n, why),
			 -EPROTO);
	d = dir;
	d.off = 2;
	ck_assert_int_eq(region(4 * XGPUIF_PAGE_SIZE, &d, 0, &refs, &n, why),
			 -EPROTO);
	ck_assert_str_eq(why, "bad grant directory");
	/* larger than a region may be */
	d = dir;
	d.len = ((uint64_t)XGPUB_XEN_MAX_REGION_PAGES + 1) * sizeof(uint32_t);
	ck_assert_int_eq(region(((uint64_t)XGPUB_XEN_MAX_REGION_PAGES + 1) *
					XGPUIF_PAGE_SIZE,
				&d, 0, &refs, &n, why),
			 -EPROTO);
	ck_assert_ptr_null(refs);
}
END_TEST

START_TEST(test_region_ref_twice)
{
	struct xgpuif_memref dir = dir_of(0, 8);
	uint32_t *refs;
	uint64_t n;
	char why[128] = "";

	((uint32_t *)data)[7] = ((uint32_t *)data)[2];
	ck_assert_int_eq(region(8 * XGPUIF_PAGE_SIZE, &dir, 0, &refs, &n,
				why), -EPROTO);
	ck_assert_ptr_null(refs);
	ck_assert_str_eq(why, "a grant reference appears twice");
}
END_TEST

START_TEST(test_region_channel_ceiling)
{
	struct xgpuif_memref dir = dir_of(0, 2);
	const uint64_t cap = XGPUB_XEN_REGION_GRANTS;
	uint32_t *refs;
	uint64_t n;
	char why[128] = "";

	/* 1 GiB of granted pages a channel */
	ck_assert_uint_eq(cap * XGPUIF_PAGE_SIZE, 1ull << 30);
	/* up to the ceiling: taken */
	ck_assert_int_eq(region(2 * XGPUIF_PAGE_SIZE, &dir, cap - 2, &refs,
				&n, why), 0);
	ck_assert_uint_eq(n, 2);
	free(refs);
	/* one page past it: refused as out of space, nothing mapped */
	ck_assert_int_eq(region(2 * XGPUIF_PAGE_SIZE, &dir, cap - 1, &refs,
				&n, why), -ENOSPC);
	ck_assert_ptr_null(refs);
	ck_assert_msg(strstr(why, "would pass the channel's 262144"), "%s",
		      why);
	/* a channel at its ceiling gets no page more */
	ck_assert_int_eq(region(2 * XGPUIF_PAGE_SIZE, &dir, cap, &refs, &n,
				why), -ENOSPC);
}
END_TEST

/* ---- the host's grant budget ------------------------------------------- */

START_TEST(test_grant_budget)
{
	char why[192] = "";

	/* no budget: anything */
	ck_assert(xgpub_xen_grants_fit(UINT64_MAX, UINT64_MAX, 0, why,
				       sizeof(why)));
	/* up to it, not a page past it */
	ck_assert(xgpub_xen_grants_fit(1000, 24, 1024, why, sizeof(why)));
	ck_assert(!xgpub_xen_grants_fit(1000, 25, 1024, why, sizeof(why)));
	ck_assert(!xgpub_xen_grants_fit(1025, 0, 1024, why, sizeof(why)));
	ck_assert(!xgpub_xen_grants_fit(5, UINT64_MAX, 1024, why,
					sizeof(why)));
	ck_assert_msg(strstr(why, "grant budget, 4 MiB (--grant-mb)"), "%s",
		      why);
	/* a domain's cap: the same edges, its own words */
	ck_assert(xgpub_xen_dom_grants_fit(UINT64_MAX, 1, 0, why,
					   sizeof(why)));
	ck_assert(xgpub_xen_dom_grants_fit(2000, 48, 2048, why, sizeof(why)));
	ck_assert(!xgpub_xen_dom_grants_fit(2000, 49, 2048, why,
					    sizeof(why)));
	ck_assert(!xgpub_xen_dom_grants_fit(3, UINT64_MAX, 2048, why,
					    sizeof(why)));
	ck_assert_msg(strstr(why, "domain's grant cap, 8 MiB (grant-mb"),
		      "%s", why);
}
END_TEST

START_TEST(test_grant_budget_sums_other_workers)
{
	const int n = 4;
	struct xgpub_wslot *slots = aligned_alloc(4096, n * sizeof(*slots));
	const size_t off = offsetof(struct xgpub_wstat, grants);

	ck_assert_ptr_nonnull(slots);
	memset(slots, 0, n * sizeof(*slots));
	slots[0].st.grants = 100;	/* this worker: not counted */
	slots[1].st.grants = 4096;
	slots[2].st.grants = 20;
	slots[3].st.grants = 7;
	slots[1].ctl.acct = 5;
	slots[3].ctl.acct = 5;
	xgpub_all_stats = slots;
	xgpub_nstats = n;
	xgpub_self_stat = &slots[0].st;
	/* every other worker of every guest for the host's budget */
	ck_assert_uint_eq(xgpub_others_sum(off, 0), 4123);
	/* those of one guest for its quotas */
	ck_assert_uint_eq(xgpub_others_sum(off, 5), 4103);
	xgpub_all_stats = NULL;
	xgpub_nstats = 0;
	xgpub_self_stat = NULL;
	free(slots);
}
END_TEST

static Suite *xs_parse_suite(void)
{
	Suite *s = suite_create("xs_parse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_chan_good);
	tcase_add_test(tc, test_chan_refused);
	tcase_add_test(tc, test_region_good);
	tcase_add_test(tc, test_region_bad_directory);
	tcase_add_test(tc, test_region_ref_twice);
	tcase_add_test(tc, test_region_channel_ceiling);
	tcase_add_test(tc, test_grant_budget);
	tcase_add_test(tc, test_grant_budget_sums_other_workers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(xs_parse_suite(), false);
}
