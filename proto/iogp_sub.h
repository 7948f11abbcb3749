/* iogp_sub.h - receiving iogram messages from a ZeroMQ SUB socket, shared by
 * the iogram command, iogram-top and iogram-view (not installed). */
#ifndef IOGP_SUB_H
#define IOGP_SUB_H

#include <stddef.h>

/* Receive one multipart message (topic, payload) without blocking. Returns
 * the payload length, -1 when nothing is waiting, or -2 for a malformed
 * message (one frame, more than two, or a payload over cap), which is
 * consumed whole and dropped. */
long iogp_sub_recv(void *sock, void *buf, size_t cap);

/* Largest frame any iogram socket accepts: a payload at the protocol's own
 * limit plus room for its topic. A peer that announces more is disconnected
 * by ZeroMQ before anything is allocated. */
#define IOGP_SUB_MAXMSG ((long)IOGP_SUB_PAYLOAD_MAX + 1024)
#define IOGP_SUB_PAYLOAD_MAX (4u << 20)   /* = IOGP_MAX_PAYLOAD */
/* Subscriptions are one byte and a topic: a subscriber-facing socket takes no more. */
#define IOGP_SUB_MAXSUB 256L

/* A SUB socket for iogram messages: receive high-water mark hwm, no
 * linger, the frame limit above, subscribed to every iogram topic. NULL on
 * failure. */
void *iogp_sub_socket(void *ctx, int hwm);
/* 1 when binding ep stays on this machine (ipc://, inproc://, tcp:// on
 * 127.x, localhost or [::1]): anything wider needs the user's consent. */
int iogp_endpoint_local(const char *ep);
/* The one policy for binding ep: 0 when it stays on this machine; -1 with
 * msg saying why when it does not and any_address is 0; 1 when it does not,
 * any_address allows it, and msg holds the warning to show (no CURVE key:
 * anyone who reaches the port can read and inject streams). */
int iogp_endpoint_policy(const char *ep, int any_address, char *msg, size_t len);

/* The frame limit on any socket (max bytes per inbound frame). */
int iogp_sock_maxmsg(void *sock, long max);

/* Bind or connect sock (of ctx) with the user's CURVE key when there is one
 * (iogp_keys.h): binding makes it a server admitting only the key's owner,
 * connecting a client that checks the server. -1 with err set on failure
 * (a bad key file included). *secure (may be NULL) tells whether CURVE is on. */
int iogp_sock_bind(void *ctx, void *sock, const char *ep, int *secure, char *err, size_t errlen);
int iogp_sock_connect(void *ctx, void *sock, const char *ep, int *secure, char *err, size_t errlen);

#endif
