/* testutil.h - helpers the Check suites share: clocks, a temporary
 * directory, running a program with a time bound, free loopback ports. */
#ifndef IOG_TESTUTIL_H
#define IOG_TESTUTIL_H

#include <stddef.h>
#include <sys/types.h>

double tu_now(void);                       /* CLOCK_MONOTONIC, seconds */
void tu_sleep_ms(long ms);
const char *tu_env(const char *name);      /* fails the test when unset */
/* mkdtemp under $TMPDIR (or /tmp) into buf; tu_rmdir_all removes it (one level). */
void tu_tmpdir(char *buf, size_t len, const char *prefix);
void tu_rmdir_all(const char *dir);
/* Start argv with stdout to out (NULL: /dev/null), stderr to err (NULL:
 * /dev/null); nofile > 0 sets RLIMIT_NOFILE (soft and hard) first. */
pid_t tu_spawn(char *const argv[], const char *out, const char *err, long nofile);
/* Exit status, 128 + signal, or -1 when it outlived timeout_s (then killed). */
int tu_wait(pid_t pid, double timeout_s);
int tu_run(char *const argv[], const char *out, double timeout_s);
int tu_free_port(void);
/* Whole file into a static buffer (NUL-terminated, at most 64 KiB). */
const char *tu_slurp(const char *path);
int tu_same_file(const char *a, const char *b);


/* A suite of one test case per test (each with the unchecked fixtures and
 * the timeout), run; returns main's exit status. */
#include <check.h>
typedef struct tu_case {
	const char *name;
	const TTest *fn;
} tu_case;
int tu_run_suite(const char *name, const tu_case *cases, size_t n, void (*setup)(void),
                 void (*teardown)(void), double timeout_s);

#endif
