/* actions.c - the key/action table of both viewers (one row per help line)
 * and the lookups on it; the viewers map its key spellings to their own. */
#include <stdio.h>
#include <string.h>

#include "iogp_actions.h"

#define TUI IOGP_VIEWER_TUI
#define GTK IOGP_VIEWER_GTK
#define ALL IOGP_VIEWER_ALL
#define PK IOGP_ARG_PANEL_KEY

/* Most rows leave help_gtk out (NULL: the same help in both viewers). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const iogp_action iogp_actions[] = {
	{ IOGP_ACT_HELP, "? h", "this help (again: close)", 0, ALL, { { "?", 0 }, { "h", 0 }, { "F1", 0 } } },
	{ IOGP_ACT_QUIT, "q", "quit", 0, ALL, { { "q", 0 }, { "Q", 0 }, { "C-q", 0 } } },
	{ IOGP_ACT_FOCUS, "Tab", "focus next panel", 0, TUI, { { "Tab", 1 } } },
	{ IOGP_ACT_FOCUS, "S-Tab", "focus previous panel", 0, TUI, { { "S-Tab", -1 } } },
	{ IOGP_ACT_PANEL, NULL, "zoom panel N (again: back)", 0, ALL,
	  { { "1", PK }, { "2", PK }, { "3", PK }, { "4", PK }, { "5", PK }, { "6", PK }, { "7", PK },
	    { "8", PK }, { "9", PK }, { "0", PK }, { "M", PK } } },
	{ IOGP_ACT_ZOOM, "z Enter", "zoom focused panel / back", 0, ALL, { { "z", 0 }, { "Enter", 0 } } },
	{ IOGP_ACT_ESCAPE, "Esc", "close help / unzoom", 0, ALL, { { "Esc", 0 } } },
	{ IOGP_ACT_NODE, "n N", "next / previous node", 0, ALL, { { "n", 1 }, { "N", -1 } } },
	{ IOGP_ACT_SOURCE, "s S", "next / previous source", 0, ALL, { { "s", 1 }, { "S", -1 } } },
	{ IOGP_ACT_ALL, "a", "select everything", 0, ALL, { { "a", 0 } } },
	{ IOGP_ACT_FILE, "f F", "next / previous file", 0, TUI, { { "f", 1 }, { "F", -1 } } },
	{ IOGP_ACT_WINDOW, "w W", "since start / last N s", 0, ALL, { { "w", 1 }, { "W", -1 } } },
	{ IOGP_ACT_LAYER, "y", "layer: POSIX / STDIO", 0, ALL, { { "y", 1 } } },
	{ IOGP_ACT_DIR, "d", "read+write / read / write", 0, TUI, { { "d", 0 } } },
	{ IOGP_ACT_BINS, "b", "bins native / log2 / fixed", 0, TUI, { { "b", 0 } } },
	{ IOGP_ACT_WEIGHT, "v", "sizes by count / by bytes", 0, ALL, { { "v", 0 } } },
	{ IOGP_ACT_LOG, "l", "counts linear / log", 0, ALL, { { "l", 0 } } },
	{ IOGP_ACT_LOGX, "L", "values linear / log", 0, GTK, { { "L", 0 } } },
	{ IOGP_ACT_RATES_MODE, "m", "rates: lines/heatmap B/s/p99", 0, ALL, { { "m", 0 } },
	  "node heatmap: bytes/s or latency p99" },
	{ IOGP_ACT_SORT, "o", "table: sort by next column", 0, ALL, { { "o", 1 } } },
	{ IOGP_ACT_SORT, "O", "table: reverse the order", 0, ALL, { { "O", 0 } } },
	{ IOGP_ACT_ROWS, "t", "table: nodes / ranks", 0, ALL, { { "t", 0 } } },
	{ IOGP_ACT_PAUSE, "space p", "pause / resume", 0, ALL, { { "Space", 0 }, { "p", 0 } } },
	{ IOGP_ACT_SEEK, "Left ,", "seek back 10 s", 1, ALL, { { "Left", -10 }, { ",", -10 } } },
	{ IOGP_ACT_SEEK, "Right .", "seek forward 10 s", 1, ALL, { { "Right", 10 }, { ".", 10 } } },
	{ IOGP_ACT_SEEK, "PgUp [", "seek back 60 s", 1, ALL,
	  { { "PgUp", -60 }, { "[", -60 }, { "S-Left", -60 } } },
	{ IOGP_ACT_SEEK, "PgDn ]", "seek forward 60 s", 1, ALL,
	  { { "PgDn", 60 }, { "]", 60 }, { "S-Right", 60 } } },
	{ IOGP_ACT_SPEED, "-", "slower (speed / 2)", 1, ALL,
	  { { "-", -1 }, { "_", -1 }, { "KP_Subtract", -1 } } },
	{ IOGP_ACT_SPEED, "+ =", "faster (speed x 2)", 1, ALL, { { "+", 1 }, { "=", 1 }, { "KP_Add", 1 } } },
	{ IOGP_ACT_JUMP, "Home g", "jump to start", 1, ALL, { { "Home", 0 }, { "g", 0 } } },
	{ IOGP_ACT_JUMP, "End G", "jump to end", 1, ALL, { { "End", 1 }, { "G", 1 } } },
	{ IOGP_ACT_FOLLOW, "c", "time axes follow again", 0, GTK, { { "c", 0 } } },   /* 0: the slowdown panel */
	{ IOGP_ACT_RECORD, "R", "start / stop recording", 0, ALL, { { "R", 0 } } },
	{ IOGP_ACT_SNAPSHOT, "x", "snapshot: CSV and PNG", 0, ALL, { { "x", 0 } },
	  "export the panel under the pointer" },
	{ IOGP_ACT_EXPORT, "^E", "export PNG, SVG, PDF or CSV", 0, GTK, { { "C-e", 0 } } },
	{ IOGP_ACT_OPEN, "^O", "open a recording", 0, GTK, { { "C-o", 0 } } },
	{ IOGP_ACT_REDRAW, "^L", "repaint the screen", 0, ALL, { { "C-l", 0 } } },
};
const size_t iogp_nactions = sizeof(iogp_actions) / sizeof(iogp_actions[0]);

int iogp_action_arg(const iogp_binding *b, unsigned viewer)
{
	if (b->arg != IOGP_ARG_PANEL_KEY)
		return b->arg;
	return b->key[0] && !b->key[1] ? iogp_panel_by_key(b->key[0], viewer) : -1;
}

const iogp_action *iogp_action_find(const char *key, unsigned viewer, int *arg)
{
	for (size_t i = 0; i < iogp_nactions && key; i++) {
		const iogp_action *a = &iogp_actions[i];
		if (!(a->viewers & viewer))
			continue;
		for (int k = 0; k < IOGP_ACTION_MAX_KEYS && a->keys[k].key; k++) {
			if (strcmp(a->keys[k].key, key))
				continue;
			int v = iogp_action_arg(&a->keys[k], viewer);
			if (a->keys[k].arg == IOGP_ARG_PANEL_KEY && v < 0)
				return NULL;   /* a digit of a panel this viewer does not show */
			if (arg)
				*arg = v;
			return a;
		}
	}
	return NULL;
}

const char *iogp_action_label(const iogp_action *a, unsigned viewer, char *buf, size_t len)
{
	if (a->label && a->label[0] == '^' && a->label[1] && viewer == IOGP_VIEWER_GTK) {
		snprintf(buf, len, "Ctrl+%s", a->label + 1);   /* a window's spelling */
		return buf;
	}
	if (a->label) {
		snprintf(buf, len, "%s", a->label);
		return buf;
	}
	/* the digits of the viewer's panels as ranges: "1-5", "1-5,8,9" */
	char have[10] = { 0 };
	for (int p = 0; p < IOGP_PANEL_N; p++) {
		const iogp_panel *e = iogp_panel_get(p);
		if (e->key >= '0' && e->key <= '9' && (e->viewers & viewer))
			have[e->key - '0'] = 1;
	}
	size_t u = 0;
	if (len)
		buf[0] = 0;
	for (int d = 0; d < 10; d++) {
		if (!have[d])
			continue;
		int z = d;
		while (z + 1 < 10 && have[z + 1])
			z++;
		int n = z == d ? snprintf(buf + u, len - u, "%s%c", u ? "," : "", '0' + d)
		        : snprintf(buf + u, len - u, "%s%c-%c", u ? "," : "", '0' + d, '0' + z);
		if (n < 0 || (size_t)n >= len - u)
			break;
		u += (size_t)n;
		d = z;
	}
	/* panels with a letter key after the digits: ",M" */
	for (int p = 0; p < IOGP_PANEL_N; p++) {
		const iogp_panel *e = iogp_panel_get(p);
		if (!e->key || (e->key >= '0' && e->key <= '9') || !(e->viewers & viewer))
			continue;
		int n = snprintf(buf + u, len - u, "%s%c", u ? "," : "", e->key);
		if (n < 0 || (size_t)n >= len - u)
			break;
		u += (size_t)n;
	}
	if (!u)
		snprintf(buf, len, "-");
	return buf;
}

const char *iogp_action_help(const iogp_action *a, unsigned viewer)
{
	return viewer == IOGP_VIEWER_GTK && a->help_gtk ? a->help_gtk : a->help;
}

const iogp_action *iogp_help_next(size_t *pos, unsigned viewer, char *buf, size_t len)
{
	while (*pos < iogp_nactions) {
		const iogp_action *a = &iogp_actions[(*pos)++];
		if (a->viewers & viewer) {
			iogp_action_label(a, viewer, buf, len);
			return a;
		}
	}
	return NULL;
}
