/* check_cli.c - the iogram command against recordings whose ground truth
 * iogram-synth computed from the generated values themselves. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <regex.h>
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
		if (i == 1) {   /* every form and the file names of 'all' */
			ck_assert_ptr_nonnull(strstr(r.out, "iogram export access FILE"));
			ck_assert_ptr_nonnull(strstr(r.out, "METRIC.UNIT.hist.csv"));
			ck_assert_ptr_nonnull(strstr(r.out, "METRIC.node-NODE.UNIT.hist.csv"));
			ck_assert_ptr_nonnull(strstr(r.out, "p99_U"));
		}
		tu_result_free(&r);
		r = RUN((char *)bin, (char *)verbs[i], "--no-such-flag");
		ck_assert_int_eq(r.status, 2);
		tu_result_free(&r);
	}
}
END_TEST

START_TEST(test_man_page)
{
	/* iogram(1) documents every verb --help lists (each export form too),
	 * in the product's language */
	const char *src = getenv("IOGRAM_SRCDIR");
	ck_assert_ptr_nonnull(src);
	char *man = tu_load(tu_fmt("%s/cli/iogram.1", src), NULL);
	tu_result r = RUN((char *)bin, "--help");
	ck_assert_int_eq(r.status, 0);
	char *p = strstr(r.out, "Verbs:\n");
	ck_assert_ptr_nonnull(p);
	p += 7;
	int verbs = 0;
	char verb[32];
	while (sscanf(p, "  %31s", verb) == 1 && *p == ' ' && verbs < 100) {
		ck_assert_ptr_nonnull(strstr(man, tu_fmt("\n.B iogram %s", verb)));   /* synopsis */
		if (strcmp(verb, "export"))
			ck_assert_msg(strstr(man, tu_fmt("\n.SS %s\n", verb)) != NULL, "no section for %s", verb);
		verbs++;
		p = strchr(p, '\n') + 1;
	}
	ck_assert_int_ge(verbs, 8);
	const char *forms[] = { "hist", "series", "access", "all" };
	for (int i = 0; i < 4; i++) {
		ck_assert_ptr_nonnull(strstr(man, tu_fmt("\n.SS export %s\n", forms[i])));
		ck_assert_ptr_nonnull(strstr(man, tu_fmt("\n.B iogram export %s\n", forms[i])));
	}
	ck_assert_ptr_null(strcasestr(man, "the seed"));
	ck_assert_ptr_null(strcasestr(man, "seed's"));
	ck_assert_ptr_nonnull(strstr(man, "skipped as damaged"));
	tu_result_free(&r);
	free(man);
}
END_TEST

/* Sum of the count column of a histogram CSV (its header checked). */
static unsigned long long csv_count_sum(const char *csv, int *rows)
{
	ck_assert_int_eq(strncmp(csv, "lower_bound,upper_bound,count\n", 30), 0);
	unsigned long long total = 0, lo, hi, c, prev_hi = 0;
	int n = 0;
	for (const char *p = csv + 30; *p && n < 1000000; p = strchr(p, '\n') + 1) {
		ck_assert_int_eq(sscanf(p, "%llu,%llu,%llu", &lo, &hi, &c), 3);
		ck_assert(lo <= hi && c > 0);
		ck_assert(n == 0 || lo > prev_hi);   /* ascending, disjoint */
		prev_hi = hi;
		total += c;
		n++;
		ck_assert_ptr_nonnull(strchr(p, '\n'));
	}
	if (rows)
		*rows = n;
	return total;
}

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
		/* the rows add up to the requests counted */
		unsigned long long ops = i == 1 ? truth_counter("posix.write.ops", "all") :
		                         i == 3 ? truth_counter("posix.read.ops", "all") +
		                                  truth_counter("posix.write.ops", "all") :
		                         truth_counter("posix.read.ops", "all");
		ck_assert_uint_eq(csv_count_sum(r.out, NULL), ops);
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

/* ---- CSV helpers ---- */

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

/* "2026-11-18T11:06:40.000Z" -> ns. */
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
	return (uint64_t)timegm(&tm) * 1000000000ull + (uint64_t)ms * 1000000ull;
}

/* "1795000000.250" (decimals digits exactly) -> ns. */
static uint64_t parse_secs(const char *v, int decimals)
{
	const char *dot = strchr(v, '.');
	ck_assert_msg(dot && (int)strlen(dot + 1) == decimals && strspn(v, "0123456789.") == strlen(v),
	              "not seconds with %d decimals: '%s'", decimals, v);
	uint64_t frac = strtoull(dot + 1, NULL, 10);
	for (int i = decimals; i < 9; i++)
		frac *= 10;
	return strtoull(v, NULL, 10) * 1000000000ull + frac;
}

static regex_t fixed3;

static void check_fixed3(const char *v)
{
	ck_assert_msg(regexec(&fixed3, v, 0, NULL, 0) == 0, "not a number with 3 decimals: '%s'", v);
}

START_TEST(test_series_totals)
{
	ck_assert_int_eq(regcomp(&fixed3, "^-?[0-9]+\\.[0-9]{3}$", REG_EXTENDED | REG_NOSUB), 0);
	make_job(NULL, NULL);
	for (int si = 0; si < 2; si++) {
		const char *step = si ? "5" : "1";
		double stepv = si ? 5.0 : 1.0;
		tu_result r = RUN((char *)bin, "export", "series", file, "--metric", "posix.write.bytes",
		                   "--step", (char *)step);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_str_eq(r.err, "");
		char *p = r.out, *f[MAXF], *line = next_line(&p);
		ck_assert_str_eq(line, "time,epoch_s,elapsed_s,min_node,min_bytes_per_s,avg_bytes_per_s,"
		                 "max_node,max_bytes_per_s,total_bytes_per_s,node001_bytes_per_s,"
		                 "node002_bytes_per_s,node003_bytes_per_s");
		/* sum of total x step = bytes counted; per-node columns likewise */
		double tot = 0, node[3] = { 0, 0, 0 };
		int rows = 0;
		uint64_t first = 0, prev = 0;
		while ((line = next_line(&p)) != NULL && rows < 100000) {
			ck_assert_int_eq(split(line, f), 12);
			uint64_t iso = parse_iso(f[0]), ep = parse_secs(f[1], 3), el = parse_secs(f[2], 3);
			ck_assert_uint_eq(iso, ep);
			ck_assert_uint_eq(ep % (uint64_t)(stepv * 1e9), 0);   /* bins on the step */
			if (!rows)
				first = ep;
			else
				ck_assert_uint_eq(ep - prev, (uint64_t)(stepv * 1e9));
			ck_assert_uint_eq(el, ep - first);
			prev = ep;
			for (int k = 4; k < 12; k++)
				if (k != 6 && *f[k])
					check_fixed3(f[k]);
			tot += atof(f[8]) * stepv;
			for (int k = 0; k < 3; k++)
				node[k] += atof(f[9 + k]) * stepv;
			if (*f[3]) {   /* min <= avg <= max, and the named nodes hold them */
				ck_assert(atof(f[4]) <= atof(f[5]) + 1e-6);
				ck_assert(atof(f[5]) <= atof(f[7]) + 1e-6);
				int mn = atoi(f[3] + 4), mx = atoi(f[6] + 4);
				ck_assert(mn >= 1 && mn <= 3 && mx >= 1 && mx <= 3);
				ck_assert_str_eq(f[4], f[8 + mn]);
				ck_assert_str_eq(f[7], f[8 + mx]);
			}
			rows++;
		}
		ck_assert_int_ge(rows, 40 / (int)stepv);
		/* 3 decimals per row: 0.0005 x step of rounding per row at most */
		double want = (double)truth_counter("posix.write.bytes", "all");
		ck_assert_double_eq_tol(tot, want, want * 1e-9 + 0.002 * stepv * rows);
		for (int k = 0; k < 3; k++) {
			double w = (double)truth_counter("posix.write.bytes", tu_fmt("node%03d", k + 1));
			ck_assert_double_eq_tol(node[k], w, w * 1e-9 + 0.0005 * stepv * rows);
		}
		tu_result_free(&r);
	}
	regfree(&fixed3);
}
END_TEST

/* Per (absolute end bin, node) the merged latency deltas of the file, read
 * with the library's reader: the truth for the quantile series. */
#define TB 64
typedef struct lat_truth {
	uint64_t base;               /* absolute bin of [0] */
	iogp_hist node[TB][3], all[TB];
	uint64_t events;
} lat_truth;

static void lat_truth_build(lat_truth *t, const char *metric, uint64_t step_ns)
{
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	for (int b = 0; b < TB; b++) {
		iogp_hist_init(&t->all[b], &nb);
		for (int n = 0; n < 3; n++)
			iogp_hist_init(&t->node[b][n], &nb);
	}
	t->base = UINT64_MAX;
	t->events = 0;
	iogp_replay_reader *r;
	char err[256];
	ck_assert_int_eq(iogp_replay_open(&r, file, err, sizeof(err)), 0);
	iogp_msg m;
	iogp_msg_init(&m);
	iogp_replay_rec rec;
	uint64_t ids[3] = { 0, 0, 0 };
	uint32_t mid[3] = { 0, 0, 0 };
	int nodes = 0;
	while (iogp_replay_next(r, &rec) == 0) {
		ck_assert_int_ge(iogp_msg_decode(&m, rec.payload, rec.len, NULL, 0), 0);
		if (rec.keyframe)
			continue;
		int n = -1;
		for (int k = 0; k < nodes; k++)
			if (ids[k] == m.source)
				n = k;
		if (m.kind == IOGP_HELLO) {
			const char *h = iogp_msg_label(&m, "host");
			ck_assert(h && nodes < 3);
			n = atoi(h + 4) - 1;   /* node001 -> 0 */
			ck_assert(n >= 0 && n < 3);
			ids[n] = m.source;
			nodes++;
			for (uint32_t i = 0; i < m.nmetrics; i++)
				if (!strcmp(m.metrics[i].name, metric))
					mid[n] = m.metrics[i].id;
			continue;
		}
		if (m.kind != IOGP_DELTA)
			continue;
		ck_assert_int_ge(n, 0);
		uint64_t b = (m.wall_ns - 1) / step_ns;
		if (t->base == UINT64_MAX)
			t->base = b > 4 ? b - 4 : 0;
		ck_assert(b >= t->base && b < t->base + TB);
		for (uint32_t i = 0; i < m.nhists; i++) {
			if (m.hists[i].id != mid[n])
				continue;
			iogp_hist_add_bins(&t->node[b - t->base][n], m.hists[i].bins, m.hists[i].nbins);
			iogp_hist_add_bins(&t->all[b - t->base], m.hists[i].bins, m.hists[i].nbins);
			for (uint32_t j = 0; j < m.hists[i].nbins; j++)
				t->events += m.hists[i].bins[j].count;
		}
	}
	iogp_msg_free(&m);
	iogp_replay_close_reader(r);
	ck_assert_int_eq(nodes, 3);
}

static void lat_truth_free(lat_truth *t)
{
	for (int b = 0; b < TB; b++) {
		iogp_hist_free(&t->all[b]);
		for (int n = 0; n < 3; n++)
			iogp_hist_free(&t->node[b][n]);
	}
}

START_TEST(test_series_latency_truth)
{
	/* export series of a latency histogram: p50/p90/p99 per bin of all the
	 * deltas that ended in it and each node's p99, equal to the quantiles of
	 * the same deltas merged here; count_per_s x step = the requests. */
	make_job(NULL, NULL);
	static lat_truth t;
	for (int si = 0; si < 2; si++) {
		uint64_t step_ns = si ? 5000000000ull : 1000000000ull;
		lat_truth_build(&t, "posix.read.latency", step_ns);
		tu_result r = RUN((char *)bin, "export", "series", file, "--metric", "posix.read.latency",
		                   "--step", si ? "5" : "1");
		ck_assert_msg(r.status == 0, "%s", r.err);
		char *p = r.out, *f[MAXF], *line = next_line(&p);
		ck_assert_str_eq(line, "time,epoch_s,elapsed_s,count_per_s,p50_ns,p90_ns,p99_ns,"
		                       "node001_p99_ns,node002_p99_ns,node003_p99_ns");
		int rows = 0, quant = 0, cells = 0;
		double ev = 0;
		while ((line = next_line(&p)) != NULL && rows < 10000) {
			ck_assert_int_eq(split(line, f), 10);
			uint64_t ep = parse_secs(f[1], 3);
			ck_assert_uint_eq(parse_iso(f[0]), ep);
			uint64_t b = ep / step_ns;
			ck_assert(b >= t.base && b < t.base + TB);
			if (*f[3])
				ev += atof(f[3]) * (double)step_ns / 1e9;
			iogp_hist *all = &t.all[b - t.base];
			static const double qs[3] = { 0.5, 0.9, 0.99 };
			for (int k = 0; k < 3; k++) {
				if (!all->total) {
					ck_assert_str_eq(f[4 + k], "");
					continue;
				}
				uint64_t w;
				ck_assert_int_eq(iogp_hist_quantile(all, qs[k], &w), 0);
				ck_assert_msg(*f[4 + k] && strtoull(f[4 + k], NULL, 10) == w,
				              "%s q%.2f: '%s' != %" PRIu64, f[0], qs[k], f[4 + k], w);
				quant++;
			}
			for (int n = 0; n < 3; n++) {
				iogp_hist *h = &t.node[b - t.base][n];
				if (!h->total) {
					ck_assert_str_eq(f[7 + n], "");
					continue;
				}
				uint64_t w;
				ck_assert_int_eq(iogp_hist_quantile(h, 0.99, &w), 0);
				ck_assert_msg(*f[7 + n] && strtoull(f[7 + n], NULL, 10) == w,
				              "%s node%03d p99: '%s' != %" PRIu64, f[0], n + 1, f[7 + n], w);
				cells++;
			}
			rows++;
		}
		ck_assert_int_ge(quant, 3 * (si ? 7 : 38));
		ck_assert_int_ge(cells, 3 * (si ? 7 : 36));
		double want = (double)truth_counter("posix.read.ops", "all");
		ck_assert_uint_eq(t.events, (uint64_t)want);
		ck_assert_double_eq_tol(ev, want, 0.0005 * rows * (double)step_ns / 1e9 + 1e-9 * want);
		tu_result_free(&r);
		lat_truth_free(&t);
	}
}
END_TEST

/* DELTAs in the file, as `iogram info` counts them. */
static unsigned long long info_deltas(const char *path)
{
	tu_result r = RUN((char *)bin, "info", (char *)path);
	ck_assert_int_eq(r.status, 0);
	char *p = strstr(r.out, "messages:   hello ");
	ck_assert_ptr_nonnull(p);
	unsigned long long h, d;
	ck_assert_int_eq(sscanf(p, "messages:   hello %llu, delta %llu", &h, &d), 2);
	tu_result_free(&r);
	return d;
}

START_TEST(test_export_access)
{
	/* iogram-synth sends 16 samples of 4 KiB per DELTA, on its rank's file */
	make_job(NULL, NULL);
	unsigned long long deltas = info_deltas(file);
	ck_assert_uint_gt(deltas, 100);
	char *o = tu_fmt("%s/access.csv", dir);
	tu_result r = RUN((char *)bin, "export", "access", file, "-o", o);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.err, "");
	tu_result_free(&r);
	char *csv = tu_load(o, NULL), *p = csv, *f[MAXF], *line = next_line(&p);
	ck_assert_str_eq(line, "time,epoch_s,node,source,file,op,offset_bytes,size_bytes");
	unsigned long long rows = 0, per[3] = { 0, 0, 0 }, writes = 0;
	char src2[17] = "";
	while ((line = next_line(&p)) != NULL && rows < 10000000) {
		ck_assert_int_eq(split(line, f), 8);
		uint64_t ep = parse_secs(f[1], 9);
		ck_assert_uint_eq(parse_iso(f[0]), ep - ep % 1000000);
		ck_assert(ep >= 1795000000000000000ull && ep < 1795000100000000000ull);
		int n = atoi(f[2] + 4);
		ck_assert(!strncmp(f[2], "node", 4) && n >= 1 && n <= 3);
		per[n - 1]++;
		ck_assert_uint_eq(strlen(f[3]), 16);
		if (n == 2)
			snprintf(src2, sizeof(src2), "%s", f[3]);
		ck_assert_str_eq(f[4], tu_fmt("/scratch/job4242/rank%04d.dat", n - 1));
		ck_assert(!strcmp(f[5], "read") || !strcmp(f[5], "write"));
		writes += !strcmp(f[5], "write");
		ck_assert_uint_eq(strtoull(f[6], NULL, 10) % 4096, 0);
		ck_assert_str_eq(f[7], "4096");
		rows++;
	}
	ck_assert_uint_eq(rows, 16 * deltas);
	ck_assert_uint_eq(writes, 8 * deltas);
	free(csv);
	/* one node: only its rows */
	r = RUN((char *)bin, "export", "access", file, "--node", "node002");
	ck_assert_int_eq(r.status, 0);
	p = r.out;
	next_line(&p);
	rows = 0;
	while ((line = next_line(&p)) != NULL && rows < 10000000) {
		ck_assert_int_eq(split(line, f), 8);
		ck_assert_str_eq(f[2], "node002");
		rows++;
	}
	ck_assert_uint_eq(rows, per[1]);
	ck_assert_uint_gt(rows, 0);
	tu_result_free(&r);
	/* one source, by the id the full export gave */
	r = RUN((char *)bin, "export", "access", file, "--source", src2);
	ck_assert_msg(r.status == 0, "--source %s: %s", src2, r.err);
	ck_assert_ptr_null(strstr(r.out, "node001"));
	ck_assert_ptr_nonnull(strstr(r.out, "node002"));
	tu_result_free(&r);
	/* what cannot be: a node or metric not in the file, options of other forms */
	char *o2 = tu_fmt("%s/none.csv", dir);
	r = RUN((char *)bin, "export", "access", file, "--node", "node999", "-o", o2);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "no node 'node999'"));
	ck_assert_int_ne(access(o2, F_OK), 0);   /* no half-made file left */
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "access", file, "--metric", "posix.read.size");
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown access metric"));
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "access", file, "--bins", "log2");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "access", file, "--source", "xyz");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
}
END_TEST

START_TEST(test_export_all)
{
	make_job(NULL, NULL);
	char *o = tu_fmt("%s/all", dir);
	tu_result r = RUN((char *)bin, "export", "all", file, "-o", o);
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* 6 histograms x (all + 3 nodes), 14 series, 1 access, the phases, the files */
	ck_assert_ptr_nonnull(strstr(r.err, "wrote 41 CSV files"));
	ck_assert(access(tu_fmt("%s/phases.csv", o), R_OK) == 0);
	ck_assert_str_eq(tu_slurp(tu_fmt("%s/files.csv", o)),
	                 "file,kind,files,layer,sources,read_ops,read_bytes,read_max_request_bytes,"
	                 "write_ops,write_bytes,write_max_request_bytes,meta_ops,io_time_s\n");
	tu_result_free(&r);
	/* histograms: METRIC[.node-NODE].UNIT.hist.csv, equal to the truth */
	static const char *const pairs[][2] = {
		{ "posix.read.size.bytes.hist.csv", "posix.read.size.all.csv" },
		{ "posix.read.latency.ns.hist.csv", "posix.read.latency.all.csv" },
		{ "posix.write.size.node-node003.bytes.hist.csv", "posix.write.size.node003.csv" },
		{ "posix.queue_depth.node-node001.requests.hist.csv", "posix.queue_depth.node001.csv" },
		{ "posix.meta.latency.node-node002.ns.hist.csv", "posix.meta.latency.node002.csv" },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		char *got = tu_read_file(tu_fmt("%s/%s", o, pairs[i][0]), NULL);
		char *want = tu_read_file(tu_fmt("%s/%s", truth, pairs[i][1]), NULL);
		ck_assert_msg(got != NULL, "%s missing", pairs[i][0]);
		ck_assert_ptr_nonnull(want);
		ck_assert_str_eq(got, want);
		free(got);
		free(want);
	}
	ck_assert_int_ne(access(tu_fmt("%s/posix.read.size.hist.csv", o), F_OK), 0);
	/* series as export series writes them; access samples */
	char *got = tu_load(tu_fmt("%s/posix.read.bytes.series.csv", o), NULL);
	r = RUN((char *)bin, "export", "series", file, "--metric", "posix.read.bytes");
	ck_assert_str_eq(got, r.out);
	ck_assert_ptr_nonnull(strstr(got, "node003_bytes_per_s"));
	free(got);
	tu_result_free(&r);
	got = tu_load(tu_fmt("%s/posix.read.latency.series.csv", o), NULL);
	ck_assert_int_eq(strncmp(got, "time,epoch_s,elapsed_s,count_per_s,p50_ns,", 42), 0);
	free(got);
	got = tu_load(tu_fmt("%s/synth.open_files.series.csv", o), NULL);
	ck_assert_ptr_nonnull(strstr(got, ",min_files,avg_files,"));
	free(got);
	got = tu_load(tu_fmt("%s/posix.access.csv", o), NULL);
	r = RUN((char *)bin, "export", "access", file);
	ck_assert_str_eq(got, r.out);
	free(got);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "all", file, "-o", o, "--metric", "posix.read.size");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
}
END_TEST

/* A recording of 1,000 reads of 4 KiB whose size the agent counted exactly
 * and 3 of 10,000 bytes it did not, in one DELTA. */
static void make_exact_job(void)
{
	snprintf(file, sizeof(file), "%s/exact.iogr", dir);
	iogp_recorder *r;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&r, file, NULL, err, sizeof(err)), 0);
	iogp_label lab[2] = { { "host", "n1" }, { "pid", "1" } };
	iogp_metric_def d = { .id = 1, .kind = IOGP_HISTOGRAM, .name = "posix.read.size", .unit = "bytes" };
	iogp_bins_native(&d.bins, IOGP_NATIVE_K_DEFAULT);
	iogp_msg m = { .kind = IOGP_HELLO, .source = 9, .labels = lab, .nlabels = 2, .metrics = &d,
	               .nmetrics = 1 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &m, 1795000000000000000ull), 0);
	iogp_hist h;
	iogp_hist_init(&h, &d.bins);
	iogp_hist_record(&h, 4096, 1000);
	iogp_hist_record(&h, 10000, 3);
	iogp_hist_val hv = { 1, (uint32_t)h.n, h.bins };
	iogp_exact ex = { 4096, 1000 };
	iogp_exact_val xv = { 1, 1, &ex };
	iogp_msg dm = { .kind = IOGP_DELTA, .source = 9, .seq = 1, .t0_ns = 1000000000ull,
	                .t1_ns = 2000000000ull, .wall_ns = 1795000001000000000ull, .hists = &hv,
	                .nhists = 1, .exact = &xv, .nexact = 1 };
	ck_assert_int_ge(iogp_recorder_add_msg(r, &dm, 1795000001000000000ull), 0);
	ck_assert_int_eq(iogp_recorder_close(r), 0);
	iogp_hist_free(&h);
}

START_TEST(test_hist_exact_rows)
{
	/* native bins: the explained bin as its exact size; other bins: only the
	 * requested bins' rows; the counts always add up */
	make_exact_job();
	static const struct { const char *bins, *has, *lacks; } c[] = {
		{ NULL, "\n4096,4096,1000\n", "\n4096,4223," },
		{ "native", "\n4096,4096,1000\n", "\n4096,4223," },
		{ "native:4", "\n4096,4096,1000\n", "\n4096,4223," },
		{ "native:3", "\n4096,4607,1000\n", "\n4096,4096," },
		{ "log2", "\n4096,8191,1000\n", "\n4096,4096," },
		{ "fixed:4096", "\n4096,8191,1000\n", "\n4096,4096," },
		{ "edges:4096,8192", "\n4096,8191,1000\n", "\n4096,4096," },
		{ "equal:2", "\n4096,7167,1000\n", "\n4096,4096," },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		tu_result r = c[i].bins ?
			RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--bins",
			    (char *)c[i].bins) :
			RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size");
		ck_assert_msg(r.status == 0, "%s: %s", c[i].bins, r.err);
		ck_assert_msg(strstr(r.out, c[i].has) != NULL, "--bins %s: no '%s' in\n%s", c[i].bins,
		              c[i].has + 1, r.out);
		ck_assert_msg(strstr(r.out, c[i].lacks) == NULL, "--bins %s: '%s' in\n%s", c[i].bins,
		              c[i].lacks + 1, r.out);
		ck_assert_uint_eq(csv_count_sum(r.out, NULL), 1003);
		tu_result_free(&r);
	}
	/* the series' quantiles are exact too (p99 is the 993rd of 1,003) */
	tu_result r = RUN((char *)bin, "export", "series", file, "--metric", "posix.read.size");
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\n2026-11-18T11:06:40.000Z,1795000000.000,0.000,1003.000,"
	                                    "4096,4096,4096,4096\n"));
	tu_result_free(&r);
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
	r = RUN((char *)bin, "export", "series", file, "--metric", "posix.read.bytes", "--bins", "log2");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "series", file, "--metric", "no.such.metric");
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "no metric named 'no.such.metric'"));
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "series", file, "--metric", "posix.access");
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "export access"));
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--step", "5");
	ck_assert_int_eq(r.status, 2);
	tu_result_free(&r);
	r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size", "--node", "node001",
	        "--source", "1");
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "exclude each other"));
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

/* The warning every reader of a damaged file gives, once. */
static void check_damage_warning(const char *err, const char *path)
{
	regex_t re;
	char *pat = tu_fmt("^iogram: warning: %s: [1-9][0-9]* bytes \\(([0-9]+\\.[0-9]|<0\\.1)%%\\) "
	                   "skipped as damaged$", path);
	ck_assert_int_eq(regcomp(&re, pat, REG_EXTENDED | REG_NOSUB | REG_NEWLINE), 0);
	ck_assert_msg(regexec(&re, err, 0, NULL, 0) == 0, "no damage warning in: %s", err);
	regfree(&re);
	const char *first = strstr(err, "skipped as damaged");
	ck_assert_ptr_null(strstr(first + 1, "skipped as damaged"));
}

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

START_TEST(test_damaged_warns)
{
	/* bytes corrupted in the middle of a good recording: info and every
	 * export say how many bytes (and what share) they skipped, once, on
	 * stderr, and succeed with the rest */
	make_job(NULL, NULL);
	size_t len;
	char *data = tu_load(file, &len);
	for (size_t i = len / 2; i < len / 2 + 200; i++)
		data[i] ^= 0xa5;
	char *bad = tu_fmt("%s/bad.iogr", dir);
	char badp[600];
	snprintf(badp, sizeof(badp), "%s", bad);
	int fd = open(badp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(data);
	char *outdir = tu_fmt("%s/bad-all", dir);
	char od[600];
	snprintf(od, sizeof(od), "%s", outdir);
	char *const cmds[][10] = {
		{ (char *)bin, "info", badp, NULL },
		{ (char *)bin, "export", "hist", badp, "--metric", "posix.read.size", NULL },
		{ (char *)bin, "export", "series", badp, "--metric", "posix.read.bytes", NULL },
		{ (char *)bin, "export", "series", badp, "--metric", "posix.read.latency", NULL },
		{ (char *)bin, "export", "access", badp, NULL },
		{ (char *)bin, "export", "all", badp, "-o", od, NULL },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		tu_result r = tu_capture(cmds[i], NULL, 60);
		ck_assert_msg(r.status == 0, "%s %s: status %d: %s", cmds[i][1], cmds[i][2], r.status, r.err);
		check_damage_warning(r.err, badp);
		ck_assert(strlen(r.out) > 100 || i == 5);
		tu_result_free(&r);
	}
	/* the same file undamaged: not a word */
	tu_result r = RUN((char *)bin, "export", "hist", file, "--metric", "posix.read.size");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	tu_result_free(&r);
	/* and what cannot be done is still an error */
	r = RUN((char *)bin, "export", "hist", badp, "--metric", "no.such");
	ck_assert_int_eq(r.status, 1);
	check_damage_warning(r.err, badp);
	tu_result_free(&r);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "help_version_usage", test_help_version_usage }, { "man_page", test_man_page },
		{ "hist_matches_truth", test_hist_matches_truth },
		{ "hist_bins_and_output", test_hist_bins_and_output },
		{ "source_selection", test_source_selection }, { "info_totals", test_info_totals },
		{ "gaps_resync_exact", test_gaps_resync_exact }, { "series_totals", test_series_totals },
		{ "series_latency_truth", test_series_latency_truth },
		{ "export_access", test_export_access }, { "hist_exact_rows", test_hist_exact_rows },
		{ "export_all", test_export_all }, { "bad_input", test_bad_input },
		{ "damaged_files", test_damaged_files }, { "damaged_warns", test_damaged_warns },
	};
	return tu_run_suite("cli", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 120);
}
