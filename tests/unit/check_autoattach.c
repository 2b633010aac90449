// SPDX-License-Identifier: MIT
/*
 * check_autoattach.c: the daemon's Xen backend against an xenstore in
 * memory (xs_fake.h): a domain whose name a rule of xgpu.conf matches gets
 * device 0, written as `xgpu attach` writes it (both use
 * common/xgpu_xsdev.c), at start and when it appears; other domains,
 * attach=no rules and Dom0 get none; a device the administrator removed
 * is not given again; a domain that goes loses its backend nodes, and a
 * new domain with its id is looked at afresh; a reload gives devices to
 * domains that had no rule; xenstore refusing is logged once; xl
 * migrate's receiving end (NAME--incoming) is judged as NAME; a rule's
 * channels=N is the device's max-channels.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xen/io/xenbus.h>

#include "xgpub.h"
#include "xgpub_bucket.h"
#include "xgpub_config.h"
#include "xgpub_transport.h"
#include "xgpub_xen.h"
#include "xgpu_xsdev.h"
#include "xs_fake.h"
#include "check_run.h"

#define BE	"/local/domain/0/backend/xgpu"

static char conf[64];
static struct xgpub_xen *X;
static char err[1024];

static void write_conf(const char *text)
{
	FILE *f = fopen(conf, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void domain(unsigned int domid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	xs_fake_put(path, name);
}

static void domain_gone(unsigned int domid)
{
	char path[64];

	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	xs_fake_rm(NULL, 0, path);
}

/* does domid have device 0, with every node `xgpu attach` writes? */
static bool has_device(unsigned int domid)
{
	char be[96], fe[96], p[160], want[96];
	const struct xs_fake_node *n;

	snprintf(be, sizeof(be), BE "/%u/0", domid);
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/xgpu/0", domid);
	if (!xs_fake_get(be))
		return false;
	snprintf(p, sizeof(p), "%s/frontend", be);
	ck_assert_str_eq(xs_fake_get(p), fe);
	snprintf(p, sizeof(p), "%s/frontend-id", be);
	snprintf(want, sizeof(want), "%u", domid);
	ck_assert_str_eq(xs_fake_get(p), want);
	snprintf(p, sizeof(p), "%s/online", be);
	ck_assert_str_eq(xs_fake_get(p), "1");
	snprintf(p, sizeof(p), "%s/backend", fe);
	ck_assert_str_eq(xs_fake_get(p), be);
	snprintf(p, sizeof(p), "%s/backend-id", fe);
	ck_assert_str_eq(xs_fake_get(p), "0");
	snprintf(p, sizeof(p), "%s/state", fe);
	ck_assert_str_eq(xs_fake_get(p), "1");
	/* the backend Dom0's, readable by the domain; the frontend the
	 * domain's, readable by Dom0 */
	n = xs_fake_find(be);
	ck_assert_int_eq(n->nperms, 2);
	ck_assert_uint_eq(n->perm_owner, 0);
	ck_assert_uint_eq(n->perm_read, domid);
	n = xs_fake_find(fe);
	ck_assert_int_eq(n->nperms, 2);
	ck_assert_uint_eq(n->perm_owner, domid);
	ck_assert_uint_eq(n->perm_read, 0);
	return true;
}

static void start(const char *rules)
{
	snprintf(conf, sizeof(conf), "/tmp/check_autoattach.XXXXXX");
	ck_assert_int_ge(mkstemp(conf), 0);
	write_conf(rules);
	xs_fake_install();
	domain(0, "Domain-0");
	xgpub_config_init(conf, 0, 0, 1, true);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
}

static void go(void)
{
	static const struct xgpub_xen_limits lim = {
		.max_ring_order = 0, .max_data_pages = 256, .max_channels = 16,
	};
	static const struct xgpub_options opt = { .gpu = 0 };

	X = xgpub_xen_start(&lim, &opt);
	ck_assert_ptr_nonnull(X);
}

static void teardown(void)
{
	if (X)
		xgpub_xen_stop(X);
	X = NULL;
	if (conf[0])
		unlink(conf);
}

START_TEST(auto_at_start_and_new)
{
	start("vm-no attach=no weight=5\n"
	      "vm-* weight=512 cap=50\n"
	      "* attach=no\n");
	domain(3, "vm-1");
	domain(4, "db");
	domain(7, "vm-no");
	go();
	/* at start: the domains there whose rule says attach */
	ck_assert(has_device(3));
	ck_assert(!has_device(4));
	ck_assert(!has_device(7));
	ck_assert(!has_device(0));
	ck_assert_ptr_null(xs_fake_get("/local/domain/0/device/xgpu"));
	/* a new domain: at the next look */
	domain(5, "vm-5");
	xgpub_xen_poll(X);
	ck_assert(has_device(5));
	/* one without its name yet: once it has one */
	xs_fake_put("/local/domain/6/vm", "/vm/x");
	xgpub_xen_poll(X);
	ck_assert(!has_device(6));
	domain(6, "vm-6");
	xgpub_xen_poll(X);
	ck_assert(has_device(6));
	/* the auto-attached device goes through the handshake as any */
	xs_fake_put(BE "/3/0/hotplug-status", "connected");
	xgpub_xen_poll(X);
	ck_assert_str_eq(xs_fake_get(BE "/3/0/state"), "2");	/* InitWait */
	ck_assert_ptr_nonnull(xs_fake_get(BE "/3/0/max-channels"));
}
END_TEST

/* a rule's channels=N is the device's max-channels; without it, the
 * daemon's (--max-channels: 16 here) */
START_TEST(auto_channels_per_domain)
{
	start("vm-few channels=2\n"
	      "vm-* weight=512\n");
	domain(3, "vm-few");
	domain(4, "vm-4");
	go();
	ck_assert(has_device(3));
	ck_assert(has_device(4));
	xs_fake_put(BE "/3/0/hotplug-status", "connected");
	xs_fake_put(BE "/4/0/hotplug-status", "connected");
	xgpub_xen_poll(X);
	ck_assert_str_eq(xs_fake_get(BE "/3/0/state"), "2");
	ck_assert_str_eq(xs_fake_get(BE "/3/0/max-channels"), "2");
	ck_assert_str_eq(xs_fake_get(BE "/4/0/max-channels"), "16");
}
END_TEST

/* device 0 of domid attached by hand, as xgpu attach does, with ncaps
 * KEY=VALUE caps of its own */
static void attach_by_hand(unsigned int domid, char **caps, int ncaps)
{
	struct xgpu_xsdev dev;

	xgpu_xsdev_paths(&dev, domid, 0);
	dev.caps = caps;
	dev.ncaps = ncaps;
	ck_assert_int_eq(xgpu_xsdev_create(xgpub_xs, NULL, &dev), 0);
}

/* channels set at run time for a domain no rule names, its device
 * attached by hand (xgpu attach): published when the device connects */
START_TEST(caps_channels_without_rule)
{
	char w[] = "channels=3";
	char *words[] = { w };

	start("vm-* weight=512\n");
	domain(5, "db");
	ck_assert_int_eq(xgpub_config_caps_set("db", 1, words, err,
					       sizeof(err)), 0);
	go();
	ck_assert(!has_device(5));
	attach_by_hand(5, NULL, 0);
	xgpub_xen_poll(X);
	xs_fake_put(BE "/5/0/hotplug-status", "connected");
	xgpub_xen_poll(X);
	ck_assert_str_eq(xs_fake_get(BE "/5/0/state"), "2");
	ck_assert_str_eq(xs_fake_get(BE "/5/0/max-channels"), "3");
}
END_TEST

/* a device's own caps in xenstore (xgpu attach DOM channels=4): over its
 * rule's, under the caps set at run time; a bad one left out */
START_TEST(device_caps_from_xenstore)
{
	char c1[] = "channels=4", c2[] = "quota-mb=600",
	     c3[] = "images-mb=lots", w[] = "channels=2";
	char *caps[] = { c1, c2, c3 }, *words[] = { w };

	start("db* attach=no channels=8 quota-mb=100\n");
	domain(5, "db1");
	domain(6, "db2");
	ck_assert_int_eq(xgpub_config_caps_set("db2", 1, words, err,
					       sizeof(err)), 0);
	go();
	attach_by_hand(5, caps, 3);
	attach_by_hand(6, caps, 3);
	ck_assert_str_eq(xs_fake_get(BE "/5/0/caps/quota-mb"), "600");
	xgpub_xen_poll(X);
	xs_fake_put(BE "/5/0/hotplug-status", "connected");
	xs_fake_put(BE "/6/0/hotplug-status", "connected");
	xgpub_xen_poll(X);
	ck_assert_str_eq(xs_fake_get(BE "/5/0/max-channels"), "4");
	ck_assert_str_eq(xs_fake_get(BE "/6/0/max-channels"), "2");
}
END_TEST

START_TEST(auto_detached_stays)
{
	start("vm-* weight=512\n");
	domain(3, "vm-1");
	go();
	ck_assert(has_device(3));
	/* xgpu detach */
	xs_fake_rm(NULL, 0, "/local/domain/3/device/xgpu/0");
	xs_fake_rm(NULL, 0, BE "/3/0");
	xgpub_xen_poll(X);
	xgpub_xen_poll(X);
	ck_assert(!has_device(3));
	/* nor after a reload: the domain had its device */
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	ck_assert(!has_device(3));
}
END_TEST

START_TEST(auto_domain_goes)
{
	start("vm-* weight=512\n");
	domain(3, "vm-1");
	go();
	ck_assert(has_device(3));
	domain_gone(3);
	xgpub_xen_poll(X);
	ck_assert_ptr_null(xs_fake_get(BE "/3"));
	ck_assert_ptr_null(xs_fake_get(BE "/3/0"));
	/* its id again, another domain: looked at afresh */
	domain(3, "db");
	xgpub_xen_poll(X);
	ck_assert(!has_device(3));
	domain_gone(3);
	xgpub_xen_poll(X);
	domain(3, "vm-again");
	xgpub_xen_poll(X);
	ck_assert(has_device(3));
	/* backend nodes of a domain that is not there: removed */
	xs_fake_put(BE "/9/0/frontend", "/local/domain/9/device/xgpu/0");
	xgpub_xen_poll(X);
	ck_assert_ptr_null(xs_fake_get(BE "/9"));
}
END_TEST

START_TEST(auto_has_one)
{
	start("vm-* weight=512\n");
	domain(3, "vm-1");
	/* given by xgpu attach before the daemon started: left as it is */
	xs_fake_put(BE "/3/0/frontend", "/local/domain/3/device/xgpu/0");
	xs_fake_put(BE "/3/0/mark", "admin");
	go();
	ck_assert_str_eq(xs_fake_get(BE "/3/0/mark"), "admin");
	ck_assert_ptr_null(xs_fake_get(BE "/3/0/online"));
}
END_TEST

START_TEST(auto_reload)
{
	start("vm-* weight=512\n");
	domain(4, "db");
	go();
	ck_assert(!has_device(4));
	/* a refused file changes nothing */
	write_conf("db weight=2 bogus=1\n");
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), -1);
	xgpub_xen_poll(X);
	ck_assert(!has_device(4));
	/* a good one gives the domain its device now */
	write_conf("db weight=2\n");
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	ck_assert(has_device(4));
}
END_TEST

START_TEST(auto_refused)
{
	int w;

	start("vm-* weight=512\n");
	domain(3, "vm-1");
	xs_fake_refuse_mkdir = true;
	go();
	ck_assert(!has_device(3));
	ck_assert_ptr_null(xs_fake_get(BE "/3"));
	/* not tried again at every look (nor logged again) */
	w = xs_fake_writes;
	xgpub_xen_poll(X);
	ck_assert_int_eq(xs_fake_writes, w);
	/* a reload tries again */
	xs_fake_refuse_mkdir = false;
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	ck_assert(has_device(3));
}
END_TEST

START_TEST(auto_migrate_incoming)
{
	start("vm-1 weight=512\n"
	      "* attach=no\n");
	domain(3, "vm-1");
	go();
	ck_assert(has_device(3));
	/* xl migrate's receiving end: NAME--incoming until it starts as
	 * NAME, judged as NAME (the guest resumes with its device) */
	domain(5, "vm-1--incoming");
	domain(6, "db--incoming");
	domain(7, "--incoming");
	xgpub_xen_poll(X);
	ck_assert(has_device(5));
	ck_assert(!has_device(6));
	ck_assert(!has_device(7));
	/* the sender's copy, renamed away, keeps the one it has */
	domain(3, "vm-1--migratedaway");
	xgpub_xen_poll(X);
	ck_assert(has_device(3));
}
END_TEST

/* the looks after xenstore events: a burst, then a rate (xgpub_bucket.h,
 * XGPUB_XEN_LOOKS_*) */
START_TEST(looks_bucket)
{
	struct xgpub_bucket b;
	const uint64_t t0 = 5000000000ull, ms = 1000000ull;
	unsigned int took = 0;

	xgpub_bucket_init(&b, XGPUB_XEN_LOOKS_PER_S, XGPUB_XEN_LOOKS_BURST);
	/* a burst of 16 at once, then none */
	for (int i = 0; i < 100; i++)
		took += xgpub_bucket_take(&b, t0);
	ck_assert_uint_eq(took, XGPUB_XEN_LOOKS_BURST);
	ck_assert_uint_eq(xgpub_bucket_wait_ns(&b, t0), 10 * ms);
	ck_assert(!xgpub_bucket_take(&b, t0 + 9 * ms));
	ck_assert_uint_eq(xgpub_bucket_wait_ns(&b, t0 + 9 * ms), 1 * ms);
	ck_assert(xgpub_bucket_take(&b, t0 + 10 * ms));
	/* asked every 100 us for 2 s: 100 a second, no more */
	took = 0;
	for (uint64_t t = t0 + 10 * ms; t < t0 + 2010 * ms; t += ms / 10)
		took += xgpub_bucket_take(&b, t);
	ck_assert_uint_ge(took, 199);
	ck_assert_uint_le(took, 201);
	/* idle for a while: the burst again, never more */
	took = 0;
	for (int i = 0; i < 100; i++)
		took += xgpub_bucket_take(&b, t0 + 60000 * ms);
	ck_assert_uint_eq(took, XGPUB_XEN_LOOKS_BURST);
	/* a clock that goes back takes nothing, gives nothing */
	ck_assert(!xgpub_bucket_take(&b, t0));
}
END_TEST

/* watch events as fast as they come: the daemon looks at every device
 * for the first 16 at once, then at most 100 a second; an event that
 * waited gets its look when the bucket allows */
START_TEST(looks_after_events)
{
	uint64_t l0, looks, t0, ms;

	start("vm-* weight=5\n");
	xs_fake_install_watching();
	domain(3, "vm-1");
	go();
	l0 = xgpub_xen_looks(X);
	t0 = xgpub_now_ns();
	for (int i = 0; i < 1000; i++) {
		xs_fake_event("/local/domain/3/device/xgpu/0/ch/7/n");
		xgpub_xen_events(X);
	}
	ms = (xgpub_now_ns() - t0) / 1000000u;
	looks = xgpub_xen_looks(X) - l0;
	ck_assert_uint_ge(looks, XGPUB_XEN_LOOKS_BURST);
	ck_assert_msg(looks <= XGPUB_XEN_LOOKS_BURST + ms / 10 + 1,
		      "%llu looks for 1000 events in %llu ms",
		      (unsigned long long)looks, (unsigned long long)ms);
	/* the last events wait for a look, due within 10 ms */
	ck_assert_uint_le(xgpub_xen_due_ns(X), 10000000u);
	usleep(20000);
	ck_assert_uint_eq(xgpub_xen_due_ns(X), 0);
	l0 = xgpub_xen_looks(X);
	xgpub_xen_events(X);
	ck_assert_uint_eq(xgpub_xen_looks(X), l0 + 1);
	ck_assert_uint_eq(xgpub_xen_due_ns(X), UINT64_MAX);
	/* what a look does still happens: a new domain gets its device */
	domain(4, "vm-4");
	xs_fake_event("/local/domain/0/backend/xgpu");
	xgpub_xen_events(X);
	ck_assert(has_device(4));
}
END_TEST

/* a guest that floods its frontend area waits for its own bucket: an
 * event of another guest's is looked at at once, and Dom0's too */
START_TEST(looks_per_guest)
{
	uint64_t l0, t0, ms;

	start("vm-* weight=5\n");
	xs_fake_install_watching();
	domain(3, "vm-1");
	domain(4, "vm-2");
	go();
	ck_assert(has_device(3) && has_device(4));
	t0 = xgpub_now_ns();
	for (int i = 0; i < 1000; i++) {
		xs_fake_event("/local/domain/3/device/xgpu/0/ch/7/n");
		xgpub_xen_events(X);
	}
	ms = (xgpub_now_ns() - t0) / 1000000u;
	ck_assert_msg(ms < 200, "1000 events took %llu ms",
		      (unsigned long long)ms);
	/* dom3's device waits for its bucket */
	ck_assert_uint_le(xgpub_xen_due_ns(X), 10000000u);
	ck_assert_uint_ne(xgpub_xen_due_ns(X), UINT64_MAX);
	/* dom4's event: a look at once (dom3's bucket is empty) */
	l0 = xgpub_xen_looks(X);
	xs_fake_event("/local/domain/4/device/xgpu/0/state");
	xgpub_xen_events(X);
	ck_assert_uint_eq(xgpub_xen_looks(X), l0 + 1);
	/* and again: its burst is its own */
	for (int i = 0; i < 10; i++) {
		xs_fake_event("/local/domain/4/device/xgpu/0/state");
		xgpub_xen_events(X);
	}
	ck_assert_uint_eq(xgpub_xen_looks(X), l0 + 11);
	/* Dom0's event: a look at every device at once, which serves
	 * dom3's waiting one too */
	xs_fake_event("/local/domain/0/backend/xgpu");
	xgpub_xen_events(X);
	ck_assert_uint_eq(xgpub_xen_looks(X), l0 + 12);
	ck_assert_uint_eq(xgpub_xen_due_ns(X), UINT64_MAX);
}
END_TEST

/* a rule's xs-looks sets its guest's rate: 10 a second, after the burst */
START_TEST(looks_rate_from_rule)
{
	uint64_t l0;

	start("vm-* xs-looks=10\n");
	xs_fake_install_watching();
	domain(3, "vm-1");
	go();
	for (int i = 0; i < 100; i++) {
		xs_fake_event("/local/domain/3/device/xgpu/0/state");
		xgpub_xen_events(X);
	}
	/* its bucket is empty: at 10 a second the next look is ~100 ms
	 * away (at the default 100, 10 ms) */
	usleep(50000);
	l0 = xgpub_xen_looks(X);
	for (int i = 0; i < 10; i++) {
		xs_fake_event("/local/domain/3/device/xgpu/0/state");
		xgpub_xen_events(X);
	}
	ck_assert_uint_eq(xgpub_xen_looks(X), l0);
	ck_assert_uint_ge(xgpub_xen_due_ns(X), 20000000u);
	ck_assert_uint_le(xgpub_xen_due_ns(X), 100000000u);
}
END_TEST

static Suite *autoattach_suite(void)
{
	Suite *s = suite_create("autoattach");
	TCase *tc = tcase_create("autoattach");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, auto_at_start_and_new);
	tcase_add_test(tc, auto_detached_stays);
	tcase_add_test(tc, auto_domain_goes);
	tcase_add_test(tc, auto_has_one);
	tcase_add_test(tc, auto_reload);
	tcase_add_test(tc, auto_refused);
	tcase_add_test(tc, auto_migrate_incoming);
	tcase_add_test(tc, auto_channels_per_domain);
	tcase_add_test(tc, caps_channels_without_rule);
	tcase_add_test(tc, device_caps_from_xenstore);
	tcase_add_test(tc, looks_bucket);
	tcase_add_test(tc, looks_after_events);
	tcase_add_test(tc, looks_per_guest);
	tcase_add_test(tc, looks_rate_from_rule);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* each case starts a backend of its own on a fresh xenstore */
	return check_run(autoattach_suite(), true);
}
