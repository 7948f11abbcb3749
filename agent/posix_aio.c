/* posix_aio.c - asynchronous I/O in the interposer: libaio (io_submit,
 * io_getevents, io_pgetevents, io_cancel, io_destroy; found with dlsym so we
 * need no libaio ourselves) and POSIX AIO (aio_read/aio_write, lio_listio,
 * aio_error, aio_suspend, aio_return, aio_fsync, and their 64 variants).
 *
 * A request is in flight (posix.queue_depth) from its submission until its
 * completion is reaped (io_getevents / aio_return); it is counted then, with
 * the bytes it moved, its latency from submission to the first sign of
 * completion, and its spatial class taken at submission. Requests are found
 * again by their control block's address in a fixed, lock-free table; one
 * that does not fit is simply not counted. */
/* We define both the plain and the 64 names: no header redirection. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/aio_abi.h>
#include <signal.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "posix.h"

#define EXPORT __attribute__((visibility("default")))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#define PEND_BITS 14
#define PEND_N (1u << PEND_BITS)
#define PEND_PROBE 64
#define PEND_CLAIMED ((uintptr_t)1)

typedef struct pend {
	uintptr_t key;         /* control block address; 0 free, 1 being filled */
	uint64_t ctx;          /* libaio context, 0 for POSIX AIO */
	uint64_t file, off, t0, tdone;
	uint32_t op, spat;
	uint32_t direct;       /* the descriptor was O_DIRECT */
	uint32_t frec;         /* its per-file record */
} pend;

static pend pend_tab[PEND_N];
static int pend_used;

static inline uint32_t pend_hash(uintptr_t key)
{
	return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - PEND_BITS));
}

static pend *pend_find(const void *cb)
{
	uintptr_t key = (uintptr_t)cb;
	if (!__atomic_load_n(&pend_used, __ATOMIC_RELAXED) || key <= PEND_CLAIMED)
		return NULL;
	uint32_t h = pend_hash(key);
	for (uint32_t i = 0; i < PEND_PROBE; i++) {
		pend *p = &pend_tab[(h + i) & (PEND_N - 1)];
		if (__atomic_load_n(&p->key, __ATOMIC_ACQUIRE) == key)
			return p;
	}
	return NULL;
}

static void pend_free(pend *p)
{
	__atomic_store_n(&p->key, 0, __ATOMIC_RELEASE);
}

/* Register a read or write request on fd; it is in flight from here on. */
static void pend_submit(const void *cb, uint64_t ctx, int fd, int op, uint64_t off, uint64_t len)
{
	uintptr_t key = (uintptr_t)cb;
	iog_fdent *e = iog__fd_track(fd);
	if (!e || key <= PEND_CLAIMED)
		return;
	if (!__atomic_load_n(&pend_used, __ATOMIC_RELAXED))
		__atomic_store_n(&pend_used, 1, __ATOMIC_RELAXED);
	uint32_t h = pend_hash(key);
	for (uint32_t i = 0; i < PEND_PROBE; i++) {
		pend *p = &pend_tab[(h + i) & (PEND_N - 1)];
		uintptr_t zero = 0;
		if (__atomic_load_n(&p->key, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&p->key, &zero, PEND_CLAIMED, 0,
		                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		p->ctx = ctx;
		p->file = IOG_LOAD(&e->file);
		p->frec = IOG_LOAD(&e->frec);
		p->off = off;
		p->op = (uint32_t)op;
		p->spat = (uint32_t)iog__spatial(e, op, off, len);
		p->direct = IOG_LOAD(&e->direct);
		p->tdone = 0;
		p->t0 = iog__io_begin();
		__atomic_store_n(&p->key, key, __ATOMIC_RELEASE);
		return;
	}
}

static void pend_done(pend *p, int64_t res)
{
	uint64_t t1 = __atomic_load_n(&p->tdone, __ATOMIC_RELAXED);
	if (t1 == 0)
		t1 = iog__now_ns();
	iog__io_leave();
	iog__io_count(p->file, p->frec, (int)p->op, p->off, res, (int)p->spat, p->t0, t1);
	iog__io_direct(p->direct, (int)p->op, res);
	pend_free(p);
}

/* Dropped without completing (submission failed, cancelled, context gone). */
static void pend_drop(pend *p)
{
	iog__io_leave();
	pend_free(p);
}

static void mark_done(const void *cb)
{
	pend *p = pend_find(cb);
	if (p && __atomic_load_n(&p->tdone, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&p->tdone, iog__now_ns(), __ATOMIC_RELAXED);
}

static void count_sync(int fd)
{
	if (iog__fd_track(fd))
		iog__counter_add(iog__pm.sync_ops, 1);
}

void iog__posix_aio_atfork_child(void)
{
	/* The child inherits no AIO context and no AIO threads. */
	if (__atomic_load_n(&pend_used, __ATOMIC_RELAXED))
		memset(pend_tab, 0, sizeof(pend_tab));
}

static void *real(const char *name, void **slot)
{
	void *f = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (UNLIKELY(f == NULL)) {
		int e = errno;
		f = dlsym(RTLD_NEXT, name);
		errno = e;
		__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	}
	return f;
}

#define REAL(type, name) ({ static void *s_; (type)real(#name, &s_); })

/* ---- libaio -------------------------------------------------------------- */

typedef int (*io_submit_fn)(aio_context_t, long, struct iocb **);
typedef int (*io_getevents_fn)(aio_context_t, long, long, struct io_event *, struct timespec *);
typedef int (*io_pgetevents_fn)(aio_context_t, long, long, struct io_event *, struct timespec *,
                                sigset_t *);
typedef int (*io_cancel_fn)(aio_context_t, struct iocb *, struct io_event *);
typedef int (*io_destroy_fn)(aio_context_t);

static void libaio_submit_one(aio_context_t ctx, struct iocb *cb)
{
	if (!cb)
		return;
	int fd = (int)cb->aio_fildes;
	uint64_t off = (uint64_t)cb->aio_offset;
	switch (cb->aio_lio_opcode) {
	case IOCB_CMD_PREAD:
		pend_submit(cb, ctx, fd, IOG_OP_READ, off, cb->aio_nbytes);
		break;
	case IOCB_CMD_PWRITE:
		pend_submit(cb, ctx, fd, IOG_OP_WRITE, off, cb->aio_nbytes);
		break;
	case IOCB_CMD_PREADV:
	case IOCB_CMD_PWRITEV: {
		const struct iovec *iov = (const struct iovec *)(uintptr_t)cb->aio_buf;
		uint64_t len = 0;
		for (uint64_t i = 0; iov && i < cb->aio_nbytes && i < 1024; i++)
			len += iov[i].iov_len;
		pend_submit(cb, ctx, fd, cb->aio_lio_opcode == IOCB_CMD_PREADV ?
		            IOG_OP_READ : IOG_OP_WRITE, off, len);
		break;
	}
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		count_sync(fd);
		break;
	default:
		break;
	}
}

EXPORT int io_submit(aio_context_t ctx, long nr, struct iocb **ios)
{
	io_submit_fn f = REAL(io_submit_fn, io_submit);
	if (!f)
		return -ENOSYS;
	if (!iog__posix_ready || iog__tls_in_agent || nr <= 0 || !ios)
		return f(ctx, nr, ios);
	int saved = errno;
	for (long i = 0; i < nr; i++)
		libaio_submit_one(ctx, ios[i]);
	errno = saved;
	int r = f(ctx, nr, ios);
	saved = errno;
	for (long i = r < 0 ? 0 : r; i < nr; i++) {
		pend *p = pend_find(ios[i]);
		if (p)
			pend_drop(p);
	}
	if (r < 0)
		iog__counter_add(iog__pm.errors, 1);
	errno = saved;
	return r;
}

static void libaio_reap(struct io_event *ev, int n)
{
	int saved = errno;
	for (int i = 0; i < n; i++) {
		pend *p = pend_find((const void *)(uintptr_t)ev[i].obj);
		if (p)
			pend_done(p, ev[i].res < 0 ? -1 : ev[i].res);
	}
	errno = saved;
}

EXPORT int io_getevents(aio_context_t ctx, long min_nr, long nr, struct io_event *ev,
                        struct timespec *tmo)
{
	io_getevents_fn f = REAL(io_getevents_fn, io_getevents);
	if (!f)
		return -ENOSYS;
	int r = f(ctx, min_nr, nr, ev, tmo);
	if (r > 0 && ev)
		libaio_reap(ev, r);
	return r;
}

EXPORT int io_pgetevents(aio_context_t ctx, long min_nr, long nr, struct io_event *ev,
                         struct timespec *tmo, sigset_t *sig)
{
	io_pgetevents_fn f = REAL(io_pgetevents_fn, io_pgetevents);
	if (!f)
		return -ENOSYS;
	int r = f(ctx, min_nr, nr, ev, tmo, sig);
	if (r > 0 && ev)
		libaio_reap(ev, r);
	return r;
}

EXPORT int io_cancel(aio_context_t ctx, struct iocb *cb, struct io_event *res)
{
	io_cancel_fn f = REAL(io_cancel_fn, io_cancel);
	if (!f)
		return -ENOSYS;
	int r = f(ctx, cb, res);
	if (r == 0) {
		pend *p = pend_find(cb);
		if (p)
			pend_drop(p);
	}
	return r;
}

EXPORT int io_destroy(aio_context_t ctx)
{
	io_destroy_fn f = REAL(io_destroy_fn, io_destroy);
	if (!f)
		return -ENOSYS;
	int r = f(ctx);
	if (__atomic_load_n(&pend_used, __ATOMIC_RELAXED) && ctx != 0) {
		for (uint32_t i = 0; i < PEND_N; i++) {
			pend *p = &pend_tab[i];
			if (__atomic_load_n(&p->key, __ATOMIC_ACQUIRE) > PEND_CLAIMED && p->ctx == ctx)
				pend_drop(p);
		}
	}
	return r;
}

/* ---- POSIX AIO -------------------------------------------------------------- */

typedef int (*aio_rw_fn)(struct aiocb *);
typedef ssize_t (*aio_return_fn)(struct aiocb *);
typedef int (*aio_error_fn)(const struct aiocb *);
typedef int (*aio_suspend_fn)(const struct aiocb *const[], int, const struct timespec *);
typedef int (*lio_listio_fn)(int, struct aiocb *const[], int, struct sigevent *);
typedef int (*aio_fsync_fn)(int, struct aiocb *);

static int posix_submit(aio_rw_fn f, struct aiocb *cb, int op)
{
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	if (!cb || !iog__posix_ready || iog__tls_in_agent)
		return f(cb);
	pend_submit(cb, 0, cb->aio_fildes, op, (uint64_t)cb->aio_offset, cb->aio_nbytes);
	int r = f(cb);
	if (r != 0) {
		int e = errno;
		pend *p = pend_find(cb);
		if (p) {
			pend_drop(p);
			iog__counter_add(iog__pm.errors, 1);
		}
		errno = e;
	}
	return r;
}

EXPORT int aio_read(struct aiocb *cb)
{
	return posix_submit(REAL(aio_rw_fn, aio_read), cb, IOG_OP_READ);
}

EXPORT int aio_read64(struct aiocb64 *cb)
{
	return posix_submit(REAL(aio_rw_fn, aio_read64), (struct aiocb *)cb, IOG_OP_READ);
}

EXPORT int aio_write(struct aiocb *cb)
{
	return posix_submit(REAL(aio_rw_fn, aio_write), cb, IOG_OP_WRITE);
}

EXPORT int aio_write64(struct aiocb64 *cb)
{
	return posix_submit(REAL(aio_rw_fn, aio_write64), (struct aiocb *)cb, IOG_OP_WRITE);
}

static int posix_lio(lio_listio_fn f, int mode, struct aiocb *const list[], int n, struct sigevent *sig)
{
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	if (iog__posix_ready && !iog__tls_in_agent && list) {
		for (int i = 0; i < n; i++) {
			struct aiocb *cb = list[i];
			if (cb && (cb->aio_lio_opcode == LIO_READ || cb->aio_lio_opcode == LIO_WRITE))
				pend_submit(cb, 0, cb->aio_fildes,
				            cb->aio_lio_opcode == LIO_READ ? IOG_OP_READ : IOG_OP_WRITE,
				            (uint64_t)cb->aio_offset, cb->aio_nbytes);
		}
	}
	/* Requests that were not queued get an error status and are reaped
	 * (as errors) by the caller's aio_return like the others. */
	int r = f(mode, list, n, sig);
	if (mode == LIO_WAIT && list) {
		int e = errno;
		for (int i = 0; i < n; i++)
			if (list[i])
				mark_done(list[i]);
		errno = e;
	}
	return r;
}

EXPORT int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sig)
{
	return posix_lio(REAL(lio_listio_fn, lio_listio), mode, list, n, sig);
}

EXPORT int lio_listio64(int mode, struct aiocb64 *const list[], int n, struct sigevent *sig)
{
	return posix_lio(REAL(lio_listio_fn, lio_listio64), mode, (struct aiocb *const *)list, n, sig);
}

static int posix_error(aio_error_fn f, const struct aiocb *cb)
{
	if (!f)
		return ENOSYS;
	int r = f(cb);
	if (r != EINPROGRESS && r != -1) {
		int e = errno;
		mark_done(cb);
		errno = e;
	}
	return r;
}

EXPORT int aio_error(const struct aiocb *cb)
{
	return posix_error(REAL(aio_error_fn, aio_error), cb);
}

EXPORT int aio_error64(const struct aiocb64 *cb)
{
	return posix_error(REAL(aio_error_fn, aio_error64), (const struct aiocb *)cb);
}

static int posix_suspend(aio_suspend_fn f, aio_error_fn err, const struct aiocb *const list[], int n,
                         const struct timespec *tmo)
{
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	int r = f(list, n, tmo);
	if (r == 0 && list && err && __atomic_load_n(&pend_used, __ATOMIC_RELAXED)) {
		int e = errno;
		for (int i = 0; i < n; i++) {
			pend *p = list[i] ? pend_find(list[i]) : NULL;
			if (p && __atomic_load_n(&p->tdone, __ATOMIC_RELAXED) == 0 && err(list[i]) != EINPROGRESS)
				mark_done(list[i]);
		}
		errno = e;
	}
	return r;
}

EXPORT int aio_suspend(const struct aiocb *const list[], int n, const struct timespec *tmo)
{
	return posix_suspend(REAL(aio_suspend_fn, aio_suspend), REAL(aio_error_fn, aio_error),
	                     list, n, tmo);
}

EXPORT int aio_suspend64(const struct aiocb64 *const list[], int n, const struct timespec *tmo)
{
	return posix_suspend(REAL(aio_suspend_fn, aio_suspend64), REAL(aio_error_fn, aio_error64),
	                     (const struct aiocb *const *)list, n, tmo);
}

static ssize_t posix_return(aio_return_fn f, struct aiocb *cb)
{
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	ssize_t r = f(cb);
	int e = errno;
	pend *p = pend_find(cb);
	if (p)
		pend_done(p, r);
	errno = e;
	return r;
}

EXPORT ssize_t aio_return(struct aiocb *cb)
{
	return posix_return(REAL(aio_return_fn, aio_return), cb);
}

EXPORT ssize_t aio_return64(struct aiocb64 *cb)
{
	return posix_return(REAL(aio_return_fn, aio_return64), (struct aiocb *)cb);
}

static int posix_fsync(aio_fsync_fn f, int op, struct aiocb *cb)
{
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	int r = f(op, cb);
	if (r == 0 && cb) {
		int e = errno;
		count_sync(cb->aio_fildes);
		errno = e;
	}
	return r;
}

EXPORT int aio_fsync(int op, struct aiocb *cb)
{
	return posix_fsync(REAL(aio_fsync_fn, aio_fsync), op, cb);
}

EXPORT int aio_fsync64(int op, struct aiocb64 *cb)
{
	return posix_fsync(REAL(aio_fsync_fn, aio_fsync64), op, (struct aiocb *)cb);
}
