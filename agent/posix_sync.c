/* posix_sync.c - the calls that ask for durability beyond fsync/fdatasync
 * (posix.c) and the AIO syncs (posix_aio.c): sync_file_range, syncfs, sync
 * and msync, each one posix.sync.ops with its duration in
 * posix.meta.latency; a failed one is a posix.errors (as fsync's).
 *  - sync_file_range and syncfs count on a storage descriptor, classified
 *    as every other wrapper does (once, at its first use), and on a
 *    directory of storage (syncfs(dirfd) is how `sync -f DIR` asks);
 *  - sync counts always (it asks for every file system);
 *  - msync counts when it asks for write-back (MS_SYNC or MS_ASYNC; an
 *    MS_INVALIDATE alone writes nothing) of a mapping of storage: the
 *    mapping holding addr, found in /proc/self/maps (its file classified
 *    as a descriptor's would be: a regular file or a block device, not
 *    under /proc, /sys or /dev, nor a memfd or System V segment; the
 *    IOGRAM_* scope settings apply). The look-up is outside the timed
 *    call; each thread keeps its last mapping and checks it with one
 *    readlink of /proc/self/map_files/START-END, so a program that msyncs
 *    one mapping repeatedly reads /proc/self/maps once. An address that is
 *    not mapped (ENOMEM) counts nowhere.
 * Nothing is counted before the agent is ready or on its own threads; a
 * call that arrives while dlsym runs goes to the kernel directly; errno is
 * the call's. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix.h"

#define IOG_SYNC_REALS(X) \
	X(sync_file_range, int, (int, off64_t, off64_t, unsigned)) \
	X(syncfs, int, (int)) \
	X(sync, void, (void)) \
	X(msync, int, (void *, size_t, int))

IOG_SYNC_REALS(IOG_REAL_GETTER)

static iog__scope scope;   /* IOGRAM_ALL_FILES, IOGRAM_{EXCLUDE,INCLUDE}_DIRS */
static int scope_ready;

void iog__posix_sync_resolve(void)
{
	if (__atomic_load_n(&scope_ready, __ATOMIC_ACQUIRE))
		return;
#define X(n, ret, args) (void)get_##n();
	IOG_SYNC_REALS(X)
#undef X
	int e = errno;
	iog__scope_load(&scope);
	errno = e;
	__atomic_store_n(&scope_ready, 1, __ATOMIC_RELEASE);
}

/* Before the agent is ready (posix.c's constructor, which may run before or
 * after this one): nothing here is counted until iog__posix_ready. */
__attribute__((constructor)) static void sync_init(void)
{
	iog__posix_sync_resolve();
}

static inline int counting(void)
{
	return LIKELY(iog__posix_ready) && !iog__tls_in_agent;
}

/* A sync on fd counts: it is storage, or a directory (of storage). */
static inline int sync_fd_counts(int fd)
{
	if (iog__fd_track(fd) != NULL)
		return 1;
	return counting() && (unsigned)fd < IOG_POSIX_NFD &&
	       IOG_LOAD(&iog__fdtab[fd].state) == IOG_FD_DIR;
}

/* return call, a sync on fd. */
#define SYNC_FD(fd, call) do { \
	if (!sync_fd_counts(fd)) \
		return call; \
	uint64_t t0_ = iog__now_ns(); \
	int r_ = call; \
	iog__sync_done(t0_, r_ == 0); \
	return r_; \
} while (0)

EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags)
{
	SYNC_FD(fd, CALL_OR(sync_file_range, (int)syscall(SYS_sync_file_range, fd, off, n, flags),
	                    fd, off, n, flags));
}

EXPORT int syncfs(int fd)
{
	SYNC_FD(fd, CALL_OR(syncfs, (int)syscall(SYS_syncfs, fd), fd));
}

EXPORT void sync(void)
{
	sync_fn f = get_sync();
	if (!counting()) {
		if (f)
			f();
		else
			syscall(SYS_sync);
		return;
	}
	uint64_t t0 = iog__now_ns();
	if (f)
		f();
	else
		syscall(SYS_sync);
	iog__sync_done(t0, 1);
}

/* ---- msync: the mapping's file --------------------------------------------- */

/* The class of a mapped file (what posix.c's fd_class gives its descriptor):
 * abs is its path as the kernel tells it (" (deleted)" cut off). A mapping
 * is of a regular file unless it is under /dev (a block device is storage,
 * a character device is not). */
static uint32_t map_class(const char *abs, int deleted)
{
	int dir = iog__scope_match(&scope, abs);
	if (dir == IOG_DIR_EXCLUDE)
		return IOG_FD_UNTRACKED;
	if (scope.all_files || dir == IOG_DIR_INCLUDE)
		return IOG_FD_TRACKED;
	if (strncmp(abs, "/memfd:", 7) == 0 || (deleted && strncmp(abs, "/SYSV", 5) == 0))
		return IOG_FD_OTHER;
	if (dir != IOG_DIR_SYSTEM)
		return IOG_FD_TRACKED;
	struct stat st;
	if (!deleted && syscall(SYS_newfstatat, AT_FDCWD, abs, &st, 0) == 0 && S_ISBLK(st.st_mode))
		return IOG_FD_TRACKED;
	return IOG_FD_OTHER;
}

/* FNV-1a of a path: the thread's cached mapping is the same file. */
static uint64_t path_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* The file mapped at [start, end), by /proc/self/map_files (no descriptor
 * taken): its length into path (NUL-terminated), or -1. */
static long map_file_path(uintptr_t start, uintptr_t end, char *path, size_t len)
{
	char link[80];
	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)start,
	         (unsigned long)end);
	long n = syscall(SYS_readlinkat, AT_FDCWD, link, path, len - 1);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	return n;
}

/* Parse "START-END PERMS OFFSET DEV INODE [PATH]" (a line of maps, NUL
 * terminated): 1 and the range when it holds addr, 0 when it lies below,
 * 2 when above (the lines are sorted), -1 when malformed. *path: the
 * line's path (or NULL). */
static int maps_line(const char *l, uintptr_t addr, uintptr_t *start, uintptr_t *end,
                     const char **path)
{
	char *p;
	unsigned long a = strtoul(l, &p, 16);
	if (*p != '-')
		return -1;
	unsigned long b = strtoul(p + 1, &p, 16);
	if (addr < a)
		return 2;
	if (addr >= b)
		return 0;
	*start = a;
	*end = b;
	*path = strchr(p, '/');
	return 1;
}

/* The mapping holding addr, read from /proc/self/maps: its range and its
 * path (as maps writes it) into path. 0, or -1 when not found. The
 * descriptor is the host table's for the few microseconds of the read:
 * read with pread (never an offset the host could share), closed only while
 * it is still ours. */
static int maps_find(uintptr_t addr, uintptr_t *start, uintptr_t *end, char *path, size_t plen)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st0, st1;
	int found = -1;
	if (syscall(SYS_fstat, fd, &st0) != 0)
		goto out;
	char buf[4096 + 1];
	size_t have = 0;
	uint64_t off = 0;
	int skip = 0;   /* inside a line longer than the buffer */
	/* at most 64 MiB: the kernel's limit of 65,530 mappings stays below */
	for (int guard = 0; guard < 16384 && found < 0; guard++) {
		long n = syscall(SYS_pread64, fd, buf + have, sizeof(buf) - 1 - have, (long)off);
		if (n <= 0)
			break;
		off += (uint64_t)n;
		have += (size_t)n;
		buf[have] = '\0';
		char *l = buf, *nl;
		if (skip) {
			if ((nl = memchr(buf, '\n', have)) == NULL) {
				have = 0;
				continue;
			}
			l = nl + 1;
			skip = 0;
		}
		for (;;) {
			size_t rest = have - (size_t)(l - buf);
			nl = memchr(l, '\n', rest);
			if (nl == NULL && rest < sizeof(buf) - 1) {
				memmove(buf, l, rest);
				have = rest;
				break;
			}
			/* a whole line, or the start of one longer than the buffer
			 * (its range is there; its path is map_files's) */
			if (nl)
				*nl = '\0';
			const char *p = NULL;
			int r = maps_line(l, addr, start, end, &p);
			if (r == 2 || r < 0)
				goto out;
			if (r == 1) {
				if (p != NULL) {
					snprintf(path, plen, "%s", p);
					found = 0;
				}
				goto out;
			}
			if (nl == NULL) {
				skip = 1;
				have = 0;
				break;
			}
			l = nl + 1;
		}
	}
out:
	if (syscall(SYS_fstat, fd, &st1) == 0 && st1.st_dev == st0.st_dev && st1.st_ino == st0.st_ino)
		syscall(SYS_close, fd);
	return found;
}

/* The thread's last mapping, checked by its range and file. */
static __thread struct {
	uintptr_t start, end;
	uint64_t hash;
	uint32_t cls;
} tls_map __attribute__((tls_model("initial-exec")));

/* Whether an msync at addr is of a mapping of storage. errno is not kept. */
static int map_is_storage(uintptr_t addr)
{
	char path[4096];
	long n;
	if (tls_map.end != 0 && addr >= tls_map.start && addr < tls_map.end &&
	    (n = map_file_path(tls_map.start, tls_map.end, path, sizeof(path))) > 0 &&
	    path_hash(path, (size_t)n) == tls_map.hash)
		return tls_map.cls == IOG_FD_TRACKED;
	uintptr_t start, end;
	if (maps_find(addr, &start, &end, path, sizeof(path)) != 0)
		return 0;
	/* map_files's link is the path unescaped (maps writes a newline as
	 * \012); where it cannot be read, maps's line */
	char link[4096];
	n = map_file_path(start, end, link, sizeof(link));
	char *p = n > 0 ? link : path;
	size_t len = strlen(p);
	uint64_t h = path_hash(p, len);
	int deleted = len > 10 && strcmp(p + len - 10, " (deleted)") == 0;
	if (deleted)
		p[len - 10] = '\0';
	uint32_t cls = p[0] == '/' ? map_class(p, deleted) : IOG_FD_UNTRACKED;
	if (n > 0) {
		tls_map.start = start;
		tls_map.end = end;
		tls_map.hash = h;
		tls_map.cls = cls;
	}
	return cls == IOG_FD_TRACKED;
}

EXPORT int msync(void *addr, size_t len, int flags)
{
	msync_fn f = get_msync();
	if (!counting() || !(flags & (MS_SYNC | MS_ASYNC)) || !scope_ready)
		return f ? f(addr, len, flags) : (int)syscall(SYS_msync, addr, len, flags);
	int e = errno;
	int storage = map_is_storage((uintptr_t)addr);
	errno = e;
	if (!storage)
		return f ? f(addr, len, flags) : (int)syscall(SYS_msync, addr, len, flags);
	uint64_t t0 = iog__now_ns();
	int r = f ? f(addr, len, flags) : (int)syscall(SYS_msync, addr, len, flags);
	iog__sync_done(t0, r == 0);
	return r;
}
