/* plot_rates.c - per-node read and write bytes/s over time: the band from the
 * slowest to the fastest node, the average, the total (right axis), a line
 * per node when few, and highlighted nodes for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

static const char *const opname[2] = { "read", "write" };

static void window_max(const iogplot_series *s, int op, size_t b0, size_t b1, double *mx, double *tot)
{
	*mx = 0;
	*tot = 0;
	for (size_t b = b0; b < b1; b++) {
		if (!isnan(s->max[op][b]) && s->max[op][b] > *mx)
			*mx = s->max[op][b];
		if (!isnan(s->total[op][b]) && s->total[op][b] > *tot)
			*tot = s->total[op][b];
	}
}

static void rates_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                         const iogplot_view *v)
{
	(void)st;
	const iogplot_series *s = &f->rates;
	double lo, hi;
	size_t b0, b1;
	iogplot_view_time(v, f, &lo, &hi);
	pl_series_window(s, lo, hi, f->t_now, &b0, &b1);
	int any = 0;
	for (int op = 0; op < 2 && !any; op++)
		for (size_t b = b0; b < b1 && !any; b++)
			any = !isnan(s->max[op][b]);
	if (!s->nnodes || !any) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg),
		         s->nnodes ? "no rates in this time range" : "no rates yet");
		return;
	}
	double fs = l->fs;
	int total = s->nnodes > 1;
	iogplot_rect base = l->sub[0].plot;
	if (total)
		base.w = fmax(10, l->w - base.x - round(fs * PL_LEFT));
	double gap = round(fs * 0.9), hh = floor((base.h - gap) / 2);
	l->nsub = 2;
	for (int op = 0; op < 2; op++) {
		pl_sub *u = &l->sub[op];
		memset(u, 0, sizeof(*u));
		u->plot = (iogplot_rect){ base.x, base.y + op * (hh + gap), base.w, hh };
		u->xlabels = op == 1;
		u->ylabels = 1;
		double mx, tot;
		window_max(s, op, b0, b1, &mx, &tot);
		u->x = (pl_axis){ lo, hi, u->plot.x, u->plot.x + u->plot.w, 0, PL_TIME };
		u->y.unit = PL_RATE;
		u->y.log = !!(v->logy & (1u << IOGPLOT_RATES));
		u->y.hi = pl_nice_ceil(fmax(mx * 1.05, 1));
		u->y.lo = u->y.log ? u->y.hi / 1e4 : 0;
		u->y.p0 = u->plot.y + u->plot.h;
		u->y.p1 = u->plot.y;
		if (total) {
			u->has_y2 = 1;
			u->y2 = u->y;
			u->y2.hi = pl_nice_ceil(fmax(tot * 1.05, 1));
			u->y2.lo = u->y.log ? u->y2.hi / 1e4 : 0;
		}
	}
}

/* Columns over the time axis: each gets the bins it overlaps. */
typedef struct cols {
	int n;
	double lo, hi;
} cols;

static void col_bins(const iogplot_series *s, const cols *c, int i, size_t b0, size_t b1,
                     size_t *c0, size_t *c1)
{
	double ta = c->lo + (c->hi - c->lo) * i / c->n, tb = c->lo + (c->hi - c->lo) * (i + 1) / c->n;
	double a = floor((ta - s->t0) / s->step), b = ceil((tb - s->t0) / s->step);
	if (a < (double)b0)
		a = (double)b0;
	if (b > (double)b1)
		b = (double)b1;
	if (b <= a) {
		*c0 = *c1 = 0;
		return;
	}
	*c0 = (size_t)a;
	*c1 = (size_t)b;
}

static double col_mean(const float *v, size_t c0, size_t c1)
{
	double sum = 0;
	size_t n = 0;
	for (size_t b = c0; b < c1; b++)
		if (!isnan(v[b])) {
			sum += v[b];
			n++;
		}
	return n ? sum / (double)n : NAN;
}

static double col_ext(const float *v, size_t c0, size_t c1, int want_max)
{
	double r = NAN;
	for (size_t b = c0; b < c1; b++)
		if (!isnan(v[b]) && (isnan(r) || (want_max ? v[b] > r : v[b] < r)))
			r = v[b];
	return r;
}

static void draw_line(cairo_t *cr, const pl_sub *u, const pl_axis *y, const double *xs,
                      const double *ys, int n)
{
	int pen = 0;
	for (int i = 0; i < n; i++) {
		if (isnan(ys[i])) {
			pen = 0;
			continue;
		}
		double py = pl_map(y, ys[i]);
		if (pen)
			cairo_line_to(cr, xs[i], py);
		else
			cairo_move_to(cr, xs[i], py);
		if (!pen && (i + 1 >= n || isnan(ys[i + 1])))
			cairo_line_to(cr, xs[i] + 1, py);   /* a lone point stays visible */
		pen = 1;
	}
	(void)u;
	cairo_stroke(cr);
}

static const unsigned hl_rgb[4] = { 0xd62728, 0x17becf, 0xbcbd22, 0xe377c2 };
/* one colour per node line (up to 8), none of them read, write or total's */
static const unsigned node_rgb[8] = { 0x2ca02c, 0x8c564b, 0xe377c2, 0x006d5b,
                                      0x17becf, 0xbcbd22, 0xd62728, 0x7f7f7f };

static void set_rgb(cairo_t *cr, unsigned rgb, double a)
{
	cairo_set_source_rgba(cr, ((rgb >> 16) & 255) / 255.0, ((rgb >> 8) & 255) / 255.0,
	                      (rgb & 255) / 255.0, a);
}

typedef struct endlab {
	double y;
	size_t node;
} endlab;

static int cmp_endlab(const void *a, const void *b)
{
	double x = ((const endlab *)a)->y, y = ((const endlab *)b)->y;
	return (x > y) - (x < y);
}

/* Each node line's name at its right end, in its colour, moved apart
 * where they would overlap and kept inside the plot. */
static void end_labels(cairo_t *cr, const iogplot_style *st, const pl_sub *u, double fs,
                       const iogplot_series *s, endlab *lab, size_t n)
{
	const iogplot_rect *p = &u->plot;
	double gap = fs * 1.05;
	if ((double)n * gap > p->h)
		return;   /* a strip too short for them: the tooltip names every line */
	qsort(lab, n, sizeof(*lab), cmp_endlab);
	for (size_t i = 0; i < n; i++) {
		lab[i].y = fmax(lab[i].y, p->y + gap / 2);
		if (i && lab[i].y < lab[i - 1].y + gap)
			lab[i].y = lab[i - 1].y + gap;
	}
	/* pushed past the bottom: shift the run back up */
	double over = n ? lab[n - 1].y - (p->y + p->h - gap / 2) : 0;
	for (size_t i = n; over > 0 && i-- > 0;) {
		lab[i].y -= over;
		if (i && lab[i].y - gap >= lab[i - 1].y)
			break;
		over = i ? lab[i - 1].y + gap - lab[i].y : 0;
	}
	pl_font(cr, st, 0.8, 1);
	for (size_t i = 0; i < n; i++) {
		const char *name = s->nodes[lab[i].node] ? s->nodes[lab[i].node] : "?";
		double tw = pl_text_w(cr, name), x = p->x + p->w - fs * 0.3;
		pl_rgba(cr, st->panel, 0.8);
		cairo_rectangle(cr, x - tw - fs * 0.2, lab[i].y - fs * 0.5, tw + fs * 0.4, fs);
		cairo_fill(cr);
		set_rgb(cr, node_rgb[lab[i].node % 8], 1);
		pl_text(cr, x, lab[i].y, 1, 0.5, name);
	}
}

static void rates_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                       const iogplot_frame *f, const iogplot_view *v)
{
	const iogplot_series *s = &f->rates;
	size_t b0, b1;
	pl_series_window(s, l->sub[0].x.lo, l->sub[0].x.hi, f->t_now, &b0, &b1);
	/* a point per 2 pixels: lines look the same, stroking costs half */
	int n = (int)fmax(1, fmin(l->sub[0].plot.w / 2, ceil((l->sub[0].x.hi - l->sub[0].x.lo) / s->step)));
	cols c = { n, l->sub[0].x.lo, l->sub[0].x.hi };
	double *xs = malloc((size_t)n * sizeof(double) * 6);
	size_t *cb = malloc((size_t)n * 2 * sizeof(size_t));
	if (!xs || !cb) {
		free(xs);
		free(cb);
		return;
	}
	double *mn = xs + n, *av = xs + 2 * n, *mx = xs + 3 * n, *tot = xs + 4 * n, *tmp = xs + 5 * n;
	for (int i = 0; i < n; i++) {
		col_bins(s, &c, i, b0, b1, &cb[2 * i], &cb[2 * i + 1]);
		xs[i] = pl_map(&l->sub[0].x, c.lo + (c.hi - c.lo) * (i + 0.5) / n);
	}
	double fs = l->fs;
	for (int op = 0; op < 2; op++) {
		const pl_sub *u = &l->sub[op];
		const iogplot_rect *p = &u->plot;
		for (int i = 0; i < n; i++) {
			size_t c0 = cb[2 * i], c1 = cb[2 * i + 1];
			mn[i] = col_ext(s->min[op], c0, c1, 0);
			mx[i] = col_ext(s->max[op], c0, c1, 1);
			av[i] = col_mean(s->avg[op], c0, c1);
			tot[i] = col_mean(s->total[op], c0, c1);
		}
		cairo_save(cr);
		cairo_rectangle(cr, p->x, p->y, p->w, p->h);
		cairo_clip(cr);
		/* band: runs of columns with data */
		pl_rgba(cr, st->op[op], 0.2);
		for (int i = 0; i < n;) {
			while (i < n && isnan(mx[i]))
				i++;
			int j = i;
			while (j < n && !isnan(mx[j]))
				j++;
			if (j > i) {
				cairo_move_to(cr, xs[i] - (j == i + 1), pl_map(&u->y, mx[i]));
				for (int k = i; k < j; k++)
					cairo_line_to(cr, xs[k], pl_map(&u->y, mx[k]));
				if (j == i + 1)
					cairo_line_to(cr, xs[i] + 1, pl_map(&u->y, mx[i]));
				for (int k = j - 1; k >= i; k--)
					cairo_line_to(cr, xs[k] + (j == i + 1 && k == i), pl_map(&u->y, mn[k]));
				cairo_close_path(cr);
				cairo_fill(cr);
			}
			i = j;
		}
		cairo_set_line_join(cr, CAIRO_LINE_JOIN_BEVEL);
		endlab lab[8];
		size_t nlab = 0;
		if (s->nnodes > 1 && s->nnodes <= 8) {
			/* a line per node in a colour of its own, named at its end */
			cairo_set_line_width(cr, 1.2);
			for (size_t k = 0; k < s->nnodes; k++) {
				const float *row = s->v[op] + k * s->nbins;
				for (int i = 0; i < n; i++)
					tmp[i] = col_mean(row, cb[2 * i], cb[2 * i + 1]);
				set_rgb(cr, node_rgb[k % 8], 0.95);
				draw_line(cr, u, &u->y, xs, tmp, n);
				for (int i = n; i-- > 0;)
					if (!isnan(tmp[i])) {
						lab[nlab++] = (endlab){ pl_map(&u->y, tmp[i]), k };
						break;
					}
			}
		}
		if (u->has_y2) {
			cairo_set_line_width(cr, 1.4);
			pl_rgba(cr, st->total, 0.95);
			draw_line(cr, u, &u->y2, xs, tot, n);
		}
		cairo_set_line_width(cr, 1.8);
		pl_rgba(cr, st->op[op], 1);
		draw_line(cr, u, &u->y, xs, av, n);
		for (int h = 0; h < v->nhighlight && h < 4; h++) {
			size_t k = 0;
			while (k < s->nnodes && (!v->highlight[h] || strcmp(s->nodes[k], v->highlight[h])))
				k++;
			if (k == s->nnodes)
				continue;
			const float *row = s->v[op] + k * s->nbins;
			for (int i = 0; i < n; i++)
				tmp[i] = col_mean(row, cb[2 * i], cb[2 * i + 1]);
			unsigned rgb = hl_rgb[h];
			cairo_set_source_rgb(cr, ((rgb >> 16) & 255) / 255.0, ((rgb >> 8) & 255) / 255.0,
			                     (rgb & 255) / 255.0);
			cairo_set_line_width(cr, 2.2);
			draw_line(cr, u, &u->y, xs, tmp, n);
		}
		end_labels(cr, st, u, fs, s, lab, nlab);
		cairo_restore(cr);
		if (u->has_y2) {   /* the right axis says what it is */
			pl_font(cr, st, 0.75, 1);
			pl_rgba(cr, st->total, 1);
			pl_text(cr, p->x + p->w + fs * 0.4, p->y - fs * 0.15, 0, 1, "total");
		}
		/* strip label and legend */
		pl_font(cr, st, 0.9, 1);
		pl_rgba(cr, st->op[op], 1);
		pl_text(cr, p->x + fs * 0.4, p->y + fs * 0.7, 0, 0.5, opname[op]);
		if (op == 0) {
			char leg[200];
			pl_font(cr, st, 0.8, 0);
			double x = p->x + p->w - fs * 0.3;
			const char *items[3] = { u->has_y2 ? "total (right axis)" : NULL, "avg",
			                         s->nnodes > 1 ? "min–max" : NULL };
			iogplot_rgba cc[3] = { st->total, st->op[op], st->op[op] };
			for (int k = 0; k < 3; k++) {
				if (!items[k])
					continue;
				snprintf(leg, sizeof(leg), "%s", items[k]);
				pl_rgba(cr, st->dim, 1);
				pl_text(cr, x, p->y + fs * 0.7, 1, 0.5, leg);
				x -= pl_text_w(cr, leg) + fs * 0.3;
				pl_rgba(cr, cc[k], k == 2 ? 0.3 : 1);
				cairo_rectangle(cr, x - fs * 1.1, p->y + fs * 0.7 - (k == 2 ? fs * 0.3 : 1),
				                fs * 1.1, k == 2 ? fs * 0.6 : 2);
				cairo_fill(cr);
				x -= fs * 1.8;
			}
			for (int h = v->nhighlight - 1; h >= 0; h--) {
				if (h >= 4 || !v->highlight[h])
					continue;
				unsigned rgb = hl_rgb[h];
				pl_rgba(cr, st->dim, 1);
				pl_text(cr, x, p->y + fs * 0.7, 1, 0.5, v->highlight[h]);
				x -= pl_text_w(cr, v->highlight[h]) + fs * 0.3;
				cairo_set_source_rgb(cr, ((rgb >> 16) & 255) / 255.0,
				                     ((rgb >> 8) & 255) / 255.0, (rgb & 255) / 255.0);
				cairo_rectangle(cr, x - fs * 1.1, p->y + fs * 0.7 - 1, fs * 1.1, 2.5);
				cairo_fill(cr);
				x -= fs * 1.8;
			}
		}
	}
	free(xs);
	free(cb);
}

static void rates_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	const iogplot_series *s = &f->rates;
	buf[0] = 0;
	if (!s->nbins)
		return;
	/* the latest bin with data */
	size_t b1 = s->nbins;
	if (f->t_now > 0) {
		double b = ceil((f->t_now - s->t0) / s->step - 1e-9);
		b1 = b < 0 ? 0 : b < (double)s->nbins ? (size_t)b : s->nbins;
	}
	char r[32], w[32];
	for (size_t b = b1; b-- > 0;) {
		if (isnan(s->total[0][b]) && isnan(s->total[1][b]))
			continue;
		iogp_fmt_rate(r, sizeof(r), "bytes", isnan(s->total[0][b]) ? 0 : s->total[0][b], IOGP_UNITS_WIDE);
		iogp_fmt_rate(w, sizeof(w), "bytes", isnan(s->total[1][b]) ? 0 : s->total[1][b], IOGP_UNITS_WIDE);
		snprintf(buf, len, "%zu node%s, now: read %s, write %s", s->nnodes,
		         s->nnodes == 1 ? "" : "s", r, w);
		return;
	}
	snprintf(buf, len, "%zu node%s", s->nnodes, s->nnodes == 1 ? "" : "s");
}

static int rates_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                         double x, double y, char *buf, size_t len)
{
	(void)v;
	const iogplot_series *s = &f->rates;
	int op = -1;
	for (int k = 0; k < l->nsub; k++) {
		const iogplot_rect *p = &l->sub[k].plot;
		if (x >= p->x && x <= p->x + p->w && y >= p->y - 2 && y <= p->y + p->h + 2)
			op = k;
	}
	if (op < 0)
		return 0;
	double t = pl_unmap(&l->sub[op].x, x);
	double bf = floor((t - s->t0) / s->step);
	if (bf < 0 || bf >= (double)s->nbins || (f->t_now > 0 && s->t0 + bf * s->step >= f->t_now))
		return 0;
	size_t b = (size_t)bf;
	if (isnan(s->total[op][b]))
		return 0;
	size_t kmin = 0, kmax = 0;
	float vmin = INFINITY, vmax = -INFINITY;
	for (size_t k = 0; k < s->nnodes; k++) {
		float val = s->v[op][k * s->nbins + b];
		if (isnan(val))
			continue;
		if (val < vmin) {
			vmin = val;
			kmin = k;
		}
		if (val > vmax) {
			vmax = val;
			kmax = k;
		}
	}
	char a[32], bb[32], tot[32], av[32], mn[32], mx[32];
	iogplot_fmt_clock(a, sizeof(a), s->t0 + bf * s->step, 1);
	iogplot_fmt_clock(bb, sizeof(bb), s->t0 + (bf + 1) * s->step, 1);
	iogp_fmt_rate(tot, sizeof(tot), "bytes", s->total[op][b], IOGP_UNITS_WIDE);
	iogp_fmt_rate(av, sizeof(av), "bytes", s->avg[op][b], IOGP_UNITS_WIDE);
	iogp_fmt_rate(mn, sizeof(mn), "bytes", vmin, IOGP_UNITS_WIDE);
	iogp_fmt_rate(mx, sizeof(mx), "bytes", vmax, IOGP_UNITS_WIDE);
	int n = snprintf(buf, len, "%s %s–%s\ntotal %s, avg %s\nmin %s (%s)\nmax %s (%s)",
	                 opname[op], a, bb, tot, av, mn, s->nodes[kmin], mx, s->nodes[kmax]);
	/* the lines drawn: each node's own value */
	for (size_t k = 0; n >= 0 && n < (int)len && s->nnodes > 1 && s->nnodes <= 8 && k < s->nnodes; k++) {
		float val = s->v[op][k * s->nbins + b];
		char t[32];
		if (isnan(val))
			snprintf(t, sizeof(t), "–");
		else
			iogp_fmt_rate(t, sizeof(t), "bytes", val, IOGP_UNITS_WIDE);
		n += snprintf(buf + n, len - (size_t)n, "%s%s %s", k ? "\n" : "\n\n", s->nodes[k], t);
	}
	return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_rates_ops = { rates_layout, rates_title, rates_data, rates_tooltip };
