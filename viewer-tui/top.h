/* top.h - iogram-top's private interfaces between its modules. */
#ifndef TOP_H
#define TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "demo.h"
#include "iogp.h"
#include "iogp_feed.h"
#include "iogp_actions.h"   /* the keys, shared with iogram-view */
#include "iogp_layers.h"    /* POSIX / STDIO, shared with iogram-view */
#include "iogp_node_table.h" /* nodes and ranks, shared with iogram-view */
#include "iogp_panels.h"    /* panel ids, names and keys, shared with iogram-view */
#include "iogp_size_table.h" /* common sizes, by count / by bytes, shared with iogram-view */
#include "iogp_units.h"   /* numbers in cells: IOGP_UNITS_CELL */

#include "iogp_err.h"   /* IOGP_EXIT_* */

typedef struct top_rect {
	int y, x, h, w;
} top_rect;

/* ---- draw.c: the surface every panel draws on ---- */
enum top_style {
	ST_NORMAL = 0, ST_TITLE, ST_FOCUS, ST_READ, ST_WRITE, ST_BOTH, ST_DIM,
	ST_LABEL, ST_WARN, ST_BAD, ST_GOOD, ST_STATUS, ST_HEAT0,
	ST_NHEAT = 8,
	ST_COUNT = ST_HEAT0 + ST_NHEAT,
};

typedef struct top_surf {
	void *win;      /* WINDOW *; NULL draws nothing (headless) */
	int rows, cols;
	int unicode;    /* UTF-8 blocks and braille */
	int color;      /* colour pairs in use */
} top_surf;

/* Set up colours (want_color = 0 for --no-color / NO_COLOR). */
void draw_setup(top_surf *s, void *win, int unicode, int want_color);
void draw_clear(top_surf *s, top_rect r);
/* ASCII text clipped to maxw columns; returns columns written. */
int draw_text(top_surf *s, int y, int x, int maxw, int style, const char *t);
int draw_textf(top_surf *s, int y, int x, int maxw, int style, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* One glyph: wc when Unicode is on, else ascii. */
void draw_glyph(top_surf *s, int y, int x, int style, unsigned wc, char ascii);
/* Horizontal bar of len cells (fractional: eighth blocks), growing right. */
void draw_hbar(top_surf *s, int y, int x, int maxw, double len, int style);
/* Sparkline: one cell per value, height in eighths of v / max. */
void draw_spark(top_surf *s, int y, int x, const double *v, int n, double max, int style);
/* Heat cell, level in [0, 1]; < 0 = no data. */
void draw_heat(top_surf *s, int y, int x, double level);
/* Title line of a panel: reversed when focused, digit key first. */
void draw_title(top_surf *s, top_rect r, int focused, int key, const char *title, const char *right);

/* The time axis at (y, x..x+w) of a plot over wall times [t0, t1]: the
 * clocks at the ends and the span between them when it fits. */
void draw_time_axis(top_surf *s, int y, int x, int w, uint64_t t0, uint64_t t1);

/* Braille canvas: 2 x 4 dots per cell (ASCII: one dot per cell); each dot
 * has a class (1 read, 2 write), a cell shows the union of its classes. */
typedef struct top_canvas {
	int cw, ch;        /* cells */
	uint8_t *bits;     /* per cell: braille dot bits */
	uint8_t *cls;      /* per cell: OR of classes */
} top_canvas;
int canvas_init(top_canvas *c, int cw, int ch);
void canvas_free(top_canvas *c);
void canvas_dot(top_canvas *c, int px, int py, int cls);   /* px < 2cw, py < 4ch, py 0 = top */
/* Filled column from the bottom up to height h (dots, 0..4ch). */
void canvas_column(top_canvas *c, int px, int h, int cls);
void canvas_paint(top_surf *s, const top_canvas *c, int y, int x);

/* ---- the view: what the user selected ----
 * Panels are the catalog's (IOGP_PANEL_*): those with IOGP_VIEWER_TUI. */
enum { DIR_BOTH = 0, DIR_READ, DIR_WRITE };
enum { BINS_NATIVE = 0, BINS_LOG2, BINS_FIXED };
enum { RATES_AUTO = 0, RATES_LINES, RATES_HEAT, RATES_HEAT_P99, RATES_NMODES };
#define TOP_MAX_WINDOWS 8

typedef struct top_view {
	iogp_sel_kind sel;     /* all, one node, one source */
	char sel_node[128];    /* by name, so it survives a replay seek */
	uint64_t sel_source;
	int window;            /* index into windows[] */
	int nwindows;
	double windows[TOP_MAX_WINDOWS];  /* seconds; 0 = since start */
	int dir, bins, logscale, rates_mode;
	int layer;             /* IOGP_LAYER_*: the metrics every panel shows */
	int weight;            /* IOGP_WEIGHT_*: the size panel's bars by count or by bytes */
	int sort_col, sort_desc;   /* nodes table: IOGP_NT_* column and direction */
	int rows;              /* nodes table with everything selected: IOGP_NT_NODES / SOURCES */
	int focus, zoom;       /* panel; zoom -1 = none */
	int help;
	char file_path[512];   /* access panel: the chosen file, "" = the busiest */
	char msg[512];         /* status line (snapshot names, errors) */
	uint64_t msg_until;    /* CLOCK_MONOTONIC ns */
} top_view;

void view_init(top_view *v, double window_s);
double view_window(const top_view *v);   /* seconds, 0 = since start */
void view_message(top_view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- input.c: the feed opened from the command line, and the demo ---- */
typedef enum top_mode { MODE_LIVE = 0, MODE_REPLAY, MODE_DEMO } top_mode;

typedef struct top_input top_input;

typedef struct top_input_opts {
	const char *listen[16];
	int nlisten;
	const char *connect[16];
	int nconnect;
	const char *replay;
	int demo;
	int any_address;
} top_input_opts;

typedef struct top_status {
	top_mode mode;
	iogp_feed_status f;     /* where, rates, replay position, recording */
	int demo_workers, demo_restarts;
} top_status;

int input_open(top_input **in, const top_input_opts *o, char *err, size_t errlen);
void input_close(top_input *in);
/* The feed: model, waiting, replay control and recording (iogp_feed.h). */
iogp_feed *input_feed(top_input *in);
/* Tick the demo's workers, then pump the feed. */
long input_pump(top_input *in);
void input_status(top_input *in, top_status *st);
top_mode input_mode(const top_input *in);

/* ---- layout.c ---- */
typedef struct top_layout {
	top_rect header;
	top_rect panel[IOGP_PANEL_N];
	int visible[IOGP_PANEL_N];
	int too_small;          /* 1: nothing fits; min_rows/min_cols say what would */
	int min_rows, min_cols;
} top_layout;
void layout_compute(top_layout *l, int rows, int cols, int zoom);
/* Panel p is one of iogram-top's (IOGP_VIEWER_TUI in the catalog). */
int panel_shown(int p);

/* The rates panel's lines and values, kept between frames: at thousands
 * of nodes a frame's were ~20 MB, mapped afresh each time (panel_rates.c). */
typedef struct top_rates_mem {
	void *l;
	size_t lcap;
	double *store;
	size_t scap;
} top_rates_mem;
void rates_mem_free(top_rates_mem *r);

/* ---- a frame: everything a panel draws from ---- */
typedef struct top_frame {
	const iogp_model *m;
	top_view *v;
	const top_status *st;
	uint64_t now_ns;        /* time the panels show */
	uint64_t mono_ns;       /* CLOCK_MONOTONIC of this frame */
	iogp_heat *heat;        /* per-node latency over time (the p99 heatmap) */
	iogp_node_table *nodes; /* the nodes table's memory, kept between frames
	                         * (NULL: the panel builds its own) */
	iogp_node_table *nodes_next; /* where a data frame that may give way builds */
	top_rates_mem *rates;   /* the rates panel's (NULL: its own) */
	int key;                /* drawn for a key: what is only due by time (a slow
	                         * panel's refresh) waits for the next frame */
	int (*stop)(void *arg); /* NULL, or non-zero when a key waits: a data frame's
	                         * slow refresh gives up and keeps what it showed */
	void *stop_arg;
} top_frame;

/* Panel metric m (a POSIX name, as the catalog has it) in the view's
 * layer; NULL where the layer has none. */
const char *frame_metric(const top_frame *f, const char *m);
/* Selection as a model query (NULL-safe for unknown node/source). */
void frame_sel(const top_frame *f, iogp_sel *sel);
/* Panel p's title line in r: its digit key, title (NULL: the catalog's
 * short title), reversed when focused (layout.c). */
void panel_title(const top_frame *f, top_surf *s, top_rect r, int p, const char *title,
                 const char *right);
/* The header and every panel l shows (layout.c), as iogram-top draws a frame. */
void panels_draw(const top_frame *f, top_surf *s, const top_layout *l);

/* ---- panel_hist.c: the histogram panels ---- */
/* One row of a panel: a bin range and its count per direction shown. */
typedef struct hist_row {
	uint64_t lo, hi;
	uint64_t count[2];
	double bytes[2];        /* the values in it (iogp_hist_bin_sum): the by-bytes weight */
	int gap;                /* empty bins hidden before this row */
	int merged;             /* bins with requests merged into this row (1: one bin) */
	int exact;              /* one bin whose requests all had one size: value */
	uint64_t value;
} hist_row;
typedef struct hist_view {
	int nd;                 /* directions shown: 1 or 2 (read, write) */
	int dir[2];             /* DIR_READ / DIR_WRITE / DIR_BOTH (queue depth) */
	char metric[2][64];
	const char *what[2];    /* "read", "write", "" */
	const char *unit;
	int found[2];           /* the metric exists */
	const char *absent;     /* the layer has no such metric: what it is ("queue depth") */
	iogp_hist native[2];    /* as selected (window, selection): quantiles */
	iogp_hist shown[2];     /* re-binned to the view's scheme, one scheme for both */
	hist_row *rows;
	size_t nrows;
	char bins_text[48];     /* "native k=4", "log2", "fixed 4K" (+ " merged") */
	int weight;             /* IOGP_WEIGHT_*: the size panel's; count elsewhere */
	top_rect rowsr;         /* the lines below the summaries: rows (and tables) */
	/* the size panel's common sizes (panel_sizes.c) */
	iogp_size_table tab[2]; /* per direction shown */
	int ntab;               /* directions with a table, 0: none shown */
	int tab_side;           /* 1: beside the rows; 0: below them */
	int tab_gap;            /* columns between a table's columns */
	top_rect tabr;          /* the lines they may take */
} hist_view;
/* A row's label as drawn (wide: room for ranges): "4K", "4K-8191", and for
 * the last row when it merges bins, or a bin open to the top, ">=32K". */
int hist_row_label(char *buf, size_t len, const hist_view *hv, size_t i, int wide);
/* A value of the view's unit as a cell: request sizes exact (iogp_fmt_size). */
int hist_fmt(char *buf, size_t len, const hist_view *hv, double v);
void hist_view_free(hist_view *hv);
void panel_hist_draw(const top_frame *f, top_surf *s, top_rect r, int p);
/* A metric's native histogram for the selection and window (out is
 * initialised on every return, as iogp_model_hist's). */
int panel_hist_query(const top_frame *f, const char *metric, iogp_hist *out);
/* The histograms exactly as panel p (a panel with IOGP_DATA_HIST) shows
 * them in rect r: rows, and the size panel's common sizes. */
int panel_hist_view(const top_frame *f, top_rect r, int p, hist_view *hv);

/* ---- panel_sizes.c: the size panel's common sizes table ---- */
/* Build hv's tables (hv->native filled) and share the rows area a between
 * them and the histogram's rows: returns the rows' maximum; hv->tabr and
 * tab_side say where the tables go. */
int sizes_place(hist_view *hv, top_rect a);
/* Draw them (after the rows, so "below" follows the rows drawn). */
void sizes_draw(top_surf *s, const hist_view *hv);

/* ---- panel_access.c ---- */
void panel_access_draw(const top_frame *f, top_surf *s, top_rect r);
/* Tests: keep what the panel computed at least ns (0: as costly as it was),
 * as on a job whose files take long to list. */
void panel_access_hold(uint64_t ns);
/* How many refreshes data frames gave up for a waiting key (top_frame.stop). */
unsigned panel_access_stopped(void);
/* How many times the panel gathered its file list (f and F reuse the one shown). */
unsigned panel_access_lists(void);
/* The selected file's samples in the window as CSV (time_s,op,offset,size). */
int panel_access_csv(const top_frame *f, FILE *out, char *path, size_t pathlen);
/* Choose the next (dir 1) or previous (-1) file by path; past the ends the
 * panel goes back to showing the busiest. */
void panel_access_cycle(const top_frame *f, int dir);

/* ---- panel_rates.c ---- */
void panel_rates_draw(const top_frame *f, top_surf *s, top_rect r);
/* Series of the rates panel (bytes/s per node) for metric, as shown. */
int panel_rates_series(const top_frame *f, const char *metric, int ncols, iogp_series *out);

/* The rates panel's time window (the view's window, or since the first
 * data, as the rates ring holds it): nb bins of bin_ns ending at end_ns. */
void panel_rates_span(const top_frame *f, size_t *nb, uint64_t *end_ns, uint64_t *bin_ns);

/* ---- panel_phases.c: I/O phases, a timeline of bars and their table ---- */
void panel_phases_draw(const top_frame *f, top_surf *s, top_rect r);
/* The view layer's phases as iogram export phases writes them. */
int panel_phases_csv(const top_frame *f, FILE *out);

/* ---- panel_insights.c: the findings and where each shows ---- */
void panel_insights_draw(const top_frame *f, top_surf *s, top_rect r);
/* The selection's findings (recomputed when the data changed; over more
 * than a few thousand sources at most every few seconds, in slices by
 * insights_work, unless wait); *n of them, valid until the next call.
 * *n is 0 while the first computation for a new selection is under way:
 * insights_pending says so. */
const iogp_insight *insights_get(const top_frame *f, size_t *n, int wait);
int insights_pending(void);
/* A slice of the computation under way, for about budget_ns: 0 when none
 * is, 1 when more remains, 2 when it just ended (a frame shows it). */
int insights_work(const iogp_model *m, uint64_t budget_ns);
/* As text (iogp_insights_write_text). */
int panel_insights_text(const top_frame *f, FILE *out);

/* ---- panel_matrix.c: the MPI traffic matrix (iogp_matrix_view.h) ---- */
void panel_matrix_draw(const top_frame *f, top_surf *s, top_rect r);
/* The matrix as shown, as iogram export matrix writes it; IOGP_ENOTFOUND
 * when there is no MPI traffic. */
int panel_matrix_csv(const top_frame *f, FILE *out);

/* ---- panel_probe.c: slowdown probes (iogp_probe_view.h) ---- */
void panel_probe_draw(const top_frame *f, top_surf *s, top_rect r);
/* The panel's CSV: every probe's operations now (iogp_probe_panel_csv). */
int panel_probe_csv(const top_frame *f, FILE *out);
/* How many probes, and the largest factor among them now (-1: none). */
int panel_probe_worst(const top_frame *f, int64_t *milli);

/* ---- panel_nodes.c: nodes and ranks side by side, and the stragglers ---- */
void panel_nodes_draw(const top_frame *f, top_surf *s, top_rect r);
/* The table as the panel shows it (rows of the selection, the view's window
 * and layer) and, order not NULL, its order (malloc'd, t->n entries; NULL
 * on error). Into the frames' own table (f->nodes) lazily: every row's
 * name, I/O time and the view's sort column, the rest filled for the rows
 * drawn (iogp_node_table_fill); any other table whole (snapshots). */
int panel_nodes_table(const top_frame *f, iogp_node_table *t, size_t **order);
/* How many builds data frames gave up for a waiting key (top_frame.stop). */
unsigned panel_nodes_stopped(void);

/* ---- panel_header.c ---- */
void panel_header_draw(const top_frame *f, top_surf *s, top_rect r);
typedef struct src_counts {
	size_t up, quiet, gone, restarted;
} src_counts;
void header_sources(const top_frame *f, src_counts *c);

/* ---- keys.c: the shared action table (iogp_actions.h) on ncurses keys ---- */
typedef struct top_app top_app;
/* Run the action bound to ch; 0 if none. */
int keys_dispatch(top_app *app, int ch);
void keys_draw_help(top_surf *s, int rows, int cols, top_mode mode);

/* ---- snap.c ---- */
/* Write what is on screen as CSV files into a new directory under dir;
 * names a summary of what was written into msg. */
int snap_write(const top_frame *f, const top_layout *l, const char *dir, char *msg, size_t msglen);

/* ---- top.c: the application state the keys act on ---- */
struct top_app {
	top_input *in;
	top_view view;
	top_layout layout;
	int quit;
	int full_redraw;
	int dirty;
	const char *snap_dir;
	const char *record_path;   /* --record FILE for the next R */
	top_surf surf;
	iogp_heat *heat;           /* kept between frames */
	iogp_node_table nodes;     /* zeroed at start; freed at exit */
	iogp_node_table nodes_next;  /* the same: a data frame's build, swapped in
	                             * when it ends (given way to a key: nodes stays) */
	top_rates_mem rates;       /* the same */
};
/* The frame panels would draw now (st receives the input status). */
void app_frame(top_app *app, top_frame *f, top_status *st);

#endif
