/* check_perfile.c - per-file records from the real interposer: 16 threads on
 * 100 files counted exactly per file, the file limit's "other files" record
 * and its overflow count, cp and cat against strace filtered by path. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_model.h"
#include "testutil.h"
#include "testutil_iogr.h"

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-perfile");
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* Run argv under iogram-run recording into dir/rec (env: extra NAME=VALUE,
 * NULL-terminated, or NULL). */
static int run_recorded_env(char *const *cmd, const char *const *env)
{
	char *argv[40];
	int n = 0;
	if (env)
		argv[n++] = "env";
	for (int i = 0; env && env[i] && n < 8; i++)
		argv[n++] = (char *)env[i];
	argv[n++] = (char *)tu_env("IOGRAM_RUN");
	argv[n++] = "--endpoint";
	argv[n++] = "none";
	argv[n++] = "--interval";
	argv[n++] = "100";
	argv[n++] = "--output";
	argv[n++] = tu_fmt("%s/rec/run-%%p.iogr", dir);
	argv[n++] = "--";
	for (int i = 0; cmd[i] && n < 39; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	return tu_run(argv, NULL, 120);
}

static int run_recorded(char *const *cmd, const char *env)
{
	const char *e[] = { env, NULL };
	return run_recorded_env(cmd, env ? e : NULL);
}

static iogp_model *load_rec(void)
{
	int n;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &n);
	ck_assert_int_gt(n, 0);
	return m;
}

static const iogp_file_info *find(const iogp_file_info *f, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].path, path))
			return &f[i];
	return NULL;
}

/* 16 threads, 100 files, 40 writes of 3,000 B each: every file's write
 * count is the number of (thread, k) pairs landing on it; reads are the
 * file's 4 KiB reads plus the one at the end. Every file has its own
 * record (IOGRAM_DIR_FILES=0: no aggregation by directory). */
START_TEST(threads_100_files)
{
	const long T = 16, F = 100, W = 40, S = 3000;
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/data", dir), 0700), 0);
	char *cmd[] = { tu_fmt("%s/prog_files_mt", tu_env("IOGRAM_PROGS")), tu_fmt("%s/data", dir),
	                "16", "100", "40", "3000", NULL };
	ck_assert_int_eq(run_recorded(cmd, "IOGRAM_DIR_FILES=0"), 0);
	iogp_model *m = load_rec();
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	long writes[100] = { 0 };
	for (long t = 0; t < T; t++)
		for (long k = 0; k < W; k++)
			writes[(t + k) % F]++;
	for (long f = 0; f < F; f++) {
		const iogp_file_info *x = find(fi, n, tu_fmt("%s/data/f%04ld", dir, f));
		ck_assert_msg(x != NULL, "no record of file %ld", f);
		uint64_t bytes = (uint64_t)(writes[f] * S);
		ck_assert_uint_eq(x->total.op[1].ops, (uint64_t)writes[f]);
		ck_assert_uint_eq(x->total.op[1].bytes, bytes);
		ck_assert_uint_eq(x->total.op[1].max_req, writes[f] ? (uint64_t)S : 0);
		ck_assert_uint_eq(x->total.op[0].ops, (bytes + 4095) / 4096 + 1);
		ck_assert_uint_eq(x->total.op[0].bytes, bytes);
		ck_assert_uint_eq(x->total.op[0].consec + x->total.op[0].seq + x->total.op[0].random,
		                  x->total.op[0].ops);
		ck_assert_uint_le(x->total.op[1].first_ns, x->total.op[1].last_ns);
		ck_assert_uint_le(x->total.op[1].last_ns, x->total.op[0].first_ns);
		ck_assert_uint_ge(x->total.meta_ops, 3);   /* open, lseek, close */
		ck_assert_uint_eq(x->sources, 1);
		ck_assert_int_eq(x->other, 0);
	}
	iogp_model_files_free(fi);
	iogp_model_free(m);
}
END_TEST

/* The same relative name in two directories is two files, each named by
 * its absolute path (it was one record "out.dat" with both files' bytes);
 * and the same file reached as a relative name and an inherited
 * descriptor is one. */
START_TEST(relative_names)
{
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/p1", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/p2", dir), 0700), 0);
	char *cmd[] = { "bash", "-c", "cd \"$1/p1\" && dd if=/dev/zero of=out.dat bs=3000 count=1 status=none && "
	                "cd ../p2 && dd if=/dev/zero of=out.dat bs=5000 count=1 status=none && "
	                "cat out.dat > /dev/null && cat < out.dat > /dev/null", "sh", dir, NULL };
	ck_assert_int_eq(run_recorded(cmd, "IOGRAM_DIR_FILES=0"), 0);
	iogp_model *m = load_rec();
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	const iogp_file_info *a = find(fi, n, tu_fmt("%s/p1/out.dat", dir));
	const iogp_file_info *b = find(fi, n, tu_fmt("%s/p2/out.dat", dir));
	ck_assert_msg(a != NULL && b != NULL, "no record of p1/out.dat or p2/out.dat (%zu files)", n);
	ck_assert_ptr_null(find(fi, n, "out.dat"));
	ck_assert_uint_eq(a->total.op[1].bytes, 3000);
	ck_assert_uint_eq(b->total.op[1].bytes, 5000);
	ck_assert_uint_eq(a->total.op[0].bytes, 0);
	ck_assert_uint_eq(b->total.op[0].bytes, 10000);   /* by name, then as fd 0 */
	iogp_model_files_free(fi);
	iogp_model_free(m);
}
END_TEST

/* IOGRAM_MAX_FILES=4: four files keep records, the other six go to one
 * "other files" record, counted. */
START_TEST(limit_overflow)
{
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/data", dir), 0700), 0);
	char *cmd[] = { tu_fmt("%s/prog_files_mt", tu_env("IOGRAM_PROGS")), tu_fmt("%s/data", dir),
	                "1", "10", "10", "4096", NULL };
	ck_assert_int_eq(run_recorded(cmd, "IOGRAM_MAX_FILES=4"), 0);
	iogp_model *m = load_rec();
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	uint64_t named_writes = 0, other_writes = 0, overflow = 0;
	int named = 0, other = 0;
	for (size_t i = 0; i < n; i++) {
		if (fi[i].other) {
			other++;
			other_writes += fi[i].total.op[1].ops;
			overflow = fi[i].total.overflow;
		} else if (!strncmp(fi[i].path, tu_fmt("%s/data/", dir), strlen(dir) + 6)) {
			named++;
			named_writes += fi[i].total.op[1].ops;
		}
	}
	/* the program's first files: the loader and libc opened none through us,
	 * so the first four data files hold the four records */
	ck_assert_int_eq(other, 1);
	ck_assert_int_le(named, 4);
	ck_assert_uint_eq(named_writes + other_writes, 10 * 1);   /* 10 writes: one per file */
	ck_assert_uint_ge(other_writes, 6);
	ck_assert_uint_ge(overflow, 6);
	iogp_model_files_free(fi);
	iogp_model_free(m);
}
END_TEST

/* IOGRAM_DIR_FILES=2 with IOGRAM_PATHS basename and hash: five files in
 * big/, read again twice: two named as the mode names files, the
 * directory's record named from the directory ("big/\*", "#<hash>/\*")
 * with the other three folded, once each. */
START_TEST(dir_paths_modes)
{
	static const char *const modes[] = { "basename", "hash" };
	ck_assert_int_eq(mkdir(tu_fmt("%s/data", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/data/big", dir), 0700), 0);
	for (int k = 0; k < 2; k++) {
		tu_rmdir_all(tu_fmt("%s/rec", dir));
		ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
		char *cmd[] = { tu_fmt("%s/prog_dir_files", tu_env("IOGRAM_PROGS")), "100", "1000",
		                tu_fmt("%s/data/big", dir), "5", NULL };
		const char *env[] = { "IOGRAM_DIR_FILES=2", tu_fmt("IOGRAM_PATHS=%s", modes[k]), NULL };
		ck_assert_int_eq(run_recorded_env(cmd, env), 0);
		iogp_model *m = load_rec();
		iogp_file_info *fi;
		size_t n;
		ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
		int own = 0, dirs = 0;
		for (size_t i = 0; i < n; i++) {
			const char *p = fi[i].path;
			if (fi[i].total.flags & IOGP_FR_DIRAGG) {
				dirs++;
				ck_assert_uint_eq(fi[i].total.overflow, 3);
				ck_assert_uint_eq(fi[i].total.op[1].bytes, 300);
				ck_assert_uint_eq(fi[i].total.op[0].bytes, 600);
				if (k == 0)
					ck_assert_str_eq(p, "big/*");
				else
					ck_assert_msg(strlen(p) == 19 && p[0] == '#' && !strcmp(p + 17, "/*"), "%s", p);
			} else if (fi[i].total.op[1].bytes == 100) {
				own++;
				if (k == 0)
					ck_assert_msg(!strcmp(p, "f00000") || !strcmp(p, "f00001"), "%s", p);
				else
					ck_assert_msg(strlen(p) == 17 && p[0] == '#', "%s", p);
			}
		}
		ck_assert_int_eq(own, 2);
		ck_assert_int_eq(dirs, 1);
		iogp_model_files_free(fi);
		iogp_model_free(m);
	}
}
END_TEST

/* strace -f writes "PID  call(... <unfinished ...>" and later "PID
 * <... call resumed>) = N" when threads interleave (two spaces after the
 * pid); the join puts each call on one line again (a run under load once
 * lost cp's copy_file_range this way). */
START_TEST(strace_join_interleaved)
{
	char *in = tu_fmt("%s/strace.log", dir), *out = tu_fmt("%s/strace.joined", dir);
	FILE *f = fopen(in, "w");
	ck_assert_ptr_nonnull(f);
	fputs("5651  write(0</r/run.iogr>, \"\"..., 41 <unfinished ...>\n"
	      "5650  copy_file_range(3</d/src>, NULL, 4</d/dst>, NULL, 99, 0 <unfinished ...>\n"
	      "5651  <... write resumed>)              = 41\n"
	      "5650  <... copy_file_range resumed>)    = 300000\n"
	      "5650  copy_file_range(3</d/src>, NULL, 4</d/dst>, NULL, 99, 0) = 0\n"
	      "read(3</d/src>, \"\"..., 4096 <unfinished ...>\n"
	      "<... read resumed>) = 7\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(tu_strace_join(in, out), 0);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	const char *want[] = {
		"5651  write(0</r/run.iogr>, \"\"..., 41)              = 41\n",
		"5650  copy_file_range(3</d/src>, NULL, 4</d/dst>, NULL, 99, 0)    = 300000\n",
		"5650  copy_file_range(3</d/src>, NULL, 4</d/dst>, NULL, 99, 0) = 0\n",
		"read(3</d/src>, \"\"..., 4096) = 7\n",
	};
	size_t k = 0;
	while (fgets(line, sizeof line, f)) {
		ck_assert_msg(k < 4, "extra line %s", line);
		ck_assert_str_eq(line, want[k]);
		k++;
	}
	fclose(f);
	ck_assert_uint_eq(k, 4);
}
END_TEST

/* cp: per-file records equal strace's calls filtered by path. */
START_TEST(cp_vs_strace)
{
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	char src[300], dst[300], tsrc[310], tdst[310];
	snprintf(src, sizeof src, "%s/src.dat", dir);
	snprintf(dst, sizeof dst, "%s/dst.dat", dir);
	snprintf(tsrc, sizeof tsrc, "<%s>", src);
	snprintf(tdst, sizeof tdst, "<%s>", dst);
	FILE *f = fopen(src, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 300000; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	char *log = tu_fmt("%s/strace.log", dir);
	tu_asan_option("detect_leaks=0");
	char *argv[] = { "strace", "-f", "-qq", "-y", "-s", "0", "-o", log, "-e",
	                 "trace=read,write,pread64,pwrite64,copy_file_range,sendfile", "-e", "signal=none",
	                 (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--output",
	                 tu_fmt("%s/rec/run-%%p.iogr", dir), "--", "cp", src, dst, NULL };
	ck_assert_int_eq(tu_run(argv, NULL, 120), 0);
	/* strace -y names each descriptor's path: count by path and call; a
	 * copy_file_range or sendfile is a read of one and a write of the other */
	uint64_t ops[2][2] = { { 0 } }, bytes[2][2] = { { 0 } };
	char *joined = tu_fmt("%s/strace.joined", dir);
	ck_assert_int_eq(tu_strace_join(log, joined), 0);
	f = fopen(joined, "r");
	ck_assert_ptr_nonnull(f);
	char line[8192];
	int lines = 0;
	while (fgets(line, sizeof line, f) && lines++ < 100000) {
		char *eq = strrchr(line, '=');
		int which = strstr(line, tsrc) ? 0 : strstr(line, tdst) ? 1 : -1;
		if (which < 0 || !eq)
			continue;
		long ret = strtol(eq + 1, NULL, 10);
		if (ret < 0)
			continue;
		if (strstr(line, "copy_file_range(") || strstr(line, "sendfile(")) {
			ops[0][0]++;
			bytes[0][0] += (uint64_t)ret;
			ops[1][1]++;
			bytes[1][1] += (uint64_t)ret;
			continue;
		}
		int op = strstr(line, "read(") || strstr(line, "pread64(") ? 0 :
		         strstr(line, "write(") || strstr(line, "pwrite64(") ? 1 : -1;
		if (op < 0)
			continue;
		ops[which][op]++;
		bytes[which][op] += (uint64_t)ret;
	}
	fclose(f);
	ck_assert_msg(ops[0][0] > 0 && ops[1][1] > 0, "strace saw no reads of src or writes of dst");
	iogp_model *m = load_rec();
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	const char *paths[2] = { src, dst };
	for (int w = 0; w < 2; w++) {
		const iogp_file_info *x = find(fi, n, paths[w]);
		ck_assert_msg(x != NULL, "no record of %s", paths[w]);
		for (int op = 0; op < 2; op++) {
			ck_assert_msg(x->total.op[op].ops == ops[w][op], "%s op %d: ours %" PRIu64 " strace %" PRIu64,
			              paths[w], op, x->total.op[op].ops, ops[w][op]);
			ck_assert_uint_eq(x->total.op[op].bytes, bytes[w][op]);
		}
	}
	ck_assert_uint_eq(bytes[0][0], 300000);
	ck_assert_uint_eq(bytes[1][1], 300000);
	iogp_model_files_free(fi);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "threads_100_files", threads_100_files }, { "relative_names", relative_names },
		{ "limit_overflow", limit_overflow },
		{ "cp_vs_strace", cp_vs_strace }, { "strace_join_interleaved", strace_join_interleaved },
		{ "dir_paths_modes", dir_paths_modes },
	};
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 180 };
	return tu_run_cases("perfile", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
