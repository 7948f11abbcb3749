/* posix_wide.c - the stdio layer's wide-character calls, counted into
 * stdio.* as posix_stdio.c counts the byte calls: a call counts when its
 * stream's descriptor is storage (getwchar/wscanf on stdin, putwchar/
 * wprintf on stdout, when those are). Reads: fgetwc, getwc, getwchar,
 * fgetws and their _unlocked forms, __fgetws_chk, __fgetws_unlocked_chk,
 * fwscanf, wscanf, vfwscanf, vwscanf and the __isoc99_ forms. Writes:
 * fputwc, putwc, putwchar, fputws and their _unlocked forms, fwprintf,
 * wprintf, vfwprintf, vwprintf and __fwprintf_chk, __wprintf_chk,
 * __vfwprintf_chk, __vwprintf_chk. Each is one op of 0 B (like fscanf):
 * what it moved is wide characters, and the bytes they become in the
 * stream's multibyte encoding are not known without converting them again;
 * the stream's position is then not known either (no access sample, no
 * spatial class) until the next seek or tell. A size sample (0) and a
 * latency sample per call, as for the byte calls. ungetwc is not wrapped.
 * The call goes through posix_stdio.c's iog__stdio_enter/leave (out of
 * line: a call more per wide call, nothing more on the byte calls' path). */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <wchar.h>

#include "posix.h"

wchar_t *__fgetws_chk(wchar_t *, size_t, int, FILE *);
wchar_t *__fgetws_unlocked_chk(wchar_t *, size_t, int, FILE *);
int __fwprintf_chk(FILE *, int, const wchar_t *, ...);
int __wprintf_chk(int, const wchar_t *, ...);
int __vfwprintf_chk(FILE *, int, const wchar_t *, va_list);
int __vwprintf_chk(int, const wchar_t *, va_list);
int __isoc99_fwscanf(FILE *, const wchar_t *, ...);
int __isoc99_wscanf(const wchar_t *, ...);
int __isoc99_vfwscanf(FILE *, const wchar_t *, va_list);
int __isoc99_vwscanf(const wchar_t *, va_list);

#define IOG_WIDE_REALS(X) \
	X(fgetwc, wint_t, (FILE *)) \
	X(getwc, wint_t, (FILE *)) \
	X(fgetwc_unlocked, wint_t, (FILE *)) \
	X(getwc_unlocked, wint_t, (FILE *)) \
	X(getwchar, wint_t, (void)) \
	X(getwchar_unlocked, wint_t, (void)) \
	X(fgetws, wchar_t *, (wchar_t *, int, FILE *)) \
	X(fgetws_unlocked, wchar_t *, (wchar_t *, int, FILE *)) \
	X(__fgetws_chk, wchar_t *, (wchar_t *, size_t, int, FILE *)) \
	X(__fgetws_unlocked_chk, wchar_t *, (wchar_t *, size_t, int, FILE *)) \
	X(vfwscanf, int, (FILE *, const wchar_t *, va_list)) \
	X(vwscanf, int, (const wchar_t *, va_list)) \
	X(__isoc99_vfwscanf, int, (FILE *, const wchar_t *, va_list)) \
	X(__isoc99_vwscanf, int, (const wchar_t *, va_list)) \
	X(fputwc, wint_t, (wchar_t, FILE *)) \
	X(putwc, wint_t, (wchar_t, FILE *)) \
	X(fputwc_unlocked, wint_t, (wchar_t, FILE *)) \
	X(putwc_unlocked, wint_t, (wchar_t, FILE *)) \
	X(putwchar, wint_t, (wchar_t)) \
	X(putwchar_unlocked, wint_t, (wchar_t)) \
	X(fputws, int, (const wchar_t *, FILE *)) \
	X(fputws_unlocked, int, (const wchar_t *, FILE *)) \
	X(vfwprintf, int, (FILE *, const wchar_t *, va_list)) \
	X(vwprintf, int, (const wchar_t *, va_list)) \
	X(__vfwprintf_chk, int, (FILE *, int, const wchar_t *, va_list)) \
	X(__vwprintf_chk, int, (int, const wchar_t *, va_list))

IOG_WIDE_REALS(IOG_REAL_GETTER)

/* Resolved at start-up, as the others are (a call that arrives while dlsym
 * runs fails with ENOSYS, as posix_stdio.c's). */
__attribute__((constructor)) static void wide_resolve(void)
{
#define X(n, ret, args) (void)get_##n();
	IOG_WIDE_REALS(X)
#undef X
}

/* The real function in f, or ENOSYS and fail (only while dlsym runs). */
#define REAL(n, fail) \
	n##_fn f = get_##n(); \
	if (UNLIKELY(f == NULL)) { \
		errno = ENOSYS; \
		return fail; \
	}

/* return call, one op of op on s (0 B) when s is storage. */
#define WIDE(s, op, call) do { \
	iog_stdio_call c_; \
	FILE *s_ = (s); \
	if (!iog__stdio_enter(s_, &c_)) \
		return call; \
	__typeof__(call) r_ = call; \
	iog__stdio_leave(&c_, s_, op); \
	return r_; \
} while (0)

#define R IOG_OP_READ
#define W IOG_OP_WRITE

/* ---- reads ---------------------------------------------------------------------- */

#define GETWC(name, s, ...) \
	{ \
		REAL(name, WEOF); \
		WIDE(s, R, f(__VA_ARGS__)); \
	}

EXPORT wint_t fgetwc(FILE *s) GETWC(fgetwc, s, s)
EXPORT wint_t getwc(FILE *s) GETWC(getwc, s, s)
EXPORT wint_t fgetwc_unlocked(FILE *s) GETWC(fgetwc_unlocked, s, s)
EXPORT wint_t getwc_unlocked(FILE *s) GETWC(getwc_unlocked, s, s)
EXPORT wint_t getwchar(void) GETWC(getwchar, stdin, )
EXPORT wint_t getwchar_unlocked(void) GETWC(getwchar_unlocked, stdin, )

EXPORT wchar_t *fgetws(wchar_t *p, int n, FILE *s)
{
	REAL(fgetws, NULL);
	WIDE(s, R, f(p, n, s));
}

EXPORT wchar_t *fgetws_unlocked(wchar_t *p, int n, FILE *s)
{
	REAL(fgetws_unlocked, NULL);
	WIDE(s, R, f(p, n, s));
}

EXPORT wchar_t *__fgetws_chk(wchar_t *p, size_t size, int n, FILE *s)
{
	REAL(__fgetws_chk, NULL);
	WIDE(s, R, f(p, size, n, s));
}

EXPORT wchar_t *__fgetws_unlocked_chk(wchar_t *p, size_t size, int n, FILE *s)
{
	REAL(__fgetws_unlocked_chk, NULL);
	WIDE(s, R, f(p, size, n, s));
}

static int do_vfwscanf(FILE *s, const wchar_t *fmt, va_list ap)
{
	REAL(vfwscanf, EOF);
	WIDE(s, R, f(s, fmt, ap));
}

static int do_isoc99_vfwscanf(FILE *s, const wchar_t *fmt, va_list ap)
{
	REAL(__isoc99_vfwscanf, EOF);
	WIDE(s, R, f(s, fmt, ap));
}

static int do_vwscanf(const wchar_t *fmt, va_list ap)
{
	REAL(vwscanf, EOF);
	WIDE(stdin, R, f(fmt, ap));
}

static int do_isoc99_vwscanf(const wchar_t *fmt, va_list ap)
{
	REAL(__isoc99_vwscanf, EOF);
	WIDE(stdin, R, f(fmt, ap));
}

/* wchar.h may redirect the plain names to the C99 ones: ours are named by
 * their symbols. */
EXPORT int iog_vfwscanf(FILE *s, const wchar_t *fmt, va_list ap) __asm__("vfwscanf");
EXPORT int iog_vwscanf(const wchar_t *fmt, va_list ap) __asm__("vwscanf");
EXPORT int iog_fwscanf(FILE *s, const wchar_t *fmt, ...) __asm__("fwscanf");
EXPORT int iog_wscanf(const wchar_t *fmt, ...) __asm__("wscanf");

EXPORT int iog_vfwscanf(FILE *s, const wchar_t *fmt, va_list ap)
{
	return do_vfwscanf(s, fmt, ap);
}

EXPORT int iog_vwscanf(const wchar_t *fmt, va_list ap)
{
	return do_vwscanf(fmt, ap);
}

EXPORT int __isoc99_vfwscanf(FILE *s, const wchar_t *fmt, va_list ap)
{
	return do_isoc99_vfwscanf(s, fmt, ap);
}

EXPORT int __isoc99_vwscanf(const wchar_t *fmt, va_list ap)
{
	return do_isoc99_vwscanf(fmt, ap);
}

EXPORT int iog_fwscanf(FILE *s, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfwscanf(s, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int iog_wscanf(const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vwscanf(fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __isoc99_fwscanf(FILE *s, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_isoc99_vfwscanf(s, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __isoc99_wscanf(const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_isoc99_vwscanf(fmt, ap);
	va_end(ap);
	return r;
}

/* ---- writes --------------------------------------------------------------------- */

#define PUTWC(name, s, ...) \
	{ \
		REAL(name, WEOF); \
		WIDE(s, W, f(__VA_ARGS__)); \
	}

EXPORT wint_t fputwc(wchar_t c, FILE *s) PUTWC(fputwc, s, c, s)
EXPORT wint_t putwc(wchar_t c, FILE *s) PUTWC(putwc, s, c, s)
EXPORT wint_t fputwc_unlocked(wchar_t c, FILE *s) PUTWC(fputwc_unlocked, s, c, s)
EXPORT wint_t putwc_unlocked(wchar_t c, FILE *s) PUTWC(putwc_unlocked, s, c, s)
EXPORT wint_t putwchar(wchar_t c) PUTWC(putwchar, stdout, c)
EXPORT wint_t putwchar_unlocked(wchar_t c) PUTWC(putwchar_unlocked, stdout, c)

EXPORT int fputws(const wchar_t *str, FILE *s)
{
	REAL(fputws, EOF);
	WIDE(s, W, f(str, s));
}

EXPORT int fputws_unlocked(const wchar_t *str, FILE *s)
{
	REAL(fputws_unlocked, EOF);
	WIDE(s, W, f(str, s));
}

static int do_vfwprintf(FILE *s, const wchar_t *fmt, va_list ap)
{
	REAL(vfwprintf, -1);
	WIDE(s, W, f(s, fmt, ap));
}

static int do_vfwprintf_chk(FILE *s, int flag, const wchar_t *fmt, va_list ap)
{
	REAL(__vfwprintf_chk, -1);
	WIDE(s, W, f(s, flag, fmt, ap));
}

EXPORT int vfwprintf(FILE *s, const wchar_t *fmt, va_list ap)
{
	return do_vfwprintf(s, fmt, ap);
}

EXPORT int vwprintf(const wchar_t *fmt, va_list ap)
{
	return do_vfwprintf(stdout, fmt, ap);
}

EXPORT int __vfwprintf_chk(FILE *s, int flag, const wchar_t *fmt, va_list ap)
{
	return do_vfwprintf_chk(s, flag, fmt, ap);
}

EXPORT int __vwprintf_chk(int flag, const wchar_t *fmt, va_list ap)
{
	return do_vfwprintf_chk(stdout, flag, fmt, ap);
}

EXPORT int fwprintf(FILE *s, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfwprintf(s, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int wprintf(const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfwprintf(stdout, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __fwprintf_chk(FILE *s, int flag, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfwprintf_chk(s, flag, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __wprintf_chk(int flag, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = do_vfwprintf_chk(stdout, flag, fmt, ap);
	va_end(ap);
	return r;
}
