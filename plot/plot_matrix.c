/* plot_matrix.c - the MPI traffic panel: who sent how much to whom, node x
 * node (rank x rank of the selected node) as a heatmap, rows the senders and
 * columns the destinations, each cell's value written in it when it fits,
 * row totals (sent) at the right and column totals (received) below, a
 * colour scale, and beside or under it the message-size histogram. Messages
 * or bytes by the view's weight, per second over the window or since start;
 * what is computed lives in iogp_matrix_view.h, shared with iogram-top. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_size_table.h"
#include "plot.h"

#define MAX_SHOWN 256    /* rows (= columns) drawn at most: the busiest */
#define MIN_CELL 6.0     /* pixels */
#define CELL_W 9.0       /* a cell at most, in font sizes */
#define CELL_H 2.6
#define FONT_REL 0.85
#define LINE 1.5         /* header row, totals row, notes: font sizes */

/* ---- the frame's copy ---- */

void pl_frame_matrix_free(iogplot_frame *f)
{
	if (f->matrix)
		iogp_matrix_view_free(f->matrix);
	free(f->matrix);
	f->matrix = NULL;
}

int iogplot_frame_mpi(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel, double window_s)
{
	pl_frame_matrix_free(f);
	iogp_hist_free(&f->msgsize);
	const char *metric = iogp_panel_get(IOGP_PANEL_MSGSIZE)->metrics[0];
	int rc = window_s > 0 ? iogp_model_hist_window(m, metric, sel, (uint64_t)(window_s * 1e9), &f->msgsize)
	                      : iogp_model_hist(m, metric, sel, &f->msgsize);
	if (rc == IOGP_ENOMEM)
		return rc;
	if (!(f->matrix = malloc(sizeof(*f->matrix))))
		return IOGP_ENOMEM;
	/* a selected node shows its ranks; messages here, the view picks */
	const char *node = sel && sel->kind == IOGP_SEL_NODE ? sel->node : NULL;
	rc = iogp_matrix_view_get(f->matrix, m, node, window_s, 0);
	return rc == IOGP_ENOMEM ? rc : 0;
}

/* ---- geometry shared by the layout, the drawing and the tooltip ---- */

typedef struct mgeo {
	iogp_matrix_view mv;       /* the frame's, with the view's weight (not owned) */
	uint32_t idx[MAX_SHOWN];   /* the rows (= columns) shown, in the matrix's order */
	size_t k;
	double fs, lw, cw, ch;     /* names' column; a cell */
	iogplot_rect cells;        /* k x k */
	iogplot_rect sent, recv;   /* the totals column and row (the grand total where they meet) */
	iogplot_rect cbar;         /* the colour scale */
	iogplot_rect hist;         /* the message-size histogram (w 0: not shown) */
	double note_y;             /* the first line under the matrix */
	int text;                  /* values written in the cells */
} mgeo;

static int has_traffic(const iogplot_frame *f)
{
	return f->matrix && f->matrix->rc == 0 && f->matrix->x.n && !f->matrix->empty;
}

static void name_of(const mgeo *g, uint32_t i, char *buf, size_t len)
{
	if (g->mv.by == IOGP_MATRIX_RANK)
		snprintf(buf, len, "rank %s", g->mv.x.names[i]);
	else
		snprintf(buf, len, "%s", g->mv.x.names[i]);
}

static int notes(const mgeo *g, size_t k)
{
	return (k < g->mv.x.n) + (g->mv.x.other_msgs > 0);
}

static int geo(mgeo *g, const pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
               const iogplot_view *v)
{
	memset(g, 0, sizeof(*g));
	if (!has_traffic(f))
		return -1;
	g->mv = *f->matrix;
	g->mv.bytes = v->size_weight == IOGP_WEIGHT_BYTES;
	double fs = g->fs = l->fs, top = round(fs * (PL_TITLE_H + 0.6)), left = round(fs * 0.8);
	double right = l->w - round(fs * 0.8), bottom = l->h - round(fs * 0.6);
	/* the message sizes: right of the matrix when the panel is wide, else under it */
	if (f->msgsize.total && l->w >= fs * 70 && l->w >= l->h * 1.3) {
		double hw = round(l->w * 0.4);
		g->hist = (iogplot_rect){ l->w - hw, round(fs * 2.2), hw, l->h - round(fs * 2.2) };
		right = g->hist.x - fs;
	} else if (f->msgsize.total && l->h >= fs * 34) {
		double hh = round(l->h * 0.38);
		g->hist = (iogplot_rect){ 0, l->h - hh, l->w, hh };
		bottom = g->hist.y - fs * 0.5;
	}
	cairo_t *m = pl_measure_cr();
	pl_font(m, st, FONT_REL, 1);
	char t[64];
	iogp_matrix_view_fmt(&g->mv, iogp_matrix_view_total(&g->mv), t, sizeof(t),
	                     g->mv.bytes ? IOGP_UNITS_WIDE : IOGP_UNITS_CELL);
	double totw = fmax(pl_text_w(m, t), pl_text_w(m, "sent")) + fs;
	pl_font(m, st, FONT_REL, 0);
	g->lw = pl_text_w(m, "received");
	for (uint32_t i = 0; i < g->mv.x.n && i < 4096; i++) {
		name_of(g, i, t, sizeof(t));
		g->lw = fmax(g->lw, pl_text_w(m, t));
	}
	g->lw = round(fmin(g->lw, (right - left) / 4) + fs * 0.8);
	double cbw = fs * 8.5;   /* gap, bar, labels */
	double aw = right - left - g->lw - totw - fs * 0.6 - cbw, lh = round(fs * LINE);
	size_t k = g->mv.x.n < MAX_SHOWN ? g->mv.x.n : MAX_SHOWN;
	double ah = bottom - top - lh * (2 + notes(g, k)) - fs * 0.6;
	while (k > 1 && (aw / (double)k < MIN_CELL || ah / (double)k < MIN_CELL)) {
		k--;
		ah = bottom - top - lh * (2 + notes(g, k)) - fs * 0.6;
	}
	if (aw < MIN_CELL || ah < MIN_CELL)
		return -1;   /* too small for even one cell */
	g->k = iogp_matrix_view_pick(&g->mv, g->idx, k);
	g->cw = floor(fmin(aw / (double)g->k, fs * CELL_W));
	g->ch = floor(fmin(ah / (double)g->k, fmax(fs * CELL_H, g->cw * 0.6)));
	if (g->cw < fs * 4)   /* no text in them: square */
		g->cw = g->ch = fmin(g->cw, g->ch);
	g->cells = (iogplot_rect){ left + g->lw, top + lh, g->cw * (double)g->k, g->ch * (double)g->k };
	g->sent = (iogplot_rect){ g->cells.x + g->cells.w + round(fs * 0.6), g->cells.y, round(totw), g->cells.h };
	g->recv = (iogplot_rect){ g->cells.x, g->cells.y + g->cells.h + round(fs * 0.3), g->cells.w, lh };
	g->cbar = (iogplot_rect){ g->sent.x + g->sent.w + round(fs * 1.2), g->cells.y, round(fs * 0.9),
	                          fmax(g->cells.h, fmin(fs * 6, bottom - g->cells.y)) };
	g->note_y = g->recv.y + g->recv.h + fs * 0.9;
	pl_font(m, st, 0.8, 0);
	iogp_matrix_view_fmt(&g->mv, iogp_matrix_view_max(&g->mv), t, sizeof(t), IOGP_UNITS_CELL);
	g->text = g->ch >= fs * 1.2 && g->cw >= pl_text_w(m, t) + fs * 0.5;
	return 0;
}

/* ---- the panel ---- */

static void matrix_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                          const iogplot_view *v)
{
	mgeo g;
	if (!has_traffic(f)) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no MPI traffic\n"
		         "run the job with iogram-run --mpi (libiogram-mpi.so)");
		return;
	}
	if (geo(&g, l, st, f, v) < 0) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "too small for the matrix: zoom it (M)");
		return;
	}
	l->nsub = 0;   /* no axes: the cells, their names and totals are drawn with the data */
}

static void matrix_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	if (!has_traffic(f)) {
		snprintf(buf, len, "%s", f->matrix && f->matrix->rc < 0 ? iogp_strerror(f->matrix->rc) : "");
		return;
	}
	iogp_matrix_view mv = *f->matrix;
	mv.bytes = v->size_weight == IOGP_WEIGHT_BYTES;
	char t[200];
	iogp_matrix_view_title(&mv, t, sizeof(t));
	snprintf(buf, len, "%s (v: %s)", t, mv.bytes ? "messages" : "bytes");
}

/* A value as it fits in w: messages exact while short ("1096"), bytes
 * with their unit ("4.2 MiB"), else the short form ("4.2M"). */
static void fmt_fit(cairo_t *cr, const mgeo *g, double val, double w, char *t, size_t len)
{
	iogp_matrix_view_fmt(&g->mv, val, t, len, g->mv.bytes ? IOGP_UNITS_WIDE : IOGP_UNITS_CELL);
	if (pl_text_w(cr, t) > w)
		iogp_matrix_view_fmt(&g->mv, val, t, len, IOGP_UNITS_CELL);
}

/* Text on a heat colour: dark on the light (hot) end of the palette. */
static void ink_on(cairo_t *cr, double r, double gg, double b)
{
	double lum = 0.299 * r + 0.587 * gg + 0.114 * b;
	if (lum > 0.5)
		cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	else
		cairo_set_source_rgb(cr, 1, 1, 1);
}

static void cell(cairo_t *cr, const mgeo *g, const iogplot_style *st, double x, double y, double val)
{
	if (!(val > 0)) {   /* nothing sent: an empty box */
		pl_rgba(cr, st->grid, 1);
		cairo_set_line_width(cr, 1);
		cairo_rectangle(cr, x + 1.5, y + 1.5, g->cw - 2, g->ch - 2);
		cairo_stroke(cr);
		return;
	}
	double r, gg, b;
	pl_heat_color(iogp_matrix_view_level(&g->mv, val), &r, &gg, &b);
	cairo_set_source_rgb(cr, r, gg, b);
	cairo_rectangle(cr, x + 1, y + 1, g->cw - 1, g->ch - 1);
	cairo_fill(cr);
	if (!g->text)
		return;
	char t[40];
	fmt_fit(cr, g, val, g->cw - g->fs * 0.4, t, sizeof(t));
	ink_on(cr, r, gg, b);
	pl_text(cr, x + g->cw / 2 + 0.5, y + g->ch / 2 + 0.5, 0.5, 0.5, t);
}

/* A total: its value, right-aligned, on a faint band. */
static void total(cairo_t *cr, const mgeo *g, const iogplot_style *st, double x, double y, double w,
                  double h, double val)
{
	char t[40];
	pl_rgba(cr, st->grid, 0.6);
	cairo_rectangle(cr, x + 1, y + 1, w - 1, h - 1);
	cairo_fill(cr);
	if (h < g->fs * 1.1)
		return;
	if (val > 0)
		fmt_fit(cr, g, val, w - g->fs * 0.5, t, sizeof(t));
	else
		snprintf(t, sizeof(t), "-");
	pl_rgba(cr, st->fg, 1);
	pl_text(cr, x + w - g->fs * 0.4, y + h / 2, 1, 0.5, t);
}

/* Every n-th of the k names fits along a side of cells of size c. */
static size_t label_step(const mgeo *g, double c)
{
	size_t n = 1;
	while ((double)n * c < g->fs * 1.15 && n < g->k)
		n++;
	return n;
}

static void names(cairo_t *cr, const mgeo *g, const iogplot_style *st)
{
	double fs = g->fs;
	char t[64], fit[160];
	pl_font(cr, st, FONT_REL, 0);
	pl_rgba(cr, st->dim, 1);
	pl_text(cr, g->cells.x - fs * 0.5, g->cells.y - fs * 0.75, 1, 0.5, "from \\ to");
	pl_text(cr, g->sent.x + g->sent.w - fs * 0.4, g->cells.y - fs * 0.75, 1, 0.5, "sent");
	pl_text(cr, g->cells.x - fs * 0.5, g->recv.y + g->recv.h / 2, 1, 0.5, "received");
	size_t rs = label_step(g, g->ch), cs = g->cw >= fs * 3 ? 1 : label_step(g, g->cw * 3);
	pl_rgba(cr, st->fg, 1);
	for (size_t i = 0; i < g->k; i += rs) {
		name_of(g, g->idx[i], t, sizeof(t));
		pl_fit_middle(cr, t, g->lw - fs * 0.8, fit, sizeof(fit));
		pl_text(cr, g->cells.x - fs * 0.5, g->cells.y + g->ch * ((double)i + 0.5), 1, 0.5, fit);
	}
	for (size_t i = 0; i < g->k; i += cs) {
		pl_fit_middle(cr, g->mv.x.names[g->idx[i]], g->cw * (double)cs - fs * 0.3, fit, sizeof(fit));
		pl_text(cr, g->cells.x + g->cw * ((double)i + 0.5), g->cells.y - fs * 0.75, 0.5, 0.5, fit);
	}
}

/* The palette from three decades under the largest cell up to it. */
static void scale(cairo_t *cr, const mgeo *g, const iogplot_style *st)
{
	const iogplot_rect *c = &g->cbar;
	double mx = iogp_matrix_view_max(&g->mv), fs = g->fs;
	cairo_pattern_t *grad = cairo_pattern_create_linear(0, c->y + c->h, 0, c->y);
	for (int k = 0; k <= 20; k++) {
		double r, gg, b;
		pl_heat_color(k / 20.0, &r, &gg, &b);
		cairo_pattern_add_color_stop_rgb(grad, k / 20.0, r, gg, b);
	}
	cairo_set_source(cr, grad);
	cairo_rectangle(cr, c->x, c->y, c->w, c->h);
	cairo_fill(cr);
	cairo_pattern_destroy(grad);
	pl_font(cr, st, 0.8, 0);
	double last = -1e9;
	for (int d = 0; d <= 3; d++) {   /* the largest, a tenth of it, ... */
		double y = round(c->y + c->h * d / 3.0) + 0.5;
		if (y - last < fs * 1.1)
			continue;
		last = y;
		char t[40];
		iogp_matrix_view_fmt(&g->mv, mx / pow(10, d), t, sizeof(t), IOGP_UNITS_WIDE);
		pl_rgba(cr, st->axis, 1);
		cairo_set_line_width(cr, 1);
		cairo_move_to(cr, c->x + c->w, y);
		cairo_line_to(cr, c->x + c->w + fs * 0.3, y);
		cairo_stroke(cr);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, c->x + c->w + fs * 0.45, y, 0, 0.5, t);
	}
}

static void matrix_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                        const iogplot_view *v)
{
	mgeo g;
	if (geo(&g, l, st, f, v) < 0)
		return;
	double fs = g.fs;
	pl_font(cr, st, 0.8, 0);
	for (size_t r = 0; r < g.k; r++)
		for (size_t c = 0; c < g.k; c++)
			cell(cr, &g, st, g.cells.x + g.cw * (double)c, g.cells.y + g.ch * (double)r,
			     iogp_matrix_view_cell(&g.mv, g.idx[r], g.idx[c]));
	pl_font(cr, st, FONT_REL, 1);
	for (size_t r = 0; r < g.k; r++)
		total(cr, &g, st, g.sent.x, g.cells.y + g.ch * (double)r, g.sent.w, g.ch,
		      iogp_matrix_view_row(&g.mv, g.idx[r]));
	for (size_t c = 0; c < g.k; c++)
		total(cr, &g, st, g.cells.x + g.cw * (double)c, g.recv.y, g.cw, g.recv.h,
		      iogp_matrix_view_col(&g.mv, g.idx[c]));
	total(cr, &g, st, g.sent.x, g.recv.y, g.sent.w, g.recv.h, iogp_matrix_view_total(&g.mv));
	names(cr, &g, st);
	scale(cr, &g, st);
	char t[200], o[40];
	double y = g.note_y;
	pl_font(cr, st, FONT_REL, 0);
	pl_rgba(cr, st->dim, 1);
	if (g.k < g.mv.x.n) {
		snprintf(t, sizeof(t), "the %zu busiest of %u shown (sent + received); select a node for its ranks",
		         g.k, g.mv.x.n);
		pl_text(cr, fs * 0.8, y, 0, 0.5, t);
		y += round(fs * LINE);
	}
	if (g.mv.x.other_msgs) {   /* in the cells' unit */
		double ov = (double)(g.mv.bytes ? g.mv.x.other_bytes : g.mv.x.other_msgs);
		iogp_matrix_view_fmt(&g.mv, g.mv.seconds > 0 ? ov / g.mv.seconds : ov, o, sizeof(o), IOGP_UNITS_WIDE);
		snprintf(t, sizeof(t), "to ranks not shown: %s", o);
		pl_text(cr, fs * 0.8, y, 0, 0.5, t);
	}
	if (g.hist.w > 0) {   /* the message sizes: the histogram panel's own drawing */
		cairo_save(cr);
		cairo_translate(cr, g.hist.x, g.hist.y);
		cairo_rectangle(cr, 0, 0, g.hist.w, g.hist.h);
		cairo_clip(cr);
		iogplot_panel(cr, st, f, v, IOGPLOT_MSGSIZE, g.hist.w, g.hist.h);
		cairo_restore(cr);
	}
}

static int in(const iogplot_rect *r, double x, double y)
{
	return r->w > 0 && x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

/* "mxb -> mxc: 312 messages (4.88 MiB)\n5111808 bytes"; over a window its
 * rates, then the counts in it. */
static int describe(const mgeo *g, const char *what, uint64_t msgs, uint64_t bytes, char *buf, size_t len)
{
	char b[32], mr[32], br[32];
	iogp_fmt_bytes(b, sizeof(b), (double)bytes, IOGP_UNITS_WIDE);
	if (g->mv.seconds > 0) {
		iogp_fmt_count(mr, sizeof(mr), (double)msgs / g->mv.seconds, IOGP_UNITS_WIDE);
		iogp_fmt_rate(br, sizeof(br), "bytes", (double)bytes / g->mv.seconds, IOGP_UNITS_WIDE);
		return snprintf(buf, len, "%s: %s messages/s (%s)\nin the last %.0f s: %" PRIu64
		                " messages, %" PRIu64 " bytes (%s)", what, mr, br, g->mv.seconds, msgs, bytes, b);
	}
	return snprintf(buf, len, "%s: %" PRIu64 " messages (%s)\n%" PRIu64 " bytes", what, msgs, b, bytes);
}

static int matrix_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v, double x,
                          double y, char *buf, size_t len)
{
	iogplot_style st;
	iogplot_style_init(&st, l->dark);
	st.font_size = l->fs;
	mgeo g;
	if (geo(&g, l, &st, f, v) < 0)
		return 0;
	if (in(&g.hist, x, y))
		return iogplot_panel_tooltip(&st, f, v, IOGPLOT_MSGSIZE, g.hist.w, g.hist.h, x - g.hist.x,
		                             y - g.hist.y, buf, len);
	const iogp_matrix *m = &g.mv.x;
	/* the row (sender) and column (destination) under the pointer, k: a total */
	size_t r = g.k + 1, c = g.k + 1;
	if (y >= g.cells.y && y < g.cells.y + g.cells.h)
		r = (size_t)((y - g.cells.y) / g.ch);
	else if (in(&(iogplot_rect){ 0, g.recv.y, l->w, g.recv.h }, x, y))
		r = g.k;
	if (x >= g.cells.x && x < g.cells.x + g.cells.w)
		c = (size_t)((x - g.cells.x) / g.cw);
	else if (x >= g.sent.x && x < g.sent.x + g.sent.w)
		c = g.k;
	else if (x < g.cells.x && r < g.k)
		c = g.k;   /* a sender's name: what it sent */
	if (y < g.cells.y && y >= g.cells.y - g.fs * LINE && c < g.k)
		r = g.k;   /* a destination's name: what it received */
	if (r > g.k || c > g.k)
		return 0;
	char a[64], b[64], what[160];
	int n;
	if (r < g.k && c < g.k) {
		name_of(&g, g.idx[r], a, sizeof(a));
		name_of(&g, g.idx[c], b, sizeof(b));
		snprintf(what, sizeof(what), "%s -> %s", a, b);
		size_t i = (size_t)g.idx[r] * m->n + g.idx[c];
		n = describe(&g, what, m->msgs[i], m->bytes[i], buf, len);
	} else if (r < g.k) {
		name_of(&g, g.idx[r], a, sizeof(a));
		snprintf(what, sizeof(what), "%s sent", a);
		n = describe(&g, what, m->row_msgs[g.idx[r]], m->row_bytes[g.idx[r]], buf, len);
	} else if (c < g.k) {
		name_of(&g, g.idx[c], b, sizeof(b));
		snprintf(what, sizeof(what), "%s received", b);
		n = describe(&g, what, m->col_msgs[g.idx[c]], m->col_bytes[g.idx[c]], buf, len);
	} else {
		n = describe(&g, "all", m->total_msgs, m->total_bytes, buf, len);
	}
	return n <= 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_matrix_ops = { matrix_layout, matrix_title, matrix_data, matrix_tooltip };
