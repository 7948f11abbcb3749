/* check_plot_nodes.c - iogram-view's nodes and ranks panel and the node
 * comparisons of its plots, headless: the table read back row by row
 * (tooltips at each line of the drawing) against iogram-synth's exact truth
 * (per-node p99 of every generated latency, I/O time share, straggler
 * order); the worst row tinted; a click on a header sorts, ties by name;
 * thousands of nodes as top and bottom rows and a count; the latency p99
 * heatmap; rate lines in colours of their own; snapshots from the command. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogplot.h"
#include "session.h"
#include "testutil.h"

static const char *view_bin, *synth_bin;
static char dir[256], rec[600], truth[600], big[600];

#define W 800
#define H 500

static void px(cairo_surface_t *s, int x, int y, int rgb[3])
{
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
	ck_assert(x >= 0 && y >= 0 && x < w && y < h);
	const uint32_t *row = (const uint32_t *)(cairo_image_surface_get_data(s) +
	                                         (size_t)y * (size_t)cairo_image_surface_get_stride(s));
	rgb[0] = (int)(row[x] >> 16 & 255);
	rgb[1] = (int)(row[x] >> 8 & 255);
	rgb[2] = (int)(row[x] & 255);
}

static int dist(const int a[3], iogplot_rgba c)
{
	return abs(a[0] - (int)lround(c.r * 255)) + abs(a[1] - (int)lround(c.g * 255)) +
	       abs(a[2] - (int)lround(c.b * 255));
}

static cairo_surface_t *render(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                               int panel)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	cairo_t *cr = cairo_create(s);
	iogplot_panel(cr, st, f, v, panel, W, H);
	cairo_destroy(cr);
	cairo_surface_flush(s);
	return s;
}

static iogv_session *frame_at_end(const char *file, iogplot_frame *f, int rows, int heat)
{
	char err[256] = "";
	iogv_session *s = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(iogv_open_replay(s, file, err, sizeof(err)) == 0, "%s", err);
	iogv_set_table(s, rows, heat);
	double a, b;
	iogv_replay_span(s, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(s, b), 0);
	iogplot_frame_init(f);
	ck_assert_int_eq(iogv_frame(s, NULL, 0, f), 0);
	return s;
}

/* ---- the drawing read back: a line per distinct tooltip, top down ---- */

typedef struct line {
	int y0, y1;          /* pixel rows it spans */
	char tip[1024];
} line;

static int read_lines(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v, double x,
                      line *out, int max)
{
	int n = 0;
	char tip[1024];
	for (int y = 0; y < H && n < max; y++) {
		if (iogplot_panel_tooltip(st, f, v, IOGPLOT_NODES, W, H, x, y, tip, sizeof(tip)) <= 0)
			continue;
		if (n && !strcmp(out[n - 1].tip, tip) && out[n - 1].y1 == y - 1) {
			out[n - 1].y1 = y;
			continue;
		}
		out[n] = (line){ y, y, "" };
		snprintf(out[n].tip, sizeof(out[n].tip), "%s", tip);
		n++;
	}
	return n;
}

/* The number after key in a tooltip, in its unit: "p99 451 µs" -> ns,
 * "I/O time 2.92 s: 2.5%" -> the share */
static double after(const char *tip, const char *key)
{
	const char *p = strstr(tip, key);
	ck_assert_msg(p, "'%s' not in '%s'", key, tip);
	p += strlen(key);
	char *end;
	double v = strtod(p, &end);
	if (!strncmp(end, " ns", 3))
		return v;
	if (!strncmp(end, " µs", 4))
		return v * 1e3;
	if (!strncmp(end, " ms", 3))
		return v * 1e6;
	if (!strncmp(end, " s", 2))
		return v * 1e9;
	if (*end == '%')
		return v / 100;
	return v;
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
	char l[512];
	ck_assert_ptr_nonnull(fgets(l, sizeof(l), f));
	int n = 0;
	while (n < max && fscanf(f, "%31[^,],%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%lf,%lf,%lf\n", t[n].node,
	                         &t[n].requests, &t[n].p50, &t[n].p99, &t[n].io_ns, &t[n].span_ns,
	                         &t[n].share) == 7)
		n++;
	fclose(f);
	return n;
}

/* The rows of the table (not the header, not the stragglers) read at x. */
static int table_rows(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v, line *rows,
                      int max, int *header)
{
	line all[200];
	int n = read_lines(st, f, v, 60, all, 200), k = 0;
	*header = -1;
	for (int i = 0; i < n && k < max; i++) {
		if (!strncmp(all[i].tip, "Sorted by", 9)) {
			*header = (all[i].y0 + all[i].y1) / 2;
			continue;
		}
		rows[k++] = all[i];
	}
	return k;
}

START_TEST(test_table_truth)
{
	node_truth tr[8];
	ck_assert_int_eq(read_nodes(tr, 8), 5);
	iogplot_frame f;
	iogv_session *s = frame_at_end(rec, &f, IOGP_NT_NODES, 0);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	cairo_surface_t *img = render(&st, &f, &v, IOGPLOT_NODES);
	line rows[32];
	int header, n = table_rows(&st, &f, &v, rows, 32, &header);
	/* five table rows, then five stragglers (the same tooltips, by I/O time) */
	ck_assert_int_eq(n, 10);
	ck_assert_int_gt(header, 0);
	int worst = 0;
	for (int i = 0; i < 5; i++) {
		const char *tip = rows[i].tip;
		ck_assert_msg(!strncmp(tip, tr[i].node, strlen(tr[i].node)), "line %d: '%.40s', not %s", i, tip,
		              tr[i].node);
		double p99 = after(tip, "p99 "), share = after(tip, ": ");
		ck_assert_msg(fabs(p99 - (double)tr[i].p99) <= 0.037 * (double)tr[i].p99, "%s p99 %.0f vs %" PRIu64,
		              tr[i].node, p99, tr[i].p99);
		ck_assert_msg(fabs(share - tr[i].share) <= 0.032 * tr[i].share + 0.0005, "%s share %.4f vs %.4f",
		              tr[i].node, share, tr[i].share);
		if (tr[i].share > tr[worst].share)
			worst = i;
	}
	/* stragglers by I/O time, as the truth has them */
	node_truth by[8];
	memcpy(by, tr, sizeof(by));
	for (int i = 1; i < 5; i++)
		for (int k = i; k > 0 && by[k - 1].io_ns < by[k].io_ns; k--) {
			node_truth x = by[k];
			by[k] = by[k - 1];
			by[k - 1] = x;
		}
	for (int i = 0; i < 5; i++)
		ck_assert_msg(!strncmp(rows[5 + i].tip, by[i].node, strlen(by[i].node)), "straggler %d: %.20s, not %s",
		              i, rows[5 + i].tip, by[i].node);
	/* the worst row: its tooltip says so, its line is tinted, no other is */
	for (int i = 0; i < 5; i++) {
		int is = i == worst;
		ck_assert_int_eq(strstr(rows[i].tip, "(the largest I/O share)") != NULL, is);
		int y = (rows[i].y0 + rows[i].y1) / 2, tinted = 0, c[3];
		for (int x = 0; x < 40; x++) {
			px(img, x, y, c);
			tinted |= dist(c, st.warn) < 40;
		}
		ck_assert_msg(tinted == is, "row %d (%s): mark %d", i, tr[i].node, tinted);
	}
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* A click on a header sorts by its column; ties go by name. */
START_TEST(test_sort_click)
{
	node_truth tr[8];
	ck_assert_int_eq(read_nodes(tr, 8), 5);
	iogplot_frame f;
	iogv_session *s = frame_at_end(rec, &f, IOGP_NT_NODES, 0);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	line rows[32];
	int header;
	table_rows(&st, &f, &v, rows, 32, &header);
	ck_assert_int_gt(header, 0);
	/* the header's columns from left to right, each once */
	int seen[IOGP_NT_NCOLS] = { 0 }, order[IOGP_NT_NCOLS], k = 0, last = -2;
	for (int x = 0; x < W; x++) {
		int c = iogplot_nodes_header_at(&st, &f, &v, W, H, x, header);
		if (c >= 0 && c != last) {
			ck_assert_msg(!seen[c], "column %d twice", c);
			seen[c] = 1;
			order[k++] = c;
		}
		last = c;
	}
	ck_assert_int_ge(k, 8);
	for (int i = 1; i < k; i++)
		ck_assert_int_gt(order[i], order[i - 1]);   /* in the table's order */
	ck_assert(seen[IOGP_NT_NAME] && seen[IOGP_NT_P99] && seen[IOGP_NT_SHARE] && seen[IOGP_NT_QD99]);
	ck_assert_int_eq(iogplot_nodes_header_at(&st, &f, &v, W, H, 100, header + 40), -1);
	/* by p99, largest first: the truth's order */
	int x99 = -1;
	for (int x = 0; x < W && x99 < 0; x++)
		if (iogplot_nodes_header_at(&st, &f, &v, W, H, x, header) == IOGP_NT_P99)
			x99 = x;
	v.sort_col = iogplot_nodes_header_at(&st, &f, &v, W, H, x99, header);
	v.sort_desc = iogp_nt_col_desc(v.sort_col);
	int n = table_rows(&st, &f, &v, rows, 32, &header);
	ck_assert_int_ge(n, 5);
	node_truth by[8];
	memcpy(by, tr, sizeof(by));
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && by[j - 1].p99 < by[j].p99; j--) {
			node_truth x = by[j];
			by[j] = by[j - 1];
			by[j - 1] = x;
		}
	for (int i = 0; i < 5; i++)
		ck_assert_msg(!strncmp(rows[i].tip, by[i].node, strlen(by[i].node)), "p99 line %d: %.20s, not %s", i,
		              rows[i].tip, by[i].node);
	/* queue depth p99 is 8 everywhere: by name, either way */
	for (int desc = 0; desc < 2; desc++) {
		v.sort_col = IOGP_NT_QD99;
		v.sort_desc = desc;
		table_rows(&st, &f, &v, rows, 32, &header);
		for (int i = 0; i < 5; i++)
			ck_assert_msg(!strncmp(rows[i].tip, tu_fmt("node%03d", i + 1), 7), "qd tie line %d: %.20s", i,
			              rows[i].tip);
	}
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* 3000 nodes in 500 pixels: rows and a count of the rest, 3000 in all. */
START_TEST(test_thousands)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(big, &f, IOGP_NT_NODES, 0);
	ck_assert_uint_eq(f.nodes.n, 3000);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	line all[200];
	int n = read_lines(&st, &f, &v, 60, all, 200), i = 0;
	long rows = 0, hidden = 0, marked = 0;
	while (i < n && strncmp(all[i].tip, "Sorted by", 9))
		i++;
	ck_assert_int_lt(i, n);
	/* the table: the lines right under its header, up to the first space */
	for (i++; i < n && all[i].y0 <= all[i - 1].y1 + 1; i++) {
		if (strstr(all[i].tip, " more between these rows")) {
			hidden += strtol(all[i].tip, NULL, 10);
			continue;
		}
		ck_assert_msg(!strncmp(all[i].tip, "node", 4), "line %d: '%.30s'", i, all[i].tip);
		rows++;
		marked += strstr(all[i].tip, "(the largest I/O share)") != NULL;
	}
	ck_assert_msg(rows + hidden == 3000, "%ld rows + %ld hidden", rows, hidden);
	ck_assert_int_gt(hidden, 2000);
	ck_assert_msg(rows > 5 && marked == 1, "%ld rows, %ld marked", rows, marked);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* The heatmap's latency p99: each node's slots, the tooltip's number. */
START_TEST(test_heat_p99)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(rec, &f, IOGP_NT_NODES, 1);
	ck_assert_uint_eq(f.lat_heat.nnodes, 5);
	for (size_t k = 0; k < 5; k++)
		ck_assert_str_eq(f.lat_heat.nodes[k], tu_fmt("node%03zu", k + 1));
	ck_assert_double_eq(f.lat_heat.step, 5);   /* the window slots */
	size_t with = 0;
	for (size_t b = 0; b < f.lat_heat.nbins; b++)
		with += !isnan(f.lat_heat.v[0][2 * f.lat_heat.nbins + b]);
	ck_assert_msg(with >= 11, "node003: %zu slots with a p99", with);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	v.heat_p99 = 1;
	cairo_surface_t *img = render(&st, &f, &v, IOGPLOT_HEATMAP);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_HEATMAP, 0, W, H, &g), 0);
	/* node003's row, a bin with data: the tooltip says its p99 */
	size_t b = f.lat_heat.nbins;
	while (b-- > 0 && isnan(f.lat_heat.v[0][2 * f.lat_heat.nbins + b]))
		;
	double t = f.lat_heat.t0 + ((double)b + 0.5) * f.lat_heat.step;
	double x = iogplot_geom_x(&g, t), y = g.plot.y + g.plot.h * 2.5 / 5;
	char tip[512];
	ck_assert_int_gt(iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_HEATMAP, W, H, x, y, tip, sizeof(tip)), 0);
	ck_assert_msg(strstr(tip, "node003: read + write latency p99 "), "'%s'", tip);
	double want = f.lat_heat.v[0][2 * f.lat_heat.nbins + b], got = after(tip, "p99 ");
	ck_assert_msg(fabs(got - want) <= 0.006 * want, "p99 %.0f vs %.0f", got, want);
	/* the bytes/s view of the same panel is another picture */
	v.heat_p99 = 0;
	cairo_surface_t *img2 = render(&st, &f, &v, IOGPLOT_HEATMAP);
	long differ = 0;
	for (int yy = (int)g.plot.y; yy < (int)(g.plot.y + g.plot.h); yy += 3)
		for (int xx = (int)g.plot.x; xx < (int)(g.plot.x + g.plot.w); xx += 3) {
			int a[3], c[3];
			px(img, xx, yy, a);
			px(img2, xx, yy, c);
			differ += abs(a[0] - c[0]) + abs(a[1] - c[1]) + abs(a[2] - c[2]) > 30;
		}
	ck_assert_msg(differ > 100, "p99 and bytes/s heatmaps alike (%ld)", differ);
	cairo_surface_destroy(img);
	cairo_surface_destroy(img2);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* Rates: every node's line in a colour of its own (and its name at its
 * end); the total's axis labelled. */
START_TEST(test_rate_lines)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(rec, &f, IOGP_NT_NODES, 0);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	cairo_surface_t *img = render(&st, &f, &v, IOGPLOT_RATES);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_RATES, 0, W, H, &g), 0);
	static const unsigned rgb[5] = { 0x2ca02c, 0x8c564b, 0xe377c2, 0x006d5b, 0x17becf };
	for (int k = 0; k < 5; k++) {
		iogplot_rgba c = { ((rgb[k] >> 16) & 255) / 255.0, ((rgb[k] >> 8) & 255) / 255.0,
		                   (rgb[k] & 255) / 255.0, 1 };
		long n = 0, right = 0;
		for (int y = (int)g.plot.y; y < (int)(g.plot.y + g.plot.h); y++)
			for (int x = (int)g.plot.x; x < (int)(g.plot.x + g.plot.w); x++) {
				int p[3];
				px(img, x, y, p);
				if (dist(p, c) < 80) {
					n++;
					right += x > g.plot.x + g.plot.w * 0.88;
				}
			}
		/* a line across, and its name in the last part */
		ck_assert_msg(n > 200 && right > 30, "node%03d's colour: %ld pixels, %ld at the end", k + 1, n,
		              right);
	}
	/* right of the plot, above it: "total" in the total's colour */
	long tot = 0;
	for (int y = 0; y < (int)g.plot.y; y++)
		for (int x = (int)(g.plot.x + g.plot.w); x < W; x++) {
			int p[3];
			px(img, x, y, p);
			tot += dist(p, st.total) < 60;
		}
	ck_assert_msg(tot > 10, "no label over the total's axis (%ld)", tot);
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* The command: --panel nodes (and its alias stragglers) as PNG and PDF. */
START_TEST(test_snapshot_cli)
{
	const char *names[] = { "nodes", "stragglers" };
	for (int i = 0; i < 2; i++) {
		char out[700];
		snprintf(out, sizeof(out), "%s/%s.png", dir, names[i]);
		char *argv[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--panel", (char *)names[i],
		                 NULL };
		ck_assert_int_eq(tu_run(argv, NULL, 60), 0);
		cairo_surface_t *s = cairo_image_surface_create_from_png(out);
		ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
		ck_assert_int_eq(cairo_image_surface_get_width(s), 800);
		cairo_surface_destroy(s);
	}
	char pdf[700];
	snprintf(pdf, sizeof(pdf), "%s/nodes.pdf", dir);
	char *argv[] = { (char *)view_bin, "--replay", big, "--snapshot", pdf, "--panel", "nodes", NULL };
	ck_assert_int_eq(tu_run(argv, NULL, 60), 0);
	ck_assert_int_eq(tu_system(tu_fmt("head -c 5 %s | grep -q PDF", pdf)), 0);
}
END_TEST

int main(void)
{
	view_bin = getenv("IOGRAM_VIEW");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!view_bin || !synth_bin) {
		fprintf(stderr, "check_plot_nodes: set IOGRAM_VIEW, IOGRAM_SYNTH\n");
		return 1;
	}
	tu_tmpdir(dir, sizeof(dir), "check-plot-nodes");
	snprintf(rec, sizeof(rec), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	snprintf(big, sizeof(big), "%s/big.iogr", dir);
	if (tu_system(tu_fmt("%s --nodes 5 --sources-per-node 2 --seconds 60 --skew 0.5 --slow-node 3:4 "
	                     "-o %s --truth %s", synth_bin, rec, truth)) != 0 ||
	    tu_system(tu_fmt("%s --nodes 3000 --seconds 5 --skew 0.001 -o %s", synth_bin, big)) != 0) {
		fprintf(stderr, "check_plot_nodes: iogram-synth failed\n");
		return 1;
	}
	const tu_case cases[] = {
		{ "table_truth", test_table_truth },
		{ "sort_click", test_sort_click },
		{ "thousands", test_thousands },
		{ "heat_p99", test_heat_p99 },
		{ "rate_lines", test_rate_lines },
		{ "snapshot_cli", test_snapshot_cli },
	};
	int rc = tu_run_suite("plot_nodes", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 300);
	if (!rc)
		tu_rmdir_all(dir);
	return rc;
}
