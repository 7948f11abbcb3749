/* posix.h - state shared by the POSIX interposer's wrappers (posix.c), its
 * asynchronous I/O wrappers (posix_aio.c) and its stdio wrappers
 * (posix_stdio.c). Not installed. */
#ifndef IOG_POSIX_H
#define IOG_POSIX_H

#include <errno.h>
#include <stdint.h>

#include "agent.h"

/* Descriptors at or beyond this are never tracked. */
#define IOG_POSIX_NFD 65536

/* A descriptor's class, found once (at open, or at its first use when it
 * was inherited, duplicated or made otherwise): TRACKED is storage (the
 * posix.* metrics), OTHER is what is not (pipes, FIFOs, character devices,
 * files under /proc, /sys and /dev: other.* counters), DIR a directory (its
 * open and close are meta ops), UNTRACKED never counted (sockets,
 * anonymous inodes, IOGRAM_EXCLUDE_DIRS). */
enum { IOG_FD_UNKNOWN = 0, IOG_FD_TRACKED = 1, IOG_FD_UNTRACKED = 2, IOG_FD_OTHER = 3, IOG_FD_DIR = 4 };
enum { IOG_SPAT_CONSEC = 0, IOG_SPAT_SEQ = 1, IOG_SPAT_RANDOM = 2 };

/* One per descriptor; fields are read and written with relaxed atomics
 * (threads sharing a descriptor race benignly, as the kernel's own offset
 * would). Cache-line sized so threads on neighbouring descriptors do not
 * share a line. */
typedef struct iog_fdent {
	uint64_t file;        /* file id (0: not known yet) */
	uint64_t pos;         /* our copy of the file offset */
	uint64_t end[2];      /* end of the previous read / write (IOG_OP_*) */
	uint32_t state;       /* IOG_FD_* */
	uint32_t opened;      /* opened through our wrappers: its open was counted */
	uint32_t direct;      /* O_DIRECT (at open, or by fcntl F_SETFL) */
	uint32_t regular;     /* a regular file (mmap counts only those) */
	uint32_t frec;        /* its per-file record (agent.h), IOG_FREC_NONE: none */
	uint32_t pad32;
	uint64_t pad;
} __attribute__((aligned(64))) iog_fdent;

typedef struct iog_posix_metrics {
	iog_metric *ops[2], *bytes[2], *size[2], *lat[2], *spat[2][3];
	iog_metric *meta_ops, *sync_ops, *errors, *meta_lat, *qd, *access;
} iog_posix_metrics;

/* The hot path's copy of the slots: one cache line instead of a line of each
 * (large, 8 KiB-strided) iog_metric. All our histograms are native k=4. */
typedef struct iog_posix_slots {
	uint32_t ops[2], bytes[2], size[2], lat[2], spat[2][3];
	uint32_t errors, qd;
} __attribute__((aligned(64))) iog_posix_slots;

/* The counters beside the storage metrics: requests on what is not
 * storage (other.*, IOG_FD_OTHER) and on O_DIRECT descriptors. */
typedef struct iog_posix_xslots {
	uint32_t other_ops[2], other_bytes[2], direct[2];
	uint32_t sync_opens;
} __attribute__((aligned(64))) iog_posix_xslots;

extern iog_posix_slots iog__ps;
extern iog_posix_xslots iog__px;
extern iog_posix_metrics iog__pm;
extern int iog__posix_ready;
extern iog_fdent iog__fdtab[IOG_POSIX_NFD];
extern uint64_t iog__inflight;

iog_fdent *iog__fd_classify(int fd, iog_fdent *e);
void iog__posix_aio_atfork_child(void);

#define IOG_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define IOG_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* The descriptor's entry when its I/O is to be counted, else NULL. */
static inline iog_fdent *iog__fd_track(int fd)
{
	if (__builtin_expect(!iog__posix_ready || iog__tls_in_agent ||
	                     (unsigned)fd >= IOG_POSIX_NFD, 0))
		return NULL;
	iog_fdent *e = &iog__fdtab[fd];
	uint32_t st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(st == IOG_FD_TRACKED, 1))
		return e;
	return st == IOG_FD_UNKNOWN ? iog__fd_classify(fd, e) : NULL;
}

/* A request on a descriptor: counted in other.* when it is not storage
 * (nothing else: no time taken, no histogram). errno is kept. */
static inline void iog__other_io(int fd, int op, int64_t ret)
{
	if (ret < 0 || (unsigned)fd >= IOG_POSIX_NFD || iog__tls_in_agent ||
	    IOG_LOAD(&iog__fdtab[fd].state) != IOG_FD_OTHER)
		return;
	int e = errno;
	iog_shard *s = iog__shard();
	if (__builtin_expect(s != NULL, 1)) {
		s->counters[iog__px.other_ops[op]]++;
		s->counters[iog__px.other_bytes[op]] += (uint64_t)ret;
	}
	errno = e;
}

/* A successful request on a descriptor that was O_DIRECT. */
static inline void iog__io_direct(uint32_t direct, int op, int64_t ret)
{
	if (__builtin_expect(direct != 0, 0) && ret >= 0) {
		iog_shard *s = iog__shard();
		if (s != NULL)
			s->counters[iog__px.direct[op]]++;
	}
}

/* Darshan's spatial classes, made a partition: consecutive starts where the
 * previous request on the descriptor ended, sequential after that, random
 * before it. The first request compares with offset 0. */
static inline int iog__spatial(iog_fdent *e, int op, uint64_t off, uint64_t len)
{
	uint64_t prev = IOG_LOAD(&e->end[op]);
	IOG_STORE(&e->end[op], off + len);
	return off == prev ? IOG_SPAT_CONSEC : off > prev ? IOG_SPAT_SEQ : IOG_SPAT_RANDOM;
}

/* What iog__hist_record does for a fast (native k=4) metric, with the
 * shard and slot at hand. */
static inline void iog__ps_hist(iog_shard *s, iog_metric *m, uint32_t slot, uint64_t v)
{
	uint32_t *c = s->hist[slot];
	if (__builtin_expect(c != NULL, 1))
		c[iogp_native_index(v, IOG_NATIVE_K)]++;
	else
		iog__hist_record_slow(s, m, v, 1);
}

/* A data request starts: it is in flight, and the depth it sees (itself
 * included) is recorded. */
static inline uint64_t iog__io_begin(void)
{
	uint64_t q = __atomic_add_fetch(&iog__inflight, 1, __ATOMIC_RELAXED);
	iog_shard *s = iog__shard();
	if (__builtin_expect(s != NULL, 1))
		iog__ps_hist(s, iog__pm.qd, iog__ps.qd, q);
	return iog__now_ns();
}

static inline void iog__io_leave(void)
{
	__atomic_sub_fetch(&iog__inflight, 1, __ATOMIC_RELAXED);
}

/* Count a finished data request (ret < 0: failed, counted as an error). */
static inline __attribute__((always_inline)) void iog__io_count(uint64_t file, uint32_t ix, int op,
                                                                uint64_t off, int64_t ret, int spat,
                                                                uint64_t t0, uint64_t t1)
{
	const iog_posix_slots *p = &iog__ps;
	iog_shard *s = iog__shard();
	if (__builtin_expect(s == NULL, 0))
		return;
	if (ret < 0) {
		s->counters[p->errors]++;
		return;
	}
	s->counters[p->ops[op]]++;
	s->counters[p->bytes[op]] += (uint64_t)ret;
	s->counters[p->spat[op][spat]]++;
	iog__size_record(s, iog__pm.size[op], p->size[op], (uint64_t)ret);
	iog__ps_hist(s, iog__pm.lat[op], p->lat[op], t1 - t0);
	iog__frec_io(s, ix, IOGP_FR_POSIX, op, (uint64_t)ret, spat, t0, t1);
	iog__access(iog__pm.access, file, op, off, (uint64_t)ret, t0);
}

/* A meta op on a counted descriptor's file, from t0 to t1. */
static inline void iog__fd_meta(const iog_fdent *e, uint64_t t0, uint64_t t1)
{
	iog_shard *s;
	if (e != NULL && __atomic_load_n(&e->state, __ATOMIC_RELAXED) == IOG_FD_TRACKED &&
	    (s = iog__shard()) != NULL)
		iog__frec_meta(s, IOG_LOAD(&e->frec), IOGP_FR_POSIX, t0, t1);
}

/* ---- real functions (dlsym RTLD_NEXT), shared by the wrappers' files ---- */
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define EXPORT __attribute__((visibility("default")))

/* NULL while this thread is inside dlsym (the caller then falls back). */
void *iog__resolve(const char *name, void **slot);

/* X(name, return type, (argument types)): real_name and get_name() */
#define IOG_REAL_GETTER(n, ret, args) \
	typedef ret (*n##_fn) args; \
	static n##_fn real_##n; \
	static inline n##_fn get_##n(void) \
	{ \
		n##_fn f = __atomic_load_n(&real_##n, __ATOMIC_RELAXED); \
		if (UNLIKELY(f == NULL)) \
			f = (n##_fn)iog__resolve(#n, (void **)&real_##n); \
		return f; \
	}
#define CALL_OR(fn, fallback, ...) ({ __typeof__(get_##fn()) f_ = get_##fn(); f_ ? f_(__VA_ARGS__) : (fallback); })

/* posix_stdio.c: a stream's position as stdio sees it (its logical offset,
 * not the descriptor's), kept per descriptor for the stdio layer's access
 * samples and spatial classes. tag is the FILE * it describes (with
 * IOG_SS_APPEND: writes go to the end, wherever that is), 0 when nothing is
 * known (the stream is then asked once, at its first counted call). */
#define IOG_SS_UNKNOWN UINT64_MAX
#define IOG_SS_APPEND ((uintptr_t)1)
typedef struct iog_sstream {
	uintptr_t tag;
	uint64_t pos;         /* IOG_SS_UNKNOWN: not known */
	uint64_t end[2];      /* end of the previous read / write (IOG_OP_*) */
	uintptr_t rptr;       /* the stream's read pointer after our last call */
	uint64_t pending;     /* bytes in its write buffer after our last call */
	uint64_t pad[2];
} __attribute__((aligned(64))) iog_sstream;
extern iog_sstream iog__sstab[IOG_POSIX_NFD];

/* Forget what we knew of a descriptor (closed, replaced or new). The table
 * describes the host's numbers: the agent's threads have a table of their
 * own (iog__fdg_private), their numbers are not these. */
static inline void iog__fd_reset(int fd)
{
	if ((unsigned)fd < IOG_POSIX_NFD && !iog__tls_agent_thread) {
		iog_fdent *e = &iog__fdtab[fd];
		__atomic_store_n(&e->state, IOG_FD_UNKNOWN, __ATOMIC_RELEASE);
		IOG_STORE(&e->opened, 0);
		IOG_STORE(&e->file, 0);
		IOG_STORE(&iog__sstab[fd].tag, 0);
	}
}

/* An agent descriptor seen from a host thread: to the host it is a number
 * that is not open (EBADF). */
static inline int iog__fd_hidden(int fd)
{
	return UNLIKELY(iog__fdg_owned_fd(fd)) && !iog__tls_in_agent;
}

/* posix_fd.c: descriptors the agent creates on its own threads go into its
 * band; the host's EMFILE makes the agent give its descriptors back. */
int iog__fd_made(int r);

/* A host call failed with EMFILE while the agent holds descriptors: the
 * agent steps aside (stops, closes them) and the call is tried once more. */
static inline int iog__host_emfile(int r)
{
	if (LIKELY(r >= 0) || errno != EMFILE || iog__tls_in_agent || iog__fdg_count() == 0)
		return 0;
	iog__surrender();
	errno = EMFILE;
	return 1;
}
void iog__posix_fd_resolve(void);

/* posix_env.c: a child started with an environment that lacks LD_PRELOAD
 * or the IOGRAM_* settings we started with gets them back, in a new array. */
#define IOG_ENV_STACK 16384   /* bytes of the new array on the caller's stack */
void iog__posix_env_init(void);           /* resolve, note our settings */
/* posix_signal.c: SIGTERM, SIGINT, SIGHUP at their default send the finals first */
void iog__posix_signal_setup(void);
int iog__posix_own(void);                 /* not a vfork child nor a raw clone (posix.c) */
size_t iog__env_need(char *const envp[]); /* bytes of the new array; 0: envp as it is */
char **iog__env_fill(char *const envp[], void *buf, size_t need);
void *iog__env_map(size_t need);          /* larger arrays: a private mapping, or NULL */
void iog__env_unmap(void *p, size_t need);
/* 1 for a set-user-ID or set-group-ID target: its environment is left alone */
int iog__env_setid(int dirfd, const char *path, int flags);
int iog__env_setid_fd(int fd);
int iog__env_setid_search(const char *file);   /* found on PATH as execvp would */

/* Declares char *const *var: envp itself, or (when it needs our settings
 * and setid is false) a new array on the stack of the calling function, or
 * mapped when large and map_ok (never in a vfork child). No malloc. After
 * the call that used it (when that call returns), IOG_CHILD_ENV_DONE(var)
 * (errno kept). */
#define IOG_CHILD_ENV(var, envp, setid, map_ok) \
	size_t var##_need = iog__env_need(envp); \
	char *const *var = (envp); \
	void *var##_map = NULL; \
	if (UNLIKELY(var##_need != 0) && !(setid)) { \
		void *var##_b = var##_need <= IOG_ENV_STACK ? __builtin_alloca(var##_need) : \
		                (map_ok) ? (var##_map = iog__env_map(var##_need)) : NULL; \
		if (var##_b) \
			var = iog__env_fill(envp, var##_b, var##_need); \
	}
#define IOG_CHILD_ENV_DONE(var) iog__env_unmap(var##_map, var##_need)

/* posix.c: a descriptor just opened (by us or by stdio): classified when
 * counted; 1 when it is storage or a directory. */
int iog__fd_opened(int fd, const char *path, long flags, int counted);

/* posix_stdio.c: the stdio layer (stdio.*), its own metrics registered
 * after posix.*'s. */
void iog__posix_stdio_resolve(void);
int iog__stdio_register(void);   /* 0, or -1: stdio is not counted */

/* ---- shared by wrappers outside posix.c --------------------------------- */

/* End of a synchronous data request at offset off (started with
 * iog__io_begin): counted, classified, sampled, as posix.c's read and
 * write are. */
static inline void iog__io_end(iog_fdent *e, int op, uint64_t off, int64_t ret, uint64_t t0)
{
	uint64_t t1 = iog__now_ns();
	iog__io_leave();
	int spat = ret >= 0 ? iog__spatial(e, op, off, (uint64_t)ret) : 0;
	iog__io_count(IOG_LOAD(&e->file), IOG_LOAD(&e->frec), op, off, ret, spat, t0, t1);
	iog__io_direct(IOG_LOAD(&e->direct), op, ret);
}

/* return call, a data request at fd's position (which it advances by what
 * it returns) counted as write() counts it: posix.* on storage, other.*
 * on what is not, nothing on what is never counted. errno is the call's.
 * For calls that write through a descriptor without passing write() (the
 * dprintf family). */
#define IOG_RW_POS(fd, op, call) do { \
	iog_fdent *e_ = iog__fd_track(fd); \
	if (!e_) { \
		ssize_t n_ = call; \
		iog__other_io(fd, op, n_); \
		return n_; \
	} \
	uint64_t off_ = IOG_LOAD(&e_->pos); \
	uint64_t t0_ = iog__io_begin(); \
	ssize_t r_ = call; \
	int er_ = errno; \
	if (r_ > 0) \
		IOG_STORE(&e_->pos, off_ + (uint64_t)r_); \
	iog__io_end(e_, op, off_, r_, t0_); \
	errno = er_; \
	return r_; \
} while (0)

/* A sync op (posix.sync.ops, its latency in posix.meta.latency; a failed
 * one in posix.errors) from t0 to now. errno is kept. */
static inline void iog__sync_done(uint64_t t0, int ok)
{
	int e = errno;
	if (!ok) {
		iog__counter_add(iog__pm.errors, 1);
	} else {
		iog__counter_add(iog__pm.sync_ops, 1);
		iog__hist_record(iog__pm.meta_lat, iog__now_ns() - t0);
	}
	errno = e;
}

/* posix_stdio.c, for the stdio wrappers in other files (posix_wide.c): a
 * call on s counts when iog__stdio_enter says 1 (its start noted in c);
 * then iog__stdio_leave after it counts one op of op, 0 B, and forgets the
 * stream's position (errno kept). */
typedef struct iog_stdio_call {
	iog_fdent *e;
	uint64_t off, t0;
	int fd;
} iog_stdio_call;
struct _IO_FILE;
int iog__stdio_enter(struct _IO_FILE *s, iog_stdio_call *c);
void iog__stdio_leave(const iog_stdio_call *c, struct _IO_FILE *s, int op);

/* posix_sync.c: the sync calls posix.c does not wrap (sync_file_range,
 * syncfs, sync, msync). */
void iog__posix_sync_resolve(void);

#endif
