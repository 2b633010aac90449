/* SPDX-License-Identifier: MIT */
/*
 * xgpu_addr.h: a TCP address written PREFIX HOST:PORT, as the guest's
 * XGPU_SOCKET (tcp://HOST:PORT), the daemon's --listen (tcp:ADDRESS:PORT)
 * and its --metrics (IPV4:PORT) take it.  HOST may be an IPv6 address in
 * brackets ([::1]:7400); without them the last ':' ends HOST.  PORT is a
 * decimal number from 1 to 65535.  The caller says what a bad address is
 * in its own words.
 */
#ifndef XGPU_ADDR_H
#define XGPU_ADDR_H

#include <stdint.h>

#define XGPU_ADDR_HOST_MAX	256

/* flags */
#define XGPU_ADDR_ANY_HOST	1u	/* HOST may be empty (every address) */

struct xgpu_addr {
	char host[XGPU_ADDR_HOST_MAX];	/* without the brackets */
	char port[6];			/* PORT as written, for getaddrinfo */
	uint16_t portnum;
};

/* spec = prefix HOST:PORT into a: 0, or -EINVAL if spec is not one */
int xgpu_addr_parse(const char *spec, const char *prefix, unsigned int flags,
		    struct xgpu_addr *a);

#endif
