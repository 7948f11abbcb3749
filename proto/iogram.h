/* iogram.h - private declarations shared by the iogram command's verbs. */
#ifndef IOGRAM_H
#define IOGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of every iogram tool. */
enum { IOGRAM_EXIT_OK = 0, IOGRAM_EXIT_ERROR = 1, IOGRAM_EXIT_USAGE = 2 };

struct iogram_cmd {
	const char *name;
	const char *summary;
	int (*exec)(int argc, char **argv);  /* argv[0] = verb name */
};

extern const struct iogram_cmd iogram_cmd_info;
extern const struct iogram_cmd iogram_cmd_export;

/* "iogram: " + message on stderr. */
void iogram_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Human units: "4.0 KiB", "1.5 ms", "2026-11-22T04:35:00Z". */
void iogram_fmt_bytes(char *buf, size_t len, double v);
void iogram_fmt_value(char *buf, size_t len, double v, const char *unit);
void iogram_fmt_wall(char *buf, size_t len, uint64_t ns);
/* Strict number parsing: whole string, no overflow. */
int iogram_parse_u64(const char *s, uint64_t *v);
int iogram_parse_double(const char *s, double *v);

#endif
