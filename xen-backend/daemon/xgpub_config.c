// SPDX-License-Identifier: MIT
/*
 * xgpub_config.c: the rules of xgpu.conf in force (xgpub_config.h).
 * Only the daemon's event loop calls in here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub.h"
#include "xgpub_broker.h"
#include "xgpub_config.h"
#include "xgpu_ctl.h"

static struct {
	const char *path;
	struct xgpu_dom_settings defaults;
	int ngpus;
	bool sched;
	struct xgpu_rules rules;	/* in force */
	struct xgpu_rules reading;	/* being read */
	void (*listeners[XGPUB_CONFIG_LISTENERS])(void);
	int nlisteners;
} cfg = {
	.path = XGPU_CONFIG_DEFAULT,
	.defaults = {
		.weight = XGPU_SCHED_WEIGHT_DEFAULT,
		.cap = XGPU_CTL_CAP_NONE,
	},
	.ngpus = -1,
	.sched = true,
};

void xgpub_config_init(const char *path, int gpu, uint64_t quota, int ngpus,
		       bool sched)
{
	if (path)
		cfg.path = path;
	cfg.defaults.gpu = (uint32_t)gpu;
	cfg.defaults.quota = quota;
	cfg.defaults.attach = false;
	cfg.ngpus = ngpus;
	cfg.sched = sched;
	cfg.rules.n = 0;
}

void xgpub_config_listen(void (*fn)(void))
{
	if (cfg.nlisteners < XGPUB_CONFIG_LISTENERS)
		cfg.listeners[cfg.nlisteners++] = fn;
	else
		xgpub_err("config: too many listeners");
}

const char *xgpub_config_path(void)
{
	return cfg.path;
}

const struct xgpu_rules *xgpub_config_rules(void)
{
	return &cfg.rules;
}

/*
 * xl migrate's receiving end is named NAME--incoming until it starts as
 * NAME: it is judged as NAME, so that the guest finds its device and its
 * settings when it resumes.
 */
#define MIGRATE_SUFFIX "--incoming"

/* the domain name a name stands for (buf holds it if it must) */
static const char *domain_of(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), k = strlen(MIGRATE_SUFFIX);

	if (n > k && n - k < len && !strcmp(name + n - k, MIGRATE_SUFFIX)) {
		memcpy(buf, name, n - k);
		buf[n - k] = 0;
		return buf;
	}
	return name;
}

/* ---- caps given at run time (`xgpu config set`) ------------------------ */

/* by domain name (pattern: the name itself), in the order given */
static struct xgpu_rule caps[XGPUB_CONFIG_CAPS_MAX];
static int ncaps;

static struct xgpu_rule *caps_of(const char *name)
{
	char buf[XGPU_RULE_PATTERN_MAX];

	name = domain_of(name, buf, sizeof(buf));
	for (int i = 0; i < ncaps; i++)
		if (!strcmp(caps[i].pattern, name))
			return &caps[i];
	return NULL;
}

bool xgpub_config_client_key(const char *name)
{
	return !strncmp(name, "local:", 6) || !strncmp(name, "net:", 4);
}

/* a domain's name, or a client's key, as the caps take it: 0, or -1
 * and err */
static int caps_name(const char *name, char *err, size_t len)
{
	bool digits = true, client = xgpub_config_client_key(name);

	if (!name[0] || strlen(name) >= XGPU_RULE_PATTERN_MAX) {
		snprintf(err, len, "a domain name of 1 to %d characters",
			 XGPU_RULE_PATTERN_MAX - 1);
		return -1;
	}
	for (const char *p = name; *p; p++) {
		if (*p <= ' ' || *p > '~' ||
		    strchr(client ? "=/*?[]" : "=/*?[]:", *p)) {
			snprintf(err, len, "'%.64s': caps are set for a "
				 "domain by its name, or for a local or "
				 "network client by its key (local:NAME, "
				 "local:uUID:NAME, net:NAME)", name);
			return -1;
		}
		digits &= *p >= '0' && *p <= '9';
	}
	if (digits) {
		snprintf(err, len, "'%s': caps are set by domain name, not "
			 "domain id", name);
		return -1;
	}
	return 0;
}

int xgpub_config_caps_set(const char *name, int n, char **words, char *err,
			  size_t len)
{
	struct xgpu_rule got, *c;
	char why[256], buf[XGPU_RULE_PATTERN_MAX];

	if (caps_name(name, err, len))
		return -1;
	memset(&got, 0, sizeof(got));
	for (int i = 0; i < n; i++) {
		if (xgpu_rules_setting(&got, words[i], why, sizeof(why))) {
			/* the file's "LINE: " has no line here */
			snprintf(err, len, "%s", why + strspn(why, "0: "));
			return -1;
		}
	}
	if (!got.has || (got.has & ~(unsigned int)XGPU_RULE_CAPS)) {
		snprintf(err, len, "set gives quota-mb=N, pinned-mb=N, "
			 "images-mb=N, channels=1..64, xs-looks=1..1000 or "
			 "grant-mb=N (weight, cap, gpu-limit-ms: "
			 "sched-credit; gpu, attach: the file)");
		return -1;
	}
	if (xgpub_config_client_key(name) &&
	    (got.has & XGPU_RULE_DEVICE_CAPS)) {
		snprintf(err, len, "channels, xs-looks and grant-mb are a "
			 "Xen device's; a local or network client is one "
			 "process (--max-local-per-user, --max-net)");
		return -1;
	}
	name = domain_of(name, buf, sizeof(buf));
	c = caps_of(name);
	if (!c) {
		if (ncaps >= XGPUB_CONFIG_CAPS_MAX) {
			snprintf(err, len, "caps of %d domains are set "
				 "already", XGPUB_CONFIG_CAPS_MAX);
			return -1;
		}
		c = &caps[ncaps++];
		memset(c, 0, sizeof(*c));
		snprintf(c->pattern, sizeof(c->pattern), "%s", name);
	}
	xgpu_rule_merge(c, &got);
	xgpub_info("config: caps of %s %s set at run time (its "
		   "processes that connect from now on%s)",
		   xgpub_config_client_key(name) ? "client" : "domain", name,
		   xgpub_config_client_key(name) ? "" : "; channels and "
		   "xs-looks: at its device's next connection");
	return 0;
}

int xgpub_config_client_caps(const char *key, struct xgpub_caps *out)
{
	const struct xgpu_rule *c = xgpub_config_client_key(key) ? caps_of(key) : NULL;
	struct xgpu_dom_settings s;

	memset(out, 0, sizeof(*out));
	if (!c)
		return 0;
	memset(&s, 0, sizeof(s));
	xgpu_rule_apply(c, &s);
	out->has = c->has & (XGPU_RULE_QUOTA | XGPU_RULE_PINNED |
			     XGPU_RULE_IMAGES);
	out->quota = s.quota;
	out->pin_quota = s.pin_quota;
	out->images_max = s.images_max;
	return 1;
}

int xgpub_config_caps_count(void)
{
	return ncaps;
}

const struct xgpu_rule *xgpub_config_caps_at(int i)
{
	return i >= 0 && i < ncaps ? &caps[i] : NULL;
}

/* ---- what a domain gets -------------------------------------------------- */

/* domain name's settings, its rule (or NULL) and, in *has, the keys its
 * rule, its device's caps (dev, or NULL) and its run-time caps gave */
static const struct xgpu_rule *domain_settings(const char *name,
					       const struct xgpu_rule *dev,
					       struct xgpu_dom_settings *out,
					       unsigned int *has)
{
	char buf[XGPU_RULE_PATTERN_MAX];
	const struct xgpu_rule *r, *c;

	name = domain_of(name, buf, sizeof(buf));
	r = xgpu_rules_settings(&cfg.rules, name, &cfg.defaults, out);
	/* the device's caps over its rule's, its run-time caps over both
	 * (they give no other keys) */
	if (dev)
		xgpu_rule_apply(dev, out);
	c = caps_of(name);
	if (c)
		xgpu_rule_apply(c, out);
	*has = (r ? r->has : 0) | (dev ? dev->has : 0) | (c ? c->has : 0);
	return r;
}

const struct xgpu_rule *xgpub_config_domain(const char *name,
					    struct xgpu_dom_settings *out)
{
	return xgpub_config_device(name, NULL, out);
}

const struct xgpu_rule *xgpub_config_device(const char *name,
					    const struct xgpu_rule *dev,
					    struct xgpu_dom_settings *out)
{
	unsigned int has;

	return domain_settings(name, dev, out, &has);
}

void xgpub_config_worker_opts(const char *name,
			      const struct xgpub_options *daemon_opt,
			      struct xgpub_options *out)
{
	xgpub_config_device_opts(name, NULL, daemon_opt, out);
}

void xgpub_config_device_opts(const char *name, const struct xgpu_rule *dev,
			      const struct xgpub_options *daemon_opt,
			      struct xgpub_options *out)
{
	struct xgpu_dom_settings s;
	unsigned int has;
	const struct xgpu_rule *r = domain_settings(name, dev, &s, &has);

	*out = *daemon_opt;
	if (r)
		out->gpu = (int)s.gpu;
	if (has & XGPU_RULE_QUOTA)
		out->quota = s.quota;
	if (has & XGPU_RULE_PINNED)
		out->pin_quota = s.pin_quota;
	if (has & XGPU_RULE_IMAGES)
		out->images_max = s.images_max;
}

/* what the file asks that this daemon cannot give: 0, or -1 and err */
static int check_host(const struct xgpu_rules *r, char *err, size_t len)
{
	for (int i = 0; i < r->n; i++) {
		const struct xgpu_rule *u = &r->r[i];

		if ((u->has & XGPU_RULE_GPU) && cfg.ngpus >= 0 &&
		    u->gpu >= (uint32_t)cfg.ngpus) {
			snprintf(err, len, "%s:%u: gpu=%u: this host has %d "
				 "GPU%s (0..%d)", cfg.path, u->line, u->gpu,
				 cfg.ngpus, cfg.ngpus == 1 ? "" : "s",
				 cfg.ngpus - 1);
			return -1;
		}
		if ((u->has & XGPU_RULE_LIMIT) && u->limit_ms && !cfg.sched) {
			snprintf(err, len, "%s:%u: gpu-limit-ms needs the GPU "
				 "scheduler (the daemon runs with --sched off)",
				 cfg.path, u->line);
			return -1;
		}
	}
	return 0;
}

int xgpub_config_reload(char *err, size_t len)
{
	int rc = xgpu_rules_load(cfg.path, &cfg.reading, err, len);

	if (rc >= 0 && check_host(&cfg.reading, err, len))
		rc = -1;
	if (rc < 0) {
		xgpub_err("config %s refused, keeping the %d rule%s in "
			  "force: %s", cfg.path, cfg.rules.n,
			  cfg.rules.n == 1 ? "" : "s", err);
		return -1;
	}
	cfg.rules = cfg.reading;
	if (rc == 1)
		xgpub_info("config %s: no such file, no rules", cfg.path);
	else
		xgpub_info("config %s: %d rule%s", cfg.path, cfg.rules.n,
			   cfg.rules.n == 1 ? "" : "s");
	err[0] = 0;
	for (int i = 0; i < cfg.nlisteners; i++)
		cfg.listeners[i]();
	return 0;
}
