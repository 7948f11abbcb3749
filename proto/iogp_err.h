/* iogp_err.h - error codes shared by every libiogram-proto module. */
#ifndef IOGP_ERR_H
#define IOGP_ERR_H

/* Functions return 0 (or a non-negative count) on success and one of these,
 * negative, on failure; iogp_strerror() turns a code into text. */
enum {
	IOGP_OK = 0,
	IOGP_EINVAL = -1,    /* bad argument */
	IOGP_ENOMEM = -2,    /* allocation failed */
	IOGP_ETRUNC = -3,    /* input ends inside a field */
	IOGP_EMAGIC = -4,    /* not an iogram message / file */
	IOGP_EVERSION = -5,  /* newer major version than we understand */
	IOGP_ELIMIT = -6,    /* a length or count exceeds a hard limit */
	IOGP_ECORRUPT = -7,  /* structurally invalid (overlong varint, bad order, ...) */
	IOGP_ECRC = -8,      /* checksum mismatch */
	IOGP_EIO = -9,       /* read/write failed; errno kept by the caller */
	IOGP_ENOTFOUND = -10,/* no such metric / source / node */
	IOGP_EEOF = -11,     /* end of input (not an error for iterators) */
	IOGP_ESCHEME = -12,  /* histogram bin schemes do not match */
	IOGP_EUNKNOWN = -13, /* message for a source we know nothing about yet */
};

const char *iogp_strerror(int code);

#endif
