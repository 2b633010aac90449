// SPDX-License-Identifier: MIT
/*
 * xgpulib_init.c: cuInit: the transport (the Xen one where the guest
 * module's device exists, else the local socket, or XGPU_TRANSPORT), the
 * channel, the protocol handshake and the device cache (xgpulib_dev.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpulib.h"
#include "xgpulib_transport.h"
#include "xgpu_uapi.h"
#include "xgpulib_etbl.h"
#include "xgpulib_module.h"
#include "xgpulib_mco.h"
#include "xgpulib_shadow.h"


static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static int init_done;
static CUresult init_rc;

/* ---- identity for the export tables ------------------------------------ */

static int id_device_count(void)
{
	return xgpulib_ndev;
}

static int id_device_identity(int ordinal, CUuuid *uuid, int *dom, int *bus,
			      int *dev)
{
	const struct xgpuif_device_info_reply *i;

	if (ordinal < 0 || ordinal >= xgpulib_ndev)
		return -1;
	i = &xgpulib_devs[ordinal].info;
	memcpy(uuid->bytes, i->uuid, sizeof(uuid->bytes));
	*dom = i->pci_domain;
	*bus = i->pci_bus;
	*dev = i->pci_device;
	return 0;
}

static CUresult id_primary_ctx(CUdevice dev, CUcontext *pctx)
{
	struct CUctx_st *c = xgpulib_primary(dev);

	if (!c)
		return CUDA_ERROR_INVALID_DEVICE;
	*pctx = c;
	return CUDA_SUCCESS;
}

static int id_driver_version(void)
{
	return xgpulib_driver_version;
}

static CUresult id_table_size(const CUuuid *id, uint64_t *bytes)
{
	struct xgpuif_uuid_args a;
	struct xgpuif_u64_reply r = { 0 };
	CUresult rc;

	if (xgpulib_check_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	memcpy(a.uuid, id->bytes, sizeof(a.uuid));
	rc = xgpulib_call_EXPORT_TABLE_SIZE(&a, &r);
	if (rc == CUDA_SUCCESS)
		*bytes = r.value;
	return rc;
}

static const struct xgpulib_identity_ops identity_ops = {
	.device_count = id_device_count,
	.device_identity = id_device_identity,
	.primary_ctx = id_primary_ctx,
	.current_ctx = xgpulib_current,
	.driver_version = id_driver_version,
	.set_current = cuCtxSetCurrent,
	.ctx_id = cuCtxGetId,
	.ctx_device = cuCtxGetDevice_v2,
	.module_each = xgpulib_module_each,
	.func_param_count = xgpulib_func_param_count,
	.table_size = id_table_size,
};

/* ---- cuInit -------------------------------------------------------------- */

static CUresult connect_backend(void)
{
	struct xgpulib_chan *c;
	struct xgpulib_transport *t;
	bool nomem;

	c = xgpulib_chan_connect("cuInit", 2000, &nomem);
	if (!c)
		return nomem ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_NO_DEVICE;
	t = c->t;
	xgpulib_fence_setup(t);
	xgpulib_ch = c;
	xgpulib_dbg("connected to %s (ring order %u, data area %zu MiB)",
		    t->where, t->ring_order, t->data_bytes >> 20);
	return CUDA_SUCCESS;
}

/*
 * fork(): the parent's channel is served by the parent's worker and stays
 * the parent's.  As with the real driver, in a child of a parent that had
 * initialised, every call, cuInit included, answers
 * CUDA_ERROR_NOT_INITIALIZED; the child never writes to the inherited ring
 * or socket (their descriptors close with it, the parent's stay open), so
 * neither its calls nor its exit touch the parent.  A child forked before
 * cuInit initialises as usual, on a channel of its own.
 */
/* a child keeps the parent's channel here, unused: still its memory */
static struct xgpulib_chan *volatile parents_ch;

static void forked_child(void)
{
	/* the child has one thread: whoever held the lock is not here */
	init_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	if (init_done && init_rc == CUDA_SUCCESS) {
		xgpulib_hostreg_forked();
		xgpulib_mco_forked();
		xgpulib_shadow_forked();
		parents_ch = xgpulib_ch;
		xgpulib_ch = NULL;
		init_rc = CUDA_ERROR_NOT_INITIALIZED;
	}
}

static CUresult init_once(unsigned int flags)
{
	struct xgpuif_init_args a = { flags, XGPUIF_VERSION };
	struct xgpuif_init_reply r;
	CUresult rc;

	rc = connect_backend();
	if (rc)
		return rc;
	rc = xgpulib_call_INIT(&a, &r);
	if (!rc)
		rc = xgpulib_dev_load(r.device_count, r.driver_version);
	if (rc) {
		xgpulib_log("cuInit: the backend refused initialisation "
			    "(error %d)", rc);
		return rc;
	}
	xgpulib_etbl_init(&identity_ops);
	if (pthread_atfork(NULL, NULL, forked_child))
		xgpulib_dbg("pthread_atfork failed: a forked child would "
			    "share this process's channel");
	return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int flags)
{
	pthread_mutex_lock(&init_mu);
	if (!init_done) {
		init_rc = init_once(flags);
		init_done = 1;
	}
	pthread_mutex_unlock(&init_mu);
	return init_rc;
}

CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = xgpulib_driver_version;
	return CUDA_SUCCESS;
}
