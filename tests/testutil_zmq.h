/* testutil_zmq.h - a test's own publisher that sends only once it is heard:
 * a PUB drops what it sends before the subscriber's subscription arrived,
 * so an exact count after a fixed sleep fails when a loaded machine (an ASan
 * recorder starting) is slow. An XPUB sees the subscription arrive. For the
 * suites that link ZeroMQ; header only (testutil.c does not link it). */
#ifndef TESTUTIL_ZMQ_H
#define TESTUTIL_ZMQ_H

#include <check.h>
#include <zmq.h>

#include "testutil.h"

/* An XPUB of ctx connected to ep (send high-water mark sndhwm; 0: ZeroMQ's
 * default), returned once a subscription came through it (within
 * timeout_s, or the test fails). Send as on a PUB. */
static inline void *tu_pub_heard(void *ctx, const char *ep, int sndhwm, double timeout_s)
{
	void *s = zmq_socket(ctx, ZMQ_XPUB);
	int zero = 0;
	ck_assert_ptr_nonnull(s);
	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	if (sndhwm > 0)
		zmq_setsockopt(s, ZMQ_SNDHWM, &sndhwm, sizeof(sndhwm));
	ck_assert_int_eq(zmq_connect(s, ep), 0);
	double end = tu_now() + timeout_s;
	for (;;) {
		zmq_pollitem_t pi = { s, 0, ZMQ_POLLIN, 0 };
		if (zmq_poll(&pi, 1, 100) > 0) {
			unsigned char b[256];
			int n = zmq_recv(s, b, sizeof(b), ZMQ_DONTWAIT);
			if (n > 0 && b[0] == 1)
				return s;
		}
		ck_assert_msg(tu_now() < end, "no subscriber on %s within %.0f s", ep, timeout_s);
	}
}

#endif
