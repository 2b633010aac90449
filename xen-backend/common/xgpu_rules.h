/* SPDX-License-Identifier: MIT */
/*
 * xgpu_rules.h: the administrator's per-domain GPU settings, the file
 * /etc/xen/xgpu.conf (xgpu.conf(5)), read by xen-gpubackd (--config) and
 * checked by `xgpu config check`; both link xgpu_rules.c.
 *
 * One rule a line: a domain name or a glob pattern (fnmatch(3): *, ?,
 * [...]), then KEY=VALUE words; '#' starts a comment, blank lines are
 * skipped.  The first rule whose pattern matches a domain's name is the
 * domain's; the others are not looked at.
 *
 *   vm-*      weight=512 cap=50 quota-mb=8192 gpu-limit-ms=5000 gpu=0
 *   batch-?   attach=no weight=64 channels=4 pinned-mb=1024 images-mb=256
 *
 * A file with any bad line is refused as a whole, with that line's number
 * and what is accepted.
 */
#ifndef XGPU_RULES_H
#define XGPU_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XGPU_CONFIG_DEFAULT	"/etc/xen/xgpu.conf"
#define XGPU_RULES_MAX		256
#define XGPU_RULE_PATTERN_MAX	64	/* NUL included */
#define XGPU_RULES_LINE_MAX	1024	/* a line, newline excluded */
#define XGPU_RULES_FILE_MAX	(1024 * 1024)
/* quota-mb: up to 16 TiB; gpu: an ordinal of the host */
#define XGPU_RULE_QUOTA_MB_MAX	(16u * 1024u * 1024u)
#define XGPU_RULE_GPU_MAX	254u
/* channels: processes at once on the domain's device (xgpuif.h's
 * XGPUIF_XEN_MAX_CHANNELS); images-mb: at most 1 TiB */
#define XGPU_RULE_CHANNELS_MAX	64u
/* xs-looks: how many times a second the daemon may look at the domain's
 * device after its xenstore writes (after a burst of 16; default 100) */
#define XGPU_RULE_XSLOOKS_MAX	1000u
#define XGPU_RULE_XSLOOKS_DEFAULT 100u
#define XGPU_RULE_IMAGES_MB_MAX	(1024u * 1024u)
/* grant-mb: granted pages all the domain's channels may keep mapped in
 * Dom0 (rings, data areas, pinned memory), as --grant-mb is the host's */
#define XGPU_RULE_GRANT_MB_MAX	(1024u * 1024u)

/* which keys a rule gave */
enum {
	XGPU_RULE_WEIGHT = 1u << 0,
	XGPU_RULE_CAP = 1u << 1,
	XGPU_RULE_QUOTA = 1u << 2,
	XGPU_RULE_LIMIT = 1u << 3,
	XGPU_RULE_GPU = 1u << 4,
	XGPU_RULE_ATTACH = 1u << 5,
	XGPU_RULE_PINNED = 1u << 6,
	XGPU_RULE_IMAGES = 1u << 7,
	XGPU_RULE_CHANNELS = 1u << 8,
	XGPU_RULE_XSLOOKS = 1u << 9,
	XGPU_RULE_GRANT = 1u << 10,
};
/* the caps: the keys a device's xenstore folder and `xgpu config set`
 * may give besides the file (a local or network client: not channels) */
#define XGPU_RULE_CAPS	(XGPU_RULE_QUOTA | XGPU_RULE_PINNED | \
			 XGPU_RULE_IMAGES | XGPU_RULE_CHANNELS | \
			 XGPU_RULE_XSLOOKS | XGPU_RULE_GRANT)
/* the caps that only a Xen device has */
#define XGPU_RULE_DEVICE_CAPS (XGPU_RULE_CHANNELS | XGPU_RULE_XSLOOKS | \
			       XGPU_RULE_GRANT)

struct xgpu_rule {
	char pattern[XGPU_RULE_PATTERN_MAX];
	unsigned int line;	/* in its file */
	unsigned int has;	/* XGPU_RULE_* given */
	uint32_t weight;	/* 1..XGPU_SCHED_WEIGHT_MAX */
	uint32_t cap;		/* percent of one GPU, 0: none */
	uint32_t quota_mb;	/* device memory, 0: no limit */
	uint32_t limit_ms;	/* GPU time limit, 0: the daemon's */
	uint32_t gpu;		/* host GPU ordinal */
	uint32_t pinned_mb;	/* Dom0 memory it may pin, 0: no limit */
	uint32_t images_mb;	/* module images its workers may hold */
	uint32_t channels;	/* processes at once on its device */
	uint32_t xs_looks;	/* looks a second after its xenstore writes */
	uint32_t grant_mb;	/* granted pages its channels may map, MiB */
	bool attach;		/* give matching domains a device (default) */
};

struct xgpu_rules {
	int n;
	struct xgpu_rule r[XGPU_RULES_MAX];
};

/* what a domain gets: the defaults, with what its rule gives */
struct xgpu_dom_settings {
	uint32_t weight, cap, limit_ms, gpu;
	uint64_t quota;		/* bytes, 0: no limit */
	uint64_t pin_quota;	/* bytes of Dom0 memory pinned, 0: no limit */
	uint64_t images_max;	/* module image bytes */
	uint32_t channels;	/* channels (processes) on its device */
	uint32_t xs_looks;	/* looks a second at its device, 0: default */
	uint64_t grant_pages;	/* its channels' granted pages, 0: default */
	bool attach;
};

/*
 * Parse a whole file's text (NUL-terminated) into *out.  0, or -1 with
 * *out emptied and err holding "LINE: what is wrong (what is accepted)".
 */
int xgpu_rules_parse(const char *text, struct xgpu_rules *out, char *err,
		     size_t errlen);
/*
 * Read and parse path.  0; 1 when it does not exist (no rules, *out
 * empty); -1 with err "PATH:LINE: ..." when a line is bad; -2 with err
 * "PATH: why" when it cannot be read (*out empty).
 */
int xgpu_rules_load(const char *path, struct xgpu_rules *out, char *err,
		    size_t errlen);
/*
 * One KEY=VALUE word into rule r (its `has` bit set), as a line of the
 * file would give it: 0, or -1 with err "0: what is wrong (what is
 * accepted)" (the line number a file would have is 0 here).
 */
int xgpu_rules_setting(struct xgpu_rule *r, const char *word, char *err,
		       size_t errlen);
/* the first rule matching a domain name, or NULL */
const struct xgpu_rule *xgpu_rules_match(const struct xgpu_rules *rules,
					 const char *name);
/*
 * A domain's settings: *out starts as *def (attach in the defaults is
 * whether a domain without a rule gets a device: false) and takes what
 * the first matching rule gives.  The rule, or NULL when none matches.
 */
const struct xgpu_rule *xgpu_rules_settings(const struct xgpu_rules *rules,
					    const char *name,
					    const struct xgpu_dom_settings *def,
					    struct xgpu_dom_settings *out);
/* the settings rule r gives (its `has` keys; attach aside) into *out */
void xgpu_rule_apply(const struct xgpu_rule *r, struct xgpu_dom_settings *out);
/*
 * The numeric keys, in the file's order (xgpu_rules_keys): key i's name
 * and its XGPU_RULE_* bit, NULL past the last (XGPU_RULE_NKEYS of them);
 * whether r gives key i, and its value
 */
#define XGPU_RULE_NKEYS	10
const char *xgpu_rule_key(unsigned int i, unsigned int *bit);
bool xgpu_rule_value(const struct xgpu_rule *r, unsigned int i, uint32_t *v);
/* the keys from gives, over to's (to->has grows by them) */
void xgpu_rule_merge(struct xgpu_rule *to, const struct xgpu_rule *from);
/* the keys a rule accepts, for messages */
extern const char xgpu_rules_keys[];

#endif /* XGPU_RULES_H */
