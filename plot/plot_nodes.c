/* plot_nodes.c - nodes and ranks side by side: the shared table
 * (iogp_node_table.h) in the columns that fit, sorted as the view says
 * (a click on a header sorts by it), the worst row marked, the top and
 * bottom rows and a count when there are more; and the stragglers, I/O
 * time as bars against the median. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

#define LINE 1.5        /* line height, font sizes */
#define FONT_REL 0.9
#define COL_GAP 1.2     /* between columns, font sizes */
#define MARK_W 0.9      /* the worst row's mark, font sizes */

/* Columns by how much they matter when the width runs out. */
static const int priority[IOGP_NT_NCOLS] = {
	IOGP_NT_NAME, IOGP_NT_P99, IOGP_NT_SHARE, IOGP_NT_READ_BPS, IOGP_NT_WRITE_BPS, IOGP_NT_IOTIME,
	IOGP_NT_VSMED, IOGP_NT_P50, IOGP_NT_QD99, IOGP_NT_READ_OPS, IOGP_NT_WRITE_OPS,
};

static const char *name_title(const iogp_node_table *t)
{
	return t->scope == IOGP_NT_NODES ? "Node" : "Process";
}

static void nodes_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                         const iogplot_view *v)
{
	(void)st;
	(void)v;
	const iogp_node_table *t = &f->nodes;
	if (!t->n) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no sources yet");
		return;
	}
	l->nsub = 0;   /* a table: no axes */
	double fs = l->fs, lh = round(fs * LINE);
	double x = round(fs * 0.8), y = round(fs * (PL_TITLE_H + 1.6));   /* below the summary line */
	double w = l->w - 2 * x, h = l->h - y - round(fs * 0.5);
	int lines = (int)floor(h / lh);
	if (lines < 2 || w < fs * 10) {
		l->nsub = 1;
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "too small for the table");
		return;
	}
	l->ntab = (iogplot_rect){ x, y, w, h };
	l->ntab_lines = lines;
	if (!t->with_io)
		return;
	if (w >= fs * 90) {   /* wide: the stragglers beside the table */
		double tw = round(w * 0.58);
		l->ntab.w = tw;
		l->nstrag = (iogplot_rect){ x + tw + fs * 2, y, w - tw - fs * 2, h };
		l->nstrag_lines = lines;
		return;
	}
	int need = (int)t->n + 1, th = need < lines * 6 / 10 ? need : lines * 6 / 10;
	if (lines - th - 1 >= 3) {   /* below it, a line apart */
		l->ntab.h = th * lh;
		l->ntab_lines = th;
		l->nstrag = (iogplot_rect){ x, y + (th + 1) * lh, w, (lines - th - 1) * lh };
		l->nstrag_lines = lines - th - 1;
	}
}

/* ---- the table's geometry: what its lines and columns are ---- */

typedef struct tgeom {
	iogp_nt_line *lines;
	size_t nl;
	int shown[IOGP_NT_NCOLS];
	double x[IOGP_NT_NCOLS], w[IOGP_NT_NCOLS];   /* a column's left edge and width */
	double lh;
} tgeom;

cairo_t *pl_measure_cr(void)
{
	static cairo_t *cr;
	if (!cr) {
		cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
		cr = cairo_create(s);
		cairo_surface_destroy(s);
	}
	return cr;
}

void pl_fit_middle(cairo_t *cr, const char *s, double maxw, char *out, size_t len)
{
	snprintf(out, len, "%s", s);
	size_t n = strlen(s);
	if (pl_text_w(cr, out) <= maxw || n < 5)
		return;
	/* keep both ends (node names differ at their ends), drop the middle */
	for (size_t keep = n - 1; keep >= 4; keep--) {
		size_t a = (keep + 1) / 2, b = keep - a;
		snprintf(out, len, "%.*s…%s", (int)a, s, s + n - b);
		if (pl_text_w(cr, out) <= maxw)
			return;
	}
}

static void tgeom_free(tgeom *g)
{
	free(g->lines);
	memset(g, 0, sizeof(*g));
}

static int tgeom_build(cairo_t *cr, const iogplot_style *st, const pl_layout *l,
                       const iogplot_frame *f, const iogplot_view *v, tgeom *g)
{
	const iogp_node_table *t = &f->nodes;
	memset(g, 0, sizeof(*g));
	if (!cr)
		cr = pl_measure_cr();
	double fs = l->fs;
	g->lh = round(fs * LINE);
	size_t max = l->ntab_lines > 1 ? (size_t)l->ntab_lines - 1 : 0;
	g->lines = malloc((max ? max : 1) * sizeof(*g->lines));
	if (!g->lines) {
		tgeom_free(g);
		return IOGP_ENOMEM;
	}
	/* the lines picked, not every row ordered (50,000 ranks) */
	g->nl = iogp_node_table_lines_by(t, v->sort_col, v->sort_desc, max, g->lines);
	double want[IOGP_NT_NCOLS];
	char buf[160];
	cairo_save(cr);
	for (int c = 0; c < IOGP_NT_NCOLS; c++) {
		pl_font(cr, st, FONT_REL, 1);
		const char *title = c == IOGP_NT_NAME ? name_title(t) : iogp_nt_col_title(c, IOGP_UNITS_WIDE);
		want[c] = pl_text_w(cr, title) + (c == v->sort_col ? fs * 1.1 : 0);
		pl_font(cr, st, FONT_REL, c == IOGP_NT_NAME);   /* the worst row's name is bold */
		for (size_t i = 0; i < g->nl; i++) {
			if (g->lines[i].row < 0)
				continue;
			iogp_node_table_cell(t, (size_t)g->lines[i].row, c, IOGP_UNITS_WIDE, buf, sizeof(buf));
			want[c] = fmax(want[c], pl_text_w(cr, buf));
		}
	}
	cairo_restore(cr);
	if (!t->has_qd)
		want[IOGP_NT_QD99] = 0;
	want[IOGP_NT_NAME] = fmin(want[IOGP_NT_NAME], fs * 22);
	double used = fs * MARK_W, avail = l->ntab.w, gap = fs * COL_GAP;
	for (int k = -1; k < IOGP_NT_NCOLS; k++) {
		int c = k < 0 ? v->sort_col : priority[k];
		if (c < 0 || c >= IOGP_NT_NCOLS || g->shown[c] || !(want[c] > 0))
			continue;
		double need = want[c] + (c == IOGP_NT_NAME ? fs * 0.6 : gap);
		if (c == IOGP_NT_NAME && used + need > avail)
			need = fmax(avail - used, fs * 4);   /* names get cut */
		if (used + need > avail)
			continue;
		g->shown[c] = 1;
		g->w[c] = need;
		used += need;
	}
	g->shown[IOGP_NT_NAME] = 1;
	if (!(g->w[IOGP_NT_NAME] > 0))
		g->w[IOGP_NT_NAME] = fmax(avail - used, fs * 4);
	/* room left: the numbers spread out, up to twice the gap */
	int nnum = 0;
	for (int c = 1; c < IOGP_NT_NCOLS; c++)
		nnum += g->shown[c];
	double extra = nnum ? fmin(gap, (avail - used) / nnum) : 0;
	double x = l->ntab.x + fs * MARK_W;
	for (int c = 0; c < IOGP_NT_NCOLS; c++) {
		if (!g->shown[c])
			continue;
		if (c)
			g->w[c] += fmax(extra, 0);
		g->x[c] = x;
		x += g->w[c];
	}
	return 0;
}

/* The line of the table at y: -1 the header, i >= 0 line i, -2 none. */
static long table_line_at(const pl_layout *l, const tgeom *g, double y)
{
	if (y < l->ntab.y || y >= l->ntab.y + g->lh * (double)(g->nl + 1))
		return -2;
	return (long)floor((y - l->ntab.y) / g->lh) - 1;
}

/* ---- drawing ---- */

static void draw_table(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                       const iogplot_frame *f, const iogplot_view *v, const tgeom *g)
{
	const iogp_node_table *t = &f->nodes;
	double fs = l->fs, lh = g->lh, y = l->ntab.y;
	char buf[160];
	/* header */
	pl_font(cr, st, FONT_REL, 1);
	for (int c = 0; c < IOGP_NT_NCOLS; c++) {
		if (!g->shown[c])
			continue;
		const char *title = c == IOGP_NT_NAME ? name_title(t) : iogp_nt_col_title(c, IOGP_UNITS_WIDE);
		const char *arrow = c == v->sort_col ? (v->sort_desc ? " ▼" : " ▲") : "";
		snprintf(buf, sizeof(buf), "%s%s", title, arrow);
		pl_rgba(cr, c == v->sort_col ? st->fg : st->dim, 1);
		if (c == IOGP_NT_NAME)
			pl_text(cr, g->x[c], y + lh / 2, 0, 0.5, buf);
		else
			pl_text(cr, g->x[c] + g->w[c], y + lh / 2, 1, 0.5, buf);
	}
	pl_rgba(cr, st->axis, 1);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, l->ntab.x, round(y + lh) - 0.5);
	cairo_line_to(cr, l->ntab.x + l->ntab.w, round(y + lh) - 0.5);
	cairo_stroke(cr);
	pl_font(cr, st, FONT_REL, 0);
	for (size_t i = 0; i < g->nl; i++) {
		double ly = y + lh * (double)(i + 1);
		if (g->lines[i].row < 0) {
			iogp_node_table_gap(t, g->lines[i].gap, IOGP_UNITS_WIDE, buf, sizeof(buf));
			pl_rgba(cr, st->dim, 1);
			pl_text(cr, g->x[IOGP_NT_NAME], ly + lh / 2, 0, 0.5, buf);
			continue;
		}
		size_t r = (size_t)g->lines[i].row;
		int worst = (long)r == t->worst && t->n > 1;
		int sel = f->selected_source && t->rows[r].source == f->selected_source;
		if (worst) {   /* a tinted line with a mark at its start */
			pl_rgba(cr, st->warn, 0.14);
			cairo_rectangle(cr, l->ntab.x, ly, l->ntab.w, lh);
			cairo_fill(cr);
			pl_rgba(cr, st->warn, 1);
			cairo_rectangle(cr, l->ntab.x, ly + 1, fs * 0.3, lh - 2);
			cairo_fill(cr);
		} else if (i % 2) {
			pl_rgba(cr, st->grid, 0.6);
			cairo_rectangle(cr, l->ntab.x, ly, l->ntab.w, lh);
			cairo_fill(cr);
		}
		if (sel) {
			pl_rgba(cr, st->select, 0.8);
			cairo_rectangle(cr, l->ntab.x + 0.5, ly + 0.5, l->ntab.w - 1, lh - 1);
			cairo_stroke(cr);
		}
		for (int c = 0; c < IOGP_NT_NCOLS; c++) {
			if (!g->shown[c])
				continue;
			iogp_node_table_cell(t, r, c, IOGP_UNITS_WIDE, buf, sizeof(buf));
			pl_rgba(cr, worst ? st->warn : c == IOGP_NT_NAME ? st->fg : st->fg, 1);
			if (c == IOGP_NT_NAME) {
				cairo_save(cr);
				cairo_rectangle(cr, g->x[c], ly, g->w[c] - fs * 0.3, lh);
				cairo_clip(cr);
				pl_font(cr, st, FONT_REL, worst);
				pl_text(cr, g->x[c], ly + lh / 2, 0, 0.5, buf);
				pl_font(cr, st, FONT_REL, 0);
				cairo_restore(cr);
			} else {
				pl_text(cr, g->x[c] + g->w[c], ly + lh / 2, 1, 0.5, buf);
			}
		}
	}
}

/* Stragglers: rows by I/O time, bars from 0, the median a dashed line. */
static void draw_stragglers(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                            const iogplot_frame *f)
{
	const iogp_node_table *t = &f->nodes;
	const iogplot_rect *b = &l->nstrag;
	double fs = l->fs, lh = round(fs * LINE);
	size_t n = t->with_io, rows = (size_t)(l->nstrag_lines - 1);
	size_t show = n <= rows ? n : rows > 0 ? rows - 1 : 0;
	size_t *ord = malloc((show ? show : 1) * sizeof(*ord));   /* the first by I/O time */
	if (!ord)
		return;
	iogp_node_table_top(t, IOGP_NT_IOTIME, 1, show, ord);
	char buf[160];
	pl_font(cr, st, FONT_REL, 1);
	pl_rgba(cr, st->fg, 1);
	pl_text(cr, b->x, b->y + lh / 2, 0, 0.5, "Stragglers: time in I/O calls");
	double nw = 0, tw = 0, rw = pl_text_w(cr, "100.00×");
	pl_font(cr, st, FONT_REL, 0);
	for (size_t i = 0; i < show; i++) {
		nw = fmax(nw, pl_text_w(cr, t->rows[ord[i]].name));
		iogp_node_table_cell(t, ord[i], IOGP_NT_IOTIME, IOGP_UNITS_WIDE, buf, sizeof(buf));
		tw = fmax(tw, pl_text_w(cr, buf));
	}
	nw = fmin(nw, b->w * 0.35);
	double x0 = b->x + nw + fs * 0.8 + tw + fs * 0.8, x1 = b->x + b->w - rw - fs * 0.6;
	if (x1 - x0 < fs * 4 || !show) {
		free(ord);
		return;
	}
	double top = t->rows[ord[0]].v[IOGP_NT_IOTIME];
	for (size_t i = 0; i < show; i++) {
		const iogp_nt_row *r = &t->rows[ord[i]];
		double y = b->y + lh * (double)(i + 1), cy = y + lh / 2;
		/* twice the median: insights' straggler ratio */
		int slow = n > 1 && r->v[IOGP_NT_VSMED] >= 2;
		cairo_save(cr);
		cairo_rectangle(cr, b->x, y, nw, lh);
		cairo_clip(cr);
		pl_rgba(cr, slow ? st->warn : st->fg, 1);
		pl_text(cr, b->x + nw, cy, 1, 0.5, r->name);
		cairo_restore(cr);
		iogp_node_table_cell(t, ord[i], IOGP_NT_IOTIME, IOGP_UNITS_WIDE, buf, sizeof(buf));
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, x0 - fs * 0.8, cy, 1, 0.5, buf);
		double len = top > 0 ? r->v[IOGP_NT_IOTIME] / top * (x1 - x0) : 0;
		pl_rgba(cr, slow ? st->warn : st->op[0], slow ? 0.9 : 0.75);
		cairo_rectangle(cr, x0, y + lh * 0.2, fmax(len, 1), lh * 0.6);
		cairo_fill(cr);
		iogp_node_table_cell(t, ord[i], IOGP_NT_VSMED, IOGP_UNITS_WIDE, buf, sizeof(buf));
		pl_rgba(cr, slow ? st->warn : st->fg, 1);
		pl_text(cr, x0 + len + fs * 0.4, cy, 0, 0.5, buf);
	}
	if (show < n) {
		char c[64];
		iogp_node_table_gap(t, n - show, IOGP_UNITS_WIDE, c, sizeof(c));
		c[strlen(c) - strlen(" …")] = '\0';   /* "… 12 more nodes" */
		size_t fi = (size_t)iogp_node_table_fastest(t);   /* n > show: one did I/O */
		iogp_node_table_cell(t, fi, IOGP_NT_IOTIME, IOGP_UNITS_WIDE, buf, sizeof(buf));
		char line[400];
		snprintf(line, sizeof(line), "%s; the fastest, %s: %.32s", c, t->rows[fi].name, buf);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, b->x, b->y + lh * (double)(show + 1) + lh / 2, 0, 0.5, line);
	}
	/* the median across the bars */
	if (top > 0 && t->median_io_s > 0) {
		double mx = round(x0 + t->median_io_s / top * (x1 - x0)) + 0.5;
		double dash[2] = { 3, 3 };
		pl_rgba(cr, st->fg, 0.8);
		cairo_set_line_width(cr, 1);
		cairo_set_dash(cr, dash, 2, 0);
		cairo_move_to(cr, mx, b->y + lh * 0.9);
		cairo_line_to(cr, mx, b->y + lh * (double)(show + 1));
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		char med[48], v[32];
		iogp_fmt_ns(v, sizeof(v), t->median_io_s * 1e9, IOGP_UNITS_WIDE);
		snprintf(med, sizeof(med), "median %s", v);
		pl_font(cr, st, 0.8, 0);
		pl_text(cr, fmin(mx + fs * 0.3, x1), b->y + lh * 0.5, 0, 0.5, med);
	}
	free(ord);
}

static void nodes_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                       const iogplot_frame *f, const iogplot_view *v)
{
	const iogp_node_table *t = &f->nodes;
	double fs = l->fs;
	char line[400], med[32], slow[32], ratio[32];
	/* the straggler in one line, under the title */
	if (t->with_io) {
		size_t ord[1];   /* the slowest: the first by I/O time, no sort */
		if (iogp_node_table_top(t, IOGP_NT_IOTIME, 1, 1, ord) == 1) {
			iogp_fmt_ns(med, sizeof(med), t->median_io_s * 1e9, IOGP_UNITS_WIDE);
			iogp_node_table_cell(t, ord[0], IOGP_NT_IOTIME, IOGP_UNITS_WIDE, slow, sizeof(slow));
			iogp_node_table_cell(t, ord[0], IOGP_NT_VSMED, IOGP_UNITS_WIDE, ratio, sizeof(ratio));
			snprintf(line, sizeof(line), "Median I/O time %s of %zu %s · slowest %s, %s (%s the median)",
			         med, t->with_io, t->scope == IOGP_NT_NODES ? "nodes" : "processes",
			         t->rows[ord[0]].name, slow, ratio);
		} else {
			line[0] = 0;
		}
	} else {
		snprintf(line, sizeof(line), "No time in I/O calls yet");
	}
	pl_font(cr, st, 0.85, 0);
	pl_rgba(cr, st->dim, 1);
	cairo_save(cr);
	cairo_rectangle(cr, 0, 0, l->w - fs * 0.5, l->h);
	cairo_clip(cr);
	pl_text(cr, round(fs * 0.8), round(fs * (PL_TITLE_H + 0.4)), 0, 0.5, line);
	cairo_restore(cr);
	tgeom g;
	if (tgeom_build(cr, st, l, f, v, &g) == 0) {
		cairo_save(cr);
		cairo_rectangle(cr, l->ntab.x - 1, l->ntab.y, l->ntab.w + 2, l->ntab.h);
		cairo_clip(cr);
		draw_table(cr, l, st, f, v, &g);
		cairo_restore(cr);
		tgeom_free(&g);
	}
	if (l->nstrag_lines >= 2) {
		cairo_save(cr);
		cairo_rectangle(cr, l->nstrag.x, l->nstrag.y, l->nstrag.w, l->nstrag.h);
		cairo_clip(cr);
		draw_stragglers(cr, l, st, f);
		cairo_restore(cr);
	}
}

static void nodes_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	const iogp_node_table *t = &f->nodes;
	char by[64];
	if (v->sort_col == IOGP_NT_NAME)
		snprintf(by, sizeof(by), "name%s", v->sort_desc ? ", reversed" : "");
	else
		snprintf(by, sizeof(by), "%s, %s", iogp_nt_col_title(v->sort_col, IOGP_UNITS_WIDE),
		         v->sort_desc ? "largest first" : "smallest first");
	snprintf(buf, len, "%zu %s by %s%s", t->n,
	         t->scope == IOGP_NT_NODES ? (t->n == 1 ? "node" : "nodes") : (t->n == 1 ? "process" : "processes"),
	         by, t->n > 1 && t->worst >= 0 ? " · the largest I/O share marked" : "");
}

static void row_text(char *buf, size_t len, const iogp_node_table *t, size_t r)
{
	char c[IOGP_NT_NCOLS][64];
	for (int k = 1; k < IOGP_NT_NCOLS; k++)
		iogp_node_table_cell(t, r, k, IOGP_UNITS_WIDE, c[k], sizeof(c[k]));
	const iogp_nt_row *row = &t->rows[r];
	char span[32];
	iogp_fmt_ns(span, sizeof(span), row->proc_s * 1e9, IOGP_UNITS_WIDE);
	snprintf(buf, len,
	         "%s%s\nread %s (%s requests/s), write %s (%s requests/s)\n"
	         "latency p50 %s, p99 %s\nI/O time %s: %s of %s%s, %s the median\nqueue depth p99 %s",
	         row->name, (long)r == t->worst && t->n > 1 ? " (the largest I/O share)" : "",
	         c[IOGP_NT_READ_BPS], c[IOGP_NT_READ_OPS], c[IOGP_NT_WRITE_BPS], c[IOGP_NT_WRITE_OPS],
	         c[IOGP_NT_P50], c[IOGP_NT_P99], c[IOGP_NT_IOTIME], c[IOGP_NT_SHARE], span,
	         row->sources > 1 ? " of its processes' time" : "", c[IOGP_NT_VSMED], c[IOGP_NT_QD99]);
}

static int nodes_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                         double x, double y, char *buf, size_t len)
{
	const iogp_node_table *t = &f->nodes;
	iogplot_style st;
	iogplot_style_init(&st, l->dark);
	st.font_size = l->fs;
	int n = 0;
	if (x >= l->ntab.x && x < l->ntab.x + l->ntab.w && y >= l->ntab.y && y < l->ntab.y + l->ntab.h) {
		tgeom g;
		if (tgeom_build(NULL, &st, l, f, v, &g) < 0)
			return 0;
		long i = table_line_at(l, &g, y);
		if (i == -1)
			n = snprintf(buf, len, "Sorted by %s, %s\nclick a column to sort by it; o: next column, "
			             "O: reverse", v->sort_col == IOGP_NT_NAME ? "name" :
			             iogp_nt_col_title(v->sort_col, IOGP_UNITS_WIDE),
			             v->sort_desc ? "largest first" : "smallest first");
		else if (i >= 0 && g.lines[i].row < 0)
			n = snprintf(buf, len, "%zu more between these rows (sorted by the column marked)",
			             g.lines[i].gap);
		else if (i >= 0) {
			row_text(buf, len, t, (size_t)g.lines[i].row);
			n = (int)strlen(buf);
		}
		tgeom_free(&g);
	} else if (l->nstrag_lines >= 2 && x >= l->nstrag.x && x < l->nstrag.x + l->nstrag.w &&
	           y >= l->nstrag.y) {
		double lh = round(l->fs * LINE);
		long i = (long)floor((y - l->nstrag.y) / lh) - 1;
		size_t *ord = i >= 0 ? malloc(((size_t)i + 1) * sizeof(*ord)) : NULL;
		if (ord && (size_t)i < t->with_io && i + 1 < l->nstrag_lines &&
		    iogp_node_table_top(t, IOGP_NT_IOTIME, 1, (size_t)i + 1, ord) == (size_t)i + 1) {
			row_text(buf, len, t, ord[i]);   /* line i of the bars: the first i + 1 rows */
			n = (int)strlen(buf);
		}
		free(ord);
	}
	return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

int iogplot_nodes_header_at(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                            double w, double h, double x, double y)
{
	pl_layout l;
	pl_layout_base(&l, st, IOGPLOT_NODES, w, h);
	nodes_layout(&l, st, f, v);
	if (l.empty)
		return -1;
	tgeom g;
	if (tgeom_build(NULL, st, &l, f, v, &g) < 0)
		return -1;
	int col = -1;
	if (table_line_at(&l, &g, y) == -1)
		for (int c = 0; c < IOGP_NT_NCOLS; c++)
			if (g.shown[c] && x >= g.x[c] && x < g.x[c] + g.w[c])
				col = c;
	tgeom_free(&g);
	return col;
}

static int cmp_heat_node(const void *a, const void *b, void *h)
{
	return strcmp(iogp_heat_node(h, *(const size_t *)a), iogp_heat_node(h, *(const size_t *)b));
}

int iogplot_series_from_heat(iogplot_series *s, const iogp_heat *h)
{
	uint64_t j0, j1, S = iogp_heat_slots(h, &j0, &j1);
	size_t nn = iogp_heat_nodes(h);
	memset(s, 0, sizeof(*s));
	if (!S || !nn)
		return iogplot_series_alloc(s, 0, 0, 0, S ? (double)S / 1e9 : 1);
	size_t nb = (size_t)(j1 - j0 + 1), *idx = malloc(nn * sizeof(*idx));
	if (!idx)
		return IOGP_ENOMEM;
	for (size_t i = 0; i < nn; i++)
		idx[i] = i;
	qsort_r(idx, nn, sizeof(*idx), cmp_heat_node, (void *)h);
	int rc = iogplot_series_alloc(s, nn, nb, (double)(j0 * S) / 1e9, (double)S / 1e9);
	for (size_t k = 0; k < nn && rc >= 0; k++) {
		rc = iogplot_series_set_node(s, k, iogp_heat_node(h, idx[k]));
		for (size_t b = 0; b < nb && rc >= 0; b++) {
			uint64_t ns;
			if (iogp_heat_get(h, idx[k], j0 + b, &ns))
				s->v[0][k * nb + b] = (float)ns;
		}
	}
	free(idx);
	if (rc < 0) {
		iogplot_series_free(s);
		return rc;
	}
	iogplot_series_stats(s);
	return 0;
}

const pl_panel_ops pl_nodes_ops = { nodes_layout, nodes_title, nodes_data, nodes_tooltip };
