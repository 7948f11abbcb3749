/* iogp_phase_view.h - I/O phases and findings as both viewers show them:
 * the phases of a view's layer, each phase's table row and bar label in the
 * units people read, lanes for a timeline of bars, the panel a finding
 * leads to, and the phases CSV and findings text of snapshots and exports.
 * iogram-top, iogram-view and plot/ build on it (not installed). */
#ifndef IOGP_PHASE_VIEW_H
#define IOGP_PHASE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iogp_insights.h"
#include "iogp_model.h"

/* The phases of view layer IOGP_LAYER_* (iogp_layers.h; its per-file
 * records are the same id), SummarIO's defaults (threshold 0.2, 1 s);
 * as iogp_model_phases: *out an array of *n to free(), paths valid until
 * the model changes. */
int iogp_phases_of_layer(const iogp_model *m, int layer, iogp_phase **out, size_t *n,
                         uint64_t *dropped);

/* The phase table's columns, in order. */
enum iogp_phase_col {
	IOGP_PC_START = 0,   /* local clock: "03:25:48.5" */
	IOGP_PC_DURATION,    /* "7.01 ms"; open phases end in "+" (growing) */
	IOGP_PC_OP,          /* "read", "write" */
	IOGP_PC_LAYER,       /* "POSIX", "STDIO" */
	IOGP_PC_RANKS,       /* "4", or "rank 3" when one rank */
	IOGP_PC_FILES,       /* "1" */
	IOGP_PC_FASHION,     /* "shared", "file per process" ("per-proc" in cells) */
	IOGP_PC_BYTES,       /* "16 MiB" ("16M") */
	IOGP_PC_REQUEST,     /* mean request, exact sizes: "64 KiB" ("64K") */
	IOGP_PC_SPATIALITY,  /* "consecutive", "sequential", "random", "unknown" */
	IOGP_PC_N
};
extern const char *const iogp_phase_heads[IOGP_PC_N];   /* "start", "duration", ... */

typedef struct iogp_phase_row {
	char cell[IOGP_PC_N][40];
	char label[160];       /* the bar's: "16 MiB · 64 KiB · consecutive" (cells: "16M 64K consec") */
	char label_short[40];  /* when that does not fit: "16 MiB" ("16M") */
} iogp_phase_row;

/* Phase p's row in style IOGP_UNITS_WIDE (the window: UTF-8, spaces) or
 * IOGP_UNITS_CELL (a terminal: ASCII, short). */
void iogp_phase_row_build(iogp_phase_row *r, const iogp_phase *p, int style);

/* Lanes of a timeline: span i is [x0[i], x1[i]) (its bar and label) in
 * any unit; in order of i, each takes the first lane whose last span ends
 * before x0[i]. At most max lanes: a span that finds none gets -1 (not
 * drawn). Returns the lanes used. */
int iogp_phase_lanes(const double *x0, const double *x1, size_t n, int max, int *lane);

/* The phases (one row each, iogp_phases_csv_header/row: the CSV of iogram
 * export phases) to out; 0 or IOGP_EIO. */
int iogp_phases_write_csv(FILE *out, const iogp_phase *p, size_t n);

/* ---- findings ---- */

/* "info", "warn", "high" ("?" out of range). */
const char *iogp_insight_severity_name(int severity);
/* The panel (iogp_panels.h id) finding x leads to in viewer: the one it
 * names when viewer shows it, else the one that shows the same ("nodes":
 * the node rates, "files": the phases); -1 when none. */
int iogp_insight_panel(const iogp_insight *x, unsigned viewer);
/* Findings as text, one a line, "[warn] TEXT (panel)"; a first line that
 * says how many, and "no findings" when none. 0 or IOGP_EIO. */
int iogp_insights_write_text(FILE *out, const iogp_insight *v, size_t n);

#endif
