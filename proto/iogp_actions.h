/* iogp_actions.h - the key/action table both viewers share: what each key
 * does, its label and help text, whether it needs a replay, and which viewer
 * runs it. Keys are spelled toolkit-neutrally; iogram-top maps the spellings
 * to ncurses codes, iogram-view to GDK keyvals, and both generate their help
 * from this table (not installed). */
#ifndef IOGP_ACTIONS_H
#define IOGP_ACTIONS_H

#include <stddef.h>

#include "iogp_panels.h"   /* IOGP_VIEWER_* */

enum iogp_action_id {
	IOGP_ACT_HELP = 0,       /* show / hide the key help */
	IOGP_ACT_QUIT,
	IOGP_ACT_FOCUS,          /* arg: +1 next, -1 previous panel */
	IOGP_ACT_PANEL,          /* zoom the panel whose digit key was typed (arg: its id) */
	IOGP_ACT_ZOOM,           /* zoom the focused panel (iogram-view: under the pointer) / back */
	IOGP_ACT_ESCAPE,         /* close the help, else unzoom */
	IOGP_ACT_NODE,           /* arg: +1 next, -1 previous node */
	IOGP_ACT_SOURCE,         /* arg: +1 next, -1 previous source */
	IOGP_ACT_ALL,            /* select everything */
	IOGP_ACT_FILE,           /* access pattern: arg +1 next, -1 previous file */
	IOGP_ACT_WINDOW,         /* histogram window: arg +1 next, -1 previous */
	IOGP_ACT_DIR,            /* read+write / read / write */
	IOGP_ACT_BINS,           /* bin scheme */
	IOGP_ACT_LOG,            /* counts linear / log (iogram-view: the panel under the pointer) */
	IOGP_ACT_LOGX,           /* values linear / log, the panel under the pointer */
	IOGP_ACT_RATES_MODE,     /* rates panel: auto / lines / heatmap (B/s, latency p99) */
	IOGP_ACT_PAUSE,          /* pause / resume (iogram-view: replay only) */
	IOGP_ACT_SEEK,           /* arg: seconds */
	IOGP_ACT_SPEED,          /* arg: +1 faster, -1 slower */
	IOGP_ACT_JUMP,           /* arg: 0 start, 1 end */
	IOGP_ACT_FOLLOW,         /* time axes follow the latest time again */
	IOGP_ACT_RECORD,         /* start / stop recording */
	IOGP_ACT_SNAPSHOT,       /* CSV (and PNG) of what is shown */
	IOGP_ACT_EXPORT,         /* the export dialog */
	IOGP_ACT_OPEN,           /* open a recording */
	IOGP_ACT_REDRAW,         /* repaint everything */
	IOGP_ACT_LAYER,          /* I/O layer shown: POSIX / STDIO (iogp_layers.h) */
	IOGP_ACT_WEIGHT,         /* size histogram by count / by bytes (iogp_size_table.h) */
	IOGP_ACT_SORT,           /* nodes table: arg +1 next column, 0 reverse the order */
	IOGP_ACT_ROWS,           /* nodes table: a row per node / per rank (iogp_node_table.h) */
	IOGP_ACT_N
};

/* A binding's arg for IOGP_ACT_PANEL: the panel whose catalog key is the
 * key typed (iogp_action_arg resolves it). */
#define IOGP_ARG_PANEL_KEY (-1000)

#define IOGP_ACTION_MAX_KEYS 12   /* the digits 0-9, M and the end */

/* One help line: keys and what they do.
 * Key spellings: one character ("?", "N", ","), "Space", "Tab", "S-Tab",
 * "Enter", "Esc", "F1".."F12", "Left", "Right", "Up", "Down", "PgUp", "PgDn",
 * "Home", "End", "S-Left", "S-Right", "KP_Add", "KP_Subtract" and "C-x"
 * (Ctrl with a letter). */
typedef struct iogp_binding {
	const char *key;
	int arg;
} iogp_binding;

typedef struct iogp_action {
	int id;                  /* enum iogp_action_id */
	const char *label;       /* keys as help shows them: "Left ,"; NULL: the digit range */
	const char *help;
	int replay_only;         /* acts on a replay only (live: says so or ignores) */
	unsigned viewers;        /* IOGP_VIEWER_*: who runs it (the others ignore its keys) */
	iogp_binding keys[IOGP_ACTION_MAX_KEYS];   /* NULL key ends */
	const char *help_gtk;    /* iogram-view's help when it does it differently; NULL: help */
} iogp_action;

extern const iogp_action iogp_actions[];
extern const size_t iogp_nactions;

/* The row binding key (a neutral spelling) for viewer, or NULL; *arg gets
 * the binding's argument (IOGP_ACT_PANEL: the panel, or no match when the
 * viewer does not show it). */
const iogp_action *iogp_action_find(const char *key, unsigned viewer, int *arg);
/* The argument of binding b for viewer; IOGP_ARG_PANEL_KEY resolved to a
 * panel id (-1: not one of viewer's panels). */
int iogp_action_arg(const iogp_binding *b, unsigned viewer);
/* The label of a row as viewer shows it: "1-5,8,9" for iogram-top's digits,
 * "Ctrl+E" for iogram-view's "^E". */
const char *iogp_action_label(const iogp_action *a, unsigned viewer, char *buf, size_t len);
/* What a row does in viewer (its help, or help_gtk for iogram-view). */
const char *iogp_action_help(const iogp_action *a, unsigned viewer);
/* The help lines of viewer, in order: the next row it runs from *pos on
 * (start at 0), its label in buf; NULL after the last. */
const iogp_action *iogp_help_next(size_t *pos, unsigned viewer, char *buf, size_t len);

#endif
