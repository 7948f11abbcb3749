/* panel_sizes.c - the size panel's common sizes: for each direction shown,
 * the most common exact request sizes with their counts and shares of the
 * requests and of the bytes (rows built by iogp_size_table.h, as in
 * iogram-view), beside the histogram's rows when the panel is wide enough,
 * else below them. */
#include <stdio.h>
#include <string.h>

#include "top.h"

#define GAP 2            /* columns between the rows and a table, and between tables */
#define HIST_MIN_ROWS 3  /* a histogram with the tables below keeps these (or half the lines) */

/* The columns a histogram of nd directions keeps with the tables beside it. */
static int hist_min_w(int nd)
{
	return 16 + 18 * nd;
}

static const char *what_of(const hist_view *hv, int t)
{
	return hv->what[t][0] ? hv->what[t] : "all";
}

/* Column widths of table t (header included); returns its width. A table
 * without rows is its one line: "write: no exact sizes recorded". */
static int table_cols(const hist_view *hv, int t, int c[4])
{
	const iogp_size_table *tab = &hv->tab[t];
	if (!tab->nrows)
		return (int)strlen(what_of(hv, t)) + 2 + (int)strlen(tab->note);
	c[0] = (int)strlen(what_of(hv, t)) + 1 + (int)strlen(iogp_size_table_heads[0]);
	for (int k = 1; k < 4; k++)
		c[k] = (int)strlen(iogp_size_table_heads[k]);
	for (size_t i = 0; i <= tab->nrows; i++) {
		const iogp_size_row *r = i < tab->nrows ? &tab->rows[i] : &tab->other;
		if (i == tab->nrows && !tab->has_other)
			break;
		const char *txt[4] = { r->size_text, r->count_text, r->req_text, r->byte_text };
		for (int k = 0; k < 4; k++) {
			int n = (int)strlen(txt[k]);
			c[k] = n > c[k] ? n : c[k];
		}
	}
	return c[0] + c[1] + c[2] + c[3] + 3 * hv->tab_gap;
}

static int table_lines(const iogp_size_table *tab)
{
	return tab->nrows ? 1 + (int)tab->nrows + tab->has_other : 1;
}

/* Every table has no rows and says the same: one line says it for all. */
static int one_note(const hist_view *hv)
{
	for (int t = 0; t < hv->ntab; t++)
		if (hv->tab[t].nrows || strcmp(hv->tab[t].note, hv->tab[0].note))
			return 0;
	return hv->ntab > 0;
}

static const char *note_line(const hist_view *hv, char *buf, size_t len)
{
	snprintf(buf, len, "common sizes: %s", hv->tab[0].note);
	return buf;
}

int sizes_place(hist_view *hv, top_rect a)
{
	hv->ntab = 0;
	int any = 0;
	for (int d = 0; d < hv->nd; d++)
		any |= hv->found[d] && hv->native[d].total > 0;
	if (!any || a.h <= 0)
		return a.h;
	/* the tables of the directions shown (one without requests: its note) */
	for (int d = 0; d < hv->nd; d++)
		iogp_size_table_build(&hv->tab[hv->ntab++], &hv->native[d], IOGP_SIZE_TABLE_ROWS,
		                      IOGP_UNITS_CELL);
	int c[4], tw[3] = { 0, 0, 0 }, need = 0;
	char note[96];
	for (int g = 1; g <= 2; g++) {   /* the tables' widths with 1 or 2 columns between columns */
		hv->tab_gap = g;
		if (one_note(hv)) {
			tw[g] = (int)strlen(note_line(hv, note, sizeof(note)));
			need = 1;
			continue;
		}
		for (int t = 0; t < hv->ntab; t++) {
			tw[g] += (t ? GAP : 0) + table_cols(hv, t, c);
			int n = table_lines(&hv->tab[t]);
			need = n > need ? n : need;
		}
	}
	for (int g = 2; g >= 1 && need > 1; g--)   /* beside the rows (a note: below) */
		if (a.w - tw[g] - GAP >= hist_min_w(hv->nd)) {
			hv->tab_side = 1;
			hv->tab_gap = g;
			hv->tabr = (top_rect){ a.y, a.x + a.w - tw[g], need < a.h ? need : a.h, tw[g] };
			return a.h;
		}
	/* below them, sharing the lines: the histogram keeps at least half */
	int hist_min = a.h / 2 > HIST_MIN_ROWS ? a.h / 2 : HIST_MIN_ROWS;
	int avail = a.h - hist_min;
	hv->tab_gap = tw[2] <= a.w ? 2 : 1;
	if (tw[hv->tab_gap] > a.w || avail < 1 || (need > 1 && avail < 2)) {
		hv->ntab = 0;   /* no room: the zoomed panel has it */
		return a.h;
	}
	int h = need < avail ? need : avail;
	hv->tab_side = 0;
	hv->tabr = (top_rect){ a.y + a.h - h, a.x, h, tw[hv->tab_gap] };
	return a.h - h;
}

static void table_draw(top_surf *s, const hist_view *hv, int t, int y, int x, int h)
{
	const iogp_size_table *tab = &hv->tab[t];
	int st = hv->dir[t] == DIR_WRITE ? ST_WRITE : hv->dir[t] == DIR_READ ? ST_READ : ST_BOTH;
	if (!tab->nrows) {
		int n = draw_textf(s, y, x, 64, st, "%s:", what_of(hv, t));
		draw_text(s, y, x + n + 1, 64, ST_DIM, tab->note);
		return;
	}
	int c[4];
	table_cols(hv, t, c);
	/* "read size  count % reqs % bytes", numbers right-aligned under them */
	const char *head0 = iogp_size_table_heads[0];
	int x0 = x + c[0] - (int)strlen(what_of(hv, t)) - 1 - (int)strlen(head0);
	x0 += draw_text(s, y, x0, c[0], st, what_of(hv, t)) + 1;
	draw_text(s, y, x0, (int)strlen(head0), ST_LABEL, head0);
	for (int k = 1, cx = x + c[0] + hv->tab_gap; k < 4; cx += c[k] + hv->tab_gap, k++)
		draw_text(s, y, cx + c[k] - (int)strlen(iogp_size_table_heads[k]), c[k], ST_LABEL,
		          iogp_size_table_heads[k]);
	for (size_t i = 0; i <= tab->nrows && (int)i + 1 < h; i++) {
		const iogp_size_row *r = i < tab->nrows ? &tab->rows[i] : &tab->other;
		if (i == tab->nrows && !tab->has_other)
			break;
		const char *txt[4] = { r->size_text, r->count_text, r->req_text, r->byte_text };
		int rs = i < tab->nrows ? ST_NORMAL : ST_DIM;
		for (int k = 0, cx = x; k < 4; cx += c[k] + hv->tab_gap, k++)
			draw_text(s, y + 1 + (int)i, cx + c[k] - (int)strlen(txt[k]), c[k], rs, txt[k]);
	}
}

void sizes_draw(top_surf *s, const hist_view *hv)
{
	if (!hv->ntab || hv->tabr.h <= 0)
		return;
	top_rect r = hv->tabr;
	if (!hv->tab_side) {
		/* right after the rows drawn, a blank line between when there is room */
		const top_rect *a = &hv->rowsr;
		int y = a->y + (int)hv->nrows + (hv->nrows ? 1 : 0);
		if (y < r.y)
			r.y = y;
	}
	if (one_note(hv)) {
		char note[96];
		draw_text(s, r.y, r.x, r.w, ST_DIM, note_line(hv, note, sizeof(note)));
		return;
	}
	for (int t = 0, x = r.x, c[4]; t < hv->ntab; t++) {
		table_draw(s, hv, t, r.y, x, r.h);
		x += table_cols(hv, t, c) + GAP;
	}
}
