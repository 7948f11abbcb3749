/* check_nodes.c - nodes and ranks side by side (iogp_node_table.h) and the
 * model's window slots (iogp_model_hist_slots): a stable order under ties,
 * the lines shown when rows exceed the room, cell texts, and tables built
 * from an iogram-synth recording compared with its exact truth (per-node
 * p99 of every generated latency, I/O time share, straggler order, bytes
 * and requests); slot histograms against the windows and the heatmap's p99
 * against them. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp.h"
#include "iogp_layers.h"
#include "iogp_node_table.h"
#include "testutil.h"

static char dir[256], rec[600], truth[600];

/* ---- tables by hand ---- */

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The table's median I/O time is what sorting the rows' gives (an odd and
 * an even count both). */
static void median_is_sorted(const iogp_node_table *t)
{
	double *v = malloc((t->n + 1) * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].v[IOGP_NT_IOTIME] > 0)
			v[k++] = t->rows[i].v[IOGP_NT_IOTIME];
	ck_assert_uint_eq(k, t->with_io);
	qsort(v, k, sizeof(*v), dcmp);
	if (k == 0)
		ck_assert(isnan(t->median_io_s));
	else
		ck_assert_msg(t->median_io_s == (k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2),
		              "median of %zu: %.9g", k, t->median_io_s);
	free(v);
}

/* iogp_node_table_top gives the prefix of iogp_node_table_order, for
 * every column, both ways and k from none to more than the rows. */
static void top_is_prefix(const iogp_node_table *t)
{
	size_t *o = malloc((t->n + 1) * sizeof(*o)), *k1 = malloc((t->n + 6) * sizeof(*k1));
	ck_assert(o && k1);
	const size_t ks[] = { 0, 1, 2, 3, t->n > 1 ? t->n - 1 : 1, t->n, t->n + 5 };
	for (int c = 0; c < IOGP_NT_NCOLS; c++)
		for (int desc = 0; desc < 2; desc++) {
			iogp_node_table_order(t, c, desc, o);
			for (size_t x = 0; x < sizeof(ks) / sizeof(ks[0]); x++) {
				size_t got = iogp_node_table_top(t, c, desc, ks[x], k1);
				ck_assert_uint_eq(got, ks[x] < t->n ? ks[x] : t->n);
				for (size_t i = 0; i < got; i++)
					ck_assert_msg(k1[i] == o[i], "col %d desc %d k %zu: line %zu is row %zu, not %zu",
					              c, desc, ks[x], i, k1[i], o[i]);
			}
		}
	free(o);
	free(k1);
}

static void table_of(iogp_node_table *t, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->rows = calloc(n, sizeof(*t->rows));
	ck_assert_ptr_nonnull(t->rows);
	t->n = n;
	t->worst = -1;
	for (size_t i = 0; i < n; i++) {
		t->rows[i].rank = t->rows[i].pid = -1;
		for (int c = 0; c < IOGP_NT_NCOLS; c++)
			t->rows[i].v[c] = NAN;
	}
}

START_TEST(order_ties)
{
	static const char *const names[] = { "node10", "node2", "b", "node1", "a", "node02", "c" };
	iogp_node_table t;
	table_of(&t, 7);
	for (size_t i = 0; i < 7; i++) {
		snprintf(t.rows[i].name, sizeof(t.rows[i].name), "%s", names[i]);
		t.rows[i].v[IOGP_NT_QD99] = 8;
		t.rows[i].v[IOGP_NT_P99] = 1000.0 * (double)(i % 3);
	}
	t.rows[6].v[IOGP_NT_QD99] = NAN;   /* "c" has no queue depth */
	size_t o[7];
	/* all equal: by name, digits as numbers (node1 < node2 < node02 < node10) */
	static const char *const want[] = { "a", "b", "node1", "node2", "node02", "node10", "c" };
	for (int desc = 0; desc < 2; desc++) {
		iogp_node_table_order(&t, IOGP_NT_QD99, desc, o);
		for (size_t i = 0; i < 7; i++)
			ck_assert_msg(!strcmp(t.rows[o[i]].name, want[i]), "qd99 %s: line %zu is %s, not %s",
			              desc ? "desc" : "asc", i, t.rows[o[i]].name, want[i]);
	}
	/* the same again and again: the order never moves */
	size_t o2[7];
	for (int k = 0; k < 20; k++) {
		iogp_node_table_order(&t, IOGP_NT_QD99, 1, o2);
		ck_assert(!memcmp(o, o2, sizeof(o)));
	}
	/* p99 0, 1000, 2000 by i % 3; ties by name */
	iogp_node_table_order(&t, IOGP_NT_P99, 1, o);
	static const char *const p99d[] = { "b", "node02", "a", "node2", "c", "node1", "node10" };
	for (size_t i = 0; i < 7; i++)
		ck_assert_msg(!strcmp(t.rows[o[i]].name, p99d[i]), "p99 desc: line %zu is %s, not %s", i,
		              t.rows[o[i]].name, p99d[i]);
	iogp_node_table_order(&t, IOGP_NT_P99, 0, o);
	static const char *const p99a[] = { "c", "node1", "node10", "a", "node2", "b", "node02" };
	for (size_t i = 0; i < 7; i++)
		ck_assert_msg(!strcmp(t.rows[o[i]].name, p99a[i]), "p99 asc: line %zu is %s, not %s", i,
		              t.rows[o[i]].name, p99a[i]);
	/* names backwards; a column without any value keeps the name order */
	iogp_node_table_order(&t, IOGP_NT_NAME, 1, o);
	ck_assert_str_eq(t.rows[o[0]].name, "node10");
	ck_assert_str_eq(t.rows[o[6]].name, "a");
	iogp_node_table_order(&t, IOGP_NT_SHARE, 1, o);
	ck_assert_str_eq(t.rows[o[0]].name, "a");
	ck_assert_str_eq(t.rows[o[6]].name, "node10");
	/* equal names: by source id */
	snprintf(t.rows[2].name, sizeof(t.rows[2].name), "a");
	t.rows[2].source = 5;
	t.rows[4].source = 9;
	iogp_node_table_order(&t, IOGP_NT_NAME, 0, o);
	ck_assert_uint_eq(o[0], 2);
	ck_assert_uint_eq(o[1], 4);
	top_is_prefix(&t);   /* ties, equal names and rows without values */
	iogp_node_table_free(&t);
}
END_TEST

/* Lines of n rows in max lines: every row shown or counted once, in order. */
static void check_lines(iogp_node_table *t, const size_t *o, size_t max, long worst)
{
	iogp_nt_line *l = calloc(max + 1, sizeof(*l));
	t->worst = worst;
	size_t nl = iogp_node_table_lines(t, o, max, l), seen = 0, gaps = 0, k = 0;
	ck_assert_uint_le(nl, max);
	int worst_seen = worst < 0;
	for (size_t i = 0; i < nl; i++) {
		if (l[i].row < 0) {
			ck_assert_uint_gt(l[i].gap, 0);
			k += l[i].gap;
			seen += l[i].gap;
			gaps++;
			continue;
		}
		ck_assert_msg((size_t)l[i].row == o[k], "line %zu: row %ld, not %zu", i, l[i].row, o[k]);
		worst_seen |= l[i].row == worst;
		k++;
		seen++;
	}
	ck_assert_uint_eq(seen, t->n);
	ck_assert_msg(worst_seen || max < 3, "the worst row (%ld) is not shown in %zu lines", worst, max);
	if (t->n <= max)
		ck_assert_uint_eq(gaps, 0);
	else
		ck_assert_uint_eq(nl, max);
	free(l);
}

START_TEST(lines)
{
	iogp_node_table t;
	table_of(&t, 5000);
	size_t *o = malloc(5000 * sizeof(*o));
	for (size_t i = 0; i < 5000; i++) {
		snprintf(t.rows[i].name, sizeof(t.rows[i].name), "node%04zu", i);
		o[i] = i;
	}
	/* top 5, "4,991 more", bottom 4 */
	iogp_nt_line l[10];
	ck_assert_uint_eq(iogp_node_table_lines(&t, o, 10, l), 10);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(l[i].row, i);
	ck_assert_int_eq(l[5].row, -1);
	ck_assert_uint_eq(l[5].gap, 4991);
	for (int i = 6; i < 10; i++)
		ck_assert_int_eq(l[i].row, 5000 - 10 + i);
	/* the worst in the hidden middle: top, gap, it, gap, bottom */
	t.worst = 2500;
	ck_assert_uint_eq(iogp_node_table_lines(&t, o, 10, l), 10);
	ck_assert_int_eq(l[3].row, 3);
	ck_assert_int_eq(l[4].row, -1);
	ck_assert_uint_eq(l[4].gap, 2500 - 4);
	ck_assert_int_eq(l[5].row, 2500);
	ck_assert_int_eq(l[6].row, -1);
	ck_assert_uint_eq(l[6].gap, 5000 - 3 - 2500 - 1);
	for (size_t max = 1; max < 40; max++)
		for (long w = -1; w < 5000; w += 499)
			check_lines(&t, o, max, w);
	t.n = 7;
	for (size_t max = 1; max < 12; max++)
		check_lines(&t, o, max, 3);
	free(o);
	iogp_node_table_free(&t);
}
END_TEST

START_TEST(cells)
{
	iogp_node_table t;
	table_of(&t, 1);
	iogp_nt_row *r = &t.rows[0];
	snprintf(r->name, sizeof(r->name), "node001");
	r->v[IOGP_NT_READ_BPS] = 12.3 * 1048576;
	r->v[IOGP_NT_READ_OPS] = 3.5;
	r->v[IOGP_NT_P99] = 52100;
	r->v[IOGP_NT_SHARE] = 0.123;
	r->v[IOGP_NT_VSMED] = 2.314;
	r->v[IOGP_NT_IOTIME] = 4.1;
	char b[64];
	iogp_node_table_cell(&t, 0, IOGP_NT_READ_BPS, IOGP_UNITS_WIDE, b, sizeof(b));
	ck_assert_str_eq(b, "12.3 MiB/s");
	iogp_node_table_cell(&t, 0, IOGP_NT_READ_BPS, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "12.3M");
	iogp_node_table_cell(&t, 0, IOGP_NT_READ_OPS, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "3.5");
	iogp_node_table_cell(&t, 0, IOGP_NT_P99, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "52.1us");
	iogp_node_table_cell(&t, 0, IOGP_NT_P99, IOGP_UNITS_WIDE, b, sizeof(b));
	ck_assert_str_eq(b, "52.1 µs");
	iogp_node_table_cell(&t, 0, IOGP_NT_SHARE, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "12.3%");
	iogp_node_table_cell(&t, 0, IOGP_NT_VSMED, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "2.31x");
	iogp_node_table_cell(&t, 0, IOGP_NT_VSMED, IOGP_UNITS_WIDE, b, sizeof(b));
	ck_assert_str_eq(b, "2.31×");
	iogp_node_table_cell(&t, 0, IOGP_NT_IOTIME, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "4.10s");
	iogp_node_table_cell(&t, 0, IOGP_NT_QD99, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "-");
	r->v[IOGP_NT_SHARE] = 0.0001;
	iogp_node_table_cell(&t, 0, IOGP_NT_SHARE, IOGP_UNITS_CELL, b, sizeof(b));
	ck_assert_str_eq(b, "<0.1%");
	ck_assert_int_eq(iogp_nt_col_find(iogp_nt_col_name(IOGP_NT_P99)), IOGP_NT_P99);
	ck_assert_int_eq(iogp_nt_col_find("nope"), -1);
	ck_assert(iogp_nt_col_desc(IOGP_NT_P99) && !iogp_nt_col_desc(IOGP_NT_NAME));
	/* CSV: units in the header, numbers fixed */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(iogp_node_table_write_csv(&t, NULL, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "name,node,rank,pid,sources,span_s,read_bytes_per_s,"));
	ck_assert_ptr_nonnull(strstr(buf, "\nnode001,,,,0,0.000,12897484.800,,3.500,,,52100,0.010,,4.100,2.314\n"));
	free(buf);
	iogp_node_table_free(&t);
}
END_TEST

/* ---- tables of a recording against its truth ---- */

static iogp_model *load(const char *path)
{
	iogp_model_opts mo = { .live = 1, .window_slot_ns = 2000000000ull,
	                       .window_max_ns = 300000000000ull, .window_bytes = 65536,
	                       .ring_bins = 600 };
	iogp_model *m = iogp_model_new(&mo);
	ck_assert_ptr_nonnull(m);
	char err[256];
	iogp_load_stats st;
	ck_assert_msg(iogp_load_file(path, m, &st, err, sizeof(err)) == 0, "%s", err);
	return m;
}

typedef struct node_truth {
	char node[32];
	uint64_t requests, p50, p99;
	double io_ns, span_ns, share;
} node_truth;

static int read_nodes(node_truth *t, int max)
{
	FILE *f = fopen(tu_fmt("%s/nodes.csv", truth), "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	int n = 0;
	while (n < max && fscanf(f, "%31[^,],%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%lf,%lf,%lf\n", t[n].node,
	                         &t[n].requests, &t[n].p50, &t[n].p99, &t[n].io_ns, &t[n].span_ns,
	                         &t[n].share) == 7)
		n++;
	fclose(f);
	return n;
}

static uint64_t truth_counter(const char *metric, const char *scope)
{
	FILE *f = fopen(tu_fmt("%s/counters.csv", truth), "r");
	ck_assert_ptr_nonnull(f);
	char line[256], m[128], s[64];
	uint64_t v, found = UINT64_MAX;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127[^,],%63[^,],%" SCNu64, m, s, &v) == 3 && !strcmp(m, metric) &&
		    !strcmp(s, scope))
			found = v;
	fclose(f);
	ck_assert_msg(found != UINT64_MAX, "no truth for %s %s", metric, scope);
	return found;
}

static long row_named(const iogp_node_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].name, name))
			return (long)i;
	return -1;
}

/* |a - b| <= rel * b: bucket midpoints are within 3.1% (k = 4) */
#define NEAR(a, b, rel, ...) ck_assert_msg(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-9, __VA_ARGS__)

START_TEST(truth_nodes)
{
	iogp_model *m = load(rec);
	node_truth tr[16];
	int nt = read_nodes(tr, 16);
	ck_assert_int_eq(nt, 5);
	iogp_node_table t;
	iogp_nt_opts o = { .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_POSIX };
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 5);
	ck_assert(t.has_qd);
	double worst_share = -1;
	int worst = -1;
	for (int i = 0; i < nt; i++) {
		long r = row_named(&t, tr[i].node);
		ck_assert_msg(r >= 0, "no row for %s", tr[i].node);
		const iogp_nt_row *row = &t.rows[r];
		ck_assert_uint_eq(row->sources, 2);
		/* requests and bytes exact (counters), over the nodes' span */
		ck_assert_uint_eq(row->requests, tr[i].requests);
		NEAR(row->v[IOGP_NT_READ_BPS] * row->span_s,
		     truth_counter("posix.read.bytes", tr[i].node), 1e-9, "%s read bytes", tr[i].node);
		NEAR(row->v[IOGP_NT_WRITE_OPS] * row->span_s,
		     truth_counter("posix.write.ops", tr[i].node), 1e-9, "%s write ops", tr[i].node);
		/* the sources' spans added up: what synth's sources lived */
		NEAR(row->proc_s * 1e9, tr[i].span_ns, 1e-6, "%s span %.3f s", tr[i].node, row->proc_s);
		/* latency quantiles against every generated value */
		NEAR(row->v[IOGP_NT_P99], tr[i].p99, 0.032, "%s p99 %.0f vs exact %" PRIu64, tr[i].node,
		     row->v[IOGP_NT_P99], tr[i].p99);
		NEAR(row->v[IOGP_NT_P50], tr[i].p50, 0.032, "%s p50 %.0f vs exact %" PRIu64, tr[i].node,
		     row->v[IOGP_NT_P50], tr[i].p50);
		NEAR(row->v[IOGP_NT_IOTIME] * 1e9, tr[i].io_ns, 0.032, "%s I/O time", tr[i].node);
		NEAR(row->v[IOGP_NT_SHARE], tr[i].share, 0.032, "%s share %.4f vs %.4f", tr[i].node,
		     row->v[IOGP_NT_SHARE], tr[i].share);
		ck_assert_double_eq(row->v[IOGP_NT_QD99], 8);
		if (tr[i].share > worst_share) {
			worst_share = tr[i].share;
			worst = i;
		}
	}
	/* the worst share is the slow node; the stragglers in the truth's order */
	ck_assert_str_eq(t.rows[t.worst].name, tr[worst].node);
	ck_assert_str_eq(tr[worst].node, "node003");
	size_t ord[5];
	iogp_node_table_order(&t, IOGP_NT_IOTIME, 1, ord);
	node_truth by[5];
	memcpy(by, tr, sizeof(by));
	for (int i = 1; i < 5; i++)
		for (int k = i; k > 0 && by[k - 1].io_ns < by[k].io_ns; k--) {
			node_truth x = by[k];
			by[k] = by[k - 1];
			by[k - 1] = x;
		}
	for (int i = 0; i < 5; i++)
		ck_assert_msg(!strcmp(t.rows[ord[i]].name, by[i].node), "straggler %d: %s, truth %s", i,
		              t.rows[ord[i]].name, by[i].node);
	/* against the median: the middle of five */
	NEAR(t.median_io_s * 1e9, by[2].io_ns, 0.032, "median");
	NEAR(t.rows[ord[0]].v[IOGP_NT_VSMED], by[0].io_ns / by[2].io_ns, 0.065, "ratio to the median");
	ck_assert_uint_eq(t.with_io, 5);
	iogp_node_table_free(&t);

	/* the same job by rank, and one node's ranks */
	o.scope = IOGP_NT_SOURCES;
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 10);
	ck_assert_int_ge(row_named(&t, "rank 4 (node003)"), 0);
	FILE *f = fopen(tu_fmt("%s/sources.csv", truth), "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	int rank, k = 0;
	char node[32];
	double span, rl, wl, ml, io;
	while (fscanf(f, "%d,%31[^,],%lf,%lf,%lf,%lf,%lf\n", &rank, node, &span, &rl, &wl, &ml, &io) == 7) {
		long r = row_named(&t, tu_fmt("rank %d (%s)", rank, node));
		ck_assert_msg(r >= 0, "no row for rank %d", rank);
		NEAR(t.rows[r].v[IOGP_NT_IOTIME] * 1e9, io, 0.032, "rank %d I/O time", rank);
		NEAR(t.rows[r].v[IOGP_NT_SHARE], io / span, 0.032, "rank %d share", rank);
		k++;
	}
	fclose(f);
	ck_assert_int_eq(k, 10);
	iogp_node_table_free(&t);
	o.node = "node002";
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_int_ge(row_named(&t, "rank 2"), 0);
	ck_assert_int_ge(row_named(&t, "rank 3"), 0);
	iogp_node_table_free(&t);
	/* a layer the job did not use: no data, no queue depth, still a row per node */
	o = (iogp_nt_opts){ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_STDIO };
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 5);
	ck_assert(!t.has_qd);
	ck_assert(isnan(t.rows[0].v[IOGP_NT_READ_BPS]) && isnan(t.rows[0].v[IOGP_NT_P99]));
	ck_assert_int_eq(t.worst, -1);
	iogp_node_table_free(&t);
	iogp_model_free(m);
}
END_TEST

/* iogp_node_table_lines_by gives iogp_node_table_lines of the whole
 * order: random tables (ties, rows without values, names with numbers),
 * every column both ways, room from 1 line to more than the rows, the
 * worst anywhere. */
START_TEST(lines_by_order)
{
	uint64_t st = 0x11e5b7;
	for (int round = 0; round < 12; round++) {
		size_t n = 1 + (size_t)(tu_splitmix(&st) % (round < 6 ? 40 : 900));
		iogp_node_table t;
		table_of(&t, n);
		for (size_t i = 0; i < n; i++) {
			uint64_t r = tu_splitmix(&st);
			snprintf(t.rows[i].name, sizeof(t.rows[i].name), "rank %u (node%0*u)", (unsigned)(r % 50),
			         (int)(r >> 8) % 4, (unsigned)((r >> 16) % 20));
			t.rows[i].source = (r >> 24) % 7;
			for (int c = 1; c < IOGP_NT_NCOLS; c++) {
				uint64_t x = tu_splitmix(&st);
				t.rows[i].v[c] = x % 5 == 0 ? NAN : (double)(x % 9);   /* ties */
			}
		}
		size_t *o = malloc(n * sizeof(*o));
		iogp_nt_line *a = calloc(n + 50, sizeof(*a)), *b = calloc(n + 50, sizeof(*b));
		ck_assert(o && a && b);
		/* the fastest: the last that did I/O by I/O time (none: -1) */
		iogp_node_table_order(&t, IOGP_NT_IOTIME, 1, o);
		size_t with_io = 0;
		for (size_t i = 0; i < n; i++)
			with_io += t.rows[i].v[IOGP_NT_IOTIME] > 0;
		ck_assert_int_eq(iogp_node_table_fastest(&t), with_io ? (long)o[with_io - 1] : -1);
		for (int c = 0; c < IOGP_NT_NCOLS; c++)
			for (int desc = 0; desc < 2; desc++) {
				iogp_node_table_order(&t, c, desc, o);
				const size_t maxes[] = { 1, 2, 3, 4, 5, 9, 10, 45, n > 1 ? n - 1 : 1, n, n + 3 };
				for (size_t x = 0; x < sizeof(maxes) / sizeof(maxes[0]); x++)
					for (long w = -1; w < (long)n; w += 1 + (long)n / 5) {
						t.worst = w;
						size_t na = iogp_node_table_lines(&t, o, maxes[x], a);
						size_t nb = iogp_node_table_lines_by(&t, c, desc, maxes[x], b);
						ck_assert_uint_eq(nb, na);
						for (size_t i = 0; i < na; i++)
							ck_assert_msg(a[i].row == b[i].row && a[i].gap == b[i].gap,
							              "n %zu col %d desc %d max %zu worst %ld: line %zu is %ld/%zu, "
							              "not %ld/%zu", n, c, desc, maxes[x], w, i, b[i].row, b[i].gap,
							              a[i].row, a[i].gap);
					}
			}
		free(o);
		free(a);
		free(b);
		iogp_node_table_free(&t);
	}
}
END_TEST

/* A lazy table (iogram-top's): every row's name, I/O time, share, vs
 * median, the median and the worst as a whole build's, and the order's
 * column; the other columns pending until filled, then row for row the
 * whole build's. Both scopes, one node's, another layer, windows. */
START_TEST(lazy_fill)
{
	iogp_model *m = load(rec);
	const iogp_nt_opts opts[] = {
		{ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_POSIX },
		{ .scope = IOGP_NT_SOURCES, .layer = IOGP_LAYER_POSIX },
		{ .scope = IOGP_NT_SOURCES, .node = "node002", .layer = IOGP_LAYER_POSIX },
		{ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_STDIO },
		{ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_POSIX, .window_s = 10 },
		{ .scope = IOGP_NT_SOURCES, .layer = IOGP_LAYER_POSIX, .window_s = 5 },
	};
	static const int cols[] = { IOGP_NT_NAME, IOGP_NT_P99, IOGP_NT_QD99, IOGP_NT_WRITE_BPS,
	                            IOGP_NT_READ_OPS, IOGP_NT_IOTIME, IOGP_NT_VSMED };
	iogp_node_table l;
	memset(&l, 0, sizeof(l));
	size_t lazy_rows = 0;
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
		for (size_t ci = 0; ci < sizeof(cols) / sizeof(cols[0]); ci++) {
			int col = cols[ci];
			iogp_node_table b;
			iogp_nt_opts lo = opts[k];
			lo.lazy = 1;
			lo.lazy_col = col;
			ck_assert_int_eq(iogp_node_table_build(&b, m, &opts[k]), 0);
			ck_assert_int_eq(iogp_node_table_rebuild(&l, m, &lo), 0);
			ck_assert_uint_gt(b.n, 0);
			ck_assert_uint_eq(l.n, b.n);
			ck_assert_int_eq(l.worst, b.worst);
			ck_assert_uint_eq(l.with_io, b.with_io);
			ck_assert(isnan(b.median_io_s) ? isnan(l.median_io_s) : l.median_io_s == b.median_io_s);
			static const int kept[] = { IOGP_NT_IOTIME, IOGP_NT_SHARE, IOGP_NT_VSMED };
			for (size_t i = 0; i < b.n; i++) {
				const iogp_nt_row *x = &l.rows[i], *y = &b.rows[i];
				ck_assert_str_eq(x->name, y->name);
				ck_assert_uint_eq(y->pending, 0);
				for (size_t j = 0; j < 3; j++)
					ck_assert_msg(isnan(y->v[kept[j]]) ? isnan(x->v[kept[j]]) : x->v[kept[j]] == y->v[kept[j]],
					              "opts %zu col %d row %s: column %d", k, col, y->name, kept[j]);
				ck_assert_msg(isnan(y->v[col]) ? isnan(x->v[col]) : x->v[col] == y->v[col],
				              "opts %zu row %s: the order's column %d", k, y->name, col);
				/* a name's or an I/O time's order leaves the p99 and the rates */
				if (col == IOGP_NT_NAME || col == IOGP_NT_IOTIME || col == IOGP_NT_VSMED) {
					ck_assert_uint_eq(x->pending, 3);
					ck_assert(isnan(x->v[IOGP_NT_P99]) && isnan(x->v[IOGP_NT_READ_BPS]));
					lazy_rows += !isnan(y->v[IOGP_NT_P99]);
				}
			}
			/* the odd rows filled: they are whole, the even ones still wait */
			size_t *idx = malloc(b.n * sizeof(*idx)), ni = 0;
			ck_assert_ptr_nonnull(idx);
			for (size_t i = 1; i < b.n; i += 2)
				idx[ni++] = i;
			ck_assert_int_eq(iogp_node_table_fill(&l, m, idx, ni), 0);
			for (size_t i = 0; i < b.n; i++) {
				if (i % 2)
					ck_assert_msg(!memcmp(&l.rows[i], &b.rows[i], sizeof(b.rows[i])),
					              "opts %zu col %d row %zu (%s) differs once filled", k, col, i,
					              b.rows[i].name);
				else if (col == IOGP_NT_NAME)
					ck_assert_uint_eq(l.rows[i].pending, 3);
			}
			for (size_t i = 0; i < b.n; i++)
				idx[i] = b.n - 1 - i;
			ck_assert_int_eq(iogp_node_table_fill(&l, m, idx, b.n), 0);
			for (size_t i = 0; i < b.n; i++)
				ck_assert_msg(!memcmp(&l.rows[i], &b.rows[i], sizeof(b.rows[i])),
				              "opts %zu col %d row %zu (%s) differs once filled", k, col, i, b.rows[i].name);
			free(idx);
			iogp_node_table_free(&b);
		}
	ck_assert_uint_gt(lazy_rows, 10);   /* rows whose p99 waited */
	iogp_node_table_free(&l);
	iogp_model_free(m);
}
END_TEST

/* A table rebuilt again and again in one table's memory (as a viewer does
 * each frame), across scopes that grow and shrink its rows, layers and a
 * window, equals a table built afresh each time, row for row. */
START_TEST(rebuild_reuses)
{
	iogp_model *m = load(rec);
	const iogp_nt_opts opts[] = {
		{ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_POSIX },
		{ .scope = IOGP_NT_SOURCES, .layer = IOGP_LAYER_POSIX },   /* 10 rows: grows */
		{ .scope = IOGP_NT_SOURCES, .node = "node002", .layer = IOGP_LAYER_POSIX },
		{ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_STDIO },
		{ .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_POSIX, .window_s = 10 },
		{ .scope = IOGP_NT_SOURCES, .layer = IOGP_LAYER_POSIX, .window_s = 5 },
	};
	iogp_node_table r;
	memset(&r, 0, sizeof(r));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
			iogp_node_table b;
			ck_assert_int_eq(iogp_node_table_build(&b, m, &opts[k]), 0);
			ck_assert_int_eq(iogp_node_table_rebuild(&r, m, &opts[k]), 0);
			ck_assert_uint_gt(b.n, 0);
			ck_assert_uint_eq(r.n, b.n);
			ck_assert_int_eq(r.scope, b.scope);
			ck_assert_int_eq(r.layer, b.layer);
			ck_assert_int_eq(r.worst, b.worst);
			ck_assert_uint_eq(r.with_io, b.with_io);
			ck_assert_int_eq(r.has_qd, b.has_qd);
			ck_assert(r.window_s == b.window_s);
			ck_assert(isnan(b.median_io_s) ? isnan(r.median_io_s) : r.median_io_s == b.median_io_s);
			for (size_t i = 0; i < b.n; i++)
				ck_assert_msg(!memcmp(&r.rows[i], &b.rows[i], sizeof(b.rows[i])),
				              "opts %zu row %zu (%s) differs", k, i, b.rows[i].name);
			ck_assert_uint_ge(r.cap, r.n);
			top_is_prefix(&r);
			median_is_sorted(&r);
			iogp_node_table_free(&b);
		}
	}
	iogp_node_table_free(&r);
	ck_assert_ptr_null(r.rows);
	ck_assert_ptr_null(r.scratch);
	iogp_model_free(m);
}
END_TEST

/* Last N s: what the latency panel's window holds, over the window. */
START_TEST(truth_window)
{
	iogp_model *m = load(rec);
	iogp_node_table t;
	iogp_nt_opts o = { .scope = IOGP_NT_NODES, .layer = IOGP_LAYER_POSIX, .window_s = 10 };
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 5);
	for (size_t i = 0; i < t.n; i++) {
		iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = t.rows[i].node };
		iogp_hist a, b, c;
		ck_assert_int_eq(iogp_model_hist_window(m, "posix.read.latency", &sel, 10000000000ull, &a), 0);
		ck_assert_int_eq(iogp_model_hist_window(m, "posix.write.latency", &sel, 10000000000ull, &b), 0);
		ck_assert_int_eq(iogp_model_hist_window(m, "posix.meta.latency", &sel, 10000000000ull, &c), 0);
		/* the same requests: time in calls to the nanosecond */
		double io = iogp_hist_sum(&a) + iogp_hist_sum(&b) + iogp_hist_sum(&c);
		NEAR(t.rows[i].v[IOGP_NT_IOTIME] * 1e9, io, 1e-12, "%s I/O time %.0f vs %.0f", t.rows[i].name,
		     t.rows[i].v[IOGP_NT_IOTIME] * 1e9, io);
		iogp_hist_free(&c);
		ck_assert_int_eq(iogp_hist_merge(&a, &b), 0);
		uint64_t v;
		ck_assert_int_eq(iogp_hist_quantile(&a, 0.99, &v), 0);
		ck_assert_double_eq(t.rows[i].v[IOGP_NT_P99], (double)v);
		/* each source from the window's first slot edge to its last message */
		iogp_model_live lv;
		iogp_model_get_live(m, &lv);
		uint64_t S = iogp_model_get_opts(m)->window_slot_ns;
		uint64_t ws = (lv.now_ns - 10000000000ull) / S * S;
		double want = 0;
		for (size_t k = 0; k < iogp_model_source_count(m); k++) {
			iogp_source_info si;
			ck_assert_int_eq(iogp_model_source(m, k, &si), 0);
			if (!strcmp(si.node, t.rows[i].node) && si.last_wall_ns > ws)
				want += (double)(si.last_wall_ns - ws) / 1e9;
		}
		NEAR(t.rows[i].proc_s, want, 1e-9, "%s: %.3f s", t.rows[i].name, t.rows[i].proc_s);
		ck_assert_msg(want >= 2 * 8 && want <= 2 * 12, "%s: %.2f s", t.rows[i].name, want);
		ck_assert_uint_gt(t.rows[i].requests, 0);
		ck_assert_uint_lt(t.rows[i].requests, a.total * 2);
		iogp_hist_free(&a);
		iogp_hist_free(&b);
	}
	ck_assert_str_eq(t.rows[t.worst].name, "node003");
	iogp_node_table_free(&t);
	iogp_model_free(m);
}
END_TEST

/* Slot by slot: the slots add up to the window, one slot alone is the
 * same as in a batch, the heatmap's p99 is each slot's. */
START_TEST(slots_heat)
{
	iogp_model *m = load(rec);
	const iogp_model_opts *mo = iogp_model_get_opts(m);
	iogp_model_live lv;
	iogp_model_get_live(m, &lv);
	uint64_t S = mo->window_slot_ns, jhi = lv.now_ns / S, r = lv.now_ns % S;
	uint64_t n = (mo->window_max_ns - r) / S + 1, first = jhi - (n - 1);
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = "node003" };
	iogp_hist *h = calloc(n, sizeof(*h));
	ck_assert_int_eq(iogp_model_hist_slots(m, "posix.read.latency", &sel, first, (size_t)n, h), 0);
	iogp_hist all, sum;
	ck_assert_int_eq(iogp_model_hist_window(m, "posix.read.latency", &sel, mo->window_max_ns, &all), 0);
	iogp_hist_init(&sum, &all.scheme);
	size_t nonempty = 0;
	for (uint64_t k = 0; k < n; k++) {
		ck_assert_int_eq(iogp_hist_merge(&sum, &h[k]), 0);
		nonempty += h[k].total > 0;
	}
	ck_assert_uint_eq(sum.total, all.total);
	ck_assert_uint_eq(sum.n, all.n);
	for (size_t i = 0; i < sum.n; i++)
		ck_assert(sum.bins[i].idx == all.bins[i].idx && sum.bins[i].count == all.bins[i].count);
	/* 60 s of data in 2 s slots */
	ck_assert_msg(nonempty >= 28 && nonempty <= 32, "%zu slots with reads", nonempty);
	for (uint64_t k = 0; k < n; k += 7) {
		iogp_hist one;
		ck_assert_int_eq(iogp_model_hist_slots(m, "posix.read.latency", &sel, first + k, 1, &one), 0);
		ck_assert_uint_eq(one.total, h[k].total);
		iogp_hist_free(&one);
	}
	for (uint64_t k = 0; k < n; k++)
		iogp_hist_free(&h[k]);
	iogp_hist x;
	ck_assert_int_eq(iogp_model_hist_slots(m, "posix.read.latency", &sel, jhi + 1, 1, &x), IOGP_ENOTFOUND);
	iogp_hist_free(&x);
	ck_assert_int_eq(iogp_model_hist_slots(m, "posix.read.latency", &sel, first - 1, 1, &x), IOGP_ENOTFOUND);
	iogp_hist_free(&x);
	ck_assert_int_eq(iogp_model_hist_slots(m, "no.such", &sel, first, 1, &x), IOGP_ENOTFOUND);
	iogp_hist_free(&x);
	/* the heatmap: p99 of reads and writes together, per node and slot */
	iogp_heat *heat = iogp_heat_new();
	ck_assert_int_eq(iogp_heat_update(heat, m, IOGP_LAYER_POSIX), 0);
	ck_assert_int_eq(iogp_heat_update(heat, m, IOGP_LAYER_POSIX), 0);   /* again: the same */
	uint64_t j0, j1;
	ck_assert_uint_eq(iogp_heat_slots(heat, &j0, &j1), S);
	ck_assert_uint_eq(j0, first);
	ck_assert_uint_eq(j1, jhi);
	ck_assert_uint_eq(iogp_heat_nodes(heat), 5);
	iogp_hist *w = calloc(n, sizeof(*w));
	size_t with = 0;
	for (size_t i = 0; i < 5; i++) {
		const char *node = iogp_heat_node(heat, i);
		iogp_sel s2 = { .kind = IOGP_SEL_NODE, .node = node };
		ck_assert_int_eq(iogp_model_hist_slots(m, "posix.read.latency", &s2, first, (size_t)n, h), 0);
		ck_assert_int_eq(iogp_model_hist_slots(m, "posix.write.latency", &s2, first, (size_t)n, w), 0);
		for (uint64_t k = 0; k < n; k++) {
			uint64_t got = 0, want = 0;
			iogp_hist_merge(&h[k], &w[k]);
			int has = iogp_heat_get(heat, i, first + k, &got);
			ck_assert_int_eq(has, iogp_hist_quantile(&h[k], 0.99, &want) == 0);
			if (has)
				ck_assert_uint_eq(got, want);
			iogp_hist_free(&h[k]);
			iogp_hist_free(&w[k]);
		}
	}
	/* node003 is eight times node002 (skew x2, slow x4): its quietest slot is
	 * slower than node002's, its worst slot the worst of all */
	uint64_t lo[5], hi[5];
	for (size_t i = 0; i < 5; i++) {
		lo[i] = UINT64_MAX;
		hi[i] = 0;
		for (uint64_t j = first; j <= jhi; j++) {
			uint64_t v;
			if (iogp_heat_get(heat, i, j, &v)) {
				lo[i] = v < lo[i] ? v : lo[i];
				hi[i] = v > hi[i] ? v : hi[i];
				with++;
			}
		}
	}
	ck_assert_uint_ge(with, 5 * 28);
	size_t n3 = 5, n2 = 5;
	for (size_t i = 0; i < 5; i++) {
		if (!strcmp(iogp_heat_node(heat, i), "node003"))
			n3 = i;
		if (!strcmp(iogp_heat_node(heat, i), "node002"))
			n2 = i;
	}
	ck_assert(n3 < 5 && n2 < 5);
	ck_assert_msg(lo[n3] > lo[n2], "quietest slots: node003 %" PRIu64 ", node002 %" PRIu64, lo[n3], lo[n2]);
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(i == n3 || hi[n3] > hi[i], "worst slot of node003 %" PRIu64 " <= %s's %" PRIu64,
		              hi[n3], iogp_heat_node(heat, i), hi[i]);
	/* another layer starts over: stdio has no latency in this job */
	ck_assert_int_eq(iogp_heat_update(heat, m, IOGP_LAYER_STDIO), 0);
	uint64_t v;
	ck_assert_int_eq(iogp_heat_get(heat, 0, jhi - 1, &v), 0);
	iogp_heat_free(heat);
	free(w);
	free(h);
	iogp_hist_free(&all);
	iogp_hist_free(&sum);
	iogp_model_free(m);
}
END_TEST

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check-nodes");
	snprintf(rec, sizeof(rec), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	char *argv[] = { (char *)tu_env("IOGRAM_SYNTH"), "-o", rec, "--nodes", "5", "--sources-per-node", "2",
	                 "--seconds", "60", "--skew", "0.5", "--slow-node", "3:4", "--truth", truth, NULL };
	if (tu_run(argv, NULL, 60) != 0) {
		fprintf(stderr, "check_nodes: iogram-synth failed\n");
		exit(1);
	}
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

int main(void)
{
	const tu_case cases[] = {
		{ "order_ties", order_ties },
		{ "lines", lines },
		{ "cells", cells },
		{ "truth_nodes", truth_nodes }, { "rebuild_reuses", rebuild_reuses },
		{ "lines_by_order", lines_by_order }, { "lazy_fill", lazy_fill },
		{ "truth_window", truth_window },
		{ "slots_heat", slots_heat },
	};
	setup();
	int rc = tu_run_suite("nodes", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 120);
	teardown();
	return rc;
}
