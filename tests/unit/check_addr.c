/* SPDX-License-Identifier: MIT */
/* needs: shared-ring/xgpu_addr.c xen-frontend/lib/xgpulib_net.c
 *        xen-backend/daemon/xgpub_net_clients.c xen-backend/daemon/xgpub_metrics.c */
/*
 * The HOST:PORT parser of the network addresses (shared-ring/xgpu_addr.c):
 * good addresses, IPv6 in brackets, what is refused; and the three places
 * that take one (the guest's XGPU_SOCKET=tcp://HOST:PORT, the daemon's
 * --listen tcp:ADDRESS:PORT and --metrics IPV4:PORT) refusing a bad one
 * with their own message.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xgpu_addr.h"
#include "xgpu_tls.h"
#include "xgpub_metrics.h"
#include "xgpub_net_clients.h"
#include "xgpulib_transport.h"
#include "check_run.h"

/* ---- the parser ------------------------------------------------------------ */

static const struct {
	const char *spec, *prefix;
	unsigned int flags;
	const char *host, *port;
	unsigned int portnum;
} good[] = {
	{ "tcp://gpuhost:7400", "tcp://", 0, "gpuhost", "7400", 7400 },
	{ "tcp://10.0.2.2:1", "tcp://", 0, "10.0.2.2", "1", 1 },
	{ "tcp://[::1]:7400", "tcp://", 0, "::1", "7400", 7400 },
	{ "tcp://[fe80::1%eth0]:65535", "tcp://", 0, "fe80::1%eth0", "65535",
	  65535 },
	/* without brackets the last ':' ends the host */
	{ "tcp://::1:7400", "tcp://", 0, "::1", "7400", 7400 },
	{ "tcp:0.0.0.0:7400", "tcp:", 0, "0.0.0.0", "7400", 7400 },
	{ "tcp:[::]:7400", "tcp:", 0, "::", "7400", 7400 },
	{ "tcp::7400", "tcp:", XGPU_ADDR_ANY_HOST, "", "7400", 7400 },
	{ "tcp:[]:7400", "tcp:", XGPU_ADDR_ANY_HOST, "", "7400", 7400 },
	{ "127.0.0.1:9400", "", 0, "127.0.0.1", "9400", 9400 },
	{ "localhost:09400", "", 0, "localhost", "09400", 9400 },
};

START_TEST(test_good)
{
	struct xgpu_addr a;

	memset(&a, 0x5a, sizeof(a));
	ck_assert_msg(!xgpu_addr_parse(good[_i].spec, good[_i].prefix,
				       good[_i].flags, &a),
		      "'%s' refused", good[_i].spec);
	ck_assert_str_eq(a.host, good[_i].host);
	ck_assert_str_eq(a.port, good[_i].port);
	ck_assert_uint_eq(a.portnum, good[_i].portnum);
}
END_TEST

static const struct {
	const char *spec, *prefix;
	unsigned int flags;
} bad[] = {
	{ "", "tcp://", 0 },
	{ "tcp://", "tcp://", 0 },
	{ "gpuhost:7400", "tcp://", 0 },		/* no prefix */
	{ "tcp:gpuhost:7400", "tcp://", 0 },		/* the other one */
	{ "TCP://gpuhost:7400", "tcp://", 0 },
	{ "tcp://gpuhost", "tcp://", 0 },		/* no port */
	{ "tcp://gpuhost:", "tcp://", 0 },
	{ "tcp://:7400", "tcp://", 0 },			/* no host */
	{ "tcp://[]:7400", "tcp://", 0 },
	{ "tcp://[::1]", "tcp://", 0 },			/* brackets, no port */
	{ "tcp://[::1]7400", "tcp://", 0 },
	{ "tcp://[::1:7400", "tcp://", 0 },
	{ "tcp://gpuhost:0", "tcp://", 0 },		/* port range */
	{ "tcp://gpuhost:00000", "tcp://", 0 },
	{ "tcp://gpuhost:65536", "tcp://", 0 },
	{ "tcp://gpuhost:99999", "tcp://", 0 },
	{ "tcp://gpuhost:123456", "tcp://", 0 },
	{ "tcp://gpuhost:007400", "tcp://", 0 },
	{ "tcp://gpuhost:-1", "tcp://", 0 },		/* junk ports */
	{ "tcp://gpuhost:+80", "tcp://", 0 },
	{ "tcp://gpuhost: 80", "tcp://", 0 },
	{ "tcp://gpuhost:80 ", "tcp://", 0 },
	{ "tcp://gpuhost:0x50", "tcp://", 0 },
	{ "tcp://gpuhost:http", "tcp://", 0 },
	{ "tcp://gpuhost:74a0", "tcp://", 0 },
	{ "tcp:7400", "tcp:", XGPU_ADDR_ANY_HOST },	/* no ':' after all */
	{ "nonsense", "", 0 },
	{ ":9400", "", 0 },
	{ "127.0.0.1:99999", "", 0 },
};

START_TEST(test_bad)
{
	struct xgpu_addr a;

	ck_assert_msg(xgpu_addr_parse(bad[_i].spec, bad[_i].prefix,
				      bad[_i].flags, &a) == -EINVAL,
		      "'%s' (prefix '%s') accepted", bad[_i].spec,
		      bad[_i].prefix);
}
END_TEST

/* a host of 255 bytes fits, one of 256 does not */
START_TEST(test_host_length)
{
	char spec[300], host[257];
	struct xgpu_addr a;

	memset(host, 'h', 255);
	host[255] = 0;
	snprintf(spec, sizeof(spec), "tcp://%s:7400", host);
	ck_assert_int_eq(xgpu_addr_parse(spec, "tcp://", 0, &a), 0);
	ck_assert_str_eq(a.host, host);
	strcat(host, "h");
	snprintf(spec, sizeof(spec), "tcp://[%s]:7400", host);
	ck_assert_int_eq(xgpu_addr_parse(spec, "tcp://", 0, &a), -EINVAL);
}
END_TEST

/* ---- its callers ------------------------------------------------------------ */

/* what fn(spec) wrote to stderr, in out */
static int with_stderr(int (*fn)(const char *), const char *spec, char *out,
		       size_t len)
{
	FILE *t = tmpfile();
	int saved, rc;
	size_t n;

	ck_assert_ptr_nonnull(t);
	fflush(stderr);
	saved = dup(2);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(t), 2), 0);
	rc = fn(spec);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(t);
	n = fread(out, 1, len - 1, t);
	out[n] = 0;
	fclose(t);
	return rc;
}

static int listen_open(const char *spec)
{
	struct xgpu_tls_opts o = { 0 };

	return xgpub_net_open(spec, &o);
}

START_TEST(test_listen)
{
	char said[512];

	ck_assert_int_eq(with_stderr(listen_open, "tcp:0.0.0.0:65536", said,
				     sizeof(said)), -EINVAL);
	ck_assert_str_eq(said, "xen-gpubackd: --listen: 'tcp:0.0.0.0:65536' "
			 "is not tcp:ADDRESS:PORT (e.g. tcp:0.0.0.0:7400 or "
			 "tcp:[::1]:7400)\n");
	ck_assert_int_eq(with_stderr(listen_open, "0.0.0.0:7400", said,
				     sizeof(said)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(said, "is not tcp:ADDRESS:PORT"));
	/* a good address gets as far as the credentials */
	ck_assert_int_eq(with_stderr(listen_open, "tcp::7400", said,
				     sizeof(said)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(said, "needs --tls-psk FILE"));
	ck_assert_int_eq(with_stderr(listen_open, "tcp:[::1]:7400", said,
				     sizeof(said)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(said, "needs --tls-psk FILE"));
}
END_TEST

START_TEST(test_metrics)
{
	static const char *const refused[] = {
		"nonsense", "127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:",
		":9400", "[::1]:9400", "gpuhost:9400", "127.0.0.1:9x",
	};
	char said[512], want[256];
	unsigned int i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_int_eq(with_stderr(xgpub_metrics_open, refused[i],
					     said, sizeof(said)), -EINVAL);
		snprintf(want, sizeof(want), "xen-gpubackd: --metrics: '%s' "
			 "is not IPV4:PORT (e.g. 127.0.0.1:9400)\n",
			 refused[i]);
		ck_assert_str_eq(said, want);
	}
}
END_TEST

START_TEST(test_guest)
{
	static const char *const refused[] = {
		"tcp://gpuhost", "tcp://:7400", "tcp://gpuhost:0",
		"tcp://gpuhost:65536", "tcp://[::1]7400", "tcp:gpuhost:7400",
	};
	struct xgpulib_transport *t = NULL;
	char msg[300], want[300];
	unsigned int i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_int_eq(xgpulib_net_connect(refused[i], &t, msg,
						     sizeof(msg)), -EINVAL);
		snprintf(want, sizeof(want), "%s: not tcp://HOST:PORT",
			 refused[i]);
		ck_assert_str_eq(msg, want);
		ck_assert_ptr_null(t);
	}
}
END_TEST

static Suite *addr_suite(void)
{
	Suite *s = suite_create("addr");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_host_length);
	suite_add_tcase(s, tc);

	tc = tcase_create("callers");
	tcase_add_test(tc, test_listen);
	tcase_add_test(tc, test_metrics);
	tcase_add_test(tc, test_guest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(addr_suite(), false);
}
