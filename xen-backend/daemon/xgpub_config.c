// SPDX-License-Identifier: MIT
/*
 * xgpub_config.c: the rules of xgpu.conf in force (xgpub_config.h).
 * Only the daemon's event loop calls in here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub.h"
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

const struct xgpu_rule *xgpub_config_domain(const char *name,
					    struct xgpu_dom_settings *out)
{
	size_t n = strlen(name), k = strlen(MIGRATE_SUFFIX);
	char base[64];

	if (n > k && n - k < sizeof(base) &&
	    !strcmp(name + n - k, MIGRATE_SUFFIX)) {
		memcpy(base, name, n - k);
		base[n - k] = 0;
		name = base;
	}
	return xgpu_rules_settings(&cfg.rules, name, &cfg.defaults, out);
}

void xgpub_config_worker_opts(const char *name,
			      const struct xgpub_options *daemon_opt,
			      struct xgpub_options *out)
{
	struct xgpu_dom_settings s;
	const struct xgpu_rule *r = xgpub_config_domain(name, &s);

	*out = *daemon_opt;
	if (!r)
		return;
	out->quota = s.quota;
	out->gpu = (int)s.gpu;
	if (r->has & XGPU_RULE_PINNED)
		out->pin_quota = s.pin_quota;
	if (r->has & XGPU_RULE_IMAGES)
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
