// SPDX-License-Identifier: MIT
/*
 * xgpub_guest_list.c: the guests as the `list` and `sched-credit`
 * commands show them (records of xgpu_ctl.h).  The caller updates the
 * table first (xgpub_guests_update).
 */
#include <stdio.h>
#include <string.h>

#include "xgpub_guest.h"
#include "xgpub_reply.h"
#include "xgpub_xen.h"

static void guest_record(struct xgpub_reply *r, const struct xgpub_guest *g,
			 const struct xgpub_guest_view *v)
{
	const struct xgpub_guest_chans *ch = &g->ch;
	/* the scheduler's total outlives a worker's count */
	uint64_t gpu_ns = ch->gpu_ns > v->gpu_ns ? ch->gpu_ns : v->gpu_ns;
	char vw[48] = "vcpu_weight=- vcpu_boosts=-";

	if (v->vcpu)
		snprintf(vw, sizeof(vw), "vcpu_weight=%u vcpu_boosts=%lu",
			 v->vcpu_weight, v->vcpu_boosts);
	xgpub_reply(r, XGPU_CTL_REC_GUEST " kind=%s id=%u name=%s key=%s "
		    "channels=%d pids=%s weight=%u cap=%u credit_us=%lld "
		    "state=%s gpu_ms=%llu share_period=%.1f share_minute=%.1f "
		    "mem_mib=%llu quota_mib=%llu calls=%llu calls_per_s=%.1f "
		    "qdepth=%u %s\n",
		    g->kind == XGPUB_CHILD_XEN ? "xen" :
		    g->kind == XGPUB_CHILD_NET ? "net" : "local", g->id,
		    g->name, g->key, ch->n, ch->n ? ch->pids : "-", g->weight,
		    g->cap, (long long)(v->credit_ns / 1000), v->state,
		    (unsigned long long)(gpu_ns / 1000000), v->share_period,
		    v->share_minute, (unsigned long long)(ch->mem >> 20),
		    (unsigned long long)(ch->quota >> 20),
		    (unsigned long long)ch->calls, ch->rate, ch->qdepth, vw);
}

/*
 * A domain with an xgpu device but no process using it yet has no worker,
 * so it is not in the table of guests; it is listed all the same: a row
 * with its settings, no channel, state "idle" (device Connected) or
 * "setup".
 */
struct idle {
	uint32_t domid;
	char name[64];
	bool connected;		/* any of its devices */
};

struct idle_set {
	struct idle d[XGPUB_GUESTS_MAX];
	int n;
};

static void idle_one(uint32_t domid, const char *name, bool connected,
		     void *arg)
{
	struct idle_set *is = arg;
	struct xgpub_guest *g;
	int i;

	if (!name[0])
		return;		/* the domain is going away */
	xgpub_guest_for_each(g)
		if (g->kind == XGPUB_CHILD_XEN && g->id == domid)
			return;	/* listed with its channels */
	for (i = 0; i < is->n && is->d[i].domid != domid; i++)
		;
	if (i == is->n) {
		if (is->n == XGPUB_GUESTS_MAX)
			return;
		is->n++;
		is->d[i].domid = domid;
		is->d[i].connected = false;
		snprintf(is->d[i].name, sizeof(is->d[i].name), "%s", name);
		xgpub_reply_word(is->d[i].name);
	}
	is->d[i].connected |= connected;
}

static void list_idle(struct xgpub_reply *r)
{
	static struct idle_set is;

	is.n = 0;
	xgpub_xen_each_device(idle_one, &is);
	for (int i = 0; i < is.n; i++) {
		struct xgpub_guest g = {
			.kind = XGPUB_CHILD_XEN,
			.id = is.d[i].domid,
		};
		struct xgpub_guest_view v = { .credit_ns = 0 };

		/* a named domain's settings key is its name */
		snprintf(g.name, sizeof(g.name), "%s", is.d[i].name);
		snprintf(g.key, sizeof(g.key), "%s", is.d[i].name);
		xgpub_guest_settings(g.key, &g.weight, &g.cap, &g.limit_ms);
		snprintf(v.state, sizeof(v.state), "%s",
			 is.d[i].connected ? "idle" : "setup");
		guest_record(r, &g, &v);
	}
}

void xgpub_guests_list(struct xgpub_reply *r, xgpub_guest_view_fn *view)
{
	struct xgpub_guest *g;

	xgpub_guest_for_each(g) {
		struct xgpub_guest_view v;

		view(g, &v);
		guest_record(r, g, &v);
	}
	list_idle(r);
}

void xgpub_guests_list_settings(struct xgpub_reply *r)
{
	struct xgpub_guest *g;

	xgpub_guest_for_each(g)
		xgpub_reply(r, XGPU_CTL_REC_SCHED " key=%s name=%s id=%u "
			    "weight=%u cap=%u limit_ms=%u\n", g->key, g->name,
			    g->id, g->weight, g->cap, g->limit_ms);
	/* then the settings kept for guests not here */
	for (g = NULL; (g = xgpub_guest_kept_next(g)) != NULL;)
		xgpub_reply(r, XGPU_CTL_REC_SCHED " key=%s name=- id=- "
			    "weight=%u cap=%u limit_ms=%u\n", g->key, g->weight,
			    g->cap, g->limit_ms);
}
