// SPDX-License-Identifier: MIT
/*
 * xgpub_guests.c: guests as the administrator sees them.  A guest is a
 * Xen domain (all the channels, i.e. processes, of its xgpu devices) or
 * one local client.  Its scheduling settings (weight, cap) are kept by
 * name, so that they survive the guest reconnecting: a domain's name
 * (or "domid:N" while it has none), a local client's process name
 * ("local:NAME").  Settings may be given before the guest exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_daemon.h"
#include "xgpub_ctl.h"
#include "xgpub_sched_glue.h"
#include "xgpub_xen.h"

#define MAX_SETTINGS 1024
#define MAX_GUESTS 1024

struct setting {
	char key[80];
	uint32_t weight;	/* 0: default */
	uint32_t cap;		/* percent, 0: none */
};

static struct setting settings[MAX_SETTINGS];

/* a guest, gathered from the children on demand */
struct guest {
	int kind;
	uint32_t id;		/* domid or client id */
	char name[64];
	char key[80];
	int nch;
	char pids[96];
	uint64_t calls, mem, quota, gpu_ns;
	uint32_t qdepth;
	double rate;
};

static struct guest gs[MAX_GUESTS];
static int ngs;

void xgpub_guest_key(const struct xgpub_child *c, char *key, size_t len)
{
	if (c->kind == XGPUB_CHILD_XEN)
		c->name[0] ? snprintf(key, len, "%s", c->name) :
			     snprintf(key, len, "domid:%u", c->domid);
	else
		snprintf(key, len, "local:%s", c->proc[0] ? c->proc : "?");
	xgpub_ctl_word(key);
}

static struct setting *setting_find(const char *key, bool create)
{
	struct setting *free_s = NULL;

	for (int i = 0; i < MAX_SETTINGS; i++) {
		if (settings[i].key[0] && !strcmp(settings[i].key, key))
			return &settings[i];
		if (!settings[i].key[0] && !free_s)
			free_s = &settings[i];
	}
	if (!create || !free_s)
		return NULL;
	snprintf(free_s->key, sizeof(free_s->key), "%s", key);
	free_s->weight = 0;
	free_s->cap = 0;
	return free_s;
}

void xgpub_guest_settings(const char *key, uint32_t *weight, uint32_t *cap)
{
	struct setting *s = setting_find(key, false);

	*weight = s && s->weight ? s->weight : XGPUB_DEFAULT_WEIGHT;
	*cap = s ? s->cap : 0;
}

/* a local client's name arrives with its handshake, in the worker */
void xgpub_child_refresh(struct xgpub_child *c)
{
	if (!c->proc[0] && c->st &&
	    __atomic_load_n(&c->st->connected, __ATOMIC_ACQUIRE)) {
		memcpy(c->proc, c->st->proc, sizeof(c->proc));
		c->proc[sizeof(c->proc) - 1] = 0;
	}
}

static void gather_one(struct xgpub_child *c, void *arg)
{
	struct guest *g = NULL;
	size_t pl;

	(void)arg;
	xgpub_child_refresh(c);
	for (int i = 0; i < ngs; i++) {
		if (gs[i].kind == c->kind &&
		    gs[i].id == (c->kind == XGPUB_CHILD_XEN ? c->domid :
							     c->client_id)) {
			g = &gs[i];
			break;
		}
	}
	if (!g) {
		if (ngs == MAX_GUESTS)
			return;
		g = &gs[ngs++];
		memset(g, 0, sizeof(*g));
		g->kind = c->kind;
		g->id = c->kind == XGPUB_CHILD_XEN ? c->domid : c->client_id;
		if (c->kind == XGPUB_CHILD_XEN)
			snprintf(g->name, sizeof(g->name), "%s",
				 c->name[0] ? c->name : "-");
		else
			snprintf(g->name, sizeof(g->name), "%s",
				 c->proc[0] ? c->proc : "-");
		xgpub_ctl_word(g->name);
		xgpub_guest_key(c, g->key, sizeof(g->key));
	}
	g->nch++;
	pl = strlen(g->pids);
	if (pl + 12 < sizeof(g->pids))
		snprintf(g->pids + pl, sizeof(g->pids) - pl, "%s%d",
			 pl ? "," : "", (int)c->pid);
	if (c->st) {
		g->calls += __atomic_load_n(&c->st->calls, __ATOMIC_RELAXED);
		g->mem += __atomic_load_n(&c->st->mem_used, __ATOMIC_RELAXED);
		g->quota += __atomic_load_n(&c->st->quota, __ATOMIC_RELAXED);
		g->gpu_ns += __atomic_load_n(&c->st->gpu_ns, __ATOMIC_RELAXED);
		g->qdepth += __atomic_load_n(&c->st->qdepth, __ATOMIC_RELAXED);
	}
	g->rate += c->rate;
}

static void gather(void)
{
	ngs = 0;
	xgpub_children_each(gather_one, NULL);
}

/*
 * A domain with an xgpu device but no process using it yet has no worker,
 * so gather() does not see it; it is a guest all the same: a row with its
 * settings, no channel, state "idle" (device Connected) or "setup".
 */
struct idle {
	uint32_t domid;
	char name[64];
	bool connected;		/* any of its devices */
};

struct idle_set {
	struct idle d[MAX_GUESTS];
	int n;
};

static void idle_one(uint32_t domid, const char *name, bool connected,
		     void *arg)
{
	struct idle_set *is = arg;
	int i;

	if (!name[0])
		return;		/* the domain is going away */
	for (i = 0; i < ngs; i++)
		if (gs[i].kind == XGPUB_CHILD_XEN && gs[i].id == domid)
			return;	/* listed with its channels */
	for (i = 0; i < is->n && is->d[i].domid != domid; i++)
		;
	if (i == is->n) {
		if (is->n == MAX_GUESTS)
			return;
		is->n++;
		is->d[i].domid = domid;
		is->d[i].connected = false;
		snprintf(is->d[i].name, sizeof(is->d[i].name), "%s", name);
		xgpub_ctl_word(is->d[i].name);
	}
	is->d[i].connected |= connected;
}

static void list_idle(struct xgpub_out *o)
{
	static struct idle_set is;

	is.n = 0;
	xgpub_xen_each_device(idle_one, &is);
	for (int i = 0; i < is.n; i++) {
		struct idle *d = &is.d[i];
		uint32_t w, cap;

		/* a named domain's settings key is its name */
		xgpub_guest_settings(d->name, &w, &cap);
		xgpub_out(o, "guest kind=xen id=%u name=%s key=%s channels=0 "
			  "pids=- weight=%u cap=%u credit_us=0 state=%s "
			  "gpu_ms=0 share_period=0.0 share_minute=0.0 "
			  "mem_mib=0 quota_mib=0 calls=0 calls_per_s=0.0 "
			  "qdepth=0 vcpu_weight=- vcpu_boosts=-\n", d->domid,
			  d->name, d->name, w, cap,
			  d->connected ? "idle" : "setup");
	}
}

void xgpub_guests_list(struct xgpub_out *o)
{
	gather();
	for (int i = 0; i < ngs; i++) {
		struct guest *g = &gs[i];
		struct xgpub_sched_view v;
		uint32_t w, cap;

		xgpub_guest_settings(g->key, &w, &cap);
		memset(&v, 0, sizeof(v));
		xgpub_sched_view(g->key, &v);
		char vw[48] = "vcpu_weight=- vcpu_boosts=-";
		unsigned int vcw;
		unsigned long vcb;

		if (g->kind == XGPUB_CHILD_XEN &&
		    xgpub_vcpu_info(g->id, &vcw, &vcb))
			snprintf(vw, sizeof(vw),
				 "vcpu_weight=%u vcpu_boosts=%lu", vcw, vcb);
		xgpub_out(o, "guest kind=%s id=%u name=%s key=%s channels=%d "
			  "pids=%s weight=%u cap=%u credit_us=%lld state=%s "
			  "gpu_ms=%llu share_period=%.1f share_minute=%.1f "
			  "mem_mib=%llu quota_mib=%llu calls=%llu "
			  "calls_per_s=%.1f qdepth=%u %s\n",
			  g->kind == XGPUB_CHILD_XEN ? "xen" : "local", g->id,
			  g->name, g->key, g->nch, g->pids, w, cap,
			  (long long)(v.credit_ns / 1000), v.state,
			  (unsigned long long)((g->gpu_ns > v.gpu_ns ?
						g->gpu_ns : v.gpu_ns) / 1000000),
			  v.share_period, v.share_minute,
			  (unsigned long long)(g->mem >> 20),
			  (unsigned long long)(g->quota >> 20),
			  (unsigned long long)g->calls, g->rate, g->qdepth, vw);
	}
	list_idle(o);
}

/* the settings key of the guest named `who` now, or who itself */
static void resolve(const char *who, char *key, size_t len)
{
	gather();
	for (int i = 0; i < ngs; i++) {
		struct guest *g = &gs[i];
		char idbuf[24];

		snprintf(idbuf, sizeof(idbuf), "%u", g->id);
		if ((g->kind == XGPUB_CHILD_XEN && !strcmp(who, idbuf)) ||
		    (g->kind == XGPUB_CHILD_LOCAL && who[0] == 'c' &&
		     !strcmp(who + 1, idbuf)) ||
		    !strcmp(who, g->name) || !strcmp(who, g->key)) {
			snprintf(key, len, "%s", g->key);
			return;
		}
	}
	snprintf(key, len, "%s", who);
	xgpub_ctl_word(key);
}

static bool parse_num(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!strcmp(s, "-"))
		return true;	/* unchanged */
	v = strtoul(s, &end, 10);
	if (*s == '-' || *end || end == s || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

void xgpub_guests_sched_credit(struct xgpub_out *o, int argc, char **argv)
{
	if (argc == 0) {
		xgpub_out(o, "ok\n");
		gather();
		for (int i = 0; i < ngs; i++) {
			uint32_t w, cap;

			xgpub_guest_settings(gs[i].key, &w, &cap);
			xgpub_out(o, "sched key=%s name=%s id=%u weight=%u "
				  "cap=%u\n", gs[i].key, gs[i].name, gs[i].id,
				  w, cap);
		}
		for (int i = 0; i < MAX_SETTINGS; i++) {
			bool live = false;

			if (!settings[i].key[0])
				continue;
			for (int j = 0; j < ngs; j++)
				live |= !strcmp(gs[j].key, settings[i].key);
			if (!live)
				xgpub_out(o, "sched key=%s name=- id=- "
					  "weight=%u cap=%u\n",
					  settings[i].key,
					  settings[i].weight ?
						  settings[i].weight :
						  XGPUB_DEFAULT_WEIGHT,
					  settings[i].cap);
		}
		return;
	}
	if (argc == 1 || argc == 3) {
		char key[80];
		struct setting *s;
		uint32_t w, cap;

		resolve(argv[0], key, sizeof(key));
		xgpub_guest_settings(key, &w, &cap);
		if (argc == 3 && (!parse_num(argv[1], 1, 65535, &w) ||
				  !parse_num(argv[2], 0, 100, &cap))) {
			xgpub_out(o, "error weight must be 1..65535 and cap "
				  "0..100 (percent of one GPU, 0: none)\n");
			return;
		}
		if (argc == 3) {
			s = setting_find(key, true);
			if (!s) {
				xgpub_out(o, "error too many settings\n");
				return;
			}
			s->weight = w;
			s->cap = cap;
			xgpub_sched_settings_changed(key, w, cap);
			xgpub_info("%s: weight %u, cap %u%%", key, w, cap);
		}
		xgpub_out(o, "ok\nsched key=%s weight=%u cap=%u\n", key, w,
			  cap);
		return;
	}
	xgpub_out(o, "error usage: sched-credit [GUEST WEIGHT CAP]\n");
}

static void tick_one(struct xgpub_child *c, void *arg)
{
	uint64_t now = *(uint64_t *)arg, calls;

	if (!c->st)
		return;
	calls = __atomic_load_n(&c->st->calls, __ATOMIC_RELAXED);
	if (c->rate_t && now > c->rate_t)
		c->rate = (double)(calls - c->rate_calls) * 1e9 /
			  (double)(now - c->rate_t);
	c->rate_t = now;
	c->rate_calls = calls;
}

void xgpub_guests_tick(uint64_t now_ns)
{
	xgpub_children_each(tick_one, &now_ns);
}
