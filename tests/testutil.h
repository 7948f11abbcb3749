/* testutil.h - helpers the Check suites and the benchmarks share: clocks,
 * formatting, temporary directories, files, running programs with a time
 * bound, ports, Xvfb, process figures, and running a suite.
 *
 * Where a helper checks something (tu_env, tu_tmpdir, tu_spawn...), it
 * asserts with Check while a runner of this module (tu_run_suite,
 * tu_run_cases, tu_run_srunner) is running; elsewhere (a benchmark, a
 * suite's main before its runner) a failed check prints the message and
 * exits 1, since Check's asserts end a program there even when they pass. */
#ifndef IOG_TESTUTIL_H
#define IOG_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- clocks, formatting, numbers ---- */

double tu_now(void);                       /* CLOCK_MONOTONIC, seconds */
void tu_sleep_ms(long ms);
/* printf into one of 32 rotating static buffers of 4608 bytes. */
char *tu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* SplitMix64: advances *state, returns the next value. */
uint64_t tu_splitmix(uint64_t *state);
/* Sorts v; the middle value (the mean of the two middle ones for even n). */
double tu_median(double *v, int n);

/* ---- environment, directories, files ---- */

const char *tu_env(const char *name);      /* fails the test when unset */
/* $IOGRAM_PROGS/prog_<name> (a program of tests/progs) into buf. */
void tu_prog(char *buf, size_t len, const char *name);
/* Appends opt to ASAN_OPTIONS (for programs that preload the sanitized agent). */
void tu_asan_option(const char *opt);
/* mkdtemp of <prefix>-XXXXXX under $TMPDIR (or /tmp) into buf. */
void tu_tmpdir(char *buf, size_t len, const char *prefix);
/* Removes dir and everything below it; 0 once it is gone (or was not there). */
int tu_rmdir_all(const char *dir);
/* Whole file into a static buffer (NUL-terminated, at most 64 KiB); fails
 * the test when it cannot be opened. */
const char *tu_slurp(const char *path);
/* Whole file, malloc'd and NUL-terminated (its length in *len unless NULL);
 * NULL when it cannot be read. */
char *tu_read_file(const char *path, size_t *len);
/* The same, failing the test when it cannot be read. */
char *tu_load(const char *path, size_t *len);
int tu_same_file(const char *a, const char *b);
/* 1 once path exists and is not empty (then 300 ms more for its writer to
 * finish), 0 after timeout_s. */
int tu_wait_file(const char *path, double timeout_s);

/* ---- programs ---- */

/* How tu_spawn_opt starts a program; zeroed: stdout and stderr to
 * /dev/null, stdin inherited, no limits, the environment unchanged.
 * Descriptors from 3 to 63 are closed in the child. */
typedef struct tu_opts {
	const char *out, *err;     /* stdout / stderr to these files (truncated) */
	int keep_out, keep_err;    /* leave stdout / stderr as they are */
	int null_in;               /* stdin from /dev/null */
	long nofile;               /* > 0: RLIMIT_NOFILE, soft and hard */
	long fsize;                /* > 0: RLIMIT_FSIZE, SIGXFSZ ignored */
	const char *const *env;    /* NULL-terminated: "NAME=value" sets, "NAME" unsets */
} tu_opts;
pid_t tu_spawn_opt(char *const argv[], const tu_opts *o);   /* o may be NULL */
/* Start argv with stdout to out (NULL: /dev/null), stderr to err (NULL:
 * /dev/null); nofile > 0 sets RLIMIT_NOFILE (soft and hard) first. */
pid_t tu_spawn(char *const argv[], const char *out, const char *err, long nofile);
/* Exit status, 128 + signal, or -1 when it outlived timeout_s (then
 * killed); timeout_s <= 0 waits as long as it takes. */
int tu_wait(pid_t pid, double timeout_s);
/* kill(pid, sig), then tu_wait. */
int tu_stop(pid_t pid, int sig, double timeout_s);
int tu_run(char *const argv[], const char *out, double timeout_s);
/* An `strace -f -o in` log with every call on one line: a call another
 * thread interrupted ("... <unfinished ...>", later "<... NAME resumed>
 * ...") is joined by pid into one line, so a parser can count calls by
 * name and result without knowing strace's threads. 0, or -1 when in
 * cannot be read or out written. */
int tu_strace_join(const char *in, const char *out);
/* A shell command through system(3): its exit status, 128 if it did not exit. */
int tu_system(const char *cmd);
/* The first number a shell command prints, -1 if none. */
long tu_read_long(const char *cmd);

typedef struct tu_result {
	int status;        /* as tu_wait */
	char *out, *err;   /* what it wrote, malloc'd and NUL-terminated */
} tu_result;
/* Run argv with stdout and stderr captured (stderr left as it is with
 * o->keep_err; o's out, err and keep_out are not used), killed after
 * timeout_s (<= 0: no bound). */
tu_result tu_capture(char *const argv[], const tu_opts *o, double timeout_s);
void tu_result_free(tu_result *r);

/* ---- network ---- */

int tu_free_port(void);                     /* free on loopback, below the ephemeral range */
char *tu_ep(int port);                     /* "tcp://127.0.0.1:<port>", as tu_fmt */
int tu_tcp_connect(int port);              /* a socket connected to loopback:port, or -1 */
/* A TCP socket listening (backlog 4) on a free loopback port, its number in *port. */
int tu_listen(int *port);
/* 1 once loopback:port accepts connections, 0 after timeout_s. */
int tu_wait_port(int port, double timeout_s);

/* ---- processes and displays ---- */

double tu_cpu_s(pid_t pid);                /* utime + stime in seconds, -1 if gone */
long tu_rss_kib(pid_t pid);                /* VmRSS in KiB, -1 if gone */
/* Xvfb (screen 0 of geometry, no TCP, then the NULL-terminated extra
 * arguments) on the first display number in [first, last) with neither a
 * lock nor a socket; ":N" into display. It is up when ready(display) says so
 * (NULL: its socket exists, and 300 ms more); a number whose server dies or
 * is not up within 10 s is given up. Its pid, or -1. */
pid_t tu_xvfb_start(char *display, size_t len, int first, int last, const char *geometry,
                    const char *const extra[], int (*ready)(const char *display));
void tu_xvfb_stop(pid_t pid);              /* SIGTERM, then reaped */

/* ---- stop hooks (iogp_access_query.stop, iogp_nt_opts.stop) ---- */

/* Counts its calls; says stop on call number at (0: never). */
typedef struct tu_stopper {
	int calls, at;
} tu_stopper;
int tu_stop_at(void *stopper);

/* ---- suites ---- */

/* A suite of one test case per test (each with the unchecked fixtures and
 * the timeout; 0: Check's default), run; returns main's exit status. */
#include <check.h>
typedef struct tu_case {
	const char *name;
	const TTest *fn;
} tu_case;
int tu_run_suite(const char *name, const tu_case *cases, size_t n, void (*setup)(void),
                 void (*teardown)(void), double timeout_s);

typedef struct tu_suite_opts {
	void (*setup)(void), (*teardown)(void);   /* unchecked fixtures of every case */
	double timeout_s;                         /* of every case; 0: Check's default */
	/* NULL-terminated names of cases not registered in an ASan build
	 * (IOGRAM_ASAN_BUILD=1) */
	const char *const *not_asan;
	int fork;                                 /* fork whatever CK_FORK says */
} tu_suite_opts;
/* As tu_run_suite, with more choices (o may be NULL). */
int tu_run_cases(const char *name, const tu_case *cases, size_t n, const tu_suite_opts *o);
/* Run a suite built by hand (CK_NORMAL), free it; the number of failures. */
int tu_run_srunner(Suite *s);

/* A counter's total as `iogram info FILE` prints it (iogram is the binary's
 * path); UINT64_MAX when the file has no such counter. */
uint64_t tu_info_counter(const char *iogram, const char *file, const char *metric);

/* A job of three slowdown probes for the viewers' tests: prog_fake_probe
 * ($IOGRAM_FAKE_PROBE) on nodeA, nodeB and nodeC with six operations, 12
 * reports 250 ms apart: read and write 1.0x, create 1.1x, stat 0.9x,
 * smallread 1.3x, delete 1.2x, except
 * nodeC's write at 8.0x from report 6 on; merged (iogram: $IOGRAM_BIN) into
 * out, the nodes' files in dir. 0 or -1. */
int tu_probe_job(const char *dir, const char *out);
/* Any such job: n probes (n <= 8), each a node and its prog_fake_probe
 * specs ("write=1000@6-99:8000", NULL-ended), reports gap_ms apart. */
typedef struct tu_probe_spec {
	const char *node;
	const char *ops[9];
} tu_probe_spec;
int tu_fake_probes(const char *dir, const char *out, const tu_probe_spec *p, int n, int reports,
                   int gap_ms);

#endif
