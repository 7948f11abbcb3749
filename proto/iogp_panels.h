/* iogp_panels.h - the panel catalog both viewers share: each panel's id,
 * --panel name and aliases, titles, the metrics it draws, a one-line
 * tooltip, the file stem of its snapshot and export files, its digit key and
 * which viewer shows it. iogram-top, iogram-view and the cairo renderer
 * (plot/) take their panel names and lists from here (not installed). */
#ifndef IOGP_PANELS_H
#define IOGP_PANELS_H

#include <stddef.h>

/* Ids in dashboard order; the status strip is panel 0 (plot/ draws it as
 * one, the TUI as its header line). */
enum iogp_panel_id {
	IOGP_PANEL_HEADER = 0,   /* sources, messages/s, gaps, drops, recording */
	IOGP_PANEL_SIZE,         /* request-size distribution, read and write */
	IOGP_PANEL_QD,           /* queue-depth histogram */
	IOGP_PANEL_LATENCY,      /* latency distribution with p50/p90/p99 */
	IOGP_PANEL_ACCESS,       /* file offset vs time, per file, colour by op */
	IOGP_PANEL_RATES,        /* per-node bytes/s with min/avg/max band and total */
	IOGP_PANEL_HEATMAP,      /* node x time bytes/s */
	IOGP_PANEL_NODES,        /* nodes and ranks side by side, and the stragglers */
	IOGP_PANEL_PHASES,       /* I/O phases: a timeline of bars, and their table */
	IOGP_PANEL_INSIGHTS,     /* findings, their numbers and the panel that shows each */
	IOGP_PANEL_PROBE,        /* slowdown probes: each operation's factor over time */
	IOGP_PANEL_MATRIX,       /* MPI traffic: node x node (rank x rank of a node), message sizes */
	IOGP_PANEL_MSGSIZE,      /* MPI message-size histogram (drawn inside the matrix panel) */
	IOGP_PANEL_N
};

/* Which viewer shows a panel (as one of its own, with its digit key), or
 * runs an action (iogp_actions.h). */
enum {
	IOGP_VIEWER_TUI = 1u << 0,   /* iogram-top */
	IOGP_VIEWER_GTK = 1u << 1,   /* iogram-view (and its headless snapshots) */
	IOGP_VIEWER_ALL = IOGP_VIEWER_TUI | IOGP_VIEWER_GTK,
};

/* What a panel is drawn from. */
typedef enum iogp_panel_data {
	IOGP_DATA_STATUS = 0,    /* the feed's counters, no metric */
	IOGP_DATA_HIST,          /* histograms: metrics[] read, write, meta */
	IOGP_DATA_ACCESS,        /* access samples */
	IOGP_DATA_RATES,         /* per-node series of metrics[] read, write bytes */
	IOGP_DATA_NODES,         /* a row per node or rank (iogp_node_table.h), no metric */
	IOGP_DATA_PHASES,        /* I/O phases (iogp_model_phases), no metric */
	IOGP_DATA_INSIGHTS,      /* findings (iogp_model_insights), no metric */
	IOGP_DATA_PROBE,         /* slowdown probes (iogp_probe_view.h), no metric */
	IOGP_DATA_MATRIX,        /* the MPI traffic matrix (iogp_matrix_view.h), no metric */
} iogp_panel_data;

#define IOGP_PANEL_MAX_ALIASES 4
#define IOGP_PANEL_MAX_METRICS 3

typedef struct iogp_panel {
	int id;                  /* enum iogp_panel_id, its index in the catalog */
	const char *name;        /* what --panel takes and export names use: "qd" */
	const char *aliases[IOGP_PANEL_MAX_ALIASES];   /* also taken; NULL ends */
	const char *title;       /* as the window shows it: "Queue depth" */
	const char *short_title; /* as the terminal shows it: "queue depth" */
	const char *tooltip;     /* one line: what the panel shows */
	const char *stem;        /* snapshot/export files: queue_depth.csv, size.png */
	char key;                /* digit that zooms it ('1'..); 0: none */
	iogp_panel_data data;
	const char *metrics[IOGP_PANEL_MAX_METRICS];   /* iogp_metrics.h names; NULL ends */
	int time_axis;           /* x is wall-clock time (zoom and pan apply) */
	unsigned viewers;        /* IOGP_VIEWER_*: who shows it as a panel */
	int zoom_only;           /* 1: by its key only, never in a dashboard grid (most
	                          * jobs have no probe and no MPI: no empty cells) */
} iogp_panel;

/* The panel with id, or NULL. */
const iogp_panel *iogp_panel_get(int id);
/* Its name / title; "dashboard" / "Dashboard" for any other id (-1). */
const char *iogp_panel_name(int id);
const char *iogp_panel_title(int id);
/* The id of the panel named or aliased name; IOGP_PANEL_DASHBOARD for
 * "dashboard" and "all"; -1 for anything else. */
#define IOGP_PANEL_DASHBOARD (-2)
int iogp_panel_find(const char *name);
/* Panel id has a place in viewer's dashboard grid (a key, shown by it,
 * not zoom-only). */
int iogp_panel_in_grid(int id, unsigned viewer);
/* The panel whose digit key is key (shown by viewer), or -1. */
int iogp_panel_by_key(int key, unsigned viewer);
/* The next panel viewer shows after id in direction dir (+1 / -1), wrapping. */
int iogp_panel_step(int id, int dir, unsigned viewer);
/* The name of a snapshot or export file of panel id into buf: stem.ext, or
 * stem-part.ext when the panel draws more than one metric and part is set;
 * a histogram's CSV names its unit before the extension
 * ("size-read.bytes.csv", "queue_depth.requests.csv", "latency.png").
 * Returns its length. */
size_t iogp_panel_file(int id, const char *part, const char *ext, char *buf, size_t len);
/* The window a panel shows, into buf: "since start" (window_s <= 0),
 * "last 60 s" ("last 60s" in a terminal's cell), or, for one source whose window the model no longer keeps
 * (iogp_model_source_window_bytes), "last 60 s: not kept per source at
 * 50,000 sources" so an empty panel says why. Returns its length. */
struct iogp_model;
struct iogp_sel;
size_t iogp_panel_window_text(const struct iogp_model *m, const struct iogp_sel *sel,
                              double window_s, int cell, char *buf, size_t len);
/* "size, qd, latency, ..." (the names, then "dashboard"), for usage text. */
size_t iogp_panel_names(char *buf, size_t len);

#endif
