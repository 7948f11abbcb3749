/* plot_insights.c - the findings (iogp_insights.h), most severe first: a
 * severity badge, the finding's text with its numbers (wrapped), and the
 * panel that shows it, which a click opens (iogplot_panel_link). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_phase_view.h"
#include "plot.h"

#define FONT_REL 0.9
#define LINE 1.4          /* in font sizes */
#define GAP 0.6           /* between findings */
#define MAX_LINES 4       /* of one finding's text */

typedef struct block {
	double y0, y1;                 /* the finding's lines, link included */
	int nlines;
	char line[MAX_LINES][256];
	char link[96];                 /* "Latency (3) →", "" when no panel shows it */
} block;

static void area(const pl_layout *l, double *x, double *y, double *w, double *h)
{
	double fs = l->fs;
	*x = fs * 0.8;
	*y = round(fs * (PL_TITLE_H + 0.4));
	*w = l->w - 2 * fs * 0.8;
	*h = l->h - *y - fs * 0.6;
}

/* Words of t into lines of at most w pixels (the last one cut with "…"). */
static int wrap(cairo_t *cr, const char *t, double w, char out[MAX_LINES][256])
{
	int n = 0;
	const char *p = t;
	while (*p && n < MAX_LINES) {
		size_t take = strlen(p), fit = 0;
		char buf[256];
		for (size_t k = 0; k <= take; k++) {
			if (p[k] != ' ' && p[k])
				continue;
			snprintf(buf, sizeof(buf), "%.*s", (int)k, p);
			if (pl_text_w(cr, buf) > w && fit)
				break;
			fit = k;
			if (!p[k])
				break;
		}
		if (!fit)
			fit = take < 255 ? take : 255;   /* one long word: as it is */
		snprintf(out[n], 256, "%.*s", (int)fit, p);
		p += fit;
		while (*p == ' ')
			p++;
		if (*p && n == MAX_LINES - 1) {
			snprintf(buf, sizeof(buf), "%s…", out[n]);
			snprintf(out[n], 256, "%s", buf);
		}
		n++;
	}
	return n;
}

/* The findings' blocks in l (those that fit); returns how many. */
static size_t blocks(const pl_layout *l, const iogplot_style *st, const iogplot_frame *f, block *b,
                     size_t max, size_t *hidden)
{
	double x, y, w, h, fs = l->fs, lh = round(fs * LINE);
	area(l, &x, &y, &w, &h);
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
	cairo_t *cr = cairo_create(s);
	cairo_surface_destroy(s);
	pl_font(cr, st, FONT_REL, 0);
	double badge = fs * 4.2, cy = y;
	size_t n = 0;
	for (size_t i = 0; i < f->ninsights && n < max; i++) {
		block *k = &b[n];
		memset(k, 0, sizeof(*k));
		k->nlines = wrap(cr, f->insights[i].text, w - badge, k->line);
		int p = iogp_insight_panel(&f->insights[i], IOGP_VIEWER_GTK);
		const iogp_panel *e = iogp_panel_get(p);
		if (e && e->key)
			snprintf(k->link, sizeof(k->link), "→ %s (%c)", e->title, e->key);
		else if (e)
			snprintf(k->link, sizeof(k->link), "→ %s", e->title);
		double need = (k->nlines + (k->link[0] != 0)) * lh;
		if (cy + need > y + h && n > 0)
			break;
		k->y0 = cy;
		k->y1 = cy + need;
		cy = k->y1 + round(fs * GAP);
		n++;
	}
	cairo_destroy(cr);
	*hidden = f->ninsights - n;
	return n;
}

static void insights_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                            const iogplot_view *v)
{
	(void)st;
	(void)v;
	if (!f->ninsights) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no findings: nothing stands out");
		return;
	}
	l->nsub = 0;   /* a list: no axes */
}

static void insights_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	size_t by[3] = { 0, 0, 0 };
	for (size_t i = 0; i < f->ninsights; i++)
		if (f->insights[i].severity >= 0 && f->insights[i].severity <= 2)
			by[f->insights[i].severity]++;
	int n = snprintf(buf, len, "%zu finding%s", f->ninsights, f->ninsights == 1 ? "" : "s");
	static const char *const nm[3] = { "info", "warn", "high" };
	for (int s = 2; s >= 0 && n >= 0 && (size_t)n < len; s--)
		if (by[s] && by[s] != f->ninsights)
			n += snprintf(buf + n, len - (size_t)n, " · %zu %s", by[s], nm[s]);
}

static iogplot_rgba sev_colour(const iogplot_style *st, int sev)
{
	return sev == IOGP_SEV_HIGH ? st->warn : sev == IOGP_SEV_WARN ? st->accent : st->op[0];
}

static void insights_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                          const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	block *b = malloc(f->ninsights * sizeof(*b));
	if (!b)
		return;
	size_t hidden, n = blocks(l, st, f, b, f->ninsights, &hidden);
	double x, y, w, h, fs = l->fs, lh = round(fs * LINE), badge = fs * 4.2;
	area(l, &x, &y, &w, &h);
	for (size_t i = 0; i < n; i++) {
		const iogp_insight *in = &f->insights[i];
		double cy = b[i].y0 + lh / 2;
		/* the badge: the severity's colour, its name */
		pl_rgba(cr, sev_colour(st, in->severity), 1);
		cairo_rectangle(cr, x, round(cy - fs * 0.6), badge - fs * 0.6, round(fs * 1.2));
		cairo_fill(cr);
		pl_font(cr, st, 0.75, 1);
		cairo_set_source_rgb(cr, 1, 1, 1);
		char sev[8];
		snprintf(sev, sizeof(sev), "%s", iogp_insight_severity_name(in->severity));
		for (char *c = sev; *c; c++)
			*c = (char)(*c - (*c >= 'a' && *c <= 'z' ? 32 : 0));
		pl_text(cr, x + (badge - fs * 0.6) / 2, cy, 0.5, 0.5, sev);
		pl_font(cr, st, FONT_REL, 0);
		pl_rgba(cr, st->fg, 1);
		for (int k = 0; k < b[i].nlines; k++)
			pl_text(cr, x + badge, cy + k * lh, 0, 0.5, b[i].line[k]);
		if (b[i].link[0]) {
			double ly = cy + b[i].nlines * lh;
			pl_font(cr, st, 0.85, 0);
			pl_rgba(cr, st->op[0], 1);
			pl_text(cr, x + badge, ly, 0, 0.5, b[i].link);
			double tw = pl_text_w(cr, b[i].link);
			cairo_rectangle(cr, x + badge, round(ly + fs * 0.45), tw, 1);
			cairo_fill(cr);
		}
	}
	if (hidden) {
		char more[64];
		snprintf(more, sizeof(more), "+%zu more (zoom in)", hidden);
		pl_font(cr, st, 0.85, 0);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, x + w, l->h - fs * 0.5, 1, 1, more);
	}
	free(b);
}

int pl_insight_at(const pl_layout *l, const iogplot_frame *f, double x, double y)
{
	if (!f->ninsights || x < 0 || x > l->w)
		return -1;
	block *b = malloc(f->ninsights * sizeof(*b));
	if (!b)
		return -1;
	iogplot_style st;
	iogplot_style_init(&st, l->dark);
	st.font_size = l->fs;
	size_t hidden, n = blocks(l, &st, f, b, f->ninsights, &hidden);
	int at = -1;
	for (size_t i = 0; i < n; i++)
		if (y >= b[i].y0 - l->fs * GAP / 2 && y < b[i].y1 + l->fs * GAP / 2)
			at = (int)i;
	free(b);
	return at;
}

static int insights_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                            double x, double y, char *buf, size_t len)
{
	(void)v;
	int i = pl_insight_at(l, f, x, y);
	if (i < 0)
		return 0;
	const iogp_insight *in = &f->insights[i];
	const iogp_panel *e = iogp_panel_get(iogp_insight_panel(in, IOGP_VIEWER_GTK));
	int n = snprintf(buf, len, "[%s] %s%s%s%s%s", iogp_insight_severity_name(in->severity), in->text,
	                 in->where[0] ? "\nabout: " : "", in->where, e ? "\nclick: the " : "",
	                 e ? e->title : "");
	if (e && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " panel");
	return n <= 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_insights_ops = { insights_layout, insights_title, insights_data,
                                       insights_tooltip };
