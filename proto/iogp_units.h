/* iogp_units.h - numbers as people read them: bytes, durations, counts and
 * rates in the one style the plots and the command use ("4 KiB", "250 µs",
 * "1.2k", "12 MiB/s") and a compact ASCII style for terminal cells ("4K",
 * "250us", "12k", "12M/s"). Each returns what snprintf returns. */
#ifndef IOGP_UNITS_H
#define IOGP_UNITS_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>

enum {
	IOGP_UNITS_WIDE = 0,  /* three significant digits, a space, binary units */
	IOGP_UNITS_CELL = 1,  /* exact while short, then three digits; no space, ASCII */
};

/* Bytes. CELL: exact below 10000 ("3901"), exact multiples below 1000 of
 * the unit ("4K", "192K"), else three significant digits ("1.03M"). */
IOGP_API int iogp_fmt_bytes(char *buf, size_t len, double v, int style);
/* Request sizes (what one read or write asked for), exact, in the units
 * people say them in. Volumes (totals, rates) stay with iogp_fmt_bytes.
 *  - below 1 KiB: the byte count ("512 B"; CELL "512")
 *  - a "round" size in the largest binary unit that divides it exactly:
 *    below 100 KiB a power of two or a multiple of 4 KiB ("4 KiB", "48 KiB",
 *    "64 KiB"), from 100 KiB on any multiple of 1 KiB ("192 KiB", "1 MiB",
 *    "1,056 KiB"); CELL drops the space and the "iB": "4K", "48K", "1M",
 *    "1056K" (how dd, ls -h and fio users write them, and it fits a cell)
 *  - anything else: the exact byte count, WIDE with thousands separators and
 *    " B" ("10,240 B", tar's records), CELL bare digits ("10240").
 * Never rounded: "1.03M" cannot come out of it. Negative or NaN is 0. */
IOGP_API int iogp_fmt_size(char *buf, size_t len, double bytes, int style);
/* Nanoseconds: "850 ns" "45.1 µs" "5.1 ms" "1.2 s" (over a minute: "1.5 min",
 * "2.1 h"); CELL "850ns" "45.1us" "5.10ms" "1.20s". */
IOGP_API int iogp_fmt_ns(char *buf, size_t len, double ns, int style);
/* An exact count with thousands separators: "1,234,567". */
IOGP_API int iogp_fmt_int(char *buf, size_t len, uint64_t v);
/* Counts: "950" "1.2k" "3.4M"; CELL exact below 100000, then "123k" "1.2M". */
IOGP_API int iogp_fmt_count(char *buf, size_t len, double v, int style);
/* By the metric's unit ("bytes", "ns", else a count). */
IOGP_API int iogp_fmt_value(char *buf, size_t len, const char *unit, double v, int style);
/* Per second, by unit: bytes "12 MiB/s" (CELL "12M/s"), else "1.2k/s". */
IOGP_API int iogp_fmt_rate(char *buf, size_t len, const char *unit, double per_s, int style);
/* A span of seconds as a clock: "0:12", "1:02:03". */
IOGP_API int iogp_fmt_duration(char *buf, size_t len, double s);

#endif
