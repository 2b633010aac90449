/* SPDX-License-Identifier: MIT */
/*
 * xgpu_tls_int.h: what the two halves of the TLS streams share:
 * xgpu_tls.c (configurations: key and certificate files, OpenSSL
 * contexts, the handshake callbacks) and xgpu_tls_conn.c (connections:
 * the socket BIO, handshakes, reading and writing).  Not installed.
 */
#ifndef XGPU_TLS_INT_H
#define XGPU_TLS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

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
	/* bytes read from the socket and not yet given to a reader (as of
	 * the last SSL call): xgpu_conn_buffered without the lock */
	atomic_bool buffered;
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

/* err: "<what went wrong>", printf-style, at most errlen bytes */
void tls_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* OpenSSL's reason for its last error, in buf */
const char *tls_reason(char *buf, size_t len);
/* in (inlen bytes) with anything unprintable replaced, in out */
void tls_printable(char *out, size_t outlen, const void *in, size_t inlen);
/* one reference to t dropped (the last frees it) */
void tls_put(struct xgpu_tls *t);

#endif /* XGPU_TLS_INT_H */
