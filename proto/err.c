/* err.c - text for libiogram-proto error codes, and error messages. */
#include <stdarg.h>
#include <stdio.h>

#include "iogp_err.h"

const char *iogp_strerror(int code)
{
	switch (code) {
#define X(name, code, text) case IOGP_##name: return text;
	IOGP_ERRNO_MAP(X)
#undef X
	default: return "unknown error";
	}
}

void iogp_errf(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
