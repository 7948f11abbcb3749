/* panel_nodes.c - nodes and ranks side by side: the shared table
 * (iogp_node_table.h) in the columns that fit, sorted as the view says, the
 * worst row marked, the top and bottom rows and a count when there are more;
 * and the stragglers, I/O time against the median, as bars. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

/* Columns by how much they matter when the width runs out. */
static const int priority[IOGP_NT_NCOLS] = {
	IOGP_NT_NAME, IOGP_NT_P99, IOGP_NT_SHARE, IOGP_NT_READ_BPS, IOGP_NT_WRITE_BPS, IOGP_NT_IOTIME,
	IOGP_NT_VSMED, IOGP_NT_P50, IOGP_NT_QD99, IOGP_NT_READ_OPS, IOGP_NT_WRITE_OPS,
};

#define MARK_W 2     /* "! " worst, "> " selected */
/* A key's frame applies the nodes' logged bins for at most this long; the
 * rest wait for the next data frame (live at 50,000 sources the whole
 * settle took 16-103 ms of a key's frame). */
#define KEY_SETTLE_NS 10000000ull
#define NAME_MAX_W 28

static unsigned nodes_stopped;   /* builds given up for a key (panel_nodes_stopped) */
/* What the frames' own table (top_frame.nodes) holds: a whole build, and
 * of which node's ranks ("" every node's), as a stopped build shows it. */
static struct {
	int whole, col;   /* col: the column a lazy build filled for every row */
	char node[128];
} held;

/* Whether t, the frames' own table, is a whole build of the rows o asks
 * (node: whose ranks, "" every node's): what a stopped build may show. */
static int held_stands(const iogp_node_table *t, const iogp_nt_opts *o, const char *node)
{
	return held.whole && held.col == o->lazy_col && t->rows && t->scope == o->scope &&
	       t->layer == o->layer &&
	       t->window_s == (o->window_s > 0 ? o->window_s : 0) && !strcmp(held.node, node);
}

unsigned panel_nodes_stopped(void)
{
	return nodes_stopped;
}

int panel_nodes_table(const top_frame *f, iogp_node_table *t, size_t **order)
{
	const top_view *v = f->v;
	iogp_nt_opts o = { .scope = v->rows, .layer = v->layer, .window_s = view_window(v) };
	char node[128] = "";
	if (v->sel == IOGP_SEL_NODE) {
		o.scope = IOGP_NT_SOURCES;
		snprintf(node, sizeof(node), "%s", v->sel_node);
		o.node = node;
	} else if (v->sel == IOGP_SEL_SOURCE) {
		size_t i;
		iogp_source_info si;
		if (iogp_model_source_index(f->m, v->sel_source, &i) == 0 &&
		    iogp_model_source(f->m, i, &si) == 0) {
			o.scope = IOGP_NT_SOURCES;
			snprintf(node, sizeof(node), "%s", si.node ? si.node : "");
			o.node = node;
		}
	}
	if (order)
		*order = NULL;
	/* the frames' own table: the rows' other columns as they are drawn
	 * (draw_table), only the order's column and the I/O time for every row */
	if (t == f->nodes) {
		o.lazy = 1;
		o.lazy_col = v->sort_col;
	}
	/* only where frames follow by themselves (live, or a replay that
	 * plays): a paused view or a replay at its end would keep the key's
	 * partial table (check_top_nodes, 3,000 nodes under ASan, a replay at
	 * its end: "median I/O time ... of 2,9xx nodes" stayed on screen) */
	int moving = f->st != NULL && !(f->st->f.paused || f->st->f.at_end);
	if (f->key && t == f->nodes && moving)
		o.settle_ns = KEY_SETTLE_NS;
	/* a data frame gives way to a waiting key (f->stop): it builds aside
	 * and, stopped, shows the table the last frame built, if that one is
	 * of these rows (the key's frame comes at once; live at 50,000 sources
	 * such a build, its settle and 3,125 rows, took 40-80 ms) */
	int rc;
	if (t == f->nodes && f->nodes_next && f->stop && held_stands(t, &o, node)) {
		o.stop = f->stop;
		o.stop_arg = f->stop_arg;
		rc = iogp_node_table_rebuild(f->nodes_next, f->m, &o);
		if (rc == 0) {
			iogp_node_table built = *f->nodes_next;
			*f->nodes_next = *t;
			*t = built;
		} else if (rc == IOGP_ESTOPPED) {
			nodes_stopped++;
			rc = 0;
		}
	} else {
		/* the frame's own table: its memory reused (a fresh one for a snapshot) */
		rc = t == f->nodes ? iogp_node_table_rebuild(t, f->m, &o) : iogp_node_table_build(t, f->m, &o);
		if (t == f->nodes) {
			held.whole = rc == 0;
			held.col = o.lazy_col;
			snprintf(held.node, sizeof(held.node), "%s", node);
		}
	}
	if (rc < 0 || !order)
		return rc;
	*order = malloc((t->n ? t->n : 1) * sizeof(**order));
	if (!*order)
		return IOGP_ENOMEM;
	iogp_node_table_order(t, v->sort_col, v->sort_desc, *order);
	return 0;
}

/* Which columns fit in w: width per column (0: left out). */
static void columns(const top_frame *f, const iogp_node_table *t, const iogp_nt_line *lines, size_t nl,
                    int w, int cw[IOGP_NT_NCOLS])
{
	int want[IOGP_NT_NCOLS];
	char buf[64];
	for (int c = 0; c < IOGP_NT_NCOLS; c++) {
		want[c] = (int)strlen(iogp_nt_col_title(c, IOGP_UNITS_CELL)) + (c == f->v->sort_col);
		for (size_t i = 0; i < nl; i++) {
			if (lines[i].row < 0)
				continue;
			int n = iogp_node_table_cell(t, (size_t)lines[i].row, c, IOGP_UNITS_CELL, buf, sizeof(buf));
			want[c] = n > want[c] ? n : want[c];
		}
	}
	if (want[IOGP_NT_NAME] > NAME_MAX_W)
		want[IOGP_NT_NAME] = NAME_MAX_W;
	if (!t->has_qd)
		want[IOGP_NT_QD99] = 0;   /* the layer has none */
	memset(cw, 0, IOGP_NT_NCOLS * sizeof(*cw));
	int used = MARK_W;
	/* the sort column first, then by priority */
	for (int k = -1; k < IOGP_NT_NCOLS; k++) {
		int c = k < 0 ? f->v->sort_col : priority[k];
		if (c < 0 || c >= IOGP_NT_NCOLS || cw[c] || !want[c])
			continue;
		int need = want[c] + 1;   /* a space before the next (numbers: before them) */
		if (c == IOGP_NT_NAME && used + need > w)
			need = w - used > 4 ? w - used : 4;   /* the names get cut */
		if (used + need > w)
			continue;
		cw[c] = need;
		used += need;
	}
	if (!cw[IOGP_NT_NAME]) {   /* without a name nothing reads */
		cw[IOGP_NT_NAME] = w - MARK_W > 4 ? w - MARK_W : 4;
		for (int c = 1; c < IOGP_NT_NCOLS; c++)
			cw[c] = 0;
		return;
	}
	/* room left: up to two more spaces between the numbers */
	int nnum = 0;
	for (int c = 1; c < IOGP_NT_NCOLS; c++)
		nnum += cw[c] > 0;
	int extra = nnum ? (w - used) / nnum : 0;
	extra = extra > 2 ? 2 : extra;
	for (int c = 1; c < IOGP_NT_NCOLS && extra > 0; c++)
		if (cw[c])
			cw[c] += extra;
}

static int selected_row(const top_frame *f, const iogp_nt_row *r)
{
	const top_view *v = f->v;
	if (v->sel == IOGP_SEL_SOURCE)
		return r->source == v->sel_source;
	return 0;
}

/* The table in r: a header line, then its lines. Returns its width. */
static int draw_table(const top_frame *f, top_surf *s, top_rect r, iogp_node_table *t)
{
	if (r.h < 2 || r.w < 10)
		return 0;
	size_t max = (size_t)(r.h - 1);
	iogp_nt_line *lines = malloc(max * sizeof(*lines));
	if (!lines)
		return 0;
	size_t nl = iogp_node_table_lines_by(t, f->v->sort_col, f->v->sort_desc, max, lines);
	size_t *shown = malloc((nl ? nl : 1) * sizeof(*shown)), ns = 0;
	for (size_t i = 0; shown && i < nl; i++)
		if (lines[i].row >= 0)
			shown[ns++] = (size_t)lines[i].row;
	if (shown)   /* a lazy table's rows on screen made whole */
		iogp_node_table_fill(t, f->m, shown, ns);
	free(shown);
	int cw[IOGP_NT_NCOLS];
	columns(f, t, lines, nl, r.w, cw);
	/* header: titles right-aligned over numbers, the sort column marked */
	int x = r.x + MARK_W, width = MARK_W;
	for (int c = 0; c < IOGP_NT_NCOLS; c++) {
		if (!cw[c])
			continue;
		const char *title = c == IOGP_NT_NAME ? (t->scope == IOGP_NT_NODES ? "node" : "process")
		                                      : iogp_nt_col_title(c, IOGP_UNITS_CELL);
		int tl = (int)strlen(title), arrow = c == f->v->sort_col;
		int tx = c == IOGP_NT_NAME ? x : x + cw[c] - tl - arrow;
		if (arrow) {
			draw_glyph(s, r.y, c == IOGP_NT_NAME ? tx + tl : tx, ST_LABEL,
			           f->v->sort_desc ? 0x25bc : 0x25b2, f->v->sort_desc ? 'v' : '^');
			if (c != IOGP_NT_NAME)
				tx++;
		}
		draw_text(s, r.y, tx, tl, ST_LABEL, title);
		x += cw[c];
		width += cw[c];
	}
	char buf[160];
	for (size_t i = 0; i < nl; i++) {
		int y = r.y + 1 + (int)i;
		if (lines[i].row < 0) {
			iogp_node_table_gap(t, lines[i].gap, IOGP_UNITS_CELL, buf, sizeof(buf));
			draw_text(s, y, r.x + MARK_W, r.w - MARK_W, ST_DIM, buf);
			continue;
		}
		size_t row = (size_t)lines[i].row;
		int worst = (long)row == t->worst && t->n > 1;
		int st = worst ? ST_BAD : ST_NORMAL;
		if (worst)
			draw_text(s, y, r.x, MARK_W, ST_BAD, "! ");
		else if (selected_row(f, &t->rows[row]))
			draw_text(s, y, r.x, MARK_W, ST_LABEL, "> ");
		x = r.x + MARK_W;
		for (int c = 0; c < IOGP_NT_NCOLS; c++) {
			if (!cw[c])
				continue;
			int n = iogp_node_table_cell(t, row, c, IOGP_UNITS_CELL, buf, sizeof(buf));
			if (c == IOGP_NT_NAME)
				draw_text(s, y, x, cw[c] - 1 > 0 ? cw[c] - 1 : cw[c], worst ? ST_BAD : ST_LABEL, buf);
			else
				draw_text(s, y, x + (cw[c] > n ? cw[c] - n : 0), cw[c], st, buf);
			x += cw[c];
		}
	}
	free(lines);
	return width;
}

/* The stragglers in r: the rows by I/O time, a bar each with the median
 * marked, and the ratio to it. */
static void draw_stragglers(top_surf *s, top_rect r, const iogp_node_table *t)
{
	if (r.h < 2 || r.w < 24)
		return;
	size_t n = t->with_io, rows = (size_t)(r.h - 1);
	/* the first rows by I/O time, not every row ordered */
	size_t *ord = malloc(rows * sizeof(*ord));
	if (!ord)
		return;
	iogp_node_table_top(t, IOGP_NT_IOTIME, 1, n < rows ? n : rows, ord);
	draw_text(s, r.y, r.x, r.w, ST_LABEL, "stragglers: I/O time, | the median");
	int nw = 4;
	for (size_t i = 0; i < n && i < rows; i++) {
		int l = (int)strlen(t->rows[ord[i]].name);
		nw = l > nw ? l : nw;
	}
	if (nw > 20)
		nw = 20;
	int tw = 7, rw = 7, bw = r.w - MARK_W - nw - 1 - tw - 1 - rw - 1;
	if (bw > 50)
		bw = 50;
	if (bw < 4) {
		free(ord);
		return;
	}
	double top = n ? t->rows[ord[0]].v[IOGP_NT_IOTIME] : 0;
	size_t show = n <= rows ? n : rows - 1;
	char buf[256];
	for (size_t i = 0; i < show; i++) {
		const iogp_nt_row *row = &t->rows[ord[i]];
		int y = r.y + 1 + (int)i, x = r.x;
		/* twice the median: insights' straggler ratio; the slowest marked */
		int worst = n > 1 && row->v[IOGP_NT_VSMED] >= 2;
		draw_text(s, y, x, MARK_W, ST_BAD, worst && i == 0 ? "! " : "  ");
		x += MARK_W;
		draw_text(s, y, x, nw, worst ? ST_BAD : ST_LABEL, row->name);
		x += nw + 1;
		int k = iogp_node_table_cell(t, ord[i], IOGP_NT_IOTIME, IOGP_UNITS_CELL, buf, sizeof(buf));
		draw_text(s, y, x + (tw > k ? tw - k : 0), tw, ST_NORMAL, buf);
		x += tw + 1;
		double len = top > 0 ? row->v[IOGP_NT_IOTIME] / top * bw : 0;
		draw_hbar(s, y, x, bw, len, worst ? ST_BAD : ST_BOTH);
		if (top > 0 && t->median_io_s > 0) {
			int mx = (int)floor(t->median_io_s / top * bw);
			if (mx >= bw)
				mx = bw - 1;
			draw_glyph(s, y, x + mx, ST_WARN, 0x2502, '|');
		}
		x += bw + 1;
		k = iogp_node_table_cell(t, ord[i], IOGP_NT_VSMED, IOGP_UNITS_CELL, buf, sizeof(buf));
		draw_text(s, y, x + (rw > k ? rw - k : 0), rw, worst ? ST_BAD : ST_NORMAL, buf);
	}
	if (show < n) {
		char c[64], last[64];
		size_t fi = (size_t)iogp_node_table_fastest(t);   /* n > show: one did I/O */
		const iogp_nt_row *fast = &t->rows[fi];
		iogp_node_table_gap(t, n - show, IOGP_UNITS_CELL, c, sizeof(c));
		c[strlen(c) - 4] = '\0';   /* "... 12 more nodes" */
		iogp_node_table_cell(t, fi, IOGP_NT_IOTIME, IOGP_UNITS_CELL, last, sizeof(last));
		snprintf(buf, sizeof(buf), "%s; the fastest %.20s %s", c, fast->name, last);
		draw_text(s, r.y + 1 + (int)show, r.x + MARK_W, r.w - MARK_W, ST_DIM, buf);
	}
	free(ord);
}

void panel_nodes_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	iogp_node_table own, *tp = f->nodes ? f->nodes : &own;
	int rc = panel_nodes_table(f, tp, NULL);
	iogp_node_table t = *tp;   /* a copy to read: tp keeps the memory */
	char right[128], w[32];
	double win = view_window(f->v);
	if (win > 0)
		snprintf(w, sizeof(w), "last %gs", win);
	else
		snprintf(w, sizeof(w), "since start");
	char pend[48] = "";
	if (t.unsettled)   /* histogram columns behind until the next data frame */
		snprintf(pend, sizeof(pend), ", %zu settling", t.unsettled);
	snprintf(right, sizeof(right), "%s by %s %s, %s%s", t.scope == IOGP_NT_NODES ? "nodes" : "ranks",
	         iogp_nt_col_title(f->v->sort_col, IOGP_UNITS_CELL), f->v->sort_desc ? "desc" : "asc", w,
	         pend);
	panel_title(f, s, r, IOGP_PANEL_NODES, NULL, right);
	if (rc < 0 || !t.n) {
		if (r.h > 1)
			draw_text(s, r.y + 1, r.x, r.w, ST_DIM, rc < 0 ? iogp_strerror(rc) : "no sources yet");
		if (tp == &own)
			iogp_node_table_free(&own);
		return;
	}
	int y = r.y + 1;
	if (r.h > 2) {   /* the straggler in one line */
		char line[512], med[32], slow[32], ratio[32];
		size_t ord[1];   /* the slowest: the first by I/O time, no sort */
		if (t.with_io && iogp_node_table_top(&t, IOGP_NT_IOTIME, 1, 1, ord) == 1) {
			iogp_fmt_ns(med, sizeof(med), t.median_io_s * 1e9, IOGP_UNITS_CELL);
			iogp_node_table_cell(&t, ord[0], IOGP_NT_IOTIME, IOGP_UNITS_CELL, slow, sizeof(slow));
			iogp_node_table_cell(&t, ord[0], IOGP_NT_VSMED, IOGP_UNITS_CELL, ratio, sizeof(ratio));
			snprintf(line, sizeof(line), "median I/O time %s of %zu %s; slowest %s %s (%s the median)",
			         med, t.with_io, t.scope == IOGP_NT_NODES ? "nodes" : "processes",
			         t.rows[ord[0]].name, slow, ratio);
		} else {
			snprintf(line, sizeof(line), "no time in I/O calls %s", w);
		}
		draw_text(s, y++, r.x, r.w, ST_DIM, line);
	}
	top_rect body = { y, r.x, r.y + r.h - y, r.w };
	/* stragglers beside the table when it leaves room, below it when tall */
	size_t need = t.n + 1;
	if (body.w >= 150) {
		top_rect a = body, b = body;
		a.w = body.w * 55 / 100;
		b.x = a.x + a.w + 2;
		b.w = body.w - a.w - 2;
		draw_table(f, s, a, &t);
		draw_stragglers(s, b, &t);
	} else if (body.h >= 12) {
		int th = (int)need < body.h * 6 / 10 ? (int)need : body.h * 6 / 10;
		top_rect a = body, b = body;
		a.h = th;
		b.y = a.y + th + 1;
		b.h = body.h - th - 1;
		draw_table(f, s, a, &t);
		draw_stragglers(s, b, &t);
	} else {
		draw_table(f, s, body, &t);
	}
	if (tp == &own)
		iogp_node_table_free(&own);
}
