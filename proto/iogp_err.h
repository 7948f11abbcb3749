/* iogp_err.h - error codes shared by every libiogram-proto module. */
#ifndef IOGP_ERR_H
#define IOGP_ERR_H

#include "iogp_api.h"

#include <stddef.h>

/* Functions return 0 (or a non-negative count) on success and one of these,
 * negative, on failure; iogp_strerror() turns a code into text. */
/* X(NAME, code, text): the one list of codes, their values and their text. */
#define IOGP_ERRNO_MAP(X) \
	X(OK, 0, "success") \
	X(EINVAL, -1, "invalid argument")                       /* bad argument */ \
	X(ENOMEM, -2, "out of memory") \
	X(ETRUNC, -3, "truncated input")                        /* input ends inside a field */ \
	X(EMAGIC, -4, "not iogram data (bad magic)") \
	X(EVERSION, -5, "unsupported version")                  /* newer major version */ \
	X(ELIMIT, -6, "length or count exceeds a limit") \
	X(ECORRUPT, -7, "corrupt data")                         /* overlong varint, bad order... */ \
	X(ECRC, -8, "checksum mismatch") \
	X(EIO, -9, "input/output error")                        /* errno kept by the caller */ \
	X(ENOTFOUND, -10, "not found")                          /* no such metric/source/node */ \
	X(EEOF, -11, "end of data")                             /* not an error for iterators */ \
	X(ESCHEME, -12, "histogram bin schemes differ") \
	X(EUNKNOWN, -13, "message from an unknown source or metric") \
	X(ESTOPPED, -14, "stopped by the caller")               /* a query's stop hook said so */

enum {
#define IOGP_X_ERR(name, code, text) IOGP_##name = code,
	IOGP_ERRNO_MAP(IOGP_X_ERR)
#undef IOGP_X_ERR
};

IOGP_API const char *iogp_strerror(int code);
/* Format a message into err (nothing when err is NULL or errlen 0). */
IOGP_API void iogp_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Exit status of every iogram tool (the command and both viewers). */
enum { IOGP_EXIT_OK = 0, IOGP_EXIT_ERROR = 1, IOGP_EXIT_USAGE = 2 };

#endif
