/* plot_probe.c - the slowdown panel: each operation's factor over time on a
 * log axis (the drawn probe: the selected node's, else the worst now), its
 * current factor in large type with the statistic and the expected time,
 * and, with probes on several nodes, a node x operation table of factors
 * beside whether the nodes agree. Words, axis and agreement come from
 * iogp_probe_view.h, as iogram-top's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

#define HIST_MAX 512      /* reports the model keeps per probe */
#define LINE 1.35         /* table line height, in font sizes */
#define NOW_W 14.0        /* the current factors' column, in font sizes */
#define ROW_FULL 2.7      /* an operation there: name, factor, detail line */
#define ROW_SHORT 1.9     /* ... without the detail line */
#define FONT_REL 0.85
#define NODE_MAX 12.0     /* the table's node column at most, font sizes */
#define AGREE_MIN 20.0    /* the agreement column at least, font sizes */

/* ---- the frame's copy ---- */

void pl_frame_probes_free(iogplot_frame *f)
{
	free(f->probes);
	free(f->probe_text);
	free(f->probe_hist);
	f->probes = NULL;
	f->probe_text = NULL;
	f->probe_hist = NULL;
	f->nprobe_hist = 0;
}

static const char *keep(char *arena, size_t *at, const char *s)
{
	size_t n = strlen(s ? s : "") + 1;
	memcpy(arena + *at, s ? s : "", n);
	*at += n;
	return arena + *at - n;
}

/* The node the selection names (a source: its node), "" for all. */
static void sel_node(const iogp_model *m, const iogp_sel *sel, char *node, size_t len)
{
	node[0] = 0;
	if (sel && sel->kind == IOGP_SEL_NODE && sel->node) {
		snprintf(node, len, "%s", sel->node);
	} else if (sel && sel->kind == IOGP_SEL_SOURCE) {
		size_t i;
		iogp_source_info si;
		if (iogp_model_source_index(m, sel->source, &i) == 0 && iogp_model_source(m, i, &si) == 0)
			snprintf(node, len, "%s", si.node ? si.node : "");
	}
}

int pl_frame_probes(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel)
{
	pl_frame_probes_free(f);
	if (!iogp_model_probes(m, NULL, 0))
		return 0;
	iogp_probe_set *set = malloc(sizeof(*set));
	if (!set)
		return IOGP_ENOMEM;
	char node[256];
	sel_node(m, sel, node, sizeof(node));
	iogp_probe_set_get(set, m, node);
	/* the strings live in the model: one block for all of them */
	size_t len = 1;
	for (size_t i = 0; i < set->n; i++) {
		const iogp_probe *p = &set->p[i];
		len += strlen(p->node) + strlen(p->dir) + strlen(p->fs) + strlen(p->statistic) +
		       strlen(p->expected) + 5;
		for (uint32_t o = 0; o < p->nops; o++)
			len += strlen(p->op[o]) + 1;
	}
	char *text = malloc(len);
	iogp_probe_point *hist = set->shown >= 0 ? malloc(HIST_MAX * sizeof(*hist)) : NULL;
	if (!text || (set->shown >= 0 && !hist)) {
		free(set);
		free(text);
		free(hist);
		return IOGP_ENOMEM;
	}
	size_t at = 0;
	for (size_t i = 0; i < set->n; i++) {
		iogp_probe *p = &set->p[i];
		p->node = keep(text, &at, p->node);
		p->dir = keep(text, &at, p->dir);
		p->fs = keep(text, &at, p->fs);
		p->statistic = keep(text, &at, p->statistic);
		p->expected = keep(text, &at, p->expected);
		for (uint32_t o = 0; o < p->nops; o++)
			p->op[o] = keep(text, &at, p->op[o]);
	}
	f->probes = set;
	f->probe_text = text;
	f->probe_hist = hist;
	if (hist)
		f->nprobe_hist = iogp_model_probe_history(m, set->p[set->shown].src, 0, hist, HIST_MAX);
	return 0;
}

/* ---- geometry shared by the layout, the drawing and the tooltip ---- */

typedef struct pgeo {
	const iogp_probe *p;       /* the drawn probe */
	const char *ops[IOGP_PROBE_MAX_OPS];
	size_t nops;
	iogp_probe_axis ax;
	double lo, hi;             /* time shown */
	iogplot_rect plot, now;    /* the lines; the current factors beside them */
	double row;                /* of one operation in now */
	int detail;                /* the statistic / expected line under each */
	iogplot_rect table, agree; /* nodes x ops and the agreement (w 0: not shown) */
	int rows;                  /* node rows in the table (the header aside) */
	double lh, nodew, colw;    /* line height, node column, op columns */
} pgeo;

static double end_of(const iogplot_frame *f, size_t i)
{
	double t = (double)f->probe_hist[i].wall_ns / 1e9;
	if (i + 1 < f->nprobe_hist)
		return (double)f->probe_hist[i + 1].wall_ns / 1e9;
	return f->t_now > t ? f->t_now : t;   /* the newest holds until now */
}

/* The smallest and largest factor of the drawn probe in [lo, hi] (and now). */
static void range(const iogplot_frame *f, const iogp_probe *p, double lo, double hi, double *mn,
                  double *mx)
{
	*mn = INFINITY;
	*mx = -INFINITY;
	for (size_t i = 0; i < f->nprobe_hist; i++) {
		if (end_of(f, i) < lo || (double)f->probe_hist[i].wall_ns / 1e9 > hi)
			continue;
		for (uint32_t o = 0; o < p->nops; o++)
			if (f->probe_hist[i].milli[o] >= 0) {
				*mn = fmin(*mn, f->probe_hist[i].milli[o] / 1000.0);
				*mx = fmax(*mx, f->probe_hist[i].milli[o] / 1000.0);
			}
	}
	for (uint32_t o = 0; o < p->nops; o++)
		if (p->slowdown_milli[o] >= 0) {
			*mn = fmin(*mn, p->slowdown_milli[o] / 1000.0);
			*mx = fmax(*mx, p->slowdown_milli[o] / 1000.0);
		}
}

/* Whether the nodes' table and agreement fit below the lines, and where. */
static void place_nodes(pgeo *g, const pl_layout *l, const iogplot_style *st,
                        const iogp_probe_set *set)
{
	double fs = l->fs, below = round(fs * (PL_BOTTOM + 0.6));
	cairo_t *cr = pl_measure_cr();
	pl_font(cr, st, FONT_REL, 1);
	g->nodew = pl_text_w(cr, "node");
	g->colw = pl_text_w(cr, "00.0x");
	for (size_t k = 0; k < g->nops; k++)
		g->colw = fmax(g->colw, pl_text_w(cr, g->ops[k]));
	for (size_t i = 0; i < set->n; i++)   /* bold: the drawn probe's row */
		g->nodew = fmax(g->nodew, pl_text_w(cr, set->p[i].node));
	g->nodew = fmin(g->nodew, fs * NODE_MAX) + fs;
	g->colw += fs;
	double tw = ceil(g->nodew + g->colw * (double)g->nops);
	/* the lines keep 8 lines' height; the table takes what it needs of the rest */
	int fit = (int)floor((g->plot.h - fs * 8 - below) / g->lh);
	int want = (int)set->n + 1 > (int)g->nops + 1 ? (int)set->n + 1 : (int)g->nops + 1;
	int lines = want < fit ? want : fit;
	double x = round(fs * 0.8), right = l->w - fs * 0.8;
	double top = g->plot.y + g->plot.h - lines * g->lh;   /* the table's top */
	if (g->now.y + g->now.h > top)
		right = g->now.x - fs;   /* beside the current factors, not under them */
	if (lines < 3 || tw > right - x)
		return;
	g->rows = lines - 1 < (int)set->n ? lines - 1 : (int)set->n;
	g->plot.h -= lines * g->lh + below;
	double y = g->plot.y + g->plot.h + below;
	g->table = (iogplot_rect){ x, y, tw, lines * g->lh };
	if (right - (x + tw + fs * 2) >= fs * AGREE_MIN)
		g->agree = (iogplot_rect){ x + tw + fs * 2, y, right - (x + tw + fs * 2), lines * g->lh };
}

static int geo(pgeo *g, const pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
               const iogplot_view *v)
{
	memset(g, 0, sizeof(*g));
	const iogp_probe_set *set = f->probes;
	if (!set || set->shown < 0)
		return -1;
	double fs = l->fs;
	g->p = &set->p[set->shown];
	g->nops = iogp_probe_ops(set, g->ops, IOGP_PROBE_MAX_OPS);
	g->lh = round(fs * LINE);
	iogplot_view_time(v, f, &g->lo, &g->hi);
	/* the current factors right of the lines, as tall as the ops need */
	double nw = round(fs * (l->w >= fs * 44 ? NOW_W : 10.5));
	pl_layout base;   /* the plot box before this panel's layout took from it */
	iogplot_style bst = *st;
	bst.font_size = fs;
	pl_layout_base(&base, &bst, l->panel, l->w, l->h);
	g->plot = base.sub[0].plot;
	g->plot.w = fmax(10, l->w - g->plot.x - nw - round(fs * 1.6));
	g->now = (iogplot_rect){ l->w - nw - round(fs * 0.8), g->plot.y, nw, 0 };
	double room = l->h - g->now.y - fs * 0.6;   /* down to the panel's bottom */
	g->detail = l->w >= fs * 44 && room >= fs * ROW_FULL * (double)g->nops;
	g->row = round(fs * (g->detail ? ROW_FULL : ROW_SHORT));
	if (g->nops && g->row * (double)g->nops > room)
		g->row = floor(room / (double)g->nops);
	g->now.h = g->row * (double)g->nops;
	if (set->n > 1)
		place_nodes(g, l, st, set);
	double mn, mx;
	range(f, g->p, g->lo, g->hi, &mn, &mx);
	int ticks = (int)floor(g->plot.h / (fs * 1.8));
	iogp_probe_axis_fit(&g->ax, mn, mx, ticks < 2 ? 2 : ticks);
	return 0;
}

/* Each operation's colour: the style's read and write for read and write,
 * then colours of their own, by the operation's place in the set. */
static iogplot_rgba op_colour(const iogplot_style *st, size_t k)
{
	static const unsigned light[] = { 0x2e9a3c, 0x7a3fb8, 0x00838f, 0x8d6e00, 0x6d4c41, 0x546e7a };
	static const unsigned dark[] = { 0x62d36b, 0xc9a0ff, 0x4dd0e1, 0xd4b106, 0xc89f83, 0x90a4ae };
	if (k < 2)
		return st->op[k];
	unsigned c = (st->dark ? dark : light)[(k - 2) % 6];
	return (iogplot_rgba){ (c >> 16 & 255) / 255.0, (c >> 8 & 255) / 255.0, (c & 255) / 255.0, 1 };
}

static iogplot_rgba level_colour(const iogplot_style *st, int64_t milli)
{
	int lv = iogp_probe_level(milli);
	return lv == 2 ? st->warn : lv == 1 ? st->accent : lv == 0 ? st->fg : st->dim;
}

/* ---- the panel ---- */

static void probe_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                         const iogplot_view *v)
{
	pgeo g;
	if (geo(&g, l, st, f, v) < 0) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no slowdown probes yet\n"
		         "start one on a node, against the file system to watch:\n"
		         "iogram probe DIR --endpoint tcp://VIEWER:PORT");
		return;
	}
	pl_sub *s = &l->sub[0];
	s->plot = g.plot;
	s->ylabels = 0;   /* the factors' own ticks (probe_data) */
	s->x = (pl_axis){ g.lo, g.hi, g.plot.x, g.plot.x + g.plot.w, 0, PL_TIME };
	s->y = (pl_axis){ g.ax.lo, g.ax.hi, g.plot.y + g.plot.h, g.plot.y, 1, PL_PLAIN };
}

static void probe_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	const iogp_probe_set *set = f->probes;
	if (!set || set->shown < 0) {
		snprintf(buf, len, "no probes");
		return;
	}
	char stat[160], where[400];
	iogp_probe_title(stat, sizeof(stat), &set->p[set->shown]);
	iogp_probe_where(where, sizeof(where), &set->p[set->shown]);
	int n = snprintf(buf, len, "%s · %s", stat, where);
	if (set->worst && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " · the worst of %zu probes now", set->n);
}

/* The y grid with the factors' labels and the dashed 1x line. */
static void y_axis(cairo_t *cr, const pl_sub *s, const pgeo *g, const iogplot_style *st, double fs)
{
	char lab[24];
	cairo_set_line_width(cr, 1);
	pl_font(cr, st, FONT_REL, 0);
	for (int k = 0; k < g->ax.nticks; k++) {
		double y = round(pl_map(&s->y, g->ax.tick[k])) + 0.5;
		pl_rgba(cr, st->grid, 1);
		cairo_move_to(cr, s->plot.x, y);
		cairo_line_to(cr, s->plot.x + s->plot.w, y);
		cairo_stroke(cr);
		iogp_probe_tick_label(lab, sizeof(lab), g->ax.tick[k]);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, s->plot.x - fs * 0.4, y, 1, 0.5, lab);
	}
	double y1 = round(pl_map(&s->y, 1)) + 0.5, dash[2] = { 5, 4 };
	pl_rgba(cr, st->axis, 1);
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, s->plot.x, y1);
	cairo_line_to(cr, s->plot.x + s->plot.w, y1);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
}

/* Operation o of the drawn probe as steps: a factor holds until the next report. */
static void op_line(cairo_t *cr, const pl_sub *s, const iogplot_frame *f, uint32_t o)
{
	int open = 0;
	double last = -1e9;
	for (size_t i = 0; i < f->nprobe_hist; i++) {
		int32_t mv = f->probe_hist[i].milli[o];
		if (mv < 0) {
			open = 0;
			continue;
		}
		double y = pl_map(&s->y, mv / 1000.0);
		double xa = pl_map(&s->x, (double)f->probe_hist[i].wall_ns / 1e9), xb = pl_map(&s->x, end_of(f, i));
		if (open)
			cairo_line_to(cr, xa, y);
		else
			cairo_move_to(cr, xa, y);
		cairo_line_to(cr, xb, y);
		open = 1;
		if (xa - last >= 6) {   /* where the reports are, when they stand apart */
			cairo_stroke(cr);
			cairo_arc(cr, xa, y, 2.2, 0, 2 * M_PI);
			cairo_fill(cr);
			cairo_move_to(cr, xb, y);
			last = xa;
		}
	}
	cairo_stroke(cr);
}

static void fmt_ns(char *buf, size_t len, int64_t ns)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else
		iogp_fmt_ns(buf, len, (double)ns, IOGP_UNITS_WIDE);
}

/* Each operation now: its colour and name, the factor in large type
 * coloured by how bad it is, the statistic against the expected time. */
static void now_column(cairo_t *cr, const pgeo *g, const iogplot_style *st, double fs)
{
	for (size_t k = 0; k < g->nops; k++) {
		int o = iogp_probe_op_index(g->p, g->ops[k]);
		int64_t mv = o >= 0 ? g->p->slowdown_milli[o] : -1;
		double y = g->now.y + (double)k * g->row, mid = y + (g->detail ? fs * 1.0 : g->row / 2);
		char fac[24], a[32], b[32], det[80];
		pl_rgba(cr, op_colour(st, k), 1);
		cairo_rectangle(cr, g->now.x, round(mid - fs * 0.4), round(fs * 0.8), round(fs * 0.8));
		cairo_fill(cr);
		pl_font(cr, st, 0.95, 0);
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, g->now.x + fs * 1.2, mid, 0, 0.5, g->ops[k]);
		iogp_probe_factor(fac, sizeof(fac), mv);
		pl_font(cr, st, g->row >= fs * 1.8 ? 1.9 : 1.3, 1);
		pl_rgba(cr, level_colour(st, mv), 1);
		pl_text(cr, g->now.x + g->now.w, mid, 1, 0.5, fac);
		if (!g->detail || o < 0)
			continue;
		fmt_ns(a, sizeof(a), g->p->stat_ns[o]);
		fmt_ns(b, sizeof(b), g->p->expected_ns[o]);
		snprintf(det, sizeof(det), "%s / %s", a, b);
		pl_font(cr, st, 0.8, 0);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, g->now.x + fs * 1.2, mid + fs * 1.25, 0, 0.5, det);
	}
}

/* Nodes x operations: each probe's factors now, the drawn one marked. */
static void node_table(cairo_t *cr, const pgeo *g, const iogplot_style *st, const iogp_probe_set *set,
                       double fs)
{
	const iogplot_rect *t = &g->table;
	char cell[96];
	pl_font(cr, st, FONT_REL, 1);
	pl_rgba(cr, st->dim, 1);
	pl_text(cr, t->x, t->y + g->lh / 2, 0, 0.5, "node");
	for (size_t k = 0; k < g->nops; k++) {
		pl_rgba(cr, op_colour(st, k), 1);
		pl_text(cr, t->x + g->nodew + g->colw * (double)(k + 1) - fs * 0.5, t->y + g->lh / 2, 1, 0.5,
		        g->ops[k]);
	}
	for (int r = 0; r < g->rows; r++) {
		double y = t->y + (r + 1) * g->lh, mid = y + g->lh / 2;
		int more = r == g->rows - 1 && (size_t)g->rows < set->n;
		if (more) {
			snprintf(cell, sizeof(cell), "+%zu more", set->n - (size_t)r);
			pl_font(cr, st, FONT_REL, 0);
			pl_rgba(cr, st->dim, 1);
			pl_text(cr, t->x, mid, 0, 0.5, cell);
			break;
		}
		const iogp_probe *p = &set->p[r];
		int drawn = r == set->shown;
		if (drawn) {
			pl_rgba(cr, st->select, 0.07);
			cairo_rectangle(cr, t->x - fs * 0.3, y, t->w + fs * 0.3, g->lh);
			cairo_fill(cr);
		}
		pl_font(cr, st, FONT_REL, drawn);
		pl_rgba(cr, st->fg, 1);
		pl_fit_middle(cr, p->node, g->nodew - fs, cell, sizeof(cell));
		pl_text(cr, t->x, mid, 0, 0.5, cell);
		for (size_t k = 0; k < g->nops; k++) {
			int o = iogp_probe_op_index(p, g->ops[k]);
			int64_t mv = o >= 0 ? p->slowdown_milli[o] : -1;
			double x1 = t->x + g->nodew + g->colw * (double)(k + 1);
			if (iogp_probe_level(mv) > 0) {
				pl_rgba(cr, level_colour(st, mv), 0.16);
				cairo_rectangle(cr, x1 - g->colw + fs * 0.2, y + 1, g->colw - fs * 0.2, g->lh - 2);
				cairo_fill(cr);
			}
			iogp_probe_factor(cell, sizeof(cell), mv);
			pl_font(cr, st, FONT_REL, iogp_probe_level(mv) > 0);
			pl_rgba(cr, level_colour(st, mv), 1);
			pl_text(cr, x1 - fs * 0.5, mid, 1, 0.5, cell);
		}
	}
}

/* Per operation: do the nodes see the same slowdown? */
static void agreement(cairo_t *cr, const pgeo *g, const iogplot_style *st, const iogp_probe_set *set,
                      double fs)
{
	const iogplot_rect *a = &g->agree;
	char line[256];
	pl_font(cr, st, FONT_REL, 1);
	pl_rgba(cr, st->dim, 1);
	pl_text(cr, a->x, a->y + g->lh / 2, 0, 0.5, "do the nodes agree?");
	cairo_save(cr);
	cairo_rectangle(cr, a->x, a->y, a->w, a->h);
	cairo_clip(cr);
	for (size_t k = 0; k < g->nops && (double)(k + 2) * g->lh <= a->h + 0.5; k++) {
		iogp_probe_agree ag;
		iogp_probe_agreement(set, g->ops[k], &ag);
		double mid = a->y + (double)(k + 1) * g->lh + g->lh / 2;
		pl_rgba(cr, op_colour(st, k), 1);
		cairo_rectangle(cr, a->x, round(mid - fs * 0.35), round(fs * 0.7), round(fs * 0.7));
		cairo_fill(cr);
		snprintf(line, sizeof(line), "%s: %s", g->ops[k], ag.text);
		pl_font(cr, st, FONT_REL, ag.agree == 0);
		pl_rgba(cr, ag.agree == 0 ? st->warn : st->fg, 1);
		pl_text(cr, a->x + fs * 1.1, mid, 0, 0.5, line);
	}
	cairo_restore(cr);
}

static void probe_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                       const iogplot_view *v)
{
	pgeo g;
	double fs = l->fs;
	if (geo(&g, l, st, f, v) < 0)
		return;
	const pl_sub *s = &l->sub[0];
	y_axis(cr, s, &g, st, fs);
	cairo_save(cr);
	cairo_rectangle(cr, s->plot.x, s->plot.y - 3, s->plot.w, s->plot.h + 6);
	cairo_clip(cr);
	cairo_set_line_width(cr, 2);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	for (size_t k = 0; k < g.nops; k++) {
		int o = iogp_probe_op_index(g.p, g.ops[k]);
		if (o < 0)
			continue;
		pl_rgba(cr, op_colour(st, k), 1);
		op_line(cr, s, f, (uint32_t)o);
	}
	cairo_restore(cr);
	now_column(cr, &g, st, fs);
	if (g.rows)
		node_table(cr, &g, st, f->probes, fs);
	if (g.agree.w > 0)
		agreement(cr, &g, st, f->probes, fs);
}

static int in(const iogplot_rect *r, double x, double y)
{
	return r->w > 0 && x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

/* One probe's operations now, a line each: "write 8.00x (8.00 ms / 1.00 ms)". */
static int probe_now(const pgeo *g, const iogp_probe *p, char *buf, size_t len)
{
	char where[400], stat[160];
	iogp_probe_where(where, sizeof(where), p);
	iogp_probe_title(stat, sizeof(stat), p);
	int n = snprintf(buf, len, "%s\n%s", where, stat);
	for (size_t k = 0; k < g->nops && n >= 0 && (size_t)n < len; k++) {
		int o = iogp_probe_op_index(p, g->ops[k]);
		char fac[24], a[32], b[32];
		iogp_probe_factor(fac, sizeof(fac), o >= 0 ? p->slowdown_milli[o] : -1);
		fmt_ns(a, sizeof(a), o >= 0 ? p->stat_ns[o] : -1);
		fmt_ns(b, sizeof(b), o >= 0 ? p->expected_ns[o] : -1);
		n += snprintf(buf + n, len - (size_t)n, "\n%s %s (%s / %s)", g->ops[k], fac, a, b);
	}
	return n;
}

static int probe_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v, double x,
                         double y, char *buf, size_t len)
{
	iogplot_style st;
	iogplot_style_init(&st, l->dark);
	st.font_size = l->fs;
	pgeo g;
	if (geo(&g, l, &st, f, v) < 0)
		return 0;
	int n = 0;
	if (in(&g.plot, x, y)) {   /* each operation's factor at that time */
		double t = pl_unmap(&l->sub[0].x, x);
		size_t i = 0;
		while (i + 1 < f->nprobe_hist && (double)f->probe_hist[i + 1].wall_ns / 1e9 <= t)
			i++;
		if (!f->nprobe_hist || (double)f->probe_hist[i].wall_ns / 1e9 > t)
			return 0;
		char when[32];
		iogplot_fmt_clock(when, sizeof(when), t, 1);
		n = snprintf(buf, len, "%s %s", when, g.p->node);
		for (size_t k = 0; k < g.nops && n >= 0 && (size_t)n < len; k++) {
			int o = iogp_probe_op_index(g.p, g.ops[k]);
			char fac[24];
			iogp_probe_factor(fac, sizeof(fac), o >= 0 ? f->probe_hist[i].milli[o] : -1);
			n += snprintf(buf + n, len - (size_t)n, "\n%s %s", g.ops[k], fac);
		}
	} else if (in(&g.now, x, y)) {
		n = probe_now(&g, g.p, buf, len);
	} else if (in(&g.agree, x, y)) {
		size_t k = (size_t)fmax(0, floor((y - g.agree.y) / g.lh));
		if (k < 1 || k > g.nops)
			return 0;
		iogp_probe_agree ag;
		iogp_probe_agreement(f->probes, g.ops[k - 1], &ag);
		n = snprintf(buf, len, "%s: %s", g.ops[k - 1], ag.text);
	} else if (in(&g.table, x, y)) {
		int r = (int)floor((y - g.table.y) / g.lh) - 1;
		if (r < 0 || r >= g.rows || (r == g.rows - 1 && (size_t)g.rows < f->probes->n))
			return 0;
		n = probe_now(&g, &f->probes->p[r], buf, len);
	}
	return n <= 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_probe_ops = { probe_layout, probe_title, probe_data, probe_tooltip };
