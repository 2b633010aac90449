// SPDX-License-Identifier: MIT
/*
 * check_rules.c: xgpu.conf (common/xgpu_rules.c): a good file, each kind
 * of bad line refused with its number, pattern matching, the first
 * matching rule wins, a domain's settings from its rule and the daemon's
 * defaults; the daemon's side (daemon/xgpub_config.c): a refused reload
 * keeps the rules in force, the scheduler settings of a domain's key.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpu_ctl.h"
#include "xgpu_rules.h"
#include "xgpub_broker.h"
#include "xgpub_config.h"
#include "xgpub_guest.h"
#include "check_run.h"

static struct xgpu_rules R;
static char err[1536];

static int parse(const char *text)
{
	return xgpu_rules_parse(text, &R, err, sizeof(err));
}

/* text is refused at line ln, and the message says `says` */
static void refused(const char *text, unsigned int ln, const char *says)
{
	char want[32];

	R.n = 7;
	ck_assert_msg(parse(text) == -1, "accepted: %s", text);
	ck_assert_int_eq(R.n, 0);
	snprintf(want, sizeof(want), "%u: ", ln);
	ck_assert_msg(!strncmp(err, want, strlen(want)),
		      "'%s': error '%s' is not at line %u", text, err, ln);
	ck_assert_msg(strstr(err, says), "'%s': error '%s' does not say '%s'",
		      text, err, says);
}

START_TEST(rules_good_file)
{
	const char *text =
		"# the lab's domains\n"
		"\n"
		"vm-*\tweight=512 cap=50 quota-mb=8192 gpu-limit-ms=5000 gpu=0\n"
		"   batch-?   attach=no weight=64   # trailing comment\n"
		"train-[0-9]* weight=65535 cap=0 quota-mb=0\n"
		"plain\r\n"
		"last-no-newline weight=1\n"
		"caps channels=4 pinned-mb=0 images-mb=256";
	const struct xgpu_rule *r;

	ck_assert_int_eq(parse(text), 0);
	ck_assert_int_eq(R.n, 6);
	r = &R.r[0];
	ck_assert_str_eq(r->pattern, "vm-*");
	ck_assert_uint_eq(r->line, 3);
	ck_assert_uint_eq(r->has, XGPU_RULE_WEIGHT | XGPU_RULE_CAP |
			  XGPU_RULE_QUOTA | XGPU_RULE_LIMIT | XGPU_RULE_GPU);
	ck_assert_uint_eq(r->weight, 512);
	ck_assert_uint_eq(r->cap, 50);
	ck_assert_uint_eq(r->quota_mb, 8192);
	ck_assert_uint_eq(r->limit_ms, 5000);
	ck_assert_uint_eq(r->gpu, 0);
	ck_assert(r->attach);
	r = &R.r[1];
	ck_assert_str_eq(r->pattern, "batch-?");
	ck_assert_uint_eq(r->line, 4);
	ck_assert(!r->attach);
	ck_assert_uint_eq(r->has, XGPU_RULE_ATTACH | XGPU_RULE_WEIGHT);
	ck_assert_uint_eq(R.r[2].weight, 65535);
	ck_assert_uint_eq(R.r[3].has, 0);
	ck_assert(R.r[3].attach);
	ck_assert_str_eq(R.r[3].pattern, "plain");
	ck_assert_uint_eq(R.r[4].line, 7);
	ck_assert_uint_eq(R.r[4].weight, 1);
	r = &R.r[5];
	ck_assert_uint_eq(r->has, XGPU_RULE_CHANNELS | XGPU_RULE_PINNED |
			  XGPU_RULE_IMAGES);
	ck_assert_uint_eq(r->channels, 4);
	ck_assert_uint_eq(r->pinned_mb, 0);
	ck_assert_uint_eq(r->images_mb, 256);
	/* nothing but comments and blanks: no rules, no error */
	ck_assert_int_eq(parse("# none\n\n   \n\t# x=1\n"), 0);
	ck_assert_int_eq(R.n, 0);
	ck_assert_int_eq(parse(""), 0);
}
END_TEST

START_TEST(rules_bad_lines)
{
	char big[XGPU_RULES_LINE_MAX + 16], *many;
	size_t off = 0;

	refused("a weight=1\nvm-* wait=3\n", 2, "unknown key 'wait' "
		"(accepted: weight=1..65535");
	refused("vm-* weight=0\n", 1, "weight: '0' is not a whole number "
		"from 1 to 65535");
	refused("\n\nvm-* weight=65536\n", 3, "from 1 to 65535");
	refused("vm-* cap=101\n", 1, "cap: '101' is not a whole number from "
		"0 to 100");
	refused("vm-* cap=-1\n", 1, "cap: '-1'");
	refused("vm-* cap=5x\n", 1, "cap: '5x'");
	refused("vm-* cap=\n", 1, "cap: ''");
	refused("vm-* quota-mb=99999999999\n", 1, "quota-mb:");
	refused("vm-* gpu-limit-ms=86400001\n", 1, "gpu-limit-ms:");
	refused("vm-* gpu=255\n", 1, "gpu: '255' is not a whole number from "
		"0 to 254");
	refused("vm-* weight=1 weight=2\n", 1, "weight given twice");
	refused("vm-* channels=0\n", 1, "channels: '0' is not a whole number "
		"from 1 to 64");
	refused("vm-* channels=65\n", 1, "from 1 to 64");
	refused("vm-* xs-looks=0\n", 1, "xs-looks");
	refused("vm-* xs-looks=1001\n", 1, "from 1 to 1000");
	refused("vm-* grant-mb=0\n", 1, "grant-mb");
	refused("vm-* grant-mb=1048577\n", 1, "from 1 to 1048576");
	refused("vm-* images-mb=0\n", 1, "images-mb: '0' is not a whole "
		"number from 1 to 1048576");
	refused("vm-* pinned-mb=16777217\n", 1, "pinned-mb: '16777217'");
	refused("vm-* pinned-mb=1 pinned-mb=1\n", 1, "pinned-mb given twice");
	refused("vm-* attach=maybe\n", 1, "attach: 'maybe' is not yes or no");
	refused("vm-* attach=no attach=no\n", 1, "attach given twice");
	refused("vm-* 512\n", 1, "'512' is not KEY=VALUE");
	refused("vm-* =512\n", 1, "'=512' is not KEY=VALUE");
	refused("# c\nweight=512\n", 2, "a rule starts with a domain name or "
		"pattern");
	refused("12 weight=1\n", 1, "rules match domain names, not domain "
		"ids");
	refused("vm-\x01 weight=1\n", 1, "printable ASCII (byte 0x01)");
	refused("vm-1 weight=1\x1b[2J\n", 1, "printable ASCII (byte 0x1b)");
	refused("vm-1 cap=5 # ok: caf\xc3\xa9\nvm-\xc3\xa9\n", 2,
		"printable ASCII (byte 0xc3)");
	refused("x123456789012345678901234567890123456789012345678901234567890"
		"1234 weight=1\n", 1, "pattern longer than 63");
	refused("vm-* weight=1\nother\nvm-* weight=2\n", 3, "repeats the "
		"pattern of line 1");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	refused(big, 1, "line longer than 1024");
	/* a bad line after good ones refuses the whole file */
	refused("a weight=1\nb weight=2\nc weight=x\n", 3, "weight: 'x'");
	many = malloc((XGPU_RULES_MAX + 1) * 16);
	ck_assert_ptr_nonnull(many);
	for (int i = 0; i <= XGPU_RULES_MAX; i++)
		off += (size_t)sprintf(many + off, "d%d\n", i);
	refused(many, XGPU_RULES_MAX + 1, "more than 256 rules");
	many[off - strlen("d256\n")] = 0;
	ck_assert_int_eq(parse(many), 0);
	ck_assert_int_eq(R.n, XGPU_RULES_MAX);
	free(many);
}
END_TEST

START_TEST(rules_match)
{
	ck_assert_int_eq(parse("web weight=1\n"
			       "vm-? weight=2\n"
			       "vm-[ab]* weight=3\n"
			       "vm-* weight=4\n"
			       "* attach=no\n"), 0);
	ck_assert_uint_eq(xgpu_rules_match(&R, "web")->weight, 1);
	ck_assert_ptr_eq(xgpu_rules_match(&R, "web2"), &R.r[4]);
	ck_assert_uint_eq(xgpu_rules_match(&R, "vm-1")->weight, 2);
	/* first match wins: vm-a matches vm-? before vm-[ab]* */
	ck_assert_uint_eq(xgpu_rules_match(&R, "vm-a")->weight, 2);
	ck_assert_uint_eq(xgpu_rules_match(&R, "vm-alpha")->weight, 3);
	ck_assert_uint_eq(xgpu_rules_match(&R, "vm-beta")->weight, 3);
	ck_assert_uint_eq(xgpu_rules_match(&R, "vm-gamma")->weight, 4);
	ck_assert_uint_eq(xgpu_rules_match(&R, "vm-")->weight, 4);
	ck_assert_ptr_eq(xgpu_rules_match(&R, "Web"), &R.r[4]);
	ck_assert_ptr_null(xgpu_rules_match(&R, ""));
	ck_assert_ptr_null(xgpu_rules_match(&R, NULL));
	ck_assert_int_eq(parse("vm-* weight=4\n"), 0);
	ck_assert_ptr_null(xgpu_rules_match(&R, "web"));
	ck_assert_ptr_null(xgpu_rules_match(&R, "avm-1"));
}
END_TEST

START_TEST(rules_settings)
{
	const struct xgpu_dom_settings def = {
		.weight = 256, .cap = 0, .limit_ms = 0, .gpu = 1,
		.quota = 5ull << 20, .attach = false,
	};
	struct xgpu_dom_settings s;

	ck_assert_int_eq(parse("vm-1 weight=512 cap=50 quota-mb=8192 "
			       "gpu-limit-ms=5000 gpu=0\n"
			       "vm-2 cap=10\n"
			       "vm-3 attach=no quota-mb=0\n"), 0);
	ck_assert_ptr_eq(xgpu_rules_settings(&R, "vm-1", &def, &s), &R.r[0]);
	ck_assert_uint_eq(s.weight, 512);
	ck_assert_uint_eq(s.cap, 50);
	ck_assert_uint_eq(s.quota, 8192ull << 20);
	ck_assert_uint_eq(s.limit_ms, 5000);
	ck_assert_uint_eq(s.gpu, 0);
	ck_assert(s.attach);
	/* what the rule leaves out is the daemon's */
	ck_assert_ptr_eq(xgpu_rules_settings(&R, "vm-2", &def, &s), &R.r[1]);
	ck_assert_uint_eq(s.weight, 256);
	ck_assert_uint_eq(s.cap, 10);
	ck_assert_uint_eq(s.quota, 5ull << 20);
	ck_assert_uint_eq(s.gpu, 1);
	ck_assert(s.attach);
	ck_assert_ptr_eq(xgpu_rules_settings(&R, "vm-3", &def, &s), &R.r[2]);
	ck_assert(!s.attach);
	ck_assert_uint_eq(s.quota, 0);
	/* no rule: the defaults, no device */
	ck_assert_ptr_null(xgpu_rules_settings(&R, "other", &def, &s));
	ck_assert(!memcmp(&s, &def, sizeof(s)));
}
END_TEST

static char tmpdir[64];

static const char *tmp_file(const char *name, const char *text,
			    size_t len)
{
	static char path[128];
	FILE *f;

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_rules.XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

START_TEST(rules_load)
{
	const char *p;

	ck_assert_int_eq(xgpu_rules_load("/nonexistent/xgpu.conf", &R, err,
					 sizeof(err)), 1);
	ck_assert_int_eq(R.n, 0);
	p = tmp_file("good.conf", "vm-* weight=7\n", 14);
	ck_assert_int_eq(xgpu_rules_load(p, &R, err, sizeof(err)), 0);
	ck_assert_int_eq(R.n, 1);
	/* the message names the file and the line */
	p = tmp_file("bad.conf", "vm-* weight=7\n\nx cap=200\n", 25);
	ck_assert_int_eq(xgpu_rules_load(p, &R, err, sizeof(err)), -1);
	ck_assert_int_eq(R.n, 0);
	ck_assert_msg(strstr(err, "bad.conf:3: cap: '200'"), "%s", err);
	/* a NUL does not end the file early */
	p = tmp_file("nul.conf", "a weight=1\nb\0 weight=2\n", 23);
	ck_assert_int_eq(xgpu_rules_load(p, &R, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "nul.conf:2: NUL byte"), "%s", err);
	/* not a file: cannot be read */
	ck_assert_int_eq(xgpu_rules_load(tmpdir, &R, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
}
END_TEST

/* the daemon's rules: a refused file keeps those in force; a domain's
 * key takes its rule's scheduler settings, a local client's never */
START_TEST(config_reload_keeps)
{
	const char *p = tmp_file("xgpu.conf", "vm-* weight=512 cap=50 "
				 "gpu-limit-ms=100 gpu=1\n", 45);
	struct xgpu_dom_settings s;
	uint32_t w, cap, lim;

	xgpub_config_init(p, 0, 1ull << 30, 2, true);
	ck_assert_int_eq(xgpub_config_rules()->n, 0);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	ck_assert_int_eq(xgpub_config_rules()->n, 1);
	ck_assert_ptr_nonnull(xgpub_config_domain("vm-1", &s));
	ck_assert_uint_eq(s.gpu, 1);
	ck_assert_uint_eq(s.quota, 1ull << 30);
	ck_assert_ptr_null(xgpub_config_domain("db", &s));
	ck_assert_uint_eq(s.gpu, 0);
	xgpub_guest_settings("vm-1", &w, &cap, &lim);
	ck_assert_uint_eq(w, 512);
	ck_assert_uint_eq(cap, 50);
	ck_assert_uint_eq(lim, 100);
	xgpub_guest_settings("local:vm-1", &w, &cap, &lim);
	ck_assert_uint_eq(w, XGPU_SCHED_WEIGHT_DEFAULT);
	xgpub_guest_settings("domid:3", &w, &cap, &lim);
	ck_assert_uint_eq(w, XGPU_SCHED_WEIGHT_DEFAULT);
	/* given settings win over the rule */
	ck_assert_int_eq(xgpub_guest_settings_set("vm-1", 9, 0, 0), 0);
	xgpub_guest_settings("vm-1", &w, &cap, &lim);
	ck_assert_uint_eq(w, 9);
	xgpub_guest_settings("vm-2", &w, &cap, &lim);
	ck_assert_uint_eq(w, 512);

	/* bad line: refused, the rule in force stays */
	tmp_file("xgpu.conf", "vm-* weight=1\nzz weight=x\n", 26);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "xgpu.conf:2: weight: 'x'"), "%s", err);
	ck_assert_int_eq(xgpub_config_rules()->n, 1);
	ck_assert_uint_eq(xgpub_config_rules()->r[0].weight, 512);
	/* a GPU this host does not have: refused */
	tmp_file("xgpu.conf", "vm-* gpu=2\n", 11);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "xgpu.conf:1: gpu=2: this host has 2 GPUs "
			      "(0..1)"), "%s", err);
	ck_assert_uint_eq(xgpub_config_rules()->r[0].weight, 512);
	/* a good file takes effect */
	tmp_file("xgpu.conf", "vm-* weight=3\n", 14);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	xgpub_guest_settings("vm-2", &w, &cap, &lim);
	ck_assert_uint_eq(w, 3);
	/* gone: no rules, no error */
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	ck_assert_int_eq(xgpub_config_rules()->n, 0);
	xgpub_guest_settings("vm-2", &w, &cap, &lim);
	ck_assert_uint_eq(w, XGPU_SCHED_WEIGHT_DEFAULT);
}
END_TEST

/* a worker's options: the daemon's; quota, GPU, pinned memory and
 * module images from the rule */
START_TEST(config_worker_opts)
{
	const char *p = tmp_file("w.conf", "vm-1 quota-mb=64 gpu=1\n"
				 "vm-2 weight=3\nvm-3 quota-mb=0\n"
				 "vm-4 pinned-mb=32 images-mb=16\n"
				 "vm-5 pinned-mb=0\n", 101);
	const struct xgpub_options d = {
		.driver_path = "/x/libcuda.so.1", .gpu = 0,
		.quota = 8ull << 20, .pin_quota = 5, .spin_us = 7,
		.images_max = 11,
	};
	struct xgpub_options o;

	xgpub_config_init(p, 0, 8ull << 20, 2, true);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	xgpub_config_worker_opts("vm-1", &d, &o);
	ck_assert_uint_eq(o.quota, 64ull << 20);
	ck_assert_int_eq(o.gpu, 1);
	ck_assert_str_eq(o.driver_path, d.driver_path);
	ck_assert_uint_eq(o.pin_quota, 5);
	ck_assert_uint_eq(o.spin_us, 7);
	/* a rule without them: the daemon's */
	xgpub_config_worker_opts("vm-2", &d, &o);
	ck_assert_uint_eq(o.quota, 8ull << 20);
	ck_assert_int_eq(o.gpu, 0);
	ck_assert_uint_eq(o.pin_quota, 5);
	ck_assert_uint_eq(o.images_max, 11);
	/* quota-mb=0: no limit for that domain */
	xgpub_config_worker_opts("vm-3", &d, &o);
	ck_assert_uint_eq(o.quota, 0);
	/* the Dom0 memory caps of the rule; pinned-mb=0: no limit */
	xgpub_config_worker_opts("vm-4", &d, &o);
	ck_assert_uint_eq(o.pin_quota, 32ull << 20);
	ck_assert_uint_eq(o.images_max, 16ull << 20);
	ck_assert_uint_eq(o.quota, 8ull << 20);
	xgpub_config_worker_opts("vm-5", &d, &o);
	ck_assert_uint_eq(o.pin_quota, 0);
	ck_assert_uint_eq(o.images_max, 11);
	/* xl migrate's receiving end is judged as the domain */
	xgpub_config_worker_opts("vm-4--incoming", &d, &o);
	ck_assert_uint_eq(o.pin_quota, 32ull << 20);
	/* no rule, no name */
	xgpub_config_worker_opts("db", &d, &o);
	ck_assert_uint_eq(o.quota, 8ull << 20);
	ck_assert_int_eq(o.gpu, 0);
	o.gpu = 9;
	xgpub_config_worker_opts("", &d, &o);
	ck_assert_int_eq(o.gpu, 0);
	ck_assert_uint_eq(o.quota, 8ull << 20);
}
END_TEST

/* caps set at run time: over the rule, key by key, for that domain
 * (and its --incoming twin) only; other keys and names refused */
START_TEST(config_caps_set)
{
	const char *p = tmp_file("c.conf", "vm-* quota-mb=64 pinned-mb=8\n",
				 29);
	const struct xgpub_options d = {
		.quota = 8ull << 20, .pin_quota = 5, .images_max = 11,
	};
	char w1[] = "quota-mb=512", w2[] = "channels=3", w3[] = "weight=2",
	     w4[] = "images-mb=0", w5[] = "images-mb=7";
	char *ok[] = { w1, w2 }, *bad[] = { w3 }, *zero[] = { w4 },
	     *img[] = { w5 };
	struct xgpub_options o;
	struct xgpu_dom_settings s;

	xgpub_config_init(p, 0, 8ull << 20, 2, true);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	ck_assert_int_eq(xgpub_config_caps_set("vm-1", 2, ok, err,
					       sizeof(err)), 0);
	ck_assert_int_eq(xgpub_config_caps_count(), 1);
	xgpub_config_worker_opts("vm-1", &d, &o);
	ck_assert_uint_eq(o.quota, 512ull << 20);
	ck_assert_uint_eq(o.pin_quota, 8ull << 20);	/* the rule's */
	ck_assert_uint_eq(o.images_max, 11);		/* the daemon's */
	ck_assert_ptr_nonnull(xgpub_config_domain("vm-1--incoming", &s));
	ck_assert_uint_eq(s.channels, 3);
	ck_assert_uint_eq(s.quota, 512ull << 20);
	/* another domain of the rule: the rule's */
	xgpub_config_worker_opts("vm-2", &d, &o);
	ck_assert_uint_eq(o.quota, 64ull << 20);
	/* a domain without a rule: caps alone */
	ck_assert_int_eq(xgpub_config_caps_set("db", 1, img, err,
					       sizeof(err)), 0);
	xgpub_config_worker_opts("db", &d, &o);
	ck_assert_uint_eq(o.images_max, 7ull << 20);
	ck_assert_uint_eq(o.quota, 8ull << 20);
	/* refused: not a cap, a bad value, not a domain's name */
	ck_assert_int_eq(xgpub_config_caps_set("vm-1", 1, bad, err,
					       sizeof(err)), -1);
	ck_assert_msg(strstr(err, "sched-credit"), "%s", err);
	ck_assert_int_eq(xgpub_config_caps_set("vm-1", 1, zero, err,
					       sizeof(err)), -1);
	ck_assert_msg(!strncmp(err, "images-mb: '0'", 14), "%s", err);
	ck_assert_int_eq(xgpub_config_caps_set("local:x", 2, ok, err,
					       sizeof(err)), -1);
	ck_assert_msg(strstr(err, "a Xen device's"), "%s", err);
	ck_assert_int_eq(xgpub_config_caps_set("vm:1", 1, ok, err,
					       sizeof(err)), -1);
	ck_assert_msg(strstr(err, "by its key"), "%s", err);
	ck_assert_int_eq(xgpub_config_caps_set("17", 2, ok, err,
					       sizeof(err)), -1);
	ck_assert_int_eq(xgpub_config_caps_set("vm-1", 0, ok, err,
					       sizeof(err)), -1);
	ck_assert_int_eq(xgpub_config_caps_count(), 2);
	/* a local client's key: quota, pinned and images, for its worker
	 * to ask (a domain's name is not a client's key) */
	ck_assert_int_eq(xgpub_config_caps_set("local:u1000:train", 1, ok,
					       err, sizeof(err)), 0);
	ck_assert_int_eq(xgpub_config_caps_set("net:alice", 1, img, err,
					       sizeof(err)), 0);
	{
		struct xgpub_caps c;

		ck_assert_int_eq(xgpub_config_client_caps("local:u1000:train",
							  &c), 1);
		ck_assert_uint_eq(c.has, XGPU_RULE_QUOTA);
		ck_assert_uint_eq(c.quota, 512ull << 20);
		ck_assert_int_eq(xgpub_config_client_caps("net:alice", &c), 1);
		ck_assert_uint_eq(c.has, XGPU_RULE_IMAGES);
		ck_assert_uint_eq(c.images_max, 7ull << 20);
		ck_assert_int_eq(xgpub_config_client_caps("local:train", &c),
				 0);
		ck_assert_uint_eq(c.has, 0);
		ck_assert_int_eq(xgpub_config_client_caps("vm-1", &c), 0);
	}
	ck_assert_int_eq(xgpub_config_caps_count(), 4);
	/* a device's own caps (xenstore): over the rule's, under those set
	 * at run time */
	{
		struct xgpu_rule dev;
		char q[] = "quota-mb=600", pn[] = "pinned-mb=3";

		memset(&dev, 0, sizeof(dev));
		ck_assert_int_eq(xgpu_rules_setting(&dev, q, err, sizeof(err)),
				 0);
		ck_assert_int_eq(xgpu_rules_setting(&dev, pn, err,
						    sizeof(err)), 0);
		xgpub_config_device_opts("vm-2", &dev, &d, &o);
		ck_assert_uint_eq(o.quota, 600ull << 20);	/* not 64 */
		ck_assert_uint_eq(o.pin_quota, 3ull << 20);	/* not 8 */
		xgpub_config_device_opts("vm-1", &dev, &d, &o);
		ck_assert_uint_eq(o.quota, 512ull << 20);	/* set: 512 */
		ck_assert_uint_eq(o.pin_quota, 3ull << 20);
	}
	/* a reload keeps them */
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
	xgpub_config_worker_opts("vm-1", &d, &o);
	ck_assert_uint_eq(o.quota, 512ull << 20);
}
END_TEST

START_TEST(config_limit_needs_sched)
{
	const char *p = tmp_file("s.conf", "vm-* gpu-limit-ms=10\n", 21);

	xgpub_config_init(p, 0, 0, -1, false);
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "gpu-limit-ms needs the GPU scheduler"),
		      "%s", err);
	tmp_file("s.conf", "vm-* gpu-limit-ms=0 gpu=200\n", 28);
	/* 0 is no limit; GPUs not known: not checked */
	ck_assert_int_eq(xgpub_config_reload(err, sizeof(err)), 0);
}
END_TEST

static void cleanup(void)
{
	char cmd[128];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", tmpdir);
	}
}

static Suite *rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("parse");
	TCase *cfg = tcase_create("config");

	tcase_add_test(tc, rules_good_file);
	tcase_add_test(tc, rules_bad_lines);
	tcase_add_test(tc, rules_match);
	tcase_add_test(tc, rules_settings);
	tcase_add_test(tc, rules_load);
	tcase_add_checked_fixture(cfg, NULL, cleanup);
	tcase_add_test(cfg, config_reload_keeps);
	tcase_add_test(cfg, config_worker_opts);
	tcase_add_test(cfg, config_caps_set);
	tcase_add_test(cfg, config_limit_needs_sched);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, cfg);
	return s;
}

int main(void)
{
	int rc = check_run(rules_suite(), false);

	cleanup();
	return rc;
}
