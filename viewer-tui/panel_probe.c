/* panel_probe.c - the slowdown panel (0): for the probe of the selected
 * node (else the worst one now), a band per operation with its current
 * factor - in large digits when the band is tall enough - and its factor
 * over time as a braille line on one log axis shared by every band; below,
 * when probes run on several nodes, their factors side by side and whether
 * the nodes see the same slowdown. What is computed lives in
 * iogp_probe_view.h, shared with iogram-view. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iogp_probe_view.h"
#include "top.h"

#define NAME_W 10
#define LED_W 12      /* "12.3x" in large digits */
#define TEXT_W 20     /* "12.3x 812us/796us" */
#define AXIS_W 6      /* "1000x" */
#define MAX_POINTS 512

static iogp_probe_set set;            /* large: not on the stack */
static iogp_probe_point pts[MAX_POINTS];

/* Seven-segment digits in three rows of ASCII (htop's LED meters do the
 * same): 0-9, '.', 'x', '-'. */
static const char *led(char c, int row)
{
	static const char *const dig[10][3] = {
		{ " _ ", "| |", "|_|" }, { "   ", "  |", "  |" }, { " _ ", " _|", "|_ " },
		{ " _ ", " _|", " _|" }, { "   ", "|_|", "  |" }, { " _ ", "|_ ", " _|" },
		{ " _ ", "|_ ", "|_|" }, { " _ ", "  |", "  |" }, { " _ ", "|_|", "|_|" },
		{ " _ ", "|_|", " _|" },
	};
	static const char *const dot[3] = { " ", " ", "." }, *const ex[3] = { "  ", "\\/", "/\\" },
	                         *const dash[3] = { "   ", "___", "   " };
	if (c >= '0' && c <= '9')
		return dig[c - '0'][row];
	return c == '.' ? dot[row] : c == 'x' ? ex[row] : dash[row];
}

static void draw_led(top_surf *s, int y, int x, int maxw, int style, const char *t)
{
	for (int row = 0; row < 3; row++) {
		int cx = x;
		for (const char *c = t; *c; c++) {
			const char *g = led(*c, row);
			int l = (int)strlen(g);
			if (cx + l > x + maxw)
				break;
			draw_text(s, y + row, cx, l, style, g);
			cx += l;
		}
	}
}

static int level_style(int64_t milli)
{
	int l = iogp_probe_level(milli);
	return l < 0 ? ST_DIM : l == 0 ? ST_GOOD : l == 1 ? ST_WARN : ST_BAD;
}

/* One operation's band: rows [y, y+h), the name and factor in the first
 * left columns (large digits when big), the line from t0 to t1 after them
 * on axis a. */
static void draw_band(top_surf *s, int y, int h, int x0, int w, int left, int big, const iogp_probe *p,
                      int o, size_t npts, const iogp_probe_axis *a, uint64_t t0, uint64_t t1)
{
	char fac[24], st[24], ex[24], line[80];
	int64_t milli = p->slowdown_milli[o];
	int style = level_style(milli);
	iogp_probe_factor(fac, sizeof(fac), milli);
	iogp_fmt_ns(st, sizeof(st), (double)p->stat_ns[o], IOGP_UNITS_CELL);
	iogp_fmt_ns(ex, sizeof(ex), (double)p->expected_ns[o], IOGP_UNITS_CELL);
	snprintf(line, sizeof(line), "%s %s/%s", fac, p->stat_ns[o] >= 0 ? st : "-",
	         p->expected_ns[o] >= 0 ? ex : "-");
	draw_text(s, y, x0, NAME_W - 1, ST_LABEL, p->op[o]);
	if (big) {
		draw_led(s, y, x0 + NAME_W, LED_W, style, fac);
		draw_text(s, y + 1, x0, NAME_W - 1, ST_DIM, st);
		draw_text(s, y + 2, x0, NAME_W - 1, ST_DIM, ex);
		/* the plain factor too, for a reader that is not a person */
		draw_text(s, y, x0 + NAME_W + LED_W + 1, left - NAME_W - LED_W - 2, style, fac);
	} else {
		draw_text(s, y, x0 + NAME_W, left - NAME_W - 1, style, line);
	}
	int axw = AXIS_W;
	int cw = w - left - axw;
	if (cw < 8)
		return;
	int cx = x0 + left;
	top_canvas c;
	if (canvas_init(&c, cw, h) < 0)
		return;
	int rows = 4 * h, prev = -1;
	double span = (double)(t1 - t0);
	for (int px = 0; px < 2 * cw; px++) {
		uint64_t t = t0 + (uint64_t)(span * (px + 0.5) / (2.0 * cw));
		int32_t v = -1;
		for (size_t k = 0; k < npts && pts[k].wall_ns <= t; k++)
			v = pts[k].milli[o];
		if (v < 0) {
			prev = -1;
			continue;
		}
		int py = (int)lround((1 - iogp_probe_axis_pos(a, v / 1000.0)) * (rows - 1));
		int lo = prev < 0 ? py : prev < py ? prev : py, hi = prev < 0 ? py : prev > py ? prev : py;
		for (int k = lo; k <= hi; k++)
			canvas_dot(&c, px, k, 1);
		prev = py;
	}
	/* the 1x line, dim, where the data leaves room */
	int one = (int)lround((1 - iogp_probe_axis_pos(a, 1.0)) * (rows - 1)) / 4;
	for (int r = 0; r < h; r++)
		for (int q = 0; q < cw; q++) {
			size_t i = (size_t)r * (size_t)cw + (size_t)q;
			if (c.bits[i])
				draw_glyph(s, y + r, cx + q, style, 0x2800u + c.bits[i], '*');
			else if (r == one)
				draw_glyph(s, y + r, cx + q, ST_DIM, 0x2508, '-');
		}
	canvas_free(&c);
	char tl[16];
	iogp_probe_tick_label(tl, sizeof(tl), a->hi);
	draw_text(s, y, cx + cw + 1, axw - 1, ST_DIM, tl);
	if (one > 0 && one < h)
		draw_text(s, y + one, cx + cw + 1, axw - 1, ST_DIM, "1x");
	if (h >= 2 && one != h - 1) {
		iogp_probe_tick_label(tl, sizeof(tl), a->lo);
		draw_text(s, y + h - 1, cx + cw + 1, axw - 1, ST_DIM, tl);
	}
}

/* Nodes side by side: a row per probe, a column per operation, then a line
 * per operation the nodes disagree on (or one saying they agree). */
static int draw_side(top_surf *s, int y, int x, int w, int h)
{
	const char *ops[IOGP_PROBE_MAX_OPS];
	size_t nops = iogp_probe_ops(&set, ops, IOGP_PROBE_MAX_OPS);
	int nodew = 12, colw = 10, used = 0;
	if (h < 3)
		return 0;
	draw_text(s, y, x, nodew, ST_LABEL, "node");
	for (size_t k = 0; k < nops && nodew + (int)(k + 1) * colw <= w; k++)
		draw_textf(s, y, x + nodew + (int)k * colw, colw - 1, ST_LABEL, "%9.9s", ops[k]);
	used++;
	/* the agreement lines come last; keep room for them */
	iogp_probe_agree ag[IOGP_PROBE_MAX_OPS];
	int ndiff = 0;
	for (size_t k = 0; k < nops; k++) {
		iogp_probe_agreement(&set, ops[k], &ag[k]);
		ndiff += ag[k].agree == 0;
	}
	int notes = ndiff ? ndiff : 1;
	size_t rows = set.n;
	if ((int)rows > h - used - notes)
		rows = (size_t)(h - used - notes > 1 ? h - used - notes - 1 : 0);
	for (size_t i = 0; i < rows; i++, used++) {
		const iogp_probe *p = &set.p[i];
		draw_text(s, y + used, x, nodew - 1, (int)i == set.shown ? ST_FOCUS : ST_NORMAL, p->node);
		for (size_t k = 0; k < nops && nodew + (int)(k + 1) * colw <= w; k++) {
			int o = iogp_probe_op_index(p, ops[k]);
			char t[24];
			iogp_probe_factor(t, sizeof(t), o >= 0 ? p->slowdown_milli[o] : -1);
			draw_textf(s, y + used, x + nodew + (int)k * colw, colw - 1,
			           level_style(o >= 0 ? p->slowdown_milli[o] : -1), "%9s", t);
		}
	}
	if (rows < set.n)
		draw_textf(s, y + used++, x, w, ST_DIM, "+%zu more nodes (n selects one)", set.total - rows);
	if (!ndiff) {
		draw_textf(s, y + used++, x, w, ST_GOOD, "all %zu nodes see the same slowdown (within 1.5x)",
		           set.n);
		return used;
	}
	for (size_t k = 0; k < nops && used < h; k++)
		if (ag[k].agree == 0)
			draw_textf(s, y + used++, x, w, ST_WARN, "%s: %s", ops[k], ag[k].text);
	return used;
}

void panel_probe_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	iogp_probe_set_get(&set, f->m, f->v->sel == IOGP_SEL_NODE ? f->v->sel_node : NULL);
	if (set.shown < 0) {
		panel_title(f, s, r, IOGP_PANEL_PROBE, NULL, "no probes");
		if (r.h > 1)
			draw_text(s, r.y + 1, r.x, r.w, ST_DIM,
			          "no probes: run `iogram probe DIR --endpoint E` on a node, with E this viewer's");
		return;
	}
	const iogp_probe *p = &set.p[set.shown];
	char title[160], where[300], right[340];
	iogp_probe_title(title, sizeof(title), p);
	iogp_probe_where(where, sizeof(where), p);
	char t[200];
	snprintf(t, sizeof(t), "slowdown: %s", title);
	snprintf(right, sizeof(right), "%s%s", set.worst ? "worst now: " : "", where);
	panel_title(f, s, r, IOGP_PANEL_PROBE, t, right);

	/* time span: the view's window, else the reports kept */
	uint64_t t1 = f->now_ns, t0;
	double win = view_window(f->v);
	size_t npts = iogp_model_probe_history(f->m, p->src, win > 0 && t1 > (uint64_t)(win * 1e9)
	                                                        ? t1 - (uint64_t)(win * 1e9) : 0,
	                                       pts, MAX_POINTS);
	if (p->last_wall > t1)
		t1 = p->last_wall;
	t0 = win > 0 ? t1 - (uint64_t)(win * 1e9) : npts ? pts[0].wall_ns : t1;
	if (t1 <= t0 + 1000000000ull)
		t0 = t1 - 1000000000ull;

	/* one axis for every band */
	double lo = 1, hi = 1;
	for (size_t k = 0; k < npts; k++)
		for (uint32_t o = 0; o < p->nops; o++)
			if (pts[k].milli[o] > 0) {
				lo = fmin(lo, pts[k].milli[o] / 1000.0);
				hi = fmax(hi, pts[k].milli[o] / 1000.0);
			}
	iogp_probe_axis a;
	iogp_probe_axis_fit(&a, lo, hi, 8);

	int body = r.h - 2;   /* title, time axis */
	int side = 0;
	if (set.n > 1)
		side = (int)set.n + 3 < body / 2 ? (int)set.n + 3 : body / 2;
	int bands = body - side;
	int nops = (int)p->nops, h = nops ? bands / nops : 0;
	if (h > 6)
		h = 6;
	int shown = h >= 1 ? nops : bands;
	if (h < 1)
		h = 1;
	int big = h >= 3 && r.w >= 70;
	int left = NAME_W + (big ? LED_W + 1 : 0) + TEXT_W;
	int y = r.y + 1;
	for (int o = 0; o < shown && o < nops; o++, y += h)
		draw_band(s, y, h, r.x, r.w, left, big, p, o, npts, &a, t0, t1);
	if (shown < nops)
		draw_textf(s, y - 1, r.x, r.w, ST_DIM, "+%d operations (zoom: 0)", nops - shown);
	if (r.w - left - AXIS_W >= 8)
		draw_time_axis(s, y, r.x + left, r.w - left - AXIS_W, t0, t1);
	if (side)
		draw_side(s, y + 1, r.x, r.w, r.y + r.h - y - 1);
}

int panel_probe_csv(const top_frame *f, FILE *out)
{
	iogp_probe_set_get(&set, f->m, f->v->sel == IOGP_SEL_NODE ? f->v->sel_node : NULL);
	return iogp_probe_panel_csv(out, &set);
}

int panel_probe_worst(const top_frame *f, int64_t *milli)
{
	iogp_probe_set_get(&set, f->m, NULL);
	*milli = -1;
	for (size_t i = 0; i < set.n; i++)
		for (uint32_t o = 0; o < set.p[i].nops; o++)
			if (set.p[i].slowdown_milli[o] > *milli)
				*milli = set.p[i].slowdown_milli[o];
	return (int)set.n;
}
