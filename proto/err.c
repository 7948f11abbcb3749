/* err.c - text for libiogram-proto error codes. */
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
