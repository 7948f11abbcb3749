/* live.c - sockets, signals and clocks shared by the streaming verbs. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "iogram_cli.h"
#include "iogp_sub.h"

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

int iogram_bind(void *ctx, void *sock, const char *ep)
{
	char err[1200];
	if (iogp_sock_bind(ctx, sock, ep, NULL, err, sizeof(err)) == 0)
		return 0;
	iogram_err("%s", err);
	return -1;
}

int iogram_connect(void *ctx, void *sock, const char *ep)
{
	char err[1200];
	if (iogp_sock_connect(ctx, sock, ep, NULL, err, sizeof(err)) == 0)
		return 0;
	iogram_err("%s", err);
	return -1;
}

int iogram_wide_ok(const char *verb, const char *ep, int wide)
{
	char msg[1300];
	int pol = iogp_endpoint_policy(ep, wide, msg, sizeof(msg));
	if (msg[0])
		iogram_err("%s: %s", verb, msg);
	return pol >= 0;
}

int iogram_isatty_stderr(void)
{
	return isatty(2);
}
