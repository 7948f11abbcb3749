/* check_export.c - replay file loading, per-node series (rates, means,
 * histogram quantiles), access samples, and their CSV, against the truth. */
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Agents send a gauge only when it changes (and no DELTA when nothing
 * changed): its value holds, over DELTAs without it, over the silence
 * between DELTAs, and until the source's BYE. */
START_TEST(test_series_gauge_holds)
{
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 7, "probe", T0);
	iogp_gauge_val g = { 2, 1000 };
	iogp_msg m = { .kind = IOGP_DELTA, .source = 7, .gauges = &g };
	/* 1000 in [0,1) s; a DELTA without it in [1,2); silence in [2,5); 8000 in [5,6); BYE at 9.5 s */
	static const struct { uint64_t t0, t1; int has; int64_t v; } d[] = {
		{ 0, 1, 1, 1000 }, { 1, 2, 0, 0 }, { 5, 6, 1, 8000 },
	};
	for (int i = 0; i < 3; i++) {
		m.seq = (uint64_t)i + 1;
		m.t0_ns = 5 * SEC + d[i].t0 * SEC;
		m.t1_ns = 5 * SEC + d[i].t1 * SEC;
		m.wall_ns = T0 + d[i].t1 * SEC;
		g.value = d[i].v;
		m.ngauges = d[i].has ? 1 : 0;
		ck_assert_int_ge(iogp_recorder_add_msg(r, &m, m.wall_ns + 1000), 0);
	}
	iogp_msg bye = { .kind = IOGP_BYE, .source = 7, .seq = 4, .wall_ns = T0 + 9 * SEC + SEC / 2 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &bye, bye.wall_ns + 1000), 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_series s;
	ck_assert_int_eq(iogp_series_from_file(&s, path, "g.level", 1.0, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.origin_ns, T0);
	ck_assert_uint_eq(s.nbins, 10);
	static const double want[10] = { 1000, 1000, 1000, 1000, 1000, 8000, 8000, 8000, 8000, 8000 };
	for (size_t b = 0; b < 10; b++) {
		ck_assert_msg(s.covered[0][b], "bin %zu not covered", b);
		ck_assert_msg(s.v[0][b] > want[b] - 1e-6 && s.v[0][b] < want[b] + 1e-6, "bin %zu: %.3f, want %.0f", b,
		              s.v[0][b], want[b]);
	}
	iogp_series_free(&s);
	/* half-second bins: the value changes exactly at 5 s */
	ck_assert_int_eq(iogp_series_from_file(&s, path, "g.level", 0.5, err, sizeof(err)), 0);
	ck_assert_double_eq_tol(s.v[0][9], 1000, 1e-6);
	ck_assert_double_eq_tol(s.v[0][10], 8000, 1e-6);
	ck_assert_uint_eq(s.nbins, 19);
	iogp_series_free(&s);
}
END_TEST

/* iogram export probe: a report is a row per operation even when a DELTA
 * leaves out gauges that did not change (agents send only changes): two
 * reports of two operations, the second with "b"'s three gauges as they
 * were, make four rows, b's second with its held values. */
START_TEST(test_probe_rows_hold)
{
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	iogp_metric_def defs[6];
	static const char *const names[6] = { "probe.a.stat", "probe.a.expected", "probe.a.slowdown",
	                                      "probe.b.stat", "probe.b.expected", "probe.b.slowdown" };
	for (uint32_t i = 0; i < 6; i++)
		defs[i] = (iogp_metric_def){ .id = i + 1, .kind = IOGP_GAUGE, .name = names[i], .unit = "" };
	iogp_label lab[1] = { { "host", "pn" } };
	iogp_msg h = { .kind = IOGP_HELLO, .source = 9, .labels = lab, .nlabels = 1, .metrics = defs,
	               .nmetrics = 6 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &h, T0), 0);
	iogp_gauge_val g1[6] = { { 1, 100 }, { 2, 50 }, { 3, 2000 }, { 4, 70 }, { 5, 70 }, { 6, 1000 } };
	iogp_gauge_val g2[3] = { { 1, 150 }, { 2, 50 }, { 3, 3000 } };
	iogp_msg m = { .kind = IOGP_DELTA, .source = 9, .seq = 1, .t0_ns = SEC, .t1_ns = 2 * SEC,
	               .wall_ns = T0 + SEC, .gauges = g1, .ngauges = 6 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, m.wall_ns), 0);
	m = (iogp_msg){ .kind = IOGP_DELTA, .source = 9, .seq = 2, .t0_ns = 2 * SEC, .t1_ns = 3 * SEC,
	                .wall_ns = T0 + 2 * SEC, .gauges = g2, .ngauges = 3 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, m.wall_ns), 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	uint64_t rows = 0;
	ck_assert_int_eq(iogp_probe_write_csv(path, out, &rows, err, sizeof(err)), 0);
	fclose(out);
	ck_assert_uint_eq(rows, 4);
	ck_assert_msg(strstr(buf, ",0000000000000009,a,median,150,50,3.000\n") != NULL, "%s", buf);
	const char *b1 = strstr(buf, ",b,median,70,70,1.000\n");
	ck_assert_msg(b1 && strstr(b1 + 1, ",b,median,70,70,1.000\n"), "b's held report missing:\n%s", buf);
	free(buf);
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
	/* nodes in name order, whatever the order of arrival */
	ck_assert_str_eq(s.nodes[0], "early");
	ck_assert_str_eq(s.nodes[1], "late");
	for (size_t b = 0; b < 10; b++)
		ck_assert_double_eq_tol(s.v[0][b], 500.0, 1e-9);
	ck_assert(!s.covered[1][0]);
	ck_assert_double_eq_tol(s.v[1][10], 1000.0, 1e-9);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(iogp_series_write_csv(&s, f), 0);
	fclose(f);
	const char *hdr = "time,epoch_s,elapsed_s,min_node,min_bytes_per_s,avg_bytes_per_s,max_node,"
	                  "max_bytes_per_s,total_bytes_per_s,early_bytes_per_s,late_bytes_per_s\n";
	ck_assert_int_eq(strncmp(buf, hdr, strlen(hdr)), 0);
	/* first row: only "early" has data: min=max=avg=total=500, late empty */
	ck_assert_ptr_nonnull(strstr(buf, "\n2026-09-21T14:13:20.000Z,1790000000.000,0.000,"
	                                  "early,500.000,500.000,early,500.000,500.000,500.000,\n"));
	/* last row: only "late" */
	ck_assert_ptr_nonnull(strstr(buf, "\n2026-09-21T14:13:30.000Z,1790000010.000,10.000,"
	                                  "late,1000.000,1000.000,late,1000.000,1000.000,,1000.000\n"));
	free(buf);
	iogp_series_free(&s);
}
END_TEST

/* ---- CSV reading helpers ---- */

#define MAXF 64

/* Splits line (modified) at commas into at most MAXF fields; the count. */
static int split(char *line, char **f)
{
	int n = 0;
	char *p = line;
	while (n < MAXF) {
		f[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	return n;
}

/* The next line of *p (NUL-terminated in place), NULL at the end. */
static char *next_line(char **p)
{
	if (!*p || !**p)
		return NULL;
	char *l = *p, *nl = strchr(l, '\n');
	ck_assert_msg(nl != NULL, "CSV line without a newline: %s", l);
	*nl = 0;
	*p = nl + 1;
	return l;
}

/* "2026-09-21T14:13:20.250Z" -> ns; fails the test if malformed. */
static uint64_t parse_iso(const char *t)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	int ms = -1;
	char z = 0;
	ck_assert_msg(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &z) == 8 && z == 'Z' &&
	              strlen(t) == 24, "not ISO 8601 with milliseconds: '%s'", t);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (uint64_t)timegm(&tm) * SEC + (uint64_t)ms * 1000000ull;
}

/* "123.456" -> ns (exactly 3 decimals required). */
static uint64_t parse_ms(const char *v)
{
	unsigned long long s;
	unsigned ms;
	int used = 0;
	ck_assert_msg(sscanf(v, "%llu.%3u%n", &s, &ms, &used) == 2 && used == (int)strlen(v) &&
	              strlen(strchr(v, '.')) == 4, "not seconds with 3 decimals: '%s'", v);
	return (uint64_t)s * SEC + (uint64_t)ms * 1000000ull;
}

static regex_t fixed3;

static void check_fixed3(const char *v)
{
	ck_assert_msg(regexec(&fixed3, v, 0, NULL, 0) == 0, "not a number with 3 decimals: '%s'", v);
}

static char *series_csv(const iogp_series *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(iogp_series_write_csv(s, f), 0);
	fclose(f);
	return buf;
}

START_TEST(test_series_csv_truth)
{
	/* Three nodes written in reverse order with drifting intervals: the CSV
	 * has units in its header, sorted node columns, ISO and epoch times that
	 * agree, numbers with 3 decimals, and sum(total x step) = bytes counted. */
	ck_assert_int_eq(regcomp(&fixed3, "^-?[0-9]+\\.[0-9]{3}$", REG_EXTENDED | REG_NOSUB), 0);
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	const char *names[3] = { "zeta", "Alpha", "mid" };   /* byte order: Alpha, mid, zeta */
	uint64_t want[3] = { 0, 0, 0 }, t[3], seq[3] = { 1, 1, 1 };
	const uint64_t iv[3] = { 1000000000ull, 1300000000ull, 700000000ull };
	for (int n = 0; n < 3; n++) {
		hello(r, 100 + (uint64_t)n, names[n], T0);
		t[n] = T0 + 123456789ull * (uint64_t)(n + 1);
	}
	for (int i = 0; i < 30; i++)
		for (int n = 0; n < 3; n++) {
			uint64_t bytes = 1000003ull * (uint64_t)(n + 1) + (uint64_t)i * 7919;
			delta(r, 100 + (uint64_t)n, seq[n]++, t[n], iv[n], bytes, 0, 1);
			t[n] += iv[n];
			want[n] += bytes;
		}
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	for (int si = 0; si < 2; si++) {
		double step = si ? 0.25 : 2.0;
		iogp_series s;
		ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", step, err, sizeof(err)), 0);
		char *buf = series_csv(&s), *p = buf, *f[MAXF];
		char *line = next_line(&p);
		ck_assert_str_eq(line, "time,epoch_s,elapsed_s,min_node,min_bytes_per_s,avg_bytes_per_s,"
		                 "max_node,max_bytes_per_s,total_bytes_per_s,Alpha_bytes_per_s,"
		                 "mid_bytes_per_s,zeta_bytes_per_s");
		double tot = 0, node[3] = { 0, 0, 0 };
		uint64_t first = 0, prev = 0;
		size_t rows = 0;
		while ((line = next_line(&p)) != NULL && rows < 100000) {
			ck_assert_int_eq(split(line, f), 12);
			uint64_t iso = parse_iso(f[0]), ep = parse_ms(f[1]), el = parse_ms(f[2]);
			ck_assert_uint_eq(iso, ep);
			if (!rows)
				first = ep;
			else
				ck_assert_uint_eq(ep - prev, (uint64_t)llround(step * 1e9));
			ck_assert_uint_eq(el, ep - first);
			prev = ep;
			for (int k = 4; k < 12; k++)
				if (k != 6 && *f[k])
					check_fixed3(f[k]);
			if (*f[8])
				tot += atof(f[8]) * step;
			for (int k = 0; k < 3; k++)
				if (*f[9 + k])
					node[k] += atof(f[9 + k]) * step;
			rows++;
		}
		ck_assert_uint_eq(rows, s.nbins);
		ck_assert_uint_eq(first, s.origin_ns);
		/* Alpha = names[1], mid = names[2], zeta = names[0]; 3 decimals of
		 * rounding per row at most */
		const int map[3] = { 1, 2, 0 };
		double all = (double)(want[0] + want[1] + want[2]);
		ck_assert_double_eq_tol(tot, all, 0.001 * step * (double)rows + 1e-9 * all);
		for (int k = 0; k < 3; k++)
			ck_assert_double_eq_tol(node[k], (double)want[map[k]],
			                        0.0005 * step * (double)rows + 1e-9 * (double)want[map[k]]);
		free(buf);
		iogp_series_free(&s);
	}
	regfree(&fixed3);
}
END_TEST

START_TEST(test_csv_hand_filled)
{
	/* A series filled by hand (as the viewers do), nodes out of order: the
	 * writer sorts the columns and names the units by kind. */
	double va[2] = { 1.5, 2 }, vb[2] = { 10, 0 };
	double *v[2] = { vb, va };
	uint8_t ca[2] = { 1, 1 }, cb[2] = { 1, 0 };
	uint8_t *cov[2] = { cb, ca };
	char *nodes[2] = { "b", "a" };
	iogp_series s;
	memset(&s, 0, sizeof(s));
	s.step_s = 0.5;
	s.origin_ns = T0 + 1500000ull;   /* not on a millisecond: rounded down */
	s.nbins = s.cap = 2;
	s.nnodes = 2;
	s.nodes = nodes;
	s.v = v;
	s.covered = cov;
	s.kind = IOGP_COUNTER;
	snprintf(s.unit, sizeof(s.unit), "bytes");
	char *buf = series_csv(&s);
	ck_assert_str_eq(buf, "time,epoch_s,elapsed_s,min_node,min_bytes_per_s,avg_bytes_per_s,max_node,"
	                      "max_bytes_per_s,total_bytes_per_s,a_bytes_per_s,b_bytes_per_s\n"
	                      "2026-09-21T14:13:20.001Z,1790000000.001,0.000,a,1.500,5.750,b,10.000,11.500,1.500,10.000\n"
	                      "2026-09-21T14:13:20.501Z,1790000000.501,0.500,a,2.000,2.000,a,2.000,2.000,2.000,\n");
	free(buf);
	static const struct { iogp_metric_kind kind; const char *unit, *col; } k[] = {
		{ IOGP_COUNTER, "", "min_count_per_s" }, { IOGP_HISTOGRAM, "ns", "min_count_per_s" },
		{ IOGP_GAUGE, "files", "min_files" }, { IOGP_GAUGE, "", "min_value" },
		{ IOGP_COUNTER, "req/s x", "min_req_s_x_per_s" },
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		s.kind = k[i].kind;
		snprintf(s.unit, sizeof(s.unit), "%s", k[i].unit);
		buf = series_csv(&s);
		char *want = tu_fmt("time,epoch_s,elapsed_s,min_node,%s,", k[i].col);
		ck_assert_msg(!strncmp(buf, want, strlen(want)), "%s: %.80s", k[i].col, buf);
		free(buf);
	}
}
END_TEST

/* ---- quantile series ---- */

static iogp_metric_def qdefs[3];

static void qhello(iogp_recorder *r, uint64_t id, const char *host, unsigned k)
{
	iogp_msg m = { .kind = IOGP_HELLO, .source = id };
	lab[0] = (iogp_label){ "host", host };
	lab[1] = (iogp_label){ "pid", "1" };
	qdefs[0] = (iogp_metric_def){ .id = 1, .kind = IOGP_HISTOGRAM, .name = "h.lat", .unit = "ns" };
	qdefs[1] = (iogp_metric_def){ .id = 2, .kind = IOGP_HISTOGRAM, .name = "h.size", .unit = "bytes" };
	qdefs[2] = (iogp_metric_def){ .id = 3, .kind = IOGP_COUNTER, .name = "c.ops", .unit = "ops" };
	iogp_bins_native(&qdefs[0].bins, k);
	iogp_bins_native(&qdefs[1].bins, k);
	m.labels = lab;
	m.nlabels = 2;
	m.metrics = qdefs;
	m.nmetrics = 3;
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, T0), 0);
}

/* A DELTA of latencies lat (its native bins) and of sizes, all 4096 but one
 * in 5 of 10000 bytes, with 4096 exact; interval [wall_end - dur, wall_end]. */
static void qdelta(iogp_recorder *r, uint64_t id, uint64_t seq, uint64_t wall_end, uint64_t dur,
                   const iogp_hist *lat, const iogp_hist *size, uint64_t n4k)
{
	iogp_hist_val hv[2] = { { 1, (uint32_t)lat->n, lat->bins }, { 2, (uint32_t)size->n, size->bins } };
	iogp_exact ex = { 4096, n4k };
	iogp_exact_val xv = { 2, 1, &ex };
	iogp_counter_val c = { 3, lat->total };
	iogp_msg m = { .kind = IOGP_DELTA, .source = id, .seq = seq,
	               .t0_ns = 7 * SEC + wall_end - dur, .t1_ns = 7 * SEC + wall_end, .wall_ns = wall_end,
	               .counters = &c, .ncounters = 1, .hists = hv, .nhists = 2,
	               .exact = &xv, .nexact = n4k ? 1 : 0 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, wall_end + 1000), 0);
}

#define QN 3          /* nodes */
#define QBINS 40      /* bins of QSTEP */
#define QSTEP SEC

START_TEST(test_series_quantiles_truth)
{
	/* Nodes n2, n1 (two sources) and n10 send latency deltas of known values
	 * at drifting intervals (0.7 s, 1 s, 1.3 s): per end bin, p50/p90/p99 of
	 * all and each node's p99 must equal the quantiles of a histogram of the
	 * same values; a repeated DELTA is left out; count_per_s x step sums to
	 * the events; the size histogram's quantiles are exact (4096). */
	const char *host[4] = { "n2", "n1", "n1", "n10" };
	const int nodeof[4] = { 2, 0, 0, 1 };            /* index in name order n1, n10, n2 */
	const uint64_t iv[4] = { 700000000ull, SEC, 1300000000ull, SEC };
	iogp_bins nb;
	iogp_bins_native(&nb, 4);
	static iogp_hist tnode[QN][QBINS + 4], tall[QBINS + 4], sall[QBINS + 4];
	for (int b = 0; b < QBINS + 4; b++) {
		iogp_hist_init(&tall[b], &nb);
		iogp_hist_init(&sall[b], &nb);
		for (int n = 0; n < QN; n++)
			iogp_hist_init(&tnode[n][b], &nb);
	}
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	for (int i = 0; i < 4; i++)
		qhello(r, 500 + (uint64_t)i, host[i], 4);
	uint64_t rng = 42, end[4], seq[4] = { 1, 1, 1, 1 }, events = 0;
	for (int i = 0; i < 4; i++)
		end[i] = T0 + iv[i] + (uint64_t)i * 111111111ull;
	iogp_hist lat, size, hlat, hsize;
	iogp_hist_init(&lat, &nb);
	iogp_hist_init(&size, &nb);
	iogp_hist_init(&hlat, &nb);
	iogp_hist_init(&hsize, &nb);
	int held_src = -1, swapped = 0;
	uint64_t held_seq = 0, held_end = 0, held_n4k = 0;
	for (int step = 0; step < 200; step++) {
		int i = 0;   /* the source whose interval ends first */
		for (int k = 1; k < 4; k++)
			if (end[k] < end[i])
				i = k;
		if (end[i] >= T0 + (uint64_t)QBINS * QSTEP)
			break;
		iogp_hist_clear(&lat);
		iogp_hist_clear(&size);
		size_t b = (size_t)((end[i] - 1 - T0) / QSTEP);
		int nv = 5 + (int)(tu_splitmix(&rng) % 40);
		uint64_t n4k = 0;
		for (int v = 0; v < nv; v++) {
			/* node n1 is slow now and then: its p99 must show it */
			uint64_t x = 10000 + tu_splitmix(&rng) % (nodeof[i] == 0 ? 2000000 : 50000);
			iogp_hist_record(&lat, x, 1);
			iogp_hist_record(&tnode[nodeof[i]][b], x, 1);
			iogp_hist_record(&tall[b], x, 1);
			uint64_t sz = v % 5 ? 4096 : 10000;
			n4k += sz == 4096;
			iogp_hist_record(&size, sz, 1);
			iogp_hist_record(&sall[b], sz, 1);
		}
		events += (uint64_t)nv;
		/* every other DELTA is written after the next one of another source,
		 * so the file is not in order of interval end (as after a relay) */
		if (held_src < 0 && step % 2 == 0) {
			held_src = i;
			held_seq = seq[i];
			held_end = end[i];
			held_n4k = n4k;
			iogp_hist_clear(&hlat);
			iogp_hist_clear(&hsize);
			iogp_hist_merge(&hlat, &lat);
			iogp_hist_merge(&hsize, &size);
		} else {
			if (held_src == i) {   /* a source's own DELTAs stay in order */
				qdelta(r, 500 + (uint64_t)i, held_seq, held_end, iv[i], &hlat, &hsize, held_n4k);
				held_src = -1;
			}
			qdelta(r, 500 + (uint64_t)i, seq[i], end[i], iv[i], &lat, &size, n4k);
			if (held_src >= 0) {
				qdelta(r, 500 + (uint64_t)held_src, held_seq, held_end, iv[held_src], &hlat,
				       &hsize, held_n4k);
				held_src = -1;
				swapped++;
			}
		}
		if (step == 17)   /* the same DELTA again (a relay's duplicate) */
			qdelta(r, 500 + (uint64_t)i, seq[i], end[i], iv[i], &lat, &size, n4k);
		seq[i]++;
		end[i] += iv[i];
	}
	if (held_src >= 0)
		qdelta(r, 500 + (uint64_t)held_src, held_seq, held_end, iv[held_src], &hlat, &hsize, held_n4k);
	ck_assert_int_ge(swapped, 30);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_hist_free(&hlat);
	iogp_hist_free(&hsize);

	iogp_series s;
	ck_assert_int_eq(iogp_series_load(&s, path, "h.lat", 1.0, IOGP_SERIES_QUANTILES, err,
	                                  sizeof(err)), 0);
	ck_assert_int_eq(s.quantiles, 1);
	ck_assert_uint_eq(s.duplicates, 1);
	ck_assert_uint_eq(s.late, 0);
	ck_assert_uint_eq(s.nnodes, QN);
	ck_assert_str_eq(s.nodes[0], "n1");
	ck_assert_str_eq(s.nodes[1], "n10");
	ck_assert_str_eq(s.nodes[2], "n2");
	char *buf = series_csv(&s), *p = buf, *f[MAXF];
	char *line = next_line(&p);
	ck_assert_str_eq(line, "time,epoch_s,elapsed_s,count_per_s,p50_ns,p90_ns,p99_ns,"
	                       "n1_p99_ns,n10_p99_ns,n2_p99_ns");
	size_t rows = 0, checked = 0, nodecells = 0;
	double ev = 0;
	while ((line = next_line(&p)) != NULL && rows < 1000) {
		ck_assert_int_eq(split(line, f), 10);
		uint64_t t = parse_iso(f[0]);
		ck_assert_uint_eq(t, parse_ms(f[1]));
		ck_assert_uint_ge(t, T0);
		size_t b = (size_t)((t - T0) / QSTEP);
		ck_assert_uint_lt(b, QBINS + 4);
		if (*f[3])
			ev += atof(f[3]) * 1.0;
		static const double qs[3] = { 0.5, 0.9, 0.99 };
		if (tall[b].total) {
			for (int k = 0; k < 3; k++) {
				uint64_t w;
				ck_assert_int_eq(iogp_hist_quantile(&tall[b], qs[k], &w), 0);
				ck_assert_msg(*f[4 + k] && strtoull(f[4 + k], NULL, 10) == w,
				              "bin %zu q%.2f: '%s' != %" PRIu64, b, qs[k], f[4 + k], w);
			}
			checked++;
		} else {
			ck_assert_str_eq(f[4], "");
		}
		for (int n = 0; n < QN; n++) {
			if (!tnode[n][b].total) {
				ck_assert_msg(!*f[7 + n], "bin %zu node %d: '%s' without data", b, n, f[7 + n]);
				continue;
			}
			uint64_t w;
			ck_assert_int_eq(iogp_hist_quantile(&tnode[n][b], 0.99, &w), 0);
			ck_assert_msg(*f[7 + n] && strtoull(f[7 + n], NULL, 10) == w,
			              "bin %zu node %d p99: '%s' != %" PRIu64, b, n, f[7 + n], w);
			nodecells++;
		}
		rows++;
	}
	ck_assert_uint_ge(checked, QBINS - 1);
	ck_assert_uint_ge(nodecells, 2 * QBINS);
	ck_assert_double_eq_tol(ev, (double)events, 0.001 * (double)rows);
	free(buf);
	iogp_series_free(&s);

	/* sizes: explained bins give exact quantiles (4096, 10000's bin floor) */
	ck_assert_int_eq(iogp_series_load(&s, path, "h.size", 1.0, IOGP_SERIES_QUANTILES, err,
	                                  sizeof(err)), 0);
	size_t exact = 0;
	for (size_t b = 0; b < s.nbins; b++) {
		size_t tb = (size_t)((s.origin_ns + b * QSTEP - T0) / QSTEP);
		if (!s.q_has[b])
			continue;
		uint64_t w;
		ck_assert_int_eq(iogp_hist_quantile_size(&sall[tb], 0.5, &w), 0);
		ck_assert_uint_eq(s.q[0][b], 4096);
		ck_assert_uint_eq(s.q[0][b], w);
		exact++;
	}
	ck_assert_uint_ge(exact, QBINS - 1);
	buf = series_csv(&s);
	ck_assert_int_eq(strncmp(buf, "time,epoch_s,elapsed_s,count_per_s,p50_bytes,p90_bytes,p99_bytes,"
	                         "n1_p99_bytes,", 73), 0);
	free(buf);
	iogp_series_free(&s);
	/* counters keep their rates with the flag */
	ck_assert_int_eq(iogp_series_load(&s, path, "c.ops", 1.0, IOGP_SERIES_QUANTILES, err,
	                                  sizeof(err)), 0);
	ck_assert_int_eq(s.quantiles, 0);
	buf = series_csv(&s);
	ck_assert_int_eq(strncmp(buf, "time,epoch_s,elapsed_s,min_node,min_ops_per_s,", 46), 0);
	free(buf);
	iogp_series_free(&s);
	iogp_hist_free(&lat);
	iogp_hist_free(&size);
	for (int b = 0; b < QBINS + 4; b++) {
		iogp_hist_free(&tall[b]);
		iogp_hist_free(&sall[b]);
		for (int n = 0; n < QN; n++)
			iogp_hist_free(&tnode[n][b]);
	}
}
END_TEST

START_TEST(test_series_quantiles_late_and_schemes)
{
	/* A source on k = 3 bins is re-binned into the first scheme (k = 4);
	 * a DELTA arriving after 20 minutes of newer data is counted late and
	 * left out of the quantiles (its events still in count_per_s). A source
	 * without the metric announces its node first: an empty column. */
	iogp_bins k4, k3;
	iogp_bins_native(&k4, 4);
	iogp_bins_native(&k3, 3);
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 3, "aa", T0);
	delta(r, 3, 1, T0, SEC, 10, 0, 0);
	qhello(r, 1, "a", 4);
	qhello(r, 2, "b", 3);
	iogp_hist h4, h3, none;
	iogp_hist_init(&h4, &k4);
	iogp_hist_init(&h3, &k3);
	iogp_hist_init(&none, &k4);
	iogp_hist_record(&h4, 1000, 10);
	iogp_hist_record(&h3, 1000000, 10);
	uint64_t seq1 = 1;
	for (int i = 0; i < 1300; i++)
		qdelta(r, 1, seq1++, T0 + (uint64_t)(i + 1) * SEC, SEC, &h4, &none, 0);
	qdelta(r, 2, 1, T0 + 5 * SEC, SEC, &h3, &none, 0);   /* 21 minutes late */
	qdelta(r, 2, 2, T0 + 1299 * SEC, SEC, &h3, &none, 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_series s;
	ck_assert_int_eq(iogp_series_load(&s, path, "h.lat", 1.0, IOGP_SERIES_QUANTILES, err,
	                                  sizeof(err)), 0);
	ck_assert_uint_eq(s.late, 1);
	ck_assert_uint_eq(s.nnodes, 3);
	ck_assert_str_eq(s.nodes[1], "aa");
	for (size_t b = 0; b < s.nbins; b++)
		ck_assert(!s.node_p99_has[1][b]);
	size_t b5 = (size_t)((T0 + 5 * SEC - 1 - s.origin_ns) / SEC);
	size_t b1299 = (size_t)((T0 + 1299 * SEC - 1 - s.origin_ns) / SEC);
	ck_assert(s.q_has[b5] && !s.node_p99_has[2][b5]);
	ck_assert(s.covered[2][b5]);                 /* its events per second are there */
	ck_assert_double_eq_tol(s.v[2][b5], 10.0, 1e-9);
	ck_assert(s.node_p99_has[2][b1299]);
	/* 1,000,000 in k=3 bins, re-binned to k=4: within a k=3 bucket of it */
	uint64_t q = s.node_p99[2][b1299];
	ck_assert_msg(q >= 1000000 - 1000000 / 8 && q <= 1000000 + 1000000 / 8, "p99 %" PRIu64, q);
	uint64_t lo, hi;
	ck_assert_int_eq(iogp_bins_bounds(&k4, iogp_bins_index(&k4, 1000), &lo, &hi), 0);
	ck_assert_uint_ge(s.node_p99[0][b1299], lo);
	ck_assert_uint_le(s.node_p99[0][b1299], hi);
	iogp_series_free(&s);
	iogp_hist_free(&h4);
	iogp_hist_free(&h3);
	iogp_hist_free(&none);
}
END_TEST

START_TEST(test_series_many_sources)
{
	/* 3,000 sources on 300 nodes (hash lookups): per-node totals exact,
	 * nodes sorted, in bounded time. */
	iogp_recorder *r;
	char err[256];
	iogp_recorder_opts ro = { .plain = 1 };
	ck_assert_int_eq(iogp_recorder_open(&r, path, &ro, err, sizeof(err)), 0);
	char name[32];
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "node%03d", (i * 7) % 300);
		hello(r, 1000 + (uint64_t)i, name, T0);
	}
	for (int q = 0; q < 5; q++)
		for (int i = 0; i < 3000; i++)
			delta(r, 1000 + (uint64_t)i, (uint64_t)q + 1, T0 + (uint64_t)q * SEC, SEC,
			      (uint64_t)i + 1, 0, 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	double t0 = tu_now();
	iogp_series s;
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 1.0, err, sizeof(err)), 0);
	ck_assert_msg(tu_now() - t0 < 60, "took %.1f s", tu_now() - t0);
	ck_assert_uint_eq(s.nnodes, 300);
	ck_assert_uint_eq(s.intervals, 15000);
	for (size_t n = 0; n < 300; n++) {
		snprintf(name, sizeof(name), "node%03zu", n);
		ck_assert_str_eq(s.nodes[n], name);
		double want = 0, got = 0;
		for (int i = 0; i < 3000; i++)
			if ((size_t)((i * 7) % 300) == n)
				want += 5.0 * (i + 1);
		for (size_t b = 0; b < s.nbins; b++)
			got += s.v[n][b];
		ck_assert_double_eq_tol(got, want, 1e-9 * want);
	}
	iogp_series_free(&s);
}
END_TEST

START_TEST(test_series_limits)
{
	/* Two sources whose clocks are three years apart: a clear error asking
	 * for a larger step, at once, not gigabytes of bins. */
	iogp_recorder *r;
	char err[256] = "";
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	hello(r, 1, "a", T0);
	hello(r, 2, "b", T0);
	delta(r, 1, 1, T0, SEC, 10, 0, 0);
	delta(r, 2, 1, T0 + 3ull * 365 * 86400 * SEC, SEC, 10, 0, 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_series s;
	double t0 = tu_now();
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 1.0, err, sizeof(err)), IOGP_ELIMIT);
	ck_assert_ptr_nonnull(strstr(err, "larger --step"));
	ck_assert_ptr_null(s.nodes);
	ck_assert(tu_now() - t0 < 30);
	/* a day per bin is fine */
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 86400, err, sizeof(err)), 0);
	ck_assert_uint_ge(s.nbins, 3 * 365);
	iogp_series_free(&s);
	/* 2,000 nodes over 28 hours at 1 s: 2000 x 100,000 cells would take 1.8 GB */
	unlink(path);
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	char name[32];
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "n%04d", i);
		hello(r, 10 + (uint64_t)i, name, T0);
	}
	delta(r, 10, 1, T0, SEC, 10, 0, 0);
	delta(r, 11, 1, T0 + 100000 * SEC, SEC, 10, 0, 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	err[0] = 0;
	t0 = tu_now();
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 1.0, err, sizeof(err)), IOGP_ELIMIT);
	ck_assert_ptr_nonnull(strstr(err, "2000 nodes"));
	ck_assert(tu_now() - t0 < 30);
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 10.0, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.nnodes, 2000);
	iogp_series_free(&s);
}
END_TEST

START_TEST(test_series_damaged)
{
	/* Bytes corrupted in the middle: the reader skips them and says how
	 * many; the rest is still in the series. */
	iogp_recorder *r;
	char err[256];
	iogp_recorder_opts ro = { .plain = 1 };
	ck_assert_int_eq(iogp_recorder_open(&r, path, &ro, err, sizeof(err)), 0);
	hello(r, 7, "n1", T0);
	for (int i = 0; i < 200; i++)
		delta(r, 7, (uint64_t)i + 1, T0 + (uint64_t)i * SEC, SEC, 100, 0, 1);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	size_t len;
	char *data = tu_load(path, &len);
	for (size_t i = len / 2; i < len / 2 + 64; i++)
		data[i] ^= 0x5a;
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(data);
	iogp_series s;
	ck_assert_int_eq(iogp_series_from_file(&s, path, "c.bytes", 1.0, err, sizeof(err)), 0);
	ck_assert_uint_gt(s.file.skipped_bytes, 0);
	ck_assert_uint_eq(s.file_bytes, len);
	ck_assert_uint_gt(s.intervals, 150);
	ck_assert_uint_lt(s.intervals, 200);
	iogp_series_free(&s);
}
END_TEST

/* ---- access samples ---- */

START_TEST(test_access_csv_rows)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(iogp_access_csv_header(f), 0);
	ck_assert_int_eq(iogp_access_csv_row(f, T0 + 250000001ull, "/data/a,b.dat", IOGP_OP_WRITE, 4096, 512), 0);
	ck_assert_int_eq(iogp_access_csv_row(f, T0, NULL, IOGP_OP_READ, 0, 1), 0);
	fclose(f);
	ck_assert_str_eq(buf, "time,epoch_s,file,op,offset_bytes,size_bytes\n"
	                      "2026-09-21T14:13:20.250Z,1790000000.250000001,\"/data/a,b.dat\",write,4096,512\n"
	                      "2026-09-21T14:13:20.000Z,1790000000.000000000,,read,0,1\n");
	free(buf);
}
END_TEST

static void adelta(iogp_recorder *r, uint64_t id, uint64_t seq, uint64_t wall_end,
                   const iogp_access *a, uint32_t na, const iogp_file *files, uint32_t nf)
{
	iogp_counter_val c = { 1, 1 };
	iogp_msg m = { .kind = IOGP_DELTA, .source = id, .seq = seq,
	               .t0_ns = 9 * SEC, .t1_ns = 10 * SEC, .wall_ns = wall_end,
	               .counters = &c, .ncounters = 1, .access = (iogp_access *)a, .naccess = na,
	               .access_seen = na, .files = (iogp_file *)files, .nfiles = nf };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, wall_end + 1000), 0);
}

static void ahello(iogp_recorder *r, uint64_t id, const char *host)
{
	static iogp_metric_def d[2];
	iogp_msg m = { .kind = IOGP_HELLO, .source = id };
	lab[0] = (iogp_label){ "host", host };
	lab[1] = (iogp_label){ "pid", "1" };
	d[0] = (iogp_metric_def){ .id = 1, .kind = IOGP_COUNTER, .name = "c.bytes", .unit = "bytes" };
	d[1] = (iogp_metric_def){ .id = 4, .kind = IOGP_ACCESS, .name = "x.access", .unit = "" };
	m.labels = lab;
	m.nlabels = 2;
	m.metrics = d;
	m.nmetrics = 2;
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, T0), 0);
}

static char *access_export(const char *node, const uint64_t *src, iogp_access_stats *st)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(iogp_access_export_file(path, NULL, node, src, f, st, err, sizeof(err)), 0);
	fclose(f);
	return buf;
}

START_TEST(test_access_export_file)
{
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, path, NULL, err, sizeof(err)), 0);
	ahello(r, 0xa1, "alpha");
	ahello(r, 0xb2, "beta");
	iogp_file fa[2] = { { 1, "/scratch/a.dat" }, { 2, "/scratch/b.dat" } };
	/* sample times on the source's monotonic clock: t1 = 10 s is wall_end */
	iogp_access a1[2] = { { 4, 9 * SEC + 500000000ull, 1, IOGP_OP_READ, 0, 4096 },
	                      { 4, 10 * SEC, 2, IOGP_OP_WRITE, 8192, 100 } };
	iogp_access b1[1] = { { 4, 9 * SEC, 7, IOGP_OP_READ, 1, 2 } };   /* file 7: unknown */
	adelta(r, 0xa1, 1, T0 + SEC, a1, 2, fa, 2);
	adelta(r, 0xb2, 1, T0 + 2 * SEC, b1, 1, NULL, 0);
	adelta(r, 0xa1, 1, T0 + SEC, a1, 2, NULL, 0);      /* duplicate: left out */
	adelta(r, 0xa1, 2, T0 + 3 * SEC, a1 + 1, 1, NULL, 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_access_stats st;
	char *buf = access_export(NULL, NULL, &st);
	ck_assert_str_eq(buf, "time,epoch_s,node,source,file,op,offset_bytes,size_bytes\n"
		"2026-09-21T14:13:20.500Z,1790000000.500000000,alpha,00000000000000a1,/scratch/a.dat,read,0,4096\n"
		"2026-09-21T14:13:21.000Z,1790000001.000000000,alpha,00000000000000a1,/scratch/b.dat,write,8192,100\n"
		"2026-09-21T14:13:21.000Z,1790000001.000000000,beta,00000000000000b2,#7,read,1,2\n"
		"2026-09-21T14:13:23.000Z,1790000003.000000000,alpha,00000000000000a1,/scratch/b.dat,write,8192,100\n");
	ck_assert_uint_eq(st.samples, 4);
	ck_assert_uint_eq(st.unknown_files, 1);
	ck_assert_int_eq(st.metric_found, 1);
	free(buf);
	buf = access_export("beta", NULL, &st);
	ck_assert_uint_eq(st.samples, 1);
	ck_assert_uint_eq(st.sources, 1);
	ck_assert_ptr_nonnull(strstr(buf, ",beta,00000000000000b2,#7,"));
	ck_assert_ptr_null(strstr(buf, "alpha"));
	free(buf);
	uint64_t id = 0xa1;
	buf = access_export(NULL, &id, &st);
	ck_assert_uint_eq(st.samples, 3);
	ck_assert_uint_eq(st.sources, 1);
	ck_assert_ptr_null(strstr(buf, "beta"));
	free(buf);
	buf = access_export("gamma", NULL, &st);
	ck_assert_uint_eq(st.samples, 0);
	ck_assert_uint_eq(st.sources, 0);
	free(buf);
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
		{ "series_gauge_holds", test_series_gauge_holds },
		{ "probe_rows_hold", test_probe_rows_hold },
		{ "series_prepend_and_csv", test_series_prepend_and_csv },
		{ "series_csv_truth", test_series_csv_truth },
		{ "csv_hand_filled", test_csv_hand_filled },
		{ "series_quantiles_truth", test_series_quantiles_truth },
		{ "series_quantiles_late_and_schemes", test_series_quantiles_late_and_schemes },
		{ "series_many_sources", test_series_many_sources },
		{ "series_limits", test_series_limits }, { "series_damaged", test_series_damaged },
		{ "access_csv_rows", test_access_csv_rows },
		{ "access_export_file", test_access_export_file },
		{ "series_errors", test_series_errors }, { "load_file_counts", test_load_file_counts },
		{ "filename", test_filename },
	};
	/* no timeout of their own: Check's default (CK_DEFAULT_TIMEOUT) */
	return tu_run_suite("export", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 0);
}
