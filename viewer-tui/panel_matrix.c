/* panel_matrix.c - the MPI traffic panel (M): who sent how much to whom,
 * node x node (rank x rank of the selected node), each cell's value
 * coloured by heat with row totals (sent) at the right and column totals
 * (received) below, bytes or messages by the view's weight (v), per second
 * over the window or in total since start; under it the message-size
 * histogram. What is computed lives in iogp_matrix_view.h, shared with
 * iogram-view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_matrix_view.h"
#include "iogp_size_table.h"
#include "top.h"

#define CELL_W 9       /* " 123.4k/s" */
#define MAX_SHOWN 256

static void view_of(const top_frame *f, iogp_matrix_view *v)
{
	iogp_matrix_view_get(v, f->m, f->v->sel == IOGP_SEL_NODE ? f->v->sel_node : NULL, view_window(f->v),
	                     f->v->weight == IOGP_WEIGHT_BYTES);
}

static void cell(const iogp_matrix_view *v, top_surf *s, int y, int x, double val, int bold)
{
	char t[32];
	if (!(val > 0)) {
		draw_text(s, y, x + CELL_W - 1, 1, ST_DIM, "-");
		return;
	}
	iogp_matrix_view_fmt(v, val, t, sizeof(t), IOGP_UNITS_CELL);
	double l = iogp_matrix_view_level(v, val);
	int st = bold ? ST_LABEL : ST_HEAT0 + (l >= 1 ? ST_NHEAT - 1 : (int)(l * ST_NHEAT));
	int tl = (int)strlen(t) < CELL_W - 2 ? (int)strlen(t) : CELL_W - 2;
	/* the heat glyph just before the number */
	if (!bold)
		draw_heat(s, y, x + CELL_W - 2 - tl, l);
	draw_text(s, y, x + CELL_W - 1 - tl, tl, st, t);
}

void panel_matrix_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	iogp_matrix_view v;
	view_of(f, &v);
	char title[200];
	iogp_matrix_view_title(&v, title, sizeof(title));
	char t[240];
	snprintf(t, sizeof(t), "MPI traffic: %s", title);
	panel_title(f, s, r, IOGP_PANEL_MATRIX, t, "v bytes/messages, n a node's ranks");
	if (v.rc < 0 || v.x.n == 0 || v.empty) {
		if (r.h > 1)
			draw_text(s, r.y + 1, r.x, r.w, ST_DIM,
			          "no MPI traffic: run the job with iogram-run --mpi (libiogram-mpi.so)");
		iogp_matrix_view_free(&v);
		return;
	}
	/* the histogram of message sizes takes the lower part when there is room */
	int hist_h = r.h >= 24 ? r.h / 3 : 0;
	int gh = r.h - 1 - hist_h;        /* header row, rows, totals row */
	int lw = 8;   /* "received" */
	for (uint32_t i = 0; i < v.x.n; i++)
		lw = (int)strlen(v.x.names[i]) > lw ? (int)strlen(v.x.names[i]) : lw;
	if (lw > 12)
		lw = 12;
	int cols = (r.w - lw - 1 - CELL_W) / CELL_W, rows = gh - 2;
	int k = cols < rows ? cols : rows;
	if (k > MAX_SHOWN)
		k = MAX_SHOWN;
	if (k < 1) {
		draw_text(s, r.y + 1, r.x, r.w, ST_DIM, "too small: zoom (M)");
		iogp_matrix_view_free(&v);
		return;
	}
	uint32_t idx[MAX_SHOWN];
	size_t n = iogp_matrix_view_pick(&v, idx, (size_t)k);
	int y = r.y + 1, x0 = r.x + lw + 1;
	/* column heads: destinations */
	draw_text(s, y, r.x, lw, ST_DIM, "from\\to");
	for (size_t c = 0; c < n; c++)
		draw_textf(s, y, x0 + (int)c * CELL_W, CELL_W, ST_LABEL, "%*.*s", CELL_W, CELL_W - 1,
		           v.x.names[idx[c]]);
	draw_textf(s, y, x0 + (int)n * CELL_W, CELL_W, ST_LABEL, "%*s", CELL_W, "sent");
	y++;
	for (size_t rr = 0; rr < n; rr++, y++) {
		draw_text(s, y, r.x, lw, ST_LABEL, v.x.names[idx[rr]]);
		for (size_t c = 0; c < n; c++)
			cell(&v, s, y, x0 + (int)c * CELL_W, iogp_matrix_view_cell(&v, idx[rr], idx[c]), 0);
		cell(&v, s, y, x0 + (int)n * CELL_W, iogp_matrix_view_row(&v, idx[rr]), 1);
	}
	draw_text(s, y, r.x, lw, ST_LABEL, "received");
	for (size_t c = 0; c < n; c++)
		cell(&v, s, y, x0 + (int)c * CELL_W, iogp_matrix_view_col(&v, idx[c]), 1);
	cell(&v, s, y, x0 + (int)n * CELL_W, iogp_matrix_view_total(&v), 1);
	y++;
	if (n < v.x.n && y < r.y + r.h)
		draw_textf(s, y++, r.x, r.w, ST_DIM, "the %zu busiest of %u shown; zoom or select a node (n)", n,
		           v.x.n);
	if ((v.x.other_msgs || v.x.other_bytes) && y < r.y + r.h) {
		char o[32];
		iogp_matrix_view_fmt(&v, v.bytes ? (double)v.x.other_bytes : (double)v.x.other_msgs, o, sizeof(o),
		                     IOGP_UNITS_CELL);
		draw_textf(s, y++, r.x, r.w, ST_DIM, "to ranks not shown: %s%s", o,
		           v.seconds > 0 ? " (total)" : "");
	}
	iogp_matrix_view_free(&v);
	if (hist_h > 0)
		panel_hist_draw(f, s, (top_rect){ r.y + r.h - hist_h, r.x, hist_h, r.w }, IOGP_PANEL_MSGSIZE);
}

int panel_matrix_csv(const top_frame *f, FILE *out)
{
	iogp_matrix_view v;
	view_of(f, &v);
	int rc = v.rc < 0 ? v.rc : v.x.n && !v.empty ? iogp_matrix_csv(out, &v.x, v.by) : IOGP_ENOTFOUND;
	iogp_matrix_view_free(&v);
	return rc;
}
