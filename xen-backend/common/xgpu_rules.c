// SPDX-License-Identifier: MIT
/*
 * xgpu_rules.c: the parser and matcher of /etc/xen/xgpu.conf
 * (xgpu_rules.h).  No state of its own: the daemon and the CLI both link
 * it.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xgpu_ctl.h"
#include "xgpu_rules.h"

const char xgpu_rules_keys[] =
	"weight=1..65535 cap=0..100 quota-mb=N gpu-limit-ms=N gpu=N "
	"pinned-mb=N images-mb=N channels=1..64 xs-looks=1..1000 "
	"grant-mb=N attach=yes|no";

struct key {
	const char *name;
	unsigned int bit;
	uint32_t lo, hi;
	size_t off;
};

/* a key, its XGPU_RULE_* bit, its range and its field of struct xgpu_rule */
#define KEY(name, bit, lo, hi, field) \
	{ name, bit, lo, hi, offsetof(struct xgpu_rule, field) }

static const struct key keys[] = {
	KEY("weight", XGPU_RULE_WEIGHT, XGPU_CTL_WEIGHT_MIN,
	    XGPU_SCHED_WEIGHT_MAX, weight),
	KEY("cap", XGPU_RULE_CAP, XGPU_CTL_CAP_NONE, XGPU_SCHED_CAP_MAX, cap),
	KEY("quota-mb", XGPU_RULE_QUOTA, 0, XGPU_RULE_QUOTA_MB_MAX, quota_mb),
	KEY("gpu-limit-ms", XGPU_RULE_LIMIT, 0, XGPU_CTL_LIMIT_MAX, limit_ms),
	KEY("gpu", XGPU_RULE_GPU, 0, XGPU_RULE_GPU_MAX, gpu),
	KEY("pinned-mb", XGPU_RULE_PINNED, 0, XGPU_RULE_QUOTA_MB_MAX,
	    pinned_mb),
	KEY("images-mb", XGPU_RULE_IMAGES, 1, XGPU_RULE_IMAGES_MB_MAX,
	    images_mb),
	KEY("channels", XGPU_RULE_CHANNELS, 1, XGPU_RULE_CHANNELS_MAX,
	    channels),
	KEY("xs-looks", XGPU_RULE_XSLOOKS, 1, XGPU_RULE_XSLOOKS_MAX,
	    xs_looks),
	KEY("grant-mb", XGPU_RULE_GRANT, 1, XGPU_RULE_GRANT_MB_MAX, grant_mb),
};
_Static_assert(sizeof(keys) / sizeof(keys[0]) == XGPU_RULE_NKEYS,
	       "XGPU_RULE_NKEYS counts the keys");

static int fail(char *err, size_t len, unsigned int line, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, unsigned int line, const char *fmt,
		...)
{
	va_list ap;
	int n = snprintf(err, len, "%u: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* a whole number in lo..hi, digits only */
static bool number(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned long long v = 0;

	if (!*s || strlen(s) > 10)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned int)(*p - '0');
	}
	if (v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* one KEY=VALUE word of rule r (line ln) */
static int setting(struct xgpu_rule *r, char *w, unsigned int ln, char *err,
		   size_t len)
{
	char *eq = strchr(w, '=');
	const char *val;

	if (!eq || eq == w)
		return fail(err, len, ln, "'%.64s' is not KEY=VALUE (accepted: "
			    "%s)", w, xgpu_rules_keys);
	*eq = 0;
	val = eq + 1;
	if (!strcmp(w, "attach")) {
		if (r->has & XGPU_RULE_ATTACH)
			return fail(err, len, ln, "attach given twice");
		if (!strcmp(val, "yes"))
			r->attach = true;
		else if (!strcmp(val, "no"))
			r->attach = false;
		else
			return fail(err, len, ln, "attach: '%.64s' is not yes "
				    "or no", val);
		r->has |= XGPU_RULE_ATTACH;
		return 0;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct key *k = &keys[i];

		if (strcmp(w, k->name))
			continue;
		if (r->has & k->bit)
			return fail(err, len, ln, "%s given twice", k->name);
		if (!number(val, k->lo, k->hi,
			    (uint32_t *)((char *)r + k->off)))
			return fail(err, len, ln, "%s: '%.64s' is not a whole "
				    "number from %u to %u", k->name, val,
				    k->lo, k->hi);
		r->has |= k->bit;
		return 0;
	}
	return fail(err, len, ln, "unknown key '%.64s' (accepted: %s)", w,
		    xgpu_rules_keys);
}

int xgpu_rules_setting(struct xgpu_rule *r, const char *word, char *err,
		       size_t errlen)
{
	char w[XGPU_RULES_LINE_MAX + 1];

	snprintf(w, sizeof(w), "%s", word);
	err[0] = 0;
	return setting(r, w, 0, err, errlen);
}

/* a domain name or a pattern of names */
static int pattern(struct xgpu_rule *r, const char *w, unsigned int ln,
		   char *err, size_t len)
{
	bool digits = true;

	if (strchr(w, '='))
		return fail(err, len, ln, "a rule starts with a domain name or "
			    "pattern, not '%.64s'", w);
	if (strlen(w) >= sizeof(r->pattern))
		return fail(err, len, ln, "pattern longer than %zu characters",
			    sizeof(r->pattern) - 1);
	for (const char *p = w; *p; p++)
		digits &= *p >= '0' && *p <= '9';
	if (digits)
		return fail(err, len, ln, "'%s': rules match domain names, "
			    "not domain ids", w);
	snprintf(r->pattern, sizeof(r->pattern), "%s", w);
	return 0;
}

static int parse_line(char *s, unsigned int ln, struct xgpu_rules *out,
		      char *err, size_t len)
{
	static const char blanks[] = " \t\r\v\f";
	struct xgpu_rule r;
	char *save = NULL, *w;

	*(s + strcspn(s, "#")) = 0;
	/* outside comments: printable ASCII (messages quote the words) */
	for (const char *p = s; *p; p++)
		if (!strchr(blanks, *p) &&
		    ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e))
			return fail(err, len, ln, "a character outside "
				    "printable ASCII (byte 0x%02x) outside a "
				    "comment", (unsigned char)*p);
	w = strtok_r(s, blanks, &save);
	if (!w)
		return 0;
	memset(&r, 0, sizeof(r));
	r.line = ln;
	r.attach = true;
	if (pattern(&r, w, ln, err, len))
		return -1;
	while ((w = strtok_r(NULL, blanks, &save)) != NULL)
		if (setting(&r, w, ln, err, len))
			return -1;
	for (int i = 0; i < out->n; i++)
		if (!strcmp(out->r[i].pattern, r.pattern))
			return fail(err, len, ln, "'%s' repeats the pattern of "
				    "line %u, whose rule wins: this one would "
				    "never be used", r.pattern, out->r[i].line);
	if (out->n >= XGPU_RULES_MAX)
		return fail(err, len, ln, "more than %d rules",
			    XGPU_RULES_MAX);
	out->r[out->n++] = r;
	return 0;
}

int xgpu_rules_parse(const char *text, struct xgpu_rules *out, char *err,
		     size_t errlen)
{
	char line[XGPU_RULES_LINE_MAX + 1];
	unsigned int ln = 0;
	const char *p = text;

	out->n = 0;
	err[0] = 0;
	while (*p) {
		size_t n = strcspn(p, "\n");

		ln++;
		if (n > XGPU_RULES_LINE_MAX) {
			fail(err, errlen, ln, "line longer than %d characters",
			     XGPU_RULES_LINE_MAX);
			goto bad;
		}
		memcpy(line, p, n);
		line[n] = 0;
		if (parse_line(line, ln, out, err, errlen))
			goto bad;
		p += n + (p[n] == '\n');
	}
	return 0;
bad:
	out->n = 0;
	return -1;
}

int xgpu_rules_load(const char *path, struct xgpu_rules *out, char *err,
		    size_t errlen)
{
	char *text = NULL, why[XGPU_RULES_LINE_MAX];
	struct stat st;
	ssize_t got;
	size_t n = 0;
	int fd, rc;

	out->n = 0;
	err[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_size > XGPU_RULES_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", path,
			 XGPU_RULES_FILE_MAX);
		goto fail;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	while (n < (size_t)st.st_size &&
	       (got = read(fd, text + n, (size_t)st.st_size - n)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		n += (size_t)got;
	}
	text[n] = 0;
	close(fd);
	fd = -1;
	/* a NUL in the file is a bad line, not the end of the file */
	if (memchr(text, 0, n)) {
		unsigned int ln = 1;

		for (size_t i = 0; text[i]; i++)
			ln += text[i] == '\n';
		fail(why, sizeof(why), ln, "NUL byte");
		rc = -1;
	} else {
		rc = xgpu_rules_parse(text, out, why, sizeof(why));
	}
	free(text);
	if (rc) {
		snprintf(err, errlen, "%s:%s", path, why);
		return -1;
	}
	return 0;
fail:
	free(text);
	if (fd >= 0)
		close(fd);
	out->n = 0;
	return -2;
}

const struct xgpu_rule *xgpu_rules_match(const struct xgpu_rules *rules,
					 const char *name)
{
	if (!rules || !name || !name[0])
		return NULL;
	for (int i = 0; i < rules->n; i++)
		if (!fnmatch(rules->r[i].pattern, name, 0))
			return &rules->r[i];
	return NULL;
}

const struct xgpu_rule *xgpu_rules_settings(const struct xgpu_rules *rules,
					    const char *name,
					    const struct xgpu_dom_settings *def,
					    struct xgpu_dom_settings *out)
{
	const struct xgpu_rule *r = xgpu_rules_match(rules, name);

	*out = *def;
	if (!r)
		return NULL;
	out->attach = r->attach;
	xgpu_rule_apply(r, out);
	return r;
}

const char *xgpu_rule_key(unsigned int i, unsigned int *bit)
{
	if (i >= sizeof(keys) / sizeof(keys[0]))
		return NULL;
	*bit = keys[i].bit;
	return keys[i].name;
}

bool xgpu_rule_value(const struct xgpu_rule *r, unsigned int i, uint32_t *v)
{
	if (i >= sizeof(keys) / sizeof(keys[0]) || !(r->has & keys[i].bit))
		return false;
	memcpy(v, (const uint8_t *)r + keys[i].off, sizeof(*v));
	return true;
}

void xgpu_rule_merge(struct xgpu_rule *to, const struct xgpu_rule *from)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (from->has & keys[i].bit)
			memcpy((uint8_t *)to + keys[i].off,
			       (const uint8_t *)from + keys[i].off,
			       sizeof(uint32_t));
	to->has |= from->has;
}

void xgpu_rule_apply(const struct xgpu_rule *r, struct xgpu_dom_settings *out)
{
	if (r->has & XGPU_RULE_WEIGHT)
		out->weight = r->weight;
	if (r->has & XGPU_RULE_CAP)
		out->cap = r->cap;
	if (r->has & XGPU_RULE_LIMIT)
		out->limit_ms = r->limit_ms;
	if (r->has & XGPU_RULE_GPU)
		out->gpu = r->gpu;
	if (r->has & XGPU_RULE_QUOTA)
		out->quota = (uint64_t)r->quota_mb << 20;
	if (r->has & XGPU_RULE_PINNED)
		out->pin_quota = (uint64_t)r->pinned_mb << 20;
	if (r->has & XGPU_RULE_IMAGES)
		out->images_max = (uint64_t)r->images_mb << 20;
	if (r->has & XGPU_RULE_CHANNELS)
		out->channels = r->channels;
	if (r->has & XGPU_RULE_XSLOOKS)
		out->xs_looks = r->xs_looks;
	if (r->has & XGPU_RULE_GRANT)
		out->grant_pages = (uint64_t)r->grant_mb * 256u;
}
