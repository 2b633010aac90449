// SPDX-License-Identifier: MIT
/*
 * xgpu_addr.c: PREFIX HOST:PORT into host and port (xgpu_addr.h).
 */
#include <errno.h>
#include <string.h>

#include "xgpu_addr.h"

int xgpu_addr_parse(const char *spec, const char *prefix, unsigned int flags,
		    struct xgpu_addr *a)
{
	size_t pl = strlen(prefix), hl, i;
	const char *h = spec + pl, *colon, *end;
	unsigned long port = 0;

	if (strncmp(spec, prefix, pl))
		return -EINVAL;
	if (*h == '[') {
		end = strchr(++h, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		end = colon = strrchr(h, ':');
	}
	if (!colon)
		return -EINVAL;
	hl = (size_t)(end - h);
	if ((!hl && !(flags & XGPU_ADDR_ANY_HOST)) || hl >= sizeof(a->host))
		return -EINVAL;
	/* PORT: digits only, 1 to 65535 */
	for (i = 1; colon[i]; i++) {
		if (colon[i] < '0' || colon[i] > '9' || i >= sizeof(a->port))
			return -EINVAL;
		port = port * 10 + (unsigned long)(colon[i] - '0');
	}
	if (i == 1 || !port || port > 65535)
		return -EINVAL;
	memcpy(a->host, h, hl);
	a->host[hl] = 0;
	memcpy(a->port, colon + 1, i);
	a->portnum = (uint16_t)port;
	return 0;
}
