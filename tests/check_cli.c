/* check_cli.c - the iogram command against recordings whose ground truth
 * iogram-synth computed from the generated values themselves. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iogp.h"
#include "testutil.h"

static const char *bin, *synth;
static char dir[256];

/* Run the arguments with a 60 s bound; both streams captured. */
#define RUN(...) tu_capture((char *const[]){ __VA_ARGS__, NULL }, NULL, 60)

static char file[600], truth[600];

static void make_job(const char *extra1, const char *extra2)
{
	snprintf(file, sizeof(file), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	char *argv[16] = { (char *)synth, "--nodes", "3", "--seconds", "40", "-o", file,
	                   "--truth", truth };
	int n = 9;
	if (extra1)
		argv[n++] = (char *)extra1;
	if (extra2)
		argv[n++] = (char *)extra2;
	argv[n] = NULL;
	tu_result r = tu_capture(argv, NULL, 60);
	ck_assert_msg(r.status == 0, "synth failed: %s", r.err);
	tu_result_free(&r);
}

static void setup(void)
{
	bin = getenv("IOGRAM_BIN");
	synth = getenv("IOGRAM_SYNTH");
	ck_assert_msg(bin && synth, "IOGRAM_BIN and IOGRAM_SYNTH must be set (run via meson test)");
	tu_tmpdir(dir, sizeof(dir), "iogram-check-cli");
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rmdir_all(dir), 0);
}

/* Value of metric/node in the truth counters.csv. */
static unsigned long long truth_counter(const char *metric, const char *node)
{
	char *t = tu_read_file(tu_fmt("%s/counters.csv", truth), NULL);
	ck_assert_ptr_nonnull(t);
	char *p = strstr(t, tu_fmt("\n%s,%s,", metric, node));
	ck_assert_ptr_nonnull(p);
	unsigned long long v = strtoull(p + 1 + strlen(metric) + 1 + strlen(node) + 1, NULL, 10);
	free(t);
	return v;
}

START_TEST(test_help_version_usage)
{
	tu_result r = RUN((char *)bin, "--help");
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "EXAMPLES"));
	ck_assert_ptr_nonnull(strstr(r.out, "export"));
	tu_result_free(&r);
	r = RUN((char *)bin, "--version");
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "iogram "));
	tu_result_free(&r);
	r = RUN((char *)bin);
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "frobnicate");
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown verb"));
	tu_result_free(&r);
	const char *verbs[] = { "info", "export" };
	for (int i = 0; i < 2; i++) {
		r = RUN((char *)bin, (char *)verbs[i], "--help");
		ck_assert_int_eq(r.status, 0);
		ck_assert_ptr_nonnull(strstr(r.out, "EXAMPLES"));
		tu_result_free(&r);
		r = RUN((char *)bin, (char *)verbs[i], "--no-such-flag");
		ck_assert_int_eq(r.status, 2);
		tu_result_free(&r);
	}
}
END_TEST

START_TEST(test_hist_matches_truth)
{
	make_job(NULL, NULL);
	const char *metrics[] = { "posix.read.size", "posix.write.size", "posix.read.latency",
	                          "posix.queue_depth" };
	for (int i = 0; i < 4; i++) {
		char *want = tu_read_file(tu_fmt("%s/%s.all.csv", truth, metrics[i]), NULL);
		ck_assert_ptr_nonnull(want);
		tu_result r = RUN((char *)bin, "export", "hist", file, "--metric", (char *)metrics[i]);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_str_eq(r.out, want);
		ck_assert(strlen(want) > 40);   /* not an empty histogram */
		free(want);
		tu_result_free(&r);
		want = tu_read_file(tu_fmt("%s/%s.node002.csv", truth, metrics[i]), NULL);
		r = RUN((char *)bin, "export", "hist", file, "--metric", (char *)metrics[i], "--node", "node002");
		ck_assert_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, want);
		free(want);
		tu_result_free(&r);
	}
}
END_TEST

/* Re-bin the truth (native CSV) with the library and compare with the tool. */
static void check_rebinned(const char *metric, const char *spec)
{
	char *t = tu_read_file(tu_fmt("%s/%s.all.csv", truth, metric), NULL);
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	iogp_hist h, out;
	iogp_hist_init(&h, &nb);
	char *line = strchr(t, '\n') + 1;
	unsigned long long lo, hi, cnt;
	while (sscanf(line, "%llu,%llu,%llu", &lo, &hi, &cnt) == 3) {
		iogp_hist_add_bin(&h, iogp_native_index(lo, IOGP_NATIVE_K_DEFAULT), cnt);
		line = strchr(line, '\n') + 1;
	}
	iogp_bins target;
	ck_assert_int_eq(iogp_bins_parse(&target, spec, NULL, 0), 0);
	ck_assert_int_eq(iogp_hist_rebin(&out, &h, &target), 0);
	char *want = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&want, &len);
	iogp_hist_write_csv(&out, f);
	fclose(f);
	tu_result r = RUN((char *)bin, "export", "hist", file, "--metric", (char *)metric, "--bins", (char *)spec);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, want);
	tu_result_free(&r);
	free(want);
	free(t);
	iogp_hist_free(&h);
	iogp_hist_free(&out);
}

START_TEST(test_hist_bins_and_output)
{
	make_job(NULL, NULL);
	check_rebinned("posix.read.size", "log2");
	check_rebinned("posix.read.size", "fixed:65536");
	check_rebinned("posix.read.latency", "fixed:10000:5000");
	check_rebinned("posix.read.size", "edges:4096,65536,1048576");
	/* log2 of read sizes: 4096 falls in [4096,8191]; the truth has 70% 4 KiB reads */
	tu_result r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--bins", "log2");
	ck_assert_ptr_nonnull(strstr(r.out, "lower_bound,upper_bound,count\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "\n4096,8191,"));
	ck_assert_ptr_nonnull(strstr(r.out, "\n1048576,2097151,"));
	tu_result_free(&r);
	/* equal:N: N bins or fewer, counts preserved */
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.queue_depth", "--bins", "equal:4");
	ck_assert_int_eq(r.status, 0);
	unsigned long long total = 0, lo, hi, c;
	int rows = 0;
	for (char *p = strchr(r.out, '\n') + 1; p && sscanf(p, "%llu,%llu,%llu", &lo, &hi, &c) == 3;
	     p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		total += c;
		rows++;
	}
	ck_assert_int_le(rows, 4);
	ck_assert_uint_eq(total, truth_counter("posix.read.ops", "all") + truth_counter("posix.write.ops", "all"));
	tu_result_free(&r);
	/* -o FILE */
	char *o = tu_fmt("%s/out.csv", dir);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.write.size", "-o", o);
	ck_assert_int_eq(r.status, 0);
	char *got = tu_read_file(o, NULL);
	char *want = tu_read_file(tu_fmt("%s/posix.write.size.all.csv", truth), NULL);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	tu_result_free(&r);
}
END_TEST

START_TEST(test_source_selection)
{
	make_job(NULL, NULL);
	tu_result r = RUN((char *)bin, "info", file);
	ck_assert_int_eq(r.status, 0);
	/* the source on node003 (one source per node): find its id in the table */
	char *p = strstr(r.out, "node003");
	ck_assert_ptr_nonnull(p);
	while (p > r.out && p[-1] != '\n')
		p--;
	char id[17];
	ck_assert_int_eq(sscanf(p, " %16s", id), 1);
	tu_result e = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--source", id);
	ck_assert_int_eq(e.status, 0);
	char *want = tu_read_file(tu_fmt("%s/posix.read.size.node003.csv", truth), NULL);
	ck_assert_str_eq(e.out, want);
	free(want);
	tu_result_free(&e);
	tu_result_free(&r);
}
END_TEST

START_TEST(test_info_totals)
{
	make_job(NULL, NULL);
	tu_result r = RUN((char *)bin, "info", file);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "sources:    3 on 3 nodes; gaps 0"));
	ck_assert_ptr_nonnull(strstr(r.out, "index found"));
	ck_assert_ptr_nonnull(strstr(r.out, "skipped:    0 bytes"));
	const char *cs[] = { "posix.read.bytes", "posix.write.ops", "posix.meta.ops" };
	for (int i = 0; i < 3; i++) {
		char *line = strstr(r.out, tu_fmt("  %s ", cs[i]));
		ck_assert_ptr_nonnull(line);
		unsigned long long v;
		ck_assert_int_eq(sscanf(line + strlen(cs[i]) + 2, " counter %llu", &v), 1);
		ck_assert_uint_eq(v, truth_counter(cs[i], "all"));
	}
	/* histogram count = ops */
	char *line = strstr(r.out, "  posix.read.size ");
	unsigned long long v;
	ck_assert_int_eq(sscanf(line + strlen("  posix.read.size "), " histogram %llu", &v), 1);
	ck_assert_uint_eq(v, truth_counter("posix.read.ops", "all"));
	ck_assert_ptr_nonnull(strstr(r.out, "p99"));
	tu_result_free(&r);
}
END_TEST

START_TEST(test_gaps_resync_exact)
{
	/* every 4th DELTA lost: gaps reported, totals exact again after the final snapshot */
	make_job("--drop-every", "4");
	tu_result r = RUN((char *)bin, "info", file);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_null(strstr(r.out, "gaps 0,"));
	char *line = strstr(r.out, "  posix.write.bytes ");
	unsigned long long v;
	ck_assert_int_eq(sscanf(line + strlen("  posix.write.bytes "), " counter %llu", &v), 1);
	ck_assert_uint_eq(v, truth_counter("posix.write.bytes", "all"));
	tu_result_free(&r);
	char *want = tu_read_file(tu_fmt("%s/posix.read.size.all.csv", truth), NULL);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size");
	ck_assert_str_eq(r.out, want);
	free(want);
	tu_result_free(&r);
}
END_TEST

START_TEST(test_series_totals)
{
	make_job(NULL, NULL);
	for (int si = 0; si < 2; si++) {
		const char *step = si ? "5" : "1";
		double stepv = si ? 5.0 : 1.0;
		tu_result r = RUN((char *)bin, "export", "series", file, "--metric", "posix.write.bytes",
		                   "--step", (char *)step);
		ck_assert_msg(r.status == 0, "%s", r.err);
		const char *hdr = "time,elapsed_s,min_node,min,avg,max_node,max,total,node001,node002,node003\n";
		ck_assert_int_eq(strncmp(r.out, hdr, strlen(hdr)), 0);
		/* sum of total x step = bytes counted; per-node columns likewise */
		double tot = 0, node[3] = { 0, 0, 0 };
		int rows = 0;
		for (char *p = strchr(r.out, '\n') + 1; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
			char *f[12];
			char *line = strndup(p, (size_t)(strchrnul(p, '\n') - p));
			char *s = line;
			for (int k = 0; k < 11; k++)
				f[k] = strsep(&s, ",");
			ck_assert_ptr_nonnull(f[10]);
			tot += atof(f[7]) * stepv;
			for (int k = 0; k < 3; k++)
				node[k] += atof(f[8 + k]) * stepv;
			if (*f[3]) {   /* min <= avg <= max */
				ck_assert(atof(f[3]) <= atof(f[4]) + 1e-6);
				ck_assert(atof(f[4]) <= atof(f[6]) + 1e-6);
			}
			free(line);
			rows++;
		}
		ck_assert_int_ge(rows, 40 / (int)stepv);
		double want = (double)truth_counter("posix.write.bytes", "all");
		ck_assert_double_eq_tol(tot, want, want * 1e-6);
		for (int k = 0; k < 3; k++) {
			double w = (double)truth_counter("posix.write.bytes", tu_fmt("node%03d", k + 1));
			ck_assert_double_eq_tol(node[k], w, w * 1e-6);
		}
		tu_result_free(&r);
	}
}
END_TEST

START_TEST(test_export_all)
{
	make_job(NULL, NULL);
	char *o = tu_fmt("%s/all", dir);
	tu_result r = RUN((char *)bin, "export", "all", file, "-o", o);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_result_free(&r);
	char *got = tu_read_file(tu_fmt("%s/posix.read.size.hist.csv", o), NULL);
	char *want = tu_read_file(tu_fmt("%s/posix.read.size.all.csv", truth), NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	got = tu_read_file(tu_fmt("%s/posix.queue_depth.node-node001.hist.csv", o), NULL);
	want = tu_read_file(tu_fmt("%s/posix.queue_depth.node001.csv", truth), NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	got = tu_read_file(tu_fmt("%s/posix.read.bytes.series.csv", o), NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_ptr_nonnull(strstr(got, "node003"));
	free(got);
}
END_TEST

START_TEST(test_bad_input)
{
	make_job(NULL, NULL);
	tu_result r = RUN((char *)bin, "info", tu_fmt("%s/missing.iogr", dir));
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "No such file"));
	tu_result_free(&r);
	char *junk = tu_fmt("%s/junk.iogr", dir);
	FILE *f = fopen(junk, "w");
	fputs("this is not a replay file at all, just text\n", f);
	fclose(f);
	r = RUN((char *)bin, "info", junk);
	ck_assert_int_eq(r.status, 1);
	ck_assert(strlen(r.err) > 10);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "no.such.metric");
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown metric"));
	ck_assert_ptr_nonnull(strstr(r.err, "posix.read.size"));   /* lists what exists */
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.bytes");
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "not a histogram"));
	tu_result_free(&r);
	const char *badbins[] = { "fixed:0", "fixed:x", "edges:5,3", "equal:0", "wat", "native:99" };
	for (int i = 0; i < 6; i++) {
		r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--bins", (char *)badbins[i]);
		ck_assert_msg(r.status == 2, "--bins %s gave %d", badbins[i], r.status);
		ck_assert_ptr_nonnull(strstr(r.err, "bad --bins"));
		tu_result_free(&r);
	}
	r = RUN((char *)bin, "export", "series", file, "--metric", "posix.read.bytes", "--step", "-1");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--node", "nowhere");
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "no node"));
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--source", "xyz");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file);
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "pie", file);
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "-o", "/nonexistent/dir/x.csv");
	ck_assert_int_eq(r.status, 1);
	tu_result_free(&r);
}
END_TEST

START_TEST(test_damaged_files)
{
	/* a crashed recorder (no index) and files cut at many points: readable,
	 * skipped bytes reported, never a crash */
	make_job("--crash", NULL);
	tu_result r = RUN((char *)bin, "info", file);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "rebuilt by a scan"));
	tu_result_free(&r);
	struct stat sb;
	ck_assert_int_eq(stat(file, &sb), 0);
	char *data = tu_read_file(file, NULL);
	char *cut = tu_fmt("%s/cut.iogr", dir);
	for (int i = 1; i <= 23; i++) {
		off_t at = sb.st_size * i / 24 + i;
		if (at >= sb.st_size)
			continue;
		int fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ck_assert_int_eq(write(fd, data, (size_t)at), at);
		close(fd);
		r = RUN((char *)bin, "info", cut);
		ck_assert_msg(r.status == 0 || r.status == 1, "cut at %lld: status %d", (long long)at, r.status);
		if (r.status == 0)
			ck_assert_ptr_nonnull(strstr(r.err, "skipped"));
		tu_result_free(&r);
		r = RUN((char *)bin, "export", "series", cut, "--metric", "posix.read.bytes");
		ck_assert_int_lt(r.status, 3);
		tu_result_free(&r);
	}
	free(data);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "help_version_usage", test_help_version_usage },
		{ "hist_matches_truth", test_hist_matches_truth },
		{ "hist_bins_and_output", test_hist_bins_and_output },
		{ "source_selection", test_source_selection }, { "info_totals", test_info_totals },
		{ "gaps_resync_exact", test_gaps_resync_exact }, { "series_totals", test_series_totals },
		{ "export_all", test_export_all }, { "bad_input", test_bad_input },
		{ "damaged_files", test_damaged_files },
	};
	return tu_run_suite("cli", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 120);
}
