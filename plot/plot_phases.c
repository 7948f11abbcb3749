/* plot_phases.c - I/O phases: a timeline of bars (colour: read or write;
 * label: bytes, mean request and spatiality; an open phase grows to now)
 * in lanes over the shared time axis (zoom and pan as the rates panel),
 * and the phase table below it when there is room. Rows and labels come
 * from iogp_phase_view.h, as iogram-top's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_layers.h"
#include "iogp_phase_view.h"
#include "iogp_sys.h"
#include "plot.h"

#define MAX_INSIGHTS 32
#define SLOW_NS 10000000ull          /* findings that took this long ... */
#define RECOMPUTE_NS 5000000000ull   /* ... are not computed again sooner */
#define LANE_MIN 1.5      /* lane height, in font sizes */
#define LANE_MAX 2.4
#define BAR 0.78          /* of a lane */
#define LINE 1.35         /* table line height, in font sizes */
#define COL_GAP 1.0
#define FONT_REL 0.85
#define MAX_ROWS 256      /* table rows considered */

/* ---- the frame's copy ---- */

static void free_phases(iogplot_frame *f)
{
	for (size_t i = 0; i < f->nphases; i++)
		free((char *)f->phases[i].file);
	free(f->phases);
	f->phases = NULL;
	f->nphases = 0;
	f->phases_dropped = 0;
}

void pl_frame_phases_free(iogplot_frame *f)
{
	free_phases(f);
	free(f->insights);
	f->insights = NULL;
	f->ninsights = 0;
	memset(&f->insights_of, 0, sizeof(f->insights_of));
}

/* The findings of sel, again only when the data or the selection changed
 * (and, when they took long, not within RECOMPUTE_NS). */
static int findings(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel)
{
	iogp_model_stats st;
	iogp_model_get_stats(m, &st);
	int kind = sel ? (int)sel->kind : IOGP_SEL_ALL;
	const char *node = sel && sel->kind == IOGP_SEL_NODE && sel->node ? sel->node : "";
	uint64_t source = sel && sel->kind == IOGP_SEL_SOURCE ? sel->source : 0, now = iogp_mono_ns();
	struct iogplot_insights_of *c = &f->insights_of;
	int same_sel = f->insights && c->valid && c->kind == kind && c->source == source &&
	               !strcmp(c->node, node);
	int same_data = c->messages == st.messages && c->last_recv == st.last_recv_ns;
	if (same_sel && (same_data || (c->cost_ns >= SLOW_NS && now < c->at_ns + RECOMPUTE_NS)))
		return 0;
	if (!f->insights && !(f->insights = calloc(MAX_INSIGHTS, sizeof(*f->insights))))
		return IOGP_ENOMEM;
	int rc = iogp_model_insights(m, sel, f->insights, MAX_INSIGHTS, &f->ninsights);
	c->messages = st.messages;
	c->last_recv = st.last_recv_ns;
	c->source = source;
	c->at_ns = now;
	c->cost_ns = iogp_mono_ns() - now;
	c->kind = kind;
	c->valid = rc == 0;
	snprintf(c->node, sizeof(c->node), "%s", node);
	return rc;
}

int pl_frame_phases(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel)
{
	free_phases(f);
	iogp_phase *p = NULL;
	size_t n = 0;
	int rc = iogp_phases_of_layer(m, f->layer, &p, &n, &f->phases_dropped);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)   /* the names live in the model: copy them */
		if (p[i].file && !(p[i].file = strdup(p[i].file)))
			rc = IOGP_ENOMEM;
	f->phases = p;
	f->nphases = n;
	if (rc < 0)
		return rc;
	/* a source's first wall time is the end of its first interval: its
	 * first calls (a phase's start) come before it */
	if (n && f->t_first > 0 && (double)p[0].start_ns / 1e9 < f->t_first)
		f->t_first = (double)p[0].start_ns / 1e9;
	return findings(f, m, sel);
}

/* ---- geometry shared by the layout, the drawing and the tooltip ---- */

typedef struct tl {
	size_t n;                  /* phases in the time range */
	size_t idx[MAX_ROWS * 4];  /* their indexes in the frame, in start order */
	double x0[MAX_ROWS * 4], x1[MAX_ROWS * 4];   /* bar, pixels */
	double ext[MAX_ROWS * 4];  /* bar and label */
	int label[MAX_ROWS * 4];   /* 2 full, 1 short, 0 none; negative: before the bar */
	int lane[MAX_ROWS * 4];
	int lanes;
	size_t hidden;             /* in the range but in no lane */
} tl;

static double t_end(const iogplot_frame *f, const iogp_phase *p)
{
	double e = (double)p->end_ns / 1e9;
	return p->open && f->t_now > e ? f->t_now : e;
}

static cairo_t *scratch(void)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
	cairo_t *cr = cairo_create(s);
	cairo_surface_destroy(s);
	return cr;
}

/* Bars on x axis a, then lanes (labels as room allows) at most max of them. */
static void timeline(tl *t, cairo_t *cr, const iogplot_style *st, const iogplot_frame *f,
                     const pl_axis *a, int max)
{
	double fs = st->font_size > 4 ? st->font_size : 11, lw[2][MAX_ROWS * 4];
	t->n = t->hidden = 0;
	pl_font(cr, st, FONT_REL, 0);
	for (size_t i = 0; i < f->nphases && t->n < MAX_ROWS * 4; i++) {
		const iogp_phase *p = &f->phases[i];
		double s = (double)p->start_ns / 1e9, e = t_end(f, p);
		if (e < a->lo || s > a->hi)
			continue;
		size_t k = t->n++;
		t->idx[k] = i;
		t->x0[k] = pl_map(a, fmax(s, a->lo));
		t->x1[k] = fmax(pl_map(a, fmin(e, a->hi)), t->x0[k] + round(fs * 0.45));   /* visible */
		iogp_phase_row r;
		iogp_phase_row_build(&r, p, IOGP_UNITS_WIDE);
		lw[0][k] = pl_text_w(cr, r.label);
		lw[1][k] = pl_text_w(cr, r.label_short);
	}
	/* labels as long as they can be: full, short, none */
	double from[MAX_ROWS * 4], right = a->p1 + fs * (PL_RIGHT - 0.2);
	for (int pass = 2; pass >= 0; pass--) {
		for (size_t k = 0; k < t->n; k++) {
			t->label[k] = pass;
			double w = pass == 2 ? lw[0][k] : pass == 1 ? lw[1][k] : 0;
			double inside = t->x1[k] - t->x0[k] - fs * 0.6, after = t->x1[k] + fs * 0.4 + w;
			/* inside a wide bar, else after it, else (at the right edge) before it */
			from[k] = t->x0[k];
			t->ext[k] = w && w > inside ? after : t->x1[k];
			if (w && w > inside && after > right && t->x0[k] - fs * 0.4 - w >= a->p0) {
				from[k] = t->x0[k] - fs * 0.4 - w;
				t->ext[k] = t->x1[k];
				t->label[k] = -pass;
			}
			t->ext[k] += fs * 0.6;
		}
		t->lanes = iogp_phase_lanes(from, t->ext, t->n, max, t->lane);
		int miss = 0;
		for (size_t k = 0; k < t->n; k++)
			miss += t->lane[k] < 0;
		if (!miss || pass == 0) {
			t->hidden = (size_t)miss;
			break;
		}
	}
}

/* The table's columns that fit in width w: their widths (0: left out). */
static void table_cols(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f,
                       const tl *t, size_t first, double w, double col[IOGP_PC_N], double *tw)
{
	/* left out first when narrow */
	static const int drop[] = { IOGP_PC_LAYER, IOGP_PC_FILES, IOGP_PC_DURATION, IOGP_PC_FASHION,
	                            IOGP_PC_SPATIALITY };
	double fs = st->font_size > 4 ? st->font_size : 11;
	pl_font(cr, st, FONT_REL, 1);
	for (int c = 0; c < IOGP_PC_N; c++)
		col[c] = pl_text_w(cr, iogp_phase_heads[c]);
	pl_font(cr, st, FONT_REL, 0);
	for (size_t k = first; k < t->n; k++) {
		iogp_phase_row r;
		iogp_phase_row_build(&r, &f->phases[t->idx[k]], IOGP_UNITS_WIDE);
		for (int c = 0; c < IOGP_PC_N; c++)
			col[c] = fmax(col[c], pl_text_w(cr, r.cell[c]));
	}
	col[IOGP_PC_START] += fs;   /* the op's swatch */
	for (size_t d = 0;; d++) {
		*tw = 0;
		int nc = 0;
		for (int c = 0; c < IOGP_PC_N; c++)
			if (col[c] > 0) {
				*tw += col[c];
				nc++;
			}
		*tw += (nc - 1) * COL_GAP * fs;
		if (*tw <= w || d >= sizeof(drop) / sizeof(drop[0]))
			break;
		col[drop[d]] = 0;
	}
}

/* ---- the panel ---- */

static void phases_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                          const iogplot_view *v)
{
	if (!f->nphases) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no I/O phases in the %s layer yet",
		         iogp_layer_title(f->layer));
		return;
	}
	double lo, hi, fs = l->fs;
	iogplot_view_time(v, f, &lo, &hi);
	pl_sub *s = &l->sub[0];
	s->ylabels = 0;
	s->x = (pl_axis){ lo, hi, s->plot.x, s->plot.x + s->plot.w, 0, PL_TIME };
	s->y = (pl_axis){ 0, 1, s->plot.y + s->plot.h, s->plot.y, 0, PL_PLAIN };
	double lh = round(fs * LINE), below = fs * (PL_BOTTOM + 0.5);
	cairo_t *cr = scratch();
	tl *t = malloc(sizeof(*t));
	if (!t) {
		cairo_destroy(cr);
		return;
	}
	/* the timeline keeps what its lanes need (room for 2 at least, and
	 * about half the panel), the table right below it what it needs of
	 * the rest, if a header and a row fit */
	int cap = (int)floor(s->plot.h / (fs * LANE_MIN));
	timeline(t, cr, st, f, &s->x, cap > 1 ? cap : 1);
	double need = fmax(t->lanes, 2) * fs * LANE_MIN, want = fmax(t->lanes, 2) * fs * LANE_MAX;
	int rows = t->n < MAX_ROWS ? (int)t->n : MAX_ROWS;
	int fit = (int)floor((s->plot.h - need - below) / lh);
	if (rows && fit >= 2) {
		l->table_lines = 1 + rows < fit ? 1 + rows : fit;
		size_t first = t->n - (size_t)(l->table_lines - 1);
		double col[IOGP_PC_N], tw;
		table_cols(cr, st, f, t, first, l->w - 2 * fs * 0.8, col, &tw);
		if (tw <= l->w - 2 * fs * 0.8) {
			l->ntable = 1;
			double th = l->table_lines * lh;
			s->plot.h = floor(fmin(s->plot.h - th - below, fmax(fmax(want, need), 0.45 * s->plot.h)));
			l->table = (iogplot_rect){ round(fs * 0.8), s->plot.y + s->plot.h + below, ceil(tw), th };
		} else {
			l->table_lines = 0;
		}
	}
	s->y.p0 = s->plot.y + s->plot.h;
	s->y.p1 = s->plot.y;
	free(t);
	cairo_destroy(cr);
}

static void phases_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	size_t open = 0;
	for (size_t i = 0; i < f->nphases; i++)
		open += f->phases[i].open != 0;
	int n = snprintf(buf, len, "%s · %zu phase%s", iogp_layer_title(f->layer), f->nphases,
	                 f->nphases == 1 ? "" : "s");
	if (open && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", %zu open", open);
	if (f->phases_dropped && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " · %llu runs dropped",
		         (unsigned long long)f->phases_dropped);
}

/* Lane geometry of the timeline in l: height of one lane, its bar's. */
static void lane_h(const pl_layout *l, const tl *t, double *lh, double *bh, double *top)
{
	const iogplot_rect *p = &l->sub[0].plot;
	int n = t->lanes > 0 ? t->lanes : 1;
	*lh = fmin(p->h / n, l->fs * LANE_MAX);
	*bh = round(*lh * BAR);
	*top = p->y + round((p->h - *lh * n) / 2);   /* the lanes in the middle */
}

static void draw_bars(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                      const iogplot_frame *f, const tl *t)
{
	const iogplot_rect *p = &l->sub[0].plot;
	double fs = l->fs, lh, bh, top;
	lane_h(l, t, &lh, &bh, &top);
	cairo_save(cr);
	cairo_rectangle(cr, p->x, p->y, p->w + fs * PL_RIGHT, p->h);
	cairo_clip(cr);
	pl_font(cr, st, FONT_REL, 0);
	for (size_t k = 0; k < t->n; k++) {
		if (t->lane[k] < 0)
			continue;
		const iogp_phase *ph = &f->phases[t->idx[k]];
		int op = ph->op == IOGP_OP_WRITE;
		double y = round(top + t->lane[k] * lh + (lh - bh) / 2);
		double x0 = round(t->x0[k]), x1 = round(t->x1[k]);
		if (ph->open) {   /* still going: it grows to now, fading out */
			cairo_pattern_t *g = cairo_pattern_create_linear(x0, 0, x1, 0);
			iogplot_rgba c = st->op[op];
			cairo_pattern_add_color_stop_rgba(g, 0, c.r, c.g, c.b, 0.9);
			cairo_pattern_add_color_stop_rgba(g, 1, c.r, c.g, c.b, 0.35);
			cairo_set_source(cr, g);
			cairo_rectangle(cr, x0, y, x1 - x0, bh);
			cairo_fill(cr);
			cairo_pattern_destroy(g);
			pl_rgba(cr, st->op[op], 1);
			cairo_move_to(cr, x1, y - 1);
			cairo_line_to(cr, x1 + bh * 0.45, y + bh / 2);
			cairo_line_to(cr, x1, y + bh + 1);
			cairo_close_path(cr);
			cairo_fill(cr);
		} else {
			pl_rgba(cr, st->op[op], 0.9);
			cairo_rectangle(cr, x0, y, x1 - x0, bh);
			cairo_fill(cr);
		}
		if (!t->label[k])
			continue;
		iogp_phase_row r;
		iogp_phase_row_build(&r, ph, IOGP_UNITS_WIDE);
		const char *s = abs(t->label[k]) == 2 ? r.label : r.label_short;
		double w = pl_text_w(cr, s);
		if (t->label[k] < 0) {   /* before the bar */
			pl_rgba(cr, st->fg, 1);
			pl_text(cr, x0 - fs * 0.4, y + bh / 2, 1, 0.5, s);
		} else if (w <= x1 - x0 - fs * 0.6) {
			cairo_set_source_rgb(cr, 1, 1, 1);
			pl_text(cr, x0 + fs * 0.3, y + bh / 2, 0, 0.5, s);
		} else {
			pl_rgba(cr, st->fg, 1);
			pl_text(cr, x1 + fs * (ph->open ? 0.9 : 0.4), y + bh / 2, 0, 0.5, s);
		}
	}
	cairo_restore(cr);
	if (t->hidden) {
		char more[64];
		snprintf(more, sizeof(more), "+%zu more (zoom in)", t->hidden);
		pl_font(cr, st, FONT_REL, 0);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, p->x + p->w, p->y + p->h - fs * 0.2, 1, 1, more);
	}
	if (!t->n) {
		pl_font(cr, st, 1.0, 0);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, p->x + p->w / 2, p->y + p->h / 2, 0.5, 0.5, "no phases in this time range");
	}
}

/* Which phases the table lists in its lines: the last ones, with a line
 * "N earlier" first when not all fit. */
static size_t table_first(const pl_layout *l, const tl *t)
{
	size_t lines = l->table_lines > 1 ? (size_t)l->table_lines - 1 : 0;
	return t->n > lines ? t->n - (lines > 1 ? lines - 1 : 0) : 0;
}

static void draw_table(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                       const iogplot_frame *f, const tl *t)
{
	if (!l->ntable || l->table_lines < 2 || !t->n)
		return;
	double fs = l->fs, lh = round(fs * LINE), col[IOGP_PC_N], tw;
	size_t first = table_first(l, t);
	table_cols(cr, st, f, t, first, l->w - 2 * fs * 0.8, col, &tw);
	/* numbers right-aligned, words left-aligned */
	static const int right[IOGP_PC_N] = { [IOGP_PC_DURATION] = 1, [IOGP_PC_RANKS] = 1,
	                                      [IOGP_PC_FILES] = 1, [IOGP_PC_BYTES] = 1,
	                                      [IOGP_PC_REQUEST] = 1 };
	double y = l->table.y + lh / 2;
	for (size_t k = 0; k <= t->n - first; k++, y += lh) {
		iogp_phase_row r;
		const char *txt[IOGP_PC_N];
		if (k == 0) {   /* the header */
			for (int c = 0; c < IOGP_PC_N; c++)
				txt[c] = iogp_phase_heads[c];
			pl_font(cr, st, FONT_REL, 1);
			pl_rgba(cr, st->fg, 1);
		} else {
			if (k == 1 && first) {   /* what did not fit */
				char more[48];
				snprintf(more, sizeof(more), "%zu earlier", first);
				pl_font(cr, st, FONT_REL, 0);
				pl_rgba(cr, st->dim, 1);
				pl_text(cr, l->table.x + fs, y, 0, 0.5, more);
				y += lh;
			}
			const iogp_phase *ph = &f->phases[t->idx[first + k - 1]];
			iogp_phase_row_build(&r, ph, IOGP_UNITS_WIDE);
			for (int c = 0; c < IOGP_PC_N; c++)
				txt[c] = r.cell[c];
			pl_font(cr, st, FONT_REL, 0);
			pl_rgba(cr, st->op[ph->op == IOGP_OP_WRITE], 1);
			cairo_rectangle(cr, l->table.x, y - fs * 0.3, fs * 0.6, fs * 0.6);
			cairo_fill(cr);
			pl_rgba(cr, ph->open ? st->accent : st->fg, 1);
		}
		double x = l->table.x;
		for (int c = 0; c < IOGP_PC_N; c++) {
			if (col[c] <= 0)
				continue;
			double sw = c == IOGP_PC_START ? fs : 0, cx = x + sw, cw = col[c] - sw;
			pl_text(cr, right[c] ? cx + cw : cx, y, right[c] ? 1 : 0, 0.5, txt[c]);
			x += col[c] + COL_GAP * fs;
		}
	}
}

static void phases_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                        const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	tl *t = malloc(sizeof(*t));
	if (!t)
		return;
	const iogplot_rect *p = &l->sub[0].plot;
	int cap = (int)floor(p->h / (l->fs * LANE_MIN));
	timeline(t, cr, st, f, &l->sub[0].x, cap > 1 ? cap : 1);
	draw_bars(cr, l, st, f, t);
	draw_table(cr, l, st, f, t);
	free(t);
	/* legend, as the access panel's */
	static const char *const nm[2] = { "read", "write" };
	double fs = l->fs, x = l->w - fs * 0.8, ly = fs * 1.05;
	pl_font(cr, st, 0.85, 0);
	for (int op = 1; op >= 0; op--) {
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, x, ly, 1, 0.5, nm[op]);
		x -= pl_text_w(cr, nm[op]) + fs * 0.3;
		pl_rgba(cr, st->op[op], 1);
		cairo_rectangle(cr, x - fs * 0.6, ly - fs * 0.3, fs * 0.6, fs * 0.6);
		cairo_fill(cr);
		x -= fs * 1.4;
	}
}

static int phases_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                          double x, double y, char *buf, size_t len)
{
	(void)v;
	const iogplot_rect *p = &l->sub[0].plot;
	if (x < p->x || x > p->x + p->w || y < p->y || y > p->y + p->h)
		return 0;
	tl *t = malloc(sizeof(*t));
	if (!t)
		return 0;
	iogplot_style st;
	iogplot_style_init(&st, l->dark);
	st.font_size = l->fs;
	cairo_t *cr = scratch();
	int cap = (int)floor(p->h / (l->fs * LANE_MIN));
	timeline(t, cr, &st, f, &l->sub[0].x, cap > 1 ? cap : 1);
	cairo_destroy(cr);
	double lh, bh, top;
	lane_h(l, t, &lh, &bh, &top);
	int lane = (int)floor((y - top) / lh), n = 0;
	for (size_t k = 0; k < t->n && !n; k++) {
		if (t->lane[k] != lane || x < t->x0[k] - 3 || x > t->x1[k] + 3)
			continue;
		const iogp_phase *ph = &f->phases[t->idx[k]];
		iogp_phase_row r;
		iogp_phase_row_build(&r, ph, IOGP_UNITS_WIDE);
		char io[32], mx[32], who[64];
		iogp_fmt_ns(io, sizeof(io), (double)ph->io_time_ns, IOGP_UNITS_WIDE);
		iogp_fmt_size(mx, sizeof(mx), (double)ph->max_req, IOGP_UNITS_WIDE);
		if (ph->ranks == 1 && ph->rank >= 0)
			snprintf(who, sizeof(who), "%s", r.cell[IOGP_PC_RANKS]);
		else
			snprintf(who, sizeof(who), "%u rank%s", ph->ranks, ph->ranks == 1 ? "" : "s");
		n = snprintf(buf, len, "%s %s at %s for %s%s\n%s, %u file%s (%s)%s%s\n"
		             "%s in %llu requests: mean %s, largest %s, %s\nI/O time %s",
		             r.cell[IOGP_PC_LAYER], r.cell[IOGP_PC_OP], r.cell[IOGP_PC_START],
		             r.cell[IOGP_PC_DURATION], ph->open ? " (still going)" : "", who, ph->files,
		             ph->files == 1 ? "" : "s", r.cell[IOGP_PC_FASHION], ph->file ? "\n" : "",
		             ph->file ? ph->file : "", r.cell[IOGP_PC_BYTES],
		             (unsigned long long)ph->requests, r.cell[IOGP_PC_REQUEST], mx,
		             r.cell[IOGP_PC_SPATIALITY], io);
	}
	free(t);
	return n <= 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_phases_ops = { phases_layout, phases_title, phases_data, phases_tooltip };
