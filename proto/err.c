/* err.c - text for libiogram-proto error codes. */
#include "iogp_err.h"

const char *iogp_strerror(int code)
{
	switch (code) {
	case IOGP_OK: return "success";
	case IOGP_EINVAL: return "invalid argument";
	case IOGP_ENOMEM: return "out of memory";
	case IOGP_ETRUNC: return "truncated input";
	case IOGP_EMAGIC: return "not iogram data (bad magic)";
	case IOGP_EVERSION: return "unsupported version";
	case IOGP_ELIMIT: return "length or count exceeds a limit";
	case IOGP_ECORRUPT: return "corrupt data";
	case IOGP_ECRC: return "checksum mismatch";
	case IOGP_EIO: return "input/output error";
	case IOGP_ENOTFOUND: return "not found";
	case IOGP_EEOF: return "end of data";
	case IOGP_ESCHEME: return "histogram bin schemes differ";
	case IOGP_EUNKNOWN: return "message from an unknown source or metric";
	default: return "unknown error";
	}
}
