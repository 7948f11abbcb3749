/* check_plot.c - iogram-view's cairo plots and headless snapshots against
 * recordings whose contents iogram-synth knows: sizes, panels drawn, bar
 * heights where the counts say (pixel checks with a tolerance), SVG/PDF
 * validity, error handling, and a heatmap of thousands of nodes. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iogp_layers.h"
#include "iogp_size_table.h"
#include "iogplot.h"
#include "session.h"
#include "testutil.h"

static const char *view_bin, *synth_bin, *run_bin, *iogram_bin;
static char dir[256];
static char rec[600], truth[600];

/* ---- helpers ---- */

typedef struct run_result {
	int status;
	char err[8192];
} run_result;

/* Run argv without a display (stdin from /dev/null); stderr captured;
 * bounded to 60 s. */
static run_result run(char *const argv[])
{
	static const char *const no_display[] = { "DISPLAY", "WAYLAND_DISPLAY", NULL };
	tu_result t = tu_capture(argv, &(tu_opts){ .null_in = 1, .env = no_display }, 60);
	run_result r = { .status = t.status };
	snprintf(r.err, sizeof(r.err), "%s", t.err);
	tu_result_free(&t);
	return r;
}

static cairo_surface_t *load_png(const char *path)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	ck_assert_msg(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS, "%s: %s", path,
	              cairo_status_to_string(cairo_surface_status(s)));
	return s;
}

static void px(cairo_surface_t *s, int x, int y, int rgb[3])
{
	cairo_surface_flush(s);
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
	ck_assert(x >= 0 && y >= 0 && x < w && y < h);
	const uint32_t *row = (const uint32_t *)(cairo_image_surface_get_data(s) +
	                                         (size_t)y * (size_t)cairo_image_surface_get_stride(s));
	uint32_t p = row[x];
	rgb[0] = (int)(p >> 16 & 255);
	rgb[1] = (int)(p >> 8 & 255);
	rgb[2] = (int)(p & 255);
}

static int dist(const int a[3], iogplot_rgba c)
{
	int d = 0;
	d += abs(a[0] - (int)lround(c.r * 255));
	d += abs(a[1] - (int)lround(c.g * 255));
	d += abs(a[2] - (int)lround(c.b * 255));
	return d;
}

/* A pixel that is neither the panel's background nor a grid line. */
static int inked(cairo_surface_t *s, const iogplot_style *st, int x, int y)
{
	int c[3];
	px(s, x, y, c);
	return dist(c, st->panel) > 60 && dist(c, st->grid) > 40 && dist(c, st->bg) > 60;
}

static cairo_surface_t *render_panel(const iogplot_style *st, const iogplot_frame *f,
                                     const iogplot_view *v, int panel, int w, int h)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
	cairo_t *cr = cairo_create(s);
	if (panel < 0)
		iogplot_dashboard(cr, st, f, v, w, h);
	else
		iogplot_panel(cr, st, f, v, panel, w, h);
	cairo_destroy(cr);
	cairo_surface_flush(s);
	return s;
}

/* Truth CSV "lower_bound,upper_bound,count" of a histogram into h. */
static void load_truth(const char *name, iogp_hist *h)
{
	char path[800], line[256];
	snprintf(path, sizeof(path), "%s/%s", truth, name);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	iogp_hist_init(h, &nb);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	unsigned long long lo, hi, c;
	for (int i = 0; i < 100000 && fgets(line, sizeof(line), f); i++) {
		ck_assert_int_eq(sscanf(line, "%llu,%llu,%llu", &lo, &hi, &c), 3);
		ck_assert_int_eq(iogp_hist_record(h, lo, c), 0);
	}
	fclose(f);
}

static void frame_at_end(iogv_session **s, iogplot_frame *f)
{
	char err[256] = "";
	*s = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(*s);
	ck_assert_msg(iogv_open_replay(*s, rec, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(*s, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(*s, b), 0);
	iogplot_frame_init(f);
	ck_assert_int_eq(iogv_frame(*s, NULL, 0, f), 0);
}

static void assert_same_hist(const iogp_hist *a, const iogp_hist *b)
{
	ck_assert_uint_eq(a->total, b->total);
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_uint_eq(a->bins[i].idx, b->bins[i].idx);
		ck_assert_uint_eq(a->bins[i].count, b->bins[i].count);
	}
}

/* ---- headless snapshots ---- */

START_TEST(test_snapshot_size)
{
	char out[700];
	snprintf(out, sizeof(out), "%s/size.png", dir);
	char *a1[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--size", "1000x700", NULL };
	run_result r = run(a1);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	cairo_surface_t *s = load_png(out);
	ck_assert_int_eq(cairo_image_surface_get_width(s), 1000);
	ck_assert_int_eq(cairo_image_surface_get_height(s), 700);
	cairo_surface_destroy(s);
	/* one panel at HiDPI scale 2 */
	char *a2[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--panel", "latency",
	               "--size", "500x300", "--scale", "2", "--at", "30", NULL };
	r = run(a2);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	s = load_png(out);
	ck_assert_int_eq(cairo_image_surface_get_width(s), 1000);
	ck_assert_int_eq(cairo_image_surface_get_height(s), 600);
	cairo_surface_destroy(s);
}
END_TEST

/* A snapshot of a damaged recording says so: on stderr, and in the
 * image's header (the header strip differs from the intact file's). */
START_TEST(test_snapshot_damaged)
{
	char bad[700], out[700], good[700];
	snprintf(bad, sizeof(bad), "%s/damaged.iogr", dir);
	snprintf(out, sizeof(out), "%s/damaged.png", dir);
	snprintf(good, sizeof(good), "%s/intact.png", dir);
	size_t len;
	char *bytes = tu_load(rec, &len);
	ck_assert(bytes != NULL && len > 4096);
	for (size_t i = len / 3; i < len / 3 + len / 4; i++)
		bytes[i] = (char)(bytes[i] ^ 0x5a);
	FILE *f = fopen(bad, "wb");
	ck_assert(f && fwrite(bytes, 1, len, f) == len);
	fclose(f);
	free(bytes);
	char *a[] = { (char *)view_bin, "--replay", bad, "--snapshot", out, "--panel", "header", NULL };
	run_result r = run(a);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "skipped as damaged") != NULL, "no warning: %s", r.err);
	char *g[] = { (char *)view_bin, "--replay", rec, "--snapshot", good, "--panel", "header", NULL };
	r = run(g);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.err, "damaged") == NULL);
	ck_assert_msg(!tu_same_file(out, good), "the header does not show the damage");
}
END_TEST

/* Every panel of a headless dashboard has ink in its plot area. */
START_TEST(test_panels_drawn)
{
	char out[700];
	const int W = 1600, H = 1000;
	snprintf(out, sizeof(out), "%s/dash.png", dir);
	char *a[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, NULL };
	run_result r = run(a);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	cairo_surface_t *s = load_png(out);
	ck_assert_int_eq(cairo_image_surface_get_width(s), W);
	ck_assert_int_eq(cairo_image_surface_get_height(s), H);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_rect rr[IOGPLOT_NPANELS];
	iogplot_dashboard_layout(W, H, rr);
	for (int p = 0; p < IOGPLOT_NPANELS; p++) {
		/* synthetic recordings have no per-file records (phases), no
		 * findings and no probes: check_phases_view draws the first two
		 * from real jobs, check_plot_probe the slowdown panel */
		int data = iogp_panel_get(p)->data;
		if (data == IOGP_DATA_PHASES || data == IOGP_DATA_INSIGHTS || data == IOGP_DATA_PROBE)
			continue;
		/* nor MPI traffic: check_plot_matrix draws that panel, in a
		 * dashboard too, from a job with a known matrix; its message
		 * sizes are drawn inside it, not on the dashboard */
		if (data == IOGP_DATA_MATRIX || rr[p].w <= 0)
			continue;
		/* inside the panel, below its title, right of its y labels */
		int x0 = (int)(rr[p].x + (p ? 70 : 4)), x1 = (int)(rr[p].x + rr[p].w - 20);
		int y0 = (int)(rr[p].y + (p ? 30 : 4)), y1 = (int)(rr[p].y + rr[p].h - (p ? 30 : 4));
		long ink = 0, all = 0;
		int colors[64] = { 0 }, ncol = 0;
		for (int y = y0; y < y1; y += 2)
			for (int x = x0; x < x1; x += 2) {
				all++;
				if (!inked(s, &st, x, y))
					continue;
				ink++;
				int c[3];
				px(s, x, y, c);
				int key = (c[0] >> 6) * 16 + (c[1] >> 6) * 4 + (c[2] >> 6);
				if (!colors[key]++)
					ncol++;
			}
		ck_assert_msg(ink * 200 >= all, "panel %s: %ld of %ld pixels drawn",
		              iogplot_panel_name(p), ink, all);
		ck_assert_msg(ncol >= 2, "panel %s: %d colours", iogplot_panel_name(p), ncol);
	}
	cairo_surface_destroy(s);
}
END_TEST

/* The model's queue-depth histogram equals the truth, and its bars end
 * where the counts say. */
START_TEST(test_qd_bars)
{
	iogv_session *ses;
	iogplot_frame f;
	frame_at_end(&ses, &f);
	iogp_hist t;
	load_truth("posix.queue_depth.all.csv", &t);
	assert_same_hist(&f.qd, &t);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	const int W = 800, H = 500;
	cairo_surface_t *s = render_panel(&st, &f, &v, IOGPLOT_QD, W, H);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_QD, 0, W, H, &g), 0);
	ck_assert_int_eq(g.logx, 0);
	int checked = 0;
	for (size_t i = 0; i < t.n; i++) {
		uint64_t lo, hi;
		ck_assert_int_eq(iogp_bins_bounds(&t.scheme, t.bins[i].idx, &lo, &hi), 0);
		int x = (int)lround((iogplot_geom_x(&g, lo - 0.5) + iogplot_geom_x(&g, hi + 0.5)) / 2);
		double want = iogplot_geom_y(&g, (double)t.bins[i].count);
		int bottom = (int)(g.plot.y + g.plot.h) - 2, y = bottom;
		while (y > g.plot.y && inked(s, &st, x, y))
			y--;
		ck_assert_msg(fabs((y + 1) - want) <= 2.0, "depth %llu: bar top at %d, count %llu says %.1f",
		              (unsigned long long)lo, y + 1, (unsigned long long)t.bins[i].count, want);
		/* and the panel background just above it */
		ck_assert(!inked(s, &st, x, (int)want - 4));
		checked++;
	}
	ck_assert_int_ge(checked, 8);
	/* tooltip over depth 3: exact bounds and count */
	double y3 = g.plot.y + g.plot.h - 3;
	char tip[512], want[128];
	ck_assert_int_gt(iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_QD, W, H, iogplot_geom_x(&g, 3),
	                                       y3, tip, sizeof(tip)), 0);
	uint64_t c3 = iogp_hist_count_at(&t, iogp_native_index(3, 4));
	ck_assert_uint_gt(c3, 1000);
	snprintf(want, sizeof(want), "depth 3: ");
	ck_assert_msg(strstr(tip, want) != NULL, "tooltip '%s'", tip);
	char digits[32], *d = digits;
	for (const char *p = strstr(tip, want) + strlen(want); *p && *p != ' '; p++)
		if (*p != ',')
			*d++ = *p;
	*d = 0;
	ck_assert_str_eq(digits, (snprintf(want, sizeof(want), "%llu", (unsigned long long)c3), want));
	iogp_hist_free(&t);
	cairo_surface_destroy(s);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

/* Request sizes on a log axis: the 4 KiB and 1 MiB read spikes. */
START_TEST(test_size_bars_log)
{
	iogv_session *ses;
	iogplot_frame f;
	frame_at_end(&ses, &f);
	iogp_hist t;
	load_truth("posix.read.size.all.csv", &t);
	assert_same_hist(&f.size[0], &t);
	iogplot_style st;
	iogplot_style_init(&st, 1);   /* dark this time */
	iogplot_view v;
	iogplot_view_init(&v);
	const int W = 900, H = 520;
	cairo_surface_t *s = render_panel(&st, &f, &v, IOGPLOT_SIZE, W, H);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, W, H, &g), 0);
	ck_assert_int_eq(g.logx, 1);
	const uint64_t vals[2] = { 4096, 1 << 20 };
	for (int k = 0; k < 2; k++) {
		uint32_t idx = iogp_native_index(vals[k], 4);
		uint64_t lo, hi, c = iogp_hist_count_at(&t, idx);
		ck_assert_uint_gt(c, 100);
		iogp_native_bounds(idx, 4, &lo, &hi);
		int x = (int)floor((iogplot_geom_x(&g, (double)lo) + iogplot_geom_x(&g, (double)hi + 1)) / 2);
		double want = iogplot_geom_y(&g, (double)c);
		int y = (int)(g.plot.y + g.plot.h) - 2;
		while (y > g.plot.y && inked(s, &st, x, y))
			y--;
		ck_assert_msg(fabs((y + 1) - want) <= 2.0, "%llu: bar top %d, want %.1f",
		              (unsigned long long)vals[k], y + 1, want);
	}
	/* log y moves the same bar's top where log10(count) says */
	v.logy |= 1u << IOGPLOT_SIZE;
	cairo_surface_destroy(s);
	s = render_panel(&st, &f, &v, IOGPLOT_SIZE, W, H);
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, W, H, &g), 0);
	ck_assert_int_eq(g.logy, 1);
	uint32_t idx = iogp_native_index(4096, 4);
	uint64_t lo, hi, c = iogp_hist_count_at(&t, idx);
	iogp_native_bounds(idx, 4, &lo, &hi);
	int x = (int)floor((iogplot_geom_x(&g, (double)lo) + iogplot_geom_x(&g, (double)hi + 1)) / 2);
	double want = g.plot.y + g.plot.h - g.plot.h * (log(c) - log(g.y0)) / (log(g.y1) - log(g.y0));
	int y = (int)(g.plot.y + g.plot.h) - 2;
	while (y > g.plot.y && inked(s, &st, x, y))
		y--;
	ck_assert_msg(fabs((y + 1) - want) <= 2.0, "log y: bar top %d, want %.1f", y + 1, want);
	iogp_hist_free(&t);
	cairo_surface_destroy(s);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

START_TEST(test_svg_pdf)
{
	char out[700];
	size_t n;
	snprintf(out, sizeof(out), "%s/dash.svg", dir);
	char *a[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, NULL };
	run_result r = run(a);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	char *b = tu_load(out, &n);
	ck_assert_msg(!strncmp(b, "<?xml", 5), "SVG starts '%.20s'", b);
	ck_assert_ptr_nonnull(strstr(b, "<svg"));
	ck_assert_ptr_nonnull(strstr(b, "</svg>"));
	ck_assert_uint_gt(n, 10000);
	free(b);
	if (access("/usr/bin/xmllint", X_OK) == 0) {
		char *x[] = { "/usr/bin/xmllint", "--noout", out, NULL };
		r = run(x);
		ck_assert_msg(r.status == 0, "xmllint: %s", r.err);
	}
	snprintf(out, sizeof(out), "%s/rates.pdf", dir);
	char *p[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--panel", "rates", NULL };
	r = run(p);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	b = tu_load(out, &n);
	ck_assert_msg(!strncmp(b, "%PDF-", 5), "PDF starts '%.8s'", b);
	ck_assert_uint_gt(n, 2000);
	int eof = 0;
	for (size_t i = n > 64 ? n - 64 : 0; i + 5 <= n; i++)
		eof |= !memcmp(b + i, "%%EOF", 5);
	ck_assert(eof);
	free(b);
}
END_TEST

START_TEST(test_errors)
{
	char out[700], bad[700];
	snprintf(out, sizeof(out), "%s/e.png", dir);
	snprintf(bad, sizeof(bad), "%s/garbage.iogr", dir);
	FILE *f = fopen(bad, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 500; i++)
		fputs("not a recording ", f);
	fclose(f);
	char *a1[] = { (char *)view_bin, "--replay", bad, "--snapshot", out, NULL };
	run_result r = run(a1);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "garbage.iogr") != NULL, "%s", r.err);
	char *a2[] = { (char *)view_bin, "--replay", "/nonexistent/x.iogr", "--snapshot", out, NULL };
	r = run(a2);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "x.iogr"));
	char *a3[] = { (char *)view_bin, "--replay", rec, "--snapshot", "/tmp/x.bmp", NULL };
	r = run(a3);
	ck_assert_int_eq(r.status, 2);
	char *a4[] = { (char *)view_bin, "--replay", rec, "--snapshot", "/nonexistent/dir/x.png", NULL };
	r = run(a4);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "/nonexistent/dir/x.png") != NULL, "%s", r.err);
	char *a5[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--size", "12x5", NULL };
	ck_assert_int_eq(run(a5).status, 2);
	char *a6[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--panel", "pie", NULL };
	ck_assert_int_eq(run(a6).status, 2);
	char *a7[] = { (char *)view_bin, "--snapshot", out, NULL };
	ck_assert_int_eq(run(a7).status, 2);
	char *a8[] = { (char *)view_bin, "--replay", rec, "--snapshot", out, "--node", "nosuch", NULL };
	r = run(a8);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "nosuch"));
	char *a9[] = { (char *)view_bin, "--help", NULL };
	r = run(a9);
	ck_assert_int_eq(r.status, 0);
	/* a build without GTK says so for the window modes */
	const char *gtk = getenv("IOGRAM_VIEW_GTK");
	if (gtk && !strcmp(gtk, "0")) {
		char *a10[] = { (char *)view_bin, "--replay", rec, NULL };
		r = run(a10);
		ck_assert_int_eq(r.status, 1);
		ck_assert_msg(strstr(r.err, "no GTK") != NULL, "%s", r.err);
	} else {
		/* with GTK but no display: a clear message, not a crash */
		char *a10[] = { (char *)view_bin, "--replay", rec, NULL };
		r = run(a10);
		ck_assert_int_eq(r.status, 1);
		ck_assert_msg(strstr(r.err, "display") != NULL, "%s", r.err);
	}
}
END_TEST

/* 3000 nodes in ~400 pixel rows: one hot node stays visible. */
START_TEST(test_heatmap_thousands)
{
	const size_t NN = 3000, NB = 120;
	const double t0 = 1795000000.0;
	iogplot_frame f;
	iogplot_frame_init(&f);
	ck_assert_int_eq(iogplot_series_alloc(&f.rates, NN, NB, t0, 1.0), 0);
	uint64_t seed = 12345;
	for (size_t k = 0; k < NN; k++) {
		char name[32];
		snprintf(name, sizeof(name), "node%04zu", k + 1);
		ck_assert_int_eq(iogplot_series_set_node(&f.rates, k, name), 0);
		for (size_t b = 0; b < NB; b++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			f.rates.v[0][k * NB + b] = 1000 + (float)(seed >> 54);
			f.rates.v[1][k * NB + b] = 0;
		}
	}
	const size_t hot = 1777;
	for (size_t b = NB / 2; b < NB; b++)
		f.rates.v[0][hot * NB + b] = 1e9f;
	iogplot_series_stats(&f.rates);
	f.t_now = t0 + NB;
	f.t_first = t0;
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	v.t_lo = t0;
	v.t_hi = t0 + NB;
	const int W = 800, H = 500;
	cairo_surface_t *s = render_panel(&st, &f, &v, IOGPLOT_HEATMAP, W, H);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_HEATMAP, 0, W, H, &g), 0);
	ck_assert(g.plot.h < NN);
	int y = (int)(g.plot.y + g.plot.h * (hot + 0.5) / NN);
	int c[3];
	px(s, (int)(g.plot.x + g.plot.w * 0.8), y, c);
	ck_assert_msg(c[0] > 180 && c[1] > 180 && c[2] < 120, "hot cell %d,%d,%d", c[0], c[1], c[2]);
	px(s, (int)(g.plot.x + g.plot.w * 0.2), y, c);
	ck_assert_msg(c[1] < 140, "cold cell %d,%d,%d", c[0], c[1], c[2]);
	/* a row of ordinary nodes is dark */
	px(s, (int)(g.plot.x + g.plot.w * 0.8), (int)(g.plot.y + g.plot.h * 0.1), c);
	ck_assert_msg(c[1] < 140, "ordinary cell %d,%d,%d", c[0], c[1], c[2]);
	/* node labels do not overprint: their column is mostly background */
	long ink = 0, all = 0;
	for (int yy = (int)g.plot.y; yy < (int)(g.plot.y + g.plot.h); yy++)
		for (int xx = 4; xx < (int)g.plot.x - 6; xx++, all++)
			ink += inked(s, &st, xx, yy);
	ck_assert_msg(ink * 4 < all, "labels cover %ld of %ld pixels", ink, all);
	/* the tooltip names the group and its busiest node */
	char tip[512];
	ck_assert_int_gt(iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_HEATMAP, W, H,
	                                       g.plot.x + g.plot.w * 0.8, y, tip, sizeof(tip)), 0);
	ck_assert_msg(strstr(tip, "node1778") != NULL, "tooltip '%s'", tip);
	cairo_surface_destroy(s);
	iogplot_frame_free(&f);
}
END_TEST

START_TEST(test_units)
{
	char b[64];
	iogp_fmt_bytes(b, sizeof(b), 4096, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "4 KiB");
	iogp_fmt_bytes(b, sizeof(b), 1536, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "1.5 KiB");
	iogp_fmt_bytes(b, sizeof(b), 1 << 20, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "1 MiB");
	iogp_fmt_bytes(b, sizeof(b), 512, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "512 B");
	iogp_fmt_rate(b, sizeof(b), "bytes", 3.0 * (1 << 30), IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "3 GiB/s");
	iogp_fmt_ns(b, sizeof(b), 250000, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "250 µs");
	iogp_fmt_ns(b, sizeof(b), 1500000, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "1.5 ms");
	iogp_fmt_ns(b, sizeof(b), 42, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "42 ns");
	iogp_fmt_ns(b, sizeof(b), 2e9, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "2 s");
	iogp_fmt_count(b, sizeof(b), 950, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "950");
	iogp_fmt_count(b, sizeof(b), 1200, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "1.2k");
	iogp_fmt_count(b, sizeof(b), 3.4e6, IOGP_UNITS_WIDE);
	ck_assert_str_eq(b, "3.4M");
	ck_assert_str_eq(iogplot_export_format("a/b.PNG"), "png");
	ck_assert_ptr_null(iogplot_export_format("a.png/b"));
	ck_assert_int_eq(iogplot_panel_find("latency"), IOGPLOT_LATENCY);
	ck_assert_int_eq(iogplot_panel_find("dashboard"), -2);
	ck_assert_int_eq(iogplot_panel_find("nope"), -1);
}
END_TEST

/* The grid cache draws the same pixels as drawing everything. */
START_TEST(test_cache)
{
	iogv_session *ses;
	iogplot_frame f;
	frame_at_end(&ses, &f);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	const int W = 1300, H = 900;
	cairo_surface_t *a = render_panel(&st, &f, &v, -1, W, H);
	v.cache = iogplot_cache_new();
	cairo_surface_t *b = render_panel(&st, &f, &v, -1, W, H);
	cairo_surface_t *c = render_panel(&st, &f, &v, -1, W, H);
	uint64_t hits, misses, panels = 0;
	iogplot_cache_stats(v.cache, &hits, &misses);
	for (int p = 0; p < IOGPLOT_NPANELS; p++)   /* the dashboard's: one static layer each */
		panels += iogp_panel_in_grid(p, IOGP_VIEWER_GTK);
	ck_assert_uint_eq(misses, panels);
	ck_assert_uint_eq(hits, panels);
	long differ = 0;
	for (int y = 0; y < H; y += 3)
		for (int x = 0; x < W; x += 3) {
			int p[3], q[3], r[3];
			px(a, x, y, p);
			px(b, x, y, q);
			px(c, x, y, r);
			differ += abs(p[0] - q[0]) + abs(p[1] - q[1]) + abs(p[2] - q[2]) > 30;
			differ += abs(q[0] - r[0]) + abs(q[1] - r[1]) + abs(q[2] - r[2]) > 0;
		}
	ck_assert_msg(differ < 50, "%ld pixels differ", differ);
	iogplot_cache_free(v.cache);
	cairo_surface_destroy(a);
	cairo_surface_destroy(b);
	cairo_surface_destroy(c);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

START_TEST(test_csv)
{
	iogv_session *ses;
	iogplot_frame f;
	frame_at_end(&ses, &f);
	char out[700], err[512] = "", names[1024], a[800], b[800];
	snprintf(out, sizeof(out), "%s/csv", dir);
	int n = iogplot_export_csv(out, &f, -1, names, sizeof(names), err, sizeof(err));
	ck_assert_msg(n >= 9, "%d: %s", n, err);
	ck_assert_ptr_nonnull(strstr(names, "queue_depth.requests.csv"));
	static const char *const pairs[][2] = {
		{ "queue_depth.requests.csv", "posix.queue_depth.all.csv" },
		{ "size-read.bytes.csv", "posix.read.size.all.csv" },
		{ "latency-write.ns.csv", "posix.write.latency.all.csv" },
	};
	for (int i = 0; i < 3; i++) {
		size_t la, lb;
		snprintf(a, sizeof(a), "%s/%s", out, pairs[i][0]);
		snprintf(b, sizeof(b), "%s/%s", truth, pairs[i][1]);
		char *x = tu_load(a, &la), *y = tu_load(b, &lb);
		ck_assert_msg(la == lb && !memcmp(x, y, la), "%s differs from the truth", pairs[i][0]);
		free(x);
		free(y);
	}
	size_t lr;
	snprintf(a, sizeof(a), "%s/rates-read.csv", out);
	char *x = tu_load(a, &lr);
	/* iogram export's series header (its writer's: time, the across-node
	 * columns, then one per node) */
	const char *eol = strchr(x, '\n'), *n1 = strstr(x, ",node001");
	ck_assert_msg(!strncmp(x, "time,", 5) && strstr(x, ",min_node,") && n1 && eol && n1 < eol, "%.200s", x);
	free(x);
	/* an unwritable place is an error with a message */
	ck_assert_int_lt(iogplot_export_csv("/proc/iogram-no/csv", &f, -1, names, sizeof(names), err,
	                                    sizeof(err)), 0);
	ck_assert(err[0]);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

/* Seeking back and forth ends in the same state as reading straight on. */
START_TEST(test_seek)
{
	char err[256];
	iogp_hist t;
	load_truth("posix.queue_depth.all.csv", &t);
	iogv_session *s = iogv_session_new(NULL);
	ck_assert_int_eq(iogv_open_replay(s, rec, err, sizeof(err)), 0);
	double a, b;
	iogv_replay_span(s, &a, &b);
	ck_assert(b - a > 100);
	const double path[] = { a + 60, a + 20, b, a + 5, a + 110, b };
	iogplot_frame f;
	iogplot_frame_init(&f);
	uint64_t prev = 0, at[6];
	for (int i = 0; i < 6; i++) {
		ck_assert_int_ge(iogv_replay_seek(s, path[i]), 0);
		ck_assert(fabs(iogv_replay_pos(s) - path[i]) < 1e-3);
		ck_assert_int_eq(iogv_frame(s, NULL, 0, &f), 0);
		if (i == 1)
			ck_assert_uint_lt(f.qd.total, prev);   /* went back */
		prev = at[i] = f.qd.total;
		if (path[i] == b)
			assert_same_hist(&f.qd, &t);
	}
	/* the window's way (keys, timeline): a step at a time, the same states */
	iogv_session *w = iogv_session_new(NULL);
	ck_assert_int_eq(iogv_open_replay(w, rec, err, sizeof(err)), 0);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_ge(iogv_replay_seek_start(w, path[i]), 0);
		double to = 0, done = -1;
		int steps = 0;
		while (iogv_replay_seeking(w, &to, &done) && steps < 100000) {
			ck_assert(fabs(to - path[i]) < 1e-3 && done >= 0 && done <= 1);
			iogv_replay_seek_step(w);
			steps++;
		}
		ck_assert_int_eq(iogv_replay_seeking(w, NULL, NULL), 0);
		ck_assert_int_eq(iogv_replay_seek_step(w), 0);
		ck_assert(fabs(iogv_replay_pos(w) - path[i]) < 1e-3);
		ck_assert_int_eq(iogv_frame(w, NULL, 0, &f), 0);
		ck_assert_uint_eq(f.qd.total, at[i]);
	}
	iogv_session_free(w);
	/* "last 10 s" is a part of the whole */
	ck_assert_int_eq(iogv_frame(s, NULL, 10, &f), 0);
	ck_assert_uint_gt(f.qd.total, 0);
	ck_assert_uint_lt(f.qd.total, t.total / 4);
	ck_assert_str_eq(f.window, "last 10 s");
	iogp_hist_free(&t);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

START_TEST(test_empty)
{
	iogplot_frame f;
	iogplot_frame_init(&f);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	cairo_surface_t *s = render_panel(&st, &f, &v, -1, 900, 700);
	ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	iogplot_geom g;
	char tip[64];
	for (int p = 1; p < IOGPLOT_NPANELS; p++) {
		ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, p, 0, 400, 300, &g), IOGP_ENOTFOUND);
		ck_assert_int_eq(iogplot_panel_tooltip(&st, &f, &v, p, 400, 300, 200, 150, tip,
		                                       sizeof(tip)), 0);
	}
	/* tiny sizes do not crash either */
	cairo_surface_destroy(s);
	s = render_panel(&st, &f, &v, -1, 20, 20);
	cairo_surface_destroy(s);
	iogplot_frame_free(&f);
}
END_TEST

/* Writes of 4 KiB, tar's 10,240 B and 1 MiB: on the size panel's default
 * log2 axis each has its bar, and the tooltip says the bin in exact sizes
 * ("1 MiB", "10,240 B"), never a rounded "1.06 MiB". */
START_TEST(test_size_writes_exact)
{
	char wrec[600], wtruth[600], err[256] = "";
	snprintf(wrec, sizeof(wrec), "%s/ws.iogr", dir);
	snprintf(wtruth, sizeof(wtruth), "%s/ws-truth", dir);
	pid_t pid = tu_spawn_opt((char *[]){ (char *)synth_bin, "--nodes", "2", "--seconds", "30", "--seed", "7",
	                                     "--write-sizes", "4096,10240,1048576", "-o", wrec, "--truth",
	                                     wtruth, NULL },
	                         &(tu_opts){ .keep_err = 1 });
	ck_assert_int_eq(tu_wait(pid, 0), 0);
	iogv_session *ses = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(ses);
	ck_assert_msg(iogv_open_replay(ses, wrec, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(ses, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(ses, b), 0);
	iogplot_frame f;
	iogplot_frame_init(&f);
	ck_assert_int_eq(iogv_frame(ses, NULL, 0, &f), 0);
	char keep[sizeof(truth)];
	snprintf(keep, sizeof(keep), "%s", truth);
	snprintf(truth, sizeof(truth), "%s", wtruth);
	iogp_hist t;
	load_truth("posix.write.size.all.csv", &t);
	snprintf(truth, sizeof(truth), "%s", keep);
	assert_same_hist(&f.size[1], &t);
	ck_assert_uint_eq(t.n, 3);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	const int W = 900, H = 520;
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, W, H, &g), 0);
	ck_assert_int_eq(g.logx, 1);   /* sizes on log2 by default */
	static const char *const want[3] = { "write [4,096, 4,351] B (4 KiB – 4,351 B): ",
	                                     "write [10,240, 10,751] B (10,240 B – 10,751 B): ",
	                                     "write [1,048,576, 1,114,111] B (1 MiB – 1,114,111 B): " };
	for (size_t i = 0; i < t.n; i++) {
		uint64_t lo, hi;
		ck_assert_int_eq(iogp_bins_bounds(&t.scheme, t.bins[i].idx, &lo, &hi), 0);
		double x = (iogplot_geom_x(&g, (double)lo) + iogplot_geom_x(&g, (double)hi + 1)) / 2;
		ck_assert(x > g.plot.x && x < g.plot.x + g.plot.w);
		char tip[512];
		ck_assert_int_gt(iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_SIZE, W, H, x,
		                                       g.plot.y + g.plot.h - 3, tip, sizeof(tip)), 0);
		ck_assert_msg(strstr(tip, want[i]) != NULL, "tooltip '%s', want '%s'", tip, want[i]);
	}
	/* the user's toggle still gives a linear axis */
	v.logx &= ~(1u << IOGPLOT_SIZE);
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, W, H, &g), 0);
	ck_assert_int_eq(g.logx, 0);
	iogp_hist_free(&t);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

/* ---- layers ---- */

/* sort under the interposer reads and writes through stdio: the frame of
 * the stdio layer holds stdio.* (as iogram info counts them), none for
 * meta latency and queue depth, and its rates; the POSIX layer is back on
 * switching; the headless snapshot takes --layer. */
START_TEST(test_layer)
{
	run_bin = tu_env("IOGRAM_RUN");
	iogram_bin = tu_env("IOGRAM_BIN");
	/* the sanitized agent is preloaded into a plain sort */
	tu_asan_option("verify_asan_link_order=0");
	char srec[600], in[600], out[700], err[256] = "";
	snprintf(srec, sizeof(srec), "%s/sort.iogr", dir);
	snprintf(in, sizeof(in), "%s/sort-in.txt", dir);
	ck_assert_int_eq(tu_system(tu_fmt("seq 1 5000 | sort -R > %s", in)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("%s -e none -o %s -i 100 -n sortnode -- sort -o %s/sort-out.txt %s",
	                                  run_bin, srec, dir, in)), 0);
	uint64_t rd = tu_info_counter(iogram_bin, srec, "stdio.read.ops");
	uint64_t wr = tu_info_counter(iogram_bin, srec, "stdio.write.ops");
	uint64_t prd = tu_info_counter(iogram_bin, srec, "posix.read.ops");
	uint64_t pwr = tu_info_counter(iogram_bin, srec, "posix.write.ops");
	ck_assert_msg(rd != UINT64_MAX && rd > 0, "no stdio.read.ops");
	ck_assert_msg(wr != UINT64_MAX && wr >= 5000, "stdio.write.ops %llu", (unsigned long long)wr);
	ck_assert(prd != UINT64_MAX && pwr != UINT64_MAX);
	iogv_opts o = { .layer = IOGP_LAYER_STDIO };
	iogv_session *ses = iogv_session_new(&o);
	ck_assert_ptr_nonnull(ses);
	ck_assert_int_eq(iogv_layer(ses), IOGP_LAYER_STDIO);
	ck_assert_msg(iogv_open_replay(ses, srec, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(ses, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(ses, b), 0);
	iogplot_frame f;
	iogplot_frame_init(&f);
	ck_assert_int_eq(iogv_frame(ses, NULL, 0, &f), 0);
	ck_assert_int_eq(f.layer, IOGP_LAYER_STDIO);
	ck_assert_uint_eq(f.size[0].total, rd);
	ck_assert_uint_eq(f.size[1].total, wr);
	ck_assert_uint_eq(f.lat[0].total, rd);
	ck_assert_uint_eq(f.lat[2].total, 0);   /* no meta latency in stdio */
	ck_assert_uint_eq(f.qd.total, 0);       /* nor queue depth */
	ck_assert_uint_eq(f.rates.nnodes, 1);   /* stdio.{read,write}.bytes per node */
	/* the last N seconds too */
	ck_assert_int_eq(iogv_frame(ses, NULL, 300, &f), 0);
	ck_assert_uint_eq(f.size[1].total, wr);
	ck_assert_uint_eq(f.qd.total, 0);
	/* the POSIX layer */
	iogv_set_layer(ses, IOGP_LAYER_POSIX);
	ck_assert_int_eq(iogv_frame(ses, NULL, 0, &f), 0);
	ck_assert_int_eq(f.layer, IOGP_LAYER_POSIX);
	ck_assert_uint_eq(f.size[0].total, prd);
	ck_assert_uint_eq(f.size[1].total, pwr);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
	/* headless: --layer stdio draws; an unknown layer is a usage error */
	snprintf(out, sizeof(out), "%s/stdio.png", dir);
	char *a1[] = { (char *)view_bin, "--replay", srec, "--snapshot", out, "--layer", "stdio", NULL };
	run_result r = run(a1);
	ck_assert_msg(r.status == 0, "snapshot --layer stdio: %d %s", r.status, r.err);
	struct stat sb;
	ck_assert(stat(out, &sb) == 0 && sb.st_size > 0);
	char *a2[] = { (char *)view_bin, "--replay", srec, "--snapshot", out, "--layer", "hdf5", NULL };
	r = run(a2);
	ck_assert_int_eq(r.status, IOGP_EXIT_USAGE);
	ck_assert_msg(strstr(r.err, "--layer") != NULL, "%s", r.err);
}
END_TEST

/* ---- common sizes ---- */

/* dd's writes (3000 x 4 KiB, 700 x 10,240 B, 5 x 1 MiB) and reads (5 x 1 MiB)
 * as a frame's size histograms, with their exact values or (exact = 0, an
 * older recording) without. */
static void dd_frame(iogplot_frame *f, int exact)
{
	static const uint64_t size[3] = { 4096, 10240, 1048576 }, n[3] = { 3000, 700, 5 };
	iogplot_frame_init(f);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(iogp_hist_record(&f->size[1], size[i], n[i]), 0);
	ck_assert_int_eq(iogp_hist_record(&f->size[0], 1048576, 5), 0);
	if (exact) {
		const iogp_exact w[3] = { { 4096, 3000 }, { 10240, 700 }, { 1048576, 5 } }, r = { 1048576, 5 };
		ck_assert_int_eq(iogp_hist_add_exact(&f->size[1], w, 3), 0);
		ck_assert_int_eq(iogp_hist_add_exact(&f->size[0], &r, 1), 0);
	}
}

/* Lines of text (bands of rows with ink) in [x0,x1) x [y0,y1); keep off
 * the panel's rounded corners. */
static int text_lines(cairo_surface_t *s, const iogplot_style *st, int x0, int x1, int y0, int y1)
{
	int n = 0, was = 0;
	for (int y = y0; y < y1; y++) {
		int any = 0;
		for (int x = x0; x < x1 && !any; x++)
			any = inked(s, st, x, y);
		n += any && !was;
		was = any;
	}
	return n;
}

/* The size panel's common sizes: the shared builder's rows, drawn below
 * the plot (a header and a line per size; an older recording's one line
 * that none were kept) or beside it in a wide panel. */
START_TEST(test_common_sizes_drawn)
{
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_frame f, old;
	dd_frame(&f, 1);
	dd_frame(&old, 0);
	iogp_size_table t;
	iogp_size_table_build(&t, &f.size[1], IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 3);
	ck_assert_str_eq(t.rows[1].size_text, "10,240 B");
	ck_assert_str_eq(t.rows[1].count_text, "700");
	ck_assert_str_eq(t.rows[1].req_text, "18.9%");
	ck_assert_str_eq(t.rows[1].byte_text, "29.0%");
	const int W = 800, H = 500;
	const double fs = st.font_size;
	iogplot_geom g, go;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, W, H, &g), 0);
	ck_assert_int_eq(iogplot_panel_geom(&st, &old, &v, IOGPLOT_SIZE, 0, W, H, &go), 0);
	ck_assert_msg(g.plot.h < go.plot.h - 3 * fs, "plot %.0f high with the table, %.0f with a note",
	              g.plot.h, go.plot.h);
	ck_assert_double_eq(g.plot.w, go.plot.w);
	cairo_surface_t *s = render_panel(&st, &f, &v, IOGPLOT_SIZE, W, H);
	int below = text_lines(s, &st, 8, W - 8, (int)(g.plot.y + g.plot.h + fs * 2.2), H);
	ck_assert_int_eq(below, 1 + (int)t.nrows);
	cairo_surface_destroy(s);
	s = render_panel(&st, &old, &v, IOGPLOT_SIZE, W, H);
	ck_assert_int_eq(text_lines(s, &st, 8, W - 8, (int)(go.plot.y + go.plot.h + fs * 2.2), H), 1);
	cairo_surface_destroy(s);
	/* wide: beside the plot, which keeps its height */
	const int WW = 1300;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, WW, H, &g), 0);
	ck_assert_msg(g.plot.x + g.plot.w < WW - 300, "plot to %.0f", g.plot.x + g.plot.w);
	ck_assert(g.plot.h > go.plot.h);
	s = render_panel(&st, &f, &v, IOGPLOT_SIZE, WW, H);
	int beside = text_lines(s, &st, (int)(g.plot.x + g.plot.w + fs * 3), WW - 8, (int)g.plot.y, H);
	ck_assert_int_eq(beside, 1 + (int)t.nrows);
	cairo_surface_destroy(s);
	iogplot_frame_free(&f);
	iogplot_frame_free(&old);
}
END_TEST

/* Top of the bar at value x (a bin's middle) scanned up from the axis. */
static int bar_top(cairo_surface_t *s, const iogplot_style *st, const iogplot_geom *g, uint64_t lo,
                   uint64_t hi)
{
	int x = (int)floor((iogplot_geom_x(g, (double)lo) + iogplot_geom_x(g, (double)hi + 1)) / 2);
	int y = (int)(g->plot.y + g->plot.h) - 2;
	while (y > g->plot.y && inked(s, st, x, y))
		y--;
	return y + 1;
}

/* By bytes: each bar as high as the bytes moved at its size (the bins'
 * sums: exact where the sizes are known), the axis in bytes; by count as
 * before. */
START_TEST(test_size_by_bytes)
{
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_frame f;
	dd_frame(&f, 1);
	const iogp_hist *h = &f.size[1];
	ck_assert_uint_eq(h->n, 3);
	const int W = 800, H = 500;
	for (int wt = IOGP_WEIGHT_COUNT; wt <= IOGP_WEIGHT_BYTES; wt++) {
		v.size_weight = wt;
		iogplot_geom g;
		ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, W, H, &g), 0);
		ck_assert(g.y1 >= (wt ? 12288000.0 : 3000.0) && g.y1 < (wt ? 2.5e7 : 6000.0));
		cairo_surface_t *s = render_panel(&st, &f, &v, IOGPLOT_SIZE, W, H);
		for (size_t i = 0; i < h->n; i++) {
			uint64_t lo, hi;
			ck_assert_int_eq(iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi), 0);
			double w = iogp_size_bin_weight(h, i, wt);
			ck_assert_double_eq(w, wt ? (double)lo * (double)h->bins[i].count : (double)h->bins[i].count);
			double want = iogplot_geom_y(&g, w);
			int top = bar_top(s, &st, &g, lo, hi);
			ck_assert_msg(fabs(top - want) <= 2.0, "%s, %llu B: bar top %d, want %.1f",
			              iogp_size_weight_title(wt), (unsigned long long)lo, top, want);
		}
		cairo_surface_destroy(s);
	}
	iogplot_frame_free(&f);
}
END_TEST

/* Real programs: dd under the interposer, recorded. The frame's common
 * write sizes are exactly dd's; the headless snapshot takes --weight and
 * draws the panel differently by bytes. */
START_TEST(test_common_sizes_recorded)
{
	run_bin = tu_env("IOGRAM_RUN");
	iogram_bin = tu_env("IOGRAM_BIN");
	tu_asan_option("verify_asan_link_order=0");
	char drec[600], out[2][700], err[256] = "";
	snprintf(drec, sizeof(drec), "%s/dd.iogr", dir);
	ck_assert_int_eq(tu_system(tu_fmt("cd %s && env LC_ALL=C %s -e none -o dd-%%p.iogr -i 100 -n ddnode -- "
	                                  "sh -c 'dd if=/dev/zero of=d4k bs=4k count=3000 status=none && "
	                                  "dd if=d4k of=d1m bs=1M count=5 status=none && dd if=/dev/zero "
	                                  "of=d10k bs=10240 count=700 status=none' && %s merge -o dd.iogr "
	                                  "dd-*.iogr >/dev/null 2>&1", dir, run_bin, iogram_bin)), 0);
	iogv_session *ses = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(ses);
	ck_assert_msg(iogv_open_replay(ses, drec, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(ses, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(ses, b), 0);
	iogplot_frame f;
	iogplot_frame_init(&f);
	ck_assert_int_eq(iogv_frame(ses, NULL, 0, &f), 0);
	ck_assert_uint_eq(f.size[1].total, 3705);
	iogp_size_table t;
	iogp_size_table_build(&t, &f.size[1], IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 3);
	ck_assert_int_eq(t.has_other, 0);
	static const char *const rows[3][4] = { { "4 KiB", "3,000", "81.0%", "49.8%" },
	                                        { "10,240 B", "700", "18.9%", "29.0%" },
	                                        { "1 MiB", "5", "0.1%", "21.2%" } };
	for (int i = 0; i < 3; i++) {
		const iogp_size_row *r = &t.rows[i];
		const char *got[4] = { r->size_text, r->count_text, r->req_text, r->byte_text };
		for (int k = 0; k < 4; k++)
			ck_assert_str_eq(got[k], rows[i][k]);
	}
	iogp_size_table_build(&t, &f.size[0], IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 1);
	ck_assert_str_eq(t.rows[0].size_text, "1 MiB");
	ck_assert_str_eq(t.rows[0].req_text, "100%");
	/* the CSV export has them, as iogram-top's snapshot */
	char cdir[700], names[512];
	snprintf(cdir, sizeof(cdir), "%s/dd-csv", dir);
	ck_assert_int_gt(iogplot_export_csv(cdir, &f, IOGPLOT_SIZE, names, sizeof(names), err, sizeof(err)), 0);
	ck_assert_msg(strstr(names, "size-common-write.bytes.csv") && strstr(names, "size-common-read.bytes.csv"), "%s", names);
	char *csv = tu_load(tu_fmt("%s/size-common-write.bytes.csv", cdir), NULL);
	ck_assert_msg(!strncmp(csv, "size,count,pct_requests,pct_bytes\n4096,3000,80.972,", 51), "%s", csv);
	free(csv);
	/* headless, by count and by bytes: the plot differs */
	static const char *const wt[2] = { "count", "bytes" };
	cairo_surface_t *png[2];
	for (int k = 0; k < 2; k++) {
		snprintf(out[k], sizeof(out[k]), "%s/dd-%s.png", dir, wt[k]);
		char *av[] = { (char *)view_bin, "--replay", drec, "--snapshot", out[k], "--panel", "size",
		               "--weight", (char *)wt[k], NULL };
		run_result r = run(av);
		ck_assert_msg(r.status == 0, "--weight %s: exit %d: %s", wt[k], r.status, r.err);
		png[k] = load_png(out[k]);
	}
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, 800, 500, &g), 0);
	long differ = 0;
	for (int y = (int)g.plot.y; y < (int)(g.plot.y + g.plot.h); y += 2)
		for (int x = (int)g.plot.x; x < (int)(g.plot.x + g.plot.w); x += 2) {
			int c0[3], c1[3];
			px(png[0], x, y, c0);
			px(png[1], x, y, c1);
			differ += abs(c0[0] - c1[0]) + abs(c0[1] - c1[1]) + abs(c0[2] - c1[2]) > 60;
		}
	ck_assert_msg(differ > 200, "by count and by bytes: %ld pixels differ", differ);
	/* the 1 MiB bars (5 reads, 5 writes): a sliver by count, 5 MiB by bytes */
	v.size_weight = IOGP_WEIGHT_BYTES;
	iogplot_geom gb;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_SIZE, 0, 800, 500, &gb), 0);
	int top = bar_top(png[1], &st, &gb, 1048576, 1048576 + 65535);
	ck_assert_msg(fabs(top - iogplot_geom_y(&gb, 5242880)) <= 2, "1 MiB by bytes: top %d", top);
	ck_assert(bar_top(png[0], &st, &g, 1048576, 1048576 + 65535) > g.plot.y + g.plot.h - 4);
	for (int k = 0; k < 2; k++)
		cairo_surface_destroy(png[k]);
	char *bad[] = { (char *)view_bin, "--replay", drec, "--snapshot", out[0], "--weight", "volume", NULL };
	run_result r = run(bad);
	ck_assert_int_eq(r.status, IOGP_EXIT_USAGE);
	ck_assert_msg(strstr(r.err, "--weight") != NULL, "%s", r.err);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

static int run_synth(void)
{
	pid_t pid = tu_spawn_opt((char *[]){ (char *)synth_bin, "--nodes", "4", "--sources-per-node", "2",
	                                     "--seconds", "120", "--seed", "7", "-o", rec, "--truth", truth,
	                                     NULL },
	                         &(tu_opts){ .keep_err = 1 });
	return tu_wait(pid, 0) == 0 ? 0 : -1;
}

int main(void)
{
	view_bin = getenv("IOGRAM_VIEW");
	synth_bin = getenv("IOGRAM_SYNTH");
	run_bin = getenv("IOGRAM_RUN");
	iogram_bin = getenv("IOGRAM_BIN");
	if (!view_bin || !synth_bin) {
		fprintf(stderr, "check_plot: set IOGRAM_VIEW and IOGRAM_SYNTH\n");
		return 1;
	}
	tu_tmpdir(dir, sizeof(dir), "iogram-check-plot");
	snprintf(rec, sizeof(rec), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	if (run_synth() < 0) {
		fprintf(stderr, "check_plot: iogram-synth failed\n");
		return 1;
	}
	Suite *s = suite_create("plot");
	TCase *tc = tcase_create("plot");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_snapshot_size);
	tcase_add_test(tc, test_panels_drawn);
	tcase_add_test(tc, test_snapshot_damaged);
	tcase_add_test(tc, test_qd_bars);
	tcase_add_test(tc, test_size_bars_log);
	tcase_add_test(tc, test_size_writes_exact);
	tcase_add_test(tc, test_svg_pdf);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_heatmap_thousands);
	tcase_add_test(tc, test_cache);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_seek);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_layer);
	tcase_add_test(tc, test_common_sizes_drawn);
	tcase_add_test(tc, test_size_by_bytes);
	tcase_add_test(tc, test_common_sizes_recorded);
	suite_add_tcase(s, tc);
	int failed = tu_run_srunner(s);
	if (!failed && tu_rmdir_all(dir) != 0)
		fprintf(stderr, "check_plot: could not remove %s\n", dir);
	return failed ? 1 : 0;
}
