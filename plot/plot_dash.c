/* plot_dash.c - panel frames, the cached static layer (background, grid,
 * axes), the dashboard grid and the header strip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_layers.h"
#include "iogp_phase_view.h"
#include "plot.h"

/* How each panel draws; names, titles and the order come from the catalog. */
static const pl_panel_ops *const panel_ops[IOGPLOT_NPANELS] = {
	[IOGPLOT_SIZE] = &pl_size_ops,
	[IOGPLOT_QD] = &pl_qd_ops,
	[IOGPLOT_LATENCY] = &pl_latency_ops,
	[IOGPLOT_ACCESS] = &pl_access_ops,
	[IOGPLOT_RATES] = &pl_rates_ops,
	[IOGPLOT_HEATMAP] = &pl_heatmap_ops,
	[IOGPLOT_NODES] = &pl_nodes_ops,
	[IOGPLOT_PHASES] = &pl_phases_ops,
	[IOGPLOT_INSIGHTS] = &pl_insights_ops,
	[IOGPLOT_PROBE] = &pl_probe_ops,
	[IOGPLOT_MATRIX] = &pl_matrix_ops,
	[IOGPLOT_MSGSIZE] = &pl_msgsize_ops,
};

static const pl_panel_ops *ops_of(int panel)
{
	return panel >= 0 && panel < IOGPLOT_NPANELS ? panel_ops[panel] : NULL;
}

void iogplot_view_init(iogplot_view *v)
{
	memset(v, 0, sizeof(*v));
	v->span = 300;
	v->logx = (1u << IOGPLOT_SIZE) | (1u << IOGPLOT_LATENCY) | (1u << IOGPLOT_MSGSIZE);
}

void iogplot_view_time(const iogplot_view *v, const iogplot_frame *f, double *lo, double *hi)
{
	if (v->t_hi > v->t_lo) {
		*lo = v->t_lo;
		*hi = v->t_hi;
		return;
	}
	double span = v->span > 1 ? v->span : 300;
	double now = f->t_now > 0 ? f->t_now : f->rates.t0 + f->rates.step * (double)f->rates.nbins;
	*hi = now;
	*lo = now - span;
	if (f->t_first > 0 && *lo < f->t_first && f->t_first + span > *hi) {
		*lo = f->t_first;   /* young session: the axis starts with the data */
		if (*hi - *lo < 10)
			*hi = *lo + 10;
	}
}

void pl_layout_base(pl_layout *l, const iogplot_style *st, int panel, double w, double h)
{
	memset(l, 0, sizeof(*l));
	double fs = st->font_size > 4 ? st->font_size : 11;
	l->panel = panel;
	l->w = w;
	l->h = h;
	l->fs = fs;
	l->dark = st->dark;
	l->nsub = 1;
	pl_sub *s = &l->sub[0];
	s->plot = (iogplot_rect){ round(fs * PL_LEFT), round(fs * (PL_TITLE_H + 0.6)), 0, 0 };
	s->plot.w = fmax(10, w - s->plot.x - round(fs * PL_RIGHT));
	s->plot.h = fmax(10, h - s->plot.y - round(fs * PL_BOTTOM));
	s->xlabels = 1;
	s->ylabels = 1;
}

/* ---- static layer ---- */

static void draw_rounded(cairo_t *cr, double x, double y, double w, double h, double r)
{
	cairo_new_sub_path(cr);
	cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
	cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
	cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
	cairo_arc(cr, x + r, y + r, r, M_PI, 3 * M_PI / 2);
	cairo_close_path(cr);
}

static void draw_static(cairo_t *cr, const pl_layout *l, const iogplot_style *st)
{
	double fs = l->fs;
	pl_rgba(cr, st->panel, 1);
	draw_rounded(cr, 0, 0, l->w, l->h, 6);
	cairo_fill(cr);
	if (l->empty) {   /* the message, and under it its advice */
		const char *m = l->empty_msg;
		double y = l->h / 2 + fs * 0.6;
		for (const char *c = m; (c = strchr(c, '\n')); c++)
			y -= fs * 0.75;
		for (int i = 0; *m; i++, y += fs * 1.5) {
			size_t n = strcspn(m, "\n");
			char line[sizeof(l->empty_msg)];
			snprintf(line, sizeof(line), "%.*s", (int)n, m);
			pl_font(cr, st, i ? 0.85 : 1.0, 0);
			pl_rgba(cr, i ? st->fg : st->dim, 1);
			pl_text(cr, l->w / 2, y, 0.5, 0.5, line);
			m += n + (m[n] == '\n');
		}
		return;
	}
	pl_font(cr, st, 0.85, 0);
	double ticks[64];
	char lab[48];
	cairo_set_line_width(cr, 1);
	for (int i = 0; i < l->nsub; i++) {
		const pl_sub *s = &l->sub[i];
		const iogplot_rect *p = &s->plot;
		int n = s->ylabels ? pl_ticks(&s->y, fs * (s->plot.h > fs * 6 ? 2.6 : 1.6), ticks, 64) : 0;
		if (s->yticks_max == 2 && s->ylabels) {   /* small strips: the ends only */
			ticks[0] = s->y.lo;
			ticks[1] = s->y.hi;
			n = 2;
		}
		for (int k = 0; k < n; k++) {
			double y = round(pl_map(&s->y, ticks[k])) + 0.5;
			pl_rgba(cr, st->grid, 1);
			cairo_move_to(cr, p->x, y);
			cairo_line_to(cr, p->x + p->w, y);
			cairo_stroke(cr);
			if (s->ylabels) {
				pl_label(&s->y, ticks[k], lab, sizeof(lab));
				pl_rgba(cr, st->dim, 1);
				pl_text(cr, p->x - fs * 0.4, y, 1, 0.5, lab);
			}
		}
		if (s->has_y2) {
			n = pl_ticks(&s->y2, fs * 2.6, ticks, 64);
			for (int k = 0; k < n; k++) {
				double y = round(pl_map(&s->y2, ticks[k])) + 0.5;
				pl_label(&s->y2, ticks[k], lab, sizeof(lab));
				pl_rgba(cr, st->total, 1);
				pl_text(cr, p->x + p->w + fs * 0.4, y, 0, 0.5, lab);
			}
		}
		double gap = s->x.unit == PL_TIME ? fs * 6.5 : fs * 5.2;
		n = pl_ticks(&s->x, gap, ticks, 64);
		for (int k = 0; k < n; k++) {
			double x = round(pl_map(&s->x, ticks[k])) + 0.5;
			pl_rgba(cr, st->grid, 1);
			cairo_move_to(cr, x, p->y);
			cairo_line_to(cr, x, p->y + p->h);
			cairo_stroke(cr);
			pl_rgba(cr, st->axis, 1);
			cairo_move_to(cr, x, p->y + p->h);
			cairo_line_to(cr, x, p->y + p->h + fs * 0.3);
			cairo_stroke(cr);
			if (s->xlabels) {
				pl_label(&s->x, ticks[k], lab, sizeof(lab));
				double tx = x, tw = pl_text_w(cr, lab);
				if (tx + tw / 2 > l->w - 2)
					tx = l->w - 2 - tw / 2;
				pl_rgba(cr, st->dim, 1);
				pl_text(cr, tx, p->y + p->h + fs * 0.45, 0.5, 0, lab);
			}
		}
		pl_rgba(cr, st->axis, 1);
		cairo_move_to(cr, p->x, round(p->y + p->h) + 0.5);
		cairo_line_to(cr, p->x + p->w, round(p->y + p->h) + 0.5);
		cairo_stroke(cr);
	}
	if (l->has_cbar) {
		const iogplot_rect *c = &l->cbar;
		cairo_pattern_t *grad = cairo_pattern_create_linear(0, c->y + c->h, 0, c->y);
		for (int k = 0; k <= 20; k++) {
			double r, g, b;
			pl_heat_color(k / 20.0, &r, &g, &b);
			cairo_pattern_add_color_stop_rgb(grad, k / 20.0, r, g, b);
		}
		cairo_set_source(cr, grad);
		cairo_rectangle(cr, c->x, c->y, c->w, c->h);
		cairo_fill(cr);
		cairo_pattern_destroy(grad);
		int n = pl_ticks(&l->caxis, fs * 2.2, ticks, 64);
		for (int k = 0; k < n; k++) {
			double y = round(pl_map(&l->caxis, ticks[k])) + 0.5;
			pl_rgba(cr, st->axis, 1);
			cairo_move_to(cr, c->x + c->w, y);
			cairo_line_to(cr, c->x + c->w + fs * 0.3, y);
			cairo_stroke(cr);
			pl_label(&l->caxis, ticks[k], lab, sizeof(lab));
			pl_rgba(cr, st->dim, 1);
			pl_text(cr, c->x + c->w + fs * 0.45, y, 0, 0.5, lab);
		}
	}
}

/* ---- grid cache ---- */

typedef struct cache_slot {
	pl_layout key;
	iogplot_style style;
	double sx, sy;
	cairo_surface_t *surf;
} cache_slot;

struct iogplot_cache {
	cache_slot slot[IOGPLOT_NPANELS];
	uint64_t hits, misses;
};

iogplot_cache *iogplot_cache_new(void)
{
	return calloc(1, sizeof(iogplot_cache));
}

void iogplot_cache_clear(iogplot_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < IOGPLOT_NPANELS; i++) {
		if (c->slot[i].surf)
			cairo_surface_destroy(c->slot[i].surf);
		memset(&c->slot[i], 0, sizeof(c->slot[i]));
	}
}

void iogplot_cache_free(iogplot_cache *c)
{
	iogplot_cache_clear(c);
	free(c);
}

void iogplot_cache_stats(const iogplot_cache *c, uint64_t *hits, uint64_t *misses)
{
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}

static int cacheable(cairo_t *cr)
{
	cairo_surface_type_t t = cairo_surface_get_type(cairo_get_target(cr));
	return t != CAIRO_SURFACE_TYPE_PDF && t != CAIRO_SURFACE_TYPE_SVG &&
	       t != CAIRO_SURFACE_TYPE_PS && t != CAIRO_SURFACE_TYPE_RECORDING;
}

static void paint_static(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                         iogplot_cache *c)
{
	if (!c || l->panel < 0 || l->panel >= IOGPLOT_NPANELS || !cacheable(cr)) {
		draw_static(cr, l, st);
		return;
	}
	/* the static layer is pixel-aligned only when the panel sits on whole device pixels */
	double sx = 1, sy = 1, ox = 0, oy = 0;
	cairo_surface_get_device_scale(cairo_get_target(cr), &sx, &sy);
	cairo_user_to_device(cr, &ox, &oy);
	if (fabs(ox - round(ox)) > 1e-6 || fabs(oy - round(oy)) > 1e-6) {
		draw_static(cr, l, st);
		return;
	}
	cache_slot *s = &c->slot[l->panel];
	if (s->surf && s->sx == sx && s->sy == sy && !memcmp(&s->key, l, sizeof(*l)) &&
	    !memcmp(&s->style, st, sizeof(*st))) {
		c->hits++;
	} else {
		c->misses++;
		if (s->surf)
			cairo_surface_destroy(s->surf);
		int pw = (int)ceil(l->w), ph = (int)ceil(l->h);
		s->surf = cairo_surface_create_similar(cairo_get_target(cr), CAIRO_CONTENT_COLOR_ALPHA,
		                                       pw, ph);
		if (cairo_surface_status(s->surf) != CAIRO_STATUS_SUCCESS) {
			cairo_surface_destroy(s->surf);
			s->surf = NULL;
			draw_static(cr, l, st);
			return;
		}
		cairo_t *c2 = cairo_create(s->surf);
		draw_static(c2, l, st);
		cairo_destroy(c2);
		memcpy(&s->key, l, sizeof(*l));
		memcpy(&s->style, st, sizeof(*st));
		s->sx = sx;
		s->sy = sy;
	}
	cairo_set_source_surface(cr, s->surf, 0, 0);
	cairo_paint(cr);
}

/* ---- panels ---- */

static int layout_of(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                     const iogplot_view *v, int panel, double w, double h)
{
	const pl_panel_ops *o = ops_of(panel);
	if (!o)
		return IOGP_EINVAL;
	pl_layout_base(l, st, panel, w, h);
	o->layout(l, st, f, v);
	return 0;
}

void iogplot_panel(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f,
                   const iogplot_view *v, int panel, double w, double h)
{
	if (panel == IOGPLOT_HEADER) {
		pl_draw_header(cr, st, f, w, h);
		return;
	}
	pl_layout l;
	if (layout_of(&l, st, f, v, panel, w, h) < 0)
		return;
	cairo_save(cr);
	paint_static(cr, &l, st, v->cache);
	char sub[256];
	sub[0] = 0;
	ops_of(panel)->title(sub, sizeof(sub), f, v);
	pl_font(cr, st, 1.0, 1);
	pl_rgba(cr, st->fg, 1);
	double fs = l.fs;
	const char *title = iogp_panel_title(panel);
	pl_text(cr, fs * 0.8, fs * 1.05, 0, 0.5, title);
	double tw = pl_text_w(cr, title);
	pl_font(cr, st, 0.85, 0);
	pl_rgba(cr, st->dim, 1);
	cairo_rectangle(cr, 0, 0, w - fs * 0.5, h);
	cairo_clip(cr);
	pl_text(cr, fs * 0.8 + tw + fs * 0.8, fs * 1.05, 0, 0.5, sub);
	cairo_reset_clip(cr);
	if (!l.empty)
		ops_of(panel)->data(cr, &l, st, f, v);
	cairo_restore(cr);
}

int iogplot_panel_geom(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                       int panel, int sub, double w, double h, iogplot_geom *g)
{
	pl_layout l;
	memset(g, 0, sizeof(*g));
	if (layout_of(&l, st, f, v, panel, w, h) < 0 || sub < 0 || sub >= l.nsub)
		return IOGP_EINVAL;
	const pl_sub *s = &l.sub[sub];
	g->plot = s->plot;
	g->x0 = s->x.lo;
	g->x1 = s->x.hi;
	g->y0 = s->y.lo;
	g->y1 = s->y.hi;
	g->logx = s->x.log;
	g->logy = s->y.log;
	return l.empty ? IOGP_ENOTFOUND : 0;
}

static void geom_axes(const iogplot_geom *g, pl_axis *x, pl_axis *y)
{
	*x = (pl_axis){ g->x0, g->x1, g->plot.x, g->plot.x + g->plot.w, g->logx, PL_PLAIN };
	*y = (pl_axis){ g->y0, g->y1, g->plot.y + g->plot.h, g->plot.y, g->logy, PL_PLAIN };
}

double iogplot_geom_x(const iogplot_geom *g, double value)
{
	pl_axis x, y;
	geom_axes(g, &x, &y);
	return pl_map(&x, value);
}

double iogplot_geom_y(const iogplot_geom *g, double value)
{
	pl_axis x, y;
	geom_axes(g, &x, &y);
	return pl_map(&y, value);
}

double iogplot_geom_xval(const iogplot_geom *g, double px)
{
	pl_axis x, y;
	geom_axes(g, &x, &y);
	return pl_unmap(&x, px);
}

int iogplot_panel_tooltip(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                          int panel, double w, double h, double x, double y, char *buf, size_t len)
{
	pl_layout l;
	if (!len)
		return 0;
	buf[0] = 0;
	if (layout_of(&l, st, f, v, panel, w, h) < 0 || l.empty || !ops_of(panel)->tooltip)
		return 0;
	return ops_of(panel)->tooltip(&l, f, v, x, y, buf, len);
}

int iogplot_panel_link(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                       int panel, double w, double h, double x, double y)
{
	pl_layout l;
	if (panel != IOGPLOT_INSIGHTS || layout_of(&l, st, f, v, panel, w, h) < 0 || l.empty)
		return -1;
	int i = pl_insight_at(&l, f, x, y);
	return i < 0 ? -1 : iogp_insight_panel(&f->insights[i], IOGP_VIEWER_GTK);
}

/* ---- dashboard ---- */

#define HEADER_H 30
#define GAP 8
#define MIN_ROW 230

static int columns(double w)
{
	return w >= 1500 ? 3 : w >= 820 ? 2 : 1;
}

/* The grid's panels, those the window shows with a digit key, in id (= key) order. */
static int grid_panels(int order[IOGPLOT_NPANELS])
{
	int n = 0;
	for (int p = 0; p < IOGPLOT_NPANELS; p++) {
		if (iogp_panel_in_grid(p, IOGP_VIEWER_GTK))
			order[n++] = p;
	}
	return n;
}

double iogplot_dashboard_min_height(double w)
{
	int order[IOGPLOT_NPANELS];
	int cols = columns(w), rows = (grid_panels(order) + cols - 1) / cols;
	return HEADER_H + GAP + rows * (MIN_ROW + GAP);
}

void iogplot_dashboard_layout(double w, double h, iogplot_rect r[IOGPLOT_NPANELS])
{
	int order[IOGPLOT_NPANELS], n = grid_panels(order);
	int cols = columns(w), rows = (n + cols - 1) / cols;
	memset(r, 0, sizeof(*r) * IOGPLOT_NPANELS);
	r[IOGPLOT_HEADER] = (iogplot_rect){ 0, 0, w, HEADER_H };
	double top = HEADER_H + GAP;
	double cw = floor((w - GAP * (cols + 1)) / cols);
	double rh = floor((h - top - GAP * rows) / rows);
	if (cw < 50)
		cw = 50;
	if (rh < 50)
		rh = 50;
	for (int i = 0; i < n; i++) {
		int c = i % cols, row = i / cols;
		r[order[i]] = (iogplot_rect){ GAP + c * (cw + GAP), top + row * (rh + GAP), cw, rh };
	}
}

void iogplot_dashboard(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f,
                       const iogplot_view *v, double w, double h)
{
	iogplot_rect r[IOGPLOT_NPANELS];
	iogplot_dashboard_layout(w, h, r);
	cairo_save(cr);
	pl_rgba(cr, st->bg, 1);
	cairo_paint(cr);
	for (int p = 0; p < IOGPLOT_NPANELS; p++) {
		if (r[p].w <= 0)
			continue;   /* not on the dashboard */
		cairo_save(cr);
		cairo_translate(cr, r[p].x, r[p].y);
		cairo_rectangle(cr, 0, 0, r[p].w, r[p].h);
		cairo_clip(cr);
		iogplot_panel(cr, st, f, v, p, r[p].w, r[p].h);
		cairo_restore(cr);
	}
	cairo_restore(cr);
}

/* ---- header strip ---- */

void pl_draw_header(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f, double w, double h)
{
	double fs = st->font_size > 4 ? st->font_size : 11;
	char left[1024], right[512], when[32] = "", sel[320];
	cairo_save(cr);
	pl_rgba(cr, st->panel, 1);
	draw_rounded(cr, 0, 0, w, h, 6);
	cairo_fill(cr);
	if (f->t_now > 0)
		iogplot_fmt_clock(when, sizeof(when), f->t_now, 1);
	snprintf(sel, sizeof(sel), "%s%s%s", f->selection[0] ? f->selection : "all nodes",
	         f->window[0] ? " · " : "", f->window);
	snprintf(left, sizeof(left), "%s   %s   %s · %s%s%s", f->title[0] ? f->title : "iogram", when,
	         sel, iogp_layer_title(f->layer), f->status[0] ? "   " : "", f->status);
	char rate[32];
	snprintf(rate, sizeof(rate), "%.0f", f->msg_rate);
	snprintf(right, sizeof(right),
	         "%zu source%s (%zu live) · %zu node%s · %s msg/s · gaps %llu · drops %llu%s",
	         f->nsources, f->nsources == 1 ? "" : "s", f->nlive, f->nnodes,
	         f->nnodes == 1 ? "" : "s", rate, (unsigned long long)f->gaps,
	         (unsigned long long)f->drops, f->bad ? " · bad" : "");
	if (f->bad)
		snprintf(right + strlen(right), sizeof(right) - strlen(right), " %llu",
		         (unsigned long long)f->bad);
	double y = h / 2;
	pl_font(cr, st, 1.0, 1);
	pl_rgba(cr, st->fg, 1);
	pl_text(cr, fs * 0.8, y, 0, 0.5, left);
	double lw = pl_text_w(cr, left) + fs * 2;
	pl_font(cr, st, 0.95, 0);
	double rx = w - fs * 0.8;
	if (f->recording) {
		char rec[300];
		snprintf(rec, sizeof(rec), "REC %s", f->record_path);
		double rw = pl_text_w(cr, rec);
		pl_rgba(cr, st->warn, 1);
		pl_text(cr, rx, y, 1, 0.5, rec);
		cairo_arc(cr, rx - rw - fs * 0.6, y, fs * 0.35, 0, 2 * M_PI);
		cairo_fill(cr);
		rx -= rw + fs * 1.6;
	}
	double tw = pl_text_w(cr, right);
	if (rx - tw > lw) {
		pl_rgba(cr, f->gaps || f->drops ? st->accent : st->dim, 1);
		if (!(f->gaps || f->drops))
			pl_rgba(cr, st->dim, 1);
		pl_text(cr, rx, y, 1, 0.5, right);
		rx -= tw + fs * 1.2;
	}
	if (f->ninsights) {   /* the findings: how many, and the key of their panel */
		char ins[48];
		snprintf(ins, sizeof(ins), "%zu finding%s (%c)", f->ninsights, f->ninsights == 1 ? "" : "s",
		         iogp_panel_get(IOGP_PANEL_INSIGHTS)->key);
		double iw = pl_text_w(cr, ins);
		if (rx - iw > lw) {
			int sev = f->insights[0].severity;
			pl_rgba(cr, sev == IOGP_SEV_HIGH ? st->warn : sev == IOGP_SEV_WARN ? st->accent : st->dim, 1);
			pl_text(cr, rx, y, 1, 0.5, ins);
		}
	}
	cairo_restore(cr);
}
