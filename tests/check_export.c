/* check_export.c - replay file loading, per-node series and their CSV. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp.h"
#include "testutil.h"

static char dir[256];
static char path[512];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-check-export");
	snprintf(path, sizeof(path), "%s/x.iogr", dir);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

static iogp_label lab[2];
static iogp_metric_def defs[3];

static void hello(iogp_recorder *r, uint64_t id, const char *host, uint64_t t)
{
	iogp_msg m = { .kind = IOGP_HELLO, .source = id, .seq = 0 };
	lab[0] = (iogp_label){ "host", host };
	lab[1] = (iogp_label){ "pid", "1" };
	defs[0] = (iogp_metric_def){ .id = 1, .kind = IOGP_COUNTER, .name = "c.bytes", .unit = "bytes" };
	defs[1] = (iogp_metric_def){ .id = 2, .kind = IOGP_GAUGE, .name = "g.level", .unit = "" };
	defs[2] = (iogp_metric_def){ .id = 3, .kind = IOGP_HISTOGRAM, .name = "h.size", .unit = "bytes" };
	iogp_bins_native(&defs[2].bins, 4);
	m.labels = lab;
	m.nlabels = 2;
	m.metrics = defs;
	m.nmetrics = 3;
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, t), 0);
}

static void delta(iogp_recorder *r, uint64_t id, uint64_t seq, uint64_t wall_t0, uint64_t dur,
                  uint64_t bytes, int64_t gauge, uint64_t hcount)
{
	iogp_counter_val c = { 1, bytes };
	iogp_gauge_val g = { 2, gauge };
	iogp_bin b = { iogp_native_index(4096, 4), hcount };
	iogp_hist_val h = { 3, 1, &b };
	iogp_msg m = { .kind = IOGP_DELTA, .source = id, .seq = seq,
	               .t0_ns = 5000000000ull + wall_t0, .t1_ns = 5000000000ull + wall_t0 + dur,
	               .wall_ns = wall_t0 + dur,
	               .counters = &c, .ncounters = 1, .gauges = &g, .ngauges = 1,
	               .hists = &h, .nhists = hcount ? 1 : 0 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, wall_t0 + dur + 1000), 0);
}

#define T0 1790000000000000000ull
#define SEC 1000000000ull

START_TEST(test_series_sum_equals_counted)
{
	/* Two nodes whose intervals drift (1.0 s and 1.3 s, offsets not aligned to
	 * bins): every increment must be spread over the bins, never lost. */
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 11, "alpha", T0);
	hello(r, 22, "beta", T0);
	uint64_t ta = T0 + 250000000ull, tb = T0 + 700000000ull, sa = 0, sb = 0;
	uint64_t seqa = 1, seqb = 1;
	for (int i = 0; i < 40; i++) {
		uint64_t ba = 1000 + (uint64_t)i * 37, bb = 5000 + (uint64_t)i * 11;
		delta(r, 11, seqa++, ta, SEC, ba, i, 3);
		delta(r, 22, seqb++, tb, 1300000000ull, bb, 100, 2);
		ta += SEC;
		tb += 1300000000ull;
		sa += ba;
		sb += bb;
	}
	ck_assert_int_eq(iogp_recorder_close(r), 0);

	for (int stepi = 0; stepi < 3; stepi++) {
		double step = stepi == 0 ? 1.0 : stepi == 1 ? 0.25 : 7.0;
		iogp_series s;
		ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", step, err, sizeof(err)), 0);
		ck_assert_uint_eq(s.nnodes, 2);
		ck_assert_str_eq(s.nodes[0], "alpha");
		ck_assert_int_eq(s.kind, IOGP_COUNTER);
		ck_assert_uint_eq(s.intervals, 80);
		double tot[2] = { 0, 0 };
		for (size_t n = 0; n < 2; n++)
			for (size_t b = 0; b < s.nbins; b++)
				tot[n] += s.v[n][b] * step;
		ck_assert_double_eq_tol(tot[0], (double)sa, 1e-6 * (double)sa);
		ck_assert_double_eq_tol(tot[1], (double)sb, 1e-6 * (double)sb);
		/* origin aligned to the step, before the first interval */
		ck_assert_uint_le(s.origin_ns, T0 + 250000000ull);
		iogp_series_free(&s);
	}
	/* histogram metric: events per second, total = 40*3 + 40*2 */
	iogp_series s;
	ck_assert_int_eq(iogp_series_from_file(&s, path, "h.size", 1.0, err, sizeof(err)), 0);
	double ev = 0;
	for (size_t n = 0; n < s.nnodes; n++)
		for (size_t b = 0; b < s.nbins; b++)
			ev += s.v[n][b];
	ck_assert_double_eq_tol(ev, 200.0, 1e-9);
	iogp_series_free(&s);
	/* gauge: alpha holds i during its i-th second; beta holds 100 */
	ck_assert_int_eq(iogp_series_from_file(&s, path, "g.level", 1.0, err, sizeof(err)), 0);
	ck_assert_int_eq(s.kind, IOGP_GAUGE);
	size_t b5 = (size_t)((T0 + 5 * SEC + 250000000ull + SEC / 2 - s.origin_ns) / SEC);
	/* the bin holding alpha's 6th interval start; alpha's bins straddle two values */
	ck_assert(s.v[0][b5] > 4.0 && s.v[0][b5] < 7.0);
	ck_assert_double_eq_tol(s.v[1][b5], 100.0, 1e-9);
	iogp_series_free(&s);
}
END_TEST

START_TEST(test_series_prepend_and_csv)
{
	/* The first DELTA in the file starts later than a second source's:
	 * the origin must move back, not clip. */
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 1, "late", T0);
	hello(r, 2, "early", T0);
	delta(r, 1, 1, T0 + 10 * SEC, SEC, 1000, 0, 0);
	delta(r, 2, 1, T0, 10 * SEC, 5000, 0, 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_series s;
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 1.0, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.origin_ns, T0);
	ck_assert_uint_eq(s.nbins, 11);
	for (size_t b = 0; b < 10; b++)
		ck_assert_double_eq_tol(s.v[1][b], 500.0, 1e-9);
	ck_assert(!s.covered[0][0]);
	ck_assert_double_eq_tol(s.v[0][10], 1000.0, 1e-9);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(iogp_series_write_csv(&s, f), 0);
	fclose(f);
	const char *nl = strchr(buf, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_int_eq(strncmp(buf, "time,elapsed_s,min_node,min,avg,max_node,max,total,late,early\n",
	                         (size_t)(nl - buf + 1)), 0);
	/* first row: only "early" has data: min=max=avg=total=500, late empty */
	ck_assert_ptr_nonnull(strstr(buf, ",0,early,500,500,early,500,500,,500\n"));
	/* last row: only "late" */
	ck_assert_ptr_nonnull(strstr(buf, ",10,late,1000,1000,late,1000,1000,1000,\n"));
	free(buf);
	iogp_series_free(&s);
}
END_TEST

START_TEST(test_series_errors)
{
	iogp_recorder *r;
	char err[256] = "";
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 1, "n", T0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_series s;
	ck_assert_int_eq(iogp_series_from_file(&s, path, "nope", 1.0, err, sizeof(err)), IOGP_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err, "nope"));
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 0.0, err, sizeof(err)), IOGP_EINVAL);
	ck_assert_int_lt(iogp_series_from_file(&s, "/nonexistent/x.iogr", "c.bytes", 1.0, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	/* metric present, no deltas: zero bins, still fine */
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 1.0, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.nbins, 0);
	iogp_series_free(&s);
}
END_TEST

START_TEST(test_load_file_counts)
{
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 7, "n1", T0);
	for (int i = 0; i < 20; i++)
		delta(r, 7, (uint64_t)i + 1, T0 + (uint64_t)i * SEC, SEC, 10, 1, 1);
	ck_assert_int_eq(iogp_recorder_keyframe(r, T0 + 30 * SEC), 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_model *m = iogp_model_new(NULL);
	iogp_load_stats st;
	ck_assert_int_eq(iogp_load_file(path, m, &st, err, sizeof(err)), 0);
	ck_assert_uint_eq(st.by_kind[IOGP_HELLO], 1);
	ck_assert_uint_eq(st.by_kind[IOGP_DELTA], 20);
	ck_assert_uint_ge(st.keyframe_records, 1);
	ck_assert_uint_eq(st.bad, 0);
	ck_assert_int_eq(st.info.index_found, 1);
	uint64_t v = 0;
	iogp_sel all = { .kind = IOGP_SEL_ALL };
	ck_assert_int_eq(iogp_model_counter(m, "c.bytes", &all, &v), 0);
	ck_assert_uint_eq(v, 200);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_filename)
{
	char b[64];
	iogp_export_filename(b, sizeof(b), "posix.read.size");
	ck_assert_str_eq(b, "posix.read.size");
	iogp_export_filename(b, sizeof(b), "../etc/pass wd");
	ck_assert_str_eq(b, "_._etc_pass_wd");
	iogp_export_filename(b, 4, "abcdef");
	ck_assert_str_eq(b, "abc");
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "series_sum_equals_counted", test_series_sum_equals_counted },
		{ "series_prepend_and_csv", test_series_prepend_and_csv },
		{ "series_errors", test_series_errors }, { "load_file_counts", test_load_file_counts },
		{ "filename", test_filename },
	};
	/* no timeout of their own: Check's default (CK_DEFAULT_TIMEOUT) */
	return tu_run_suite("export", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 0);
}
