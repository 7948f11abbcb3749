/* layout.c - where the header and the five panels go for a terminal size,
 * from 80x24 up; a zoomed panel takes the whole body; panel titles; a
 * frame's panels drawn in their places. */
#include <string.h>

#include "top.h"

#define HEADER_ROWS 2
#define MIN_ROWS 20
#define MIN_COLS 70
#define MIN_ZOOM_ROWS 8
#define MIN_ZOOM_COLS 40

struct cell {
	int panel;
	int weight;   /* percent of the row's width */
};
struct row {
	int weight;   /* percent of the body's height */
	struct cell c[3];
	int n;
};

/* Up to ~140 columns: latency gets the full width (its quantiles need it).
 * Panels are in the order of their keys, left to right, top to bottom. */
static const struct row narrow[] = {
	{ 31, { { IOGP_PANEL_SIZE, 62 }, { IOGP_PANEL_QD, 38 } }, 2 },
	{ 36, { { IOGP_PANEL_LATENCY, 100 } }, 1 },
	{ 33, { { IOGP_PANEL_ACCESS, 40 }, { IOGP_PANEL_RATES, 60 } }, 2 },
};
static const struct row wide[] = {
	{ 50, { { IOGP_PANEL_SIZE, 42 }, { IOGP_PANEL_QD, 22 }, { IOGP_PANEL_LATENCY, 36 } }, 3 },
	{ 50, { { IOGP_PANEL_ACCESS, 40 }, { IOGP_PANEL_RATES, 60 } }, 2 },
};
/* Tall terminals have room for the nodes table too (else 7 zooms it). */
#define TALL_ROWS 50
static const struct row narrow_tall[] = {
	{ 24, { { IOGP_PANEL_SIZE, 62 }, { IOGP_PANEL_QD, 38 } }, 2 },
	{ 28, { { IOGP_PANEL_LATENCY, 100 } }, 1 },
	{ 24, { { IOGP_PANEL_ACCESS, 40 }, { IOGP_PANEL_RATES, 60 } }, 2 },
	{ 24, { { IOGP_PANEL_NODES, 100 } }, 1 },
};
static const struct row wide_tall[] = {
	{ 36, { { IOGP_PANEL_SIZE, 42 }, { IOGP_PANEL_QD, 22 }, { IOGP_PANEL_LATENCY, 36 } }, 3 },
	{ 32, { { IOGP_PANEL_ACCESS, 40 }, { IOGP_PANEL_RATES, 60 } }, 2 },
	{ 32, { { IOGP_PANEL_NODES, 100 } }, 1 },
};

int panel_shown(int p)
{
	const iogp_panel *e = iogp_panel_get(p);
	return e && (e->viewers & IOGP_VIEWER_TUI);
}

void panel_title(const top_frame *f, top_surf *s, top_rect r, int p, const char *title,
                 const char *right)
{
	const iogp_panel *e = iogp_panel_get(p);
	draw_title(s, (top_rect){ r.y, r.x, 1, r.w }, f->v->focus == p, e->key,
	           title ? title : e->short_title, right);
}

static void place(top_layout *l, const struct row *rows, int nrows, int y0, int h, int cols)
{
	int y = y0, left = h;
	for (int i = 0; i < nrows; i++) {
		int rh = i == nrows - 1 ? left : h * rows[i].weight / 100;
		int x = 0, wleft = cols;
		for (int j = 0; j < rows[i].n; j++) {
			int last = j == rows[i].n - 1;
			int cw = last ? wleft : cols * rows[i].c[j].weight / 100;
			int p = rows[i].c[j].panel;
			/* one blank column between neighbours */
			l->panel[p] = (top_rect){ y, x, rh, last ? cw : cw - 1 };
			l->visible[p] = 1;
			x += cw;
			wleft -= cw;
		}
		y += rh;
		left -= rh;
	}
}

void layout_compute(top_layout *l, int rows, int cols, int zoom)
{
	memset(l, 0, sizeof(*l));
	int zoomed = panel_shown(zoom);
	l->min_rows = zoomed ? MIN_ZOOM_ROWS : MIN_ROWS;
	l->min_cols = zoomed ? MIN_ZOOM_COLS : MIN_COLS;
	if (rows < l->min_rows || cols < l->min_cols) {
		l->too_small = 1;
		return;
	}
	l->header = (top_rect){ 0, 0, HEADER_ROWS, cols };
	int body = rows - HEADER_ROWS;
	if (zoomed) {
		l->panel[zoom] = (top_rect){ HEADER_ROWS, 0, body, cols };
		l->visible[zoom] = 1;
		return;
	}
	if (cols >= 140 && rows >= TALL_ROWS)
		place(l, wide_tall, 3, HEADER_ROWS, body, cols);
	else if (cols >= 140)
		place(l, wide, 2, HEADER_ROWS, body, cols);
	else if (rows >= TALL_ROWS + 6)
		place(l, narrow_tall, 4, HEADER_ROWS, body, cols);
	else
		place(l, narrow, 3, HEADER_ROWS, body, cols);
}

void panels_draw(const top_frame *f, top_surf *s, const top_layout *l)
{
	panel_header_draw(f, s, l->header);
	for (int p = 0; p < IOGP_PANEL_N; p++) {
		if (!l->visible[p])
			continue;
		top_rect r = l->panel[p];
		switch (iogp_panel_get(p)->data) {
		case IOGP_DATA_HIST:
			panel_hist_draw(f, s, r, p);
			break;
		case IOGP_DATA_ACCESS:
			panel_access_draw(f, s, r);
			break;
		case IOGP_DATA_RATES:
			panel_rates_draw(f, s, r);
			break;
		case IOGP_DATA_NODES:
			panel_nodes_draw(f, s, r);
			break;
		case IOGP_DATA_PHASES:
			panel_phases_draw(f, s, r);
			break;
		case IOGP_DATA_INSIGHTS:
			panel_insights_draw(f, s, r);
			break;
		case IOGP_DATA_PROBE:
			panel_probe_draw(f, s, r);
			break;
		case IOGP_DATA_MATRIX:
			panel_matrix_draw(f, s, r);
			break;
		case IOGP_DATA_STATUS:
			break;
		}
	}
}
