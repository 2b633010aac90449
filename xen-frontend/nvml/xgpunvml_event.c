// SPDX-License-Identifier: MIT
/*
 * xgpunvml_event.c: NVML event sets.  nvidia-smi makes one before it
 * prints anything (and stops with "Internal NVML error" when it cannot);
 * a guest's virtual GPU reports no event types (XID errors, clock and
 * power changes are the host's), so a set can be made, waited on (it
 * times out) and freed, and registering any event type on it answers
 * NVML_ERROR_NOT_SUPPORTED, as NVML does for types a device lacks.
 */
#include <stdlib.h>
#include <time.h>

#include "xgpunvml.h"

#define EVSET_MAGIC	0x45565354u	/* "EVST" */
#define MAX_WAIT_MS	60000u

struct xgpunvml_evset {
	uint32_t magic;
};

typedef struct xgpunvml_evset *nvmlEventSet_t;

static bool is_set(nvmlEventSet_t set)
{
	return set && set->magic == EVSET_MAGIC;
}

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	struct xgpunvml_evset *s;

	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NVML_ERROR_MEMORY;
	s->magic = EVSET_MAGIC;
	*set = s;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!is_set(set))
		return NVML_ERROR_INVALID_ARGUMENT;
	set->magic = 0;
	free(set);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t dev,
						     unsigned long long *types)
{
	nvmlReturn_t rc = xgpunvml_check(dev);

	if (rc)
		return rc;
	if (!types)
		return NVML_ERROR_INVALID_ARGUMENT;
	*types = 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev,
					     unsigned long long types,
					     nvmlEventSet_t set)
{
	nvmlReturn_t rc = xgpunvml_check(dev);

	if (rc)
		return rc;
	if (!is_set(set))
		return NVML_ERROR_INVALID_ARGUMENT;
	return types ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

/* no event ever comes: wait out the timeout */
static nvmlReturn_t wait_set(nvmlEventSet_t set, void *data, unsigned int ms)
{
	struct timespec ts;

	if (!xgpunvml_inited())
		return NVML_ERROR_UNINITIALIZED;
	if (!is_set(set) || !data)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (ms > MAX_WAIT_MS)
		ms = MAX_WAIT_MS;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts))
		;
	return NVML_ERROR_TIMEOUT;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, void *data,
					unsigned int timeoutms)
{
	return wait_set(set, data, timeoutms);
}

EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, void *data,
				     unsigned int timeoutms)
{
	return wait_set(set, data, timeoutms);
}
