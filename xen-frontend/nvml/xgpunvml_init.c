// SPDX-License-Identifier: MIT
/*
 * xgpunvml_init.c: nvmlInit and nvmlShutdown, the channel to the backend,
 * the error strings and the system queries.
 *
 * THE CHANNEL.  The first nvmlInit connects as the guest's libcuda does
 * (XGPU_TRANSPORT, XGPU_SOCKET, XGPU_DEVICE; xgpulib_transport.h) and
 * asks NVML_DEVICE once; the answer is kept.  nvmlShutdown drops a
 * reference only: the channel stays until the process exits (its worker
 * holds no CUDA context, so it costs the GPU nothing), and a later
 * nvmlInit uses it again.  A child forked after nvmlInit never touches the
 * parent's ring: its first call opens a channel of its own.
 *
 * Init without a backend answers NVML_ERROR_DRIVER_NOT_LOADED (nvidia-smi
 * then says it cannot talk to the driver), with one line on stderr that
 * names the socket or device it tried.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpu_uapi.h"
#include "xgpulib_chan.h"
#include "xgpulib_env.h"
#include "xgpulib_transport.h"
#include "xgpunvml.h"


struct xgpuif_nvml_device_reply xgpunvml_dev;
struct nvmlDevice_st xgpunvml_devs[XGPUNVML_MAX_DEV];

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned int refs;		/* nvmlInit calls not shut down */
static int inited;			/* refs > 0, for lock-free readers */
static struct xgpulib_chan *ch;		/* this process's channel */
static pid_t ch_pid;			/* the process it is of */
static bool have_dev;			/* xgpunvml_dev was filled */
/* a forked child keeps its parent's channel here, unused */
static struct xgpulib_chan *volatile parents_ch;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

bool xgpunvml_inited(void)
{
	return __atomic_load_n(&inited, __ATOMIC_ACQUIRE) != 0;
}

nvmlReturn_t xgpunvml_stub(void)
{
	return xgpunvml_inited() ? NVML_ERROR_NOT_SUPPORTED :
				   NVML_ERROR_UNINITIALIZED;
}

nvmlReturn_t xgpunvml_check(nvmlDevice_t dev)
{
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	for (unsigned int i = 0; i < XGPUNVML_MAX_DEV; i++)
		if (dev == &xgpunvml_devs[i] &&
		    i < xgpunvml_dev.device_count &&
		    dev->magic == XGPUNVML_DEV_MAGIC)
			return NVML_SUCCESS;
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t xgpunvml_str(const char *s, char *buf, unsigned int len)
{
	size_t n = strlen(s);

	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (len < n + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

bool xgpunvml_proc_name(unsigned int pid, const char *fallback, char *buf,
			size_t len)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	if (!len)
		return false;
	buf[0] = 0;
	if (pid) {
		/* argv[0], as nvidia-smi shows a process natively */
		snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
		f = fopen(path, "re");
		if (f) {
			n = fread(buf, 1, len - 1, f);
			buf[n] = 0;
			fclose(f);
		}
		if (!buf[0]) {
			snprintf(path, sizeof(path), "/proc/%u/comm", pid);
			f = fopen(path, "re");
			if (f) {
				if (!fgets(buf, (int)len, f))
					buf[0] = 0;
				buf[strcspn(buf, "\n")] = 0;
				fclose(f);
			}
		}
	}
	if (!buf[0] && fallback && fallback[0])
		snprintf(buf, len, "%s", fallback);
	return buf[0] != 0;
}

/* ---- the channel ------------------------------------------------------------ */

static void forked_child(void)
{
	/* one thread here: whoever held the lock is not */
	mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

static void atfork_setup(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

/* a channel to the backend, or NULL (said why on stderr) */
static struct xgpulib_chan *connect_backend(void)
{
	bool nomem;

	return xgpulib_chan_connect("nvmlInit", 200, &nomem);
}

static nvmlReturn_t nvml_rc(int rc)
{
	switch (rc) {
	case 0:
		return NVML_SUCCESS;
	case 2:		/* CUDA_ERROR_OUT_OF_MEMORY */
		return NVML_ERROR_MEMORY;
	case 46:	/* CUDA_ERROR_DEVICE_UNAVAILABLE: the backend is gone */
	case 702:	/* CUDA_ERROR_LAUNCH_TIMEOUT: ... ended the channel */
		return NVML_ERROR_GPU_IS_LOST;
	case 801:	/* CUDA_ERROR_NOT_SUPPORTED: a backend without NVML */
		return NVML_ERROR_NOT_SUPPORTED;
	default:
		return NVML_ERROR_UNKNOWN;
	}
}

/* one NVML op on the channel (mu held) */
static nvmlReturn_t call_locked(uint16_t op, void *r, uint32_t rsize,
				void *tail, uint32_t tcap, uint32_t *tlen)
{
	struct xgpulib_req rq = { .op = op };
	struct xgpulib_waiter w;
	int rc;

	if (ch && ch_pid != getpid()) {
		/* forked: the ring is the parent's */
		parents_ch = ch;
		ch = NULL;
	}
	if (!ch) {
		ch = connect_backend();
		if (!ch)
			return NVML_ERROR_DRIVER_NOT_LOADED;
		ch_pid = getpid();
	}
	memset(&w, 0, sizeof(w));
	w.reply = r;
	w.reply_cap = rsize;
	w.reply2 = tail;
	w.reply2_cap = tail ? tcap : 0;
	rc = xgpulib_chan_submit(ch, &rq, &w);
	if (!rc)
		rc = xgpulib_chan_wait(ch, &w);
	if (!rc && w.reply_len < rsize)
		rc = 999;	/* a backend bug */
	if (tlen)
		*tlen = !rc && w.reply_len > rsize ? w.reply_len - rsize : 0;
	if (rc)
		xgpulib_dbg("nvml: op %u answered error %d", op, rc);
	return nvml_rc(rc);
}

nvmlReturn_t xgpunvml_status(struct xgpunvml_status **out)
{
	struct xgpunvml_status *s = malloc(sizeof(*s));
	uint32_t tlen = 0;
	nvmlReturn_t rc;

	*out = NULL;
	if (!s)
		return NVML_ERROR_MEMORY;
	memset(&s->r, 0, sizeof(s->r));
	pthread_mutex_lock(&mu);
	rc = refs ? call_locked(XGPUIF_OP_NVML_STATUS, &s->r, sizeof(s->r),
				s->p, sizeof(s->p), &tlen) :
		    NVML_ERROR_UNINITIALIZED;
	pthread_mutex_unlock(&mu);
	if (rc) {
		free(s);
		return rc;
	}
	if (s->r.nproc > tlen / sizeof(s->p[0]))
		s->r.nproc = tlen / sizeof(s->p[0]);
	for (uint32_t i = 0; i < s->r.nproc; i++)
		s->p[i].name[sizeof(s->p[i].name) - 1] = 0;
	*out = s;
	return NVML_SUCCESS;
}

/* ---- init and shutdown ---------------------------------------------------- */

EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	nvmlReturn_t rc = NVML_SUCCESS;

	if (flags & ~(NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH))
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_once(&atfork_once, atfork_setup);
	pthread_mutex_lock(&mu);
	if (!have_dev || (ch && ch->dead) || (ch && ch_pid != getpid())) {
		struct xgpuif_nvml_device_reply d;

		memset(&d, 0, sizeof(d));
		if (ch && ch->dead) {
			/* the backend went away: a new channel */
			parents_ch = ch;
			ch = NULL;
		}
		rc = call_locked(XGPUIF_OP_NVML_DEVICE, &d, sizeof(d), NULL,
				 0, NULL);
		if (rc == NVML_SUCCESS) {
			d.name[sizeof(d.name) - 1] = 0;
			d.bus_id[sizeof(d.bus_id) - 1] = 0;
			d.driver_version[sizeof(d.driver_version) - 1] = 0;
			if (d.device_count > XGPUNVML_MAX_DEV)
				d.device_count = XGPUNVML_MAX_DEV;
			xgpunvml_dev = d;
			for (unsigned int i = 0; i < XGPUNVML_MAX_DEV; i++)
				xgpunvml_devs[i] = (struct nvmlDevice_st){
					XGPUNVML_DEV_MAGIC, i };
			have_dev = true;
		} else if (rc != NVML_ERROR_DRIVER_NOT_LOADED) {
			xgpulib_log("nvmlInit: the backend did not describe its "
				    "GPU (NVML error %d)", rc);
		}
	}
	if (rc == NVML_SUCCESS && !xgpunvml_dev.device_count &&
	    !(flags & NVML_INIT_FLAG_NO_GPUS))
		rc = NVML_ERROR_NOT_FOUND;
	if (rc == NVML_SUCCESS) {
		refs++;
		__atomic_store_n(&inited, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	return nvmlInitWithFlags(0);
}

EXPORT nvmlReturn_t nvmlInit(void)
{
	return nvmlInitWithFlags(0);
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t rc = NVML_SUCCESS;

	pthread_mutex_lock(&mu);
	if (!refs)
		rc = NVML_ERROR_UNINITIALIZED;
	else if (--refs == 0)
		__atomic_store_n(&inited, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mu);
	return rc;
}

/* ---- errors ------------------------------------------------------------------- */

EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
	static const char *const s[] = {
		[0] = "Success",
		[1] = "Uninitialized",
		[2] = "Invalid Argument",
		[3] = "Not Supported",
		[4] = "Insufficient Permissions",
		[5] = "Already Initialized",
		[6] = "Not Found",
		[7] = "Insufficient Size",
		[8] = "Insufficient External Power",
		[9] = "Driver Not Loaded",
		[10] = "Timeout",
		[11] = "Interrupt Request Issue",
		[12] = "NVML Shared Library Not Found",
		[13] = "Function Not Found",
		[14] = "Corrupted infoROM",
		[15] = "GPU is lost",
		[16] = "GPU requires restart",
		[17] = "The operating system has blocked the request",
		[18] = "RM has detected an NVML/RM version mismatch",
		[19] = "In use by another client",
		[20] = "Insufficient Memory",
		[21] = "No data",
		[22] = "The requested vGPU operation is not available on the "
		       "target device because ECC is enabled",
		[23] = "Insufficient Resources",
		[24] = "Frequency not supported",
		[25] = "Argument version mismatch",
		[26] = "Deprecated",
		[27] = "Not Ready",
		[28] = "GPU not found",
		[29] = "Invalid state",
	};

	if (result >= 0 && result < (int)(sizeof(s) / sizeof(s[0])) &&
	    s[result])
		return s[result];
	return "Unknown Error";
}

/* ---- system ------------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version,
					       unsigned int length)
{
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!xgpunvml_dev.driver_version[0])
		return NVML_ERROR_NOT_SUPPORTED;
	return xgpunvml_str(xgpunvml_dev.driver_version, version, length);
}

EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version,
					     unsigned int length)
{
	char v[XGPUIF_NVML_VERSION_LEN + 16];

	/* the API's major number, then the host driver's version */
	if (xgpunvml_inited() && xgpunvml_dev.driver_version[0])
		snprintf(v, sizeof(v), "%d.%s", XGPUNVML_API_MAJOR,
			 xgpunvml_dev.driver_version);
	else
		snprintf(v, sizeof(v), "%d", XGPUNVML_API_MAJOR);
	return xgpunvml_str(v, version, length);
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	if (!v)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	*v = xgpunvml_dev.cuda_version;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	return nvmlSystemGetCudaDriverVersion(v);
}

EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name,
					     unsigned int length)
{
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!name || !length)
		return NVML_ERROR_INVALID_ARGUMENT;
	return xgpunvml_proc_name(pid, NULL, name, length) ?
		       NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}

/* no S-class units and no excluded devices in a guest */
EXPORT nvmlReturn_t nvmlUnitGetCount(unsigned int *count)
{
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	*count = 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGetExcludedDeviceCount(unsigned int *count)
{
	return nvmlUnitGetCount(count);
}

EXPORT nvmlReturn_t nvmlGetBlacklistDeviceCount(unsigned int *count)
{
	return nvmlUnitGetCount(count);
}
