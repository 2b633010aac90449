// SPDX-License-Identifier: MIT
/*
 * check_tls: the TLS 1.3 byte streams of shared-ring/xgpu_tls.c over
 * loopback TCP: pre-shared keys and mutual certificates (a CA, server and
 * client certificates made here with OpenSSL's API), what is refused and
 * how it is said (wrong key, unknown identity, another CA, a client with
 * no credentials or TLS 1.2, files open to others, malformed key files),
 * peers that send garbage or nothing, peers that go away, full duplex
 * traffic of one reader and one writer thread on each side,
 * xgpu_conn_shutdown waking a blocked reader or writer, and the
 * host-function slots two mirrors keep in step over such a stream.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "xgpu_mirror.h"
#include "xgpu_tls.h"
#include "xgpuif.h"
#include "check_run.h"

/* keys of 32 and 64 bytes */
#define KEY_A "000102030405060708090a0b0c0d0e0f" \
	      "101112131415161718191a1b1c1d1e1f"
#define KEY_A2 "ff0102030405060708090a0b0c0d0e0f" \
	       "101112131415161718191a1b1c1d1e1f"
#define KEY_B "A0A1A2A3A4A5A6A7A8A9AAABACADAEAF" \
	      "B0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF" \
	      "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECF" \
	      "D0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF"

#define ERRLEN 512
#define HS_MS 5000

static char tdir[64];

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void setup(void)
{
	strcpy(tdir, "/tmp/check_tls.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void teardown(void)
{
	nftw(tdir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* tdir/name into out */
static const char *tpath(char *out, const char *name)
{
	snprintf(out, 256, "%s/%s", tdir, name);
	return out;
}

/* a file of tdir with text and mode; its path in out */
static const char *wfile(char *out, const char *name, mode_t mode,
			 const char *text)
{
	int fd;

	tpath(out, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
	return out;
}

/* a connected pair of loopback TCP sockets */
static void tcp_pair(int *srv, int *cli)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int l;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(l, 4), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(*cli, 0);
	ck_assert_int_eq(connect(*cli, (struct sockaddr *)&sa, sizeof(sa)), 0);
	*srv = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(*srv, 0);
	close(l);
}

/* ---- handshakes ---------------------------------------------------------- */

struct side {
	struct xgpu_tls *t;
	int fd, timeout;
	struct xgpu_conn *c;
	char err[ERRLEN];
	int64_t ms;		/* how long the handshake took */
};

static void *accept_main(void *p)
{
	struct side *s = p;
	int64_t t0 = ms_now();

	s->c = xgpu_conn_accept(s->t, s->fd, s->timeout, s->err,
				sizeof(s->err));
	s->ms = ms_now() - t0;
	return NULL;
}

/* a server and a client handshake over a fresh pair: both ends' results */
static void handshake(struct xgpu_tls *st, struct xgpu_tls *ct,
		      struct side *srv, struct side *cli)
{
	pthread_t th;
	int64_t t0;

	memset(srv, 0, sizeof(*srv));
	memset(cli, 0, sizeof(*cli));
	srv->t = st;
	cli->t = ct;
	srv->timeout = cli->timeout = HS_MS;
	tcp_pair(&srv->fd, &cli->fd);
	ck_assert_int_eq(pthread_create(&th, NULL, accept_main, srv), 0);
	t0 = ms_now();
	cli->c = xgpu_conn_connect(ct, cli->fd, cli->timeout, cli->err,
				   sizeof(cli->err));
	cli->ms = ms_now() - t0;
	pthread_join(th, NULL);
	if (getenv("CHECK_TLS_VERBOSE"))
		fprintf(stderr, "handshake: server %s (%lld ms); client %s "
			"(%lld ms)\n", srv->c ? "ok" : srv->err,
			(long long)srv->ms, cli->c ? "ok" : cli->err,
			(long long)cli->ms);
}

static void close_both(struct side *a, struct side *b)
{
	xgpu_conn_close(a->c);
	xgpu_conn_close(b->c);
	a->c = b->c = NULL;
}

#define ck_has(s, sub) \
	ck_assert_msg(strstr((s), (sub)) != NULL, "'%s' lacks '%s'", (s), (sub))

/* one message each way */
static void exchange(struct xgpu_conn *a, struct xgpu_conn *b)
{
	char buf[64];

	ck_assert_int_eq(xgpu_conn_write(a, "ping from a", 12), 0);
	ck_assert_int_eq(xgpu_conn_read(b, buf, 12), 0);
	ck_assert_str_eq(buf, "ping from a");
	ck_assert_int_eq(xgpu_conn_write(b, "pong from b", 12), 0);
	ck_assert_int_eq(xgpu_conn_read(a, buf, 12), 0);
	ck_assert_str_eq(buf, "pong from b");
}

static struct xgpu_tls *psk_server(const char *file)
{
	struct xgpu_tls_opts o = { .psk_file = file };
	char err[ERRLEN];
	struct xgpu_tls *t = xgpu_tls_server(&o, err, sizeof(err));

	ck_assert_msg(t != NULL, "server: %s", err);
	return t;
}

static struct xgpu_tls *psk_client(const char *file, const char *id)
{
	struct xgpu_tls_opts o = { .psk_file = file, .identity = id };
	char err[ERRLEN];
	struct xgpu_tls *t = xgpu_tls_client(&o, err, sizeof(err));

	ck_assert_msg(t != NULL, "client: %s", err);
	return t;
}

static const char *server_keys(char *path)
{
	return wfile(path, "server.psk", 0600,
		     "# the guests\n"
		     "alice " KEY_A "\n"
		     "\n"
		     "  bob\t" KEY_B "   # 64 bytes\r\n");
}

/* a connected PSK pair (alice), server in s, client in c */
static void psk_pair(struct side *s, struct side *c, struct xgpu_tls **st,
		     struct xgpu_tls **ct)
{
	char p1[256], p2[256];

	*st = psk_server(server_keys(p1));
	*ct = psk_client(wfile(p2, "alice.psk", 0400, "alice " KEY_A "\n"),
			 NULL);
	handshake(*st, *ct, s, c);
	ck_assert_msg(s->c && c->c, "server: %s; client: %s", s->err, c->err);
}

/* ---- pre-shared keys ----------------------------------------------------- */

START_TEST(test_psk_ok)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char p[256];

	psk_pair(&s, &c, &st, &ct);
	ck_assert_str_eq(xgpu_conn_peer(s.c), "alice");
	ck_assert_str_eq(xgpu_conn_peer(c.c), "alice");
	ck_assert_str_eq(xgpu_conn_protocol(s.c), "TLSv1.3");
	ck_assert_str_eq(xgpu_conn_cipher(s.c), "TLS_AES_128_GCM_SHA256");
	ck_assert_str_eq(xgpu_conn_cipher(c.c), "TLS_AES_128_GCM_SHA256");
	ck_assert_int_ge(xgpu_conn_fd(s.c), 0);
	exchange(s.c, c.c);
	close_both(&s, &c);
	xgpu_tls_free(ct);

	/* the second line, chosen by name, with a 64-byte key */
	ct = psk_client(wfile(p, "two.psk", 0600, "alice " KEY_A "\nbob "
			      KEY_B "\n"), "bob");
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	ck_assert_str_eq(xgpu_conn_peer(s.c), "bob");
	ck_assert_str_eq(xgpu_conn_peer(c.c), "bob");
	/* the configurations may go before their conns */
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
	exchange(c.c, s.c);
	close_both(&s, &c);
}
END_TEST

START_TEST(test_psk_wrong_key)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char p1[256], p2[256];

	st = psk_server(server_keys(p1));
	ct = psk_client(wfile(p2, "c.psk", 0600, "alice " KEY_A2 "\n"), NULL);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(s.err, "authentication failed");
	ck_has(s.err, "wrong key for identity 'alice'");
	ck_has(c.err, "authentication failed");
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

START_TEST(test_psk_unknown_identity)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char p1[256], p2[256];

	st = psk_server(server_keys(p1));
	ct = psk_client(wfile(p2, "c.psk", 0600, "mallory " KEY_A "\n"), NULL);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(s.err, "authentication failed: unknown identity 'mallory'");
	ck_has(c.err, "authentication failed");
	/* the client hears what it would for a wrong key: identities
	 * cannot be probed */
	ck_has(c.err, "(alert: illegal parameter)");
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

START_TEST(test_psk_client_choice)
{
	struct xgpu_tls_opts o = { 0 };
	char err[ERRLEN], p[256];

	o.psk_file = wfile(p, "two.psk", 0600,
			   "alice " KEY_A "\nbob " KEY_B "\n");
	ck_assert_ptr_null(xgpu_tls_client(&o, err, sizeof(err)));
	ck_has(err, p);
	ck_has(err, "2 identities");
	o.identity = "carol";
	ck_assert_ptr_null(xgpu_tls_client(&o, err, sizeof(err)));
	ck_has(err, "no line for identity 'carol'");
}
END_TEST

/* several handshakes at once on one pair of configurations */
struct many {
	struct xgpu_tls *st, *ct;
	int sfd, cfd;
	int ok;
	char peer[64];
};

static void *many_client(void *p)
{
	struct many *m = p;
	struct xgpu_conn *c;
	char err[ERRLEN], buf[6];

	c = xgpu_conn_connect(m->ct, m->cfd, HS_MS, err, sizeof(err));
	if (c && !xgpu_conn_write(c, "hello", 6) && !xgpu_conn_read(c, buf, 6))
		m->ok = !strcmp(buf, "olleh");
	xgpu_conn_close(c);
	return NULL;
}

static void *many_server(void *p)
{
	struct many *m = p;
	struct xgpu_conn *c;
	char err[ERRLEN], buf[6];

	c = xgpu_conn_accept(m->st, m->sfd, HS_MS, err, sizeof(err));
	if (c && !xgpu_conn_read(c, buf, 6) && !strcmp(buf, "hello") &&
	    !xgpu_conn_write(c, "olleh", 6))
		snprintf(m->peer, sizeof(m->peer), "%s", xgpu_conn_peer(c));
	xgpu_conn_close(c);
	return NULL;
}

START_TEST(test_many_at_once)
{
	enum { N = 8 };
	struct many m[N];
	pthread_t th[2 * N];
	char p1[256], p2[256];
	struct xgpu_tls *st, *ct;

	st = psk_server(server_keys(p1));
	ct = psk_client(wfile(p2, "bob.psk", 0600, "bob " KEY_B "\n"), NULL);
	for (int i = 0; i < N; i++) {
		m[i] = (struct many){ .st = st, .ct = ct };
		tcp_pair(&m[i].sfd, &m[i].cfd);
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(pthread_create(&th[2 * i], NULL, many_server,
						&m[i]), 0);
		ck_assert_int_eq(pthread_create(&th[2 * i + 1], NULL,
						many_client, &m[i]), 0);
	}
	for (int i = 0; i < 2 * N; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(m[i].ok, 1);
		ck_assert_str_eq(m[i].peer, "bob");
	}
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

/* ---- key files ----------------------------------------------------------- */

START_TEST(test_key_file_mode)
{
	struct xgpu_tls_opts o = { 0 };
	struct xgpu_tls *t;
	char err[ERRLEN], p[256], want[300];
	static const mode_t bad[] = { 0644, 0640, 0604, 0620, 0602, 0660 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.psk_file = wfile(p, "k.psk", bad[i], "alice " KEY_A "\n");
		ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
		snprintf(want, sizeof(want), "%s: mode %04o", p, bad[i]);
		ck_has(err, want);
		ck_assert_ptr_null(xgpu_tls_client(&o, err, sizeof(err)));
		ck_has(err, want);
	}
	o.psk_file = wfile(p, "k.psk", 0600, "alice " KEY_A "\n");
	t = xgpu_tls_server(&o, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	xgpu_tls_free(t);
	/* a directory is no key file */
	o.psk_file = tdir;
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	ck_has(err, "not a regular file");
}
END_TEST

static void bad_keys(const char *text, const char *line, const char *why)
{
	struct xgpu_tls_opts o = { 0 };
	char err[ERRLEN], p[256], want[300];

	o.psk_file = wfile(p, "bad.psk", 0600, text);
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s%s", p, line);
	ck_has(err, want);
	ck_has(err, why);
}

START_TEST(test_key_file_errors)
{
	struct xgpu_tls_opts o = { 0 };
	char err[ERRLEN], p[256];

	o.psk_file = tpath(p, "missing.psk");
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	ck_has(err, p);
	ck_has(err, "No such file");

	bad_keys("# c\nalice " KEY_A "\nbob 00112233445566778899aabbccddeeff"
		 "00112233445566778899aabbccddeeXf\n", ":3:", "hex digit");
	bad_keys("alice 00112233445566778899aabbccddeeff\n", ":1:",
		 "16 bytes; 32 to 64 are needed");
	bad_keys("alice " KEY_B "00\n", ":1:", "65 bytes");
	bad_keys("alice " KEY_A "0\n", ":1:", "odd number of hex digits");
	bad_keys("\nalice " KEY_A "\nbob " KEY_B "\n\nalice " KEY_B "\n",
		 ":5:", "identity 'alice' again (first on line 2)");
	bad_keys("alice\n", ":1:", "no key after identity 'alice'");
	bad_keys("alice " KEY_A " extra\n", ":1:", "more than");
	bad_keys("# nothing\n\n", ": no keys", "IDENTITY HEXKEY");
	bad_keys("al\x01ice " KEY_A "\n", ":1:", "not printable");
}
END_TEST

START_TEST(test_opts_errors)
{
	struct xgpu_tls_opts o = { 0 };
	char err[ERRLEN], p[256];

	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	ck_has(err, "no unauthenticated mode");
	ck_assert_ptr_null(xgpu_tls_client(NULL, err, sizeof(err)));
	ck_has(err, "no unauthenticated mode");
	o.psk_file = wfile(p, "k.psk", 0600, "alice " KEY_A "\n");
	o.ca = "/nonexistent/ca.pem";
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	ck_has(err, "exclude each other");
	o.psk_file = NULL;
	o.cert = "/nonexistent/c.pem";
	ck_assert_ptr_null(xgpu_tls_client(&o, err, sizeof(err)));
	ck_has(err, "missing: key");
	/* no error buffer at all: no crash */
	ck_assert_ptr_null(xgpu_tls_client(&o, NULL, 0));
}
END_TEST

/* ---- certificates -------------------------------------------------------- */

static long serial = 1;

static void add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *val)
{
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, ctx, nid, val);

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(X509_add_ext(x, e, -1), 1);
	X509_EXTENSION_free(e);
}

/* a certificate for key, signed by issuer (NULL: self-signed CA) */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer,
		       EVP_PKEY *ikey, const char *san)
{
	X509 *x = X509_new();
	X509_NAME *n;
	X509V3_CTX ctx;

	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(X509_set_version(x, 2), 1);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	ck_assert_int_eq(X509_set_pubkey(x, key), 1);
	n = X509_get_subject_name(x);
	ck_assert_int_eq(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
		(const unsigned char *)cn, -1, -1, 0), 1);
	ck_assert_int_eq(X509_set_issuer_name(x, issuer ?
		X509_get_subject_name(issuer) : n), 1);
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	if (!issuer) {
		add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE");
		add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
	} else {
		add_ext(x, &ctx, NID_basic_constraints, "CA:FALSE");
		add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature");
	}
	if (san)
		add_ext(x, &ctx, NID_subject_alt_name, san);
	ck_assert_int_gt(X509_sign(x, ikey ? ikey : key, EVP_sha256()), 0);
	return x;
}

static void write_cert(X509 *x, const char *name)
{
	char p[256];
	FILE *f = fopen(tpath(p, name), "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_X509(f, x), 1);
	fclose(f);
	chmod(p, 0644);		/* certificates may be world-readable */
}

static void write_key(EVP_PKEY *k, const char *name, mode_t mode)
{
	char p[256];
	int fd = open(tpath(p, name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FILE *f = fdopen(fd, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL,
					      NULL), 1);
	fclose(f);
	chmod(p, mode);
}

/*
 * tdir: ca.pem; server.pem/.key (CN gpuhost, DNS gpuhost.example) and
 * client.pem/.key (CN guest-7) signed by it; ca2.pem and other.pem/.key
 * (CN intruder) signed by that other CA
 */
static void make_pki(void)
{
	EVP_PKEY *cak = EVP_EC_gen("P-256"), *ca2k = EVP_EC_gen("P-256");
	EVP_PKEY *sk = EVP_EC_gen("P-256"), *ck = EVP_EC_gen("P-256");
	EVP_PKEY *ok = EVP_EC_gen("P-256");
	X509 *ca, *ca2, *x;

	ck_assert(cak && ca2k && sk && ck && ok);
	ca = make_cert(cak, "xgpu test CA", NULL, NULL, NULL);
	ca2 = make_cert(ca2k, "another CA", NULL, NULL, NULL);
	write_cert(ca, "ca.pem");
	write_cert(ca2, "ca2.pem");
	x = make_cert(sk, "gpuhost", ca, cak, "DNS:gpuhost.example");
	write_cert(x, "server.pem");
	X509_free(x);
	write_key(sk, "server.key", 0600);
	x = make_cert(ck, "guest-7", ca, cak, NULL);
	write_cert(x, "client.pem");
	X509_free(x);
	write_key(ck, "client.key", 0400);
	x = make_cert(ok, "intruder", ca2, ca2k, NULL);
	write_cert(x, "other.pem");
	X509_free(x);
	write_key(ok, "other.key", 0600);
	X509_free(ca);
	X509_free(ca2);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(ca2k);
	EVP_PKEY_free(sk);
	EVP_PKEY_free(ck);
	EVP_PKEY_free(ok);
}

struct certset {
	char cert[256], key[256], ca[256];
};

static struct xgpu_tls *cert_tls(bool server, const char *who,
				 const char *ca, const char *name,
				 struct certset *cs)
{
	struct xgpu_tls_opts o = { 0 };
	char err[ERRLEN], n[64];
	struct xgpu_tls *t;

	snprintf(n, sizeof(n), "%s.pem", who);
	o.cert = tpath(cs->cert, n);
	snprintf(n, sizeof(n), "%s.key", who);
	o.key = tpath(cs->key, n);
	o.ca = tpath(cs->ca, ca);
	o.server_name = name;
	t = server ? xgpu_tls_server(&o, err, sizeof(err)) :
		     xgpu_tls_client(&o, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s: %s", who, err);
	return t;
}

START_TEST(test_cert_ok)
{
	struct certset a, b;
	struct xgpu_tls *st, *ct;
	struct side s, c;

	make_pki();
	st = cert_tls(true, "server", "ca.pem", NULL, &a);
	ct = cert_tls(false, "client", "ca.pem", "gpuhost.example", &b);
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	ck_assert_str_eq(xgpu_conn_peer(s.c), "guest-7");
	ck_assert_str_eq(xgpu_conn_peer(c.c), "gpuhost");
	ck_assert_str_eq(xgpu_conn_protocol(c.c), "TLSv1.3");
	ck_assert_str_eq(xgpu_conn_cipher(c.c), "TLS_AES_128_GCM_SHA256");
	exchange(s.c, c.c);
	close_both(&s, &c);
	xgpu_tls_free(ct);
	/* no name to check: the CA still is */
	ct = cert_tls(false, "client", "ca.pem", NULL, &b);
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	exchange(c.c, s.c);
	close_both(&s, &c);
	xgpu_tls_free(ct);
	xgpu_tls_free(st);
}
END_TEST

START_TEST(test_cert_other_ca)
{
	struct certset a, b;
	struct xgpu_tls *st, *ct;
	struct side s, c;

	make_pki();
	st = cert_tls(true, "server", "ca.pem", NULL, &a);
	/* a client of another CA, which trusts ours */
	ct = cert_tls(false, "other", "ca.pem", "gpuhost.example", &b);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(s.err, "authentication failed: client certificate");
	ck_has(c.err, "authentication failed: the server refused our "
	       "certificate");
	xgpu_tls_free(ct);
	/* a client that trusts only the other CA refuses our server */
	ct = cert_tls(false, "client", "ca2.pem", NULL, &b);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(c.err, "authentication failed: server certificate");
	ck_has(s.err, "authentication failed");
	xgpu_tls_free(ct);
	xgpu_tls_free(st);
}
END_TEST

START_TEST(test_cert_wrong_name)
{
	struct certset a, b;
	struct xgpu_tls *st, *ct;
	struct side s, c;

	make_pki();
	st = cert_tls(true, "server", "ca.pem", NULL, &a);
	ct = cert_tls(false, "client", "ca.pem", "other.example", &b);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(c.err, "authentication failed: server certificate: "
	       "hostname mismatch");
	xgpu_tls_free(ct);
	xgpu_tls_free(st);
}
END_TEST

START_TEST(test_cert_files)
{
	struct xgpu_tls_opts o = { 0 };
	char err[ERRLEN], c[256], k[256], ca[256], want[300];

	make_pki();
	o.cert = tpath(c, "server.pem");
	o.key = tpath(k, "server.key");
	o.ca = tpath(ca, "ca.pem");
	chmod(k, 0640);
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: mode 0640", k);
	ck_has(err, want);
	chmod(k, 0600);
	/* another certificate's key */
	o.key = tpath(k, "client.key");
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	ck_has(err, "not the key of the certificate");
	o.key = tpath(k, "server.key");
	o.ca = wfile(ca, "empty.pem", 0644, "not a certificate\n");
	ck_assert_ptr_null(xgpu_tls_server(&o, err, sizeof(err)));
	ck_has(err, ca);
	ck_has(err, "no PEM certificate");
	o.ca = tpath(ca, "ca.pem");
	o.cert = tpath(c, "nothere.pem");
	ck_assert_ptr_null(xgpu_tls_client(&o, err, sizeof(err)));
	ck_has(err, c);
	ck_has(err, "No such file");
}
END_TEST

/* a client with keys against a server with certificates, and back */
START_TEST(test_mode_mismatch)
{
	struct certset a, b;
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char p[256];

	make_pki();
	st = cert_tls(true, "server", "ca.pem", NULL, &a);
	ct = psk_client(wfile(p, "alice.psk", 0600, "alice " KEY_A "\n"),
			NULL);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(c.err, "authentication failed: the server showed a "
	       "certificate");
	ck_has(s.err, "authentication failed");
	xgpu_tls_free(st);
	st = psk_server(server_keys(p));
	xgpu_tls_free(ct);
	ct = cert_tls(false, "client", "ca.pem", NULL, &b);
	handshake(st, ct, &s, &c);
	ck_assert_ptr_null(s.c);
	ck_assert_ptr_null(c.c);
	ck_has(s.err, "authentication failed: the client offered no "
	       "pre-shared key");
	ck_has(c.err, "authentication failed");
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

/* ---- peers without our credentials (plain OpenSSL clients) --------------- */

struct raw {
	SSL_CTX *ctx;
	int fd;
	int ok;
};

static void *raw_connect(void *p)
{
	struct raw *r = p;
	SSL *ssl = SSL_new(r->ctx);

	SSL_set_fd(ssl, r->fd);
	r->ok = SSL_connect(ssl) == 1;
	SSL_free(ssl);
	ERR_clear_error();
	return NULL;
}

/* a plain client of ctx against server st: the server's result in s,
 * whether the client thought it got through */
static int raw_against(struct xgpu_tls *st, SSL_CTX *ctx, struct side *s)
{
	struct raw r = { .ctx = ctx };
	pthread_t th;

	memset(s, 0, sizeof(*s));
	tcp_pair(&s->fd, &r.fd);
	ck_assert_int_eq(pthread_create(&th, NULL, raw_connect, &r), 0);
	s->c = xgpu_conn_accept(st, s->fd, HS_MS, s->err, sizeof(s->err));
	pthread_join(th, NULL);
	close(r.fd);
	if (getenv("CHECK_TLS_VERBOSE"))
		fprintf(stderr, "plain client: server %s\n", s->err);
	ck_assert_ptr_null(s->c);
	return r.ok;
}

START_TEST(test_no_credentials_refused)
{
	struct certset a;
	struct xgpu_tls *st;
	SSL_CTX *ctx;
	struct side s;
	char p[256];

	/* a TLS 1.3 client with no key, against keys */
	st = psk_server(server_keys(p));
	ctx = SSL_CTX_new(TLS_client_method());
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(raw_against(st, ctx, &s), 0);
	ck_has(s.err, "authentication failed: the client offered no "
	       "pre-shared key");
	xgpu_tls_free(st);

	/* ... against certificates: it has none to show */
	make_pki();
	st = cert_tls(true, "server", "ca.pem", NULL, &a);
	/* (in TLS 1.3 the client is through before the server looks) */
	raw_against(st, ctx, &s);
	ck_has(s.err, "authentication failed: the client sent no "
	       "certificate");

	/* TLS 1.2 */
	SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
	ck_assert_int_eq(raw_against(st, ctx, &s), 0);
	ck_has(s.err, "handshake failed");
	ck_has(s.err, "protocol");
	SSL_CTX_free(ctx);
	xgpu_tls_free(st);
}
END_TEST

/* ---- bad peers ----------------------------------------------------------- */

START_TEST(test_garbage_client)
{
	static const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct xgpu_tls *st, *ct;
	struct side s, c;
	pthread_t th;
	char p1[256], p2[256], buf[64];
	ssize_t n;

	st = psk_server(server_keys(p1));
	for (int round = 0; round < 2; round++) {
		memset(&s, 0, sizeof(s));
		s.t = st;
		s.timeout = 3000;
		tcp_pair(&s.fd, &c.fd);
		ck_assert_int_eq(pthread_create(&th, NULL, accept_main, &s), 0);
		if (round == 0) {
			ck_assert_int_eq(write(c.fd, junk, sizeof(junk) - 1),
					 (ssize_t)sizeof(junk) - 1);
		} else {
			/* random bytes, record-like start */
			unsigned char r[300];

			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(i * 37 + 11);
			r[0] = 0x16;
			r[1] = 0x03;
			r[2] = 0x01;
			ck_assert_int_eq(write(c.fd, r, sizeof(r)),
					 (ssize_t)sizeof(r));
		}
		pthread_join(th, NULL);
		ck_assert_ptr_null(s.c);
		ck_has(s.err, "handshake failed");
		ck_assert_msg(s.ms < 2000, "took %lld ms", (long long)s.ms);
		/* the server closed its end: an alert at most, then EOF */
		do
			n = read(c.fd, buf, sizeof(buf));
		while (n > 0);
		ck_assert_int_eq(n, 0);
		close(c.fd);
	}
	/* and the next, good client is served */
	ct = psk_client(wfile(p2, "alice.psk", 0600, "alice " KEY_A "\n"),
			NULL);
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	exchange(s.c, c.c);
	close_both(&s, &c);
	xgpu_tls_free(ct);
	xgpu_tls_free(st);
}
END_TEST

START_TEST(test_stalled_peer)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char p1[256], p2[256], buf[8];
	int cfd, sfd;
	int64_t t0;

	/* a client that says nothing */
	st = psk_server(server_keys(p1));
	tcp_pair(&sfd, &cfd);
	t0 = ms_now();
	s.c = xgpu_conn_accept(st, sfd, 300, s.err, sizeof(s.err));
	t0 = ms_now() - t0;
	ck_assert_ptr_null(s.c);
	ck_has(s.err, "handshake timed out after 300 ms");
	ck_assert_msg(t0 >= 290 && t0 < 2000, "took %lld ms", (long long)t0);
	ck_assert_int_eq(read(cfd, buf, sizeof(buf)), 0);	/* closed */
	close(cfd);

	/* a server that says nothing */
	ct = psk_client(wfile(p2, "alice.psk", 0600, "alice " KEY_A "\n"),
			NULL);
	tcp_pair(&sfd, &cfd);
	t0 = ms_now();
	c.c = xgpu_conn_connect(ct, cfd, 250, c.err, sizeof(c.err));
	t0 = ms_now() - t0;
	ck_assert_ptr_null(c.c);
	ck_has(c.err, "handshake timed out after 250 ms");
	ck_assert_msg(t0 >= 240 && t0 < 2000, "took %lld ms", (long long)t0);
	close(sfd);

	/* neither held up the server */
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	close_both(&s, &c);
	xgpu_tls_free(ct);
	xgpu_tls_free(st);
}
END_TEST

START_TEST(test_peer_closes)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char out[1000], in[1000], b;
	int r = 0, i;

	memset(out, 'x', sizeof(out));
	/* closed cleanly after 1000 bytes: they arrive, then -EPIPE */
	psk_pair(&s, &c, &st, &ct);
	ck_assert_int_eq(xgpu_conn_write(c.c, out, sizeof(out)), 0);
	xgpu_conn_close(c.c);
	ck_assert_int_eq(xgpu_conn_read(s.c, in, sizeof(in)), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_int_eq(xgpu_conn_read(s.c, &b, 1), -EPIPE);
	ck_assert_int_eq(xgpu_conn_poll(s.c, -1, 0), 1);
	ck_assert_int_eq(xgpu_conn_read(s.c, &b, 1), -EPIPE);
	xgpu_conn_close(s.c);

	/* gone in the middle of a read */
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	ck_assert_int_eq(xgpu_conn_write(s.c, out, 500), 0);
	xgpu_conn_shutdown(s.c);
	xgpu_conn_close(s.c);
	ck_assert_int_eq(xgpu_conn_read(c.c, in, sizeof(in)), -EPIPE);
	ck_assert_mem_eq(in, out, 500);
	xgpu_conn_close(c.c);

	/* writes to a peer that went away: -EPIPE, and no SIGPIPE */
	handshake(st, ct, &s, &c);
	ck_assert_msg(s.c && c.c, "server: %s; client: %s", s.err, c.err);
	xgpu_conn_close(c.c);
	{
		size_t big = 1 << 20;
		char *buf = calloc(1, big);

		ck_assert_ptr_nonnull(buf);
		for (i = 0; i < 200 && !r; i++)
			r = xgpu_conn_write(s.c, buf, big);
		free(buf);
	}
	ck_assert_int_eq(r, -EPIPE);
	xgpu_conn_close(s.c);
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

/* ---- full duplex --------------------------------------------------------- */

#define DUPLEX_BYTES (256u << 20)

struct stream {
	struct xgpu_conn *c;
	uint64_t seed;
	int rc;
	long long bad_at;	/* the first wrong byte, -1: none */
};

static void pattern(uint64_t *w, uint64_t first, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		w[i] = ((first + i) * 0x9e3779b97f4a7c15ull) ^ seed;
}

static void *writer_main(void *p)
{
	/* writes of varying sizes, 8-byte multiples */
	static const size_t sizes[] = { 4 << 20, (1 << 20) + 8, 65528, 8,
					16384, 3 << 20 };
	struct stream *s = p;
	uint64_t *buf = malloc(4 << 20);
	size_t off = 0, k = 0, n;

	s->rc = buf ? 0 : -ENOMEM;
	while (!s->rc && off < DUPLEX_BYTES) {
		n = sizes[k++ % 6];
		if (n > DUPLEX_BYTES - off)
			n = DUPLEX_BYTES - off;
		pattern(buf, off / 8, n / 8, s->seed);
		s->rc = xgpu_conn_write(s->c, buf, n);
		off += n;
	}
	free(buf);
	return NULL;
}

static void *reader_main(void *p)
{
	/* reads of sizes that cut the writes anywhere */
	static const size_t sizes[] = { (2 << 20) + 3, 5, 100001, 4 << 20 };
	struct stream *s = p;
	unsigned char *got = malloc((4 << 20) + 16);
	uint64_t *want = malloc((4 << 20) + 32);
	size_t off = 0, k = 0, n;

	s->bad_at = -1;
	s->rc = got && want ? 0 : -ENOMEM;
	while (!s->rc && off < DUPLEX_BYTES) {
		n = sizes[k++ % 4];
		if (n > DUPLEX_BYTES - off)
			n = DUPLEX_BYTES - off;
		s->rc = xgpu_conn_read(s->c, got, n);
		if (s->rc)
			break;
		pattern(want, off / 8, (off % 8 + n + 7) / 8, s->seed);
		if (memcmp(got, (unsigned char *)want + off % 8, n)) {
			for (size_t i = 0; i < n; i++)
				if (got[i] != ((unsigned char *)want)[off % 8 +
								       i]) {
					s->bad_at = (long long)(off + i);
					break;
				}
			break;
		}
		off += n;
	}
	free(got);
	free(want);
	return NULL;
}

START_TEST(test_full_duplex)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	struct stream sw, sr, cw, cr;
	pthread_t th[4];
	int64_t t0;

	psk_pair(&s, &c, &st, &ct);
	sw = (struct stream){ .c = s.c, .seed = 0x5eed0001 };
	cr = (struct stream){ .c = c.c, .seed = 0x5eed0001 };
	cw = (struct stream){ .c = c.c, .seed = 0xc11e0002 };
	sr = (struct stream){ .c = s.c, .seed = 0xc11e0002 };
	t0 = ms_now();
	/* both sides write first: neither may wait for the other to read */
	ck_assert_int_eq(pthread_create(&th[0], NULL, writer_main, &sw), 0);
	ck_assert_int_eq(pthread_create(&th[1], NULL, writer_main, &cw), 0);
	usleep(100000);
	ck_assert_int_eq(pthread_create(&th[2], NULL, reader_main, &sr), 0);
	ck_assert_int_eq(pthread_create(&th[3], NULL, reader_main, &cr), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	t0 = ms_now() - t0;
	ck_assert_int_eq(sw.rc, 0);
	ck_assert_int_eq(cw.rc, 0);
	ck_assert_int_eq(sr.rc, 0);
	ck_assert_int_eq(cr.rc, 0);
	ck_assert_int_eq(sr.bad_at, -1);
	ck_assert_int_eq(cr.bad_at, -1);
	/* nothing more came */
	ck_assert_int_eq(xgpu_conn_poll(s.c, -1, 0), 0);
	ck_assert_int_eq(xgpu_conn_poll(c.c, -1, 0), 0);
	exchange(s.c, c.c);
	fprintf(stderr, "check_tls: full duplex, %u MiB each way: %lld ms\n",
		DUPLEX_BYTES >> 20, (long long)t0);
	close_both(&s, &c);
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

/* ---- poll and shutdown --------------------------------------------------- */

START_TEST(test_poll)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	char out[100], in[100];
	uint64_t one = 1;
	int64_t t0;
	int efd;

	psk_pair(&s, &c, &st, &ct);
	efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	t0 = ms_now();
	ck_assert_int_eq(xgpu_conn_poll(s.c, efd, 100), 0);
	ck_assert_int_ge(ms_now() - t0, 95);
	ck_assert(!xgpu_conn_buffered(s.c));
	for (int i = 0; i < 100; i++)
		out[i] = (char)i;
	ck_assert_int_eq(xgpu_conn_write(c.c, out, sizeof(out)), 0);
	ck_assert_int_eq(xgpu_conn_poll(s.c, efd, 2000), 1);
	ck_assert_int_eq(xgpu_conn_read(s.c, in, 10), 0);
	/* the rest of the record: in TLS's buffer, not on the socket; the
	 * receiving thread sees it without the lock */
	ck_assert(xgpu_conn_buffered(s.c));
	ck_assert_int_eq(xgpu_conn_poll(s.c, efd, 0), 1);
	ck_assert_int_eq(xgpu_conn_read(s.c, in + 10, 90), 0);
	ck_assert_mem_eq(in, out, sizeof(out));
	ck_assert(!xgpu_conn_buffered(s.c));
	ck_assert_int_eq(xgpu_conn_poll(s.c, efd, 50), 0);
	ck_assert_int_eq(write(efd, &one, sizeof(one)), 8);
	ck_assert_int_eq(xgpu_conn_poll(s.c, efd, 2000), 2);
	ck_assert_int_eq(xgpu_conn_poll(s.c, -1, 10), 0);
	close(efd);
	close_both(&s, &c);
	xgpu_tls_free(st);
	xgpu_tls_free(ct);
}
END_TEST

struct blocked {
	struct xgpu_conn *c;
	bool write;
	int rc;
	int64_t ended;
};

static void *blocked_main(void *p)
{
	struct blocked *b = p;
	size_t n = b->write ? 256u << 20 : 100;
	char *buf = calloc(1, n);

	b->rc = !buf ? -ENOMEM : b->write ? xgpu_conn_write(b->c, buf, n) :
					    xgpu_conn_read(b->c, buf, n);
	b->ended = ms_now();
	free(buf);
	return NULL;
}

START_TEST(test_shutdown_unblocks)
{
	struct xgpu_tls *st, *ct;
	struct side s, c;
	struct blocked b;
	pthread_t th;
	int64_t t0;
	char x;

	for (int w = 0; w < 2; w++) {
		/* a reader that waits for data that never comes; a writer
		 * that waits for a peer that never reads */
		psk_pair(&s, &c, &st, &ct);
		b = (struct blocked){ .c = s.c, .write = w, .ended = 0 };
		ck_assert_int_eq(pthread_create(&th, NULL, blocked_main, &b),
				 0);
		usleep(300000);
		ck_assert_int_eq(b.ended, 0);	/* still blocked */
		t0 = ms_now();
		xgpu_conn_shutdown(s.c);
		pthread_join(th, NULL);
		ck_assert_int_eq(b.rc, -EPIPE);
		ck_assert_msg(b.ended - t0 < 1000, "took %lld ms",
			      (long long)(b.ended - t0));
		/* and later calls too */
		ck_assert_int_eq(xgpu_conn_write(s.c, "x", 1), -EPIPE);
		ck_assert_int_eq(xgpu_conn_read(s.c, &x, 1), -EPIPE);
		ck_assert_int_eq(xgpu_conn_poll(s.c, -1, -1), 1);
		close_both(&s, &c);
		xgpu_tls_free(st);
		xgpu_tls_free(ct);
	}
}
END_TEST

/* ---- host-function slots kept in step by two mirrors --------------------- */

#define NHF 4u

/* a mirror on connection c over one page of ring and one of data at mem
 * (the mirror owns c from now on), its host-function slots hf */
static struct xgpu_mirror *mirror_on(struct xgpu_conn *c, bool guest,
				     uint8_t *mem,
				     struct xgpuif_hostfn_slot *hf)
{
	struct xgpuif_sring *s = (struct xgpuif_sring *)(void *)mem;
	struct xgpu_mirror_cfg cfg = {
		.guest = guest, .conn = c, .sring = s, .ring_order = 0,
		.data = mem + XGPUIF_PAGE_SIZE, .data_bytes = XGPUIF_PAGE_SIZE,
		.hostfn = hf, .nhostfn = NHF,
	};
	char err[160];
	struct xgpu_mirror *m;

	SHARED_RING_INIT(s);
	m = xgpu_mirror_start(&cfg, err, sizeof(err));
	ck_assert_msg(m != NULL, "mirror: %s", err);
	return m;
}

/* whether slot h reads state v within ms */
static bool slot_reads(const struct xgpuif_hostfn_slot *h, uint32_t v,
		       int ms)
{
	for (int i = 0; i < ms; i++) {
		if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == v)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * The guest ships slot 2 in `state` while the backend has it FREE: the
 * backend drops it.  Slot 3's DONE (made DUE at the backend first),
 * behind it on the same stream, says it was read.
 */
static void dropped_out_of_turn(struct xgpu_mirror *gm,
				struct xgpuif_hostfn_slot *g,
				struct xgpuif_hostfn_slot *b, uint32_t state)
{
	g[2].state = state;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(gm, 2), 0);
	__atomic_store_n(&b[3].state, XGPUIF_HF_DUE, __ATOMIC_RELEASE);
	g[3].state = XGPUIF_HF_DONE;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(gm, 3), 0);
	ck_assert(slot_reads(&b[3], XGPUIF_HF_DONE, 5000));
	ck_assert_uint_eq(__atomic_load_n(&b[2].state, __ATOMIC_ACQUIRE),
			  XGPUIF_HF_FREE);
}

/*
 * The HOSTFN frames of the network transport (xgpu_mirror.h): a slot the
 * worker marks DUE reaches the guest with its fields, the guest's DONE
 * reaches the worker, the worker's FREE the guest; a host function's
 * FETCH and FLUSH of a managed block with their fields and bytes (FILL
 * back); the backend drops a DONE or FETCH for a slot it does not have
 * DUE and ends the connection, saying why, on a state the guest does not
 * set.
 */
START_TEST(test_mirror_hostfn)
{
	static uint8_t gmem[2 * XGPUIF_PAGE_SIZE]
		__attribute__((aligned(XGPUIF_PAGE_SIZE)));
	static uint8_t bmem[2 * XGPUIF_PAGE_SIZE]
		__attribute__((aligned(XGPUIF_PAGE_SIZE)));
	static struct xgpuif_hostfn_slot g[NHF], b[NHF];
	struct xgpu_mirror *gm, *bm;
	struct xgpu_tls *st, *ct;
	struct side sv, cl;

	memset(g, 0, sizeof(g));
	memset(b, 0, sizeof(b));
	psk_pair(&sv, &cl, &st, &ct);
	gm = mirror_on(cl.c, true, gmem, g);
	bm = mirror_on(sv.c, false, bmem, b);

	b[1].fnid = 7;
	b[1].status = 3;
	b[1].nt_type = 2;
	b[1].nt_info = 99;
	b[1].state = XGPUIF_HF_DUE;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(bm, 1), 0);
	ck_assert(slot_reads(&g[1], XGPUIF_HF_DUE, 5000));
	ck_assert_uint_eq(g[1].fnid, 7);
	ck_assert_int_eq(g[1].status, 3);
	ck_assert_uint_eq(g[1].nt_type, 2);
	ck_assert_uint_eq(g[1].nt_info, 99);

	g[1].state = XGPUIF_HF_DONE;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(gm, 1), 0);
	ck_assert(slot_reads(&b[1], XGPUIF_HF_DONE, 5000));
	b[1].state = XGPUIF_HF_FREE;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(bm, 1), 0);
	ck_assert(slot_reads(&g[1], XGPUIF_HF_FREE, 5000));

	/* DONE for slot 2, which the backend has FREE: dropped */
	dropped_out_of_turn(gm, g, b, XGPUIF_HF_DONE);

	/* a host function's block of managed memory (slot 3 is DUE): the
	 * guest's FETCH reaches the backend with the block's fields; the
	 * backend answers DUE after the block's bytes (FILL), which land
	 * in the guest's data area, with mc_status */
	b[3].state = XGPUIF_HF_DUE;
	g[3].mc_dptr = 0x7e0000040000ull;
	g[3].mc_off = 512;
	g[3].mc_len = 256;
	g[3].mc_region = XGPUIF_REGION_DATA;
	g[3].state = XGPUIF_HF_FETCH;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(gm, 3), 0);
	ck_assert(slot_reads(&b[3], XGPUIF_HF_FETCH, 5000));
	ck_assert_uint_eq(b[3].mc_dptr, 0x7e0000040000ull);
	ck_assert_uint_eq(b[3].mc_off, 512);
	ck_assert_uint_eq(b[3].mc_len, 256);
	ck_assert_uint_eq(b[3].mc_region, XGPUIF_REGION_DATA);
	memset(bmem + XGPUIF_PAGE_SIZE + 512, 0x6b, 256);
	b[3].mc_status = 5;
	b[3].state = XGPUIF_HF_DUE;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship_data(bm, 3, 512, 256), 0);
	ck_assert(slot_reads(&g[3], XGPUIF_HF_DUE, 5000));
	ck_assert_int_eq(g[3].mc_status, 5);
	ck_assert_uint_eq(gmem[XGPUIF_PAGE_SIZE + 512], 0x6b);
	ck_assert_uint_eq(gmem[XGPUIF_PAGE_SIZE + 767], 0x6b);
	ck_assert_uint_eq(gmem[XGPUIF_PAGE_SIZE + 768], 0);
	/* the guest's FLUSH: its bytes (DATA) first, then the slot */
	memset(gmem + XGPUIF_PAGE_SIZE + 1024, 0x3c, 128);
	g[3].mc_off = 1024;
	g[3].mc_len = 128;
	g[3].state = XGPUIF_HF_FLUSH;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship_data(gm, 3, 1024, 128), 0);
	ck_assert(slot_reads(&b[3], XGPUIF_HF_FLUSH, 5000));
	ck_assert_uint_eq(bmem[XGPUIF_PAGE_SIZE + 1024], 0x3c);
	ck_assert_uint_eq(bmem[XGPUIF_PAGE_SIZE + 1151], 0x3c);
	/* a FETCH for a slot the backend does not have DUE is dropped */
	dropped_out_of_turn(gm, g, b, XGPUIF_HF_FETCH);
	/* bytes past the data area are not sent */
	ck_assert_int_eq(xgpu_mirror_hostfn_ship_data(bm, 3,
						      XGPUIF_PAGE_SIZE - 8,
						      16), -EINVAL);

	/* no slot past the area */
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(gm, NHF), -EINVAL);

	/* a guest that says DUE: the connection ends, with the reason */
	g[0].state = XGPUIF_HF_DUE;
	ck_assert_int_eq(xgpu_mirror_hostfn_ship(gm, 0), 0);
	xgpu_mirror_wait_gone(bm);
	ck_has(xgpu_mirror_why(bm), "state the guest does not set");
	xgpu_mirror_wait_gone(gm);
	xgpu_mirror_stop(gm);
	xgpu_mirror_stop(bm);
	xgpu_tls_free(ct);
	xgpu_tls_free(st);
}
END_TEST

static Suite *tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("tls");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_psk_ok);
	tcase_add_test(tc, test_psk_wrong_key);
	tcase_add_test(tc, test_psk_unknown_identity);
	tcase_add_test(tc, test_psk_client_choice);
	tcase_add_test(tc, test_many_at_once);
	tcase_add_test(tc, test_key_file_mode);
	tcase_add_test(tc, test_key_file_errors);
	tcase_add_test(tc, test_opts_errors);
	tcase_add_test(tc, test_cert_ok);
	tcase_add_test(tc, test_cert_other_ca);
	tcase_add_test(tc, test_cert_wrong_name);
	tcase_add_test(tc, test_cert_files);
	tcase_add_test(tc, test_no_credentials_refused);
	tcase_add_test(tc, test_mode_mismatch);
	tcase_add_test(tc, test_garbage_client);
	tcase_add_test(tc, test_stalled_peer);
	tcase_add_test(tc, test_peer_closes);
	tcase_add_test(tc, test_poll);
	tcase_add_test(tc, test_shutdown_unblocks);
	tcase_add_test(tc, test_mirror_hostfn);
	suite_add_tcase(s, tc);

	/* 512 MiB through TLS, on a busy machine under sanitizers */
	tc = tcase_create("duplex");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_full_duplex);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(tls_suite(), true);
}
