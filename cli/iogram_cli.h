/* iogram_cli.h - private declarations shared by the iogram command's verbs. */
#ifndef IOGRAM_CLI_H
#define IOGRAM_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes: IOGP_EXIT_* (iogp_err.h). */
#include "iogp_err.h"
#include "iogp_sys.h"
#include "iogp_units.h"

struct iogram_cmd {
	const char *name;
	const char *summary;
	int (*exec)(int argc, char **argv);  /* argv[0] = verb name */
};

extern const struct iogram_cmd iogram_cmd_info;
extern const struct iogram_cmd iogram_cmd_export;
extern const struct iogram_cmd iogram_cmd_probe;

/* "iogram: " + message on stderr. */
void iogram_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Human units: "4.0 KiB", "1.5 ms", "2026-11-22T04:35:00Z". */
void iogram_fmt_value(char *buf, size_t len, double v, const char *unit);
void iogram_fmt_wall(char *buf, size_t len, uint64_t ns);
/* Load a replay file into a new model; says why on failure and warns about
 * skipped bytes. st may be NULL. Returns 0 or IOGP_EXIT_ERROR. */
struct iogp_model;
struct iogp_load_stats;
int iogram_load(const char *path, struct iogp_model **m, struct iogp_load_stats *st);
/* "iogram: warning: FILE: N bytes (P%) skipped as damaged" when skipped > 0. */
void iogram_warn_damage(const char *path, uint64_t skipped, uint64_t file_bytes);
/* Strict number parsing: whole string, no overflow. */
int iogram_parse_u64(const char *s, uint64_t *v);
int iogram_parse_double(const char *s, double *v);


/* ---- live.c: what the streaming verbs share ---- */
extern const struct iogram_cmd iogram_cmd_record;
extern const struct iogram_cmd iogram_cmd_relay;
extern const struct iogram_cmd iogram_cmd_merge;
extern const struct iogram_cmd iogram_cmd_cat;
extern const struct iogram_cmd iogram_cmd_keygen;
extern const struct iogram_cmd iogram_cmd_loadgen;

/* Set by SIGINT/SIGTERM once iogram_catch_signals() ran. */
extern volatile int iogram_stop;
void iogram_catch_signals(void);
/* Bind or connect sock (of ctx) to ep, with the user's CURVE key when there
 * is one, and a clear error; 0 or -1. */
int iogram_bind(void *ctx, void *sock, const char *ep);
int iogram_connect(void *ctx, void *sock, const char *ep);
/* Binding beyond loopback: refused without consent, warned about without CURVE. */
int iogram_wide_ok(const char *verb, const char *ep, int wide);
int iogram_isatty_stderr(void);

#endif
