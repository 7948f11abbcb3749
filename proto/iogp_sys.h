/* iogp_sys.h - clocks and signal handling every iogram tool shares (the
 * command, both viewers, the demo's workers, the agent's slow paths). */
#ifndef IOGP_SYS_H
#define IOGP_SYS_H

#include "iogp_api.h"

#include <stdint.h>

IOGP_API uint64_t iogp_mono_ns(void);   /* CLOCK_MONOTONIC, ns */
IOGP_API uint64_t iogp_wall_ns(void);   /* CLOCK_REALTIME, ns since the epoch */

/* Send SIGINT and SIGTERM (and SIGHUP when hup) to handler, without
 * SA_RESTART so blocking calls return; ignore SIGPIPE when nopipe. */
IOGP_API void iogp_handle_signals(void (*handler)(int), int hup, int nopipe);

#endif
