// SPDX-License-Identifier: MIT
/*
 * check_peer: the IPC domain of network clients (xgpub_broker.h,
 * XGPUB_BROKER_PEER).  The connections of one authenticated peer are one
 * domain; another peer's, a connection whose worker never said its
 * peer, a local client or a Xen domain are not; a worker's first word
 * stands and a second is refused, so a worker its peer took over later
 * cannot move into another peer's domain.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_daemon.h"
#include "xgpub_ipc.h"

static struct xgpub_child net(uint32_t id)
{
	struct xgpub_child c;

	memset(&c, 0, sizeof(c));
	c.kind = XGPUB_CHILD_NET;
	c.client_id = id;
	c.peer_uid = (uint32_t)-1;
	return c;
}

static void hash_of(uint8_t h[32], uint8_t v)
{
	memset(h, v, 32);
}

START_TEST(one_peer_one_domain)
{
	struct xgpub_child a = net(1), b = net(2), m = net(3);
	char da[XGPUB_IPC_DOMAIN_LEN], db[XGPUB_IPC_DOMAIN_LEN],
	     dm[XGPUB_IPC_DOMAIN_LEN];
	uint8_t alice[32], mallory[32];

	hash_of(alice, 0xa1);
	hash_of(mallory, 0x3e);
	ck_assert_int_eq(xgpub_child_set_peer(&a, alice), 0);
	ck_assert_int_eq(xgpub_child_set_peer(&b, alice), 0);
	ck_assert_int_eq(xgpub_child_set_peer(&m, mallory), 0);
	ck_assert(xgpub_child_same_guest(&a, &b));
	ck_assert(!xgpub_child_same_guest(&a, &m));
	xgpub_child_ipc_domain(&a, da, sizeof(da));
	xgpub_child_ipc_domain(&b, db, sizeof(db));
	xgpub_child_ipc_domain(&m, dm, sizeof(dm));
	ck_assert_str_eq(da, db);
	ck_assert_str_ne(da, dm);
	ck_assert_str_eq(da, "net:a1a1a1a1a1a1a1a1a1a1a1a1");
}
END_TEST

START_TEST(first_word_stands)
{
	struct xgpub_child a = net(1), m = net(2);
	char d[XGPUB_IPC_DOMAIN_LEN];
	uint8_t alice[32], mallory[32];

	hash_of(alice, 0xa1);
	hash_of(mallory, 0x3e);
	ck_assert_int_eq(xgpub_child_set_peer(&m, mallory), 0);
	ck_assert_int_eq(xgpub_child_set_peer(&m, alice), -EALREADY);
	ck_assert_int_eq(xgpub_child_set_peer(&a, alice), 0);
	ck_assert(!xgpub_child_same_guest(&a, &m));
	xgpub_child_ipc_domain(&m, d, sizeof(d));
	ck_assert_str_eq(d, "net:3e3e3e3e3e3e3e3e3e3e3e3e");
}
END_TEST

START_TEST(unsaid_is_alone)
{
	struct xgpub_child a = net(1), b = net(2), x = net(3);
	char d[XGPUB_IPC_DOMAIN_LEN];
	uint8_t alice[32];

	hash_of(alice, 0xa1);
	ck_assert_int_eq(xgpub_child_set_peer(&a, alice), 0);
	/* b never said: its own domain, apart from a and from x */
	ck_assert(!xgpub_child_same_guest(&a, &b));
	ck_assert(!xgpub_child_same_guest(&b, &x));
	ck_assert(xgpub_child_same_guest(&b, &b));
	xgpub_child_ipc_domain(&b, d, sizeof(d));
	ck_assert_str_eq(d, "client:2");
}
END_TEST

START_TEST(only_network_clients_say)
{
	struct xgpub_child l = net(1), x = net(2), a = net(3);
	uint8_t alice[32];

	hash_of(alice, 0xa1);
	l.kind = XGPUB_CHILD_LOCAL;
	l.peer_uid = 1000;
	x.kind = XGPUB_CHILD_XEN;
	x.domid = 5;
	ck_assert_int_eq(xgpub_child_set_peer(&l, alice), -EPERM);
	ck_assert_int_eq(xgpub_child_set_peer(&x, alice), -EPERM);
	ck_assert_int_eq(xgpub_child_set_peer(&a, alice), 0);
	ck_assert(!xgpub_child_same_guest(&a, &l));
	ck_assert(!xgpub_child_same_guest(&a, &x));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("peer");
	TCase *tc = tcase_create("peer");
	SRunner *r;
	int failed;

	tcase_add_test(tc, one_peer_one_domain);
	tcase_add_test(tc, first_word_stands);
	tcase_add_test(tc, unsaid_is_alone);
	tcase_add_test(tc, only_network_clients_say);
	suite_add_tcase(s, tc);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
