/* posix_cred.c - the agent's threads out of the way of a change of
 * credentials. glibc applies setuid and its kin to every thread of the
 * process (each thread makes the same call) and aborts the process when
 * one thread's call fails where another's succeeded. A thread's
 * capabilities are its own: a program that keeps them across a change of
 * user (PR_SET_KEEPCAPS, then capset on the calling thread only, as
 * setpriv and libcap-ng do) can set its groups after its user, but the
 * agent's threads, which lost theirs with the user, cannot, and the
 * program died of SIGABRT (setpriv --reuid=65534 --regid=65534, 6 of 6).
 * So before any of these calls, and before capset, the agent sends its
 * finals as at exit, stops its threads (ZeroMQ's with them) and stays off
 * for the rest of the process: a thread started later, under the new
 * credentials but amid a program's own capability juggling, would be the
 * same trouble, and one started from wherever the agent could notice
 * (an open in a signal handler, say) could hang. A program that changes
 * its credentials and then execs (setpriv, su, runuser, gosu) is counted
 * again in the new image; one that goes on working (a daemon dropping
 * privileges) is not counted after the change. Nothing here changes what
 * the call does, its result or errno. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "posix.h"

/* capset's arguments (linux/capability.h), opaque here */
struct __user_cap_header_struct;
struct __user_cap_data_struct;
int capset(struct __user_cap_header_struct *, const struct __user_cap_data_struct *);

#define IOG_CRED_REALS(X) \
	X(setuid, int, (uid_t)) \
	X(setgid, int, (gid_t)) \
	X(seteuid, int, (uid_t)) \
	X(setegid, int, (gid_t)) \
	X(setreuid, int, (uid_t, uid_t)) \
	X(setregid, int, (gid_t, gid_t)) \
	X(setresuid, int, (uid_t, uid_t, uid_t)) \
	X(setresgid, int, (gid_t, gid_t, gid_t)) \
	X(setgroups, int, (size_t, const gid_t *)) \
	X(capset, int, (struct __user_cap_header_struct *, const struct __user_cap_data_struct *))

IOG_CRED_REALS(IOG_REAL_GETTER)

static void changing(void)
{
	int e = errno;
	iog__creds_changing();
	errno = e;
}

/* The call itself; while dlsym runs (no real function yet) the kernel's,
 * which is what glibc's would be on a process without other threads. */
#define CRED_CALL(n, args, sys) ({ \
	changing(); \
	n##_fn f_ = get_##n(); \
	f_ ? f_ args : (int)(sys); \
})

EXPORT int setuid(uid_t u)
{
	return CRED_CALL(setuid, (u), syscall(SYS_setuid, u));
}

EXPORT int setgid(gid_t g)
{
	return CRED_CALL(setgid, (g), syscall(SYS_setgid, g));
}

EXPORT int seteuid(uid_t u)
{
	return CRED_CALL(seteuid, (u), syscall(SYS_setresuid, (uid_t)-1, u, (uid_t)-1));
}

EXPORT int setegid(gid_t g)
{
	return CRED_CALL(setegid, (g), syscall(SYS_setresgid, (gid_t)-1, g, (gid_t)-1));
}

EXPORT int setreuid(uid_t r, uid_t e)
{
	return CRED_CALL(setreuid, (r, e), syscall(SYS_setreuid, r, e));
}

EXPORT int setregid(gid_t r, gid_t e)
{
	return CRED_CALL(setregid, (r, e), syscall(SYS_setregid, r, e));
}

EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
	return CRED_CALL(setresuid, (r, e, s), syscall(SYS_setresuid, r, e, s));
}

EXPORT int setresgid(gid_t r, gid_t e, gid_t s)
{
	return CRED_CALL(setresgid, (r, e, s), syscall(SYS_setresgid, r, e, s));
}

EXPORT int setgroups(size_t n, const gid_t *list)
{
	return CRED_CALL(setgroups, (n, list), syscall(SYS_setgroups, n, list));
}

EXPORT int capset(struct __user_cap_header_struct *h, const struct __user_cap_data_struct *d)
{
	return CRED_CALL(capset, (h, d), syscall(SYS_capset, h, d));
}
