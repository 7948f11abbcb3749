/* plot_access.c - access pattern: file offset vs time, one strip per file
 * (busiest first), a mark per sampled request coloured by op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

#define MAX_STRIPS 8

static void access_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                          const iogplot_view *v)
{
	(void)st;
	if (!f->naccess || !f->nfiles) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no access samples yet");
		return;
	}
	double lo, hi, fs = l->fs;
	iogplot_view_time(v, f, &lo, &hi);
	iogplot_rect base = l->sub[0].plot;
	double gap = round(fs * 1.5), smin = fs * 2.6;   /* gap holds the file's name */
	base.y += gap - round(fs * 0.5);
	base.h -= gap - round(fs * 0.5);
	int k = (int)floor((base.h + gap) / (smin + gap));
	if (k > MAX_STRIPS)
		k = MAX_STRIPS;
	if (k > (int)f->nfiles)
		k = (int)f->nfiles;
	if (k < 1)
		k = 1;
	double sh = floor((base.h - gap * (k - 1)) / k);
	l->nsub = k;
	for (int i = 0; i < k; i++) {
		pl_sub *u = &l->sub[i];
		memset(u, 0, sizeof(*u));
		u->plot = (iogplot_rect){ base.x, base.y + i * (sh + gap), base.w, sh };
		u->xlabels = i == k - 1;
		u->ylabels = 1;
		u->yticks_max = 2;
		u->x = (pl_axis){ lo, hi, u->plot.x, u->plot.x + u->plot.w, 0, PL_TIME };
		double ext = (double)f->files[i].extent;
		u->y = (pl_axis){ 0, pl_nice_ceil(fmax(ext, 1)), u->plot.y + u->plot.h, u->plot.y, 0,
		                  PL_BYTES };
	}
}

/* One pass over the samples marks device-independent cells (1 px) per strip
 * and op; marks are then filled from those maps, so the cost follows the
 * samples once and the pixels, not samples x strips. */
static void access_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                        const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	double fs = l->fs;
	int ns = l->nsub;
	int w[PL_MAXSUB], h[PL_MAXSUB];
	unsigned char *seen[PL_MAXSUB] = { 0 };
	for (int i = 0; i < ns; i++) {
		w[i] = (int)ceil(l->sub[i].plot.w) + 1;
		h[i] = (int)ceil(l->sub[i].plot.h) + 1;
		seen[i] = calloc((size_t)w[i] * (size_t)h[i], 1);
		if (!seen[i]) {
			while (i-- > 0)
				free(seen[i]);
			return;
		}
	}
	const pl_axis *xa = &l->sub[0].x;
	double xscale = (xa->p1 - xa->p0) / (xa->hi - xa->lo);
	for (size_t k = 0; k < f->naccess; k++) {
		const iogplot_access_pt *a = &f->access[k];
		if (a->file >= (uint32_t)ns || a->t < xa->lo || a->t > xa->hi)
			continue;
		const pl_sub *u = &l->sub[a->file];
		int cx = (int)((a->t - xa->lo) * xscale);
		double ys = u->plot.h / (u->y.hi - u->y.lo);
		int y0 = (int)(u->plot.h - (double)a->offset * ys);
		int y1 = (int)(u->plot.h - ((double)a->offset + (double)a->size) * ys);
		if (y1 < 0)
			y1 = 0;
		if (y0 >= h[a->file])
			y0 = h[a->file] - 1;
		unsigned char bit = (unsigned char)(a->op ? 2 : 1);
		for (int y = y1; y <= y0 && y >= 0; y++)
			seen[a->file][(size_t)y * (size_t)w[a->file] + (size_t)cx] |= bit;
	}
	for (int op = 0; op < 2; op++) {
		for (int i = 0; i < ns; i++) {
			const iogplot_rect *p = &l->sub[i].plot;
			for (int y = 0; y < h[i]; y++) {
				const unsigned char *row = seen[i] + (size_t)y * (size_t)w[i];
				for (int x = 0; x < w[i]; x++) {
					if (!(row[x] & (1 << op)))
						continue;
					int x1 = x;   /* runs of marked cells in one rectangle */
					while (x1 + 1 < w[i] && (row[x1 + 1] & (1 << op)))
						x1++;
					cairo_rectangle(cr, p->x + x - 1, p->y + y - 1, x1 - x + 2, 2);
					x = x1;
				}
			}
		}
		pl_rgba(cr, st->op[op], 0.9);
		cairo_fill(cr);
	}
	for (int i = 0; i < ns; i++)
		free(seen[i]);
	for (int i = 0; i < ns; i++) {
		const iogplot_rect *p = &l->sub[i].plot;
		char lab[512];
		const iogplot_file *fl = &f->files[i];
		snprintf(lab, sizeof(lab), "%s  (%s)", fl->path, fl->source);
		pl_font(cr, st, 0.8, 0);
		double maxw = p->w - fs * 1.0;
		const char *s = lab;
		char tmp[520];
		if (pl_text_w(cr, lab) > maxw) {
			const char *q = lab;
			do {
				q++;
				while ((*q & 0xc0) == 0x80)
					q++;
				snprintf(tmp, sizeof(tmp), "…%s", q);
			} while (*q && pl_text_w(cr, tmp) > maxw);
			s = tmp;
		}
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, p->x, p->y - fs * 0.55, 0, 1, s);
	}
	/* legend */
	static const char *const nm[2] = { "read", "write" };
	pl_font(cr, st, 0.85, 0);
	double x = l->w - fs * 0.8, ly = fs * 1.05;
	for (int op = 1; op >= 0; op--) {
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, x, ly, 1, 0.5, nm[op]);
		x -= pl_text_w(cr, nm[op]) + fs * 0.3;
		pl_rgba(cr, st->op[op], 1);
		cairo_rectangle(cr, x - fs * 0.6, ly - fs * 0.3, fs * 0.6, fs * 0.6);
		cairo_fill(cr);
		x -= fs * 1.4;
	}
	if ((size_t)l->nsub < f->nfiles) {
		char more[64];
		snprintf(more, sizeof(more), "+%zu more files", f->nfiles - (size_t)l->nsub);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, x, ly, 1, 0.5, more);
	}
}

static void access_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	char n[32];
	iogp_fmt_count(n, sizeof(n), (double)f->naccess, IOGP_UNITS_WIDE);
	snprintf(buf, len, "%s samples, %zu file%s", n, f->nfiles, f->nfiles == 1 ? "" : "s");
}

static int access_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                          double x, double y, char *buf, size_t len)
{
	(void)v;
	int strip = -1;
	for (int i = 0; i < l->nsub; i++) {
		const iogplot_rect *p = &l->sub[i].plot;
		if (x >= p->x && x <= p->x + p->w && y >= p->y - 3 && y <= p->y + p->h + 3)
			strip = i;
	}
	if (strip < 0)
		return 0;
	const pl_sub *u = &l->sub[strip];
	double best = 36;
	size_t arg = SIZE_MAX;
	for (size_t k = 0; k < f->naccess; k++) {
		const iogplot_access_pt *a = &f->access[k];
		if (a->file != (uint32_t)strip || a->t < u->x.lo || a->t > u->x.hi)
			continue;
		double dx = pl_map(&u->x, a->t) - x, dy = pl_map(&u->y, (double)a->offset) - y;
		double d = dx * dx + dy * dy;
		if (d < best) {
			best = d;
			arg = k;
		}
	}
	if (arg == SIZE_MAX)
		return 0;
	const iogplot_access_pt *a = &f->access[arg];
	char off[32], sz[32], when[32];
	iogp_fmt_bytes(off, sizeof(off), (double)a->offset, IOGP_UNITS_WIDE);
	iogp_fmt_size(sz, sizeof(sz), (double)a->size, IOGP_UNITS_WIDE);
	iogplot_fmt_clock(when, sizeof(when), a->t, 1);
	int ms = (int)floor((a->t - floor(a->t)) * 1000);
	int n = snprintf(buf, len, "%s at %s.%03d\noffset %llu (%s), size %llu (%s)\n%s\n%s",
	                 a->op ? "write" : "read", when, ms, (unsigned long long)a->offset, off,
	                 (unsigned long long)a->size, sz, f->files[a->file].path,
	                 f->files[a->file].source);
	return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_access_ops = { access_layout, access_title, access_data, access_tooltip };
