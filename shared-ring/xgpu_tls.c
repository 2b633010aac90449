// SPDX-License-Identifier: MIT
/*
 * xgpu_tls.c: TLS 1.3 byte streams over TCP with OpenSSL 3 (xgpu_tls.h).
 *
 * Each conn drives its SSL object non-blocking.  A mutex is held only
 * around each SSL call; a thread that must wait for the socket releases
 * it and poll()s, so that the reader and the writer of one conn never
 * block each other (both peers may write large buffers at once: each
 * side's reader keeps draining while its writer waits for room).
 *
 * The socket is read and written by a BIO of our own (recv, and send with
 * MSG_NOSIGNAL): the guest library lives in programs that did not ask
 * for SIGPIPE to be ignored, and a peer that is gone must give -EPIPE,
 * not kill the program.  (That leaves out kernel TLS, which needs
 * OpenSSL's socket BIO; this build's kernels here have no tls ULP anyway.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "xgpu_tls.h"

/* TLS 1.3 suites, in our order of preference (AES-GCM first: AES-NI);
 * both hash with SHA-256, which the pre-shared keys are bound to */
#define XGPU_TLS_SUITES "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256"
/* the biggest key, certificate or CA file read */
#define XGPU_TLS_FILE_MAX (1 << 20)
/* socket reads of several records at once */
#define XGPU_TLS_READ_BUF (64 * 1024 + 1024)

struct psk_key {
	char id[XGPU_TLS_ID_MAX + 1];
	size_t idlen;
	unsigned char key[XGPU_TLS_KEY_MAX];
	size_t keylen;
	unsigned int line;
};

struct xgpu_tls {
	SSL_CTX *ctx;
	BIO_METHOD *bio_meth;
	atomic_int refs;	/* the caller's, and one per conn */
	bool server, psk;
	struct psk_key *keys;	/* a client: the one it uses */
	size_t nkeys;
	char *server_name;
};

struct xgpu_conn {
	struct xgpu_tls *tls;
	SSL *ssl;
	int fd;
	pthread_mutex_t lock;	/* around every SSL call */
	atomic_bool down;	/* shut down, or a fatal error */
	bool established;
	/* what the BIO saw (under lock) */
	bool eof;
	int last_errno;
	/* the handshake's story, for its error message */
	int alert_in, alert_out;	/* -1: none */
	bool hello_seen, psk_offered, psk_unknown;
	char bad_id[64];
	char peer[256];
};

/* ---- errors -------------------------------------------------------------- */

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* OpenSSL's reason for the first error queued (then the queue is empty) */
static const char *ossl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_error();
	const char *r;

	if (!e) {
		snprintf(buf, len, "unknown error");
	} else if (ERR_GET_LIB(e) == ERR_LIB_SYS) {
		snprintf(buf, len, "%s", strerror(ERR_GET_REASON(e)));
	} else {
		r = ERR_reason_error_string(e);
		if (r)
			snprintf(buf, len, "%s", r);
		else
			snprintf(buf, len, "OpenSSL error %#lx", e);
	}
	ERR_clear_error();
	return buf;
}

/* an identity or name fit for a message: printable, cut short */
static void printable(char *out, size_t outlen, const void *in, size_t inlen)
{
	const unsigned char *p = in;
	size_t i, n = 0;

	for (i = 0; i < inlen && n + 4 < outlen; i++)
		out[n++] = (p[i] > 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	if (i < inlen)
		for (int k = 0; k < 3; k++)
			out[n++] = '.';
	out[n] = '\0';
}

/* ---- files --------------------------------------------------------------- */

/*
 * The whole of a file, NUL-terminated (free it with free_file).  A secret
 * one must be a regular file that group and others can neither read nor
 * write.
 */
static char *read_file(const char *path, bool secret, size_t *lenp, char *err,
		       size_t errlen)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		seterr(err, errlen, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (secret && (st.st_mode & 077)) {
		seterr(err, errlen,
		       "%s: mode %04o lets group or others at a secret key; "
		       "refused (chmod 600 it)", path,
		       (unsigned int)(st.st_mode & 07777));
		close(fd);
		return NULL;
	}
	if (st.st_size > XGPU_TLS_FILE_MAX) {
		seterr(err, errlen, "%s: too big (%lld bytes, at most %d)", path,
		       (long long)st.st_size, XGPU_TLS_FILE_MAX);
		close(fd);
		return NULL;
	}
	buf = malloc(XGPU_TLS_FILE_MAX + 1);
	if (!buf) {
		seterr(err, errlen, "%s: out of memory", path);
		close(fd);
		return NULL;
	}
	while (len < XGPU_TLS_FILE_MAX) {
		n = read(fd, buf + len, XGPU_TLS_FILE_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			seterr(err, errlen, "%s: %s", path, strerror(errno));
			OPENSSL_cleanse(buf, len);
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

static void free_file(char *buf, size_t len)
{
	if (buf) {
		OPENSSL_cleanse(buf, len);
		free(buf);
	}
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* one line "IDENTITY HEXKEY [# comment]" into k: 1, 0 blank, -1 error */
static int parse_psk_line(const char *path, unsigned int line, char *s,
			  struct psk_key *k, char *err, size_t errlen)
{
	const char *start = s;
	char *id, *hex, *end;
	size_t idlen, hexlen;

	while (is_blank(*s))
		s++;
	if (!*s || *s == '#')
		return 0;
	id = s;
	while (*s && !is_blank(*s))
		s++;
	idlen = (size_t)(s - id);
	while (is_blank(*s))
		s++;
	hex = s;
	while (*s && !is_blank(*s) && *s != '#')
		s++;
	hexlen = (size_t)(s - hex);
	end = s;
	while (is_blank(*end))
		end++;
	if (*end && *end != '#') {
		seterr(err, errlen, "%s:%u: more than 'IDENTITY HEXKEY' on the "
		       "line", path, line);
		return -1;
	}
	if (idlen > XGPU_TLS_ID_MAX) {
		seterr(err, errlen, "%s:%u: identity of %zu bytes, at most %d",
		       path, line, idlen, XGPU_TLS_ID_MAX);
		return -1;
	}
	for (size_t i = 0; i < idlen; i++) {
		unsigned char ch = (unsigned char)id[i];

		if (ch <= 0x20 || ch >= 0x7f) {
			seterr(err, errlen, "%s:%u: the identity has a byte "
			       "that is not printable ASCII (%#x)", path, line,
			       ch);
			return -1;
		}
	}
	memcpy(k->id, id, idlen);
	k->id[idlen] = '\0';
	k->idlen = idlen;
	k->line = line;
	if (!hexlen) {
		seterr(err, errlen, "%s:%u: no key after identity '%s' "
		       "(lines are 'IDENTITY HEXKEY')", path, line, k->id);
		return -1;
	}
	for (size_t i = 0; i < hexlen; i++)
		if (hexval(hex[i]) < 0) {
			seterr(err, errlen, "%s:%u: the key of '%s' has a "
			       "character that is not a hex digit (column %zu)",
			       path, line, k->id, (size_t)(hex - start) + i + 1);
			return -1;
		}
	if (hexlen % 2) {
		seterr(err, errlen, "%s:%u: the key of '%s' has an odd number "
		       "of hex digits (%zu)", path, line, k->id, hexlen);
		return -1;
	}
	if (hexlen / 2 < XGPU_TLS_KEY_MIN || hexlen / 2 > XGPU_TLS_KEY_MAX) {
		seterr(err, errlen, "%s:%u: the key of '%s' has %zu bytes; "
		       "%d to %d are needed (%d to %d hex digits)", path, line,
		       k->id, hexlen / 2, XGPU_TLS_KEY_MIN, XGPU_TLS_KEY_MAX,
		       2 * XGPU_TLS_KEY_MIN, 2 * XGPU_TLS_KEY_MAX);
		return -1;
	}
	k->keylen = hexlen / 2;
	for (size_t i = 0; i < k->keylen; i++)
		k->key[i] = (unsigned char)(hexval(hex[2 * i]) << 4 |
					    hexval(hex[2 * i + 1]));
	OPENSSL_cleanse(hex, hexlen);
	return 1;
}

static void free_keys(struct psk_key *keys, size_t n)
{
	if (keys) {
		OPENSSL_cleanse(keys, n * sizeof(*keys));
		free(keys);
	}
}

/* the keys of a file: their count, or -1 */
static long load_psk_file(const char *path, struct psk_key **out, char *err,
			  size_t errlen)
{
	struct psk_key *keys = NULL, *nk;
	size_t n = 0, cap = 0, len;
	unsigned int line = 0;
	char *buf, *s, *nl;
	int r;

	buf = read_file(path, true, &len, err, errlen);
	if (!buf)
		return -1;
	if (strlen(buf) != len) {
		seterr(err, errlen, "%s: a NUL byte in the file", path);
		goto fail;
	}
	for (s = buf; *s; s = nl) {
		line++;
		nl = strchr(s, '\n');
		if (nl)
			*nl++ = '\0';
		else
			nl = s + strlen(s);
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			nk = calloc(cap, sizeof(*nk));
			if (!nk) {
				seterr(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			if (n)
				memcpy(nk, keys, n * sizeof(*keys));
			free_keys(keys, n);
			keys = nk;
		}
		r = parse_psk_line(path, line, s, &keys[n], err, errlen);
		if (r < 0)
			goto fail;
		if (!r)
			continue;
		for (size_t i = 0; i < n; i++)
			if (keys[i].idlen == keys[n].idlen &&
			    !memcmp(keys[i].id, keys[n].id, keys[n].idlen)) {
				seterr(err, errlen, "%s:%u: identity '%s' "
				       "again (first on line %u)", path, line,
				       keys[n].id, keys[i].line);
				goto fail;
			}
		n++;
	}
	if (!n) {
		seterr(err, errlen, "%s: no keys (lines 'IDENTITY HEXKEY')",
		       path);
		goto fail;
	}
	free_file(buf, len);
	*out = keys;
	return (long)n;
fail:
	free_file(buf, len);
	free_keys(keys, cap);
	return -1;
}

/* ---- our socket BIO ------------------------------------------------------ */

static int bio_write(BIO *b, const char *buf, size_t len, size_t *done)
{
	struct xgpu_conn *c = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	do
		n = send(c->fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n >= 0) {
		*done = (size_t)n;
		return 1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		BIO_set_retry_write(b);
	else
		c->last_errno = errno;
	return 0;
}

static int bio_read(BIO *b, char *buf, size_t len, size_t *done)
{
	struct xgpu_conn *c = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	do
		n = recv(c->fd, buf, len, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		*done = (size_t)n;
		return 1;
	}
	if (n == 0)
		c->eof = true;
	else if (errno == EAGAIN || errno == EWOULDBLOCK)
		BIO_set_retry_read(b);
	else
		c->last_errno = errno;
	return 0;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct xgpu_conn *c = BIO_get_data(b);

	(void)num;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_EOF:
		return c->eof;
	case BIO_C_GET_FD:
		if (ptr)
			*(int *)ptr = c->fd;
		return c->fd;
	case BIO_CTRL_GET_CLOSE:
		return BIO_NOCLOSE;
	case BIO_CTRL_SET_CLOSE:
		return 1;
	default:
		return 0;
	}
}

static BIO_METHOD *new_bio_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
				     "xgpu socket");

	if (m && BIO_meth_set_write_ex(m, bio_write) &&
	    BIO_meth_set_read_ex(m, bio_read) && BIO_meth_set_ctrl(m, bio_ctrl))
		return m;
	BIO_meth_free(m);
	return NULL;
}

/* ---- handshake callbacks ------------------------------------------------- */

/* a session that carries an external pre-shared key for TLS 1.3 */
static SSL_SESSION *psk_session(SSL *ssl, const struct psk_key *k)
{
	static const unsigned char aes128gcm[2] = { 0x13, 0x01 };
	const SSL_CIPHER *ciph = SSL_CIPHER_find(ssl, aes128gcm);
	SSL_SESSION *s = SSL_SESSION_new();

	if (!s || !ciph || !SSL_SESSION_set1_master_key(s, k->key, k->keylen) ||
	    !SSL_SESSION_set_cipher(s, ciph) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

/*
 * server: the key of the identity the client names.  An unknown identity
 * gets a random key, so that its handshake fails as a wrong key's does:
 * the client cannot tell which identities exist.
 */
static int psk_find_cb(SSL *ssl, const unsigned char *id, size_t idlen,
		       SSL_SESSION **sess)
{
	struct xgpu_conn *c = SSL_get_app_data(ssl);
	struct xgpu_tls *t = c->tls;
	struct psk_key junk = { .keylen = XGPU_TLS_KEY_MIN };

	*sess = NULL;
	c->psk_offered = true;
	for (size_t i = 0; i < t->nkeys; i++) {
		const struct psk_key *k = &t->keys[i];

		if (k->idlen != idlen || memcmp(k->id, id, idlen))
			continue;
		*sess = psk_session(ssl, k);
		if (!*sess)
			return 0;
		memcpy(c->peer, k->id, k->idlen + 1);
		c->psk_unknown = false;
		return 1;
	}
	c->psk_unknown = true;
	printable(c->bad_id, sizeof(c->bad_id), id, idlen);
	if (RAND_bytes(junk.key, (int)junk.keylen) != 1)
		return 0;
	*sess = psk_session(ssl, &junk);
	OPENSSL_cleanse(&junk, sizeof(junk));
	return *sess != NULL;
}

/* client: our one key */
static int psk_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id,
		      size_t *idlen, SSL_SESSION **sess)
{
	struct xgpu_conn *c = SSL_get_app_data(ssl);
	const struct psk_key *k = &c->tls->keys[0];

	*sess = NULL;
	/* after a HelloRetryRequest for a suite of another hash: no key */
	if (md && EVP_MD_get_type(md) != NID_sha256)
		return 1;
	*sess = psk_session(ssl, k);
	if (!*sess)
		return 0;
	*id = (const unsigned char *)k->id;
	*idlen = k->idlen;
	return 1;
}

/* server with keys: a ClientHello that offers none ends it at once */
static int hello_cb(SSL *ssl, int *al, void *arg)
{
	struct xgpu_conn *c = SSL_get_app_data(ssl);
	const unsigned char *ext;
	size_t extlen;

	(void)arg;
	c->hello_seen = true;
	if (c->tls->psk &&
	    !SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_psk, &ext, &extlen)) {
		*al = SSL_AD_HANDSHAKE_FAILURE;
		return SSL_CLIENT_HELLO_ERROR;
	}
	return SSL_CLIENT_HELLO_SUCCESS;
}

static void info_cb(const SSL *ssl, int where, int ret)
{
	struct xgpu_conn *c = SSL_get_app_data(ssl);

	if (!c)
		return;
	if (where & SSL_CB_READ_ALERT)
		c->alert_in = ret & 0xff;
	else if (where & SSL_CB_WRITE_ALERT)
		c->alert_out = ret & 0xff;
}

/* PEM pass phrases: none (an encrypted key is refused, never asked for) */
static int no_passphrase(char *buf, int size, int rw, void *u)
{
	(void)buf;
	(void)size;
	(void)rw;
	(void)u;
	return -1;
}

/* ---- configurations ------------------------------------------------------ */

static void tls_put(struct xgpu_tls *t)
{
	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	SSL_CTX_free(t->ctx);
	BIO_meth_free(t->bio_meth);
	free_keys(t->keys, t->nkeys);
	free(t->server_name);
	free(t);
}

void xgpu_tls_free(struct xgpu_tls *t)
{
	tls_put(t);
}

/*
 * A PEM file read whole and a memory BIO over it; b is NULL if none could
 * be made (the first PEM read then fails and says why).  Close with
 * pem_close.
 */
struct pem_file {
	char *buf;
	size_t len;
	BIO *b;
};

static bool pem_open(struct pem_file *f, const char *path, bool secret,
		     char *err, size_t errlen)
{
	f->buf = read_file(path, secret, &f->len, err, errlen);
	if (!f->buf)
		return false;
	f->b = BIO_new_mem_buf(f->buf, (int)f->len);
	ERR_clear_error();
	return true;
}

static void pem_close(struct pem_file *f)
{
	BIO_free(f->b);
	free_file(f->buf, f->len);
}

static bool load_cert(struct xgpu_tls *t, const char *path, char *err,
		      size_t errlen)
{
	char why[160];
	struct pem_file f;
	X509 *x;
	bool ok = false;

	if (!pem_open(&f, path, false, err, errlen))
		return false;
	x = f.b ? PEM_read_bio_X509(f.b, NULL, no_passphrase, NULL) : NULL;
	if (!x) {
		seterr(err, errlen, "%s: no PEM certificate (%s)", path,
		       ossl_reason(why, sizeof(why)));
		goto out;
	}
	if (!SSL_CTX_use_certificate(t->ctx, x)) {
		seterr(err, errlen, "%s: certificate refused (%s)", path,
		       ossl_reason(why, sizeof(why)));
		X509_free(x);
		goto out;
	}
	X509_free(x);
	/* the rest of the file: the chain up to the CA */
	while ((x = PEM_read_bio_X509(f.b, NULL, no_passphrase, NULL))) {
		if (!SSL_CTX_add0_chain_cert(t->ctx, x)) {
			seterr(err, errlen, "%s: chain certificate refused "
			       "(%s)", path, ossl_reason(why, sizeof(why)));
			X509_free(x);
			goto out;
		}
	}
	ERR_clear_error();
	ok = true;
out:
	pem_close(&f);
	return ok;
}

static bool load_key(struct xgpu_tls *t, const char *path, const char *cert,
		     char *err, size_t errlen)
{
	char why[160];
	struct pem_file f;
	EVP_PKEY *k;
	bool ok = false;

	if (!pem_open(&f, path, true, err, errlen))
		return false;
	k = f.b ? PEM_read_bio_PrivateKey(f.b, NULL, no_passphrase, NULL) :
		NULL;
	if (!k) {
		seterr(err, errlen, "%s: no PEM private key, or an encrypted "
		       "one (%s)", path, ossl_reason(why, sizeof(why)));
		goto out;
	}
	if (!X509_check_private_key(SSL_CTX_get0_certificate(t->ctx), k)) {
		seterr(err, errlen, "%s: not the key of the certificate %s",
		       path, cert);
		goto out;
	}
	if (!SSL_CTX_use_PrivateKey(t->ctx, k)) {
		seterr(err, errlen, "%s: private key refused (%s)", path,
		       ossl_reason(why, sizeof(why)));
		goto out;
	}
	ok = true;
out:
	ERR_clear_error();
	EVP_PKEY_free(k);
	pem_close(&f);
	return ok;
}

static bool load_ca(struct xgpu_tls *t, const char *path, char *err,
		    size_t errlen)
{
	X509_STORE *store = SSL_CTX_get_cert_store(t->ctx);
	char why[160];
	struct pem_file f;
	unsigned int n = 0;
	bool ok = false;
	X509 *x;

	if (!pem_open(&f, path, false, err, errlen))
		return false;
	while (f.b && (x = PEM_read_bio_X509(f.b, NULL, no_passphrase, NULL))) {
		if (!X509_STORE_add_cert(store, x) ||
		    (t->server && !SSL_CTX_add_client_CA(t->ctx, x))) {
			seterr(err, errlen, "%s: CA certificate refused (%s)",
			       path, ossl_reason(why, sizeof(why)));
			X509_free(x);
			goto out;
		}
		X509_free(x);
		n++;
	}
	if (!n) {
		seterr(err, errlen, "%s: no PEM certificate (%s)", path,
		       ossl_reason(why, sizeof(why)));
		goto out;
	}
	ok = true;
out:
	ERR_clear_error();
	pem_close(&f);
	return ok;
}

static struct xgpu_tls *tls_new(const struct xgpu_tls_opts *o, bool server,
				char *err, size_t errlen)
{
	bool certs = o && (o->cert || o->key || o->ca);
	struct xgpu_tls *t;
	char why[160];
	long n;

	seterr(err, errlen, "no error");
	if (!o || (!o->psk_file && !certs)) {
		seterr(err, errlen, "no credentials: give a key file "
		       "(psk_file), or cert, key and ca; there is no "
		       "unauthenticated mode");
		return NULL;
	}
	if (o->psk_file && certs) {
		seterr(err, errlen, "a key file (psk_file) and certificates "
		       "(cert, key, ca) exclude each other");
		return NULL;
	}
	if (certs && (!o->cert || !o->key || !o->ca)) {
		seterr(err, errlen, "certificate mode needs cert, key and ca "
		       "(missing:%s%s%s)", o->cert ? "" : " cert",
		       o->key ? "" : " key", o->ca ? "" : " ca");
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	atomic_init(&t->refs, 1);
	t->server = server;
	t->psk = o->psk_file != NULL;
	ERR_clear_error();
	t->ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	t->bio_meth = new_bio_method();
	if (!t->ctx || !t->bio_meth) {
		seterr(err, errlen, "cannot set up TLS (%s)",
		       ossl_reason(why, sizeof(why)));
		goto fail;
	}
	if (!SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(t->ctx, XGPU_TLS_SUITES) ||
	    !SSL_CTX_set_num_tickets(t->ctx, 0) ||
	    !SSL_CTX_set_max_early_data(t->ctx, 0) ||
	    !SSL_CTX_set_recv_max_early_data(t->ctx, 0)) {
		seterr(err, errlen, "cannot set up TLS 1.3 (%s)",
		       ossl_reason(why, sizeof(why)));
		goto fail;
	}
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
			    SSL_OP_NO_COMPRESSION |
			    SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_clear_options(t->ctx, SSL_OP_ENABLE_KTLS);
	SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_clear_mode(t->ctx, SSL_MODE_AUTO_RETRY);
	SSL_CTX_set_read_ahead(t->ctx, 1);
	SSL_CTX_set_default_read_buffer_len(t->ctx, XGPU_TLS_READ_BUF);
	SSL_CTX_set_default_passwd_cb(t->ctx, no_passphrase);
	SSL_CTX_set_info_callback(t->ctx, info_cb);
	if (server)
		SSL_CTX_set_client_hello_cb(t->ctx, hello_cb, NULL);

	if (t->psk) {
		n = load_psk_file(o->psk_file, &t->keys, err, errlen);
		if (n < 0)
			goto fail;
		t->nkeys = (size_t)n;
		if (!server) {
			size_t pick = 0;

			if (o->identity) {
				for (pick = 0; pick < t->nkeys; pick++)
					if (!strcmp(t->keys[pick].id,
						    o->identity))
						break;
				if (pick == t->nkeys) {
					seterr(err, errlen, "%s: no line for "
					       "identity '%s'", o->psk_file,
					       o->identity);
					goto fail;
				}
			} else if (t->nkeys > 1) {
				seterr(err, errlen, "%s: %zu identities; say "
				       "which one to use (identity)",
				       o->psk_file, t->nkeys);
				goto fail;
			}
			if (pick)
				t->keys[0] = t->keys[pick];
			OPENSSL_cleanse(t->keys + 1,
					(t->nkeys - 1) * sizeof(*t->keys));
			t->nkeys = 1;
			SSL_CTX_set_psk_use_session_callback(t->ctx,
							     psk_use_cb);
			/* a server that shows a certificate instead of
			 * using the key: refused, there being no CA */
			SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
		} else {
			SSL_CTX_set_psk_find_session_callback(t->ctx,
							      psk_find_cb);
			SSL_CTX_set_verify(t->ctx, SSL_VERIFY_NONE, NULL);
		}
	} else {
		if (!load_cert(t, o->cert, err, errlen) ||
		    !load_key(t, o->key, o->cert, err, errlen) ||
		    !load_ca(t, o->ca, err, errlen))
			goto fail;
		SSL_CTX_set_verify(t->ctx, server ? SSL_VERIFY_PEER |
				   SSL_VERIFY_FAIL_IF_NO_PEER_CERT :
				   SSL_VERIFY_PEER, NULL);
		if (!server && o->server_name) {
			t->server_name = strdup(o->server_name);
			if (!t->server_name) {
				seterr(err, errlen, "out of memory");
				goto fail;
			}
		}
	}
	ERR_clear_error();
	seterr(err, errlen, "no error");
	return t;
fail:
	ERR_clear_error();
	tls_put(t);
	return NULL;
}

struct xgpu_tls *xgpu_tls_server(const struct xgpu_tls_opts *o, char *err,
				 size_t errlen)
{
	return tls_new(o, true, err, errlen);
}

struct xgpu_tls *xgpu_tls_client(const struct xgpu_tls_opts *o, char *err,
				 size_t errlen)
{
	return tls_new(o, false, err, errlen);
}

/* ---- connections --------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* milliseconds left before deadline (-1: none) for poll() */
static int left_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* wait for ev on fd: 1 ready, 0 timeout, -errno */
static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 1 : -errno;
	return n > 0;
}

/* the subject CN of a certificate: false if none, several, or unfit */
static bool cert_cn(X509 *x, char *out, size_t outlen)
{
	X509_NAME *name = X509_get_subject_name(x);
	unsigned char *u = NULL;
	int i, len;
	bool ok;

	out[0] = '\0';
	i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
	if (i < 0 || X509_NAME_get_index_by_NID(name, NID_commonName, i) >= 0)
		return false;
	len = ASN1_STRING_to_UTF8(&u, X509_NAME_ENTRY_get_data(
					  X509_NAME_get_entry(name, i)));
	ok = len > 0 && (size_t)len < outlen;
	for (int k = 0; ok && k < len; k++)
		if (u[k] < 0x20 || u[k] == 0x7f)
			ok = false;
	if (ok) {
		memcpy(out, u, (size_t)len);
		out[len] = '\0';
	}
	OPENSSL_free(u);
	return ok;
}

static bool auth_alert(const struct xgpu_tls *t, int a)
{
	/* what OpenSSL's server answers a binder made with another key */
	if (t->psk && !t->server && a == SSL_AD_ILLEGAL_PARAMETER)
		return true;
	switch (a) {
	case SSL3_AD_HANDSHAKE_FAILURE:
	case SSL3_AD_BAD_CERTIFICATE:
	case SSL3_AD_UNSUPPORTED_CERTIFICATE:
	case SSL3_AD_CERTIFICATE_REVOKED:
	case SSL3_AD_CERTIFICATE_EXPIRED:
	case SSL3_AD_CERTIFICATE_UNKNOWN:
	case TLS1_AD_UNKNOWN_CA:
	case TLS1_AD_ACCESS_DENIED:
	case TLS1_AD_DECRYPT_ERROR:
	case TLS1_AD_UNKNOWN_PSK_IDENTITY:
	case TLS13_AD_CERTIFICATE_REQUIRED:
		return true;
	default:
		return false;
	}
}

/* the error of a handshake that failed (OpenSSL's queue, then empty) */
static void handshake_err(struct xgpu_conn *c, int sslerr, char *err,
			  size_t errlen)
{
	const struct xgpu_tls *t = c->tls;
	const char *who = t->server ? "client" : "server";
	unsigned long e = ERR_peek_error();
	long vr = SSL_get_verify_result(c->ssl);
	char why[160];

	if (t->server && c->psk_unknown) {
		seterr(err, errlen, "authentication failed: unknown identity "
		       "'%s'", c->bad_id);
	} else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		   ERR_GET_REASON(e) == SSL_R_BINDER_DOES_NOT_VERIFY) {
		seterr(err, errlen, "authentication failed: wrong key for "
		       "identity '%s'", c->peer);
	} else if (t->server && t->psk && c->hello_seen && !c->psk_offered) {
		seterr(err, errlen, "authentication failed: the client offered "
		       "no pre-shared key");
	} else if (t->psk && !t->server && vr != X509_V_OK) {
		seterr(err, errlen, "authentication failed: the server showed "
		       "a certificate instead of using the pre-shared key "
		       "(a server with certificates?)");
	} else if (vr != X509_V_OK) {
		seterr(err, errlen, "authentication failed: %s certificate: "
		       "%s", who, X509_verify_cert_error_string(vr));
	} else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		   ERR_GET_REASON(e) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
		seterr(err, errlen, "authentication failed: the client sent no "
		       "certificate");
	} else if (c->alert_in >= 0 && auth_alert(t, c->alert_in)) {
		seterr(err, errlen, "authentication failed: the %s refused our "
		       "%s (alert: %s)", who, t->psk ? "key" : "certificate",
		       SSL_alert_desc_string_long(c->alert_in));
	} else if (c->alert_in >= 0) {
		seterr(err, errlen, "handshake failed: the %s sent alert: %s",
		       who, SSL_alert_desc_string_long(c->alert_in));
	} else if (sslerr == SSL_ERROR_SYSCALL && c->last_errno) {
		seterr(err, errlen, "handshake failed: %s",
		       strerror(c->last_errno));
	} else if (c->eof || sslerr == SSL_ERROR_ZERO_RETURN ||
		   (sslerr == SSL_ERROR_SYSCALL && !e)) {
		seterr(err, errlen, "handshake failed: the %s closed the "
		       "connection", who);
	} else {
		seterr(err, errlen, "handshake failed: %s",
		       ossl_reason(why, sizeof(why)));
	}
	ERR_clear_error();
}

/* after the handshake: what was proven, and who the peer is */
static bool check_peer(struct xgpu_conn *c, char *err, size_t errlen)
{
	const struct xgpu_tls *t = c->tls;
	X509 *x;

	if (t->psk) {
		if (!SSL_session_reused(c->ssl)) {
			seterr(err, errlen, "authentication failed: the "
			       "handshake did not use the pre-shared key");
			return false;
		}
		if (!t->server)
			memcpy(c->peer, t->keys[0].id, t->keys[0].idlen + 1);
		return true;
	}
	x = SSL_get0_peer_certificate(c->ssl);
	if (!x || SSL_get_verify_result(c->ssl) != X509_V_OK) {
		seterr(err, errlen, "authentication failed: the %s's "
		       "certificate was not verified",
		       t->server ? "client" : "server");
		return false;
	}
	if (!cert_cn(x, c->peer, sizeof(c->peer)) && t->server) {
		seterr(err, errlen, "authentication failed: the client's "
		       "certificate has no single printable subject CN");
		return false;
	}
	return true;
}

/*
 * The steps of a handshake: TLS's, then the server's byte that confirms it
 * accepted the client.  (In TLS 1.3 the client is done before the server
 * has checked its certificate; the byte lets a refused client learn it
 * in xgpu_conn_connect rather than at its first read.)  false: failed,
 * the reason in err.
 */
enum hs_op { HS_HANDSHAKE, HS_SEND_OK, HS_RECV_OK };

#define XGPU_TLS_CONFIRM 0x01

static bool hs_run(struct xgpu_conn *c, enum hs_op op, int64_t deadline,
		   int timeout_ms, char *err, size_t errlen)
{
	unsigned char b = XGPU_TLS_CONFIRM;
	size_t n;
	int r, e, w;

	for (;;) {
		ERR_clear_error();
		c->last_errno = 0;
		switch (op) {
		case HS_HANDSHAKE:
			r = c->tls->server ? SSL_accept(c->ssl) :
					     SSL_connect(c->ssl);
			break;
		case HS_SEND_OK:
			r = SSL_write_ex(c->ssl, &b, 1, &n);
			break;
		default:
			b = 0;
			r = SSL_read_ex(c->ssl, &b, 1, &n);
			break;
		}
		if (r == 1)
			break;
		e = SSL_get_error(c->ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			handshake_err(c, e, err, errlen);
			return false;
		}
		w = wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
			    left_ms(deadline));
		if (w < 0) {
			seterr(err, errlen, "handshake failed: poll: %s",
			       strerror(-w));
			return false;
		}
		if (!w) {
			seterr(err, errlen, "handshake timed out after %d ms",
			       timeout_ms);
			return false;
		}
	}
	ERR_clear_error();
	if (b != XGPU_TLS_CONFIRM) {
		seterr(err, errlen, "handshake failed: the server did not "
		       "confirm it (%#x)", b);
		return false;
	}
	return true;
}

static struct xgpu_conn *handshake(struct xgpu_tls *t, int fd, int timeout_ms,
				   char *err, size_t errlen)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct xgpu_conn *c;
	struct in6_addr a6;
	struct in_addr a4;
	char why[160];
	int one = 1, fl, r;
	BIO *b;

	seterr(err, errlen, "no error");
	if (!t || fd < 0) {
		seterr(err, errlen, "handshake failed: no configuration or "
		       "socket");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		seterr(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	atomic_fetch_add(&t->refs, 1);
	c->tls = t;
	c->fd = fd;
	c->alert_in = c->alert_out = -1;
	pthread_mutex_init(&c->lock, NULL);
	atomic_init(&c->down, false);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		seterr(err, errlen, "handshake failed: socket: %s",
		       strerror(errno));
		goto fail;
	}
	/* small messages go out at once (not a TCP socket: no matter) */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	ERR_clear_error();
	c->ssl = SSL_new(t->ctx);
	b = c->ssl ? BIO_new(t->bio_meth) : NULL;
	if (!b) {
		seterr(err, errlen, "cannot set up TLS (%s)",
		       ossl_reason(why, sizeof(why)));
		goto fail;
	}
	BIO_set_data(b, c);
	BIO_set_init(b, 1);
	SSL_set_bio(c->ssl, b, b);
	SSL_set_app_data(c->ssl, c);
	if (t->server_name) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);

		if (inet_pton(AF_INET, t->server_name, &a4) == 1 ||
		    inet_pton(AF_INET6, t->server_name, &a6) == 1) {
			r = X509_VERIFY_PARAM_set1_ip_asc(vp, t->server_name);
		} else {
			SSL_set_hostflags(c->ssl,
					  X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
			r = SSL_set1_host(c->ssl, t->server_name) &&
			    SSL_set_tlsext_host_name(c->ssl, t->server_name);
		}
		if (!r) {
			seterr(err, errlen, "server name '%s' refused (%s)",
			       t->server_name, ossl_reason(why, sizeof(why)));
			goto fail;
		}
	}

	if (!hs_run(c, HS_HANDSHAKE, deadline, timeout_ms, err, errlen) ||
	    !check_peer(c, err, errlen) ||
	    !hs_run(c, t->server ? HS_SEND_OK : HS_RECV_OK, deadline,
		    timeout_ms, err, errlen))
		goto fail;
	c->established = true;
	seterr(err, errlen, "no error");
	return c;
fail:
	ERR_clear_error();
	SSL_free(c->ssl);
	close(fd);
	pthread_mutex_destroy(&c->lock);
	tls_put(t);
	OPENSSL_cleanse(c, sizeof(*c));
	free(c);
	return NULL;
}

struct xgpu_conn *xgpu_conn_accept(struct xgpu_tls *t, int fd, int timeout_ms,
				   char *err, size_t errlen)
{
	if (t && !t->server) {
		seterr(err, errlen, "handshake failed: a client configuration "
		       "cannot accept");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return handshake(t, fd, timeout_ms, err, errlen);
}

struct xgpu_conn *xgpu_conn_connect(struct xgpu_tls *t, int fd,
				    int timeout_ms, char *err, size_t errlen)
{
	if (t && t->server) {
		seterr(err, errlen, "handshake failed: a server configuration "
		       "cannot connect");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return handshake(t, fd, timeout_ms, err, errlen);
}

const char *xgpu_conn_peer(const struct xgpu_conn *c)
{
	return c->peer;
}

int xgpu_conn_fd(const struct xgpu_conn *c)
{
	return c->fd;
}

const char *xgpu_conn_protocol(const struct xgpu_conn *c)
{
	return SSL_get_version(c->ssl);
}

const char *xgpu_conn_cipher(const struct xgpu_conn *c)
{
	return SSL_CIPHER_get_name(SSL_get_current_cipher(c->ssl));
}

/* ---- reading and writing ------------------------------------------------- */

enum io_kind { IO_READ, IO_WRITE, IO_PEEK };

/* no more I/O: the flag for the callers, and the socket shut down, which
 * wakes a thread of this side in poll() and tells the peer */
static void set_down(struct xgpu_conn *c)
{
	atomic_store(&c->down, true);
	shutdown(c->fd, SHUT_RDWR);
}

/*
 * One SSL call under the lock: 1 progress (*done bytes), 0 wait for *ev on
 * the socket, -errno.  The end of the peer's stream (close_notify) is
 * -EPIPE for reads without breaking the conn for writes (TLS 1.3 streams
 * close one way at a time); any other error breaks both.
 */
static int io_step(struct xgpu_conn *c, enum io_kind k, void *buf, size_t len,
		   size_t *done, short *ev)
{
	int r, e, eno;

	pthread_mutex_lock(&c->lock);
	ERR_clear_error();
	c->last_errno = 0;
	switch (k) {
	case IO_READ:
		r = SSL_read_ex(c->ssl, buf, len, done);
		break;
	case IO_PEEK:
		r = SSL_peek_ex(c->ssl, buf, len, done);
		break;
	default:
		r = SSL_write_ex(c->ssl, buf, len, done);
		break;
	}
	e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, r);
	eno = c->last_errno;
	ERR_clear_error();
	pthread_mutex_unlock(&c->lock);

	switch (e) {
	case SSL_ERROR_NONE:
		return 1;
	case SSL_ERROR_WANT_READ:
		*ev = POLLIN;
		return 0;
	case SSL_ERROR_WANT_WRITE:
		*ev = POLLOUT;
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		return -EPIPE;
	case SSL_ERROR_SYSCALL:
		set_down(c);
		if (!eno || eno == EPIPE || eno == ECONNRESET ||
		    eno == ENOTCONN || eno == ESHUTDOWN)
			return -EPIPE;
		return -eno;
	default:
		set_down(c);
		return -EPIPE;
	}
}

/* a reader or writer waits for the socket; 0 or -errno */
static int io_wait(struct xgpu_conn *c, enum io_kind k, short ev)
{
	/* a reader that must write, or a writer that must read (neither
	 * happens after a TLS 1.3 handshake unless the peer asks for a key
	 * update): the other thread may be the one to act on the socket,
	 * so look again soon */
	bool own = (k == IO_WRITE) == (ev == POLLOUT);
	int w = wait_fd(c->fd, ev, own ? -1 : 10);

	return w < 0 ? w : 0;
}

/* all of len bytes read into or written from buf (k); 0 or -errno */
static int io_all(struct xgpu_conn *c, enum io_kind k, char *p, size_t len)
{
	size_t done;
	short ev;
	int r;

	while (len) {
		if (atomic_load(&c->down))
			return -EPIPE;
		done = 0;
		r = io_step(c, k, p, len, &done, &ev);
		if (r < 0)
			return r;
		if (!r) {
			r = io_wait(c, k, ev);
			if (r < 0)
				return r;
			continue;
		}
		p += done;
		len -= done;
	}
	return 0;
}

int xgpu_conn_write(struct xgpu_conn *c, const void *buf, size_t len)
{
	/* io_step only reads from buf when writing */
	return io_all(c, IO_WRITE, (char *)buf, len);
}

int xgpu_conn_read(struct xgpu_conn *c, void *buf, size_t len)
{
	return io_all(c, IO_READ, buf, len);
}

int xgpu_conn_poll(struct xgpu_conn *c, int wake_fd, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct pollfd p[2];
	unsigned char byte;
	size_t done;
	short ev;
	int r, n;

	for (;;) {
		if (atomic_load(&c->down))
			return 1;
		/* application data decrypted or decryptable from what the
		 * socket already gave; or an end a read would report */
		r = io_step(c, IO_PEEK, &byte, 1, &done, &ev);
		if (r != 0)
			return 1;
		p[0] = (struct pollfd){ .fd = c->fd, .events = ev };
		p[1] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
		n = poll(p, wake_fd >= 0 ? 2 : 1, left_ms(deadline));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (wake_fd >= 0 && (p[1].revents & POLLNVAL))
			return -EBADF;
		if (wake_fd >= 0 && p[1].revents)
			return 2;
		if (n == 0)
			return 0;
		/* the socket moved: decrypt what came (a partial record
		 * waits for the rest) */
	}
}

void xgpu_conn_shutdown(struct xgpu_conn *c)
{
	if (c)
		set_down(c);
}

void xgpu_conn_close(struct xgpu_conn *c)
{
	if (!c)
		return;
	if (c->established && !atomic_load(&c->down)) {
		/* close_notify, if the socket takes it now */
		pthread_mutex_lock(&c->lock);
		ERR_clear_error();
		SSL_shutdown(c->ssl);
		ERR_clear_error();
		pthread_mutex_unlock(&c->lock);
	}
	SSL_free(c->ssl);
	close(c->fd);
	pthread_mutex_destroy(&c->lock);
	tls_put(c->tls);
	OPENSSL_cleanse(c, sizeof(*c));
	free(c);
}
