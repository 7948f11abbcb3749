/* sub.c - one iogram message off a ZeroMQ SUB socket. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "iogp_keys.h"
#include "iogp_sub.h"
#include "iogp_wire.h"

_Static_assert(IOGP_SUB_PAYLOAD_MAX == IOGP_MAX_PAYLOAD, "frame limit follows the protocol");

static int secure_ep(void *ctx, void *sock, const char *ep, int bind, int *secure,
                     char *err, size_t errlen)
{
	iogp_keys k;
	if (iogp_keys_load(&k, err, errlen) < 0)
		return -1;
	if (secure)
		*secure = k.present;
	if ((bind ? iogp_keys_server(ctx, sock, &k) : iogp_keys_client(sock, &k)) < 0) {
		snprintf(err, errlen, "cannot set up CURVE on %s: %s", ep, zmq_strerror(zmq_errno()));
		return -1;
	}
	if ((bind ? zmq_bind(sock, ep) : zmq_connect(sock, ep)) != 0) {
		snprintf(err, errlen, "cannot %s %s: %s", bind ? "listen on" : "connect to", ep,
		         zmq_strerror(zmq_errno()));
		return -1;
	}
	return 0;
}

int iogp_sock_bind(void *ctx, void *sock, const char *ep, int *secure, char *err, size_t errlen)
{
	return secure_ep(ctx, sock, ep, 1, secure, err, errlen);
}

int iogp_sock_connect(void *ctx, void *sock, const char *ep, int *secure, char *err, size_t errlen)
{
	return secure_ep(ctx, sock, ep, 0, secure, err, errlen);
}

int iogp_endpoint_local(const char *ep)
{
	if (!strncmp(ep, "ipc://", 6) || !strncmp(ep, "inproc://", 9))
		return 1;
	if (strncmp(ep, "tcp://", 6))
		return 0;
	const char *h = ep + 6;
	return !strncmp(h, "127.", 4) || !strncmp(h, "localhost:", 10) || !strncmp(h, "[::1]:", 6);
}

int iogp_endpoint_policy(const char *ep, int any_address, char *msg, size_t len)
{
	if (len)
		msg[0] = 0;
	if (iogp_endpoint_local(ep))
		return 0;
	if (!any_address) {
		snprintf(msg, len, "%s is not a loopback endpoint (tcp://127.x, ipc://); add "
		         "--any-address to listen on it", ep);
		return -1;
	}
	iogp_keys k;
	char err[1200] = "";
	if (iogp_keys_load(&k, err, sizeof(err)) == 0 && !k.present)
		snprintf(msg, len, "warning: listening on %s without CURVE: anyone who can reach it "
		         "can read and inject streams; run 'iogram keygen' first", ep);
	return 1;
}

int iogp_sock_maxmsg(void *sock, long max)
{
	int64_t m = max;
	return zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &m, sizeof(m));
}

void *iogp_sub_socket(void *ctx, int hwm)
{
	void *s = zmq_socket(ctx, ZMQ_SUB);
	int zero = 0;
	if (s == NULL)
		return NULL;
	if (zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof(hwm)) < 0 ||
	    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero)) < 0 ||
	    iogp_sock_maxmsg(s, IOGP_SUB_MAXMSG) < 0 ||
	    zmq_setsockopt(s, ZMQ_SUBSCRIBE, "iog1/", 5) < 0) {
		zmq_close(s);
		return NULL;
	}
	return s;
}

long iogp_sub_recv(void *sock, void *buf, size_t cap)
{
	char topic[256];
	if (zmq_recv(sock, topic, sizeof(topic), ZMQ_DONTWAIT) < 0)
		return -1;
	int more = 0;
	size_t ml = sizeof(more);
	zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &ml);
	if (!more)
		return -2;   /* a single frame: not ours */
	int len = zmq_recv(sock, buf, cap, 0);
	int bad = len < 0 || (size_t)len > cap;
	zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &ml);
	/* drain the rest of the message (ZeroMQ delivers all its frames at once,
	 * so this ends); stopping early would misread them as new messages */
	while (more) {
		char junk[64];
		if (zmq_recv(sock, junk, sizeof(junk), 0) < 0)
			break;
		zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &ml);
		bad = 1;
	}
	return bad ? -2 : len;
}
