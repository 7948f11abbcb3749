/* iogp_keys.h - the user's CURVE key pair and the ZeroMQ security every
 * iogram socket uses with it (not installed). One pair per user (or per job:
 * IOGRAM_KEYS=DIR): whoever binds is a CURVE server that admits only clients
 * holding the same pair (ZAP); whoever connects is a client that checks the
 * server's key. So only the key's owner's agents and tools talk, and a
 * squatter on a port gets nothing. Without a key file: plain, as before. */
#ifndef IOGP_KEYS_H
#define IOGP_KEYS_H

#include <stddef.h>

typedef struct iogp_keys {
	int present;           /* 0: no key file: sockets stay plain */
	char pub[41], sec[41]; /* Z85 */
	char path[1024];
} iogp_keys;

/* The key file: $IOGRAM_KEYS/curve.key, else $XDG_CONFIG_HOME/iogram/,
 * else $HOME/.config/iogram/. IOGRAM_KEYS=none: never use keys. */
int iogp_keys_path(char *buf, size_t len);
/* 0 (k->present tells whether a key exists), or -1 with err set: a key
 * file that is unreadable, malformed, not ours or readable by others is an
 * error, never silently ignored. */
int iogp_keys_load(iogp_keys *k, char *err, size_t errlen);
/* Write a new pair (0600, O_EXCL unless force) to the key file's place. */
int iogp_keys_generate(int force, iogp_keys *out, char *err, size_t errlen);
/* Before zmq_bind: CURVE server admitting only k's own public key. */
int iogp_keys_server(void *ctx, void *sock, const iogp_keys *k);
/* Before zmq_connect: CURVE client of a server holding k. */
int iogp_keys_client(void *sock, const iogp_keys *k);

#endif
