/* live.c - sockets, signals and clocks shared by the streaming verbs. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "iogram.h"

volatile int iogram_stop;

static void on_signal(int sig)
{
	(void)sig;
	iogram_stop = 1;
}

void iogram_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

uint64_t iogram_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t iogram_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int iogram_endpoint_ok(const char *ep, int allow_wide)
{
	if (!strncmp(ep, "ipc://", 6) || !strncmp(ep, "inproc://", 9))
		return 1;
	if (strncmp(ep, "tcp://", 6))
		return 0;
	const char *h = ep + 6;
	if (!strncmp(h, "127.", 4) || !strncmp(h, "localhost:", 10) || !strncmp(h, "[::1]:", 6))
		return 1;
	return allow_wide;
}

int iogram_bind(void *sock, const char *ep)
{
	if (zmq_bind(sock, ep) == 0)
		return 0;
	iogram_err("cannot listen on %s: %s", ep, zmq_strerror(zmq_errno()));
	return -1;
}

int iogram_connect(void *sock, const char *ep)
{
	if (zmq_connect(sock, ep) == 0)
		return 0;
	iogram_err("cannot connect to %s: %s", ep, zmq_strerror(zmq_errno()));
	return -1;
}

int iogram_isatty_stderr(void)
{
	return isatty(2);
}
