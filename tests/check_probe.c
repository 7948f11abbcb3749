/* check_probe.c - iogram probe: the slowdown it reports against a shim that
 * slows chosen calls by known factors for known stretches (only those
 * operations and reports move), its own I/O against strace (six operations
 * per interval, sizes exact), its recording, its clean-up on exit and on
 * SIGTERM, and the directories it refuses. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "testutil.h"
#include "testutil_iogr.h"

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-probe");
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* Entries of dir whose name starts with prefix. */
static int count_entries(const char *d, const char *prefix)
{
	DIR *x = opendir(d);
	int n = 0;
	struct dirent *e;
	while (x && (e = readdir(x)) != NULL)
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (x)
		closedir(x);
	return n;
}

/* What report line k (0-based) of out says of op: the factor, the
 * statistic and the expected time (us). */
static double report(const char *out, int k, const char *op, double *stat_us, double *exp_us)
{
	const char *l = out;
	for (int i = -1; i < k && l; ) {
		l = strchr(l, '\n');
		if (l && *++l != '#')
			i++;
	}
	ck_assert_msg(l != NULL, "no report %d", k);
	char key[32];
	snprintf(key, sizeof key, " %s ", op);
	const char *p = strstr(l, key), *end = strchr(l, '\n');
	ck_assert_msg(p && (!end || p < end), "no %s in report %d", op, k);
	double f = 0, a = 0, b = 0;
	ck_assert_int_eq(sscanf(p + strlen(key), "%lfx (%lf/%lf us)", &f, &a, &b), 3);
	if (stat_us)
		*stat_us = a;
	if (exp_us)
		*exp_us = b;
	return f;
}

START_TEST(slowdown_from_shim)
{
	/* 60 intervals of 50 ms, a report every 10: stat 500 us slower in reports
	 * 2 and 3 (intervals 20..39; the probe's first stat is its setup's),
	 * pread 400 us slower in report 4 (intervals 40..49) */
	char *shim = tu_fmt("%s/libslow_shim.so", tu_env("IOGRAM_PROGS"));
	char *env = tu_fmt("IOGRAM_TEST_SLOW=stat:500:21:20,pread:400:40:10");
	char *pre = tu_fmt("LD_PRELOAD=%s", shim);
	char *argv[] = { "env", pre, env, (char *)(uintptr_t)tu_env("IOGRAM_BIN"), "probe", dir,
	                 "--interval", "0.05", "--report", "0.5", "--count", "60", "--file-size", "8M",
	                 "--pool", "8", "--endpoint", "none", NULL };
	char *out = tu_fmt("%s/out.txt", dir);
	ck_assert_int_eq(tu_run(argv, out, 120), 0);
	char *txt = strdup(tu_slurp(out));
	int strayed = 0;
	double s_base = 0;
	for (int k = 0; k < 6; k++) {
		double s_us, s_ex, r_us, r_ex;
		double st = report(txt, k, "stat", &s_us, &s_ex), rd = report(txt, k, "read", &r_us, &r_ex);
		/* the factor is the report's statistic over its expectation */
		ck_assert_msg(s_ex > 0 && st > 0.9 * s_us / s_ex - 0.02 && st < 1.1 * s_us / s_ex + 0.02,
		              "report %d: %.2fx is not %.0f/%.0f\n%s", k, st, s_us, s_ex, txt);
		/* the median of the slowed stats: their unslowed time (report 2's
		 * expectation: report 3's has taken in slowed stats, CI at 486be2e:
		 * 74.8 us against 7.2) + 500 us; the factor follows from the
		 * report's own expectation (a stat expected at 33 us under load:
		 * 15x, not 20x) */
		if (k == 2)
			s_base = s_ex;
		if (k == 2 || k == 3)
			ck_assert_msg(s_us > s_base + 450 && s_us < s_base + 650 && st > 0.9 * (s_base + 450) / s_ex,
			              "report %d: stat %.0f us (%.2fx), want %.0f + 500\n%s", k, s_us, st,
			              s_base, txt);
		else
			ck_assert_msg(st < 2.5, "report %d: stat %.2fx, want ~1x\n%s", k, st, txt);
		/* the shim spins 400 us after each slowed pread, so its median is
		 * at least that; the expectation came from the first reports, which
		 * may have run slower than report 4's reads (CI: 131 and 186 us
		 * expected, 479 and 511 measured) */
		if (k == 4)
			ck_assert_msg(r_us > 390 && r_us < r_ex + 600 && rd > 2,
			              "report %d: read %.0f us (%.2fx), want %.0f + 400\n%s", k, r_us, rd,
			              r_ex, txt);
		else
			ck_assert_msg(rd < 2.5, "report %d: read %.2fx, want ~1x\n%s", k, rd, txt);
		/* the operations nobody slowed stay near 1; a file system shared
		 * with a parallel test run can hold half a report's creates (CI:
		 * 4.65x in one report of six; at df1021a 4.50x and 4.12x in two),
		 * so two reports may stray: a slowdown of creates or deletes by
		 * the shim would move all six */
		strayed += !(report(txt, k, "create", NULL, NULL) < 4 &&
		             report(txt, k, "delete", NULL, NULL) < 4);
	}
	ck_assert_msg(strayed <= 2, "create/delete moved in %d reports\n%s", strayed, txt);
	free(txt);
	ck_assert_int_eq(count_entries(dir, ".iogram-probe"), 0);
}
END_TEST

/* A baseline saved in one run is the expectation of the next. */
START_TEST(baseline_and_recording)
{
	char *base = tu_fmt("%s/base.csv", dir);
	char *a1[] = { (char *)(uintptr_t)tu_env("IOGRAM_BIN"), "probe", dir, "--interval", "0.02",
	               "--report", "0.2", "--count", "20", "--file-size", "4M", "--pool", "4",
	               "--endpoint", "none", "--save-baseline", base, "--quiet", NULL };
	ck_assert_int_eq(tu_run(a1, NULL, 60), 0);
	char *b = strdup(tu_slurp(base));
	ck_assert(strstr(b, "operation,expected_ns\nread,") != NULL);
	ck_assert(strstr(b, "\ndelete,") != NULL);
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	char *a2[] = { (char *)(uintptr_t)tu_env("IOGRAM_BIN"), "probe", dir, "--interval", "0.02",
	               "--report", "0.2", "--count", "20", "--file-size", "4M", "--pool", "4",
	               "--endpoint", "none", "--baseline", base, "--quiet", "--output",
	               tu_fmt("%s/rec/run-%%p.iogr", dir), NULL };
	ck_assert_int_eq(tu_run(a2, NULL, 60), 0);
	int n;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &n);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(iogp_model_source_label(m, 0, "role"), "probe");
	ck_assert_str_eq(iogp_model_source_label(m, 0, "probe.dir"), dir);
	ck_assert_ptr_nonnull(iogp_model_source_label(m, 0, "probe.fs"));
	iogp_hist h;
	ck_assert_int_eq(iogp_model_hist(m, "probe.stat.latency", NULL, &h), 0);
	ck_assert_uint_eq(h.total, 20);
	iogp_hist_free(&h);
	int64_t ex;
	ck_assert_int_eq(iogp_model_gauge(m, "probe.read.expected", NULL, &ex), 0);
	char want[64];
	snprintf(want, sizeof want, "read,%" PRId64 "\n", ex);
	ck_assert_msg(strstr(b, want) != NULL, "expected %" PRId64 " is not the baseline's\n%s", ex, b);
	iogp_model_free(m);
	/* iogram export probe: a row per report and operation, every expected
	 * time the baseline's, every factor the statistic over it */
	char *csv = tu_fmt("%s/probe.csv", dir);
	char *sh[] = { "sh", "-c", tu_fmt("%s export probe %s/rec/run-*.iogr -o %s", tu_env("IOGRAM_BIN"),
	                                  dir, csv), NULL };
	ck_assert_int_eq(tu_run(sh, NULL, 60), 0);
	char *t = strdup(tu_slurp(csv));
	ck_assert(!strncmp(t, "time,epoch_s,node,source,operation,statistic,stat_ns,expected_ns,slowdown\n", 74));
	int rows = 0;
	for (char *l = strchr(t, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		char op[32], st[32];
		unsigned long long sn, en;
		double f;
		const char *c = l + 1;
		for (int k = 0; k < 4; k++)
			c = strchr(c, ',') + 1;
		ck_assert_int_eq(sscanf(c, "%31[^,],%31[^,],%llu,%llu,%lf", op, st, &sn, &en, &f), 5);
		ck_assert_str_eq(st, "median");
		ck_assert(strstr(b, tu_fmt("%s,%llu\n", op, en)) != NULL);
		ck_assert(f > (double)sn / (double)en - 0.002 && f < (double)sn / (double)en + 0.002);
		rows++;
	}
	ck_assert_int_ge(rows, 6);
	ck_assert_int_eq(rows % 6, 0);
	free(t);
	free(b);
}
END_TEST

/* strace of the probe: per interval one 1 MiB pread and pwrite, one small
 * file written, one stat, one 3,901-byte read, one unlink. */
START_TEST(strace_six_ops)
{
	char *log = tu_fmt("%s/strace.log", dir);
	tu_asan_option("detect_leaks=0");   /* LeakSanitizer cannot run under ptrace */
	char *argv[] = { "strace", "-f", "-qq", "-o", log, "-e",
	                 "trace=pread64,pwrite64,write,read,stat,newfstatat,statx,unlink,unlinkat",
	                 "-e", "signal=none", (char *)(uintptr_t)tu_env("IOGRAM_BIN"), "probe", dir,
	                 "--interval", "0.02", "--report", "1", "--count", "7", "--file-size", "4M",
	                 "--pool", "5", "--endpoint", "none", "--quiet", NULL };
	ck_assert_int_eq(tu_run(argv, NULL, 60), 0);
	char *joined = tu_fmt("%s/strace.joined", dir);
	ck_assert_int_eq(tu_strace_join(log, joined), 0);
	FILE *f = fopen(joined, "r");
	ck_assert_ptr_nonnull(f);
	char line[8192];
	int preads = 0, pwrites = 0, small_w = 0, small_r = 0, stats = 0, unlinks = 0, lines = 0;
	while (fgets(line, sizeof line, f) && lines++ < 100000) {
		const char *eq = strrchr(line, '=');
		long r = eq ? strtol(eq + 1, NULL, 10) : -1;
		if (strstr(line, "pread64(") && r == 1048576)
			preads++;
		else if (strstr(line, "pwrite64(") && r == 1048576)
			pwrites++;
		else if (strstr(line, " write(") && r == 3901)
			small_w++;
		else if (strstr(line, " read(") && r == 3901)
			small_r++;
		else if (strstr(line, "stat") && strstr(line, "/p."))
			stats++;
		else if (strstr(line, "unlink") && strstr(line, "/p."))
			unlinks++;
	}
	fclose(f);
	if (preads != 7)   /* seen once in CI under ASan and load (6): show what strace wrote */
		tu_system(tu_fmt("grep -n 'pread64' %s >&2; tail -n 5 %s >&2", joined, log));
	ck_assert_int_eq(preads, 7);
	ck_assert_int_eq(pwrites, 4 + 7);     /* the 4 MiB file's blocks, then one per interval */
	ck_assert_int_eq(small_w, 5 + 7);     /* the pool, then one create per interval */
	ck_assert_int_eq(small_r, 7);
	ck_assert_int_eq(stats, 7);
	ck_assert_int_eq(unlinks, 7 + 5);     /* one per interval, the pool at exit */
	ck_assert_int_eq(count_entries(dir, ".iogram-probe"), 0);
}
END_TEST

START_TEST(sigterm_cleans_up)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", 1);
		dup2(null, 1);
		execl(tu_env("IOGRAM_BIN"), "iogram", "probe", dir, "--interval", "0.05", "--report",
		      "0.5", "--file-size", "4M", "--pool", "4", "--endpoint", "none", (char *)NULL);
		_exit(127);
	}
	int seen = 0;
	for (int i = 0; i < 200 && !seen; i++) {
		usleep(20000);
		seen = count_entries(dir, ".iogram-probe") > 0;
	}
	ck_assert(seen);
	usleep(300000);
	kill(pid, SIGTERM);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(count_entries(dir, ".iogram-probe"), 0);
}
END_TEST

START_TEST(refusals)
{
	/* a directory that does not exist, one nobody can write, no room */
	char *bin = (char *)(uintptr_t)tu_env("IOGRAM_BIN");
	char *a1[] = { bin, "probe", tu_fmt("%s/missing", dir), "--count", "1", "--endpoint", "none", NULL };
	ck_assert_int_eq(tu_run(a1, NULL, 30), 1);
	char *a2[] = { bin, "probe", "/proc", "--count", "1", "--endpoint", "none", NULL };
	ck_assert_int_eq(tu_run(a2, NULL, 30), 1);
	char *err = tu_fmt("%s/err.txt", dir);
	char *a3[] = { "sh", "-c", tu_fmt("%s probe %s --count 1 --file-size 900T --endpoint none 2>%s",
	                                  bin, dir, err), NULL };
	ck_assert_int_eq(tu_run(a3, NULL, 30), 1);
	ck_assert(strstr(tu_slurp(err), "free") != NULL);
	char *a4[] = { bin, "probe", dir, "--statistic", "p42", NULL };
	ck_assert_int_eq(tu_run(a4, NULL, 30), 2);
	char *a5[] = { bin, "probe", dir, "--baseline", "x", "--window", "1h", NULL };
	ck_assert_int_eq(tu_run(a5, NULL, 30), 2);
	ck_assert_int_eq(count_entries(dir, ".iogram-probe"), 0);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "refusals", refusals },
		{ "strace_six_ops", strace_six_ops },
		{ "sigterm_cleans_up", sigterm_cleans_up },
		{ "baseline_and_recording", baseline_and_recording },
		{ "slowdown_from_shim", slowdown_from_shim },
	};
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 180 };
	return tu_run_cases("probe", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
