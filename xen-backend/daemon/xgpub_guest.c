// SPDX-License-Identifier: MIT
/*
 * xgpub_guest.c: the table of guests, one entry per guest, and the
 * settings kept for guests not here (xgpub_guest.h says what a guest is).
 * Entries are found by walking the table: there are few guests, and the
 * daemon's event loop is the only caller.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xgpub_config.h"
#include "xgpub_guest.h"
#include "xgpub_reply.h"

static struct xgpub_guest guests[XGPUB_GUESTS_MAX];
static int nslots;			/* entries in use are below it */
/* who hears of changed settings (xgpub_guest_on_settings) */
static void (*settings_listener)(const char *key);

void xgpub_guest_on_settings(void (*fn)(const char *key))
{
	settings_listener = fn;
}

static void settings_changed(const char *key)
{
	if (settings_listener)
		settings_listener(key);
}

static bool in_use(const struct xgpub_guest *g)
{
	return g->key[0] != 0;
}

static uint32_t child_id(const struct xgpub_child *c)
{
	return c->kind == XGPUB_CHILD_XEN ? c->domid : c->client_id;
}

static struct xgpub_guest *find_live(int kind, uint32_t id)
{
	for (int i = 0; i < nslots; i++)
		if (guests[i].kind == kind && guests[i].id == id)
			return &guests[i];
	return NULL;
}

/* another entry with this key: one that holds its settings */
static struct xgpub_guest *find_key(const struct xgpub_guest *not,
				    const char *key)
{
	for (int i = 0; i < nslots; i++)
		if (&guests[i] != not && in_use(&guests[i]) &&
		    !strcmp(guests[i].key, key))
			return &guests[i];
	return NULL;
}

static struct xgpub_guest *slot_new(void)
{
	for (int i = 0; i < XGPUB_GUESTS_MAX; i++) {
		if (in_use(&guests[i]))
			continue;
		if (i >= nslots)
			nslots = i + 1;
		memset(&guests[i], 0, sizeof(guests[i]));
		return &guests[i];
	}
	return NULL;
}

/* make `to` the entry that keeps the settings of `from` (to may be from) */
static void keep(struct xgpub_guest *to, const struct xgpub_guest *from)
{
	struct xgpub_guest k = {
		.set = true,
		.weight = from->weight,
		.cap = from->cap,
		.limit_ms = from->limit_ms,
	};

	snprintf(k.key, sizeof(k.key), "%s", from->key);
	snprintf(k.name, sizeof(k.name), "-");
	*to = k;
}

/*
 * The settings of a key nobody gave settings for: a domain's rule of
 * xgpu.conf (xgpub_config.h), else the defaults.  Keys of local clients
 * and of domains without a name have no rule.
 */
static void key_defaults(const char *key, uint32_t *weight, uint32_t *cap,
			 uint32_t *limit_ms)
{
	struct xgpu_dom_settings s = {
		.weight = XGPU_SCHED_WEIGHT_DEFAULT,
		.cap = XGPU_CTL_CAP_NONE,
	};

	if (strncmp(key, "local:", 6) && strncmp(key, "domid:", 6))
		xgpub_config_domain(key, &s);
	*weight = s.weight;
	*cap = s.cap;
	*limit_ms = s.limit_ms;
}

/* g's key is now key: it takes the settings given for that key */
static void set_key(struct xgpub_guest *g, const char *key)
{
	struct xgpub_guest *o;

	if (!strcmp(g->key, key))
		return;
	/* settings given for the old key stay with the old key */
	if (g->set && !find_key(g, g->key) && (o = slot_new()))
		keep(o, g);
	snprintf(g->key, sizeof(g->key), "%s", key);
	o = find_key(g, key);
	g->set = o && o->set;
	if (o) {
		g->weight = o->weight;
		g->cap = o->cap;
		g->limit_ms = o->limit_ms;
	} else if (g->kind == XGPUB_CHILD_XEN) {
		key_defaults(key, &g->weight, &g->cap, &g->limit_ms);
	} else {
		g->weight = XGPU_SCHED_WEIGHT_DEFAULT;
		g->cap = XGPU_CTL_CAP_NONE;
		g->limit_ms = 0;
	}
	if (o && !o->kind)
		memset(o, 0, sizeof(*o));	/* g keeps them now */
}

void xgpub_guest_rules_changed(void)
{
	struct xgpub_guest *g;

	/* guests whose settings nobody gave take their new rule's */
	xgpub_guest_for_each(g) {
		uint32_t w, cap, lim;

		if (g->set || g->kind != XGPUB_CHILD_XEN || !g->settled)
			continue;
		key_defaults(g->key, &w, &cap, &lim);
		if (w == g->weight && cap == g->cap && lim == g->limit_ms)
			continue;
		g->weight = w;
		g->cap = cap;
		g->limit_ms = lim;
		settings_changed(g->key);
	}
}

/* a local client's name arrives with its handshake, in the worker */
static void child_refresh(struct xgpub_child *c)
{
	if (!c->proc[0] && c->st &&
	    __atomic_load_n(&c->st->connected, __ATOMIC_ACQUIRE)) {
		memcpy(c->proc, c->st->proc, sizeof(c->proc));
		c->proc[sizeof(c->proc) - 1] = 0;
	}
}

void xgpub_child_key(struct xgpub_child *c, char *key, size_t len)
{
	const char *proc;

	child_refresh(c);
	proc = c->proc[0] ? c->proc : "?";
	if (c->kind == XGPUB_CHILD_XEN) {
		if (c->name[0])
			snprintf(key, len, "%s", c->name);
		else
			snprintf(key, len, "domid:%u", c->domid);
	} else if (c->kind == XGPUB_CHILD_NET) {
		/* its name is what TLS authenticated (a PSK identity or a
		 * certificate's CN), set by its worker */
		snprintf(key, len, "net:%s", proc);
	} else if (c->peer_uid == (uint32_t)geteuid()) {
		snprintf(key, len, "local:%s", proc);
	} else {
		/*
		 * A client of another user than the daemon's: its process
		 * name is its own to choose, so it names settings only
		 * within its user (credentials from SO_PEERCRED): naming
		 * itself after a guest with a larger weight gains nothing.
		 */
		snprintf(key, len, "local:u%u:%s", c->peer_uid, proc);
	}
}

/* key and name of g, from its first child, until they are settled */
static void settle(struct xgpub_guest *g, struct xgpub_child *c)
{
	char key[XGPU_CTL_KEY_LEN];
	const char *name = c->kind == XGPUB_CHILD_XEN ? c->name : c->proc;

	xgpub_child_key(c, key, sizeof(key));
	snprintf(g->name, sizeof(g->name), "%s", name[0] ? name : "-");
	xgpub_reply_word(key);
	xgpub_reply_word(g->name);
	set_key(g, key);
}

static void add_channel(struct xgpub_child *c, void *arg)
{
	struct xgpub_guest *g = find_live(c->kind, child_id(c));
	struct xgpub_guest_chans *ch;
	const struct xgpub_wstat *st = c->st;
	size_t pl;
	uint64_t t;

	(void)arg;
	child_refresh(c);
	if (!g) {
		g = slot_new();
		if (!g)
			return;
		g->kind = c->kind;
		g->id = child_id(c);
		g->uid = c->kind == XGPUB_CHILD_XEN ? c->domid :
			 XGPUB_GUEST_UID_LOCAL + c->client_id;
	}
	ch = &g->ch;
	if (!g->settled && !ch->n)
		settle(g, c);
	ch->n++;
	pl = strlen(ch->pids);
	if (pl + 12 < sizeof(ch->pids))
		snprintf(ch->pids + pl, sizeof(ch->pids) - pl, "%s%d",
			 pl ? "," : "", (int)c->pid);
	ch->rate += c->rate;
	if (!st)
		return;
	/* the worker's own slot; relaxed where only a sum is shown */
	ch->calls += __atomic_load_n(&st->calls, __ATOMIC_RELAXED);
	ch->mem += __atomic_load_n(&st->mem_used, __ATOMIC_RELAXED);
	ch->quota += __atomic_load_n(&st->quota, __ATOMIC_RELAXED);
	/* not the sum of its workers' times: the union of their busy
	 * periods, counted in the cell they share (xgpub_gcell.h) */
	t = xgpub_child_cell_time(c);
	if (t > ch->gpu_ns)
		ch->gpu_ns = t;
	ch->qdepth += __atomic_load_n(&st->qdepth, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&st->connected, __ATOMIC_ACQUIRE))
		return;
	ch->connected++;
	ch->drained += __atomic_load_n(&st->drained, __ATOMIC_ACQUIRE);
	ch->submitting |= __atomic_load_n(&st->submitting,
					  __ATOMIC_ACQUIRE) != 0;
	ch->busy |= __atomic_load_n(&st->busy, __ATOMIC_ACQUIRE) != 0;
	ch->in_call |= __atomic_load_n(&st->call_since, __ATOMIC_ACQUIRE) != 0;
	ch->runnable |= __atomic_load_n(&st->want, __ATOMIC_ACQUIRE) ||
			__atomic_load_n(&st->busy, __ATOMIC_ACQUIRE);
}

/* g left: its settings stay if they were given and no other guest of its
 * key holds them */
static void drop(struct xgpub_guest *g)
{
	if (g->set && !find_key(g, g->key))
		keep(g, g);
	else
		memset(g, 0, sizeof(*g));
}

void xgpub_guests_update(void)
{
	struct xgpub_guest *g;

	xgpub_guest_for_each(g)
		memset(&g->ch, 0, sizeof(g->ch));
	xgpub_children_each(add_channel, NULL);
	xgpub_guest_for_each(g) {
		uint64_t t = g->ch.gpu_ns + g->gpu_gone;

		/* never back: a guest whose workers all ended and came
		 * back has a fresh cell, counted on from its last time */
		if (t < g->gpu_seen) {
			g->gpu_gone += g->gpu_seen - t;
			t = g->gpu_seen;
		}
		g->ch.gpu_ns = t;
		g->gpu_seen = t;
		if (!g->ch.n)
			drop(g);
		else if (g->ch.connected)
			g->settled = true;
	}
	while (nslots > 0 && !in_use(&guests[nslots - 1]))
		nslots--;
}

/*
 * The share of the last interval's wall time during which c's GPU work
 * ran: its measured GPU time (gpu_ns grows as marks complete) plus the
 * work in flight, since the oldest of it began (gpu_since) or since the
 * GPU op in the driver now got the GPU (call_since: a driver that runs
 * work within the call), so that one long kernel counts while it runs,
 * not all at once when it ends.  The sum never goes back (a mark that
 * completes adds to gpu_ns what was counted in flight).
 */
static void util_sample(struct xgpub_child *c, uint64_t now)
{
	uint64_t busy = __atomic_load_n(&c->st->gpu_ns, __ATOMIC_RELAXED);
	uint64_t since = __atomic_load_n(&c->st->gpu_since, __ATOMIC_RELAXED);
	uint64_t call = __atomic_load_n(&c->st->call_since, __ATOMIC_RELAXED);
	uint32_t pm = 0;

	if (call && (!since || call < since))
		since = call;

	if (since && now > since)
		busy += now - since;
	if (c->rate_t && now > c->rate_t && busy > c->util_busy) {
		uint64_t d = busy - c->util_busy, wall = now - c->rate_t;

		pm = d >= wall ? 1000 : (uint32_t)(d * 1000 / wall);
	}
	if (busy > c->util_busy)
		c->util_busy = busy;
	__atomic_store_n(&xgpub_wctl_of(c->st)->util_pm, pm,
			 __ATOMIC_RELAXED);
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
	util_sample(c, now);
	c->rate_t = now;
	c->rate_calls = calls;
}

void xgpub_guests_tick(uint64_t now_ns)
{
	xgpub_children_each(tick_one, &now_ns);
}

static struct xgpub_guest *next_entry(struct xgpub_guest *g, bool live)
{
	for (int i = g ? (int)(g - guests) + 1 : 0; i < nslots; i++)
		if (in_use(&guests[i]) && (guests[i].kind != 0) == live)
			return &guests[i];
	return NULL;
}

struct xgpub_guest *xgpub_guest_next(struct xgpub_guest *g)
{
	return next_entry(g, true);
}

struct xgpub_guest *xgpub_guest_kept_next(struct xgpub_guest *g)
{
	return next_entry(g, false);
}

struct xgpub_guest *xgpub_guest_by_uid(uint32_t uid)
{
	struct xgpub_guest *g;

	xgpub_guest_for_each(g)
		if (g->uid == uid)
			return g;
	return NULL;
}

struct each_channel {
	const struct xgpub_guest *g;
	void (*fn)(struct xgpub_child *c, void *arg);
	void *arg;
};

static void each_channel(struct xgpub_child *c, void *arg)
{
	struct each_channel *e = arg;

	if (c->kind == e->g->kind && child_id(c) == e->g->id)
		e->fn(c, e->arg);
}

void xgpub_guest_channels(const struct xgpub_guest *g,
			  void (*fn)(struct xgpub_child *c, void *arg),
			  void *arg)
{
	struct each_channel e = { g, fn, arg };

	xgpub_children_each(each_channel, &e);
}

void xgpub_guest_resolve(const char *who, char *key, size_t len)
{
	struct xgpub_guest *g;

	xgpub_guest_for_each(g) {
		char idbuf[24];

		snprintf(idbuf, sizeof(idbuf), "%u", g->id);
		if ((g->kind == XGPUB_CHILD_XEN && !strcmp(who, idbuf)) ||
		    ((g->kind == XGPUB_CHILD_LOCAL ||
		      g->kind == XGPUB_CHILD_NET) && who[0] == 'c' &&
		     !strcmp(who + 1, idbuf)) ||
		    !strcmp(who, g->name) || !strcmp(who, g->key)) {
			snprintf(key, len, "%s", g->key);
			return;
		}
	}
	snprintf(key, len, "%s", who);
	xgpub_reply_word(key);
}

void xgpub_guest_settings(const char *key, uint32_t *weight, uint32_t *cap,
			  uint32_t *limit_ms)
{
	const struct xgpub_guest *g = find_key(NULL, key);

	if (!g) {
		key_defaults(key, weight, cap, limit_ms);
		return;
	}
	*weight = g->weight;
	*cap = g->cap;
	*limit_ms = g->limit_ms;
}

/* entries that hold given settings (guests of one key counted each) */
static int settings_count(void)
{
	int n = 0;

	for (int i = 0; i < nslots; i++)
		n += in_use(&guests[i]) && guests[i].set;
	return n;
}

int xgpub_guest_settings_set(const char *key, uint32_t weight, uint32_t cap,
			     uint32_t limit_ms)
{
	struct xgpub_guest *g = find_key(NULL, key);

	if (!(g && g->set) && settings_count() >= XGPUB_SETTINGS_MAX)
		return -ENOSPC;
	if (!g) {
		/* for a guest not here yet */
		g = slot_new();
		if (!g)
			return -ENOSPC;
		snprintf(g->key, sizeof(g->key), "%s", key);
		snprintf(g->name, sizeof(g->name), "-");
	}
	for (int i = 0; i < nslots; i++) {
		g = &guests[i];
		if (!in_use(g) || strcmp(g->key, key))
			continue;
		g->set = true;
		g->weight = weight;
		g->cap = cap;
		g->limit_ms = limit_ms;
	}
	settings_changed(key);
	return 0;
}
