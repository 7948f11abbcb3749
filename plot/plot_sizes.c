/* plot_sizes.c - the size panel's common sizes: per direction, the most
 * common exact request sizes with their counts and shares of the requests
 * and of the bytes (rows built by iogp_size_table.h, as in iogram-top),
 * beside the plot when the panel is wide, else below it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iogp_size_table.h"
#include "plot.h"

#define FONT_REL 0.85    /* the tables' text, as the axes' */
#define LINE 1.35        /* line height, in font sizes */
#define COL_GAP 1.0      /* between columns, in font sizes */
#define TAB_GAP 2.0      /* between the read and the write table */

static const char *const opname[2] = { "read", "write" };

typedef struct ptab {
	iogp_size_table t;
	int op;
	double col[4];       /* column widths */
	double w;            /* the table's width (a note: its line's) */
} ptab;

/* The tables of the directions with requests; one note line for all of
 * them when none has exact sizes. Returns how many (0..2), *width the
 * tables' width side by side and *lines the most lines one takes. */
static int tables(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f, double fs,
                  ptab tab[2], int *one_note, double *width, int *lines)
{
	int n = 0, notes = 0;
	pl_font(cr, st, FONT_REL, 0);
	*width = 0;
	*lines = 0;
	for (int d = 0; d < 2; d++) {
		if (!f->size[d].total)
			continue;
		ptab *p = &tab[n++];
		iogp_size_table_build(&p->t, &f->size[d], IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
		p->op = d;
		notes += !p->t.nrows;
	}
	*one_note = n > 0 && notes == n && (n == 1 || !strcmp(tab[0].t.note, tab[1].t.note));
	if (*one_note) {
		char line[96];
		snprintf(line, sizeof(line), "Common sizes: %s", tab[0].t.note);
		*width = pl_text_w(cr, line);
		*lines = 1;
		return n;
	}
	for (int k = 0; k < n; k++) {
		ptab *p = &tab[k];
		char head[40];
		if (!p->t.nrows) {
			snprintf(head, sizeof(head), "%s: %s", opname[p->op], p->t.note);
			p->w = pl_text_w(cr, head);
		} else {
			snprintf(head, sizeof(head), "%s %s", opname[p->op], iogp_size_table_heads[0]);
			pl_font(cr, st, FONT_REL, 1);   /* headers are bold */
			p->col[0] = pl_text_w(cr, head) + fs;   /* and the colour swatch */
			for (int c = 1; c < 4; c++)
				p->col[c] = pl_text_w(cr, iogp_size_table_heads[c]);
			pl_font(cr, st, FONT_REL, 0);
			for (size_t i = 0; i <= p->t.nrows; i++) {
				const iogp_size_row *r = i < p->t.nrows ? &p->t.rows[i] : &p->t.other;
				if (i == p->t.nrows && !p->t.has_other)
					break;
				const char *txt[4] = { r->size_text, r->count_text, r->req_text, r->byte_text };
				for (int c = 0; c < 4; c++)
					p->col[c] = fmax(p->col[c], pl_text_w(cr, txt[c]));
			}
			p->w = p->col[0] + p->col[1] + p->col[2] + p->col[3] + 3 * COL_GAP * fs;
		}
		int nl = p->t.nrows ? 1 + (int)p->t.nrows + p->t.has_other : 1;
		*lines = nl > *lines ? nl : *lines;
		*width += (k ? TAB_GAP * fs : 0) + p->w;
	}
	return n;
}

void pl_sizes_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f)
{
	cairo_surface_t *s1 = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
	cairo_t *cr = cairo_create(s1);
	ptab tab[2];
	double tw;
	int one, need, n = tables(cr, st, f, l->fs, tab, &one, &tw, &need);
	cairo_destroy(cr);
	cairo_surface_destroy(s1);
	if (!n)
		return;
	pl_sub *s = &l->sub[0];
	double fs = l->fs, lh = round(fs * LINE), right = fs * 0.8;
	double plot_w = l->w - right - tw - fs * 1.5 - s->plot.x;
	if (!one && plot_w >= fmax(0.5 * l->w, 24 * fs)) {   /* beside the plot (a note: below) */
		int fit = (int)floor((s->plot.h + fs * PL_BOTTOM) / lh);
		l->table_lines = need < fit ? need : fit;
		if (l->table_lines < (need > 1 ? 2 : 1))
			return;
		s->plot.w = round(plot_w);
		l->table = (iogplot_rect){ round(l->w - right - tw), s->plot.y, ceil(tw), l->table_lines * lh };
		l->ntable = n;
		return;
	}
	if (tw > l->w - 2 * right)
		return;   /* too narrow even below: the zoomed panel has it */
	/* below the x labels; the plot keeps at least ~half its height */
	double keep = fmax(0.45 * s->plot.h, 5 * fs);
	int fit = (int)floor((s->plot.h - keep - fs * 0.9) / lh);
	l->table_lines = need < fit ? need : fit;
	if (l->table_lines < (need > 1 ? 2 : 1)) {
		l->table_lines = 0;
		return;
	}
	s->plot.h -= l->table_lines * lh + fs * 0.9;   /* and a margin under the table */
	l->table = (iogplot_rect){ right, s->plot.y + s->plot.h + fs * (PL_BOTTOM + 0.4), ceil(tw),
	                           l->table_lines * lh };
	l->ntable = n;
}

static void cell(cairo_t *cr, double x, double w, double y, const char *t)
{
	pl_text(cr, x + w, y, 1, 0.5, t);   /* right-aligned: sizes and numbers line up */
}

void pl_sizes_draw(cairo_t *cr, const pl_layout *l, const iogplot_style *st, const iogplot_frame *f)
{
	if (!l->ntable || l->table_lines < 1)
		return;
	ptab tab[2];
	double tw, fs = l->fs, lh = round(fs * LINE);
	int one, need, n = tables(cr, st, f, fs, tab, &one, &tw, &need);
	(void)need;
	cairo_save(cr);
	double x = l->table.x, y0 = l->table.y + lh / 2;
	if (one) {
		char line[96];
		snprintf(line, sizeof(line), "Common sizes: %s", tab[0].t.note);
		pl_rgba(cr, st->dim, 1);
		pl_text(cr, x, y0, 0, 0.5, line);
		cairo_restore(cr);
		return;
	}
	for (int k = 0; k < n; k++) {
		const ptab *p = &tab[k];
		char head[40];
		if (!p->t.nrows) {
			snprintf(head, sizeof(head), "%s: %s", opname[p->op], p->t.note);
			pl_rgba(cr, st->dim, 1);
			pl_text(cr, x, y0, 0, 0.5, head);
			x += p->w + TAB_GAP * fs;
			continue;
		}
		/* header: the direction's colour swatch, "read size  count  % reqs  % bytes" */
		pl_rgba(cr, st->op[p->op], 1);
		cairo_rectangle(cr, x, y0 - fs * 0.35, fs * 0.7, fs * 0.7);
		cairo_fill(cr);
		snprintf(head, sizeof(head), "%s %s", opname[p->op], iogp_size_table_heads[0]);
		pl_font(cr, st, FONT_REL, 1);
		pl_rgba(cr, st->fg, 1);
		cell(cr, x, p->col[0], y0, head);
		double cx = x + p->col[0] + COL_GAP * fs;
		for (int c = 1; c < 4; c++) {
			cell(cr, cx, p->col[c], y0, iogp_size_table_heads[c]);
			cx += p->col[c] + COL_GAP * fs;
		}
		pl_font(cr, st, FONT_REL, 0);
		for (size_t i = 0; i <= p->t.nrows && (int)i + 1 < l->table_lines; i++) {
			const iogp_size_row *r = i < p->t.nrows ? &p->t.rows[i] : &p->t.other;
			if (i == p->t.nrows && !p->t.has_other)
				break;
			const char *txt[4] = { r->size_text, r->count_text, r->req_text, r->byte_text };
			double y = y0 + lh * (double)(i + 1);
			pl_rgba(cr, i < p->t.nrows ? st->fg : st->dim, 1);
			cx = x;
			for (int c = 0; c < 4; c++) {
				cell(cr, cx, p->col[c], y, txt[c]);
				cx += p->col[c] + COL_GAP * fs;
			}
		}
		x += p->w + TAB_GAP * fs;
	}
	cairo_restore(cr);
}
