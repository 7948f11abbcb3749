/* posix_signal.c - what a process killed by SIGTERM, SIGINT or SIGHUP had
 * counted since its last interval is sent before it dies. Their default
 * action ends the process without running anything, so a worker ended
 * that way (Python's multiprocessing.Pool terminates its workers with
 * SIGTERM) left its last interval unsent, and a short one nothing at all
 * (8 of 8 runs). Where the host left one of them at its default, the agent
 * catches it: the finals go out within the exit budget (iog__at_signal,
 * as at exit, but a publisher paused for a change of credentials stays
 * paused: no thread is started in a handler), the default is put back and the signal raised again, so the
 * process dies of it as it would have (same status, same core rules).
 *
 * The host never sees the handler: sigaction and signal (and bsd_signal,
 * sysv_signal) report the default where it is ours, and a handler or
 * SIG_IGN the host sets replaces it (setting the default again brings it
 * back). Not caught: a signal the host blocks (it waits in sigwait or a
 * signalfd as before), SIGKILL and the signals that dump core. A process
 * reading its handlers with the raw system call sees ours. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "posix.h"

#define IOG_SIG_REALS(X) \
	X(sigaction, int, (int, const struct sigaction *, struct sigaction *)) \
	X(signal, sighandler_t, (int, sighandler_t)) \
	X(bsd_signal, sighandler_t, (int, sighandler_t)) \
	X(sysv_signal, sighandler_t, (int, sighandler_t))

IOG_SIG_REALS(IOG_REAL_GETTER)

static const int caught[] = { SIGTERM, SIGINT, SIGHUP };
#define NCAUGHT (sizeof(caught) / sizeof(caught[0]))

static volatile sig_atomic_t ours[NCAUGHT];   /* our handler is installed */

static int slot(int sig)
{
	for (unsigned i = 0; i < NCAUGHT; i++)
		if (caught[i] == sig)
			return (int)i;
	return -1;
}

static void dfl(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = SIG_DFL;
}

static void on_term(int sig)
{
	int e = errno, k = slot(sig);
	struct sigaction sa;

	if (iog__posix_own())
		iog__at_signal();   /* bounded: the exit budget, never more than a second */
	dfl(&sa);
	get_sigaction()(sig, &sa, NULL);
	if (k >= 0)
		ours[k] = 0;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);   /* the default now: the process ends of it */
	errno = e;
}

static void install(int k)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < NCAUGHT; i++)
		sigaddset(&sa.sa_mask, caught[i]);
	if (get_sigaction()(caught[k], &sa, NULL) == 0)
		ours[k] = 1;
}

void iog__posix_signal_setup(void)
{
	if (get_sigaction() == NULL || get_signal() == NULL)
		return;
	for (unsigned k = 0; k < NCAUGHT; k++) {
		struct sigaction old;
		if (get_sigaction()(caught[k], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			install((int)k);
	}
}

/* The host sets act (NULL: only asks) for a signal whose handler is ours. */
static int host_sets(int k, const struct sigaction *act, struct sigaction *old)
{
	int e = errno;
	if (old != NULL)
		dfl(old);
	if (act == NULL)
		return 0;
	if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL)
		return 0;   /* the default is what ours stands for */
	ours[k] = 0;
	errno = e;
	return get_sigaction()(caught[k], act, NULL);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn f = get_sigaction();
	int k = slot(sig);

	if (f == NULL) {   /* only inside dlsym, on this thread */
		errno = ENOSYS;
		return -1;
	}
	if (k < 0 || !ours[k])
		return f(sig, act, old);
	int rc = host_sets(k, act, old);
	if (rc < 0 && old != NULL)
		f(sig, NULL, old);   /* refused: what is there */
	return rc;
}

/* signal and kin through sigaction with their flags (glibc's). */
static sighandler_t set_handler(int sig, sighandler_t h, int flags, sighandler_t (*real)(int, sighandler_t))
{
	int k = slot(sig);

	if (k < 0 || !ours[k] || real == NULL)
		return real != NULL ? real(sig, h) : SIG_ERR;
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);
	return host_sets(k, &act, &old) < 0 ? SIG_ERR : old.sa_handler;
}

EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, get_signal());
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, get_bsd_signal());
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, get_sysv_signal());
}
