/* plot_hist.c - the histogram panels: request size (read, write; by count
 * or by bytes, beside its common sizes), queue depth, latency (read, write,
 * meta) with p50/p90/p99 markers, MPI message size (inside the traffic
 * panel). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iogp_layers.h"
#include "iogp_size_table.h"
#include "plot.h"

static const char *const opname[5] = { "read", "write", "meta", "all", "size" };

/* What a histogram of panel counts. */
static const char *noun(int panel)
{
	return panel == IOGPLOT_MSGSIZE ? "messages" : "requests";
}

int pl_hist_series(const iogplot_frame *f, int panel, const iogp_hist **h, int *ops)
{
	int n = 0;
	switch (panel) {
	case IOGPLOT_SIZE:
		for (int i = 0; i < 2; i++) {
			h[n] = &f->size[i];
			ops[n++] = i;
		}
		break;
	case IOGPLOT_LATENCY:
		for (int i = 0; i < 3; i++) {
			h[n] = &f->lat[i];
			ops[n++] = i;
		}
		break;
	case IOGPLOT_QD:
		h[n] = &f->qd;
		ops[n++] = 3;
		break;
	case IOGPLOT_MSGSIZE:
		h[n] = &f->msgsize;
		ops[n++] = 4;
		break;
	}
	return n;
}

static pl_unit unit_of(int panel)
{
	return panel == IOGPLOT_SIZE || panel == IOGPLOT_MSGSIZE ? PL_SIZE :
	       panel == IOGPLOT_LATENCY ? PL_NS : PL_COUNT;
}

/* The bars' weight: the size panel's choice (count or bytes), else counts. */
static int weight_of(const iogplot_view *v, int panel)
{
	return panel == IOGPLOT_SIZE && v->size_weight == IOGP_WEIGHT_BYTES ? IOGP_WEIGHT_BYTES
	                                                                    : IOGP_WEIGHT_COUNT;
}

/* Drawn extent of a bin [lo, hi] along x. */
static void bin_edges(const pl_axis *x, uint64_t lo, uint64_t hi, double *x0, double *x1)
{
	double a, b;
	if (x->log) {
		a = lo ? (double)lo : 0.5;
		b = (double)hi + 1;
	} else {
		a = (double)lo - 0.5;
		b = (double)hi + 0.5;
	}
	*x0 = round(pl_map(x, a));
	*x1 = round(pl_map(x, b));
	if (*x1 < *x0 + 1)
		*x1 = *x0 + 1;
}

static void hist_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                        const iogplot_view *v)
{
	const iogp_hist *h[3];
	int ops[3], n = pl_hist_series(f, l->panel, h, ops), wt = weight_of(v, l->panel);
	uint64_t minlo = UINT64_MAX, maxhi = 0;
	double maxc = 0;
	for (int s = 0; s < n; s++)
		for (size_t i = 0; i < h[s]->n; i++) {
			uint64_t lo, hi;
			if (iogp_bins_bounds(&h[s]->scheme, h[s]->bins[i].idx, &lo, &hi) < 0)
				continue;
			if (lo < minlo)
				minlo = lo;
			if (hi > maxhi)
				maxhi = hi;
			double c = iogp_size_bin_weight(h[s], i, wt);
			if (c > maxc)
				maxc = c;
		}
	if (!maxc && l->panel == IOGPLOT_QD &&
	    !iogp_layer_slot_metric(f->layer, IOGP_SLOT_QUEUE_DEPTH)) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no queue depth in the %s layer",
		         iogp_layer_title(f->layer));
		return;
	}
	if (!(maxc > 0)) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), l->panel == IOGPLOT_MSGSIZE ?
		         "no MPI messages yet" : "no requests yet");
		return;
	}
	pl_sub *s = &l->sub[0];
	s->x.unit = unit_of(l->panel);
	s->y.unit = wt == IOGP_WEIGHT_BYTES ? PL_BYTES : PL_COUNT;
	s->x.log = !!(v->logx & (1u << l->panel));
	s->y.log = !!(v->logy & (1u << l->panel));
	if (maxhi > (1ull << 62))
		maxhi = 1ull << 62;
	if (s->x.log) {
		s->x.lo = minlo ? ldexp(1, (int)floor(log2((double)minlo))) : 0.5;
		s->x.hi = ldexp(1, (int)ceil(log2((double)maxhi + 1)));
		if (s->x.hi < s->x.lo * 8)
			s->x.hi = s->x.lo * 8;
	} else {
		double span = (double)maxhi - (double)minlo + 1;
		s->x.lo = (double)minlo < span / 3 ? ((double)minlo > 0 ? 0 : -0.5) : (double)minlo - 0.5;
		s->x.hi = (double)maxhi + 0.5 + span * 0.02;
		if (s->x.unit == PL_COUNT && s->x.hi - s->x.lo < 8)
			s->x.hi = s->x.lo + 8;
	}
	double top = maxc * (l->panel == IOGPLOT_LATENCY ? 1.25 : 1.05);
	if (s->y.log) {
		s->y.lo = 0.8;
		s->y.hi = pl_nice_ceil(top * 1.5);
		if (s->y.hi < 10)
			s->y.hi = 10;
	} else {
		s->y.lo = 0;
		s->y.hi = pl_nice_ceil(top);
	}
	if (l->panel == IOGPLOT_SIZE)
		pl_sizes_layout(l, st, f);
	s->x.p0 = s->plot.x;
	s->x.p1 = s->plot.x + s->plot.w;
	s->y.p0 = s->plot.y + s->plot.h;
	s->y.p1 = s->plot.y;
}

static iogplot_rgba series_color(const iogplot_style *st, int op)
{
	return op < 3 ? st->op[op] : st->total;
}

static void draw_legend(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                        const iogp_hist **h, const int *ops, int n)
{
	const iogplot_rect *p = &l->sub[0].plot;
	double fs = l->fs, x = p->x + p->w - fs * 0.4;
	pl_font(cr, st, 0.85, 0);
	for (int s = n - 1; s >= 0; s--) {
		if (!h[s]->total)
			continue;
		double tw = pl_text_w(cr, opname[ops[s]]);
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, x, p->y + fs * 0.9, 1, 0.5, opname[ops[s]]);
		x -= tw + fs * 0.35;
		pl_rgba(cr, series_color(st, ops[s]), 1);
		cairo_rectangle(cr, x - fs * 0.7, p->y + fs * 0.55, fs * 0.7, fs * 0.7);
		cairo_fill(cr);
		x -= fs * 1.6;
	}
}

static void hist_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                      const iogplot_frame *f, const iogplot_view *v)
{
	const iogp_hist *h[3];
	int ops[3], n = pl_hist_series(f, l->panel, h, ops), shown = 0, wt = weight_of(v, l->panel);
	const pl_sub *s = &l->sub[0];
	const iogplot_rect *p = &s->plot;
	for (int k = 0; k < n; k++)
		shown += h[k]->total > 0;
	double base = round(p->y + p->h);
	cairo_save(cr);
	cairo_rectangle(cr, p->x, p->y, p->w, p->h);
	cairo_clip(cr);
	for (int k = n - 1; k >= 0; k--) {
		if (!h[k]->total)
			continue;
		iogplot_rgba c = series_color(st, ops[k]);
		double alpha = shown > 1 ? 0.45 : 0.85;
		for (size_t i = 0; i < h[k]->n; i++) {
			uint64_t lo, hi;
			if (iogp_bins_bounds(&h[k]->scheme, h[k]->bins[i].idx, &lo, &hi) < 0)
				continue;
			double x0, x1, y = round(pl_map(&s->y, iogp_size_bin_weight(h[k], i, wt)));
			bin_edges(&s->x, lo, hi, &x0, &x1);
			if (y > base - 1)
				y = base - 1;
			if (x1 - x0 >= 4) {
				x0 += 0.5;
				x1 -= 0.5;
			}
			pl_rgba(cr, c, alpha);
			cairo_rectangle(cr, x0, y, x1 - x0, base - y);
			cairo_fill(cr);
			pl_rgba(cr, c, 1);
			cairo_rectangle(cr, x0, y, x1 - x0, 1.5);
			cairo_fill(cr);
		}
	}
	if (l->panel == IOGPLOT_LATENCY) {
		static const double q[3] = { 0.5, 0.9, 0.99 };
		static const char *const qn[3] = { "p50", "p90", "p99" };
		static const double dash[2] = { 4, 3 };
		double fs = l->fs, boxes[9][3];   /* placed labels: row, x0, x1 */
		int nbox = 0;
		pl_font(cr, st, 0.8, 0);
		for (int k = 0; k < n; k++) {
			if (!h[k]->total)
				continue;
			for (int j = 0; j < 3; j++) {
				uint64_t val;
				if (iogp_hist_quantile(h[k], q[j], &val) < 0)
					continue;
				double x = round(pl_map(&s->x, (double)val)) + 0.5;
				double tw = pl_text_w(cr, qn[j]);
				int row = 0;
				for (int again = 1; again && row < 6;) {
					again = 0;
					for (int b = 0; b < nbox; b++)
						if (boxes[b][0] == row && x < boxes[b][2] + 3 && x + tw + 2 > boxes[b][1]) {
							row++;
							again = 1;
							break;
						}
				}
				if (nbox < 9) {
					boxes[nbox][0] = row;
					boxes[nbox][1] = x;
					boxes[nbox][2] = x + tw + 2;
					nbox++;
				}
				double ty = p->y + fs * (2.0 + row * 1.05);
				pl_rgba(cr, series_color(st, ops[k]), 0.9);
				cairo_set_line_width(cr, 1.2);
				cairo_set_dash(cr, dash, 2, 0);
				cairo_move_to(cr, x, ty - fs * 0.4);
				cairo_line_to(cr, x, base);
				cairo_stroke(cr);
				cairo_set_dash(cr, NULL, 0, 0);
				pl_text(cr, x + 2, ty, 0, 0.5, qn[j]);
			}
		}
	}
	cairo_restore(cr);
	if (l->panel != IOGPLOT_QD && l->panel != IOGPLOT_MSGSIZE)   /* one series */
		draw_legend(cr, l, st, h, ops, n);
	if (l->panel == IOGPLOT_SIZE)
		pl_sizes_draw(cr, l, st, f);
}

static void fmt_int(char *buf, size_t len, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;
	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}

static void fmt_val(pl_unit u, double v, char *buf, size_t len)
{
	pl_axis a = { .unit = u };
	pl_label(&a, v, buf, len);
}

static void hist_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v,
                       int panel)
{
	const iogp_hist *h[3];
	int ops[3], n = pl_hist_series(f, panel, h, ops);
	size_t o = 0, head = 0;
	buf[0] = 0;
	if (panel == IOGPLOT_SIZE)   /* "by count · read 5, p50 1 MiB ..." */
		o = head = (size_t)snprintf(buf, len, "%s ·", iogp_size_weight_title(weight_of(v, panel)));
	for (int k = 0; k < n && o < len; k++) {
		if (!h[k]->total)
			continue;
		char cnt[32], a[32], b[32], c[32];
		iogp_fmt_count(cnt, sizeof(cnt), (double)h[k]->total, IOGP_UNITS_WIDE);
		const char *sep = o == head ? (head ? " " : "") : "   ";
		if (panel == IOGPLOT_LATENCY) {
			uint64_t q50 = 0, q90 = 0, q99 = 0;
			iogp_hist_quantile(h[k], 0.5, &q50);
			iogp_hist_quantile(h[k], 0.9, &q90);
			iogp_hist_quantile(h[k], 0.99, &q99);
			iogp_fmt_ns(a, sizeof(a), (double)q50, IOGP_UNITS_WIDE);
			iogp_fmt_ns(b, sizeof(b), (double)q90, IOGP_UNITS_WIDE);
			iogp_fmt_ns(c, sizeof(c), (double)q99, IOGP_UNITS_WIDE);
			o += (size_t)snprintf(buf + o, len - o, "%s%s p50 %s p90 %s p99 %s", sep,
			                      opname[ops[k]], a, b, c);
		} else if (panel == IOGPLOT_SIZE || panel == IOGPLOT_MSGSIZE) {
			/* sizes that were asked for: exact, or the floors of the quantiles' bins */
			uint64_t q50 = 0, q99 = 0;
			iogp_hist_quantile(h[k], 0.5, &q50);
			iogp_hist_quantile(h[k], 0.99, &q99);
			iogp_fmt_size(a, sizeof(a), (double)iogp_size_shown(h[k], q50), IOGP_UNITS_WIDE);
			iogp_fmt_size(b, sizeof(b), (double)iogp_size_shown(h[k], q99), IOGP_UNITS_WIDE);
			if (panel == IOGPLOT_MSGSIZE)
				o += (size_t)snprintf(buf + o, len - o, "%s messages, p50 %s p99 %s", cnt, a, b);
			else
				o += (size_t)snprintf(buf + o, len - o, "%s%s %s, p50 %s p99 %s", sep,
				                      opname[ops[k]], cnt, a, b);
		} else {
			uint64_t mx = 0;
			iogp_hist_max(h[k], &mx);
			o += (size_t)snprintf(buf + o, len - o, "%s%s requests, mean %.1f, max %" PRIu64,
			                      sep, cnt, iogp_hist_mean(h[k]), mx);
		}
	}
}

static void size_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	hist_title(buf, len, f, v, IOGPLOT_SIZE);
}

static void qd_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	hist_title(buf, len, f, v, IOGPLOT_QD);
}

static void lat_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	hist_title(buf, len, f, v, IOGPLOT_LATENCY);
}

static int hist_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                        double x, double y, char *buf, size_t len)
{
	(void)v;
	(void)y;
	const iogp_hist *h[3];
	int ops[3], n = pl_hist_series(f, l->panel, h, ops);
	const pl_sub *s = &l->sub[0];
	if (x < s->plot.x || x > s->plot.x + s->plot.w)
		return 0;
	size_t o = 0;
	pl_unit u = unit_of(l->panel);
	for (int k = 0; k < n && o < len; k++) {
		for (size_t i = 0; i < h[k]->n; i++) {
			uint64_t lo, hi;
			double x0, x1;
			if (iogp_bins_bounds(&h[k]->scheme, h[k]->bins[i].idx, &lo, &hi) < 0)
				continue;
			bin_edges(&s->x, lo, hi, &x0, &x1);
			if (x < x0 || x >= x1)
				continue;
			char cnt[40], a[32], b[32], ea[32], eb[32];
			fmt_int(cnt, sizeof(cnt), h[k]->bins[i].count);
			double pct = 100.0 * (double)h[k]->bins[i].count / (double)h[k]->total;
			const char *nl = o ? "\n" : "";
			if (l->panel == IOGPLOT_QD && lo == hi) {
				o += (size_t)snprintf(buf + o, len - o,
				                      "%sdepth %" PRIu64 ": %s requests (%.1f%%)", nl, lo, cnt, pct);
			} else {
				fmt_int(ea, sizeof(ea), lo);
				fmt_int(eb, sizeof(eb), hi);
				fmt_val(u, (double)lo, a, sizeof(a));
				fmt_val(u, (double)hi, b, sizeof(b));
				const char *un = u == PL_SIZE ? " B" : u == PL_NS ? " ns" : "";
				size_t first, ne;
				if (u == PL_SIZE && iogp_hist_bin_exact(h[k], i, &first, &ne) && ne == 1) {
					/* every request in it had one size: say that one */
					iogp_fmt_size(a, sizeof(a), (double)h[k]->exact[first].value, IOGP_UNITS_WIDE);
					o += (size_t)snprintf(buf + o, len - o, "%s%s %s: %s %s (%.1f%%)", nl,
					                      opname[ops[k]], a, cnt, noun(l->panel), pct);
				} else if (lo == hi)
					o += (size_t)snprintf(buf + o, len - o, "%s%s %s%s (%s): %s %s (%.1f%%)",
					                      nl, opname[ops[k]], ea, un, a, cnt, noun(l->panel), pct);
				else
					o += (size_t)snprintf(buf + o, len - o,
					                      "%s%s [%s, %s]%s (%s – %s): %s %s (%.1f%%)",
					                      nl, opname[ops[k]], ea, eb, un, a, b, cnt, noun(l->panel), pct);
				if (u == PL_SIZE && o < len) {   /* and the bytes moved: the by-bytes weight */
					double tot = iogp_size_weight_total(h[k], IOGP_WEIGHT_BYTES);
					double by = iogp_size_bin_weight(h[k], i, IOGP_WEIGHT_BYTES);
					iogp_fmt_bytes(a, sizeof(a), by, IOGP_UNITS_WIDE);
					o += (size_t)snprintf(buf + o, len - o, ", %s (%.1f%% of bytes)", a,
					                      tot > 0 ? 100.0 * by / tot : 0.0);
				}
			}
			break;
		}
	}
	if (o >= len)
		o = len - 1;
	return (int)o;
}

const pl_panel_ops pl_size_ops = { hist_layout, size_title, hist_data, hist_tooltip };
const pl_panel_ops pl_qd_ops = { hist_layout, qd_title, hist_data, hist_tooltip };
const pl_panel_ops pl_latency_ops = { hist_layout, lat_title, hist_data, hist_tooltip };

static void msgsize_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	hist_title(buf, len, f, v, IOGPLOT_MSGSIZE);
}

const pl_panel_ops pl_msgsize_ops = { hist_layout, msgsize_title, hist_data, hist_tooltip };
