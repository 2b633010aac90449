// SPDX-License-Identifier: MIT
/*
 * xgpu_tls_conn.c: TLS 1.3 connections (xgpu_tls.h): the socket BIO,
 * the handshake with its error story, reading and writing.  The
 * configurations they run under are xgpu_tls.c's; how each conn drives
 * its SSL object is said there.
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

#include "xgpu_spin.h"
#include "xgpu_tls_int.h"

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

/*
 * The BIO method that reads and writes a conn's socket: one for the
 * process, made at the first connection (kept to the end, as OpenSSL's
 * own methods are)
 */
static BIO_METHOD *sock_method;
static pthread_once_t sock_method_once = PTHREAD_ONCE_INIT;

static void sock_method_make(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
				     "xgpu socket");

	if (m && BIO_meth_set_write_ex(m, bio_write) &&
	    BIO_meth_set_read_ex(m, bio_read) && BIO_meth_set_ctrl(m, bio_ctrl))
		sock_method = m;
	else
		BIO_meth_free(m);
}

static BIO_METHOD *sock_bio_method(void)
{
	pthread_once(&sock_method_once, sock_method_make);
	return sock_method;
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
		tls_seterr(err, errlen,
			   "authentication failed: unknown identity '%s'",
			   c->bad_id);
	} else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		   ERR_GET_REASON(e) == SSL_R_BINDER_DOES_NOT_VERIFY) {
		tls_seterr(err, errlen, "authentication failed: wrong key for "
		       "identity '%s'", c->peer);
	} else if (t->server && t->psk && c->hello_seen && !c->psk_offered) {
		tls_seterr(err, errlen,
			   "authentication failed: the client offered "
			   "no pre-shared key");
	} else if (t->psk && !t->server && vr != X509_V_OK) {
		tls_seterr(err, errlen,
			   "authentication failed: the server showed "
			   "a certificate instead of using the pre-shared key "
			   "(a server with certificates?)");
	} else if (vr != X509_V_OK) {
		tls_seterr(err, errlen,
			   "authentication failed: %s certificate: %s", who,
			   X509_verify_cert_error_string(vr));
	} else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		   ERR_GET_REASON(e) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
		tls_seterr(err, errlen,
			   "authentication failed: the client sent no "
			   "certificate");
	} else if (c->alert_in >= 0 && auth_alert(t, c->alert_in)) {
		tls_seterr(err, errlen,
			   "authentication failed: the %s refused our "
			   "%s (alert: %s)", who,
			   t->psk ? "key" : "certificate",
			   SSL_alert_desc_string_long(c->alert_in));
	} else if (c->alert_in >= 0) {
		tls_seterr(err, errlen,
			   "handshake failed: the %s sent alert: %s", who,
			   SSL_alert_desc_string_long(c->alert_in));
	} else if (sslerr == SSL_ERROR_SYSCALL && c->last_errno) {
		tls_seterr(err, errlen, "handshake failed: %s",
		       strerror(c->last_errno));
	} else if (c->eof || sslerr == SSL_ERROR_ZERO_RETURN ||
		   (sslerr == SSL_ERROR_SYSCALL && !e)) {
		tls_seterr(err, errlen, "handshake failed: the %s closed the "
		       "connection", who);
	} else {
		tls_seterr(err, errlen, "handshake failed: %s",
		       tls_reason(why, sizeof(why)));
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
			tls_seterr(err, errlen, "authentication failed: the "
			       "handshake did not use the pre-shared key");
			return false;
		}
		if (!t->server)
			memcpy(c->peer, t->keys[0].id, t->keys[0].idlen + 1);
		return true;
	}
	x = SSL_get0_peer_certificate(c->ssl);
	if (!x || SSL_get_verify_result(c->ssl) != X509_V_OK) {
		tls_seterr(err, errlen, "authentication failed: the %s's "
		       "certificate was not verified",
		       t->server ? "client" : "server");
		return false;
	}
	if (!cert_cn(x, c->peer, sizeof(c->peer)) && t->server) {
		tls_seterr(err, errlen, "authentication failed: the client's "
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
			tls_seterr(err, errlen, "handshake failed: poll: %s",
			       strerror(-w));
			return false;
		}
		if (!w) {
			tls_seterr(err, errlen,
				   "handshake timed out after %d ms",
				   timeout_ms);
			return false;
		}
	}
	ERR_clear_error();
	if (b != XGPU_TLS_CONFIRM) {
		tls_seterr(err, errlen, "handshake failed: the server did not "
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

	tls_seterr(err, errlen, "no error");
	if (!t || fd < 0) {
		tls_seterr(err, errlen, "handshake failed: no configuration or "
		       "socket");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		tls_seterr(err, errlen, "out of memory");
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
		tls_seterr(err, errlen, "handshake failed: socket: %s",
		       strerror(errno));
		goto fail;
	}
	/* small messages go out at once (not a TCP socket: no matter) */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	ERR_clear_error();
	c->ssl = SSL_new(t->ctx);
	b = c->ssl && sock_bio_method() ? BIO_new(sock_method) : NULL;
	if (!b) {
		tls_seterr(err, errlen, "cannot set up TLS (%s)",
		       tls_reason(why, sizeof(why)));
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
			tls_seterr(err, errlen, "server name '%s' refused (%s)",
			       t->server_name, tls_reason(why, sizeof(why)));
			goto fail;
		}
	}

	if (!hs_run(c, HS_HANDSHAKE, deadline, timeout_ms, err, errlen) ||
	    !check_peer(c, err, errlen) ||
	    !hs_run(c, t->server ? HS_SEND_OK : HS_RECV_OK, deadline,
		    timeout_ms, err, errlen))
		goto fail;
	c->established = true;
	tls_seterr(err, errlen, "no error");
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

/* a handshake on fd as the server (or the client) t must be */
static struct xgpu_conn *start(struct xgpu_tls *t, bool server, int fd,
			       int timeout_ms, char *err, size_t errlen)
{
	if (t && t->server != server) {
		tls_seterr(err, errlen, "handshake failed: a %s "
			   "configuration cannot %s",
			   server ? "client" : "server",
			   server ? "accept" : "connect");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return handshake(t, fd, timeout_ms, err, errlen);
}

struct xgpu_conn *xgpu_conn_accept(struct xgpu_tls *t, int fd, int timeout_ms,
				   char *err, size_t errlen)
{
	return start(t, true, fd, timeout_ms, err, errlen);
}

struct xgpu_conn *xgpu_conn_connect(struct xgpu_tls *t, int fd,
				    int timeout_ms, char *err, size_t errlen)
{
	return start(t, false, fd, timeout_ms, err, errlen);
}

const char *xgpu_conn_peer(const struct xgpu_conn *c)
{
	return c->peer;
}

int xgpu_conn_peer_hash(const struct xgpu_conn *c, unsigned char out[32])
{
	unsigned int n = 0;

	if (!EVP_Digest(c->peer, strlen(c->peer), out, &n, EVP_sha256(),
			NULL) || n != 32)
		return -EIO;
	return 0;
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
 * The lock is held for one SSL call, a few microseconds for the small
 * records of a synchronous call: a thread that finds it taken (the
 * reading thread and a writer meet on every message of a ping-pong) polls
 * it a while before sleeping in it.  On the GPU machine a thread woken
 * from a futex came back 13 us later, and a round trip of 64-byte
 * messages over TLS whose reader and writer were different threads took
 * 36 us against 15 us with one thread doing both (`tlsbw -p`).
 */
#define LOCK_SPIN_NS	20000

static void conn_lock(struct xgpu_conn *c)
{
	struct timespec t0, t;

	if (!pthread_mutex_trylock(&c->lock))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 16; i++)
			xgpu_cpu_relax();
		if (!pthread_mutex_trylock(&c->lock))
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
		 (t.tv_nsec - t0.tv_nsec) < LOCK_SPIN_NS);
	pthread_mutex_lock(&c->lock);
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

	conn_lock(c);
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
	atomic_store_explicit(&c->buffered, SSL_has_pending(c->ssl),
			      memory_order_release);
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

bool xgpu_conn_buffered(const struct xgpu_conn *c)
{
	return atomic_load_explicit(&c->buffered, memory_order_acquire);
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
