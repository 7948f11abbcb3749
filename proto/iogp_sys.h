/* iogp_sys.h - clocks and signal handling every iogram tool shares (the
 * command, both viewers, the demo launcher, the agent's clock). */
#ifndef IOGP_SYS_H
#define IOGP_SYS_H

#include "iogp_api.h"

#include <stdint.h>
#include <time.h>

/* Inline: the agent's clock falls back to these on every request when the
 * TSC is not usable, and a call into another library would cost there. */
static inline uint64_t iogp_clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t iogp_mono_ns(void)   /* CLOCK_MONOTONIC, ns */
{
	return iogp_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t iogp_wall_ns(void)   /* CLOCK_REALTIME, ns since the epoch */
{
	return iogp_clock_ns(CLOCK_REALTIME);
}

/* Send SIGINT and SIGTERM (and SIGHUP when hup) to handler, without
 * SA_RESTART so blocking calls return; ignore SIGPIPE when nopipe. */
IOGP_API void iogp_handle_signals(void (*handler)(int), int hup, int nopipe);

#endif
