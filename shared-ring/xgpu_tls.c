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

#include "xgpu_tls_int.h"

/* ---- errors -------------------------------------------------------------- */

void tls_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* OpenSSL's reason for the first error queued (then the queue is empty) */
const char *tls_reason(char *buf, size_t len)
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
void tls_printable(char *out, size_t outlen, const void *in, size_t inlen)
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
		tls_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		tls_seterr(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		tls_seterr(err, errlen, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (secret && (st.st_mode & 077)) {
		tls_seterr(err, errlen,
		       "%s: mode %04o lets group or others at a secret key; "
		       "refused (chmod 600 it)", path,
		       (unsigned int)(st.st_mode & 07777));
		close(fd);
		return NULL;
	}
	if (st.st_size > XGPU_TLS_FILE_MAX) {
		tls_seterr(err, errlen, "%s: too big (%lld bytes, at most %d)",
			   path, (long long)st.st_size, XGPU_TLS_FILE_MAX);
		close(fd);
		return NULL;
	}
	buf = malloc(XGPU_TLS_FILE_MAX + 1);
	if (!buf) {
		tls_seterr(err, errlen, "%s: out of memory", path);
		close(fd);
		return NULL;
	}
	while (len < XGPU_TLS_FILE_MAX) {
		n = read(fd, buf + len, XGPU_TLS_FILE_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tls_seterr(err, errlen, "%s: %s", path,
				   strerror(errno));
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
		tls_seterr(err, errlen,
			   "%s:%u: more than 'IDENTITY HEXKEY' on the line",
			   path, line);
		return -1;
	}
	if (idlen > XGPU_TLS_ID_MAX) {
		tls_seterr(err, errlen,
			   "%s:%u: identity of %zu bytes, at most %d", path,
			   line, idlen, XGPU_TLS_ID_MAX);
		return -1;
	}
	for (size_t i = 0; i < idlen; i++) {
		unsigned char ch = (unsigned char)id[i];

		if (ch <= 0x20 || ch >= 0x7f) {
			tls_seterr(err, errlen,
				   "%s:%u: the identity has a byte "
				   "that is not printable ASCII (%#x)", path,
				   line, ch);
			return -1;
		}
	}
	memcpy(k->id, id, idlen);
	k->id[idlen] = '\0';
	k->idlen = idlen;
	k->line = line;
	if (!hexlen) {
		tls_seterr(err, errlen, "%s:%u: no key after identity '%s' "
		       "(lines are 'IDENTITY HEXKEY')", path, line, k->id);
		return -1;
	}
	for (size_t i = 0; i < hexlen; i++)
		if (hexval(hex[i]) < 0) {
			tls_seterr(err, errlen, "%s:%u: the key of '%s' has a "
				   "character that is not a hex digit "
				   "(column %zu)", path, line, k->id,
				   (size_t)(hex - start) + i + 1);
			return -1;
		}
	if (hexlen % 2) {
		tls_seterr(err, errlen,
			   "%s:%u: the key of '%s' has an odd number "
			   "of hex digits (%zu)", path, line, k->id, hexlen);
		return -1;
	}
	if (hexlen / 2 < XGPU_TLS_KEY_MIN || hexlen / 2 > XGPU_TLS_KEY_MAX) {
		tls_seterr(err, errlen, "%s:%u: the key of '%s' has %zu bytes; "
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
		tls_seterr(err, errlen, "%s: a NUL byte in the file", path);
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
				tls_seterr(err, errlen, "%s: out of memory",
					   path);
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
				tls_seterr(err, errlen, "%s:%u: identity '%s' "
				       "again (first on line %u)", path, line,
				       keys[n].id, keys[i].line);
				goto fail;
			}
		n++;
	}
	if (!n) {
		tls_seterr(err, errlen, "%s: no keys (lines 'IDENTITY HEXKEY')",
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
	tls_printable(c->bad_id, sizeof(c->bad_id), id, idlen);
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

void tls_put(struct xgpu_tls *t)
{
	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	SSL_CTX_free(t->ctx);
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

/* err: "PATH: WHAT (OpenSSL's reason)" */
static void pem_fail(char *err, size_t errlen, const char *path,
		     const char *what)
{
	char why[160];

	tls_seterr(err, errlen, "%s: %s (%s)", path, what,
		   tls_reason(why, sizeof(why)));
}

static bool load_cert(struct xgpu_tls *t, const char *path, char *err,
		      size_t errlen)
{
	struct pem_file f;
	X509 *x;
	bool ok = false;

	if (!pem_open(&f, path, false, err, errlen))
		return false;
	x = f.b ? PEM_read_bio_X509(f.b, NULL, no_passphrase, NULL) : NULL;
	if (!x) {
		pem_fail(err, errlen, path, "no PEM certificate");
		goto out;
	}
	if (!SSL_CTX_use_certificate(t->ctx, x)) {
		pem_fail(err, errlen, path, "certificate refused");
		X509_free(x);
		goto out;
	}
	X509_free(x);
	/* the rest of the file: the chain up to the CA */
	while ((x = PEM_read_bio_X509(f.b, NULL, no_passphrase, NULL))) {
		if (!SSL_CTX_add0_chain_cert(t->ctx, x)) {
			pem_fail(err, errlen, path, "chain certificate refused");
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
	struct pem_file f;
	EVP_PKEY *k;
	bool ok = false;

	if (!pem_open(&f, path, true, err, errlen))
		return false;
	k = f.b ? PEM_read_bio_PrivateKey(f.b, NULL, no_passphrase, NULL) :
		NULL;
	if (!k) {
		pem_fail(err, errlen, path,
			 "no PEM private key, or an encrypted one");
		goto out;
	}
	if (!X509_check_private_key(SSL_CTX_get0_certificate(t->ctx), k)) {
		tls_seterr(err, errlen, "%s: not the key of the certificate %s",
		       path, cert);
		goto out;
	}
	if (!SSL_CTX_use_PrivateKey(t->ctx, k)) {
		pem_fail(err, errlen, path, "private key refused");
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
	struct pem_file f;
	unsigned int n = 0;
	bool ok = false;
	X509 *x;

	if (!pem_open(&f, path, false, err, errlen))
		return false;
	while (f.b && (x = PEM_read_bio_X509(f.b, NULL, no_passphrase, NULL))) {
		if (!X509_STORE_add_cert(store, x) ||
		    (t->server && !SSL_CTX_add_client_CA(t->ctx, x))) {
			pem_fail(err, errlen, path, "CA certificate refused");
			X509_free(x);
			goto out;
		}
		X509_free(x);
		n++;
	}
	if (!n) {
		pem_fail(err, errlen, path, "no PEM certificate");
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

	tls_seterr(err, errlen, "no error");
	if (!o || (!o->psk_file && !certs)) {
		tls_seterr(err, errlen, "no credentials: give a key file "
		       "(psk_file), or cert, key and ca; there is no "
		       "unauthenticated mode");
		return NULL;
	}
	if (o->psk_file && certs) {
		tls_seterr(err, errlen,
			   "a key file (psk_file) and certificates "
			   "(cert, key, ca) exclude each other");
		return NULL;
	}
	if (certs && (!o->cert || !o->key || !o->ca)) {
		tls_seterr(err, errlen,
			   "certificate mode needs cert, key and ca "
			   "(missing:%s%s%s)", o->cert ? "" : " cert",
			   o->key ? "" : " key", o->ca ? "" : " ca");
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		tls_seterr(err, errlen, "out of memory");
		return NULL;
	}
	atomic_init(&t->refs, 1);
	t->server = server;
	t->psk = o->psk_file != NULL;
	ERR_clear_error();
	t->ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!t->ctx) {
		tls_seterr(err, errlen, "cannot set up TLS (%s)",
		       tls_reason(why, sizeof(why)));
		goto fail;
	}
	if (!SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(t->ctx, XGPU_TLS_SUITES) ||
	    !SSL_CTX_set_num_tickets(t->ctx, 0) ||
	    !SSL_CTX_set_max_early_data(t->ctx, 0) ||
	    !SSL_CTX_set_recv_max_early_data(t->ctx, 0)) {
		tls_seterr(err, errlen, "cannot set up TLS 1.3 (%s)",
		       tls_reason(why, sizeof(why)));
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
					tls_seterr(err, errlen,
						   "%s: no line for "
						   "identity '%s'", o->psk_file,
						   o->identity);
					goto fail;
				}
			} else if (t->nkeys > 1) {
				tls_seterr(err, errlen,
					   "%s: %zu identities; say "
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
				tls_seterr(err, errlen, "out of memory");
				goto fail;
			}
		}
	}
	ERR_clear_error();
	tls_seterr(err, errlen, "no error");
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
