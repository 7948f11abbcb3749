/* fdguard.c - the agent's own descriptors (its eventfd, every libzmq socket,
 * epoll and signaler, its replay file) live in a band of IOG_FD_BAND numbers
 * just below min(soft RLIMIT_NOFILE, 1024), far from the low numbers a
 * program uses, and are registered here so that the interposer can hide them
 * from the host: the host's close/dup2/fcntl on one behaves as on a number
 * that is not open (EBADF). Raw syscalls only: no wrapper runs under us. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sched.h>
#include <unistd.h>

#include "agent.h"

int iog__fdg_lo = -1;     /* first number of the band; -1: no band (yet) */
int iog__fdg_private;     /* 1: the agent's threads have their own table */
uint64_t iog__fdg_owned;  /* bit i: descriptor iog__fdg_lo + i is the agent's */

int iog__fdg_setup(void)
{
	struct rlimit rl;

	if (iog__fdg_lo >= 0)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	rlim_t top = rl.rlim_cur < IOG_FD_TOP ? rl.rlim_cur : IOG_FD_TOP;
	if (rl.rlim_cur == RLIM_INFINITY)
		top = IOG_FD_TOP;
	/* too few descriptors to stay out of the host's way: stay off */
	if (top < IOG_FD_MIN_LIMIT)
		return -1;
	__atomic_store_n(&iog__fdg_lo, (int)(top - IOG_FD_BAND), __ATOMIC_RELEASE);
	return 0;
}

static void mark(int fd)
{
	__atomic_fetch_or(&iog__fdg_owned, 1ull << (fd - iog__fdg_lo), __ATOMIC_ACQ_REL);
}

/* The publisher's first act: a descriptor table of its own (inherited by
 * the threads it starts, libzmq's included), emptied but for keep (the
 * wake-up eventfd, in the band of both tables). Everything the agent opens
 * from then on - libzmq's sockets, libc's own files (nss, /sys), the replay
 * file - is invisible to the host and cannot race with its dup2 or close. */
int iog__fdg_private_enter(int keep)
{
	if (syscall(SYS_unshare, CLONE_FILES) != 0)
		return -1;   /* a sandbox may refuse: the band alone then */
	if (keep > 0 && syscall(SYS_close_range, 0u, (unsigned)keep - 1, 0) != 0)
		for (int fd = 0; fd < keep; fd++)
			syscall(SYS_close, fd);
	if (syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0) != 0) {
		struct rlimit rl;
		long top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
		for (long fd = keep + 1; fd < top; fd++)
			syscall(SYS_close, (int)fd);
	}
	__atomic_store_n(&iog__fdg_private, 1, __ATOMIC_RELEASE);
	return 0;
}

int iog__fdg_adopt(int fd)
{
	int lo = __atomic_load_n(&iog__fdg_lo, __ATOMIC_ACQUIRE);

	if (fd < 0)
		return fd;
	/* the agent's own table: nothing to move, nothing the host sees */
	if (iog__tls_agent_thread && __atomic_load_n(&iog__fdg_private, __ATOMIC_ACQUIRE))
		return fd;
	if (iog__fdg_owned_fd(fd))
		return fd;
	if (lo < 0) {
		syscall(SYS_close, fd);
		errno = EMFILE;
		return -1;
	}
	if (fd >= lo && fd < lo + IOG_FD_BAND) {
		mark(fd);
		return fd;
	}
	int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, lo);
	syscall(SYS_close, fd);
	if (nfd < 0 || nfd >= lo + IOG_FD_BAND) {
		/* the band is full: the agent never takes a number the host may use */
		if (nfd >= 0)
			syscall(SYS_close, nfd);
		errno = EMFILE;
		return -1;
	}
	mark(nfd);
	return nfd;
}

void iog__fdg_forget(int fd)
{
	if (iog__fdg_owned_fd(fd))
		__atomic_fetch_and(&iog__fdg_owned, ~(1ull << (fd - iog__fdg_lo)), __ATOMIC_ACQ_REL);
}

int iog__fdg_count(void)
{
	return __builtin_popcountll(__atomic_load_n(&iog__fdg_owned, __ATOMIC_ACQUIRE));
}

void iog__fdg_child(void)
{
	uint64_t m = __atomic_exchange_n(&iog__fdg_owned, 0, __ATOMIC_ACQ_REL);

	/* the parent's sockets are of no use here and would fill the band */
	for (int i = 0; i < IOG_FD_BAND; i++)
		if (m & (1ull << i))
			syscall(SYS_close, iog__fdg_lo + i);
}
