/* plot_heatmap.c - node x time heatmap of bytes/s (read + write) on a log
 * colour scale. At more nodes than pixel rows each row shows the busiest
 * node of its group, so one hot node among thousands stays visible. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

static double cell(const iogplot_series *s, size_t k, size_t b)
{
	float r = s->v[0][k * s->nbins + b], w = s->v[1][k * s->nbins + b];
	if (isnan(r) && isnan(w))
		return NAN;
	return (isnan(r) ? 0 : r) + (isnan(w) ? 0 : w);
}

/* The series shown: bytes/s (read + write) per node, or each node's read +
 * write latency p99 per window slot (v->heat_p99; its v[1] is empty). */
static const iogplot_series *series_of(const iogplot_frame *f, const iogplot_view *v)
{
	return v->heat_p99 ? &f->lat_heat : &f->rates;
}

static void heat_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                        const iogplot_view *v)
{
	const iogplot_series *s = series_of(f, v);
	double lo, hi, fs = l->fs;
	size_t b0, b1;
	iogplot_view_time(v, f, &lo, &hi);
	pl_series_window(s, lo, hi, f->t_now, &b0, &b1);
	double cmax = 0, cmin = INFINITY;
	int any = 0;
	for (size_t b = b0; b < b1; b++) {
		if (isnan(s->rwmax[b]))
			continue;
		any = 1;
		if (s->rwmax[b] > cmax)
			cmax = s->rwmax[b];
		if (v->heat_p99)
			for (size_t k = 0; k < s->nnodes; k++) {
				double c = cell(s, k, b);
				if (c > 0 && c < cmin)
					cmin = c;
			}
	}
	if (!any) {
		l->empty = 1;
		if (v->heat_p99)
			snprintf(l->empty_msg, sizeof(l->empty_msg), s->nnodes ?
			         "no latency in this time range (the last %.0f s are kept)" : "no latency yet",
			         s->step * (double)s->nbins);
		else
			snprintf(l->empty_msg, sizeof(l->empty_msg),
			         s->nnodes ? "no rates in this time range" : "no rates yet");
		return;
	}
	pl_sub *u = &l->sub[0];
	/* room for the node names on the left: the longest, at most a third */
	cairo_t *m = pl_measure_cr();
	pl_font(m, st, 0.8, 0);
	double names = 0;
	for (size_t k = 0; k < s->nnodes && k < 4096; k++)
		names = fmax(names, pl_text_w(m, s->nodes[k] ? s->nodes[k] : "?"));
	u->plot.x = round(fmax(u->plot.x, fmin(names + fs * 1.2, l->w / 3)));
	u->plot.w = fmax(10, l->w - u->plot.x - round(fs * 7.2));
	u->x = (pl_axis){ lo, hi, u->plot.x, u->plot.x + u->plot.w, 0, PL_TIME };
	u->y = (pl_axis){ 0, (double)s->nnodes, u->plot.y, u->plot.y + u->plot.h, 0, PL_PLAIN };
	u->ylabels = 0;
	l->has_cbar = 1;
	l->cbar = (iogplot_rect){ u->plot.x + u->plot.w + round(fs * 0.8), u->plot.y, round(fs * 0.9),
	                          u->plot.h };
	if (v->heat_p99) {   /* decades around what was seen */
		double lo = pow(10, floor(log10(fmax(cmin < INFINITY ? cmin : 1, 1))));
		double hi = pow(10, ceil(log10(fmax(cmax, 1))));
		if (hi <= lo)
			hi = lo * 10;
		l->caxis = (pl_axis){ lo, hi, l->cbar.y + l->cbar.h, l->cbar.y, 1, PL_NS };
		return;
	}
	double chi = ldexp(1, (int)ceil(log2(fmax(cmax, 1))));
	l->caxis = (pl_axis){ chi / 16384, chi, l->cbar.y + l->cbar.h, l->cbar.y, 1, PL_RATE };
}

static double color_t(const pl_axis *c, double val)
{
	if (!(val > 0))
		return 0;
	double t = (log(val) - log(c->lo)) / (log(c->hi) - log(c->lo));
	return t < 0 ? 0 : t > 1 ? 1 : t;
}

/* Value of image cell (row group, column): max over the group's nodes of
 * each node's mean over the column's bins. */
static double group_value(const iogplot_series *s, size_t n0, size_t n1, size_t c0, size_t c1,
                          size_t *arg)
{
	double best = NAN;
	for (size_t k = n0; k < n1; k++) {
		double sum = 0;
		size_t n = 0;
		for (size_t b = c0; b < c1; b++) {
			double c = cell(s, k, b);
			if (!isnan(c)) {
				sum += c;
				n++;
			}
		}
		if (n && (isnan(best) || sum / (double)n > best)) {
			best = sum / (double)n;
			if (arg)
				*arg = k;
		}
	}
	return best;
}

static void col_range(const iogplot_series *s, double lo, double hi, int ncols, int i, size_t b0,
                      size_t b1, size_t *c0, size_t *c1)
{
	double ta = lo + (hi - lo) * i / ncols, tb = lo + (hi - lo) * (i + 1) / ncols;
	double a = floor((ta - s->t0) / s->step + 1e-9), b = ceil((tb - s->t0) / s->step - 1e-9);
	a = fmax(a, (double)b0);
	b = fmin(b, (double)b1);
	*c0 = *c1 = 0;
	if (b > a) {
		*c0 = (size_t)a;
		*c1 = (size_t)b;
	}
}

static void heat_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                      const iogplot_frame *f, const iogplot_view *v)
{
	const iogplot_series *s = series_of(f, v);
	const pl_sub *u = &l->sub[0];
	const iogplot_rect *p = &u->plot;
	size_t b0, b1;
	pl_series_window(s, u->x.lo, u->x.hi, f->t_now, &b0, &b1);
	int ncols = (int)fmax(1, fmin(floor(p->w), ceil((u->x.hi - u->x.lo) / s->step)));
	int nrows = (int)fmax(1, fmin(floor(p->h), (double)s->nnodes));
	static uint32_t lut[256];
	if (!lut[0]) {
		for (int i = 0; i < 256; i++) {
			double rr, gg, bb;
			pl_heat_color(i / 255.0, &rr, &gg, &bb);
			lut[i] = 0xff000000u | (uint32_t)lround(rr * 255) << 16 |
			         (uint32_t)lround(gg * 255) << 8 | (uint32_t)lround(bb * 255);
		}
	}
	cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, ncols, nrows);
	if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(img);
		return;
	}
	cairo_surface_flush(img);
	unsigned char *data = cairo_image_surface_get_data(img);
	int stride = cairo_image_surface_get_stride(img);
	size_t *cr0 = malloc((size_t)ncols * 2 * sizeof(size_t));
	if (!cr0) {
		cairo_surface_destroy(img);
		return;
	}
	for (int c = 0; c < ncols; c++)
		col_range(s, u->x.lo, u->x.hi, ncols, c, b0, b1, &cr0[2 * c], &cr0[2 * c + 1]);
	for (int r = 0; r < nrows; r++) {
		size_t n0 = (size_t)r * s->nnodes / (size_t)nrows;
		size_t n1 = (size_t)(r + 1) * s->nnodes / (size_t)nrows;
		uint32_t *row = (uint32_t *)(data + (size_t)r * (size_t)stride);
		for (int c = 0; c < ncols; c++) {
			double val = group_value(s, n0, n1, cr0[2 * c], cr0[2 * c + 1], NULL);
			if (isnan(val)) {
				row[c] = 0;
				continue;
			}
			row[c] = lut[(int)(color_t(&l->caxis, val) * 255 + 0.5)];
		}
	}
	free(cr0);
	cairo_surface_mark_dirty(img);
	cairo_save(cr);
	cairo_rectangle(cr, p->x, p->y, p->w, p->h);
	cairo_clip(cr);
	cairo_translate(cr, p->x, p->y);
	cairo_scale(cr, p->w / ncols, p->h / nrows);
	cairo_set_source_surface(cr, img, 0, 0);
	cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
	cairo_paint(cr);
	cairo_restore(cr);
	cairo_surface_destroy(img);

	/* node labels: every row when they fit, else every k-th */
	double fs = l->fs, rh = p->h / (double)s->nnodes;
	size_t every = 1;
	static const size_t steps[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000 };
	for (int i = 0; i < 13; i++) {
		every = steps[i];
		if (rh * (double)every >= fs * 1.25)
			break;
	}
	cairo_save(cr);
	cairo_rectangle(cr, 0, p->y - fs, p->x - 2, p->h + 2 * fs);
	cairo_clip(cr);
	pl_font(cr, st, 0.8, 0);
	for (size_t k = 0; k < s->nnodes; k += every) {
		double y = p->y + rh * ((double)k + (every == 1 ? 0.5 : 0));
		pl_rgba(cr, st->dim, 1);
		if (every > 1) {
			pl_rgba(cr, st->axis, 1);
			cairo_move_to(cr, p->x - fs * 0.3, round(y) + 0.5);
			cairo_line_to(cr, p->x, round(y) + 0.5);
			cairo_stroke(cr);
			pl_rgba(cr, st->dim, 1);
		}
		char name[160];
		pl_fit_middle(cr, s->nodes[k] ? s->nodes[k] : "?", p->x - fs * 0.6, name, sizeof(name));
		pl_text(cr, p->x - fs * 0.4, y, 1, 0.5, name);
	}
	cairo_restore(cr);
	/* selected nodes: a marker on the left edge */
	for (int h = 0; h < v->nhighlight && h < 4; h++)
		for (size_t k = 0; k < s->nnodes && v->highlight[h]; k++)
			if (!strcmp(s->nodes[k], v->highlight[h])) {
				double y = p->y + rh * ((double)k + 0.5);
				pl_rgba(cr, st->select, 1);
				cairo_move_to(cr, p->x - 1, y);
				cairo_line_to(cr, p->x - fs * 0.55, y - fs * 0.35);
				cairo_line_to(cr, p->x - fs * 0.55, y + fs * 0.35);
				cairo_close_path(cr);
				cairo_fill(cr);
			}
	pl_font(cr, st, 0.8, 0);
	pl_rgba(cr, st->dim, 1);
	pl_text(cr, l->cbar.x + l->cbar.w / 2, l->cbar.y - fs * 0.3, 0.5, 1, v->heat_p99 ? "p99" : "B/s");
}

static void heat_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	if (v->heat_p99) {
		snprintf(buf, len, "%zu nodes, read + write latency p99 per %.0f s (m: bytes/s)%s",
		         f->lat_heat.nnodes, f->lat_heat.step,
		         f->lat_heat.nnodes > 200 ? ", rows show the slowest node of each group" : "");
		return;
	}
	snprintf(buf, len, "%zu nodes, read + write bytes/s (m: latency p99)%s", f->rates.nnodes,
	         f->rates.nnodes > 200 ? ", rows show the busiest node of each group" : "");
}

static int heat_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                        double x, double y, char *buf, size_t len)
{
	const iogplot_series *s = series_of(f, v);
	const pl_sub *u = &l->sub[0];
	const iogplot_rect *p = &u->plot;
	if (x < p->x || x >= p->x + p->w || y < p->y || y >= p->y + p->h || !s->nnodes)
		return 0;
	int ncols = (int)fmax(1, fmin(floor(p->w), ceil((u->x.hi - u->x.lo) / s->step)));
	int nrows = (int)fmax(1, fmin(floor(p->h), (double)s->nnodes));
	int c = (int)((x - p->x) / p->w * ncols), r = (int)((y - p->y) / p->h * nrows);
	if (c >= ncols)
		c = ncols - 1;
	if (r >= nrows)
		r = nrows - 1;
	size_t b0, b1, c0, c1, arg = 0;
	pl_series_window(s, u->x.lo, u->x.hi, f->t_now, &b0, &b1);
	col_range(s, u->x.lo, u->x.hi, ncols, c, b0, b1, &c0, &c1);
	size_t n0 = (size_t)r * s->nnodes / (size_t)nrows, n1 = (size_t)(r + 1) * s->nnodes / (size_t)nrows;
	double val = group_value(s, n0, n1, c0, c1, &arg);
	if (isnan(val))
		return 0;
	char ta[32], tb[32], vv[32], rd[32], wr[32];
	iogplot_fmt_clock(ta, sizeof(ta), s->t0 + (double)c0 * s->step, 1);
	iogplot_fmt_clock(tb, sizeof(tb), s->t0 + (double)c1 * s->step, 1);
	if (v->heat_p99) {
		iogp_fmt_ns(vv, sizeof(vv), val, IOGP_UNITS_WIDE);
		int n = n1 - n0 > 1 ?
		        snprintf(buf, len, "%s … %s (%zu nodes)\nslowest %s: read + write p99 %s\n%s–%s",
		                 s->nodes[n0], s->nodes[n1 - 1], n1 - n0, s->nodes[arg], vv, ta, tb) :
		        snprintf(buf, len, "%s: read + write latency p99 %s\n%s–%s", s->nodes[arg], vv, ta, tb);
		return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
	}
	iogp_fmt_rate(vv, sizeof(vv), "bytes", val, IOGP_UNITS_WIDE);
	double sr = 0, sw = 0;
	size_t nr = 0;
	for (size_t b = c0; b < c1; b++) {
		float a = s->v[0][arg * s->nbins + b], w = s->v[1][arg * s->nbins + b];
		if (isnan(a) && isnan(w))
			continue;
		sr += isnan(a) ? 0 : a;
		sw += isnan(w) ? 0 : w;
		nr++;
	}
	iogp_fmt_rate(rd, sizeof(rd), "bytes", nr ? sr / (double)nr : 0, IOGP_UNITS_WIDE);
	iogp_fmt_rate(wr, sizeof(wr), "bytes", nr ? sw / (double)nr : 0, IOGP_UNITS_WIDE);
	int n;
	if (n1 - n0 > 1)
		n = snprintf(buf, len, "%s … %s (%zu nodes)\nbusiest %s: %s\n(read %s, write %s)\n%s–%s",
		             s->nodes[n0], s->nodes[n1 - 1], n1 - n0, s->nodes[arg], vv, rd, wr, ta, tb);
	else
		n = snprintf(buf, len, "%s: %s\n(read %s, write %s)\n%s–%s", s->nodes[arg], vv, rd, wr,
		             ta, tb);
	return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_heatmap_ops = { heat_layout, heat_title, heat_data, heat_tooltip };
