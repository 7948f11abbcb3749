/* posix.c - libiogram-posix: the LD_PRELOAD interposer counting a program's
 * POSIX I/O into the posix.* metrics (its stdio calls: posix_stdio.c,
 * stdio.*). posix.* is what the program itself asks of the kernel: glibc's
 * own requests inside stdio never pass the interposer.
 *
 * What is counted (the catalog's names are part of the interface):
 *  - data requests (read/write families, copy_file_range
 *    and sendfile as a read on the source plus a write on the destination)
 *    on storage: regular files and block devices. Each descriptor is
 *    classified once, when it is opened (or at its first use when it was
 *    inherited, duplicated or made otherwise): fstat's type and its path.
 *    Pipes, FIFOs, character devices and the regular files under /proc,
 *    /sys and /dev (and memfds) are not storage: their data requests count
 *    in other.{read,write}.{ops,bytes} only. Sockets, anonymous inodes
 *    (eventfd, epoll, ...) and files under IOGRAM_EXCLUDE_DIRS are not
 *    counted at all; IOGRAM_ALL_FILES=1 counts every file, device and FIFO
 *    as storage, IOGRAM_INCLUDE_DIRS the ones under its directories.
 *    posix.{read,write}.direct.ops: those on O_DIRECT descriptors (at open
 *    or by fcntl F_SETFL). Sizes are the bytes transferred (as in
 *    Darshan), latency is the call's duration, posix.queue_depth the data
 *    requests in flight as one starts, itself included.
 *  - spatiality per descriptor and direction (Darshan's classes, made a
 *    partition so they add up to the ops): consecutive starts where the
 *    previous request ended, sequential after that, random before it; the
 *    first request is compared with offset 0, as if a previous one had ended
 *    at the start of the file (Darshan starts its last offset at 0 too).
 *  - meta ops: open/creat of storage or a directory, close of what we
 *    count, stat family (path-based always, descriptor-based on counted
 *    descriptors), lseek, unlink, rename, mkdir, rmdir. Sync ops: fsync,
 *    fdatasync here; sync_file_range, syncfs, sync, msync in posix_sync.c,
 *    AIO fsyncs in posix_aio.c. posix.meta.latency times meta and sync
 *    ops. An open of storage with O_SYNC or O_DSYNC: posix.sync.opens.
 *  - a failed call counts in posix.errors only.
 *  - mmap/mmap64 of a regular file: posix.mmap.{ops,bytes} (the mapping,
 *    not the page I/O through it, which no wrapper sees).
 * Nothing is counted on agent threads (iog__tls_in_agent) or before the agent
 * has started. Real functions are found with dlsym(RTLD_NEXT); a call that
 * arrives while dlsym runs goes to the kernel directly. errno is kept. */
/* We define both the plain and the 64 names: no header redirection. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iogp_metrics.h"
#include "posix.h"


int __xstat(int, const char *, struct stat *);
int __lxstat(int, const char *, struct stat *);
int __fxstat(int, int, struct stat *);
int __fxstatat(int, int, const char *, struct stat *, int);
int __xstat64(int, const char *, struct stat64 *);
int __lxstat64(int, const char *, struct stat64 *);
int __fxstat64(int, int, struct stat64 *);
int __fxstatat64(int, int, const char *, struct stat64 *, int);
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
ssize_t __read_chk(int, void *, size_t, size_t);
ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);

iog_posix_metrics iog__pm;
iog_posix_slots iog__ps;
int iog__posix_ready;
iog_fdent iog__fdtab[IOG_POSIX_NFD];
uint64_t iog__inflight __attribute__((aligned(64)));
iog_posix_xslots iog__px;
static iog__scope scope;   /* IOGRAM_ALL_FILES, IOGRAM_{EXCLUDE,INCLUDE}_DIRS */
static pid_t posix_pid;
static uint32_t mmap_slot[2];   /* posix.mmap.ops, .bytes */
static int mmap_on;

/* ---- real functions ------------------------------------------------------ */

#define IOG_REALS(X) \
	X(open, int, (const char *, int, ...)) \
	X(open64, int, (const char *, int, ...)) \
	X(openat, int, (int, const char *, int, ...)) \
	X(openat64, int, (int, const char *, int, ...)) \
	X(__open_2, int, (const char *, int)) \
	X(__open64_2, int, (const char *, int)) \
	X(__openat_2, int, (int, const char *, int)) \
	X(__openat64_2, int, (int, const char *, int)) \
	X(creat, int, (const char *, mode_t)) \
	X(creat64, int, (const char *, mode_t)) \
	X(close, int, (int)) \
	X(read, ssize_t, (int, void *, size_t)) \
	X(write, ssize_t, (int, const void *, size_t)) \
	X(__read_chk, ssize_t, (int, void *, size_t, size_t)) \
	X(pread, ssize_t, (int, void *, size_t, off_t)) \
	X(pread64, ssize_t, (int, void *, size_t, off64_t)) \
	X(__pread_chk, ssize_t, (int, void *, size_t, off_t, size_t)) \
	X(__pread64_chk, ssize_t, (int, void *, size_t, off64_t, size_t)) \
	X(pwrite, ssize_t, (int, const void *, size_t, off_t)) \
	X(pwrite64, ssize_t, (int, const void *, size_t, off64_t)) \
	X(readv, ssize_t, (int, const struct iovec *, int)) \
	X(writev, ssize_t, (int, const struct iovec *, int)) \
	X(preadv, ssize_t, (int, const struct iovec *, int, off_t)) \
	X(preadv64, ssize_t, (int, const struct iovec *, int, off64_t)) \
	X(pwritev, ssize_t, (int, const struct iovec *, int, off_t)) \
	X(pwritev64, ssize_t, (int, const struct iovec *, int, off64_t)) \
	X(preadv2, ssize_t, (int, const struct iovec *, int, off_t, int)) \
	X(pwritev2, ssize_t, (int, const struct iovec *, int, off_t, int)) \
	X(preadv64v2, ssize_t, (int, const struct iovec *, int, off64_t, int)) \
	X(pwritev64v2, ssize_t, (int, const struct iovec *, int, off64_t, int)) \
	X(copy_file_range, ssize_t, (int, off64_t *, int, off64_t *, size_t, unsigned)) \
	X(sendfile, ssize_t, (int, int, off_t *, size_t)) \
	X(sendfile64, ssize_t, (int, int, off64_t *, size_t)) \
	X(lseek, off_t, (int, off_t, int)) \
	X(lseek64, off64_t, (int, off64_t, int)) \
	X(fsync, int, (int)) \
	X(fdatasync, int, (int)) \
	X(stat, int, (const char *, struct stat *)) \
	X(lstat, int, (const char *, struct stat *)) \
	X(fstat, int, (int, struct stat *)) \
	X(fstatat, int, (int, const char *, struct stat *, int)) \
	X(stat64, int, (const char *, struct stat64 *)) \
	X(lstat64, int, (const char *, struct stat64 *)) \
	X(fstat64, int, (int, struct stat64 *)) \
	X(fstatat64, int, (int, const char *, struct stat64 *, int)) \
	X(__xstat, int, (int, const char *, struct stat *)) \
	X(__lxstat, int, (int, const char *, struct stat *)) \
	X(__fxstat, int, (int, int, struct stat *)) \
	X(__fxstatat, int, (int, int, const char *, struct stat *, int)) \
	X(__xstat64, int, (int, const char *, struct stat64 *)) \
	X(__lxstat64, int, (int, const char *, struct stat64 *)) \
	X(__fxstat64, int, (int, int, struct stat64 *)) \
	X(__fxstatat64, int, (int, int, const char *, struct stat64 *, int)) \
	X(statx, int, (int, const char *, int, unsigned, struct statx *)) \
	X(unlink, int, (const char *)) \
	X(unlinkat, int, (int, const char *, int)) \
	X(rename, int, (const char *, const char *)) \
	X(renameat, int, (int, const char *, int, const char *)) \
	X(renameat2, int, (int, const char *, int, const char *, unsigned)) \
	X(mkdir, int, (const char *, mode_t)) \
	X(mkdirat, int, (int, const char *, mode_t)) \
	X(rmdir, int, (const char *)) \
	X(mmap, void *, (void *, size_t, int, int, int, off_t)) \
	X(mmap64, void *, (void *, size_t, int, int, int, off64_t)) \
	X(execve, int, (const char *, char *const[], char *const[])) \
	X(execv, int, (const char *, char *const[])) \
	X(execvp, int, (const char *, char *const[])) \
	X(execvpe, int, (const char *, char *const[], char *const[])) \
	X(fexecve, int, (int, char *const[], char *const[])) \
	X(execveat, int, (int, const char *, char *const[], char *const[], int)) \
	X(_exit, void, (int)) \
	X(_Exit, void, (int))

static __thread int tls_resolving __attribute__((tls_model("initial-exec")));

/* NULL while this thread is inside dlsym (the caller then falls back). */
void *iog__resolve(const char *name, void **slot)
{
	if (tls_resolving)
		return NULL;
	int e = errno;
	tls_resolving = 1;
	void *p = dlsym(RTLD_NEXT, name);
	tls_resolving = 0;
	errno = e;
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	return p;
}

IOG_REALS(IOG_REAL_GETTER)

static void resolve_all(void)
{
#define X(n, ret, args) (void)get_##n();
	IOG_REALS(X)
#undef X
}

#define NOSYS(v) do { errno = ENOSYS; return (v); } while (0)

/* ---- descriptor table ------------------------------------------------------ */

static __thread int tls_naming __attribute__((tls_model("initial-exec")));

/* iog__file_id takes a lock: a signal handler's open or first I/O on a new
 * descriptor, arriving while this thread is inside it, gets no name (0)
 * rather than a deadlock. */
static uint64_t file_id(const char *path, uint32_t *ix)
{
	*ix = IOG_FREC_NONE;
	if (tls_naming)
		return 0;
	tls_naming = 1;
	uint64_t id = iog__file_id_ix(path, ix);
	tls_naming = 0;
	return id;
}

/* fd's path as /proc/self/fd tells it, into buf; NULL if it does not. */
static const char *fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	long n = syscall(SYS_readlinkat, AT_FDCWD, link, buf, len - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* The class of a descriptor of type t (S_IFMT) whose absolute path is abs
 * (NULL: not known): storage is a regular file or a block device, but not
 * a regular file under /proc, /sys or /dev nor a memfd; with
 * IOGRAM_ALL_FILES or under IOGRAM_INCLUDE_DIRS every file, device and
 * FIFO is; under IOGRAM_EXCLUDE_DIRS nothing is counted. */
static uint32_t fd_class(mode_t t, const char *abs)
{
	int dir = abs ? iog__scope_match(&scope, abs) : IOG_DIR_NONE;
	if (dir == IOG_DIR_EXCLUDE)
		return IOG_FD_UNTRACKED;
	int wide = scope.all_files || dir == IOG_DIR_INCLUDE;
	int sys = dir == IOG_DIR_SYSTEM || (abs && strncmp(abs, "/memfd:", 7) == 0);
	switch (t) {
	case S_IFBLK:
		return IOG_FD_TRACKED;
	case S_IFREG:
		return wide || !sys ? IOG_FD_TRACKED : IOG_FD_OTHER;
	case S_IFCHR:
	case S_IFIFO:
		return wide ? IOG_FD_TRACKED : IOG_FD_OTHER;
	case S_IFDIR:
		return wide || !sys ? IOG_FD_DIR : IOG_FD_UNTRACKED;
	default:
		return IOG_FD_UNTRACKED;
	}
}

/* Classify fd (open) into e, once: its class and, for storage, its file
 * id, position and O_DIRECT. path: as it was opened (NULL: not known, the
 * name is /proc/self/fd's and the position the kernel's); flags: its open
 * flags (-1: asked). The path is looked up only where it can decide.
 * Returns the class (IOG_FD_UNKNOWN: fd is not open). errno is not kept. */
static uint32_t fd_setup(int fd, iog_fdent *e, const char *path, long flags)
{
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) != 0)
		return IOG_FD_UNKNOWN;
	mode_t t = st.st_mode & S_IFMT;
	char buf[4096];
	/* a relative name is the file the kernel opened, by its absolute path:
	 * out.dat in two directories are two files, and one file opened as
	 * p.out and inherited as /tmp/x/p.out is one (Darshan also names files
	 * absolutely) */
	const char *abs = path && path[0] == '/' ? path : NULL;
	if (abs == NULL && (scope.user || t == S_IFREG || t == S_IFDIR))
		abs = fd_path(fd, buf, sizeof(buf));
	if (abs != NULL && abs[0] != '/')
		abs = NULL;   /* not a path (anon_inode:..., memfd:...) */
	uint32_t cls = fd_class(t, abs);
	if (cls != IOG_FD_TRACKED) {
		__atomic_store_n(&e->state, cls, __ATOMIC_RELEASE);
		return cls;
	}
	if (flags < 0)
		flags = syscall(SYS_fcntl, fd, F_GETFL, 0);
	long pos = path || t == S_IFIFO ? 0 : syscall(SYS_lseek, fd, 0L, SEEK_CUR);
	if (pos < 0)
		pos = 0;
	if (flags >= 0 && (flags & O_APPEND) && t == S_IFREG)
		pos = st.st_size;
	if (path == NULL && abs == NULL)
		abs = fd_path(fd, buf, sizeof(buf));
	if (path == NULL && abs == NULL)
		snprintf(buf, sizeof(buf), "fd:%d", fd);
	uint32_t ix;
	IOG_STORE(&e->file, file_id(abs ? abs : path ? path : buf, &ix));
	IOG_STORE(&e->frec, ix);
	IOG_STORE(&e->pos, (uint64_t)pos);
	IOG_STORE(&e->end[0], 0);
	IOG_STORE(&e->end[1], 0);
	IOG_STORE(&e->direct, (uint32_t)(flags >= 0 && (flags & O_DIRECT)));
	IOG_STORE(&e->regular, (uint32_t)(t == S_IFREG));
	__atomic_store_n(&e->state, IOG_FD_TRACKED, __ATOMIC_RELEASE);
	return cls;
}

/* A descriptor just opened through our wrappers (counted: while counting,
 * then it is classified now). Returns 1 when its open counts as a meta op:
 * it is storage or a directory (its close counts then too). */
int iog__fd_opened(int fd, const char *path, long flags, int counted)
{
	if ((unsigned)fd >= IOG_POSIX_NFD || iog__tls_agent_thread)
		return counted;
	iog_fdent *e = &iog__fdtab[fd];
	IOG_STORE(&e->file, 0);
	__atomic_store_n(&e->state, IOG_FD_UNKNOWN, __ATOMIC_RELEASE);
	uint32_t cls = IOG_FD_UNKNOWN;
	if (counted) {
		int saved = errno;
		cls = fd_setup(fd, e, path, flags);
		errno = saved;
	}
	int counts = cls == IOG_FD_TRACKED || cls == IOG_FD_DIR;
	IOG_STORE(&e->opened, (uint32_t)counts);
	return counts;
}

iog_fdent *iog__fd_classify(int fd, iog_fdent *e)
{
	int saved = errno;
	uint32_t cls = fd_setup(fd, e, NULL, -1);
	errno = saved;
	return cls == IOG_FD_TRACKED ? e : NULL;
}

/* ---- bookkeeping ----------------------------------------------------------- */

static inline int counting(void)
{
	return LIKELY(iog__posix_ready) && !iog__tls_in_agent;
}

#define io_end iog__io_end

/* A meta op from t0 to t1 (ok: it succeeded). */
static inline void meta_done(uint64_t t0, uint64_t t1, int ok, iog_metric *ops)
{
	if (!ok) {
		iog__counter_add(iog__pm.errors, 1);
		return;
	}
	iog__counter_add(ops, 1);
	iog__hist_record(iog__pm.meta_lat, t1 - t0);
}

static inline void meta_end(uint64_t t0, int ok, iog_metric *ops)
{
	meta_done(t0, ok ? iog__now_ns() : t0, ok, ops);
}

/* Meta op on a path: always counted (when counting at all). */
#define META_PATH(call, okexpr) do { \
	if (!counting()) \
		return call; \
	uint64_t t0_ = iog__now_ns(); \
	__typeof__(call) r_ = call; \
	int e_ = errno; \
	meta_end(t0_, (okexpr), iog__pm.meta_ops); \
	errno = e_; \
	return r_; \
} while (0)

/* Meta or sync op on a descriptor: counted when the descriptor is. */
#define META_FD(fd, call, okexpr, which) do { \
	iog_fdent *fe_ = iog__fd_track(fd); \
	if (fe_ == NULL) \
		return call; \
	uint64_t t0_ = iog__now_ns(); \
	__typeof__(call) r_ = call; \
	int e_ = errno; \
	uint64_t t1_ = iog__now_ns(); \
	meta_done(t0_, t1_, (okexpr), iog__pm.which); \
	if (okexpr) \
		iog__fd_meta(fe_, t0_, t1_); \
	errno = e_; \
	return r_; \
} while (0)

/* ---- open / close ------------------------------------------------------- */

static inline int needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int open_call(int dirfd, const char *path, int flags, mode_t mode, int which)
{
	switch (which) {
	case 0: { open_fn f = get_open(); return f ? f(path, flags, mode) : (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode); }
	case 1: { open64_fn f = get_open64(); return f ? f(path, flags, mode) : (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode); }
	case 2: { openat_fn f = get_openat(); return f ? f(dirfd, path, flags, mode) : (int)syscall(SYS_openat, dirfd, path, flags, mode); }
	default: { openat64_fn f = get_openat64(); return f ? f(dirfd, path, flags, mode) : (int)syscall(SYS_openat, dirfd, path, flags, mode); }
	}
}

static int do_open(int dirfd, const char *path, int flags, mode_t mode, int which)
{
	int counted = counting();
	uint64_t t0 = counted ? iog__now_ns() : 0;
	int r = open_call(dirfd, path, flags, mode, which);
	if (UNLIKELY(iog__host_emfile(r)))
		r = open_call(dirfd, path, flags, mode, which);
	r = iog__fd_made(r);
	int e = errno;
	uint64_t t1 = counted ? iog__now_ns() : 0;
	/* a failed open counts as an error: what it would have opened is not known */
	if ((r < 0 || iog__fd_opened(r, path, flags, counted)) && counted) {
		meta_done(t0, t1, r >= 0, iog__pm.meta_ops);
		if (r >= 0 && r < IOG_POSIX_NFD) {
			iog__fd_meta(&iog__fdtab[r], t0, t1);
			iog_shard *s;
			if ((flags & (O_SYNC | O_DSYNC)) &&
			    IOG_LOAD(&iog__fdtab[r].state) == IOG_FD_TRACKED && (s = iog__shard()) != NULL)
				s->counters[iog__px.sync_opens]++;
		}
	}
	errno = e;
	return r;
}

#define OPEN_MODE(flags, mode) \
	mode_t mode = 0; \
	if (needs_mode(flags)) { \
		va_list ap; \
		va_start(ap, flags); \
		mode = (mode_t)va_arg(ap, int); \
		va_end(ap); \
	}

EXPORT int open(const char *path, int flags, ...)
{
	OPEN_MODE(flags, mode);
	return do_open(AT_FDCWD, path, flags, mode, 0);
}

EXPORT int open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags, mode);
	return do_open(AT_FDCWD, path, flags, mode, 1);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags, mode);
	return do_open(dirfd, path, flags, mode, 2);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags, mode);
	return do_open(dirfd, path, flags, mode, 3);
}

EXPORT int __open_2(const char *path, int flags)
{
	return do_open(AT_FDCWD, path, flags, 0, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
	return do_open(AT_FDCWD, path, flags, 0, 1);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return do_open(dirfd, path, flags, 0, 2);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return do_open(dirfd, path, flags, 0, 3);
}

EXPORT int creat(const char *path, mode_t mode)
{
	return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 0);
}

EXPORT int creat64(const char *path, mode_t mode)
{
	return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 1);
}

/* Whether closing fd is a counted op: it was opened through us or counted. */
static inline int close_counted(int fd)
{
	if (!counting() || (unsigned)fd >= IOG_POSIX_NFD)
		return 0;
	iog_fdent *e = &iog__fdtab[fd];
	return IOG_LOAD(&e->opened) || IOG_LOAD(&e->state) == IOG_FD_TRACKED;
}

EXPORT int close(int fd)
{
	if (UNLIKELY(iog__fdg_owned_fd(fd))) {
		if (iog__fd_hidden(fd)) {
			errno = EBADF;
			return -1;
		}
		iog__fdg_forget(fd);   /* the agent closes its own */
	}
	close_fn f = get_close();
	int counted = close_counted(fd);
	iog_fdent fe = { .state = IOG_FD_UNKNOWN };
	if (counted && (unsigned)fd < IOG_POSIX_NFD)
		fe = (iog_fdent){ .state = IOG_LOAD(&iog__fdtab[fd].state),
		                  .frec = IOG_LOAD(&iog__fdtab[fd].frec) };
	iog__fd_reset(fd);
	if (!counted)
		return f ? f(fd) : (int)syscall(SYS_close, fd);
	uint64_t t0 = iog__now_ns();
	int r = f ? f(fd) : (int)syscall(SYS_close, fd);
	int e = errno;
	uint64_t t1 = iog__now_ns();
	meta_done(t0, t1, r == 0 || e == EINTR, iog__pm.meta_ops);
	if (r == 0 || e == EINTR)
		iog__fd_meta(&fe, t0, t1);
	errno = e;
	return r;
}

/* ---- data ------------------------------------------------------------------ */

/* Not storage (or not counted at all): the call, then other.* where the
 * descriptor is not storage. */
#define NOT_STORAGE(fd, op, call) do { \
	ssize_t n_ = call; \
	iog__other_io(fd, op, n_); \
	return n_; \
} while (0)

/* read/write at the descriptor's position (which they advance): posix.h's */
#define RW_POS IOG_RW_POS

/* At an explicit offset (position untouched). */
#define RW_AT(fd, op, off, call) do { \
	iog_fdent *e_ = iog__fd_track(fd); \
	if (!e_) \
		NOT_STORAGE(fd, op, call); \
	uint64_t t0_ = iog__io_begin(); \
	ssize_t r_ = call; \
	int er_ = errno; \
	io_end(e_, op, (uint64_t)(off), r_, t0_); \
	errno = er_; \
	return r_; \
} while (0)


EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	RW_POS(fd, IOG_OP_READ, CALL_OR(read, syscall(SYS_read, fd, buf, n), fd, buf, n));
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	RW_POS(fd, IOG_OP_READ, CALL_OR(__read_chk, syscall(SYS_read, fd, buf, n), fd, buf, n, buflen));
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	RW_POS(fd, IOG_OP_WRITE, CALL_OR(write, syscall(SYS_write, fd, buf, n), fd, buf, n));
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	RW_AT(fd, IOG_OP_READ, off, CALL_OR(pread, syscall(SYS_pread64, fd, buf, n, off), fd, buf, n, off));
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	RW_AT(fd, IOG_OP_READ, off, CALL_OR(pread64, syscall(SYS_pread64, fd, buf, n, off), fd, buf, n, off));
}

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	RW_AT(fd, IOG_OP_READ, off, CALL_OR(__pread_chk, syscall(SYS_pread64, fd, buf, n, off), fd, buf, n, off, buflen));
}

EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	RW_AT(fd, IOG_OP_READ, off, CALL_OR(__pread64_chk, syscall(SYS_pread64, fd, buf, n, off), fd, buf, n, off, buflen));
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	RW_AT(fd, IOG_OP_WRITE, off, CALL_OR(pwrite, syscall(SYS_pwrite64, fd, buf, n, off), fd, buf, n, off));
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	RW_AT(fd, IOG_OP_WRITE, off, CALL_OR(pwrite64, syscall(SYS_pwrite64, fd, buf, n, off), fd, buf, n, off));
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	RW_POS(fd, IOG_OP_READ, CALL_OR(readv, syscall(SYS_readv, fd, iov, n), fd, iov, n));
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	RW_POS(fd, IOG_OP_WRITE, CALL_OR(writev, syscall(SYS_writev, fd, iov, n), fd, iov, n));
}

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
	RW_AT(fd, IOG_OP_READ, off, CALL_OR(preadv, (errno = ENOSYS, -1), fd, iov, n, off));
}

EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int n, off64_t off)
{
	RW_AT(fd, IOG_OP_READ, off, CALL_OR(preadv64, (errno = ENOSYS, -1), fd, iov, n, off));
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	RW_AT(fd, IOG_OP_WRITE, off, CALL_OR(pwritev, (errno = ENOSYS, -1), fd, iov, n, off));
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t off)
{
	RW_AT(fd, IOG_OP_WRITE, off, CALL_OR(pwritev64, (errno = ENOSYS, -1), fd, iov, n, off));
}

/* preadv2/pwritev2: offset -1 means the current position (and advances it). */
#define RW_V2(fd, op, off, call) do { \
	if ((off) == -1) \
		RW_POS(fd, op, call); \
	else \
		RW_AT(fd, op, off, call); \
} while (0)

EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	RW_V2(fd, IOG_OP_READ, off, CALL_OR(preadv2, (errno = ENOSYS, -1), fd, iov, n, off, flags));
}

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	RW_V2(fd, IOG_OP_WRITE, off, CALL_OR(pwritev2, (errno = ENOSYS, -1), fd, iov, n, off, flags));
}

EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int n, off64_t off, int flags)
{
	RW_V2(fd, IOG_OP_READ, off, CALL_OR(preadv64v2, (errno = ENOSYS, -1), fd, iov, n, off, flags));
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int n, off64_t off, int flags)
{
	RW_V2(fd, IOG_OP_WRITE, off, CALL_OR(pwritev64v2, (errno = ENOSYS, -1), fd, iov, n, off, flags));
}

/* One request moving data from in to out: a read on in and a write on out,
 * each counted where its descriptor is. poff NULL: the descriptor's position. */
static void xfer_end(iog_fdent *ei, uint64_t offi, int adv_i, iog_fdent *eo, uint64_t offo,
                     int adv_o, ssize_t r, uint64_t t0)
{
	uint64_t t1 = iog__now_ns();
	iog__io_leave();
	if (r < 0) {
		iog__counter_add(iog__pm.errors, 1);
		return;
	}
	if (ei) {
		if (adv_i)
			IOG_STORE(&ei->pos, offi + (uint64_t)r);
		int s = iog__spatial(ei, IOG_OP_READ, offi, (uint64_t)r);
		iog__io_count(IOG_LOAD(&ei->file), IOG_LOAD(&ei->frec), IOG_OP_READ, offi, r, s, t0, t1);
		iog__io_direct(IOG_LOAD(&ei->direct), IOG_OP_READ, r);
	}
	if (eo) {
		if (adv_o)
			IOG_STORE(&eo->pos, offo + (uint64_t)r);
		int s = iog__spatial(eo, IOG_OP_WRITE, offo, (uint64_t)r);
		iog__io_count(IOG_LOAD(&eo->file), IOG_LOAD(&eo->frec), IOG_OP_WRITE, offo, r, s, t0, t1);
		iog__io_direct(IOG_LOAD(&eo->direct), IOG_OP_WRITE, r);
	}
}

static inline uint64_t xfer_begin(iog_fdent *ei, iog_fdent *eo)
{
	uint64_t t0 = iog__io_begin();
	if (ei && eo)
		iog__hist_record(iog__pm.qd, IOG_LOAD(&iog__inflight));
	return t0;
}

#define XFER(in, poffi, out, poffo, call) do { \
	iog_fdent *ei_ = iog__fd_track(in), *eo_ = iog__fd_track(out); \
	if (!ei_ && !eo_) { \
		ssize_t n_ = call; \
		iog__other_io(in, IOG_OP_READ, n_); \
		iog__other_io(out, IOG_OP_WRITE, n_); \
		return n_; \
	} \
	uint64_t oi_ = ei_ ? (poffi ? (uint64_t)*(poffi) : IOG_LOAD(&ei_->pos)) : 0; \
	uint64_t oo_ = eo_ ? (poffo ? (uint64_t)*(poffo) : IOG_LOAD(&eo_->pos)) : 0; \
	uint64_t t0_ = xfer_begin(ei_, eo_); \
	ssize_t r_ = call; \
	int er_ = errno; \
	xfer_end(ei_, oi_, !(poffi), eo_, oo_, !(poffo), r_, t0_); \
	if (!ei_ || !eo_) \
		iog__other_io(ei_ ? out : in, ei_ ? IOG_OP_WRITE : IOG_OP_READ, r_); \
	errno = er_; \
	return r_; \
} while (0)

EXPORT ssize_t copy_file_range(int in, off64_t *offin, int out, off64_t *offout, size_t len, unsigned flags)
{
	XFER(in, offin, out, offout, CALL_OR(copy_file_range,
		syscall(SYS_copy_file_range, in, offin, out, offout, len, flags),
		in, offin, out, offout, len, flags));
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	off_t *none = NULL;
	XFER(in, off, out, none, CALL_OR(sendfile, syscall(SYS_sendfile, out, in, off, n), out, in, off, n));
}

EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	off64_t *none = NULL;
	XFER(in, off, out, none, CALL_OR(sendfile64, syscall(SYS_sendfile, out, in, off, n), out, in, off, n));
}

/* ---- positions, sync ------------------------------------------------------- */

#define SEEK_FD(fd, call) do { \
	iog_fdent *e_ = iog__fd_track(fd); \
	if (!e_) \
		return call; \
	uint64_t t0_ = iog__now_ns(); \
	__typeof__(call) r_ = call; \
	int er_ = errno; \
	uint64_t t1_ = iog__now_ns(); \
	if (r_ >= 0) { \
		IOG_STORE(&e_->pos, (uint64_t)r_); \
		iog__fd_meta(e_, t0_, t1_); \
	} \
	meta_done(t0_, t1_, r_ >= 0, iog__pm.meta_ops); \
	errno = er_; \
	return r_; \
} while (0)

EXPORT off_t lseek(int fd, off_t off, int whence)
{
	SEEK_FD(fd, CALL_OR(lseek, syscall(SYS_lseek, fd, off, whence), fd, off, whence));
}

EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
	SEEK_FD(fd, CALL_OR(lseek64, syscall(SYS_lseek, fd, off, whence), fd, off, whence));
}

EXPORT int fsync(int fd)
{
	META_FD(fd, CALL_OR(fsync, (int)syscall(SYS_fsync, fd), fd), r_ == 0, sync_ops);
}

EXPORT int fdatasync(int fd)
{
	META_FD(fd, CALL_OR(fdatasync, (int)syscall(SYS_fdatasync, fd), fd), r_ == 0, sync_ops);
}

/* ---- stat family and namespace ops ----------------------------------------- */

#define STAT_FALLBACK(dirfd, path, buf, fl) ((int)syscall(SYS_newfstatat, dirfd, path, buf, fl))

EXPORT int stat(const char *p, struct stat *b)
{
	META_PATH(CALL_OR(stat, STAT_FALLBACK(AT_FDCWD, p, b, 0), p, b), r_ == 0);
}

EXPORT int lstat(const char *p, struct stat *b)
{
	META_PATH(CALL_OR(lstat, STAT_FALLBACK(AT_FDCWD, p, b, AT_SYMLINK_NOFOLLOW), p, b), r_ == 0);
}

EXPORT int fstat(int fd, struct stat *b)
{
	META_FD(fd, CALL_OR(fstat, (int)syscall(SYS_fstat, fd, b), fd, b), r_ == 0, meta_ops);
}

EXPORT int fstatat(int d, const char *p, struct stat *b, int fl)
{
	META_PATH(CALL_OR(fstatat, STAT_FALLBACK(d, p, b, fl), d, p, b, fl), r_ == 0);
}

EXPORT int stat64(const char *p, struct stat64 *b)
{
	META_PATH(CALL_OR(stat64, STAT_FALLBACK(AT_FDCWD, p, b, 0), p, b), r_ == 0);
}

EXPORT int lstat64(const char *p, struct stat64 *b)
{
	META_PATH(CALL_OR(lstat64, STAT_FALLBACK(AT_FDCWD, p, b, AT_SYMLINK_NOFOLLOW), p, b), r_ == 0);
}

EXPORT int fstat64(int fd, struct stat64 *b)
{
	META_FD(fd, CALL_OR(fstat64, (int)syscall(SYS_fstat, fd, b), fd, b), r_ == 0, meta_ops);
}

EXPORT int fstatat64(int d, const char *p, struct stat64 *b, int fl)
{
	META_PATH(CALL_OR(fstatat64, STAT_FALLBACK(d, p, b, fl), d, p, b, fl), r_ == 0);
}

EXPORT int __xstat(int v, const char *p, struct stat *b)
{
	META_PATH(CALL_OR(__xstat, STAT_FALLBACK(AT_FDCWD, p, b, 0), v, p, b), r_ == 0);
}

EXPORT int __lxstat(int v, const char *p, struct stat *b)
{
	META_PATH(CALL_OR(__lxstat, STAT_FALLBACK(AT_FDCWD, p, b, AT_SYMLINK_NOFOLLOW), v, p, b), r_ == 0);
}

EXPORT int __fxstat(int v, int fd, struct stat *b)
{
	META_FD(fd, CALL_OR(__fxstat, (int)syscall(SYS_fstat, fd, b), v, fd, b), r_ == 0, meta_ops);
}

EXPORT int __fxstatat(int v, int d, const char *p, struct stat *b, int fl)
{
	META_PATH(CALL_OR(__fxstatat, STAT_FALLBACK(d, p, b, fl), v, d, p, b, fl), r_ == 0);
}

EXPORT int __xstat64(int v, const char *p, struct stat64 *b)
{
	META_PATH(CALL_OR(__xstat64, STAT_FALLBACK(AT_FDCWD, p, b, 0), v, p, b), r_ == 0);
}

EXPORT int __lxstat64(int v, const char *p, struct stat64 *b)
{
	META_PATH(CALL_OR(__lxstat64, STAT_FALLBACK(AT_FDCWD, p, b, AT_SYMLINK_NOFOLLOW), v, p, b), r_ == 0);
}

EXPORT int __fxstat64(int v, int fd, struct stat64 *b)
{
	META_FD(fd, CALL_OR(__fxstat64, (int)syscall(SYS_fstat, fd, b), v, fd, b), r_ == 0, meta_ops);
}

EXPORT int __fxstatat64(int v, int d, const char *p, struct stat64 *b, int fl)
{
	META_PATH(CALL_OR(__fxstatat64, STAT_FALLBACK(d, p, b, fl), v, d, p, b, fl), r_ == 0);
}

EXPORT int statx(int d, const char *p, int fl, unsigned mask, struct statx *b)
{
	META_PATH(CALL_OR(statx, (int)syscall(SYS_statx, d, p, fl, mask, b), d, p, fl, mask, b), r_ == 0);
}

EXPORT int unlink(const char *p)
{
	META_PATH(CALL_OR(unlink, (int)syscall(SYS_unlinkat, AT_FDCWD, p, 0), p), r_ == 0);
}

EXPORT int unlinkat(int d, const char *p, int fl)
{
	META_PATH(CALL_OR(unlinkat, (int)syscall(SYS_unlinkat, d, p, fl), d, p, fl), r_ == 0);
}

EXPORT int rename(const char *a, const char *b)
{
	META_PATH(CALL_OR(rename, (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 0), a, b), r_ == 0);
}

EXPORT int renameat(int da, const char *a, int db, const char *b)
{
	META_PATH(CALL_OR(renameat, (int)syscall(SYS_renameat2, da, a, db, b, 0), da, a, db, b), r_ == 0);
}

EXPORT int renameat2(int da, const char *a, int db, const char *b, unsigned fl)
{
	META_PATH(CALL_OR(renameat2, (int)syscall(SYS_renameat2, da, a, db, b, fl), da, a, db, b, fl), r_ == 0);
}

EXPORT int mkdir(const char *p, mode_t m)
{
	META_PATH(CALL_OR(mkdir, (int)syscall(SYS_mkdirat, AT_FDCWD, p, m), p, m), r_ == 0);
}

EXPORT int mkdirat(int d, const char *p, mode_t m)
{
	META_PATH(CALL_OR(mkdirat, (int)syscall(SYS_mkdirat, d, p, m), d, p, m), r_ == 0);
}

EXPORT int rmdir(const char *p)
{
	META_PATH(CALL_OR(rmdir, (int)syscall(SYS_unlinkat, AT_FDCWD, p, AT_REMOVEDIR), p), r_ == 0);
}

/* ---- memory maps ------------------------------------------------------------ */

/* A file mapped: one op and its length, for a regular file we count. The
 * I/O through the mapping is not seen. Nothing but the table lookup is
 * added to the call (the descriptor's first use classifies it, as for I/O). */
static inline void *mmap_done(void *r, int flags, int fd, size_t len)
{
	if (r == MAP_FAILED || (flags & MAP_ANONYMOUS))
		return r;
	int e = errno;
	iog_fdent *ent = iog__fd_track(fd);
	iog_shard *s;
	if (ent && IOG_LOAD(&ent->regular) && mmap_on && LIKELY((s = iog__shard()) != NULL)) {
		s->counters[mmap_slot[0]]++;
		s->counters[mmap_slot[1]] += len;
	}
	errno = e;
	return r;
}

EXPORT void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_done(CALL_OR(mmap, (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off),
	                         a, len, prot, flags, fd, off), flags, fd, len);
}

EXPORT void *mmap64(void *a, size_t len, int prot, int flags, int fd, off64_t off)
{
	return mmap_done(CALL_OR(mmap64, (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off),
	                         a, len, prot, flags, fd, off), flags, fd, len);
}

/* ---- process lifecycle ----------------------------------------------------- */

/* Not in a vfork child (it shares our memory: the agent must not be touched)
 * nor in a raw clone the fork handlers did not see. */
static int own_process(void)
{
	return (pid_t)syscall(SYS_getpid) == __atomic_load_n(&posix_pid, __ATOMIC_RELAXED);
}

int iog__posix_own(void)
{
	return own_process();
}

static void before_exec(void)
{
	if (own_process()) {
		int e = errno;
		iog__before_exec();
		errno = e;
	}
}

/* The exec calls give a child whose environment lacks LD_PRELOAD or our
 * IOGRAM_* settings a copy with them put back (posix_env.c): execv and
 * execvp, whose environment is environ, become execve and execvpe then. */
static int call_execve(const char *p, char *const argv[], char *const envp[])
{
	return CALL_OR(execve, (int)syscall(SYS_execve, p, argv, envp), p, argv, envp);
}

EXPORT int execve(const char *p, char *const argv[], char *const envp[])
{
	IOG_CHILD_ENV(ce, envp, iog__env_setid(AT_FDCWD, p, 0), own_process());
	before_exec();
	int r = call_execve(p, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

EXPORT int execv(const char *p, char *const argv[])
{
	execv_fn f = get_execv();
	if (!f)
		NOSYS(-1);
	IOG_CHILD_ENV(ce, environ, iog__env_setid(AT_FDCWD, p, 0), own_process());
	before_exec();
	if (ce == environ)
		return f(p, argv);
	int r = call_execve(p, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

EXPORT int execvp(const char *p, char *const argv[])
{
	execvp_fn f = get_execvp();
	if (!f)
		NOSYS(-1);
	execvpe_fn fe = get_execvpe();
	IOG_CHILD_ENV(ce, environ, fe == NULL || iog__env_setid_search(p), own_process());
	before_exec();
	if (ce == environ)
		return f(p, argv);
	int r = fe(p, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

EXPORT int execvpe(const char *p, char *const argv[], char *const envp[])
{
	execvpe_fn f = get_execvpe();
	if (!f)
		NOSYS(-1);
	IOG_CHILD_ENV(ce, envp, iog__env_setid_search(p), own_process());
	before_exec();
	int r = f(p, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn f = get_fexecve();
	if (!f)
		NOSYS(-1);
	/* no envp: libc's EINVAL, as it is */
	IOG_CHILD_ENV(ce, envp, envp == NULL || iog__env_setid_fd(fd), own_process());
	before_exec();
	int r = f(fd, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

EXPORT int execveat(int d, const char *p, char *const argv[], char *const envp[], int fl)
{
	execveat_fn f = get_execveat();
	if (!f)
		NOSYS(-1);
	IOG_CHILD_ENV(ce, envp, iog__env_setid(d, p, fl), own_process());
	before_exec();
	int r = f(d, p, argv, ce, fl);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

/* execl*: gather the variadic arguments (and execle's envp) into an array,
 * on the stack when they fit: a vfork child should not call malloc. */
#define EXECL_STACK 256
#define EXECL_MAX (1u << 20)

static char **collect_args(char **stack, const char *arg0, va_list ap, char ***envp)
{
	va_list aq;
	va_copy(aq, ap);
	size_t n = 1;
	while (n < EXECL_MAX && va_arg(aq, char *) != NULL)
		n++;
	va_end(aq);
	if (n >= EXECL_MAX) {
		errno = E2BIG;
		return NULL;
	}
	char **argv = n < EXECL_STACK ? stack : malloc((n + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
	(void)va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

static int execl_done(char **argv, char **stack, int r)
{
	if (argv != stack) {
		int e = errno;
		free(argv);
		errno = e;
	}
	return r;
}

EXPORT int execl(const char *p, const char *arg, ...)
{
	char *stack[EXECL_STACK];
	va_list ap;
	va_start(ap, arg);
	char **argv = collect_args(stack, arg, ap, NULL);
	va_end(ap);
	if (!argv)
		return -1;
	return execl_done(argv, stack, execv(p, argv));
}

EXPORT int execlp(const char *p, const char *arg, ...)
{
	char *stack[EXECL_STACK];
	va_list ap;
	va_start(ap, arg);
	char **argv = collect_args(stack, arg, ap, NULL);
	va_end(ap);
	if (!argv)
		return -1;
	return execl_done(argv, stack, execvp(p, argv));
}

EXPORT int execle(const char *p, const char *arg, ...)
{
	char *stack[EXECL_STACK];
	char **envp = NULL;
	va_list ap;
	va_start(ap, arg);
	char **argv = collect_args(stack, arg, ap, &envp);
	va_end(ap);
	if (!argv)
		return -1;
	return execl_done(argv, stack, execve(p, argv, envp));
}

EXPORT void _exit(int status)
{
	if (own_process())
		iog__at_exit();
	_exit_fn f = get__exit();
	if (f)
		f(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _Exit(int status)
{
	if (own_process())
		iog__at_exit();
	_Exit_fn f = get__Exit();
	if (f)
		f(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* ---- start-up --------------------------------------------------------------- */

static void atfork_child(void)
{
	__atomic_store_n(&posix_pid, (pid_t)syscall(SYS_getpid), __ATOMIC_RELAXED);
	__atomic_store_n(&iog__inflight, 0, __ATOMIC_RELAXED);
	iog__posix_aio_atfork_child();
}

static int register_metrics(void)
{
	/* every metric of the catalog, in its order, then the hot path's names */
	iog_metric *cat[IOGP_POSIX_NMETRICS];
#define X(id, name, kind, unit, label) \
	cat[IOGP_POSIX_##id] = kind == IOGP_COUNTER ? iog_counter(name, unit) : \
	                       kind == IOGP_HISTOGRAM ? iog_histogram(name, unit, NULL) : \
	                       iog_access_metric(name);
	IOGP_POSIX_METRICS(X)
#undef X
	iog_posix_metrics *m = &iog__pm;
	m->ops[0] = cat[IOGP_POSIX_READ_OPS];
	m->ops[1] = cat[IOGP_POSIX_WRITE_OPS];
	m->bytes[0] = cat[IOGP_POSIX_READ_BYTES];
	m->bytes[1] = cat[IOGP_POSIX_WRITE_BYTES];
	m->size[0] = cat[IOGP_POSIX_READ_SIZE];
	m->size[1] = cat[IOGP_POSIX_WRITE_SIZE];
	m->lat[0] = cat[IOGP_POSIX_READ_LATENCY];
	m->lat[1] = cat[IOGP_POSIX_WRITE_LATENCY];
	m->spat[0][IOG_SPAT_CONSEC] = cat[IOGP_POSIX_READ_CONSEC];
	m->spat[0][IOG_SPAT_SEQ] = cat[IOGP_POSIX_READ_SEQ];
	m->spat[0][IOG_SPAT_RANDOM] = cat[IOGP_POSIX_READ_RANDOM];
	m->spat[1][IOG_SPAT_CONSEC] = cat[IOGP_POSIX_WRITE_CONSEC];
	m->spat[1][IOG_SPAT_SEQ] = cat[IOGP_POSIX_WRITE_SEQ];
	m->spat[1][IOG_SPAT_RANDOM] = cat[IOGP_POSIX_WRITE_RANDOM];
	m->meta_ops = cat[IOGP_POSIX_META_OPS];
	m->sync_ops = cat[IOGP_POSIX_SYNC_OPS];
	m->errors = cat[IOGP_POSIX_ERRORS];
	m->meta_lat = cat[IOGP_POSIX_META_LATENCY];
	m->qd = cat[IOGP_POSIX_QUEUE_DEPTH];
	m->access = cat[IOGP_POSIX_ACCESS];
	iog_metric *all[sizeof(*m) / sizeof(iog_metric *)];
	memcpy(all, m, sizeof(all));
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		if (all[i] == NULL)
			return -1;
	iog_posix_slots *p = &iog__ps;
	for (int op = 0; op < 2; op++) {
		p->ops[op] = m->ops[op]->slot;
		p->bytes[op] = m->bytes[op]->slot;
		p->size[op] = m->size[op]->slot;
		p->lat[op] = m->lat[op]->slot;
		for (int s = 0; s < 3; s++)
			p->spat[op][s] = m->spat[op][s]->slot;
		if (!m->size[op]->fast || !m->lat[op]->fast)
			return -1;
		m->size[op]->exact = 1;
	}
	p->errors = m->errors->slot;
	p->qd = m->qd->slot;
	/* the mmap counters, after the catalog */
	iog_metric *mm[2] = { NULL, NULL };
	int k = 0;
#define X(id, name, kind, unit, label) mm[k++] = iog_counter(name, unit);
	IOGP_POSIX_MMAP_METRICS(X)
#undef X
	if (mm[0] && mm[1]) {
		mmap_slot[0] = mm[0]->slot;
		mmap_slot[1] = mm[1]->slot;
		mmap_on = 1;
	}
	/* other.* and the O_DIRECT counters, after the catalog too */
	enum {
#define X(id, name, kind, unit, label) CLASS_##id,
		IOGP_POSIX_CLASS_METRICS(X)
#undef X
		CLASS_N
	};
	iog_metric *cm[CLASS_N];
#define X(id, name, kind, unit, label) \
	if ((cm[CLASS_##id] = iog_counter(name, unit)) == NULL) \
		return -1;
	IOGP_POSIX_CLASS_METRICS(X)
#undef X
	iog__px = (iog_posix_xslots){
		.other_ops = { cm[CLASS_OTHER_READ_OPS]->slot, cm[CLASS_OTHER_WRITE_OPS]->slot },
		.other_bytes = { cm[CLASS_OTHER_READ_BYTES]->slot, cm[CLASS_OTHER_WRITE_BYTES]->slot },
		.direct = { cm[CLASS_READ_DIRECT_OPS]->slot, cm[CLASS_WRITE_DIRECT_OPS]->slot },
		.sync_opens = cm[CLASS_SYNC_OPENS]->slot,
	};
	return m->qd->fast ? 0 : -1;
}

__attribute__((constructor)) static void posix_init(void)
{
	int e = errno;
	posix_pid = (pid_t)syscall(SYS_getpid);
	resolve_all();
	iog__posix_fd_resolve();
	iog__posix_stdio_resolve();
	iog__posix_env_init();
	iog__scope_load(&scope);
	pthread_atfork(NULL, NULL, atfork_child);
	if (iog__ensure_started() == 0 && register_metrics() == 0) {
		iog__stdio_register();
		iog__posix_signal_setup();
		__atomic_store_n(&iog__posix_ready, 1, __ATOMIC_RELEASE);
	}
	errno = e;
}
