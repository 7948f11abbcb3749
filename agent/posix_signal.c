/* posix_signal.c - what a process killed by SIGTERM, SIGINT or SIGHUP had
 * counted since its last interval is sent before it dies. Their default
 * action ends the process without running anything, so a worker ended
 * that way (Python's multiprocessing.Pool terminates its workers with
 * SIGTERM) left its last interval unsent, and a short one nothing at all
 * (8 of 8 runs). Where the host left one of them at its default, the agent
 * catches it: the finals go out within the exit budget (iog__at_exit, as
 * at exit; it starts no thread), the default is put back and the signal
 * raised again, so the process dies of it as it would have (same status,
 * same core rules).
 *
 * The host never sees the handler: sigaction and signal (and bsd_signal,
 * sysv_signal, __sysv_signal) report the default where the kernel holds
 * ours, and a handler or SIG_IGN the host sets replaces it (setting the
 * default keeps it). Whether it is ours is asked of the kernel each time,
 * so a handler set by a call not wrapped here (sigset, a raw system call)
 * is simply the host's, and a vfork child's table is its own. Not caught:
 * a signal the host blocks (it waits in sigwait or a signalfd as before),
 * SIGKILL, the signals that dump core, and anything in a pid 1 (an init
 * ignores a signal at its default: a handler would change that). A
 * process reading its handlers with the raw system call sees ours. */
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
	X(sysv_signal, sighandler_t, (int, sighandler_t)) \
	X(__sysv_signal, sighandler_t, (int, sighandler_t))

IOG_SIG_REALS(IOG_REAL_GETTER)

static const int caught[] = { SIGTERM, SIGINT, SIGHUP };
#define NCAUGHT (sizeof(caught) / sizeof(caught[0]))

static int is_caught(int sig)
{
	for (unsigned i = 0; i < NCAUGHT; i++)
		if (caught[i] == sig)
			return 1;
	return 0;
}

static void dfl(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = SIG_DFL;
}

static void on_term(int sig)
{
	int e = errno;
	struct sigaction sa;

	if (iog__posix_own())
		iog__at_exit();   /* bounded: the exit budget, never more than a second */
	dfl(&sa);
	get_sigaction()(sig, &sa, NULL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);   /* the default now: the process ends of it */
	errno = e;
}

/* Is our handler the one the kernel holds for sig? (The kernel's table is
 * the truth: a vfork child has its own, and a handler set by a call we do
 * not wrap replaces ours there.) */
static int ours(int sig, sigaction_fn f)
{
	struct sigaction cur;
	return is_caught(sig) && f(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_handler == on_term;
}

void iog__posix_signal_setup(void)
{
	sigaction_fn f = get_sigaction();

	/* an init (pid 1 of its namespace) ignores a signal at its default:
	 * a handler there would change what the signal does */
	if (f == NULL || getpid() == 1)
		return;
	for (unsigned k = 0; k < NCAUGHT; k++) {
		struct sigaction old, sa;
		if (f(caught[k], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_term;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		for (unsigned i = 0; i < NCAUGHT; i++)
			sigaddset(&sa.sa_mask, caught[i]);
		f(caught[k], &sa, NULL);
	}
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn f = get_sigaction();

	if (f == NULL) {   /* only inside dlsym, on this thread */
		errno = ENOSYS;
		return -1;
	}
	if (!ours(sig, f))
		return f(sig, act, old);
	/* ours stands for the default: the host sees that, and setting the
	 * default keeps it; anything else replaces it */
	struct sigaction a;
	int set = act != NULL && ((act->sa_flags & SA_SIGINFO) || act->sa_handler != SIG_DFL);
	if (set)
		a = *act;   /* act and old may be one */
	if (old != NULL)
		dfl(old);
	return set ? f(sig, &a, NULL) : 0;
}

/* signal and kin through sigaction with their flags (glibc's). */
static sighandler_t set_handler(int sig, sighandler_t h, int flags, sighandler_t (*real)(int, sighandler_t))
{
	sigaction_fn f = get_sigaction();

	if (real == NULL)
		return SIG_ERR;
	if (f == NULL || h == SIG_ERR || !ours(sig, f))
		return real(sig, h);
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);
	return sigaction(sig, &act, &old) < 0 ? SIG_ERR : old.sa_handler;
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

/* what signal() is in a strict ISO C or POSIX build */
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, get___sysv_signal());
}
