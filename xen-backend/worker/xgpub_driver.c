// SPDX-License-Identifier: MIT
/*
 * xgpub_driver.c: the executor: a CUDA driver (the host's, or the tests'
 * fake), opened by an absolute path so that a replacement libcuda.so.1
 * on the library path (ours, for instance) is never picked up by mistake.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

struct xgpub_driver *xgpub_driver_open(const char *path, char *msg,
				       size_t msglen)
{
	struct xgpub_driver *d;
	void *h;
	CUresult (*get_table)(const void **, const CUuuid *);
	/* the guest library answers this table id; the driver does not */
	static const CUuuid guest_id = { { 'X', 'G', 'P', 'U', '-', 'G', 'U',
					   'E', 'S', 'T', '-', 'L', 'I', 'B',
					   0, 0 } };
	const void *tbl = NULL;
	const char *missing = NULL;

	if (!path || path[0] != '/') {
		snprintf(msg, msglen, "the driver must be named by an absolute "
			 "path (got \"%s\")", path ? path : "");
		return NULL;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(msg, msglen, "cannot open %s: %s", path, dlerror());
		return NULL;
	}
	/* refuse a copy of the guest library: it would talk to itself */
	get_table = (__typeof__(get_table))dlsym(h, "cuGetExportTable");
	if (get_table && get_table(&tbl, &guest_id) == CUDA_SUCCESS && tbl) {
		snprintf(msg, msglen, "%s is the xgpu guest library, not the "
			 "host's CUDA driver", path);
		dlclose(h);
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		dlclose(h);
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
#define XGPUB_DRV(fn)							\
	if (!missing && !(d->fn = (__typeof__(d->fn))dlsym(h, #fn)))	\
		missing = #fn;
#include "xgpub_driver.def"
#undef XGPUB_DRV
	if (missing) {
		snprintf(msg, msglen, "%s lacks %s: not a CUDA 13 driver",
			 path, missing);
		free(d);
		dlclose(h);
		return NULL;
	}
	d->name = strdup(path);
	d->dl = h;
	return d;
}

void xgpub_driver_close(struct xgpub_driver *d)
{
	if (!d)
		return;
	dlclose(d->dl);
	free((char *)d->name);
	free(d);
}
