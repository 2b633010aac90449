// SPDX-License-Identifier: MIT
/*
 * xgpub_vcpu_glue.c: the VCPU coordinator's place in the daemon.
 *
 * The coordinator (scheduler/xgpu_vcpu.h) rides on the GPU scheduler's
 * view: a Xen guest the scheduler takes in is added with its GPU weight
 * (its VCPU weight follows), a weight change is passed on, and a guest
 * whose work in flight drained since the last step (its workers'
 * `drained` counts) while it submits nothing more is reported as
 * completed, which boosts its VCPUs so that the thread waiting for that
 * completion runs and issues the next batch.
 *
 * Only the daemon's event loop calls in; the state below is its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "xgpub_guest.h"
#include "xgpub_reply.h"
#include "xgpub_vcpu_glue.h"
#include "xgpu_vcpu.h"

static struct xgpu_vcpu *V;		/* NULL: no VCPU coordination */
static bool vcpu_xen;			/* Xen guests served */
static bool sched_on;			/* the GPU scheduler runs */
static unsigned int vcpu_pct, vcpu_ms;	/* the boost asked for */

static void vcpu_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= LOG_WARNING)
		xgpub_err("%s", msg);
	else if (level >= LOG_DEBUG)
		xgpub_dbg("%s", msg);
	else
		xgpub_info("%s", msg);
}

void xgpub_vcpu_guest_join(struct xgpub_guest *g, uint64_t now)
{
	int rc;

	if (!V || g->kind != XGPUB_CHILD_XEN)
		return;
	rc = xgpu_vcpu_dom_add(V, g->uid, g->weight, now);
	/* EEXIST: it left and came back before the scheduler looked */
	g->sched.vcpu = !rc || rc == -EEXIST;
}

/* create the coordinator and add the Xen guests known now; NULL or why
 * not */
static const char *vcpu_on(void)
{
	struct xgpu_vcpu_params p = {
		.boost_pct = vcpu_pct,
		.boost_ns = (uint64_t)vcpu_ms * 1000000u,
	};
	uint64_t now = xgpub_now_ns();
	struct xgpub_guest *g;

	if (!vcpu_xen)
		return "no Xen guests served (local transport only)";
	if (!sched_on)
		return "it follows the GPU scheduler, which is off";
	V = xgpu_vcpu_create("xenctrl", &p, vcpu_log, NULL);
	if (!V)
		return "bad parameters";
	if (!xgpu_vcpu_enabled(V)) {
		xgpu_vcpu_destroy(V);
		V = NULL;
		return "libxenctrl unusable (see the log)";
	}
	xgpub_guest_for_each(g)
		if (g->sched.scheduled)
			xgpub_vcpu_guest_join(g, now);
	return NULL;
}

void xgpub_vcpu_stop(void)
{
	struct xgpub_guest *g;

	/* gives every domain its own VCPU weight back */
	xgpu_vcpu_destroy(V);
	V = NULL;
	xgpub_guest_for_each(g)
		g->sched.vcpu = false;
}

void xgpub_vcpu_sched_started(void)
{
	sched_on = true;
}

bool xgpub_vcpu_is_on(void)
{
	return V != NULL;
}

void xgpub_vcpu_start(bool xen, bool on, unsigned int boost_pct,
		      unsigned int boost_ms)
{
	const char *why;

	vcpu_xen = xen;
	vcpu_pct = boost_pct;
	vcpu_ms = boost_ms;
	if (!on) {
		xgpub_info("vcpu coordinator off: --vcpu-coord off");
		return;
	}
	why = vcpu_on();
	if (why && xen && sched_on)
		xgpub_err("vcpu coordinator off: %s", why);
	else if (why)
		xgpub_info("vcpu coordinator off: %s", why);
}

int xgpub_vcpu_parse_boost(const char *s, unsigned int *pct,
			   unsigned int *ms)
{
	unsigned long p, m = 0;
	char *end;

	p = strtoul(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == ':')
		m = strtoul(end + 1, &end, 10);
	if (*end || p < XGPU_CTL_BOOST_PCT_MIN ||
	    p > XGPU_CTL_BOOST_PCT_MAX || m > XGPU_CTL_BOOST_MS_MAX)
		return -1;
	*pct = (unsigned int)p;
	*ms = (unsigned int)m;
	return 0;
}

/* `vcpu on [PCT[:MS]]`: NULL, or the error line's text */
static const char *ctl_on(int argc, char **argv)
{
	static char why[96];
	unsigned int pct = vcpu_pct, ms = vcpu_ms;
	const char *off;

	if (argc == 2 && xgpub_vcpu_parse_boost(argv[1], &pct, &ms))
		return "boost: " XGPUB_VCPU_BOOST_USAGE;
	xgpub_vcpu_stop();
	vcpu_pct = pct;
	vcpu_ms = ms;
	off = vcpu_on();
	if (!off)
		return NULL;
	snprintf(why, sizeof(why), "vcpu coordinator off: %s", off);
	return why;
}

int xgpub_vcpu_ctl(struct xgpub_reply *r, int argc, char **argv)
{
	struct xgpu_vcpu_params p;
	struct xgpub_guest *g;
	char what[96];

	if (argc == 1 && !strcmp(argv[0], "off")) {
		if (V)
			xgpub_info("vcpu coordinator off (xgpu vcpu off)");
		xgpub_vcpu_stop();
	} else if (argc >= 1 && !strcmp(argv[0], "on")) {
		const char *why = ctl_on(argc, argv);

		if (why) {
			xgpub_reply(r, XGPU_CTL_ERROR " %s\n", why);
			return 0;
		}
	} else if (argc) {
		return -EINVAL;
	}
	xgpub_reply(r, XGPU_CTL_OK "\n");
	if (!V) {
		xgpub_reply(r, XGPU_CTL_REC_VCPU " state=off\n");
		return 0;
	}
	xgpu_vcpu_params_get(V, &p);
	snprintf(what, sizeof(what), "%s", xgpu_vcpu_describe(V));
	xgpub_reply_word(what);
	xgpub_reply(r, XGPU_CTL_REC_VCPU " state=on backend=%s boost_pct=%u "
		    "boost_ms=%.1f rate=%u\n", what, p.boost_pct,
		    (double)p.boost_ns / 1e6, p.max_hypercalls_per_sec);
	xgpub_guest_for_each(g) {
		struct xgpu_vcpu_dom_info in;

		if (!g->sched.vcpu || xgpu_vcpu_dom_info(V, g->uid, &in))
			continue;
		xgpub_reply(r, XGPU_CTL_REC_DOM " id=%u key=%s gpu_weight=%u "
			    "base=%u target=%u current=%u boosted=%d "
			    "boosts=%lu skipped=%lu hypercalls=%lu\n", g->id,
			    g->key, g->weight, in.base, in.target, in.current,
			    in.boosted, in.boosts, in.skipped, in.hypercalls);
	}
	return 0;
}

void xgpub_vcpu_guest_weight(struct xgpub_guest *g, uint64_t now)
{
	if (g->sched.vcpu)
		xgpu_vcpu_dom_set(V, g->uid, g->weight, now);
}

void xgpub_vcpu_guest_leave(uint32_t uid, struct xgpub_guest *g,
			    uint64_t now)
{
	/* the entry may be gone already: ask the coordinator (ENOENT: it
	 * never knew the guest) */
	if (V && uid < XGPUB_GUEST_UID_LOCAL)
		xgpu_vcpu_dom_remove(V, uid, now);
	if (g)
		g->sched.vcpu = false;
}

void xgpub_vcpu_guest_step(struct xgpub_guest *g, uint64_t now)
{
	/*
	 * Its work in flight drained since the last look (a count, since a
	 * short batch may come and go between two looks).  Unless it is
	 * already submitting more, a thread of the guest now waits for that
	 * completion to issue the next.
	 */
	if (g->sched.vcpu &&
	    (int32_t)(g->ch.drained - g->sched.drained_seen) > 0)
		xgpu_vcpu_completed(V, g->uid,
				    g->ch.busy || g->ch.submitting, now);
	g->sched.drained_seen = g->ch.drained;
}

uint64_t xgpub_vcpu_tick(uint64_t now)
{
	return V ? xgpu_vcpu_tick(V, now) : UINT64_MAX;
}

bool xgpub_vcpu_info(const struct xgpub_guest *g, unsigned int *weight,
		     unsigned long *boosts)
{
	struct xgpu_vcpu_dom_info in;

	if (!V || g->kind != XGPUB_CHILD_XEN ||
	    xgpu_vcpu_dom_info(V, g->uid, &in))
		return false;
	*weight = in.current;
	*boosts = in.boosts;
	return true;
}
