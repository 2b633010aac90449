// SPDX-License-Identifier: MIT
/*
 * xgpu_vcpu_xenctrl.c: VCPU weights through libxenctrl, loaded at run time.
 *
 * The daemon must run where Xen is absent (the local transport), so
 * libxenctrl is dlopen'ed, not linked: no library, no hypervisor, no
 * privcmd, or a scheduler without weights, and the coordinator is off.
 * The few prototypes and structures used are declared here; where
 * xenctrl.h is installed (libxen-dev) they are checked against it at
 * compile time, below.
 *
 * Credit and credit2 take weights the same way but not caps:
 *   - credit: putinfo leaves the cap alone when cap is 0xffff, so one
 *     hypercall sets the weight;
 *   - credit2: putinfo with cap 0 REMOVES a cap, so the cap is read first
 *     and written back with the new weight: two hypercalls.
 * In both, weight 0 means "leave it", which we never send.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpu_vcpu_priv.h"

/* ---- what we use of libxenctrl 4.17's ABI -------------------------------- */

#define XGPU_XEN_SCHEDULER_CREDIT	5
#define XGPU_XEN_SCHEDULER_CREDIT2	6
#define XGPU_XEN_CREDIT_CAP_KEEP	0xffffu

struct xgpu_xc_handle;				/* xc_interface */
/* xen_domctl_sched_credit and xen_domctl_sched_credit2: the same layout */
struct xgpu_xc_sched {
	uint16_t weight;
	uint16_t cap;
};

/* xentoollog_logger's members; the level is an enum of small values */
#define XGPU_XTL_FIELDS(L, LEVEL)					\
	void (*vmessage)(L *logger, LEVEL level, int errnoval,		\
			 const char *context, const char *format,	\
			 va_list al);					\
	void (*progress)(L *logger, const char *context,		\
			 const char *doing_what, int percent,		\
			 unsigned long done, unsigned long total);	\
	void (*destroy)(L *logger);

struct xgpu_xtl_logger {
	XGPU_XTL_FIELDS(struct xgpu_xtl_logger, unsigned int)
};

#define XGPU_XC_FNS(H, L, CR, CR2)					\
	H *(*interface_open)(L *logger, L *dombuild_logger,		\
			     unsigned int open_flags);			\
	int (*interface_close)(H *xch);					\
	int (*sched_id)(H *xch, int *sched_id);				\
	int (*credit_get)(H *xch, uint32_t domid, CR *sdom);		\
	int (*credit_set)(H *xch, uint32_t domid, CR *sdom);		\
	int (*credit2_get)(H *xch, uint32_t domid, CR2 *sdom);		\
	int (*credit2_set)(H *xch, uint32_t domid, CR2 *sdom);

struct xc_fns {
	XGPU_XC_FNS(struct xgpu_xc_handle, struct xgpu_xtl_logger,
		    struct xgpu_xc_sched, struct xgpu_xc_sched)
};

/* each member of struct xc_fns and the libxenctrl function it holds */
#define XGPU_XC_SYMS(X)							\
	X(interface_open, xc_interface_open)				\
	X(interface_close, xc_interface_close)				\
	X(sched_id, xc_sched_id)					\
	X(credit_get, xc_sched_credit_domain_get)			\
	X(credit_set, xc_sched_credit_domain_set)			\
	X(credit2_get, xc_sched_credit2_domain_get)			\
	X(credit2_set, xc_sched_credit2_domain_set)

#if defined(__has_include)
#if __has_include(<xenctrl.h>)
#define XGPU_HAVE_XENCTRL_H 1
#endif
#endif

#ifdef XGPU_HAVE_XENCTRL_H
/*
 * The check: the same declarations written with xenctrl.h's own types
 * must be exactly its prototypes, and our structures must have its
 * layouts.  xenctrl.h wants GNU C (anonymous unions, aligned attributes);
 * the system headers we need are in already, so dropping strict ANSI here
 * only affects Xen's headers.
 */
#undef __STRICT_ANSI__
#include <xenctrl.h>

struct xc_fns_real {
	XGPU_XC_FNS(xc_interface, xentoollog_logger,
		    struct xen_domctl_sched_credit,
		    struct xen_domctl_sched_credit2)
};

struct xtl_real {
	XGPU_XTL_FIELDS(struct xentoollog_logger, xentoollog_level)
};

#define XGPU_SAME(a, b) \
	__builtin_types_compatible_p(__typeof__(a), __typeof__(b))

#define XGPU_CHECK_FN(field, sym)					\
	_Static_assert(XGPU_SAME(((struct xc_fns_real *)0)->field,	\
				 &sym), #sym " prototype");
XGPU_XC_SYMS(XGPU_CHECK_FN)

#define XGPU_CHECK_XTL(member)						\
	_Static_assert(XGPU_SAME(((struct xtl_real *)0)->member,	\
				 ((xentoollog_logger *)0)->member) &&	\
		       offsetof(xentoollog_logger, member) ==		\
		       offsetof(struct xgpu_xtl_logger, member),	\
		       "xentoollog_logger." #member);
XGPU_CHECK_XTL(vmessage)
XGPU_CHECK_XTL(progress)
XGPU_CHECK_XTL(destroy)
_Static_assert(XGPU_SAME(xentoollog_level, unsigned int),
	       "xentoollog_level is not unsigned int");
_Static_assert(sizeof(xentoollog_logger) == sizeof(struct xgpu_xtl_logger),
	       "xentoollog_logger size");

#define XGPU_CHECK_SCHED(real)						\
	_Static_assert(sizeof(real) == sizeof(struct xgpu_xc_sched) &&	\
		       offsetof(real, weight) ==			\
		       offsetof(struct xgpu_xc_sched, weight) &&	\
		       offsetof(real, cap) ==				\
		       offsetof(struct xgpu_xc_sched, cap),		\
		       #real " layout");
XGPU_CHECK_SCHED(struct xen_domctl_sched_credit)
XGPU_CHECK_SCHED(struct xen_domctl_sched_credit2)
_Static_assert(XEN_SCHEDULER_CREDIT == XGPU_XEN_SCHEDULER_CREDIT &&
	       XEN_SCHEDULER_CREDIT2 == XGPU_XEN_SCHEDULER_CREDIT2,
	       "XEN_SCHEDULER_* ids");
#endif /* XGPU_HAVE_XENCTRL_H */

/* ---- the backend -------------------------------------------------------- */

/* libxenctrl logs through this; we keep the last message for the reason */
struct xc_logger {
	struct xgpu_xtl_logger xtl;	/* first: libxenctrl sees only this */
	char last[160];
};

struct xc {
	void *dl;
	struct xc_fns fn;
	struct xgpu_xc_handle *xch;
	struct xc_logger log;
	bool credit2;
	/* fn.credit_get/set or fn.credit2_get/set: what Xen runs */
	int (*get)(struct xgpu_xc_handle *xch, uint32_t domid,
		   struct xgpu_xc_sched *sdom);
	int (*set)(struct xgpu_xc_handle *xch, uint32_t domid,
		   struct xgpu_xc_sched *sdom);
	char desc[96];
};

static void xc_vmessage(struct xgpu_xtl_logger *l, unsigned int level,
			int errnoval, const char *context, const char *fmt,
			va_list al)
	__attribute__((format(printf, 5, 0)));

static void xc_vmessage(struct xgpu_xtl_logger *l, unsigned int level,
			int errnoval, const char *context, const char *fmt,
			va_list al)
{
	struct xc_logger *x = (struct xc_logger *)l;
	size_t n;

	(void)level;
	(void)context;
	vsnprintf(x->last, sizeof(x->last), fmt, al);
	n = strlen(x->last);
	if (errnoval > 0 && n < sizeof(x->last))
		snprintf(x->last + n, sizeof(x->last) - n, ": %s",
			 strerror(errnoval));
}

static void xc_destroy_logger(struct xgpu_xtl_logger *l)
{
	(void)l;	/* part of struct xc, freed with it */
}

static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static int xc_open(void **priv, const struct xgpu_vcpu_params *p, char *why,
		   size_t whylen)
{
	static const char *const dflt[] = {
		"libxenctrl.so.4.17", "libxenctrl.so", NULL
	};
	const char *const *libs = p->xenctrl_libs ? p->xenctrl_libs : dflt;
	const char *lib = NULL, *missing = NULL;
	struct xc *x;
	int id, rc;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (; *libs && !x->dl; libs++) {
		/* NODELETE: libxenctrl's own atexit work must stay mapped */
		x->dl = dlopen(*libs, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		lib = *libs;
	}
	if (!x->dl) {
		const char *e = dlerror();

		snprintf(why, whylen, "libxenctrl not loaded (%s)",
			 e ? e : "no library name");
		free(x);
		return -ENOENT;
	}
#define XGPU_LOAD(field, sym)						\
	do {								\
		x->fn.field = (__typeof__(x->fn.field))dlsym(x->dl, #sym); \
		if (!x->fn.field && !missing)				\
			missing = #sym;					\
	} while (0);
	XGPU_XC_SYMS(XGPU_LOAD)
#undef XGPU_LOAD
	if (missing) {
		snprintf(why, whylen, "%s has no %s", lib, missing);
		rc = -ENOSYS;
		goto fail;
	}
	x->log.xtl.vmessage = xc_vmessage;
	x->log.xtl.progress = NULL;
	x->log.xtl.destroy = xc_destroy_logger;
	errno = 0;
	x->xch = x->fn.interface_open(&x->log.xtl, &x->log.xtl, 0);
	if (!x->xch) {
		rc = neg_errno();
		snprintf(why, whylen,
			 "xc_interface_open: %s (not in a Xen Dom0?)",
			 x->log.last[0] ? x->log.last : strerror(-rc));
		goto fail;
	}
	if (x->fn.sched_id(x->xch, &id)) {
		rc = neg_errno();
		snprintf(why, whylen, "xc_sched_id: %s",
			 x->log.last[0] ? x->log.last : strerror(-rc));
		goto fail_xch;
	}
	if (id != XGPU_XEN_SCHEDULER_CREDIT &&
	    id != XGPU_XEN_SCHEDULER_CREDIT2) {
		snprintf(why, whylen,
			 "Xen scheduler %d: not credit or credit2",
			 id);
		rc = -EOPNOTSUPP;
		goto fail_xch;
	}
	x->credit2 = id == XGPU_XEN_SCHEDULER_CREDIT2;
	x->get = x->credit2 ? x->fn.credit2_get : x->fn.credit_get;
	x->set = x->credit2 ? x->fn.credit2_set : x->fn.credit_set;
	snprintf(x->desc, sizeof(x->desc), "xen %s via %s",
		 x->credit2 ? "credit2" : "credit", lib);
	*priv = x;
	return 0;

fail_xch:
	x->fn.interface_close(x->xch);
fail:
	dlclose(x->dl);
	free(x);
	return rc;
}

static void xc_close(void *priv)
{
	struct xc *x = priv;

	x->fn.interface_close(x->xch);
	dlclose(x->dl);
	free(x);
}

static const char *xc_describe(void *priv)
{
	return ((struct xc *)priv)->desc;
}

static unsigned int xc_set_cost(void *priv)
{
	return ((struct xc *)priv)->credit2 ? 2 : 1;
}

static int xc_get(void *priv, uint32_t domid, unsigned int *weight)
{
	struct xc *x = priv;
	struct xgpu_xc_sched c = { 0 };

	if (x->get(x->xch, domid, &c))
		return neg_errno();
	*weight = c.weight;
	return 0;
}

static int xc_set(void *priv, uint32_t domid, unsigned int weight)
{
	struct xc *x = priv;
	struct xgpu_xc_sched c = { .cap = XGPU_XEN_CREDIT_CAP_KEEP };

	if (weight < XGPU_VCPU_WEIGHT_MIN || weight > XGPU_VCPU_WEIGHT_MAX)
		return -EINVAL;
	/* credit2 has no "keep": read the cap, writing 0 would remove it */
	if (x->credit2 && x->get(x->xch, domid, &c))
		return neg_errno();
	c.weight = (uint16_t)weight;
	if (x->set(x->xch, domid, &c))
		return neg_errno();
	return 0;
}

const struct xgpu_vcpu_backend xgpu_vcpu_xenctrl_backend = {
	.name = "xenctrl",
	.open = xc_open,
	.close = xc_close,
	.describe = xc_describe,
	.set_cost = xc_set_cost,
	.get_weight = xc_get,
	.set_weight = xc_set,
};
