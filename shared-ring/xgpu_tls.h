/* SPDX-License-Identifier: MIT */
/*
 * xgpu_tls.h: an authenticated, encrypted byte stream over a connected TCP
 * socket, for the network transport between the guest library and
 * xen-gpubackd.  TLS 1.3 only (OpenSSL 3), authenticated either way:
 *
 *   - pre-shared keys: a file of lines "IDENTITY HEXKEY" (at least 32
 *     bytes of key, 64 hex digits; at most 64 bytes), '#' starts a
 *     comment; the server knows many identities, a client uses one;
 *   - certificates: mutual TLS; both sides present a certificate signed
 *     by the CA the other side trusts; the server's peer is the client
 *     certificate's subject CN.
 *
 * There is no unauthenticated mode: a configuration without keys or
 * certificates is refused, and so is a peer that offers neither.
 * Files holding secrets (the key file, the private key) must not be
 * accessible to group or others (mode & 077 == 0).
 *
 * Threads: one reader and one writer may use a conn at the same time
 * (the SSL object is driven non-blocking under a mutex that is released
 * while waiting for the socket).  xgpu_conn_shutdown may be called from any
 * thread at any time; xgpu_conn_close only when no other thread uses the
 * conn any more.  A struct xgpu_tls may be shared by threads that accept
 * or connect at the same time, and may be freed before its conns.
 *
 * Nothing here prints or keeps global state of its own; errors are
 * written into the caller's buffer (err, errlen: may be NULL, 0).
 * SIGPIPE is never raised: the socket is written with MSG_NOSIGNAL.
 */
#ifndef XGPU_TLS_H
#define XGPU_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct xgpu_tls;	/* one side's configuration (an SSL_CTX) */
struct xgpu_conn;	/* one authenticated connection */

struct xgpu_tls_opts {
	/* pre-shared keys: lines "IDENTITY HEXKEY" (key >= 32 bytes = 64
	 * hex digits), '#' comments; server: many lines; client: uses
	 * `identity`'s line, or the only line */
	const char *psk_file;
	/* client with PSK: which line; NULL: the file's only one */
	const char *identity;
	/* PEM: own certificate (and chain) and key (certificate mode) */
	const char *cert, *key;
	/* PEM: the CA that signs the peers (certificate mode, both sides:
	 * mutual TLS, the client must present a certificate) */
	const char *ca;
	/* client, certificate mode: the name the server's certificate must
	 * carry (NULL: don't check the name, CA still checked) */
	const char *server_name;
};

/* limits of the key file: identities, keys */
#define XGPU_TLS_ID_MAX		128
#define XGPU_TLS_KEY_MIN	32
#define XGPU_TLS_KEY_MAX	64

/*
 * A configuration: psk_file, or cert + key + ca (not both).  NULL on error,
 * with the reason (and the file, and its line) in err.
 */
struct xgpu_tls *xgpu_tls_server(const struct xgpu_tls_opts *o, char *err,
				 size_t errlen);
struct xgpu_tls *xgpu_tls_client(const struct xgpu_tls_opts *o, char *err,
				 size_t errlen);
/* drop the configuration; conns made from it stay usable */
void xgpu_tls_free(struct xgpu_tls *t);

/*
 * Handshake on a connected TCP socket, owned by the conn from then on
 * (made non-blocking, TCP_NODELAY; closed on failure), bounded by
 * timeout_ms (< 0: no bound).  NULL on failure with the reason in err:
 * "authentication failed: ..." where the peer's key or certificate was
 * refused (or ours was), "handshake failed: ..." or "handshake timed out
 * after N ms" otherwise.  After TLS's own handshake the server sends one
 * byte (0x01) that the client's connect reads: in TLS 1.3 a client is
 * done before the server has checked its certificate, and this way a
 * refused client learns it here, not at its first read.  A client that
 * names an unknown identity fails as one with a wrong key does (only the
 * server's err tells them apart).
 */
struct xgpu_conn *xgpu_conn_accept(struct xgpu_tls *t, int fd, int timeout_ms,
				   char *err, size_t errlen);
struct xgpu_conn *xgpu_conn_connect(struct xgpu_tls *t, int fd,
				    int timeout_ms, char *err, size_t errlen);

/* the peer: its PSK identity (a client: its own identity), or its
 * certificate's subject CN ("" if it has none) */
const char *xgpu_conn_peer(const struct xgpu_conn *c);
/* the SHA-256 of xgpu_conn_peer's name: 0, or -EIO */
int xgpu_conn_peer_hash(const struct xgpu_conn *c, unsigned char out[32]);
/* the socket (non-blocking; for poll only: never read or write it) */
int xgpu_conn_fd(const struct xgpu_conn *c);
/* what was negotiated: "TLSv1.3", and the cipher suite's name */
const char *xgpu_conn_protocol(const struct xgpu_conn *c);
const char *xgpu_conn_cipher(const struct xgpu_conn *c);

/* all of buf: 0, or -errno (-EPIPE: peer gone, a TLS error, or shut down) */
int xgpu_conn_write(struct xgpu_conn *c, const void *buf, size_t len);
/* exactly len bytes: 0, or -errno; -EPIPE on EOF, a TLS error, shut down */
int xgpu_conn_read(struct xgpu_conn *c, void *buf, size_t len);
/*
 * Wait until a read would make progress (application data buffered in TLS
 * or arrived on the socket, or an end or error that the read would
 * report), or wake_fd (an eventfd or pipe, -1: none) is readable, or
 * timeout_ms (< 0: none): 1 readable, 2 wake_fd, 0 timeout, -errno.
 */
int xgpu_conn_poll(struct xgpu_conn *c, int wake_fd, int timeout_ms);
/*
 * Whether bytes already read from the socket wait in TLS for a reader, as
 * of the last read or write: without the connection's lock, for the one
 * thread that reads (when false, a poll of the socket says whether a read
 * would make progress, without taking the lock from the writers).
 */
bool xgpu_conn_buffered(const struct xgpu_conn *c);
/* make blocked and later reads and writes (any thread) return -EPIPE */
void xgpu_conn_shutdown(struct xgpu_conn *c);
/* send close_notify (best effort), close the socket, free */
void xgpu_conn_close(struct xgpu_conn *c);

#endif /* XGPU_TLS_H */
