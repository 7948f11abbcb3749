/* check_stdio.c - the stdio layer beyond Darshan's set and the sync calls,
 * under the interposer with its recording: dprintf (posix.* writes), scanf
 * on stdin, the wide-character calls, the stream positions behind
 * stdio.access and the stdio spatial classes, sync_file_range/syncfs/sync/
 * msync; and sort, sed and an fprintf/fgets program against ltrace's count
 * of their stdio calls. Each count is what the program itself did
 * (tests/progs/stdio_more.c says which call makes which). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_model.h"
#include "iogp_wire.h"
#include "testutil.h"
#include "testutil_iogr.h"

#define RUN_TIMEOUT_S 60
#define LTRACE_TIMEOUT_S 120

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-stdio");
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

static char *path_in(const char *name)
{
	return tu_fmt("%s/%s", dir, name);
}

static char *out_tmpl(void)
{
	static char buf[300];
	snprintf(buf, sizeof(buf), "%s/run-%%p.iogr", dir);
	return buf;
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert(f != NULL);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* argv with stdin from in, stdout to out, stderr to err (NULL: /dev/null),
 * the environment plus env ("NAME=value", NULL-terminated, may be NULL).
 * Its exit status, 128 + signal, or -1 when it outlived timeout_s (then
 * killed). */
static int run_io(char *const argv[], const char *in, const char *out, const char *err,
                  const char *const *env, double timeout_s)
{
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		int i = open(in ? in : "/dev/null", O_RDONLY);
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		for (const char *const *v = env; v && *v; v++)
			putenv((char *)*v);
		execvp(argv[0], argv);
		_exit(127);
	}
	return tu_wait(pid, timeout_s);
}

/* prog_stdio_more ARGS... under iogram-run, recording to dir/run-%p.iogr;
 * its stderr (what failed, if anything) in dir/err. */
static void run_more(const char *const *args, const char *in, const char *out,
                     const char *const *env)
{
	char p[300];
	tu_prog(p, sizeof(p), "stdio_more");
	char *argv[16];
	int n = 0;
	argv[n++] = (char *)tu_env("IOGRAM_RUN");
	argv[n++] = "--endpoint";
	argv[n++] = "none";
	argv[n++] = "--interval";
	argv[n++] = "100";
	argv[n++] = "--output";
	argv[n++] = out_tmpl();
	argv[n++] = "--";
	argv[n++] = p;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	int st = run_io(argv, in, out, path_in("err"), env, RUN_TIMEOUT_S);
	ck_assert_msg(st == 0, "prog_stdio_more %s: exit %d: %s", args[0], st, tu_slurp(path_in("err")));
}

/* Every run-*.iogr of the test directory loaded into one model. */
static iogp_model *load_all(void)
{
	int n;
	iogp_model *m = tu_load_runs(dir, &n);
	ck_assert_msg(n >= 1, "no recording in %s", dir);
	return m;
}

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

static uint64_t counter(const iogp_model *m, const char *name)
{
	uint64_t v = 0;
	int rc = iogp_model_counter(m, name, NULL, &v);
	ck_assert_msg(rc == 0, "counter %s: %d", name, rc);
	return v;
}

/* Count in the bin holding value; the histogram's total in *total. */
static uint64_t bin_at(const iogp_model *m, const char *name, uint64_t value, uint64_t *total)
{
	iogp_hist h;
	int rc = iogp_model_hist(m, name, NULL, &h);
	ck_assert_msg(rc == 0, "hist %s: %d", name, rc);
	uint64_t c = iogp_hist_count_at(&h, iogp_bins_index(&h.scheme, value));
	if (total)
		*total = h.total;
	iogp_hist_free(&h);
	return c;
}

static uint64_t hist_total(const iogp_model *m, const char *name)
{
	uint64_t t;
	bin_at(m, name, 0, &t);
	return t;
}

#define EXPECT(m, name, want) do { \
	uint64_t got_ = counter(m, name); \
	ck_assert_msg(got_ == (uint64_t)(want), "%s: %llu, want %llu", name, \
	              (unsigned long long)got_, (unsigned long long)(want)); \
} while (0)

/* The layer's counters: ops and bytes per direction, meta ops. */
static void expect_stdio(const iogp_model *m, uint64_t rops, uint64_t rbytes, uint64_t wops,
                         uint64_t wbytes, uint64_t meta)
{
	EXPECT(m, "stdio.read.ops", rops);
	EXPECT(m, "stdio.read.bytes", rbytes);
	EXPECT(m, "stdio.write.ops", wops);
	EXPECT(m, "stdio.write.bytes", wbytes);
	EXPECT(m, "stdio.meta.ops", meta);
	ck_assert_uint_eq(hist_total(m, "stdio.read.size"), rops);
	ck_assert_uint_eq(hist_total(m, "stdio.read.latency"), rops);
	ck_assert_uint_eq(hist_total(m, "stdio.write.size"), wops);
	ck_assert_uint_eq(hist_total(m, "stdio.write.latency"), wops);
}

/* The stdio spatial classes: consecutive, sequential, random per direction. */
static void expect_classes(const iogp_model *m, const uint64_t r[3], const uint64_t w[3])
{
	static const char *const cls[3] = { "consecutive", "sequential", "random" };
	for (int c = 0; c < 3; c++) {
		EXPECT(m, tu_fmt("stdio.read.%s", cls[c]), r[c]);
		EXPECT(m, tu_fmt("stdio.write.%s", cls[c]), w[c]);
	}
}

/* ---- access samples ---- */

typedef struct sample {
	int op;
	uint64_t off, size;
	const char *file;   /* basename */
} sample;

static int sample_cmp(const void *a, const void *b)
{
	const sample *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	if (x->op != y->op)
		return x->op - y->op;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Every access sample of m (at most max) into s, sorted; their number. */
static size_t samples(const iogp_model *m, sample *s, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		const iogp_access *a[2];
		size_t n[2];
		n[0] = iogp_model_access(m, i, &a[0], &n[1], &a[1]);
		for (int h = 0; h < 2; h++)
			for (size_t j = 0; j < n[h]; j++) {
				ck_assert_uint_lt(k, max);
				const char *p = iogp_model_file_path(m, i, a[h][j].file);
				ck_assert_msg(p != NULL, "a sample without a file name");
				const char *b = strrchr(p, '/');
				s[k++] = (sample){ (int)a[h][j].op, a[h][j].offset, a[h][j].size, b ? b + 1 : p };
			}
	}
	if (k > 0)
		qsort(s, k, sizeof(*s), sample_cmp);
	return k;
}

static void expect_samples(const iogp_model *m, sample *want, size_t n)
{
	sample got[64];
	size_t k = samples(m, got, 64);
	if (n > 0)
		qsort(want, n, sizeof(*want), sample_cmp);
	ck_assert_msg(k == n, "%zu samples, want %zu", k, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(sample_cmp(&got[i], &want[i]) == 0,
		              "sample %zu: %s op %d at %llu size %llu, want %s op %d at %llu size %llu", i,
		              got[i].file, got[i].op, (unsigned long long)got[i].off,
		              (unsigned long long)got[i].size, want[i].file, want[i].op,
		              (unsigned long long)want[i].off, (unsigned long long)want[i].size);
}

#define R IOGP_OP_READ
#define W IOGP_OP_WRITE

/* ---- the calls ----------------------------------------------------------------- */

/* dprintf, vdprintf, __dprintf_chk, __vdprintf_chk: one posix.* write each
 * of the bytes it returned, at the descriptor's offset (consecutive), with
 * its access sample; to /dev/null in other.*; nothing in stdio.*. */
/* A character put into or taken from the stream's buffer makes no system
 * call and is not timed: 0 ns in the latency histogram (two clock reads
 * cost more than the 4 ns call); a call that fills or drains the buffer
 * is timed. Every call is still in the histogram. */
START_TEST(test_buffered_chars)
{
	run_more((const char *[]){ "chars", path_in("c.txt"), NULL }, NULL, NULL, NULL);
	iogp_model *m = load_all();
	expect_stdio(m, 10000, 10000, 10000, 10000, 4);
	for (int op = 0; op < 2; op++) {
		const char *name = op ? "stdio.write.latency" : "stdio.read.latency";
		uint64_t total, zero = bin_at(m, name, 0, &total);
		ck_assert_uint_eq(total, 10000);
		/* 10,000 / 4,096: the first call and two more, a few to spare */
		ck_assert_msg(zero >= 9990 && zero <= 9998, "%s: %llu of 10,000 at 0 ns", name,
		              (unsigned long long)zero);
	}
	iogp_model_free(m);
}
END_TEST

START_TEST(test_dprintf)
{
	/* GCC 12's libasan intercepts vdprintf and leaks the 8 KiB buffer of
	 * glibc's temporary stream (the program alone, without the agent, shows
	 * it too): no leak check in this run */
	tu_asan_option("detect_leaks=0");
	run_more((const char *[]){ "dprintf", path_in("d.out"), NULL }, NULL, NULL, NULL);
	ck_assert_str_eq(tu_slurp(path_in("d.out")), "12345\nabc\n00007\nxy\n");
	iogp_model *m = load_all();
	EXPECT(m, "posix.write.ops", 4);
	EXPECT(m, "posix.write.bytes", 19);
	ck_assert_uint_eq(bin_at(m, "posix.write.size", 6, NULL), 2);
	ck_assert_uint_eq(bin_at(m, "posix.write.size", 4, NULL), 1);
	ck_assert_uint_eq(bin_at(m, "posix.write.size", 3, NULL), 1);
	ck_assert_uint_eq(hist_total(m, "posix.write.latency"), 4);
	ck_assert_uint_eq(hist_total(m, "posix.queue_depth"), 4);
	EXPECT(m, "posix.write.consecutive", 4);
	EXPECT(m, "posix.read.ops", 0);
	EXPECT(m, "posix.meta.ops", 2);   /* open, close of d.out */
	EXPECT(m, "posix.errors", 0);     /* descriptor 500 is nothing */
	EXPECT(m, "other.write.ops", 1);
	EXPECT(m, "other.write.bytes", 7);
	expect_stdio(m, 0, 0, 0, 0, 0);
	sample want[] = { { W, 0, 6, "d.out" }, { W, 6, 4, "d.out" }, { W, 10, 6, "d.out" },
	                  { W, 16, 3, "d.out" } };
	expect_samples(m, want, 4);
	iogp_model_free(m);
}
END_TEST

/* scanf, vscanf, __isoc99_scanf, __isoc99_vscanf on a stdin that is a
 * regular file: a read of 0 B each (what they consumed is not known), then
 * a getchar of 1 B; the position is lost after scanf (no sample). stdin
 * under IOGRAM_EXCLUDE_DIRS: nothing. */
START_TEST(test_scanf)
{
	put_file(path_in("s.in"), "12 ab 34 cd 56 ef 78 gh\n");
	run_more((const char *[]){ "scanf", NULL }, path_in("s.in"), NULL, NULL);
	iogp_model *m = load_all();
	expect_stdio(m, 5, 1, 0, 0, 0);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 0, NULL), 4);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 1, NULL), 1);
	expect_classes(m, (uint64_t[]){ 0, 0, 0 }, (uint64_t[]){ 0, 0, 0 });
	expect_samples(m, NULL, 0);
	EXPECT(m, "posix.read.ops", 0);
	EXPECT(m, "posix.meta.ops", 0);
	iogp_model_free(m);

	clear_runs();
	run_more((const char *[]){ "scanf", NULL }, path_in("s.in"), NULL,
	         (const char *[]){ tu_fmt("IOGRAM_EXCLUDE_DIRS=%s", dir), NULL });
	m = load_all();
	expect_stdio(m, 0, 0, 0, 0, 0);
	iogp_model_free(m);
}
END_TEST

/* The wide-character calls: 10 writes on a file and 6 on stdout, 12 reads
 * from the file and 6 from stdin, each one op of 0 B (the bytes of their
 * multibyte form are not known), no position; fopen/fclose/fflush as meta
 * ops. */
START_TEST(test_wide)
{
	put_file(path_in("w.in"), "x\ny\n1 a\n2 b\n3 c\n4 d\n");
	run_more((const char *[]){ "wide", path_in("w.dat"), NULL }, path_in("w.in"), path_in("w.out"),
	         NULL);
	ck_assert_str_eq(tu_slurp(path_in("w.dat")), "abcdef\ngh\n12 ij\n34 kl\n56 mn\n78 op\n");
	ck_assert_str_eq(tu_slurp(path_in("w.out")), "P\nw1\nw2\nw3\nw4\n");
	iogp_model *m = load_all();
	expect_stdio(m, 18, 0, 16, 0, 5);
	ck_assert_uint_eq(bin_at(m, "stdio.read.size", 0, NULL), 18);
	ck_assert_uint_eq(bin_at(m, "stdio.write.size", 0, NULL), 16);
	expect_classes(m, (uint64_t[]){ 0, 0, 0 }, (uint64_t[]){ 0, 0, 0 });
	expect_samples(m, NULL, 0);
	EXPECT(m, "posix.read.ops", 0);
	EXPECT(m, "posix.write.ops", 0);
	iogp_model_free(m);
}
END_TEST

/* Stream positions: every read and write whose offset stdio itself would
 * report is classified and sampled at that offset (fopen at 0, fseek
 * SEEK_SET and SEEK_END, ungetc, rewind, stdout asked once); not after an
 * append, a move we do not see (glibc's inline getc) or fscanf, until a
 * tell. */
START_TEST(test_positions)
{
	run_more((const char *[]){ "pos", path_in("p.dat"), NULL }, NULL, path_in("p.out"), NULL);
	ck_assert_str_eq(tu_slurp(path_in("p.out")), "hello\nx\n");
	iogp_model *m = load_all();
	expect_stdio(m, 10, 53, 7, 54, 11);
	expect_classes(m, (uint64_t[]){ 3, 2, 2 }, (uint64_t[]){ 5, 0, 1 });
	sample want[] = {
		{ W, 0, 10, "p.dat" }, { W, 10, 10, "p.dat" }, { W, 20, 20, "p.dat" },
		{ R, 5, 10, "p.dat" }, { R, 15, 1, "p.dat" }, { R, 15, 1, "p.dat" },
		{ R, 16, 24, "p.dat" }, { R, 30, 4, "p.dat" }, { W, 0, 1, "p.dat" },
		{ R, 0, 5, "p.dat" }, { R, 13, 2, "p.dat" },
		{ W, 0, 6, "p.out" }, { W, 6, 2, "p.out" },
	};
	expect_samples(m, want, sizeof(want) / sizeof(want[0]));
	EXPECT(m, "posix.read.ops", 0);
	EXPECT(m, "posix.write.ops", 0);
	iogp_model_free(m);
}
END_TEST

/* posix.sync.ops: fsync, fdatasync, sync_file_range, syncfs on the file and
 * on its directory, sync, msync MS_SYNC and MS_ASYNC of a file mapping and
 * of a deleted file's; not msync MS_INVALIDATE, nor of /dev/shm, anonymous
 * or unmapped memory, nor syncfs on /dev/null. A failed sync_file_range is
 * an error. Each sync's latency in posix.meta.latency. */
START_TEST(test_sync)
{
	run_more((const char *[]){ "sync", path_in("y.dat"), dir, NULL }, NULL, NULL, NULL);
	iogp_model *m = load_all();
	EXPECT(m, "posix.sync.ops", 9);
	EXPECT(m, "posix.errors", 1);
	/* open, close of the file, open, close of the directory, two unlinks */
	EXPECT(m, "posix.meta.ops", 6);
	ck_assert_uint_eq(hist_total(m, "posix.meta.latency"), 15);
	EXPECT(m, "posix.write.ops", 1);
	EXPECT(m, "posix.write.bytes", 8192);
	EXPECT(m, "posix.mmap.ops", 2);
	EXPECT(m, "posix.mmap.bytes", 16384);
	expect_stdio(m, 0, 0, 0, 0, 0);
	iogp_model_free(m);
	/* under IOGRAM_ALL_FILES the /dev/shm mapping and /dev/null are storage
	 * too; IOGRAM_EXCLUDE_DIRS of the test directory leaves sync() alone */
	clear_runs();
	run_more((const char *[]){ "sync", path_in("y.dat"), dir, NULL }, NULL, NULL,
	         (const char *[]){ "IOGRAM_ALL_FILES=1", NULL });
	m = load_all();
	/* + msync of /dev/shm, of the anonymous mapping (/dev/zero), syncfs(/dev/null) */
	EXPECT(m, "posix.sync.ops", 12);
	iogp_model_free(m);
	clear_runs();
	run_more((const char *[]){ "sync", path_in("y.dat"), dir, NULL }, NULL, NULL,
	         (const char *[]){ tu_fmt("IOGRAM_EXCLUDE_DIRS=%s", dir), NULL });
	m = load_all();
	EXPECT(m, "posix.sync.ops", 1);
	EXPECT(m, "posix.errors", 0);
	iogp_model_free(m);
	/* dd's oflag=sync and oflag=dsync open with O_SYNC and O_DSYNC: noted in
	 * posix.sync.opens (their writes are durable without a sync call); a
	 * plain dd and one to /dev/null are not */
	clear_runs();
	const char *flags[4] = { "oflag=sync", "oflag=dsync", "oflag=direct", "oflag=sync" };
	for (int k = 0; k < 4; k++) {
		char *argv[] = { (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--output", out_tmpl(),
		                 "--", "dd", "if=/dev/zero",
		                 k == 3 ? "of=/dev/null" : tu_fmt("of=%s", path_in("sync.out")),
		                 "bs=4096", "count=4", (char *)flags[k], NULL };
		int st = run_io(argv, NULL, NULL, path_in("err"), NULL, RUN_TIMEOUT_S);
		ck_assert_msg(st == 0 || k == 2, "dd %s: exit %d", flags[k], st);
	}
	m = load_all();
	EXPECT(m, "posix.sync.opens", 2);
	iogp_model_free(m);
}
END_TEST

/* ---- ltrace as the ground truth -------------------------------------------------- */

/* The stdio data calls the layer counts, as ltrace names them. */
static const char *const ltrace_reads[] = {
	"fread", "fread_unlocked", "__fread_chk", "__fread_unlocked_chk", "fgetc", "getc", "_IO_getc",
	"fgetc_unlocked", "getc_unlocked", "getchar", "getchar_unlocked", "getw", "fgets",
	"fgets_unlocked", "__fgets_chk", "__fgets_unlocked_chk", "getline", "getdelim", "__getdelim",
	"fscanf", "vfscanf", "__isoc99_fscanf", "__isoc99_vfscanf", "scanf", "vscanf",
	"__isoc99_scanf", "__isoc99_vscanf", "fgetwc", "getwc", "fgetwc_unlocked", "getwc_unlocked",
	"getwchar", "getwchar_unlocked", "fgetws", "fgetws_unlocked", NULL,
};
static const char *const ltrace_writes[] = {
	"fwrite", "fwrite_unlocked", "fputc", "putc", "_IO_putc", "fputc_unlocked", "putc_unlocked",
	"putchar", "putchar_unlocked", "putw", "fputs", "fputs_unlocked", "puts", "fprintf",
	"printf", "vfprintf", "vprintf", "__fprintf_chk", "__printf_chk", "__vfprintf_chk",
	"__vprintf_chk", "fputwc", "putwc", "fputwc_unlocked", "putwc_unlocked", "putwchar",
	"putwchar_unlocked", "fputws", "fputws_unlocked", "fwprintf", "wprintf", "vfwprintf", NULL,
};

/* The -e expression naming every function of both lists. */
static const char *ltrace_expr(void)
{
	static char buf[2048];
	size_t n = 0;
	for (int l = 0; l < 2; l++)
		for (const char *const *f = l ? ltrace_writes : ltrace_reads; *f; f++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "+" : "", *f);
	ck_assert_uint_lt(n, sizeof(buf) - 1);
	return buf;
}

static int in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

/* CMD... under ltrace -c (following its exec) and the interposer, stdin from
 * in, stdout to out: ltrace's count of read and write calls in calls[2].
 * The recording goes to dir/run-%p.iogr. */
static void ltrace_run(char *const cmd[], const char *in, const char *out, uint64_t calls[2])
{
	char *argv[32];
	int n = 0;
	argv[n++] = "ltrace";
	argv[n++] = "-c";
	argv[n++] = "-o";
	argv[n++] = path_in("ltrace.log");
	argv[n++] = "-e";
	argv[n++] = (char *)ltrace_expr();
	argv[n++] = (char *)tu_env("IOGRAM_RUN");
	argv[n++] = "--endpoint";
	argv[n++] = "none";
	argv[n++] = "--output";
	argv[n++] = out_tmpl();
	argv[n++] = "--";
	for (int i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	int st = run_io(argv, in, out, path_in("ltrace.err"), NULL, LTRACE_TIMEOUT_S);
	ck_assert_msg(st == 0, "ltrace %s: exit %d: %s", cmd[0], st, tu_slurp(path_in("ltrace.err")));
	/* "% time  seconds  usecs/call  calls  function" rows */
	FILE *f = fopen(path_in("ltrace.log"), "r");
	ck_assert(f != NULL);
	char line[512];
	calls[0] = calls[1] = 0;
	int rows = 0;
	while (fgets(line, sizeof(line), f) && rows < 1000) {
		double pct, secs;
		unsigned long long usecs, c;
		char fn[256];
		if (sscanf(line, "%lf %lf %llu %llu %255s", &pct, &secs, &usecs, &c, fn) != 5)
			continue;
		rows++;
		int r = in_list(ltrace_reads, fn), w = in_list(ltrace_writes, fn);
		ck_assert_msg(r || w, "ltrace counted %s, not asked for", fn);
		calls[w] += c;
	}
	fclose(f);
	ck_assert_msg(rows > 0, "ltrace counted no call: %s", tu_slurp(path_in("ltrace.log")));
}

/* The layer's ops against ltrace's calls for the same run. */
static void ltrace_compare(const char *what, char *const cmd[], const char *in, const char *out,
                           uint64_t min_reads, uint64_t min_writes)
{
	clear_runs();
	uint64_t calls[2];
	ltrace_run(cmd, in, out, calls);
	iogp_model *m = load_all();
	uint64_t r = counter(m, "stdio.read.ops"), w = counter(m, "stdio.write.ops");
	fprintf(stderr, "ltrace %s: %llu reads, %llu writes; stdio.read.ops %llu, stdio.write.ops %llu\n",
	        what, (unsigned long long)calls[0], (unsigned long long)calls[1],
	        (unsigned long long)r, (unsigned long long)w);
	ck_assert_msg(r == calls[0], "%s: stdio.read.ops %llu, ltrace %llu", what,
	              (unsigned long long)r, (unsigned long long)calls[0]);
	ck_assert_msg(w == calls[1], "%s: stdio.write.ops %llu, ltrace %llu", what,
	              (unsigned long long)w, (unsigned long long)calls[1]);
	ck_assert_uint_ge(r, min_reads);
	ck_assert_uint_ge(w, min_writes);
	iogp_model_free(m);
}

/* A text file of n lines of letters (10 to 59 of them). */
static void write_text(const char *path, int n)
{
	FILE *f = fopen(path, "w");
	ck_assert(f != NULL);
	uint64_t x = 88172645463325252ull;
	for (int l = 0; l < n; l++) {
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
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* sort, sed s/a/b/ and the fprintf/fgets program (2,000 lines each): the
 * stdio layer's read and write ops equal ltrace's count of the same calls
 * in the same run. */
START_TEST(test_ltrace)
{
	write_text(path_in("text.in"), 2000);
	ltrace_compare("sort", (char *[]){ "sort", "--parallel=1", path_in("text.in"), NULL }, NULL,
	               path_in("sort.out"), 1, 2000);
	ltrace_compare("sed", (char *[]){ "sed", "s/a/b/", path_in("text.in"), NULL }, NULL,
	               path_in("sed.out"), 2000, 2000);
	char p[300];
	tu_prog(p, sizeof(p), "stdio_lines");
	ltrace_compare("fprintf/fgets", (char *[]){ p, path_in("lines.dat"), "2000", NULL },
	               NULL, NULL, 2001, 2000);
	/* the program's own counts too: 2,000 fprintf of 11 B, 2,001 fgets */
	iogp_model *m = load_all();
	expect_stdio(m, 2001, 22000, 2000, 22000, 4);
	expect_classes(m, (uint64_t[]){ 2001, 0, 0 }, (uint64_t[]){ 2000, 0, 0 });
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "buffered_chars", test_buffered_chars }, { "dprintf", test_dprintf }, { "scanf", test_scanf }, { "wide", test_wide },
		{ "positions", test_positions }, { "sync", test_sync }, { "ltrace", test_ltrace },
	};
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 300 };
	return tu_run_cases("stdio", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
