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
#include "iogp_sys.h"

volatile int iogram_stop;

static void on_signal(int sig)
{
	(void)sig;
	iogram_stop = 1;
}

void iogram_catch_signals(void)
{
	iogp_handle_signals(on_signal, 0, 1);
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
