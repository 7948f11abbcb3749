/* check_posix.c - the POSIX interposer and iogram-run under real programs:
 * dd, cat, cp, the test programs in tests/progs, strace as ground truth, a
 * live ZeroMQ subscriber, exit codes. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_model.h"
#include "iogp_wire.h"
#include "testutil.h"
#include "testutil_iogr.h"

#define RUN_TIMEOUT_S 60

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-posix");
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* Run argv (NULL-terminated); stdout to out_path (NULL: /dev/null), stderr
 * to /dev/null. Returns the exit status, 128 + signal, or -1 on timeout
 * (the child is killed). */
static int run(char *const argv[], const char *out_path)
{
	return tu_run(argv, out_path, RUN_TIMEOUT_S);
}

/* Run CMD... under iogram-run recording to dir/run-%p.iogr, no live stream. */
#define RUN_RECORDED(...) run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", \
	"--interval", "100", "--output", out_tmpl(), "--", __VA_ARGS__, NULL }, NULL)

static char *out_tmpl(void)
{
	static char buf[300];
	snprintf(buf, sizeof(buf), "%s/run-%%p.iogr", dir);
	return buf;
}

static char *path_in(const char *name)
{
	return tu_fmt("%s/%s", dir, name);
}

/* Every run-*.iogr of the test directory loaded into one model. */
static iogp_model *load_all(int *nfiles)
{
	return tu_load_runs(dir, nfiles);
}

static uint64_t counter_sel(const iogp_model *m, const char *name, const iogp_sel *sel)
{
	uint64_t v = 0;
	int rc = iogp_model_counter(m, name, sel, &v);
	ck_assert_msg(rc == 0, "counter %s: %d", name, rc);
	return v;
}

static uint64_t counter(const iogp_model *m, const char *name)
{
	return counter_sel(m, name, NULL);
}

/* Count in the bin holding value; total of the histogram in *total. */
static uint64_t bin_at_sel(const iogp_model *m, const char *name, uint64_t value, uint64_t *total,
                           const iogp_sel *sel)
{
	iogp_hist h;
	int rc = iogp_model_hist(m, name, sel, &h);
	ck_assert_msg(rc == 0, "hist %s: %d", name, rc);
	uint64_t c = iogp_hist_count_at(&h, iogp_bins_index(&h.scheme, value));
	if (total)
		*total = h.total;
	iogp_hist_free(&h);
	return c;
}

static uint64_t bin_at(const iogp_model *m, const char *name, uint64_t value, uint64_t *total)
{
	return bin_at_sel(m, name, value, total, NULL);
}

static uint64_t hist_total(const iogp_model *m, const char *name)
{
	uint64_t t;
	bin_at(m, name, 0, &t);
	return t;
}

static void write_file(const char *path, size_t size, uint64_t seed)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	ck_assert(fd >= 0);
	char buf[8192];
	size_t done = 0;
	while (done < size) {
		for (size_t i = 0; i < sizeof(buf); i += 8) {
			seed += 0x9E3779B97F4A7C15ull;
			uint64_t z = seed;
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
			memcpy(buf + i, &z, 8);
		}
		size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
		ck_assert(write(fd, buf, n) == (ssize_t)n);
		done += n;
	}
	close(fd);
}

/* Data requests: every one counted in a spatial class, a latency and a
 * queue-depth sample. */
static void check_invariants(const iogp_model *m)
{
	uint64_t ops[2] = { counter(m, "posix.read.ops"), counter(m, "posix.write.ops") };
	const char *op[2] = { "read", "write" };
	for (int i = 0; i < 2; i++) {
		char n[64];
		uint64_t s = 0;
		const char *cls[3] = { "consecutive", "sequential", "random" };
		for (int c = 0; c < 3; c++) {
			snprintf(n, sizeof(n), "posix.%s.%s", op[i], cls[c]);
			s += counter(m, n);
		}
		ck_assert_msg(s == ops[i], "%s: spatial classes %llu != ops %llu", op[i],
		              (unsigned long long)s, (unsigned long long)ops[i]);
		snprintf(n, sizeof(n), "posix.%s.latency", op[i]);
		ck_assert_uint_eq(hist_total(m, n), ops[i]);
		snprintf(n, sizeof(n), "posix.%s.size", op[i]);
		ck_assert_uint_eq(hist_total(m, n), ops[i]);
	}
	ck_assert_uint_eq(hist_total(m, "posix.queue_depth"), ops[0] + ops[1]);
	ck_assert_uint_eq(hist_total(m, "posix.meta.latency"),
	                  counter(m, "posix.meta.ops") + counter(m, "posix.sync.ops"));
}

/* ---- coreutils -------------------------------------------------------------- */

START_TEST(test_dd)
{
	char of[300], ifs[300];
	snprintf(of, sizeof(of), "of=%s", path_in("dd.out"));
	snprintf(ifs, sizeof(ifs), "if=/dev/zero");
	ck_assert_int_eq(RUN_RECORDED("dd", ifs, of, "bs=64k", "count=100"), 0);
	int nf;
	iogp_model *m = load_all(&nf);
	ck_assert_int_eq(nf, 1);
	ck_assert_uint_eq(iogp_model_source_count(m), 1);
	uint64_t total;
	ck_assert_uint_eq(bin_at(m, "posix.write.size", 65536, &total), 100);
	ck_assert_uint_eq(total, 100);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), 6553600);
	ck_assert_uint_eq(counter(m, "posix.write.ops"), 100);
	ck_assert_uint_eq(counter(m, "posix.write.consecutive"), 100);
	/* common sizes: the 64 KiB writes are known exactly, so are the quantiles */
	iogp_hist h;
	iogp_exact top[4];
	uint64_t q;
	ck_assert_int_eq(iogp_model_hist(m, "posix.write.size", NULL, &h), 0);
	ck_assert_uint_eq(iogp_hist_common(&h, top, 4), 1);
	ck_assert_uint_eq(top[0].value, 65536);
	ck_assert_uint_eq(top[0].count, 100);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(iogp_hist_quantile(&h, (double[]){ 0.5, 0.9, 0.99 }[k], &q), 0);
		ck_assert_uint_eq(q, 65536);
	}
	ck_assert(iogp_hist_sum(&h) == 6553600.0);
	iogp_hist_free(&h);
	/* /dev/zero is a character device, not storage: its reads are other.* */
	ck_assert_uint_eq(counter(m, "posix.read.ops"), 0);
	ck_assert_uint_eq(counter(m, "other.read.ops"), 100);
	ck_assert_uint_eq(counter(m, "other.read.bytes"), 6553600);
	ck_assert_uint_eq(counter(m, "posix.errors"), 0);
	ck_assert_uint_ge(counter(m, "posix.meta.ops"), 2);
	check_invariants(m);
	struct stat st;
	ck_assert_int_eq(stat(path_in("dd.out"), &st), 0);
	ck_assert_int_eq(st.st_size, 6553600);
	iogp_model_free(m);

	/* the same through the command line tool */
	DIR *d = opendir(dir);
	struct dirent *de;
	char rec[600] = "";
	int guard = 0;
	while ((de = readdir(d)) != NULL && guard++ < 1000)
		if (!strncmp(de->d_name, "run-", 4))
			snprintf(rec, sizeof(rec), "%s/%s", dir, de->d_name);
	closedir(d);
	ck_assert_int_eq(run((char *[]){ (char *)tu_env("IOGRAM_BIN"), "export", "hist", rec, "--metric",
	                                 "posix.write.size", NULL }, path_in("hist.csv")), 0);
	ck_assert_str_eq(tu_slurp(path_in("hist.csv")), "lower_bound,upper_bound,count\n65536,65536,100\n");
}
END_TEST

START_TEST(test_cat)
{
	const size_t size = 300001;
	write_file(path_in("cat.in"), size, 11);
	ck_assert_int_eq(run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none",
		"--output", out_tmpl(), "--", "cat", path_in("cat.in"), NULL }, path_in("cat.out")), 0);
	ck_assert(tu_same_file(path_in("cat.in"), path_in("cat.out")));
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), size);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), size);
	ck_assert_uint_ge(counter(m, "posix.read.ops"), 1);
	ck_assert_uint_ge(counter(m, "posix.write.ops"), 1);
	/* open + close of the input at least (stdout was opened by the shell) */
	ck_assert_uint_ge(counter(m, "posix.meta.ops"), 2);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_cp)
{
	const size_t size = 1 << 20;
	write_file(path_in("cp.in"), size, 12);
	ck_assert_int_eq(RUN_RECORDED("cp", path_in("cp.in"), path_in("cp.out")), 0);
	ck_assert(tu_same_file(path_in("cp.in"), path_in("cp.out")));
	iogp_model *m = load_all(NULL);
	/* cp moves the data with copy_file_range (or read/write if refused):
	 * either way, a read of every byte on the source, a write on the copy */
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), size);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), size);
	ck_assert_uint_ge(counter(m, "posix.meta.ops"), 4);
	uint64_t r = counter(m, "posix.read.ops"), w = counter(m, "posix.write.ops");
	if (r == w) {
		/* copy_file_range: each call a read and a write of the same size
		 * (here 1 MiB, then 0 at the end) */
		ck_assert_uint_eq(bin_at(m, "posix.read.size", size, NULL),
		                  bin_at(m, "posix.write.size", size, NULL));
		ck_assert_uint_eq(bin_at(m, "posix.read.size", 0, NULL), bin_at(m, "posix.write.size", 0, NULL));
	} else {
		ck_assert_uint_eq(r, w + 1);   /* read/write loop: the final read of 0 */
	}
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

/* ---- test programs ---------------------------------------------------------- */

START_TEST(test_threads)
{
	char p[300];
	tu_prog(p, sizeof(p), "threads");
	ck_assert_int_eq(RUN_RECORDED(p, dir), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(iogp_model_source_count(m), 1);
	const uint64_t wops = 16 * 100, rops = 16 * (200 + 1);
	ck_assert_uint_eq(counter(m, "posix.write.ops"), wops);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), wops * 8192);
	ck_assert_uint_eq(bin_at(m, "posix.write.size", 8192, NULL), wops);
	ck_assert_uint_eq(counter(m, "posix.read.ops"), rops);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), 16 * 200 * 4096);
	ck_assert_uint_eq(bin_at(m, "posix.read.size", 4096, NULL), 16 * 200);
	ck_assert_uint_eq(bin_at(m, "posix.read.size", 0, NULL), 16);
	ck_assert_uint_eq(counter(m, "posix.write.consecutive"), wops);
	ck_assert_uint_eq(counter(m, "posix.read.consecutive"), rops);
	/* open, lseek, close, unlink per thread */
	ck_assert_uint_eq(counter(m, "posix.meta.ops"), 16 * 4);
	ck_assert_uint_eq(counter(m, "posix.errors"), 0);
	uint64_t qtotal;
	bin_at(m, "posix.queue_depth", 1, &qtotal);
	ck_assert_uint_eq(qtotal, wops + rops);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

static void clear_runs(void);
static void expect_rw(const iogp_model *m, const char *family, const uint64_t ops[2],
                      const uint64_t bytes[2]);

/* stdio is its own layer (stdio.*): fread/fwrite and friends are counted
 * there, with fopen/fclose/fseek/fflush as stdio.meta.ops (a failed fopen
 * too); posix.* is what the program asks of the kernel itself, and glibc's
 * own read/write inside stdio never pass the interposer: 0 here. */
START_TEST(test_stdio)
{
	char p[300];
	tu_prog(p, sizeof(p), "stdio_ops");
	ck_assert_int_eq(RUN_RECORDED(p, path_in("stdio.dat")), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "stdio.write.ops"), 10);
	ck_assert_uint_eq(counter(m, "stdio.write.bytes"), 10000);
	ck_assert_uint_eq(bin_at(m, "stdio.write.size", 1000, NULL), 10);
	ck_assert_uint_eq(counter(m, "stdio.read.ops"), 7);
	ck_assert_uint_eq(counter(m, "stdio.read.bytes"), 16096);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 2000, NULL), 6);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 4096, NULL), 1);
	ck_assert_uint_eq(hist_total(m, "stdio.read.latency"), 7);
	ck_assert_uint_eq(hist_total(m, "stdio.write.latency"), 10);
	/* fopen 1 failed + 2, fflush, fclose 2, fseek, fseeko */
	ck_assert_uint_eq(counter(m, "stdio.meta.ops"), 8);
	/* the socket pair and the eventfd are not storage */
	ck_assert_uint_eq(counter(m, "posix.write.ops"), 0);
	ck_assert_uint_eq(counter(m, "posix.read.ops"), 0);
	ck_assert_uint_eq(counter(m, "posix.meta.ops"), 0);
	ck_assert_uint_eq(counter(m, "posix.sync.ops"), 0);
	ck_assert_uint_eq(counter(m, "posix.errors"), 0);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

/* Every wrapped stdio call (tests/progs/stdio_all.c), stdout a regular
 * file, stderr /dev/null (not storage: its fprintf is not counted). */
START_TEST(test_stdio_all)
{
	char p[300];
	tu_prog(p, sizeof(p), "stdio_all");
	ck_assert_int_eq(run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none",
		"--interval", "100", "--output", out_tmpl(), "--", p, path_in("all.dat"),
		path_in("sys.dat"), NULL }, path_in("all.out")), 0);
	ck_assert_str_eq(tu_slurp(path_in("all.out")), "p1\np2\np3\np4\nputs\nc\n");
	iogp_model *m = load_all(NULL);
	/* 14 writes (240 B) on the file, 7 on stdout (19 B) */
	ck_assert_uint_eq(counter(m, "stdio.write.ops"), 21);
	ck_assert_uint_eq(counter(m, "stdio.write.bytes"), 259);
	ck_assert_uint_eq(bin_at(m, "stdio.write.size", 1, NULL), 7);
	ck_assert_uint_eq(bin_at(m, "stdio.write.size", 100, NULL), 2);
	ck_assert_uint_eq(hist_total(m, "stdio.write.size"), 21);
	ck_assert_uint_eq(hist_total(m, "stdio.write.latency"), 21);
	/* 28 reads, 244 B; 8 of them (at the end, fscanf) of 0 B */
	ck_assert_uint_eq(counter(m, "stdio.read.ops"), 28);
	ck_assert_uint_eq(counter(m, "stdio.read.bytes"), 244);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 0, NULL), 8);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 50, NULL), 4);
	ck_assert_uint_eq(hist_total(m, "stdio.read.size"), 28);
	ck_assert_uint_eq(hist_total(m, "stdio.read.latency"), 28);
	ck_assert_uint_eq(counter(m, "stdio.meta.ops"), 25);
	/* posix.*: the program's own open/write/pread/close only */
	expect_rw(m, "posix", (uint64_t[]){ 1, 3 }, (uint64_t[]){ 500, 3000 });
	ck_assert_uint_eq(counter(m, "posix.meta.ops"), 3);
	ck_assert_uint_eq(counter(m, "posix.sync.ops"), 0);
	ck_assert_uint_eq(counter(m, "posix.errors"), 0);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

/* 10,000 lines by fprintf, read back by fgets and getline: stdio.* has them
 * all, posix.* nothing (the program makes no I/O syscall of its own). */
START_TEST(test_stdio_lines)
{
	char p[300];
	tu_prog(p, sizeof(p), "stdio_all");
	ck_assert_int_eq(RUN_RECORDED(p, path_in("lines.dat"), "lines"), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "stdio.write.ops"), 10000);
	ck_assert_uint_eq(counter(m, "stdio.write.bytes"), 110000);
	ck_assert_uint_eq(bin_at(m, "stdio.write.size", 11, NULL), 10000);
	ck_assert_uint_eq(counter(m, "stdio.read.ops"), 10001);
	ck_assert_uint_eq(counter(m, "stdio.read.bytes"), 110000);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 11, NULL), 10000);
	ck_assert_uint_eq(counter(m, "stdio.meta.ops"), 4);
	expect_rw(m, "posix", (uint64_t[]){ 0, 0 }, (uint64_t[]){ 0, 0 });
	ck_assert_uint_eq(counter(m, "posix.meta.ops"), 0);
	iogp_model_free(m);
}
END_TEST

/* A text file of about size bytes, lines of letters. */
static void write_text(const char *path, size_t size)
{
	FILE *f = fopen(path, "w");
	ck_assert(f != NULL);
	uint64_t x = 88172645463325252ull;
	size_t done = 0;
	while (done < size) {
		char line[80];
		int len = 10 + (int)(x % 50);
		for (int i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			line[i] = (char)('a' + x % 26);
		}
		line[len] = '\n';
		ck_assert(fwrite(line, 1, (size_t)len + 1, f) == (size_t)len + 1);
		done += (size_t)len + 1;
	}
	ck_assert_int_eq(fclose(f), 0);
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* sort and sed (coreutils' and sed's *_unlocked stdio, getdelim): the
 * input's bytes are stdio.read.bytes, the output's stdio.write.bytes. */
START_TEST(test_sort_sed)
{
	write_text(path_in("text.in"), 5u << 20);
	uint64_t in = file_size(path_in("text.in"));
	char *r = (char *)tu_env("IOGRAM_RUN");
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--output", out_tmpl(), "--", "sort",
		path_in("text.in"), NULL }, path_in("sort.out")), 0);
	ck_assert_uint_eq(file_size(path_in("sort.out")), in);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "stdio.read.bytes"), in);
	ck_assert_uint_eq(counter(m, "stdio.write.bytes"), in);
	ck_assert_uint_ge(counter(m, "stdio.read.ops"), 1);
	ck_assert_uint_ge(counter(m, "stdio.write.ops"), 1);
	ck_assert_uint_ge(counter(m, "stdio.meta.ops"), 2);
	iogp_model_free(m);
	clear_runs();
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--output", out_tmpl(), "--", "sed",
		"s/a/bb/", path_in("text.in"), NULL }, path_in("sed.out")), 0);
	uint64_t out = file_size(path_in("sed.out"));
	ck_assert_uint_gt(out, in);
	m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "stdio.read.bytes"), in);
	ck_assert_uint_eq(counter(m, "stdio.write.bytes"), out);
	ck_assert_uint_ge(counter(m, "stdio.read.ops"), 1);
	ck_assert_uint_ge(counter(m, "stdio.write.ops"), 1);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_aio_qd)
{
	char p[300];
	tu_prog(p, sizeof(p), "aio_qd");
	const uint64_t n = 4096;
	ck_assert_int_eq(RUN_RECORDED(p, path_in("aio.dat"), "4096"), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "posix.read.ops"), n);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), n * 4096);
	ck_assert_uint_eq(bin_at(m, "posix.read.size", 4096, NULL), n);
	uint64_t total;
	uint64_t at8 = bin_at(m, "posix.queue_depth", 8, &total);
	ck_assert_uint_eq(total, n);
	/* 8 requests in flight at every submission after the first 8 */
	ck_assert_msg(at8 >= n - 8, "queue depth 8: %llu of %llu", (unsigned long long)at8,
	              (unsigned long long)total);
	ck_assert_uint_eq(bin_at(m, "posix.queue_depth", 9, NULL), 0);
	for (uint64_t d = 1; d < 8; d++)
		ck_assert_uint_eq(bin_at(m, "posix.queue_depth", d, NULL), 1);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_posix_aio)
{
	char p[300];
	tu_prog(p, sizeof(p), "aio_qd");
	const uint64_t n = 2048;
	ck_assert_int_eq(RUN_RECORDED(p, path_in("paio.dat"), "2048", "posix"), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "posix.read.ops"), n);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), n * 4096);
	uint64_t total;
	uint64_t at8 = bin_at(m, "posix.queue_depth", 8, &total);
	ck_assert_uint_eq(total, n);
	ck_assert_msg(at8 >= n - 8, "queue depth 8: %llu of %llu", (unsigned long long)at8,
	              (unsigned long long)total);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

/* ---- strace as ground truth ------------------------------------------------- */

#define MAXFD 1024

#define MAXPEND 64

typedef struct trace_state {
	char fdpath[MAXFD][16];  /* "in", "out" or "" */
	struct { long pid; char call[32]; int fd; } pend[MAXPEND];   /* <unfinished ...> */
} trace_state;

static int pend_slot(trace_state *ts, long pid, int create)
{
	for (int i = 0; i < MAXPEND; i++)
		if (ts->pend[i].pid == pid)
			return i;
	for (int i = 0; create && i < MAXPEND; i++)
		if (ts->pend[i].pid == 0) {
			ts->pend[i].pid = pid;
			return i;
		}
	return -1;
}

static int syscall_op(const char *name)
{
	if (!strcmp(name, "read") || !strcmp(name, "pread64") || !strcmp(name, "readv") ||
	    !strcmp(name, "preadv"))
		return 0;
	if (!strcmp(name, "write") || !strcmp(name, "pwrite64") || !strcmp(name, "writev") ||
	    !strcmp(name, "pwritev"))
		return 1;
	return -1;
}

/* One complete call: name(args) = ret. */
static void trace_call(trace_state *ts, const char *name, const char *args, long ret,
                       const char *in, const char *out, iogp_hist *h)
{
	int fd = atoi(args);
	if (!strcmp(name, "openat") || !strcmp(name, "open")) {
		const char *q = strchr(args, '"');
		if (!q || ret < 0 || ret >= MAXFD)
			return;
		const char *e = strchr(q + 1, '"');
		if (!e)
			return;
		size_t l = (size_t)(e - q - 1);
		const char *tag = l == strlen(in) && !strncmp(q + 1, in, l) ? "in" :
		                  l == strlen(out) && !strncmp(q + 1, out, l) ? "out" : "";
		snprintf(ts->fdpath[ret], sizeof(ts->fdpath[0]), "%s", tag);
		return;
	}
	if (!strcmp(name, "dup2") || !strcmp(name, "dup3") || !strcmp(name, "fcntl") || !strcmp(name, "dup")) {
		if (ret >= 0 && ret < MAXFD && fd >= 0 && fd < MAXFD)
			memcpy(ts->fdpath[ret], ts->fdpath[fd], sizeof(ts->fdpath[0]));
		return;
	}
	if (!strcmp(name, "close")) {
		if (fd >= 0 && fd < MAXFD)
			ts->fdpath[fd][0] = '\0';
		return;
	}
	int op = syscall_op(name);
	if (op < 0 || fd < 0 || fd >= MAXFD || ret < 0 || !ts->fdpath[fd][0])
		return;
	iogp_hist_record(&h[op], (uint64_t)ret, 1);
}

START_TEST(test_strace)
{
	char in[300], out[300], ifa[320], ofa[320];
	snprintf(in, sizeof(in), "%s", path_in("st.in"));
	snprintf(out, sizeof(out), "%s", path_in("st.out"));
	write_file(in, 1000000, 13);
	snprintf(ifa, sizeof(ifa), "if=%s", in);
	snprintf(ofa, sizeof(ofa), "of=%s", out);
	char *log = path_in("strace.log");
	tu_asan_option("detect_leaks=0");   /* LeakSanitizer cannot run under ptrace */
	int rc = run((char *[]){ "strace", "-f", "-qq", "-s", "0", "-o", log,
		"-e", "trace=openat,open,dup,dup2,dup3,fcntl,close,read,write,pread64,pwrite64,readv,writev",
		"-e", "signal=none",
		(char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--output", out_tmpl(), "--",
		"dd", ifa, ofa, "ibs=10000", "obs=65536", NULL }, NULL);
	ck_assert_int_eq(rc, 0);
	ck_assert(tu_same_file(in, out));

	iogp_bins nb;
	iogp_bins_native(&nb, 4);
	iogp_hist h[2];
	iogp_hist_init(&h[0], &nb);
	iogp_hist_init(&h[1], &nb);
	/* strace numbers its threads; iogram-run execs dd in the same pid (the
	 * first line's), and dd does not fork or start threads: every other
	 * thread is the agent's, with a descriptor table of its own, so only
	 * the first pid's calls describe dd's descriptors */
	trace_state *ts = calloc(1, sizeof(*ts));
	ck_assert(ts != NULL);
	FILE *f = fopen(log, "r");
	ck_assert(f != NULL);
	char line[8192];
	int lines = 0;
	long host_pid = 0;
	while (fgets(line, sizeof(line), f) && lines++ < 1000000) {
		char *p = line;
		long pid = strtol(p, &p, 10);
		if (host_pid == 0)
			host_pid = pid;
		if (pid != host_pid)
			continue;
		while (*p == ' ')
			p++;
		char name[32];
		if (!strncmp(p, "<... ", 5)) {
			/* "<... read resumed>...) = N" completes this pid's pending call */
			int k = pend_slot(ts, pid, 0);
			if (k < 0 || sscanf(p + 5, "%31s", name) != 1 || strcmp(name, ts->pend[k].call) != 0)
				continue;
			ts->pend[k].pid = 0;
			char *eq = strrchr(p, '=');
			if (!eq)
				continue;
			long ret = strtol(eq + 1, NULL, 10);
			if (!strcmp(name, "openat") || !strcmp(name, "open")) {
				if (ret >= 0 && ret < MAXFD)
					snprintf(ts->fdpath[ret], sizeof(ts->fdpath[0]), "%s",
					         ts->pend[k].fd == -2 ? "in" : ts->pend[k].fd == -3 ? "out" : "");
				continue;
			}
			char args[32];
			snprintf(args, sizeof(args), "%d", ts->pend[k].fd);
			trace_call(ts, name, args, ret, in, out, h);
			continue;
		}
		char *paren = strchr(p, '(');
		if (!paren || paren - p >= (long)sizeof(name))
			continue;
		memcpy(name, p, (size_t)(paren - p));
		name[paren - p] = '\0';
		if (strstr(p, "<unfinished ...>")) {
			int k = pend_slot(ts, pid, 1);
			ck_assert(k >= 0);
			snprintf(ts->pend[k].call, sizeof(ts->pend[k].call), "%s", name);
			ts->pend[k].fd = atoi(paren + 1);
			/* open's path is in the first line: keep it for the tag */
			if (!strcmp(name, "openat") || !strcmp(name, "open")) {
				ts->pend[k].pid = 0;
				char *q = strchr(paren, '"');
				char *e2 = q ? strchr(q + 1, '"') : NULL;
				if (e2) {
					/* complete it from the resumed line: store the tag via fd -1 */
					size_t l = (size_t)(e2 - q - 1);
					ts->pend[k].pid = pid;
					ts->pend[k].fd = l == strlen(in) && !strncmp(q + 1, in, l) ? -2 :
					                 l == strlen(out) && !strncmp(q + 1, out, l) ? -3 : -1;
				}
			}
			continue;
		}
		char *eq = strrchr(p, '=');
		if (!eq || eq < paren)
			continue;
		trace_call(ts, name, paren + 1, strtol(eq + 1, NULL, 10), in, out, h);
	}
	fclose(f);
	free(ts);
	ck_assert_msg(h[0].total > 0 && h[1].total > 0, "strace log parsed no I/O");

	iogp_model *m = load_all(NULL);
	/* per-file records: dd's input only read, its output only written,
	 * each as often and as much as strace saw */
	iogp_file_info *fi;
	size_t nfi;
	int seen = 0;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &nfi), 0);
	for (size_t k = 0; k < nfi; k++) {
		int which = !strcmp(fi[k].path, in) ? 0 : !strcmp(fi[k].path, out) ? 1 : -1;
		if (which < 0)
			continue;
		seen |= 1 << which;
		ck_assert_uint_eq(fi[k].total.op[which].ops, h[which].total);
		ck_assert_uint_eq(fi[k].total.op[which].bytes, 1000000);
		ck_assert_uint_eq(fi[k].total.op[!which].ops, 0);
		ck_assert_uint_eq(fi[k].total.op[which].max_req, which ? 65536 : 10000);
		ck_assert_uint_ge(fi[k].total.meta_ops, 2);   /* its open and close */
	}
	iogp_model_files_free(fi);
	ck_assert_int_eq(seen, 3);
	const char *names[2] = { "posix.read.size", "posix.write.size" };
	for (int op = 0; op < 2; op++) {
		iogp_hist ours;
		ck_assert_int_eq(iogp_model_hist(m, names[op], NULL, &ours), 0);
		ck_assert_msg(ours.total == h[op].total, "%s: ours %llu requests, strace %llu",
		              names[op], (unsigned long long)ours.total, (unsigned long long)h[op].total);
		ck_assert_uint_eq(ours.n, h[op].n);
		for (size_t i = 0; i < ours.n; i++) {
			ck_assert_uint_eq(ours.bins[i].idx, h[op].bins[i].idx);
			ck_assert_msg(ours.bins[i].count == h[op].bins[i].count,
			              "%s bin %llu: ours %llu strace %llu", names[op],
			              (unsigned long long)ours.bins[i].idx,
			              (unsigned long long)ours.bins[i].count,
			              (unsigned long long)h[op].bins[i].count);
		}
		iogp_hist_free(&ours);
		iogp_hist_free(&h[op]);
	}
	/* 100 full reads of 10000 and the final 0; 15 writes of 64 KiB + 1 short */
	ck_assert_uint_eq(counter(m, "posix.read.ops"), 101);
	ck_assert_uint_eq(counter(m, "posix.write.ops"), 16);
	iogp_model_free(m);
}
END_TEST

/* ---- live stream -------------------------------------------------------------- */

typedef struct live {
	void *ctx, *sub;
	char ep[256];
	iogp_model *m;
	int hello, delta, final, bye, status;
} live;

static void live_open(live *l)
{
	memset(l, 0, sizeof(*l));
	l->ctx = zmq_ctx_new();
	l->sub = zmq_socket(l->ctx, ZMQ_SUB);
	ck_assert(l->sub != NULL);
	ck_assert_int_eq(zmq_setsockopt(l->sub, ZMQ_SUBSCRIBE, "", 0), 0);
	int linger = 0;
	zmq_setsockopt(l->sub, ZMQ_LINGER, &linger, sizeof(linger));
	ck_assert_int_eq(zmq_bind(l->sub, "tcp://127.0.0.1:*"), 0);
	size_t epl = sizeof(l->ep);
	ck_assert_int_eq(zmq_getsockopt(l->sub, ZMQ_LAST_ENDPOINT, l->ep, &epl), 0);
	l->m = iogp_model_new(NULL);
	ck_assert(l->m != NULL);
}

static void live_close(live *l)
{
	iogp_model_free(l->m);
	zmq_close(l->sub);
	zmq_ctx_term(l->ctx);
}

/* Run CMD... under iogram-run streaming to l's socket; feed everything
 * received into l->m until the program has exited and `finals` FINAL
 * snapshots have arrived (or 3 s after its exit). */
static void live_run(live *l, int finals, char *const cmd[])
{
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)tu_env("IOGRAM_RUN");
	argv[n++] = "--endpoint";
	argv[n++] = l->ep;
	argv[n++] = "--interval";
	argv[n++] = "20";
	argv[n++] = "--";
	for (int i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	pid_t pid = tu_spawn_opt(argv, &(tu_opts){ .keep_err = 1 });
	int exited = 0;
	l->status = -1;
	double end = tu_now() + 30;
	while (tu_now() < end && !(exited && l->final >= finals)) {
		zmq_pollitem_t it = { .socket = l->sub, .events = ZMQ_POLLIN };
		if (zmq_poll(&it, 1, 20) > 0) {
			zmq_msg_t topic, body;
			zmq_msg_init(&topic);
			zmq_msg_init(&body);
			ck_assert(zmq_msg_recv(&topic, l->sub, 0) >= 0);
			ck_assert(zmq_msg_more(&topic));
			ck_assert(zmq_msg_recv(&body, l->sub, 0) >= 0);
			iogp_kind kind;
			uint16_t flags;
			uint64_t src, seq;
			ck_assert_int_eq(iogp_msg_peek(zmq_msg_data(&body), zmq_msg_size(&body),
			                               &kind, &flags, &src, &seq), 0);
			l->hello += kind == IOGP_HELLO;
			l->delta += kind == IOGP_DELTA;
			l->final += kind == IOGP_SNAPSHOT && (flags & IOGP_F_FINAL);
			l->bye += kind == IOGP_BYE;
			/* a DELTA before the source's HELLO/SNAPSHOT got through (slow
			 * joiner) is refused as unknown; the SNAPSHOT that answers our
			 * subscription brings the source in with exact totals */
			int rc = iogp_model_feed(l->m, zmq_msg_data(&body), zmq_msg_size(&body),
			                         (uint64_t)(tu_now() * 1e9));
			ck_assert_msg(rc >= 0 || rc == IOGP_EUNKNOWN, "feed: %d", rc);
			zmq_msg_close(&topic);
			zmq_msg_close(&body);
		}
		int st;
		if (!exited && waitpid(pid, &st, WNOHANG) == pid) {
			exited = 1;
			l->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			end = tu_now() + 3;   /* the final messages are already on their way */
		}
	}
	if (!exited) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	ck_assert_msg(exited, "program under iogram-run did not finish");
}

START_TEST(test_live)
{
	live l;
	live_open(&l);
	char p[300], ns[32];
	tu_prog(p, sizeof(p), "pread_loop");
	write_file(path_in("live.dat"), 1 << 20, 14);
	const long n = 400000;
	snprintf(ns, sizeof(ns), "%ld", n);
	live_run(&l, 1, (char *[]){ p, path_in("live.dat"), ns, NULL });
	ck_assert_int_eq(l.status, 0);
	ck_assert_msg(l.hello >= 1 && l.delta >= 1 && l.final == 1,
	              "hello %d delta %d final snapshot %d bye %d", l.hello, l.delta, l.final, l.bye);
	ck_assert_uint_eq(iogp_model_source_count(l.m), 1);
	/* warm-up reads of the 256 blocks plus n */
	ck_assert_uint_eq(counter(l.m, "posix.read.ops"), (uint64_t)n + 256);
	ck_assert_uint_eq(counter(l.m, "posix.read.bytes"), ((uint64_t)n + 256) * 4096);
	ck_assert_uint_eq(counter(l.m, "posix.write.ops"), 0);
	check_invariants(l.m);
	live_close(&l);
}
END_TEST

/* One line per source, for failure messages. */
static const char *describe(const live *l)
{
	static char buf[2048];
	size_t o = (size_t)snprintf(buf, sizeof(buf), "hello %d delta %d final %d bye %d;", l->hello,
	                            l->delta, l->final, l->bye);
	for (size_t i = 0; i < iogp_model_source_count(l->m) && o < sizeof(buf) - 200; i++) {
		iogp_source_info si;
		iogp_model_source(l->m, i, &si);
		const char *exe = iogp_model_source_label(l->m, i, "exe");
		iogp_sel sel = { .kind = IOGP_SEL_SOURCE, .source = si.id };
		uint64_t wb = 0;
		iogp_model_counter(l->m, "posix.write.bytes", &sel, &wb);
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, " [pid %lld %s msgs %llu state %d wrote %llu]",
		                      (long long)si.pid, exe ? exe : "?", (unsigned long long)si.messages,
		                      (int)si.state, (unsigned long long)wb);
	}
	return buf;
}

/* parent, child and exec'd image: three sources, each with its own writes */
static void check_forkexec(const iogp_model *m, const uint64_t want[3])
{
	ck_assert_uint_eq(iogp_model_source_count(m), 3);
	int seen[3] = { 0, 0, 0 };
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(m, i, &si), 0);
		iogp_sel sel = { .kind = IOGP_SEL_SOURCE, .source = si.id };
		uint64_t w = counter_sel(m, "posix.write.bytes", &sel);
		for (int k = 0; k < 3; k++)
			if (w == want[k])
				seen[k]++;
		ck_assert_int_eq(si.state, IOGP_SRC_GONE);
	}
	ck_assert_msg(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "sources' writes %d %d %d",
	              seen[0], seen[1], seen[2]);
	check_invariants(m);
}

START_TEST(test_forkexec)
{
	live l;
	live_open(&l);
	char p[300];
	tu_prog(p, sizeof(p), "forkexec");
	double t0 = tu_now();
	live_run(&l, 3, (char *[]){ p, dir, NULL });
	ck_assert_msg(tu_now() - t0 < 20, "fork/exec run took %.1f s", tu_now() - t0);
	ck_assert_int_eq(l.status, 0);
	ck_assert_msg(l.final == 3, "%s", describe(&l));
	const uint64_t want[3] = { 10 * 1000, 20 * 2000, 30 * 3000 };
	check_forkexec(l.m, want);
	ck_assert_uint_eq(counter(l.m, "posix.write.ops"), 10 + 20 + 30);
	ck_assert_uint_eq(bin_at(l.m, "posix.write.size", 1000, NULL), 10);
	ck_assert_uint_eq(bin_at(l.m, "posix.write.size", 2000, NULL), 20);
	ck_assert_uint_eq(bin_at(l.m, "posix.write.size", 3000, NULL), 30);
	live_close(&l);
}
END_TEST

START_TEST(test_forkexec_cat)
{
	live l;
	live_open(&l);
	char p[300];
	tu_prog(p, sizeof(p), "forkexec");
	live_run(&l, 3, (char *[]){ p, dir, "cat", NULL });
	ck_assert_int_eq(l.status, 0);
	/* cat reads the parent's 10000 B and writes them to /dev/null (a
	 * character device: other.*, not storage) */
	ck_assert_msg(iogp_model_source_count(l.m) == 3, "%s", describe(&l));
	ck_assert_uint_eq(counter(l.m, "posix.write.bytes"), 10 * 1000 + 20 * 2000);
	ck_assert_uint_eq(counter(l.m, "other.write.bytes"), 10000);
	ck_assert_uint_eq(counter(l.m, "posix.read.bytes"), 10000);
	check_invariants(l.m);
	live_close(&l);
}
END_TEST

START_TEST(test_vfork)
{
	live l;
	live_open(&l);
	char p[300];
	tu_prog(p, sizeof(p), "forkexec");
	live_run(&l, 2, (char *[]){ p, dir, "vfork", NULL });
	ck_assert_int_eq(l.status, 0);
	ck_assert_msg(l.final == 2 && iogp_model_source_count(l.m) == 2, "%s", describe(&l));
	ck_assert_uint_eq(counter(l.m, "posix.write.bytes"), 10 * 1000 + 30 * 3000);
	ck_assert_uint_eq(counter(l.m, "posix.write.ops"), 10 + 30);
	check_invariants(l.m);
	live_close(&l);
}
END_TEST

/* The same, recorded to files (%p: the exec'd image has its child's pid). */
START_TEST(test_forkexec_files)
{
	char p[300];
	tu_prog(p, sizeof(p), "forkexec");
	ck_assert_int_eq(RUN_RECORDED(p, dir), 0);
	iogp_model *m = load_all(NULL);
	const uint64_t want[3] = { 10 * 1000, 20 * 2000, 30 * 3000 };
	check_forkexec(m, want);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_nobody_listening)
{
	char p[300], ep[64];
	tu_prog(p, sizeof(p), "stdio_ops");
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	enum { RUNS = 5 };
	double plain[RUNS], under[RUNS];
	for (int i = 0; i < RUNS; i++) {
		double t0 = tu_now();
		ck_assert_int_eq(run((char *[]){ p, path_in("quiet.dat"), NULL }, NULL), 0);
		plain[i] = tu_now() - t0;
		t0 = tu_now();
		ck_assert_int_eq(run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", ep, "--",
		                                 p, path_in("quiet.dat"), NULL }, NULL), 0);
		under[i] = tu_now() - t0;
	}
	double mp = tu_median(plain, RUNS), mu = tu_median(under, RUNS);
	double extra = mu - mp;
	fprintf(stderr, "nobody listening: median %.1f ms plain, %.1f ms under iogram-run\n",
	        mp * 1e3, mu * 1e3);
	ck_assert_msg(extra < 0.3, "run with nobody listening took %.0f ms longer", extra * 1e3);
}
END_TEST

/* ---- iogram-run ---------------------------------------------------------------- */

START_TEST(test_exit_codes)
{
	char *r = (char *)tu_env("IOGRAM_RUN");
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", "false", NULL }, NULL), 1);
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", "true", NULL }, NULL), 0);
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", "sh", "-c", "exit 42", NULL }, NULL), 42);
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", "/nonexistent/cmd", NULL }, NULL), 127);
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", "no-such-command-iogram", NULL }, NULL), 127);
	/* found but not executable: 126, as sh and env say */
	const char *noexec = tu_fmt("%s/noexec.sh", dir);
	FILE *f = fopen(noexec, "w");
	ck_assert_ptr_nonnull(f);
	fputs("echo hi\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(noexec, 0644), 0);
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", (char *)noexec, NULL }, NULL), 126);
	ck_assert_int_eq(run((char *[]){ "sh", "-c", "\"$0\"", (char *)noexec, NULL }, NULL), 126);
	/* a signal passes through as the shell would show it */
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "--", "sh", "-c", "kill -TERM $$", NULL }, NULL),
	                 128 + SIGTERM);
	/* usage errors */
	ck_assert_int_eq(run((char *[]){ r, "--bogus", "--", "true", NULL }, NULL), 2);
	ck_assert_int_eq(run((char *[]){ r, NULL }, NULL), 2);
	ck_assert_int_eq(run((char *[]){ r, "--interval", "abc", "--", "true", NULL }, NULL), 2);
	ck_assert_int_eq(run((char *[]){ r, "--interval", "0", "--", "true", NULL }, NULL), 2);
	ck_assert_int_eq(run((char *[]){ r, "--output", NULL }, NULL), 2);
	/* the command's own flags are not ours */
	ck_assert_int_eq(run((char *[]){ r, "--endpoint", "none", "sh", "-c", "exit 3", NULL }, NULL), 3);
}
END_TEST

START_TEST(test_help_version)
{
	char *r = (char *)tu_env("IOGRAM_RUN");
	ck_assert_int_eq(run((char *[]){ r, "--help", NULL }, path_in("help.txt")), 0);
	const char *h = tu_slurp(path_in("help.txt"));
	ck_assert_ptr_nonnull(strstr(h, "EXAMPLES"));
	ck_assert_ptr_nonnull(strstr(h, "--endpoint"));
	ck_assert_ptr_nonnull(strstr(h, "--output"));
	ck_assert_int_eq(run((char *[]){ r, "--version", NULL }, path_in("version.txt")), 0);
	ck_assert_ptr_nonnull(strstr(tu_slurp(path_in("version.txt")), "iogram-run"));
}
END_TEST

START_TEST(test_env_and_preload)
{
	char *r = (char *)tu_env("IOGRAM_RUN");
	/* an existing LD_PRELOAD is kept after ours */
	const tu_opts preload = { .out = path_in("env.txt"),
	                          .env = (const char *const[]){ "LD_PRELOAD=libc.so.6", NULL } };
	ck_assert_int_eq(tu_wait(tu_spawn_opt((char *[]){ r, "--endpoint", "none", "--node", "n042",
		"--interval", "250", "--output", "/dev/null", "--disable", "--", "sh", "-c",
		"echo \"$LD_PRELOAD|$IOGRAM_NODE|$IOGRAM_INTERVAL_MS|$IOGRAM_ENDPOINT|$IOGRAM_OUTPUT|$IOGRAM_DISABLE\"",
		NULL }, &preload), RUN_TIMEOUT_S), 0);
	char *s = strdup(tu_slurp(path_in("env.txt")));
	char *bar = strchr(s, '|');
	ck_assert_ptr_nonnull(bar);
	*bar = '\0';
	ck_assert_msg(s[0] == '/', "preload not absolute: %s", s);
	size_t l = strlen(s);
	ck_assert_msg(l > 29 && !strcmp(s + l - 29, "/libiogram-posix.so:libc.so.6"), "LD_PRELOAD=%s", s);
	ck_assert_str_eq(bar + 1, "n042|250|none|/dev/null|1\n");
	free(s);
}
END_TEST

START_TEST(test_disabled)
{
	char p[300];
	tu_prog(p, sizeof(p), "threads");
	ck_assert_int_eq(run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--disable", "--endpoint", "none",
		"--output", out_tmpl(), "--", p, dir, NULL }, NULL), 0);
	/* nothing recorded, or a file without I/O */
	int nf;
	iogp_model *m = load_all(&nf);
	if (nf > 0 && iogp_model_metric_find(m, "posix.write.ops", &(size_t){ 0 }) == 0)
		ck_assert_uint_eq(counter(m, "posix.write.ops"), 0);
	iogp_model_free(m);
}
END_TEST

/* ---- nothing silently missed ------------------------------------------------ */

/* Sources of m whose posix.write.bytes is exactly bytes. */
static int sources_writing(const iogp_model *m, uint64_t bytes)
{
	int n = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(m, i, &si), 0);
		iogp_sel sel = { .kind = IOGP_SEL_SOURCE, .source = si.id };
		uint64_t w = 0;
		if (iogp_model_counter(m, "posix.write.bytes", &sel, &w) == 0 && w == bytes)
			n++;
	}
	return n;
}

/* Removes the test directory's run-*.iogr files. */
static void clear_runs(void)
{
	DIR *d = opendir(dir);
	ck_assert(d != NULL);
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "run-", 4) == 0)
			ck_assert_int_eq(unlink(path_in(de->d_name)), 0);
	closedir(d);
}

static int count_runs(void)
{
	int n;
	iogp_model_free(load_all(&n));
	return n;
}

/* CMD... under iogram-run (recording to run-%p.iogr) with stdout and stderr
 * captured. */
static tu_result run_captured(char *const cmd[], const char *const *env)
{
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)tu_env("IOGRAM_RUN");
	argv[n++] = "--endpoint";
	argv[n++] = "none";
	argv[n++] = "--output";
	argv[n++] = out_tmpl();
	argv[n++] = "--";
	for (int i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	return tu_capture(argv, &(tu_opts){ .env = env }, RUN_TIMEOUT_S);
}

/* A static program: iogram-run says its I/O cannot be counted, runs it and
 * passes its status through; found through PATH as execvp would. Dynamic
 * programs and scripts get no word. */
START_TEST(test_static_warns)
{
	ck_assert_msg(strcmp(tu_env("IOGRAM_STATIC_PROG"), "1") == 0,
	              "no static test program: cc -static failed (libc6-dev's libc.a?)");
	char p[300];
	tu_prog(p, sizeof(p), "static");
	tu_result r = run_captured((char *[]){ p, dir, "7", NULL }, NULL);
	ck_assert_int_eq(r.status, 7);
	const char *want = tu_fmt("iogram-run: %s is statically linked: its I/O cannot be counted", p);
	ck_assert_msg(strstr(r.err, want) != NULL, "stderr: '%s'", r.err);
	ck_assert_int_eq(strlen(tu_slurp(path_in("static.dat"))), 4000);   /* it ran */
	ck_assert_int_eq(count_runs(), 0);   /* and nothing was recorded: it is true */
	tu_result_free(&r);
	/* through PATH; status 0 */
	const char *path_env[] = { tu_fmt("PATH=/nonexistent-iogram:%s:/usr/bin:/bin", tu_env("IOGRAM_PROGS")),
	                           NULL };
	r = run_captured((char *[]){ "prog_static", dir, "0", NULL }, path_env);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "is statically linked") != NULL, "stderr: '%s'", r.err);
	tu_result_free(&r);
	/* dynamic programs, through PATH or not, and a script: not a word */
	char *const quiet[][5] = {
		{ "true", NULL }, { "sh", "-c", "exit 5", NULL }, { "prog_spawn", "--true", NULL },
		{ path_in("script.sh"), NULL },
	};
	const int status[] = { 0, 5, 0, 3 };
	FILE *f = fopen(path_in("script.sh"), "w");
	ck_assert(f != NULL);
	fputs("#!/bin/sh\nexit 3\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(path_in("script.sh"), 0755), 0);
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		r = run_captured(quiet[i], path_env);
		ck_assert_int_eq(r.status, status[i]);
		ck_assert_msg(r.err[0] == '\0', "%s: stderr '%s'", quiet[i][0], r.err);
		tu_result_free(&r);
	}
}
END_TEST

/* Set-id programs: where the loader runs them in secure-execution mode (their
 * owner or group is not the caller's) it ignores LD_PRELOAD; iogram-run says
 * so, runs them and passes their status through. A set-id program that
 * changes no identity (root's own set-uid program run by root) is counted
 * and gets no word. */
START_TEST(test_setid_warns)
{
	char p[300];
	tu_prog(p, sizeof(p), "spawn");
	char *copy = strdup(path_in("suid"));
	ck_assert_int_eq(tu_system(tu_fmt("cp '%s' '%s'", p, copy)), 0);
	ck_assert_int_eq(chmod(copy, 04755), 0);
	/* without a mode, prog_spawn exits 2 */
	tu_result r = run_captured((char *[]){ copy, NULL }, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(r.err[0] == '\0', "own set-uid program: stderr '%s'", r.err);
	ck_assert_int_eq(count_runs(), 1);
	tu_result_free(&r);
	clear_runs();
	if (geteuid() != 0) {
		fprintf(stderr, "setid_warns: not root, cannot make another user's set-uid program\n");
		free(copy);
		return;
	}
	ck_assert_int_eq(chown(copy, 65534, (gid_t)-1), 0);
	ck_assert_int_eq(chmod(copy, 04755), 0);   /* chown clears it */
	r = run_captured((char *[]){ copy, NULL }, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, tu_fmt("iogram-run: %s is setuid", copy)) != NULL &&
	              strstr(r.err, "LD_PRELOAD") != NULL, "stderr: '%s'", r.err);
	ck_assert_int_eq(count_runs(), 0);   /* the loader did ignore it */
	tu_result_free(&r);
	ck_assert_int_eq(chown(copy, 0, 65534), 0);
	ck_assert_int_eq(chmod(copy, 02755), 0);
	r = run_captured((char *[]){ copy, "--true", NULL }, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, tu_fmt("iogram-run: %s is setgid", copy)) != NULL, "stderr: '%s'", r.err);
	ck_assert_int_eq(count_runs(), 0);
	tu_result_free(&r);
	free(copy);
}
END_TEST

/* Children started with an environment that lacks LD_PRELOAD and the
 * IOGRAM_* settings stay sources: the parent's 300 B and the child's 5439 B
 * each in a source of their own. IOGRAM_INHERIT=0 turns it off. */
START_TEST(test_env_dropped)
{
	char p[300];
	tu_prog(p, sizeof(p), "spawn");
	ck_assert_int_eq(run((char *[]){ p, "errors", dir, NULL }, NULL), 0);
	ck_assert_int_eq(RUN_RECORDED(p, "errors", dir), 0);
	clear_runs();
	static const char *const modes[] = { "posix_spawn", "posix_spawnp", "execve", "execvpe",
	                                     "fexecve", "vfork", "clearenv" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ck_assert_msg(RUN_RECORDED(p, (char *)modes[i], dir) == 0, "%s", modes[i]);
		int nf;
		iogp_model *m = load_all(&nf);
		ck_assert_msg(sources_writing(m, 300) == 1 && sources_writing(m, 7 * 777) == 1,
		              "%s: %d files, %zu sources, %d parent, %d child", modes[i], nf,
		              iogp_model_source_count(m), sources_writing(m, 300), sources_writing(m, 7 * 777));
		ck_assert_uint_eq(counter(m, "posix.write.bytes"), 300 + 7 * 777);
		iogp_model_free(m);
		clear_runs();
	}
	/* env -i: execvp with an empty environment */
	ck_assert_int_eq(RUN_RECORDED("env", "-i", p, "--child", dir), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_msg(sources_writing(m, 7 * 777) == 1, "env -i: %zu sources", iogp_model_source_count(m));
	iogp_model_free(m);
	clear_runs();
	/* IOGRAM_INHERIT=0: the dropped environment stays dropped */
	setenv("IOGRAM_INHERIT", "0", 1);
	ck_assert_int_eq(RUN_RECORDED(p, "posix_spawn", dir), 0);
	ck_assert_int_eq(RUN_RECORDED("env", "-i", p, "--child", dir), 0);
	unsetenv("IOGRAM_INHERIT");
	m = load_all(NULL);
	ck_assert_int_eq(sources_writing(m, 300), 1);
	ck_assert_int_eq(sources_writing(m, 7 * 777), 0);
	iogp_model_free(m);
}
END_TEST

/* mmap: a 1 MiB file mapped in two halves (mmap, mmap64) is 2 ops and 1 MiB;
 * anonymous and /dev/zero mappings and a failed mmap are not counted, nor
 * are the reads through the mapping requests. */
START_TEST(test_mmap)
{
	char p[300];
	tu_prog(p, sizeof(p), "mmap_file");
	write_file(path_in("map.dat"), 1 << 20, 21);
	ck_assert_int_eq(RUN_RECORDED(p, path_in("map.dat")), 0);
	iogp_model *m = load_all(NULL);
	ck_assert_uint_eq(counter(m, "posix.mmap.ops"), 2);
	ck_assert_uint_eq(counter(m, "posix.mmap.bytes"), 1 << 20);
	ck_assert_uint_eq(counter(m, "posix.read.ops"), 0);
	ck_assert_uint_eq(counter(m, "posix.errors"), 0);
	iogp_model_free(m);
}
END_TEST

/* ---- only storage in the storage metrics -------------------------------------- */

/* What the recording says on what the request counters say. */
static void expect_rw(const iogp_model *m, const char *family, const uint64_t ops[2],
                      const uint64_t bytes[2])
{
	static const char *const op[2] = { "read", "write" };
	for (int i = 0; i < 2; i++) {
		char n[64];
		snprintf(n, sizeof(n), "%s.%s.ops", family, op[i]);
		if (ops)
			ck_assert_msg(counter(m, n) == ops[i], "%s: %llu, want %llu", n,
			              (unsigned long long)counter(m, n), (unsigned long long)ops[i]);
		snprintf(n, sizeof(n), "%s.%s.bytes", family, op[i]);
		ck_assert_msg(counter(m, n) == bytes[i], "%s: %llu, want %llu", n,
		              (unsigned long long)counter(m, n), (unsigned long long)bytes[i]);
	}
}

/* Access samples of m: none on a file named with one of the prefixes; how
 * many name a file at all. */
static size_t samples_avoid(const iogp_model *m, const char *const *prefixes)
{
	size_t named = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		const iogp_access *a[2];
		size_t n[2];
		n[0] = iogp_model_access(m, i, &a[0], &n[1], &a[1]);
		for (int h = 0; h < 2; h++)
			for (size_t j = 0; j < n[h]; j++) {
				const char *p = iogp_model_file_path(m, i, a[h][j].file);
				named += p != NULL;
				for (const char *const *pre = prefixes; p && *pre; pre++)
					ck_assert_msg(strncmp(p, *pre, strlen(*pre)) != 0, "access sample on %s", p);
			}
	}
	return named;
}

static const char *const not_storage[] = { "pipe:", "/dev/", "/proc/", "/sys/", "fd:", NULL };

/* The end of a run: access samples on storage alone (and some) unless
 * everything counted (all), the invariants; m freed. */
static void storage_done(iogp_model *m, int all)
{
	if (!all)
		ck_assert_uint_gt(samples_avoid(m, not_storage), 0);
	check_invariants(m);
	iogp_model_free(m);
}

static void bash_recorded(const char *script, const char *const *env)
{
	tu_result r = run_captured((char *[]){ "bash", "-c", (char *)script, NULL }, env);
	ck_assert_msg(r.status == 0, "%s: exit %d, stderr %s", script, r.status, r.err);
	tu_result_free(&r);
}

/* dd from a file to /dev/null: the file's reads are storage, the writes to
 * the character device are not (other.*); IOGRAM_ALL_FILES=1 and
 * iogram-run --all-files count them as storage again. */
START_TEST(test_dd_devnull)
{
	const uint64_t n = 40, bs = 65536;
	write_file(path_in("dd.in"), n * bs + 123, 22);
	char ifa[320];
	snprintf(ifa, sizeof(ifa), "if=%s", path_in("dd.in"));
	for (int v = 0; v < 3; v++) {
		clear_runs();
		const char *const env[] = { v == 1 ? "IOGRAM_ALL_FILES=1" : "IOGRAM_ALL_FILES", NULL };
		char *argv[] = { (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--output", out_tmpl(),
			"--all-files", "--", "dd", ifa, "of=/dev/null", "bs=64k", "count=40", "status=none", NULL };
		if (v != 2)
			memmove(&argv[5], &argv[6], 8 * sizeof(argv[0]));   /* no --all-files */
		ck_assert_int_eq(tu_wait(tu_spawn_opt(argv, &(tu_opts){ .env = env }), RUN_TIMEOUT_S), 0);
		iogp_model *m = load_all(NULL);
		int all = v > 0;
		expect_rw(m, "posix", (uint64_t[]){ n, all ? n : 0 }, (uint64_t[]){ n * bs, all ? n * bs : 0 });
		expect_rw(m, "other", (uint64_t[]){ 0, all ? 0 : n }, (uint64_t[]){ 0, all ? 0 : n * bs });
		ck_assert_uint_eq(bin_at(m, "posix.write.size", bs, NULL), all ? n : 0);
		storage_done(m, all);
	}
}
END_TEST

/* cat f | cat > g: the pipe between the two is counted once, in other.*,
 * never as storage (it was written and read: twice the truth). */
START_TEST(test_pipe_not_storage)
{
	const uint64_t size = 300001;
	write_file(path_in("f"), size, 21);
	char script[800];
	snprintf(script, sizeof(script), "cat '%s' | cat > '%s'", path_in("f"), path_in("g"));
	for (int all = 0; all < 2; all++) {
		clear_runs();
		bash_recorded(script, (const char *const[]){ all ? "IOGRAM_ALL_FILES=1" : "IOGRAM_ALL_FILES", NULL });
		ck_assert(tu_same_file(path_in("f"), path_in("g")));
		iogp_model *m = load_all(NULL);
		const uint64_t k = all ? 2 : 1, o = all ? 0 : size;
		expect_rw(m, "posix", NULL, (uint64_t[]){ k * size, k * size });
		expect_rw(m, "other", NULL, (uint64_t[]){ o, o });
		storage_done(m, all);
	}
}
END_TEST

/* /dev/urandom and /proc files, by absolute and by relative path: not
 * storage; their bytes are other.*, the files written from them storage. */
START_TEST(test_system_files)
{
	char script[1200];
	snprintf(script, sizeof(script), "cd '%s' && dd if=/dev/urandom of=a bs=1000 count=100 status=none && "
	         "cat /proc/self/status > b && cd /proc/self && cat status > '%s' && "
	         "cd /dev && dd if=urandom bs=1000 count=5 status=none > '%s'", dir, path_in("c"), path_in("d"));
	bash_recorded(script, NULL);
	struct stat sb, sc;
	ck_assert_int_eq(stat(path_in("b"), &sb), 0);
	ck_assert_int_eq(stat(path_in("c"), &sc), 0);
	ck_assert_int_gt(sb.st_size, 0);
	const uint64_t total = 100000 + (uint64_t)sb.st_size + (uint64_t)sc.st_size + 5000;
	iogp_model *m = load_all(NULL);
	expect_rw(m, "posix", (uint64_t[]){ 0, counter(m, "posix.write.ops") }, (uint64_t[]){ 0, total });
	expect_rw(m, "other", NULL, (uint64_t[]){ total, 0 });
	ck_assert_uint_gt(samples_avoid(m, not_storage), 0);
	/* (no check_invariants: cat may try copy_file_range from /proc first,
	 * a failed request on its storage side) */
	iogp_model_free(m);
}
END_TEST

/* IOGRAM_EXCLUDE_DIRS / IOGRAM_INCLUDE_DIRS: the longest matching prefix
 * decides (a tie: excluded), whole path components only; what is excluded
 * is not counted at all, even with IOGRAM_ALL_FILES; an included directory
 * counts whatever is in it. */
START_TEST(test_exclude_include)
{
	ck_assert_int_eq(mkdir(path_in("ex"), 0700), 0);
	ck_assert_int_eq(mkdir(path_in("ex/keep"), 0700), 0);
	ck_assert_int_eq(mkdir(path_in("exx"), 0700), 0);
	write_file(path_in("ex/f1"), 1000, 31);
	write_file(path_in("ex/keep/f2"), 2000, 32);
	write_file(path_in("exx/f3"), 4000, 33);
	char ex[400], in[400], script[1200];
	snprintf(ex, sizeof(ex), "IOGRAM_EXCLUDE_DIRS=/nonexistent:%s/", path_in("ex"));
	snprintf(in, sizeof(in), "IOGRAM_INCLUDE_DIRS=%s", path_in("ex/keep"));
	snprintf(script, sizeof(script), "cd '%s' && cat ex/f1 ex/keep/f2 exx/f3 > o1 && cd ex && "
	         "cat f1 > ../o2 && cat keep/f2 > /dev/null", dir);
	bash_recorded(script, (const char *const[]){ ex, in, NULL });
	iogp_model *m = load_all(NULL);
	expect_rw(m, "posix", NULL, (uint64_t[]){ 2000 + 4000 + 2000, 7000 + 1000 });
	expect_rw(m, "other", NULL, (uint64_t[]){ 0, 2000 });
	iogp_model_free(m);

	/* excluded wins over IOGRAM_ALL_FILES */
	clear_runs();
	snprintf(script, sizeof(script), "cat '%s' > '%s'", path_in("ex/f1"), path_in("o3"));
	bash_recorded(script, (const char *const[]){ ex, "IOGRAM_ALL_FILES=1", NULL });
	m = load_all(NULL);
	expect_rw(m, "posix", NULL, (uint64_t[]){ 0, 1000 });
	iogp_model_free(m);

	/* an included /proc is storage */
	clear_runs();
	snprintf(script, sizeof(script), "cat /proc/self/status > '%s'", path_in("o4"));
	bash_recorded(script, (const char *const[]){ "IOGRAM_INCLUDE_DIRS=/proc", NULL });
	struct stat st;
	ck_assert_int_eq(stat(path_in("o4"), &st), 0);
	m = load_all(NULL);
	expect_rw(m, "posix", NULL, (uint64_t[]){ (uint64_t)st.st_size, (uint64_t)st.st_size });
	expect_rw(m, "other", NULL, (uint64_t[]){ 0, 0 });
	iogp_model_free(m);
}
END_TEST

/* strace -f -yy: bytes and requests on the test directory's files (storage)
 * and on pipes, by the host's threads (an agent thread unshares its
 * descriptor table first; the loader's and libc's own reads of libraries and
 * /etc are outside the directory). [class][op]. */
typedef struct io_truth {
	uint64_t bytes[2][2], ops[2][2];
} io_truth;

static int truth_class(const char *args)
{
	const char *lt = strchr(args, '<');
	if (lt == NULL || lt - args > 12)
		return -1;
	lt++;
	if (!strncmp(lt, "pipe:[", 6))
		return 1;
	size_t dl = strlen(dir), n = strcspn(lt, "<>");
	if (n > dl + 1 && !strncmp(lt, dir, dl) && lt[dl] == '/' && strncmp(lt + n - 5, ".iogr", 5) != 0)
		return 0;
	return -1;
}

static io_truth strace_truth(const char *log)
{
	io_truth t;
	memset(&t, 0, sizeof(t));
	struct { long tid; int agent, cls, op; } th[512];
	int nth = 0;
	FILE *f = fopen(log, "r");
	ck_assert(f != NULL);
	char line[8192];
	while (fgets(line, sizeof(line), f)) {
		char *p;
		long tid = strtol(line, &p, 10);
		int k = 0;
		while (k < nth && th[k].tid != tid)
			k++;
		if (k == nth) {
			ck_assert(nth < 512);
			th[nth++] = (__typeof__(th[0])){ tid, 0, -1, -1 };
		}
		p += strspn(p, " ");
		if (!strncmp(p, "unshare(", 8)) {
			th[k].agent = 1;
			continue;
		}
		int resumed = !strncmp(p, "<... ", 5);
		char name[32];
		if (!resumed) {
			size_t nl = strcspn(p, "(");
			snprintf(name, sizeof(name), "%.*s", (int)(nl < 31 ? nl : 31), p);
			th[k].op = syscall_op(name);
			th[k].cls = truth_class(p + nl);
		}
		char *eq = strrchr(p, '=');
		if (strstr(p, "<unfinished ...>") || th[k].agent || th[k].op < 0 || th[k].cls < 0 || !eq)
			continue;
		long ret = strtol(eq + 1, NULL, 10);
		if (ret >= 0) {
			t.bytes[th[k].cls][th[k].op] += (uint64_t)ret;
			t.ops[th[k].cls][th[k].op]++;
		}
	}
	fclose(f);
	return t;
}

/* tar czf / tar xzf (tar and gzip through a pipe): the storage counters are
 * exactly strace's regular-file record, the pipe is other.* once. */
START_TEST(test_tar_truth)
{
	static const char *const names[] = { "tree/a", "tree/b", "tree/sub/c", "tree/sub/empty" };
	static const size_t sizes[] = { 300001, 70000, 1 << 20, 0 };
	ck_assert_int_eq(mkdir(path_in("tree"), 0700), 0);
	ck_assert_int_eq(mkdir(path_in("tree/sub"), 0700), 0);
	ck_assert_int_eq(mkdir(path_in("out"), 0700), 0);
	uint64_t tree = 0;
	for (int i = 0; i < 4; i++) {
		write_file(path_in(names[i]), sizes[i], 40 + (uint64_t)i);
		tree += sizes[i];
	}
	char tgz[300], out[300], log[300];
	snprintf(tgz, sizeof(tgz), "%s", path_in("t.tgz"));
	snprintf(out, sizeof(out), "%s", path_in("out"));
	snprintf(log, sizeof(log), "%s", path_in("tar.log"));
	tu_asan_option("detect_leaks=0");   /* LeakSanitizer cannot run under ptrace */
	for (int x = 0; x < 2; x++) {
		clear_runs();
		char *tar[] = { "tar", x ? "xzf" : "czf", tgz, "-C", x ? out : dir, x ? NULL : "tree", NULL };
		char *argv[40] = { "strace", "-f", "-qq", "-yy", "-s", "0", "-o", log, "-e",
			"trace=unshare,read,write,pread64,pwrite64,readv,writev", "-e", "signal=none",
			(char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--output", out_tmpl(), "--" };
		for (int i = 0; tar[i]; i++)
			argv[18 + i] = tar[i];
		ck_assert_int_eq(run(argv, NULL), 0);
		io_truth t = strace_truth(log);
		ck_assert_uint_ge(t.bytes[0][x], tree);       /* the tree read, then written */
		ck_assert_uint_gt(t.bytes[1][0], 0);          /* through the pipe */
		iogp_model *m = load_all(NULL);
		expect_rw(m, "posix", t.ops[0], t.bytes[0]);
		expect_rw(m, "other", t.ops[1], t.bytes[1]);
		check_invariants(m);
		iogp_model_free(m);
	}
	for (int i = 0; i < 4; i++)
		ck_assert(tu_same_file(path_in(names[i]), tu_fmt("%s/%s", out, names[i])));
}
END_TEST

/* posix.{read,write}.direct.ops: requests on descriptors opened with
 * O_DIRECT or switched to it with fcntl(F_SETFL). On the build directory's
 * disk; where its file system refuses O_DIRECT they stay 0. */
START_TEST(test_direct)
{
	char p[300], a[400], b[400];
	tu_prog(p, sizeof(p), "direct");
	snprintf(a, sizeof(a), "%s/direct-%d.a", tu_env("IOGRAM_PROGS"), (int)getpid());
	snprintf(b, sizeof(b), "%s/direct-%d.b", tu_env("IOGRAM_PROGS"), (int)getpid());
	tu_result r = run_captured((char *[]){ p, a, b, NULL }, NULL);
	unlink(a);
	unlink(b);
	ck_assert_msg(r.status == 0, "prog_direct: exit %d", r.status);
	int direct = strcmp(r.out, "direct\n") == 0;
	ck_assert_msg(direct || strcmp(r.out, "nodirect\n") == 0, "prog_direct said '%s'", r.out);
	if (!direct)
		fprintf(stderr, "direct: %s refuses O_DIRECT: the counters must stay 0\n", tu_env("IOGRAM_PROGS"));
	tu_result_free(&r);
	iogp_model *m = load_all(NULL);
	expect_rw(m, "posix", (uint64_t[]){ 8, 14 }, (uint64_t[]){ 8 * 4096, 14 * 4096 });
	ck_assert_uint_eq(counter(m, "posix.read.direct.ops"), direct ? 8 : 0);
	ck_assert_uint_eq(counter(m, "posix.write.direct.ops"), direct ? 12 : 0);
	check_invariants(m);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "dd", test_dd }, { "cat", test_cat }, { "cp", test_cp },
		{ "threads", test_threads }, { "stdio", test_stdio },
		{ "stdio_all", test_stdio_all }, { "stdio_lines", test_stdio_lines }, { "sort_sed", test_sort_sed },
		{ "forkexec", test_forkexec }, { "forkexec_cat", test_forkexec_cat },
		{ "forkexec_files", test_forkexec_files }, { "vfork", test_vfork },
		{ "aio_qd", test_aio_qd }, { "posix_aio", test_posix_aio }, { "strace", test_strace }, { "live", test_live },
		{ "nobody_listening", test_nobody_listening }, { "exit_codes", test_exit_codes },
		{ "help_version", test_help_version }, { "env_and_preload", test_env_and_preload },
		{ "disabled", test_disabled }, { "static_warns", test_static_warns },
		{ "setid_warns", test_setid_warns }, { "env_dropped", test_env_dropped },
		{ "mmap", test_mmap },
		{ "dd_devnull", test_dd_devnull }, { "pipe_not_storage", test_pipe_not_storage },
		{ "system_files", test_system_files }, { "exclude_include", test_exclude_include },
		{ "tar_truth", test_tar_truth }, { "direct", test_direct },
	};
	/* GCC 12's libasan has no fork handler for its allocator (LLVM added one
	 * in 17): a child forked while another thread holds its lock can hang
	 * in the agent's new thread. Those cases run in the plain build only; so
	 * does setid_warns: a sanitized program run set-uid to another user dies
	 * in LeakSanitizer, which cannot trace it (ASAN_OPTIONS is not read then);
	 * and static_warns: there is no static sanitizer runtime to link it. */
	static const char *const fork_cases[] = { "forkexec", "forkexec_cat", "forkexec_files",
	                                           "env_dropped", "setid_warns", "static_warns", NULL };
	/* (tu_run_cases lets programs the sanitized agent is preloaded into start) */
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 120,
	                          .not_asan = fork_cases };
	return tu_run_cases("posix", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
