/* check_plot_matrix.c - iogram-view's MPI traffic panel, headless, from a
 * job with a known matrix (tu_matrix_job: ranks 0,1 on mxa, 2,3 on mxb, 4
 * on mxc): the CSV equals the truth cell by cell; the cells found through
 * their tooltips give exact messages and bytes, and their colours are
 * ordered as their values (the largest hottest, the empty mxc -> mxc
 * uncoloured), by messages and by bytes; a selected node gives its ranks;
 * the message sizes beside; the empty state; snapshots from the command. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_size_table.h"
#include "iogplot.h"
#include "session.h"
#include "testutil.h"
#include "testutil_iogr.h"

static const char *view_bin, *synth_bin;
static char dir[256], job[600], syn[600];

#define W 800
#define H 500
#define NN 3

static const char *const nodes[NN] = { "mxa", "mxb", "mxc" };

static int node_of(int r)
{
	return tu_mx_node(r)[2] - 'a';
}

/* node x node truth: messages (bytes 0) or bytes */
static uint64_t truth(int from, int to, int bytes)
{
	uint64_t v = 0;
	for (int r = 0; r < TU_MX_RANKS; r++)
		for (int d = 0; d < TU_MX_RANKS; d++)
			if (node_of(r) == from && node_of(d) == to)
				v += tu_mx_msgs(r, d) * (bytes ? tu_mx_size(d) : 1);
	return v;
}

static int node_index(const char *name)
{
	for (int i = 0; i < NN; i++)
		if (!strcmp(name, nodes[i]))
			return i;
	return -1;
}

/* file at its end, sel (NULL: all), window_s into f. */
static iogv_session *frame_at_end(const char *file, const iogp_sel *sel, double window_s, iogplot_frame *f)
{
	char err[256] = "";
	iogv_session *s = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(iogv_open_replay(s, file, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(s, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(s, b), 0);
	iogplot_frame_init(f);
	ck_assert_int_eq(iogv_frame(s, sel, window_s, f), 0);
	return s;
}

static cairo_surface_t *render(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	cairo_t *cr = cairo_create(s);
	cairo_set_source_rgb(cr, st->bg.r, st->bg.g, st->bg.b);
	cairo_paint(cr);
	iogplot_panel(cr, st, f, v, IOGPLOT_MATRIX, W, H);
	cairo_destroy(cr);
	cairo_surface_flush(s);
	if (getenv("IOGRAM_KEEP"))
		cairo_surface_write_to_png(s, tu_fmt("%s/matrix-%d.png", dir, v->size_weight));
	return s;
}

static void rgb_at(cairo_surface_t *s, int x, int y, int c[3])
{
	const uint32_t *row = (const uint32_t *)(cairo_image_surface_get_data(s) +
	                                         (size_t)y * (size_t)cairo_image_surface_get_stride(s));
	c[0] = (int)(row[x] >> 16 & 255);
	c[1] = (int)(row[x] >> 8 & 255);
	c[2] = (int)(row[x] & 255);
}

static int near(const int c[3], iogplot_rgba r)
{
	return abs(c[0] - (int)lround(r.r * 255)) + abs(c[1] - (int)lround(r.g * 255)) +
	       abs(c[2] - (int)lround(r.b * 255)) < 40;
}

/* Pixels of [x0,x1) x [y0,y1) near the palette's hottest (viridis yellow). */
static long hottest(cairo_surface_t *s, int x0, int x1, int y0, int y1)
{
	long n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++) {
			int c[3];
			rgb_at(s, x, y, c);
			n += c[0] > 225 && c[1] > 200 && c[2] < 80;
		}
	return n;
}

/* The node x node cells as their tooltips place them: each cell's box, and
 * the messages and bytes its tooltip says. */
typedef struct found {
	int x0, y0, x1, y1, n;
	uint64_t msgs, bytes;
} found;

static void find_cells(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                       found cell[NN][NN], found sent[NN])
{
	memset(cell, 0, sizeof(found) * NN * NN);
	memset(sent, 0, sizeof(found) * NN);
	for (int y = 0; y < H; y += 2)
		for (int x = 0; x < W; x += 2) {
			char tip[256], a[64], b[64];
			uint64_t m = 0, by = 0;
			if (!iogplot_panel_tooltip(st, f, v, IOGPLOT_MATRIX, W, H, x, y, tip, sizeof(tip)))
				continue;
			const char *nl = strchr(tip, '\n');
			found *c = NULL;
			if (sscanf(tip, "%63[^ ] -> %63[^:]: %" SCNu64 " messages", a, b, &m) == 3) {
				int i = node_index(a), j = node_index(b);
				ck_assert_msg(i >= 0 && j >= 0, "tooltip '%s'", tip);
				c = &cell[i][j];
			} else if (sscanf(tip, "%63[^ ] sent: %" SCNu64 " messages", a, &m) == 2) {
				ck_assert_msg(node_index(a) >= 0, "tooltip '%s'", tip);
				c = &sent[node_index(a)];
			} else {
				continue;
			}
			ck_assert_msg(nl && sscanf(nl + 1, "%" SCNu64 " bytes", &by) == 1, "tooltip '%s'", tip);
			if (!c->n++) {
				c->x0 = c->x1 = x;
				c->y0 = c->y1 = y;
				c->msgs = m;
				c->bytes = by;
			}
			ck_assert_msg(c->msgs == m && c->bytes == by, "one cell, two values: '%s'", tip);
			c->x0 = x < c->x0 ? x : c->x0;
			c->x1 = x > c->x1 ? x : c->x1;
			c->y0 = y < c->y0 ? y : c->y0;
			c->y1 = y > c->y1 ? y : c->y1;
		}
}

static double lum(const int c[3])
{
	return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
}

/* Every cell found, exact in its tooltip, coloured in the order of the
 * view's weight (the largest the hottest, an empty one not at all). */
static void check_cells(int bytes)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, 0, &f);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	v.size_weight = bytes ? IOGP_WEIGHT_BYTES : IOGP_WEIGHT_COUNT;
	found cell[NN][NN], sent[NN];
	find_cells(&st, &f, &v, cell, sent);
	cairo_surface_t *img = render(&st, &f, &v);
	double l[NN][NN];
	int maxi = 0, maxj = 0;
	for (int i = 0; i < NN; i++) {
		uint64_t row = 0;
		for (int j = 0; j < NN; j++) {
			found *c = &cell[i][j];
			ck_assert_msg(c->n > 4, "%s -> %s: no cell (%d points)", nodes[i], nodes[j], c->n);
			ck_assert_msg(c->msgs == truth(i, j, 0) && c->bytes == truth(i, j, 1),
			              "%s -> %s: %" PRIu64 " messages, %" PRIu64 " bytes; want %" PRIu64 ", %" PRIu64,
			              nodes[i], nodes[j], c->msgs, c->bytes, truth(i, j, 0), truth(i, j, 1));
			row += truth(i, j, 0);
			int px[3];
			rgb_at(img, c->x0 + 3, c->y0 + 3, px);   /* the corner: not the value's text */
			l[i][j] = lum(px);
			if (!truth(i, j, 0))
				ck_assert_msg(near(px, st.panel), "%s -> %s sent nothing but is coloured (%d,%d,%d)",
				              nodes[i], nodes[j], px[0], px[1], px[2]);
			else
				ck_assert_msg(!near(px, st.panel), "%s -> %s: not coloured", nodes[i], nodes[j]);
			if (truth(i, j, bytes) > truth(maxi, maxj, bytes))
				maxi = i, maxj = j;
		}
		ck_assert_msg(sent[i].n > 0 && sent[i].msgs == row, "%s sent %" PRIu64 ", want %" PRIu64, nodes[i],
		              sent[i].msgs, row);
	}
	for (int i = 0; i < NN * NN; i++)
		for (int j = 0; j < NN * NN; j++) {
			uint64_t a = truth(i / NN, i % NN, bytes), b = truth(j / NN, j % NN, bytes);
			if (a > b && b > 0)
				ck_assert_msg(l[i / NN][i % NN] > l[j / NN][j % NN] - 1,
				              "%s -> %s (%" PRIu64 ") is colder than %s -> %s (%" PRIu64 ")",
				              nodes[i / NN], nodes[i % NN], a, nodes[j / NN], nodes[j % NN], b);
			if ((i / NN != maxi || i % NN != maxj) && a)
				ck_assert_msg(l[maxi][maxj] > l[i / NN][i % NN] + 5, "the largest cell is not the hottest");
		}
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}

START_TEST(test_cells_messages)
{
	check_cells(0);
}
END_TEST

START_TEST(test_cells_bytes)
{
	check_cells(1);
}
END_TEST

/* matrix.csv: every node x node cell and total, messages and bytes. */
static void check_csv(const char *path)
{
	size_t n;
	char *b = tu_load(path, &n);
	ck_assert_msg(b != NULL, "%s missing", path);
	const char head[] = "from_node,to_node,messages_count,bytes\n";
	ck_assert_msg(!strncmp(b, head, strlen(head)), "%s: header %.60s", path, b);
	int cells = 0, totals = 0;
	for (char *line = strchr(b, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		char a[64], c[64];
		uint64_t m, by;
		ck_assert_msg(sscanf(line + 1, "%63[^,],%63[^,],%" SCNu64 ",%" SCNu64, a, c, &m, &by) == 4, "line %.60s",
		              line + 1);
		int i = node_index(a), j = node_index(c);
		uint64_t tm = 0, tb = 0;
		for (int x = 0; x < NN; x++)
			for (int y = 0; y < NN; y++)
				if ((i < 0 || i == x) && (j < 0 || j == y)) {
					tm += truth(x, y, 0);
					tb += truth(x, y, 1);
				}
		ck_assert_msg(m == tm && by == tb, "%s,%s: %" PRIu64 ",%" PRIu64 " want %" PRIu64 ",%" PRIu64, a, c, m, by,
		              tm, tb);
		if (i >= 0 && j >= 0)
			cells++;
		else
			ck_assert_msg(!strcmp(i < 0 ? a : c, "total"), "line %.60s", line + 1);
		totals += i < 0 || j < 0;
	}
	ck_assert_int_eq(cells, NN * NN);
	ck_assert_int_eq(totals, 2 * NN + 1);
	free(b);
}

START_TEST(test_csv)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, 0, &f);
	char out[700], names[256], err[256];
	snprintf(out, sizeof(out), "%s/csv", dir);
	ck_assert_int_eq(iogplot_export_csv(out, &f, IOGPLOT_MATRIX, names, sizeof(names), err, sizeof(err)), 2);
	ck_assert_str_eq(names, "matrix.csv msgsize.csv");
	check_csv(tu_fmt("%s/matrix.csv", out));
	/* the message sizes: each destination rank's size holds what it was sent */
	size_t n;
	char *b = tu_load(tu_fmt("%s/msgsize.csv", out), &n);
	ck_assert_ptr_nonnull(b);
	int bins = 0;
	for (char *line = strchr(b, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		uint64_t lo, hi, c, want = 0;
		ck_assert_int_eq(sscanf(line + 1, "%" SCNu64 ",%" SCNu64 ",%" SCNu64, &lo, &hi, &c), 3);
		for (int d = 0; d < TU_MX_RANKS; d++)
			for (int r = 0; r < TU_MX_RANKS; r++)
				if (tu_mx_size(d) >= lo && tu_mx_size(d) <= hi)
					want += tu_mx_msgs(r, d);
		ck_assert_msg(c == want, "[%" PRIu64 ", %" PRIu64 "]: %" PRIu64 " messages, want %" PRIu64, lo, hi, c, want);
		bins += c > 0;
	}
	ck_assert_int_eq(bins, TU_MX_RANKS);
	free(b);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* mxb selected: its ranks 2 and 3, exact in the tooltips and the CSV. */
START_TEST(test_ranks_of_mxb)
{
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = "mxb" };
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, &sel, 0, &f);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	ck_assert_ptr_nonnull(f.matrix);
	ck_assert_int_eq(f.matrix->x.n, 2);
	int seen[2][2] = { { 0 } };
	for (int y = 0; y < H; y += 3)
		for (int x = 0; x < W; x += 3) {
			char tip[256];
			int a, b;
			uint64_t m;
			if (iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_MATRIX, W, H, x, y, tip, sizeof(tip)) &&
			    sscanf(tip, "rank %d -> rank %d: %" SCNu64 " messages", &a, &b, &m) == 3) {
				ck_assert_msg(a >= 2 && a <= 3 && b >= 2 && b <= 3, "%s", tip);
				ck_assert_msg(m == tu_mx_msgs(a, b), "%s: want %" PRIu64, tip, tu_mx_msgs(a, b));
				seen[a - 2][b - 2]++;
			}
		}
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 2; b++)
			ck_assert_msg(seen[a][b] > 0, "no cell rank %d -> rank %d", a + 2, b + 2);
	char out[700], names[256], err[256];
	snprintf(out, sizeof(out), "%s/csv-mxb", dir);
	ck_assert_int_ge(iogplot_export_csv(out, &f, IOGPLOT_MATRIX, names, sizeof(names), err, sizeof(err)), 1);
	size_t n;
	char *b = tu_load(tu_fmt("%s/matrix.csv", out), &n);
	ck_assert_ptr_nonnull(b);
	ck_assert(!strncmp(b, "from_rank,to_rank,", 18));
	ck_assert_ptr_nonnull(strstr(b, tu_fmt("\n2,3,%" PRIu64 ",%" PRIu64 "\n", tu_mx_msgs(2, 3),
	                                       tu_mx_msgs(2, 3) * tu_mx_size(3))));
	free(b);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* The message sizes beside the matrix: their tooltips count messages. */
START_TEST(test_msgsize_beside)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, 0, &f);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	uint64_t want = 0;
	for (int r = 0; r < TU_MX_RANKS; r++)
		want += tu_mx_msgs(r, 4);   /* every 16 KiB message */
	int hits = 0;
	for (int y = H / 2; y < H && !hits; y += 2)
		for (int x = W / 2; x < W; x++) {
			char tip[256];
			if (iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_MATRIX, W, H, x, y, tip, sizeof(tip)) &&
			    strstr(tip, "size [16,384, ")) {
				ck_assert_msg(strstr(tip, tu_fmt("): %" PRIu64 " messages (", want)) != NULL, "%s", tip);
				hits++;
			}
		}
	ck_assert_msg(hits > 0, "no 16 KiB bar in the message sizes");
	/* and its bars are drawn there, in the histogram's colour (purple;
	 * blended with the panel: its hue, not its value) */
	cairo_surface_t *img = render(&st, &f, &v);
	long bars = 0;
	for (int y = H / 4; y < H; y++)
		for (int x = W / 2; x < W; x++) {
			int c[3];
			rgb_at(img, x, y, c);
			bars += c[2] - c[1] > 50 && c[0] - c[1] > 25;
		}
	ck_assert_msg(bars > 300, "%ld pixels of bars", bars);
	cairo_surface_destroy(img);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* Over a window: rates, and the title says so. */
START_TEST(test_window_title)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(job, NULL, 2, &f);
	ck_assert_ptr_nonnull(f.matrix);
	iogplot_view v;
	iogplot_view_init(&v);
	char t[256];
	iogp_matrix_view mv = *f.matrix;
	iogp_matrix_view_title(&mv, t, sizeof(t));
	ck_assert_msg(strstr(t, "messages/s over 2 s") != NULL, "%s", t);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

/* No MPI in the job: the empty state, no cell, no CSV. */
START_TEST(test_empty)
{
	iogplot_frame f;
	iogv_session *s = frame_at_end(syn, NULL, 0, &f);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_MATRIX, 0, W, H, &g), IOGP_ENOTFOUND);
	char tip[128];
	ck_assert_int_eq(iogplot_panel_tooltip(&st, &f, &v, IOGPLOT_MATRIX, W, H, W / 3, H / 2, tip, sizeof(tip)), 0);
	cairo_surface_t *img = render(&st, &f, &v);
	ck_assert_int_eq(hottest(img, 0, W, 0, H), 0);
	long ink = 0;
	for (int y = H / 2 - 30; y < H / 2 + 30; y++)
		for (int x = W / 4; x < 3 * W / 4; x++) {
			int c[3];
			rgb_at(img, x, y, c);
			ink += !near(c, st.panel);
		}
	ck_assert_msg(ink > 200, "no message in the middle (%ld pixels)", ink);
	cairo_surface_destroy(img);
	char out[700], names[256], err[256];
	snprintf(out, sizeof(out), "%s/csv-empty", dir);
	ck_assert_int_eq(iogplot_export_csv(out, &f, IOGPLOT_MATRIX, names, sizeof(names), err, sizeof(err)),
	                 IOGP_ENOTFOUND);
	iogplot_frame_free(&f);
	iogv_session_free(s);
}
END_TEST

static int view_run(char *const argv[], char *err, size_t len)
{
	static const char *const no_display[] = { "DISPLAY", "WAYLAND_DISPLAY", NULL };
	tu_result t = tu_capture(argv, &(tu_opts){ .null_in = 1, .env = no_display }, 60);
	snprintf(err, len, "%s", t.err);
	int st = t.status;
	tu_result_free(&t);
	return st;
}

/* iogram-view --snapshot --panel matrix: the PNG (with its hottest cell),
 * the CSV, and the whole dashboard's matrix panel drawn. */
START_TEST(test_snapshot_cmd)
{
	char png[700], csv[700], dash[700], err[8192];
	snprintf(png, sizeof(png), "%s/snap-matrix.png", dir);
	snprintf(csv, sizeof(csv), "%s/snap.csv", dir);
	snprintf(dash, sizeof(dash), "%s/snap-dash.png", dir);
	int st = view_run((char *[]){ (char *)view_bin, "--replay", job, "--snapshot", png, "--panel", "matrix", NULL },
	                  err, sizeof(err));
	ck_assert_msg(st == 0, "exit %d: %s", st, err);
	cairo_surface_t *s = cairo_image_surface_create_from_png(png);
	ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	ck_assert_int_eq(cairo_image_surface_get_width(s), W);
	ck_assert_int_gt(hottest(s, 0, W, 0, H), 100);
	cairo_surface_destroy(s);
	st = view_run((char *[]){ (char *)view_bin, "--replay", job, "--snapshot", csv, "--panel", "matrix", NULL }, err,
	              sizeof(err));
	ck_assert_msg(st == 0, "exit %d: %s", st, err);
	check_csv(tu_fmt("%s/snap/matrix.csv", dir));
	st = view_run((char *[]){ (char *)view_bin, "--replay", job, "--snapshot", dash, NULL }, err, sizeof(err));
	ck_assert_msg(st == 0, "exit %d: %s", st, err);
	s = cairo_image_surface_create_from_png(dash);
	ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	iogplot_rect r[IOGPLOT_NPANELS];
	iogplot_dashboard_layout(cairo_image_surface_get_width(s), cairo_image_surface_get_height(s), r);
	/* zoom only (M): most jobs have no MPI, so no empty cell in every dashboard */
	ck_assert_msg(r[IOGPLOT_MATRIX].w == 0 && r[IOGPLOT_PROBE].w == 0, "the matrix or the slowdown is on the dashboard");
	ck_assert_int_eq(hottest(s, 0, cairo_image_surface_get_width(s), 0, cairo_image_surface_get_height(s)), 0);
	cairo_surface_destroy(s);
}
END_TEST

int main(void)
{
	view_bin = getenv("IOGRAM_VIEW");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!view_bin || !synth_bin) {
		fprintf(stderr, "check_plot_matrix: set IOGRAM_VIEW and IOGRAM_SYNTH\n");
		return 1;
	}
	tu_tmpdir(dir, sizeof(dir), "iogram-check-plot-matrix");
	snprintf(job, sizeof(job), "%s/matrix.iogr", dir);
	snprintf(syn, sizeof(syn), "%s/synth.iogr", dir);
	if (tu_matrix_job(job) < 0 ||
	    tu_system(tu_fmt("%s --nodes 2 --sources-per-node 1 --seconds 20 --seed 3 -o %s >/dev/null 2>&1",
	                     synth_bin, syn)) != 0) {
		fprintf(stderr, "check_plot_matrix: could not make the recordings\n");
		return 1;
	}
	const tu_case cases[] = { { "cells_messages", test_cells_messages }, { "cells_bytes", test_cells_bytes },
	                          { "csv", test_csv }, { "ranks", test_ranks_of_mxb },
	                          { "msgsize", test_msgsize_beside }, { "window", test_window_title },
	                          { "empty", test_empty }, { "snapshot", test_snapshot_cmd } };
	int rc = tu_run_suite("plot_matrix", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 240);
	if (!rc && !getenv("IOGRAM_KEEP"))
		tu_rmdir_all(dir);
	else
		fprintf(stderr, "check_plot_matrix: files kept in %s\n", dir);
	return rc;
}
