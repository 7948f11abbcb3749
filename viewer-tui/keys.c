/* keys.c - the shared key/action table (iogp_actions.h) on ncurses: its key
 * spellings as key codes, its actions as handlers, and the ? overlay. */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
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
	/* the panels on screen; zoomed, every one of iogram-top's */
	int p = a->view.focus;
	for (int n = 0; n < IOGP_PANEL_N; n++) {
		p = iogp_panel_step(p, arg, IOGP_VIEWER_TUI);
		if (a->view.zoom >= 0 || a->layout.visible[p] || a->layout.too_small)
			break;
	}
	a->view.focus = p;
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

static void key_layer(top_app *a, int arg)
{
	a->view.layer = iogp_layer_step(a->view.layer, arg ? arg : 1);
}

static void key_bins(top_app *a, int arg)
{
	(void)arg;
	a->view.bins = (a->view.bins + 1) % 3;
}

static void key_weight(top_app *a, int arg)
{
	(void)arg;
	a->view.weight = iogp_size_weight_step(a->view.weight);
	view_message(&a->view, "request sizes %s", iogp_size_weight_title(a->view.weight));
}

static void key_log(top_app *a, int arg)
{
	(void)arg;
	a->view.logscale = !a->view.logscale;
}

static void key_rates(top_app *a, int arg)
{
	(void)arg;
	static const char *const names[RATES_NMODES] = { "auto", "lines", "heatmap of bytes/s",
	                                                  "heatmap of latency p99" };
	a->view.rates_mode = (a->view.rates_mode + 1) % RATES_NMODES;
	view_message(&a->view, "node rates: %s", names[a->view.rates_mode]);
}

static void key_sort(top_app *a, int arg)
{
	top_view *v = &a->view;
	if (arg) {
		v->sort_col = (v->sort_col + arg + IOGP_NT_NCOLS) % IOGP_NT_NCOLS;
		v->sort_desc = iogp_nt_col_desc(v->sort_col);
	} else {
		v->sort_desc = !v->sort_desc;
	}
	view_message(v, "nodes table by %s, %s", iogp_nt_col_title(v->sort_col, IOGP_UNITS_WIDE),
	             v->sort_desc ? "largest first" : "smallest first");
}

static void key_rows(top_app *a, int arg)
{
	(void)arg;
	top_view *v = &a->view;
	v->rows = v->rows == IOGP_NT_NODES ? IOGP_NT_SOURCES : IOGP_NT_NODES;
	view_message(v, "nodes table: a row per %s%s", v->rows == IOGP_NT_NODES ? "node" : "rank",
	             v->sel == IOGP_SEL_ALL ? "" : " (with a node selected: its ranks; a selects all)");
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
		iogp_feed_seek_by_start(input_feed(a->in), arg);
}

static void key_speed(top_app *a, int arg)
{
	if (need_replay(a))
		iogp_feed_speed(input_feed(a->in), arg);
}

static void key_jump(top_app *a, int arg)
{
	if (need_replay(a))
		iogp_feed_seek_start(input_feed(a->in), arg ? UINT64_MAX : 0);
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

/* iogp_actions.h's actions iogram-top runs (IOGP_VIEWER_TUI), by id. */
static void (*const handler[IOGP_ACT_N])(top_app *, int) = {
	[IOGP_ACT_HELP] = key_help,
	[IOGP_ACT_QUIT] = key_quit,
	[IOGP_ACT_FOCUS] = key_focus,
	[IOGP_ACT_PANEL] = key_panel,
	[IOGP_ACT_ZOOM] = key_zoom,
	[IOGP_ACT_ESCAPE] = key_escape,
	[IOGP_ACT_NODE] = key_node,
	[IOGP_ACT_SOURCE] = key_source,
	[IOGP_ACT_ALL] = key_all,
	[IOGP_ACT_FILE] = key_file,
	[IOGP_ACT_WINDOW] = key_window,
	[IOGP_ACT_DIR] = key_dir,
	[IOGP_ACT_LAYER] = key_layer,
	[IOGP_ACT_BINS] = key_bins,
	[IOGP_ACT_WEIGHT] = key_weight,
	[IOGP_ACT_LOG] = key_log,
	[IOGP_ACT_RATES_MODE] = key_rates,
	[IOGP_ACT_SORT] = key_sort,
	[IOGP_ACT_ROWS] = key_rows,
	[IOGP_ACT_PAUSE] = key_pause,
	[IOGP_ACT_SEEK] = key_seek,
	[IOGP_ACT_SPEED] = key_speed,
	[IOGP_ACT_JUMP] = key_jump,
	[IOGP_ACT_RECORD] = key_record,
	[IOGP_ACT_SNAPSHOT] = key_snapshot,
	[IOGP_ACT_REDRAW] = key_redraw,
};

/* The ncurses codes of a neutral key spelling (up to 3); 0 when the
 * terminal has no such key. */
static int codes_of(const char *k, int out[3])
{
	static const struct {
		const char *name;
		int code[3];
	} named[] = {
		{ "Space", { ' ' } }, { "Tab", { '\t' } }, { "S-Tab", { KEY_BTAB } },
		{ "Enter", { '\n', '\r', KEY_ENTER } }, { "Esc", { 27 } },
		{ "Left", { KEY_LEFT } }, { "Right", { KEY_RIGHT } }, { "Up", { KEY_UP } },
		{ "Down", { KEY_DOWN } }, { "PgUp", { KEY_PPAGE } }, { "PgDn", { KEY_NPAGE } },
		{ "Home", { KEY_HOME } }, { "End", { KEY_END } }, { "S-Left", { KEY_SLEFT } },
		{ "S-Right", { KEY_SRIGHT } },
	};
	memset(out, 0, 3 * sizeof(*out));
	if (k[0] && !k[1]) {
		out[0] = (unsigned char)k[0];
		return 1;
	}
	if (k[0] == 'C' && k[1] == '-' && k[2] && !k[3]) {
		out[0] = CTRL(k[2]);
		return 1;
	}
	if (k[0] == 'F' && k[1] >= '1' && k[1] <= '9') {
		out[0] = KEY_F(atoi(k + 1));
		return 1;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++)
		if (!strcmp(k, named[i].name)) {
			memcpy(out, named[i].code, sizeof(named[i].code));
			return out[2] ? 3 : out[1] ? 2 : 1;
		}
	return 0;   /* KP_Add and the like: the terminal sends + */
}

/* The action row bound to ch for iogram-top, and the binding's argument. */
static const iogp_action *action_of(int ch, int *arg)
{
	for (size_t i = 0; i < iogp_nactions; i++) {
		const iogp_action *a = &iogp_actions[i];
		if (!(a->viewers & IOGP_VIEWER_TUI) || !handler[a->id])
			continue;
		for (int k = 0; k < IOGP_ACTION_MAX_KEYS && a->keys[k].key; k++) {
			int c[3], n = codes_of(a->keys[k].key, c);
			for (int j = 0; j < n; j++)
				if (c[j] == ch) {
					*arg = iogp_action_arg(&a->keys[k], IOGP_VIEWER_TUI);
					return a->keys[k].arg == IOGP_ARG_PANEL_KEY && *arg < 0 ? NULL : a;
				}
		}
	}
	return NULL;
}

int keys_dispatch(top_app *app, int ch)
{
	int arg = 0;
	const iogp_action *a = action_of(ch, &arg);
	if (!a)
		return 0;
	/* in the help overlay only closing keys act */
	if (app->view.help && a->id != IOGP_ACT_HELP && a->id != IOGP_ACT_ESCAPE &&
	    a->id != IOGP_ACT_QUIT && a->id != IOGP_ACT_REDRAW) {
		app->view.help = 0;
		return 1;
	}
	handler[a->id](app, arg);
	return 1;
}

/* What the panels' marks mean, after the keys in the ? overlay. */
static const struct {
	const char *mark, *text;
} notes[] = {
	{ "~", "empty bins skipped here" },
	{ ">=X", "X and all above it" },
	{ "k=N", "2^N bins per power of 2" },
	{ "merged", "bins joined to fit" },
	{ "N of M", "access: N dots, M requests" },
};
#define NNOTES (sizeof(notes) / sizeof(notes[0]))

void keys_draw_help(top_surf *s, int rows, int cols, top_mode mode)
{
	size_t n = 0, pos = 0;
	char label[16];
	const iogp_action *e;
	int lw = 8;   /* the keys' column: the longest label ("0-5,7-9,M") */
	while (iogp_help_next(&pos, IOGP_VIEWER_TUI, label, sizeof(label))) {
		n++;
		lw = (int)strlen(label) > lw ? (int)strlen(label) : lw;
	}
	size_t lines = n + 1 + NNOTES;   /* keys, a blank line, the notes */
	int w = cols - 2 < 100 ? cols - 2 : 100;
	int inner = rows - 2;
	if (w < 20 || inner < 3)
		return;
	int ncol = (int)lines > inner ? (int)((lines + (size_t)inner - 1) / (size_t)inner) : 1;
	while (ncol > 1 && (w - 3) / ncol < 30)
		ncol--;
	int per = ((int)lines + ncol - 1) / ncol;
	int h = (per < inner ? per : inner) + 2;
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
	int colw = (w - 3) / ncol, shown = 0, k = 0;
	for (pos = 0;; k++) {
		const char *lab, *text;
		int st = ST_NORMAL;
		if ((e = iogp_help_next(&pos, IOGP_VIEWER_TUI, label, sizeof(label)))) {
			lab = label;
			text = iogp_action_help(e, IOGP_VIEWER_TUI);
			st = e->replay_only && mode != MODE_REPLAY ? ST_DIM : ST_NORMAL;
		} else if ((size_t)k == n) {
			continue;   /* the blank line between keys and notes */
		} else if ((size_t)k <= n + NNOTES) {
			lab = notes[k - n - 1].mark;
			text = notes[k - n - 1].text;
			st = ST_DIM;
		} else {
			break;
		}
		int c = k / per, r = k % per;
		if (r >= inner || c >= ncol)
			continue;
		int y = y0 + 1 + r, x = x0 + 2 + c * colw;
		draw_text(s, y, x, lw, ST_LABEL, lab);
		draw_text(s, y, x + lw + 1, colw - lw - 2, st, text);
		shown++;
	}
	char foot[64];
	if ((size_t)shown < n + NNOTES)
		snprintf(foot, sizeof(foot), " %zu more in a taller terminal; any key closes ",
		         n + NNOTES - (size_t)shown);
	else
		snprintf(foot, sizeof(foot), " any key closes; q quits ");
	draw_text(s, y0 + h - 1, x0 + 2, w - 4, ST_DIM, foot);
}
