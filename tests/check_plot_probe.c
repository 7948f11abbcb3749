/* check_plot_probe.c - iogram-view's slowdown panel, headless, from a job of
 * three fake probes (tu_probe_job: nodeC's write 8x from its 6th report on):
 * the CSV's nodes, operations and factors; the lines read back from the
 * pixels (the write's colour at 8x only after nodeC's switch, at 1x before
 * it); the current factor in large type in the warning colour; the drawn
 * probe follows the node selection, else the worst; the table's and the
 * agreement's tooltips; the empty state; snapshots from the command. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogplot.h"
#include "session.h"
#include "testutil.h"

static const char *view_bin, *synth_bin;
static char dir[256], job[600], syn[600];

#define W 800
#define H 500

static int near_colour(cairo_surface_t *s, int x, int y, iogplot_rgba c)
{
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
	if (x < 0 || y < 0 || x >= w || y >= h)
		return 0;
	const uint32_t *row = (const uint32_t *)(cairo_image_surface_get_data(s) +
	                                         (size_t)y * (size_t)cairo_image_surface_get_stride(s));
	int r = (int)(row[x] >> 16 & 255), g = (int)(row[x] >> 8 & 255), b = (int)(row[x] & 255);
	return abs(r - (int)lround(c.r * 255)) + abs(g - (int)lround(c.g * 255)) +
	       abs(b - (int)lround(c.b * 255)) < 60;
}

/* Pixels of colour c in [x0,x1] x [y0,y1]. */
static long count(cairo_surface_t *s, int x0, int x1, int y0, int y1, iogplot_rgba c)
{
	long n = 0;
	for (int y = y0; y <= y1; y++)
		for (int x = x0; x <= x1; x++)
			n += near_colour(s, x, y, c);
	return n;
}

/* Pixels drawn on the panel (not its background) in [x0,x1] x [y0,y1]. */
static long ink(cairo_surface_t *s, const iogplot_style *st, int x0, int x1, int y0, int y1)
{
	long n = 0;
	for (int y = y0; y <= y1; y++)
		for (int x = x0; x <= x1; x++)
			n += !near_colour(s, x, y, st->panel);
	return n;
}

static cairo_surface_t *render(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	cairo_t *cr = cairo_create(s);
	cairo_set_source_rgb(cr, st->bg.r, st->bg.g, st->bg.b);   /* as an export: no transparent corners */
	cairo_paint(cr);
	iogplot_panel(cr, st, f, v, IOGPLOT_PROBE, W, H);
	cairo_destroy(cr);
	cairo_surface_flush(s);
	return s;
}

/* file at its end, sel (NULL: all) into f. */
static iogv_session *frame_at_end(const char *file, const iogp_sel *sel, iogplot_frame *f)
{
	char err[256] = "";
	iogv_session *s = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(iogv_open_replay(s, file, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(s, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(s, b), 0);
	iogplot_frame_init(f);
	ck_assert_int_eq(iogv_frame(s, sel, 0, f), 0);
	return s;
}

/* The model's own record of nodeC's write: when it went to 8x, and the
 * report before. */
static void switch_time(const iogp_model *m, double *t_before, double *t_switch, double *t_next)
{
	iogp_probe p[8];
	size_t n = iogp_model_probes(m, p, 8), i = 0;
	ck_assert_int_eq(n, 3);
	while (i < n && strcmp(p[i].node, "nodeC"))
		i++;
	ck_assert_int_lt(i, n);
	int o = iogp_probe_op_index(&p[i], "write");
	ck_assert_int_ge(o, 0);
	iogp_probe_point pts[64];
	size_t k = iogp_model_probe_history(m, p[i].src, 0, pts, 64), j = 0;
	while (j < k && pts[j].milli[o] != 8000)
		j++;
	ck_assert_msg(j > 0 && j < k, "nodeC's write: 8x at report %zu of %zu", j, k);
	ck_assert_int_eq(pts[j - 1].milli[o], 1000);
	*t_before = (double)pts[j - 1].wall_ns / 1e9;
	*t_switch = (double)pts[j].wall_ns / 1e9;
	*t_next = j + 1 < k ? (double)pts[j + 1].wall_ns / 1e9 : 0;
}

START_TEST(test_csv)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, &f);
	char out[700], names[256], err[256];
	snprintf(out, sizeof(out), "%s/csv", dir);
	ck_assert_int_eq(iogplot_export_csv(out, &f, IOGPLOT_PROBE, names, sizeof(names), err, sizeof(err)), 1);
	ck_assert_str_eq(names, "slowdown.csv");
	size_t n;
	char *b = tu_load(tu_fmt("%s/slowdown.csv", out), &n);
	ck_assert_ptr_nonnull(b);
	static const char head[] = "node,dir,fs,op,statistic,expected_by,stat_ns,expected_ns,slowdown\n";
	ck_assert(!strncmp(b, head, strlen(head)));
	int lines = 0, slow = 0;
	for (char *p = b; *p; p++)
		lines += *p == '\n';
	for (char *p = b; (p = strstr(p, ",8.000\n")); p++)
		slow++;
	ck_assert_int_eq(lines, 1 + 3 * 6);
	ck_assert_int_eq(slow, 1);
	ck_assert_ptr_nonnull(strstr(b, "\nnodeC,/fake/scratch,fakefs,write,median,median of 14400 s,8000000,1000000,8.000\n"));
	ck_assert_ptr_nonnull(strstr(b, "\nnodeA,/fake/scratch,fakefs,write,median,median of 14400 s,1000000,1000000,1.000\n"));
	ck_assert_ptr_nonnull(strstr(b, "\nnodeB,/fake/scratch,fakefs,smallread,median,median of 14400 s,1300000,1000000,1.300\n"));
	ck_assert_ptr_nonnull(strstr(b, "\nnodeC,/fake/scratch,fakefs,stat,median,median of 14400 s,900000,1000000,0.900\n"));
	free(b);
	/* every panel's files: the slowdown's among them */
	snprintf(out, sizeof(out), "%s/csv-all", dir);
	ck_assert_int_gt(iogplot_export_csv(out, &f, -1, names, sizeof(names), err, sizeof(err)), 0);
	ck_assert_msg(strstr(names, "slowdown.csv") != NULL, "%s", names);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* The lines read back: at 8x only after nodeC's switch; the factor now in
 * large type, red; the worst probe drawn, or the selected node's. */
START_TEST(test_lines)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, &f);
	ck_assert_ptr_nonnull(f.probes);
	ck_assert_int_ge(f.probes->shown, 0);
	ck_assert_str_eq(f.probes->p[f.probes->shown].node, "nodeC");
	ck_assert_int_eq(f.probes->worst, 1);
	double tb, t8, tn;
	switch_time(iogv_model(s), &tb, &t8, &tn);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_PROBE, 0, W, H, &g), 0);
	ck_assert_int_eq(g.logy, 1);
	ck_assert(g.y0 <= 0.5 && g.y1 >= 8);
	ck_assert_msg(g.x0 <= tb && g.x1 >= f.t_now, "time %.3f-%.3f, data %.3f-%.3f", g.x0, g.x1, tb, f.t_now);
	cairo_surface_t *img = render(&st, &f, &v);
	cairo_surface_write_to_png(img, tu_fmt("%s/lines.png", dir));
	int y8 = (int)lround(iogplot_geom_y(&g, 8)), y1 = (int)lround(iogplot_geom_y(&g, 1));
	int y2 = (int)lround(iogplot_geom_y(&g, 2));
	int xb = (int)lround(iogplot_geom_x(&g, (tb + t8) / 2)), xa = (int)lround(iogplot_geom_x(&g, (t8 + f.t_now) / 2));
	int xs = (int)lround(iogplot_geom_x(&g, t8)), y3 = (int)lround(iogplot_geom_y(&g, 3));
	ck_assert_msg(xa - xb > 20, "before %d, after %d", xb, xa);
	iogplot_rgba rd = st.op[0], wr = st.op[1];
	/* before the switch: the write at 1x, nothing of it above 2x */
	ck_assert_int_gt(count(img, xb - 2, xb + 2, y1 - 2, y1 + 2, wr), 0);
	ck_assert_int_eq(count(img, xb - 2, xb + 2, y8 - 4, y2, wr), 0);
	/* the step up, then 8x, the read alone at 1x */
	ck_assert_int_gt(count(img, xs - 2, xs + 2, y3 - 1, y3 + 1, wr), 0);
	ck_assert_int_gt(count(img, xa - 2, xa + 2, y8 - 2, y8 + 2, wr), 0);
	ck_assert_int_eq(count(img, xa - 2, xa + 2, y1 - 2, y1 + 2, wr), 0);
	ck_assert_int_gt(count(img, xa - 2, xa + 2, y1 - 2, y1 + 2, rd), 0);
	ck_assert_int_eq(count(img, xa - 2, xa + 2, y8 - 4, y2, rd), 0);
	/* the factors now, right of the lines: 8.00x in large red type */
	int right = (int)(g.plot.x + g.plot.w) + 4;
	long red = count(img, right, W - 1, (int)g.plot.y, (int)(g.plot.y + g.plot.h), st.warn);
	ck_assert_msg(red > 150, "%ld red pixels in the factors", red);
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);

	/* between two reports the newest factor holds until the position */
	ck_assert_msg(tn > t8 + 0.5, "the report after the switch: %.3f, %.3f", t8, tn);
	double mid = (t8 + tn) / 2;
	ck_assert_int_ge(iogv_replay_seek(s, mid), 0);
	iogplot_frame_init(&f);
	ck_assert_int_eq(iogv_frame(s, NULL, 0, &f), 0);
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_PROBE, 0, W, H, &g), 0);
	img = render(&st, &f, &v);
	y8 = (int)lround(iogplot_geom_y(&g, 8));
	xa = (int)lround(iogplot_geom_x(&g, t8 + (mid - t8) * 0.8));
	ck_assert_int_gt(count(img, xa - 2, xa + 2, y8 - 2, y8 + 2, wr), 0);
	xa = (int)lround(iogplot_geom_x(&g, mid + (tn - mid) * 0.5));
	ck_assert_int_eq(count(img, xa - 2, xa + 2, (int)g.plot.y, (int)(g.plot.y + g.plot.h), wr), 0);
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);

	/* nodeA selected: its probe, nothing slow */
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = "nodeA" };
	s = frame_at_end(job, &sel, &f);
	ck_assert_str_eq(f.probes->p[f.probes->shown].node, "nodeA");
	ck_assert_int_eq(f.probes->worst, 0);
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_PROBE, 0, W, H, &g), 0);
	img = render(&st, &f, &v);
	cairo_surface_write_to_png(img, tu_fmt("%s/nodeA.png", dir));
	y8 = (int)lround(iogplot_geom_y(&g, 8));
	ck_assert_int_eq(count(img, (int)g.plot.x, (int)(g.plot.x + g.plot.w), 0, y8 + 3, wr), 0);
	right = (int)(g.plot.x + g.plot.w) + 4;
	ck_assert_int_eq(count(img, right, W - 1, (int)g.plot.y, (int)(g.plot.y + g.plot.h), st.warn), 0);
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* The nodes' table and agreement, read back by tooltips down a column. */
static int tips(const iogplot_frame *f, double x, const char *want)
{
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	char tip[1024];
	int hits = 0;
	for (int y = 0; y < H; y++)
		if (iogplot_panel_tooltip(&st, f, &v, IOGPLOT_PROBE, W, H, x, y, tip, sizeof(tip)) > 0 &&
		    strstr(tip, want))
			hits++;
	return hits;
}

START_TEST(test_nodes)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, &f);
	/* the table, left under the lines: nodeC's row has its write at 8x */
	ck_assert_int_gt(tips(&f, 20, "nodeC /fake/scratch (fakefs)\nmedian / median of 14400 s\nread 1.00x"), 0);
	ck_assert_int_gt(tips(&f, 20, "\nwrite 8.00x (8"), 0);
	ck_assert_int_gt(tips(&f, 20, "nodeB /fake/scratch"), 0);
	/* the agreement, right of it */
	ck_assert_int_gt(tips(&f, W * 0.75, "write: nodes differ: nodeC 8.00x, median 1.00x"), 0);
	ck_assert_int_gt(tips(&f, W * 0.75, "read: 3 nodes agree: 1.00x-1.00x"), 0);
	ck_assert_int_gt(tips(&f, W * 0.75, "smallread: 3 nodes agree: 1.30x-1.30x"), 0);
	/* the lines: each operation's factor at that time */
	ck_assert_int_gt(tips(&f, W * 0.5, "nodeC\nread 1.00x\nwrite"), 0);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* No probes: no axes, the words of how to start one, nothing to export. */
START_TEST(test_empty)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(syn, NULL, &f);
	ck_assert_ptr_null(f.probes);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_geom g;
	ck_assert_int_lt(iogplot_panel_geom(&st, &f, &v, IOGPLOT_PROBE, 0, W, H, &g), 0);
	cairo_surface_t *img = render(&st, &f, &v);
	cairo_surface_write_to_png(img, tu_fmt("%s/empty.png", dir));
	long text = ink(img, &st, 8, W - 8, H / 2 - 50, H / 2 + 50);
	long rest = ink(img, &st, 8, W - 8, 40, H / 2 - 60) + ink(img, &st, 8, W - 8, H / 2 + 60, H - 8);
	ck_assert_msg(text > 300 && rest == 0, "text %ld, elsewhere %ld", text, rest);
	char err[256], names[64];
	ck_assert_int_eq(iogplot_export_csv(tu_fmt("%s/csv-empty", dir), &f, IOGPLOT_PROBE, names, sizeof(names),
	                                    err, sizeof(err)), IOGP_ENOTFOUND);
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* iogram-view --snapshot --panel slowdown: the PNG and the CSV. */
START_TEST(test_snapshot)
{
	char png[700], csv[700];
	snprintf(png, sizeof(png), "%s/snap.png", dir);
	snprintf(csv, sizeof(csv), "%s/snap.csv", dir);
	for (int k = 0; k < 2; k++) {
		char *a[] = { (char *)view_bin, "--replay", job, "--snapshot", k ? csv : png, "--panel", "slowdown", NULL };
		tu_result r = tu_capture(a, &(tu_opts){ .null_in = 1 }, 120);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err ? r.err : "");
		tu_result_free(&r);
	}
	cairo_surface_t *img = cairo_image_surface_create_from_png(png);
	ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
	ck_assert_int_eq(cairo_image_surface_get_width(img), W);
	ck_assert_int_eq(cairo_image_surface_get_height(img), H);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	ck_assert_int_gt(count(img, W / 2, W - 1, 0, H - 1, st.warn), 150);
	ck_assert_int_gt(count(img, 0, W - 1, 0, H - 1, st.op[1]), 100);
	cairo_surface_destroy(img);
	size_t n;
	char *b = tu_load(tu_fmt("%s/snap/slowdown.csv", dir), &n);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(strstr(b, "\nnodeC,/fake/scratch,fakefs,write,median,median of 14400 s,8000000,1000000,8.000\n"));
	free(b);
}
END_TEST

int main(void)
{
	view_bin = getenv("IOGRAM_VIEW");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!view_bin || !synth_bin) {
		fprintf(stderr, "check_plot_probe: set IOGRAM_VIEW, IOGRAM_SYNTH, IOGRAM_FAKE_PROBE, IOGRAM_BIN\n");
		return 1;
	}
	tu_tmpdir(dir, sizeof(dir), "iogram-check-plot-probe");
	snprintf(job, sizeof(job), "%s/job.iogr", dir);
	snprintf(syn, sizeof(syn), "%s/synth.iogr", dir);
	if (tu_probe_job(dir, job) < 0 ||
	    tu_system(tu_fmt("%s --nodes 2 --sources-per-node 1 --seconds 20 --seed 3 -o %s >/dev/null 2>&1",
	                     synth_bin, syn)) != 0) {
		fprintf(stderr, "check_plot_probe: could not make the recordings\n");
		return 1;
	}
	const tu_case cases[] = { { "csv", test_csv }, { "lines", test_lines }, { "nodes", test_nodes },
	                          { "empty", test_empty }, { "snapshot", test_snapshot } };
	int rc = tu_run_suite("plot_probe", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 240);
	if (!rc && !getenv("IOGRAM_KEEP"))
		tu_rmdir_all(dir);
	else
		fprintf(stderr, "check_plot_probe: files kept in %s\n", dir);
	return rc;
}
