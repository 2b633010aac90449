/* SPDX-License-Identifier: MIT */
/*
 * xgpub_config.h: the rules of xgpu.conf in force in the daemon
 * (xgpub_config.c; the file's format: common/xgpu_rules.h, xgpu.conf(5)).
 *
 * A Xen domain's rule (the first whose pattern matches its name) gives it
 * an xgpu device when it appears (xgpub_xen.c), its scheduler settings
 * until the administrator gives others (xgpub_guest.c), and the device
 * memory quota and GPU of its workers (xgpub_xen_chans.c).
 *
 * The file is read at start and again on SIGHUP or the control command
 * `config reload`.  A missing file is no rules; a file that does not
 * parse, or asks what this daemon cannot give (a GPU it does not have, a
 * GPU time limit with the scheduler off), is refused as a whole: the
 * rules in force stay, and one line says why.
 */
#ifndef XGPUB_CONFIG_H
#define XGPUB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpu_rules.h"

/*
 * Where the file is and what a domain without a rule gets: gpu and quota
 * the daemon's --gpu and --quota-mb; ngpus the host's GPUs (-1: unknown,
 * not checked); sched whether the GPU scheduler is on.  No reading yet.
 */
void xgpub_config_init(const char *path, int gpu, uint64_t quota, int ngpus,
		       bool sched);
/*
 * Read the file again.  0 (the new rules in force; live guests and
 * domains that had none take theirs), or -1 with err saying why (the
 * rules in force stay).  One log line either way.
 */
int xgpub_config_reload(char *err, size_t len);
const char *xgpub_config_path(void);
/* the rules in force (none: n == 0) */
const struct xgpu_rules *xgpub_config_rules(void);
/* domain name's settings (the defaults when no rule matches it, then its
 * caps set at run time); its rule, or NULL.  NAME--incoming (xl
 * migrate's receiving end) is judged as NAME. */
const struct xgpu_rule *xgpub_config_domain(const char *name,
					    struct xgpu_dom_settings *out);
/* the same for a device of the domain whose own caps (its backend's
 * caps/ nodes in xenstore) are dev: over its rule's, under the caps set
 * at run time */
const struct xgpu_rule *xgpub_config_device(const char *name,
					    const struct xgpu_rule *dev,
					    struct xgpu_dom_settings *out);

/*
 * Caps given at run time (`xgpu config set DOM KEY=VALUE...`): a domain's
 * quota-mb, pinned-mb, images-mb and channels, ahead of its rule's (kept
 * across reloads of the file, until the daemon stops).  0, or -1 with
 * err saying why (a name that is not a domain's, a key that is not a
 * cap, a bad value).  They apply as the rule's do: to processes that
 * connect afterwards; channels when the device next connects.
 */
#define XGPUB_CONFIG_CAPS_MAX	256
int xgpub_config_caps_set(const char *name, int n, char **words, char *err,
			  size_t len);
/* the domains with caps set, in the order first given (pattern: the
 * name; has: the keys given) */
int xgpub_config_caps_count(void);
const struct xgpu_rule *xgpub_config_caps_at(int i);

/* name is a local or network client's key ("local:...", "net:NAME") */
bool xgpub_config_client_key(const char *name);
/* the caps set at run time for a local or network client's key
 * (`xgpu config set local:NAME ...`): 1 and *out, or 0 (out->has 0) */
struct xgpub_caps;
int xgpub_config_client_caps(const char *key, struct xgpub_caps *out);

struct xgpub_options;
/* the options a worker of domain name runs with: the daemon's, with the
 * device memory quota, GPU, pinned-memory quota and image cap of the
 * domain's rule and its caps set at run time */
void xgpub_config_worker_opts(const char *name,
			      const struct xgpub_options *daemon_opt,
			      struct xgpub_options *out);
/* the same for a worker of a device whose own caps are dev */
void xgpub_config_device_opts(const char *name, const struct xgpu_rule *dev,
			      const struct xgpub_options *daemon_opt,
			      struct xgpub_options *out);

/*
 * fn runs after each reload that took effect, in the order of the calls
 * (the guest table, then the Xen backend: xgpub_main.c and xgpub_xen.c
 * register theirs); at most XGPUB_CONFIG_LISTENERS
 */
#define XGPUB_CONFIG_LISTENERS	4
void xgpub_config_listen(void (*fn)(void));

#endif /* XGPUB_CONFIG_H */
