/* sub.c - one iogram message off a ZeroMQ SUB socket. */
#include <zmq.h>

#include "iogp_sub.h"

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
