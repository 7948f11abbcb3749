/* panel_phases.c - I/O phases of the view's layer: a timeline of bars over
 * the rates panel's time window (colour: read or write; label: bytes, mean
 * request, spatiality; an open phase grows to now and ends in ">"), lanes
 * where phases overlap, and the phase table below when there is room (the
 * zoomed panel, 8, has it). Rows and labels: iogp_phase_view.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogp_phase_view.h"
#include "top.h"

#define MAX_SHOWN 1024   /* phases in the time window considered */

typedef struct span_t {
	uint64_t lo, hi;     /* wall ns */
	int w;               /* columns */
} span_t;

/* The rates panel's window, ending now (an open phase reaches it). */
static void time_span(const top_frame *f, int w, span_t *sp)
{
	size_t nb;
	uint64_t end, bin;
	panel_rates_span(f, &nb, &end, &bin);
	sp->lo = end > nb * bin ? end - nb * bin : 0;
	sp->hi = f->now_ns > end && f->now_ns < end + 5 * bin ? f->now_ns : end + bin;
	sp->w = w > 1 ? w : 1;
}

static double col_of(const span_t *sp, uint64_t t)
{
	if (t <= sp->lo)
		return 0;
	return (double)(t - sp->lo) / (double)(sp->hi - sp->lo) * sp->w;
}

typedef struct bars {
	size_t n;
	size_t idx[MAX_SHOWN];
	double x0[MAX_SHOWN], x1[MAX_SHOWN], ext[MAX_SHOWN];
	int label[MAX_SHOWN];   /* 2 full, 1 short, 0 none; negative: left of the bar */
	int lane[MAX_SHOWN];
	int lanes;
	size_t hidden;
} bars;

static uint64_t end_of(const top_frame *f, const iogp_phase *p)
{
	return p->open && f->now_ns > p->end_ns ? f->now_ns : p->end_ns;
}

static void label_of(const top_frame *f, const top_surf *s, const iogp_phase *p, int which,
                     char *buf, size_t len)
{
	iogp_phase_row r;
	iogp_phase_row_build(&r, p, IOGP_UNITS_CELL);
	(void)f;
	/* without colour read and write differ by their label */
	snprintf(buf, len, "%s%s", s->color ? "" : p->op == IOGP_OP_WRITE ? "W " : "R ",
	         which == 2 ? r.label : r.label_short);
}

/* Bars in columns, lanes at most max (labels as long as room allows). */
static void layout_bars(const top_frame *f, const top_surf *s, const iogp_phase *ph, size_t n,
                        const span_t *sp, int max, bars *b)
{
	b->n = b->hidden = 0;
	for (size_t i = 0; i < n && b->n < MAX_SHOWN; i++) {
		uint64_t e = end_of(f, &ph[i]);
		if (e < sp->lo || ph[i].start_ns > sp->hi)
			continue;
		size_t k = b->n++;
		b->idx[k] = i;
		b->x0[k] = col_of(sp, ph[i].start_ns);
		b->x1[k] = col_of(sp, e);
		if (b->x1[k] > sp->w)
			b->x1[k] = sp->w;
		b->x0[k] = (int)b->x0[k];   /* bars start on a cell */
		if (b->x1[k] < b->x0[k] + 1)
			b->x1[k] = b->x0[k] + 1;   /* a phase always shows */
	}
	double x0[MAX_SHOWN];
	for (int pass = 2; pass >= 0; pass--) {
		for (size_t k = 0; k < b->n; k++) {
			char lab[200];
			const iogp_phase *p = &ph[b->idx[k]];
			label_of(f, s, p, pass, lab, sizeof(lab));
			b->label[k] = pass;
			/* the bar, ">" when open, a space, the label, a space; the label
			 * goes left of the bar when the right edge is too near */
			double after = b->x1[k] + (p->open ? 1 : 0), lw = pass ? 1 + (double)strlen(lab) : 0;
			x0[k] = b->x0[k];
			b->ext[k] = after + lw + 1;
			if (lw && after + lw > sp->w && b->x0[k] >= lw) {
				x0[k] = b->x0[k] - lw;
				b->ext[k] = after + 1;
				b->label[k] = -pass;
			}
		}
		b->lanes = iogp_phase_lanes(x0, b->ext, b->n, max, b->lane);
		size_t miss = 0;
		for (size_t k = 0; k < b->n; k++)
			miss += b->lane[k] < 0;
		b->hidden = miss;
		if (!miss)
			break;
	}
}

static void draw_bars(const top_frame *f, top_surf *s, int y, int x, int w, const iogp_phase *ph,
                      const bars *b)
{
	for (size_t k = 0; k < b->n; k++) {
		if (b->lane[k] < 0)
			continue;
		const iogp_phase *p = &ph[b->idx[k]];
		int st = p->op == IOGP_OP_WRITE ? ST_WRITE : ST_READ;
		int yy = y + b->lane[k], x0 = (int)b->x0[k];
		double len = b->x1[k] - x0;
		draw_hbar(s, yy, x + x0, w - x0, len < 1 ? 1 : len, st);
		int after = x + (int)b->x1[k] + ((b->x1[k] - (int)b->x1[k]) > 0.01 ? 1 : 0);
		if (p->open && after < x + w)
			draw_text(s, yy, after++, 1, st, ">");
		if (b->label[k]) {
			char lab[200];
			label_of(f, s, p, abs(b->label[k]), lab, sizeof(lab));
			int l = (int)strlen(lab);
			if (b->label[k] < 0)   /* left of the bar */
				draw_text(s, yy, x + x0 - l - 1, l, ST_NORMAL, lab);
			else if (after + 1 < x + w)
				draw_text(s, yy, after + 1, x + w - after - 1, ST_NORMAL, lab);
		}
	}
}

/* The time axis: its ends as clock times, a rule between. */
static void draw_axis(top_surf *s, int y, int x, int w, const span_t *sp)
{
	char a[16], z[16];
	time_t t0 = (time_t)(sp->lo / 1000000000ull), t1 = (time_t)(sp->hi / 1000000000ull);
	struct tm tm;
	localtime_r(&t0, &tm);
	strftime(a, sizeof(a), "%H:%M:%S", &tm);
	localtime_r(&t1, &tm);
	strftime(z, sizeof(z), "%H:%M:%S", &tm);
	int la = (int)strlen(a), lz = (int)strlen(z);
	for (int c = 0; c < w; c++)
		draw_glyph(s, y, x + c, ST_DIM, 0x2500, '-');
	if (w < la + lz + 4)
		return;
	draw_text(s, y, x, la, ST_DIM, a);
	draw_text(s, y, x + w - lz, lz, ST_DIM, z);
}

/* The table's columns that fit in w (width 0: left out); returns the width used. */
static int table_cols(const iogp_phase *ph, const bars *b, size_t first, int w, int col[IOGP_PC_N])
{
	static const int drop[] = { IOGP_PC_LAYER, IOGP_PC_FILES, IOGP_PC_DURATION, IOGP_PC_FASHION,
	                            IOGP_PC_SPATIALITY, IOGP_PC_REQUEST };
	for (int c = 0; c < IOGP_PC_N; c++)
		col[c] = (int)strlen(iogp_phase_heads[c]);
	for (size_t k = first; k < b->n; k++) {
		iogp_phase_row r;
		iogp_phase_row_build(&r, &ph[b->idx[k]], IOGP_UNITS_CELL);
		for (int c = 0; c < IOGP_PC_N; c++) {
			int l = (int)strlen(r.cell[c]);
			col[c] = l > col[c] ? l : col[c];
		}
	}
	int used = 0;
	for (size_t d = 0;; d++) {
		used = -1;
		for (int c = 0; c < IOGP_PC_N; c++)
			used += col[c] ? col[c] + 1 : 0;
		if (used <= w || d >= sizeof(drop) / sizeof(drop[0]))
			break;
		col[drop[d]] = 0;
	}
	return used;
}

static void draw_table(top_surf *s, top_rect t, const iogp_phase *ph, const bars *b)
{
	if (t.h < 2 || !b->n)
		return;
	size_t lines = (size_t)t.h - 1;
	size_t first = b->n > lines ? b->n - (lines - 1) : 0;
	int col[IOGP_PC_N];
	table_cols(ph, b, first, t.w, col);
	static const int right[IOGP_PC_N] = { [IOGP_PC_DURATION] = 1, [IOGP_PC_RANKS] = 1,
	                                      [IOGP_PC_FILES] = 1, [IOGP_PC_BYTES] = 1,
	                                      [IOGP_PC_REQUEST] = 1 };
	int y = t.y;
	for (size_t k = first; k <= b->n && y < t.y + t.h; k++) {
		iogp_phase_row r;
		const char *txt[IOGP_PC_N];
		int st = ST_LABEL;
		if (k == first) {   /* the header, then what did not fit */
			for (int c = 0; c < IOGP_PC_N; c++)
				txt[c] = iogp_phase_heads[c];
		} else {
			const iogp_phase *p = &ph[b->idx[k - 1]];
			iogp_phase_row_build(&r, p, IOGP_UNITS_CELL);
			for (int c = 0; c < IOGP_PC_N; c++)
				txt[c] = r.cell[c];
			st = ST_NORMAL;
		}
		int x = t.x;
		for (int c = 0; c < IOGP_PC_N; c++) {
			if (!col[c])
				continue;
			int l = (int)strlen(txt[c]);
			int cst = st;
			if (c == IOGP_PC_OP && k != first)
				cst = ph[b->idx[k - 1]].op == IOGP_OP_WRITE ? ST_WRITE : ST_READ;
			draw_text(s, y, x + (right[c] && l < col[c] ? col[c] - l : 0), col[c], cst, txt[c]);
			x += col[c] + 1;
		}
		y++;
		if (k == first && first > 0 && y < t.y + t.h) {
			char more[48];
			snprintf(more, sizeof(more), "%zu earlier", first);
			draw_text(s, y++, t.x, t.w, ST_DIM, more);
		}
	}
}

void panel_phases_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	iogp_phase *ph = NULL;
	size_t n = 0;
	uint64_t dropped = 0;
	int rc = iogp_phases_of_layer(f->m, f->v->layer, &ph, &n, &dropped);
	size_t open = 0;
	for (size_t i = 0; i < n; i++)
		open += ph[i].open != 0;
	span_t sp;
	time_span(f, r.w, &sp);
	char right[96];
	double secs = (double)(sp.hi - sp.lo) / 1e9;
	int k = snprintf(right, sizeof(right), "%s %zu phase%s", iogp_layer_title(f->v->layer), n,
	                 n == 1 ? "" : "s");
	if (open)
		k += snprintf(right + k, sizeof(right) - (size_t)k, ", %zu open", open);
	snprintf(right + k, sizeof(right) - (size_t)k, secs < 10 ? " %.1fs" : " %.0fs", secs);
	panel_title(f, s, r, IOGP_PANEL_PHASES, NULL, right);
	if (rc < 0 || n == 0) {
		if (r.h > 1)
			draw_text(s, r.y + 1, r.x, r.w, ST_DIM, rc < 0 ? iogp_strerror(rc) :
			          "no I/O phases in this layer yet (they come from the per-file records)");
		free(ph);
		return;
	}
	bars *b = malloc(sizeof(*b));
	if (!b) {
		free(ph);
		return;
	}
	/* lanes above the axis, the table below it when a header and a row
	 * fit besides the lanes (3 at least, when there are); the timeline
	 * takes a third of what is left, its lanes in its middle */
	int body = r.h - 1;
	layout_bars(f, s, ph, n, &sp, body - 1 > 0 ? body - 1 : 1, b);
	int want = 1 + (int)b->n, lanes = b->lanes > 0 ? b->lanes : 1;
	int keep = lanes < 3 ? lanes : 3, table = 0;
	if (body - 1 - keep >= 2) {
		table = body - 1 - lanes >= 2 ? body - 1 - lanes : 2;
		if (table > want)
			table = want;
		if (body - 1 - table < lanes) {   /* fewer lanes: the table keeps its room */
			layout_bars(f, s, ph, n, &sp, body - 1 - table, b);
			lanes = b->lanes > 0 ? b->lanes : 1;
		}
	}
	int tl = body - 1 - table;   /* timeline rows */
	if (table && tl > lanes)
		tl = lanes > (body - 1) / 3 ? lanes : (body - 1) / 3 < tl ? (body - 1) / 3 : tl;
	int y = r.y + 1 + (tl - lanes) / 2;
	draw_bars(f, s, y, r.x, r.w, ph, b);
	y = r.y + 1 + tl;   /* the axis */
	if (b->hidden) {
		char more[48];
		int l = snprintf(more, sizeof(more), "+%zu more", b->hidden);
		draw_text(s, y - 1, r.x + r.w - l, l, ST_DIM, more);
	}
	draw_axis(s, y, r.x, r.w, &sp);
	if (table)
		draw_table(s, (top_rect){ y + 1, r.x, table, r.w }, ph, b);
	if (dropped && r.w > 40) {
		char d[64];
		int l = snprintf(d, sizeof(d), " %llu runs dropped ", (unsigned long long)dropped);
		draw_text(s, y, r.x + r.w / 2 - l / 2, l, ST_WARN, d);
	}
	free(b);
	free(ph);
}

int panel_phases_csv(const top_frame *f, FILE *out)
{
	iogp_phase *ph = NULL;
	size_t n = 0;
	int rc = iogp_phases_of_layer(f->m, f->v->layer, &ph, &n, NULL);
	if (rc == 0)
		rc = iogp_phases_write_csv(out, ph, n);
	free(ph);
	return rc;
}
