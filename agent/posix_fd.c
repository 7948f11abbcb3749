/* posix_fd.c - descriptors created, duplicated and closed: the interposer
 * forgets what it knew of a replaced number, moves every descriptor made on
 * an agent thread (libzmq's included) into the agent's band, and hides that
 * band from the host. The semantics, seen from the host:
 *  - close, fcntl, dup, dup2/dup3 *from* an agent descriptor: EBADF, exactly
 *    as for a number that is not open;
 *  - close_range/closefrom over the band: every other descriptor is closed,
 *    the agent's stay;
 *  - dup2/dup3 *onto* an agent descriptor, or an EMFILE while the agent holds
 *    descriptors: the host needs the number, so the agent stops (its final
 *    state sent within its exit budget) and gives every descriptor back,
 *    then the call is made (once more);
 *  - an abort() on an agent thread (libzmq's assertions) parks that thread
 *    and disables the agent: it never reaches the host. */
/* We define both fcntl and fcntl64: no header redirection. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix.h"

#define IOG_FD_REALS(X) \
	X(dup, int, (int)) \
	X(dup2, int, (int, int)) \
	X(dup3, int, (int, int, int)) \
	X(close_range, int, (unsigned, unsigned, int)) \
	X(closefrom, void, (int)) \
	X(fcntl, int, (int, int, ...)) \
	X(fcntl64, int, (int, int, ...)) \
	X(socket, int, (int, int, int)) \
	X(socketpair, int, (int, int, int, int *)) \
	X(accept, int, (int, struct sockaddr *, socklen_t *)) \
	X(accept4, int, (int, struct sockaddr *, socklen_t *, int)) \
	X(eventfd, int, (unsigned, int)) \
	X(epoll_create, int, (int)) \
	X(epoll_create1, int, (int)) \
	X(pipe, int, (int *)) \
	X(pipe2, int, (int *, int)) \
	X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
	X(abort, void, (void))

IOG_FD_REALS(IOG_REAL_GETTER)

void iog__posix_fd_resolve(void)
{
#define X(n, ret, args) (void)get_##n();
	IOG_FD_REALS(X)
#undef X
}

/* A descriptor just made: on an agent thread it goes into the band. */
int iog__fd_made(int r)
{
	if (r >= 0 && UNLIKELY(iog__tls_in_agent)) {
		int e = errno;
		r = iog__fdg_adopt(r);
		if (r >= 0)
			errno = e;
	}
	return r;
}

static int made_pair(int r, int p[2])
{
	if (r == 0 && UNLIKELY(iog__tls_in_agent)) {
		p[0] = iog__fdg_adopt(p[0]);
		p[1] = iog__fdg_adopt(p[1]);
		if (p[0] < 0 || p[1] < 0) {
			if (p[0] >= 0)
				syscall(SYS_close, p[0]);
			if (p[1] >= 0)
				syscall(SYS_close, p[1]);
			errno = EMFILE;
			return -1;
		}
	}
	return r;
}

/* A call that makes a descriptor: on the host's EMFILE the agent gives its
 * own back and the call runs once more; on an agent thread the result is
 * adopted; what we knew of the number is forgotten. */
#define MAKE_FD(call) ({ \
	int r_ = (call); \
	if (UNLIKELY(iog__host_emfile(r_))) \
		r_ = (call); \
	r_ = iog__fd_made(r_); \
	iog__fd_reset(r_); \
	r_; \
})

/* The same for a call that makes a pair (pipe, socketpair) into p. */
#define MAKE_PAIR(call, p) ({ \
	int r_ = (call); \
	if (UNLIKELY(iog__host_emfile(r_))) \
		r_ = (call); \
	r_ = made_pair(r_, p); \
	if (r_ == 0) { \
		iog__fd_reset(p[0]); \
		iog__fd_reset(p[1]); \
	} \
	r_; \
})

EXPORT int dup(int fd)
{
	if (iog__fd_hidden(fd)) {
		errno = EBADF;
		return -1;
	}
	return MAKE_FD(CALL_OR(dup, (int)syscall(SYS_dup, fd), fd));
}

/* The host wants the number fd2: an agent descriptor there is given back. */
static int onto(int fd, int fd2)
{
	if (iog__fd_hidden(fd)) {
		errno = EBADF;
		return -1;
	}
	if (iog__fd_hidden(fd2)) {
		iog__surrender();
		/* a publisher stuck beyond its bound: the number is the host's anyway */
		iog__fdg_forget(fd2);
	}
	return 0;
}

EXPORT int dup2(int fd, int fd2)
{
	if (onto(fd, fd2) < 0)
		return -1;
	int r = CALL_OR(dup2, (int)syscall(SYS_dup3, fd, fd2, 0), fd, fd2);
	if (r >= 0 && fd != fd2)
		iog__fd_reset(fd2);
	return r;
}

EXPORT int dup3(int fd, int fd2, int fl)
{
	if (onto(fd, fd2) < 0)
		return -1;
	int r = CALL_OR(dup3, (int)syscall(SYS_dup3, fd, fd2, fl), fd, fd2, fl);
	if (r >= 0)
		iog__fd_reset(fd2);
	return r;
}

static void reset_range(unsigned lo, unsigned hi)
{
	for (unsigned fd = lo; fd <= hi && fd < IOG_POSIX_NFD; fd++)
		if (IOG_LOAD(&iog__fdtab[fd].state) != IOG_FD_UNKNOWN || IOG_LOAD(&iog__fdtab[fd].opened))
			iog__fd_reset((int)fd);
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static int range_call(unsigned lo, unsigned hi, int fl)
{
	return CALL_OR(close_range, (int)syscall(SYS_close_range, lo, hi, fl), lo, hi, fl);
}

/* close_range over [lo, hi] less the agent's descriptors (host calls only). */
static int range_less_agent(unsigned lo, unsigned hi, int fl)
{
	uint64_t own = __atomic_load_n(&iog__fdg_owned, __ATOMIC_ACQUIRE);
	int band = __atomic_load_n(&iog__fdg_lo, __ATOMIC_RELAXED);

	if (own == 0 || iog__tls_in_agent || lo > hi || band < 0 ||
	    hi < (unsigned)band || lo >= (unsigned)band + IOG_FD_BAND)
		return range_call(lo, hi, fl);
	unsigned from = lo;
	for (int i = 0; i < IOG_FD_BAND; i++) {
		unsigned fd = (unsigned)band + (unsigned)i;
		if (!(own & (1ull << i)) || fd < lo || fd > hi)
			continue;
		if (fd > from && range_call(from, fd - 1, fl) < 0)
			return -1;
		from = fd + 1;
	}
	if (from <= hi && from != 0 && range_call(from, hi, fl) < 0)
		return -1;
	return 0;
}

EXPORT int close_range(unsigned lo, unsigned hi, int fl)
{
	int r = range_less_agent(lo, hi, fl);
	if (r == 0 && !(fl & CLOSE_RANGE_CLOEXEC))
		reset_range(lo, hi);
	return r;
}

EXPORT void closefrom(int lo)
{
	if (iog__fdg_count() && !iog__tls_in_agent && lo >= 0) {
		int e = errno;
		range_less_agent((unsigned)lo, ~0u, 0);
		errno = e;
	} else {
		closefrom_fn f = get_closefrom();
		if (f)
			f(lo);
		else
			syscall(SYS_close_range, (unsigned)lo, ~0u, 0);
	}
	if (lo >= 0)
		reset_range((unsigned)lo, ~0u);
}

/* fcntl's third argument is an int or a pointer: pass it on as a word */
static int do_fcntl(fcntl_fn f, long nr, int fd, int cmd, void *arg)
{
	if (iog__fd_hidden(fd)) {
		errno = EBADF;
		return -1;
	}
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return MAKE_FD(f ? f(fd, cmd, arg) : (int)syscall(nr, fd, cmd, arg));
	int r = f ? f(fd, cmd, arg) : (int)syscall(nr, fd, cmd, arg);
	/* O_DIRECT follows F_SETFL (an entry not classified yet asks at its
	 * classification) */
	if (cmd == F_SETFL && r == 0 && (unsigned)fd < IOG_POSIX_NFD && !iog__tls_agent_thread)
		IOG_STORE(&iog__fdtab[fd].direct, (uint32_t)(((long)arg & O_DIRECT) != 0));
	return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl(get_fcntl(), SYS_fcntl, fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl(get_fcntl64(), SYS_fcntl, fd, cmd, arg);
}

EXPORT int socket(int d, int t, int p)
{
	return MAKE_FD(CALL_OR(socket, (int)syscall(SYS_socket, d, t, p), d, t, p));
}

EXPORT int socketpair(int d, int t, int p, int sv[2])
{
	return MAKE_PAIR(CALL_OR(socketpair, (int)syscall(SYS_socketpair, d, t, p, sv), d, t, p, sv), sv);
}

EXPORT int accept(int s, struct sockaddr *a, socklen_t *l)
{
	return MAKE_FD(CALL_OR(accept, (int)syscall(SYS_accept, s, a, l), s, a, l));
}

EXPORT int accept4(int s, struct sockaddr *a, socklen_t *l, int fl)
{
	return MAKE_FD(CALL_OR(accept4, (int)syscall(SYS_accept4, s, a, l, fl), s, a, l, fl));
}

EXPORT int eventfd(unsigned v, int fl)
{
	return MAKE_FD(CALL_OR(eventfd, (int)syscall(SYS_eventfd2, v, fl), v, fl));
}

EXPORT int epoll_create(int n)
{
	return MAKE_FD(CALL_OR(epoll_create, (int)syscall(SYS_epoll_create1, 0), n));
}

EXPORT int epoll_create1(int fl)
{
	return MAKE_FD(CALL_OR(epoll_create1, (int)syscall(SYS_epoll_create1, fl), fl));
}

EXPORT int pipe(int p[2])
{
	return MAKE_PAIR(CALL_OR(pipe, (int)syscall(SYS_pipe2, p, 0), p), p);
}

EXPORT int pipe2(int p[2], int fl)
{
	return MAKE_PAIR(CALL_OR(pipe2, (int)syscall(SYS_pipe2, p, fl), p, fl), p);
}

/* ---- threads the agent starts (libzmq's I/O and reaper threads) ----------- */

struct tramp {
	void *(*fn)(void *);
	void *arg;
};

static void *agent_thread_main(void *p)
{
	struct tramp t = *(struct tramp *)p;
	free(p);
	iog__tls_in_agent = 1;
	iog__tls_agent_thread = 1;
	return t.fn(t.arg);
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	pthread_create_fn f = get_pthread_create();
	if (f == NULL)
		return EAGAIN;
	if (LIKELY(!iog__tls_agent_thread))
		return f(th, a, fn, arg);
	struct tramp *t = malloc(sizeof(*t));
	if (t == NULL)
		return EAGAIN;
	t->fn = fn;
	t->arg = arg;
	int r = f(th, a, agent_thread_main, t);
	if (r != 0)
		free(t);
	return r;
}

EXPORT void abort(void)
{
	if (iog__tls_agent_thread) {
		/* libzmq or the agent gave up: the host must not. This thread
		 * holds nothing the host waits for; it sleeps until the process ends. */
		iog__fault();
		for (;;)
			pause();
	}
	abort_fn f = get_abort();
	if (f)
		f();
	for (;;)
		syscall(SYS_tgkill, (int)syscall(SYS_getpid), (int)syscall(SYS_gettid), 6);
}
