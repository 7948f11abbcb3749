/* sys.c - clocks and signal set-up shared by the iogram tools. */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "iogp_sys.h"

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t iogp_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t iogp_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void iogp_handle_signals(void (*handler)(int), int hup, int nopipe)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hup)
		sigaction(SIGHUP, &sa, NULL);
	if (nopipe)
		signal(SIGPIPE, SIG_IGN);
}
