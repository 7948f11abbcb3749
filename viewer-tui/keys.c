/* keys.c - every key as a table entry (key codes, name, help, action), used
 * by the dispatcher and by the ? overlay alike. */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "top.h"

static void key_help(top_app *a, int arg)
{
	(void)arg;
	a->view.help = !a->view.help;
}

static void key_quit(top_app *a, int arg)
{
	(void)arg;
	a->quit = 1;
}

static void key_escape(top_app *a, int arg)
{
	(void)arg;
	if (a->view.help)
		a->view.help = 0;
	else
		a->view.zoom = -1;
}

static void key_focus(top_app *a, int arg)
{
	a->view.focus = (a->view.focus + arg + NPANELS) % NPANELS;
	if (a->view.zoom >= 0)
		a->view.zoom = a->view.focus;
}

static void key_panel(top_app *a, int arg)
{
	if (a->view.zoom == arg) {
		a->view.zoom = -1;
	} else {
		a->view.focus = arg;
		a->view.zoom = arg;
	}
}

static void key_zoom(top_app *a, int arg)
{
	(void)arg;
	a->view.zoom = a->view.zoom >= 0 ? -1 : a->view.focus;
}

static void key_node(top_app *a, int arg)
{
	const iogp_model *m = iogp_feed_model(input_feed(a->in));
	long n = (long)iogp_model_node_count(m), cur = -1;
	top_view *v = &a->view;
	if (n == 0) {
		view_message(v, "no nodes yet");
		return;
	}
	for (long i = 0; i < n && v->sel == IOGP_SEL_NODE; i++)
		if (!strcmp(iogp_model_node(m, (size_t)i), v->sel_node))
			cur = i;
	if (cur < 0)
		cur = arg > 0 ? -1 : n;
	cur += arg;
	if (cur < 0 || cur >= n) {
		v->sel = IOGP_SEL_ALL;
	} else {
		v->sel = IOGP_SEL_NODE;
		snprintf(v->sel_node, sizeof(v->sel_node), "%s", iogp_model_node(m, (size_t)cur));
	}
}

static void key_source(top_app *a, int arg)
{
	const iogp_model *m = iogp_feed_model(input_feed(a->in));
	long n = (long)iogp_model_source_count(m), cur = -1;
	top_view *v = &a->view;
	if (n == 0) {
		view_message(v, "no sources yet");
		return;
	}
	size_t idx;
	if (v->sel == IOGP_SEL_SOURCE && iogp_model_source_index(m, v->sel_source, &idx) == 0)
		cur = (long)idx;
	if (cur < 0)
		cur = arg > 0 ? -1 : n;
	cur += arg;
	iogp_source_info si;
	if (cur < 0 || cur >= n || iogp_model_source(m, (size_t)cur, &si) < 0) {
		v->sel = IOGP_SEL_ALL;
	} else {
		v->sel = IOGP_SEL_SOURCE;
		v->sel_source = si.id;
	}
}

static void key_all(top_app *a, int arg)
{
	(void)arg;
	a->view.sel = IOGP_SEL_ALL;
}

static void key_file(top_app *a, int arg)
{
	top_frame f;
	top_status st;
	app_frame(a, &f, &st);
	panel_access_cycle(&f, arg);
}

static void key_window(top_app *a, int arg)
{
	top_view *v = &a->view;
	v->window = (v->window + arg + v->nwindows) % v->nwindows;
}

static void key_dir(top_app *a, int arg)
{
	(void)arg;
	a->view.dir = (a->view.dir + 1) % 3;
}

static void key_bins(top_app *a, int arg)
{
	(void)arg;
	a->view.bins = (a->view.bins + 1) % 3;
}

static void key_log(top_app *a, int arg)
{
	(void)arg;
	a->view.logscale = !a->view.logscale;
}

static void key_rates(top_app *a, int arg)
{
	(void)arg;
	static const char *const names[] = { "auto", "lines", "heatmap" };
	a->view.rates_mode = (a->view.rates_mode + 1) % 3;
	view_message(&a->view, "node rates: %s", names[a->view.rates_mode]);
}

static void key_pause(top_app *a, int arg)
{
	(void)arg;
	iogp_feed_pause(input_feed(a->in), !iogp_feed_paused(input_feed(a->in)));
}

static int need_replay(top_app *a)
{
	top_status st;
	input_status(a->in, &st);
	if (st.mode != MODE_REPLAY) {
		view_message(&a->view, "seek and speed work in replay (--replay FILE)");
		return 0;
	}
	return 1;
}

static void key_seek(top_app *a, int arg)
{
	if (need_replay(a))
		iogp_feed_seek_by(input_feed(a->in), arg);
}

static void key_speed(top_app *a, int arg)
{
	if (need_replay(a))
		iogp_feed_speed(input_feed(a->in), arg);
}

static void key_jump(top_app *a, int arg)
{
	if (need_replay(a))
		iogp_feed_seek(input_feed(a->in), arg ? UINT64_MAX : 0);
}

static void key_record(top_app *a, int arg)
{
	(void)arg;
	top_status st;
	input_status(a->in, &st);
	if (st.f.recording) {
		char path[512], sz[24];
		snprintf(path, sizeof(path), "%s", st.f.rec_path);
		iogp_fmt_bytes(sz, sizeof(sz), (double)st.f.rec_bytes, IOGP_UNITS_CELL);
		iogp_feed_record_stop(input_feed(a->in), NULL, 0);
		view_message(&a->view, "recording stopped: %s (%sB)", path, sz);
		return;
	}
	char err[256];
	const char *path = a->record_path;
	a->record_path = NULL;   /* --record names the first recording only */
	if (iogp_feed_record_start(input_feed(a->in), path, err, sizeof(err)) < 0) {
		view_message(&a->view, "cannot record: %s", err);
		return;
	}
	input_status(a->in, &st);
	view_message(&a->view, "recording to %s", st.f.rec_path);
}

static void key_snapshot(top_app *a, int arg)
{
	(void)arg;
	top_frame f;
	top_status st;
	app_frame(a, &f, &st);
	/* the layout of what the screen shows now, keys just typed included */
	layout_compute(&a->layout, LINES, COLS, a->view.zoom);
	char msg[512];
	if (snap_write(&f, &a->layout, a->snap_dir, msg, sizeof(msg)) < 0)
		view_message(&a->view, "snapshot failed: %s", msg);
	else
		view_message(&a->view, "%s", msg);
}

static void key_redraw(top_app *a, int arg)
{
	(void)arg;
	a->full_redraw = 1;
}

#define CTRL(c) ((c) & 0x1f)

const struct top_key top_keys[] = {
	{ { '?', 'h', KEY_F(1) }, "? h", "this help (again: close)", 0, key_help, 0 },
	{ { 'q', 'Q' }, "q", "quit", 0, key_quit, 0 },
	{ { '\t' }, "Tab", "focus next panel", 0, key_focus, 1 },
	{ { KEY_BTAB }, "S-Tab", "focus previous panel", 0, key_focus, -1 },
	{ { '1' }, "1-5", "zoom panel N (again: back)", 0, key_panel, P_SIZE },
	{ { '2' }, NULL, NULL, 0, key_panel, P_QD },
	{ { '3' }, NULL, NULL, 0, key_panel, P_LAT },
	{ { '4' }, NULL, NULL, 0, key_panel, P_ACCESS },
	{ { '5' }, NULL, NULL, 0, key_panel, P_RATES },
	{ { 'z', '\n', '\r', KEY_ENTER }, "z Enter", "zoom focused panel / back", 0, key_zoom, 0 },
	{ { 27 }, "Esc", "close help / unzoom", 0, key_escape, 0 },
	{ { 'n' }, "n N", "next / previous node", 0, key_node, 1 },
	{ { 'N' }, NULL, NULL, 0, key_node, -1 },
	{ { 's' }, "s S", "next / previous source", 0, key_source, 1 },
	{ { 'S' }, NULL, NULL, 0, key_source, -1 },
	{ { 'a' }, "a", "select everything", 0, key_all, 0 },
	{ { 'f' }, "f F", "next / previous file", 0, key_file, 1 },
	{ { 'F' }, NULL, NULL, 0, key_file, -1 },
	{ { 'w' }, "w W", "since start / last N s", 0, key_window, 1 },
	{ { 'W' }, NULL, NULL, 0, key_window, -1 },
	{ { 'd' }, "d", "read+write / read / write", 0, key_dir, 0 },
	{ { 'b' }, "b", "bins native / log2 / fixed", 0, key_bins, 0 },
	{ { 'l' }, "l", "counts linear / log", 0, key_log, 0 },
	{ { 'm' }, "m", "rates: auto/lines/heatmap", 0, key_rates, 0 },
	{ { ' ', 'p' }, "space p", "pause / resume", 0, key_pause, 0 },
	{ { KEY_LEFT, ',' }, "Left ,", "seek back 10 s", 1, key_seek, -10 },
	{ { KEY_RIGHT, '.' }, "Right .", "seek forward 10 s", 1, key_seek, 10 },
	{ { KEY_PPAGE, '[' }, "PgUp [", "seek back 60 s", 1, key_seek, -60 },
	{ { KEY_NPAGE, ']' }, "PgDn ]", "seek forward 60 s", 1, key_seek, 60 },
	{ { '-', '_' }, "-", "slower (speed / 2)", 1, key_speed, -1 },
	{ { '+', '=' }, "+ =", "faster (speed x 2)", 1, key_speed, 1 },
	{ { KEY_HOME, 'g' }, "Home g", "jump to start", 1, key_jump, 0 },
	{ { KEY_END, 'G' }, "End G", "jump to end", 1, key_jump, 1 },
	{ { 'R' }, "R", "start / stop recording", 0, key_record, 0 },
	{ { 'x' }, "x", "snapshot: CSV and PNG", 0, key_snapshot, 0 },
	{ { CTRL('l') }, "^L", "repaint the screen", 0, key_redraw, 0 },
};
const size_t top_nkeys = sizeof(top_keys) / sizeof(top_keys[0]);

int keys_dispatch(top_app *app, int ch)
{
	for (size_t i = 0; i < top_nkeys; i++)
		for (int k = 0; k < 4 && top_keys[i].keys[k]; k++)
			if (top_keys[i].keys[k] == ch) {
				/* in the help overlay only closing keys act */
				if (app->view.help && top_keys[i].exec != key_help &&
				    top_keys[i].exec != key_escape && top_keys[i].exec != key_quit &&
				    top_keys[i].exec != key_redraw) {
					app->view.help = 0;
					return 1;
				}
				top_keys[i].exec(app, top_keys[i].arg);
				return 1;
			}
	return 0;
}

void keys_draw_help(top_surf *s, int rows, int cols, top_mode mode)
{
	size_t n = 0;
	for (size_t i = 0; i < top_nkeys; i++)
		n += top_keys[i].help != NULL;
	int w = cols - 2 < 80 ? cols - 2 : 80;
	int inner = rows - 4;
	if (w < 20 || inner < 3)
		return;
	int ncol = (int)n > inner ? 2 : 1;
	if (ncol == 2 && w < 60)
		ncol = 1;
	int per = ((int)n + ncol - 1) / ncol;
	int h = (per < inner ? per : inner) + 4;
	int y0 = (rows - h) / 2, x0 = (cols - w) / 2;
	draw_clear(s, (top_rect){ y0, x0, h, w });
	for (int x = 0; x < w; x++) {
		draw_glyph(s, y0, x0 + x, ST_LABEL, 0x2500, '-');
		draw_glyph(s, y0 + h - 1, x0 + x, ST_LABEL, 0x2500, '-');
	}
	for (int y = 0; y < h; y++) {
		draw_glyph(s, y0 + y, x0, ST_LABEL, y == 0 ? 0x250c : y == h - 1 ? 0x2514 : 0x2502,
		           y == 0 || y == h - 1 ? '+' : '|');
		draw_glyph(s, y0 + y, x0 + w - 1, ST_LABEL, y == 0 ? 0x2510 : y == h - 1 ? 0x2518 : 0x2502,
		           y == 0 || y == h - 1 ? '+' : '|');
	}
	draw_text(s, y0, x0 + 2, w - 4, ST_LABEL, " iogram-top keys ");
	draw_text(s, y0 + h - 1, x0 + 2, w - 4, ST_DIM, " any key closes; q quits ");
	int colw = (w - 3) / ncol;
	int k = 0;
	for (size_t i = 0; i < top_nkeys; i++) {
		const struct top_key *e = &top_keys[i];
		if (!e->help)
			continue;
		int c = k / per, r = k % per;
		k++;
		if (r >= inner)
			continue;
		int y = y0 + 2 + r, x = x0 + 2 + c * colw;
		draw_text(s, y, x, 8, ST_LABEL, e->name);
		int st = e->replay_only && mode != MODE_REPLAY ? ST_DIM : ST_NORMAL;
		draw_text(s, y, x + 9, colw - 10, st, e->help);
	}
}
