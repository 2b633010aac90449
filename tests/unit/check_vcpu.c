// SPDX-License-Identifier: MIT
/*
 * check_vcpu.c: the VCPU coordinator on a fake backend (vcpu_fake.h):
 * weights follow the GPU weight, are restored on leave, boosts come and
 * go, the rate limit holds; and the xenctrl backend where it cannot run
 * (no library, or a library but no Xen): off, with one log line.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "xgpu_vcpu.h"
#include "vcpu_fake.h"
#include "check_run.h"

#define MS	1000000ull
#define SEC	1000000000ull

struct logcap {
	unsigned int lines;
	int level;
	char last[256];
};

static void cap_log(void *arg, int level, const char *msg)
{
	struct logcap *l = arg;

	l->lines++;
	l->level = level;
	snprintf(l->last, sizeof(l->last), "%s", msg);
	ck_assert_ptr_null(strchr(msg, '\n'));
}

static struct xgpu_vcpu *fake(struct logcap *l,
			      const struct xgpu_vcpu_params *p)
{
	struct xgpu_vcpu *c = xgpu_vcpu_create_on(&xgpu_vcpu_fake_backend, p, cap_log, l);

	ck_assert_ptr_nonnull(c);
	ck_assert(xgpu_vcpu_enabled(c));
	return c;
}

static unsigned int weight_of(struct xgpu_vcpu *c, uint32_t domid)
{
	unsigned int w = 0;

	ck_assert_int_eq(xgpu_vcpu_fake_weight(c, domid, &w), 0);
	return w;
}

START_TEST(policy)
{
	ck_assert_uint_eq(xgpu_vcpu_target(256, 256), 256);
	ck_assert_uint_eq(xgpu_vcpu_target(256, 512), 512);
	ck_assert_uint_eq(xgpu_vcpu_target(100, 384), 150);
	ck_assert_uint_eq(xgpu_vcpu_target(512, 128), 256);
	ck_assert_uint_eq(xgpu_vcpu_target(1, 1), 1);		/* clamped up */
	ck_assert_uint_eq(xgpu_vcpu_target(65535, 65535), 65535);
	ck_assert_uint_eq(xgpu_vcpu_boosted(300, 200), 600);
	ck_assert_uint_eq(xgpu_vcpu_boosted(40000, 200), 65535);
	ck_assert_uint_eq(xgpu_vcpu_boosted(3, 150), 5);	/* rounded */
	ck_assert_uint_eq(xgpu_vcpu_boost_interval(1, 200), 10 * MS);
	ck_assert_uint_eq(xgpu_vcpu_boost_interval(2, 200), 20 * MS);
	ck_assert_uint_eq(xgpu_vcpu_boost_interval(1, 0), 10 * MS);
	/* the daemon ships no test backend */
	ck_assert_ptr_null(xgpu_vcpu_backend_lookup("fake"));
	ck_assert_ptr_eq(xgpu_vcpu_backend_lookup("xenctrl"),
			 &xgpu_vcpu_xenctrl_backend);
	ck_assert_ptr_null(xgpu_vcpu_backend_lookup("xl"));
	errno = 0;
	ck_assert_ptr_null(xgpu_vcpu_create("xl", NULL, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(weights_follow)
{
	struct xgpu_vcpu_dom_info in;
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = fake(&l, NULL);

	ck_assert_uint_eq(l.lines, 1);		/* "on: fake ..." */
	ck_assert_int_eq(xgpu_vcpu_fake_preset(c, 1, 256), 0);
	ck_assert_int_eq(xgpu_vcpu_fake_preset(c, 2, 512), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 512, 0), 0);
	ck_assert_uint_eq(weight_of(c, 1), 512);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 512, 0), -EEXIST);
	/* default GPU weight: base kept, no hypercall to set it */
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 2, 256, 0), 0);
	ck_assert_uint_eq(weight_of(c, 2), 512);
	ck_assert_uint_eq(xgpu_vcpu_fake_sets(c, 2), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 2, 1024, 0), 0);
	ck_assert_uint_eq(weight_of(c, 2), 2048);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 2, 65535, 0), 0);
	ck_assert_uint_eq(weight_of(c, 2), 65535);	/* clamped */
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 2, &in), 0);
	ck_assert_uint_eq(in.base, 512);
	ck_assert_uint_eq(in.target, 65535);
	ck_assert_uint_eq(in.current, 65535);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 2, 0, 0), -EINVAL);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 3, 256, 0), -ENOENT);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 3, 65536, 0), -EINVAL);
	/* an unknown domain: its weight cannot be read, it is not added */
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 3, 256, 0), -ESRCH);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 3, &in), -ENOENT);
	ck_assert_uint_eq(l.lines, 2);
	xgpu_vcpu_destroy(c);
}
END_TEST

START_TEST(restore_on_leave)
{
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = fake(&l, NULL);
	struct xgpu_vcpu *c2;

	xgpu_vcpu_fake_preset(c, 1, 300);
	xgpu_vcpu_fake_preset(c, 2, 300);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 768, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 2, 128, 0), 0);
	ck_assert_uint_eq(weight_of(c, 1), 900);
	ck_assert_uint_eq(weight_of(c, 2), 150);
	/* leaving while boosted restores the base, not the target */
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, 0), 0);
	ck_assert_uint_eq(weight_of(c, 1), 1800);
	ck_assert_int_eq(xgpu_vcpu_dom_remove(c, 1, 1 * MS), 0);
	ck_assert_uint_eq(weight_of(c, 1), 300);
	ck_assert_int_eq(xgpu_vcpu_dom_remove(c, 1, 1 * MS), -ENOENT);
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, 2 * MS), -ENOENT);
	/* the coordinator going away restores what is left (2 here) */
	xgpu_vcpu_destroy(c);

	/* a domain already destroyed has nothing to restore: not an error */
	c2 = fake(&l, NULL);
	xgpu_vcpu_fake_preset(c2, 7, 256);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c2, 7, 512, 0), 0);
	xgpu_vcpu_fake_fail(c2, -ESRCH);
	ck_assert_int_eq(xgpu_vcpu_dom_remove(c2, 7, 0), 0);
	/* other failures are reported */
	xgpu_vcpu_fake_fail(c2, 0);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c2, 7, 512, 0), 0);
	xgpu_vcpu_fake_fail(c2, -EPERM);
	l.lines = 0;
	ck_assert_int_eq(xgpu_vcpu_dom_set(c2, 7, 1024, 0), -EPERM);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c2, 7, 2048, 0), -EPERM);
	/* logged once per domain, not per failure */
	ck_assert_uint_eq(l.lines, 1);
	ck_assert_int_eq(l.level, LOG_WARNING);
	xgpu_vcpu_fake_fail(c2, 0);
	xgpu_vcpu_destroy(c2);
}
END_TEST

/* hypercalls are counted: a read when the domain joins, then writes */
START_TEST(hypercall_count)
{
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = fake(&l, NULL);
	struct xgpu_vcpu_dom_info in;

	xgpu_vcpu_fake_preset(c, 4, 256);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 4, 1024, 0), 0);
	ck_assert_uint_eq(weight_of(c, 4), 1024);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 4, &in), 0);
	ck_assert_uint_eq(in.hypercalls, 2);
	ck_assert_uint_eq(xgpu_vcpu_fake_sets(c, 4), 1);
	/* the same weight again costs nothing */
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 4, 1024, 0), 0);
	ck_assert_uint_eq(xgpu_vcpu_fake_sets(c, 4), 1);
	ck_assert_int_eq(xgpu_vcpu_fake_set_cost(c, 2), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 4, 512, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 4, &in), 0);
	ck_assert_uint_eq(in.hypercalls, 4);
	ck_assert_int_eq(xgpu_vcpu_dom_remove(c, 4, 0), 0);
	ck_assert_uint_eq(xgpu_vcpu_fake_sets(c, 4), 3);
	ck_assert_uint_eq(weight_of(c, 4), 256);
	xgpu_vcpu_destroy(c);
}
END_TEST

START_TEST(boost)
{
	struct xgpu_vcpu_params p = { .boost_pct = 300, .boost_ns = 4 * MS };
	struct xgpu_vcpu_dom_info in;
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = fake(&l, &p);
	const uint64_t t = 1 * SEC;

	xgpu_vcpu_fake_preset(c, 1, 256);
	xgpu_vcpu_fake_preset(c, 2, 256);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 512, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 2, 256, 0), 0);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, t), UINT64_MAX);
	/* more work queued: the GPU is busy for it, no boost */
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, true, t), 0);
	ck_assert_uint_eq(weight_of(c, 1), 512);
	/* done and nothing queued: boost for 4 ms */
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, t), 0);
	ck_assert_uint_eq(weight_of(c, 1), 1536);
	ck_assert_uint_eq(weight_of(c, 2), 256);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 1, &in), 0);
	ck_assert(in.boosted);
	ck_assert_uint_eq(in.boost_until, t + 4 * MS);
	/* another completion does not extend it */
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, t + 2 * MS), 0);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, t + 2 * MS), t + 4 * MS);
	ck_assert_uint_eq(weight_of(c, 1), 1536);
	/* the GPU weight changes while boosted: boosted from the new target */
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 1, 1024, t + 3 * MS), 0);
	ck_assert_uint_eq(weight_of(c, 1), 3072);
	/* expired: back to target */
	ck_assert_uint_eq(xgpu_vcpu_tick(c, t + 4 * MS), UINT64_MAX);
	ck_assert_uint_eq(weight_of(c, 1), 1024);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 1, &in), 0);
	ck_assert(!in.boosted);
	ck_assert_uint_eq(in.boosts, 1);
	/* 2 boosts at once: tick reports the earlier end */
	ck_assert_int_eq(xgpu_vcpu_completed(c, 2, false, t + 20 * MS), 0);
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, t + 21 * MS), 0);
	ck_assert_uint_eq(weight_of(c, 2), 768);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, t + 22 * MS), t + 24 * MS);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, t + 24 * MS), t + 25 * MS);
	ck_assert_uint_eq(weight_of(c, 2), 256);
	ck_assert_uint_eq(weight_of(c, 1), 3072);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, t + 26 * MS), UINT64_MAX);
	ck_assert_uint_eq(weight_of(c, 1), 1024);
	xgpu_vcpu_destroy(c);
}
END_TEST

START_TEST(boost_at_max)
{
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = fake(&l, NULL);

	xgpu_vcpu_fake_preset(c, 1, 65535);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 256, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, 0), 0);
	ck_assert_uint_eq(xgpu_vcpu_fake_sets(c, 1), 0);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, 0), UINT64_MAX);
	xgpu_vcpu_destroy(c);
}
END_TEST

/*
 * Completions every 1 ms for 2 s: weight changes stay within the rate
 * (200 hypercalls/s per domain by default), whatever the boost window.
 */
static void rate_run(uint64_t boost_ns, unsigned int cost)
{
	struct xgpu_vcpu_params p = { .boost_ns = boost_ns };
	struct xgpu_vcpu_dom_info in;
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = fake(&l, &p);
	unsigned long sets0, per_sec;
	uint64_t t;

	ck_assert_int_eq(xgpu_vcpu_fake_set_cost(c, cost), 0);
	xgpu_vcpu_fake_preset(c, 1, 256);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 512, 0), 0);
	sets0 = xgpu_vcpu_fake_sets(c, 1);
	for (t = 0; t < 2 * SEC; t += 1 * MS) {
		xgpu_vcpu_tick(c, t);
		ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, t), 0);
	}
	xgpu_vcpu_tick(c, t);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 1, &in), 0);
	per_sec = (xgpu_vcpu_fake_sets(c, 1) - sets0) * cost / 2;
	printf("boost %2llu ms, cost %u: %lu boosts, %lu skipped, "
	       "%lu hypercalls/s\n", (unsigned long long)(boost_ns / MS), cost,
	       in.boosts, in.skipped, per_sec);
	ck_assert_uint_le(per_sec, 200);
	/* and the limit is not so strict that boosts stop */
	ck_assert_uint_ge(per_sec, 150);
	/* with a window shorter than the interval, the limit is what bites */
	if (boost_ns < xgpu_vcpu_boost_interval(cost, 0))
		ck_assert_uint_gt(in.skipped, 0);
	xgpu_vcpu_destroy(c);
}

START_TEST(rate_limit)
{
	rate_run(10 * MS, 1);
	rate_run(2 * MS, 1);
	rate_run(10 * MS, 2);	/* credit2: a write is a read and a write */
}
END_TEST

/* no libxenctrl: off, one log line, every call a harmless no-op */
START_TEST(xenctrl_absent)
{
	static const char *const libs[] = { "libxenctrl-absent.so.0", NULL };
	struct xgpu_vcpu_params p = { .xenctrl_libs = libs };
	struct xgpu_vcpu_dom_info in;
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = xgpu_vcpu_create("xenctrl", &p, cap_log, &l);

	ck_assert_ptr_nonnull(c);
	ck_assert(!xgpu_vcpu_enabled(c));
	ck_assert_uint_eq(l.lines, 1);
	ck_assert_int_eq(l.level, LOG_INFO);
	ck_assert_msg(strstr(l.last, "off") && strstr(l.last, "libxenctrl"),
		      "log line: %s", l.last);
	ck_assert_int_eq(xgpu_vcpu_dom_add(c, 1, 512, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_set(c, 1, 1024, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_completed(c, 1, false, 0), 0);
	ck_assert_uint_eq(xgpu_vcpu_tick(c, 0), UINT64_MAX);
	ck_assert_int_eq(xgpu_vcpu_dom_remove(c, 1, 0), 0);
	ck_assert_int_eq(xgpu_vcpu_dom_info(c, 1, &in), -ENOENT);
	/* the fake's side door is shut on another backend */
	ck_assert_int_eq(xgpu_vcpu_fake_preset(c, 1, 256), -EINVAL);
	xgpu_vcpu_destroy(c);
	ck_assert_uint_eq(l.lines, 1);
	/* and no logger at all is fine */
	c = xgpu_vcpu_create("xenctrl", &p, NULL, NULL);
	ck_assert_ptr_nonnull(c);
	xgpu_vcpu_destroy(c);
}
END_TEST

/*
 * The real library where it is installed: outside a Xen Dom0 it loads but
 * cannot open the hypervisor, so off; in a Dom0 (as root) it is on.  One
 * log line either way.
 */
START_TEST(xenctrl_real)
{
	struct logcap l = { 0 };
	struct xgpu_vcpu *c = xgpu_vcpu_create("xenctrl", NULL, cap_log, &l);

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(l.lines, 1);
	printf("xenctrl here: %s\n", l.last);
	if (!xgpu_vcpu_enabled(c))
		ck_assert_ptr_nonnull(strstr(l.last, "off"));
	xgpu_vcpu_destroy(c);
	ck_assert_uint_eq(l.lines, 1);
}
END_TEST

static Suite *vcpu_suite(void)
{
	Suite *s = suite_create("vcpu");
	TCase *tc = tcase_create("coordinator");

	tcase_add_test(tc, policy);
	tcase_add_test(tc, weights_follow);
	tcase_add_test(tc, restore_on_leave);
	tcase_add_test(tc, hypercall_count);
	tcase_add_test(tc, boost);
	tcase_add_test(tc, boost_at_max);
	tcase_add_test(tc, rate_limit);
	tcase_add_test(tc, xenctrl_absent);
	tcase_add_test(tc, xenctrl_real);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(vcpu_suite(), false);
}
