/* SPDX-License-Identifier: MIT */
/*
 * xgpub_guest.h: the daemon's guests (xgpub_guest.c, their listings in
 * xgpub_guest_list.c).
 *
 * A guest is what the administrator shares the GPU between: a Xen domain
 * (all the channels, i.e. worker processes, of its xgpu devices) or one
 * local client.  One struct xgpub_guest per guest holds all the daemon
 * knows of it: who it is, its settings, what its channels report and the
 * GPU scheduler's state of it (the scheduler glue's fields).
 *
 * SETTINGS (weight, cap) are kept by key, so that they outlive the guest:
 * a domain's name ("domid:N" while it has none), a local client's process
 * name ("local:NAME").  They may be given before the guest exists: the
 * table then holds an entry of kind 0 for the key (a guest not here),
 * which the first guest of that key takes over when it appears; a guest
 * that leaves after its settings were given leaves such an entry behind.
 * Guests of one key (two local clients of one program) share settings.
 * The ranges were checked where the settings entered (the control
 * command); this table stores them as given.
 *
 * LIFETIME.  xgpub_guests_update() reads the table of children: a child
 * of a guest not seen yet adds the guest, a guest whose last child is
 * gone is dropped.  A pointer to a guest is good until the next update.
 * A guest's key and name are settled once one of its channels connects
 * (a local client's process name arrives with its handshake).
 *
 * LOCKING.  None: the daemon's event loop is the only thread that uses
 * the table.  The workers write only their own status slots, read here
 * with atomics.
 */
#ifndef XGPUB_GUEST_H
#define XGPUB_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgpu_ctl.h"
#include "xgpub_daemon.h"

/* live guests are at most one per worker; as many settings may be kept */
#define XGPUB_GUESTS_MAX	2048
#define XGPUB_SETTINGS_MAX	1024
/* a guest's uid is its domid, or this plus its local client number */
#define XGPUB_GUEST_UID_LOCAL	0x100000u

struct xgpub_guest {
	/* who: kind 0 for settings kept for a guest not here */
	int kind;			/* XGPUB_CHILD_XEN, _LOCAL or 0 */
	uint32_t id;			/* domid or local client number */
	uint32_t uid;			/* unique over both kinds */
	char key[XGPU_CTL_KEY_LEN];	/* settings key, one reply word */
	char name[64];			/* domain or process name, or "-" */

	/* settings */
	bool set;			/* given by the administrator */
	uint32_t weight;
	uint32_t cap;			/* percent of one GPU, 0: none */
	uint32_t limit_ms;		/* GPU time limit, 0: the daemon's */

	/* what its channels report, summed at each xgpub_guests_update() */
	struct xgpub_guest_chans {
		int n;			/* workers */
		int connected;		/* ... whose channel is up */
		char pids[96];		/* "pid,pid,..." */
		uint64_t calls, mem, quota;
		/* its GPU time: the union of its workers' busy periods
		 * (their cell, xgpub_gcell.h), not their sum */
		uint64_t gpu_ns;
		uint32_t qdepth;
		double rate;		/* calls per second */
		/* for the GPU scheduler */
		bool runnable;		/* has requests or GPU work */
		bool busy;		/* GPU work in flight */
		bool submitting;	/* a GPU op on its way in */
		bool in_call;		/* ... and past the gate, in the driver */
		uint32_t drained;	/* count of busy -> idle */
	} ch;
	/*
	 * ch.gpu_ns never goes back: a guest whose workers all ended gets a
	 * fresh cell when one comes back, so what it had is kept in gpu_gone
	 * (the scheduler charges differences of ch.gpu_ns, which must not
	 * wrap); gpu_seen is the time at the previous update
	 */
	uint64_t gpu_gone, gpu_seen;

	/* the scheduler glue's own (xgpub_sched_glue.c, xgpub_vcpu_glue.c) */
	struct xgpub_guest_sched {
		bool scheduled;		/* known to the GPU scheduler */
		bool vcpu;		/* known to the VCPU coordinator */
		uint32_t drained_seen;	/* ch.drained at the previous step */
		/* passed over while its work still ran after its turn: not
		 * runnable for the scheduler until it drains; charged as
		 * its GPU time comes in, from overrun_gpu0 */
		bool overrun;
		uint64_t overrun_gpu0;
	} sched;

	bool settled;			/* key and name final */
};

/* read the table of children again (see LIFETIME) */
void xgpub_guests_update(void);
/* the key the guest of child c goes by: a domain's name (or domid:N),
 * net:NAME, local:NAME or local:uUID:NAME; "?" for a name not yet said */
void xgpub_child_key(struct xgpub_child *c, char *key, size_t len);
/* once a second: every channel's calls per second and GPU share (the
 * util_pm of its slot) */
void xgpub_guests_tick(uint64_t now_ns);

/* the live guest after g (NULL: the first), NULL at the end */
struct xgpub_guest *xgpub_guest_next(struct xgpub_guest *g);
#define xgpub_guest_for_each(g) \
	for ((g) = xgpub_guest_next(NULL); (g); (g) = xgpub_guest_next(g))
/* the same over the settings kept for guests not here */
struct xgpub_guest *xgpub_guest_kept_next(struct xgpub_guest *g);
struct xgpub_guest *xgpub_guest_by_uid(uint32_t uid);
/* fn for each child (channel) of g */
void xgpub_guest_channels(const struct xgpub_guest *g,
			  void (*fn)(struct xgpub_child *c, void *arg),
			  void *arg);

/* the settings key of the guest that `who` names now, or who itself
 * made one word (see the sched-credit command of xgpu_ctl.h) */
void xgpub_guest_resolve(const char *who, char *key, size_t len);
/* the settings of key (defaults when none were given) */
void xgpub_guest_settings(const char *key, uint32_t *weight, uint32_t *cap,
			  uint32_t *limit_ms);
/* give key's settings; 0, or -ENOSPC with XGPUB_SETTINGS_MAX keys set */
int xgpub_guest_settings_set(const char *key, uint32_t weight, uint32_t cap,
			     uint32_t limit_ms);
/* xgpub_config.h's listener: live domains whose settings nobody gave
 * take their new rule's */
void xgpub_guest_rules_changed(void);
/* fn(key) runs whenever the settings of the live guests of key changed,
 * given or from a new rule (the GPU scheduler's, xgpub_sched_glue.c) */
void xgpub_guest_on_settings(void (*fn)(const char *key));

/* ---- listings (xgpub_guest_list.c) --------------------------------------- */

/* what the GPU scheduler and the VCPU coordinator say of a guest */
struct xgpub_guest_view {
	int64_t credit_ns;
	char state[8];		/* UNDER, OVER, CAPPED, IDLE, or "-" */
	uint64_t gpu_ns;	/* charged */
	double share_period;	/* percent of the GPU, last period */
	double share_minute;	/* percent of the GPU, last minute */
	bool vcpu;		/* the two below are known */
	unsigned int vcpu_weight;
	unsigned long vcpu_boosts;
};
typedef void xgpub_guest_view_fn(const struct xgpub_guest *g,
				 struct xgpub_guest_view *v);

struct xgpub_reply;
/* `list` records: the guests (view fills in what the scheduler says),
 * then the domains with a device but no channel yet */
void xgpub_guests_list(struct xgpub_reply *r, xgpub_guest_view_fn *view);
/* `sched-credit` records of every guest and of the settings kept */
void xgpub_guests_list_settings(struct xgpub_reply *r);

#endif /* XGPUB_GUEST_H */
