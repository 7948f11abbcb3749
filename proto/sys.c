/* sys.c - signal set-up shared by the iogram tools (the clocks are inline in iogp_sys.h). */
#include <signal.h>
#include <string.h>

#include "iogp_sys.h"

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
