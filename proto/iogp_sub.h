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

#endif
