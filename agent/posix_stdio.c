/* posix_stdio.c - the interposer's stdio layer: every stdio read, write and meta call on a storage stream, counted into stdio.*. */
/*
 * A call counts when its stream's descriptor is storage, as posix.* decides
 * it (stdout and stderr included: redirected to a regular file they count,
 * to a terminal or a pipe they do not; streams without a descriptor, such
 * as fmemopen's, never). Reads and writes: one op each, the bytes the call
 * says it moved (fread/fwrite: items * size returned; fputc & co: 1; fputs:
 * strlen; puts: strlen + 1; printf family: its return; fgets: strlen of the
 * line; getline/getdelim: their return; getw/putw: sizeof(int); fscanf: 0,
 * what it consumed is not known), a size and a latency sample. A call that
 * fails or moves nothing is an op of 0 B (as in Darshan). Meta ops: fopen,
 * fdopen, freopen (a failed one too), fclose, fflush, fseek & co, rewind,
 * ftell & co, fgetpos. glibc's own requests inside stdio never pass the
 * interposer, so posix.* keeps only what the program asks itself.
 * Each wrapper: a TLS check, the descriptor table, two clock reads and a few
 * shard records. A stdio call made inside one of ours (a printf handler, a
 * cookie stream's callback) and any on an agent thread is not counted. */
/* We define the plain and the 64 names, and the inline ones: no header
 * redirection, no inline copies of our own calls. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "iogp_metrics.h"
#include "posix.h"

int _IO_getc(FILE *);
int _IO_putc(int, FILE *);
int __fprintf_chk(FILE *, int, const char *, ...);
int __printf_chk(int, const char *, ...);
int __vfprintf_chk(FILE *, int, const char *, va_list);
int __vprintf_chk(int, const char *, va_list);
char *__fgets_chk(char *, size_t, int, FILE *);
char *__fgets_unlocked_chk(char *, size_t, int, FILE *);
size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);
size_t __fread_unlocked_chk(void *, size_t, size_t, size_t, FILE *);
ssize_t __getdelim(char **, size_t *, int, FILE *);
int __isoc99_fscanf(FILE *, const char *, ...);
int __isoc99_vfscanf(FILE *, const char *, va_list);

#define IOG_STDIO_REALS(X) \
	X(fopen, FILE *, (const char *, const char *)) \
	X(fopen64, FILE *, (const char *, const char *)) \
	X(fdopen, FILE *, (int, const char *)) \
	X(freopen, FILE *, (const char *, const char *, FILE *)) \
	X(freopen64, FILE *, (const char *, const char *, FILE *)) \
	X(fclose, int, (FILE *)) \
	X(pclose, int, (FILE *)) \
	X(fflush, int, (FILE *)) \
	X(fflush_unlocked, int, (FILE *)) \
	X(fseek, int, (FILE *, long, int)) \
	X(fseeko, int, (FILE *, off_t, int)) \
	X(fseeko64, int, (FILE *, off64_t, int)) \
	X(fsetpos, int, (FILE *, const fpos_t *)) \
	X(fsetpos64, int, (FILE *, const fpos64_t *)) \
	X(rewind, void, (FILE *)) \
	X(ftell, long, (FILE *)) \
	X(ftello, off_t, (FILE *)) \
	X(ftello64, off64_t, (FILE *)) \
	X(fgetpos, int, (FILE *, fpos_t *)) \
	X(fgetpos64, int, (FILE *, fpos64_t *)) \
	X(fread, size_t, (void *, size_t, size_t, FILE *)) \
	X(fread_unlocked, size_t, (void *, size_t, size_t, FILE *)) \
	X(__fread_chk, size_t, (void *, size_t, size_t, size_t, FILE *)) \
	X(__fread_unlocked_chk, size_t, (void *, size_t, size_t, size_t, FILE *)) \
	X(fgetc, int, (FILE *)) \
	X(getc, int, (FILE *)) \
	X(_IO_getc, int, (FILE *)) \
	X(fgetc_unlocked, int, (FILE *)) \
	X(getc_unlocked, int, (FILE *)) \
	X(getchar, int, (void)) \
	X(getchar_unlocked, int, (void)) \
	X(getw, int, (FILE *)) \
	X(fgets, char *, (char *, int, FILE *)) \
	X(fgets_unlocked, char *, (char *, int, FILE *)) \
	X(__fgets_chk, char *, (char *, size_t, int, FILE *)) \
	X(__fgets_unlocked_chk, char *, (char *, size_t, int, FILE *)) \
	X(getline, ssize_t, (char **, size_t *, FILE *)) \
	X(getdelim, ssize_t, (char **, size_t *, int, FILE *)) \
	X(__getdelim, ssize_t, (char **, size_t *, int, FILE *)) \
	X(vfscanf, int, (FILE *, const char *, va_list)) \
	X(__isoc99_vfscanf, int, (FILE *, const char *, va_list)) \
	X(fwrite, size_t, (const void *, size_t, size_t, FILE *)) \
	X(fwrite_unlocked, size_t, (const void *, size_t, size_t, FILE *)) \
	X(fputc, int, (int, FILE *)) \
	X(putc, int, (int, FILE *)) \
	X(_IO_putc, int, (int, FILE *)) \
	X(fputc_unlocked, int, (int, FILE *)) \
	X(putc_unlocked, int, (int, FILE *)) \
	X(putchar, int, (int)) \
	X(putchar_unlocked, int, (int)) \
	X(putw, int, (int, FILE *)) \
	X(fputs, int, (const char *, FILE *)) \
	X(fputs_unlocked, int, (const char *, FILE *)) \
	X(puts, int, (const char *)) \
	X(vfprintf, int, (FILE *, const char *, va_list)) \
	X(__vfprintf_chk, int, (FILE *, int, const char *, va_list))

IOG_STDIO_REALS(IOG_REAL_GETTER)

void iog__posix_stdio_resolve(void)
{
#define X(n, ret, args) (void)get_##n();
	IOG_STDIO_REALS(X)
#undef X
}

/* The real function in f, or ENOSYS and fail (only while dlsym runs). */
#define REAL(n, fail) \
	n##_fn f = get_##n(); \
	if (UNLIKELY(f == NULL)) { \
		errno = ENOSYS; \
		return fail; \
	}

/* ---- metrics ---------------------------------------------------------------- */

static struct {
	uint32_t ops[2], bytes[2], size[2], lat[2], meta;
} __attribute__((aligned(64))) sl;
static iog_metric *sm_size[2], *sm_lat[2];
static int stdio_on;

/* 1 inside one of our wrappers: the stdio calls under it are not counted. */
static __thread int tls_stdio __attribute__((tls_model("initial-exec")));

int iog__stdio_register(void)
{
	iog_metric *cat[IOGP_STDIO_NMETRICS];
#define X(id, name, kind, unit, label) \
	cat[IOGP_STDIO_##id] = kind == IOGP_COUNTER ? iog_counter(name, unit) : \
	                       iog_histogram(name, unit, NULL); \
	if (cat[IOGP_STDIO_##id] == NULL) \
		return -1;
	IOGP_STDIO_METRICS(X)
#undef X
	sm_size[0] = cat[IOGP_STDIO_READ_SIZE];
	sm_size[1] = cat[IOGP_STDIO_WRITE_SIZE];
	sm_lat[0] = cat[IOGP_STDIO_READ_LATENCY];
	sm_lat[1] = cat[IOGP_STDIO_WRITE_LATENCY];
	for (int op = 0; op < 2; op++)
		if (!sm_size[op]->fast || !sm_lat[op]->fast)
			return -1;
	sl.ops[0] = cat[IOGP_STDIO_READ_OPS]->slot;
	sl.ops[1] = cat[IOGP_STDIO_WRITE_OPS]->slot;
	sl.bytes[0] = cat[IOGP_STDIO_READ_BYTES]->slot;
	sl.bytes[1] = cat[IOGP_STDIO_WRITE_BYTES]->slot;
	for (int op = 0; op < 2; op++) {
		sl.size[op] = sm_size[op]->slot;
		sl.lat[op] = sm_lat[op]->slot;
	}
	sl.meta = cat[IOGP_STDIO_META_OPS]->slot;
	stdio_on = 1;   /* published by iog__posix_ready's release store */
	return 0;
}

/* ---- bookkeeping ------------------------------------------------------------ */

static inline int counting(void)
{
	return LIKELY(iog__posix_ready) && LIKELY(stdio_on) && !iog__tls_in_agent && !tls_stdio;
}

/* Whether a call on s counts: its descriptor is storage. */
static inline int stream_counts(FILE *s)
{
	return s != NULL && counting() && iog__fd_track(fileno_unlocked(s)) != NULL;
}

static inline int fd_storage(int fd)
{
	return (unsigned)fd < IOG_POSIX_NFD && IOG_LOAD(&iog__fdtab[fd].state) == IOG_FD_TRACKED;
}

/* A data call that began at t0 moved bytes (errno kept by the callers). */
static inline void data_count(int op, uint64_t bytes, uint64_t t0)
{
	uint64_t t1 = iog__now_ns();
	iog_shard *s = iog__shard();
	if (UNLIKELY(s == NULL))
		return;
	s->counters[sl.ops[op]]++;
	s->counters[sl.bytes[op]] += bytes;
	iog__ps_hist(s, sm_size[op], sl.size[op], bytes);
	iog__ps_hist(s, sm_lat[op], sl.lat[op], t1 - t0);
}

static inline void meta_count(void)
{
	int e = errno;
	iog_shard *s = iog__shard();
	if (LIKELY(s != NULL))
		s->counters[sl.meta]++;
	errno = e;
}

/* return call, counted as a data request of op on s moving nbytes (an
 * expression of r_, the call's result). */
#define DATA(s, op, call, nbytes) do { \
	if (!stream_counts(s)) \
		return call; \
	uint64_t t0_ = iog__now_ns(); \
	tls_stdio = 1; \
	__typeof__(call) r_ = call; \
	tls_stdio = 0; \
	int e_ = errno; \
	data_count(op, (uint64_t)(nbytes), t0_); \
	errno = e_; \
	return r_; \
} while (0)

/* return call, counted as a meta op on s. */
#define META(s, call) do { \
	if (!stream_counts(s)) \
		return call; \
	tls_stdio = 1; \
	__typeof__(call) r_ = call; \
	tls_stdio = 0; \
	meta_count(); \
	return r_; \
} while (0)

#define R IOG_OP_READ
#define W IOG_OP_WRITE

/* ---- open / close ------------------------------------------------------------ */

static FILE *do_fopen(fopen_fn f, const char *path, const char *mode)
{
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	if (!counting())
		return f(path, mode);
	tls_stdio = 1;
	FILE *r = f(path, mode);
	tls_stdio = 0;
	int e = errno;
	/* a failed fopen is an op: what it would have opened is not known */
	if (r == NULL || (iog__fd_opened(fileno_unlocked(r), path, -1, 1) &&
	                  fd_storage(fileno_unlocked(r))))
		meta_count();
	errno = e;
	return r;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	return do_fopen(get_fopen(), path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return do_fopen((fopen_fn)get_fopen64(), path, mode);
}

EXPORT FILE *fdopen(int fd, const char *mode)
{
	REAL(fdopen, NULL);
	if (!counting() || iog__fd_track(fd) == NULL)
		return f(fd, mode);
	tls_stdio = 1;
	FILE *r = f(fd, mode);
	tls_stdio = 0;
	meta_count();
	return r;
}

static FILE *do_freopen(freopen_fn f, const char *path, const char *mode, FILE *s)
{
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	int old = s ? fileno_unlocked(s) : -1;
	int counted = counting();
	tls_stdio += counted;
	FILE *r = f(path, mode, s);
	tls_stdio -= counted;
	int e = errno;
	iog__fd_reset(old);
	if (r != NULL)
		iog__fd_opened(fileno_unlocked(r), path, -1, counted && path);
	if (counted && (r == NULL || iog__fd_track(fileno_unlocked(r)) != NULL))
		meta_count();
	errno = e;
	return r;
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *s)
{
	return do_freopen(get_freopen(), path, mode, s);
}

EXPORT FILE *freopen64(const char *path, const char *mode, FILE *s)
{
	return do_freopen((freopen_fn)get_freopen64(), path, mode, s);
}

EXPORT int fclose(FILE *s)
{
	REAL(fclose, EOF);
	int fd = s ? fileno_unlocked(s) : -1;
	int counted = stream_counts(s);
	iog__fd_reset(fd);
	if (!counted)
		return f(s);
	tls_stdio = 1;
	int r = f(s);
	tls_stdio = 0;
	meta_count();
	return r;
}

EXPORT int pclose(FILE *s)
{
	REAL(pclose, -1);
	if (s)
		iog__fd_reset(fileno_unlocked(s));
	return f(s);
}

/* ---- flush, seek, tell ---------------------------------------------------------- */

EXPORT int fflush(FILE *s)
{
	REAL(fflush, EOF);
	if (s == NULL) {   /* every stream: one op */
		if (!counting())
			return f(s);
		tls_stdio = 1;
		int r = f(s);
		tls_stdio = 0;
		meta_count();
		return r;
	}
	META(s, f(s));
}

EXPORT int fflush_unlocked(FILE *s)
{
	REAL(fflush_unlocked, EOF);
	if (s == NULL)
		return fflush(s);
	META(s, f(s));
}

EXPORT int fseek(FILE *s, long off, int whence)
{
	REAL(fseek, -1);
	META(s, f(s, off, whence));
}

EXPORT int fseeko(FILE *s, off_t off, int whence)
{
	REAL(fseeko, -1);
	META(s, f(s, off, whence));
}

EXPORT int fseeko64(FILE *s, off64_t off, int whence)
{
	REAL(fseeko64, -1);
	META(s, f(s, off, whence));
}

EXPORT int fsetpos(FILE *s, const fpos_t *pos)
{
	REAL(fsetpos, -1);
	META(s, f(s, pos));
}

EXPORT int fsetpos64(FILE *s, const fpos64_t *pos)
{
	REAL(fsetpos64, -1);
	META(s, f(s, pos));
}

EXPORT void rewind(FILE *s)
{
	rewind_fn f = get_rewind();
	if (UNLIKELY(f == NULL))
		return;
	if (!stream_counts(s)) {
		f(s);
		return;
	}
	tls_stdio = 1;
	f(s);
	tls_stdio = 0;
	meta_count();
}

EXPORT long ftell(FILE *s)
{
	REAL(ftell, -1);
	META(s, f(s));
}

EXPORT off_t ftello(FILE *s)
{
	REAL(ftello, -1);
	META(s, f(s));
}

EXPORT off64_t ftello64(FILE *s)
{
	REAL(ftello64, -1);
	META(s, f(s));
}

EXPORT int fgetpos(FILE *s, fpos_t *pos)
{
	REAL(fgetpos, -1);
	META(s, f(s, pos));
}

EXPORT int fgetpos64(FILE *s, fpos64_t *pos)
{
	REAL(fgetpos64, -1);
	META(s, f(s, pos));
}

/* ---- reads ---------------------------------------------------------------------- */

EXPORT size_t fread(void *p, size_t size, size_t n, FILE *s)
{
	REAL(fread, 0);
	DATA(s, R, f(p, size, n, s), r_ * size);
}

EXPORT size_t fread_unlocked(void *p, size_t size, size_t n, FILE *s)
{
	REAL(fread_unlocked, 0);
	DATA(s, R, f(p, size, n, s), r_ * size);
}

EXPORT size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *s)
{
	REAL(__fread_chk, 0);
	DATA(s, R, f(p, plen, size, n, s), r_ * size);
}

EXPORT size_t __fread_unlocked_chk(void *p, size_t plen, size_t size, size_t n, FILE *s)
{
	REAL(__fread_unlocked_chk, 0);
	DATA(s, R, f(p, plen, size, n, s), r_ * size);
}

#define GETC(name, s, ...) \
	{ \
		REAL(name, EOF); \
		DATA(s, R, f(__VA_ARGS__), r_ != EOF); \
	}

EXPORT int fgetc(FILE *s) GETC(fgetc, s, s)
EXPORT int getc(FILE *s) GETC(getc, s, s)
EXPORT int _IO_getc(FILE *s) GETC(_IO_getc, s, s)
EXPORT int fgetc_unlocked(FILE *s) GETC(fgetc_unlocked, s, s)
EXPORT int getc_unlocked(FILE *s) GETC(getc_unlocked, s, s)
EXPORT int getchar(void) GETC(getchar, stdin, )
EXPORT int getchar_unlocked(void) GETC(getchar_unlocked, stdin, )

EXPORT int getw(FILE *s)
{
	REAL(getw, EOF);
	DATA(s, R, f(s), r_ != EOF || !(feof_unlocked(s) || ferror_unlocked(s)) ? sizeof(int) : 0);
}

static inline uint64_t line_len(const char *r)
{
	return r ? strlen(r) : 0;
}

EXPORT char *fgets(char *p, int n, FILE *s)
{
	REAL(fgets, NULL);
	DATA(s, R, f(p, n, s), line_len(r_));
}

EXPORT char *fgets_unlocked(char *p, int n, FILE *s)
{
	REAL(fgets_unlocked, NULL);
	DATA(s, R, f(p, n, s), line_len(r_));
}

EXPORT char *__fgets_chk(char *p, size_t size, int n, FILE *s)
{
	REAL(__fgets_chk, NULL);
	DATA(s, R, f(p, size, n, s), line_len(r_));
}

EXPORT char *__fgets_unlocked_chk(char *p, size_t size, int n, FILE *s)
{
	REAL(__fgets_unlocked_chk, NULL);
	DATA(s, R, f(p, size, n, s), line_len(r_));
}

EXPORT ssize_t getline(char **lp, size_t *n, FILE *s)
{
	REAL(getline, -1);
	DATA(s, R, f(lp, n, s), r_ > 0 ? r_ : 0);
}

EXPORT ssize_t getdelim(char **lp, size_t *n, int d, FILE *s)
{
	REAL(getdelim, -1);
	DATA(s, R, f(lp, n, d, s), r_ > 0 ? r_ : 0);
}

EXPORT ssize_t __getdelim(char **lp, size_t *n, int d, FILE *s)
{
	REAL(__getdelim, -1);
	DATA(s, R, f(lp, n, d, s), r_ > 0 ? r_ : 0);
}

/* fscanf: an op of 0 B (what it consumed is not known) */
static int do_vfscanf(FILE *s, const char *fmt, va_list ap)
{
	REAL(vfscanf, EOF);
	DATA(s, R, f(s, fmt, ap), 0);
}

static int do_isoc99_vfscanf(FILE *s, const char *fmt, va_list ap)
{
	REAL(__isoc99_vfscanf, EOF);
	DATA(s, R, f(s, fmt, ap), 0);
}

/* stdio.h may redirect the plain names to the C99 ones: ours are named
 * by their symbols. */
EXPORT int iog_vfscanf(FILE *s, const char *fmt, va_list ap) __asm__("vfscanf");
EXPORT int iog_fscanf(FILE *s, const char *fmt, ...) __asm__("fscanf");

EXPORT int iog_vfscanf(FILE *s, const char *fmt, va_list ap)
{
	return do_vfscanf(s, fmt, ap);
}

EXPORT int __isoc99_vfscanf(FILE *s, const char *fmt, va_list ap)
{
	return do_isoc99_vfscanf(s, fmt, ap);
}

EXPORT int iog_fscanf(FILE *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfscanf(s, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __isoc99_fscanf(FILE *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_isoc99_vfscanf(s, fmt, ap);
	va_end(ap);
	return r;
}

/* ---- writes --------------------------------------------------------------------- */

EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *s)
{
	REAL(fwrite, 0);
	DATA(s, W, f(p, size, n, s), r_ * size);
}

EXPORT size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *s)
{
	REAL(fwrite_unlocked, 0);
	DATA(s, W, f(p, size, n, s), r_ * size);
}

#define PUTC(name, s, ...) \
	{ \
		REAL(name, EOF); \
		DATA(s, W, f(__VA_ARGS__), r_ != EOF); \
	}

EXPORT int fputc(int c, FILE *s) PUTC(fputc, s, c, s)
EXPORT int putc(int c, FILE *s) PUTC(putc, s, c, s)
EXPORT int _IO_putc(int c, FILE *s) PUTC(_IO_putc, s, c, s)
EXPORT int fputc_unlocked(int c, FILE *s) PUTC(fputc_unlocked, s, c, s)
EXPORT int putc_unlocked(int c, FILE *s) PUTC(putc_unlocked, s, c, s)
EXPORT int putchar(int c) PUTC(putchar, stdout, c)
EXPORT int putchar_unlocked(int c) PUTC(putchar_unlocked, stdout, c)

EXPORT int putw(int w, FILE *s)
{
	REAL(putw, EOF);
	DATA(s, W, f(w, s), r_ == 0 ? sizeof(int) : 0);
}

EXPORT int fputs(const char *str, FILE *s)
{
	REAL(fputs, EOF);
	DATA(s, W, f(str, s), r_ >= 0 ? strlen(str) : 0);
}

EXPORT int fputs_unlocked(const char *str, FILE *s)
{
	REAL(fputs_unlocked, EOF);
	DATA(s, W, f(str, s), r_ >= 0 ? strlen(str) : 0);
}

EXPORT int puts(const char *str)
{
	REAL(puts, EOF);
	DATA(stdout, W, f(str), r_ >= 0 ? strlen(str) + 1 : 0);
}

/* printf family: the bytes it says it wrote */
static int do_vfprintf(FILE *s, const char *fmt, va_list ap)
{
	REAL(vfprintf, -1);
	DATA(s, W, f(s, fmt, ap), r_ > 0 ? r_ : 0);
}

static int do_vfprintf_chk(FILE *s, int flag, const char *fmt, va_list ap)
{
	REAL(__vfprintf_chk, -1);
	DATA(s, W, f(s, flag, fmt, ap), r_ > 0 ? r_ : 0);
}

EXPORT int vfprintf(FILE *s, const char *fmt, va_list ap)
{
	return do_vfprintf(s, fmt, ap);
}

EXPORT int vprintf(const char *fmt, va_list ap)
{
	return do_vfprintf(stdout, fmt, ap);
}

EXPORT int __vfprintf_chk(FILE *s, int flag, const char *fmt, va_list ap)
{
	return do_vfprintf_chk(s, flag, fmt, ap);
}

EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return do_vfprintf_chk(stdout, flag, fmt, ap);
}

EXPORT int fprintf(FILE *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfprintf(s, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfprintf(stdout, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __fprintf_chk(FILE *s, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfprintf_chk(s, flag, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfprintf_chk(stdout, flag, fmt, ap);
	va_end(ap);
	return r;
}
